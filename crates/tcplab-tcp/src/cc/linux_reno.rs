//! Reno as Linux runs it (`net/ipv4/tcp_cong.c`: `tcp_reno_cong_avoid`, `tcp_slow_start`,
//! `tcp_cong_avoid_ai`, `tcp_reno_ssthresh`; Linux 6.x), the `modern-reno` variant's window.
//! It differs from the BSD Reno of [`super::RenoCc`] where a Linux sender's window differs:
//!
//! * the window is counted in packets and grown by the packets each ACK acknowledges (RFC 3465
//!   byte counting with no limit L), not by one MSS per ACK: under delayed ACKs slow start
//!   doubles per RTT (BSD's +1 per ACK: ×1.5) and congestion avoidance adds one packet per RTT
//!   (BSD's MSS²/cwnd per ACK: half a packet);
//! * slow start while `cwnd < ssthresh` (`tcp_in_slow_start`), up to ssthresh; the rest of the
//!   ACK goes to congestion avoidance: +1 per `cwnd` packets acknowledged, credits carried in
//!   `snd_cwnd_cnt`;
//! * growth only when cwnd-limited (`tcp_is_cwnd_limited`): in slow start while cwnd < 2 ×
//!   the flight, in congestion avoidance while the flight fills cwnd;
//! * ssthresh = max(cwnd/2, 2) packets: half the window, not RFC 5681's FlightSize/2.
//!
//! Deliberate deviations: cwnd-limited is judged on the flight before this ACK, as
//! [`super::CubicCc`]'s reading 3 (Linux keeps `max_packets_out` over a window); no cwnd undo
//! (`tcp_reno_undo_cwnd`) since tcplab's recoveries undo nothing.

use super::{AckSample, CcWindow, CongestionControl, LossEvent, SenderView};
use crate::trace::CamTrace;

#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxRenoCc {
    /// `snd_cwnd_cnt`: packets acknowledged towards the next +1 in congestion avoidance.
    cwnd_cnt: u32,
    /// The byte window this controller last wrote (a change from outside resets the credits).
    written: u32,
}

impl LinuxRenoCc {
    /// One ACK of `acked` packets with cwnd and ssthresh in packets; returns the new cwnd.
    fn grow(&mut self, mut cwnd: u32, ssthresh: u32, mut acked: u32) -> u32 {
        if cwnd < ssthresh {
            let new = (cwnd + acked).min(ssthresh);
            acked -= new - cwnd;
            cwnd = new;
            if acked == 0 {
                return cwnd;
            }
        }
        // tcp_cong_avoid_ai(tp, cwnd, acked)
        let w = cwnd.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            cwnd += delta;
        }
        cwnd
    }
}

