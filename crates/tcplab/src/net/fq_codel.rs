//! FQ-CoDel (T. Hoeiland-Joergensen, P. McKenney, D. Taht, J. Gettys, E. Dumazet, RFC 8290, 2018).
//!
//! * Flows are hashed into `flows` queues (1024, §4.1.1) by a hash keyed with a seed drawn from
//!   the queue's random stream: deterministic for a seed, different across seeds (the RFC's
//!   "random perturbation").
//! * DRR++ (§4.2): a queue that becomes active joins the tail of `new_flows` with a deficit of
//!   one `quantum` (1514 B, §5.1); the scheduler serves the head of `new_flows`, else of
//!   `old_flows`; a queue whose deficit is spent gets another quantum and moves to the tail of
//!   `old_flows`; a new queue found empty moves to `old_flows` (so a flow cannot stay "new" by
//!   emptying on every round), an old one found empty leaves the lists.
//! * Each queue runs its own CoDel ([`super::codel::CodelState`], target 5 ms, interval 100 ms),
//!   whose "more than one MTU queued" test sees the whole backlog (as Linux).
//! * Overflow (§4.1): when the packets queued reach `limit` (or their bytes reach `limit` in
//!   bytes or `memory_limit`, 32 MB, §5.1), the arrival is queued and the packet at the head of
//!   the queue holding the most bytes is dropped (`fattest`).
//!
//! Deliberate readings: one packet is dropped per overflow (Linux drops up to 64 at once to
//! save CPU); the memory limit counts packet bytes, not kernel buffer sizes; `flow_key` (end
//! nodes and connection or UDP source) stands for the 5-tuple.

use std::collections::{HashSet, VecDeque};

use rand::Rng;

