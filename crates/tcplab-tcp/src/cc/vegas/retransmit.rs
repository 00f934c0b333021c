//! Vegas' retransmission mechanisms (seed 000 §4.5, seed 002 §2.2/§6.1; readings 6–9 of
//! [`super`]): the fine-grained timeout, the retransmit-on-first-duplicate decision, the checks of
//! the first two non-duplicate ACKs after a retransmission, and the 3/4 (or 1/2) decrease.

use super::VegasCc;
use crate::cc::{CcVerdict, CcWindow, SenderView};
use crate::sendlog::SendRecord;
use crate::Nanos;

impl VegasCc {
    pub(super) fn fine_sample(&mut self, r: Nanos) {
        self.fine.sample(r);
        self.base_rtt = Some(self.base_rtt.map_or(r, |b| b.min(r)));
    }

    pub(super) fn expired(&self, now: Nanos, r: &SendRecord) -> bool {
        matches!(self.fine_rto(), Some(rto) if now.saturating_sub(r.sent_at) > rto)
    }

    /// Decide a retransmission of the oldest segment; reduce the window if it was sent after the
    /// last decrease. `dupacks` already received in this series (for the inflation).
    pub(super) fn retransmit(&mut self, w: &mut CcWindow, old: &SendRecord, now: Nanos, dupacks: u32, snd_wnd: u32) -> CcVerdict {
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

    /// A duplicate ACK: retransmit the oldest segment if its fine timeout expired (or on the
    /// third duplicate, once per series); else inflate during a Vegas retransmission episode.
    pub(super) fn dupack_verdict(&mut self, w: &mut CcWindow, v: &SenderView<'_>) -> CcVerdict {
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

    /// A non-duplicate ACK: deflate after a retransmission episode, then check the first and
    /// second non-duplicate ACKs after a retransmission (reading 9).
    pub(super) fn ack_check_verdict(&mut self, w: &mut CcWindow, v: &SenderView<'_>) -> CcVerdict {
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
}
