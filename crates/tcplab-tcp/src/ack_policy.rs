//! Receiver ACK policies (the receiver seam).
//!
//! Sources: 4.4BSD tcp_input.c (`TCP_REASS`: in-order data sets TF_DELACK, out-of-order data
//! TF_ACKNOW), tcp_output.c (window-update rule `adv >= 2 * t_maxseg` that makes BSD acknowledge
//! every second full segment when the application reads promptly), tcp_timer.c (`tcp_fasttimo`
//! turns TF_DELACK into an ACK every 200 ms); seed 001 §4 (x-kernel Reno ACKs every segment);
//! seed 002 §1.2 (Tahoe receivers: no immediate ACK for out-of-order segments, at most one ACK per
//! 200 ms) and footnote 4 (Jacobson's LBL receiver).
//!
//! Deliberate simplifications:
//! * "two full segments" is counted as in-order bytes received since our last ACK ≥
//!   `threshold` (default 2 × effective MSS) — equivalent to BSD's window-update rule when the
//!   application reads at once; with a slow reader BSD would ACK less often.
//! * Tahoe receiver: in-order data behaves like `BsdDelayed` (the every-other-segment ACK of
//!   4.3BSD-Tahoe came from the same window-update rule); a segment that fills a hole is
//!   acknowledged at once only if it advances the window by the threshold (it nearly always does).
//! * LBL receiver: the "network RTT" used for the idle test is the RTT the receiver measured during
//!   the handshake (SYN-ACK → ACK); if unknown, 200 ms.
//! * Linux quick-ACK mode (`quickack` > 0; tcp_input.c `tcp_incr_quickack`,
//!   `tcp_enter_quickack_mode`, `tcp_event_data_recv`): min(rcv_wnd/(2·MSS), max) immediate ACKs
//!   (at least 2) at the first data; again when in-order data arrives after a gap longer than the
//!   receiver's RTO ("sender failed to restart window") and when a duplicate or out-of-window
//!   segment arrives. The receiver's RTO is the one its handshake sample gives Linux (its only
//!   sample as a pure receiver): RTT + max(2·RTT, 200 ms), 1 s without one.

use crate::opt64::Opt64;
use crate::config::AckPolicy;
use crate::Nanos;

/// How a data segment related to what the receiver had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Extends rcv_nxt by `len` with no hole pending.
    InOrder { len: u32 },
    /// Lands above a hole.
    OutOfOrder,
    /// Fills (part of) a hole and advances rcv_nxt by `advance`.
    FillsHole { advance: u64 },
    /// Entirely old, or outside the window.
    Unacceptable,
}

#[derive(Clone, Debug)]
pub struct AckState {
    pub policy: AckPolicy,
    /// TF_DELACK: an ACK is owed at the next fast tick / delayed-ACK deadline.
    pub delack: bool,
    /// TF_ACKNOW: send an ACK at the next poll.
    pub ack_now: bool,
    /// In-order bytes received since the last ACK we sent.
    pub unacked_bytes: u64,
    /// Fine timer model: when the delayed ACK is due.
    pub delack_deadline: Opt64,
    lbl_bytes: u64,
    lbl_last_arrival: Opt64,
    /// Linux quick-ACK: the configured maximum (0 = off) and, from the first data segment on,
    /// the immediate ACKs left.
    quickack_max: u32,
    quick_left: Option<u32>,
    /// When in-sequence data last arrived (Linux `icsk_ack.lrcvtime`).
    last_data_at: Opt64,
}

impl AckState {
    pub fn new(policy: AckPolicy) -> AckState {
        AckState { policy, delack: false, ack_now: false, unacked_bytes: 0, delack_deadline: Opt64::NONE, lbl_bytes: 0, lbl_last_arrival: Opt64::NONE, quickack_max: 0, quick_left: None, last_data_at: Opt64::NONE }
    }

