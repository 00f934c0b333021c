"""Spurious retransmissions: data retransmitted that the receiver already had (RFC 2883 D-SACK,
RFC 3522/RFC 4015; seen directly when the trace or capture shows the receiver's side).

A loss detection (the first retransmission of an episode: fast retransmit or timeout) whose
segment had already arrived is a "warning": the sender reduced its window for nothing. The
go-back-N resends after a timeout of segments the receiver held out of order are "info": RFC
5681 §3.2 allows them, they only cost bytes (counted).
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding


def check(v):
    if v.recv_t is None or len(v.recv_t) == 0:
        if len(v.dsack):
            return [finding(RULE, v, "warning", v.dsack[0], v.dsack[-1],
                            f"{len(v.dsack)} D-SACK blocks: the receiver got data twice", count=len(v.dsack))]
        return []
    out = []
    heads = set(float(x) for x in np.concatenate([v.fastrtx_t, v.timeout_t]))
    rx = {}
    gbn_n, gbn_bytes, gbn_t = 0, 0, []
    retx = np.nonzero(np.asarray(v.send_retx))[0]
    # The first arrival of each (seq, len), over the arrivals of retransmitted sequence numbers
    # only (np.isin picks them; a dict of every arrival was most of the report's diagnosis), in
    # Python lists, not numpy scalars.
    recv_seq = np.asarray(v.recv_seq)
    mine = np.nonzero(np.isin(recv_seq, np.asarray(v.send_seq)[retx]))[0]
    for t, s, l in zip(np.asarray(v.recv_t)[mine].tolist(), recv_seq[mine].tolist(), np.asarray(v.recv_len)[mine].tolist()):
        rx.setdefault((int(s), int(l)), float(t))
    for t, s, l in zip(np.asarray(v.send_t)[retx].tolist(), np.asarray(v.send_seq)[retx].tolist(),
                       np.asarray(v.send_len)[retx].tolist()):
        got = rx.get((int(s), int(l)))
        if got is None or got >= t:
            continue
        if any(abs(t - h) < 1e-9 for h in heads) or _is_head(v, t, s):
            out.append(finding(RULE, v, "warning", t, t,
                               f"seq {int(s)} retransmitted at {t:.3f}s had arrived at {got:.3f}s: spurious loss detection",
                               segments=[int(s)], cost_bytes=float(l)))
        else:
            gbn_n += 1
            gbn_bytes += int(l)
            gbn_t.append(float(t))
    if gbn_n:
        out.append(finding(RULE, v, "info", gbn_t[0], gbn_t[-1],
                           f"{gbn_n} segments ({gbn_bytes/1024:.1f} KB) resent after timeouts that the receiver already held",
                           cost_bytes=float(gbn_bytes), count=gbn_n))
    return out


def _is_head(v, t, s) -> bool:
    """The retransmission of snd_una at a fast retransmit / timeout instant."""
    m = (np.abs(v.fastrtx_t - t) < 1e-9) & (v.fastrtx_una == s)
    n = (np.abs(v.timeout_t - t) < 1e-9) & (v.timeout_una == s)
    return bool(m.any() or n.any())


RULE = Rule("spurious-retransmission", "data retransmitted that the receiver already had",
            "RFC 2883, RFC 3522, RFC 5681 §3.2", check)
