//! CUBIC (RFC 9438, Xu, Ha, Rhee, Goel, Eggert 2023) as Linux 6.x `net/ipv4/tcp_cubic.c` does
//! it, with HyStart (Ha & Rhee 2011, the same file) and, as an option, HyStart++ (RFC 9406).
//!
//! # Rules and their sources
//!
//! * The window is counted in packets, as Linux (`snd_cwnd`, `snd_cwnd_cnt`); the endpoint's
//!   byte window is `packets × MSS`. Slow start while `cwnd < ssthresh` (`tcp_in_slow_start`):
//!   `cwnd += acked` up to ssthresh, the rest of the ACK goes to congestion avoidance
//!   (`tcp_slow_start`). Congestion avoidance: `cwnd += 1` per `cnt` packets acknowledged
//!   (`tcp_cong_avoid_ai`, credits in `snd_cwnd_cnt`).
//! * `cnt` (`bictcp_update`): at the start of an epoch (first ACK after a reduction) K and the
//!   origin are set — `K = cbrt((W_max − cwnd) / C)` (RFC 9438 §4.2 eq. 2) in units of 2⁻¹⁰ s,
//!   origin `W_max`, or `K = 0`, origin `cwnd` when `cwnd ≥ W_max`. The target is
//!   `W(t + RTT_min) = C·(t + RTT_min − K)³ + W_max` (t since the epoch; `C = bic_scale·10/1024`,
//!   0.4 for `bic_scale` 41) and `cnt = cwnd / (target − cwnd)` (or `100·cwnd` at or above the
//!   target); `cnt ≤ 20` before the first loss (`last_max_cwnd == 0`). `cnt` is recomputed at
//!   most once per jiffy and, with an unchanged cwnd, at most every HZ/32.
//! * TCP-friendly region (RFC 9438 §4.3; Linux's `tcp_friendliness`): a Reno estimate
//!   `tcp_cwnd` grows by one per `cwnd·beta_scale/8` packets acknowledged, `beta_scale =
//!   8·(1024 + β)/3/(1024 − β)` (15 for β = 717, i.e. the AIMD `α = 3(1−β)/(1+β)` of RFC 9438
//!   §4.3); if it exceeds cwnd, `cnt ≤ cwnd / (tcp_cwnd − cwnd)`. Finally `cnt ≥ 2` (at most
//!   1.5× per RTT).
//! * Multiplicative decrease (`cubictcp_recalc_ssthresh`): the epoch ends; fast convergence
//!   (RFC 9438 §4.7): if `cwnd < W_max`, `W_max = cwnd·(1024 + β)/2048`, else `W_max = cwnd`;
//!   `ssthresh = max(cwnd·β/1024, 2)` packets, `β = 717` (0.7, RFC 9438 §4.6).
//! * A retransmission timeout (`cubictcp_state(TCP_CA_Loss)`): everything is reset (W_max
//!   included, as Linux's `bictcp_reset` does after `ssthresh` ran) and HyStart restarts.
//! * Idle (`cubictcp_cwnd_event(CA_EVENT_TX_START)`): when data leaves with nothing in flight,
//!   the epoch start moves forward by the time since the last send (never past now), so the
//!   curve does not jump after an application pause.
//! * Congestion avoidance only when cwnd-limited (`tcp_is_cwnd_limited`, see reading 3).
//! * HyStart (`hystart_update`, `cubictcp_acked`), in slow start and once `cwnd ≥
//!   hystart_low_window` (16): rounds begin when snd_una passes the previous round's snd_nxt.
//!   ACK train: ACKs no more than 2 ms apart extend the train; once it spans more than
//!   `(delay_min + ack_delay)/2` since the round began, leave slow start (`ssthresh = cwnd`).
//!   Delay increase: after 8 samples in a round, if the round's minimum RTT exceeds `delay_min +
//!   clamp(delay_min/8, 4 ms, 16 ms)`, leave slow start. `delay_min` is the smallest RTT seen;
//!   samples within 1 s of an epoch start (just after recovery) are ignored.
//! * HyStart++ (RFC 9406 §4.2, option `hystart_plus_plus`, replacing HyStart): per round the
//!   minimum RTT of ≥ 8 samples; when it rises by `clamp(lastRoundMinRTT/8, 4 ms, 16 ms)` over
//!   the last round's, Conservative Slow Start: growth divided by 4 (`CSS_GROWTH_DIVISOR`);
//!   back to slow start if a round's minimum falls below the CSS baseline; after 5 CSS rounds
//!   ssthresh = cwnd. Slow-start growth is limited to `L = 8` packets per ACK (not paced).
//!
//! # Deliberate deviations and readings
//!
//! 1. Time: Linux counts `tcp_jiffies32` at HZ = 1000 (1 ms); we use `now / 1 ms` as jiffies
//!    and microseconds of the simulator clock for HyStart, so the arithmetic is Linux's at
//!    HZ = 1000.
//! 2. `cubic_root`: Linux uses a 64-entry table plus one Newton step (≤ 0.2 % error); we take
//!    the exact integer cube root.
//! 3. cwnd-limited: Linux keeps `is_cwnd_limited`/`max_packets_out` over a window; we test the
//!    flight before this ACK: in slow start `cwnd < 2·flight`, in congestion avoidance
//!    `flight + 1 MSS > cwnd`.
//! 4. `hystart_ack_delay` (`min(1 ms, 4·GSO_max/pacing_rate)`) uses 64 KB for the GSO size
//!    and Linux's slow-start pacing rate `2·cwnd·MSS/srtt` from the endpoint's fine srtt;
//!    the sender is not paced, so the ACK-train threshold is halved as Linux's
//!    `SK_PACING_NONE`.
//! 5. The RTT sample is the send log's RTT of the newest segment this ACK covers that was
//!    never retransmitted (Linux's `ca_rtt_us` of the last acknowledged packet); SACKed
//!    segments do not give samples.
//! 6. No undo (`tcp_reno_undo_cwnd`, spurious-retransmission detection): not modelled.

