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
//! * Linux's receive window opening (tcp_input.c `tcp_grow_window`, called by
//!   `tcp_event_data_recv` for in-order data of ≥ 128 bytes; tcp_output.c
//!   `tcp_select_initial_window`): while `rcv_ssthresh` is below `window_clamp`, each such
//!   segment raises it by max(2·advmss, 2·len) (at most to the clamp) and sets
//!   `icsk_ack.quick |= 1`, so that segment is ACKed at once (quick-ACK mode): the receiver ACKs
//!   every segment while its window opens, then every second one (out-of-order and
//!   hole-filling segments, ACKed at once anyway, grow it too: `tcp_data_queue_ofo` on SACK
//!   connections, `tcp_event_data_recv`). Both ends are
//!   `tcp_win_from_space` shares of the receive buffer: the initial window is half the buffer
//!   (Linux's default `scaling_ratio`, 128/256) rounded down to whole segments, and the clamp is
//!   the share at the ratio the kernel then measures from its own segments (payload / skb
//!   truesize). Deviations: tcplab keeps no skb memory, so the measured ratio is a constant,
//!   170/256, the one the kernel here (6.18, 1448-byte segments through the emulator's TAP)
//!   showed: with a 16 MiB buffer its first ACK advertised 8 390 656 bytes and its window grew by
//!   2 segments an ACK to 11 141 120 = 16 MiB × 170/256, ACKing each of the ~900 segments
//!   in between at once (`tcplab validate-linux`'s kernel runs, 2026-11-29). The window tcplab
//!   advertises stays its free buffer (not `rcv_ssthresh`), and there is no receive-buffer
//!   autotuning (`tcp_rcv_space_adjust`, Dynamic Right-Sizing): a Linux receiver whose buffer
//!   starts at `tcp_rmem[2]`, as validate-linux's kernel does, has nothing to autotune, and a
//!   smaller fixed tcplab `recv_buffer` matches a Linux socket with SO_RCVBUF set (which turns
//!   autotuning off). Linux receivers only (`quickack` > 0).

use crate::opt64::Opt64;
use crate::config::AckPolicy;
use crate::Nanos;

/// Linux `TCP_DEFAULT_SCALING_RATIO` (of 256): the receive buffer's share offered as window
/// before any segment was measured.
const LINUX_DEFAULT_SCALING_RATIO: u64 = 128;
/// The share (of 256) the kernel measured for 1448-byte segments (see the module's notes).
const LINUX_MEASURED_SCALING_RATIO: u64 = 170;

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

/// `AckState::quick_left` before the first data segment.
const QUICK_UNSET: u32 = u32::MAX;

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
    /// `QUICK_UNSET` until the first data segment (a `u32`, not an `Option`: idle connections
    /// stay under 2 KB, issue 28).
    quick_left: u32,
    /// When in-sequence data last arrived (Linux `icsk_ack.lrcvtime`).
    last_data_at: Opt64,
    /// Linux `rcv_ssthresh`, bytes (from the first in-order data on; 0 before). At most the
    /// receive buffer's share, so a `u32`.
    rcv_ssthresh: u32,
}

