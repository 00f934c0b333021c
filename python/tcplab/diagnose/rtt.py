"""RTT samples from a send/ACK stream (Karn's rule: only segments sent once)."""
from __future__ import annotations

import numpy as np


def rtt_samples(v) -> np.ndarray:
    """One sample per ACK that exactly covers the end of a segment sent once (RFC 6298 §3)."""
    if len(v.send_t) == 0 or len(v.ack_t) == 0:
        return np.zeros(0)
    ends = v.send_seq + v.send_len
    order = np.argsort(ends, kind="stable")
    ends_sorted = ends[order]
    uniq, counts = np.unique(v.send_seq, return_counts=True)
    sent_once = set(uniq[counts == 1].tolist())
    out = []
    for t, a, dup in zip(v.ack_t, v.ack_no, v.ack_dup):
        if dup:
            continue
        i = np.searchsorted(ends_sorted, a)
        if i < len(ends_sorted) and ends_sorted[i] == a:
            j = order[i]
            if int(v.send_seq[j]) in sent_once and v.send_t[j] <= t:
                out.append(t - v.send_t[j])
    return np.asarray(out, dtype=float)
