//! BBR v1 congestion control (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00),
//! as Linux `net/ipv4/tcp_bbr.c` (v1, Linux 5.x–6.x) runs it. Written from the paper, the draft and
//! a reading of the Linux file; the code is our own.
//!
//! * Model: the windowed max of delivery-rate samples over 10 round trips (`bw`,
//!   [`filters::WindowedMax`], samples from [`rate::DeliveryRate`]) and the minimum RTT over 10 s
//!   ([`filters::MinRttFilter`]); BDP = bw · min_rtt.
//! * STARTUP: pacing and cwnd gain 2/ln 2 (Linux `bbr_high_gain` = 2885/1000 · 256 + 1); the pipe
//!   is full after 3 rounds without 25 % bandwidth growth. DRAIN: pacing gain ln 2 / 2 until the
//!   data in flight is ≤ BDP. PROBE_BW: pacing gains 5/4, 3/4, 1 ×6 cycled each min_rtt (5/4 held
//!   until inflight reaches 5/4·BDP or a loss, 3/4 left early once inflight ≤ BDP), cwnd gain 2,
//!   starting at a random phase other than 3/4. PROBE_RTT: when the min-RTT estimate is 10 s old,
//!   cwnd = 4 packets for max(200 ms, one round), then back to PROBE_BW (or STARTUP).
//! * Pacing rate = bw · pacing_gain · 99 % (`bbr_pacing_margin_percent`); before the pipe is full
//!   it only grows. The endpoint paces with it (`endpoint/pacing.rs`).
//! * cwnd target = BDP · cwnd_gain + the ACK-aggregation allowance (max extra ACKed over 5–10
//!   rounds, capped at 100 ms of bw) + the quantization budget (3 · TSO goal, rounded up to an
//!   even count, +2 packets in the 5/4 phase); cwnd grows by the bytes ACKed towards it, never
//!   below 4 packets. Loss recovery: packet conservation in the first recovery round, then the
//!   cwnd saved at entry is restored on exit (`bbr_set_cwnd_to_recover_or_restore`).
//!
//! * Long-term bandwidth (policer detection, [`lt_bw`]): after two consecutive lossy (≥ 20 %)
//!   intervals of 4–16 rounds with consistent delivery rates, `bbr_bw` is their mean and PROBE_BW
//!   paces at gain 1 for 48 rounds; the windowed max (`bbr_max_bw`) still drives gain-cycle
//!   phase ends, the full-pipe test and DRAIN's exit, as in Linux. Added 2026-11-29 (before, no
//!   `lt_bw`): it engages in the 4-flow 10 Mbit/s, 50 ms, 2 BDP validate-linux case
//!   (retransmissions 1,106 → 971, kernel 234–385 over seven runs).
//!
//! * What an ACK delivered (Linux `rs->acked_sacked`, `tcp_ack`: `tp->delivered` after minus
//!   before): cwnd growth (`bbr_set_cwnd`), packet conservation and the ACK-aggregation
//!   estimate take the bytes newly SACKed or newly acknowledged without an earlier SACK, never
//!   the cumulative advance over data SACKed before (2026-11-29; before, a retransmission that
//!   filled a hole under N SACKed segments grew STARTUP's cwnd by N more, to 5,300–5,600
//!   segments on the 100 Mbit/s, 200 ms, 0.5 BDP validate-linux path where the kernel's stops at
//!   its 5,031 target; and set the first recovery round's cwnd to pipe + N).
//!
//! * Data in flight (Linux `tcp_packets_in_flight` = packets_out − sacked_out − lost_out +
//!   retrans_out) in `prior_in_flight` (gain-cycle advance), DRAIN's exit, PROBE_RTT's 4-packet
//!   test and the app-limited mark: the recovery module's scoreboard as the endpoint reports it
//!   ([`CongestionControl::on_in_flight`]: RACK-TLP's outstanding − SACKed − marked lost, a
//!   retransmission counting once), before and after each ACK's SACK and loss processing, plus
//!   what was sent since (2026-11-29; before, snd_max − snd_una, SACKed and lost data included).
//!
//! Deliberate deviations from Linux:
//! * with a recovery that keeps no scoreboard outside recovery (RFC 6675, PRR, NewReno) the data
//!   in flight is still snd_max − snd_una; retransmissions after the last report are not added;
//! * `lt_bw`'s losses: see [`lt_bw`] (the marks of SACK-only ACKs count at the next sample;
//!   reorder-timer and timeout marks are not in `tp->lost`); `params.lt_bw = 0` switches it off;
//! * app-limited samples: by default the endpoint marks the sender app-limited only outside
//!   loss recovery, and its send buffer counts payload bytes. With Linux's send buffer
//!   (`send_buffer_model = "linux"`, endpoint/sndbuf.rs, which validate-linux uses) the mark is
//!   Linux's `tcp_rate_check_app_limited` at every write, in recovery too, and the buffer counts
//!   skb truesize with a writer woken at 1/3 free: on a 100 Mbit/s, 200 ms, 0.5 BDP path this
//!   keeps the rate samples app-limited and BBR in STARTUP, as the kernel's (2026-11-29);
//! * the delivery-rate estimator takes samples on ACKs that advance snd_una only (SACKed bytes
//!   count as delivered when SACKed, see [`rate`]); the 5/4 phase ends on a loss when the
//!   endpoint has entered recovery or timed out since the phase began;
//! * `cwnd −= rs->losses` (`bbr_set_cwnd_to_recover_or_restore`) takes the bytes the recovery
//!   module's loss detection marked lost on this ACK
//!   ([`CongestionControl::on_marked_lost`], RACK-TLP's `RACK_detect_loss`; marks from the
//!   reorder timer are not an ACK's and do not count, as in Linux); a duplicate (SACK-only) ACK
//!   in recovery, which Linux runs through `bbr_main` too, deducts its losses and grows cwnd by
//!   the segment it SACKed towards the target, without a rate sample;
//! * rate samples are judged against the connection's minimum RTT over 300 s (Linux
//!   `tcp_min_rtt`, from every ACK's RTT before the sample; [`BbrCc::tcp_min_rtt`]), as
//!   `tcp_rate_gen`; before 2026-11-29 (late) against BBR's 10-s min_rtt, which an expired filter
//!   may replace by a queue-inflated sample (PROBE_RTT then never ended on a 200 ms path);
//!   `FLAG_ACK_MAYBE_DELAYED` is not modelled; the cumulative ACK's RTT is the send log's;
//! * `bbr_packets_in_net_at_edt` takes the earliest departure time as now (the CC does not see
//!   the endpoint's pacing clock); the 5/4 phase still adds the TSO goal as Linux;
//! * a duplicate ACK that newly SACKs data runs `bbr_main` on that ACK, in and out of recovery
//!   ([`CongestionControl::on_sack_ack`]: a rate sample from the segment it SACKed, the model,
//!   pacing and cwnd with what it SACKed), as Linux's `tcp_ack` runs `cong_control` on every
//!   ACK; its RTT reaches the min-RTT filter as Linux's `rs->rtt_us` (the highest segment it
//!   newly SACKed that was never sent twice, `last_sackt`; since 2026-11-29 late, branch
//!   `bbr8`), and a SACK-only ACK the endpoint does not count as a duplicate (a window change) reaches no cwnd
//!   rule. Before 2026-11-29 (evening) no SACK-only ACK outside recovery reached BBR: what they
//!   SACKed counted at the next cumulative ACK, all at once — 21 segments after a 100 ms hole
//!   in the 4-flow 10 Mbit/s, 50 ms validate-linux case, read by the ACK-aggregation filter as
//!   21 segments of aggregation, which raised that flow's cwnd target by 21 for 10 rounds;
//! * no idle-restart handling (`CA_EVENT_TX_START`); the endpoint's slow start after idle is off
//!   for BBR, as Linux skips it for CCs with `cong_control`;
//! * at establishment (`bbr_init`, [`CongestionControl::on_established`]) the min-RTT filter
//!   starts from the handshake's RTT (Linux `tcp_min_rtt`, which holds the SYN's sample),
//!   stamped then, and the pacing rate is 2.89 · IW / that RTT (`bbr_init_pacing_rate_from_rtt`);
//!   without a handshake sample (a retransmitted SYN) no pacing rate is set until the first
//!   ACK's RTT (Linux paces at 2.89 · IW / 1 ms); the endpoint sends the first 10 segments
//!   unpaced in either case. Before 2026-11-29 (late) the filter started from the first data
//!   ACK: a flow whose initial window queued behind three others' (the 4-flow 10 Mbit/s, 50 ms
//!   validate-linux case) took 60–86 ms as its minimum and sized STARTUP's cwnd on it;
//! * loss recovery is the variant's recovery module (RACK-TLP for `bbr`; with RFC 6675 no
//!   losses are reported, so nothing comes off cwnd); BBR's ssthresh is the
//!   current cwnd (no multiplicative decrease); BBR keeps updating its model on the ACKs inside
//!   recovery ([`CongestionControl::on_ack_in_recovery`]) and conserves packets from the
//!   recovery's pipe ([`CongestionControl::on_recovery_pipe`]): cwnd = pipe + delivered at
//!   entry, then max(cwnd, pipe + delivered) for the first round, a duplicate ACK counting as one
//!   segment delivered.

