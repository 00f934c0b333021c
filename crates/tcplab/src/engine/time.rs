//! Simulated time as integer nanoseconds: exact arithmetic, no rounding drift over long runs.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    /// Rounds to the nearest nanosecond.
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime((s * 1e9).round() as u64)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        // Division (not multiplication by 1e-9, which is inexact) gives the double nearest the
        // decimal value, so summaries print "0.716904177", not "0.7169041770000001".
        self.0 as f64 / 1e9
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}
impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// Serialization time of `bits` on a link of `rate_bps`, rounded up to the next nanosecond
/// (a packet has not left until its last bit has).
pub fn transmission_time(bits: u64, rate_bps: u64) -> SimTime {
    // u64 arithmetic suffices for any real packet (bits * 1e9 < 2^64 up to 18 Gbit); u128
    // otherwise.
    match bits.checked_mul(1_000_000_000) {
        Some(n) => SimTime(n.div_ceil(rate_bps)),
        None => SimTime(((bits as u128) * 1_000_000_000u128).div_ceil(rate_bps as u128) as u64),
    }
}
