//! What a bufferbloat study asks of a queue (issue 27): the sojourn time of every packet that
//! left it for the wire (percentiles from a log-bucketed histogram: 1 µs buckets below 64 µs,
//! then 32 buckets per octave, so a percentile is within 1/32 ≈ 3 % below the true value), and
//! drops and CE marks by cause.

use std::collections::BTreeMap;

use crate::engine::SimTime;

const LINEAR: u64 = 64;
const SUB: u64 = 32;

#[derive(Clone, Debug, Default)]
pub struct AqmStats {
    buckets: Vec<u64>,
    pub departed: u64,
    pub drops: BTreeMap<&'static str, u64>,
    pub marks: BTreeMap<&'static str, u64>,
}

fn bucket_of(us: u64) -> usize {
    if us < LINEAR {
        return us as usize;
    }
    let e = 63 - us.leading_zeros() as u64; // ≥ 6
    (LINEAR + (e - 6) * SUB + ((us >> (e - 5)) & (SUB - 1))) as usize
}

/// The smallest value (µs) of bucket `b`.
fn floor_of(b: usize) -> u64 {
    let b = b as u64;
    if b < LINEAR {
        return b;
    }
    let e = (b - LINEAR) / SUB + 6;
    let m = (b - LINEAR) % SUB;
    (1 << e) + (m << (e - 5))
}

impl AqmStats {
    pub fn on_departure(&mut self, sojourn: SimTime) {
        let b = bucket_of(sojourn.0 / 1000);
        if self.buckets.len() <= b {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += 1;
        self.departed += 1;
    }
    pub fn on_drop(&mut self, cause: &'static str) {
        *self.drops.entry(cause).or_default() += 1;
    }
    pub fn on_mark(&mut self, cause: &'static str) {
        *self.marks.entry(cause).or_default() += 1;
    }
    /// The `q`-quantile (0 < q ≤ 1) of the sojourn times, seconds (the lower edge of its bucket).
    pub fn sojourn_quantile_s(&self, q: f64) -> Option<f64> {
        if self.departed == 0 {
            return None;
        }
        let rank = ((q * self.departed as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(floor_of(b) as f64 / 1e6);
            }
        }
        None
    }
}

/// One flow queue's occupancy over a run (FQ-CoDel's per-flow figures): the flows hashed to it
/// (by [`super::packet::Packet::flow_key`]), its time-averaged and largest backlog, what left it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowQueueStats {
    pub queue: u32,
    pub flow_keys: Vec<u64>,
    pub avg_pkts: f64,
    pub avg_bytes: f64,
    pub max_pkts: u32,
    pub max_bytes: u64,
    pub departed: u64,
}

/// The running integral behind [`FlowQueueStats`] for one queue.
#[derive(Clone, Debug, Default)]
pub struct Occupancy {
    pub flow_keys: Vec<u64>,
    since: SimTime,
    pkts_ns: u128,
    bytes_ns: u128,
    pub max_pkts: u32,
    pub max_bytes: u64,
    pub departed: u64,
}

impl Occupancy {
    /// The backlog was `pkts`/`bytes` from the last change until `now`; then it changed.
    #[inline]
    pub fn advance(&mut self, now: SimTime, pkts: usize, bytes: u64) {
        let dt = now.saturating_sub(self.since).0 as u128;
        self.pkts_ns += pkts as u128 * dt;
        self.bytes_ns += bytes as u128 * dt;
        self.since = now;
    }
    #[inline]
    pub fn note(&mut self, pkts: usize, bytes: u64) {
        self.max_pkts = self.max_pkts.max(pkts as u32);
        self.max_bytes = self.max_bytes.max(bytes);
    }
    pub fn report(&self, queue: u32, now: SimTime, pkts: usize, bytes: u64) -> FlowQueueStats {
        let dt = now.saturating_sub(self.since).0 as u128;
        let span = now.0.max(1) as f64;
        FlowQueueStats {
            queue,
            flow_keys: self.flow_keys.clone(),
            avg_pkts: (self.pkts_ns + pkts as u128 * dt) as f64 / span,
            avg_bytes: (self.bytes_ns + bytes as u128 * dt) as f64 / span,
            max_pkts: self.max_pkts,
            max_bytes: self.max_bytes,
            departed: self.departed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_within_3_percent() {
        let mut last = 0;
        for us in 0..200_000u64 {
            let b = bucket_of(us);
            assert!(b >= last);
            last = b;
            let f = floor_of(b);
            assert!(f <= us && (us - f) as f64 <= us as f64 / 32.0 + 1e-9, "{us}: floor {f}");
        }
    }

    #[test]
    fn occupancy_is_a_time_average() {
        let mut o = Occupancy::default();
        o.advance(SimTime::from_millis(10), 0, 0); // empty for 10 ms
        o.note(4, 4000);
        o.advance(SimTime::from_millis(30), 4, 4000); // 4 packets for 20 ms
        let r = o.report(7, SimTime::from_millis(40), 0, 0); // empty again for 10 ms
        assert_eq!((r.queue, r.max_pkts, r.max_bytes), (7, 4, 4000));
        assert!((r.avg_pkts - 2.0).abs() < 1e-12 && (r.avg_bytes - 2000.0).abs() < 1e-9, "{r:?}");
    }

    #[test]
    fn percentiles_of_a_uniform_spread() {
        let mut s = AqmStats::default();
        for ms in 1..=100u64 {
            s.on_departure(SimTime::from_millis(ms));
        }
        let p50 = s.sojourn_quantile_s(0.5).unwrap();
        let p99 = s.sojourn_quantile_s(0.99).unwrap();
        assert!(p50 <= 0.050 && p50 > 0.050 * (1.0 - 1.0 / 32.0), "{p50}");
        assert!(p99 <= 0.099 && p99 > 0.099 * (1.0 - 1.0 / 32.0), "{p99}");
        assert_eq!(AqmStats::default().sojourn_quantile_s(0.5), None);
    }
}
