"""Loss indication without a window reduction (seed 001 §3.1, Lite.1; RFC 5681 §3.2 step 6).

After a fast retransmit the sender inflates cwnd by one MSS per duplicate ACK; the ACK that
acknowledges new data must deflate it to ssthresh. 4.4BSD-Lite's header prediction took that
ACK on its fast path and kept the inflated window, releasing "more than 20KB ... at that time"
(seed 001 §3.1, Fig 3 a little after 8 s).

Exact (run directory): cwnd after the recovery-ending ACK exceeds ssthresh + 4 MSS (3 MSS are
the §3.6 `>`-test case of an episode with exactly three dup ACKs, a separate minor detail the
seed expects no effect from; one more for the increase of that ACK). Inferred (pcap): the flight within one
RTT after that ACK is at least the flight when the loss was detected — only without SACK: with
SACK (RFC 6675) the sender's pipe excludes SACKed data, which the flight cannot show.
"""
from __future__ import annotations

import numpy as np

from . import Rule, finding


def check(v):
    out = []
    for t_fr, una in zip(v.fastrtx_t, v.fastrtx_una):
        later = (v.ack_t > t_fr) & ~v.ack_dup & (v.ack_no > una)
        if not later.any():
            continue
        i = int(np.argmax(later))
        t_end = float(v.ack_t[i])
        burst = v.send_len[(v.send_t >= t_end) & (v.send_t <= t_end + 1e-3)].sum()
        if v.has_state:
            cwnd = v.state_at(t_end, "cwnd", before=False)
            ssth = v.state_at(t_end, "ssthresh", before=False)
            before = v.state_at(t_fr, "cwnd")
            mss_cc = v.mss + 12
            if cwnd is None or ssth is None or cwnd <= ssth + 4 * mss_cc:
                continue
            out.append(finding(RULE, v, "bug", t_fr, t_end,
                               f"cwnd stayed inflated at {cwnd/1024:.1f} KB after the ACK that ended fast recovery "
                               f"(ssthresh {ssth/1024:.1f} KB): no window reduction for the loss of seq {una}",
                               evidence=[f"fast retransmit of seq {una} at {t_fr:.3f}s with cwnd {before/1024:.1f} KB before",
                                         f"new ACK {int(v.ack_no[i])} at {t_end:.3f}s left cwnd {cwnd:.0f} > ssthresh {ssth:.0f} + 4 MSS",
                                         f"{burst} bytes sent within 1 ms of that ACK"],
                               segments=[int(una)], cost_bytes=float(cwnd - ssth)))
        elif not v.sack:   # with SACK the flight (snd_max - snd_una) is not the pipe: not judged
            fl_before = _flight(v, t_fr)
            fl_after = max(_flight(v, t) for t in np.linspace(t_end, t_end + v.rtt(), 8))
            if fl_before >= 4 * v.mss and fl_after >= fl_before:   # a smaller flight is within the noise
                out.append(finding(RULE, v, "bug", t_fr, t_end,
                                   f"flight {fl_after/1024:.1f} KB one RTT after recovery is not below the "
                                   f"{fl_before/1024:.1f} KB in flight at the loss: no window reduction",
                                   evidence=[f"retransmission of seq {una} after 3 dup ACKs at {t_fr:.3f}s",
                                             f"recovery ended by ACK {int(v.ack_no[i])} at {t_end:.3f}s"],
                                   segments=[int(una)], cost_bytes=float(fl_after - fl_before / 2)))
    return out


def _flight(v, t: float) -> float:
    sent = v.send_t <= t
    if not sent.any():
        return 0.0
    top = (v.send_seq[sent] + v.send_len[sent]).max()
    acked = v.ack_no[v.ack_t <= t]
    return float(top - (acked.max() if len(acked) else 0))


RULE = Rule("no-window-reduction", "loss indication without a window reduction",
            "RFC 5681 §3.2 step 6; seed 001 §3.1 (Lite.1)", check, lite_fix="lite.1")
