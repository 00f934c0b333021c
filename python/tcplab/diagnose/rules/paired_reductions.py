"""Losses paired into two window reductions in one RTT (seed 001 §3.3, Fig 7 "around 4 and 6
seconds", Lite.4; RFC 5681 §3.1: in congestion avoidance one MSS per RTT, so one loss at a time).

Two consecutive loss reactions (fast retransmit or first timeout of a series) whose lost
segments were first sent less than one RTT apart, the first of them sent in congestion
avoidance (cwnd ≥ ssthresh; inferred from a capture: after an earlier loss episode). The
slow-start overshoot's multiple losses are not counted: they are slow start's, not CA's.
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding
from .rto_too_large import first_of_series


def reactions(v):
    ev = [(float(t), int(u), "fast retransmit") for t, u in zip(v.fastrtx_t, v.fastrtx_una)]
    ev += [(float(v.timeout_t[k]), int(v.timeout_una[k]), "timeout") for k in range(len(v.timeout_t)) if first_of_series(v, k)]
    return sorted(ev)


def check(v):
    ev = reactions(v)
    out = []
    rtt = v.rtt()
    for (t1, u1, k1), (t2, u2, k2) in zip(ev, ev[1:]):
        if u2 <= u1:
            continue
        s1, s2 = v.first_send_time(u1), v.first_send_time(u2)
        if s1 is None or s2 is None or abs(s2 - s1) > rtt:
            continue
        if v.has_state:
            cw, ss = v.state_at(s1, "cwnd"), v.state_at(s1, "ssthresh")
            if cw is None or cw < ss:
                continue
        elif t1 == ev[0][0]:
            continue
        out.append(finding(RULE, v, "warning", t1, t2,
                           f"two window reductions ({k1} at {t1:.2f}s, {k2} at {t2:.2f}s) for segments first sent "
                           f"{abs(s2-s1)*1000:.0f} ms apart, within one RTT, in congestion avoidance",
                           evidence=[f"seq {u1} first sent at {s1:.3f}s, seq {u2} at {s2:.3f}s; RTT {rtt*1000:.0f} ms"],
                           segments=[u1, u2]))
    return out


RULE = Rule("paired-reductions", "losses paired into two window reductions in one RTT",
            "RFC 5681 §3.1; seed 001 §3.3, Fig 7 (Lite.4)", check, lite_fix="lite.4")
