"""Per-link and whole-run graphs: link bandwidth, queue length and every flow's throughput."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from matplotlib.figure import Figure

from ..rundir import KB, as_run

if TYPE_CHECKING:
    import polars as pl
from .draw import _draw_queue_bars, _marks
from .series import _in, _link_events, _link_rate_KBps, _np, _trace, _window
from .style import C_BLACK, C_DARK, C_LIGHT, C_MID, FLOW_COLORS, FLOW_STYLES, LEGEND_MAX_FLOWS, _RC, _figure, _finish, _style_axes


def link_bandwidth(run, link: str, interval: float) -> pl.DataFrame:
    """Output bandwidth of ``link`` (KB/s of wire bytes departed) per ``interval``."""
    import polars as pl
    t, v = _link_bandwidth(run, link, interval)
    return pl.DataFrame({"t_s": t, "KBps": v})


def _link_bandwidth(run, link: str, interval: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`link_bandwidth` as (interval starts, KB/s)."""
    ev = _link_events(run, link).where("event", "depart", keep=("t_s", "bytes"))
    t = _np(ev, "t_s")
    end = max(float(run.sim_end_s or 0.0), float(t.max()) if len(t) else 0.0)
    nb = max(1, int(math.ceil(end / interval - 1e-9)))
    edges = np.arange(nb + 1) * interval
    b = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, nb - 1)
    out = np.zeros(nb)
    np.add.at(out, b, _np(ev, "bytes"))
    return edges[:-1], out / interval / KB


def link_graph(run: Any, link: str | None = None, t_from: float | None = None, t_to: float | None = None,
               path: str | Path | None = None, *, intervals: tuple[float, float] = (0.1, 0.3),
               figsize=(8.0, 2.8)) -> Figure:
    """Output bandwidth of ``link`` (default the bottleneck) averaged over two intervals --
    100 ms thin, 300 ms thick -- with the capacity dashed and hash marks on the x-axis at
    every drop (000 Fig 2.8)."""
    run = as_run(run)
    link = link or run.bottleneck
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = _figure(*figsize)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.1, right=0.97, top=0.87, bottom=0.17)
        _style_axes(ax)
        end = float(run.sim_end_s or 1.0)
        t0, t1 = _window(t_from, t_to, 0.0, end)
        tops = []
        for interval, lw, color, gid in ((intervals[0], 0.6, C_MID, "link-thin"), (intervals[1], 1.8, C_BLACK, "link-thick")):
            bt, bv = _link_bandwidth(run, link, interval)
            t = np.r_[bt, bt[-1:] + interval]
            v = np.r_[bv, bv[-1:]]
            (ln,) = ax.plot(t, v, drawstyle="steps-post", lw=lw, color=color,
                            label=f"{interval * 1000:.0f} ms average")
            ln.set_gid(gid)
            tops.append(v.max() if len(v) else 0)
        cap = _link_rate_KBps(run, link)
        if cap:
            ln = ax.axhline(cap, color=C_DARK, lw=0.7, ls=(0, (5, 3)), label=f"capacity {cap:.0f} KB/s")
            ln.set_gid("capacity")
            tops.append(cap)
        drops = _link_events(run, link).where("event", "drop", keep=("t_s",))
        td = _np(drops, "t_s")
        _marks(ax, td[_in(td, t0, t1)], 0.0, 0.05, "drop-marks", lw=0.6, clip=True)
        ax.set_ylim(0, max(tops + [1.0]) * 1.15)
        ax.set_xlim(t0, t1)
        ax.set_xlabel("Time (seconds)")
        ax.set_ylabel("Output KB/s")
        ax.legend(loc="upper right", frameon=True, framealpha=0.85, edgecolor=C_LIGHT, ncols=3)
        fig.suptitle(f"Output bandwidth of {link} (drops: {len(td)} marked on the axis)", y=0.97, fontsize=9)
    return _finish(fig, path)


