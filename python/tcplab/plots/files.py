"""What `tcplab plot` draws for a run and where the files go."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..rundir import RunData
from .links import flows_graph, link_graph, queue_graph
from .series import _cam
from .style import PLOT_KINDS, save_figure
from .tcp import cam_graph, seq_graph, tcp_graph


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name.replace("->", "-")).strip("-") or "x"


def plot_cli(run_dir: str | Path, conn: str | None = None, kind: str = "tcp", t_from: float | None = None,
             t_to: float | None = None, fmt: str = "png", out: str | Path | None = None) -> list[Path]:
    """What ``tcplab plot`` does. Returns the files written.

    kind: tcp | cam | seq | link | queue | flows. ``conn`` selects the flow for tcp/cam (all
    flows -- for cam, all with CAM rows -- when None) and the flows for seq; for link/queue it
    names the link (default the bottleneck). ``out``: a directory (default RUN_DIR/plots/),
    where files are named ``<kind>_<name>.<fmt>``; or a file name ending in .png, .svg or .pdf
    (its suffix wins over ``fmt``): one figure is written there, several beside it as
    ``<stem>-<name><suffix>`` (``x.png`` with flows a and b: ``x-a.png``, ``x-b.png``)."""
    run = RunData.load(run_dir)
    kind = kind.lower()
    if kind not in PLOT_KINDS:
        raise ValueError(f"unknown plot kind {kind!r}; choose from {', '.join(PLOT_KINDS)}")
    fmt = fmt.lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"unsupported plot format {fmt!r} (png, svg or pdf)")

    jobs: list[tuple[str, Any]] = []  # (name, thunk)
    if kind in ("tcp", "cam"):
        if conn is not None:
            run.flow(conn)  # raises KeyError naming the flows
            names = [conn]
        elif kind == "cam":
            names = [c for c in run.conns if _cam(run, c).height > 0]
            if not names:
                raise ValueError(f"run {run.dir} has no Vegas CAM trace (trace_cam.parquet absent or empty)")
        else:
            names = run.conns
        fn = tcp_graph if kind == "tcp" else cam_graph
        jobs = [(c, (lambda c=c: fn(run, c, t_from, t_to))) for c in names]
    elif kind == "seq":
        jobs = [("all" if conn is None else conn, lambda: seq_graph(run, [conn] if conn else None, t_from, t_to))]
    elif kind in ("link", "queue"):
        link = run.resolve_link(conn) if conn else run.bottleneck
        if link is None:
            raise ValueError(f"run {run.dir} has no links")
        run.link(link)
        fn2 = link_graph if kind == "link" else queue_graph
        jobs = [(link, lambda: fn2(run, link, t_from=t_from, t_to=t_to))]
    else:
        jobs = [("all", lambda: flows_graph(run, t_from=t_from, t_to=t_to))]

    outp = Path(out) if out is not None else run.dir / "plots"
    as_file = out is not None and outp.suffix.lower() in (".png", ".svg", ".pdf")
    written = []
    for name, thunk in jobs:
        fig = thunk()
        if not as_file:
            target = outp / f"{kind}_{_safe(name)}.{fmt}"
        elif len(jobs) == 1:
            target = outp
        else:  # a file name for several figures: one file each beside it, never a directory named x.png
            target = outp.with_name(f"{outp.stem}-{_safe(name)}{outp.suffix}")
        written.append(save_figure(fig, target))
    return written
