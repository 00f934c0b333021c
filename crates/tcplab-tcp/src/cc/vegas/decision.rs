//! The once-per-RTT CAM decision (seed 000 §4.3/§4.4; readings 1–5 of [`super`]): Expected,
//! Actual, Diff against α/β (γ in slow start), and the ±1 MSS spread over the next RTT.

use super::{Adjust, Distinguished, StarProbe, VegasCc, DEC_DECREASE, DEC_HOLD, DEC_INCREASE, DEC_SS_EXIT, DEC_SS_GROW};
use crate::cc::CcWindow;
use crate::trace::CamTrace;
use crate::Nanos;

impl VegasCc {
    /// End of the distinguished segment's round trip: the CAM decision.
    pub(super) fn decide(&mut self, w: &mut CcWindow, d: Distinguished, now: Nanos, cam: Option<&mut CamTrace>) {
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

    /// Reading 4: one step of the ±1 MSS the last decision spread over this RTT, in proportion
    /// to the bytes this ACK covers.
    pub(super) fn linear_step(&mut self, w: &mut CcWindow, bytes_acked: u32) {
        let Some(a) = self.adjust.as_mut() else { return };
        // Proportional to the bytes this ACK covers, not one step per ACK: a window's worth
        // of acknowledged bytes (one RTT) moves cwnd by exactly one MSS whatever the
        // receiver's ACK frequency. Per-ACK steps of MSS²/cwnd (Reno's rule) give only half
        // an MSS per RTT against a delayed-ACK receiver (one ACK per two segments).
        a.acc += bytes_acked as u64 * w.mss as u64;
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
}
