//! 4.4BSD retransmission-timeout estimator (tcp_input.c `tcp_xmit_timer`, tcp_timer.c,
//! tcp_timer.h, tcp_var.h), in 500 ms slow ticks — exactly the scaled-integer arithmetic of
//! seed 001 §3.2:
//!
//! ```text
//! m -= (sa >> 3); sa += m; if (m < 0) m = -m; m -= (sd >> 2); sd += m; rto = (sa >> 3) + sd;
//! ```
//!
//! with `sa` = t_srtt (scaled by 8) and `sd` = t_rttvar (scaled by 4). BSD details kept:
//! * RTT is measured by `t_rtt`, which starts at 1 when a segment is timed and is incremented on
//!   each slow tick; `m = t_rtt − 1` (origin 0) in the update branch;
//! * the *first* measurement (t_srtt == 0) sets `t_srtt = t_rtt << 3`, `t_rttvar = t_rtt << 1`
//!   with `t_rtt` still origin 1 — which is why seed 001 Table 1 starts at sa 8, sd 2, rto 3 for an
//!   RTT of 0 ticks;
//! * t_srtt and t_rttvar are clamped to at least 1 after an update;
//! * rto = TCPT_RANGESET((sa >> 3) + sd, t_rttmin = 2 ticks, TCPTV_REXMTMAX = 128 ticks);
//! * initial t_rxtcur = 12 ticks (6 s), initial t_rttvar = 24 (tcp_newtcpcb);
//! * exponential backoff by `tcp_backoff[]` = {1,2,4,8,16,32,64,64,...}, TCP_MAXRXTSHIFT = 12
//!   (give up after the 12th); after more than 3 backoffs srtt is folded into rttvar and zeroed
//!   (tcp_timers REXMT), so the next sample re-initialises.
//! * a successful sample resets the backoff (t_rxtshift = 0) — Karn's second rule is that the
//!   backed-off RTO persists until then.
//!
//! With `rescaled` (the `fix_rto` switch of the `lite` variants, seed 001 §3.2, Table 2 "new
//! RTO"): `sa` = 32a and `sd` = 16d, so the fraction bits that a run of equal samples never
//! updates no longer reach the RTO:
//!
//! ```text
//! sdelta = (m << 2) - (sa >> 3); sa += sdelta; if (sdelta < 0) sdelta = -sdelta;
//! sdelta -= (sd >> 2); sd += sdelta; rto = max(m + 2, ((sa >> 3) + sd) >> 2);
//! ```
//!
//! The first sample initialises as BSD's does, in the new scale (`sa = t_rtt << 5`,
//! `sd = t_rtt << 3`: a = t_rtt, d = t_rtt/2, t_rtt still origin 1), which reproduces Table 2 row
//! by row. Backoff multiplies `max(m + 2, ((sa >> 3) + sd) >> 2)` of the last sample (the seed
//! does not say; BSD multiplies its TCP_REXMTVAL); the srtt fold after 3 backoffs is unchanged,
//! and in the new scale it still adds a/4 to d.

pub const TCP_RTT_SHIFT: u32 = 3;
pub const TCP_RTTVAR_SHIFT: u32 = 2;
pub const TCPTV_MIN: i32 = 2;
pub const TCPTV_REXMTMAX: i32 = 128;
pub const TCP_MAXRXTSHIFT: u32 = 12;
pub const TCP_BACKOFF: [i32; 13] = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BsdRto {
    /// t_srtt: smoothed RTT in ticks, scaled by 8 (`sa`). 0 = no measurement yet.
    pub srtt: i32,
    /// t_rttvar: mean deviation in ticks, scaled by 4 (`sd`).
    pub rttvar: i32,
    pub rttmin: i32,
    /// t_rxtshift: number of consecutive backoffs.
    pub rxtshift: u32,
    /// t_rxtcur: current (possibly backed-off) RTO in ticks.
    pub rxtcur: i32,
    /// Seed 001 §3.2's rescaled estimator (sa = 32a, sd = 16d, RTO ≥ m + 2).
    pub rescaled: bool,
    /// Rescaled only: m + 2 of the last sample (the RTO's floor).
    pub floor: i32,
}

