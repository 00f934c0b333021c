//! BBR v3 congestion control as Google published it: the `v3` branch of github.com/google/bbr
//! (`net/ipv4/tcp_bbr.c`, "BBRv3", 2023) and draft-cardwell-iccrg-bbr-congestion-control-02 /
//! draft-ietf-ccwg-bbr (Cardwell, Swett, Beshay, Yeganeh, Swett, Jacobson). Written from the draft
//! and a reading of the published file; the code is our own. Shares the delivery-rate estimator
//! ([`super::rate`]) and the gain arithmetic with BBR v1 ([`super::BbrCc`]).
//!
//! What v3 adds to v1, as implemented here:
//! * **Bandwidth model**: `max_bw` = the larger of the current and the previous PROBE_BW cycle's
//!   maximum delivery rate (`bw_hi[2]`, advanced one round after each probe ends), bounded below
//!   the loss/ECN lower bound `bw_lo`: `bw = min(max_bw, bw_lo)`.
//! * **Inflight bounds**: `inflight_hi` (the long-term upper bound) is cut when a rate sample shows
//!   *inflight too high*: `rs.lost > loss_thresh · rs.tx_in_flight` (loss_thresh = 2 %, Linux
//!   `bbr_loss_thresh` = 5/256) or, ECN-eligible, `rs.delivered_ce > ecn_thresh · rs.delivered`
//!   (50 %); the cut is `inflight_hi = max(rs.tx_in_flight, β · target_inflight)` with
//!   β = 1 − 0.3 (`bbr_beta`) and target_inflight = min(BDP, cwnd), once per probe (only while
//!   `bw_probe_samples`, i.e. from REFILL's end until one round after UP ended), and UP ends at
//!   once. `inflight_lo`/`bw_lo` (short-term lower bounds) are cut once per loss round in which
//!   loss or CE marks were seen, while not probing: `bw_lo = max(bw_latest, β·bw_lo)`,
//!   `inflight_lo = max(inflight_latest, β·inflight_lo)`, ECN: `inflight_lo ·= 1 − α/3` (α the
//!   per-round CE fraction, EWMA gain 1/16). REFILL resets both lower bounds.
//! * **PROBE_BW sub-states** with pacing gains DOWN 0.90, CRUISE 1, REFILL 1, UP 1.25 (cwnd gain 2,
//!   2.25 in UP): DOWN until inflight ≤ min(BDP, inflight_hi − 15 % headroom) → CRUISE (cwnd capped
//!   at the headroom bound); after `probe_wait` = 2 s + U[0, 1 s) or Reno-coexistence rounds
//!   min(63, target_inflight in packets) since the last probe → REFILL for one round (no lower
//!   bounds, cwnd ≤ inflight_hi) → UP, whose inflight_hi grows 1, 2, 4, … packets per round
//!   (`bbr_probe_inflight_hi_upward`) until the bandwidth plateaus for 3 rounds or inflight is
//!   too high, → DOWN.
//! * **STARTUP** paces at 2.77 (4 ln 2) with cwnd gain 2; it ends on a 3-round bandwidth plateau,
//!   or on ≥ 6 loss events in a loss round in recovery with inflight too high, or 2 rounds with a
//!   CE ratio ≥ 50 %; then `inflight_hi = max(BDP, inflight_latest)`. DRAIN paces at 1/2.885.
//! * **PROBE_RTT** every 5 s (the `probe_rtt_min` filter, a strictly smaller sample replaces it),
//!   cwnd = max(BDP/2, 4 packets) for max(200 ms, one round), then PROBE_BW CRUISE with the lower
//!   bounds reset. `min_rtt` is the 10 s minimum fed from `probe_rtt_min`.
//!
//! Deliberate deviations from the published code:
//! * data in flight (`tcp_packets_in_flight`) in `prior_in_flight`, DRAIN's exit, PROBE_RTT's test
//!   and the app-limited mark is v1's (see [`super::BbrCc`]: RACK-TLP's scoreboard, else
//!   snd_max − snd_una);
//! * "lost" = retransmitted: the CC learns a loss when the recovery module retransmits the
//!   segment (RACK-TLP marks it lost just before), so `rs.lost` counts bytes retransmitted since
//!   the sampled segment left; a TLP probe counts as a loss (Linux does not). `tx_in_flight` is
//!   snd_max − snd_una when the segment left (Linux excludes SACKed and lost packets). Rate samples
//!   come on cumulative ACKs only ([`super::rate`]).
//! * no exact loss-threshold crossing point (`bbr_inflight_hi_from_lost_skb`): the cut uses the
//!   sampled segment's `tx_in_flight`;
//! * no ACK-aggregation allowance (`extra_acked`) in the cwnd target, no ECN-driven early probe
//!   (`ecn_in_cycle`), no `bw_probe_up_rounds` cap on slope, no fast-path; ECN is eligible when the
//!   minimum RTT is ≤ 5 ms (Linux `bbr_ecn_max_rtt_us`) and an echo has been seen;
//! * what an ACK delivered (`rs->acked_sacked`: newly SACKed, or cumulatively acknowledged
//!   without an earlier SACK) drives cwnd growth, packet conservation and the UP phase's
//!   inflight_hi growth, as in the published code; a SACK-only ACK outside recovery reaches no
//!   cwnd rule here and its SACKed data counts at the next ACK (2026-11-29; before, the
//!   cumulative advance counted data SACKed earlier a second time, as [`super::BbrCc`] did);
//! * recovery: packet conservation for the first round then the saved cwnd, as [`super::BbrCc`].
//!   A timeout is taken as v3 does (2026-11-29, was one sample of snd_max − snd_una): each
//!   unSACKed segment reaches `bbr_skb_marked_lost` (loss round noted; while probing, its
//!   `tx.in_flight` and the losses since it left checked against the threshold), then
//!   `bbr_set_state(TCP_CA_Loss)` resets full-bandwidth detection and, when not probing with no
//!   `inflight_lo`, sets `inflight_lo` = max(cwnd, prior_cwnd). Deviation: every unSACKed segment
//!   is marked (Linux's RACK skips those not yet past their reordering window), and the marks
//!   do not add to `C.lost` (the retransmissions do, as for any loss here).

