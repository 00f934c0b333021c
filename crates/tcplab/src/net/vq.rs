//! Kelly's virtual-queue ECN marker (T. Kelly, *On engineering a stable and scalable TCP
//! variant*, 2002 — seed 003 §3.1, eq. 11), a hybrid of Gibbens & Kelly's virtual queue and REM.
//!
//! * A virtual queue of `b` bytes drains continuously at `θ·C` (C the link rate).
//! * Each arriving packet (every packet: data and ACKs alike) is marked with probability
//!   `1 − exp(−φ·b/s)` (eq. 11), `b` the virtual queue at its arrival, `s` the predominant packet
//!   size; `1/φ` is the marker's "effective buffer size".
//! * After the decision the packet's size is added to the virtual queue, which is kept within
//!   `[0, 30·s]` (§3.1: "this ensures that queue dynamics are kept as fast as possible").
//! * The real packet joins a FIFO of `limit` (e.g. 128 KB, §4.1) served at C; one that does not
//!   fit is dropped (`queue_overflow`).
//!
//! A marked ECN-capable packet is CE-marked through the generic path ([`Admit::QueuedMarkCe`]); a
//! "mark" drawn for a packet that is not ECN-capable (a pure ACK) changes nothing on it but is
//! counted in `mark_decisions`, so `mark_decisions / arrivals` is the marker's own probability.
//!
//! Deliberate readings: the drain is a fluid (byte-exact) process evaluated lazily at each
//! arrival; eq. 12's analysis instead serves whole packets as a Poisson process (the paper's
//! model, not its simulator). A packet refused by the real buffer has still passed the marker
//! and counts in the virtual queue (the decision precedes the FIFO in §3.1's order).

use rand::Rng;

use super::fifo::Fifo;
use super::packet::{DropReason, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use super::discipline::{Discipline, ParamError, Params, QueueSetup};
use crate::engine::{SimTime, StreamRng};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VqParams {
    /// Virtual capacity as a fraction of the link rate (§4: 0.9).
    pub theta: f64,
    /// Marking gain; 1/φ is the effective buffer in packets (§4: 0.125).
    pub phi: f64,
    /// Predominant packet size s, bytes.
    pub packet_size: u32,
    /// Virtual queue cap in packets of `packet_size` (§3.1: 30).
    pub cap_pkts: f64,
    /// The real FIFO buffer.
    pub limit: QueueLimit,
    pub link_rate_bps: u64,
}

impl VqParams {
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.theta > 0.0 && self.theta <= 1.0) {
            return Err(("theta", format!("must be in (0, 1] (a fraction of the link rate), got {}", self.theta)));
        }
        if !(self.phi > 0.0 && self.phi.is_finite()) {
            return Err(("phi", format!("must be a finite number > 0, got {}", self.phi)));
        }
        if self.packet_size == 0 {
            return Err(("packet_size", "must be a positive size".into()));
        }
        if !(self.cap_pkts > 0.0 && self.cap_pkts.is_finite()) {
            return Err(("cap_pkts", format!("must be a finite number of packets > 0, got {}", self.cap_pkts)));
        }
        Ok(())
    }
}

/// The registry row ([`super::registry`]).
pub const ENTRY: Discipline = Discipline {
    name: "vq",
    family: "virtual-queue",
    description: "Kelly's virtual-queue ECN marker (seed 003 eq. 11): a virtual queue at theta·C marks with 1 − exp(−phi·b/s)",
    params: &["theta", "phi", "packet_size", "cap_pkts"],
    build: build_vq,
};

fn build_vq(s: QueueSetup, q: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    let p = VqParams {
        theta: q.num("theta").unwrap_or(0.9),
        phi: q.num("phi").unwrap_or(0.125),
        packet_size: q.packet_size("packet_size", 1000)?,
        cap_pkts: q.num("cap_pkts").unwrap_or(30.0),
        limit: s.limit,
        link_rate_bps: s.link_rate_bps,
    };
    p.validate()?;
    Ok(Box::new(VirtualQueue::new(p, s.rng)))
}

pub struct VirtualQueue {
    pub p: VqParams,
    q: Fifo,
    /// Virtual queue content, bytes, as of `last`.
    pub vq_bytes: f64,
    last: SimTime,
    /// Virtual drain, bytes per ns.
    drain_per_ns: f64,
    cap_bytes: f64,
    rng: StreamRng,
    pub arrivals: u64,
    pub mark_decisions: u64,
}

impl VirtualQueue {
    pub fn new(p: VqParams, rng: StreamRng) -> VirtualQueue {
        VirtualQueue {
            drain_per_ns: p.theta * p.link_rate_bps as f64 / 8.0 / 1e9,
            cap_bytes: p.cap_pkts * p.packet_size as f64,
            p,
            q: Fifo::default(),
            vq_bytes: 0.0,
            last: SimTime::ZERO,
            rng,
            arrivals: 0,
            mark_decisions: 0,
        }
    }

