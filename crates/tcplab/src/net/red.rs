//! Random Early Detection (S. Floyd, V. Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993 — "F&J" below) and Adaptive RED (S. Floyd,
//! R. Gummadi, S. Shenker, "Adaptive RED: An Algorithm for Increasing the Robustness of RED's
//! Active Queue Management", 2001 — "ARED"), with ECN marking (RFC 3168 §7).
//!
//! Per arrival (F&J Fig. 2, as ns-2's `queue/red.cc` organises it):
//! * average: `avg ← avg·(1−w_q)^k + w_q·q`, `q` the waiting packets before this arrival
//!   (bytes / `mean_pktsize` in byte mode), `k = 1` normally and `k = m + 1` after the queue
//!   was empty, `m = ⌊idle time / s⌋` with `s` the transmission time of a `mean_pktsize` packet
//!   (F&J §4 "idle time"; ns-2 `estimator(nqueued, m + 1, …)`). Idle starts at time zero and
//!   whenever the last waiting packet leaves the queue, i.e. when it *starts* transmission.
//!   Deviation: ns-2's `deque()` sets `idletime_` only when the link asks for a packet and finds
//!   none, at the *end* of that last transmission, so our `m` is larger by about one
//!   transmission time of the last packet.
//! * `avg < min_th`, or at most one packet waiting (ns-2: "don't drop if only one packet is
//!   queued"): admit; forget the count (ns-2 resets `old`, so counting restarts at 1).
//! * `min_th ≤ avg < max_th` (and, ns-2, more than one packet queued): `count += 1`,
//!   `p_b = max_p·(avg − min_th)/(max_th − min_th)` (×`size/mean_pktsize` in byte mode, F&J §4),
//!   then the count-based uniformisation: without `wait`, `p_a = p_b/(1 − count·p_b)` (F&J
//!   eq. for p_a; inter-drop gaps uniform on 1 … 1/p_b − 1); with `wait` (ns-2 default), `p_a = 0`
//!   while `count·p_b < 1`, `p_b/(2 − count·p_b)` while `< 2`, else 1 (gaps uniform on
//!   1/p_b … 2/p_b − 1). With probability `p_a` the packet is marked (ECT packet, ECN on) or
//!   dropped, and `count = 0`. The first arrival above `min_th` after a spell below only sets
//!   `count = 1` (ns-2's `old` flag).
//! * `gentle` and `max_th ≤ avg < 2·max_th`: `p_b = max_p + (1 − max_p)(avg − max_th)/max_th`
//!   (Floyd 2000, "Recommendation on using the gentle_ variant of RED"), same uniformisation.
//! * above that (`avg ≥ max_th`, or `2·max_th` when gentle): forced drop, never a mark (RFC 3168
//!   §7: mark only where the queue is not persistently overloaded; ns-2 does the same).
//! * the buffer limit is a hard tail drop (`queue_overflow`).
//!
//! ns-2 defaults of the release seed 004 ran, ns-2.1b8a (docs/ns2-defaults.md says why that one;
//! its `tcl/lib/ns-default.tcl` lines 97–108): `thresh_ 5`, `maxthresh_ 15`, `q_weight_ 0.002`,
//! `linterm_ 10` (max_p = 1/linterm = 0.1), `wait_ true`, `gentle_ true` (line 106; the default
//! since 23 April 2001, ns-2 CHANGES "Sun May 27 2001"), `bytes_ false`, `queue_in_bytes_ false`,
//! `mean_pktsize_ 500`, `setbit_ false` (drop, do not mark), `drop_tail_ true`. These are
//! [`RedParams::ns2`].
//!
//! Adaptive RED (ARED §4, ns-2.35 `adaptive_ 1`): every `interval` (0.5 s) `max_p` moves
//! toward keeping `avg` inside `[min_th + 0.4(max_th − min_th), min_th + 0.6(max_th − min_th)]`:
//! above it and `max_p ≤ top` (0.5): `max_p += min(0.01, max_p/4)` (additive); below it and
//! `max_p ≥ bottom` (0.01): `max_p ·= β` (0.9). Automatic parameters from the target delay
//! (default 5 ms, ns-2 `targetdelay_ 0.005`): `min_th = max(5, target·C/2)`,
//! `max_th = 3·min_th`, `w_q = 1 − exp(−1/C)`, C the link rate in `mean_pktsize` packets/s;
//! gentle on. No timer, in ns-2 or here: ns-2's `enque()` calls `updateMaxP` on an arrival when
//! `now > lastset + interval` and sets `lastset = now`, so an idle queue adapts nothing.
//! Deviation: here the update points lie on a fixed grid (`interval`, `2·interval`, …) and an
//! arrival after a gap of several intervals applies one update per missed grid point (ns-2:
//! one update, then the next no sooner than `interval` after that arrival).

