//! PIE, Proportional Integral controller Enhanced (R. Pan, P. Natarajan, F. Baker, G. White,
//! RFC 8033, 2017).
//!
//! Every `tupdate` (15 ms, §4.2) the drop probability moves by
//! `p = α·(qdelay − target) + β·(qdelay − qdelay_old)` (α = 0.125 Hz, β = 1.25 Hz, target 15 ms),
//! where `qdelay` is the current queueing delay; while the probability is small the step is
//! divided (the auto-tuning of α and β, §4.2: by 2048 below 10⁻⁶, 512 below 10⁻⁵, 128 below
//! 10⁻⁴, 32 below 10⁻³, 8 below 10⁻², 2 below 10⁻¹), and above 10 % a single step is capped at
//! 2 %. When the queue stays empty (`qdelay` and `qdelay_old` both 0) the probability decays by
//! 2 % per update (§4.2). An arrival is dropped with that probability (§4.1) unless the burst
//! allowance (`max_burst`, 150 ms, §4.4) is not yet spent, or the queue is short (the §4.1
//! safeguard: `qdelay_old` < target/2 with probability < 20 %, or at most two packets' bytes
//! queued). The burst allowance is restored once the probability is 0 and both delays are below
//! target/2 (§4.4). With `ecn = true` an ECN-capable packet is CE-marked instead of dropped while
//! the probability is at most 10 % (§5.1); above that it is dropped as any other.
//!
//! Deliberate readings: the queueing delay is measured with timestamps (§4.3's alternative to the
//! departure-rate estimate, as Linux's default): the sojourn of the last packet that left, 0 while
//! the queue is empty. The periodic update runs when the next packet arrives or leaves, once for
//! every `tupdate` boundary passed (nothing the update reads changes between packets, so this is
//! the timer's result at the timer's instants). "Two packets" is twice the largest packet seen (as
//! CoDel's `maxpacket`). The optional de-randomization of §5.4 is not built. The tail limit drops
//! arrivals as DropTail (`overflow`).

use rand::Rng;

