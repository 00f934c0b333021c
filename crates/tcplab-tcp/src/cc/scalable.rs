//! Kelly's scalable TCP with ECN (`scalable-ecn`): T. Kelly, *On engineering a stable and
//! scalable TCP variant*, CUED/F-INFENG/TR.435, 2002 (seed 003).
//!
//! # Rules, each with its place in the paper
//!
//! * cwnd is a real number of segments (§3.3 "maintains a congestion window, cwnd_r, as a real
//!   number"). Per ACK carrying no congestion signal `cwnd += a`; per marked ACK
//!   `cwnd *= (1 − b)` (§3.3, the n = 0, m = 1 member of eq. 4 chosen in §2.2).
//! * `b = base_b / RTT̄` (§3.2, "Setting b_r = baseb_r / T_r removes the dependence on round trip
//!   time", eq. 17), RTT̄ in seconds. *b-capping* (§3.2 last paragraph, §3.3 "When the round trip
//!   time estimator is recalculated the parameters a_r and b_r are adjusted to ensure that
//!   b_r < 0.1 while maintaining the same sharing constant"): when `base_b / RTT̄ > b_cap`,
//!   `b = b_cap` and `a = a₀ · b_cap · RTT̄ / base_b`, so `a / (b · RTT̄) = a₀ / base_b` (the sharing
//!   constant of eq. 17's response curve) is unchanged.
//! * RTT̄ is the mean RTT of the last `max(10, 4⌈cwnd⌉)` acknowledged segments (§3.3), recomputed
//!   on every ACK that gives a sample (and a, b with it).
//! * Pacing (§3.3): after each transmission the next one is due `X · RTT̄ / cwnd` later, X drawn
//!   from an exponential distribution clamped to `[1/cwnd, 1]` (for cwnd < 1 the bounds cross and
//!   X = 1, so one packet leaves every `1/cwnd` RTTs, fn. 17). A change of cwnd on an ACK moves
//!   the deadline (`last send + X · RTT̄ / cwnd` with the new cwnd) without resampling X. When the
//!   deadline has passed a packet may leave if `⌈cwnd⌉` segments and the peer's window allow
//!   (the endpoint's usual window test with `w.cwnd = ⌈cwnd⌉ · MSS`).
//! * Soft-start (§3.3): while `ssgrace > 0` an unmarked ACK adds `a · 2^ssgrace`, a marked one
//!   multiplies by `(1 − b)` and decrements `ssgrace` (initially 3).
//! * Loss: "the implementation falls back to traditional TCP detection mechanisms and congestion
//!   responses" (§3.3) — the endpoint's NewReno recovery and RFC 6298 timer act on `w.cwnd`; the
//!   real-valued window follows whatever they set (detected on the next ACK).
//!
//! # Readings where the paper is silent (deliberate, documented)
//!
//! 1. The exponential's mean is 1 (the paper gives only the clamp). With that, E[X] =
//!    `l + e^{−l} − e^{−1}` for a lower bound `l = 1/cwnd ≤ 1`.
//! 2. One update per ACK (each ACK acknowledges one segment: the receiver ACKs every segment and
//!    echoes that segment's mark, fn. 14); a cumulative ACK after a loss counts once.
//! 3. RTT samples are the send log's exact per-segment RTTs (never-retransmitted segments, Karn);
//!    the paper uses the timestamp option, whose echo is exact in ns-2. Timestamps stay on so the
//!    headers are as large as the paper's (52 bytes here, 50 in fn. 18).
//! 4. Before the first RTT sample nothing is paced (cwnd is then 1 segment).
//! 5. A retransmission leaves without waiting for the pacing timer but restarts it.
//! 6. cwnd is kept at or above 10⁻³ segments as a numerical guard.

use std::collections::VecDeque;

use crate::cc::{AckSample, CcWindow, CongestionControl, SenderView};
use crate::trace::CamTrace;
use crate::{Nanos, SEC};

