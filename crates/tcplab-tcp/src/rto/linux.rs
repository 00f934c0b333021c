//! Linux's retransmission timer: `tcp_rtt_estimator` and `__tcp_set_rto` (net/ipv4/tcp_input.c,
//! include/net/tcp.h, Linux 6.x), which differ from RFC 6298 in two ways that matter on long
//! paths:
//!
//! * the RTT is sampled on every ACK that newly acknowledges never-retransmitted data (the
//!   oldest such segment, `first_ackt` in `tcp_clean_rtx_queue`), or failing that on the oldest
//!   newly SACKed one (`sack_rtt_us`), not on one timed segment per RTT;
//! * the variance term is floored per round trip: `mdev` (4 × the mean deviation, gain 1/4; a
//!   falling RTT enters with gain 1/32, "similar to one of Eifel findings") feeds `mdev_max`,
//!   which restarts at `tcp_rto_min` (200 ms) every time snd_una passes `rtt_seq` (once per
//!   RTT); `rttvar` jumps up to `mdev_max` at once and decays a quarter of the way down to it
//!   per RTT. RTO = SRTT + rttvar, so it is never below SRTT + 200 ms: on a 200 ms path RFC 6298
//!   with a 200 ms floor gives about 200 ms + 4·RTTVAR, Linux gives about 400 ms.
//!
//! First sample R: SRTT = R, mdev = 2R, rttvar = max(2R, rto_min) (RTO ≈ 3R). Backoff doubles
//! up to `TCP_RTO_MAX` = 120 s; a new sample clears it (`icsk_backoff = 0` in
//! `tcp_ack_update_rtt`). Values are kept unscaled in ns; Linux's ×8 SRTT and the shifts are
//! exact here to within a nanosecond. Deviation: the RTO is not rounded up to jiffies.

use crate::{Nanos, SEC};

/// `TCP_RTO_MAX`.
pub const LINUX_MAX_RTO: Nanos = 120 * SEC;
/// As [`super::fine::MAX_BACKOFFS`]: the connection is dropped after 12 consecutive backoffs.
pub const MAX_BACKOFFS: u32 = super::fine::MAX_BACKOFFS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxRto {
    pub srtt: Option<Nanos>,
    /// `mdev_us`: 4 × the smoothed mean deviation.
    pub mdev: Nanos,
    /// `mdev_max_us`: the largest `mdev` of the current round trip, at least `min_rto`.
    pub mdev_max: Nanos,
    /// `rttvar_us`: the variance term added to SRTT.
    pub rttvar: Nanos,
    /// `rtt_seq`: snd_nxt when the current round trip's measurement began.
    pub rtt_seq: u64,
    pub min_rto: Nanos,
    pub initial_rto: Nanos,
    pub backoffs: u32,
    /// The highest SACKed sequence already sampled (a repeated SACK block is no new sample).
    pub sacked_high: u64,
}

impl LinuxRto {
    pub fn new(min_rto: Nanos, initial_rto: Nanos) -> LinuxRto {
        LinuxRto { srtt: None, mdev: 0, mdev_max: 0, rttvar: 0, rtt_seq: 0, min_rto, initial_rto, backoffs: 0, sacked_high: 0 }
    }

    /// `tcp_rtt_estimator(sk, m)` then `tcp_set_rto`, with the sender's snd_una and snd_nxt.
    pub fn sample(&mut self, m: Nanos, snd_una: u64, snd_nxt: u64) {
        match self.srtt {
            None => {
                self.srtt = Some(m);
                self.mdev = 2 * m;
                self.rttvar = self.mdev.max(self.min_rto);
                self.mdev_max = self.rttvar;
                self.rtt_seq = snd_nxt;
            }
            Some(s) => {
                let err = m as i64 - s as i64;
                self.srtt = Some((s as i64 + err / 8) as u64);
                let quarter = (self.mdev / 4) as i64;
                let delta = if err < 0 {
                    // A falling RTT moves mdev with gain 1/32 only (and never up).
                    let d = -err - quarter;
                    if d > 0 { d / 8 } else { d }
                } else {
                    err - quarter
                };
                self.mdev = (self.mdev as i64 + delta).max(0) as u64;
                if self.mdev > self.mdev_max {
                    self.mdev_max = self.mdev;
                    self.rttvar = self.rttvar.max(self.mdev_max);
                }
                if snd_una > self.rtt_seq {
                    if self.mdev_max < self.rttvar {
                        self.rttvar -= (self.rttvar - self.mdev_max) / 4;
                    }
                    self.rtt_seq = snd_nxt;
                    self.mdev_max = self.min_rto;
                }
            }
        }
        self.backoffs = 0;
    }

    /// True (and remembered) if a SACK block ending at `end` reports data above what was
    /// sampled before.
    pub fn newly_sacked(&mut self, end: u64) -> bool {
        let new = end > self.sacked_high;
        self.sacked_high = self.sacked_high.max(end);
        new
    }

    fn base(&self) -> Nanos {
        match self.srtt {
            None => self.initial_rto,
            Some(s) => (s + self.rttvar).min(LINUX_MAX_RTO),
        }
    }

