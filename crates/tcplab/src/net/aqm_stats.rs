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
