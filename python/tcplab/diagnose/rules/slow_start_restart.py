"""Slow-start restart not applied after idle (RFC 5681 §4.1: after an idle period longer than
the RTO, cwnd SHOULD be reduced to the restart window; RFC 2861; 4.4BSD tcp_output.c).

A send after at least max(RTO, 1 s) with nothing outstanding that releases more segments at once
than the restart window (the initial window; 4 segments when the window is not known, RFC 3390's
largest).
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding


def check(v):
    if len(v.send_t) < 2:
        return []
    out = []
    ends = np.maximum.accumulate(v.send_seq + v.send_len)
    iw = max(v.initial_window, 1) if not v.inferred else 4
    gap_src = 0.0 if v.source == "rundir" else 0.002
    # Only a gap of 1 s or more can be idle (the bound is max(RTO, 1 s)): the others are skipped
    # without looking up the RTO (a lookup per send was most of this rule's time).
    gaps = np.flatnonzero(np.diff(v.send_t) >= 1.0) + 1
    for k in gaps.tolist():
        a, b = v.send_t[k - 1], v.send_t[k]
        rto = v.state_at(b, "rto") if v.has_state else None
        if b - a < max(rto or 1.0, 1.0):
            continue
        acked = v.ack_no[v.ack_t < b]
        if not len(acked) or acked.max() < ends[k - 1]:
            continue   # data still outstanding: a retransmission timeout, not idle
        j, last = k, b
        while j < len(v.send_t) and v.send_t[j] - last <= gap_src + 1e-9:
            last = v.send_t[j]
            j += 1
        n = j - k
        if n > iw:
            out.append(finding(RULE, v, "warning", b, last,
                               f"{n} segments sent at once after {b-a:.2f}s idle: cwnd not restarted (restart window {iw})",
                               segments=[int(v.send_seq[k])], cost_bytes=float(v.send_len[k + iw:j].sum())))
    return out


RULE = Rule("no-slow-start-restart", "slow-start restart not applied after idle",
            "RFC 5681 §4.1, RFC 2861", check)
