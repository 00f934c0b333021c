//! 4.4BSD-Lite TCP with its performance bugs, and the fixes Lite.1–Lite.6.
//!
//! Sources: Brakmo & Peterson, "Performance Problems in BSD4.4 TCP" (seed 001 §3, Table 3), the
//! same study in Brakmo's thesis (seed 000 §6.1, Table 6.3), and 4.4BSD-Lite's own
//! `sys/netinet/tcp_input.c` (CSRG revision of 10 April 1994, the one the seed ported: "a version
//! retrieved from ftp.cdrom.com, dated 4/10/94"), `tcp_output.c`, `tcp_timer.c`, `tcp_var.h`.
//!
//! A `lite` endpoint is the `reno` composition (RenoCc, Reno fast recovery, BSD coarse timers)
//! with the Lite behaviours below. Each row is one switch, a `params` key of a scenario flow
//! (0 = Lite.0 behaviour, 1 = fixed); the variants `lite.0` … `lite.6` set them cumulatively as
//! seed 001 Table 3 does (`lite` = `lite.0`; Lite.6 = Lite.4 + the big-ACK fix, without Lite.5's
//! ACK-every-packet). The dup-ACK `>=` test of §3.6 is in no level: its own switch.
//!
//! | param | Lite.0 behaviour (the bug) | fixed | seed | code |
//! |---|---|---|---|---|
//! | `fix_header_prediction` | header prediction takes a pure ACK for new data when `snd_cwnd >= snd_wnd` without looking at `t_dupacks`, so the ACK that ends fast recovery can skip the deflation and release a burst | adds `&& t_dupacks < tcprexmtthresh` | 001 §3.1 | [`predicts_pure_ack`], `Endpoint::on_new_ack` |
//! | `fix_rto` | Jacobson's scaled-integer estimator, sa = 8a, sd = 4d: the never-updated fraction bits bias the RTO up to 3 ticks when RTT is 0 or 1 tick (Table 1) | sa = 32a, sd = 16d, `rto = max(m+2, ((sa>>3)+sd)>>2)` (Table 2 "new RTO") | 001 §3.2 | [`crate::rto::BsdRto`] |
//! | `timestamps` | RFC 1323 timestamps on: 12 option bytes come out of every segment's payload, so two segments no longer reach the `adv >= 2*t_maxseg` ACK rule — the receiver ACKs every third segment | 0: no option (Lite.3) | 001 §3.3 | `EndpointConfig::timestamps`; t_maxseg kept with the option bytes in `Endpoint::take_syn_options` |
//! | `fix_extra_increase` | congestion avoidance `incr = incr*incr/cw + incr/8` | `incr*incr/cw` (Lite.4) | 001 §3.3 | [`crate::cc::RenoCc`] `extra_eighth` |
//! | `ack_every_packet` | delayed ACKs (BSD `TF_DELACK`, 200 ms fast tick) | ACK every segment (Lite.5) | 001 §3.4 | `EndpointConfig::ack_policy` |
//! | `fix_big_ack` | an ACK for x bytes releases x bytes at once | after the window update, `if acked >= 3*maxseg && cwnd - (snd_nxt - snd_una) > 3*maxseg { ssthresh = max(ssthresh, cwnd); cwnd = (snd_nxt - snd_una) + 3*maxseg }` (Lite.6) | 001 §3.5 | [`limit_big_ack`] |
//! | `fix_dupack_ge` | cwnd deflated on the new ACK only `if t_dupacks > tcprexmtthresh` (an episode of exactly 3 dup ACKs keeps cwnd = ssthresh + 3 MSS) | `>=` | 001 §3.6 | [`crate::recovery::RenoRecovery`] `deflate_test` |
//!
//! Also Lite, in every level: 4.4BSD delayed ACKs (`bsd_delayed`) unless `ack_every_packet`;
//! BSD 500/200 ms timers; and `t_maxseg` is the negotiated MSS *without* subtracting option bytes
//! (Lite's `tcp_mss` does not; `tcp_output` trims each segment to `t_maxseg - optlen`), so cwnd,
//! ssthresh and the receiver's `2 * t_maxseg` ACK threshold count in `t_maxseg` units while a
//! segment carries `t_maxseg - 12` bytes when timestamps are on.
//!
//! Deliberate deviations from the 4.4BSD-Lite code:
//! * the header-prediction fast path here models only the *pure ACK* half (the sender side);
//!   the receiver's in-sequence data fast path does what the slow path does anyway (`TF_DELACK`);
//! * the fast path is taken for the same segments as BSD's (`ESTABLISHED`, only the ACK flag,
//!   `seq == rcv_nxt`, `tiwin != 0 && tiwin == snd_wnd`, `snd_nxt == snd_max`, no data, `snd_una
//!   < ack <= snd_max`, `snd_cwnd >= snd_wnd`) except BSD's PAWS-style `ts_val >= ts_recent`
//!   test, which never fails in a simulation without reordering of one connection's segments;
//! * the receiver echoes the timestamp of the latest in-order segment (the endpoint's simplified
//!   RFC 1323 rule), where Lite echoes the one holding `last_ack_sent`; with 500 ms ticks the
//!   difference is at most one tick in rare samples;
//! * with `fix_rto` the backed-off timer is `max(m+2, ((sa>>3)+sd)>>2) << shift` for the last
//!   sample's m — the seed gives only the estimator, not how `tcp_timers` should back it off;
//! * BSD's `tcp_mss` also rounds the socket buffers up to a multiple of the MSS; not modelled
//!   (the buffers are what the scenario says).

