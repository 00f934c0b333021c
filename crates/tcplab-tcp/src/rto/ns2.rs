//! ns-2's retransmission timer (`TcpAgent::rtt_update`, `rtt_timeout`, `rtt_backoff` in ns-2's
//! tcp.cc), with the defaults of ns-2.1b8a, the release seed 004 ran (docs/ns2-defaults.md; its
//! `tcl/lib/ns-default.tcl` lines 609–619): `tcpTick_ 0.1`, `maxrto_ 100000`, `minrto_ 1`,
//! `rtxcur_init_ 6.0`, `rttvar_exp_ 2`, and no `rfc2988_` yet (ns-2.1b9 added it, true, with
//! `tcpTick_ 0.01`), i.e. the floor applied after the backoff.
//!
//! * An RTT sample is counted in whole ticks. Without timestamps ns-2 adds the phase of the send
//!   time within its tick (`tickoff = fmod(sendtime + boot_time_, tcpTick_)`) and truncates; with
//!   timestamps it rounds (`tao / tcpTick_ + 0.5`). Samples below one tick count as one.
//! * Jacobson's scaled integers: `t_srtt_` is 8·srtt and `t_rttvar_` 4·rttvar, in ticks;
//!   `t_rtxcur_ = ((t_rttvar_ << 3) + t_srtt_) >> 3` ticks = srtt + 4·rttvar.
//! * `rfc2988_ false`: the timeout is `t_rtxcur_ · t_backoff_`, *then* clamped to [minrto_, maxrto_]
//!   and to at least two ticks — the floor is applied after the backoff, unlike RFC 6298.
//! * `rtt_backoff`: `t_backoff_` doubles up to 64; once it exceeds 8 the smoothed RTT is folded
//!   into the variance and cleared (the next sample starts afresh). ns-2 never gives up on a
//!   connection.
//! * The timer is a deadline (ns-2 schedules it `rtt_timeout()` ahead), not a tick countdown.
//!
//! Deviation: `boot_time_` is 0 (every agent's ticks start at time 0).

use crate::{Nanos, MS, SEC};

/// ns-2.1b8a `tcpTick_` (line 609).
pub const NS2_TICK: Nanos = 100 * MS;
/// ns-2.1b8a `minrto_` (line 612).
pub const NS2_MIN_RTO: Nanos = SEC;
/// ns-2.1b8a `rtxcur_init_` (line 616).
pub const NS2_INITIAL_RTO: Nanos = 6 * SEC;
/// ns-2.1b8a `maxrto_ 100000` (ns-default.tcl line 610): no practical ceiling.
pub const NS2_MAX_RTO: Nanos = 100_000 * SEC;

const T_SRTT_BITS: u32 = 3;
const T_RTTVAR_BITS: u32 = 2;
const RTTVAR_EXP: u32 = 2;
const MAX_BACKOFF: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns2Rto {
    pub tick: Nanos,
    pub min_rto: Nanos,
    pub max_rto: Nanos,
    /// `t_srtt_` (8·srtt, ticks); 0 = no estimate.
    pub t_srtt: i64,
    /// `t_rttvar_` (4·rttvar, ticks).
    pub t_rttvar: i64,
    /// `t_rtxcur_` in ns.
    pub rtxcur: Nanos,
    /// `t_backoff_`: 1, 2, 4 … 64.
    pub backoff: u32,
}

impl Ns2Rto {
    pub fn new(tick: Nanos, min_rto: Nanos, initial_rto: Nanos, max_rto: Nanos) -> Ns2Rto {
        Ns2Rto { tick: tick.max(1), min_rto, max_rto, t_srtt: 0, t_rttvar: 0, rtxcur: initial_rto, backoff: 1 }
    }