    /// Current RTO including backoff (`inet_csk_rto_backoff`).
    pub fn rto(&self) -> Nanos {
        super::fine::backed_off(self.base(), self.backoffs, LINUX_MAX_RTO)
    }

    /// Back off after an expiry. Returns false when the connection should be dropped.
    pub fn backoff(&mut self) -> bool {
        super::fine::back_off(&mut self.backoffs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MS;

    #[test]
    fn first_sample_gives_three_rtts_or_rtt_plus_rto_min() {
        // 100 ms: mdev 200 ms = rttvar → RTO 300 ms (3 R).
        let mut l = LinuxRto::new(200 * MS, SEC);
        assert_eq!(l.rto(), SEC);
        l.sample(100 * MS, 1, 1000);
        assert_eq!(l.rto(), 300 * MS);
        // 10 ms: mdev 20 ms, rttvar floored at 200 ms → 210 ms.
        let mut s = LinuxRto::new(200 * MS, SEC);
        s.sample(10 * MS, 1, 1000);
        assert_eq!(s.rto(), 210 * MS);
    }

    #[test]
    fn steady_rtt_settles_at_srtt_plus_rto_min_not_rfc6298s_floor() {
        // 200 ms every ACK, 10 ACKs per round trip for 60 round trips: mdev decays towards 0,
        // mdev_max restarts at 200 ms every round, rttvar decays to 200 ms → RTO = 400 ms.
        let mut l = LinuxRto::new(200 * MS, SEC);
        let (mut una, mut nxt) = (1u64, 11u64);
        for _ in 0..60 {
            for _ in 0..10 {
                una += 1;
                nxt += 1;
                l.sample(200 * MS, una, nxt);
            }
        }
        assert!(l.rttvar - 200 * MS < 1000, "{}", l.rttvar);
        assert!(l.rto() - 400 * MS < 1000, "{}", l.rto());
        // RFC 6298 with the same samples and a 200 ms floor sits at about 200 ms.
        let mut f = super::super::FineRto::new(MS, 200 * MS, SEC);
        for _ in 0..200 {
            f.sample(200 * MS);
        }
        assert!(f.rto() < 202 * MS, "{}", f.rto());
    }

    #[test]
    fn rttvar_jumps_up_at_once_and_decays_a_quarter_per_round() {
        let mut l = LinuxRto::new(200 * MS, SEC);
        l.sample(100 * MS, 1, 100); // srtt 100, mdev 200, rttvar 200, rtt_seq 100
        // Within the round (una 50 ≤ rtt_seq): a 500 ms sample. err 400 → srtt 150;
        // mdev = 200 + (400 − 50) = 550 > mdev_max 200 → rttvar 550.
        l.sample(500 * MS, 50, 120);
        assert_eq!(l.srtt, Some(150 * MS));
        assert_eq!(l.mdev, 550 * MS);
        assert_eq!(l.rttvar, 550 * MS);
        assert_eq!(l.rto(), 700 * MS);
        // Next ACK passes rtt_seq (una 101 > 100): 150 ms, err 0 → mdev −= 137.5 → 412.5, below
        // mdev_max 550; the round closes with mdev_max = rttvar (no decay) and mdev_max
        // restarts at 200 ms.
        l.sample(150 * MS, 101, 130);
        assert_eq!(l.mdev, 412_500_000);
        assert_eq!(l.rttvar, 550 * MS);
        assert_eq!(l.mdev_max, 200 * MS);
        assert_eq!(l.rtt_seq, 130);
        // 150 ms again: mdev 412.5 − 103.125 = 309.375 becomes mdev_max; the round closes with
        // mdev_max < rttvar: rttvar −= (550 − 309.375)/4 → 489.84375 ms.
        l.sample(150 * MS, 131, 140);
        assert_eq!(l.mdev, 309_375_000);
        assert_eq!(l.rttvar, 489_843_750);
    }

    #[test]
    fn a_falling_rtt_moves_mdev_with_gain_one_thirty_second() {
        let mut l = LinuxRto::new(0, SEC);
        l.sample(100 * MS, 1, 10); // mdev 200 ms
        // 20 ms: err −80 → srtt 90; |err| − mdev/4 = 80 − 50 = 30 → /8 = 3.75 ms.
        l.sample(20 * MS, 2, 10);
        assert_eq!(l.srtt, Some(90 * MS));
        assert_eq!(l.mdev, 203_750_000);
        // |err| below mdev/4 shrinks mdev with the full 1/4 gain: 90 → 85 ms, err −5,
        // 5 − 50.9375 = −45.9375 ms.
        l.sample(85 * MS, 3, 10);
        assert_eq!(l.mdev, 203_750_000 - 45_937_500);
    }

    #[test]
    fn backoff_doubles_to_120_s_and_a_sample_clears_it() {
        let mut l = LinuxRto::new(200 * MS, SEC);
        l.sample(100 * MS, 1, 10); // 300 ms
        assert!(l.backoff());
        assert_eq!(l.rto(), 600 * MS);
        for _ in 1..MAX_BACKOFFS {
            assert!(l.backoff());
        }
        assert_eq!(l.rto(), LINUX_MAX_RTO);
        assert!(!l.backoff());
        l.sample(100 * MS, 2, 10);
        assert_eq!(l.backoffs, 0);
    }
}