use super::conservation::{forward_rate_events, CaState, Conservation};
use super::rate::{DeliveryRate, RateSample};
use super::{BbrCc, DRAIN_GAIN, MIN_CWND_PKTS, UNIT};
use crate::cc::{AckSample, CcWindow, CongestionControl, LossEvent, SenderView};
use crate::trace::CamTrace;
use crate::{Nanos, MS, SEC};

/// STARTUP pacing gain 2.77 (`bbr_startup_pacing_gain` = BBR_UNIT · 277/100 + 1) and cwnd gain 2.
pub const STARTUP_PACING_GAIN: u64 = UNIT * 277 / 100 + 1;
pub const STARTUP_CWND_GAIN: u64 = 2 * UNIT;
/// PROBE_BW pacing gains per sub-state (`bbr_pacing_gain[]`): UP, DOWN, CRUISE, REFILL.
pub const UP_GAIN: u64 = UNIT * 5 / 4;
pub const DOWN_GAIN: u64 = UNIT * 90 / 100;
/// PROBE_BW cwnd gain (2; 2.25 in UP, draft §4.6.4.6).
pub const CWND_GAIN: u64 = 2 * UNIT;
pub const UP_CWND_GAIN: u64 = UNIT * 9 / 4;
/// β = 0.3 (`bbr_beta`): bounds are cut to (1 − β) = 0.7 of their value.
pub const BETA: u64 = UNIT * 30 / 100;
/// ECN: the CE ratio that makes inflight too high (50 %), α's EWMA gain (1/16), the share of α
/// applied to inflight_lo (1/3), α's initial value (1).
pub const ECN_THRESH: u64 = UNIT / 2;
const ECN_ALPHA_GAIN: u64 = UNIT / 16;
const ECN_FACTOR: u64 = UNIT / 3;
const ECN_MAX_RTT: Nanos = 5 * MS;
/// Headroom left below inflight_hi in CRUISE and PROBE_RTT (15 %).
pub const INFLIGHT_HEADROOM: u64 = UNIT * 15 / 100;
/// STARTUP exit on loss: loss events in one loss round; on ECN: rounds with a high CE ratio.
const FULL_LOSS_CNT: u32 = 6;
const FULL_ECN_CNT: u32 = 2;
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
const FULL_BW_COUNT: u32 = 3;
/// Reno-coexistence probing: at most this many rounds between probes; random extra rounds.
const BW_PROBE_MAX_ROUNDS: u64 = 63;
const BW_PROBE_RAND_ROUNDS: u64 = 2;
const BW_PROBE_BASE: Nanos = 2 * SEC;
const BW_PROBE_RAND: Nanos = SEC;
/// PROBE_RTT's cwnd = BDP · 1/2; the 10 s window of `min_rtt`.
const PROBE_RTT_CWND_GAIN: u64 = UNIT / 2;
const MIN_RTT_WIN: Nanos = 10 * SEC;
/// Entries kept in the logs (bounded memory).
pub const LOG_CAP: usize = 4096;

