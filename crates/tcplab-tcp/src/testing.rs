//! Hooks for this crate's integration tests (`tests/endpoint/`), not an API: they reach state
//! the endpoint normally keeps to itself, so a test can drive one seam on bare state. Hidden from
//! the documentation; nothing outside the tests may use it.

use crate::sendlog::SendLog;
use crate::Nanos;

/// Feed a [`SendLog`] directly (the endpoint does it on every transmission and ACK).
pub trait SendLogHooks {
    /// A transmission of `seq..end` at `now`.
    fn record_send(&mut self, now: Nanos, seq: u64, end: u64);
    /// A cumulative ACK up to `una` at `now`; the RTT sample it yields, if any.
    fn record_ack(&mut self, now: Nanos, una: u64) -> Option<Nanos>;
}

impl SendLogHooks for SendLog {
    fn record_send(&mut self, now: Nanos, seq: u64, end: u64) {
        self.on_send(now, seq, end)
    }
    fn record_ack(&mut self, now: Nanos, una: u64) -> Option<Nanos> {
        self.ack(now, una)
    }
}