use rand::Rng;

use super::fifo::Fifo;
use super::packet::{DropReason, PacketId};
use super::queue::{Admit, Arrival, QueueDisc, QueueLimit};
use super::discipline::{Discipline, ParamError, Params, QueueSetup};
use crate::engine::{SimTime, StreamRng};

/// Adaptive RED's controller settings (ARED §4; ns-2.35 defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AredParams {
    pub interval: SimTime,
    /// Target queueing delay (ns-2 `targetdelay_`, 5 ms).
    pub target_delay: SimTime,
    /// Upper bound on the additive increase (ARED: min(0.01, max_p/4)).
    pub alpha: f64,
    /// Multiplicative decrease factor (0.9).
    pub beta: f64,
    /// max_p stays within [bottom, top] (0.01, 0.5).
    pub top: f64,
    pub bottom: f64,
}

impl Default for AredParams {
    fn default() -> Self {
        AredParams { interval: SimTime::from_millis(500), target_delay: SimTime::from_millis(5), alpha: 0.01, beta: 0.9, top: 0.5, bottom: 0.01 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// Thresholds on the average queue, in packets (of `mean_pktsize` bytes in byte mode).
    pub min_th: f64,
    pub max_th: f64,
    pub w_q: f64,
    pub max_p: f64,
    pub gentle: bool,
    pub wait: bool,
    /// Byte mode (ns-2 `bytes_` + `queue-in-bytes_`): the average counts bytes / mean_pktsize
    /// and the drop probability scales with the packet size.
    pub byte_mode: bool,
    pub mean_pktsize: u32,
    /// Mark ECN-capable packets instead of dropping them (ns-2 `setbit_`).
    pub ecn: bool,
    pub limit: QueueLimit,
    pub adaptive: Option<AredParams>,
    /// Rate of the link this queue feeds (idle-time decay, ARED's automatic parameters).
    pub link_rate_bps: u64,
}

impl RedParams {
    /// ns-2.1b8a defaults (see the module header) for a buffer of `limit`.
    pub fn ns2(limit: QueueLimit, link_rate_bps: u64) -> RedParams {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            max_p: 0.1,
            gentle: true,
            wait: true,
            byte_mode: false,
            mean_pktsize: 500,
            ecn: false,
            limit,
            adaptive: None,
            link_rate_bps,
        }
    }

    /// Adaptive RED's automatic thresholds and weight from the target delay (ARED §5).
    pub fn ared(limit: QueueLimit, link_rate_bps: u64, mean_pktsize: u32, a: AredParams) -> RedParams {
        let c = link_rate_bps as f64 / (8.0 * mean_pktsize as f64);
        let min_th = (a.target_delay.as_secs_f64() * c / 2.0).max(5.0);
        RedParams {
            min_th,
            max_th: 3.0 * min_th,
            w_q: 1.0 - (-1.0 / c).exp(),
            max_p: 0.1,
            gentle: true,
            wait: true,
            byte_mode: false,
            mean_pktsize,
            ecn: false,
            limit,
            adaptive: Some(a),
            link_rate_bps,
        }
    }

    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.min_th >= 0.0 && self.min_th.is_finite()) {
            return Err(("min_th", format!("must be a finite number of packets >= 0, got {}", self.min_th)));
        }
        if !(self.max_th > self.min_th && self.max_th.is_finite()) {
            return Err(("max_th", format!("must exceed min_th ({}), got {}", self.min_th, self.max_th)));
        }
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(("w_q", format!("must be in (0, 1], got {}", self.w_q)));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(("max_p", format!("must be in (0, 1], got {}", self.max_p)));
        }
        if self.mean_pktsize == 0 {
            return Err(("mean_pktsize", "must be positive".into()));
        }
        Ok(())
    }
}

