//! CoDel, Controlled Delay (K. Nichols, V. Jacobson, A. McGregor, J. Iyengar, RFC 8289, 2018).
//!
//! Packets are stamped on arrival; at dequeue the head's sojourn time decides. Once the sojourn
//! has stayed at or above `target` (5 ms) for a whole `interval` (100 ms) with more than one
//! MTU queued, CoDel enters the drop state and drops the head; it then drops again at
//! `drop_next = t + interval/√count` (the control law, §3.3), `count` rising by one per drop,
//! until a sojourn falls below `target` (or the queue holds at most one MTU). Re-entering the
//! drop state soon (within 16 intervals of the last `drop_next`) restarts `count` at its growth
//! since the last entry (`count − lastcount`, the count reuse of §5.5's pseudocode) instead of 1.
//!
//! ECN (§5, as Linux `codel_impl.h`): an ECN-capable packet that would be dropped is CE-marked
//! and sent instead; the schedule advances as for a drop.
//!
//! Deliberate readings: the RFC's `maxpacket` is the largest packet seen so far (Linux uses the
//! device MTU); the tail limit (`limit`) drops arrivals as DropTail (`overflow`), which the RFC
//! leaves to the implementation. [`CodelState::dequeue`] is shared with FQ-CoDel
//! ([`super::fq_codel`]), which runs one per flow queue.

