//! The bookkeeping every measuring discipline shares (PIE, step, CoDel, DualPI2, FQ-CoDel; each
//! wrote it out before): the buffer limit and its tail drop, the sojourn of the last packet that
//! left and the [`AqmStats`] it feeds, and, for the disciplines that drop or mark at dequeue, the
//! packets dropped from inside the buffer and the mark of the last departure. Their packets wait
//! in [`Fifo<SimTime>`]s stamped with the arrival time. [`aqm_book_accessors!`] writes the
//! `QueueDisc` methods that only read the book.

use super::aqm_stats::AqmStats;
use super::fifo::{Fifo, Queued};
use super::packet::{DropReason, PacketId};
use super::queue::QueueLimit;
use crate::engine::SimTime;

#[derive(Debug)]
pub struct AqmBook {
    pub limit: QueueLimit,
    /// The sojourn of the packet the last `dequeue` returned.
    pub last_sojourn: SimTime,
    pub stats: AqmStats,
    /// Packets dropped from inside the buffer that the simulator has not collected yet.
    pub inner_drops: Vec<(PacketId, u32, DropReason)>,
    /// Whether the packet the last `dequeue` returned is to be CE-marked.
    pub mark_last: bool,
}

impl AqmBook {
    pub fn new(limit: QueueLimit) -> AqmBook {
        AqmBook { limit, last_sojourn: SimTime::ZERO, stats: AqmStats::default(), inner_drops: Vec::new(), mark_last: false }
    }

    /// The tail drop of a single-FIFO discipline: an arrival of `bytes` that `q` cannot hold
    /// under the limit is refused and counted as `overflow`.
    #[inline]
    pub fn tail_drop(&mut self, q: &Fifo<SimTime>, bytes: u32) -> Result<(), DropReason> {
        if q.fits(self.limit, bytes, 0, 0) {
            Ok(())
        } else {
            Err(self.overflow())
        }
    }

    /// Count a refused arrival as `overflow`.
    #[inline]
    pub fn overflow(&mut self) -> DropReason {
        self.stats.on_drop("overflow");
        DropReason::QueueOverflow
    }

    /// `e` leaves for the wire at `now`: its sojourn becomes the last one and is counted.
    /// Returns what `dequeue` returns.
    #[inline]
    pub fn depart(&mut self, now: SimTime, e: Queued<SimTime>) -> (PacketId, u32) {
        self.last_sojourn = now.saturating_sub(e.stamp);
        self.stats.on_departure(self.last_sojourn);
        (e.id, e.bytes)
    }

    /// [`AqmBook::depart`] for a discipline that marks at dequeue: CE-marked if `mark`.
    #[inline]
    pub fn depart_marked(&mut self, now: SimTime, e: Queued<SimTime>, mark: bool) -> (PacketId, u32) {
        self.mark_last = mark;
        self.depart(now, e)
    }

    /// `e` is dropped from inside the buffer for `cause`; the simulator collects it.
    #[inline]
    pub fn drop_inside(&mut self, e: Queued<SimTime>, reason: DropReason, cause: &'static str) {
        self.inner_drops.push((e.id, e.bytes, reason));
        self.stats.on_drop(cause);
    }
}

/// Inside `impl QueueDisc for X`: the methods that read the [`AqmBook`] in field `$book`
/// (`limit`, `sees_every_arrival` = true, `last_sojourn`, `aqm_stats`); with `fifo $q` also
/// `len_pkts`/`len_bytes` of the single FIFO in field `$q`; with `drops_inside` also
/// `dequeue_mark` and `pop_inner_drop` (a discipline that never drops or marks at dequeue keeps
/// the trait's defaults, which cost the per-packet path nothing).
macro_rules! aqm_book_accessors {
    ($book:ident) => {
        fn limit(&self) -> Option<$crate::net::queue::QueueLimit> {
            Some(self.$book.limit)
        }
        fn sees_every_arrival(&self) -> bool {
            true
        }
        fn last_sojourn(&self) -> Option<$crate::engine::SimTime> {
            Some(self.$book.last_sojourn)
        }
        fn aqm_stats(&self) -> Option<&$crate::net::aqm_stats::AqmStats> {
            Some(&self.$book.stats)
        }
    };
    ($book:ident, drops_inside) => {
        $crate::net::aqm_book::aqm_book_accessors!($book);
        fn dequeue_mark(&mut self) -> bool {
            ::std::mem::take(&mut self.$book.mark_last)
        }
        fn pop_inner_drop(&mut self) -> Option<($crate::net::packet::PacketId, u32, $crate::net::packet::DropReason)> {
            self.$book.inner_drops.pop()
        }
    };
    ($book:ident, fifo $q:ident $(, $drops:ident)?) => {
        $crate::net::aqm_book::aqm_book_accessors!($book $(, $drops)?);
        fn len_pkts(&self) -> usize {
            self.$q.len()
        }
        fn len_bytes(&self) -> u64 {
            self.$q.bytes()
        }
    };
}
pub(crate) use aqm_book_accessors;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_drop_departure_and_inner_drop_are_counted() {
        let mut b = AqmBook::new(QueueLimit::Packets(1));
        let mut q: Fifo<SimTime> = Fifo::default();
        assert_eq!(b.tail_drop(&q, 1000), Ok(()));
        q.push(1, 1000, SimTime::from_millis(2));
        assert_eq!(b.tail_drop(&q, 1000), Err(DropReason::QueueOverflow));
        q.push(2, 500, SimTime::from_millis(3));
        let e = q.pop().unwrap();
        assert_eq!(b.depart_marked(SimTime::from_millis(7), e, true), (1, 1000));
        assert_eq!((b.last_sojourn, b.mark_last, b.stats.departed), (SimTime::from_millis(5), true, 1));
        b.drop_inside(q.pop().unwrap(), DropReason::Early, "codel");
        assert_eq!(b.inner_drops, vec![(2, 500, DropReason::Early)]);
        assert_eq!((b.stats.drops.get("overflow"), b.stats.drops.get("codel")), (Some(&1), Some(&1)));
    }
}