/// BBR v3's registry `params`: PROBE_RTT's interval and length, the loss threshold and β.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bbr3Params {
    /// Interval of the `probe_rtt_min` filter, ms (v3: 5 s).
    pub probe_rtt_interval_ms: u64,
    /// Time at the PROBE_RTT cwnd, ms (200 ms).
    pub probe_rtt_ms: u64,
    /// Loss threshold in 1/256 (`bbr_loss_thresh` = 5 ≈ 2 %).
    pub loss_thresh: u64,
    /// Multiplicative cut β in 1/256 (`bbr_beta` = 76 ≈ 0.3).
    pub beta: u64,
}

impl Bbr3Params {
    pub const DEFAULT: Bbr3Params = Bbr3Params { probe_rtt_interval_ms: 5_000, probe_rtt_ms: 200, loss_thresh: UNIT * 2 / 100, beta: BETA };
    pub const NAMES: &'static [&'static str] = &["probe_rtt_interval_ms", "probe_rtt_ms", "loss_thresh", "beta"];

    pub fn set(&mut self, variant: &str, key: &str, value: f64) -> Result<(), String> {
        let whole = |v: f64| -> Result<u64, String> {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
                Ok(v as u64)
            } else {
                Err(format!("variant {variant:?} parameter {key:?} must be a whole number ≥ 0, got {value}"))
            }
        };
        let fraction = |v: f64| -> Result<u64, String> {
            if v.is_finite() && v > 0.0 && v < 1.0 {
                Ok(((v * UNIT as f64).round() as u64).max(1))
            } else {
                Err(format!("variant {variant:?} parameter {key:?} is a fraction in (0, 1), got {value}"))
            }
        };
        match key {
            "probe_rtt_interval_ms" => self.probe_rtt_interval_ms = whole(value)?,
            "probe_rtt_ms" => self.probe_rtt_ms = whole(value)?,
            "loss_thresh" => self.loss_thresh = fraction(value)?,
            "beta" => self.beta = fraction(value)?,
            _ => return Err(format!("variant {variant:?} has no parameter {key:?}; it takes {}", Self::NAMES.join(", "))),
        }
        Ok(())
    }

    pub fn check(&self) -> Result<(), String> {
        if self.probe_rtt_interval_ms == 0 {
            return Err("bbr3: probe_rtt_interval_ms must be > 0".into());
        }
        Ok(())
    }

    pub fn build(&self, seed: u64) -> Box<dyn CongestionControl> {
        Box::new(Bbr3Cc::new(*self, seed))
    }
}

impl Default for Bbr3Params {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// PROBE_BW's sub-states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Down,
    Cruise,
    Refill,
    Up,
}

/// BBR v3's states (PROBE_BW with its sub-state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode3 {
    Startup,
    Drain,
    ProbeBw(Phase),
    ProbeRtt,
}

/// Where the ACKs stand relative to a bandwidth probe (`bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}


/// One cut of inflight_hi (tests, traces): time, the sample's tx_in_flight and lost bytes,
/// target_inflight, the new inflight_hi.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HiCut {
    pub at: Nanos,
    pub tx_in_flight: u64,
    pub lost: u64,
    pub target: u64,
    pub inflight_hi: u64,
}

#[derive(Clone, Debug)]
pub struct Bbr3Cc {
    p: Bbr3Params,
    rng: u64,
    pub rate: DeliveryRate,
    pub mode: Mode3,
    ack_phase: AckPhase,
    // Rounds.
    pub round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    loss_round_delivered: u64,
    loss_round_start: bool,
    // Model.
    bw_hi: [u64; 2],
    pub bw_lo: u64,
    pub inflight_hi: u64,
    pub inflight_lo: u64,
    bw_latest: u64,
    inflight_latest: u64,
    pub min_rtt: Option<Nanos>,
    min_rtt_stamp: Nanos,
    pub probe_rtt_min: Option<Nanos>,
    pub probe_rtt_min_stamp: Nanos,
    // Congestion signals.
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_events_in_round: u32,
    lost_seen: u64,
    /// The cwnd when the last loss (recovery or timeout) was taken (`ssthresh`'s window).
    loss_cwnd: u32,
    /// `rate.delivered` when the previous ACK was done with, what the current ACK newly
    /// delivered (`rs->acked_sacked`), and whether an ACK that advanced snd_una set it.
    delivered_mark: u64,
    acked_sacked: u64,
    acked_this_ack: bool,
    ack_ece: bool,
    ecn_eligible: bool,
    pub ecn_alpha: u64,
    alpha_delivered: u64,
    alpha_delivered_ce: u64,
    startup_ecn_rounds: u32,
    // Probing.
    pub full_bw_reached: bool,
    full_bw_now: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    cycle_stamp: Nanos,
    probe_wait: Nanos,
    rounds_since_probe: u64,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    bw_probe_up_rounds: u32,
    bw_probe_up_cnt: u64,
    bw_probe_up_acks: u64,
    // PROBE_RTT and recovery.
    probe_rtt_done: Option<Nanos>,
    probe_rtt_round_done: bool,
    /// Loss state, saved cwnd and the first recovery round's packet conservation (as v1).
    cons: Conservation,
    // Output.
    pub pacing_gain: u64,
    pub cwnd_gain: u64,
    pacing_rate: Option<u64>,
    has_seen_rtt: bool,
    /// Every state entered with its time (the first [`LOG_CAP`]).
    pub transitions: Vec<(Nanos, Mode3)>,
    /// Every inflight_hi cut (the first [`LOG_CAP`]).
    pub hi_cuts: Vec<HiCut>,
    /// For each PROBE_RTT entered: when `probe_rtt_min` had last been taken.
    pub probe_rtt_min_stamps: Vec<Nanos>,
}