const RED_PARAMS: &[&str] = &["min_th", "max_th", "w_q", "max_p", "gentle", "wait", "byte_mode", "mean_pktsize", "ecn"];

/// The registry rows ([`super::registry`]).
pub const ENTRY_RED: Discipline = Discipline {
    name: "red",
    family: "RED",
    description: "Random Early Detection (Floyd & Jacobson 1993), ns-2 defaults; ecn = true marks instead of dropping",
    params: RED_PARAMS,
    build: build_red,
};
pub const ENTRY_ARED: Discipline = Discipline {
    name: "ared",
    family: "Adaptive RED",
    description: "Adaptive RED (Floyd, Gummadi, Shenker 2001): thresholds from target_delay, max_p adapted",
    params: &["min_th", "max_th", "w_q", "max_p", "gentle", "wait", "byte_mode", "mean_pktsize", "ecn", "target_delay", "interval"],
    build: build_ared,
};

fn build_red(s: QueueSetup, q: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    build(s, q, false)
}
fn build_ared(s: QueueSetup, q: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
    build(s, q, true)
}

/// RED or Adaptive RED from the scenario's parameters; ARED's thresholds follow from
/// `target_delay` unless set (`max_th` = 3·`min_th` when only `min_th` is).
fn build(s: QueueSetup, q: &Params, ared: bool) -> Result<Box<dyn QueueDisc>, ParamError> {
    let mean = q.packet_size("mean_pktsize", 500)?;
    let mut p = if ared {
        let mut a = AredParams::default();
        a.target_delay = q.positive_duration("target_delay", a.target_delay)?;
        a.interval = q.positive_duration("interval", a.interval)?;
        RedParams::ared(s.limit, s.link_rate_bps, mean, a)
    } else {
        let mut p = RedParams::ns2(s.limit, s.link_rate_bps);
        p.mean_pktsize = mean;
        p
    };
    if let Some(v) = q.num("min_th") {
        p.min_th = v;
        if ared && !q.is_set("max_th") {
            p.max_th = 3.0 * v;
        }
    }
    if let Some(v) = q.num("max_th") {
        p.max_th = v;
    }
    if let Some(v) = q.num("w_q") {
        p.w_q = v;
    }
    if let Some(v) = q.num("max_p") {
        p.max_p = v;
    }
    p.gentle = q.flag("gentle").unwrap_or(p.gentle);
    p.wait = q.flag("wait").unwrap_or(p.wait);
    p.byte_mode = q.flag("byte_mode").unwrap_or(p.byte_mode);
    p.ecn = q.flag("ecn").unwrap_or(p.ecn);
    p.validate()?;
    Ok(Box::new(Red::new(p, s.rng)))
}

/// RED / Adaptive RED queue. Counters are public for tests and the summary.
pub struct Red {
    pub p: RedParams,
    q: Fifo,
    pub avg: f64,
    count: i64,
    /// ns-2's `old`: avg was above min_th at the previous arrival.
    above: bool,
    /// The queue emptied at this time (idle-time decay).
    idle_since: Option<SimTime>,
    /// Transmission time of a mean-size packet, ns.
    s_ns: f64,
    next_adapt: SimTime,
    rng: StreamRng,
    pub early_drops: u64,
    pub forced_drops: u64,
    pub marks: u64,
}

impl Red {
    pub fn new(p: RedParams, rng: StreamRng) -> Red {
        let s_ns = p.mean_pktsize as f64 * 8.0 * 1e9 / p.link_rate_bps.max(1) as f64;
        let next_adapt = p.adaptive.map_or(SimTime::MAX, |a| a.interval);
        Red {
            p,
            q: Fifo::default(),
            avg: 0.0,
            count: 0,
            above: false,
            idle_since: Some(SimTime::ZERO),
            s_ns,
            next_adapt,
            rng,
            early_drops: 0,
            forced_drops: 0,
            marks: 0,
        }
    }

    /// Current max_p (changes under Adaptive RED).
    pub fn max_p(&self) -> f64 {
        self.p.max_p
    }

