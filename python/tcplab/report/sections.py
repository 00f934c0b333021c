"""The parts of a report for one run: its tables and, drawn in two processes when it pays, its graphs."""

from __future__ import annotations

import os
from pathlib import Path

from ..rundir import as_run
from .figures import ZOOM_MAX_MARKERS, ZOOM_SVG_MAX_BYTES, _figure_html, _native_html, _zoom_ids
from .page import _e, _table


MAX_TCP_GRAPHS = 12  # per run; a run with more flows gets the first 12 and a note
MAX_LINK_GRAPHS = 6


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
    # the tables' rows without polars when the run is a RunData (tcplab.rundir_cols.frame_rows)
    links = (run.link_rows() if hasattr(run, "link_rows") else run.links.to_dicts()) if run.summary.get("links") else []
    flows = (run.flow_rows() if hasattr(run, "flow_rows") else run.flows.to_dicts()) if run.summary.get("flows") else []
    parts += ["<h3>Links</h3>", _table(links), "<h3>Flows</h3>", _table(flows)]
    from ..diagnose.report_section import section_html  # issue 29: tcplab diagnose's findings
    parts.append(section_html(run))
    if graphs:
        parts.append(_graphs_html(run, anchor))
    scen = run.scenario_text if hasattr(run, "scenario_text") else None
    if scen:
        parts.append(f"<details><summary>scenario.toml</summary><pre>{_e(scen)}</pre></details>")
    parts.append("</section>")
    return "".join(parts)


class _Pending:
    """A graph built but not yet drawn: drawn with the report's others by `_draw_pending`."""

    def __init__(self, fig, caption: str, fig_id: str, uid: str | None = None):
        self.args = (fig, caption, fig_id, True, uid or f"zg{next(_zoom_ids)}")


class _Native:
    """A graph for tcplab-plot to draw (issue 28: the report without matplotlib): its kind and
    flow(s) or link for ``_core.report_graphs``, and ``build`` making the matplotlib figure
    when tcplab-plot leaves it to Python (the CAM graph, UDP sources, ...)."""

    def __init__(self, kind: str, names: list[str], build, caption: str, fig_id: str):
        self.kind, self.names, self.build = kind, [str(n) for n in names], build
        self.caption, self.fig_id, self.uid = caption, fig_id, f"zg{next(_zoom_ids)}"


def _native_dir(run) -> str | None:
    """The run directory tcplab-plot reads for the report's graphs: a complete run on disk
    (RunData), unless TCPLAB_REPORT_NATIVE=0 asks for matplotlib everywhere. None: matplotlib."""
    from ..rundir import RunData
    if os.environ.get("TCPLAB_REPORT_NATIVE", "") == "0" or not isinstance(run, RunData):
        return None
    try:
        from .. import _core
    except ImportError:
        return None
    return str(run.dir) if hasattr(_core, "report_graphs") else None


def _draw_native(parts: list, run_dir: str | None) -> list:
    """`parts` with every _Native drawn by tcplab-plot into its HTML, or turned into a _Pending
    (its matplotlib figure built) when tcplab-plot does not draw it."""
    nat = [i for i, p in enumerate(parts) if isinstance(p, _Native)]
    if not nat:
        return parts
    out = list(parts)
    if run_dir is None:
        answers = [("python", "not a run directory")] * len(nat)
    else:
        from .. import _core
        answers = _core.report_graphs(run_dir, [(parts[i].kind, parts[i].names, parts[i].uid) for i in nat],
                                      ZOOM_SVG_MAX_BYTES, ZOOM_MAX_MARKERS, min(2, os.cpu_count() or 1))
    for i, a in zip(nat, answers):
        p = parts[i]
        out[i] = _native_html(a, p.caption, p.fig_id) if a[0] != "python" else _Pending(p.build(), p.caption, p.fig_id, p.uid)
    return out