use crate::cc::CcWindow;

/// The Lite switches (see the module documentation). `true` = the fix is applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiteFixes {
    /// §3.1: header prediction also requires `t_dupacks < tcprexmtthresh`.
    pub header_prediction: bool,
    /// §3.2: Brakmo's rescaled RTO estimator.
    pub rto: bool,
    /// §3.5: the big-ACK burst limit.
    pub big_ack: bool,
    /// §3.6: deflate when `t_dupacks >= tcprexmtthresh` (not `>`).
    pub dupack_ge: bool,
}

/// Names of the Lite parameters, in the order of seed 001 Table 3, then §3.6.
pub const LITE_PARAMS: &[&str] = &[
    "fix_header_prediction",
    "fix_rto",
    "timestamps",
    "fix_extra_increase",
    "ack_every_packet",
    "fix_big_ack",
    "fix_dupack_ge",
];

/// Highest fix level (`lite.6`).
pub const MAX_LEVEL: u32 = 6;

/// Parse a Lite variant name: `lite` (= level 0) or `lite.N`, N = 0..=6.
pub fn parse_level(name: &str) -> Option<u32> {
    match name {
        "lite" => Some(0),
        _ => {
            let n: u32 = name.strip_prefix("lite.")?.parse().ok()?;
            (n <= MAX_LEVEL && name.len() == "lite.".len() + 1).then_some(n)
        }
    }
}

/// The switches of one level, seed 001 Table 3 (= seed 000 Table 6.3), as
/// (fixes, timestamps on, extra 1/8 increase on, ACK every packet).
pub fn level(n: u32) -> (LiteFixes, bool, bool, bool) {
    let fixes = LiteFixes {
        header_prediction: n >= 1,
        rto: n >= 2,
        big_ack: n == 6,
        dupack_ge: false,
    };
    let timestamps = n < 3;
    let extra_eighth = n < 4;
    let ack_every_packet = n == 5;
    (fixes, timestamps, extra_eighth, ack_every_packet)
}

/// Inputs of 4.4BSD-Lite's header-prediction test for a pure ACK (tcp_input.c, "Header
/// prediction: check for the two common cases of a uni-directional data xfer").
#[derive(Clone, Copy, Debug)]
pub struct PredictionInput {
    pub established: bool,
    /// The segment carries ACK and none of SYN, FIN, RST, URG.
    pub only_ack_flag: bool,
    /// `ti_seq == rcv_nxt`.
    pub in_sequence: bool,
    pub seg_len: u32,
    pub seg_wnd: u32,
    pub snd_wnd: u32,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub ack: u64,
    pub cwnd: u32,
    pub dupacks: u32,
    pub dupack_threshold: u32,
}

