//! DualPI2, the coupled dual-queue AQM for L4S (K. De Schepper, B. Briscoe, G. White, RFC 9332,
//! 2023; the example AQM of its Appendix A).
//!
//! * Classification (§2.3, §4.1): a packet whose ECN field is ECT(1) or CE goes to the L queue,
//!   every other (Not-ECT, ECT(0)) to the classic (C) queue. Both share one buffer (`limit`).
//! * The base PI controller (Appendix A.1), every `tupdate` (15 ms):
//!   `p' += α·(qdelay − target) + β·(qdelay − qdelay_old)`, clamped to [0, 1], with target 15 ms,
//!   α = 0.15 Hz and β = 3 Hz (A.1's values derived from RTT_max = 100 ms:
//!   α = 0.1·Tupdate/RTT_max², β = 0.3/RTT_max). `qdelay` is the larger of the two queues' head
//!   sojourns.
//! * Coupling (§2.4): classic packets are dropped (or CE-marked, if ECT(0)) with p_C = (p')²;
//!   L packets are CE-marked with p_L = max(p_native, min(k·p', 1)), k = `coupling` = 2, so at
//!   equilibrium p_C = (p_L/k)².
//! * The L queue's native AQM (A.1): a ramp on the L packet's sojourn, 0 below `l_min_th`
//!   (800 µs), 1 at `l_min_th + l_range` (range 400 µs), linear between; `l_range = 0` makes it a
//!   step. Not applied while the L queue holds a single packet (A.1's `Th_len` = 1 packet).
//! * Scheduling: a time-shifted FIFO (§2.4's TS-FIFO): the L queue is served when its head has
//!   waited at least as long as the classic head minus `time_shift`, else the classic head.
//! * Overload (§4.2.1, A.2): once p_C reaches p_Cmax = min(1/k², 1) (p' ≥ 1/k), L packets are
//!   dropped with p_C as classic ones, and the survivors marked with p_L (= 1).
//!
//! Deliberate readings: `time_shift` defaults to 2 × target = 30 ms (the RFC leaves the
//! scheduler's weight or shift to the implementation); the periodic update runs when the next
//! packet arrives or leaves, once per `tupdate` boundary passed (nothing the update reads changes
//! in between); classic drops are decided at dequeue (as A.1) and one uniform draw against
//! (p')² stands for A.1's max of two draws against p' (the same probability); the tail limit drops
//! arrivals as DropTail (`overflow`).

use rand::Rng;