/// Kelly's scalable TCP parameters (seed 003; defaults from §4.2 and §3.3): the `params` of the
/// `scalable-ecn` variant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalableParams {
    /// Increase per unmarked ACK, in segments (§4.2: 0.125).
    pub a: f64,
    /// b = base_b / RTT̄ (RTT̄ in seconds; §4.2: 0.005).
    pub base_b: f64,
    /// Soft-start grace: marks before steady-state control (§3.3: 3).
    pub ssgrace: u32,
    /// b-capping threshold (§3.2: "b_r is capped to be less than 0.1").
    pub b_cap: f64,
}

// Parameters are validated finite by `ScalableParams::set`, so equality is reflexive.
impl Eq for ScalableParams {}

impl Default for ScalableParams {
    fn default() -> Self {
        ScalableParams::DEFAULT
    }
}

impl ScalableParams {
    pub const DEFAULT: ScalableParams = ScalableParams { a: 0.125, base_b: 0.005, ssgrace: 3, b_cap: 0.1 };
    /// The `params` keys.
    pub const NAMES: &'static [&'static str] = &["a", "base_b", "ssgrace", "b_cap"];

    /// Set one `params` key (`variant` names the flow's variant in errors).
    pub fn set(&mut self, variant: &str, key: &str, value: f64) -> Result<(), String> {
        match key {
            "a" | "base_b" if !(value.is_finite() && value > 0.0) => return Err(format!("{key} must be a finite number > 0, got {value}")),
            "a" => self.a = value,
            "base_b" => self.base_b = value,
            "b_cap" if !(value > 0.0 && value < 1.0) => return Err(format!("b_cap must be in (0, 1), got {value}")),
            "b_cap" => self.b_cap = value,
            "ssgrace" if !(value >= 0.0 && value <= 30.0 && value.fract() == 0.0) => return Err(format!("ssgrace is a whole number of marks from 0 to 30, got {value}")),
            "ssgrace" => self.ssgrace = value as u32,
            _ => return Err(format!("variant {variant:?} has no parameter {key:?}; known: {}", Self::NAMES.join(", "))),
        }
        Ok(())
    }

    /// The controller; `seed` seeds its pacing factor.
    pub fn build(&self, seed: u64) -> Box<dyn CongestionControl> {
        Box::new(ScalableCc::new(*self, seed))
    }
}

/// Smallest real-valued window kept (numerical guard, reading 6).
pub const MIN_CWND: f64 = 1e-3;

/// SplitMix64: a small, well-mixed generator for the pacing factor (the crate has no
/// dependencies; the host seeds it from its own RNG stream per connection).
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }
}

/// Clamp an exponential draw to the pacing bounds `[1/cwnd, 1]` (X = 1 when cwnd ≤ 1).
pub fn clamp_pacing_factor(x: f64, cwnd: f64) -> f64 {
    x.max(1.0 / cwnd).min(1.0)
}

#[derive(Clone, Debug)]
pub struct ScalableCc {
    pub params: ScalableParams,
    /// Real-valued congestion window in segments.
    pub cwnd: f64,
    /// Current increase and decrease parameters (after b-capping).
    pub a: f64,
    pub b: f64,
    pub ssgrace: u32,
    /// The last RTT samples (ns) and their sum.
    rtts: VecDeque<Nanos>,
    rtt_sum: u128,
    /// Mean of `rtts` (RTT̄), ns.
    pub rtt_bar: Option<Nanos>,
    /// `w.cwnd` as this CC last wrote it: a different value means loss recovery or the RTO set it.
    written: u32,
    mss: u32,
    rng: SplitMix64,
    /// Pacing factor X of the gap now running.
    pub x: f64,
    last_send: Option<Nanos>,
    /// When the next segment may leave.
    deadline: Option<Nanos>,
    /// The deadline has passed and was seen (no timer needed until the next send).
    fired: bool,
    pub marked_acks: u64,
    pub unmarked_acks: u64,
}