    fn q_units(&self) -> f64 {
        if self.p.byte_mode {
            self.q.bytes() as f64 / self.p.mean_pktsize as f64
        } else {
            self.q.len() as f64
        }
    }

    /// F&J average update for an arrival at `now`.
    fn update_avg(&mut self, now: SimTime) {
        let w = self.p.w_q;
        let mut k = 1.0;
        if let Some(t) = self.idle_since.take() {
            let m = ((now.0.saturating_sub(t.0)) as f64 / self.s_ns).floor();
            k = m + 1.0;
        }
        self.avg = self.avg * (1.0 - w).powf(k) + w * self.q_units();
    }

    /// ARED's max_p adaptation (ARED Fig. 3), run at an arrival (see the module doc).
    fn adapt(&mut self, now: SimTime) {
        let Some(a) = self.p.adaptive else { return };
        while now >= self.next_adapt {
            self.next_adapt = self.next_adapt + a.interval;
            let span = self.p.max_th - self.p.min_th;
            let (lo, hi) = (self.p.min_th + 0.4 * span, self.p.min_th + 0.6 * span);
            if self.avg > hi && self.p.max_p <= a.top {
                self.p.max_p += a.alpha.min(self.p.max_p / 4.0);
            } else if self.avg < lo && self.p.max_p >= a.bottom {
                self.p.max_p *= a.beta;
            }
        }
    }

    /// The unmodified drop probability p_b at the current average, or None above the (gentle)
    /// forced-drop boundary.
    pub fn p_b(&self, size: u32) -> Option<f64> {
        let (min_th, max_th, max_p) = (self.p.min_th, self.p.max_th, self.p.max_p);
        let mut pb = if self.avg < max_th {
            max_p * (self.avg - min_th) / (max_th - min_th)
        } else if self.p.gentle && self.avg < 2.0 * max_th {
            max_p + (1.0 - max_p) * (self.avg - max_th) / max_th
        } else {
            return None;
        };
        if self.p.byte_mode {
            pb *= size as f64 / self.p.mean_pktsize as f64;
        }
        Some(pb.max(0.0))
    }

    /// Count-based uniformisation (F&J §4; ns-2 `modify_p` with `wait_`).
    pub fn p_a(pb: f64, count: i64, wait: bool) -> f64 {
        let cp = count as f64 * pb;
        if wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                pb / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            (pb / (1.0 - cp)).min(1.0)
        } else {
            1.0
        }
    }

}

