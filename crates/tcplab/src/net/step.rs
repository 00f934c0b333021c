//! A step marker: DCTCP's switch (M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010,
//! §3.1; RFC 8257 §3.1): an arriving ECN-capable packet is CE-marked when the instantaneous
//! queue it finds holds `k_packets` or more packets, otherwise queued unmarked; a packet that is
//! not ECN-capable is never dropped early. The buffer limit is a tail drop as DropTail.
//!
//! Deliberate reading: "the queue" counts waiting packets, not the one being serialized (as
//! DropTail's default, `count_in_service = false`).

use super::aqm_book::{aqm_book_accessors, AqmBook};
use super::discipline::{Discipline, ParamError, Params, QueueSetup};
use super::fifo::Fifo;
use super::packet::{DropReason, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use crate::engine::SimTime;

pub const ENTRY: Discipline = Discipline {
    name: "step",
    family: "step-marker",
    description: "DCTCP's step marker (RFC 8257 §3.1): CE-mark ECT arrivals when the queue holds >= k_packets (default 20), else DropTail",
    params: &["k_packets"],
    build: build_step,
};

fn build_step(s: QueueSetup, q: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    let k = q.positive("k_packets", 20.0)?;
    if k.fract() != 0.0 || k > u32::MAX as f64 {
        return Err(("k_packets", format!("must be a whole number of packets, got {k}")));
    }
    Ok(Box::new(StepMarker::new(k as u32, s.limit)))
}

pub struct StepMarker {
    pub k_packets: u32,
    q: Fifo<SimTime>,
    pub book: AqmBook,
}

impl StepMarker {
    pub fn new(k_packets: u32, limit: QueueLimit) -> StepMarker {
        StepMarker { k_packets, q: Fifo::default(), book: AqmBook::new(limit) }
    }
}

impl QueueDisc for StepMarker {
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        self.book.tail_drop(&self.q, a.bytes)?;
        let mark = a.ect() && self.q.len() >= self.k_packets as usize;
        self.q.push(a.id, a.bytes, now);
        if mark {
            self.book.stats.on_mark("step");
            Ok(Admit::QueuedMarkCe)
        } else {
            Ok(Admit::Queued)
        }
    }
    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)> {
        let e = self.q.pop()?;
        Some(self.book.depart(now, e))
    }
    fn name(&self) -> &'static str {
        "step"
    }
    aqm_book_accessors!(book, fifo q);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Ecn;

    fn arr(id: u32, ecn: Ecn) -> Arrival {
        Arrival { id, bytes: 1000, link_busy: true, busy_bytes: 1000, ecn, flow: 0 }
    }

    #[test]
    fn marks_ect_at_and_above_k_never_drops_early() {
        let mut s = StepMarker::new(3, QueueLimit::Packets(6));
        let got: Vec<_> = (0..7).map(|i| s.enqueue(SimTime::ZERO, arr(i, if i == 4 { Ecn::NotEct } else { Ecn::Ect0 }))).collect();
        use Admit::*;
        // Queue before each arrival: 0,1,2 (unmarked), 3 (mark), 4 (not ECT: queued), 5 (mark), 6 (full).
        assert_eq!(got, vec![Ok(Queued), Ok(Queued), Ok(Queued), Ok(QueuedMarkCe), Ok(Queued), Ok(QueuedMarkCe), Err(DropReason::QueueOverflow)]);
        for _ in 0..3 {
            s.dequeue(SimTime::ZERO);
        }
        assert_eq!(s.enqueue(SimTime::ZERO, arr(9, Ecn::Ect1)), Ok(QueuedMarkCe), "3 waiting: at k");
        for _ in 0..2 {
            s.dequeue(SimTime::ZERO);
        }
        assert_eq!(s.enqueue(SimTime::ZERO, arr(10, Ecn::Ect1)), Ok(Queued), "2 waiting: below k");
        assert_eq!((s.book.stats.marks.get("step"), s.book.stats.drops.get("overflow")), (Some(&3), Some(&1)));
    }
}
