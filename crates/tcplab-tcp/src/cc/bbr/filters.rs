//! BBR's two windowed filters.
//!
//! * [`WindowedMax`]: Kathleen Nichols' windowed min/max estimator as Linux `lib/win_minmax.c`
//!   keeps it — the best, second-best and third-best samples with their "time" (here BBR's
//!   round-trip count), so the running maximum over the last `window` rounds costs three words.
//!   Written from the algorithm's description (the 1st/2nd/3rd choice update and the
//!   quarter/half-window sub-window refresh), not from the Linux file.
//! * [`MinRttFilter`]: BBR v1's min-RTT filter, a single minimum that any smaller (or equal)
//!   sample replaces and that expires `window` nanoseconds after it was taken
//!   (`bbr_update_min_rtt`, `bbr_min_rtt_win_sec` = 10 s).

use crate::Nanos;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u64,
    v: u64,
}

/// Running maximum of `v` over the last `window` units of `t` (rounds for BBR's bandwidth).
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// The current maximum (0 before any sample).
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forget everything: the sample `(t, v)` becomes all three choices.
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Add the sample `v` taken at `t`; returns the new maximum.
    pub fn update(&mut self, window: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        // A new best, or nothing left inside the window: restart from this sample.
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > window {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(window, val)
    }

    /// Age the choices: once the best is older than the window, the 2nd becomes the best (and so
    /// on); a 2nd/3rd choice not refreshed for a quarter/half window is replaced by the sample.
    fn subwin_update(&mut self, window: u64, val: Sample) -> u64 {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > window {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.saturating_sub(self.s[0].t) > window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > window / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > window / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

/// BBR v1's min-RTT: the smallest RTT sample, replaced by any sample once it is `window` old.
#[derive(Clone, Copy, Debug)]
pub struct MinRttFilter {
    /// Current minimum (`None` before the first sample).
    pub min_rtt: Option<Nanos>,
    /// When it was taken (or last refreshed by PROBE_RTT's end).
    pub stamp: Nanos,
    pub window: Nanos,
}

impl MinRttFilter {
    pub fn new(window: Nanos, now: Nanos) -> Self {
        MinRttFilter { min_rtt: None, stamp: now, window }
    }

    /// Whether the minimum has outlived its window at `now` (Linux: `after(now, stamp + win)`).
    pub fn expired(&self, now: Nanos) -> bool {
        now > self.stamp + self.window
    }

    /// Offer a sample; returns whether the minimum changed. Only a strictly smaller sample (or
    /// any once expired) replaces it and restarts the window, as Linux's `bbr_update_min_rtt`
    /// (`rs->rtt_us < bbr->min_rtt_us`): a simulated path gives the same base RTT again and
    /// again, and refreshing the stamp on an equal sample would put PROBE_RTT off for good.
    pub fn update(&mut self, now: Nanos, rtt: Nanos) -> bool {
        let expired = self.expired(now);
        if self.min_rtt.is_none_or(|m| rtt < m) || expired {
            self.min_rtt = Some(rtt);
            self.stamp = now;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windowed_max_keeps_the_best_within_the_window_and_ages_it_out() {
        let mut f = WindowedMax::default();
        assert_eq!(f.update(10, 0, 100), 100);
        assert_eq!(f.update(10, 1, 50), 100, "a smaller sample does not replace the best");
        assert_eq!(f.update(10, 5, 80), 100);
        assert_eq!(f.update(10, 10, 60), 100, "still inside the 10-round window");
        // Round 11: the best (round 0) is 11 rounds old; the next best inside the window is 80.
        assert_eq!(f.update(10, 11, 40), 80);
        // Round 16: 80 (round 5) aged out as well; 60 (round 10) remains.
        assert_eq!(f.update(10, 16, 30), 60);
        assert_eq!(f.update(10, 17, 200), 200, "a new best resets the filter");
    }

    #[test]
    fn windowed_max_matches_a_brute_force_maximum_on_a_monotone_decline() {
        // Strictly falling samples, one per round: the true windowed max is the sample `window`
        // rounds ago; the three-choice filter may lag by at most its sub-window refresh, so it
        // is never above the oldest in-window sample and never below the newest.
        let mut f = WindowedMax::default();
        for t in 0..100u64 {
            let got = f.update(10, t, 1000 - t);
            let oldest_in_window = 1000 - t.saturating_sub(10);
            assert!(got <= oldest_in_window && got >= 1000 - t, "round {t}: {got}");
        }
    }

    #[test]
    fn min_rtt_takes_smaller_samples_and_expires_after_its_window() {
        let mut f = MinRttFilter::new(10_000, 0);
        assert!(f.update(0, 50));
        assert!(!f.update(100, 60));
        assert!(!f.update(200, 50), "an equal sample does not refresh the stamp (Linux: strict <)");
        assert_eq!((f.min_rtt, f.stamp), (Some(50), 0));
        assert!(f.update(300, 49));
        assert_eq!((f.min_rtt, f.stamp), (Some(49), 300));
        assert!(!f.expired(10_300));
        assert!(f.expired(10_301));
        assert!(f.update(10_301, 70), "any sample replaces an expired minimum");
        assert_eq!(f.min_rtt, Some(70));
    }
}

/// Linux `bbr_extra_acked_win_rtts`, `bbr_extra_acked_max_us`, `bbr_ack_epoch_acked_reset_thresh`
/// (the same in Google's BBR v3).
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
const EXTRA_ACKED_MAX: Nanos = 100 * crate::MS;
const ACK_EPOCH_RESET_PKTS: u64 = 1 << 20;

/// The ACK-aggregation estimate (`bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`;
/// tcp_bbr.c, and Google's v3 unchanged): per ACK epoch, the data ACKed beyond what the bandwidth
/// estimate explains (at most cwnd); its max over two windows of 5 rounds, capped at 100 ms of
/// the bandwidth, is what the cwnd target adds. Bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckAggregation {
    epoch_stamp: Nanos,
    epoch_acked: u64,
    extra_acked: [u64; 2],
    win_rounds: u32,
    idx: usize,
}

impl AckAggregation {
    /// One ACK of `acked` bytes at `now` (`round_start`: a packet-timed round began with it).
    pub fn update(&mut self, now: Nanos, round_start: bool, bw: u64, acked: u64, cwnd: u32, mss: u32) {
        if round_start {
            self.win_rounds = (self.win_rounds + 1).min(0x1F);
            if self.win_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                self.win_rounds = 0;
                self.idx ^= 1;
                self.extra_acked[self.idx] = 0;
            }
        }
        let epoch = now.saturating_sub(self.epoch_stamp);
        let mut expected = (bw as u128 * epoch as u128 / crate::SEC as u128) as u64;
        let reset_at = ACK_EPOCH_RESET_PKTS * mss as u64;
        if self.epoch_acked <= expected || self.epoch_acked + acked >= reset_at {
            self.epoch_acked = 0;
            self.epoch_stamp = now;
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + acked).min(reset_at);
        let extra = (self.epoch_acked - expected).min(cwnd as u64);
        let slot = &mut self.extra_acked[self.idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_extra_acked`: the larger of the two windows.
    pub fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_ack_aggregation_cwnd` (gain 1): the estimate, at most 100 ms at `bw`.
    pub fn cwnd(&self, bw: u64) -> u64 {
        let cap = (bw as u128 * EXTRA_ACKED_MAX as u128 / crate::SEC as u128) as u64;
        self.extra_acked().min(cap)
    }
}

#[cfg(test)]
mod aggregation_tests {
    use super::*;
    use crate::MS;

    #[test]
    fn data_acked_beyond_the_bandwidth_is_the_allowance_capped_at_100_ms() {
        // 1 MB/s: an epoch starts at 0 with 10 KB; 5 ms later 20 KB more arrive at once where
        // 5 KB were expected: extra = 30 − 5 = 25 KB.
        let mut a = AckAggregation::default();
        a.update(0, false, 1_000_000, 10_000, 1 << 20, 1000);
        a.update(5 * MS, false, 1_000_000, 20_000, 1 << 20, 1000);
        assert_eq!(a.extra_acked(), 25_000);
        assert_eq!(a.cwnd(1_000_000), 25_000);
        // Capped at 100 ms of bandwidth (here 10 KB at 100 KB/s) and by cwnd.
        assert_eq!(a.cwnd(100_000), 10_000);
        let mut small = AckAggregation::default();
        small.update(0, false, 1_000_000, 10_000, 5000, 1000);
        small.update(5 * MS, false, 1_000_000, 20_000, 5000, 1000);
        assert_eq!(small.extra_acked(), 5000);
        // An ACK stream no faster than the bandwidth starts a new epoch: no extra.
        let mut paced = AckAggregation::default();
        for k in 0..10 {
            paced.update(k * 10 * MS, false, 1_000_000, 10_000, 1 << 20, 1000);
        }
        assert_eq!(paced.extra_acked(), 10_000, "only the first ACK of each epoch counts");
    }

    #[test]
    fn the_estimate_expires_after_two_windows_of_five_rounds() {
        let mut a = AckAggregation::default();
        a.update(0, false, 1_000_000, 10_000, 1 << 20, 1000);
        a.update(10 * MS, false, 1_000_000, 20_000, 1 << 20, 1000);
        assert_eq!(a.extra_acked(), 20_000);
        // Five round starts switch to the other (cleared) window: the 20 KB are still held there.
        let mut t = 100 * MS;
        for _ in 0..5 {
            a.update(t, true, 1_000_000, 1000, 1 << 20, 1000);
            t += 100 * MS;
        }
        assert_eq!(a.extra_acked(), 20_000);
        // Five more: the window holding them is cleared.
        for _ in 0..5 {
            a.update(t, true, 1_000_000, 1000, 1 << 20, 1000);
            t += 100 * MS;
        }
        assert_eq!(a.extra_acked(), 1000);
    }
}
