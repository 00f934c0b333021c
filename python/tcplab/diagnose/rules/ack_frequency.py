"""ACK frequency other than the declared policy, and its effect on growth (seed 001 §3.3-3.4,
Lite.3/Lite.5; RFC 1122 §4.2.3.2, RFC 5681 §4.2: ACK at least every second full-sized segment).

The ratio is the typical number of full segments each non-duplicate ACK newly covers (the mode
over ACKs that cover 1-3 segments, so recovery's big ACKs do not count). Lite's `2*t_maxseg` test
with 12 timestamp bytes out of every segment ACKs every third segment (§3.3); congestion
avoidance then grows 1/3 MSS per RTT instead of 1/2. Above 2 is a "warning" (RFC 5681 §4.2's
SHOULD); any other departure from the declared policy is "info".
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding

_EXPECTED = {"every_packet": 1, "bsd_delayed": 2, "tahoe_receiver": 2, "lbl": 2}


def check(v):
    new = (~v.ack_dup) & (v.ack_new > 0)
    if new.sum() < 20:
        return []
    segs = np.rint(v.ack_new[new] / v.mss).astype(int)
    segs = segs[(segs >= 1) & (segs <= 3)]
    if len(segs) < 20:
        return []
    counts = np.bincount(segs, minlength=4)
    ratio = int(np.argmax(counts))
    share = counts[ratio] / len(segs)
    expected = _EXPECTED.get(v.ack_policy or "", None)
    if v.inferred and expected is None:
        expected = 2
    if expected is None or ratio <= expected and ratio <= 2:
        return []
    sev = "warning" if ratio > 2 else "info"
    t = v.ack_t[new]
    return [finding(RULE, v, sev, t[0], t[-1],
                    f"the receiver ACKs every {ratio} segments ({share:.0%} of ACKs) where "
                    + (f"the declared policy {v.ack_policy} ACKs every {expected}" if v.ack_policy else
                       f"RFC 5681 §4.2 expects every {expected}") + ": congestion avoidance grows "
                    f"~1/{ratio} MSS per RTT",
                    evidence=[f"ACKs covering 1/2/3 segments: {counts[1]}/{counts[2]}/{counts[3]}",
                              f"segment payload {v.mss} bytes"],
                    count=int(counts[ratio]))]


RULE = Rule("ack-frequency", "ACK frequency other than the declared policy",
            "RFC 5681 §4.2, RFC 1122 §4.2.3.2; seed 001 §3.3-3.4 (Lite.3, Lite.5)", check, lite_fix="lite.3")