impl Bbr3Cc {
    pub fn new(p: Bbr3Params, seed: u64) -> Self {
        Bbr3Cc {
            p,
            rng: seed ^ 0x6262_725f_7633_u64,
            rate: DeliveryRate::default(),
            mode: Mode3::Startup,
            ack_phase: AckPhase::Init,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            loss_round_delivered: 0,
            loss_round_start: false,
            bw_hi: [0; 2],
            bw_lo: u64::MAX,
            inflight_hi: u64::MAX,
            inflight_lo: u64::MAX,
            bw_latest: 0,
            inflight_latest: 0,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_min: None,
            probe_rtt_min_stamp: 0,
            loss_in_round: false,
            ecn_in_round: false,
            loss_events_in_round: 0,
            lost_seen: 0,
            loss_cwnd: 0,
            delivered_mark: 0,
            acked_sacked: 0,
            acked_this_ack: false,
            ack_ece: false,
            ecn_eligible: false,
            ecn_alpha: UNIT,
            alpha_delivered: 0,
            alpha_delivered_ce: 0,
            startup_ecn_rounds: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw: 0,
            full_bw_cnt: 0,
            cycle_stamp: 0,
            probe_wait: 0,
            rounds_since_probe: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_cnt: u64::MAX,
            bw_probe_up_acks: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            cons: Conservation::default(),
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            pacing_rate: None,
            has_seen_rtt: false,
            transitions: vec![(0, Mode3::Startup)],
            hi_cuts: Vec::new(),
            probe_rtt_min_stamps: Vec::new(),
        }
    }

