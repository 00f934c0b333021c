//! TCP Vegas as Brakmo built it, and Vegas* (its experimental slow start).
//!
//! # Sources followed
//!
//! * Seed 000 (Brakmo's thesis), chapter 4: §4.3 congestion avoidance (BaseRTT, Expected, Actual
//!   from a distinguished segment once per RTT, Diff in buffers, α = 1, β = 3), §4.4 the modified
//!   slow start ("exponential growth only every other RTT", leave when Actual falls below Expected
//!   by one router buffer) and Vegas* (Fig 4.7), §4.5 the retransmission mechanisms (fine
//!   per-segment timestamps, retransmit on a duplicate ACK whose segment's fine timeout expired,
//!   check the first and second non-duplicate ACK after a retransmission, decrease only for
//!   segments sent after the last decrease, Reno's coarse timer kept as fallback).
//! * Seed 002 (Ahn et al.) §2.2 (fine timeout "just like Reno computes the coarse grain one, as
//!   the average RTT plus four times its variance"; "Vegas sends a new packet for the second
//!   duplicate, similar to the way that Reno does"), §2.3, §6.1 (as read from the Vegas 0.8 code:
//!   multiplicative decrease 3/4, or Reno's 1/2 if the segment was retransmitted recently).
//! * Nothing was taken from the Linux or ns-3 Vegas modules.
//!
//! # Ambiguities and the reading taken
//!
//! 1. *Expected* uses the current cwnd (000 §4.3 "WindowSize is the size of the current
//!    congestion window") at the decision time, counted in whole segments: 000 §4.3 assumes
//!    WindowSize "equal to the number of bytes in transit", and the sender only transmits
//!    full-sized segments, so a fraction of a segment of cwnd never is in transit. (Counting it
//!    made Diff read up to one phantom buffer high and park the window in the α..β dead zone.)
//! 2. *Actual* counts the distinguished segment's own bytes plus every byte (including
//!    retransmissions) sent after it until its ACK arrives, divided by its RTT. With a fixed
//!    window this equals cwnd/RTT, which is 002 §2.1's "window size divided by RTT".
//!    A retransmission while a measurement is running spoils it (Karn); the next new segment
//!    becomes the distinguished one.
//! 3. Thresholds: 000 §4.3 writes both "Diff ≤ α increases" and α/β as a dead zone; we follow
//!    the issue: Diff < α → increase, Diff > β → decrease, else hold.
//! 4. "Linearly during the next RTT" (002 §1.1: "increment, decrement, or not adjust the window
//!    by one segment every RTT"): the ±1 MSS is spread over the next RTT's ACKs in proportion to
//!    the bytes each acknowledges (MSS × bytes_acked / cwnd-at-decision), so one window's worth
//!    of ACKed bytes moves cwnd by one MSS whatever the receiver's ACK frequency (Reno's
//!    MSS²/cwnd per ACK yields only half an MSS per RTT against a delayed-ACK receiver). It
//!    stops at the target cwnd ± MSS; the next decision, which ends that RTT, first applies any
//!    sub-MSS remainder left by rounding or by a short RTT, so CA windows stay whole segments.
//!    cwnd never goes below 2 MSS by a linear decrease.
//! 5. Slow start epochs are delimited by the distinguished segment's ACK; the ACK that ends an
//!    epoch is counted in the epoch it ends. The first epoch after the SYN (and after a coarse
//!    timeout) holds, then epochs alternate grow (+1 MSS per ACK) / hold. Diff is compared with γ
//!    only at the end of a *hold* epoch (the window was fixed, "so that a valid comparison can be
//!    made", 000 §4.4). Slow start also ends when cwnd reaches ssthresh (after a timeout).
//!    Leaving slow start sets ssthresh = cwnd (the "threshold window").
//! 6. Fine timeout: Jacobson's estimator (gains 1/8, 1/4; first sample srtt = R, rttvar = R/2)
//!    over every never-retransmitted segment's RTT, in ns (the seeds' clock is 1 ms; our clock is
//!    finer); RTO = srtt + max(1 ms, 4·rttvar). "Expired" means now − (last transmission of the
//!    oldest unacknowledged segment) > RTO. No sample yet → never expired.
//! 7. Reno's third-duplicate-ACK fast retransmit is kept (Vegas "extends Reno's retransmission
//!    mechanisms", 000 §4.5) — once per series of duplicates; the fine check usually fires first.
//! 8. Window on a Vegas retransmission: the decrease applies to min(cwnd, peer window) (as BSD's
//!    fast retransmit), rounded down to whole segments, at least 2; it happens only if the
//!    segment's *previous* transmission (000 §4.5 "previously sent") is later than the last
//!    decrease — 002 §2.2 says "original transmission"; with the original time a segment
//!    retransmitted twice could never trigger the 1/2 branch that 002 §6.1 describes, so the
//!    previous transmission is used. "Retransmitted recently" is read as "this segment had already
//!    been retransmitted" (its retransmit count > 0). After the retransmission, cwnd is the reduced
//!    window plus one MSS per duplicate ACK received so far and one more per further duplicate
//!    (Reno-style inflation: 002 §2.2 "sends a new packet for the second duplicate"); the next
//!    ACK that advances snd_una deflates it to the reduced window. A decrease leaves slow start.
//! 9. The 1st/2nd non-duplicate ACK check applies after any retransmission (Vegas, fast, coarse).
//! 10. A coarse timeout is Reno's: ssthresh = half the window (BSD), cwnd = 1 MSS, Vegas slow
//!     start; the time of the retransmission counts as a decrease.
//! 11. Vegas* (000 §4.4, Fig 4.7 and its text): "it uses the average spacing between four
//!     segments sent during the slow-start period rather than the spacing from two segments [...]
//!     the average of three values". The four segments are the first four new segments sent in
//!     a slow-start *growth* epoch (one that starts with at least three segments of window: an
//!     epoch that starts at W sends 2W − 1 before its end, and four must fit): each ACK of a growth epoch releases two segments back to back, so
//!     these four queue behind one another at the bottleneck and their ACKs come back spaced by
//!     its service time, as Keshav's packet pair does. The estimate is the bytes acknowledged
//!     between the ACK that first covers the first probe segment and the ACK that covers the
//!     fourth, over the time between those ACKs (with an ACK per segment: three segments over
//!     three spacings). The threshold window is "set [...] with an appropriate value" from it:
//!     ssthresh = estimate × BaseRTT, in whole segments, at least 2 (the window whose sending
//!     rate "equals the available bandwidth"). A probe is abandoned if its epoch ends before
//!     the four are sent, if a retransmission comes in between, if one ACK covers the first and
//!     the fourth, or on a coarse timeout. A new probe is taken in every growth epoch (the thesis'
//!     "the available bandwidth estimate is currently ..."), the latest estimate wins. Each ACK
//!     of a growth epoch schedules its +1 MSS at now + (ACKs expected this RTT) × (MSS /
//!     estimate) instead of applying it at once (the thesis' 5 ms × 4 = 20 ms example); the ACKs
//!     expected are the window, in segments, at the start of the epoch (one ACK per segment).
//!     Until an estimate exists, increases are immediate as in Vegas. Slow start ends when the
//!     window reaches the threshold (decided at the end of the epoch, as for a timeout's
//!     threshold) or on Vegas' γ test, whichever comes first.
//!     Deviations: the thesis names neither which four segments nor the formula of the
//!     threshold; the choice above is ours. (An earlier reading took four ACKs *arriving*
//!     during a growth epoch; those acknowledge the hold epoch's segments, sent one per ACK and
//!     split by the idle gap between ACK trains, so it never made an estimate.)
//!
//! CAM rows (000 Fig 4.4) are written at every decision: Expected and Actual in bytes/s, Diff in
//! buffers, α, β and the decision: −1 decrease, 0 hold, +1 increase, 2 slow-start growth next RTT,
//! 3 leave slow start.

