//! Sender rate pacing on the host's clock, as Linux's TCP internal pacing does it
//! (net/ipv4/tcp_output.c: `tcp_update_skb_after_send`, `tcp_pacing_check`, the pacing hrtimer;
//! the same release times the fq qdisc enforces with `skb->tstamp`).
//!
//! A congestion control that sets a rate ([`crate::cc::CongestionControl::pacing_rate`], BBR) makes
//! every data segment advance a release clock `pace_next` (Linux `tcp_wstamp_ns`):
//! `pace_next = max(pace_next, now) + len·10⁹/rate` (payload bytes, integer nanoseconds as
//! `div64_ul`). A data segment may leave only when `now ≥ pace_next`; otherwise the endpoint arms a
//! wake-up at `pace_next` ([`crate::Endpoint::next_timer`]) and sends when the host calls
//! `on_timer` and polls again. No rate, no clock: window-based CCs are untouched.
//!
//! As Linux, the first 10 data segments of a connection do not advance the clock
//! (`tp->data_segs_out >= 10`), so the initial window leaves as a burst.
//!
//! Deliberate deviations from Linux:
//! * no "OS jitter" credit (`len_ns -= min(len_ns/2, credit)`): the simulator's clock has none;
//! * a forced single retransmission (fast retransmit, partial ACK, a CC's request) and a zero-window
//!   probe leave at once; they still advance the clock. Linux paces them too;
//! * the rate is read when a segment leaves (Linux reads `sk_pacing_rate` at the same point).

use super::Endpoint;
use crate::{Nanos, SEC};

/// Linux paces only once this many data segments have left (`tp->data_segs_out >= 10`).
const UNPACED_SEGMENTS: u64 = 10;

/// The endpoint's pacing clock.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PacingClock {
    /// Earliest time the next paced data segment may leave (Linux `tcp_wstamp_ns`).
    next: Nanos,
    /// A wake-up armed because a segment was held (Linux's pacing hrtimer).
    wake: crate::opt64::Opt64,
}

impl Endpoint {
    /// Whether a data segment must wait for the pacing clock now; arms the wake-up if so.
    pub(super) fn pacing_holds(&mut self, now: Nanos) -> bool {
        if !self.hooks.cc() || self.pacing.next <= now || self.cc.pacing_rate().is_none() {
            return false;
        }
        self.pacing.wake = crate::opt64::Opt64::some(self.pacing.next);
        true
    }

    /// A data segment of `len` payload bytes left now: advance the release clock.
    pub(super) fn pacing_on_send(&mut self, now: Nanos, len: u32) {
        if !self.hooks.cc() {
            return;
        }
        let Some(rate) = self.cc.pacing_rate().filter(|r| *r > 0) else { return };
        // Counted after this segment, as Linux increments data_segs_out before the check.
        if self.stats.data_segments_sent < UNPACED_SEGMENTS {
            return;
        }
        let len_ns = len as u64 * SEC / rate;
        self.pacing.next = self.pacing.next.max(now) + len_ns;
    }

    /// The pacing wake-up, if one is armed.
    pub(super) fn pacing_deadline(&self) -> Option<Nanos> {
        self.pacing.wake.get()
    }

    /// The wake-up passed: the host polls `poll_transmit` next, which sends.
    pub(super) fn pacing_on_timer(&mut self, now: Nanos) {
        if self.pacing.wake.get().is_some_and(|t| t <= now) {
            self.pacing.wake = crate::opt64::Opt64::NONE;
        }
    }

    /// The time the next paced segment may leave (tests, traces); `None` when not rate-paced.
    pub fn pacing_next_release(&self) -> Option<Nanos> {
        self.cc.pacing_rate().map(|_| self.pacing.next)
    }
}