mod conservation;
pub mod filters;
pub mod lt_bw;
pub mod rate;
pub mod v3;
#[cfg(test)]
mod tests;

use super::{AckSample, CcWindow, CongestionControl, LossEvent, SenderView};
use crate::trace::CamTrace;
use crate::{Nanos, MS, SEC};
use conservation::{forward_rate_events, Conservation};
use filters::{AckAggregation, MinRttFilter, WindowedMax};
use lt_bw::{LtAction, LtBw, LtInput};
use rate::{DeliveryRate, RateSample};
pub use v3::{Bbr3Cc, Bbr3Params};

/// Fixed-point unit of the gains (Linux `BBR_UNIT` = 1 << 8).
pub const UNIT: u64 = 256;
/// 2/ln 2 (Linux `bbr_high_gain`).
pub const HIGH_GAIN: u64 = 2885 * UNIT / 1000 + 1;
/// ln 2 / 2 (Linux `bbr_drain_gain`).
pub const DRAIN_GAIN: u64 = 1000 * UNIT / 2885;
/// PROBE_BW's cwnd gain.
pub const CWND_GAIN: u64 = 2 * UNIT;
/// PROBE_BW's pacing-gain cycle.
pub const PACING_GAIN: [u64; 8] = [UNIT * 5 / 4, UNIT * 3 / 4, UNIT, UNIT, UNIT, UNIT, UNIT, UNIT];
/// Rounds in the bandwidth filter window (Linux `bbr_bw_rtts` = CYCLE_LEN + 2).
pub const BW_WINDOW_ROUNDS: u64 = 10;
/// Minimum cwnd, and PROBE_RTT's cwnd, in packets.
pub const MIN_CWND_PKTS: u32 = 4;
/// Bandwidth growth that counts as "still growing" in STARTUP (×1.25), and the rounds without it.
const FULL_BW_THRESH: u64 = UNIT * 5 / 4;
const FULL_BW_COUNT: u32 = 3;
/// Linux `sysctl_tcp_min_rtt_wlen` (300 s): the window of the connection's minimum RTT.
const TCP_MIN_RTT_WLEN: Nanos = 300 * SEC;
/// Linux `bbr_min_tso_rate` (1.2 Mbit/s) in bytes/s.
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// Linux `GSO_MAX_SIZE − 1 − MAX_TCP_HEADER` (x86-64).
const TSO_MAX_BYTES: u64 = 65536 - 1 - 320;

