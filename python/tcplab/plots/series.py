"""The data behind the graphs, without drawing: time windows, decimation to screen columns,
sending rate, retransmitted originals, KB marks, the CAM scale and the send window."""

from __future__ import annotations

import math

from typing import Any

import numpy as np

from ..cols import Cols
from ..rundir import KB


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


def _np(df: Any, col: str, dtype=float) -> np.ndarray:
    """Column ``col`` of ``df`` (:class:`~tcplab.cols.Cols` or a polars frame) as ``dtype``
    (``str``: numpy unicode)."""
    if not df.height:
        return np.zeros(0, dtype=dtype)
    a = df[col] if isinstance(df, Cols) else df[col].to_numpy()
    if dtype is str and a.dtype.kind == "O":
        return a.astype(str)
    return a.astype(dtype, copy=False)


def _cols(df: Any) -> Cols:
    """``df`` as :class:`~tcplab.cols.Cols` (a polars frame is converted)."""
    return df if isinstance(df, Cols) else Cols.from_polars(df)


# The graphs read a run's rows as numpy columns (RunData's *_cols methods, issue 28); any other
# object with the RunData accessors (returning polars frames) still works.
def _trace(run, conn: str | None, side: str | None = "snd", columns: tuple[str, ...] | None = None) -> Cols:
    f = getattr(run, "trace_cols", None)
    if f is None:
        return Cols.from_polars(run.trace(conn, side))
    return f(conn, side) if columns is None else f(conn, side, columns=columns)


def _link_events(run, link: str | None) -> Cols:
    f = getattr(run, "link_cols", None)
    return f(link) if f is not None else Cols.from_polars(run.link_events(link))


def _cam(run, conn: str | None) -> Cols:
    f = getattr(run, "cam_cols", None)
    return f(conn) if f is not None else Cols.from_polars(run.cam(conn))


def _queue(run, link: str | None, interval: float | None = None) -> Cols:
    f = getattr(run, "queue_cols", None)
    return f(link, interval) if f is not None else Cols.from_polars(run.queue(link, interval=interval))


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


def retransmitted_originals(snd: Any) -> tuple[np.ndarray, np.ndarray]:
    """Original send times of the segments later retransmitted, one per distinct segment.

    For every distinct seq in "retransmit" rows, the first "send" row whose byte range
    [seq, seq+len) contains it (normally the row with the same seq). Returns
    (times, original seqs), sorted by time; retransmitted bytes with no original send row
    (should not happen) are skipped."""
    snd = _cols(snd)
    rx = np.unique(_np(snd.where("kind", "retransmit", keep=("seq",)), "seq", np.int64))
    if len(rx) == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    sends = snd.where("kind", "send", keep=("t_s", "seq", "len"))
    # first send of each seq (the first row in the trace's order), by seq
    s_seq, first = np.unique(_np(sends, "seq", np.int64), return_index=True)
    s_len = _np(sends, "len", np.int64)[first]
    s_t = _np(sends, "t_s")[first]
    k = np.searchsorted(s_seq, rx, side="right") - 1
    ok = (k >= 0) & (rx < s_seq[np.clip(k, 0, None)] + s_len[np.clip(k, 0, None)]) if len(s_seq) else np.zeros(len(rx), bool)
    k = np.unique(k[ok])
    order = np.argsort(s_t[k], kind="stable")
    return s_t[k][order], s_seq[k][order]


def kb_marks(snd: Any, total_bytes: int | None = None, t0: float = -math.inf,
             t1: float = math.inf) -> list[tuple[float, int]]:
    """(time, n) for the KB labels along the top: the time the n-th KB was first sent.

    n runs over multiples of a step chosen for about a dozen labels within [t0, t1]; the last
    label is the total KB (ceil(highest byte sent / 1024), or of ``total_bytes``) when that
    point lies in the window. A multiple too close to the total is dropped for it."""
    sends = _cols(snd).where("kind", ["send", "retransmit"], keep=("t_s", "seq", "len"))
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


def cam_scale_KBps_per_buffer(run, conn: str, cam: Any) -> np.ndarray:
    """Per CAM row, the rate that one buffer corresponds to (KB/s): MSS/BaseRTT.

    Diff = (Expected - Actual) * BaseRTT / MSS, so the scale is (Expected - Actual) / Diff
    wherever Diff is not ~0; rows in between take the previous known value. If no row gives
    it, MSS (summary "mss" or the largest segment) over BaseRTT (smallest srtt) is used."""
    cam = _cols(cam)
    e = _np(cam, "expected_KBps")
    a = _np(cam, "actual_KBps")
    d = _np(cam, "diff_buffers")
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(np.abs(d) > 0.05, (e - a) / d, np.nan)
    k[~np.isfinite(k) | (k <= 0)] = np.nan
    if np.isnan(k).all():
        fallback = np.nan
        try:
            snd = _trace(run, conn, "snd")
            mss = run.flow(conn).get("mss") or (int(_np(snd, "len").max()) if snd.height else None)
            srtt_s = _np(snd, "srtt_s")
            srtt = float(srtt_s[srtt_s > 0].min()) if (srtt_s > 0).any() else None
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


def send_window(snd: Any, send_buffer: float | None) -> np.ndarray:
    """The trace graph's send window (seed 000 §3.5, seed 001 Fig 2): min(the sender's buffer
    size, the receiver's advertised window). The trace's `snd_wnd` column is the advertised
    window; `send_buffer` (bytes, summary.json `send_buffer_bytes`) caps it when known."""
    adv = _np(_cols(snd), "snd_wnd").astype(float)
    return np.minimum(adv, float(send_buffer)) if send_buffer else adv
