"""Marks and panels several graphs share: hash marks, the window lines, the sending rate, the
queue bars and the Vegas CAM panel."""

from __future__ import annotations


from typing import Any

import numpy as np
from matplotlib.collections import LineCollection

from ..rundir import KB
from .series import (DECIMATE_MIN_POINTS, MARK_COLUMNS, _cols, _columns, _in, _np, _plot_steps, _queue, _step_window,
                     cam_scale_KBps_per_buffer, send_window, sending_rate)
from .style import C_BLACK, C_DARK, C_LIGHT, C_MID


def _marks(ax, x, y0: float, y1: float, gid: str, color=C_BLACK, lw=0.5, clip=False, zorder=3):
    """Vertical hash marks at data-x positions spanning axes-fraction y0..y1 (beyond
    DECIMATE_MIN_POINTS marks, one per drawn column: marks closer than a column coincide)."""
    x = np.asarray(x, dtype=float)
    if len(x) > DECIMATE_MIN_POINTS:
        fin = x[np.isfinite(x)]
        if len(fin):
            _, first = np.unique(_columns(fin, float(fin.min()), float(fin.max()), MARK_COLUMNS), return_index=True)
            x = fin[np.sort(first)]
        # One path of strokes (a LineCollection writes one SVG element per mark).
        xs = np.repeat(x, 3)
        xs[2::3] = np.nan
        ys = np.tile([y0, y1, np.nan], len(x))
        (ln,) = ax.plot(xs, ys, color=color, lw=lw, transform=ax.get_xaxis_transform(), zorder=zorder,
                        solid_capstyle="butt", scalex=False, scaley=False)
        ln.set_gid(gid)
        ln.set_clip_on(clip)
        return ln
    segs = np.zeros((len(x), 2, 2))
    segs[:, :, 0] = x[:, None]
    segs[:, 0, 1] = y0
    segs[:, 1, 1] = y1
    lc = LineCollection(segs, colors=color, linewidths=lw, transform=ax.get_xaxis_transform(), zorder=zorder)
    lc.set_gid(gid)
    lc.set_clip_on(clip)
    ax.add_collection(lc, autolim=False)
    return lc

def _draw_windows(ax, snd: Any, t0, t1, send_buffer: float | None = None):
    t = _np(snd, "t_s")
    m = _step_window(t, t0, t1)
    tt = t[m]
    series = {
        "ssthresh": (_np(snd, "ssthresh")[m] / KB, dict(color=C_BLACK, lw=0.8, ls=(0, (4, 2)), label="threshold window")),
        "sndwnd": (send_window(snd, send_buffer)[m] / KB, dict(color=C_DARK, lw=1.6, label="send window")),
        "cwnd": (_np(snd, "cwnd")[m] / KB, dict(color=C_LIGHT, lw=2.2, label="congestion window")),
        "unacked": (_np(snd, "unacked")[m] / KB, dict(color=C_BLACK, lw=0.6, label="unacked bytes")),
    }
    for name, (v, kw) in series.items():
        (ln,) = _plot_steps(ax, tt, v, t0, t1, zorder={"cwnd": 2, "sndwnd": 1.9}.get(name, 2.5), **kw)
        ln.set_gid(f"line-{name}")
    # y range: what the flow actually uses; huge initial thresholds / windows are clipped
    base = max([float(np.nanmax(series[k][0])) for k in ("cwnd", "unacked") if len(series[k][0])] + [1.0])
    ytop = base
    for k in ("sndwnd", "ssthresh"):
        v = series[k][0]
        if len(v) and np.nanmax(v) <= 2.0 * base:
            ytop = max(ytop, float(np.nanmax(v)))
    ax.set_ylim(0, ytop * 1.12)
    ax.set_ylabel("Windows (KB)")


def _draw_rate(ax, snd: Any, t0, t1, n=12):
    s = _cols(snd).where("kind", ["send", "retransmit"], keep=("t_s", "len"))
    t = _np(s, "t_s")
    r = sending_rate(t, _np(s, "len"), n) / KB
    m = _step_window(t, t0, t1)
    (ln,) = _plot_steps(ax, t[m], r[m], t0, t1, color=C_BLACK, lw=0.5)
    ln.set_gid("rate-line")
    top = np.nanmax(r[m]) if m.any() and np.isfinite(r[m]).any() else 1.0
    ax.set_ylim(0, top * 1.1 if top > 0 else 1.0)
    ax.set_ylabel(f"Sending KB/s\n(last {n} segs)")


