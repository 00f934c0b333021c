"""The graphs that make a trace readable (seed 000 §2.3, §3.5, §4.3; 001 §2.2; 002; 004).

Every function takes a run (a :class:`tcplab.rundir.RunData`, a run directory path, or any
object with the same accessors), returns a :class:`matplotlib.figure.Figure`, and also
saves it when ``path`` is given (format from the suffix: .png, .svg, .pdf).

Figures are built with ``matplotlib.figure.Figure`` directly (no pyplot, Agg canvas), so
they hold no global state, never open windows and are safe to make in worker processes.

The distinctive elements carry a gid so tests (and users) can find them in the figure:

==========================  =======================================================
gid                         what (tcp_graph, windows panel unless said otherwise)
==========================  =======================================================
``send-marks``              hash marks at the top, one per segment sent (incl. retransmits)
``ack-marks``               hash marks on the x-axis, one per ACK received (incl. dup ACKs)
``tick-diamonds``           diamonds at the top, one per coarse (500 ms) timer tick
``timeout-circles``         circles at the top, one per coarse timeout
``retx-lines``              full-height vertical lines at the original send time of every
                            segment that is later retransmitted (``retx-lines:<panel>`` on
                            the other panels)
``kb-label``                Text artists: the KB count along the top; the last is the total
``line-ssthresh`` ...       the window lines: line-ssthresh, line-sndwnd, line-cwnd, line-unacked
``rate-line``               sending rate over the last 12 segments (middle panel)
``queue-line``              bottleneck queue length (bottom panel)
``cam-expected`` ...        CAM panel: cam-expected, cam-actual, cam-alpha, cam-beta,
                            cam-decisions (one tick per decision)
``seq-data:<conn>`` ...     seq_graph: seq-data, seq-ack, seq-retx, seq-rcv, seq-rcvack
``link-thin``/``link-thick`` link_graph averages; ``drop-marks`` one mark per drop;
                            ``capacity``
``queue-bars``/``queue-avg`` queue_graph min–max bars and averages
``flow-tput:<conn>``        flows_graph per-flow throughput; ``flow-udp:<source>`` a UDP source's; ``flow-total``; ``capacity``
==========================  =======================================================

:func:`count_gid` counts the elements an artist with a gid draws (points of a Line2D,
segments of a LineCollection, 1 per Text).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import polars as pl
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .rundir import KB, RunData, as_run, check_output_file

__all__ = [
    "tcp_graph", "cam_graph", "seq_graph", "link_graph", "queue_graph", "flows_graph",
    "plot_cli", "count_gid", "find_gid", "save_figure", "PLOT_KINDS",
]

PLOT_KINDS = ("tcp", "cam", "seq", "link", "queue", "flows")
LEGEND_MAX_FLOWS = 12  # the flows graph labels its lines up to this many flows

# Brakmo's palette: black, two grays, dashes. Kept in one place.
C_BLACK = "#000000"
C_DARK = "#555555"
C_MID = "#8c8c8c"
C_LIGHT = "#b4b4b4"
C_FILL = "#dcdcdc"
# several flows on one plot need more than grays; muted, print-friendly
FLOW_COLORS = ["#000000", "#1f5fa8", "#b2392f", "#2e7d32", "#7b4fa0", "#b8860b", "#00838f", "#6d4c41"]
FLOW_STYLES = ["-", "--", "-.", ":"]

_RC = {
    "font.size": 8, "axes.titlesize": 9, "axes.labelsize": 8, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "legend.fontsize": 6.5, "axes.linewidth": 0.6,
    "xtick.major.width": 0.6, "ytick.major.width": 0.6, "svg.fonttype": "none",
    "svg.hashsalt": "tcplab", "pdf.compression": 6,
}


# ----------------------------------------------------------------------------- helpers
def _figure(w: float, h: float) -> Figure:
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(w, h), dpi=100)
    return fig


def _style_axes(ax) -> None:
    ax.tick_params(direction="out", length=3, width=0.6, labelsize=7)
    ax.grid(False)
    for s in ax.spines.values():
        s.set_linewidth(0.6)


def save_figure(fig: Figure, path: str | Path, fmt: str | None = None, dpi: int = 120) -> Path:
    """Save ``fig`` to ``path``; format from ``fmt`` or the suffix (png, svg, pdf)."""
    import matplotlib

    p = Path(path)
    fmt = (fmt or p.suffix.lstrip(".") or "png").lower()
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"unsupported plot format {fmt!r} (png, svg or pdf)")
    check_output_file(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    meta = {"png": {"Software": "tcplab"}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    with matplotlib.rc_context(_RC):
        fig.savefig(p, format=fmt, dpi=dpi, metadata=meta)
    return p


def _finish(fig: Figure, path) -> Figure:
    if path is not None:
        save_figure(fig, path)
    return fig


def find_gid(fig: Figure, gid: str) -> list:
    """All artists in ``fig`` (any axes, any depth) whose gid equals ``gid``."""
    return [a for a in fig.findobj(lambda a: a.get_gid() == gid)]


def count_gid(fig: Figure, gid: str) -> int:
    """Number of drawn elements with ``gid``: points of lines, segments or offsets of
    collections, one per Text."""
    n = 0
    for a in find_gid(fig, gid):
        if isinstance(a, Line2D):
            n += len(a.get_xdata())
        elif isinstance(a, LineCollection):
            n += len(a.get_segments())
        elif hasattr(a, "get_offsets"):
            n += len(a.get_offsets())
        else:
            n += 1
    return n


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


def _window(t_from, t_to, t_min: float, t_max: float) -> tuple[float, float]:
    t0 = float(t_from) if t_from is not None else min(0.0, t_min)
    t1 = float(t_to) if t_to is not None else t_max
    if not t1 > t0:
        t1 = t0 + 1.0
    return t0, t1


def _in(t: np.ndarray, t0: float, t1: float) -> np.ndarray:
    return (t >= t0) & (t <= t1)


def _step_window(t: np.ndarray, t0: float, t1: float) -> np.ndarray:
    """Mask for a step function restricted to [t0, t1], keeping the value in force at t0."""
    m = _in(t, t0, t1)
    before = np.nonzero(t < t0)[0]
    if len(before):
        m[before[-1]] = True
    return m


def _np(df: pl.DataFrame, col: str, dtype=float) -> np.ndarray:
    return df[col].to_numpy().astype(dtype, copy=False) if df.height else np.zeros(0, dtype=dtype)


def _resolve_conn(run, conn: str | None) -> str:
    if conn is not None:
        return conn
    if not run.conns:
        raise ValueError(f"run {getattr(run, 'dir', run)} has no flows")
    return run.conns[0]


def _link_rate_KBps(run, link: str | None) -> float | None:
    if link is None:
        return None
    try:
        r = run.link(link).get("rate_bps")
    except KeyError:
        return None
    return float(r) / 8.0 / KB if r else None


def _nice_step(span: float, target: int = 12) -> float:
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return max(1.0, m * mag)
    return max(1.0, 10 * mag)


def _downsample_step(t: np.ndarray, v: np.ndarray, max_points: int = 40000):
    """Reduce a long step series to per-bucket min/max pairs (keeps the envelope)."""
    if len(t) <= max_points:
        return t, v
    nb = max_points // 2
    edges = np.linspace(t[0], t[-1], nb + 1)
    b = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, nb - 1)
    starts = np.r_[0, np.nonzero(np.diff(b))[0] + 1]
    tt, vv = [], []
    for s, e in zip(starts, np.r_[starts[1:], len(t)]):
        seg = v[s:e]
        i_min, i_max = s + int(np.argmin(seg)), s + int(np.argmax(seg))
        for i in sorted({i_min, i_max}):
            tt.append(t[i])
            vv.append(v[i])
    return np.asarray(tt), np.asarray(vv)


# Decimation to the pixels drawn (as tcptrace/xplot do): a graph's axes are ~640 px wide, so a series is
# reduced to what DECIMATE_COLUMNS columns across the time window can show -- per column the first
# and last point and the extremes, exact to the pixel as drawn; zoomed in, the report shows the
# same points spread out (extremes kept, detail between them not). Hash marks keep one per
# MARK_COLUMNS column (denser marks are a solid band at 0.4 pt). Below DECIMATE_MIN_POINTS nothing is touched
# (`tcplab plot --from/--to` redraws a time window from the full trace).
DECIMATE_COLUMNS = 640
MARK_COLUMNS = 480
DECIMATE_MIN_POINTS = 12_800
# Rows of a marker series' y range: a panel is ~230 px tall and a dot ~3 px across, so 600 rows
# (2.6 per pixel) leave the picture as it was with 2000 and write a third of the SVG markers
# (each one an element: the sequence graph's drawing time was mostly these, issue 13).
DECIMATE_ROWS = 600


def _columns(t: np.ndarray, t0: float, t1: float, columns: int) -> np.ndarray:
    span = (t1 - t0) if np.isfinite(t1 - t0) and t1 > t0 else 1.0
    return np.clip(((t - t0) / span * columns).astype(np.int64), -1, columns)


def decimate_step(t: np.ndarray, v: np.ndarray, t0: float, t1: float, columns: int = DECIMATE_COLUMNS):
    """A time-sorted step series reduced to the lowest and highest point of each column (in time
    order), and the very first and last points."""
    n = len(t)
    if n <= DECIMATE_MIN_POINTS:
        return t, v
    col = _columns(t, t0, t1, columns)
    starts = np.r_[0, np.flatnonzero(np.diff(col)) + 1]
    ends = np.r_[starts[1:], n] - 1
    grp = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    order = np.lexsort((np.nan_to_num(v, nan=-np.inf), grp))
    keep = np.unique(np.concatenate([[0, n - 1], order[starts], order[ends]]))
    return t[keep], v[keep]


def _plot_steps(ax, t: np.ndarray, v: np.ndarray, t0: float, t1: float, *args, **kw):
    """ax.plot(t, v, drawstyle="steps-post"), decimated: a reduced series is drawn point to point
    (its two points per pixel column are that column's extremes; a step adds nothing at the pixel)."""
    tt, vv = decimate_step(t, v, t0, t1)
    if len(tt) < len(t):
        return ax.plot(tt, vv, *args, **kw)
    return ax.plot(tt, vv, *args, drawstyle="steps-post", **kw)


def decimate_points(t: np.ndarray, y: np.ndarray, t0: float, t1: float, columns: int = DECIMATE_COLUMNS,
                    rows: int = DECIMATE_ROWS):
    """Markers reduced to one per (column, row) cell: the picture is the same at the pixel."""
    n = len(t)
    if n <= DECIMATE_MIN_POINTS:
        return t, y
    col = _columns(t, t0, t1, columns)
    fin = np.isfinite(y)
    lo, hi = (float(np.min(y[fin])), float(np.max(y[fin]))) if fin.any() else (0.0, 1.0)
    row = np.clip(((np.nan_to_num(y, nan=lo) - lo) / ((hi - lo) or 1.0) * rows).astype(np.int64), 0, rows)
    _, first = np.unique((col + 1) * (rows + 1) + row, return_index=True)
    keep = np.sort(first)
    return t[keep], y[keep]


# ----------------------------------------------------------------------------- derived data
def sending_rate(t: np.ndarray, nbytes: np.ndarray, n: int = 12) -> np.ndarray:
    """Sending rate (bytes/s) at each segment: the bytes of the last ``n`` segments divided by
    the time since the segment before them (000 §3.5: "averaged over the last 12 segments").
    The first segments use what there is; undefined values are NaN."""
    t = np.asarray(t, dtype=float)
    b = np.asarray(nbytes, dtype=float)
    out = np.full(len(t), np.nan)
    if len(t) < 2:
        return out
    cs = np.r_[0.0, np.cumsum(b)]
    i = np.arange(len(t))
    j = np.maximum(i - n, 0)  # index of the segment before the last n (or the first one)
    sent = cs[i + 1] - cs[j + 1]  # bytes of segments j+1..i
    dt = t - t[j]
    ok = dt > 0
    out[ok] = sent[ok] / dt[ok]
    return out


def retransmitted_originals(snd: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Original send times of the segments later retransmitted, one per distinct segment.

    For every distinct seq in "retransmit" rows, the first "send" row whose byte range
    [seq, seq+len) contains it (normally the row with the same seq). Returns
    (times, original seqs), sorted by time; retransmitted bytes with no original send row
    (should not happen) are skipped."""
    rx = np.unique(_np(snd.filter(pl.col("kind") == "retransmit"), "seq", np.int64))
    if len(rx) == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    sends = snd.filter(pl.col("kind") == "send").select("t_s", "seq", "len")
    # first send of each seq
    sends = sends.group_by("seq", maintain_order=True).first().sort("seq")
    s_seq = _np(sends, "seq", np.int64)
    s_len = _np(sends, "len", np.int64)
    s_t = _np(sends, "t_s")
    k = np.searchsorted(s_seq, rx, side="right") - 1
    ok = (k >= 0) & (rx < s_seq[np.clip(k, 0, None)] + s_len[np.clip(k, 0, None)]) if len(s_seq) else np.zeros(len(rx), bool)
    k = np.unique(k[ok])
    order = np.argsort(s_t[k], kind="stable")
    return s_t[k][order], s_seq[k][order]


def kb_marks(snd: pl.DataFrame, total_bytes: int | None = None, t0: float = -math.inf,
             t1: float = math.inf) -> list[tuple[float, int]]:
    """(time, n) for the KB labels along the top: the time the n-th KB was first sent.

    n runs over multiples of a step chosen for about a dozen labels within [t0, t1]; the last
    label is the total KB (ceil(highest byte sent / 1024), or of ``total_bytes``) when that
    point lies in the window. A multiple too close to the total is dropped for it."""
    sends = snd.filter(pl.col("kind").is_in(["send", "retransmit"]))
    if sends.height == 0:
        return []
    t = _np(sends, "t_s")
    hi = np.maximum.accumulate(_np(sends, "seq", np.int64) + _np(sends, "len", np.int64))
    top = int(hi[-1])
    total_kb = math.ceil((total_bytes if total_bytes else top) / KB)
    total_kb = min(total_kb, math.ceil(top / KB))

    def when(nkb: int) -> float:
        # first time the highest byte sent reaches (nkb-1)*KB+1, i.e. the n-th KB is (partly) sent
        i = int(np.searchsorted(hi, (nkb - 1) * KB + 1, side="left"))
        return float(t[min(i, len(t) - 1)])

    m = _in(t, t0, t1)
    if not m.any():
        return []
    kb_lo = int(hi[np.argmax(m)] // KB) if np.argmax(m) > 0 else 0
    kb_hi = math.ceil(int(hi[m][-1]) / KB)
    step = int(_nice_step(kb_hi - kb_lo))
    first = (kb_lo // step + 1) * step
    ns = list(range(first, kb_hi + 1, step))
    if kb_hi == total_kb:
        ns = [n for n in ns if n < total_kb and total_kb - n >= 0.6 * step] + [total_kb]
    marks = [(when(n), n) for n in ns]
    return [(tt, n) for tt, n in marks if t0 <= tt <= t1]


def cam_scale_KBps_per_buffer(run, conn: str, cam: pl.DataFrame) -> np.ndarray:
    """Per CAM row, the rate that one buffer corresponds to (KB/s): MSS/BaseRTT.

    Diff = (Expected - Actual) * BaseRTT / MSS, so the scale is (Expected - Actual) / Diff
    wherever Diff is not ~0; rows in between take the previous known value. If no row gives
    it, MSS (summary "mss" or the largest segment) over BaseRTT (smallest srtt) is used."""
    e = _np(cam, "expected_KBps")
    a = _np(cam, "actual_KBps")
    d = _np(cam, "diff_buffers")
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(np.abs(d) > 0.05, (e - a) / d, np.nan)
    k[~np.isfinite(k) | (k <= 0)] = np.nan
    if np.isnan(k).all():
        fallback = np.nan
        try:
            snd = run.trace(conn, "snd")
            mss = run.flow(conn).get("mss") or (snd["len"].max() if snd.height else None)
            srtt = snd.filter(pl.col("srtt_s") > 0)["srtt_s"].min() if snd.height else None
            if mss and srtt:
                fallback = float(mss) / KB / float(srtt)
        except Exception:  # pragma: no cover - best effort
            pass
        return np.full(len(e), fallback)
    # forward fill, then back fill
    idx = np.where(~np.isnan(k), np.arange(len(k)), 0)
    np.maximum.accumulate(idx, out=idx)
    k = k[idx]
    first = np.nanmin(np.where(np.isnan(k), np.inf, np.arange(len(k))))
    k[np.isnan(k)] = k[int(first)]
    return k


# ----------------------------------------------------------------------------- drawing parts
def send_window(snd: pl.DataFrame, send_buffer: float | None) -> np.ndarray:
    """The trace graph's send window (seed 000 §3.5, seed 001 Fig 2): min(the sender's buffer
    size, the receiver's advertised window). The trace's `snd_wnd` column is the advertised
    window; `send_buffer` (bytes, summary.json `send_buffer_bytes`) caps it when known."""
    adv = _np(snd, "snd_wnd").astype(float)
    return np.minimum(adv, float(send_buffer)) if send_buffer else adv


def _draw_windows(ax, snd: pl.DataFrame, t0, t1, send_buffer: float | None = None):
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


def _draw_rate(ax, snd: pl.DataFrame, t0, t1, n=12):
    s = snd.filter(pl.col("kind").is_in(["send", "retransmit"]))
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
    q = run.queue(link, interval=interval)
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


def _draw_cam(ax, run, conn, cam: pl.DataFrame, t0, t1):
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


# ----------------------------------------------------------------------------- the graphs
def tcp_graph(run: Any, conn: str | None = None, t_from: float | None = None, t_to: float | None = None,
              path: str | Path | None = None, *, queue_link: str | None = None, cam: bool | None = None,
              rate_segments: int = 12, title: str | None = None, figsize=(8.0, 6.6)) -> Figure:
    """The Brakmo TCP trace graph of connection ``conn`` (000 §3.5 Figs 3.13-3.15, Fig 4.1).

    Stacked panels sharing the time axis: windows (threshold dashed, send window dark gray,
    congestion window light gray, unacked bytes thin black); sending rate averaged over the
    last 12 segments; the Vegas CAM panel when the run has CAM rows for ``conn`` (as in Fig
    4.3, where it is the third graph; ``cam=False`` leaves it out); the bottleneck queue
    length (``queue_link``, default the run's bottleneck). Along the top of the windows panel:
    a hash mark per segment sent, the KB count, diamonds at coarse timer ticks, circles at
    coarse timeouts; hash marks on its x-axis at ACKs received; on every panel a full-height
    vertical line at the original send time of each segment later retransmitted."""
    run = as_run(run)
    conn = _resolve_conn(run, conn)
    snd = run.trace(conn, "snd")
    t_all = _np(snd, "t_s")
    end = max(float(run.sim_end_s or 0.0), float(t_all.max()) if len(t_all) else 0.0)
    t0, t1 = _window(t_from, t_to, 0.0, end)
    cam_df = run.cam(conn) if cam is not False else None
    with_cam = cam_df is not None and cam_df.height > 0
    link = queue_link or run.bottleneck

    import matplotlib

    with matplotlib.rc_context(_RC):
        n = 4 if with_cam else 3
        ratios = [2.3, 1.0, 1.1, 1.0] if with_cam else [2.3, 1.0, 1.0]
        fig = _figure(figsize[0], figsize[1] + (1.3 if with_cam else 0.0))
        axes = fig.subplots(n, 1, sharex=True, gridspec_kw={"height_ratios": ratios, "hspace": 0.12})
        fig.subplots_adjust(left=0.1, right=0.97, top=0.87 if not with_cam else 0.89, bottom=0.1 if not with_cam else 0.085)
        for ax in axes:
            _style_axes(ax)
        ax_w, ax_r = axes[0], axes[1]
        ax_q = axes[-1]
        _draw_windows(ax_w, snd, t0, t1, run.flow(conn).get("send_buffer_bytes"))
        _draw_rate(ax_r, snd, t0, t1, rate_segments)
        if with_cam:
            _draw_cam(axes[2], run, conn, cam_df, t0, t1)
        limit = None
        if link is not None:
            try:
                limit = run.link(link).get("queue_limit_pkts")
            except KeyError:
                limit = None
        _draw_queue_panel(ax_q, run, link, t0, t1, limit)
        ax_q.set_xlabel("Time (seconds)")
        ax_q.set_xlim(t0, t1)
        handles, labels = ax_w.get_legend_handles_labels()
        handles += [Line2D([], [], ls="none", marker="D", ms=3, mfc="white", mec=C_BLACK, mew=0.5),
                    Line2D([], [], ls="none", marker="o", ms=5, color=C_BLACK),
                    Line2D([], [], color=C_BLACK, lw=0.7)]
        labels += ["coarse tick", "coarse timeout", "later retransmitted"]
        fig.legend(handles, labels, loc="lower center", ncols=7, frameon=False, handlelength=2.0,
                   columnspacing=1.2, fontsize=6.5)

        kinds = _np(snd, "kind", object) if snd.height else np.zeros(0, object)
        w = _in(t_all, t0, t1)
        sent = w & np.isin(kinds, ["send", "retransmit"])
        acks = w & np.isin(kinds, ["ack", "dupack"])
        ticks = w & (kinds == "slow_tick")
        touts = w & (kinds == "timeout")
        # common elements (000 §3.5 list 1-6), above / on the windows panel
        _marks(ax_w, t_all[acks], 0.0, 0.035, "ack-marks", lw=0.4, clip=True)
        _marks(ax_w, t_all[sent], 1.0, 1.03, "send-marks", lw=0.4)
        (dia,) = ax_w.plot(t_all[ticks], np.full(ticks.sum(), 1.055), ls="none", marker="D", ms=2.6,
                           mfc="white", mec=C_BLACK, mew=0.5, transform=ax_w.get_xaxis_transform(),
                           clip_on=False, zorder=4)
        dia.set_gid("tick-diamonds")
        (circ,) = ax_w.plot(t_all[touts], np.full(touts.sum(), 1.055), ls="none", marker="o", ms=6.5,
                            mfc=C_BLACK, mec=C_BLACK, transform=ax_w.get_xaxis_transform(), clip_on=False,
                            zorder=5)
        circ.set_gid("timeout-circles")
        flow = run.flow(conn) if conn in run.conns else {}
        for tt, nkb in kb_marks(snd, flow.get("transfer_bytes"), t0, t1):
            txt = ax_w.text(tt, 1.085, str(nkb), transform=ax_w.get_xaxis_transform(), ha="center",
                            va="bottom", fontsize=6, clip_on=False)
            txt.set_gid("kb-label")
        rt, _ = retransmitted_originals(snd)
        rt = rt[_in(rt, t0, t1)]
        panel_names = ["windows", "rate"] + (["cam"] if with_cam else []) + ["queue"]
        for i, ax in enumerate(axes):
            gid = "retx-lines" if i == 0 else f"retx-lines:{panel_names[i]}"
            _marks(ax, rt, 0.0, 1.0, gid, lw=0.7, clip=True, zorder=1.5)

        if title is None:
            variant = flow.get("variant", "")
            tput = flow.get("throughput_KBps")
            title = f"{conn}" + (f" — TCP {variant}" if variant else "")
            if tput is not None:
                title += f" (throughput: {tput:.0f} KB/s)"
        fig.suptitle(title, y=0.985, fontsize=9)
    return _finish(fig, path)


def cam_graph(run: Any, conn: str | None = None, t_from: float | None = None, t_to: float | None = None,
              path: str | Path | None = None, *, figsize=(8.0, 2.8)) -> Figure:
    """The Vegas congestion-avoidance graph (000 Fig 4.4).

    Expected (gray), Actual (solid black), the α and β thresholds (dashed) and a small tick
    at each decision. Choice (documented): everything in KB/s, the thresholds drawn *around
    Expected* as Expected - α·MSS/BaseRTT (top dashed line) and Expected - β·MSS/BaseRTT
    (bottom dashed line), so Actual above the α line means "increase", below the β line
    "decrease" -- Fig 4.4's "top line α, bottom line β". MSS/BaseRTT is recovered per row
    from the trace itself ((Expected-Actual)/Diff), see :func:`cam_scale_KBps_per_buffer`."""
    run = as_run(run)
    conn = _resolve_conn(run, conn)
    cam = run.cam(conn)
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = _figure(*figsize)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.1, right=0.97, top=0.86, bottom=0.17)
        _style_axes(ax)
        end = float(run.sim_end_s or (cam["t_s"].max() if cam.height else 1.0) or 1.0)
        t0, t1 = _window(t_from, t_to, 0.0, end)
        if cam.height == 0:
            ax.text(0.5, 0.5, f"no CAM trace for {conn} (not a Vegas flow?)", transform=ax.transAxes,
                    ha="center", va="center", color=C_MID)
        else:
            _draw_cam(ax, run, conn, cam, t0, t1)
        ax.set_xlim(t0, t1)
        ax.set_xlabel("Time (seconds)")
        fig.suptitle(f"{conn} — Vegas congestion avoidance (CAM)", y=0.97, fontsize=9)
    return _finish(fig, path)


def seq_graph(run: Any, conns: Sequence[str] | None = None, t_from: float | None = None,
              t_to: float | None = None, path: str | Path | None = None, *, figsize=(8.0, 5.6)) -> Figure:
    """Sequence number (KB) versus time for several flows (002 Figs 1, 2, 4).

    Top panel: the sender's view -- a dot per data segment sent (at its first byte), an ACK
    line (the cumulative ACK received, stepped), retransmissions marked with x. Bottom panel
    (when the trace has receiver rows): the receiver's view -- segments received and ACKs
    sent (for "ack_sent" rows the trace's ``seq`` column is the ACK number)."""
    run = as_run(run)
    conns = list(conns) if conns else run.conns
    everything = run.trace(None, side=None)
    have_rcv = everything.filter((pl.col("side") == "rcv") & pl.col("conn").is_in(conns)).height > 0
    end = max(float(run.sim_end_s or 0.0), float(everything["t_s"].max() or 0.0) if everything.height else 0.0)
    t0, t1 = _window(t_from, t_to, 0.0, end)
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = _figure(figsize[0], figsize[1] if have_rcv else figsize[1] * 0.6)
        axes = fig.subplots(2 if have_rcv else 1, 1, sharex=True, sharey=True, squeeze=False)[:, 0]
        fig.subplots_adjust(left=0.1, right=0.9, top=0.92, bottom=0.09, hspace=0.14)
        for ax in axes:
            _style_axes(ax)
        handles = []
        in_window: list[np.ndarray] = []  # sequence values drawn inside [t0, t1], for the y range
        for i, c in enumerate(conns):
            color = FLOW_COLORS[i % len(FLOW_COLORS)] if len(conns) > 1 else C_BLACK
            d = everything.filter(pl.col("conn") == c)
            snd = d.filter(pl.col("side") == "snd")
            t = _np(snd, "t_s")
            kinds = _np(snd, "kind", object) if snd.height else np.zeros(0, object)
            seq = _np(snd, "seq") / KB
            una = _np(snd, "snd_una") / KB
            w = _in(t, t0, t1)
            ds = w & (kinds == "send")
            (ld,) = axes[0].plot(*decimate_points(t[ds], seq[ds], t0, t1), ls="none", marker=".", ms=2.2, color=color, mew=0)
            ld.set_gid(f"seq-data:{c}")
            am = np.isin(kinds, ["ack", "dupack"])
            sm = _step_window(t, t0, t1) & am
            (la,) = _plot_steps(axes[0], t[sm], una[sm], t0, t1, lw=0.7, color=color, alpha=0.55)
            la.set_gid(f"seq-ack:{c}")
            rx = w & (kinds == "retransmit")
            in_window += [seq[ds], una[w & am], seq[rx]]
            (lr,) = axes[0].plot(t[rx], seq[rx], ls="none", marker="x", ms=4, mew=0.8, color=color)
            lr.set_gid(f"seq-retx:{c}")
            sk = w & (kinds == "sack")
            if sk.any():
                # SACK blocks as tcptrace draws them: a short vertical tick over each block.
                ln = _np(snd, "len") / KB
                ts, s0 = t[sk], seq[sk]
                xs = np.repeat(ts, 3)
                ys = np.column_stack([s0, s0 + ln[sk], np.full(len(ts), np.nan)]).ravel()
                xs[2::3] = np.nan
                (lk,) = axes[0].plot(xs, ys, lw=1.2, color=color, alpha=0.8, solid_capstyle="butt")
                lk.set_gid(f"seq-sack:{c}")
            handles.append(Line2D([], [], color=color, marker=".", lw=0.7, label=c))
            if ds.any():
                axes[0].annotate(c, (t[ds][-1], seq[ds][-1]), xytext=(3, 0), textcoords="offset points",
                                 fontsize=6.5, color=color, va="center")
            if have_rcv:
                rcv = d.filter(pl.col("side") == "rcv")
                tr = _np(rcv, "t_s")
                kr = _np(rcv, "kind", object) if rcv.height else np.zeros(0, object)
                sr = _np(rcv, "seq") / KB
                wr = _in(tr, t0, t1)
                dm = wr & (kr == "recv")
                (l1,) = axes[1].plot(*decimate_points(tr[dm], sr[dm], t0, t1), ls="none", marker=".", ms=2.2, color=color, mew=0)
                l1.set_gid(f"seq-rcv:{c}")
                amr = _step_window(tr, t0, t1) & (kr == "ack_sent")
                (l2,) = _plot_steps(axes[1], tr[amr], sr[amr], t0, t1, lw=0.7, color=color, alpha=0.55)
                l2.set_gid(f"seq-rcvack:{c}")
        handles += [Line2D([], [], color=C_DARK, lw=0.7, alpha=0.6, label="ACK"),
                    Line2D([], [], color=C_DARK, marker="x", ls="none", label="retransmit")]
        axes[0].legend(handles=handles, loc="upper left", frameon=True, framealpha=0.85, edgecolor=C_LIGHT)
        axes[0].set_ylabel("Sequence (KB)\nsender")
        if have_rcv:
            axes[1].set_ylabel("Sequence (KB)\nreceiver")
        axes[-1].set_xlabel("Time (seconds)")
        axes[-1].set_xlim(t0, t1)
        ys = np.concatenate(in_window) if in_window else np.zeros(0)
        if (t_from is not None or t_to is not None) and ys.size:
            # A time window zooms the sequence axis too, to what is drawn in it (+ one MSS-ish pad).
            lo, hi = float(ys.min()), float(ys.max())
            pad = max((hi - lo) * 0.05, 1.5)
            axes[0].set_ylim(max(0.0, lo - pad), hi + pad)
        else:
            axes[0].set_ylim(bottom=0)
        fig.suptitle("Sequence number versus time", y=0.985, fontsize=9)
    return _finish(fig, path)


def link_bandwidth(run, link: str, interval: float) -> pl.DataFrame:
    """Output bandwidth of ``link`` (KB/s of wire bytes departed) per ``interval``."""
    ev = run.link_events(link).filter(pl.col("event") == "depart")
    end = max(float(run.sim_end_s or 0.0), float(ev["t_s"].max() or 0.0) if ev.height else 0.0)
    nb = max(1, int(math.ceil(end / interval - 1e-9)))
    edges = np.arange(nb + 1) * interval
    b = np.clip(np.searchsorted(edges, _np(ev, "t_s"), side="right") - 1, 0, nb - 1)
    out = np.zeros(nb)
    np.add.at(out, b, _np(ev, "bytes"))
    return pl.DataFrame({"t_s": edges[:-1], "KBps": out / interval / KB})


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
            bw = link_bandwidth(run, link, interval)
            t = np.r_[_np(bw, "t_s"), _np(bw, "t_s")[-1:] + interval]
            v = np.r_[_np(bw, "KBps"), _np(bw, "KBps")[-1:]]
            (ln,) = ax.plot(t, v, drawstyle="steps-post", lw=lw, color=color,
                            label=f"{interval * 1000:.0f} ms average")
            ln.set_gid(gid)
            tops.append(v.max() if len(v) else 0)
        cap = _link_rate_KBps(run, link)
        if cap:
            ln = ax.axhline(cap, color=C_DARK, lw=0.7, ls=(0, (5, 3)), label=f"capacity {cap:.0f} KB/s")
            ln.set_gid("capacity")
            tops.append(cap)
        ev = run.link_events(link)
        drops = ev.filter(pl.col("event") == "drop")
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
        aqm = run.aqm_average(link) if hasattr(run, "aqm_average") else None
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


def flow_throughput(run, conn: str, interval: float, end: float) -> tuple[np.ndarray, np.ndarray]:
    """(interval starts, KB/s acknowledged per interval) from the sender's ACK progress."""
    snd = run.trace(conn, "snd").filter(pl.col("kind").is_in(["ack", "dupack"]))
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
        ev = run.link_events()
        if "flow" in ev.columns:
            ev = ev.filter((pl.col("flow") == name) & (pl.col("event") == "depart"))
            if ev.height:
                counts = ev.group_by("link").len()
                link = counts.sort(["len", "link"]).row(0)[0]
                ev = ev.filter(pl.col("link") == link)
                b = np.clip(np.searchsorted(edges, _np(ev, "t_s"), side="right") - 1, 0, nb - 1)
                out = np.zeros(nb)
                np.add.at(out, b, _np(ev, "bytes"))
                return edges[:-1], out / interval / KB, f"leaving {link}"
    u = next(x for x in run.summary.get("udp") or [] if x["name"] == name)
    return edges[:-1], np.full(nb, u["received_bytes"] / max(end, 1e-9) / KB), "mean received"


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


# ----------------------------------------------------------------------------- CLI entry point
def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name.replace("->", "-")).strip("-") or "x"


def plot_cli(run_dir: str | Path, conn: str | None = None, kind: str = "tcp", t_from: float | None = None,
             t_to: float | None = None, fmt: str = "png", out: str | Path | None = None) -> list[Path]:
    """What ``tcplab plot`` does. Returns the files written.

    kind: tcp | cam | seq | link | queue | flows. ``conn`` selects the flow for tcp/cam (all
    flows -- for cam, all with CAM rows -- when None) and the flows for seq; for link/queue it
    names the link (default the bottleneck). ``out``: a file path when one figure is drawn
    (its suffix wins over ``fmt``), else a directory; default RUN_DIR/plots/.
    Files are named ``<kind>_<name>.<fmt>``."""
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
            names = [c for c in run.conns if run.cam(c).height > 0]
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
    single_file = out is not None and len(jobs) == 1 and outp.suffix.lower() in (".png", ".svg", ".pdf")
    written = []
    for name, thunk in jobs:
        fig = thunk()
        target = outp if single_file else outp / f"{kind}_{_safe(name)}.{fmt}"
        written.append(save_figure(fig, target))
    return written
