"""Timeouts where three duplicate ACKs had arrived (RFC 5681 §3.2 step 2: the third duplicate
ACK triggers a fast retransmit).

A coarse timeout (first of its series) for snd_una U, with at least three duplicate ACKs for U
since U was last sent, and no fast retransmit of U: the sender waited for the timer although the
receiver had reported the loss. Lite.0's header prediction leaves `t_dupacks` above the
threshold (seed 001 §3.1), and the planted `reno-fault-no-fast-retransmit` ignores the third.
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding
from .rto_too_large import first_of_series


def check(v):
    out = []
    for k, (t, u) in enumerate(zip(v.timeout_t, v.timeout_una)):
        if not first_of_series(v, k):
            continue
        sent = (v.send_seq == u) & (v.send_t < t)
        since = float(v.send_t[sent].max()) if sent.any() else 0.0
        dups = (v.ack_dup & (v.ack_no == u) & (v.ack_t > since) & (v.ack_t < t)).sum()
        frx = ((v.fastrtx_una == u) & (v.fastrtx_t > since - 1e-9) & (v.fastrtx_t < t)).any()
        if dups >= 3 and not frx:
            first3 = v.ack_t[v.ack_dup & (v.ack_no == u) & (v.ack_t > since)][2]
            out.append(finding(RULE, v, "bug", first3, t,
                               f"timeout at {t:.3f}s for seq {int(u)} although {int(dups)} duplicate ACKs for it "
                               f"had arrived (the third at {first3:.3f}s) and no fast retransmit followed",
                               segments=[int(u)], cost_s=float(t - first3)))
    return out


RULE = Rule("timeout-despite-dupacks", "timeout although three duplicate ACKs had arrived",
            "RFC 5681 §3.2", check)
