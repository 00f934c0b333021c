"""Issue 28: `tcplab report` draws its graphs with tcplab-plot (``_core.report_graphs``), not
matplotlib: the same figures and captions as the matplotlib report, zoomable SVG the zoom script
reads, matplotlib not even imported, and matplotlib still drawing what tcplab-plot leaves to it."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

from tcplab import _core, report
from tcplab.report import sections
from tcplab.rundir import RunData

FIG_RE = re.compile(r'<figure id="([^"]+)"[^>]*>.*?<figcaption>(.*?)</figcaption></figure>', re.S)


def _figures(text: str) -> list[tuple[str, str]]:
    return FIG_RE.findall(text)


def test_native_report_has_the_matplotlib_reports_figures(plots_synth_dirs, tmp_path, monkeypatch):
    dirs = [plots_synth_dirs["vegas"]]  # a TCP graph with its CAM panel, the CAM graph, links
    native = report.write_report(dirs, tmp_path / "native.html").read_text()
    monkeypatch.setenv("TCPLAB_REPORT_NATIVE", "0")
    mpl = report.write_report(dirs, tmp_path / "mpl.html").read_text()
    figs = _figures(native)
    assert figs == _figures(mpl) and len(figs) >= 5
    ids = [f for f, _ in figs]
    assert any("-cam-" in f for f in ids) and any("-queue-" in f for f in ids)
    # every graph drawn natively: tcplab-plot's SVG (its figure group), none of matplotlib's
    assert native.count('<svg class="graph zsvg"') == len(figs)
    assert native.count('-figure_1">') == len(figs)
    assert "-patch_1" not in native and "-patch_1" in mpl  # matplotlib's figure background
    # each zoomable graph's description names a panel group that exists, with its time range
    for m in re.finditer(r'data-zoom="([^"]+)"', native):
        meta = json.loads(html.unescape(m.group(1)))
        for ax in meta["axes"]:
            assert f'id="{meta["uid"]}-{ax["g"]}"' in native
            assert ax["t1"] > ax["t0"] and ax["x1"] > ax["x0"] and ax["y1"] > ax["y0"]


def test_report_of_a_run_directory_imports_neither_matplotlib_nor_polars(plots_synth_dirs, tmp_path):
    # issue 28: the graphs drawn by the core; the tables from the summary's rows, the diagnosis
    # from the core's Parquet reader
    d = plots_synth_dirs["vegas"]
    code = ("import sys; from tcplab.report import report_cli; "
            f"report_cli({str(d)!r}, {str(tmp_path / 'r.html')!r}); "
            "print([m for m in ('matplotlib', 'polars') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_graphs_tcplab_plot_leaves_to_matplotlib(plots_synth_dirs):
    run = RunData.load(plots_synth_dirs["multi"])
    some = run.conns[:1]
    got = _core.report_graphs(str(run.dir), [("flows", some, "zgA"), ("flows", run.conns, "zgB"),
                                             ("link", ["no-such-link"], "zgC")], 1_500_000, 14_000)
    assert got[0][0] == "python" and "some of the run's flows" in got[0][1]
    assert got[1][0] == "svg" and got[1][1].startswith('<svg class="graph zsvg"') and 'id="zgB-zax0"' in got[1][1]
    assert got[2][0] == "python"
    # over the marker limit: a PNG instead of the SVG
    png = _core.report_graphs(str(run.dir), [("tcp", [run.conns[0]], "zgD")], 1_500_000, 0)[0]
    assert png[0] == "png" and png[1].startswith(b"\x89PNG")
    # the report draws the left-over graph with matplotlib, in the same place
    parts = sections._draw_native([sections._Native("flows", some, sections._mpl("flows_graph", run, conns=some),
                                                     "cap", "fid")], str(run.dir))
    assert isinstance(parts[0], sections._Pending)
    html = sections._draw_pending(parts)[0]
    assert html.startswith('<figure id="fid"') and "cap" in html and 'id="' + parts[0].args[4] + '-zax0"' in html


def _typed(rows: list[dict]) -> list:
    """Rows with every value's type beside it (1 == 1.0 in Python; the table prints them apart)."""
    def t(v):
        return [t(x) for x in v] if isinstance(v, list) else (type(v).__name__, v)
    return [[(k, t(v)) for k, v in r.items()] for r in rows]


def test_summary_rows_without_polars_are_polars_rows(plots_run_dirs):
    import polars as pl

    from tcplab.rundir_cols import frame_rows

    for d in plots_run_dirs:
        run = RunData.load(d)
        assert _typed(run.flow_rows()) == _typed(run.flows.to_dicts()), d
        assert _typed(run.link_rows()) == _typed(run.links.to_dicts()), d
    # the cases polars unifies: ints among floats (also in lists), missing keys, a column of nulls
    rows = [{"a": 1, "l": [1, 2], "n": None}, {"b": "x", "a": 2.5, "l": []}, {"l": [3.5], "a": None, "c": True}]
    assert _typed(frame_rows(rows)) == _typed(pl.DataFrame(rows, infer_schema_length=None).to_dicts())
    filled = pl.DataFrame(rows, infer_schema_length=None).with_columns(pl.col(["a", "n"]).fill_null(0))
    assert _typed(frame_rows(rows, fill_zero=["a", "n"])) == _typed(filled.to_dicts())
    # what it does not emulate is left to polars
    assert frame_rows([{"a": {"x": 1}}]) is None and frame_rows([{"a": 1}, {"a": "x"}]) is None
    assert frame_rows([{"a": [1, None]}]) is None and frame_rows([{"a": True}, {"a": 1}]) is None