/// Would Lite's header prediction take this segment as a pure ACK for outstanding data?
///
/// ```text
/// tp->t_state == TCPS_ESTABLISHED && (tiflags & (TH_SYN|TH_FIN|TH_RST|TH_URG|TH_ACK)) == TH_ACK &&
/// ti->ti_seq == tp->rcv_nxt && tiwin && tiwin == tp->snd_wnd && tp->snd_nxt == tp->snd_max
///   if (ti->ti_len == 0)
///     if (SEQ_GT(ti->ti_ack, tp->snd_una) && SEQ_LEQ(ti->ti_ack, tp->snd_max) &&
///         tp->snd_cwnd >= tp->snd_wnd            /* Lite.0 */
///         && tp->t_dupacks < tcprexmtthresh)     /* + seed 001 §3.1 fix */
/// ```
///
/// The fast path then updates the RTT, drops the acknowledged data and restarts the timer —
/// it neither opens nor deflates cwnd and leaves `t_dupacks` as it is.
pub fn predicts_pure_ack(p: &PredictionInput, fix: bool) -> bool {
    p.established
        && p.only_ack_flag
        && p.in_sequence
        && p.seg_wnd != 0
        && p.seg_wnd == p.snd_wnd
        && p.snd_nxt == p.snd_max
        && p.seg_len == 0
        && p.ack > p.snd_una
        && p.ack <= p.snd_max
        && p.cwnd >= p.snd_wnd
        && (!fix || p.dupacks < p.dupack_threshold)
}

/// Seed 001 §3.5, run after the window update of an ACK that acknowledged `acked` bytes, with
/// `outstanding` = snd_nxt − snd_una and `maxseg` = t_maxseg:
///
/// ```text
/// if (acked >= 3*tp->t_maxseg && (tp->snd_cwnd - (tp->snd_nxt - tp->snd_una)) > 3*tp->t_maxseg) {
///     if (tp->snd_cwnd > tp->snd_ssthresh) tp->snd_ssthresh = tp->snd_cwnd;
///     tp->snd_cwnd = (tp->snd_nxt - tp->snd_una) + 3*tp->t_maxseg;
/// }
/// ```
///
/// Returns true if it cut the window.
pub fn limit_big_ack(w: &mut CcWindow, acked: u64, outstanding: u64) -> bool {
    let three = 3 * w.mss as u64;
    let room = (w.cwnd as u64).saturating_sub(outstanding);
    if acked >= three && room > three {
        if w.cwnd > w.ssthresh {
            w.ssthresh = w.cwnd;
        }
        w.cwnd = (outstanding + three).min(u32::MAX as u64) as u32;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_table3() {
        assert_eq!(parse_level("lite"), Some(0));
        assert_eq!(parse_level("lite.6"), Some(6));
        assert_eq!(parse_level("lite.7"), None);
        assert_eq!(parse_level("lite.01"), None);
        assert_eq!(parse_level("lite."), None);
        // (header prediction, rto, big ack), timestamps, extra 1/8, ack every packet
        let rows: Vec<(bool, bool, bool, bool, bool, bool)> = (0..=6)
            .map(|n| {
                let (f, ts, e, a) = level(n);
                (f.header_prediction, f.rto, f.big_ack, ts, e, a)
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                (false, false, false, true, true, false),
                (true, false, false, true, true, false),
                (true, true, false, true, true, false),
                (true, true, false, false, true, false),
                (true, true, false, false, false, false),
                (true, true, false, false, false, true),
                (true, true, true, false, false, false),
            ]
        );
        assert!((0..=6).all(|n| !level(n).0.dupack_ge));
    }

    #[test]
    fn big_ack_limit() {
        let mut w = CcWindow { cwnd: 20_000, ssthresh: 8_000, mss: 1000, max_cwnd: 65535 };
        // 2 MSS acked: untouched.
        assert!(!limit_big_ack(&mut w, 2000, 5000));
        assert_eq!(w.cwnd, 20_000);
        // 10 MSS acked, 5000 outstanding, room 15000 > 3000: cwnd = 5000 + 3000, ssthresh = 20000.
        assert!(limit_big_ack(&mut w, 10_000, 5000));
        assert_eq!((w.cwnd, w.ssthresh), (8000, 20_000));
        // Room exactly 3 MSS: untouched.
        let mut w = CcWindow { cwnd: 8000, ssthresh: 4000, mss: 1000, max_cwnd: 65535 };
        assert!(!limit_big_ack(&mut w, 5000, 5000));
    }
}
