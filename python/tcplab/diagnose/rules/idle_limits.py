"""What limited the sender, and idle time with an open window and data to send (RFC 4898
tcpEStatsPerfSndLimTime*, Linux `tcp_info` busy / rwnd_limited / sndbuf_limited times).

Exact (run directory): between consecutive sender rows the state says which limit was closest:
cwnd (unacked ≥ cwnd − MSS), the receiver's window (≥ snd_wnd − MSS), the send buffer
(≥ send buffer − MSS), else the application. The shares are an "info" finding. A "warning"
(sender-stall) is a gap of more than 2 RTT (and 200 ms) without a send while the window had room
for a full segment, data was waiting and no retransmission timer was about to fire: a sender
that should have sent and did not.
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding


def check(v):
    if not v.has_state or len(v.st_t) < 2:
        return []
    t, cw, wnd, un = v.st_t, v.st_cwnd, v.st_snd_wnd, v.st_unacked
    dt = np.diff(t)
    mss = v.mss
    buf = float(v.send_buffer or np.inf)
    # The limit as a small integer (0 app, 1 sndbuf, 2 rwnd, 3 cwnd; the last that holds wins), not
    # an object array of strings: its compares were most of this rule's time.
    names = ("app", "sndbuf", "rwnd", "cwnd")
    lim = np.zeros(len(dt), dtype=np.int8)
    lim[(un[:-1] >= buf - mss)] = 1
    lim[(un[:-1] >= wnd[:-1] - mss)] = 2
    lim[(un[:-1] >= cw[:-1] - mss)] = 3
    end = float(v.send_t[-1]) if len(v.send_t) else float(t[-1])
    active = t[:-1] < end
    total = dt[active].sum()
    if total <= 0:
        return []
    shares = {k: float(dt[active & (lim == names.index(k))].sum() / total) for k in ("cwnd", "rwnd", "sndbuf", "app")}
    out = [finding(RULE, v, "info", float(t[0]), end,
                   "time limited by " + ", ".join(f"{k} {s:.0%}" for k, s in shares.items()),
                   evidence=["cwnd: unacked within 1 MSS of cwnd; rwnd: of the receiver's window; "
                             "sndbuf: of the send buffer; app: none of these (nothing to send)"])]
    # Stalls: long gaps without a send while the window was open and data was waiting.
    rtt = v.rtt()
    sent_end = np.maximum.accumulate(v.send_seq + v.send_len) if len(v.send_t) else np.zeros(0)
    total_bytes = v.total_bytes
    # Only the gaps longer than 2 RTT (and 200 ms) are looked at (found at once: a loop over every
    # send was most of this rule's time on a 6-flow, 60 s run).
    gaps = np.nonzero(np.diff(v.send_t) > max(2 * rtt, 0.2))[0] if len(v.send_t) > 1 else []
    for i in gaps:
        a, b = v.send_t[i], v.send_t[i + 1]
        mid = a + 1e-9
        room = min(v.state_at(mid, "cwnd", before=False), v.state_at(mid, "snd_wnd", before=False), buf) - v.state_at(mid, "unacked", before=False)
        k = np.searchsorted(v.send_t, a, side="right") - 1
        waiting = total_bytes is None or sent_end[k] + mss <= total_bytes   # a sub-MSS tail waits for Nagle
        timer = (v.timeout_t > a) & (v.timeout_t <= b + 1e-9)
        acks = (v.ack_t > a) & (v.ack_t < b)
        if room >= mss and waiting and not timer.any() and acks.any():
            out.append(finding(RULE, v, "warning", a, b,
                               f"no segment sent for {b-a:.2f}s with {room/1024:.1f} KB of open window and data waiting",
                               cost_s=float(b - a - rtt)))
    return out


RULE = Rule("sender-limits", "sender idle with an open window and data to send; limit shares",
            "RFC 4898 §3 (SndLimTime); Linux tcp_info", check)