//!
//! # Files
//!
//! `mod.rs` holds the parameters, the state and the [`CongestionControl`] hooks; `decision.rs` the
//! once-per-RTT CAM decision and the linear step that follows it (readings 1–5); `star.rs` Vegas*
//! (reading 11) and the slow-start increase; `retransmit.rs` the fine-grained timeout and the
//! retransmission decisions (readings 6–9). Loss recovery is left to the CC: the endpoint pairs
//! Vegas with the pass-through [`crate::recovery::VegasRecovery`] (as Linux's `tcp_vegas.c`
//! leaves recovery alone).

mod decision;
mod retransmit;
mod star;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use crate::cc::{AckSample, CcVerdict, CcWindow, CongestionControl, SenderView};
use crate::rto::fine::{FineRto, MAX_RTO};
use crate::trace::CamTrace;
use crate::{Nanos, MS};

/// Vegas thresholds, in buffers (segments) at the bottleneck (seed 000 §4.3, §4.4), and its
/// switches; the `params` of the `vegas` and `vegas-star` variants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasParams {
    /// Below α extra buffers: +1 MSS over the next RTT (default 1).
    pub alpha: f64,
    /// Above β extra buffers: −1 MSS over the next RTT (default 3).
    pub beta: f64,
    /// Slow start ends when Diff exceeds γ buffers (default 1: "one router buffer").
    pub gamma: f64,
    /// Vegas* experimental slow start (seed 000 §4.4, Fig 4.7).
    pub star: bool,
    /// Actual's denominator (default true): false = the distinguished segment's RTT (seed 000 §4.3); true = the
    /// mean fine RTT over its round trip (seed 002 §2.1, "average, measured RTT"). Param
    /// `avg_rtt` (0/1).
    pub avg_rtt: bool,
}

