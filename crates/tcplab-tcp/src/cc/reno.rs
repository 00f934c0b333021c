//! Reno AIMD window growth (Jacobson '88 "Congestion Avoidance and Control"; 4.4BSD tcp_input.c
//! "open the congestion window"; RFC 5681 §3.1).
//!
//! * Slow start while cwnd ≤ ssthresh: +1 MSS per ACK (per ACK, not per byte acknowledged, as
//!   BSD — RFC 3465 byte counting is a deliberate non-feature here).
//! * Congestion avoidance: +MSS·MSS/cwnd per ACK (integer division as BSD).
//! * Deliberate deviation from 4.4BSD: no extra MSS/8 term unless `extra_eighth` is set —
//!   the seeds' x-kernel Reno has none (seed 001 footnote 7); the `lite` variants have it until
//!   their `fix_extra_increase` switch (Lite.4, seed 001 §3.3).
//! * ssthresh: 4.4BSD `min(cwnd, snd_wnd)/2` rounded down to whole segments, at least 2; or
//!   RFC 5681 eq. (4) `max(FlightSize/2, 2·MSS)` when `halve_flight` (NewReno).

use super::{bsd_halve, AckSample, CcWindow, CongestionControl, LossEvent, SenderView};
use crate::trace::CamTrace;

#[derive(Clone, Copy, Debug, Default)]
pub struct RenoCc {
    pub extra_eighth: bool,
    pub halve_flight: bool,
}

impl CongestionControl for RenoCc {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, w: &mut CcWindow, _s: &AckSample, _v: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        let cw = w.cwnd;
        let mut incr = w.mss;
        if cw > w.ssthresh {
            incr = ((incr as u64 * incr as u64) / cw.max(1) as u64) as u32;
            if self.extra_eighth {
                incr += w.mss / 8;
            }
        }
        w.cwnd = cw.saturating_add(incr).min(w.max_cwnd);
    }

    fn ssthresh(&mut self, w: &CcWindow, flight: u32, snd_wnd: u32, _ev: LossEvent) -> u32 {
        if self.halve_flight {
            (flight / 2).max(2 * w.mss)
        } else {
            bsd_halve(w.cwnd.min(snd_wnd), w.mss)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sendlog::SendLog;

    fn view(log: &SendLog) -> SenderView<'_> {
        SenderView { now: 0, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 65535, mss: 1000, dupacks: 0, fine_srtt: None, in_recovery: false, send_log: log }
    }
    fn sample() -> AckSample {
        AckSample { now: 0, bytes_acked: 1000, rtt: None, fine_rtt: None, in_slow_start: true, snd_una: 0, snd_nxt: 0, flight: 0, ece: false }
    }

    #[test]
    fn slow_start_then_linear() {
        let log = SendLog::default();
        let mut cc = RenoCc::default();
        let mut w = CcWindow { cwnd: 1000, ssthresh: 4000, mss: 1000, max_cwnd: 65535 };
        for expect in [2000, 3000, 4000, 5000] {
            cc.on_ack(&mut w, &sample(), &view(&log), None);
            assert_eq!(w.cwnd, expect);
        }
        // cwnd 5000 > ssthresh: +1000*1000/5000 = 200
        cc.on_ack(&mut w, &sample(), &view(&log), None);
        assert_eq!(w.cwnd, 5200);
        let mut lite = RenoCc { extra_eighth: true, halve_flight: false };
        let mut w2 = CcWindow { cwnd: 5000, ssthresh: 4000, mss: 1000, max_cwnd: 65535 };
        lite.on_ack(&mut w2, &sample(), &view(&log), None);
        assert_eq!(w2.cwnd, 5000 + 200 + 125);
    }

    #[test]
    fn halving() {
        let mut cc = RenoCc::default();
        let w = CcWindow { cwnd: 9500, ssthresh: 65535, mss: 1000, max_cwnd: 65535 };
        assert_eq!(cc.ssthresh(&w, 0, 65535, LossEvent::Timeout), 4000);
        assert_eq!(cc.ssthresh(&w, 0, 3000, LossEvent::Timeout), 2000);
        let mut nr = RenoCc { extra_eighth: false, halve_flight: true };
        assert_eq!(nr.ssthresh(&w, 9000, 65535, LossEvent::FastRetransmit), 4500);
        assert_eq!(nr.ssthresh(&w, 1000, 65535, LossEvent::FastRetransmit), 2000);
    }
}
