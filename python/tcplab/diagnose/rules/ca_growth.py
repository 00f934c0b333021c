"""Congestion-avoidance growth faster than one MSS per RTT (seed 001 §3.3-3.4, Lite.4; RFC 5681
§3.1 eq. 3: cwnd += SMSS·SMSS/cwnd per ACK, "no more than SMSS bytes" per RTT).

Exact (run directory): every ACK in congestion avoidance (cwnd ≥ ssthresh before it, ssthresh
unchanged) whose increase exceeds 1.5 × SMSS²/cwnd (SMSS counted with 40 bytes of option room,
so Lite's t_maxseg is covered). Lite.0's `+ incr/8` adds MSS/8 per ACK; the planted
`reno-fault-double-ca` doubles each increase. One finding per CA period between reductions,
with the growth per window of data acknowledged (≈ per RTT).
Inferred (pcap): not checked — a foreign stack's congestion control (CUBIC, RFC 8312) may grow
faster than Reno by design.
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding


def check(v):
    if not v.has_state:
        return []
    out = []
    kind, t, cw, ss = v.st_kind, v.st_t, v.st_cwnd, v.st_ssthresh
    idx = np.nonzero(kind == "ack")[0]
    smss = v.mss + 40
    period = []          # (t, increase, bound, cwnd_before)
    acked = 0.0

    def flush():
        nonlocal period
        bad = [p for p in period if p[1] > 1.5 * p[2] + 1]
        inc = sum(p[1] for p in period)
        allowed = sum(p[2] for p in period)
        # Both: several ACKs above eq. 3, and the period's total increase 30 % above eq. 3's
        # (a CC that steps once per RTT, as Vegas does, has single large ACKs but no excess).
        if len(bad) >= 3 and inc > 1.3 * allowed:
            windows = max(acked / max(np.mean([p[3] for p in period]), 1), 1e-9)
            per_rtt = inc / windows / v.mss
            out.append(finding(RULE, v, "bug", period[0][0], period[-1][0],
                               f"congestion avoidance grew cwnd {inc/max(allowed,1):.1f}× as fast as SMSS²/cwnd per ACK "
                               f"allows: {per_rtt:.2f} MSS per window acknowledged where eq. 3 gives "
                               f"{per_rtt*allowed/max(inc,1):.2f}",
                               evidence=[f"{len(bad)} of {len(period)} ACKs grew cwnd more than 1.5 × SMSS²/cwnd",
                                         f"cwnd {period[0][3]:.0f} → {period[-1][3] + period[-1][1]:.0f} bytes; "
                                         f"{inc - allowed:.0f} bytes above eq. 3"],
                               cost_bytes=float(inc - allowed), count=len(bad)))
        period = []

    reacts = np.sort(np.concatenate([v.fastrtx_t, v.timeout_t]))
    idx = idx[idx != 0]
    # Per ACK, computed for all at once (a scalar searchsorted per ACK was 1 s on a 6-flow, 60 s
    # run): a loss reaction since the ACK before, and the bytes this ACK newly acknowledged.
    ta = t[idx]
    prev = np.r_[-1.0, ta[:-1]]
    lost_all = (np.searchsorted(reacts, ta, side="right") > np.searchsorted(reacts, prev, side="right")).tolist()
    j = np.searchsorted(v.ack_t, ta)
    inside = j < len(v.ack_t)
    newly = np.zeros(len(ta))
    newly[inside] = np.asarray(v.ack_new, dtype=float)[j[inside]]
    newly = newly.tolist()
    t_l, cw_l, ss_l = t.tolist(), cw.tolist(), ss.tolist()
    for k, i in enumerate(idx.tolist()):
        before, after = cw_l[i - 1], cw_l[i]
        if lost_all[k] or ss_l[i] != ss_l[i - 1] or before < ss_l[i - 1] or after < before:
            flush()
            acked = 0.0
            continue
        if not period:
            acked = 0.0
        period.append((float(t_l[i]), float(after - before), smss * smss / max(before, 1.0), float(before)))
        acked += newly[k]
    flush()
    return out


RULE = Rule("ca-growth-too-fast", "congestion-avoidance growth faster than 1 MSS per RTT",
            "RFC 5681 §3.1; seed 001 §3.3-3.4 (Lite.4)", check, lite_fix="lite.4")