use super::aqm_book::{aqm_book_accessors, AqmBook};
use super::discipline::{Discipline, ParamError, Params, QueueSetup};
use super::fifo::Fifo;
use super::packet::{DropReason, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use crate::engine::{SimTime, StreamRng};

pub const ENTRY: Discipline = Discipline {
    name: "pie",
    family: "PIE",
    description: "PIE (RFC 8033): drop probability from queue delay every tupdate (15 ms), alpha 0.125/beta 1.25 auto-tuned, target 15 ms, 150 ms burst allowance",
    params: &["target_delay", "tupdate", "alpha", "beta", "max_burst", "ecn"],
    build: build_pie,
};

fn build_pie(s: QueueSetup, q: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    let p = PieParams::from_params(q)?;
    Ok(Box::new(Pie::new(p, s.limit, s.rng)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    pub target: SimTime,
    pub tupdate: SimTime,
    /// Hz (per second of delay error).
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: SimTime,
    pub ecn: bool,
}

impl PieParams {
    pub const RFC8033: PieParams = PieParams { target: SimTime::from_millis(15), tupdate: SimTime::from_millis(15), alpha: 0.125, beta: 1.25, max_burst: SimTime::from_millis(150), ecn: false };

    pub fn from_params(q: &Params) -> Result<PieParams, ParamError> {
        let d = PieParams::RFC8033;
        let max_burst = q.duration("max_burst").unwrap_or(d.max_burst);
        Ok(PieParams {
            target: q.positive_duration("target_delay", d.target)?,
            tupdate: q.positive_duration("tupdate", d.tupdate)?,
            alpha: q.positive("alpha", d.alpha)?,
            beta: q.positive("beta", d.beta)?,
            max_burst,
            ecn: q.flag("ecn").unwrap_or(false),
        })
    }
}

/// The §4.2 controller, shared with nothing else but kept apart so tests can drive it directly.
#[derive(Clone, Debug)]
pub struct PieController {
    pub drop_prob: f64,
    pub qdelay_old: SimTime,
    pub burst_allowance: SimTime,
    /// The next update instant.
    next_update: SimTime,
}

/// §4.2's auto-tuning: the divisor of the step while the probability is small.
pub fn autotune_divisor(drop_prob: f64) -> f64 {
    match drop_prob {
        p if p < 1e-6 => 2048.0,
        p if p < 1e-5 => 512.0,
        p if p < 1e-4 => 128.0,
        p if p < 1e-3 => 32.0,
        p if p < 1e-2 => 8.0,
        p if p < 1e-1 => 2.0,
        _ => 1.0,
    }
}

impl PieController {
    pub fn new(p: &PieParams) -> PieController {
        PieController { drop_prob: 0.0, qdelay_old: SimTime::ZERO, burst_allowance: p.max_burst, next_update: p.tupdate }
    }

    /// One periodic update with the current queueing delay `qdelay`.
    pub fn update(&mut self, p: &PieParams, qdelay: SimTime) {
        let (cur, old, target) = (qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64(), p.target.as_secs_f64());
        let mut step = (p.alpha * (cur - target) + p.beta * (cur - old)) / autotune_divisor(self.drop_prob);
        if self.drop_prob >= 0.1 && step > 0.02 {
            step = 0.02;
        }
        self.drop_prob += step;
        if qdelay == SimTime::ZERO && self.qdelay_old == SimTime::ZERO {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        let half = SimTime(p.target.0 / 2);
        if self.drop_prob == 0.0 && qdelay < half && self.qdelay_old < half {
            self.burst_allowance = p.max_burst;
        } else {
            self.burst_allowance = self.burst_allowance.saturating_sub(p.tupdate);
        }
        self.qdelay_old = qdelay;
    }

    /// Run every update due at or before `now`, each seeing `qdelay`.
    fn catch_up(&mut self, p: &PieParams, now: SimTime, qdelay: SimTime) {
        while self.next_update <= now {
            self.update(p, qdelay);
            self.next_update = self.next_update + p.tupdate;
        }
    }
}

pub struct Pie {
    pub p: PieParams,
    q: Fifo<SimTime>,
    rng: StreamRng,
    pub ctl: PieController,
    maxpacket: u32,
    pub book: AqmBook,
}

impl Pie {
    pub fn new(p: PieParams, limit: QueueLimit, rng: StreamRng) -> Pie {
        Pie { ctl: PieController::new(&p), p, q: Fifo::default(), rng, maxpacket: 0, book: AqmBook::new(limit) }
    }

    /// The queueing delay the controller reads: the last departure's sojourn, 0 when empty.
    fn qdelay(&self) -> SimTime {
        if self.q.is_empty() {
            SimTime::ZERO
        } else {
            self.book.last_sojourn
        }
    }
}

impl QueueDisc for Pie {
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        let qd = self.qdelay();
        self.ctl.catch_up(&self.p, now, qd);
        self.book.tail_drop(&self.q, a.bytes)?;
        self.maxpacket = self.maxpacket.max(a.bytes);
        let ctl = &self.ctl;
        let safe = (ctl.qdelay_old < SimTime(self.p.target.0 / 2) && ctl.drop_prob < 0.2) || self.q.bytes() <= 2 * self.maxpacket as u64;
        let mut admit = Admit::Queued;
        if ctl.burst_allowance == SimTime::ZERO && !safe && self.rng.gen::<f64>() < ctl.drop_prob {
            if self.p.ecn && a.ect() && ctl.drop_prob <= 0.1 {
                self.book.stats.on_mark("pie");
                admit = Admit::QueuedMarkCe;
            } else {
                self.book.stats.on_drop("pie");
                return Err(DropReason::Early);
            }
        }
        self.q.push(a.id, a.bytes, now);
        Ok(admit)
    }

    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)> {
        let qd = self.qdelay();
        self.ctl.catch_up(&self.p, now, qd);
        let e = self.q.pop()?;
        Some(self.book.depart(now, e))
    }

    fn name(&self) -> &'static str {
        "pie"
    }
    aqm_book_accessors!(book, fifo q);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;
    use crate::net::packet::Ecn;

    fn arr(id: u32, ecn: Ecn) -> Arrival {
        Arrival { id, bytes: 1000, link_busy: true, busy_bytes: 1000, ecn, flow: 0 }
    }

    fn pie(p: PieParams) -> Pie {
        Pie::new(p, QueueLimit::Packets(100_000), RngStreams::new(1).stream("t", 0))
    }

    /// §4.2's auto-tuning, one update at a time with the delay held at 25 ms (10 ms above target,
    /// no change since the last update): the step α·0.010 = 1.25e-3 is divided by the tier the
    /// probability is in, and capped at 2 % above 10 %.
    #[test]
    fn autotuned_steps_per_probability_tier() {
        let p = PieParams::RFC8033;
        let q = SimTime::from_millis(25);
        for (start, divisor) in [(0.0, 2048.0), (5e-6, 512.0), (5e-5, 128.0), (5e-4, 32.0), (5e-3, 8.0), (0.05, 2.0), (0.5, 1.0)] {
            let mut c = PieController::new(&p);
            c.drop_prob = start;
            c.qdelay_old = q;
            c.update(&p, q);
            let step = c.drop_prob - start;
            assert!((step - 0.125 * 0.010 / divisor).abs() < 1e-12, "from {start}: step {step}, want /{divisor}");
        }
        // A jump in delay from 0 to 200 ms at 50 %: α·0.185 + β·0.2 = 0.273, capped at 0.02.
        let mut c = PieController::new(&p);
        c.drop_prob = 0.5;
        c.update(&p, SimTime::from_millis(200));
        assert!((c.drop_prob - 0.52).abs() < 1e-12, "{}", c.drop_prob);
        // An empty queue twice in a row: 2 % decay on top of the (negative) step.
        let mut c = PieController::new(&p);
        c.drop_prob = 0.3;
        c.update(&p, SimTime::ZERO);
        let want = (0.3 - 0.125 * 0.015) * 0.98;
        assert!((c.drop_prob - want).abs() < 1e-12, "{} vs {want}", c.drop_prob);
    }

    /// The RFC's step response: an open-loop load steps from half the link rate to 1.5 times it
    /// (1000 B packets, one served per ms). Before the step nothing is dropped and the
    /// probability stays 0; after it, no drop comes within the 150 ms burst allowance, the
    /// probability climbs through the auto-tuned tiers to the one that balances the load,
    /// 1 − 1/1.5 = 1/3, and the queueing delay settles around the 15 ms target.
    #[test]
    fn probability_answers_a_step_in_load() {
        let mut q = pie(PieParams::RFC8033);
        let (mut id, mut drops, step_ms) = (0u32, Vec::new(), 2000u64);
        let (mut late_prob, mut late_delay, mut n_late) = (0.0, 0.0, 0);
        let mut prob_at = Vec::new();
        for ms in 0..20_000u64 {
            let now = SimTime::from_millis(ms);
            // Arrivals: one every 2 ms before the step, three every 2 ms after it.
            let k = if ms % 2 == 0 { if ms < step_ms { 1 } else { 3 } } else { 0 };
            for _ in 0..k {
                if q.enqueue(now, arr(id, Ecn::NotEct)).is_err() {
                    drops.push(ms);
                }
                id += 1;
            }
            if q.dequeue(now).is_some() && ms >= 12_000 {
                late_delay += q.last_sojourn().unwrap().as_secs_f64();
                n_late += 1;
            }
            if ms >= 12_000 {
                late_prob += q.ctl.drop_prob;
            }
            if ms % 100 == 0 {
                prob_at.push(q.ctl.drop_prob);
            }
        }
        assert!(prob_at[..(step_ms / 100) as usize].iter().all(|&p| p == 0.0), "no probability before the step");
        let first = drops[0];
        assert!(first >= step_ms + 150, "burst allowance: first drop {first} ms");
        assert!(first < step_ms + 1000, "but PIE reacts within a second: {first} ms");
        let (p, d) = (late_prob / 8000.0, late_delay / n_late as f64);
        assert!((p - 1.0 / 3.0).abs() < 0.03, "steady drop probability {p}");
        assert!((0.010..0.020).contains(&d), "steady queueing delay {d} s, target 0.015");
        let rate = drops.iter().filter(|&&m| m >= 12_000).count() as f64 / (8000.0 * 1.5);
        assert!((rate - 1.0 / 3.0).abs() < 0.02, "measured drop fraction {rate}");
    }

    /// Burst allowance: a 100-packet burst into an idle queue with no standing probability goes
    /// through untouched, and with `ecn` an ECT packet is marked rather than dropped while p ≤ 10 %.
    #[test]
    fn bursts_pass_and_ect_is_marked_below_ten_percent() {
        let mut q = pie(PieParams::RFC8033);
        for i in 0..100 {
            assert_eq!(q.enqueue(SimTime::ZERO, arr(i, Ecn::NotEct)), Ok(Admit::Queued));
        }
        let mut q = pie(PieParams { ecn: true, ..PieParams::RFC8033 });
        q.ctl.drop_prob = 0.08;
        q.ctl.burst_allowance = SimTime::ZERO;
        q.ctl.qdelay_old = SimTime::from_millis(30);
        let now = SimTime::from_millis(1);
        let mut v: Vec<Admit> = Vec::new();
        for i in 0..2000 {
            v.push(q.enqueue(now, arr(i, Ecn::Ect0)).unwrap());
        }
        let marks = v.iter().filter(|a| **a == Admit::QueuedMarkCe).count();
        assert!((100..220).contains(&marks), "~8 % of 2000 marked: {marks}");
        q.ctl.drop_prob = 0.5;
        let refused = (0..1000).filter(|i| q.enqueue(now, arr(5000 + i, Ecn::Ect0)).is_err()).count();
        assert!((400..600).contains(&refused), "above 10 % ECT is dropped: {refused}");
    }
}