/// BBR's parameters (registry `params`): the filter windows and PROBE_RTT's length as Linux's
/// module constants, and the ACK-aggregation allowance switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BbrParams {
    /// Min-RTT filter window, ms (Linux 10 s).
    pub min_rtt_win_ms: u64,
    /// Time spent at 4 packets in PROBE_RTT, ms (Linux 200 ms).
    pub probe_rtt_ms: u64,
    /// Add the ACK-aggregation allowance to the cwnd target (Linux `bbr_extra_acked_gain` = 1).
    pub ack_aggregation: bool,
    /// Keep the long-term (policer) bandwidth estimate, [`lt_bw`] (Linux: always).
    pub lt_bw: bool,
}

impl BbrParams {
    pub const DEFAULT: BbrParams = BbrParams { min_rtt_win_ms: 10_000, probe_rtt_ms: 200, ack_aggregation: true, lt_bw: true };
    pub const NAMES: &'static [&'static str] = &["min_rtt_win_ms", "probe_rtt_ms", "ack_aggregation", "lt_bw"];

    pub fn set(&mut self, variant: &str, key: &str, value: f64) -> Result<(), String> {
        let whole = |v: f64| -> Result<u64, String> {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
                Ok(v as u64)
            } else {
                Err(format!("variant {variant:?} parameter {key:?} must be a whole number ≥ 0, got {v}"))
            }
        };
        match key {
            "min_rtt_win_ms" => self.min_rtt_win_ms = whole(value)?,
            "probe_rtt_ms" => self.probe_rtt_ms = whole(value)?,
            "ack_aggregation" => match whole(value)? {
                0 => self.ack_aggregation = false,
                1 => self.ack_aggregation = true,
                _ => return Err(format!("variant {variant:?} parameter \"ack_aggregation\" is 0 or 1, got {value}")),
            },
            "lt_bw" => match whole(value)? {
                0 => self.lt_bw = false,
                1 => self.lt_bw = true,
                _ => return Err(format!("variant {variant:?} parameter \"lt_bw\" is 0 or 1, got {value}")),
            },
            _ => return Err(format!("variant {variant:?} has no parameter {key:?}; it takes {}", Self::NAMES.join(", "))),
        }
        Ok(())
    }

    pub fn check(&self) -> Result<(), String> {
        if self.min_rtt_win_ms == 0 {
            return Err("bbr: min_rtt_win_ms must be > 0".into());
        }
        Ok(())
    }

    /// The controller; `seed` picks the random starting phase of each PROBE_BW entry.
    pub fn build(&self, seed: u64) -> Box<dyn CongestionControl> {
        Box::new(BbrCc::new(*self, seed))
    }
}