def queue_graph(run: Any, link: str | None = None, interval: float = 0.1, t_from: float | None = None,
                t_to: float | None = None, path: str | Path | None = None, *, figsize=(8.0, 2.8)) -> Figure:
    """Queue size of ``link`` (default the bottleneck) per ``interval``: a min–max bar per
    interval with the time-weighted average as a line with dots (000 Figs 2.7, 6.10)."""
    run = as_run(run)
    link = link or run.bottleneck
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = _figure(*figsize)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.1, right=0.97, top=0.87, bottom=0.17)
        _style_axes(ax)
        end = float(run.sim_end_s or 1.0)
        t0, t1 = _window(t_from, t_to, 0.0, end)
        lim = None
        try:
            lim = run.link(link).get("queue_limit_pkts")
        except KeyError:
            pass
        if lim:
            ax.axhline(lim, color=C_DARK, lw=0.6, ls=(0, (5, 3)), label=f"limit {lim}").set_gid("queue-limit")
        _draw_queue_bars(ax, run, link, t0, t1, lim, interval, width_in=figsize[0] * 0.87)
        aqm = _aqm(run, link)
        if aqm is not None and aqm.height:
            # RED's EWMA average, sampled at the end of each monitor interval.
            ta = _np(aqm, "t_s")
            (lr,) = ax.plot(ta, _np(aqm, "aqm_avg_pkts"), color=C_DARK, lw=1.0, ls="--", label="RED average")
            lr.set_gid("queue-red-avg")
        ax.set_xlim(t0, t1)
        ax.set_xlabel("Time (seconds)")
        ax.set_ylabel("Queue (pkts)")
        ax.legend(loc="upper right", frameon=True, framealpha=0.85, edgecolor=C_LIGHT, ncols=3)
        fig.suptitle(f"Queue size at {link} ({interval * 1000:g} ms intervals: min–max bars, average)",
                     y=0.97, fontsize=9)
    return _finish(fig, path)


_ACK_COLUMNS = ("t_s", "kind", "snd_una")  # what flow_throughput reads of a flow's trace


def flow_throughput(run, conn: str, interval: float, end: float) -> tuple[np.ndarray, np.ndarray]:
    """(interval starts, KB/s acknowledged per interval) from the sender's ACK progress."""
    snd = _trace(run, conn, "snd", columns=_ACK_COLUMNS).where("kind", ["ack", "dupack"], keep=("t_s", "snd_una"))
    nb = max(1, int(math.ceil(end / interval - 1e-9)))
    edges = np.arange(nb + 1) * interval
    t = _np(snd, "t_s")
    una = np.maximum.accumulate(_np(snd, "snd_una")) if len(t) else np.zeros(0)
    i = np.searchsorted(t, edges, side="right") - 1
    acked = np.where(i >= 0, una[np.clip(i, 0, None)] if len(una) else 0.0, 0.0)
    return edges[:-1], np.diff(acked) / interval / KB


def udp_throughput(run, name: str, interval: float, end: float) -> tuple[np.ndarray, np.ndarray, str]:
    """(interval starts, KB/s, how) of UDP source ``name``: its datagrams leaving a traced link
    per interval -- the traced link on its path that forwarded the fewest of them, i.e. the one
    nearest its destination -- or, when no traced link carries it (or the run predates the link
    trace's ``flow`` column), its mean received rate over the run (summary.json) as a flat line."""
    nb = max(1, int(math.ceil(end / interval - 1e-9)))
    edges = np.arange(nb + 1) * interval
    if run.has_link:
        ev = _flow_link_events(run, name)
        if "flow" in ev.columns:
            ev = ev.where("event", "depart")
            if ev.height:
                links, counts = np.unique(ev["link"], return_counts=True)
                link = str(links[np.lexsort((links, counts))[0]])  # the fewest departures; by name on a tie
                ev = ev.where("link", link)
                b = np.clip(np.searchsorted(edges, _np(ev, "t_s"), side="right") - 1, 0, nb - 1)
                out = np.zeros(nb)
                np.add.at(out, b, _np(ev, "bytes"))
                return edges[:-1], out / interval / KB, f"leaving {link}"
    u = next(x for x in run.summary.get("udp") or [] if x["name"] == name)
    return edges[:-1], np.full(nb, u["received_bytes"] / max(end, 1e-9) / KB), "mean received"


def _flow_link_events(run, name: str):
    """Every traced link's rows of packets of flow ``name`` (no ``flow`` column: an older trace)."""
    f = getattr(run, "link_cols", None)
    if f is not None:
        return f(None, flow=name)
    from ..cols import Cols
    import polars as pl
    ev = run.link_events()
    return Cols.from_polars(ev.filter(pl.col("flow") == name) if "flow" in ev.columns else ev)


