//! Output queue disciplines: DropTail here, RED/Adaptive RED in [`super::red`]; Kelly's virtual
//! queue can implement the same trait.
//!
//! ECN (RFC 3168 §5): a discipline that wants to signal congestion without dropping answers
//! [`Admit::QueuedMarkCe`] for an ECN-capable arrival (`Arrival::ect`); the simulator then sets
//! the packet's codepoint to CE and counts the mark. This is the generic "mark" path any marker
//! uses; a discipline must never mark a packet that is not ECT (it drops it instead).
//!
//! Counter invariant (tested): `arrived == departed + dropped + queued` at every instant, where
//! "queued" excludes the packet being serialized on the link (it has departed the queue).

use super::fifo::Fifo;
use super::packet::{DropReason, PacketId};
use crate::engine::SimTime;

/// What the queue may look at when deciding.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub id: PacketId,
    pub bytes: u32,
    /// Whether the link is currently serializing a packet (that packet has already left the
    /// queue).
    pub link_busy: bool,
    pub busy_bytes: u32,
    /// The packet carries an ECN-capable codepoint (ECT(0)/ECT(1)), so it may be CE-marked.
    pub ect: bool,
}

/// How an accepted packet was admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Queued,
    /// Queued, and the simulator must set its ECN codepoint to CE (only for `Arrival::ect`).
    QueuedMarkCe,
}

pub trait QueueDisc: Send {
    /// Accept the packet or refuse it with a reason. On `Err`, the caller frees the packet.
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason>;
    /// Next packet to transmit.
    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)>;
    fn len_pkts(&self) -> usize;
    fn len_bytes(&self) -> u64;
    fn name(&self) -> &'static str;
    /// The configured capacity, for reports (None for disciplines without a fixed limit).
    fn limit(&self) -> Option<QueueLimit> {
        None
    }
    /// Whether every arrival must pass through `enqueue`, even one that finds the link idle and
    /// the queue empty (RED updates its average on every arrival; DropTail lets such a packet go
    /// straight onto the wire).
    fn sees_every_arrival(&self) -> bool {
        false
    }
    /// An active queue manager's average queue (RED's `avg`), in packets, for the queue graph.
    fn average_pkts(&self) -> Option<f64> {
        None
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

/// Packets a DropTail queue has room for before its first growth.
const INITIAL_QUEUE_CAPACITY: usize = 16;

/// DropTail (tail drop) limited in packets or bytes.
///
/// `count_in_service`: whether the packet currently being transmitted counts against the limit.
/// Simulators differ: ns-2's DropTail counts only waiting packets (its link holds the one in
/// service), while a BSD router's interface queue (`ifq_maxlen`) likewise holds only waiting
/// packets but x-Sim's "buffers" count every packet in the router. With a 10-buffer router the
/// difference is one buffer, which seed 000 §6.2.1 shows matters. Default: `false` (waiting
/// packets only); scenarios state their choice.
pub struct DropTail {
    limit: QueueLimit,
    count_in_service: bool,
    q: Fifo,
}

impl DropTail {
    pub fn new(limit: QueueLimit, count_in_service: bool) -> Self {
        // Room for the first packets only: a 1000-packet limit sized up front cost 8 KB per
        // link direction, 32 KB per flow of a dumbbell at 4,096 flows, and 128 packets still
        // 4 KB per flow (issue 13). A queue that grows past this reallocates a few times
        // (doubling) while the run warms up, then never again.
        let cap = match limit {
            QueueLimit::Packets(n) => n as usize,
            QueueLimit::Bytes(b) => (b / 64) as usize,
        }
        .min(INITIAL_QUEUE_CAPACITY);
        DropTail { limit, count_in_service, q: Fifo::with_capacity(cap + 1) }
    }
}

impl QueueDisc for DropTail {
    fn enqueue(&mut self, _now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        let (extra_pkts, extra_bytes) =
            if self.count_in_service && a.link_busy { (1u64, a.busy_bytes as u64) } else { (0, 0) };
        if !self.q.fits(self.limit, a.bytes, extra_pkts, extra_bytes) {
            return Err(DropReason::QueueOverflow);
        }
        self.q.push(a.id, a.bytes, ());
        Ok(Admit::Queued)
    }

    fn dequeue(&mut self, _now: SimTime) -> Option<(PacketId, u32)> {
        self.q.pop().map(|e| (e.id, e.bytes))
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn name(&self) -> &'static str {
        "droptail"
    }
    fn limit(&self) -> Option<QueueLimit> {
        Some(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(id: u32, bytes: u32, busy: bool) -> Arrival {
        Arrival { id, bytes, link_busy: busy, busy_bytes: if busy { 1000 } else { 0 }, ect: false }
    }

    #[test]
    fn packet_limit_excludes_or_includes_the_packet_in_service() {
        let mut q = DropTail::new(QueueLimit::Packets(2), false);
        assert!(q.enqueue(SimTime(0), arr(1, 100, true)).is_ok());
        assert!(q.enqueue(SimTime(0), arr(2, 100, true)).is_ok());
        assert_eq!(q.enqueue(SimTime(0), arr(3, 100, true)), Err(DropReason::QueueOverflow));

        let mut q = DropTail::new(QueueLimit::Packets(2), true);
        assert!(q.enqueue(SimTime(0), arr(1, 100, true)).is_ok());
        assert_eq!(q.enqueue(SimTime(0), arr(2, 100, true)), Err(DropReason::QueueOverflow));
        assert_eq!(q.dequeue(SimTime(0)), Some((1, 100)));
        assert!(q.enqueue(SimTime(0), arr(2, 100, false)).is_ok());
    }

    #[test]
    fn byte_limit() {
        let mut q = DropTail::new(QueueLimit::Bytes(250), false);
        assert!(q.enqueue(SimTime(0), arr(1, 100, false)).is_ok());
        assert!(q.enqueue(SimTime(0), arr(2, 100, false)).is_ok());
        assert_eq!(q.enqueue(SimTime(0), arr(3, 100, false)), Err(DropReason::QueueOverflow));
        assert!(q.enqueue(SimTime(0), arr(4, 50, false)).is_ok());
        assert_eq!(q.len_bytes(), 250);
        assert_eq!(q.len_pkts(), 3);
    }
}
