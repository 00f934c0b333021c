"""The RTO not backed off after a timeout (RFC 6298 §5.5: "the host MUST set RTO <- RTO * 2").

Exact: the RTO right after a timeout is not larger than the one armed before it. Inferred (a
capture): consecutive timeouts of one segment with no ACK between them whose spacing does not
grow by at least half. Found in the planted `reno-fault-no-rto-backoff`.
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding
from .rto_too_large import first_of_series


def check(v):
    out = []
    if v.has_state:
        for t, u in zip(v.timeout_t, v.timeout_una):
            before, after = v.state_at(t, "rto"), v.state_at(t, "rto", before=False)
            if before and after is not None and after <= before * 1.01:
                out.append(finding(RULE, v, "bug", t, t,
                                   f"RTO {after:.2f}s after the timeout of seq {int(u)} is not above the {before:.2f}s before it",
                                   segments=[int(u)]))
    else:
        for k in range(2, len(v.timeout_t)):
            if first_of_series(v, k) or first_of_series(v, k - 1):
                continue
            g1 = v.timeout_t[k - 1] - v.timeout_t[k - 2]
            g2 = v.timeout_t[k] - v.timeout_t[k - 1]
            if g2 < 1.5 * g1:
                out.append(finding(RULE, v, "bug", v.timeout_t[k - 1], v.timeout_t[k],
                                   f"consecutive timeouts of seq {int(v.timeout_una[k])} {g1:.2f}s then {g2:.2f}s apart: no backoff",
                                   segments=[int(v.timeout_una[k])]))
    if len(out) > 1:
        f = out[0]
        f.count, f.t_end = len(out), out[-1].t_end
        f.summary += f" (and {len(out)-1} more timeouts like it)"
        out = [f]
    return out


RULE = Rule("rto-no-backoff", "retransmission timer not backed off", "RFC 6298 §5.5", check)