use crate::cc::{AckSample, CcWindow, CongestionControl, LossEvent, SenderView};
use crate::trace::CamTrace;
use crate::{Nanos, MS};

/// Linux's `BICTCP_BETA_SCALE`.
pub const BETA_SCALE: u32 = 1024;
/// Linux's `BICTCP_HZ`: time in units of 2⁻¹⁰ s.
const BICTCP_HZ: u32 = 10;
/// Jiffies per second (HZ = 1000, deviation 1).
const HZ: u64 = 1000;
pub const HYSTART_ACK_TRAIN: u32 = 1;
pub const HYSTART_DELAY: u32 = 2;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN_US: u64 = 4000;
const HYSTART_DELAY_MAX_US: u64 = 16000;
/// Linux `sk_gso_max_size` default (GSO_LEGACY_MAX_SIZE).
const GSO_MAX_SIZE: u64 = 65536;
/// RFC 9406 §4.3 constants.
const CSS_GROWTH_DIVISOR: u32 = 4;
const CSS_ROUNDS: u32 = 5;
const HSPP_L: u32 = 8;

/// CUBIC's parameters (Linux's module parameters of `tcp_cubic.c`): the `params` of `cubic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubicParams {
    /// β in 1024ths (`beta`, 717 ≈ 0.7). `params.beta` is given as a fraction.
    pub beta: u32,
    /// C = bic_scale·10/1024 (`bic_scale`, 41 ≈ 0.4). `params.c` is given as C.
    pub bic_scale: u32,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    /// Linux HyStart (`hystart`).
    pub hystart: bool,
    /// `hystart_detect`: bit 1 ACK train, bit 2 delay increase.
    pub hystart_detect: u32,
    /// `hystart_low_window` (packets).
    pub hystart_low_window: u32,
    /// `hystart_ack_delta_us`.
    pub hystart_ack_delta_us: u32,
    /// RFC 9406 HyStart++ instead of HyStart.
    pub hystart_plus_plus: bool,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams::DEFAULT
    }
}