    /// `rtt_update(tao)`: `sent_at` is the timed segment's send time (no timestamps), or None
    /// when the sample comes from a timestamp echo.
    pub fn sample(&mut self, tao: Nanos, sent_at: Option<Nanos>) {
        let ticks = match sent_at {
            None => ((tao + self.tick / 2) / self.tick) as i64,
            Some(t) => ((tao + t % self.tick) / self.tick) as i64,
        }
        .max(1);
        if self.t_srtt != 0 {
            let mut delta = ticks - (self.t_srtt >> T_SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            delta = delta.abs() - (self.t_rttvar >> T_RTTVAR_BITS);
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = ticks << T_SRTT_BITS;
            self.t_rttvar = ticks << (T_RTTVAR_BITS - 1);
        }
        let rtx_ticks = ((self.t_rttvar << (RTTVAR_EXP + T_SRTT_BITS - T_RTTVAR_BITS)) + self.t_srtt) >> T_SRTT_BITS;
        self.rtxcur = rtx_ticks.max(0) as u64 * self.tick;
        // newack(): a fresh sample ends the backoff.
        self.backoff = 1;
    }

    /// `rtt_timeout()` with `rfc2988_ false`.
    pub fn rto(&self) -> Nanos {
        let t = (self.rtxcur * self.backoff as u64).max(self.min_rto).min(self.max_rto);
        t.max(2 * self.tick)
    }

    /// `rtt_backoff()`; always true (ns-2 keeps retrying).
    pub fn on_backoff(&mut self) -> bool {
        if self.backoff < MAX_BACKOFF {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            self.t_rttvar += self.t_srtt >> T_SRTT_BITS;
            self.t_srtt = 0;
        }
        true
    }

    /// Smoothed RTT in ns (None before the first sample or after a clobbering backoff).
    pub fn srtt(&self) -> Option<Nanos> {
        (self.t_srtt > 0).then(|| (self.t_srtt as u64 * self.tick) >> T_SRTT_BITS)
    }

    /// Backoffs as a count (log2 of `t_backoff_`).
    pub fn backoffs(&self) -> u32 {
        self.backoff.trailing_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns2() -> Ns2Rto {
        Ns2Rto::new(NS2_TICK, NS2_MIN_RTO, NS2_INITIAL_RTO, NS2_MAX_RTO)
    }

    #[test]
    fn initial_rto_is_rtxcur_init() {
        assert_eq!(ns2().rto(), 6 * SEC);
    }

    /// ns-2.1b8a's `maxrto_ 100000`: the initial 6 s backed off six times is 384 s, not a 64 s cap.
    #[test]
    fn backed_off_rto_is_not_capped_at_64_s() {
        let mut e = ns2();
        for _ in 0..6 {
            e.on_backoff();
        }
        assert_eq!(e.rto(), 384 * SEC);
    }

    #[test]
    fn ticks_truncate_with_send_phase_and_round_with_timestamps() {
        // 250 ms sent at t = 0.06 s: tickoff 60 ms -> (250 + 60) / 100 = 3 ticks.
        let mut a = ns2();
        a.sample(250 * MS, Some(60 * MS));
        assert_eq!(a.t_srtt, 3 << 3);
        assert_eq!(a.t_rttvar, 3 << 1);
        // srtt 3 + 4 · 1.5 = 9 ticks = 0.9 s, floored to minrto_ 1 s.
        assert_eq!(a.rtxcur, 900 * MS);
        assert_eq!(a.rto(), SEC);
        // Same 250 ms from a timestamp echo rounds: int(2.5 + 0.5) = 3.
        let mut b = ns2();
        b.sample(250 * MS, None);
        assert_eq!(b.t_srtt, 3 << 3);
        // A 6 ms RTT (seed 004 Topology 2) still counts as one tick.
        let mut c = ns2();
        c.sample(6 * MS, Some(0));
        assert_eq!(c.t_srtt, 1 << 3);
        assert_eq!(c.rtxcur, 300 * MS); // 1 + 4 · 0.5 ticks
        assert_eq!(c.rto(), SEC);
    }

    #[test]
    fn second_sample_follows_jacobson_in_scaled_integers() {
        let mut a = ns2();
        a.sample(300 * MS, Some(0)); // 3 ticks: srtt8 24, rttvar4 6
        a.sample(700 * MS, Some(0)); // 7 ticks: delta 4 -> srtt8 28; |4| - 6/4 = 3 -> rttvar4 9
        assert_eq!((a.t_srtt, a.t_rttvar), (28, 9));
        // ((9 << 3) + 28) >> 3 = 12 ticks.
        assert_eq!(a.rtxcur, 1200 * MS);
        assert_eq!(a.srtt(), Some(350 * MS));
    }

    #[test]
    fn floor_applies_after_backoff_and_clobbers_past_eight() {
        let mut a = ns2();
        a.sample(100 * MS, Some(0)); // rtxcur 300 ms
        assert_eq!(a.rto(), SEC);
        a.on_backoff(); // 600 ms -> still floored
        assert_eq!(a.rto(), SEC);
        a.on_backoff(); // 1.2 s
        assert_eq!(a.rto(), 1200 * MS);
        a.on_backoff(); // ×8
        assert_eq!(a.srtt(), Some(100 * MS));
        a.on_backoff(); // ×16 > 8: srtt folded into rttvar and cleared
        assert_eq!(a.srtt(), None);
        assert_eq!(a.t_rttvar, 2 + 1);
        for _ in 0..10 {
            assert!(a.on_backoff());
        }
        assert_eq!(a.backoff, 64);
        assert_eq!(a.backoffs(), 6);
        assert_eq!(a.rto(), 64 * 300 * MS);
        // A new sample ends the backoff and starts the estimate afresh (t_srtt_ was 0).
        a.sample(200 * MS, Some(0));
        assert_eq!((a.t_srtt, a.backoff), (2 << 3, 1));
    }
}