impl Default for BbrParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// BBR's state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}


#[derive(Clone, Debug)]
pub struct BbrCc {
    p: BbrParams,
    rng: u64,
    pub rate: DeliveryRate,
    bw: WindowedMax,
    pub min_rtt: MinRttFilter,
    pub mode: Mode,
    /// Packet-timed round trips so far.
    pub rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    /// Loss state, saved cwnd and the first recovery round's packet conservation.
    cons: Conservation,
    /// A loss (recovery entry or timeout) since the current gain phase began.
    loss_in_phase: bool,
    probe_rtt_done: Option<Nanos>,
    probe_rtt_round_done: bool,
    pub full_bw_reached: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    pub cycle_idx: usize,
    cycle_stamp: Nanos,
    pub pacing_gain: u64,
    pub cwnd_gain: u64,
    pacing_rate: Option<u64>,
    has_seen_rtt: bool,
    aggregation: AckAggregation,
    /// Bytes loss detection marked lost on the ACK being processed (Linux `rs->losses`).
    pending_lost: u64,
    /// Bytes marked lost so far (Linux `tp->lost`), and since the last rate sample.
    lost_total: u64,
    lost_since_sample: u64,
    /// The long-term (policer) bandwidth estimate.
    pub lt: LtBw,
    /// The ACK being processed in recovery already set cwnd (`on_ack_in_recovery`); a recovery
    /// pipe report without it is a duplicate (SACK-only) ACK.
    cwnd_set_this_ack: bool,
    /// `rate.delivered` when the previous ACK was done with, and what the current ACK newly
    /// delivered (Linux `rs->acked_sacked`: SACKed by it, or cumulatively acknowledged and not
    /// SACKed before).
    delivered_mark: u64,
    acked_sacked: u64,
    /// The connection's windowed minimum RTT (Linux `tp->rtt_min`, `tcp_min_rtt`), stored as
    /// `u64::MAX − rtt` in a windowed max: the rate estimator's floor on sample intervals.
    tcp_min_rtt: WindowedMax,
    /// Every mode entered, with its time (tests, traces; the first [`LOG_CAP`] entries).
    pub transitions: Vec<(Nanos, Mode)>,
    /// For each PROBE_RTT entered: when the expired minimum had last been taken (tests).
    pub probe_rtt_min_stamps: Vec<Nanos>,
    /// Every PROBE_BW gain phase begun, with its time and index (the first [`LOG_CAP`]).
    pub phases: Vec<(Nanos, usize)>,
}

/// Entries kept in the transition and phase logs (bounded memory on long runs).
pub const LOG_CAP: usize = 4096;

impl BbrCc {
    pub fn new(p: BbrParams, seed: u64) -> Self {
        BbrCc {
            p,
            rng: seed ^ 0x6262_725f_7631_u64,
            rate: DeliveryRate::default(),
            bw: WindowedMax::default(),
            min_rtt: MinRttFilter::new(p.min_rtt_win_ms * MS, 0),
            mode: Mode::Startup,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cons: Conservation::default(),
            loss_in_phase: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            pacing_rate: None,
            has_seen_rtt: false,
            aggregation: AckAggregation::default(),
            pending_lost: 0,
            lost_total: 0,
            lost_since_sample: 0,
            lt: LtBw::default(),
            cwnd_set_this_ack: false,
            delivered_mark: 0,
            acked_sacked: 0,
            tcp_min_rtt: WindowedMax::default(),
            transitions: vec![(0, Mode::Startup)],
            phases: Vec::new(),
            probe_rtt_min_stamps: Vec::new(),
        }
    }