impl CubicParams {
    /// Linux 6.x defaults.
    pub const DEFAULT: CubicParams = CubicParams {
        beta: 717,
        bic_scale: 41,
        fast_convergence: true,
        tcp_friendliness: true,
        hystart: true,
        hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
        hystart_low_window: 16,
        hystart_ack_delta_us: 2000,
        hystart_plus_plus: false,
    };
    pub const NAMES: &'static [&'static str] =
        &["beta", "c", "fast_convergence", "tcp_friendliness", "hystart", "hystart_detect", "hystart_low_window", "hystart_ack_delta_us", "hystart_plus_plus"];

    /// Set one `params` key (`variant` names the flow's variant in errors).
    pub fn set(&mut self, variant: &str, key: &str, value: f64) -> Result<(), String> {
        let switch = |v: f64| -> Result<bool, String> {
            if v == 0.0 || v == 1.0 {
                Ok(v == 1.0)
            } else {
                Err(format!("{key} is a switch: 0 or 1, got {value}"))
            }
        };
        let whole = |v: f64, lo: f64, hi: f64| -> Result<u32, String> {
            if v.fract() == 0.0 && v >= lo && v <= hi {
                Ok(v as u32)
            } else {
                Err(format!("{key} must be a whole number from {lo} to {hi}, got {value}"))
            }
        };
        match key {
            "beta" if !(value > 0.0 && value < 1.0) => return Err(format!("beta must be in (0, 1), got {value}")),
            "beta" => self.beta = ((value * BETA_SCALE as f64).round() as u32).clamp(1, BETA_SCALE - 1),
            "c" if !(value.is_finite() && value > 0.0 && value <= 100.0) => return Err(format!("c must be in (0, 100], got {value}")),
            "c" => self.bic_scale = ((value * 1024.0 / 10.0).round() as u32).max(1),
            "fast_convergence" => self.fast_convergence = switch(value)?,
            "tcp_friendliness" => self.tcp_friendliness = switch(value)?,
            "hystart" => self.hystart = switch(value)?,
            "hystart_plus_plus" => self.hystart_plus_plus = switch(value)?,
            "hystart_detect" => self.hystart_detect = whole(value, 0.0, 3.0)?,
            "hystart_low_window" => self.hystart_low_window = whole(value, 2.0, 1e6)?,
            "hystart_ack_delta_us" => self.hystart_ack_delta_us = whole(value, 1.0, 1e6)?,
            _ => return Err(format!("variant {variant:?} has no parameter {key:?}; known: {}", Self::NAMES.join(", "))),
        }
        Ok(())
    }

    pub fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(CubicCc::new(*self))
    }

    /// C as a real number.
    pub fn c(&self) -> f64 {
        self.bic_scale as f64 * 10.0 / 1024.0
    }
}

/// Exact integer cube root (floor) of a 64-bit value (deviation 2).
pub fn cube_root(a: u64) -> u64 {
    if a == 0 {
        return 0;
    }
    let mut x = (a as f64).cbrt() as u64;
    while (x as u128).pow(3) > a as u128 {
        x -= 1;
    }
    while ((x + 1) as u128).pow(3) <= a as u128 {
        x += 1;
    }
    x
}

/// HyStart++ phase (RFC 9406 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HsppPhase {
    SlowStart,
    Css { baseline_us: u64, rounds: u32 },
}

#[derive(Clone, Debug)]
pub struct CubicCc {
    pub params: CubicParams,
    /// ACKs (packets) per +1 of cwnd.
    pub cnt: u32,
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    pub origin_point: u32,
    /// K in 2⁻¹⁰ s.
    pub k: u64,
    /// Smallest RTT seen, µs (0 = none).
    pub delay_min_us: u64,
    /// Jiffy the epoch began (None: no epoch).
    pub epoch_start: Option<u64>,
    ack_cnt: u32,
    /// Reno-emulation window (packets).
    pub tcp_cwnd: u32,
    /// HyStart found the exit point.
    pub found: bool,
    round_start_us: u64,
    end_seq: u64,
    last_ack_us: u64,
    curr_rtt_us: u64,
    sample_cnt: u32,
    // HyStart++ round state.
    last_round_min_us: Option<u64>,
    hspp: HsppPhase,
    css_credit: u32,
    /// Linux `snd_cwnd_cnt`.
    cwnd_cnt: u32,
    /// `w.cwnd` as last written (anything else was set by recovery or the timer).
    written: u32,
    mss: u32,
    /// Linux `lsndtime` and whether the flight was empty at the last ACK.
    last_send: Option<Nanos>,
    flight_empty: bool,
    /// How slow start ended, for tests and traces: `Some(true)` by HyStart(++).
    pub hystart_exit_at: Option<(Nanos, u32)>,
}