    /// Linux's quick-ACK mode at connection start with at most `max` immediate ACKs (0 = off).
    pub fn with_quickack(mut self, max: u32) -> AckState {
        self.quickack_max = max;
        self
    }

    /// A data segment (or FIN-bearing segment) arrived.
    /// `threshold`: bytes after which a delayed ACK is sent at once; `recv_buffer`: for LBL's
    /// "two receive windows"; `rtt`: the receiver's RTT estimate for LBL's idle test;
    /// `delack_timeout`: `Some` in the fine timer model.
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(&mut self, now: Nanos, arrival: Arrival, seg_len: u32, threshold: u64, recv_buffer: u32, rtt: Option<Nanos>, delack_timeout: Option<Nanos>) {
        let mut policy = self.policy;
        if policy == AckPolicy::Lbl {
            // Seed 002 fn. 4: back to immediate ACKs after the sender idled more than an RTT.
            let rtt = rtt.unwrap_or(200 * crate::MS);
            if let Some(last) = self.lbl_last_arrival.get() {
                if now.saturating_sub(last) > rtt {
                    self.lbl_bytes = 0;
                }
            }
            self.lbl_last_arrival = Opt64::some(now);
            let immediate = self.lbl_bytes < 2 * recv_buffer as u64;
            self.lbl_bytes += seg_len as u64;
            policy = if immediate { AckPolicy::EveryPacket } else { AckPolicy::BsdDelayed };
        }
        if self.quickack_max > 0 {
            match arrival {
                // `tcp_enter_quickack_mode` for a retransmitted or out-of-window segment.
                Arrival::Unacceptable => self.incr_quickack(threshold, recv_buffer),
                Arrival::InOrder { .. } | Arrival::FillsHole { .. } => {
                    // `tcp_event_data_recv`: a gap longer than the RTO re-enters quick-ACK mode.
                    let rto = rtt.map_or(crate::SEC, |r| r + (2 * r).max(200 * crate::MS));
                    if self.last_data_at.get().is_some_and(|t| now.saturating_sub(t) > rto) {
                        self.incr_quickack(threshold, recv_buffer);
                    }
                    self.last_data_at = Opt64::some(now);
                }
                _ => {}
            }
        }
        match (policy, arrival) {
            (_, Arrival::Unacceptable) => self.ack_now = true,
            (AckPolicy::EveryPacket, _) => self.ack_now = true,
            (_, Arrival::InOrder { len }) => {
                self.unacked_bytes += len as u64;
                if self.quickack_max > 0 {
                    // Linux `tcp_incr_quickack` at the first data: rcv_wnd / (2·rcv_mss), at
                    // least 2, at most the maximum; each in-order segment then uses one up.
                    let left = self.quick_left.get_or_insert(((recv_buffer as u64 / threshold.max(1)) as u32).max(2).min(self.quickack_max));
                    if *left > 0 {
                        *left -= 1;
                        self.ack_now = true;
                        return;
                    }
                }
                if self.unacked_bytes >= threshold {
                    self.ack_now = true;
                } else {
                    self.set_delack(now, delack_timeout);
                }
            }
            (AckPolicy::TahoeReceiver, Arrival::OutOfOrder) => {
                // Seed 002 §1.2: silent; the fast tick sends (at most) one ACK.
                self.set_delack(now, delack_timeout);
            }
            (AckPolicy::TahoeReceiver, Arrival::FillsHole { advance }) => {
                self.unacked_bytes += advance;
                if self.unacked_bytes >= threshold {
                    self.ack_now = true;
                } else {
                    self.set_delack(now, delack_timeout);
                }
            }
            (_, Arrival::OutOfOrder) | (_, Arrival::FillsHole { .. }) => self.ack_now = true,
        }
    }

    /// `tcp_incr_quickack`: at least min(rcv_wnd/(2·MSS), max) (≥ 2) immediate ACKs left.
    fn incr_quickack(&mut self, threshold: u64, recv_buffer: u32) {
        let n = ((recv_buffer as u64 / threshold.max(1)) as u32).max(2).min(self.quickack_max);
        let left = self.quick_left.get_or_insert(0);
        *left = (*left).max(n);
    }

