"""One self-contained HTML report per run (``tcplab report``) or per reproduction
(``tcplab reproduce``).

The file needs nothing but itself: graphs are inline base64 PNGs, the stylesheet and the
few lines of script (click a graph to enlarge it, click again to restore) are inline, the
favicon is a data: URL. It opens from disk with no server and makes no network request.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import plots
from .rundir import RunData, as_run

__all__ = ["write_report", "write_comparison_report", "report_cli", "figure_to_data_uri"]

MAX_TCP_GRAPHS = 12  # per run; a run with more flows gets the first 12 and a note
MAX_LINK_GRAPHS = 6

_CSS = """
:root { --fg:#111; --mute:#666; --rule:#ccc; --bg:#fff; --band:#f4f4f4; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       color: var(--fg); background: var(--bg); margin: 0 auto; padding: 1.2em 2em 4em; max-width: 1400px; }
h1 { font-size: 1.5em; margin: .2em 0 .1em; }
h2 { font-size: 1.2em; margin: 1.6em 0 .4em; padding-bottom: .2em; border-bottom: 1px solid var(--rule); }
h3 { font-size: 1.02em; margin: 1.2em 0 .3em; }
.meta { color: var(--mute); font-size: .9em; }
table { border-collapse: collapse; font-size: .86em; margin: .4em 0 1em; }
th, td { padding: .22em .6em; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
th { background: var(--band); font-weight: 600; position: sticky; top: 0; }
td.s, th.s { text-align: left; }
tr.miss td { background: #fff3f0; }
.tablewrap { overflow-x: auto; max-width: 100%; }
figure { margin: .6em 0 1.2em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; cursor: zoom-in; display: block; }
figure.zoomed img { max-width: none; width: 200%; cursor: zoom-out; }
figure.zoomed { overflow-x: auto; }
figcaption { color: var(--mute); font-size: .85em; margin-top: .2em; }
.side { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 1em; align-items: start; }
details { margin: .6em 0; }
summary { cursor: pointer; font-weight: 600; }
pre { background: var(--band); padding: .8em; overflow-x: auto; font-size: .82em; }
nav a { margin-right: 1em; }
.note { color: var(--mute); font-style: italic; }
"""

_JS = """
document.addEventListener('click', function (ev) {
  var img = ev.target.closest ? ev.target.closest('figure img') : null;
  if (!img) return;
  img.parentNode.classList.toggle('zoomed');
});
"""


# ----------------------------------------------------------------------------- helpers
def figure_to_data_uri(fig, dpi: int = 110) -> str:
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context(plots._RC):
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "tcplab"})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return "—" if math.isnan(v) else str(v)
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-3):
            return f"{v:.3g}"
        if abs(v) >= 100:
            return f"{v:,.1f}"
        return f"{v:.4g}" if abs(v) < 1 else f"{v:.3f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(", ", ": "))
    return str(v)


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, cls: str = "",
           row_class=None) -> str:
    if not rows:
        return '<p class="note">(none)</p>'
    if columns is None:
        columns = []
        for r in rows:
            for k in r:
                if k not in columns:
                    columns.append(k)
    text_cols = {c for c in columns if all(isinstance(r.get(c), str) or r.get(c) is None for r in rows)}
    out = [f'<div class="tablewrap"><table class="{_e(cls)}"><thead><tr>']
    out += [f'<th class="{"s" if c in text_cols else ""}">{_e(c)}</th>' for c in columns]
    out.append("</tr></thead><tbody>")
    for r in rows:
        rc = row_class(r) if row_class else ""
        out.append(f'<tr class="{_e(rc)}">' if rc else "<tr>")
        out += [f'<td class="{"s" if c in text_cols else ""}">{_e(_fmt(r.get(c)))}</td>' for c in columns]
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _figure_html(fig, caption: str, fig_id: str = "") -> str:
    uri = figure_to_data_uri(fig)
    idattr = f' id="{_e(fig_id)}"' if fig_id else ""
    return (f'<figure{idattr}><img alt="{_e(caption)}" src="{uri}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _page(title: str, body: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<link rel=\"icon\" href=\"data:,\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><p class=\"meta\">written by tcplab {stamp}; click a graph to enlarge it.</p>"
        f"{body}<script>{_JS}</script></body></html>\n"
    )


def _write(path: str | Path, text: str) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, p)
    return p


def _as_runs(x) -> list:
    if isinstance(x, (str, Path)) or hasattr(x, "summary"):
        return [as_run(x)]
    return [as_run(r) for r in x]


def _flow_variant_title(run, conn: str) -> str:
    try:
        f = run.flow(conn)
    except KeyError:
        return conn
    v = f.get("variant")
    return f"{conn} ({v})" if v else conn


# ----------------------------------------------------------------------------- sections
def _relevant_links(run) -> list[str]:
    """The bottleneck first, then every other link that dropped packets or was >50% busy."""
    out = []
    b = run.bottleneck
    if b:
        out.append(b)
    for lk in run.summary.get("links", []):
        if lk["name"] in out:
            continue
        if (lk.get("drops") or 0) > 0 or (lk.get("utilization") or 0) > 0.5:
            out.append(lk["name"])
    return out[:MAX_LINK_GRAPHS]


def _run_section(run, anchor: str, heading: str | None = None, graphs: bool = True) -> str:
    s = run.summary
    heading = heading or f"Run: {s.get('scenario', run.dir.name)}"
    meta = {k: s.get(k) for k in ("scenario", "seed", "tcplab_version", "sim_end_s", "wall_s", "events", "bottleneck")
            if k in s}
    meta["bottleneck"] = run.bottleneck
    meta["run directory"] = str(run.dir)
    parts = [f'<section id="{_e(anchor)}"><h2>{_e(heading)}</h2>',
             _table([meta], cls="meta")]
    links = run.links.to_dicts() if run.summary.get("links") else []
    flows = run.flows.to_dicts() if run.summary.get("flows") else []
    parts += ["<h3>Links</h3>", _table(links), "<h3>Flows</h3>", _table(flows)]
    if graphs:
        parts.append(_graphs_html(run, anchor))
    scen = run.scenario_text if hasattr(run, "scenario_text") else None
    if scen:
        parts.append(f"<details><summary>scenario.toml</summary><pre>{_e(scen)}</pre></details>")
    parts.append("</section>")
    return "".join(parts)


def _graphs_html(run, anchor: str) -> str:
    parts = []
    has_tcp = getattr(run, "has_tcp", True)
    has_link = getattr(run, "has_link", True)
    conns = run.conns
    if has_tcp and conns:
        parts.append("<h3>TCP trace graphs</h3>")
        for c in conns[:MAX_TCP_GRAPHS]:
            parts.append(_figure_html(plots.tcp_graph(run, c), f"TCP trace graph of {_flow_variant_title(run, c)}: "
                                      "windows, sending rate (last 12 segments), bottleneck queue",
                                      f"{anchor}-tcp-{c}"))
        if len(conns) > MAX_TCP_GRAPHS:
            parts.append(f'<p class="note">{len(conns) - MAX_TCP_GRAPHS} more flows not drawn; '
                         f'use <code>tcplab plot {_e(run.dir)} --conn NAME</code>.</p>')
        vegas = [c for c in conns if run.cam(c).height > 0]
        if vegas:
            parts.append("<h3>Vegas congestion avoidance</h3>")
            for c in vegas[:MAX_TCP_GRAPHS]:
                parts.append(_figure_html(plots.cam_graph(run, c), f"CAM graph of {c}", f"{anchor}-cam-{c}"))
        parts.append("<h3>Sequence numbers</h3>")
        parts.append(_figure_html(plots.seq_graph(run, conns[:MAX_TCP_GRAPHS]),
                                  "Sequence number versus time (sender above, receiver below)", f"{anchor}-seq"))
        parts.append("<h3>Throughput over time</h3>")
        parts.append(_figure_html(plots.flows_graph(run, conns=conns[:MAX_TCP_GRAPHS]),
                                  "Per-flow throughput from ACK progress, with the bottleneck capacity",
                                  f"{anchor}-flows"))
    if has_link:
        for lk in _relevant_links(run):
            parts.append(f"<h3>Link {_e(lk)}</h3>")
            parts.append(_figure_html(plots.link_graph(run, lk), f"Output bandwidth of {lk} (100 ms thin, 300 ms "
                                      "thick), drops marked on the axis", f"{anchor}-link-{lk}"))
            parts.append(_figure_html(plots.queue_graph(run, lk), f"Queue size at {lk}: min–max per 100 ms "
                                      "with the average", f"{anchor}-queue-{lk}"))
    return "".join(parts)


# ----------------------------------------------------------------------------- public API
def write_report(run_dirs_or_run, path: str | Path, *, title: str | None = None) -> Path:
    """Write ONE self-contained HTML file for one run or several (a run directory, a RunData,
    or a list of either): per run the summary tables (links, flows) and every relevant
    graph -- the TCP trace graph of each flow (first 12), the CAM graph of each Vegas flow,
    the sequence plot, per-flow throughput, and bandwidth + queue graphs for the bottleneck
    and every link that dropped packets or was more than half busy. Returns the path."""
    runs = _as_runs(run_dirs_or_run)
    if not runs:
        raise ValueError("write_report: no runs given")
    if title is None:
        title = "tcplab report — " + ", ".join(str(r.summary.get("scenario", r.dir.name)) for r in runs[:4])
        if len(runs) > 4:
            title += f" and {len(runs) - 4} more"
    body = []
    if len(runs) > 1:
        body.append("<nav>" + "".join(f'<a href="#run{i}">{_e(r.summary.get("scenario", r.dir.name))} '
                                      f'(seed {_e(r.summary.get("seed"))})</a>' for i, r in enumerate(runs)) + "</nav>")
    for i, r in enumerate(runs):
        body.append(_run_section(r, f"run{i}"))
    return _write(path, _page(title, "".join(body)))


def _rows_to_dicts(rows) -> list[dict]:
    if rows is None:
        return []
    if hasattr(rows, "to_dicts"):  # polars
        return rows.to_dicts()
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # pandas
        return rows.to_dict(orient="records")
    out = []
    for r in rows:
        if isinstance(r, Mapping):
            out.append(dict(r))
        elif hasattr(r, "_asdict"):
            out.append(r._asdict())
        elif hasattr(r, "__dataclass_fields__"):
            import dataclasses

            out.append(dataclasses.asdict(r))
        else:
            vals = list(r)
            out.append(dict(zip(["variant", "metric", "paper", "ours"], vals)))
    return out


def _pick_conn(run, variant: str) -> str | None:
    for f in run.summary.get("flows", []):
        if str(f.get("variant", "")).lower() == str(variant).lower():
            return f["name"]
    return run.conns[0] if run.conns else None


def write_comparison_report(out_dir: str | Path, comparison_rows, runs: Mapping[str, Any],
                            path: str | Path | None = None, *, title: str | None = None) -> Path:
    """The ``tcplab reproduce`` report: the paper-vs-ours table (rows with at least
    variant, metric, paper, ours; extra keys such as unit or note become extra columns),
    then the TCP trace graphs of the variants side by side (Reno beside Vegas, as in thesis
    Figs 4.1 and 4.3), then each run's full section. ``runs`` maps a variant name to its run
    directory (or RunData). ``path`` defaults to OUT_DIR/report.html; a relative path is
    taken inside ``out_dir``. Returns the path."""
    out_dir = Path(out_dir)
    p = Path(path) if path is not None else Path("report.html")
    if not p.is_absolute():
        p = out_dir / p
    rows = _rows_to_dicts(comparison_rows)
    loaded = {v: as_run(r) for v, r in runs.items()}
    title = title or "tcplab reproduction — paper vs ours"
    cols = ["variant", "metric", "paper", "ours"]
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)

    def miss(r):
        for k in ("ok", "pass", "within"):
            if k in r and r[k] is False:
                return "miss"
        return ""

    body = ["<h2>Paper vs ours</h2>", _table(rows, cols, cls="comparison", row_class=miss)]
    if loaded:
        body.append("<h2>TCP trace graphs side by side</h2><div class=\"side\">")
        for v, run in loaded.items():
            c = _pick_conn(run, v)
            if c is None or not getattr(run, "has_tcp", True):
                body.append(f"<div><h3>{_e(v)}</h3><p class=\"note\">no TCP trace</p></div>")
                continue
            body.append(f"<div><h3>{_e(v)}</h3>" + _figure_html(plots.tcp_graph(run, c),
                        f"{v}: TCP trace graph of {c}", f"side-{v}") + "</div>")
        body.append("</div>")
        body.append("<nav>" + "".join(f'<a href="#v{i}">{_e(v)}</a>' for i, v in enumerate(loaded)) + "</nav>")
        for i, (v, run) in enumerate(loaded.items()):
            body.append(_run_section(run, f"v{i}", heading=f"{v}: {run.summary.get('scenario', run.dir.name)}"))
    return _write(p, _page(title, "".join(body)))


def report_cli(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """What ``tcplab report RUN_DIR`` does: RUN_DIR/report.html unless ``out`` is given (a
    file, or a directory to put report.html in). Returns the path written."""
    run = RunData.load(run_dir)
    if out is None:
        target = run.dir / "report.html"
    else:
        target = Path(out)
        if target.is_dir() or (not target.suffix and not target.exists()):
            target = target / "report.html"
    return write_report(run, target)
