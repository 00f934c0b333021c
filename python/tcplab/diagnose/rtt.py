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
    # All ACKs at once (a Python loop per ACK was most of a report's diagnose time).
    keep = ~np.asarray(v.ack_dup, dtype=bool)
    t, a = np.asarray(v.ack_t)[keep], np.asarray(v.ack_no)[keep]
    i = np.searchsorted(ends_sorted, a)
    inside = i < len(ends_sorted)
    hit = np.zeros(len(a), dtype=bool)
    hit[inside] = ends_sorted[i[inside]] == a[inside]
    j = order[i[hit]]
    sent_t = v.send_t[j]
    ok = np.isin(v.send_seq[j], uniq[counts == 1]) & (sent_t <= t[hit])
    return np.asarray(t[hit][ok] - sent_t[ok], dtype=float)
