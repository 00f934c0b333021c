"""Retransmission timeouts far above the measured RTT (seed 001 §3.2, Lite.2; RFC 6298 §2).

What the measured RTT justifies: RFC 6298's SRTT + 4·RTTVAR from the fine RTT samples, and, with
a coarse clock of granularity G (500 ms in BSD), Brakmo's floor of "at least two larger than the
RTT" in ticks (seed 001 §3.2): G·(⌊RTT/G⌋ + 2); the larger of the two, and the variant's minimum
RTO. A timeout whose armed (not backed-off) RTO exceeds that by more than half a tick (or 25 %
on a fine clock) fires. Lite.0's estimator keeps the never-updated fraction bits of sa and sd,
so with RTTs of 0 ticks its RTO is 3 ticks (1.5 s) where 2 suffice (Table 1).

The time lost is the excess: the sender sat idle that much longer before retransmitting.
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding


TICK = 0.5      # the BSD slow timer (seconds)
RECENT = 5      # BSD samples the fixed estimator still remembers a 1-tick RTT for (Table 2)


def bsd_tick_samples(v) -> list[tuple[float, int]]:
    """The RTT samples a BSD sender takes, in ticks: one segment timed at a time (tcp_output
    starts timing new data when nothing is timed; tcp_input takes m = ticks elapsed when the ACK
    covers it; a timeout or fast retransmit stops timing — Karn)."""
    ticks = v.st_t[v.st_kind == "slow_tick"]
    ev = [(t, 0, int(s)) for t, s, r in zip(v.send_t, v.send_seq, v.send_retx) if not r]
    ev += [(t, 1, int(a)) for t, a, d in zip(v.ack_t, v.ack_no, v.ack_dup) if not d]
    ev += [(t, 2, 0) for t in np.concatenate([v.timeout_t, v.fastrtx_t])]
    ev.sort()
    out, timed = [], None
    for t, kind, x in ev:
        if kind == 0 and timed is None:
            timed = (t, x)
        elif kind == 1 and timed is not None and x > timed[1]:
            m = int(np.searchsorted(ticks, t, side="right") - np.searchsorted(ticks, timed[0], side="right"))
            out.append((t, m))
            timed = None
        elif kind == 2:
            timed = None
    return out


def _justified(v, t: float, samples) -> tuple[float, float, str]:
    """(justified RTO, clock granularity, how) at a timeout at t."""
    s = v.rtt_samples
    srtt = float(np.median(s))
    var = float(np.mean(np.abs(s - srtt)))
    fine = srtt + 4 * var
    if v.timer == "bsd" and samples is not None:
        recent = [m for ta, m in samples if ta < t][-RECENT:]
        if not recent:
            return 0.0, TICK, ""
        m = max(recent)
        return TICK * (m + 2), TICK, f"Brakmo's m+2 ticks for the largest of the last {len(recent)} tick samples (m = {m})"
    if v.timer == "fine":
        return max(fine, 1.0), 0.001, "SRTT + 4 RTTVAR, 1 s minimum (RFC 6298 §2.4)"
    return max(fine, 1.0), 0.001, "SRTT + 4 RTTVAR, RFC 6298 §2.4's 1 s minimum (the stack's clock is unknown)"


def first_of_series(v, k: int) -> bool:
    """Timeout k is the first of its series: no earlier timeout of the same snd_una without a
    new ACK in between (the later ones run on a backed-off timer)."""
    if k == 0 or v.timeout_una[k] != v.timeout_una[k - 1]:
        return True
    return bool(((v.ack_t > v.timeout_t[k - 1]) & (v.ack_t < v.timeout_t[k]) & ~v.ack_dup).any())


def check(v):
    out = []
    samples = bsd_tick_samples(v) if v.has_state and v.timer == "bsd" else None
    for k, (t, una) in enumerate(zip(v.timeout_t, v.timeout_una)):
        if not first_of_series(v, k) or len(v.rtt_samples) < 3:
            continue
        if (~v.ack_dup & (v.ack_t < t)).sum() < 16:
            continue   # "after the RTT is known": the estimator has not converged yet
        just, g, how = _justified(v, t, samples)
        if v.has_state:
            rto = v.state_at(t, "rto")
            armed = "armed RTO"
        else:
            last = max(v.last_send_before(t) or 0.0, float(v.ack_t[v.ack_t < t].max()) if (v.ack_t < t).any() else 0.0)
            rto = t - last
            armed = "time since the last send or ACK"
        if rto is None or just <= 0:
            continue
        slack = 0.01 if g >= 0.1 else 0.25 * just
        if rto <= just + slack:
            continue
        est = v.state_at(t, "srtt") if v.has_state else None
        gap = t - (v.last_send_before(t) or t)
        out.append(finding(RULE, v, "warning", t, t,
                           f"timeout after an RTO of {rto:.2f}s where the measured RTT "
                           f"({np.median(v.rtt_samples)*1000:.0f} ms) justifies {just:.2f}s",
                           evidence=[f"{armed} {rto:.3f}s at the timeout of seq {int(una)}"
                                     + (f"; the sender's smoothed RTT {est:.3f}s" if est is not None else ""),
                                     f"justified: {how}; median fine RTT {np.median(v.rtt_samples)*1000:.1f} ms "
                                     f"over {len(v.rtt_samples)} samples",
                                     f"{gap:.2f}s between the last segment sent and the timeout"],
                           segments=[int(una)], cost_s=float(rto - just)))
    return out


RULE = Rule("rto-too-large", "retransmission timeout far above the measured RTT",
            "RFC 6298 §2; seed 001 §3.2, Tables 1-2 (Lite.2)", check, lite_fix="lite.2")
