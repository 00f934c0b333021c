//! `stats = true` on any queue (issue 27): the bufferbloat figures (sojourn percentiles, drops
//! and marks by cause; [`super::aqm_stats`]) for a discipline that does not keep them itself —
//! DropTail, RED, ARED, Kelly's VQ marker — so a study can set its queueing delay p99 beside
//! CoDel's or DualPI2's. A discipline that keeps them (CoDel, FQ-CoDel, step, PIE, DualPI2) is
//! not wrapped.
//!
//! The wrapped disciplines are first-in first-out and drop only arrivals, so a FIFO of arrival
//! times gives each departure's sojourn. The wrapper sees every arrival (an arrival at an idle
//! link is queued and leaves at once, sojourn 0, as it would have gone straight onto the wire).
//! Causes: a refused arrival is `overflow` (buffer full) or the discipline's name (RED's early
//! drop); a CE mark on admission is the discipline's name. The same figures are kept per class as
//! DualPI2 would classify the packets (`l4s`: ECT(1) or CE; `classic`: the rest), so an L4S
//! sender's delay in a single queue can be set beside its delay in DualPI2's L queue.

use std::collections::VecDeque;

use super::aqm_stats::AqmStats;
use super::packet::{DropReason, Ecn, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use crate::engine::SimTime;

pub struct Measured {
    inner: Box<dyn QueueDisc>,
    /// Arrival time and class (0 = l4s, 1 = classic) of every waiting packet.
    arrivals: VecDeque<(SimTime, u8)>,
    last_sojourn: SimTime,
    stats: AqmStats,
    class_stats: [AqmStats; 2],
}

const CLASSES: [&str; 2] = ["l4s", "classic"];

impl Measured {
    /// `q` with statistics, unless it keeps its own.
    pub fn wrap(q: Box<dyn QueueDisc>) -> Box<dyn QueueDisc> {
        if q.aqm_stats().is_some() {
            return q;
        }
        Box::new(Measured { inner: q, arrivals: VecDeque::new(), last_sojourn: SimTime::ZERO, stats: AqmStats::default(), class_stats: Default::default() })
    }
}

impl QueueDisc for Measured {
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        let r = self.inner.enqueue(now, a);
        let class = if matches!(a.ecn, Ecn::Ect1 | Ecn::Ce) { 0 } else { 1 };
        let name = self.inner.name();
        match r {
            Ok(admit) => {
                if admit == Admit::QueuedMarkCe {
                    self.stats.on_mark(name);
                    self.class_stats[class as usize].on_mark(name);
                }
                self.arrivals.push_back((now, class));
            }
            Err(reason) => {
                let cause = if reason == DropReason::QueueOverflow { "overflow" } else { name };
                self.stats.on_drop(cause);
                self.class_stats[class as usize].on_drop(cause);
            }
        }
        r
    }
    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)> {
        let r = self.inner.dequeue(now)?;
        let (t, class) = self.arrivals.pop_front().unwrap_or((now, 1));
        self.last_sojourn = now.saturating_sub(t);
        self.stats.on_departure(self.last_sojourn);
        self.class_stats[class as usize].on_departure(self.last_sojourn);
        Some(r)
    }
    fn len_pkts(&self) -> usize {
        self.inner.len_pkts()
    }
    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn limit(&self) -> Option<QueueLimit> {
        self.inner.limit()
    }
    fn sees_every_arrival(&self) -> bool {
        true
    }
    fn average_pkts(&self) -> Option<f64> {
        self.inner.average_pkts()
    }
    fn dequeue_mark(&mut self) -> bool {
        self.inner.dequeue_mark()
    }
    fn pop_inner_drop(&mut self) -> Option<(PacketId, u32, DropReason)> {
        self.inner.pop_inner_drop()
    }
    fn last_sojourn(&self) -> Option<SimTime> {
        Some(self.last_sojourn)
    }
    fn aqm_stats(&self) -> Option<&AqmStats> {
        Some(&self.stats)
    }
    fn class_stats(&self) -> Vec<(&'static str, &AqmStats)> {
        CLASSES.iter().copied().zip(self.class_stats.iter()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::droptail::DropTail;
    use crate::net::packet::Ecn;

    fn arr(id: u32) -> Arrival {
        Arrival { id, bytes: 1000, link_busy: true, busy_bytes: 1000, ecn: Ecn::NotEct, flow: 0 }
    }

    #[test]
    fn droptail_sojourns_and_overflow_counted() {
        let mut q = Measured::wrap(Box::new(DropTail::new(QueueLimit::Packets(3), false)));
        for i in 0..4 {
            let r = q.enqueue(SimTime::from_millis(i as u64), arr(i));
            assert_eq!(r.is_err(), i == 3);
        }
        for ms in [10u64, 20, 30] {
            q.dequeue(SimTime::from_millis(ms)).unwrap();
        }
        // Sojourns 10, 19, 28 ms.
        let s = q.aqm_stats().unwrap();
        assert_eq!((s.departed, s.drops.get("overflow")), (3, Some(&1)));
        let p99 = s.sojourn_quantile_s(0.99).unwrap();
        assert!(p99 <= 0.028 && p99 > 0.028 * (1.0 - 1.0 / 32.0), "{p99}");
        assert_eq!(q.last_sojourn(), Some(SimTime::from_millis(28)));
        assert!(q.sees_every_arrival() && q.name() == "droptail");
        let classic = q.class_stats()[1].1;
        assert_eq!((classic.departed, q.class_stats()[0].1.departed), (3, 0));
    }
}