use super::aqm_book::{aqm_book_accessors, AqmBook};
use super::discipline::{Discipline, ParamError, Params, QueueSetup};
use super::fifo::{Fifo, Queued};
use super::packet::{DropReason, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use crate::engine::SimTime;

pub const ENTRY: Discipline = Discipline {
    name: "codel",
    family: "CoDel",
    description: "CoDel (RFC 8289): drops/marks at dequeue when sojourn stays above target_delay (5 ms) for an interval (100 ms), spacing interval/sqrt(count)",
    params: &["target_delay", "interval", "ecn"],
    build: build_codel,
};

fn build_codel(s: QueueSetup, q: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    let p = CodelParams::from_params(q)?;
    Ok(Box::new(Codel::new(p, s.limit)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    pub target: SimTime,
    pub interval: SimTime,
    pub ecn: bool,
}

impl CodelParams {
    pub const RFC8289: CodelParams = CodelParams { target: SimTime::from_millis(5), interval: SimTime::from_millis(100), ecn: false };

    pub fn from_params(q: &Params) -> Result<CodelParams, ParamError> {
        let d = CodelParams::RFC8289;
        Ok(CodelParams {
            target: q.positive_duration("target_delay", d.target)?,
            interval: q.positive_duration("interval", d.interval)?,
            ecn: q.flag("ecn").unwrap_or(false),
        })
    }
}

/// One CoDel controller's state (RFC 8289 §5.4's variables).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelState {
    /// Time when the sojourn will have been above target for an interval; None while below.
    first_above: Option<SimTime>,
    drop_next: SimTime,
    pub count: u32,
    lastcount: u32,
    pub dropping: bool,
}

/// The control law (§3.3): the next drop `interval/√count` after `t`.
fn control_law(t: SimTime, interval: SimTime, count: u32) -> SimTime {
    SimTime(t.0 + (interval.0 as f64 / (count.max(1) as f64).sqrt()) as u64)
}

/// Where [`CodelState::dequeue`] puts the packets it did not send, and the cause it counts.
pub struct Sink<'a> {
    pub book: &'a mut AqmBook,
    pub cause: &'static str,
}

impl CodelState {
    /// §5.5 `dodequeue`: the head and whether it is OK to drop it.
    fn dodequeue(&mut self, p: &CodelParams, now: SimTime, q: &mut Fifo<SimTime>, backlog_elsewhere: u64, maxpacket: u32) -> Option<(Queued<SimTime>, bool)> {
        let Some(e) = q.pop() else {
            self.first_above = None;
            return None;
        };
        let sojourn = now.saturating_sub(e.stamp);
        let mut ok_to_drop = false;
        if sojourn < p.target || q.bytes() + backlog_elsewhere <= maxpacket as u64 {
            self.first_above = None;
        } else {
            match self.first_above {
                None => self.first_above = Some(now + p.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        Some((e, ok_to_drop))
    }

    /// §5.5 `dequeue`: the packet to send (and whether to CE-mark it), dropping heads into `sink`.
    pub fn dequeue(&mut self, p: &CodelParams, now: SimTime, q: &mut Fifo<SimTime>, backlog_elsewhere: u64, maxpacket: u32, ect_of: &dyn Fn(PacketId) -> bool, sink: &mut Sink) -> Option<(Queued<SimTime>, bool)> {
        let Some((mut e, mut ok)) = self.dodequeue(p, now, q, backlog_elsewhere, maxpacket) else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if p.ecn && ect_of(e.id) {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    sink.book.stats.on_mark(sink.cause);
                    return Some((e, true));
                }
                sink.book.drop_inside(e, DropReason::Early, sink.cause);
                match self.dodequeue(p, now, q, backlog_elsewhere, maxpacket) {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some((n, o)) => {
                        (e, ok) = (n, o);
                    }
                }
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                }
            }
        } else if ok {
            let mut marked = false;
            if p.ecn && ect_of(e.id) {
                sink.book.stats.on_mark(sink.cause);
                marked = true;
            } else {
                sink.book.drop_inside(e, DropReason::Early, sink.cause);
            }
            let delta = self.count.saturating_sub(self.lastcount);
            self.count = if delta > 1 && now.saturating_sub(self.drop_next) < SimTime(16 * p.interval.0) { delta } else { 1 };
            self.drop_next = control_law(now, p.interval, self.count);
            self.lastcount = self.count;
            self.dropping = true;
            if marked {
                return Some((e, true));
            }
            let (n, _) = self.dodequeue(p, now, q, backlog_elsewhere, maxpacket)?;
            return Some((n, false));
        }
        Some((e, false))
    }
}

/// A single-queue CoDel.
pub struct Codel {
    pub p: CodelParams,
    q: Fifo<SimTime>,
    pub state: CodelState,
    maxpacket: u32,
    /// ECT packets among those queued (by id), so a drop can become a mark.
    ect: std::collections::HashSet<PacketId>,
    pub book: AqmBook,
}

impl Codel {
    pub fn new(p: CodelParams, limit: QueueLimit) -> Codel {
        Codel { p, q: Fifo::default(), state: CodelState::default(), maxpacket: 0, ect: Default::default(), book: AqmBook::new(limit) }
    }
}

impl QueueDisc for Codel {
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        self.book.tail_drop(&self.q, a.bytes)?;
        self.maxpacket = self.maxpacket.max(a.bytes);
        if a.ect() {
            self.ect.insert(a.id);
        }
        self.q.push(a.id, a.bytes, now);
        Ok(Admit::Queued)
    }

    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)> {
        let ect = &self.ect;
        let mut sink = Sink { book: &mut self.book, cause: "codel" };
        let r = self.state.dequeue(&self.p, now, &mut self.q, 0, self.maxpacket, &|id| ect.contains(&id), &mut sink);
        for (id, _, _) in &self.book.inner_drops {
            self.ect.remove(id);
        }
        let (e, mark) = r?;
        self.ect.remove(&e.id);
        Some(self.book.depart_marked(now, e, mark))
    }

    fn name(&self) -> &'static str {
        "codel"
    }
    aqm_book_accessors!(book, fifo q, drops_inside);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Ecn;

    fn arr(id: u32, ecn: Ecn) -> Arrival {
        Arrival { id, bytes: 1000, link_busy: true, busy_bytes: 1000, ecn, flow: 0 }
    }

    /// A standing queue: 200 packets arrive at t = 0, then one arrives for each one served every
    /// millisecond, so every head has waited ~200 ms ≫ target. CoDel enters the drop state at
    /// the first dequeue 100 ms after the sojourn first exceeded target, and then drops at
    /// drop_next = t_k + interval/√k (RFC 8289 §3.3): the gaps between drops shrink as 1/√count.
    #[test]
    fn drop_spacing_follows_interval_over_sqrt_count() {
        let mut c = Codel::new(CodelParams::RFC8289, QueueLimit::Packets(10_000));
        let mut id = 0;
        for _ in 0..200 {
            c.enqueue(SimTime::ZERO, arr(id, Ecn::NotEct)).unwrap();
            id += 1;
        }
        let mut drop_times = Vec::new();
        for ms in 1..=1500u64 {
            let now = SimTime::from_millis(ms);
            c.enqueue(now, arr(id, Ecn::NotEct)).unwrap();
            id += 1;
            c.dequeue(now).unwrap();
            while c.pop_inner_drop().is_some() {
                drop_times.push(ms);
            }
        }
        // The head's sojourn reaches target (5 ms) at t = 5 ms: first drop one interval later.
        assert_eq!(drop_times[0], 105, "{drop_times:?}");
        // After the k-th drop count = k and the next comes interval/√k later.
        for k in 1..drop_times.len().min(40) {
            let gap = (drop_times[k] - drop_times[k - 1]) as f64;
            let law = 100.0 / (k as f64).sqrt();
            // Dequeues happen each ms, so a drop lands on the first ms at or after drop_next.
            assert!((gap - law).abs() <= 1.0 + 1e-9, "drop {k}: gap {gap} ms, law {law:.2} ms ({drop_times:?})");
        }
        assert!(c.state.dropping && c.state.count as usize == drop_times.len());
        assert_eq!(c.book.stats.drops.get("codel").copied(), Some(drop_times.len() as u64));
    }

    /// Below target nothing is ever dropped; the drop state ends when a sojourn falls below
    /// target, and a re-entry soon after reuses count − lastcount (§5.5).
    #[test]
    fn exit_below_target_and_count_reuse() {
        let p = CodelParams::RFC8289;
        let mut c = Codel::new(p, QueueLimit::Packets(10_000));
        let mut id = 0;
        for _ in 0..50 {
            c.enqueue(SimTime::ZERO, arr(id, Ecn::NotEct)).unwrap();
            id += 1;
        }
        let mut now = SimTime::ZERO;
        // Serve one per 10 ms with one arriving each time: sojourn ~500 ms, drops begin.
        while c.state.count < 4 {
            now = now + SimTime::from_millis(10);
            c.enqueue(now, arr(id, Ecn::NotEct)).unwrap();
            id += 1;
            c.dequeue(now);
            while c.pop_inner_drop().is_some() {}
        }
        let count_at_exit = c.state.count;
        // Drain without arrivals until empty: the queue emptying ends the drop state.
        while c.len_pkts() > 0 {
            c.dequeue(now);
            while c.pop_inner_drop().is_some() {}
        }
        assert!(c.dequeue(now).is_none() && !c.state.dropping);
        // A fresh standing queue right away: entry reuses count − lastcount = count_at_exit − 1.
        for _ in 0..50 {
            c.enqueue(now, arr(id, Ecn::NotEct)).unwrap();
            id += 1;
        }
        let mut entered = None;
        for _ in 0..100 {
            now = now + SimTime::from_millis(10);
            c.enqueue(now, arr(id, Ecn::NotEct)).unwrap();
            id += 1;
            c.dequeue(now);
            while c.pop_inner_drop().is_some() {}
            if c.state.dropping {
                entered = Some(c.state.count);
                break;
            }
        }
        assert_eq!(entered, Some(count_at_exit - 1));

        // A queue whose sojourn stays below target is never touched.
        let mut c = Codel::new(p, QueueLimit::Packets(10_000));
        for ms in 0..5000u64 {
            let t = SimTime::from_millis(ms);
            c.enqueue(t, arr(ms as u32 * 2, Ecn::NotEct)).unwrap();
            c.enqueue(t, arr(ms as u32 * 2 + 1, Ecn::NotEct)).unwrap();
            c.dequeue(t + SimTime::from_millis(4));
            c.dequeue(t + SimTime::from_millis(4));
        }
        assert!(c.pop_inner_drop().is_none() && c.book.stats.drops.is_empty());
    }

    /// With ecn = true an ECT packet due for a drop is CE-marked and sent instead.
    #[test]
    fn ect_packets_are_marked_not_dropped() {
        let mut c = Codel::new(CodelParams { ecn: true, ..CodelParams::RFC8289 }, QueueLimit::Packets(10_000));
        let mut id = 0;
        for _ in 0..200 {
            c.enqueue(SimTime::ZERO, arr(id, Ecn::Ect0)).unwrap();
            id += 1;
        }
        let mut marks = 0;
        for ms in 1..=1000u64 {
            let now = SimTime::from_millis(ms);
            c.enqueue(now, arr(id, Ecn::Ect0)).unwrap();
            id += 1;
            c.dequeue(now).unwrap();
            marks += c.dequeue_mark() as u32;
            assert!(c.pop_inner_drop().is_none());
        }
        assert!(marks > 10 && c.book.stats.marks.get("codel") == Some(&(marks as u64)), "{marks}");
    }
}