    /// The bandwidth estimate, bytes/s (`bbr_bw`): the long-term rate while a policer is
    /// believed in, else the windowed max.
    pub fn bw(&self) -> u64 {
        if self.lt.use_bw {
            self.lt.lt_bw
        } else {
            self.bw.get()
        }
    }

    /// The connection's minimum RTT over the last 300 s (Linux `tcp_min_rtt`, kept by
    /// `tcp_update_rtt_min` from every ACK's RTT), None before the first sample.
    pub fn tcp_min_rtt(&self) -> Option<Nanos> {
        let v = self.tcp_min_rtt.get();
        (v != 0).then(|| u64::MAX - v)
    }

    /// The windowed max of the delivery-rate samples, bytes/s (`bbr_max_bw`).
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    fn lt_input(&self, losses: u64, app_limited: bool) -> LtInput {
        LtInput {
            losses,
            app_limited,
            round_start: self.round_start,
            in_probe_bw: self.mode == Mode::ProbeBw,
            delivered: self.rate.delivered,
            lost: self.lost_total,
            delivered_time: self.rate.delivered_time,
        }
    }

    /// `bbr_lt_bw_sampling` and what it asks for.
    fn lt_sample(&mut self, now: Nanos, i: LtInput) {
        if self.p.lt_bw && self.lt.sample(&i) == LtAction::Expired {
            self.reset_probe_bw_mode(now);
        }
    }

    /// The pacing rate now, bytes/s.
    pub fn pacing_rate_now(&self) -> Option<u64> {
        self.pacing_rate
    }

    fn enter(&mut self, now: Nanos, mode: Mode) {
        self.mode = mode;
        if self.transitions.len() < LOG_CAP {
            self.transitions.push((now, mode));
        }
    }

    /// SplitMix64 step: the random PROBE_BW starting phase, reproducible from the flow's seed.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// bw · gain · 99 % in bytes/s (`bbr_bw_to_pacing_rate`).
    fn rate_for(bw: u64, gain: u64) -> u64 {
        (bw as u128 * gain as u128 * 99 / (UNIT as u128 * 100)) as u64
    }

    /// Linux `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate, 1–127 segments.
    fn tso_segs_goal(&self, mss: u32) -> u64 {
        let rate = self.pacing_rate.unwrap_or(0);
        let min_segs = if rate < MIN_TSO_RATE { 1 } else { 2 };
        let bytes = (rate >> 10).min(TSO_MAX_BYTES);
        (bytes / mss.max(1) as u64).max(min_segs).min(0x7F)
    }

    /// BDP · gain in packets, rounded up (`bbr_bdp`); 10 packets before any RTT sample.
    fn bdp_pkts(&self, bw: u64, gain: u64, mss: u32) -> u64 {
        let Some(min_rtt) = self.min_rtt.min_rtt else { return 10 };
        let bytes_x_unit = bw as u128 * min_rtt as u128 * gain as u128 / SEC as u128;
        let denom = UNIT as u128 * mss.max(1) as u128;
        bytes_x_unit.div_ceil(denom) as u64
    }

    /// `bbr_quantization_budget`, packets.
    fn quantization_budget(&self, pkts: u64, mss: u32) -> u64 {
        let mut c = pkts + 3 * self.tso_segs_goal(mss);
        c = (c + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            c += 2;
        }
        c
    }

    /// `bbr_inflight`, bytes.
    fn inflight_target(&self, bw: u64, gain: u64, mss: u32) -> u64 {
        self.quantization_budget(self.bdp_pkts(bw, gain, mss), mss) * mss as u64
    }

    fn save_cwnd(&mut self, cwnd: u32) {
        self.cons.save_cwnd(cwnd, self.mode == Mode::ProbeRtt);
    }