impl QueueDisc for Red {
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason> {
        self.adapt(now);
        self.update_avg(now);
        let qlen = self.q.len();
        let mut verdict = Admit::Queued;
        if self.avg >= self.p.min_th && qlen > 1 {
            match self.p_b(a.bytes) {
                None => {
                    // Forced drop above max_th (2·max_th when gentle).
                    self.count = 0;
                    self.forced_drops += 1;
                    return Err(DropReason::Early);
                }
                Some(pb) => {
                    if !self.above {
                        self.above = true;
                        self.count = 1;
                    } else {
                        self.count += 1;
                        let pa = Red::p_a(pb, self.count, self.p.wait);
                        if self.rng.gen::<f64>() < pa {
                            self.count = 0;
                            if self.p.ecn && a.ect() {
                                verdict = Admit::QueuedMarkCe;
                            } else {
                                self.early_drops += 1;
                                return Err(DropReason::Early);
                            }
                        }
                    }
                }
            }
        } else {
            // avg < min_th, or at most one packet waiting (ns-2 `queue/red.cc` enque(), the
            // `else` of `if (qavg >= th_min && qlen > 1)`: "No packets are being dropped",
            // `old = 0`): forget the count either way, so the next arrival with a queue only
            // restarts it at 1 instead of dropping on a count built before the queue drained.
            self.above = false;
            self.count = 0;
        }
        if !self.q.fits(self.p.limit, a.bytes, 0, 0) {
            return Err(DropReason::QueueOverflow);
        }
        if verdict == Admit::QueuedMarkCe {
            self.marks += 1;
        }
        self.q.push(a.id, a.bytes, ());
        Ok(verdict)
    }

    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)> {
        let e = self.q.pop()?;
        if self.q.is_empty() {
            self.idle_since = Some(now);
        }
        Some((e.id, e.bytes))
    }

    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn name(&self) -> &'static str {
        if self.p.adaptive.is_some() {
            "ared"
        } else {
            "red"
        }
    }
    fn limit(&self) -> Option<QueueLimit> {
        Some(self.p.limit)
    }
    fn sees_every_arrival(&self) -> bool {
        true
    }
    fn average_pkts(&self) -> Option<f64> {
        Some(self.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    fn arr(id: u32, ect: bool) -> Arrival {
        Arrival { id, bytes: 1000, link_busy: true, busy_bytes: 1000, ecn: if ect { crate::net::packet::Ecn::Ect0 } else { crate::net::packet::Ecn::NotEct }, flow: 0 }
    }

    fn red(p: RedParams) -> Red {
        Red::new(p, RngStreams::new(7).stream("red-test", 0))
    }

    /// With a constant queue of q packets at every arrival the average converges to q (the
    /// EWMA's fixed point), geometrically: avg_n = q(1 − (1−w)^n).
    #[test]
    fn ewma_converges_to_the_fixed_point() {
        let mut p = RedParams::ns2(QueueLimit::Packets(1000), 10_000_000);
        p.min_th = 500.0; // never drop here
        p.max_th = 900.0;
        let mut r = red(p);
        let t = SimTime::from_millis(1);
        for i in 0..8 {
            r.enqueue(t, arr(i, false)).unwrap();
        }
        // Hold 8 waiting packets: one in, one out, at the same instant (no idle time).
        r.avg = 0.0;
        r.idle_since = None;
        let w = p.w_q;
        for n in 1..=5000u32 {
            r.enqueue(t, arr(100 + n, false)).unwrap();
            r.dequeue(t).unwrap();
            let expect = 8.0 * (1.0 - (1.0 - w).powi(n as i32));
            assert!((r.avg - expect).abs() < 1e-9, "n={n}: {} vs {expect}", r.avg);
        }
        assert!((r.avg - 8.0).abs() < 8.0 * (1.0 - w).powi(5000) + 1e-9);
    }

    /// Idle time decays the average as if (1−w)^m for m mean-size transmission times.
    #[test]
    fn idle_time_decays_the_average() {
        let p = RedParams::ns2(QueueLimit::Packets(100), 8_000_000); // s = 500 B at 8 Mb/s = 0.5 ms
        let mut r = red(p);
        r.avg = 10.0;
        r.idle_since = Some(SimTime::ZERO);
        r.enqueue(SimTime::from_millis(100), arr(1, false)).unwrap(); // m = 200
        let expect = 10.0 * (1.0 - p.w_q).powi(201);
        assert!((r.avg - expect).abs() < 1e-9, "{} vs {expect}", r.avg);
    }

    /// Hold avg fixed between the thresholds (w_q → tiny, avg preset) and count the drops over
    /// 10^5 arrivals: the gaps between drops are uniform on 1 … 1/p_b − 1 (no wait) or
    /// 1/p_b … 2/p_b − 1 (wait), so the drop rate is 1/E[gap] = 2p_b resp. ≈ 2p_b/3.
    fn drop_gaps(wait: bool, avg: f64) -> (f64, Vec<u64>, f64) {
        let mut p = RedParams::ns2(QueueLimit::Packets(100_000), 10_000_000);
        p.w_q = 1e-12;
        p.wait = wait;
        let mut r = red(p);
        r.enqueue(SimTime::ZERO, arr(0, false)).unwrap();
        r.enqueue(SimTime::ZERO, arr(u32::MAX, false)).unwrap();
        r.idle_since = None;
        r.avg = avg;
        r.above = true;
        let pb = r.p_b(1000).unwrap();
        let mut gaps = Vec::new();
        let mut since = 0u64;
        let n = 100_000u32;
        let mut drops = 0u64;
        for i in 0..n {
            since += 1;
            r.avg = avg;
            match r.enqueue(SimTime::ZERO, arr(i + 1, false)) {
                Ok(_) => {
                    r.dequeue(SimTime::ZERO);
                }
                Err(DropReason::Early) => {
                    drops += 1;
                    gaps.push(since);
                    since = 0;
                }
                Err(e) => panic!("{e:?}"),
            }
        }
        (pb, gaps, drops as f64 / n as f64)
    }

    #[test]
    fn drop_probability_between_thresholds_with_uniformisation() {
        // avg = 10: p_b = 0.1·(10−5)/(15−5) = 0.05.
        let (pb, gaps, rate) = drop_gaps(false, 10.0);
        assert!((pb - 0.05).abs() < 1e-12);
        let expect = 2.0 * pb; // 1 / E[uniform 1..19] = 1/10
        assert!((rate - expect).abs() < 0.03 * expect, "rate {rate} vs {expect}");
        let max_gap = (1.0 / pb).round() as u64 - 1;
        assert!(gaps.iter().all(|&g| g >= 1 && g <= max_gap), "gaps within 1..{max_gap}");
        // Uniform: each gap value 1..19 holds about 1/19 of the gaps.
        for v in 1..=max_gap {
            let share = gaps.iter().filter(|&&g| g == v).count() as f64 / gaps.len() as f64;
            assert!((share - 1.0 / max_gap as f64).abs() < 0.015, "gap {v}: share {share}");
        }
        // ns-2's wait_: no drop before 1/p_b packets, gaps uniform on 20..39.
        let (pb, gaps, rate) = drop_gaps(true, 10.0);
        assert!(gaps.iter().all(|&g| g >= (1.0 / pb) as u64 && g < (2.0 / pb) as u64));
        let expect = 1.0 / (((1.0 / pb) + (2.0 / pb) - 1.0) / 2.0);
        assert!((rate - expect).abs() < 0.03 * expect, "wait: rate {rate} vs {expect}");
    }

    /// ns-2.1b8a's `Queue/RED set gentle_ true` (ns-default.tcl line 106): with the defaults
    /// alone, an average between max_th and 2·max_th drops with p_b = max_p + (1 − max_p)(avg −
    /// max_th)/max_th, not always.
    #[test]
    fn ns2_defaults_are_gentle() {
        let p = RedParams::ns2(QueueLimit::Packets(1000), 10_000_000);
        assert!(p.gentle, "ns-2 has defaulted gentle_ to true since 23 April 2001");
        let mut r = red(p);
        r.avg = 22.5; // p_b = 0.1 + 0.9 · 7.5/15 = 0.55
        assert!((r.p_b(1000).unwrap() - 0.55).abs() < 1e-12);
    }

    #[test]
    fn gentle_above_max_th_and_forced_drop_beyond() {
        let mut p = RedParams::ns2(QueueLimit::Packets(1000), 10_000_000);
        p.gentle = true;
        let mut r = red(p);
        r.avg = 20.0; // max_th 15 ≤ avg < 30: p_b = 0.1 + 0.9·5/15 = 0.4
        assert!((r.p_b(1000).unwrap() - 0.4).abs() < 1e-12);
        r.avg = 30.0;
        assert_eq!(r.p_b(1000), None);
        // Not gentle: forced drop at max_th.
        let mut r2 = red(RedParams { gentle: false, ..RedParams::ns2(QueueLimit::Packets(1000), 10_000_000) });
        r2.avg = 15.0;
        assert_eq!(r2.p_b(1000), None);
        // Drop rate over 10^5 arrivals in the gentle region (p_a reaches 1 at the second packet).
        let (_, _, rate) = {
            let mut p = p;
            p.w_q = 1e-12;
            p.wait = false;
            let mut r = red(p);
            r.enqueue(SimTime::ZERO, arr(0, false)).unwrap();
            r.enqueue(SimTime::ZERO, arr(u32::MAX, false)).unwrap();
            r.idle_since = None;
            r.above = true;
            let mut drops = 0;
            for i in 0..100_000u32 {
                r.avg = 20.0;
                if r.enqueue(SimTime::ZERO, arr(i + 1, false)).is_ok() {
                    r.dequeue(SimTime::ZERO);
                } else {
                    drops += 1;
                }
            }
            (0.4, (), drops as f64 / 1e5)
        };
        // P(gap = 1) = p_a(1) = 0.4/0.6 = 2/3, else gap 2 (p_a(2) = 1): mean gap 4/3, rate 3/4.
        assert!((rate - 0.75).abs() < 0.01, "gentle drop rate {rate}");
    }

    #[test]
    fn marks_ect_packets_instead_of_dropping() {
        let mut p = RedParams::ns2(QueueLimit::Packets(1000), 10_000_000);
        p.ecn = true;
        p.wait = false;
        p.w_q = 1e-12;
        let mut r = red(p);
        r.enqueue(SimTime::ZERO, arr(0, true)).unwrap();
        r.enqueue(SimTime::ZERO, arr(u32::MAX, true)).unwrap();
        r.idle_since = None;
        r.above = true;
        let (mut marks, mut drops) = (0, 0);
        for i in 0..10_000u32 {
            r.avg = 10.0;
            match r.enqueue(SimTime::ZERO, arr(i + 1, i % 2 == 0)) {
                Ok(Admit::QueuedMarkCe) => {
                    assert!(i % 2 == 0, "only ECT packets are marked");
                    marks += 1;
                    r.dequeue(SimTime::ZERO);
                }
                Ok(Admit::Queued) => {
                    r.dequeue(SimTime::ZERO);
                }
                Err(_) => {
                    assert!(i % 2 == 1, "ECT packets are marked, not dropped");
                    drops += 1
                }
            }
        }
        assert!(marks > 300 && drops > 300, "marks {marks} drops {drops}");
        assert_eq!(r.marks, marks);
    }

    /// Issue 31 item 2: with avg ≥ min_th but at most one packet waiting, ns-2 takes the "no
    /// packets are being dropped" branch and resets `old`, so the count restarts at 1 at the
    /// next arrival that finds a queue. A count high enough to force a drop (count·p_b ≥ 2 with
    /// `wait`) must not survive a drained queue.
    #[test]
    fn count_resets_when_at_most_one_packet_is_queued() {
        let mut p = RedParams::ns2(QueueLimit::Packets(1000), 10_000_000);
        p.w_q = 1e-12; // avg stays at 10: p_b = 0.05
        let mut r = red(p);
        r.idle_since = None;
        r.avg = 10.0;
        r.above = true;
        r.count = 40; // count·p_b = 2: p_a = 1 at the next counted arrival
        r.enqueue(SimTime::ZERO, arr(1, false)).unwrap(); // 0 queued before it
        r.enqueue(SimTime::ZERO, arr(2, false)).unwrap(); // 1 queued before it
        assert_eq!(r.count, 0, "count forgotten while at most one packet waited");
        // 2 queued: counting restarts at 1 (ns-2's `old == 0` branch), no drop.
        assert_eq!(r.enqueue(SimTime::ZERO, arr(3, false)), Ok(Admit::Queued));
        assert_eq!((r.count, r.early_drops), (1, 0));
    }

    /// ARED: a persistent average above the target band raises max_p; below it lowers it.
    #[test]
    fn ared_max_p_adapts_toward_the_target() {
        let p = RedParams::ared(QueueLimit::Packets(1000), 10_000_000, 1000, AredParams::default());
        // C = 1250 pkt/s; min_th = max(5, 0.005·1250/2) = 5; max_th = 15; band 9..11.
        assert_eq!((p.min_th, p.max_th), (5.0, 15.0));
        let mut r = red(p);
        r.idle_since = None;
        let mut t = SimTime::ZERO;
        let start = r.max_p();
        for _ in 0..20 {
            t = t + SimTime::from_millis(500);
            r.avg = 13.0;
            r.adapt(t);
        }
        let up = r.max_p();
        assert!(up > start && up <= 0.5 + 0.01, "max_p rose: {start} -> {up}");
        for _ in 0..200 {
            t = t + SimTime::from_millis(500);
            r.avg = 6.0;
            r.adapt(t);
        }
        let down = r.max_p();
        assert!(down < up && down >= 0.01 * 0.9, "max_p fell: {up} -> {down}");
        // Inside the band nothing changes.
        let before = r.max_p();
        t = t + SimTime::from_millis(500);
        r.avg = 10.0;
        r.adapt(t);
        assert_eq!(r.max_p(), before);
    }
}
