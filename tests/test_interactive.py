"""Issue 28: what must always hold for plots and reports at interactive speed, and the htsim
harness's scenarios and figures. Speed itself is measured by benches/interactive/measure.py and
benches/htsim-dumbbell/compare.py (figures, never timed tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcplab import bench
from tcplab.plots import count_gid, find_gid, tcp_graph
from tcplab.plots.series import DECIMATE_COLUMNS, DECIMATE_MIN_POINTS, decimate_step
from tcplab.rundir import KB, RunData

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run6(tmp_path_factory) -> Path:
    """The report benchmark's run: the bench dumbbell with 6 flows for 60 s, every trace on."""
    from tcplab.api import run
    out = tmp_path_factory.mktemp("interactive") / "run6"
    run(bench.tcp_dumbbell(6, traced=True)).save(out)
    return out


def test_decimated_step_keeps_every_columns_extremes_and_the_ends():
    rng = np.random.default_rng(7)
    n = 50_000
    t = np.sort(rng.uniform(0.0, 60.0, n))
    v = np.cumsum(rng.normal(0.0, 1.0, n))
    tt, vv = decimate_step(t, v, 0.0, 60.0)
    assert len(tt) <= 2 * (DECIMATE_COLUMNS + 2) + 2 < n
    assert (tt[0], vv[0]) == (t[0], v[0]) and (tt[-1], vv[-1]) == (t[-1], v[-1])
    assert np.all(np.diff(tt) >= 0)  # still in time order
    # every kept point is a point of the series, and each column's lowest and highest are kept
    assert set(zip(tt.tolist(), vv.tolist())) <= set(zip(t.tolist(), v.tolist()))
    col = np.clip((t / 60.0 * DECIMATE_COLUMNS).astype(int), -1, DECIMATE_COLUMNS)
    kcol = np.clip((tt / 60.0 * DECIMATE_COLUMNS).astype(int), -1, DECIMATE_COLUMNS)
    for c in np.unique(col):
        assert vv[kcol == c].max() == v[col == c].max() and vv[kcol == c].min() == v[col == c].min()


def test_short_series_are_not_decimated():
    t = np.arange(DECIMATE_MIN_POINTS, dtype=float)
    v = np.sin(t)
    tt, vv = decimate_step(t, v, 0.0, t[-1])
    assert tt is t and vv is v


def test_trace_graph_of_a_long_run_is_decimated_but_keeps_the_windows_extremes(run6):
    run = RunData.load(run6)
    snd = run.trace("tcp0", "snd")
    assert snd.height > 3 * DECIMATE_MIN_POINTS  # long enough that decimation matters
    fig = tcp_graph(run, "tcp0")
    for name, col in (("cwnd", "cwnd"), ("unacked", "unacked"), ("ssthresh", "ssthresh")):
        (line,) = find_gid(fig, f"line-{name}")
        y = np.asarray(line.get_ydata(), dtype=float)
        assert count_gid(fig, f"line-{name}") <= 2 * (DECIMATE_COLUMNS + 2) + 2
        full = snd[col].to_numpy().astype(float) / KB
        assert y.max() == full.max() and y.min() == full.min()


def test_report_of_the_6_flow_60_s_run_is_under_1_MB_with_every_graph(run6, tmp_path):
    from tcplab.report import report_cli
    path = report_cli(run6, out=tmp_path / "report.html")
    text = path.read_text()
    assert path.stat().st_size < 1_000_000
    # six TCP trace graphs, the sequence graph, throughput, and the bottleneck's bandwidth and
    # queue: each one a <figure>, readable (zoomable SVG or an image)
    assert text.count("<figure") == 10
    assert text.count('class="zfig"') + text.count('<img class="graph"') == 10
    assert "<h3>Diagnosis</h3>" in text


def test_htsim_scenarios_are_the_bench_cases_written_out():
    """The committed scenario files are what `tcplab.bench` builds (so a re-run measures the same)."""
    d = ROOT / "benches" / "htsim-dumbbell" / "scenarios"
    assert sorted(p.stem for p in d.glob("*.toml")) == sorted(bench.HTSIM_CASES)
    for name in bench.HTSIM_CASES:
        assert (d / f"{name}.toml").read_text() == bench.scenario_text(name), name