    /// One ACK that advanced snd_una (`bbr_main`).
    fn on_ack_main(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>) {
        let now = s.now;
        self.cons.on_ack(s.snd_una);
        let cum_acked = s.bytes_acked as u64;
        // `rs->rtt_us` (Linux `tcp_clean_rtx_queue`, `tcp_ack_update_rtt`): the RTT of the last
        // segment this ACK newly SACKed that was never retransmitted, else the cumulative ACK's.
        // It reaches the connection's minimum (`tcp_update_rtt_min`) before the rate sample is
        // judged against that minimum (`tcp_rate_gen`), then BBR's min-RTT filter.
        let rtt = self.rate.take_sack_rtt(now).or(s.fine_rtt).or(s.rtt);
        if let Some(r) = rtt {
            self.tcp_min_rtt.update(TCP_MIN_RTT_WLEN, now, u64::MAX - r.max(1));
        }
        let rs = self.rate.on_ack(now, s.snd_una, cum_acked, self.tcp_min_rtt());
        // Linux's cwnd and aggregation arithmetic take `rs->acked_sacked` (`tcp_ack`:
        // `tp->delivered` before and after the ACK), not the cumulative advance: data SACKed
        // earlier and now covered by the cumulative ACK was counted when it was SACKed.
        let acked = self.take_acked_sacked();
        let prior_in_flight = rs.map_or(self.rate.reported_prior().unwrap_or(self.rate.in_flight() + cum_acked), |r| r.prior_in_flight);
        self.update_bw(now, rs);
        self.update_ack_aggregation(now, rs, acked, w.cwnd, w.mss);
        self.update_cycle_phase(now, prior_in_flight, w.mss);
        self.check_full_bw_reached(rs);
        self.check_drain(now, w.mss);
        // `rs->rtt_us` (Linux `tcp_clean_rtx_queue`, `tcp_ack_update_rtt`): the RTT of the last
        // segment this ACK newly SACKed that was never retransmitted, else the cumulative ACK's.
        self.update_min_rtt(now, rtt, w);
        self.update_gains();
        self.set_pacing_rate(view, w);
        self.set_cwnd(w, acked);
    }

    /// Bytes newly delivered since the previous ACK was done with (SACKed on duplicate ACKs
    /// that reached no cwnd rule count here too), and mark them taken.
    fn take_acked_sacked(&mut self) -> u64 {
        self.acked_sacked = self.rate.delivered.saturating_sub(self.delivered_mark);
        self.delivered_mark = self.rate.delivered;
        self.acked_sacked
    }