    /// `max_bw`: the larger of this and the previous probe cycle's maximum, bytes/s.
    pub fn max_bw(&self) -> u64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// The model's bandwidth: `min(max_bw, bw_lo)`.
    pub fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_lo)
    }

    pub fn pacing_rate_now(&self) -> Option<u64> {
        self.pacing_rate
    }

    fn enter(&mut self, now: Nanos, mode: Mode3) {
        self.mode = mode;
        if self.transitions.len() < LOG_CAP {
            self.transitions.push((now, mode));
        }
    }

    fn random_below(&mut self, n: u64) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }

    /// `bw · min_rtt · gain` in bytes, rounded up to whole packets (`bbr_bdp`); 10 packets
    /// before any RTT sample.
    fn bdp(&self, bw: u64, gain: u64, mss: u32) -> u64 {
        let mss = mss.max(1) as u64;
        let Some(min_rtt) = self.min_rtt else { return 10 * mss };
        let x = bw as u128 * min_rtt as u128 * gain as u128 / SEC as u128;
        (x.div_ceil(UNIT as u128 * mss as u128) as u64) * mss
    }

    /// `bbr_quantization_budget` in bytes: + 3 TSO goals, even packet count, +2 packets in UP.
    fn quantized(&self, bytes: u64, mss: u32) -> u64 {
        let m = mss.max(1) as u64;
        let rate = self.pacing_rate.unwrap_or(0);
        let tso = ((rate >> 10).min(65536 - 1 - 320) / m).max(if rate < 1_200_000 / 8 { 1 } else { 2 }).min(0x7F);
        let mut pkts = bytes.div_ceil(m) + 3 * tso;
        pkts = (pkts + 1) & !1;
        if self.mode == Mode3::ProbeBw(Phase::Up) {
            pkts += 2;
        }
        pkts * m
    }

    /// `bbr_inflight`: the quantized BDP · gain, bytes.
    fn inflight(&self, bw: u64, gain: u64, mss: u32) -> u64 {
        self.quantized(self.bdp(bw, gain, mss), mss)
    }

    /// `bbr_target_inflight`: min(BDP, cwnd).
    fn target_inflight(&self, w: &CcWindow) -> u64 {
        self.inflight(self.bw(), UNIT, w.mss).min(w.cwnd as u64)
    }

    /// `bbr_inflight_with_headroom`: inflight_hi less 15 % (at least one packet), ≥ 4 packets.
    fn inflight_with_headroom(&self, mss: u32) -> u64 {
        if self.inflight_hi == u64::MAX {
            return u64::MAX;
        }
        let headroom = (self.inflight_hi * INFLIGHT_HEADROOM / UNIT).max(mss as u64);
        self.inflight_hi.saturating_sub(headroom).max(MIN_CWND_PKTS as u64 * mss as u64)
    }

    fn is_probing_bw(&self) -> bool {
        matches!(self.mode, Mode3::Startup | Mode3::ProbeBw(Phase::Refill) | Mode3::ProbeBw(Phase::Up))
    }

    /// `bbr_is_inflight_too_high`: loss above loss_thresh of tx_in_flight, or (ECN-eligible) a
    /// CE share above 50 %.
    pub fn inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 && rs.lost > rs.tx_in_flight * self.p.loss_thresh / UNIT {
            return true;
        }
        self.ecn_eligible && rs.delivered_ce > 0 && rs.delivered > 0 && rs.delivered_ce > rs.delivered * ECN_THRESH / UNIT
    }

    /// `bbr_handle_inflight_too_high`: inflight_hi = max(tx_in_flight, (1 − β)·target_inflight).
    fn handle_inflight_too_high(&mut self, now: Nanos, rs: &RateSample, w: &CcWindow) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.app_limited {
            let target = self.target_inflight(w);
            self.inflight_hi = rs.tx_in_flight.max(target * (UNIT - self.p.beta) / UNIT);
            if self.hi_cuts.len() < LOG_CAP {
                self.hi_cuts.push(HiCut { at: now, tx_in_flight: rs.tx_in_flight, lost: rs.lost, target, inflight_hi: self.inflight_hi });
            }
        }
        if self.mode == Mode3::ProbeBw(Phase::Up) {
            self.start_down(now);
        }
    }

    /// `bbr_note_loss`: this round is a loss round (its end is counted from the first loss).
    fn note_loss(&mut self) {
        if !self.loss_in_round {
            self.loss_round_delivered = self.rate.delivered;
        }
        self.loss_in_round = true;
    }

    fn start_round(&mut self) {
        self.next_round_delivered = self.rate.delivered;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = u64::MAX;
        self.inflight_lo = u64::MAX;
    }

    fn start_down(&mut self, now: Nanos) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
        self.bw_probe_up_cnt = u64::MAX;
        self.rounds_since_probe = self.random_below(BW_PROBE_RAND_ROUNDS);
        self.probe_wait = BW_PROBE_BASE + self.random_below(BW_PROBE_RAND);
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.enter(now, Mode3::ProbeBw(Phase::Down));
    }

    fn start_cruise(&mut self, now: Nanos) {
        self.enter(now, Mode3::ProbeBw(Phase::Cruise));
    }

    fn start_refill(&mut self, now: Nanos) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.enter(now, Mode3::ProbeBw(Phase::Refill));
    }

    fn start_up(&mut self, now: Nanos, sample_bw: u64, w: &CcWindow) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.cycle_stamp = now;
        self.enter(now, Mode3::ProbeBw(Phase::Up));
        self.raise_inflight_hi_slope(w);
    }

    /// `bbr_raise_inflight_hi_slope`: grow inflight_hi by 1, 2, 4, … packets per round in UP.
    fn raise_inflight_hi_slope(&mut self, w: &CcWindow) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds.min(30);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        let cwnd_pkts = (w.cwnd / w.mss.max(1)) as u64;
        self.bw_probe_up_cnt = (cwnd_pkts / growth_this_round).max(1);
    }

    /// `bbr_probe_inflight_hi_upward`, in packets of the ACKed bytes.
    fn probe_inflight_hi_upward(&mut self, acked: u64, cwnd_limited: bool, w: &CcWindow) {
        if !cwnd_limited || (w.cwnd as u64) < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += acked / w.mss.max(1) as u64;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta * w.mss as u64);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(w);
        }
    }

    fn save_cwnd(&mut self, cwnd: u32) {
        self.cons.save_cwnd(cwnd, self.mode == Mode3::ProbeRtt);
    }
}

mod control;
#[cfg(test)]
mod tests;
