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

use std::collections::VecDeque;

use super::{AckSample, CcVerdict, CcWindow, CongestionControl, SenderView};
use crate::config::VegasParams;
use crate::recovery::{LossRecovery, RecoveryCtx, RecoveryOutcome};
use crate::sendlog::SendRecord;
use crate::rto::fine::{FineRto, MAX_RTO};
use crate::trace::CamTrace;
use crate::{Nanos, MS};

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

    fn fine_sample(&mut self, r: Nanos) {
        self.fine.sample(r);
        self.base_rtt = Some(self.base_rtt.map_or(r, |b| b.min(r)));
    }

    fn expired(&self, now: Nanos, r: &SendRecord) -> bool {
        matches!(self.fine_rto(), Some(rto) if now.saturating_sub(r.sent_at) > rto)
    }

    /// Decide a retransmission of the oldest segment; reduce the window if it was sent after the
    /// last decrease. `dupacks` already received in this series (for the inflation).
    fn retransmit(&mut self, w: &mut CcWindow, old: &SendRecord, now: Nanos, dupacks: u32, snd_wnd: u32) -> CcVerdict {
        let base = self.deflate_to.unwrap_or(w.cwnd);
        let mut reduced = base;
        if self.last_decrease.is_none_or(|t| old.sent_at > t) {
            let win = base.min(snd_wnd.max(w.mss)) as u64;
            let mss = w.mss.max(1) as u64;
            // 002 §6.1: 3/4, or Reno's 1/2 if the segment was retransmitted recently.
            let scaled = if old.retransmits > 0 { win / 2 } else { win * 3 / 4 };
            reduced = ((scaled / mss).max(2) * mss) as u32;
            self.last_decrease = Some(now);
            self.loss_decreases += 1;
            w.ssthresh = reduced;
            self.slow_start = false;
            self.adjust = None;
            self.star_pending.clear();
        }
        self.star_probe = None;
        self.deflate_to = Some(reduced);
        w.cwnd = reduced.saturating_add(dupacks.saturating_mul(w.mss)).min(w.max_cwnd);
        self.retx_in_series = true;
        self.checks_left = 2;
        self.dist = None;
        self.want_dist = true;
        self.vegas_retransmits += 1;
        CcVerdict::RetransmitOldest
    }

    /// End of the distinguished segment's round trip: the CAM decision.
    fn decide(&mut self, w: &mut CcWindow, d: Distinguished, now: Nanos, cam: Option<&mut CamTrace>) {
        let rtt = now.saturating_sub(d.sent_at).max(1);
        // Reading 4: the previous decision's ±1 MSS was to happen "during the next RTT", which
        // this ACK ends; whatever rounding left of it is applied now, so the window the new
        // decision judges is the one that decision asked for.
        // (Only the unfinished remainder of that step: a retransmission's window is left alone.)
        if let Some(a) = self.adjust.take() {
            let left = if a.dir > 0 { a.target.saturating_sub(w.cwnd) } else { w.cwnd.saturating_sub(a.target) };
            if left > 0 && left < w.mss {
                w.cwnd = a.target;
            }
        }
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        let base = self.base_rtt.unwrap() as f64 / 1e9;
        let bytes = self.sent_total.saturating_sub(d.sent_before) as f64;
        // Reading 1: WindowSize is "assumed to be equal to the number of bytes in transit"
        // (000 §4.3); the sender transmits only full-sized segments (BSD tcp_output's
        // sender-side silly-window avoidance / Nagle), so a fraction of a segment of cwnd is
        // never in transit and must not be counted as expected throughput.
        let mss = w.mss.max(1);
        let window = ((w.cwnd / mss).max(1) * mss) as f64;
        let expected = window / base;
        // Denominator: the distinguished segment's RTT (000 §4.3), or with `avg_rtt` the mean of
        // the fine RTTs measured during its round trip (002 §2.1 reading the Vegas 0.8 code:
        // "the congestion window size divided by its average, measured RTT").
        let den = if self.params.avg_rtt && self.epoch_rtt.1 > 0 {
            (self.epoch_rtt.0 / self.epoch_rtt.1 as u128) as Nanos
        } else {
            rtt
        };
        let actual = bytes / (den.max(1) as f64 / 1e9);
        let diff = (expected - actual) * base / w.mss.max(1) as f64;
        let p = self.params;
        let decision;
        if self.slow_start {
            if self.ss_grow && self.star_probe.is_some_and(|q| q.sent < 4) {
                // The growth epoch ended before its four probe segments were sent.
                self.star_probe = None;
            }
            if w.cwnd >= w.ssthresh {
                // Reached the threshold window (after a timeout, or Vegas*'s estimate).
                self.slow_start = false;
                self.star_pending.clear();
                self.star_probe = None;
                decision = DEC_SS_EXIT;
            } else if self.ss_grow {
                self.ss_grow = false;
                decision = DEC_HOLD;
            } else if diff > p.gamma {
                self.slow_start = false;
                self.star_pending.clear();
                self.star_probe = None;
                w.ssthresh = w.cwnd;
                decision = DEC_SS_EXIT;
            } else {
                self.ss_grow = true;
                decision = DEC_SS_GROW;
                // Vegas*: probe the first four segments of this growth epoch if they fit in it.
                if p.star && w.cwnd / mss >= 3 {
                    self.star_probe = Some(StarProbe::default());
                }
            }
            self.epoch_segments = (w.cwnd / w.mss.max(1)).max(1);
        } else if diff < p.alpha {
            self.adjust = Some(Adjust { dir: 1, target: w.cwnd.saturating_add(w.mss).min(w.max_cwnd), over: w.cwnd.max(1), acc: 0 });
            decision = DEC_INCREASE;
        } else if diff > p.beta {
            self.adjust = Some(Adjust { dir: -1, target: w.cwnd.saturating_sub(w.mss).max(2 * w.mss), over: w.cwnd.max(1), acc: 0 });
            decision = DEC_DECREASE;
        } else {
            self.adjust = None;
            decision = DEC_HOLD;
        }
        if let Some(c) = cam {
            c.push(now, expected, actual, diff, p.alpha, p.beta, decision);
        }
    }

    /// Vegas*: follow the probe's ACKs; from the ACK that covers its fourth segment, the
    /// estimate (bytes acknowledged since the ACK that covered the first, over the time between
    /// the two ACKs) and the threshold window = estimate × BaseRTT (reading 11).
    fn star_on_ack(&mut self, w: &mut CcWindow, now: Nanos, snd_una: u64) {
        let Some(mut q) = self.star_probe else { return };
        if q.sent == 0 {
            return;
        }
        match q.first_ack {
            None if snd_una >= q.ends[0] => {
                if q.sent == 4 && snd_una >= q.ends[3] {
                    // One ACK covers the first and the fourth segment: no spacing to measure.
                    self.star_probe = None;
                    return;
                }
                q.first_ack = Some((now, snd_una));
            }
            Some((t0, a0)) if q.sent == 4 && snd_una >= q.ends[3] => {
                self.star_probe = None;
                if now > t0 && snd_una > a0 {
                    let bw = (snd_una - a0) as f64 / ((now - t0) as f64 / 1e9);
                    self.star_bw = Some(bw);
                    if let Some(b) = self.base_rtt {
                        let mss = w.mss.max(1) as f64;
                        let segs = ((bw * b as f64 / 1e9) / mss).floor().max(2.0);
                        w.ssthresh = (segs * mss) as u32;
                    }
                }
                return;
            }
            _ => {}
        }
        self.star_probe = Some(q);
    }

    /// One slow-start increase of 1 MSS, capped at the threshold window.
    fn ss_increase(w: &mut CcWindow) {
        let cap = w.max_cwnd.min(w.ssthresh.max(w.mss));
        if w.cwnd < cap {
            w.cwnd = w.cwnd.saturating_add(w.mss).min(cap);
        }
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
            if self.ss_grow {
                match (self.params.star, self.star_bw) {
                    (true, Some(bw)) if bw > 0.0 => {
                        // 000 §4.4: spread the increase over the expected ACK spacing.
                        let spacing = w.mss as f64 / bw * 1e9;
                        let delay = (spacing * self.epoch_segments as f64).round() as Nanos;
                        self.star_pending.push_back(now.saturating_add(delay.max(1)));
                    }
                    _ => Self::ss_increase(w),
                }
            }
        } else if let Some(a) = self.adjust.as_mut() {
            // Proportional to the bytes this ACK covers, not one step per ACK: a window's worth
            // of acknowledged bytes (one RTT) moves cwnd by exactly one MSS whatever the
            // receiver's ACK frequency. Per-ACK steps of MSS²/cwnd (Reno's rule) give only half
            // an MSS per RTT against a delayed-ACK receiver (one ACK per two segments).
            a.acc += s.bytes_acked as u64 * w.mss as u64;
            let step = (a.acc / a.over as u64).min(u32::MAX as u64) as u32;
            a.acc -= step as u64 * a.over as u64;
            let (dir, target) = (a.dir, a.target);
            if dir > 0 {
                w.cwnd = w.cwnd.saturating_add(step).min(target);
                if w.cwnd >= target {
                    self.adjust = None;
                }
            } else {
                w.cwnd = w.cwnd.saturating_sub(step).max(target);
                if w.cwnd <= target {
                    self.adjust = None;
                }
            }
        }
        if let Some(d) = ended {
            self.decide(w, d, now, cam);
        }
    }

    fn on_dupack(&mut self, w: &mut CcWindow, v: &SenderView<'_>) -> CcVerdict {
        let Some(old) = v.send_log.oldest().copied() else {
            return CcVerdict::Continue;
        };
        let third = v.dupacks == self.dupack_threshold && !self.retx_in_series;
        if self.expired(v.now, &old) || third {
            return self.retransmit(w, &old, v.now, v.dupacks, v.snd_wnd);
        }
        if self.deflate_to.is_some() {
            // Reno-style inflation: each duplicate means a segment left the network.
            w.cwnd = w.cwnd.saturating_add(w.mss).min(w.max_cwnd);
        }
        CcVerdict::Continue
    }

    fn on_ack_check(&mut self, w: &mut CcWindow, v: &SenderView<'_>) -> CcVerdict {
        self.retx_in_series = false;
        if let Some(d) = self.deflate_to.take() {
            w.cwnd = d;
        }
        if self.checks_left > 0 {
            self.checks_left -= 1;
            if let Some(old) = v.send_log.oldest().copied() {
                if old.seq < old.end && self.expired(v.now, &old) {
                    let verdict = self.retransmit(w, &old, v.now, 0, v.snd_wnd);
                    // No inflation episode for a check on a new ACK.
                    self.deflate_to = None;
                    return verdict;
                }
            }
        }
        CcVerdict::Continue
    }

    fn on_send(&mut self, now: Nanos, seq: u64, len: u32, retransmit: bool) {
        if self.timeout_mark {
            self.timeout_mark = false;
            self.last_decrease = Some(now);
        }
        if let Some(q) = self.star_probe.as_mut() {
            if retransmit {
                // Karn: ACKs that may answer a retransmission do not measure the path.
                self.star_probe = None;
            } else if q.sent < 4 && len > 0 {
                if self.slow_start && self.ss_grow {
                    q.ends[q.sent] = seq + len as u64;
                    q.sent += 1;
                } else {
                    self.star_probe = None;
                }
            }
        }
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
        while matches!(self.star_pending.front(), Some(&t) if t <= now) {
            self.star_pending.pop_front();
            if self.slow_start {
                Self::ss_increase(w);
            }
        }
    }
}