def _draw_pending(parts: list) -> list[str]:
    """`parts` with every _Pending drawn into its HTML. Drawing (SVG/PNG, half the report's
    time) is split with one forked child when the machine has two cores or more: the figures
    are already built, so the child runs only matplotlib (no polars, whose thread pool does not
    survive a fork) and hands back HTML text. The output is the same as drawn in one process;
    if the child fails, its share is drawn here. TCPLAB_REPORT_JOBS=1 draws in one process."""
    pend = [i for i, p in enumerate(parts) if isinstance(p, _Pending)]
    out = list(parts)
    if not pend:
        return out
    parallel = (len(pend) >= 4 and hasattr(os, "fork") and (os.cpu_count() or 1) >= 2
                and os.environ.get("TCPLAB_REPORT_JOBS", "") != "1")
    theirs_idx = pend[1::2] if parallel else []
    mine_idx = pend[0::2] if parallel else pend
    pid = r = None
    if theirs_idx:
        import pickle
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            pid = r = None
            mine_idx = pend
            theirs_idx = []
        if pid == 0:  # the child: draw its share, send the HTML, leave without cleanup
            code = 1
            try:
                os.close(r)
                data = pickle.dumps([_figure_html(*parts[i].args) for i in theirs_idx])
                with os.fdopen(w, "wb") as f:
                    f.write(data)
                code = 0
            finally:
                os._exit(code)
        if pid is not None:
            os.close(w)
    for i in mine_idx:
        out[i] = _figure_html(*parts[i].args)
    if pid is not None:
        import pickle
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        drawn = None
        if status == 0 and data:
            try:
                drawn = pickle.loads(data)
            except Exception:
                drawn = None
        if drawn is None or len(drawn) != len(theirs_idx):
            drawn = [_figure_html(*parts[i].args) for i in theirs_idx]
        for i, h in zip(theirs_idx, drawn):
            out[i] = h
    return out


def _mpl(name: str, *args, **kw):
    """A figure from tcplab.plots (matplotlib, imported only when a graph needs it)."""
    def build():
        from ..cli.plot import import_matplotlib_without_set_docstrings
        import_matplotlib_without_set_docstrings()  # the lean import, once (a no-op after)
        from .. import plots
        return getattr(plots, name)(*args, **kw)
    return build


def _graphs_html(run, anchor: str) -> str:
    parts: list = []
    native = _native_dir(run)

    def graph(kind: str, names: list[str], build, caption: str, fig_id: str):
        if native is not None:
            return _Native(kind, names, build, caption, fig_id)
        return _Pending(build(), caption, fig_id)

    has_tcp = getattr(run, "has_tcp", True)
    has_link = getattr(run, "has_link", True)
    conns = run.conns
    if has_tcp and conns:
        if hasattr(run, "every_flow_cols") and native is None:
            run.every_flow_cols()  # the graphs of every flow: one pass over the TCP trace
        parts.append("<h3>TCP trace graphs</h3>")
        for c in conns[:MAX_TCP_GRAPHS]:
            parts.append(graph("tcp", [c], _mpl("tcp_graph", run, c),
                               f"TCP trace graph of {_flow_variant_title(run, c)}: "
                               "windows, sending rate (last 12 segments), bottleneck queue", f"{anchor}-tcp-{c}"))
        if len(conns) > MAX_TCP_GRAPHS:
            parts.append(f'<p class="note">{len(conns) - MAX_TCP_GRAPHS} more flows not drawn; '
                         f'use <code>tcplab plot {_e(run.dir)} --conn NAME</code>.</p>')
        vegas = [c for c in conns if (run.cam_cols(c) if hasattr(run, "cam_cols") else run.cam(c)).height > 0]
        if vegas:
            parts.append("<h3>Vegas congestion avoidance</h3>")
            for c in vegas[:MAX_TCP_GRAPHS]:
                parts.append(graph("cam", [c], _mpl("cam_graph", run, c), f"CAM graph of {c}", f"{anchor}-cam-{c}"))
        parts.append("<h3>Sequence numbers</h3>")
        parts.append(graph("seq", conns[:MAX_TCP_GRAPHS], _mpl("seq_graph", run, conns[:MAX_TCP_GRAPHS]),
                           "Sequence number versus time (sender above, receiver below)", f"{anchor}-seq"))
    # UDP sources belong on the throughput graph too (issue 14); a run with only UDP gets it alone.
    udp_names = [u["name"] for u in run.summary.get("udp") or []]
    tcp_names = conns[:MAX_TCP_GRAPHS] if has_tcp and conns else []
    if tcp_names or udp_names:
        parts.append("<h3>Throughput over time</h3>")
        what = ("Per-flow throughput (TCP from ACK progress, UDP from datagrams forwarded), with the "
                "bottleneck capacity" if udp_names else "Per-flow throughput from ACK progress, with the "
                "bottleneck capacity")
        parts.append(graph("flows", tcp_names + udp_names, _mpl("flows_graph", run, conns=tcp_names + udp_names),
                           what, f"{anchor}-flows"))
    if has_link:
        for lk in _relevant_links(run):
            parts.append(f"<h3>Link {_e(lk)}</h3>")
            parts.append(graph("link", [lk], _mpl("link_graph", run, lk), f"Output bandwidth of {lk} (100 ms thin, "
                               "300 ms thick), drops marked on the axis", f"{anchor}-link-{lk}"))
            parts.append(graph("queue", [lk], _mpl("queue_graph", run, lk), f"Queue size at {lk}: min–max per "
                               "100 ms with the average", f"{anchor}-queue-{lk}"))
    return "".join(_draw_pending(_draw_native(parts, native)))