impl CongestionControl for LinuxRenoCc {
    fn name(&self) -> &'static str {
        "linux-reno"
    }

    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, _v: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        let mss = w.mss.max(1);
        if w.cwnd != self.written {
            self.cwnd_cnt = 0;
        }
        let cwnd = (w.cwnd / mss).max(1);
        let ssthresh = w.ssthresh / mss;
        let in_ss = cwnd < ssthresh;
        let flight_before = s.flight as u64 + s.bytes_acked as u64;
        let limited = if in_ss { (w.cwnd as u64) < 2 * flight_before } else { flight_before + mss as u64 > w.cwnd as u64 };
        if limited {
            let acked = s.bytes_acked.div_ceil(mss).max(1);
            let pkts = self.grow(cwnd, ssthresh, acked);
            w.cwnd = ((pkts as u64 * mss as u64).min(w.max_cwnd as u64) as u32).max(mss);
        }
        self.written = w.cwnd;
    }

    fn ssthresh(&mut self, w: &CcWindow, _flight: u32, _snd_wnd: u32, _ev: LossEvent) -> u32 {
        let mss = w.mss.max(1);
        (w.cwnd / mss / 2).max(2) * mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sendlog::SendLog;

    fn view(log: &SendLog) -> SenderView<'_> {
        SenderView { now: 0, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 1 << 30, mss: 1000, dupacks: 0, fine_srtt: None, in_recovery: false, send_log: log }
    }
    /// An ACK of `pkts` packets with `flight` bytes still outstanding after it.
    fn ack(pkts: u32, flight: u32) -> AckSample {
        AckSample { now: 0, bytes_acked: pkts * 1000, rtt: None, fine_rtt: None, in_slow_start: true, snd_una: 0, snd_nxt: 0, flight, ece: false }
    }

    #[test]
    fn slow_start_adds_the_packets_each_ack_covers_up_to_ssthresh() {
        let log = SendLog::default();
        let mut cc = LinuxRenoCc::default();
        let mut w = CcWindow { cwnd: 10_000, ssthresh: 1 << 30, mss: 1000, max_cwnd: 1 << 30 };
        // Five delayed ACKs of 2 packets each, 10 in flight: one RTT doubles cwnd 10 → 20
        // (BSD's +1 MSS per ACK gives 15).
        for k in 0..5 {
            cc.on_ack(&mut w, &ack(2, 8_000 + 2000 * k), &view(&log), None);
        }
        assert_eq!(w.cwnd, 20_000);
        // Up to ssthresh 21, the other packet to congestion avoidance (credit 1 of 21).
        w.ssthresh = 21_000;
        cc.on_ack(&mut w, &ack(2, 20_000), &view(&log), None);
        assert_eq!(w.cwnd, 21_000);
        assert_eq!(cc.cwnd_cnt, 1);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_window_of_acked_packets() {
        let log = SendLog::default();
        let mut cc = LinuxRenoCc::default();
        let mut w = CcWindow { cwnd: 20_000, ssthresh: 10_000, mss: 1000, max_cwnd: 1 << 30 };
        // 9 ACKs of 2 packets: 18 < 20, no growth; the 10th makes 20: cwnd 21, credit 0.
        for _ in 0..9 {
            cc.on_ack(&mut w, &ack(2, 19_000), &view(&log), None);
            assert_eq!(w.cwnd, 20_000);
        }
        cc.on_ack(&mut w, &ack(2, 19_000), &view(&log), None);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (21_000, 0));
    }

    #[test]
    fn no_growth_unless_cwnd_limited() {
        let log = SendLog::default();
        let mut cc = LinuxRenoCc::default();
        // Slow start, 4 packets in flight before the ACK with cwnd 10: 10 ≥ 2·4 → no growth.
        let mut w = CcWindow { cwnd: 10_000, ssthresh: 1 << 30, mss: 1000, max_cwnd: 1 << 30 };
        cc.on_ack(&mut w, &ack(2, 2000), &view(&log), None);
        assert_eq!(w.cwnd, 10_000);
        // Congestion avoidance with 5 of 20 in flight: none of the credit is counted.
        let mut w = CcWindow { cwnd: 20_000, ssthresh: 10_000, mss: 1000, max_cwnd: 1 << 30 };
        for _ in 0..20 {
            cc.on_ack(&mut w, &ack(2, 3000), &view(&log), None);
        }
        assert_eq!((w.cwnd, cc.cwnd_cnt), (20_000, 0));
    }

    #[test]
    fn ssthresh_is_half_the_window_not_half_the_flight() {
        let mut cc = LinuxRenoCc::default();
        let w = CcWindow { cwnd: 41_000, ssthresh: 1 << 30, mss: 1000, max_cwnd: 1 << 30 };
        assert_eq!(cc.ssthresh(&w, 10_000, 1 << 30, LossEvent::FastRetransmit), 20_000);
        let small = CcWindow { cwnd: 3000, ..w };
        assert_eq!(cc.ssthresh(&small, 3000, 1 << 30, LossEvent::Timeout), 2000);
    }
}