/// Pass-through loss recovery for Vegas: the CC decides retransmissions and window changes.
#[derive(Clone, Copy, Debug, Default)]
pub struct VegasRecovery;

impl LossRecovery for VegasRecovery {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn on_dupack(&mut self, _ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        RecoveryOutcome::default()
    }
    fn on_ack(&mut self, _ctx: &mut RecoveryCtx<'_>, _ack: u64) -> RecoveryOutcome {
        RecoveryOutcome { allow_growth: true, ..Default::default() }
    }
    fn on_timeout(&mut self, _ctx: &mut RecoveryCtx<'_>) {}
    fn in_recovery(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    //! Vegas on bare state: the CC driven with scripted sends/ACKs at exact times.
    use super::*;
    use crate::sendlog::SendLog;

    const M: u32 = 1000;

    fn cc() -> VegasCc {
        VegasCc::new(VegasParams { avg_rtt: false, ..Default::default() })
    }
    fn win(cwnd: u32) -> CcWindow {
        CcWindow { cwnd, ssthresh: 65535, mss: M, max_cwnd: 65535 }
    }
    fn view(log: &SendLog, now: Nanos, dupacks: u32) -> SenderView<'_> {
        SenderView { now, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 65535, mss: M, dupacks, fine_srtt: None, in_recovery: false, send_log: log }
    }
    fn sample(now: Nanos, una: u64, rtt: Option<Nanos>) -> AckSample {
        AckSample { now, bytes_acked: M, rtt: None, fine_rtt: rtt, in_slow_start: false, snd_una: una, snd_nxt: 0, flight: 0, ece: false }
    }

    /// One CA round: BaseRTT `base`, distinguished RTT `rtt`, `segs` segments sent in it.
    fn round(w: &mut CcWindow, base: Nanos, rtt: Nanos, segs: u64) -> (CamTrace, VegasCc) {
        let log = SendLog::default();
        let mut c = cc();
        c.slow_start = false;
        c.on_ack(w, &sample(0, 0, Some(base)), &view(&log, 0, 0), None);
        for k in 0..segs {
            c.on_send(SEC0, k * M as u64, M, false);
        }
        let mut cam = CamTrace::default();
        c.on_ack(w, &sample(SEC0 + rtt, M as u64, None), &view(&log, SEC0 + rtt, 0), Some(&mut cam));
        (cam, c)
    }
    const SEC0: Nanos = crate::SEC;

    #[test]
    fn once_per_rtt_decision_hand_computed() {
        // cwnd 10 segments, BaseRTT 100 ms, distinguished RTT 120 ms, 10 000 bytes sent:
        // Expected = 10000/0.1 = 100 000 B/s; Actual = 10000/0.12 = 83 333.3 B/s;
        // Diff = 16 666.7 × 0.1 / 1000 = 1.667 buffers → hold.
        let mut w = win(10 * M);
        let (cam, _) = round(&mut w, 100 * MS, 120 * MS, 10);
        assert_eq!(cam.len(), 1);
        assert!((cam.expected_bps[0] - 100_000.0).abs() < 1e-6);
        assert!((cam.actual_bps[0] - 83_333.333).abs() < 1e-2);
        assert!((cam.diff_buffers[0] - 1.6667).abs() < 1e-3);
        assert_eq!(cam.decision[0], DEC_HOLD);
        assert_eq!((cam.alpha[0], cam.beta[0]), (1.0, 3.0));
        // ACKs in between do not decide: only the distinguished segment's ACK does.
        assert_eq!(w.cwnd, 10 * M);
    }

    #[test]
    fn thresholds_increase_hold_decrease() {
        // Diff = 10·(1 − 100/rtt): 105 ms → 0.476 (< α: +1), 120 ms → 1.67 (hold),
        // 150 ms → 3.33 (> β: −1).
        for (rtt, dec) in [(105, DEC_INCREASE), (120, DEC_HOLD), (150, DEC_DECREASE)] {
            let mut w = win(10 * M);
            let (cam, mut c) = round(&mut w, 100 * MS, rtt * MS, 10);
            assert_eq!(cam.decision[0], dec, "rtt {rtt}");
            // The change is spread over the next RTT's ACKs: 10 ACKs give exactly ±1 MSS.
            let log = SendLog::default();
            for k in 0..12u64 {
                c.on_ack(&mut w, &sample(2 * SEC0 + k, 2 * M as u64 + k, None), &view(&log, 2 * SEC0, 0), None);
            }
            assert_eq!(w.cwnd as i64, 10 * M as i64 + dec as i64 * M as i64, "rtt {rtt}");
        }
    }

    #[test]
    fn thresholds_are_strict_at_alpha_and_beta() {
        // cwnd 5 segments, BaseRTT 100 ms: Diff = 5·(1 − 100/rtt) is exactly 1.0 at 125 ms and
        // exactly 3.0 at 250 ms (in binary floating point too). Diff = α and Diff = β hold
        // (reading 3: increase only below α, decrease only above β).
        for (rtt, want) in [(125, 1.0), (250, 3.0)] {
            let mut w = win(5 * M);
            let (cam, _) = round(&mut w, 100 * MS, rtt * MS, 5);
            assert_eq!(cam.diff_buffers[0], want, "rtt {rtt}");
            assert_eq!(cam.decision[0], DEC_HOLD, "rtt {rtt}: Diff {want}");
        }
    }

    #[test]
    fn linear_decrease_is_one_segment_per_rtt() {
        // cwnd 5 segments, BaseRTT 100 ms, RTT 1 s: Diff = 5·0.9 = 4.5 > β: decrease; twenty
        // ACKs (four windows' worth) take off exactly one MSS and no more.
        let mut w = win(5 * M);
        let (cam, mut c) = round(&mut w, 100 * MS, SEC0, 5);
        assert_eq!(cam.decision[0], DEC_DECREASE);
        let log = SendLog::default();
        for k in 0..20u64 {
            c.on_ack(&mut w, &sample(3 * SEC0 + k, 2 * M as u64 + k, None), &view(&log, 3 * SEC0, 0), None);
        }
        assert_eq!(w.cwnd, 4 * M);
    }

    #[test]
    fn slow_start_grows_every_other_rtt_and_exits_on_gamma() {
        // A path with BaseRTT 100 ms; each round the whole window is sent at once and ACKed one
        // RTT later; the distinguished segment's ACK comes first and ends the round.
        let log = SendLog::default();
        let mut c = cc();
        let mut w = win(M);
        let mut cam = CamTrace::default();
        let mut t: Nanos = 0;
        let mut seq = 0u64;
        let mut windows = vec![];
        for round in 0..8 {
            // from round 6 on, the queue makes the RTT 100 ms + 3 segments' worth (30 ms)
            let rtt = if round >= 6 { 130 * MS } else { 100 * MS };
            let n = (w.cwnd / M) as u64;
            windows.push(n);
            let first = seq;
            for _ in 0..n {
                c.on_send(t, seq, M, false);
                seq += M as u64;
            }
            t += rtt;
            for k in 0..n {
                let una = first + (k + 1) * M as u64;
                c.on_ack(&mut w, &sample(t + k, una, Some(rtt)), &view(&log, t, 0), Some(&mut cam));
            }
            if !c.slow_start {
                break;
            }
        }
        // The distinguished segment is the first of each burst, so its ACK ends the round and the
        // burst's other ACKs fall in the next round (as on a real path). Growth happens only on
        // ACKs of grow rounds; hold rounds leave the window as it is.
        assert_eq!(windows, vec![1, 1, 2, 3, 4, 7, 8]);
        assert_eq!(&cam.decision[..], &[DEC_SS_GROW, DEC_HOLD, DEC_SS_GROW, DEC_HOLD, DEC_SS_GROW, DEC_HOLD, DEC_SS_EXIT]);
        // Exit: Diff = 8·(1 − 100/130) = 1.85 > γ = 1.
        assert!((cam.diff_buffers[6] - 8.0 * (1.0 - 100.0 / 130.0)).abs() < 1e-6);
        assert!(!c.slow_start);
        assert_eq!(w.ssthresh, w.cwnd);
    }

    #[test]
    fn linear_step_is_one_mss_per_window_with_delayed_acks() {
        // Increase decided at cwnd 10 segments; a delayed-ACK receiver acknowledges two segments
        // per ACK: five ACKs (one window of bytes) must add exactly one MSS, not half of one.
        let mut w = win(10 * M);
        let (cam, mut c) = round(&mut w, 100 * MS, 105 * MS, 10);
        assert_eq!(cam.decision[0], DEC_INCREASE);
        let log = SendLog::default();
        for k in 0..5u64 {
            let mut s = sample(2 * SEC0 + k, (3 + 2 * k) * M as u64, None);
            s.bytes_acked = 2 * M;
            c.on_ack(&mut w, &s, &view(&log, 2 * SEC0, 0), None);
        }
        assert_eq!(w.cwnd, 11 * M);
    }

    #[test]
    fn decision_completes_unfinished_step_and_counts_whole_segments() {
        // An increase whose RTT ended early (half the window ACKed): the next decision first
        // completes it, so the window judged is 11 segments, not 10.5.
        let log = SendLog::default();
        let mut c = cc();
        c.slow_start = false;
        let mut w = win(10 * M);
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        c.adjust = Some(Adjust { dir: 1, target: 11 * M, over: 10 * M, acc: 0 });
        w.cwnd = 10 * M + M / 2;
        for k in 0..11u64 {
            c.on_send(SEC0, k * M as u64, M, false);
        }
        let mut cam = CamTrace::default();
        c.on_ack(&mut w, &sample(SEC0 + 100 * MS, M as u64, None), &view(&log, SEC0, 0), Some(&mut cam));
        assert!(w.cwnd >= 11 * M);
        // Expected = 11 000 B / 0.1 s; Actual = 11 000 B / 0.1 s → Diff 0 → increase.
        assert!((cam.expected_bps[0] - 110_000.0).abs() < 1e-6, "{}", cam.expected_bps[0]);
        assert_eq!(cam.decision[0], DEC_INCREASE);
        // A fractional segment of cwnd is not in transit and does not count in Expected.
        let mut w = win(10 * M + 900);
        let (cam, _) = round(&mut w, 100 * MS, 100 * MS, 10);
        assert!((cam.expected_bps[0] - 100_000.0).abs() < 1e-6, "{}", cam.expected_bps[0]);
        assert_eq!(cam.decision[0], DEC_INCREASE);
    }

    /// Ten segments sent at t = 0..9 ms; fine RTT samples of 100 ms (RTO = 100 + 4·50 = 300 ms
    /// after the first sample, srtt 100 ms, rttvar 50 ms).
    fn loaded() -> (VegasCc, SendLog, CcWindow) {
        let mut c = cc();
        c.slow_start = false;
        let mut log = SendLog::default();
        let mut w = win(10 * M);
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        for k in 0..10u64 {
            log.on_send(k * MS, 1 + k * M as u64, 1 + (k + 1) * M as u64);
            c.on_send(k * MS, k * M as u64, M, false);
        }
        assert_eq!(c.fine_rto(), Some(300 * MS));
        (c, log, w)
    }

    #[test]
    fn first_dupack_retransmits_only_when_fine_timer_expired() {
        let (mut c, log, mut w) = loaded();
        // Oldest sent at 0; at 250 ms the fine timeout (300 ms) has not expired: no retransmit
        // on the first or second duplicate.
        assert_eq!(c.on_dupack(&mut w, &view(&log, 250 * MS, 1)), CcVerdict::Continue);
        assert_eq!(c.on_dupack(&mut w, &view(&log, 260 * MS, 2)), CcVerdict::Continue);
        assert_eq!(w.cwnd, 10 * M);
        // A fresh series: the first duplicate at 301 ms finds it expired → retransmit at once,
        // window × 3/4 = 7.5 → 7 segments, plus one for the duplicate that left.
        let (mut c, mut log, mut w) = loaded();
        assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
        assert_eq!(w.ssthresh, 7 * M);
        assert_eq!(w.cwnd, 8 * M);
        log.on_send(301 * MS, 1, 1 + M as u64); // the retransmission leaves
        c.on_send(301 * MS, 0, M, true);
        // Reno's third-duplicate rule does not fire a second time in the same series.
        assert_eq!(c.on_dupack(&mut w, &view(&log, 302 * MS, 2)), CcVerdict::Continue);
        assert_eq!(w.cwnd, 9 * M);
        assert_eq!(c.on_dupack(&mut w, &view(&log, 303 * MS, 3)), CcVerdict::Continue);
    }

    #[test]
    fn non_dup_ack_checks_first_and_second_only() {
        let (mut c, mut log, mut w) = loaded();
        assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
        log.on_send(301 * MS, 1, 1 + M as u64);
        c.on_send(301 * MS, 0, M, true);
        // 1st non-dup ACK (the retransmission's) at 400 ms: deflate to 7 segments; oldest is
        // now segment 1, sent at 1 ms → expired → retransmit; no second decrease (sent before
        // the last decrease at 301 ms).
        log.ack(400 * MS, 1 + M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 400 * MS, 0)), CcVerdict::RetransmitOldest);
        assert_eq!(w.cwnd, 7 * M);
        log.on_send(400 * MS, 1 + M as u64, 1 + 2 * M as u64);
        c.on_send(400 * MS, M as u64, M, true);
        // Its ACK (1st after that retransmission) and the next (2nd) each check segment 2, 3.
        log.ack(500 * MS, 1 + 2 * M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 500 * MS, 0)), CcVerdict::RetransmitOldest);
        log.on_send(500 * MS, 1 + 2 * M as u64, 1 + 3 * M as u64);
        c.on_send(500 * MS, 2 * M as u64, M, true);
        log.ack(600 * MS, 1 + 3 * M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 600 * MS, 0)), CcVerdict::RetransmitOldest);
        log.on_send(600 * MS, 1 + 3 * M as u64, 1 + 4 * M as u64);
        c.on_send(600 * MS, 3 * M as u64, M, true);
        // Single decrease for the four losses of one window.
        assert_eq!(c.loss_decreases, 1);
        assert_eq!(w.cwnd, 7 * M);
        // Without a retransmission, non-duplicate ACKs check nothing: two ACKs use up the
        // checks, the third does not look even though segment 6 is expired.
        let (mut c, mut log, mut w) = loaded();
        c.checks_left = 0;
        log.ack(900 * MS, 1 + 5 * M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 900 * MS, 0)), CcVerdict::Continue);
    }

    #[test]
    fn decrease_is_half_for_a_segment_already_retransmitted() {
        let (mut c, mut log, mut w) = loaded();
        assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
        log.on_send(301 * MS, 1, 1 + M as u64);
        c.on_send(301 * MS, 0, M, true);
        let _ = c.on_ack_check(&mut w, &view(&log, 302 * MS, 0)); // deflate to 7 segments
        c.checks_left = 0;
        // The retransmission is lost too: a new series at 700 ms; the segment was last sent at
        // 301 ms, after the last decrease (301 ms is not later than 301 ms → equal: no decrease),
        // so push the decrease mark back and check the 1/2 branch.
        c.last_decrease = Some(300 * MS);
        assert_eq!(c.on_dupack(&mut w, &view(&log, 700 * MS, 1)), CcVerdict::RetransmitOldest);
        assert_eq!(w.ssthresh, 3 * M); // 7 / 2 = 3.5 → 3 segments
        assert_eq!(c.loss_decreases, 2);
    }

    // ---- Survivors of the mutation check (README, Tests): each asserts one exact behaviour ----

    #[test]
    fn avg_rtt_divides_by_the_mean_fine_rtt_of_the_round() {
        // 002 §2.1 (Vegas 0.8): Actual = bytes / the average RTT measured during the round.
        // cwnd 10 segments, BaseRTT 100 ms; during the distinguished segment's round trip two
        // fine samples arrive, 140 ms and 100 ms (mean 120 ms); its own RTT is 100 ms.
        for (avg, actual, diff, dec) in [(true, 10_000.0 / 0.12, 10.0 * (1.0 - 100.0 / 120.0), DEC_HOLD), (false, 100_000.0, 0.0, DEC_INCREASE)] {
            let log = SendLog::default();
            let mut c = VegasCc::new(VegasParams { avg_rtt: avg, ..Default::default() });
            c.slow_start = false;
            let mut w = win(10 * M);
            c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
            for k in 0..10u64 {
                c.on_send(SEC0, k * M as u64, M, false);
            }
            let mut cam = CamTrace::default();
            // An ACK of older data (snd_una below the distinguished segment) with a 140 ms sample.
            let mut s = sample(SEC0 + 50 * MS, 0, Some(140 * MS));
            s.bytes_acked = 0;
            c.on_ack(&mut w, &s, &view(&log, SEC0 + 50 * MS, 0), Some(&mut cam));
            assert_eq!(cam.len(), 0, "an ACK below the distinguished segment does not decide");
            c.on_ack(&mut w, &sample(SEC0 + 100 * MS, M as u64, Some(100 * MS)), &view(&log, SEC0 + 100 * MS, 0), Some(&mut cam));
            assert_eq!(cam.len(), 1);
            assert!((cam.actual_bps[0] - actual).abs() < 1e-6, "avg {avg}: {}", cam.actual_bps[0]);
            assert!((cam.diff_buffers[0] - diff).abs() < 1e-9, "avg {avg}: {}", cam.diff_buffers[0]);
            assert_eq!(cam.decision[0], dec, "avg {avg}");
        }
        // With avg_rtt but no fine sample in the round, the distinguished segment's RTT (120 ms).
        let log = SendLog::default();
        let mut c = VegasCc::new(VegasParams::default());
        c.slow_start = false;
        let mut w = win(10 * M);
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        for k in 0..10u64 {
            c.on_send(SEC0, k * M as u64, M, false);
        }
        let mut cam = CamTrace::default();
        c.on_ack(&mut w, &sample(SEC0 + 120 * MS, M as u64, None), &view(&log, SEC0, 0), Some(&mut cam));
        assert!((cam.actual_bps[0] - 10_000.0 / 0.12).abs() < 1e-6, "{}", cam.actual_bps[0]);
    }

    #[test]
    fn ack_short_of_the_distinguished_segment_does_not_decide() {
        // The distinguished segment is bytes 0..1000: an ACK to 999 leaves the round running,
        // the ACK to exactly 1000 ends it.
        let log = SendLog::default();
        let mut c = cc();
        c.slow_start = false;
        let mut w = win(10 * M);
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        for k in 0..10u64 {
            c.on_send(SEC0, k * M as u64, M, false);
        }
        let mut cam = CamTrace::default();
        c.on_ack(&mut w, &sample(SEC0 + 100 * MS, M as u64 - 1, None), &view(&log, SEC0, 0), Some(&mut cam));
        assert_eq!(cam.len(), 0);
        c.on_ack(&mut w, &sample(SEC0 + 120 * MS, M as u64, None), &view(&log, SEC0, 0), Some(&mut cam));
        assert_eq!(cam.len(), 1);
        assert_eq!(cam.t[0], SEC0 + 120 * MS);
        // RTT 120 ms → Diff 10·(1 − 100/120) = 1.667: hold.
        assert!((cam.diff_buffers[0] - 10.0 / 6.0).abs() < 1e-9);
    }

    /// One slow-start round (not yet a growth epoch): BaseRTT `base`, RTT `rtt`, `segs` sent.
    fn ss_round(w: &mut CcWindow, base: Nanos, rtt: Nanos, segs: u64) -> (CamTrace, VegasCc) {
        let log = SendLog::default();
        let mut c = cc();
        c.on_ack(w, &sample(0, 0, Some(base)), &view(&log, 0, 0), None);
        for k in 0..segs {
            c.on_send(SEC0, k * M as u64, M, false);
        }
        let mut cam = CamTrace::default();
        c.on_ack(w, &sample(SEC0 + rtt, M as u64, None), &view(&log, SEC0 + rtt, 0), Some(&mut cam));
        (cam, c)
    }

    #[test]
    fn gamma_is_strict() {
        // cwnd 5 segments, BaseRTT 100 ms: Diff = 5·(1 − 100/125) = 1.0 exactly = γ → grow;
        // at 130 ms Diff = 1.154 > γ → leave slow start with ssthresh = cwnd.
        let mut w = win(5 * M);
        let (cam, c) = ss_round(&mut w, 100 * MS, 125 * MS, 5);
        assert_eq!(cam.diff_buffers[0], 1.0);
        assert_eq!(cam.decision[0], DEC_SS_GROW);
        assert!(c.slow_start && c.ss_grow);
        assert_eq!(w.ssthresh, 65535);
        let mut w = win(5 * M);
        let (cam, c) = ss_round(&mut w, 100 * MS, 130 * MS, 5);
        assert_eq!(cam.decision[0], DEC_SS_EXIT);
        assert!(!c.slow_start);
        assert_eq!(w.ssthresh, 5 * M);
    }

    #[test]
    fn linear_steps_follow_the_bytes_of_uneven_acks() {
        // Increase decided at 10 segments: each ACK adds MSS × bytes_acked / 10 000 B, the
        // remainder carried: 3000 B → +300, 1500 B → +150, 333 B → +33 (rem 3 000 000 − ...),
        // 4167 B → the rest, capped at the target 11 000.
        let mut w = win(10 * M);
        let (cam, mut c) = round(&mut w, 100 * MS, 105 * MS, 10);
        assert_eq!(cam.decision[0], DEC_INCREASE);
        let log = SendLog::default();
        let mut una = 2 * M as u64;
        let mut step = |c: &mut VegasCc, w: &mut CcWindow, bytes: u32| {
            una += bytes as u64;
            let mut s = sample(2 * SEC0, una, None);
            s.bytes_acked = bytes;
            c.on_ack(w, &s, &view(&log, 2 * SEC0, 0), None);
            w.cwnd
        };
        assert_eq!(step(&mut c, &mut w, 3000), 10_300);
        assert_eq!(step(&mut c, &mut w, 1500), 10_450);
        assert_eq!(step(&mut c, &mut w, 333), 10_483);
        // 333 000 − 33·10 000 = 3000 carried; 67 B → 67 000 + 3000 = 70 000 → +7 exactly.
        assert_eq!(step(&mut c, &mut w, 67), 10_490);
        assert_eq!(step(&mut c, &mut w, 9000), 11_000);
        assert_eq!(step(&mut c, &mut w, 9000), 11_000, "stops at the target");
        // Decrease decided at 5 segments (RTT 1 s): 1000 B → −200, 2500 B → −500, then capped at 4000.
        let mut w = win(5 * M);
        let (cam, mut c) = round(&mut w, 100 * MS, SEC0, 5);
        assert_eq!(cam.decision[0], DEC_DECREASE);
        let mut una = 2 * M as u64;
        let mut step = |c: &mut VegasCc, w: &mut CcWindow, bytes: u32| {
            una += bytes as u64;
            let mut s = sample(3 * SEC0, una, None);
            s.bytes_acked = bytes;
            c.on_ack(w, &s, &view(&log, 3 * SEC0, 0), None);
            w.cwnd
        };
        assert_eq!(step(&mut c, &mut w, 1000), 4800);
        assert_eq!(step(&mut c, &mut w, 2500), 4300);
        assert_eq!(step(&mut c, &mut w, 5000), 4000);
        assert!(c.adjust.is_none());
    }

    #[test]
    fn decision_applies_only_a_sub_mss_remainder_of_the_last_step() {
        let log = SendLog::default();
        // (step direction, target, cwnd when the round ends, cwnd the decision judges)
        // Applied: a remainder of 1..MSS−1 bytes. Not applied: exactly one MSS or more (the step
        // had hardly begun). (A window at or past the target cannot get here: the ACK's own
        // step clamps it to the target and ends the adjustment first.)
        for (dir, target, cwnd, judged) in [
            (-1i8, 9 * M, 9 * M + 500, 9 * M),
            (1, 11 * M, 11 * M - 1, 11 * M),
            (1, 11 * M, 9 * M, 9 * M),
            (1, 11 * M, 10 * M, 10 * M),
            (-1, 9 * M, 10 * M, 10 * M),
        ] {
            let mut c = cc();
            c.slow_start = false;
            let mut w = win(cwnd);
            c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
            c.adjust = Some(Adjust { dir, target, over: 10 * M, acc: 0 });
            for k in 0..9u64 {
                c.on_send(SEC0, k * M as u64, M, false);
            }
            let mut cam = CamTrace::default();
            let mut s = sample(SEC0 + 100 * MS, M as u64, None);
            s.bytes_acked = 0;
            c.on_ack(&mut w, &s, &view(&log, SEC0, 0), Some(&mut cam));
            let segs = (judged / M) as f64;
            assert!((cam.expected_bps[0] - segs * M as f64 / 0.1).abs() < 1e-6, "{dir} {target} {cwnd}: {}", cam.expected_bps[0]);
        }
    }

    #[test]
    fn segment_sent_at_the_instant_of_the_last_decrease_does_not_decrease_again() {
        // 000 §4.5: decrease only for segments sent *after* the last decrease. Segment 0 left
        // at t = 0; a decrease at t = 0 makes its retransmission leave the window alone.
        let (mut c, log, mut w) = loaded();
        c.last_decrease = Some(0);
        assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
        assert_eq!(c.loss_decreases, 0);
        assert_eq!(w.ssthresh, 65535);
        assert_eq!(w.cwnd, 11 * M, "window kept, plus one MSS for the duplicate");
        assert_eq!(c.vegas_retransmits, 1);
        // Segment 1 left at 1 ms, after that decrease: 10 → 7 segments (+1 for the duplicate).
        let (mut c, mut log, mut w) = loaded();
        c.last_decrease = Some(0);
        log.ack(300 * MS, 1 + M as u64);
        assert_eq!(c.on_dupack(&mut w, &view(&log, 302 * MS, 1)), CcVerdict::RetransmitOldest);
        assert_eq!(c.loss_decreases, 1);
        assert_eq!(w.ssthresh, 7 * M);
        assert_eq!(w.cwnd, 8 * M);
    }

    #[test]
    fn vegas_retransmits_counts_each_retransmission_decided_here() {
        let (mut c, mut log, mut w) = loaded();
        assert_eq!(c.vegas_retransmits, 0);
        assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
        assert_eq!(c.vegas_retransmits, 1);
        log.on_send(301 * MS, 1, 1 + M as u64);
        c.on_send(301 * MS, 0, M, true);
        log.ack(400 * MS, 1 + M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 400 * MS, 0)), CcVerdict::RetransmitOldest);
        assert_eq!(c.vegas_retransmits, 2);
        assert_eq!(c.loss_decreases, 1);
    }

    #[test]
    fn only_the_first_two_non_duplicate_acks_after_a_retransmission_are_checked() {
        // A third-duplicate retransmission at 250 ms (fine timer not expired: RTO 300 ms).
        let (mut c, mut log, mut w) = loaded();
        assert_eq!(c.on_dupack(&mut w, &view(&log, 250 * MS, 3)), CcVerdict::RetransmitOldest);
        assert_eq!(c.checks_left, 2);
        log.on_send(250 * MS, 1, 1 + M as u64);
        c.on_send(250 * MS, 0, M, true);
        // 1st and 2nd non-duplicate ACKs: the oldest segments (sent at 1 and 2 ms) have not
        // expired at 260 / 270 ms.
        log.ack(260 * MS, 1 + M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 260 * MS, 0)), CcVerdict::Continue);
        assert_eq!(c.checks_left, 1);
        log.ack(270 * MS, 1 + 2 * M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 270 * MS, 0)), CcVerdict::Continue);
        assert_eq!(c.checks_left, 0);
        // 3rd: segment 2 (sent at 2 ms) has expired at 400 ms, but it is not checked.
        log.ack(280 * MS, 1 + 3 * M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 400 * MS, 0)), CcVerdict::Continue);
        assert_eq!(c.checks_left, 0);
        assert_eq!(c.vegas_retransmits, 1);
        // Whereas the 2nd check does retransmit an expired segment.
        let (mut c, mut log, mut w) = loaded();
        assert_eq!(c.on_dupack(&mut w, &view(&log, 250 * MS, 3)), CcVerdict::RetransmitOldest);
        log.on_send(250 * MS, 1, 1 + M as u64);
        c.on_send(250 * MS, 0, M, true);
        log.ack(260 * MS, 1 + M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 260 * MS, 0)), CcVerdict::Continue);
        log.ack(270 * MS, 1 + 2 * M as u64);
        assert_eq!(c.on_ack_check(&mut w, &view(&log, 400 * MS, 0)), CcVerdict::RetransmitOldest);
    }

    #[test]
    fn an_ack_covering_a_retransmitted_byte_gives_no_fine_sample() {
        // Karn per segment: bytes 0..1000 were retransmitted; the ACK that first covers them
        // (snd_una 0 → 1000) gives no sample even if the send log offers one; the next ACK does.
        let log = SendLog::default();
        let mut c = cc();
        let mut w = win(10 * M);
        c.on_send(0, 0, M, false);
        c.on_send(MS, M as u64, M, false);
        c.on_send(500 * MS, 0, M, true);
        c.on_ack(&mut w, &sample(600 * MS, M as u64, Some(100 * MS)), &view(&log, 600 * MS, 0), None);
        assert_eq!(c.fine_rto(), None);
        assert_eq!(c.base_rtt, None);
        c.on_ack(&mut w, &sample(601 * MS, 2 * M as u64, Some(120 * MS)), &view(&log, 601 * MS, 0), None);
        // First sample 120 ms: srtt 120, rttvar 60 → RTO 120 + 240 = 360 ms.
        assert_eq!(c.fine_rto(), Some(360 * MS));
        assert_eq!(c.base_rtt, Some(120 * MS));
    }

    #[test]
    fn vegas_recovery_passes_every_decision_to_the_cc() {
        use crate::recovery::LossRecovery;
        let mut r = VegasRecovery;
        assert_eq!(r.name(), "vegas");
        assert!(!r.in_recovery());
        let mut c = cc();
        let mut w = win(10 * M);
        let mut ctx = RecoveryCtx { now: SEC0, w: &mut w, cc: &mut c, snd_una: 0, snd_nxt: 10 * M as u64, snd_max: 10 * M as u64, snd_wnd: 65535, dupacks: 3, dupack_threshold: 3, sack: &[] };
        let o = r.on_dupack(&mut ctx);
        assert_eq!((o.retransmit, o.entered, o.fast_retransmit, o.allow_growth), (None, false, false, false));
        let o = r.on_ack(&mut ctx, M as u64);
        assert!(o.allow_growth, "Vegas' own window rules run on every ACK");
        assert_eq!((o.retransmit, o.exited), (None, false));
        r.on_timeout(&mut ctx);
        assert!(!r.in_recovery());
        assert_eq!(w, win(10 * M), "the recovery never touches the window");
    }

    // ---- Vegas* (000 §4.4, reading 11) ----

    /// Vegas* at the start of a slow-start *growth* epoch that began with `segs` segments of
    /// window, BaseRTT `base`, a probe armed (as `decide` arms it).
    fn star(base: Nanos, segs: u32) -> (VegasCc, CcWindow) {
        let mut c = VegasCc::new(VegasParams { avg_rtt: false, star: true, ..Default::default() });
        c.base_rtt = Some(base);
        c.ss_grow = true;
        c.epoch_segments = segs;
        c.star_probe = Some(StarProbe::default());
        // No CAM round running: these tests look at the probe alone.
        c.want_dist = false;
        (c, win(segs * M))
    }

    /// An ACK at `t` advancing snd_una to `una` segments (no RTT sample, no distinguished segment).
    fn star_ack(c: &mut VegasCc, w: &mut CcWindow, t: Nanos, una: u64) {
        let log = SendLog::default();
        c.on_ack(w, &sample(t, una * M as u64, None), &view(&log, t, 0), None);
    }

    /// The four probe segments (0..4) leave back to back at `t`.
    fn star_send_probe(c: &mut VegasCc, t: Nanos) {
        for k in 0..4u64 {
            c.on_send(t + k, k * M as u64, M, false);
        }
    }

    #[test]
    fn star_estimate_from_four_segments_sets_ssthresh() {
        // The thesis' numbers: MSS 1 KB, ACKs 5 ms apart → 200 KB/s; BaseRTT 100 ms.
        // ACKs of the four probe segments at 100, 105, 110, 115 ms: 3000 B / 15 ms = 200 000 B/s;
        // ssthresh = 200 000 B/s × 0.1 s = 20 000 B = 20 segments.
        let (mut c, mut w) = star(100 * MS, 4);
        let t0 = SEC0;
        star_send_probe(&mut c, t0);
        c.ss_grow = false; // the growth epoch ends; its probe was complete
        for k in 0..3u64 {
            star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
            assert_eq!(c.star_bw, None, "no estimate before the fourth segment's ACK");
            assert_eq!(w.ssthresh, 65535);
        }
        star_ack(&mut c, &mut w, t0 + 115 * MS, 4);
        let bw = c.star_bw.expect("estimate after the fourth ACK");
        assert_eq!(bw, 200_000.0);
        assert_eq!(w.ssthresh, 20 * M);
        assert!(c.star_probe.is_none(), "a probe gives one estimate");
        // A delayed-ACK receiver: one ACK covers segments 1-2 (at 100 ms), the next 3-4
        // (10 ms later): 2000 B / 10 ms = 200 000 B/s again.
        let (mut c, mut w) = star(100 * MS, 4);
        star_send_probe(&mut c, t0);
        star_ack(&mut c, &mut w, t0 + 100 * MS, 2);
        star_ack(&mut c, &mut w, t0 + 110 * MS, 4);
        assert_eq!(c.star_bw, Some(200_000.0));
        assert_eq!(w.ssthresh, 20 * M);
        // Whole segments, rounded down: with BaseRTT 47 ms, 200 000 × 0.047 = 9 400 B → 9 segments.
        let (mut c, mut w) = star(47 * MS, 4);
        star_send_probe(&mut c, t0);
        for k in 0..4u64 {
            star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
        }
        assert_eq!(w.ssthresh, 9 * M);
        // ... and never below 2 segments: 10 ms spacing (100 000 B/s) × 5 ms BaseRTT = 0.5 segment.
        let (mut c, mut w) = star(5 * MS, 4);
        star_send_probe(&mut c, t0);
        for k in 0..4u64 {
            star_ack(&mut c, &mut w, t0 + 100 * MS + k * 10 * MS, k + 1);
        }
        assert_eq!(w.ssthresh, 2 * M);
        // One (stretch) ACK covering the first and the fourth segment: no spacing, no estimate.
        let (mut c, mut w) = star(100 * MS, 4);
        star_send_probe(&mut c, t0);
        star_ack(&mut c, &mut w, t0 + 100 * MS, 4);
        assert_eq!(c.star_bw, None);
        assert!(c.star_probe.is_none());
        assert_eq!(w.ssthresh, 65535);
    }

    #[test]
    fn star_probe_needs_four_segments_of_one_growth_epoch_without_retransmission() {
        let t0 = SEC0;
        // The epoch ends (hold) after three probe segments: the fourth does not join the probe.
        let (mut c, mut w) = star(100 * MS, 4);
        for k in 0..3u64 {
            c.on_send(t0, k * M as u64, M, false);
        }
        c.ss_grow = false;
        c.on_send(t0 + MS, 3 * M as u64, M, false);
        assert!(c.star_probe.is_none());
        for k in 0..4u64 {
            star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
        }
        assert_eq!(c.star_bw, None);
        // A retransmission among the probe's segments abandons it (Karn).
        let (mut c, mut w) = star(100 * MS, 4);
        star_send_probe(&mut c, t0);
        c.on_send(t0 + 50 * MS, 0, M, true);
        for k in 0..4u64 {
            star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
        }
        assert_eq!(c.star_bw, None);
        // Zero-length sends (a FIN or window probe without data) are not probe segments.
        let (mut c, _) = star(100 * MS, 4);
        c.on_send(t0, 0, 0, false);
        assert_eq!(c.star_probe.map(|q| q.sent), Some(0));
        // `decide` arms a probe when a growth epoch starts with at least three segments, and
        // only for Vegas*: end of a hold epoch with Diff 0 (RTT = BaseRTT).
        for (star, segs, armed) in [(true, 3, true), (true, 2, false), (false, 4, false)] {
            let mut c = VegasCc::new(VegasParams { avg_rtt: false, star, ..Default::default() });
            let mut w = win(segs * M);
            let log = SendLog::default();
            c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
            for k in 0..segs as u64 {
                c.on_send(t0, k * M as u64, M, false);
            }
            let mut cam = CamTrace::default();
            c.on_ack(&mut w, &sample(t0 + 100 * MS, M as u64, None), &view(&log, t0 + 100 * MS, 0), Some(&mut cam));
            assert_eq!(cam.decision[0], DEC_SS_GROW);
            assert_eq!(c.star_probe.is_some(), armed, "star {star}, {segs} segments");
        }
        // A probe that was not complete when its growth epoch ended is dropped by `decide`.
        let mut c = VegasCc::new(VegasParams { avg_rtt: false, star: true, ..Default::default() });
        let mut w = win(4 * M);
        let log = SendLog::default();
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        c.ss_grow = true;
        c.star_probe = Some(StarProbe::default());
        c.on_send(t0, 0, M, false); // distinguished and first probe segment
        c.on_ack(&mut w, &sample(t0 + 100 * MS, M as u64, None), &view(&log, t0 + 100 * MS, 0), None);
        assert!(!c.ss_grow);
        assert!(c.star_probe.is_none());
    }

    #[test]
    fn star_probe_through_the_epochs_estimate_then_paced_growth() {
        // A whole Vegas* slow start from a 4-segment hold epoch, BaseRTT 100 ms, bottleneck
        // 200 KB/s (5 ms per 1 KB segment), driven through `decide` as on a path.
        let log = SendLog::default();
        let mut c = VegasCc::new(VegasParams { avg_rtt: false, star: true, ..Default::default() });
        let mut w = win(4 * M);
        let t0 = SEC0;
        let mut cam = CamTrace::default();
        let mut seq = 0u64;
        let mut send = |c: &mut VegasCc, t: Nanos, n: u64| {
            for _ in 0..n {
                c.on_send(t, seq * M as u64, M, false);
                seq += 1;
            }
        };
        let ack = |c: &mut VegasCc, w: &mut CcWindow, cam: &mut CamTrace, t: Nanos, una: u64| {
            c.on_ack(w, &sample(t, una * M as u64, None), &view(&log, t, 0), Some(cam));
        };
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        // Hold epoch: segments 0-3; segment 0's ACK at +100 ms, Diff 0 → grow, probe armed.
        send(&mut c, t0, 4);
        ack(&mut c, &mut w, &mut cam, t0 + 100 * MS, 1);
        assert_eq!(cam.decision[0], DEC_SS_GROW);
        // Growth epoch: segment 4 (distinguished, probe 1), then two per ACK: 5-6, 7-8, 9-10.
        send(&mut c, t0 + 100 * MS, 1);
        for (k, una) in [(1u64, 2u64), (2, 3), (3, 4)] {
            // ACKs of the hold epoch's segments, below the first probe segment: not timed.
            ack(&mut c, &mut w, &mut cam, t0 + 100 * MS + k * 5 * MS, una);
            send(&mut c, t0 + 100 * MS + k * 5 * MS, 2);
        }
        assert_eq!(w.cwnd, 7 * M);
        // Segment 4's ACK at +200 ms ends the growth epoch (cwnd 8): the probe was complete and
        // stays; its timing starts here.
        ack(&mut c, &mut w, &mut cam, t0 + 200 * MS, 5);
        assert_eq!(cam.decision[1], DEC_HOLD);
        assert_eq!(w.cwnd, 8 * M);
        assert_eq!(w.ssthresh, 65535);
        // Hold epoch: segments 11-18, one per ACK; the ACK of segment 7 (snd_una 8) at +215 ms
        // completes the probe: 3000 B / 15 ms = 200 000 B/s; threshold 200 000 × 0.1 s = 20 segments.
        send(&mut c, t0 + 200 * MS, 2);
        for (k, una) in [(1u64, 6u64), (2, 7), (3, 8), (4, 9), (5, 10), (6, 11)] {
            ack(&mut c, &mut w, &mut cam, t0 + 200 * MS + k * 5 * MS, una);
            send(&mut c, t0 + 200 * MS + k * 5 * MS, 1);
            if una == 8 {
                assert_eq!(c.star_bw, Some(200_000.0));
                assert_eq!(w.ssthresh, 20 * M);
            }
        }
        assert_eq!(w.cwnd, 8 * M);
        // Segment 11's ACK at +300 ms: 8 segments in 100 ms, Diff 0 → grow again (8 < 20).
        ack(&mut c, &mut w, &mut cam, t0 + 300 * MS, 12);
        assert_eq!(cam.decision[2], DEC_SS_GROW);
        // Now paced: the first ACK of this growth epoch schedules its increase 8 expected ACKs
        // × 5 ms = 40 ms later, and the window holds until then.
        send(&mut c, t0 + 300 * MS, 1);
        ack(&mut c, &mut w, &mut cam, t0 + 305 * MS, 13);
        assert_eq!(w.cwnd, 8 * M);
        assert_eq!(c.next_timer(), Some(t0 + 345 * MS));
    }

    #[test]
    fn star_two_acks_at_one_instant_give_no_estimate() {
        let (mut c, mut w) = star(100 * MS, 4);
        star_send_probe(&mut c, SEC0);
        star_ack(&mut c, &mut w, SEC0 + 100 * MS, 1);
        star_ack(&mut c, &mut w, SEC0 + 100 * MS, 4);
        assert_eq!(c.star_bw, None);
        assert!(c.star_probe.is_none());
        assert_eq!(w.ssthresh, 65535);
    }

    #[test]
    fn star_estimate_reached_ends_slow_start_at_the_threshold() {
        // After an estimate of 200 KB/s × 40 ms (ssthresh 8 segments), a growth epoch that
        // started at 4 segments grows to 8 and stops; the end of the next epoch leaves slow start
        // with the decision "reached the threshold window" and keeps ssthresh = 8 segments.
        let (mut c, mut w) = star(40 * MS, 4);
        let t0 = SEC0;
        star_send_probe(&mut c, t0);
        // The probe's ACKs come in the next (hold) epoch: the window does not move.
        c.ss_grow = false;
        for k in 0..4u64 {
            star_ack(&mut c, &mut w, t0 + 40 * MS + k * 5 * MS, k + 1);
        }
        assert_eq!(w.ssthresh, 8 * M);
        assert_eq!(w.cwnd, 4 * M);
        // Next growth epoch: four ACKs, each scheduling its increase.
        c.ss_grow = true;
        for k in 0..4u64 {
            star_ack(&mut c, &mut w, t0 + 80 * MS + k * 5 * MS, 5 + k);
        }
        assert_eq!(w.cwnd, 4 * M);
        let fired: Vec<Nanos> = std::iter::from_fn(|| {
            let t = c.next_timer()?;
            c.on_timer(t, &mut w);
            Some(t)
        })
        .collect();
        assert_eq!(fired.len(), 4, "each of the four ACKs scheduled its increase");
        assert_eq!(w.cwnd, 8 * M);
        let log = SendLog::default();
        c.ss_grow = false;
        c.want_dist = true;
        c.on_send(t0 + SEC0, 10 * M as u64, M, false);
        let mut cam = CamTrace::default();
        c.on_ack(&mut w, &sample(t0 + SEC0 + 40 * MS, 11 * M as u64, None), &view(&log, t0 + SEC0, 0), Some(&mut cam));
        assert_eq!(cam.decision[0], DEC_SS_EXIT);
        assert!(!c.slow_start);
        assert_eq!(w.ssthresh, 8 * M);
    }

    #[test]
    fn star_increases_are_scheduled_at_the_expected_ack_spacing() {
        // Estimate 200 KB/s (5 ms per 1 KB segment), ssthresh 8 segments (BaseRTT 40 ms); the
        // next growth epoch starts at 4 segments: each ACK schedules its +1 MSS 4 ACKs × 5 ms =
        // 20 ms later (the thesis' "5×4" example) instead of growing at once.
        let (mut c, mut w) = star(40 * MS, 4);
        c.star_probe = None;
        c.star_bw = Some(200_000.0);
        w.ssthresh = 8 * M;
        let t0 = SEC0;
        for k in 0..3u64 {
            star_ack(&mut c, &mut w, t0 + k * 5 * MS, k + 1);
            assert_eq!(w.cwnd, 4 * M);
        }
        assert_eq!(c.next_timer(), Some(t0 + 20 * MS));
        // Not due yet: nothing happens a nanosecond early.
        c.on_timer(t0 + 20 * MS - 1, &mut w);
        assert_eq!(w.cwnd, 4 * M);
        c.on_timer(t0 + 20 * MS, &mut w);
        assert_eq!(w.cwnd, 5 * M);
        assert_eq!(c.next_timer(), Some(t0 + 25 * MS));
        // A late timer call applies everything due by then (25 and 30 ms).
        c.on_timer(t0 + 31 * MS, &mut w);
        assert_eq!(w.cwnd, 7 * M);
        assert_eq!(c.next_timer(), None);
        // Increases stop at ssthresh: five more ACKs take the window to 8 segments, not 12.
        for k in 3..8u64 {
            star_ack(&mut c, &mut w, t0 + k * 5 * MS, k + 1);
        }
        while let Some(t) = c.next_timer() {
            c.on_timer(t, &mut w);
        }
        assert_eq!(w.cwnd, 8 * M);
    }

    #[test]
    fn star_pending_increases_are_dropped_on_timeout_and_plain_vegas_never_schedules() {
        let (mut c, mut w) = star(SEC0, 4);
        c.star_bw = Some(200_000.0);
        let t0 = SEC0;
        star_ack(&mut c, &mut w, t0, 1);
        assert_eq!(c.next_timer(), Some(t0 + 20 * MS));
        c.on_timeout(&mut w);
        assert_eq!(c.next_timer(), None);
        assert!(c.star_probe.is_none());
        // Plain Vegas: the same ACKs grow the window at once and nothing is estimated.
        let mut c = cc();
        c.want_dist = false;
        c.ss_grow = true;
        c.epoch_segments = 4;
        c.base_rtt = Some(SEC0);
        let mut w = win(4 * M);
        for k in 0..4u64 {
            c.on_send(t0 + k, k * M as u64, M, false);
        }
        for k in 0..6u64 {
            star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
        }
        assert_eq!(w.cwnd, 10 * M);
        assert_eq!(c.star_bw, None);
        assert_eq!(c.next_timer(), None);
    }
}
