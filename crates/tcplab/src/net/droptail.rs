//! DropTail: first in, first out, arrivals refused when the buffer is full.

use super::discipline::{Discipline, ParamError, Params, QueueSetup};
use super::fifo::Fifo;
use super::packet::{DropReason, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use crate::engine::SimTime;

/// The registry row ([`super::registry`]).
pub const ENTRY: Discipline = Discipline {
    name: "droptail",
    family: "DropTail",
    description: "first in, first out; drops arrivals when full (limit in packets or bytes); default 50 packets",
    params: &["count_in_service"],
    build: build_droptail,
};

fn build_droptail(s: QueueSetup, p: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    Ok(Box::new(DropTail::new(s.limit, p.flag("count_in_service").unwrap_or(false))))
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
        Arrival { id, bytes, link_busy: busy, busy_bytes: if busy { 1000 } else { 0 }, ecn: crate::net::packet::Ecn::NotEct, flow: 0 }
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