    fn set_delack(&mut self, now: Nanos, delack_timeout: Option<Nanos>) {
        self.delack = true;
        if let Some(t) = delack_timeout {
            if self.delack_deadline.get().is_none() {
                self.delack_deadline = Opt64::some(now + t);
            }
        }
    }

    /// BSD fast tick (tcp_fasttimo).
    pub fn on_fast_tick(&mut self) {
        if self.delack {
            self.delack = false;
            self.ack_now = true;
        }
    }

    /// Fine model: the delayed-ACK deadline passed.
    pub fn on_timer(&mut self, now: Nanos) {
        if matches!(self.delack_deadline.get(), Some(d) if d <= now) {
            self.delack_deadline = Opt64::NONE;
            self.delack = false;
            self.ack_now = true;
        }
    }

    /// Any segment carrying our current ACK left.
    pub fn on_ack_sent(&mut self) {
        self.delack = false;
        self.ack_now = false;
        self.unacked_bytes = 0;
        self.delack_deadline = Opt64::NONE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quickack_acks_the_first_segments_at_once_then_delays() {
        // 1000-byte segments, threshold 2000, recv buffer 10 000: rcv_wnd / (2·MSS) = 5 quick ACKs.
        let mut a = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        let mut immediate = Vec::new();
        for k in 0..8u64 {
            a.on_data(k, Arrival::InOrder { len: 1000 }, 1000, 2000, 10_000, None, Some(40));
            immediate.push(a.ack_now);
            if a.ack_now {
                a.on_ack_sent();
            }
        }
        // Five immediate, then BSD's every-second-segment rule.
        assert_eq!(immediate, [true, true, true, true, true, false, true, false]);
        // The cap: a large buffer gives 16; off gives none.
        let mut big = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        let mut n = 0;
        for k in 0..40 {
            big.on_data(k, Arrival::InOrder { len: 1000 }, 1000, 2000, 1 << 20, None, Some(40));
            if big.ack_now && big.unacked_bytes < 2000 {
                n += 1;
            }
            big.on_ack_sent();
        }
        assert_eq!(n, 16);
        let mut off = AckState::new(AckPolicy::BsdDelayed);
        off.on_data(0, Arrival::InOrder { len: 1000 }, 1000, 2000, 10_000, None, Some(40));
        assert!(!off.ack_now && off.delack_deadline.get() == Some(40));
    }
    use crate::MS;

    /// Quick ACKs used up, then in-order segments at `times` (ms): which were ACKed at once.
    fn after_quick_acks(a: &mut AckState, times: &[u64], rtt: Option<Nanos>) -> Vec<bool> {
        times
            .iter()
            .map(|&t| {
                a.on_data(t * MS, Arrival::InOrder { len: 1000 }, 1000, 2000, 10_000, rtt, Some(40 * MS));
                let now = a.ack_now;
                if now {
                    a.on_ack_sent();
                }
                now
            })
            .collect()
    }

    #[test]
    fn quickack_mode_returns_after_a_gap_longer_than_the_receivers_rto() {
        // Handshake RTT 100 ms → the receiver's RTO 100 + max(200, 200) = 300 ms. Five quick
        // ACKs (rcv_wnd/(2·MSS)), then every second segment.
        let mut a = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        let first = after_quick_acks(&mut a, &[0, 1, 2, 3, 4, 5, 6], Some(100 * MS));
        assert_eq!(first, [true, true, true, true, true, false, true]);
        // 300 ms later exactly: not longer than the RTO, still delayed.
        assert_eq!(after_quick_acks(&mut a, &[306], Some(100 * MS)), [false]);
        // 301 ms after that: quick-ACK mode again, five immediate ACKs.
        let again = after_quick_acks(&mut a, &[607, 608, 609, 610, 611, 612, 613], Some(100 * MS));
        assert_eq!(again, [true, true, true, true, true, false, true]);
        // Without a handshake sample the RTO is 1 s.
        let mut b = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        after_quick_acks(&mut b, &[0, 1, 2, 3, 4, 5, 6], None);
        assert_eq!(after_quick_acks(&mut b, &[1006, 2007], None), [false, true]);
    }

    #[test]
    fn a_duplicate_segment_re_enters_quickack_mode() {
        let mut a = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        after_quick_acks(&mut a, &[0, 1, 2, 3, 4, 5, 6], Some(100 * MS));
        a.on_data(7 * MS, Arrival::Unacceptable, 1000, 2000, 10_000, Some(100 * MS), Some(40 * MS));
        assert!(a.ack_now);
        a.on_ack_sent();
        assert_eq!(after_quick_acks(&mut a, &[8, 9, 10, 11, 12, 13], Some(100 * MS)), [true, true, true, true, true, false]);
        // Off (`quickack` 0): a duplicate is ACKed at once and nothing more.
        let mut off = AckState::new(AckPolicy::BsdDelayed);
        off.on_data(0, Arrival::Unacceptable, 1000, 2000, 10_000, None, Some(40 * MS));
        off.on_ack_sent();
        assert_eq!(after_quick_acks(&mut off, &[1, 2], None), [false, true]);
    }

    /// LBL receiver with a 1000-byte receive buffer: the first 2000 bytes (two receive windows)
    /// are ACKed at once, later in-order data as BSD delayed ACKs (threshold 2000 B).
    fn lbl_after_two_windows(rtt: Option<Nanos>) -> AckState {
        let mut a = AckState::new(AckPolicy::Lbl);
        for k in 0..2u64 {
            a.on_data(k * MS, Arrival::InOrder { len: 1000 }, 1000, 2000, 1000, rtt, None);
            assert!(a.ack_now, "segment {k} within two receive windows: immediate ACK");
            a.on_ack_sent();
        }
        a.on_data(2 * MS, Arrival::InOrder { len: 1000 }, 1000, 2000, 1000, rtt, None);
        assert!(!a.ack_now && a.delack, "past two receive windows: delayed");
        a
    }

    #[test]
    fn lbl_idle_test_uses_200ms_before_any_rtt_and_is_strict() {
        // Seed 002 fn. 4: immediate ACKs again after the sender idled *more than* an RTT; with no
        // RTT measured yet the receiver takes 200 ms. Last arrival at 2 ms.
        let mut a = lbl_after_two_windows(None);
        a.on_data(202 * MS, Arrival::InOrder { len: 1000 }, 1000, 2000, 1000, None, None);
        assert!(a.ack_now, "a gap of exactly 200 ms is not idle, but 2000 B are due");
        let mut a = lbl_after_two_windows(None);
        a.on_ack_sent();
        a.on_data(202 * MS, Arrival::InOrder { len: 500 }, 500, 2000, 1000, None, None);
        assert!(!a.ack_now, "gap of exactly 200 ms: still delayed");
        let mut a = lbl_after_two_windows(None);
        a.on_ack_sent();
        a.on_data(202 * MS + 1, Arrival::InOrder { len: 500 }, 500, 2000, 1000, None, None);
        assert!(a.ack_now, "gap over 200 ms: immediate again");
        // A measured RTT of 50 ms replaces the 200 ms.
        let mut a = lbl_after_two_windows(Some(50 * MS));
        a.on_ack_sent();
        a.on_data(52 * MS + 1, Arrival::InOrder { len: 500 }, 500, 2000, 1000, Some(50 * MS), None);
        assert!(a.ack_now);
        let mut a = lbl_after_two_windows(Some(50 * MS));
        a.on_ack_sent();
        a.on_data(52 * MS, Arrival::InOrder { len: 500 }, 500, 2000, 1000, Some(50 * MS), None);
        assert!(!a.ack_now);
    }
}

