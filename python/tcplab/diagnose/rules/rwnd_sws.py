"""Receive-window stalls and silly-window sends (RFC 1122 §4.2.3.3-4.2.3.4, RFC 813).

A zero receive window is flow control doing its job: the time spent there is "info". A data
segment shorter than half an MSS that is neither the last of the transfer nor a retransmission
nor a zero-window probe is a silly-window send (RFC 1122 §4.2.3.4: send only a full segment,
half the maximum window, or everything that is left): "warning".
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding


def check(v):
    out = []
    if v.has_state:
        t, w = v.st_t, v.st_snd_wnd
        zero = w[:-1] == 0
        dt = np.diff(t)
        if zero.any():
            first = float(t[:-1][zero][0])
            out.append(finding(RULE, v, "info", first, float(t[1:][zero][-1]),
                               f"receive window zero for {dt[zero].sum():.2f}s in total",
                               cost_s=float(dt[zero].sum())))
    elif v.ack_wnd is not None and (v.ack_wnd == 0).any():
        z = v.ack_t[v.ack_wnd == 0]
        out.append(finding(RULE, v, "info", z[0], z[-1], f"{len(z)} ACKs advertised a zero window", count=len(z)))
    if len(v.send_t) == 0:
        return out
    last_end = (v.send_seq + v.send_len).max()
    small = (v.send_len < v.mss / 2) & ~v.send_retx & (v.send_seq + v.send_len < last_end) & (v.send_len > 1)
    if small.any():
        ts = v.send_t[small]
        out.append(finding(RULE, v, "warning", ts[0], ts[-1],
                           f"{int(small.sum())} data segments under half an MSS sent mid-transfer (silly window)",
                           segments=[int(s) for s in v.send_seq[small][:8]], count=int(small.sum())))
    return out


RULE = Rule("rwnd-sws", "receive-window stalls and silly-window sends",
            "RFC 1122 §4.2.3.3-4.2.3.4, RFC 813", check)
