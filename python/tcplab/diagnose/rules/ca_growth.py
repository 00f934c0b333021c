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

    def flush(period, acked):  # period: [(t, increase, bound, cwnd_before)] of one CA period
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

    reacts = np.sort(np.concatenate([v.fastrtx_t, v.timeout_t]))
    idx = idx[idx != 0]
    if len(idx) == 0:
        return out
    # Per ACK, computed for all at once (a Python loop over the ACKs was most of the rule's time
    # on a 6-flow, 60 s run): a loss reaction since the ACK before, and the bytes this ACK newly
    # acknowledged.
    ta = t[idx]
    prev = np.r_[-1.0, ta[:-1]]
    lost = np.searchsorted(reacts, ta, side="right") > np.searchsorted(reacts, prev, side="right")
    j = np.searchsorted(v.ack_t, ta)
    inside = j < len(v.ack_t)
    newly = np.zeros(len(ta))
    newly[inside] = np.asarray(v.ack_new, dtype=float)[j[inside]]
    cw_f = np.asarray(cw, dtype=float)
    ss_f = np.asarray(ss, dtype=float)
    before, after = cw_f[idx - 1], cw_f[idx]
    # An ACK ends the CA period it would belong to (and joins none) on a loss reaction, an
    # ssthresh change, slow start (cwnd < ssthresh before it) or a cwnd reduction. A period is a
    # maximal run of the other ACKs.
    reset = lost | (ss_f[idx] != ss_f[idx - 1]) | (before < ss_f[idx - 1]) | (after < before)
    keep = ~reset
    if not keep.any():
        return out
    group = np.cumsum(reset)[keep]
    t_k, before_k, newly_k = t[idx][keep].astype(float), before[keep], newly[keep]
    inc_k = after[keep] - before_k
    bound_k = smss * smss / np.maximum(before_k, 1.0)
    starts = np.r_[0, np.nonzero(np.diff(group))[0] + 1]
    ends = np.r_[starts[1:], len(group)]
    label = np.repeat(np.arange(len(starts)), ends - starts)
    # bincount adds each period's terms in order from 0.0, as the sums in `flush` do: the same test.
    n_bad = np.bincount(label, weights=(inc_k > 1.5 * bound_k + 1).astype(float))
    s_inc = np.bincount(label, weights=inc_k)
    s_bound = np.bincount(label, weights=bound_k)
    for g in np.nonzero((n_bad >= 3) & (s_inc > 1.3 * s_bound))[0].tolist():
        a, b = int(starts[g]), int(ends[g])
        period = list(zip(t_k[a:b].tolist(), inc_k[a:b].tolist(), bound_k[a:b].tolist(), before_k[a:b].tolist()))
        acked = 0.0
        for x in newly_k[a:b].tolist():
            acked += x
        flush(period, acked)
    return out


RULE = Rule("ca-growth-too-fast", "congestion-avoidance growth faster than 1 MSS per RTT",
            "RFC 5681 §3.1; seed 001 §3.3-3.4 (Lite.4)", check, lite_fix="lite.4")