    /// Drain the virtual queue up to `now`, decide eq. 11's mark, add `size`. Returns the mark.
    pub fn mark_decision(&mut self, now: SimTime, size: u32) -> bool {
        let dt = now.0.saturating_sub(self.last.0) as f64;
        self.last = self.last.max(now);
        self.vq_bytes = (self.vq_bytes - dt * self.drain_per_ns).max(0.0);
        let p = 1.0 - (-self.p.phi * self.vq_bytes / self.p.packet_size as f64).exp();
        let mark = p > 0.0 && self.rng.gen::<f64>() < p;
        self.vq_bytes = (self.vq_bytes + size as f64).min(self.cap_bytes);
        self.arrivals += 1;
        self.mark_decisions += mark as u64;
        mark
    }
}

impl QueueDisc for VirtualQueue {
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        let mark = self.mark_decision(now, a.bytes);
        if !self.q.fits(self.p.limit, a.bytes, 0, 0) {
            return Err(DropReason::QueueOverflow);
        }
        self.q.push(a.id, a.bytes, ());
        Ok(if mark && a.ect() { Admit::QueuedMarkCe } else { Admit::Queued })
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
        "vq"
    }
    fn limit(&self) -> Option<QueueLimit> {
        Some(self.p.limit)
    }
    fn sees_every_arrival(&self) -> bool {
        true
    }
    fn average_pkts(&self) -> Option<f64> {
        // The virtual queue in packets of `packet_size`, drawn beside the real queue.
        Some(self.vq_bytes / self.p.packet_size as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn vq(theta: f64, phi: f64, rate_bps: u64, cap: f64) -> VirtualQueue {
        let p = VqParams { theta, phi, packet_size: 1000, cap_pkts: cap, limit: QueueLimit::Bytes(128 * 1024), link_rate_bps: rate_bps };
        VirtualQueue::new(p, StreamRng::seed_from_u64(5))
    }

    #[test]
    fn eq11_probability_drain_and_cap() {
        let mut q = vq(0.5, 0.125, 8_000_000, 30.0); // virtual drain 0.5 B/ns·... = 500 000 B/s
        // Empty: never marked; then 1000 B in the virtual queue.
        assert!(!q.mark_decision(SimTime(0), 1000));
        assert_eq!(q.vq_bytes, 1000.0);
        // 1 ms later 500 B drained.
        q.mark_decision(SimTime(1_000_000), 1000);
        assert!((q.vq_bytes - 1500.0).abs() < 1e-6);
        // The cap: 30 packets of 1000 B.
        for _ in 0..100 {
            q.mark_decision(SimTime(1_000_000), 1000);
        }
        assert_eq!(q.vq_bytes, 30_000.0);
        // At the cap the mark probability is 1 − e^{−0.125·30} = 0.9765.
        let n = 20_000;
        let mut marks = 0;
        for _ in 0..n {
            q.vq_bytes = 30_000.0;
            marks += q.mark_decision(SimTime(1_000_000), 1000) as u32;
        }
        let p = marks as f64 / n as f64;
        assert!((p - (1.0 - (-3.75f64).exp())).abs() < 0.005, "{p}");
    }

    /// Eq. 12 (§3.1): Poisson arrivals at y < θC. With exponential packet sizes of mean s the
    /// fluid virtual queue is an M/M/1 workload: P(mark) = ρφ/(1 − ρ + φ) exactly (no cap); the
    /// paper's eq. 12 serves whole packets as a Poisson process, ρ(1 − e^{−φ})/(1 − ρe^{−φ}),
    /// a few percent above. 10⁶ arrivals per load.
    #[test]
    fn poisson_arrivals_match_eq12() {
        let rate = 30_000_000u64;
        let (theta, phi) = (0.9, 0.125);
        let mut rng = StreamRng::seed_from_u64(99);
        for rho in [0.3, 0.5, 0.7, 0.85] {
            let mut q = vq(theta, phi, rate, 1e9);
            let mu_pkts = theta * rate as f64 / 8.0 / 1000.0; // virtual service, packets of s per s
            let y = rho * mu_pkts;
            let mut t = 0.0f64;
            let n = 1_000_000;
            let mut marks = 0u64;
            for _ in 0..n {
                t += -rng.gen::<f64>().max(1e-300).ln() / y;
                let size = (-rng.gen::<f64>().max(1e-300).ln() * 1000.0).round().max(1.0) as u32;
                marks += q.mark_decision(SimTime((t * 1e9) as u64), size) as u64;
            }
            let p = marks as f64 / n as f64;
            let exact = rho * phi / (1.0 - rho + phi);
            let eq12 = rho * (1.0 - (-phi).exp()) / (1.0 - rho * (-phi).exp());
            eprintln!("rho {rho}: measured {p:.5}, M/M/1 workload {exact:.5}, eq. 12 {eq12:.5} ({:+.1} %)", (p / eq12 - 1.0) * 100.0);
            assert!((p - exact).abs() < 0.02 * exact, "rho {rho}: {p} vs exact {exact}");
            assert!((p - eq12).abs() < 0.07 * eq12, "rho {rho}: {p} vs eq. 12 {eq12}");
        }
    }
}