def _aqm(run, link: str | None):
    """RED's average of ``link`` (tcplab.rundir.RunData.aqm_average) as numpy columns; None when
    the run has no such accessor."""
    f = getattr(run, "aqm_cols", None)
    if f is not None:
        return f(link)
    if not hasattr(run, "aqm_average"):
        return None
    from ..cols import Cols
    return Cols.from_polars(run.aqm_average(link))


def flows_graph(run: Any, interval: float | None = None, t_from: float | None = None, t_to: float | None = None,
                path: str | Path | None = None, *, conns: Sequence[str] | None = None, figsize=(8.0, 3.2)) -> Figure:
    """Per-flow throughput over time from ACK progress (KB/s per ``interval``), the UDP
    sources' (see :func:`udp_throughput`), their total, and the bottleneck capacity line
    (004 Figs 2-6). ``conns`` selects flows and UDP sources by name (default: all)."""
    run = as_run(run)
    udp_names = [u["name"] for u in run.summary.get("udp") or []]
    udps = [c for c in conns if c in udp_names] if conns else udp_names
    conns = [c for c in conns if c not in udp_names] if conns else run.conns
    end = float(run.sim_end_s or 1.0)
    if interval is None:
        interval = next((iv for iv in (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0) if end / iv <= 60),
                        end / 60)
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = _figure(*figsize)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.1, right=0.97, top=0.87, bottom=0.15)
        _style_axes(ax)
        t0, t1 = _window(t_from, t_to, 0.0, end)
        total = None
        tops = [1.0]
        # Past a dozen lines a legend would cover the graph: then only the total and capacity
        # are labelled (the lines keep their gids).
        many = len(conns) + len(udps) > LEGEND_MAX_FLOWS
        if len(conns) > 1 and hasattr(run, "every_flow_cols"):
            run.every_flow_cols(_ACK_COLUMNS)  # one pass over the TCP trace for all the flows, what they need
        for i, c in enumerate(conns):
            t, v = flow_throughput(run, c, interval, end)
            total = v.copy() if total is None else total + v
            color = FLOW_COLORS[i % len(FLOW_COLORS)]
            ls = FLOW_STYLES[(i // len(FLOW_COLORS)) % len(FLOW_STYLES)]
            (ln,) = ax.plot(np.r_[t, t[-1:] + interval], np.r_[v, v[-1:]], drawstyle="steps-post", lw=0.9,
                            color=color, ls=ls, label="_nolegend_" if many else c)
            ln.set_gid(f"flow-tput:{c}")
            tops.append(float(v.max()) if len(v) else 0.0)
        for j, u in enumerate(udps, start=len(conns)):
            t, v, how = udp_throughput(run, u, interval, end)
            total = v.copy() if total is None else total + v
            color = FLOW_COLORS[j % len(FLOW_COLORS)]
            (ln,) = ax.plot(np.r_[t, t[-1:] + interval], np.r_[v, v[-1:]], drawstyle="steps-post", lw=0.9,
                            color=color, ls=":", label="_nolegend_" if many else f"{u} (UDP, {how})")
            ln.set_gid(f"flow-udp:{u}")
            tops.append(float(v.max()) if len(v) else 0.0)
        if total is not None and len(conns) + len(udps) > 1:
            (ln,) = ax.plot(np.r_[t, t[-1:] + interval], np.r_[total, total[-1:]], drawstyle="steps-post",
                            lw=0.8, color=C_MID, label="total")
            ln.set_gid("flow-total")
            tops.append(float(total.max()))
        link = run.bottleneck
        cap = _link_rate_KBps(run, link)
        if cap:
            ax.axhline(cap, color=C_DARK, lw=0.7, ls=(0, (5, 3)), label=f"{link} capacity").set_gid("capacity")
            tops.append(cap)
        ax.set_ylim(0, max(tops) * 1.15)
        ax.set_xlim(t0, t1)
        ax.set_xlabel("Time (seconds)")
        ax.set_ylabel(f"Throughput KB/s\n({interval * 1000:g} ms)")
        ax.legend(loc="upper right", frameon=True, framealpha=0.85, edgecolor=C_LIGHT,
                  ncols=2 if many else min(5, len(conns) + len(udps) + 2))
        what = ("Throughput of each flow (TCP: from ACK progress; UDP: datagrams forwarded)" if udps
                else "Throughput of each flow (from ACK progress)")
        if many:
            what += f" — {len(conns) + len(udps)} flows, not labelled"
        fig.suptitle(what, y=0.97, fontsize=9)
    return _finish(fig, path)
