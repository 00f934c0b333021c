//! BBR v1's long-term ("LT") bandwidth estimate: policer detection, as Linux
//! `net/ipv4/tcp_bbr.c` (`bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done`,
//! `bbr_reset_lt_bw_sampling*`) runs it; written from a reading of that file, the code is ours.
//!
//! Sampling starts at the first ACK that reports a loss. An interval lasts at least 4 and at most
//! 16 packet-timed round trips and ends on an ACK with a loss once lost / delivered over the
//! interval is ≥ 50/256 (about 20 %); its average delivery rate (delivered over the interval's
//! wall time, in whole milliseconds as Linux keeps `lt_last_stamp`) is compared with the previous
//! interval's: within 1/8 of it, or within 4 kbit/s, and BBR believes a token-bucket policer
//! limits it — `lt_bw` becomes the mean of the two, BBR's bandwidth is `lt_bw` and PROBE_BW paces
//! at gain 1 for 48 rounds, after which sampling starts afresh and gain cycling restarts.
//! An app-limited sample, or an interval longer than 16 rounds, resets sampling.
//!
//! Units are bytes (Linux counts packets; the ratios and rates are the same). Deviations: the
//! losses of an ACK are those loss detection marked since the previous rate sample (tcplab takes
//! samples only on ACKs that advance snd_una, so a SACK-only ACK's marks count at the next one;
//! Linux sees them on the SACK-only ACK's own sample); marks made by the reorder timer or by a
//! retransmission timeout (`tcp_enter_loss` marks the whole flight lost in Linux) are not
//! counted in `lost`, but a timeout itself is an ACK with a loss at a round start
//! (`bbr_set_state(TCP_CA_Loss)`); Linux also resets sampling when it undoes a recovery
//! (`bbr_undo_cwnd`), and tcplab has no undo.

use crate::{Nanos, MS, SEC};

/// Minimum round trips in an LT sampling interval (`bbr_lt_intvl_min_rtts`).
pub const INTVL_MIN_RTTS: u32 = 4;
/// Lost/delivered ratio (×256) that makes an interval lossy (`bbr_lt_loss_thresh`).
pub const LOSS_THRESH: u64 = 50;
/// Two intervals' rates are consistent within 1/8 (`bbr_lt_bw_ratio`, ×256) ...
pub const BW_RATIO: u64 = 256 / 8;
/// ... or within 4 kbit/s, in bytes/s (`bbr_lt_bw_diff`).
pub const BW_DIFF: u64 = 4000 / 8;
/// Rounds BBR uses `lt_bw` once it believes it is policed (`bbr_lt_bw_max_rtts`).
pub const BW_MAX_RTTS: u32 = 48;

/// What [`LtBw::sample`] asks of the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LtAction {
    None,
    /// A policer was just detected: pace at gain 1 from now (`bbr->pacing_gain = BBR_UNIT`).
    Policed,
    /// `lt_bw` was used for 48 rounds and is dropped: restart PROBE_BW's gain cycling.
    Expired,
}

/// The inputs of one `bbr_lt_bw_sampling` call.
#[derive(Clone, Copy, Debug)]
pub struct LtInput {
    /// Bytes marked lost on this ACK (`rs->losses`).
    pub losses: u64,
    pub app_limited: bool,
    pub round_start: bool,
    pub in_probe_bw: bool,
    /// The connection's cumulative delivered and lost bytes (`tp->delivered`, `tp->lost`) and
    /// when `delivered` last grew (`tp->delivered_mstamp`).
    pub delivered: u64,
    pub lost: u64,
    pub delivered_time: Nanos,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct LtBw {
    /// The long-term rate, bytes/s (0: none yet).
    pub lt_bw: u64,
    /// BBR's bandwidth is `lt_bw` (a policer is believed in).
    pub use_bw: bool,
    is_sampling: bool,
    rtt_cnt: u32,
    last_stamp_ms: u64,
    last_delivered: u64,
    last_lost: u64,
}

impl LtBw {
    fn reset_interval(&mut self, i: &LtInput) {
        self.last_stamp_ms = i.delivered_time / MS;
        self.last_delivered = i.delivered;
        self.last_lost = i.lost;
        self.rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    pub fn reset(&mut self, i: &LtInput) {
        self.lt_bw = 0;
        self.use_bw = false;
        self.is_sampling = false;
        self.reset_interval(i);
    }

    /// `bbr_lt_bw_interval_done`: an interval with average rate `bw` (bytes/s) ended lossy.
    fn interval_done(&mut self, i: &LtInput, bw: u64) -> LtAction {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            // Linux compares the difference as a pacing rate (with its 1 % margin) to 4 kbit/s.
            if diff * 256 <= BW_RATIO * self.lt_bw || diff * 99 / 100 <= BW_DIFF {
                self.lt_bw = (bw + self.lt_bw) / 2;
                self.use_bw = true;
                self.rtt_cnt = 0;
                return LtAction::Policed;
            }
        }
        self.lt_bw = bw;
        self.reset_interval(i);
        LtAction::None
    }