impl CubicCc {
    pub fn new(params: CubicParams) -> Self {
        CubicCc {
            params,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            round_start_us: 0,
            end_seq: 0,
            last_ack_us: 0,
            curr_rtt_us: u64::MAX,
            sample_cnt: 0,
            last_round_min_us: None,
            hspp: HsppPhase::SlowStart,
            css_credit: 0,
            cwnd_cnt: 0,
            written: 0,
            mss: 0,
            last_send: None,
            flight_empty: true,
            hystart_exit_at: None,
        }
    }

    fn cube_rtt_scale(&self) -> u64 {
        self.params.bic_scale as u64 * 10
    }
    fn beta_scale(&self) -> u32 {
        let b = self.params.beta;
        8 * (BETA_SCALE + b) / 3 / (BETA_SCALE - b)
    }
    fn cube_factor(&self) -> u64 {
        (1u64 << (10 + 3 * BICTCP_HZ)) / self.cube_rtt_scale()
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin_point = 0;
        self.k = 0;
        self.delay_min_us = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `bictcp_hystart_reset` (and the round start of HyStart++).
    fn hystart_reset(&mut self, now_us: u64, snd_nxt: u64) {
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = snd_nxt;
        if self.params.hystart_plus_plus && self.sample_cnt >= HYSTART_MIN_SAMPLES && self.curr_rtt_us != u64::MAX {
            self.last_round_min_us = Some(self.curr_rtt_us);
        }
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    /// The cubic target's time offset and K as RFC 9438 reals (tests): K in seconds.
    pub fn k_seconds(&self) -> f64 {
        self.k as f64 / 1024.0
    }

    /// `bictcp_update`: recompute `cnt` for a window of `cwnd` packets after `acked` packets.
    pub fn update(&mut self, now: Nanos, cwnd: u32, acked: u32) {
        let jiffies = now / (crate::SEC / HZ);
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && jiffies.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // The cubic function is evaluated at most once per jiffy; a reduction clears the epoch.
        if !(self.epoch_start.is_some() && jiffies == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jiffies;
            let epoch = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(jiffies);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0;
                        self.origin_point = cwnd;
                    } else {
                        self.k = cube_root(self.cube_factor() * (self.last_max_cwnd - cwnd) as u64);
                        self.origin_point = self.last_max_cwnd;
                    }
                    jiffies
                }
            };
            // t = (now − epoch + usecs_to_jiffies(delay_min)) in 2⁻¹⁰ s.
            let dmin_jiffies = self.delay_min_us.div_ceil(1_000_000 / HZ);
            let t = ((jiffies - epoch + dmin_jiffies) << BICTCP_HZ) / HZ;
            let offs = t.abs_diff(self.k) as u128;
            let delta = ((self.cube_rtt_scale() as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)).min(u32::MAX as u128) as u32;
            let target = if t < self.k { self.origin_point.saturating_sub(delta) } else { self.origin_point.saturating_add(delta) };
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100u32.saturating_mul(cwnd) };
            // Before the first loss, at least 5 % growth per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.params.tcp_friendliness {
            let delta = ((cwnd as u64 * self.beta_scale() as u64) >> 3).max(1) as u32;
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// `hystart_update` (Linux HyStart).
    fn hystart_update(&mut self, w: &mut CcWindow, cwnd: u32, now_us: u64, delay_us: u64, view: &SenderView<'_>) {
        if cwnd < self.params.hystart_low_window {
            return;
        }
        if self.params.hystart_detect & HYSTART_ACK_TRAIN != 0 && now_us.saturating_sub(self.last_ack_us) <= self.params.hystart_ack_delta_us as u64 {
            self.last_ack_us = now_us;
            // Not paced: half of delay_min plus the TSO allowance (reading 4).
            let threshold = (self.delay_min_us + self.ack_delay_us(cwnd, view)) >> 1;
            if now_us.saturating_sub(self.round_start_us) > threshold {
                self.exit_slow_start(w, cwnd, view.now);
            }
        }
        if self.params.hystart_detect & HYSTART_DELAY != 0 {
            self.curr_rtt_us = self.curr_rtt_us.min(delay_us);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else if self.curr_rtt_us > self.delay_min_us + (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US) {
                self.exit_slow_start(w, cwnd, view.now);
            }
        }
    }