// Parameters are validated finite by `VegasParams::set`, so equality is reflexive.
impl Eq for VegasParams {}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams::DEFAULT
    }
}

impl VegasParams {
    /// α = 1, β = 3, γ = 1 buffers (seed 000 §4.3/§4.4), Actual over the mean RTT.
    pub const DEFAULT: VegasParams = VegasParams { alpha: 1.0, beta: 3.0, gamma: 1.0, star: false, avg_rtt: true };
    /// Vegas*: the defaults with the experimental slow start.
    pub const STAR: VegasParams = VegasParams { star: true, ..VegasParams::DEFAULT };
    /// The `params` keys.
    pub const NAMES: &'static [&'static str] = &["alpha", "beta", "gamma", "avg_rtt"];

    /// Set one `params` key (`variant` names the flow's variant in errors).
    pub fn set(&mut self, variant: &str, key: &str, value: f64) -> Result<(), String> {
        if !value.is_finite() || value < 0.0 {
            return Err(format!("{key} must be a finite number of buffers >= 0, got {value}"));
        }
        match key {
            "alpha" => self.alpha = value,
            "beta" => self.beta = value,
            "gamma" => self.gamma = value,
            "avg_rtt" if value == 0.0 || value == 1.0 => self.avg_rtt = value == 1.0,
            "avg_rtt" => return Err(format!("avg_rtt is 0 or 1, got {value}")),
            _ => return Err(format!("variant {variant:?} has no parameter {key:?}; known: alpha, beta, gamma, avg_rtt")),
        }
        Ok(())
    }

    /// Cross-parameter check, after every `set`: α ≤ β.
    pub fn check(&self) -> Result<(), String> {
        if self.alpha > self.beta {
            return Err(format!("alpha ({}) must not exceed beta ({})", self.alpha, self.beta));
        }
        Ok(())
    }

    /// The controller these parameters describe.
    pub fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(VegasCc::new(*self))
    }
}

/// CAM decision codes.
pub const DEC_DECREASE: i8 = -1;
pub const DEC_HOLD: i8 = 0;
pub const DEC_INCREASE: i8 = 1;
pub const DEC_SS_GROW: i8 = 2;
pub const DEC_SS_EXIT: i8 = 3;

/// A ±1 MSS change spread over the RTT after a CAM decision (reading 4).
#[derive(Clone, Copy, Debug)]
struct Adjust {
    dir: i8,
    target: u32,
    /// cwnd at the decision: one MSS is spread over this many acknowledged bytes.
    over: u32,
    /// Accumulated `bytes_acked × MSS` not yet turned into whole bytes of window.
    acc: u64,
}

#[derive(Clone, Copy, Debug)]
struct Distinguished {
    /// One past the segment's last byte (relative data offset).
    end: u64,
    sent_at: Nanos,
    /// Bytes transmitted before it.
    sent_before: u64,
}

/// Vegas* probe: the first four new segments sent in a slow-start growth epoch (reading 11).
#[derive(Clone, Copy, Debug, Default)]
struct StarProbe {
    /// One past the last byte of each probe segment sent so far.
    ends: [u64; 4],
    sent: usize,
    /// (time, snd_una) of the ACK that first covered the first probe segment.
    first_ack: Option<(Nanos, u64)>,
}


#[derive(Clone, Debug)]
pub struct VegasCc {
    pub params: VegasParams,
    /// Reno's duplicate-ACK threshold (4.4BSD tcprexmtthresh).
    pub dupack_threshold: u32,
    // Fine-grained estimator (ns).
    /// Jacobson/RFC 6298 arithmetic at 1 ms granularity, no lower bound (reading 6).
    fine: FineRto,
    /// Minimum RTT seen.
    pub base_rtt: Option<Nanos>,
    /// Bytes transmitted so far (new data and retransmissions).
    sent_total: u64,
    dist: Option<Distinguished>,
    want_dist: bool,
    /// Vegas slow-start mode.
    pub slow_start: bool,
    /// In slow start: the current epoch grows.
    ss_grow: bool,
    /// Linear adjustment in progress.
    adjust: Option<Adjust>,
    last_decrease: Option<Nanos>,
    timeout_mark: bool,
    /// Reduced window to deflate to after a Vegas retransmission.
    deflate_to: Option<u32>,
    retx_in_series: bool,
    checks_left: u8,
    /// Retransmissions decided here (fine timer or third duplicate ACK).
    pub vegas_retransmits: u64,
    /// Window decreases caused by retransmissions.
    pub loss_decreases: u64,
    // Vegas*.
    star_probe: Option<StarProbe>,
    /// Available-bandwidth estimate, bytes/s.
    pub star_bw: Option<f64>,
    star_pending: VecDeque<Nanos>,
    epoch_segments: u32,
    /// One past the highest retransmitted byte; ACKs covering it give no fine sample.
    retx_high: u64,
    last_una: u64,
    /// Fine RTT samples during the current measurement (sum, count).
    epoch_rtt: (u128, u64),
}

