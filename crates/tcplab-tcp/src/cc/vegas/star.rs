//! Vegas* (seed 000 §4.4, Fig 4.7; reading 11 of [`super`]): the available-bandwidth probe over
//! four segments of a growth epoch, the threshold window from it, and the paced slow-start
//! increases; also the plain slow-start step both share.

use super::VegasCc;
use crate::cc::CcWindow;
use crate::Nanos;

impl VegasCc {
    /// Vegas*: follow the probe's ACKs; from the ACK that covers its fourth segment, the
    /// estimate (bytes acknowledged since the ACK that covered the first, over the time between
    /// the two ACKs) and the threshold window = estimate × BaseRTT (reading 11).
    pub(super) fn star_on_ack(&mut self, w: &mut CcWindow, now: Nanos, snd_una: u64) {
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
    pub(super) fn ss_increase(w: &mut CcWindow) {
        let cap = w.max_cwnd.min(w.ssthresh.max(w.mss));
        if w.cwnd < cap {
            w.cwnd = w.cwnd.saturating_add(w.mss).min(cap);
        }
    }

    /// An ACK in a slow-start growth epoch: +1 MSS now, or with a Vegas* estimate one increase
    /// scheduled at the expected ACK spacing (000 §4.4).
    pub(super) fn ss_grow_on_ack(&mut self, w: &mut CcWindow, now: Nanos) {
        if !self.ss_grow {
            return;
        }
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

    /// A transmission: record it as one of the probe's four segments, or abandon the probe
    /// (a retransmission, Karn; a segment outside a growth epoch).
    pub(super) fn star_on_send(&mut self, seq: u64, len: u32, retransmit: bool) {
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
    }

    /// Vegas*'s scheduled increases that fell due.
    pub(super) fn star_on_timer(&mut self, now: Nanos, w: &mut CcWindow) {
        while matches!(self.star_pending.front(), Some(&t) if t <= now) {
            self.star_pending.pop_front();
            if self.slow_start {
                Self::ss_increase(w);
            }
        }
    }
}
