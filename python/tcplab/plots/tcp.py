"""Per-connection graphs: the Brakmo TCP trace graph, the Vegas CAM graph and sequence numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..rundir import KB, as_run
from .draw import _draw_cam, _draw_queue_panel, _draw_rate, _draw_windows, _marks
from .series import (_cam, _in, _np, _plot_steps, _resolve_conn, _step_window, _trace, _window, decimate_points, kb_marks,
                     retransmitted_originals)
from .style import C_BLACK, C_DARK, C_LIGHT, C_MID, FLOW_COLORS, _RC, _figure, _finish, _style_axes


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
    snd = _trace(run, conn, "snd")
    t_all = _np(snd, "t_s")
    end = max(float(run.sim_end_s or 0.0), float(t_all.max()) if len(t_all) else 0.0)
    t0, t1 = _window(t_from, t_to, 0.0, end)
    cam_df = _cam(run, conn) if cam is not False else None
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

        kinds = _np(snd, "kind", str)
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
    cam = _cam(run, conn)
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = _figure(*figsize)
        ax = fig.subplots()
        fig.subplots_adjust(left=0.1, right=0.97, top=0.86, bottom=0.17)
        _style_axes(ax)
        end = float(run.sim_end_s or (_np(cam, "t_s").max() if cam.height else 1.0) or 1.0)
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
    sides = _seq_sides(run, conns)
    have_rcv = any(rcv.height > 0 for _, rcv in sides.values())
    end = max(float(run.sim_end_s or 0.0), max((float(_np(df, "t_s").max()) for pair in sides.values()
                                                for df in pair if df.height), default=0.0))
    if run.summary.get("sim_end_s") is None:  # no recorded end: the last row of any flow ends the graph
        everything = _trace(run, None, side=None)
        end = max(end, float(_np(everything, "t_s").max()) if everything.height else 0.0)
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
            snd, rcv = sides[c]
            t = _np(snd, "t_s")
            kinds = _np(snd, "kind", str)
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
                tr = _np(rcv, "t_s")
                kr = _np(rcv, "kind", str)
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


def _seq_sides(run: Any, conns: Sequence[str]) -> dict:
    """Each flow's sender and receiver rows in time order: the run's per-flow reads (shared with
    the other graphs of a report) for its own flows; a name the summary does not list is looked
    up in the whole trace (in-memory runs may hold such rows)."""
    out = {}
    whole = None
    for c in conns:
        if c in run.conns:
            out[c] = (_trace(run, c, "snd"), _trace(run, c, "rcv"))
            continue
        if whole is None:
            whole = _trace(run, None, side=None)
        d = whole.where("conn", c)
        out[c] = (d.where("side", "snd"), d.where("side", "rcv"))
    return out