use super::aqm_book::{aqm_book_accessors, AqmBook};
use super::aqm_stats::{FlowQueueStats, Occupancy};
use super::codel::{CodelParams, CodelState, Sink};
use super::discipline::{Discipline, ParamError, Params, QueueSetup};
use super::fifo::Fifo;
use super::packet::{DropReason, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use crate::engine::SimTime;

pub const ENTRY: Discipline = Discipline {
    name: "fq_codel",
    family: "FQ-CoDel",
    description: "FQ-CoDel (RFC 8290): seeded flow hash into 1024 queues, DRR++ (quantum 1514B, new/old lists), CoDel per queue, fattest-queue drop",
    params: &["target_delay", "interval", "ecn", "flows", "quantum", "memory_limit"],
    build: build_fq_codel,
};

fn build_fq_codel(mut s: QueueSetup, q: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    let codel = CodelParams::from_params(q)?;
    let flows = q.positive("flows", 1024.0)?;
    if flows.fract() != 0.0 || flows > 65536.0 {
        return Err(("flows", format!("must be a whole number of queues up to 65536, got {flows}")));
    }
    let quantum = q.packet_size("quantum", 1514)?;
    let memory_limit = match q.size("memory_limit") {
        Some(0) => return Err(("memory_limit", "must be a positive size".into())),
        Some(b) => b,
        None => 32 << 20,
    };
    let seed = s.rng.gen::<u64>();
    Ok(Box::new(FqCodel::new(codel, s.limit, flows as u32, quantum, memory_limit, seed)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct FlowQueue {
    q: Fifo<SimTime>,
    codel: CodelState,
    deficit: i64,
    list: List,
    /// Per-flow occupancy for the summary (issue 27).
    occ: Occupancy,
}

pub struct FqCodel {
    p: CodelParams,
    memory_limit: u64,
    quantum: u32,
    seed: u64,
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    pkts: usize,
    bytes: u64,
    maxpacket: u32,
    ect: HashSet<PacketId>,
    pub book: AqmBook,
}

/// SplitMix64's finaliser: a well-mixed hash of the flow key and the seed.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

impl FqCodel {
    pub fn new(p: CodelParams, limit: QueueLimit, flows: u32, quantum: u32, memory_limit: u64, seed: u64) -> FqCodel {
        let queues = (0..flows).map(|_| FlowQueue { q: Fifo::default(), codel: CodelState::default(), deficit: 0, list: List::None, occ: Occupancy::default() }).collect();
        FqCodel {
            p,
            memory_limit,
            quantum,
            seed,
            queues,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            pkts: 0,
            bytes: 0,
            maxpacket: 0,
            ect: HashSet::new(),
            book: AqmBook::new(limit),
        }
    }

    /// The queue a flow hashes to.
    pub fn queue_of(&self, flow: u64) -> usize {
        (mix(flow ^ self.seed) % self.queues.len() as u64) as usize
    }

    /// Packets waiting in queue `i` (for tests and per-flow occupancy).
    pub fn queue_len(&self, i: usize) -> usize {
        self.queues[i].q.len()
    }

    fn over_limit(&self) -> bool {
        let hard = match self.book.limit {
            QueueLimit::Packets(n) => self.pkts > n as usize,
            QueueLimit::Bytes(b) => self.bytes > b,
        };
        hard || self.bytes > self.memory_limit
    }

    /// §4.1: drop the head of the queue holding the most bytes (ties: the lowest index).
    fn drop_from_fattest(&mut self, now: SimTime) {
        let mut fat = 0;
        for (i, f) in self.queues.iter().enumerate() {
            if f.q.bytes() > self.queues[fat].q.bytes() {
                fat = i;
            }
        }
        let f = &mut self.queues[fat];
        f.occ.advance(now, f.q.len(), f.q.bytes());
        if let Some(e) = f.q.pop() {
            self.pkts -= 1;
            self.bytes -= e.bytes as u64;
            self.ect.remove(&e.id);
            self.book.drop_inside(e, DropReason::QueueOverflow, "fattest");
        }
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        let i = self.queue_of(a.flow);
        self.maxpacket = self.maxpacket.max(a.bytes);
        if a.ect() {
            self.ect.insert(a.id);
        }
        let f = &mut self.queues[i];
        f.occ.advance(now, f.q.len(), f.q.bytes());
        f.q.push(a.id, a.bytes, now);
        f.occ.note(f.q.len(), f.q.bytes());
        if f.occ.flow_keys.len() < 16 && !f.occ.flow_keys.contains(&a.flow) {
            f.occ.flow_keys.push(a.flow);
        }
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum as i64;
            self.new_flows.push_back(i as u32);
        }
        self.pkts += 1;
        self.bytes += a.bytes as u64;
        while self.over_limit() {
            self.drop_from_fattest(now);
        }
        Ok(Admit::Queued)
    }

    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)> {
        loop {
            let (from_new, i) = match self.new_flows.front() {
                Some(&i) => (true, i as usize),
                None => (false, *self.old_flows.front()? as usize),
            };
            let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            let f = &mut self.queues[i];
            if f.deficit <= 0 {
                f.deficit += self.quantum as i64;
                list.pop_front();
                f.list = List::Old;
                self.old_flows.push_back(i as u32);
                continue;
            }
            let (pk, by) = (f.q.len(), f.q.bytes());
            f.occ.advance(now, pk, by);
            let elsewhere = self.bytes - by;
            let ect = &self.ect;
            let mut sink = Sink { book: &mut self.book, cause: "codel" };
            let r = f.codel.dequeue(&self.p, now, &mut f.q, elsewhere, self.maxpacket, &|id| ect.contains(&id), &mut sink);
            self.pkts -= pk - f.q.len();
            self.bytes -= by - f.q.bytes();
            for (id, _, _) in &self.book.inner_drops {
                self.ect.remove(id);
            }
            match r {
                None => {
                    list.pop_front();
                    if from_new {
                        f.list = List::Old;
                        self.old_flows.push_back(i as u32);
                    } else {
                        f.list = List::None;
                    }
                }
                Some((e, mark)) => {
                    f.deficit -= e.bytes as i64;
                    f.occ.departed += 1;
                    self.ect.remove(&e.id);
                    return Some(self.book.depart_marked(now, e, mark));
                }
            }
        }
    }

    fn len_pkts(&self) -> usize {
        self.pkts
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn name(&self) -> &'static str {
        "fq_codel"
    }
    aqm_book_accessors!(book, drops_inside);
    fn flow_queue_stats(&self, now: SimTime) -> Vec<FlowQueueStats> {
        let used = self.queues.iter().enumerate().filter(|(_, f)| !f.occ.flow_keys.is_empty());
        used.map(|(i, f)| f.occ.report(i as u32, now, f.q.len(), f.q.bytes())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Ecn;

    fn arr(id: u32, flow: u64) -> Arrival {
        Arrival { id, bytes: 1000, link_busy: true, busy_bytes: 1000, ecn: Ecn::NotEct, flow }
    }

    fn fq(limit: u32) -> FqCodel {
        FqCodel::new(CodelParams::RFC8289, QueueLimit::Packets(limit), 1024, 1514, 32 << 20, 7)
    }

    /// Four bulk flows offer twice the link rate (1000 B packets, one served per ms); a sparse
    /// flow sends one packet every 20 ms. DRR++ puts the sparse flow's queue on `new_flows`
    /// each time, so its packet leaves within a packet time or two while the bulk flows queue
    /// tens of milliseconds (CoDel keeps them near target, not at zero).
    #[test]
    fn a_sparse_flow_is_isolated_from_bulk_flows() {
        let mut q = fq(10_000);
        let bulk: Vec<u64> = (1..=4).collect();
        let sparse = 99u64;
        let distinct: HashSet<usize> = bulk.iter().chain([&sparse]).map(|&f| q.queue_of(f)).collect();
        assert_eq!(distinct.len(), 5, "the five flows hash to five queues");
        let (mut id, mut sparse_ids, mut sparse_delays, mut bulk_delays) = (0u32, HashSet::new(), Vec::new(), Vec::new());
        for ms in 0..3000u64 {
            let now = SimTime::from_millis(ms);
            for &f in &bulk {
                if ms % 2 == 0 {
                    q.enqueue(now, arr(id, f)).unwrap();
                    id += 1;
                }
            }
            if ms % 20 == 10 {
                q.enqueue(now, arr(id, sparse)).unwrap();
                sparse_ids.insert(id);
                id += 1;
            }
            if let Some((pid, _)) = q.dequeue(now) {
                let d = q.last_sojourn().unwrap();
                if sparse_ids.contains(&pid) { sparse_delays.push(d) } else if ms > 1000 { bulk_delays.push(d) }
            }
            while q.pop_inner_drop().is_some() {}
        }
        assert_eq!(sparse_delays.len(), 150, "every sparse packet was sent, none dropped");
        assert!(sparse_delays.iter().all(|d| *d <= SimTime::from_millis(1)), "sparse sojourn {:?}", sparse_delays.iter().max());
        let bulk_mean = bulk_delays.iter().map(|d| d.0 as f64).sum::<f64>() / bulk_delays.len() as f64 / 1e6;
        assert!(bulk_mean > 4.0, "bulk flows queue (mean {bulk_mean} ms)");
        assert!(q.book.stats.drops.get("codel").copied().unwrap_or(0) > 0);
        // Per-flow occupancy: the sparse flow's queue averages well under one packet (it waits
        // at most a packet time, 1 ms in 20), each bulk flow's holds a standing CoDel queue.
        let occ = q.flow_queue_stats(SimTime::from_millis(3000));
        assert_eq!(occ.len(), 5);
        let of = |f: u64| occ.iter().find(|o| o.flow_keys == vec![f]).unwrap().clone();
        let s = of(sparse);
        assert!(s.avg_pkts < 0.1 && s.max_pkts == 1 && s.departed == 150, "{s:?}");
        for f in bulk {
            let b = of(f);
            assert!(b.avg_pkts > 1.0 && b.max_pkts as f64 > b.avg_pkts && (b.avg_bytes - b.avg_pkts * 1000.0).abs() < 1e-6 * b.avg_bytes, "{b:?}");
        }
    }

    /// At the limit the arrival is taken and the head of the fattest queue dropped (§4.1).
    #[test]
    fn overflow_drops_from_the_fattest_queue() {
        let mut q = fq(10);
        for i in 0..8 {
            q.enqueue(SimTime::ZERO, arr(i, 1)).unwrap();
        }
        q.enqueue(SimTime::ZERO, arr(8, 2)).unwrap();
        q.enqueue(SimTime::ZERO, arr(9, 2)).unwrap();
        assert!(q.pop_inner_drop().is_none());
        q.enqueue(SimTime::ZERO, arr(10, 2)).unwrap();
        assert_eq!(q.pop_inner_drop(), Some((0, 1000, DropReason::QueueOverflow)), "flow 1's head, not the arrival");
        assert_eq!((q.len_pkts(), q.queue_len(q.queue_of(1)), q.queue_len(q.queue_of(2))), (10, 7, 3));
        assert_eq!(q.book.stats.drops.get("fattest"), Some(&1));
    }

    /// DRR++: with equal packet sizes two backlogged flows alternate (one quantum of 1514 B is
    /// one 1000 B packet plus a deficit carried over), and the seed moves flows between queues.
    #[test]
    fn round_robin_between_backlogged_flows_and_seeded_hash() {
        let mut q = fq(1000);
        for i in 0..20 {
            q.enqueue(SimTime::ZERO, arr(i, 1 + (i as u64 % 2))).unwrap();
        }
        let order: Vec<u32> = (0..20).map(|_| q.dequeue(SimTime::ZERO).unwrap().0 % 2).collect();
        let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(switches >= 9, "flows share the link: {order:?}");
        let other = FqCodel::new(CodelParams::RFC8289, QueueLimit::Packets(10), 1024, 1514, 1 << 20, 8);
        assert!((1..50u64).any(|f| other.queue_of(f) != fq(10).queue_of(f)));
        assert!((1..50u64).all(|f| fq(10).queue_of(f) == fq(10).queue_of(f)));
    }
}