impl ScalableCc {
    pub fn new(params: ScalableParams, seed: u64) -> Self {
        ScalableCc {
            cwnd: 1.0,
            a: params.a,
            b: params.base_b,
            ssgrace: params.ssgrace,
            rtts: VecDeque::new(),
            rtt_sum: 0,
            rtt_bar: None,
            written: 0,
            mss: 0,
            rng: SplitMix64::new(seed),
            x: 1.0,
            last_send: None,
            deadline: None,
            fired: false,
            marked_acks: 0,
            unmarked_acks: 0,
            params,
        }
    }

    /// Samples RTT̄ is averaged over: max(10, 4⌈cwnd⌉) (§3.3).
    pub fn rtt_window(&self) -> usize {
        (4.0 * self.cwnd.ceil()).max(10.0) as usize
    }

    /// Add an RTT sample; recompute RTT̄ and, with it, a and b (b-capping, §3.2/§3.3).
    pub fn on_rtt_sample(&mut self, rtt: Nanos) {
        self.rtts.push_back(rtt);
        self.rtt_sum += rtt as u128;
        let keep = self.rtt_window();
        while self.rtts.len() > keep {
            let old = self.rtts.pop_front().expect("non-empty");
            self.rtt_sum -= old as u128;
        }
        let mean = (self.rtt_sum / self.rtts.len() as u128) as Nanos;
        self.rtt_bar = Some(mean.max(1));
        self.rescale();
    }

    /// b = base_b / RTT̄, capped at b_cap with a scaled to keep a/(b·RTT̄) = a₀/base_b.
    fn rescale(&mut self) {
        let Some(r) = self.rtt_bar else { return };
        let t = r as f64 / SEC as f64;
        let b = self.params.base_b / t;
        if b > self.params.b_cap {
            self.b = self.params.b_cap;
            self.a = self.params.a * self.params.b_cap * t / self.params.base_b;
        } else {
            self.b = b;
            self.a = self.params.a;
        }
    }

    /// One ACK's window update (§3.3; soft-start while ssgrace > 0).
    pub fn update(&mut self, marked: bool) {
        if marked {
            self.marked_acks += 1;
            self.cwnd = (self.cwnd * (1.0 - self.b)).max(MIN_CWND);
            self.ssgrace = self.ssgrace.saturating_sub(1);
        } else {
            self.unmarked_acks += 1;
            let gain = if self.ssgrace > 0 { (1u64 << self.ssgrace.min(62)) as f64 } else { 1.0 };
            self.cwnd += self.a * gain;
        }
    }

    /// Write ⌈cwnd⌉ segments into the endpoint's byte window.
    fn write(&mut self, w: &mut CcWindow) {
        let segs = self.cwnd.ceil().max(1.0);
        let bytes = (segs * w.mss as f64).min(w.max_cwnd as f64) as u32;
        w.cwnd = bytes.max(w.mss);
        self.written = w.cwnd;
    }

    /// Adopt a window set from outside (loss fallback) or a new MSS.
    fn sync(&mut self, w: &CcWindow) {
        if self.mss != w.mss {
            // First call (or MSS negotiated): the initial window, in segments.
            self.mss = w.mss;
            self.cwnd = (w.cwnd as f64 / w.mss.max(1) as f64).max(MIN_CWND);
            self.written = w.cwnd;
        } else if w.cwnd != self.written {
            self.cwnd = (w.cwnd as f64 / w.mss.max(1) as f64).max(MIN_CWND);
            self.written = w.cwnd;
        }
    }

    /// The gap after the last send, with the current cwnd and RTT̄ and the running X.
    fn recompute_deadline(&mut self, now: Nanos) {
        let (Some(last), Some(r)) = (self.last_send, self.rtt_bar) else {
            self.deadline = None;
            return;
        };
        let gap = self.x * r as f64 / self.cwnd;
        let gap = if gap.is_finite() { gap.min(1e15) } else { 1e15 };
        let d = last.saturating_add(gap.round() as Nanos);
        self.deadline = Some(d);
        self.fired = d <= now;
    }

    /// The pacing deadline now running (for tests and traces).
    pub fn deadline(&self) -> Option<Nanos> {
        self.deadline
    }
}