use super::aqm_book::{aqm_book_accessors, AqmBook};
use super::aqm_stats::AqmStats;
use super::discipline::{Discipline, ParamError, Params, QueueSetup};
use super::fifo::{Fifo, Queued};
use super::packet::{DropReason, Ecn, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use crate::engine::{SimTime, StreamRng};

pub const ENTRY: Discipline = Discipline {
    name: "dualpi2",
    family: "DualPI2",
    description: "DualPI2 (RFC 9332): ECT(1)/CE to an L queue with a 0.8-1.2 ms marking ramp, classic PI2 (target 15 ms) coupled p_L = 2p', p_C = p'^2, time-shifted FIFO",
    params: &["target_delay", "tupdate", "alpha", "beta", "coupling", "l_min_th", "l_range", "time_shift", "ecn"],
    build: build_dualpi2,
};

fn build_dualpi2(s: QueueSetup, q: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    let p = DualPi2Params::from_params(q)?;
    Ok(Box::new(DualPi2::new(p, s.limit, s.rng)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Params {
    pub target: SimTime,
    pub tupdate: SimTime,
    pub alpha: f64,
    pub beta: f64,
    /// k.
    pub coupling: f64,
    pub l_min_th: SimTime,
    pub l_range: SimTime,
    pub time_shift: SimTime,
    /// Mark ECT(0) classic packets instead of dropping them (RFC 3168 classic ECN).
    pub ecn: bool,
}

impl DualPi2Params {
    pub const RFC9332: DualPi2Params = DualPi2Params {
        target: SimTime::from_millis(15),
        tupdate: SimTime::from_millis(15),
        alpha: 0.15,
        beta: 3.0,
        coupling: 2.0,
        l_min_th: SimTime::from_micros(800),
        l_range: SimTime::from_micros(400),
        time_shift: SimTime::from_millis(30),
        ecn: true,
    };

    pub fn from_params(q: &Params) -> Result<DualPi2Params, ParamError> {
        let d = DualPi2Params::RFC9332;
        let target = q.positive_duration("target_delay", d.target)?;
        Ok(DualPi2Params {
            target,
            tupdate: q.positive_duration("tupdate", d.tupdate)?,
            alpha: q.positive("alpha", d.alpha)?,
            beta: q.positive("beta", d.beta)?,
            coupling: q.positive("coupling", d.coupling)?,
            l_min_th: q.duration("l_min_th").unwrap_or(d.l_min_th),
            l_range: q.duration("l_range").unwrap_or(d.l_range),
            time_shift: q.duration("time_shift").unwrap_or(SimTime(2 * target.0)),
            ecn: q.flag("ecn").unwrap_or(d.ecn),
        })
    }

    /// The native L4S ramp at sojourn `d`.
    pub fn native_l(&self, d: SimTime) -> f64 {
        if d < self.l_min_th {
            0.0
        } else if d >= self.l_min_th + self.l_range {
            1.0
        } else {
            (d - self.l_min_th).0 as f64 / self.l_range.0 as f64
        }
    }
}

/// Queue classes, for per-class statistics.
pub const CLASSES: [&str; 2] = ["l4s", "classic"];

pub struct DualPi2 {
    pub p: DualPi2Params,
    lq: Fifo<SimTime>,
    cq: Fifo<SimTime>,
    rng: StreamRng,
    /// p', the base probability.
    pub base_prob: f64,
    qdelay_old: SimTime,
    next_update: SimTime,
    /// ECT(0) packets in the classic queue (may be marked instead of dropped).
    ect0: std::collections::HashSet<PacketId>,
    pub book: AqmBook,
    /// Sojourn times and counts per class ([`CLASSES`] order).
    pub class_stats: [AqmStats; 2],
}

fn head_wait(q: &Fifo<SimTime>, now: SimTime) -> SimTime {
    q.front().map_or(SimTime::ZERO, |e| now.saturating_sub(e.stamp))
}

impl DualPi2 {
    pub fn new(p: DualPi2Params, limit: QueueLimit, rng: StreamRng) -> DualPi2 {
        DualPi2 {
            p,
            lq: Fifo::default(),
            cq: Fifo::default(),
            rng,
            base_prob: 0.0,
            qdelay_old: SimTime::ZERO,
            next_update: p.tupdate,
            ect0: Default::default(),
            book: AqmBook::new(limit),
            class_stats: Default::default(),
        }
    }

    /// Packets waiting in the L and classic queues.
    pub fn lens(&self) -> (usize, usize) {
        (self.lq.len(), self.cq.len())
    }

    /// p_C = (p')².
    pub fn prob_classic(&self) -> f64 {
        self.base_prob * self.base_prob
    }
    /// The coupled L probability min(k·p', 1).
    pub fn prob_coupled_l(&self) -> f64 {
        (self.p.coupling * self.base_prob).min(1.0)
    }

    /// One PI update (A.1 `dualpi2_update`) with queueing delay `qdelay`.
    pub fn update(&mut self, qdelay: SimTime) {
        let (cur, old, target) = (qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64(), self.p.target.as_secs_f64());
        self.base_prob = (self.base_prob + self.p.alpha * (cur - target) + self.p.beta * (cur - old)).clamp(0.0, 1.0);
        self.qdelay_old = qdelay;
    }

    fn catch_up(&mut self, now: SimTime) {
        while self.next_update <= now {
            // The queues' head sojourns at the update instant (nothing moved since the last packet).
            let t = self.next_update;
            let d = head_wait(&self.lq, t).max(head_wait(&self.cq, t));
            self.update(d);
            self.next_update = self.next_update + self.p.tupdate;
        }
    }

    fn overloaded(&self) -> bool {
        self.base_prob * self.p.coupling >= 1.0
    }

    fn depart(&mut self, now: SimTime, e: Queued<SimTime>, class: usize, mark: bool) -> (PacketId, u32) {
        let r = self.book.depart_marked(now, e, mark);
        self.class_stats[class].on_departure(self.book.last_sojourn);
        r
    }

    fn drop_packet(&mut self, e: Queued<SimTime>, class: usize) {
        self.book.drop_inside(e, DropReason::Early, "dualpi2");
        self.class_stats[class].on_drop("dualpi2");
    }
}

impl QueueDisc for DualPi2 {
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        self.catch_up(now);
        let held = match self.book.limit {
            QueueLimit::Packets(n) => self.lq.len() + self.cq.len() >= n as usize,
            QueueLimit::Bytes(b) => self.lq.bytes() + self.cq.bytes() + a.bytes as u64 > b,
        };
        let l4s = matches!(a.ecn, Ecn::Ect1 | Ecn::Ce);
        if held {
            self.class_stats[if l4s { 0 } else { 1 }].on_drop("overflow");
            return Err(self.book.overflow());
        }
        if l4s {
            self.lq.push(a.id, a.bytes, now);
        } else {
            if a.ecn == Ecn::Ect0 {
                self.ect0.insert(a.id);
            }
            self.cq.push(a.id, a.bytes, now);
        }
        Ok(Admit::Queued)
    }

    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)> {
        self.catch_up(now);
        loop {
            let (lw, cw) = (self.lq.front().map(|e| now.saturating_sub(e.stamp)), self.cq.front().map(|e| now.saturating_sub(e.stamp)));
            let serve_l = match (lw, cw) {
                (None, None) => return None,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(l), Some(c)) => l + self.p.time_shift >= c,
            };
            if serve_l {
                let e = self.lq.pop().expect("L head");
                let sojourn = now.saturating_sub(e.stamp);
                let native = if self.lq.is_empty() { 0.0 } else { self.p.native_l(sojourn) };
                if self.overloaded() && self.rng.gen::<f64>() < self.prob_classic() {
                    self.drop_packet(e, 0);
                    continue;
                }
                let p_l = native.max(self.prob_coupled_l());
                let mark = p_l > 0.0 && self.rng.gen::<f64>() < p_l;
                if mark {
                    let cause = if native >= self.prob_coupled_l() { "l4s_native" } else { "coupled" };
                    self.book.stats.on_mark(cause);
                    self.class_stats[0].on_mark(cause);
                }
                return Some(self.depart(now, e, 0, mark));
            }
            let e = self.cq.pop().expect("C head");
            let ect0 = self.ect0.remove(&e.id);
            let p_c = self.prob_classic();
            if p_c > 0.0 && self.rng.gen::<f64>() < p_c {
                if self.p.ecn && ect0 {
                    self.book.stats.on_mark("classic");
                    self.class_stats[1].on_mark("classic");
                    return Some(self.depart(now, e, 1, true));
                }
                self.drop_packet(e, 1);
                continue;
            }
            return Some(self.depart(now, e, 1, false));
        }
    }

    fn len_pkts(&self) -> usize {
        self.lq.len() + self.cq.len()
    }
    fn len_bytes(&self) -> u64 {
        self.lq.bytes() + self.cq.bytes()
    }
    fn name(&self) -> &'static str {
        "dualpi2"
    }
    aqm_book_accessors!(book, drops_inside);
    fn class_stats(&self) -> Vec<(&'static str, &AqmStats)> {
        CLASSES.iter().copied().zip(self.class_stats.iter()).collect()
    }
}

#[cfg(test)]
#[path = "tests_dualpi2.rs"]
mod tests;
