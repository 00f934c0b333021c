"""Losses paired into two window reductions in one RTT (seed 001 §3.3, Fig 7 "around 4 and 6
seconds", Lite.4; RFC 5681 §3.1: in congestion avoidance one MSS per RTT, so one loss at a time).

Two consecutive loss reactions (fast retransmit or first timeout of a series) whose lost
segments were first sent less than one RTT apart, the first of them sent in congestion
avoidance (cwnd ≥ ssthresh; inferred from a capture: after an earlier loss episode). The
slow-start overshoot's multiple losses are not counted: they are slow start's, not CA's. A pair
that follows congestion-avoidance growth above eq. 3 (the ca-growth-too-fast rule) is a
"warning" — the cause §3.3 gives; any other pair is "info": several losses in one window take
Reno two reductions by design (RFC 6582 §1), which NewReno changed.
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
    from .ca_growth import check as ca_growth
    ev = reactions(v)
    out = []
    rtt = v.rtt()
    fast = [(g.t_start, g.t_end) for g in ca_growth(v)]
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
        caused = any(a - rtt <= s1 <= b + 2 * rtt for a, b in fast)
        why = ("after congestion avoidance grew faster than eq. 3 (ca-growth-too-fast): the cause seed 001 §3.3 names"
               if caused else "with no excess growth before: Reno's multiple-loss behaviour (RFC 6582 §1), informational")
        out.append(finding(RULE, v, "warning" if caused else "info", t1, t2,
                           f"two window reductions ({k1} at {t1:.2f}s, {k2} at {t2:.2f}s) for segments first sent "
                           f"{abs(s2-s1)*1000:.0f} ms apart, within one RTT, in congestion avoidance",
                           evidence=[f"seq {u1} first sent at {s1:.3f}s, seq {u2} at {s2:.3f}s; RTT {rtt*1000:.0f} ms", why],
                           segments=[u1, u2]))
    return out


RULE = Rule("paired-reductions", "losses paired into two window reductions in one RTT",
            "RFC 5681 §3.1; seed 001 §3.3, Fig 7 (Lite.4)", check, lite_fix="lite.4")