def _queue_interval_for(span: float) -> float:
    """Bar interval for the queue panel: 100 ms as in 000 Fig 2.7, coarser for long windows
    (about 150 bars at most), finer for short zooms."""
    for iv in (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0):
        if span / iv <= 150:
            return iv
    return span / 150


def _draw_queue_bars(ax, run, link: str | None, t0, t1, limit=None, interval: float | None = None,
                     gid_prefix: str = "queue", width_in: float = 7.0):
    """Min–max bar per interval with the time-weighted average (000 Figs 2.7, 6.10)."""
    if link is None or not getattr(run, "has_link", True):
        ax.text(0.5, 0.5, "no link trace", transform=ax.transAxes, ha="center", va="center", color=C_MID)
        ax.set_ylabel("Queue (pkts)")
        return None
    if interval is None:
        interval = _queue_interval_for(t1 - t0)
    q = _queue(run, link, interval)
    t = _np(q, "t_s") + interval / 2
    m = _in(t, t0 - interval, t1 + interval)
    mn, mx, av, tm = _np(q, "min_pkts")[m], _np(q, "max_pkts")[m], _np(q, "avg_pkts")[m], t[m]
    px_per_s = width_in * 72 / max(t1 - t0, 1e-9)
    lw = float(np.clip(0.7 * interval * px_per_s, 0.3, 6.0))
    segs = np.stack([np.stack([tm, mn], 1), np.stack([tm, np.maximum(mx, mn + 0.04)], 1)], 1) if len(tm) else np.zeros((0, 2, 2))
    lc = LineCollection(segs, colors=C_LIGHT, linewidths=lw, zorder=1, label="min–max")
    lc.set_gid(f"{gid_prefix}-bars")
    ax.add_collection(lc, autolim=False)
    (ln,) = ax.plot(tm, av, color=C_BLACK, lw=0.7, marker="o" if len(tm) <= 120 else None, ms=1.6,
                    label="average", zorder=2)
    ln.set_gid(f"{gid_prefix}-avg")
    top = max(float(mx.max()) if len(mx) else 0.0, float(limit or 0))
    ax.set_ylim(0, max(1.0, top * 1.12))
    return interval


def _draw_queue_panel(ax, run, link, t0, t1, limit=None):
    iv = _draw_queue_bars(ax, run, link, t0, t1, limit, gid_prefix="queue")
    if iv is not None:
        ax.set_ylabel(f"Queue (pkts)\n{link}")
        ax.text(0.995, 0.96, f"min–max per {iv * 1000:g} ms, average", transform=ax.transAxes,
                ha="right", va="top", fontsize=6, color=C_DARK)


def _draw_cam(ax, run, conn, cam: Any, t0, t1):
    t = _np(cam, "t_s")
    m = _in(t, t0, t1)
    if not m.any():
        ax.text(0.5, 0.5, "no CAM decisions in range", transform=ax.transAxes, ha="center", va="center", color=C_MID)
        ax.set_ylabel("CAM KB/s")
        return
    k = cam_scale_KBps_per_buffer(run, conn, cam)
    e = _np(cam, "expected_KBps")
    a = _np(cam, "actual_KBps")
    al = e - _np(cam, "alpha") * k
    be = e - _np(cam, "beta") * k
    parts = [("cam-expected", e, dict(color=C_MID, lw=1.6, label="Expected")),
             ("cam-actual", a, dict(color=C_BLACK, lw=0.9, label="Actual")),
             ("cam-alpha", al, dict(color=C_BLACK, lw=0.6, ls=(0, (3, 2)), label="α threshold")),
             ("cam-beta", be, dict(color=C_DARK, lw=0.6, ls=(0, (1, 1.5)), label="β threshold"))]
    for gid, v, kw in parts:
        if np.isfinite(v[m]).any():
            (ln,) = ax.plot(t[m], v[m], **kw)
            ln.set_gid(gid)
    _marks(ax, t[m], 0.0, 0.07, "cam-decisions", lw=0.6, clip=True)
    vals = np.concatenate([v[m][np.isfinite(v[m])] for _, v, _ in parts])
    ax.set_ylim(max(0.0, float(vals.min()) * 0.9) if len(vals) else 0, float(vals.max()) * 1.12 if len(vals) else 1)
    ax.set_ylabel("CAM KB/s")
    ax.legend(loc="upper right", frameon=True, framealpha=0.85, edgecolor=C_LIGHT, ncols=4,
              borderpad=0.3, handlelength=2.0)