    fn update_bw(&mut self, now: Nanos, rs: Option<RateSample>) {
        self.round_start = false;
        let Some(rs) = rs else { return };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.rate.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.cons.on_round_start();
        }
        let losses = std::mem::take(&mut self.lost_since_sample);
        self.lt_sample(now, self.lt_input(losses, rs.app_limited));
        let bw = rs.rate();
        if !rs.app_limited || bw >= self.max_bw() {
            self.bw.update(BW_WINDOW_ROUNDS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`, in bytes.
    fn update_ack_aggregation(&mut self, now: Nanos, rs: Option<RateSample>, acked: u64, cwnd: u32, mss: u32) {
        if !self.p.ack_aggregation || acked == 0 || rs.is_none() {
            return;
        }
        let bw = self.bw();
        self.aggregation.update(now, self.round_start, bw, acked, cwnd, mss);
    }

    /// `bbr_ack_aggregation_cwnd`, bytes.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.p.ack_aggregation || !self.full_bw_reached {
            return 0;
        }
        self.aggregation.cwnd(self.bw())
    }

    fn update_cycle_phase(&mut self, now: Nanos, prior_in_flight: u64, mss: u32) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = self.min_rtt.min_rtt.is_some_and(|m| now.saturating_sub(self.cycle_stamp) > m);
        let gain = self.pacing_gain;
        let next = if gain == UNIT {
            full_length
        } else {
            let mut inflight = prior_in_flight;
            if gain > UNIT {
                inflight += self.tso_segs_goal(mss) * mss as u64;
            }
            let bw = self.max_bw();
            if gain > UNIT {
                full_length && (self.loss_in_phase || inflight >= self.inflight_target(bw, gain, mss))
            } else {
                full_length || inflight <= self.inflight_target(bw, UNIT, mss)
            }
        };
        if next {
            self.advance_cycle_phase(now);
        }
    }

    fn advance_cycle_phase(&mut self, now: Nanos) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN.len();
        self.cycle_stamp = now;
        self.loss_in_phase = false;
        if self.phases.len() < LOG_CAP {
            self.phases.push((now, self.cycle_idx));
        }
    }

    fn check_full_bw_reached(&mut self, rs: Option<RateSample>) {
        if self.full_bw_reached || !self.round_start || rs.is_none_or(|r| r.app_limited) {
            return;
        }
        let thresh = (self.full_bw as u128 * FULL_BW_THRESH as u128 / UNIT as u128) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_COUNT;
    }

    fn check_drain(&mut self, now: Nanos, mss: u32) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.enter(now, Mode::Drain);
        }
        if self.mode == Mode::Drain && self.rate.pipe() <= self.inflight_target(self.max_bw(), UNIT, mss) {
            self.reset_probe_bw_mode(now);
        }
    }

    fn reset_probe_bw_mode(&mut self, now: Nanos) {
        self.enter(now, Mode::ProbeBw);
        // Linux: cycle_idx = CYCLE_LEN − 1 − random(0..7), then advance: never the 3/4 phase.
        self.cycle_idx = 7 - (self.next_random() % 7) as usize;
        self.advance_cycle_phase(now);
    }

    fn reset_mode(&mut self, now: Nanos) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(now);
        } else {
            self.enter(now, Mode::Startup);
        }
    }

    fn check_probe_rtt_done(&mut self, now: Nanos, w: &mut CcWindow) {
        if !self.probe_rtt_done.is_some_and(|d| now > d) {
            return;
        }
        self.min_rtt.stamp = now; // wait a while until the next PROBE_RTT
        w.cwnd = w.cwnd.max(self.cons.prior_cwnd);
        self.reset_mode(now);
    }

    fn update_min_rtt(&mut self, now: Nanos, rtt: Option<Nanos>, w: &mut CcWindow) {
        let expired = self.min_rtt.expired(now);
        let stamp_before = self.min_rtt.stamp;
        if let Some(r) = rtt {
            self.min_rtt.update(now, r);
        }
        if self.p.probe_rtt_ms > 0 && expired && self.mode != Mode::ProbeRtt {
            self.enter(now, Mode::ProbeRtt);
            if self.probe_rtt_min_stamps.len() < LOG_CAP {
                self.probe_rtt_min_stamps.push(stamp_before);
            }
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore the low-rate samples of this mode.
            self.rate.mark_app_limited();
            let four = MIN_CWND_PKTS as u64 * w.mss as u64;
            if self.probe_rtt_done.is_none() && self.rate.pipe() <= four {
                self.probe_rtt_done = Some(now + self.p.probe_rtt_ms * MS);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.rate.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now, w);
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (if self.lt.use_bw { UNIT } else { PACING_GAIN[self.cycle_idx] }, CWND_GAIN),
            Mode::ProbeRtt => (UNIT, UNIT),
        };
    }

    fn set_pacing_rate(&mut self, view: &SenderView<'_>, w: &CcWindow) {
        if !self.has_seen_rtt {
            if let Some(srtt) = view.fine_srtt.filter(|r| *r > 0) {
                // `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / srtt.
                self.has_seen_rtt = true;
                let bw = (w.cwnd as u128 * SEC as u128 / srtt as u128) as u64;
                self.pacing_rate = Some(Self::rate_for(bw, HIGH_GAIN));
            }
        }
        let rate = Self::rate_for(self.bw(), self.pacing_gain);
        if self.full_bw_reached || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`'s first step: an ACK for P packets releases at
    /// most 2·P, so the packets it marked lost come off cwnd first (never below one packet).
    fn deduct_losses(&mut self, w: &mut CcWindow) {
        let lost = std::mem::take(&mut self.pending_lost);
        if lost > 0 {
            w.cwnd = (w.cwnd as u64).saturating_sub(lost).max(w.mss as u64) as u32;
        }
    }

    /// cwnd towards the target, `acked` bytes at a time (`bbr_set_cwnd` after the recovery step).
    fn grow_cwnd(&mut self, w: &mut CcWindow, acked: u64) {
        let mss = w.mss as u64;
        let bw = self.bw();
        let target_pkts = self.bdp_pkts(bw, self.cwnd_gain, w.mss) + self.ack_aggregation_cwnd().div_ceil(mss.max(1));
        let target = self.quantization_budget(target_pkts, w.mss) * mss;
        let mut cwnd = w.cwnd as u64;
        if self.full_bw_reached {
            cwnd = (cwnd + acked).min(target);
        } else if cwnd < target || self.rate.delivered < 10 * mss {
            cwnd += acked;
        }
        w.cwnd = cwnd.max(MIN_CWND_PKTS as u64 * mss).min(u32::MAX as u64) as u32;
    }

    fn set_cwnd(&mut self, w: &mut CcWindow, acked: u64) {
        if acked > 0 {
            self.deduct_losses(w);
            if !self.cons.recover_or_restore(w) {
                self.grow_cwnd(w, acked);
            }
        }
        self.pending_lost = 0;
        w.cwnd = w.cwnd.min(w.max_cwnd);
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(MIN_CWND_PKTS * w.mss);
        }
    }
}

impl CongestionControl for BbrCc {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        self.on_ack_main(w, s, view);
    }

    fn on_ack_in_recovery(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>) {
        self.on_ack_main(w, s, view);
        self.cwnd_set_this_ack = true;
    }

    /// A duplicate ACK that newly SACKed data is a `bbr_main` of its own (Linux runs
    /// `cong_control` on every ACK): a rate sample from the most recently sent segment it
    /// SACKed, the model, pacing and cwnd with what it SACKed. Nothing newly SACKed: no valid
    /// sample and `acked_sacked` = 0, so Linux changes nothing either.
    fn on_sack_ack(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>) {
        if self.rate.delivered == self.delivered_mark {
            return;
        }
        self.on_ack_main(w, s, view);
        self.cwnd_set_this_ack = true;
    }

    /// `bbr_ssthresh`: save cwnd, no multiplicative decrease.
    fn ssthresh(&mut self, w: &CcWindow, _flight: u32, _snd_wnd: u32, _ev: LossEvent) -> u32 {
        self.save_cwnd(w.cwnd);
        self.loss_in_phase = true;
        w.cwnd
    }

    fn on_send(&mut self, now: Nanos, seq: u64, len: u32, retransmit: bool) {
        self.rate.on_send(now, seq, len);
        if retransmit {
            self.rate.mark_retransmitted(seq, seq + len as u64);
        }
    }

    fn on_marked_lost(&mut self, bytes: u64) {
        self.pending_lost += bytes;
        self.lost_total += bytes;
        self.lost_since_sample += bytes;
    }

    /// After every ACK of a recovery. A duplicate (SACK-only) ACK is a `bbr_main` of its own
    /// in Linux, without a rate sample: losses off cwnd, then packet conservation in the first
    /// round, else growth towards the target by the segment it SACKed.
    fn on_recovery_pipe(&mut self, w: &mut CcWindow, pipe: u64, delivered: u64) {
        let duplicate = !std::mem::take(&mut self.cwnd_set_this_ack);
        // An ACK that advanced snd_una conserves with what it newly delivered (its
        // `rs->acked_sacked`, taken by `on_ack_main`), not the cumulative advance the endpoint
        // reports; a duplicate ACK with the segment it SACKed, whose delivery the next ACK must
        // not count again.
        let delivered = if duplicate {
            self.delivered_mark = self.rate.delivered;
            delivered
        } else {
            self.acked_sacked
        };
        if duplicate && delivered > 0 {
            self.deduct_losses(w);
        }
        self.pending_lost = 0;
        if self.cons.on_recovery_pipe(w, pipe, delivered) {
            self.next_rtt_delivered = self.rate.delivered;
        } else if duplicate && delivered > 0 && !self.cons.conserving() {
            self.grow_cwnd(w, delivered);
            w.cwnd = w.cwnd.min(w.max_cwnd);
        }
    }

    forward_rate_events!();

    fn on_recovery(&mut self, _w: &mut CcWindow, entered: bool) {
        self.cons.on_recovery(entered);
        self.cwnd_set_this_ack = false;
    }

    /// `bbr_set_state(TCP_CA_Loss)`: the timeout ends a round and restarts full-pipe detection.
    fn on_timeout(&mut self, w: &mut CcWindow) {
        self.cons.on_timeout(self.rate.snd_max());
        self.full_bw = 0;
        self.round_start = true;
        self.loss_in_phase = true;
        // `bbr_set_state(TCP_CA_Loss)` samples the long-term rate with `rs.losses = 1`. The
        // timeout has no clock of its own here: the last delivery's time stands for now.
        let _ = w;
        let now = self.rate.delivered_time;
        self.lt_sample(now, self.lt_input(1, false));
    }

    /// `bbr_init`: `min_rtt_us = tcp_min_rtt(tp)` (the handshake's RTT) stamped now, and
    /// `bbr_init_pacing_rate_from_rtt` (high_gain · cwnd / srtt, `has_seen_rtt`).
    fn on_established(&mut self, now: Nanos, w: &CcWindow, handshake_rtt: Option<Nanos>) {
        self.min_rtt.stamp = now;
        let Some(rtt) = handshake_rtt.filter(|r| *r > 0) else { return };
        self.min_rtt.min_rtt = Some(rtt);
        self.has_seen_rtt = true;
        let bw = (w.cwnd as u128 * SEC as u128 / rtt as u128) as u64;
        self.pacing_rate = Some(Self::rate_for(bw, HIGH_GAIN));
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.pacing_rate
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