impl CongestionControl for ScalableCc {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, _view: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        self.sync(w);
        if let Some(r) = s.fine_rtt {
            self.on_rtt_sample(r);
        }
        self.update(s.ece);
        self.write(w);
        // A change of cwnd reschedules the pacing timer; X is not resampled (§3.3).
        self.recompute_deadline(s.now);
    }

    fn on_send(&mut self, now: Nanos, _seq: u64, _len: u32, _retransmit: bool) {
        // A new gap: X from Exp(1), clamped to [1/cwnd, 1] (§3.3, reading 1).
        let e = -self.rng.unit().ln();
        self.x = clamp_pacing_factor(e, self.cwnd);
        self.last_send = Some(now);
        self.recompute_deadline(now);
    }

    fn on_timeout(&mut self, w: &mut CcWindow) {
        self.sync(w);
    }

    fn on_recovery(&mut self, w: &mut CcWindow, _entered: bool) {
        self.sync(w);
    }

    fn next_timer(&self) -> Option<Nanos> {
        if self.fired {
            None
        } else {
            self.deadline
        }
    }

    fn on_timer(&mut self, now: Nanos, _w: &mut CcWindow) {
        if self.deadline.is_some_and(|d| d <= now) {
            self.fired = true;
        }
    }

    fn pacing_release(&self) -> Option<Nanos> {
        self.deadline
    }

    fn real_cwnd(&self) -> Option<f64> {
        Some(self.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sendlog::SendLog;
    use crate::MS;

    fn params() -> ScalableParams {
        ScalableParams { a: 0.125, base_b: 0.005, ssgrace: 3, b_cap: 0.1 }
    }
    fn view(log: &SendLog) -> SenderView<'_> {
        SenderView { now: 0, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 1 << 30, mss: 1000, dupacks: 0, fine_srtt: None, in_recovery: false, send_log: log }
    }
    fn ack(now: Nanos, rtt: Option<Nanos>, ece: bool) -> AckSample {
        AckSample { now, bytes_acked: 1000, rtt, fine_rtt: rtt, in_slow_start: false, snd_una: 0, snd_nxt: 0, flight: 0, ece }
    }
    fn window() -> CcWindow {
        CcWindow { cwnd: 1000, ssthresh: 65535, mss: 1000, max_cwnd: 1 << 30 }
    }

    #[test]
    fn marked_and_unmarked_updates_after_soft_start() {
        let log = SendLog::default();
        let mut cc = ScalableCc::new(ScalableParams { ssgrace: 0, ..params() }, 1);
        let mut w = window();
        // RTT 100 ms: b = 0.005 / 0.1 = 0.05, a = 0.125 (no cap).
        cc.on_ack(&mut w, &ack(0, Some(100 * MS), false), &view(&log), None);
        assert!((cc.b - 0.05).abs() < 1e-12 && (cc.a - 0.125).abs() < 1e-12);
        assert!((cc.cwnd - 1.125).abs() < 1e-12, "{}", cc.cwnd);
        assert_eq!(w.cwnd, 2000, "⌈1.125⌉ segments");
        for _ in 0..7 {
            cc.on_ack(&mut w, &ack(0, Some(100 * MS), false), &view(&log), None);
        }
        assert!((cc.cwnd - 2.0).abs() < 1e-12);
        assert_eq!(w.cwnd, 2000);
        cc.on_ack(&mut w, &ack(0, Some(100 * MS), true), &view(&log), None);
        assert!((cc.cwnd - 2.0 * 0.95).abs() < 1e-12, "{}", cc.cwnd);
        assert_eq!(w.cwnd, 2000);
        cc.on_ack(&mut w, &ack(0, Some(100 * MS), true), &view(&log), None);
        assert!((cc.cwnd - 2.0 * 0.95 * 0.95).abs() < 1e-12);
        assert_eq!((cc.marked_acks, cc.unmarked_acks), (2, 8));
    }

    #[test]
    fn b_capping_keeps_b_below_cap_and_the_sharing_constant() {
        let log = SendLog::default();
        for &(base_b, rtt_ms) in &[(0.005, 100u64), (0.01, 16), (0.01, 4), (0.01, 256), (0.005, 20), (0.05, 300)] {
            let p = ScalableParams { base_b, ssgrace: 0, ..params() };
            let mut cc = ScalableCc::new(p, 1);
            let mut w = window();
            cc.on_ack(&mut w, &ack(0, Some(rtt_ms * MS), false), &view(&log), None);
            let t = rtt_ms as f64 / 1000.0;
            assert!(cc.b <= 0.1 + 1e-15, "b = {} at base_b {base_b}, {rtt_ms} ms", cc.b);
            // The response curve's factor a/(b·T) (eq. 17 with b = base_b/T) is a₀/base_b.
            let sharing = cc.a / (cc.b * t);
            assert!((sharing - p.a / base_b).abs() < 1e-9 * sharing, "{sharing} vs {}", p.a / base_b);
            if base_b / t > 0.1 {
                assert_eq!(cc.b, 0.1);
                assert!(cc.a < p.a);
            } else {
                assert!((cc.b - base_b / t).abs() < 1e-12);
                assert_eq!(cc.a, p.a);
            }
        }
    }

    #[test]
    fn rtt_bar_is_the_mean_of_the_last_max_10_or_4cwnd_samples() {
        let mut cc = ScalableCc::new(params(), 1);
        for i in 1..=30u64 {
            cc.on_rtt_sample(i * MS);
        }
        // cwnd = 1: window of 10 samples, 21..30 ms → mean 25.5 ms.
        assert_eq!(cc.rtt_window(), 10);
        assert_eq!(cc.rtt_bar, Some(25_500_000));
        cc.cwnd = 7.2; // ⌈7.2⌉ = 8 → 32 samples
        assert_eq!(cc.rtt_window(), 32);
        for i in 31..=62u64 {
            cc.on_rtt_sample(i * MS);
        }
        assert_eq!(cc.rtt_bar, Some(46_500_000), "mean of 31..62 ms");
    }

    #[test]
    fn soft_start_counts_down_ssgrace_on_marks() {
        let log = SendLog::default();
        let mut cc = ScalableCc::new(params(), 1);
        let mut w = window();
        let mut expect = 1.0;
        // ssgrace 3: +a·8 per unmarked ACK; each mark ×(1−b) and ssgrace −1.
        let rtt = Some(100 * MS);
        for (marked, gain_after) in [(false, 8.0), (false, 8.0), (true, 4.0), (false, 4.0), (true, 2.0), (false, 2.0), (true, 1.0), (false, 1.0), (true, 1.0), (false, 1.0)] {
            let before_gain = if cc.ssgrace > 0 { (1 << cc.ssgrace) as f64 } else { 1.0 };
            cc.on_ack(&mut w, &ack(0, rtt, marked), &view(&log), None);
            if marked {
                expect *= 1.0 - 0.05;
            } else {
                expect += 0.125 * before_gain;
            }
            let now_gain = if cc.ssgrace > 0 { (1 << cc.ssgrace) as f64 } else { 1.0 };
            assert_eq!(now_gain, gain_after);
            assert!((cc.cwnd - expect).abs() < 1e-12, "{} vs {expect}", cc.cwnd);
        }
        assert_eq!(cc.ssgrace, 0);
    }

    #[test]
    fn loss_fallback_adopts_the_window_set_outside() {
        let log = SendLog::default();
        let mut cc = ScalableCc::new(ScalableParams { ssgrace: 0, ..params() }, 1);
        let mut w = window();
        for _ in 0..40 {
            cc.on_ack(&mut w, &ack(0, Some(100 * MS), false), &view(&log), None);
        }
        assert!((cc.cwnd - 6.0).abs() < 1e-9);
        // The RTO set cwnd to one segment.
        w.cwnd = 1000;
        cc.on_timeout(&mut w);
        assert!((cc.cwnd - 1.0).abs() < 1e-12);
        cc.on_ack(&mut w, &ack(0, Some(100 * MS), false), &view(&log), None);
        assert!((cc.cwnd - 1.125).abs() < 1e-12);
    }

    #[test]
    fn pacing_gaps_follow_the_clamped_exponential() {
        // cwnd and RTT̄ fixed: 10⁴ gaps X·RTT̄/cwnd with X ~ Exp(1) clamped to [1/cwnd, 1].
        for &cwnd in &[4.0f64, 0.5, 1.0, 25.0] {
            let mut cc = ScalableCc::new(params(), 7);
            cc.on_rtt_sample(100 * MS);
            cc.cwnd = cwnd;
            let r = 100e6;
            let (lo, hi) = ((1.0 / cwnd).min(1.0) * r / cwnd, r / cwnd);
            let mut now: Nanos = 0;
            let n = 10_000;
            let (mut sum, mut at_lo, mut at_hi) = (0.0, 0, 0);
            let (mut min, mut max) = (f64::MAX, 0.0f64);
            for _ in 0..n {
                cc.on_send(now, 0, 1000, false);
                let d = cc.deadline().unwrap();
                let gap = (d - now) as f64;
                sum += gap;
                min = min.min(gap);
                max = max.max(gap);
                at_lo += ((gap - lo).abs() <= 1.0) as u32;
                at_hi += ((gap - hi).abs() <= 1.0) as u32;
                now = d;
            }
            assert!(min >= lo - 1.0 && max <= hi + 1.0, "cwnd {cwnd}: gaps {min}..{max} outside {lo}..{hi}");
            let l = (1.0 / cwnd).min(1.0);
            let mean_x = if cwnd <= 1.0 { 1.0 } else { l + (-l).exp() - (-1.0f64).exp() };
            let mean = sum / n as f64 / (r / cwnd);
            assert!((mean - mean_x).abs() < 0.01, "cwnd {cwnd}: mean X {mean} vs {mean_x}");
            if cwnd > 1.0 {
                // P(X ≥ 1) = e^{-1}, P(X ≤ 1/cwnd) = 1 − e^{−1/cwnd}: the atoms at the bounds.
                let p_hi = at_hi as f64 / n as f64;
                let p_lo = at_lo as f64 / n as f64;
                assert!((p_hi - (-1.0f64).exp()).abs() < 0.02, "cwnd {cwnd}: P(X=1) {p_hi}");
                assert!((p_lo - (1.0 - (-l).exp())).abs() < 0.02, "cwnd {cwnd}: P(X=1/cwnd) {p_lo}");
            } else {
                assert_eq!(at_hi, n, "cwnd ≤ 1: X = 1 always, one packet per RTT/cwnd");
            }
        }
    }

    #[test]
    fn a_cwnd_change_moves_the_deadline_without_resampling_x() {
        let log = SendLog::default();
        let mut cc = ScalableCc::new(ScalableParams { ssgrace: 0, ..params() }, 3);
        let mut w = window();
        cc.on_ack(&mut w, &ack(0, Some(100 * MS), false), &view(&log), None);
        cc.cwnd = 4.0;
        cc.write(&mut w);
        cc.on_send(1_000 * MS, 0, 1000, false);
        let x = cc.x;
        let d0 = cc.deadline().unwrap();
        assert_eq!(d0, 1_000 * MS + (x * 100e6 / 4.0).round() as Nanos);
        // A marked ACK shrinks cwnd: the deadline moves later, X is unchanged.
        cc.on_ack(&mut w, &ack(1_001 * MS, Some(100 * MS), true), &view(&log), None);
        assert_eq!(cc.x, x);
        let expect = 1_000 * MS + (x * cc.rtt_bar.unwrap() as f64 / cc.cwnd).round() as Nanos;
        assert_eq!(cc.deadline(), Some(expect));
        assert!(expect > d0);
        assert_eq!(cc.next_timer(), Some(expect));
        cc.on_timer(expect, &mut w);
        assert_eq!(cc.next_timer(), None, "fired: no timer until the next send");
    }
}