impl AckState {
    pub fn new(policy: AckPolicy) -> AckState {
        AckState { policy, delack: false, ack_now: false, unacked_bytes: 0, delack_deadline: Opt64::NONE, lbl_bytes: 0, lbl_last_arrival: Opt64::NONE, quickack_max: 0, quick_left: QUICK_UNSET, last_data_at: Opt64::NONE, rcv_ssthresh: 0 }
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
            // A segment that fills a hole (`tcp_event_data_recv`) or lands above one
            // (`tcp_data_queue_ofo`, SACK connections) opens the window too; both are ACKed at
            // once anyway.
            if matches!(arrival, Arrival::OutOfOrder | Arrival::FillsHole { .. }) {
                self.grow_window(seg_len, threshold, recv_buffer);
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
                    if self.quick_left == QUICK_UNSET {
                        self.quick_left = ((recv_buffer as u64 / threshold.max(1)) as u32).max(2).min(self.quickack_max);
                    }
                    let mut left = self.quick_left;
                    // `tcp_grow_window`: `quick |= 1` while the window opens.
                    if self.grow_window(len, threshold, recv_buffer) {
                        left |= 1;
                    }
                    if left > 0 {
                        self.quick_left = left - 1;
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

    /// Linux `tcp_grow_window` for an in-order segment of `len` bytes (2·advmss = `threshold`)
    /// with a receive buffer of `recv_buffer` bytes: true if `rcv_ssthresh` grew.
    fn grow_window(&mut self, len: u32, threshold: u64, recv_buffer: u32) -> bool {
        if len < 128 {
            return false;
        }
        let mss = (threshold / 2).max(1);
        let buffer = recv_buffer as u64;
        // `window_clamp`: the buffer's share at the measured scaling ratio.
        let clamp = buffer * LINUX_MEASURED_SCALING_RATIO / 256;
        // The initial window: the default ratio's share, in whole segments.
        let s = match self.rcv_ssthresh {
            0 => (buffer * LINUX_DEFAULT_SCALING_RATIO / 256 / mss * mss).min(clamp),
            s => s as u64,
        };
        // both below the buffer (a u32): the clamp is a share of it, and s never passes the clamp
        self.rcv_ssthresh = s as u32;
        if s >= clamp {
            return false;
        }
        self.rcv_ssthresh = (s + (clamp - s).min(threshold.max(2 * len as u64))) as u32;
        true
    }

    /// Linux's `rcv_ssthresh` (tests).
    pub fn rcv_ssthresh(&self) -> Option<u64> {
        (self.rcv_ssthresh > 0).then_some(self.rcv_ssthresh as u64)
    }

    /// `tcp_incr_quickack`: at least min(rcv_wnd/(2·MSS), max) (≥ 2) immediate ACKs left.
    fn incr_quickack(&mut self, threshold: u64, recv_buffer: u32) {
        let n = ((recv_buffer as u64 / threshold.max(1)) as u32).max(2).min(self.quickack_max);
        self.quick_left = if self.quick_left == QUICK_UNSET { n } else { self.quick_left.max(n) };
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
        // The cap: a large buffer gives 16 after its window has opened (65 000 bytes: from
        // 32 000 to 43 164 in 6 segments, each ACKed at once), 22 in all; off gives none.
        let mut big = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        let mut n = 0;
        for k in 0..40 {
            big.on_data(k, Arrival::InOrder { len: 1000 }, 1000, 2000, 65_000, None, Some(40));
            if big.ack_now && big.unacked_bytes < 2000 {
                n += 1;
            }
            big.on_ack_sent();
        }
        assert_eq!(big.rcv_ssthresh(), Some(43_164));
        assert_eq!(n, 6 + 16);
        let mut off = AckState::new(AckPolicy::BsdDelayed);
        off.on_data(0, Arrival::InOrder { len: 1000 }, 1000, 2000, 10_000, None, Some(40));
        assert!(!off.ack_now && off.delack_deadline.get() == Some(40));
    }
    #[test]
    fn every_segment_is_acked_at_once_while_the_window_opens() {
        // MSS 1000 (threshold 2000), buffer 200 000: the initial window is half of it (Linux's
        // default scaling ratio), 100 000; `tcp_grow_window` adds max(2·advmss, 2·len) = 2000
        // per in-order segment up to the clamp, 200 000 × 170/256 = 132 812: 17 segments open
        // it (the last by 812). 16 quick ACKs at the first data as well; `quick |= 1` on each
        // growing segment keeps them from running down (16|1 = 17, one used: 16, ...).
        let mut a = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        let mut immediate = Vec::new();
        let mut ssthresh = Vec::new();
        for k in 0..40u64 {
            a.on_data(k, Arrival::InOrder { len: 1000 }, 1000, 2000, 200_000, None, Some(40));
            immediate.push(a.ack_now);
            ssthresh.push(a.rcv_ssthresh().unwrap());
            if a.ack_now {
                a.on_ack_sent();
            }
        }
        assert_eq!(ssthresh[0], 102_000);
        assert_eq!(ssthresh[15], 132_000);
        assert_eq!(ssthresh[16], 132_812);
        assert_eq!(ssthresh[39], 132_812);
        // 17 growing segments, then the 16 quick ACKs left, then every second segment (without
        // the rule: 16 immediate ACKs in all).
        assert!(immediate[..33].iter().all(|&x| x), "{immediate:?}");
        assert_eq!(&immediate[33..39], [false, true, false, true, false, true]);
        // A segment longer than advmss grows the window by twice its length.
        let mut l = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        l.on_data(0, Arrival::InOrder { len: 1500 }, 1500, 2000, 200_000, None, Some(40));
        assert_eq!(l.rcv_ssthresh(), Some(103_000));
        // The kernel's own figures: a 16 MiB buffer, MSS 1448: 8 388 264 (5793 segments) at
        // first, 11 141 120 at most, reached after 951 segments.
        let mut k = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        let mut grew = 0;
        for _ in 0..2000 {
            k.on_data(0, Arrival::InOrder { len: 1448 }, 1448, 2896, 16 << 20, None, Some(40));
            grew += (k.rcv_ssthresh() < Some(11_141_120)) as u32;
            k.on_ack_sent();
        }
        assert_eq!((grew, k.rcv_ssthresh()), (950, Some(11_141_120)));
        // A runt (< 128 bytes) does not open the window.
        let mut r = AckState::new(AckPolicy::BsdDelayed).with_quickack(16);
        r.on_data(0, Arrival::InOrder { len: 100 }, 100, 2000, 100_000, None, Some(40));
        assert_eq!(r.rcv_ssthresh(), None);
        // Not a Linux receiver (quickack 0): no window model, BSD's every-second-segment rule.
        let mut bsd = AckState::new(AckPolicy::BsdDelayed);
        bsd.on_data(0, Arrival::InOrder { len: 1000 }, 1000, 2000, 100_000, None, Some(40));
        assert!(!bsd.ack_now && bsd.rcv_ssthresh().is_none());
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

