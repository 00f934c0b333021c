//! RFC 6298 retransmission timer with clock granularity G.
//!
//! * first sample R: SRTT = R, RTTVAR = R/2; later: RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R|,
//!   SRTT = 7/8·SRTT + 1/8·R (in that order, §2.3);
//! * RTO = SRTT + max(G, 4·RTTVAR), clamped to [min_rto, 60 s] (§2.4, §2.5 allows the bound);
//! * initial RTO `initial_rto` (RFC: 1 s) (§2.1);
//! * backoff doubles the RTO (§5.5) up to 60 s; a new sample clears it (Karn, §3 / §5.7);
//! * deviation: the connection is dropped after 12 consecutive backoffs, as BSD does.
//!
//! Values are kept in integer nanoseconds (the 1/8 and 1/4 gains are exact in integer
//! arithmetic to within a nanosecond).

use crate::{Nanos, SEC};

pub const MAX_RTO: Nanos = 60 * SEC;
pub const MAX_BACKOFFS: u32 = 12;

/// `base` doubled once per backoff (at most 2²⁰), capped at `max` (RFC 6298 §5.5 and Linux's
/// `inet_csk_rto_backoff` alike).
pub(super) fn backed_off(base: Nanos, backoffs: u32, max: Nanos) -> Nanos {
    (base << backoffs.min(20)).min(max)
}

/// One more backoff after an expiry; false, unchanged, once [`MAX_BACKOFFS`] were taken (the
/// connection is dropped).
pub(super) fn back_off(backoffs: &mut u32) -> bool {
    if *backoffs >= MAX_BACKOFFS {
        return false;
    }
    *backoffs += 1;
    true
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FineRto {
    pub srtt: Option<Nanos>,
    pub rttvar: Nanos,
    pub granularity: Nanos,
    pub min_rto: Nanos,
    pub initial_rto: Nanos,
    pub backoffs: u32,
    base: Nanos,
}

impl FineRto {
    pub fn new(granularity: Nanos, min_rto: Nanos, initial_rto: Nanos) -> FineRto {
        FineRto { srtt: None, rttvar: 0, granularity, min_rto, initial_rto, backoffs: 0, base: initial_rto }
    }

    pub fn sample(&mut self, r: Nanos) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let err = s.abs_diff(r);
                self.rttvar = self.rttvar - self.rttvar / 4 + err / 4;
                self.srtt = Some(s - s / 8 + r / 8);
            }
        }
        let s = self.srtt.unwrap();
        self.base = (s + self.granularity.max(4 * self.rttvar)).clamp(self.min_rto, MAX_RTO);
        self.backoffs = 0;
    }

    /// Current RTO including backoff.
    pub fn rto(&self) -> Nanos {
        backed_off(self.base, self.backoffs, MAX_RTO)
    }

    /// Back off after an expiry. Returns false when the connection should be dropped.
    pub fn backoff(&mut self) -> bool {
        back_off(&mut self.backoffs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MS;
    const US: Nanos = 1_000;

    #[test]
    fn rfc6298_arithmetic() {
        let mut f = FineRto::new(MS, 200 * MS, SEC);
        assert_eq!(f.rto(), SEC);
        f.sample(100 * MS);
        // SRTT 100, RTTVAR 50 → 100 + 200 = 300 ms
        assert_eq!(f.rto(), 300 * MS);
        f.sample(100 * MS);
        // RTTVAR = 37.5, SRTT 100 → 250 ms
        assert_eq!(f.rto(), 250 * MS);
        assert!(f.backoff());
        assert_eq!(f.rto(), 500 * MS);
        f.sample(10 * MS); // clears backoff (SRTT 88.75, RTTVAR 50.6 → 291.25 ms)
        assert_eq!(f.rto(), 291_250 * US);
        assert_eq!(f.backoffs, 0);
    }

    #[test]
    fn min_and_max_clamps() {
        // First sample 10 ms: SRTT 10, RTTVAR 5 → 10 + 20 = 30 ms, below the 200 ms floor (§2.4).
        let mut f = FineRto::new(MS, 200 * MS, SEC);
        f.sample(10 * MS);
        assert_eq!(f.rto(), 200 * MS);
        // Without a floor the computed value stands.
        let mut g = FineRto::new(MS, 0, SEC);
        g.sample(10 * MS);
        assert_eq!(g.rto(), 30 * MS);
        // Granularity: RTTVAR 0.1 ms → max(G = 1 ms, 0.4 ms) = 1 ms on top of SRTT.
        let mut h = FineRto::new(MS, 0, SEC);
        h.sample(200 * US);
        assert_eq!(h.rto(), 1200 * US);
        // 50 s sample: 50 + 100 s → clamped to 60 s; backoff stays at the 60 s cap.
        let mut m = FineRto::new(MS, 200 * MS, SEC);
        m.sample(50 * SEC);
        assert_eq!(m.rto(), MAX_RTO);
        assert!(m.backoff());
        assert_eq!(m.rto(), MAX_RTO);
    }

    #[test]
    fn backoff_doubles_until_the_connection_is_dropped() {
        let mut f = FineRto::new(MS, 0, SEC);
        f.sample(100 * MS); // 300 ms
        for k in 1..=MAX_BACKOFFS {
            assert!(f.backoff(), "backoff {k}");
            assert_eq!(f.backoffs, k);
            assert_eq!(f.rto(), (300 * MS << k).min(MAX_RTO));
        }
        assert!(!f.backoff(), "the 13th expiry drops the connection");
        assert_eq!(f.backoffs, MAX_BACKOFFS);
        // The initial RTO before any sample, and a fresh sample clearing the backoff.
        let mut g = FineRto::new(MS, 0, 3 * SEC);
        assert_eq!(g.rto(), 3 * SEC);
        assert!(g.backoff());
        assert_eq!(g.rto(), 6 * SEC);
        g.sample(100 * MS);
        assert_eq!(g.rto(), 300 * MS);
    }
}