impl VegasCc {
    pub fn new(params: VegasParams) -> VegasCc {
        VegasCc {
            params,
            dupack_threshold: 3,
            fine: FineRto::new(MS, 0, MAX_RTO),
            base_rtt: None,
            sent_total: 0,
            dist: None,
            want_dist: true,
            slow_start: true,
            ss_grow: false,
            adjust: None,
            last_decrease: None,
            timeout_mark: false,
            deflate_to: None,
            retx_in_series: false,
            checks_left: 0,
            vegas_retransmits: 0,
            loss_decreases: 0,
            star_probe: None,
            star_bw: None,
            star_pending: VecDeque::new(),
            epoch_segments: 1,
            retx_high: 0,
            last_una: 0,
            epoch_rtt: (0, 0),
        }
    }

    /// Fine-grained RTO (ns), if a sample exists.
    pub fn fine_rto(&self) -> Option<Nanos> {
        self.fine.srtt.map(|_| self.fine.rto())
    }
}

impl CongestionControl for VegasCc {
    fn name(&self) -> &'static str {
        if self.params.star {
            "vegas-star"
        } else {
            "vegas"
        }
    }

    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, _v: &SenderView<'_>, cam: Option<&mut CamTrace>) {
        let now = s.now;
        // Karn, per segment: an ACK that covers a retransmitted byte measures the repair, not the
        // path (the send log only skips the retransmitted record itself).
        let clean = self.last_una >= self.retx_high;
        self.last_una = s.snd_una;
        if let (Some(r), true) = (s.fine_rtt, clean) {
            self.fine_sample(r);
            self.epoch_rtt.0 += r as u128;
            self.epoch_rtt.1 += 1;
        }
        let ended = match self.dist {
            Some(d) if s.snd_una >= d.end => {
                self.dist = None;
                self.want_dist = true;
                Some(d)
            }
            _ => None,
        };
        if self.slow_start {
            self.star_on_ack(w, now, s.snd_una);
        }
        // Window growth of the current epoch (the ACK that ends an epoch belongs to it).
        if self.slow_start {
            self.ss_grow_on_ack(w, now);
        } else {
            self.linear_step(w, s.bytes_acked);
        }
        if let Some(d) = ended {
            self.decide(w, d, now, cam);
        }
    }

    fn on_dupack(&mut self, w: &mut CcWindow, v: &SenderView<'_>) -> CcVerdict {
        self.dupack_verdict(w, v)
    }

    fn on_ack_check(&mut self, w: &mut CcWindow, v: &SenderView<'_>) -> CcVerdict {
        self.ack_check_verdict(w, v)
    }

    fn on_send(&mut self, now: Nanos, seq: u64, len: u32, retransmit: bool) {
        if self.timeout_mark {
            self.timeout_mark = false;
            self.last_decrease = Some(now);
        }
        self.star_on_send(seq, len, retransmit);
        if retransmit {
            self.retx_high = self.retx_high.max(seq + len as u64);
            // Karn: a retransmission spoils the running measurement.
            self.dist = None;
            self.want_dist = true;
        } else if len > 0 && self.want_dist {
            self.dist = Some(Distinguished { end: seq + len as u64, sent_at: now, sent_before: self.sent_total });
            self.epoch_rtt = (0, 0);
            self.want_dist = false;
        }
        self.sent_total += len as u64;
    }

    fn on_timeout(&mut self, _w: &mut CcWindow) {
        // Reno's coarse timeout (the endpoint set cwnd = 1 MSS and ssthresh); Vegas slow start.
        self.deflate_to = None;
        self.slow_start = true;
        self.ss_grow = false;
        self.adjust = None;
        self.dist = None;
        self.want_dist = true;
        self.timeout_mark = true;
        self.retx_in_series = false;
        self.checks_left = 2;
        self.star_pending.clear();
        self.star_probe = None;
        self.epoch_segments = 1;
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.star_pending.front().copied()
    }

    fn on_timer(&mut self, now: Nanos, w: &mut CcWindow) {
        self.star_on_timer(now, w);
    }
}