    /// Linux `hystart_ack_delay`: `min(1 ms, 4·GSO/pacing rate)` with the slow-start pacing rate
    /// `2·cwnd·MSS/srtt` (reading 4); 0 before an RTT is known.
    fn ack_delay_us(&self, cwnd: u32, view: &SenderView<'_>) -> u64 {
        let Some(srtt) = view.fine_srtt.filter(|s| *s > 0) else { return 0 };
        let rate = 2.0 * cwnd as f64 * self.mss as f64 / (srtt as f64 / 1e9);
        if rate <= 0.0 {
            return 0;
        }
        ((GSO_MAX_SIZE * 4) as f64 * 1e6 / rate).min(1000.0) as u64
    }

    fn exit_slow_start(&mut self, w: &mut CcWindow, cwnd: u32, now: Nanos) {
        self.found = true;
        w.ssthresh = cwnd * w.mss;
        if self.hystart_exit_at.is_none() {
            self.hystart_exit_at = Some((now, cwnd));
        }
    }

    /// RFC 9406 §4.2 per ACK in slow start (before the window grows); returns the divisor of
    /// slow-start growth (1 in slow start, 4 in CSS).
    fn hystart_pp(&mut self, w: &mut CcWindow, cwnd: u32, delay_us: Option<u64>, now: Nanos) -> u32 {
        if let Some(d) = delay_us {
            self.curr_rtt_us = self.curr_rtt_us.min(d);
            self.sample_cnt += 1;
        }
        let enough = self.sample_cnt >= HYSTART_MIN_SAMPLES && self.curr_rtt_us != u64::MAX;
        match self.hspp {
            HsppPhase::SlowStart => {
                if let (true, Some(last)) = (enough, self.last_round_min_us) {
                    let thresh = (last / 8).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                    if self.curr_rtt_us >= last + thresh {
                        self.hspp = HsppPhase::Css { baseline_us: self.curr_rtt_us, rounds: 0 };
                    }
                }
            }
            HsppPhase::Css { baseline_us, rounds } => {
                if enough && self.curr_rtt_us < baseline_us {
                    self.hspp = HsppPhase::SlowStart;
                } else if rounds >= CSS_ROUNDS {
                    self.exit_slow_start(w, cwnd, now);
                    self.hspp = HsppPhase::SlowStart;
                }
            }
        }
        if matches!(self.hspp, HsppPhase::Css { .. }) {
            CSS_GROWTH_DIVISOR
        } else {
            1
        }
    }

    /// Adopt a window set outside (recovery, timeout, idle restart) or a new MSS.
    fn sync(&mut self, w: &CcWindow) {
        if self.mss != w.mss || w.cwnd != self.written {
            self.mss = w.mss;
            self.written = w.cwnd;
            self.cwnd_cnt = 0;
        }
    }

    fn write(&mut self, w: &mut CcWindow, pkts: u32) {
        let bytes = (pkts as u64 * w.mss as u64).min(w.max_cwnd as u64) as u32;
        w.cwnd = bytes.max(w.mss);
        self.written = w.cwnd;
    }

    /// `tcp_cong_avoid_ai`: +1 per `w` packets acknowledged.
    fn cong_avoid_ai(&mut self, cwnd: &mut u32, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            *cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            *cwnd += delta;
        }
    }
}