impl Default for BsdRto {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn rangeset(v: i32, lo: i32, hi: i32) -> i32 {
    v.clamp(lo, hi)
}

impl BsdRto {
    pub fn new() -> BsdRto {
        // tcp_newtcpcb: t_srtt = TCPTV_SRTTBASE (0); t_rttvar = tcp_rttdflt(3 s) * PR_SLOWHZ(2) << 2;
        // t_rxtcur = RANGESET(((0 >> 2) + (TCPTV_SRTTDFLT(6) << 2)) >> 1, 2, 128) = 12.
        BsdRto {
            srtt: 0,
            rttvar: (3 * 2) << 2,
            rttmin: TCPTV_MIN,
            rxtshift: 0,
            rxtcur: rangeset((6 << 2) >> 1, TCPTV_MIN, TCPTV_REXMTMAX),
            rescaled: false,
            floor: 0,
        }
    }

    /// The estimator of seed 001 §3.2 (`rescaled`); the same initial RTO of 6 s.
    pub fn rescaled() -> BsdRto {
        // Same initial a + 4d as tcp_newtcpcb, in the new scale: sd = 16 d = 4 × (BSD's 4 d).
        BsdRto { rescaled: true, rttvar: ((3 * 2) << 2) << 2, ..BsdRto::new() }
    }

    /// TCP_REXMTVAL: (sa >> 3) + sd; rescaled: ((sa >> 3) + sd) >> 2 (at least the last m + 2).
    #[inline]
    pub fn rexmtval(&self) -> i32 {
        if self.rescaled {
            (((self.srtt >> TCP_RTT_SHIFT) + self.rttvar) >> 2).max(self.floor)
        } else {
            (self.srtt >> TCP_RTT_SHIFT) + self.rttvar
        }
    }

    /// Smoothed RTT in ticks (sa / 8, rescaled sa / 32).
    pub fn srtt_ticks(&self) -> f64 {
        self.srtt.max(0) as f64 / if self.rescaled { 32.0 } else { 8.0 }
    }

    /// `tcp_xmit_timer(tp, rtt)` with `t_rtt` = ticks counted from 1.
    pub fn sample(&mut self, t_rtt: i32) {
        if self.rescaled {
            self.sample_rescaled(t_rtt);
            return;
        }
        if self.srtt != 0 {
            let mut delta = t_rtt - 1 - (self.srtt >> TCP_RTT_SHIFT);
            self.srtt += delta;
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.rttvar >> TCP_RTTVAR_SHIFT;
            self.rttvar += delta;
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            // First measurement; t_rtt still has origin 1 here (as in BSD).
            self.srtt = t_rtt << TCP_RTT_SHIFT;
            self.rttvar = t_rtt << (TCP_RTTVAR_SHIFT - 1);
        }
        self.rxtshift = 0;
        self.rxtcur = rangeset(self.rexmtval(), self.rttmin, TCPTV_REXMTMAX);
    }

    /// Seed 001 §3.2's estimator; `m` = t_rtt − 1 (origin 0).
    fn sample_rescaled(&mut self, t_rtt: i32) {
        let m = t_rtt - 1;
        if self.srtt != 0 {
            let mut sdelta = (m << 2) - (self.srtt >> TCP_RTT_SHIFT);
            self.srtt += sdelta;
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            if sdelta < 0 {
                sdelta = -sdelta;
            }
            sdelta -= self.rttvar >> TCP_RTTVAR_SHIFT;
            self.rttvar += sdelta;
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            self.srtt = t_rtt << (TCP_RTT_SHIFT + 2);
            self.rttvar = t_rtt << (TCP_RTTVAR_SHIFT + 1);
        }
        self.floor = m + 2;
        self.rxtshift = 0;
        self.rxtcur = rangeset(self.rexmtval(), self.rttmin, TCPTV_REXMTMAX);
    }

    /// tcp_timers(TCPT_REXMT): back off. Returns false when the connection should be dropped.
    pub fn backoff(&mut self) -> bool {
        self.rxtshift += 1;
        if self.rxtshift > TCP_MAXRXTSHIFT {
            self.rxtshift = TCP_MAXRXTSHIFT;
            return false;
        }
        let rexmt = self.rexmtval() * TCP_BACKOFF[self.rxtshift as usize];
        self.rxtcur = rangeset(rexmt, self.rttmin, TCPTV_REXMTMAX);
        if self.rxtshift > TCP_MAXRXTSHIFT / 4 {
            self.rttvar += self.srtt >> TCP_RTT_SHIFT;
            self.srtt = 0;
        }
        true
    }

