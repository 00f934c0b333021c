"""Line-rate bursts after a large ACK (seed 001 §3.5, Lite.6: "when it receives a packet
acknowledging x bytes, [it] send[s] x bytes immediately ... If x is ... 4 or more packets, this
behavior usually results in losses").

An ACK that newly acknowledges at least 4 segments — after a loss (it covers a retransmitted
segment) or reordering (duplicate ACKs for its hole came first), §3.5's two causes — followed by at least 4 segments sent back to
back before the next ACK (same instant in a run directory; in a capture, each within 2 ms of
the previous). Lite.6's fix limits the release to 3 segments.
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding

N_SEGMENTS = 4


def check(v):
    out = []
    gap = 0.0 if v.source == "rundir" else 0.002
    for k in np.nonzero(~v.ack_dup & (v.ack_new >= N_SEGMENTS * v.mss))[0]:
        t = v.ack_t[k]
        if not _after_loss_or_reordering(v, k):
            continue
        nxt = v.ack_t[k + 1] if k + 1 < len(v.ack_t) else np.inf
        i = np.searchsorted(v.send_t, t, side="left")
        j, last = i, t
        while j < len(v.send_t) and v.send_t[j] < nxt and v.send_t[j] - last <= gap + 1e-9:
            last = v.send_t[j]
            j += 1
        n = j - i
        if n >= N_SEGMENTS:
            out.append(finding(RULE, v, "warning", t, last,
                               f"an ACK for {v.ack_new[k]/1024:.1f} KB released {n} segments "
                               f"({v.send_len[i:j].sum()/1024:.1f} KB) back to back",
                               evidence=[f"ACK {int(v.ack_no[k])} at {t:.3f}s acknowledged {int(v.ack_new[k])} bytes",
                                         f"segments {int(v.send_seq[i])}..{int(v.send_seq[j-1] + v.send_len[j-1])} sent by {last:.3f}s"],
                               segments=[int(s) for s in v.send_seq[i:j][:8]], count=1,
                               cost_bytes=float(v.send_len[i:j].sum() - 3 * v.mss)))
    return out


def _after_loss_or_reordering(v, k: int) -> bool:
    """§3.5's two causes of a large ACK: a loss (the ACK covers a retransmitted segment) or
    reordering (duplicate ACKs for the hole came before it). A stretch ACK of in-order data (a
    receiver or a path that bunches ACKs) is neither, and slow start releases 2 segments per
    segment acknowledged by design."""
    t, lo, hi = v.ack_t[k], v.ack_no[k] - v.ack_new[k], v.ack_no[k]
    retx = v.send_retx & (v.send_t < t) & (v.send_seq >= lo) & (v.send_seq < hi)
    dups = v.ack_dup[:k] & (v.ack_no[:k] == lo)
    return bool(retx.any() or dups.any())


RULE = Rule("big-ack-burst", "line-rate burst after a large ACK",
            "seed 001 §3.5 (Lite.6)", check, lite_fix="lite.6")