impl CongestionControl for CubicCc {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        self.sync(w);
        let mss = w.mss.max(1);
        let mut cwnd = (w.cwnd / mss).max(1);
        let ssthresh = w.ssthresh / mss;
        let now_us = s.now / 1000;
        let acked_pkts = s.bytes_acked.div_ceil(mss).max(1);
        self.flight_empty = s.flight == 0;
        let in_ss = cwnd < ssthresh;
        // `cubictcp_acked` (Linux calls it before cong_avoid).
        let delay_us = s.fine_rtt.map(|r| (r / 1000).max(1));
        let fresh_epoch = self.epoch_start.is_some_and(|e| (s.now / MS).saturating_sub(e) < HZ);
        let usable_delay = delay_us.filter(|_| !fresh_epoch);
        if let Some(d) = usable_delay {
            if self.delay_min_us == 0 || self.delay_min_us > d {
                self.delay_min_us = d;
            }
        }
        let mut ss_divisor = 1;
        if in_ss && !self.found {
            // A round ends when snd_una passes the snd_nxt recorded at its start.
            if s.snd_una > self.end_seq {
                self.hystart_reset(now_us, s.snd_nxt);
                if let HsppPhase::Css { baseline_us, rounds } = self.hspp {
                    self.hspp = HsppPhase::Css { baseline_us, rounds: rounds + 1 };
                }
            }
            if self.params.hystart_plus_plus {
                ss_divisor = self.hystart_pp(w, cwnd, usable_delay, s.now);
            } else if let (true, Some(d)) = (self.params.hystart, usable_delay) {
                self.hystart_update(w, cwnd, now_us, d, view);
            }
        }
        // `tcp_is_cwnd_limited` (reading 3), on the flight before this ACK.
        let flight_before = s.flight as u64 + s.bytes_acked as u64;
        let limited = if in_ss { (w.cwnd as u64) < 2 * flight_before } else { flight_before + mss as u64 > w.cwnd as u64 };
        if !limited {
            return;
        }
        let ssthresh = w.ssthresh / mss; // HyStart may just have set it
        let mut acked = acked_pkts;
        if cwnd < ssthresh {
            // `tcp_slow_start`, with RFC 9406's L and CSS divisor under HyStart++.
            let grow = if self.params.hystart_plus_plus {
                self.css_credit += acked.min(HSPP_L);
                let whole = self.css_credit / ss_divisor;
                self.css_credit -= whole * ss_divisor;
                whole
            } else {
                acked
            };
            let new = (cwnd + grow).min(ssthresh);
            acked = if new >= ssthresh { acked.saturating_sub(new - cwnd) } else { 0 };
            cwnd = new;
            if acked == 0 {
                self.write(w, cwnd);
                return;
            }
        }
        self.update(s.now, cwnd, acked);
        let cnt = self.cnt;
        self.cong_avoid_ai(&mut cwnd, cnt, acked);
        self.write(w, cwnd);
    }

    fn ssthresh(&mut self, w: &CcWindow, _flight: u32, _snd_wnd: u32, _ev: LossEvent) -> u32 {
        let mss = w.mss.max(1);
        let cwnd = (w.cwnd / mss).max(1);
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.params.fast_convergence {
            cwnd * (BETA_SCALE + self.params.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        ((cwnd * self.params.beta / BETA_SCALE).max(2)) * mss
    }

    fn on_timeout(&mut self, w: &mut CcWindow) {
        // `cubictcp_state(TCP_CA_Loss)`: full reset, HyStart again from the next round.
        self.reset();
        self.hspp = HsppPhase::SlowStart;
        self.last_round_min_us = None;
        self.end_seq = 0;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
        self.sync(w);
    }

    fn on_send(&mut self, now: Nanos, _seq: u64, len: u32, retransmit: bool) {
        if len == 0 {
            return;
        }
        // CA_EVENT_TX_START: data leaves with nothing in flight.
        if self.flight_empty && !retransmit {
            if let (Some(e), Some(last)) = (self.epoch_start, self.last_send) {
                let delta = now.saturating_sub(last) / (crate::SEC / HZ);
                self.epoch_start = Some((e + delta).min(now / (crate::SEC / HZ)));
            }
        }
        self.flight_empty = false;
        self.last_send = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_linux() {
        let c = CubicCc::new(CubicParams::DEFAULT);
        assert_eq!(c.beta_scale(), 15);
        assert_eq!(c.cube_rtt_scale(), 410);
        assert_eq!(c.cube_factor(), (1u64 << 40) / 410);
        assert!((CubicParams::DEFAULT.c() - 0.4).abs() < 0.001);
        for a in [0u64, 1, 7, 8, 26, 27, 28, 1 << 40, u64::MAX] {
            let r = cube_root(a) as u128;
            assert!(r * r * r <= a as u128 && (r + 1).pow(3) > a as u128, "{a}");
        }
    }

    #[test]
    fn params_parse_and_reject() {
        let mut p = CubicParams::DEFAULT;
        p.set("cubic", "beta", 0.5).unwrap();
        assert_eq!(p.beta, 512);
        p.set("cubic", "c", 0.4).unwrap();
        assert_eq!(p.bic_scale, 41);
        p.set("cubic", "hystart_plus_plus", 1.0).unwrap();
        assert!(p.hystart_plus_plus);
        assert!(p.set("cubic", "beta", 1.0).unwrap_err().contains("(0, 1)"));
        assert!(p.set("cubic", "hystart", 0.5).unwrap_err().contains("switch"));
        assert!(p.set("cubic", "alpha", 1.0).unwrap_err().contains("known: beta, c"));
    }
}