    /// The un-clamped RTO the seed's Tables 1 and 2 print: (sa >> 3) + sd, or rescaled
    /// max(m + 2, ((sa >> 3) + sd) >> 2).
    pub fn table_rto(&self) -> i32 {
        self.rexmtval()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 001 (Brakmo & Peterson, "Performance problems in BSD4.4 TCP") Table 1, "Original RTO
    /// Related Values": RTT (ticks), sa, sd, RTO after each update. The first row is the
    /// connection's first measurement (from the SYN exchange).
    #[test]
    fn reproduces_seed001_table1() {
        let table: [(i32, i32, i32, i32); 12] = [
            (0, 8, 2, 3),
            (0, 7, 3, 3),
            (0, 7, 3, 3),
            (1, 8, 4, 5),
            (0, 7, 4, 4),
            (0, 7, 3, 3),
            (0, 7, 3, 3),
            (0, 7, 3, 3),
            (0, 7, 3, 3),
            (0, 7, 3, 3),
            (0, 7, 3, 3),
            (1, 8, 4, 5),
        ];
        let mut e = BsdRto::new();
        for (i, &(rtt, sa, sd, rto)) in table.iter().enumerate() {
            e.sample(rtt + 1); // t_rtt counts from 1
            assert_eq!((e.srtt, e.rttvar, e.table_rto()), (sa, sd, rto), "row {}", i + 1);
            assert_eq!(e.rxtcur, rto.max(2), "row {}", i + 1);
        }
    }

    /// Seed 001 Table 2 (= seed 000 Table 6.2): RTT (ticks), original RTO, new RTO, for the same
    /// sequence of samples; the first row is the first measurement.
    #[test]
    fn reproduces_seed001_table2() {
        let table: [(i32, i32, i32); 12] = [
            (0, 3, 3),
            (0, 3, 3),
            (0, 3, 3),
            (0, 3, 3),
            (1, 5, 3),
            (0, 4, 3),
            (0, 3, 3),
            (0, 3, 3),
            (0, 3, 3),
            (0, 3, 2),
            (0, 3, 2),
            (1, 5, 3),
        ];
        let mut old = BsdRto::new();
        let mut new = BsdRto::rescaled();
        for (i, &(rtt, old_rto, new_rto)) in table.iter().enumerate() {
            old.sample(rtt + 1);
            new.sample(rtt + 1);
            assert_eq!(old.table_rto(), old_rto, "row {} original RTO", i + 1);
            assert_eq!(new.table_rto(), new_rto, "row {} new RTO", i + 1);
            assert_eq!(new.rxtcur, new_rto.max(2), "row {}", i + 1);
        }
        // The rescaled estimator never drops below m + 2: a run of 1-tick samples gives 3.
        let mut e = BsdRto::rescaled();
        for _ in 0..50 {
            e.sample(2);
        }
        assert_eq!(e.rxtcur, 3);
        // sa settles where (sa >> 3) == 4m: a within [1, 1.25) ticks.
        assert!((1.0..1.25).contains(&e.srtt_ticks()), "{}", e.srtt_ticks());
    }

    #[test]
    fn rescaled_initial_and_backoff() {
        let mut e = BsdRto::rescaled();
        assert_eq!(e.rxtcur, 12, "same 6 s initial RTO as tcp_newtcpcb");
        e.sample(1); // sa 32 sd 8: rto max(2, (4 + 8) >> 2) = 3
        assert_eq!((e.srtt, e.rttvar, e.rxtcur), (32, 8, 3));
        assert!(e.backoff());
        assert_eq!(e.rxtcur, 6);
        assert!(e.backoff());
        assert_eq!(e.rxtcur, 12);
    }

    #[test]
    fn initial_and_backoff() {
        let mut e = BsdRto::new();
        assert_eq!(e.rxtcur, 12);
        e.sample(1); // sa 8 sd 2 rto 3
        let mut seen = vec![e.rxtcur];
        while e.backoff() {
            seen.push(e.rxtcur);
        }
        // 3*1, 3*2, 3*4, 3*8; then srtt folded into rttvar (sd=2+1=3, sa=0): 3*16=48, 3*32=96,
        // then clamped at 128.
        assert_eq!(seen, vec![3, 6, 12, 24, 48, 96, 128, 128, 128, 128, 128, 128, 128]);
        assert_eq!(e.srtt, 0);
    }
}