def test_ten_gigabit_case_shape():
    sc = bench.CASES["tcp-dumbbell-64-10g"]().data
    assert len(sc["tcp"]) == 64 and sc["run"]["duration"] == "1s"
    bottleneck = next(l for l in sc["links"] if (l["a"], l["b"]) == ("left", "right"))
    assert (bottleneck["rate"], bottleneck["delay"], bottleneck["queue"]["limit"]) == ("10Gbps", "5ms", "1MB")


@pytest.mark.skipif(not os.access(bench.GNU_TIME, os.X_OK), reason="GNU time not installed")
def test_child_peak_rss_is_the_childs_own():
    """A child's peak RSS is its own: not Python's pre-exec size (a small child reads small), and
    what it allocates shows (a child touching 64 MB reads at least 64 MB)."""
    _, small, _ = bench.run_child(["true"])
    big_ballast = bytearray(b"1") * (96 * 2**20)  # this process is big: a forked child would inherit it
    _, big, _ = bench.run_child([sys.executable, "-c", "x = bytearray(64 * 2**20); x[::4096] = b'1' * len(x[::4096])"])
    assert small < 8 * 2**20 and 64 * 2**20 <= big < 96 * 2**20
    del big_ballast


def test_bench_json_gives_process_time_rss_and_events():
    p = subprocess.run([sys.executable, "-m", "tcplab.cli", "bench", "--json", "--repeat", "1", "udp-dumbbell-16"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    (case,) = json.loads(p.stdout)["cases"]
    for key in ("core_wall_s", "process_s", "events", "ns_per_event", "process_peak_rss_bytes", "instructions_per_event"):
        assert key in case, key
    assert case["events"] > 0 and case["process_s"] > case["process_core_wall_s"] > 0
    # the native `tcplab run` peaks at a few MB (9 MB here); the simulation alone needs more than 1 MB
    assert case["process_peak_rss_bytes"] > 2**20 and case["instructions_per_event"] is None


def _sub_help(parser, name: str) -> str:
    import argparse
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name].format_help()


def test_a_commands_own_parser_prints_the_same_help_and_parses_the_same():
    """main() builds only the named command's sub-parser (issue 28): its help, and what it makes of
    a command line, are those of the whole parser's."""
    from tcplab.cli import COMMANDS, build_parser
    whole = build_parser()
    for name in COMMANDS:
        own = build_parser(name)
        assert _sub_help(own, name) == _sub_help(whole, name), name
    line = ["plot", "runs/x", "--kind", "queue", "--from", "2.5", "--to", "4s", "--format", "svg"]
    a, b = vars(whole.parse_args(line)), vars(build_parser("plot").parse_args(line))
    assert a == b and b["t_to"] == 4.0


def _python_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tcplab", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_top_help_and_unknown_command_still_list_every_command():
    from tcplab.cli import COMMANDS
    p = _python_cli("--help")
    assert p.returncode == 0
    for name in COMMANDS:
        assert f"    {name}" in p.stdout, name
    p = _python_cli("plotz", "x")
    assert p.returncode == 2 and "invalid choice: 'plotz'" in p.stderr and "validate-linux" in p.stderr


def test_plot_and_report_end_with_their_output_flushed_and_files_complete(run6, tmp_path):
    """plot and report leave without the interpreter's teardown (os._exit): what they print
    reaches a pipe, the files are whole, and the exit status is the command's."""
    png = tmp_path / "q.png"
    p = _python_cli("plot", run6, "--kind", "queue", "--out", png)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"{png}\n"
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82")
    html = tmp_path / "r.html"
    p = _python_cli("report", run6, "--out", html)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"{html}\n" and html.read_text().endswith("</html>\n")
    p = _python_cli("plot", run6, "--conn", "nosuch")
    assert p.returncode == 2 and p.stderr.startswith("error: ") and p.stdout == ""


def test_queue_bars_from_the_monitor_equal_those_from_the_per_packet_trace(run6):
    """RunData.queue(link, interval) takes the link monitor's interval series when the interval is a
    whole number of monitor intervals: the same min, max and average as from the trace."""
    from tcplab.rundir import queue_intervals
    run = RunData.load(run6)
    for link in (run.bottleneck, "s0->left", "right->left"):
        ev = run.link_events(link)
        for interval in (0.1, 0.5, 1.0):
            got = run._queue_from_monitor(link, interval)
            assert got is not None, (link, interval)
            want = queue_intervals(ev["t_s"].to_numpy(), ev["qlen_pkts"].to_numpy(), interval, run.sim_end_s)
            assert got["t_s"].to_list() == want["t_s"].to_list()
            for c in ("min_pkts", "max_pkts"):
                assert got[c].to_list() == want[c].to_list(), (link, interval, c)
            assert np.allclose(got["avg_pkts"].to_numpy(), want["avg_pkts"].to_numpy(), rtol=1e-9, atol=1e-9)
    assert run.queue(run.bottleneck, interval=0.5)["max_pkts"].max() > 0
    # not a whole number of monitor intervals: from the trace
    assert run._queue_from_monitor(run.bottleneck, 0.15) is None
    assert run.queue(run.bottleneck, interval=0.15).height == 400


def test_long_paths_drop_only_the_linetos_svg_implies():
    """The report's long paths leave out an L after an M or L pair (an implicit lineto), never
    after a curve or a closepath, where it is not implied."""
    from tcplab.report.figures import _implicit_lineto
    assert _implicit_lineto("M 1 2 L 3 4 L 5 6 M 7 8 L 9 10".split()) == "M 1 2 3 4 5 6 M 7 8 9 10"
    assert _implicit_lineto("M 0 0 z L 1 1 C 1 2 3 4 5 6 L 7 8 L 9 9".split()) == "M 0 0 z L 1 1 C 1 2 3 4 5 6 L 7 8 9 9"


def test_metrics_and_a_comparisons_statistics_leave_numpy_unloaded():
    """tcplab.metrics, Jain's index and describe() (what a reproduction's comparison computes)
    do not import numpy (issue 28: the Python step of a native `tcplab reproduce`); a periodogram
    still does, when it is asked for."""
    import subprocess
    import sys
    code = ("import sys, tcplab.metrics as m; a = 'numpy' in sys.modules; "
            "j = m._jain([1.0, 1.0, 0.0, 0.0]); from tcplab.analysis import describe, periodogram; "
            "d = describe([3.0, 1.0, 2.0]); b = 'numpy' in sys.modules; "
            "periodogram([0.0, 1.0, 0.0, 1.0, 0.0], 0.1); print(a, b, 'numpy' in sys.modules, j, d['median'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[:3] == ["False", "False", "True"]
    assert float(out[3]) == 0.5  # Jain of (1, 1, 0, 0) = 4 / (4 * 2)
    assert float(out[4]) == 2.0


def test_matplotlib_imported_without_set_docstrings_draws_the_same_bytes():
    import subprocess
    import sys
    draw = ("from matplotlib.figure import Figure; import io, hashlib, matplotlib.lines as ml; "
            "f = Figure(figsize=(3, 2), dpi=100); ax = f.add_subplot(); "
            "ln, = ax.plot([0, 1, 2, 3], [1, 3, 2, 4], label='x'); ln.set(linewidth=2, color='0.3'); "
            "ax.set(xlabel='t (s)', title='q'); ax.legend(); b = io.BytesIO(); "
            "f.savefig(b, format='png', metadata={'Software': None}); "
            "print(hashlib.sha256(b.getvalue()).hexdigest(), bool(ml.Line2D.set.__doc__ and 'agg_filter' in ml.Line2D.set.__doc__))")
    lean = "from tcplab.cli.plot import import_matplotlib_without_set_docstrings as f; f(); " + draw
    plain = subprocess.run([sys.executable, "-c", draw], capture_output=True, text=True, check=True).stdout.split()
    fast = subprocess.run([sys.executable, "-c", lean], capture_output=True, text=True, check=True).stdout.split()
    assert plain[1] == "True" and fast[1] == "False"  # the docstrings were skipped, nothing else
    assert fast[0] == plain[0]