    /// `bbr_lt_bw_sampling`, once per ACK with a valid rate sample (and at a timeout).
    pub fn sample(&mut self, i: &LtInput) -> LtAction {
        if self.use_bw {
            if i.in_probe_bw && i.round_start {
                self.rtt_cnt += 1;
                if self.rtt_cnt >= BW_MAX_RTTS {
                    self.reset(i);
                    return LtAction::Expired;
                }
            }
            return LtAction::None;
        }
        // Wait for the first loss, so that a policer's tokens are spent before sampling.
        if !self.is_sampling {
            if i.losses == 0 {
                return LtAction::None;
            }
            self.reset_interval(i);
            self.is_sampling = true;
        }
        if i.app_limited {
            self.reset(i);
            return LtAction::None;
        }
        if i.round_start {
            self.rtt_cnt += 1;
        }
        if self.rtt_cnt < INTVL_MIN_RTTS {
            return LtAction::None;
        }
        if self.rtt_cnt > 4 * INTVL_MIN_RTTS {
            self.reset(i);
            return LtAction::None;
        }
        // End the interval on a loss (the policer's tokens are exhausted).
        if i.losses == 0 {
            return LtAction::None;
        }
        let lost = i.lost.saturating_sub(self.last_lost);
        let delivered = i.delivered.saturating_sub(self.last_delivered);
        if delivered == 0 || (lost << 8) < LOSS_THRESH * delivered {
            return LtAction::None;
        }
        let t_ms = (i.delivered_time / MS).saturating_sub(self.last_stamp_ms);
        if t_ms < 1 {
            return LtAction::None;
        }
        let bw = (delivered as u128 * SEC as u128 / (t_ms as u128 * MS as u128)) as u64;
        self.interval_done(i, bw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(t_ms: u64, delivered: u64, lost: u64, losses: u64, round_start: bool) -> LtInput {
        LtInput { losses, app_limited: false, round_start, in_probe_bw: true, delivered, lost, delivered_time: t_ms * MS }
    }

    /// Drive `rounds` rounds of `per_round` bytes delivered in `rtt_ms`, `loss_pct` % of them lost,
    /// from the state `(t, delivered, lost)`; every round's last ACK reports a loss.
    fn rounds(lt: &mut LtBw, st: &mut (u64, u64, u64), n: u32, rtt_ms: u64, per_round: u64, loss_pct: u64) -> Vec<LtAction> {
        let mut out = Vec::new();
        for _ in 0..n {
            st.0 += rtt_ms;
            st.1 += per_round;
            let l = per_round * loss_pct / 100;
            st.2 += l;
            out.push(lt.sample(&input(st.0, st.1, st.2, l, true)));
        }
        out
    }

    #[test]
    fn two_consistent_lossy_intervals_mean_a_policer() {
        let mut lt = LtBw::default();
        let mut st = (1000, 1_000_000, 0);
        // No loss yet: nothing sampled.
        assert_eq!(lt.sample(&input(st.0, st.1, 0, 0, true)), LtAction::None);
        assert!(!lt.is_sampling);
        // The first loss starts the interval; 4 rounds of 125 000 bytes in 100 ms (1.25 MB/s), 25 % lost.
        st.2 = 1;
        lt.sample(&input(st.0, st.1, st.2, 1, false));
        assert!(lt.is_sampling);
        let a = rounds(&mut lt, &mut st, 4, 100, 125_000, 25);
        assert_eq!(a, vec![LtAction::None; 4]);
        assert_eq!(lt.lt_bw, 1_250_000, "first interval: its rate kept, not used");
        assert!(!lt.use_bw);
        // A second interval at 1.3 MB/s (within 1/8): policed, lt_bw the mean.
        let a = rounds(&mut lt, &mut st, 4, 100, 130_000, 25);
        assert_eq!(a.last(), Some(&LtAction::Policed));
        assert!(lt.use_bw);
        assert_eq!(lt.lt_bw, 1_275_000);
        // 48 PROBE_BW rounds later it is dropped.
        let a = rounds(&mut lt, &mut st, 47, 100, 130_000, 0);
        assert!(a.iter().all(|x| *x == LtAction::None) && lt.use_bw);
        assert_eq!(rounds(&mut lt, &mut st, 1, 100, 130_000, 0), vec![LtAction::Expired]);
        assert!(!lt.use_bw && lt.lt_bw == 0);
    }

    #[test]
    fn low_loss_or_inconsistent_rates_are_no_policer() {
        // 10 % lost (< 50/256): the interval never ends and is reset after 16 rounds.
        let mut lt = LtBw::default();
        let mut st = (0, 0, 0);
        st.2 = 1;
        lt.sample(&input(st.0, st.1, st.2, 1, false));
        rounds(&mut lt, &mut st, 17, 100, 125_000, 10);
        assert_eq!(lt.lt_bw, 0);
        assert!(!lt.is_sampling, "an interval over 16 rounds resets sampling");
        // Lossy but rates 1.25 and 2.5 MB/s: the second replaces the first, no policer.
        let mut lt = LtBw::default();
        let mut st = (0, 0, 1);
        lt.sample(&input(st.0, st.1, st.2, 1, false));
        rounds(&mut lt, &mut st, 4, 100, 125_000, 30);
        assert_eq!(lt.lt_bw, 1_250_000);
        let a = rounds(&mut lt, &mut st, 4, 100, 250_000, 30);
        assert!(a.iter().all(|x| *x == LtAction::None));
        assert_eq!(lt.lt_bw, 2_500_000);
        assert!(!lt.use_bw);
    }

    #[test]
    fn an_app_limited_sample_resets_sampling() {
        let mut lt = LtBw::default();
        let mut st = (0, 0, 1);
        lt.sample(&input(st.0, st.1, st.2, 1, false));
        rounds(&mut lt, &mut st, 2, 100, 125_000, 30);
        let mut i = input(st.0, st.1, st.2, 0, false);
        i.app_limited = true;
        lt.sample(&i);
        assert!(!lt.is_sampling && lt.lt_bw == 0);
    }
}
