//! RACK (RFC 8985) as a recovery plug-in: a lost retransmission is found by RACK (a segment
//! sent after it was delivered, RACK.rtt + reo_wnd ago) with no retransmission timeout; after a
//! timeout the SACKed segments are kept and not sent again (Linux `tcp_enter_loss`); reordering
//! shorter than the reordering window (min_RTT/4) causes no retransmission, and the reorder
//! timer fires when the hole outlives it.

use tcplab_tcp::config::{EndpointConfig, RecoveryKind, TimerModel};
use tcplab_tcp::*;
use crate::script::*;

/// SACK sender with RACK, 10 segments of 1000 bytes sent at 100 ms (handshake RTT 100 ms),
/// peer window `wnd`, RTO at least 200 ms.
fn ten_in_flight(recovery: RecoveryKind, wnd: u32) -> Script {
    in_flight(recovery, wnd, 10)
}

fn in_flight(recovery: RecoveryKind, wnd: u32, n: u32) -> Script {
    in_flight_of(recovery, wnd, n, 200_000, 200)
}

/// As [`ten_in_flight`] with `n` segments, `bytes` written by the application, RTO at least
/// `min_rto_ms`.
fn in_flight_of(recovery: RecoveryKind, wnd: u32, n: u32, bytes: u64, min_rto_ms: u64) -> Script {
    let mut c: EndpointConfig = cfg("sack-rfc6675");
    c.variant.recovery = recovery;
    c.initial_window_segments = n;
    c.initial_ssthresh = 1 << 30;
    c.timer_model = TimerModel::Fine { granularity: MS, min_rto: min_rto_ms * MS, initial_rto: SEC };
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    drain(&mut e, 0);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd, mss: Some(1000), sack_ok: true, ..Default::default() });
    assert!(e.sack_ok());
    let mut s = Script { e, now: 100 * MS };
    s.write(bytes);
    let sent = drain(&mut s.e, s.now);
    assert_eq!(data(&sent), (0..n).map(|k| (k * 1000, 1000)).collect::<Vec<_>>());
    s
}

/// ACK for `k` with window `wnd` SACKing the relative ranges `blocks` (most recent first).
fn sack_ack(k: u32, wnd: u32, blocks: &[(u32, u32)]) -> Segment {
    let mut a = ack(k, wnd);
    for &(l, r) in blocks {
        a.sack.push(C_ISS + 1 + l, C_ISS + 1 + r);
    }
    a
}

fn rack_name(s: &Script) -> &'static str {
    s.e.config().build_parts().1.name()
}

/// Segment 0 is lost; segments 1..=9 arrive 1 ms apart from 200 ms, SACKed on duplicate
/// ACKs. Returns the data sent after each (by ACK index).
fn sack_nine(s: &mut Script) -> Vec<(u32, Vec<(u32, u32)>)> {
    let mut out = Vec::new();
    for n in 1..=9u32 {
        s.at(199 + n as u64).recv(sack_ack(0, 65535, &[(1000, 1000 + n * 1000)]));
        let sent = data(&drain(&mut s.e, s.now));
        if !sent.is_empty() {
            out.push((n, sent));
        }
    }
    out
}

#[test]
fn lost_retransmission_is_detected_without_a_timeout() {
    let mut s = ten_in_flight(RecoveryKind::Rack, 65535);
    assert_eq!(rack_name(&s), "rack");
    // RACK.rtt ≈ 100 ms, min_RTT = 100 ms. Dup ACKs 1–2: fewer than DupThresh SACKed, so
    // reo_wnd = min_RTT/4 = 25 ms and segment 0 (sent at 100) is lost only at 100 + 100 + 25:
    // nothing yet, the reorder timer runs. Dup ACK 3 (3 SACKed): reo_wnd = 0, segment 0 is lost
    // now: recovery, ssthresh = cwnd = 5000, the retransmission goes at once. From ACK 6 pipe
    // (the retransmission + the un-SACKed tail) < cwnd: one new segment per ACK.
    let got = sack_nine(&mut s);
    let want = vec![(3, vec![(0, 1000)]), (6, vec![(10_000, 1000)]), (7, vec![(11_000, 1000)]), (8, vec![(12_000, 1000)]), (9, vec![(13_000, 1000)])];
    assert_eq!(got, want);
    s.expect_window(5000, 5000).expect_recovery(true);
    // The retransmission (sent at 202) is lost too. The RTO is due at 202 + 300 ms.
    assert_eq!(s.e.next_timer(), Some(502 * MS));
    // Segment 10 000 (sent at 205) is SACKed at 305: it was sent after the retransmission,
    // which is then overdue (202 + RACK.rtt 100 + reo_wnd 0 ≤ 305): resent now, no RTO.
    s.at(304).recv(sack_ack(0, 65535, &[(1000, 10_000)])).expect_nothing();
    // pipe = segments 11–13 000 + the resend = 4000 < cwnd 5000: new segment 14 000 follows.
    s.at(305).recv(sack_ack(0, 65535, &[(10_000, 11_000), (1000, 10_000)])).expect_send(&[(0, 1000), (14_000, 1000)]);
    assert_eq!(s.e.stats().coarse_timeouts, 0);
    // Its ACK covers RecoveryPoint (10 000): recovery ends with cwnd = ssthresh.
    s.at(405).recv(sack_ack(11_000, 65535, &[])).expect_recovery(false).expect_window(5000, 5000);
    assert_eq!(s.e.stats().coarse_timeouts, 0);
}

#[test]
fn without_rack_the_lost_retransmission_waits_for_the_timeout() {
    // The contrast: RFC 6675 alone resends segment 0 only when the RTO fires at 502 ms.
    let mut s = ten_in_flight(RecoveryKind::Rfc6675, 65535);
    sack_nine(&mut s);
    s.at(305).recv(sack_ack(0, 65535, &[(10_000, 11_000), (1000, 10_000)]));
    let sent = data(&drain(&mut s.e, s.now));
    assert!(!sent.contains(&(0, 1000)), "RFC 6675 does not resend a retransmission: {sent:?}");
    s.timer_at(502);
    assert_eq!(s.e.stats().coarse_timeouts, 1);
}

#[test]
fn after_a_timeout_sacked_segments_are_not_resent() {
    // Peer window 10 000: no new data can go during recovery. Segments 0 and 5 are lost;
    // 1–4 and 6–9 arrive and are SACKed; both retransmissions are lost as well.
    let wnd = 10_000;
    let mut s = ten_in_flight(RecoveryKind::Rack, wnd);
    s.at(200).recv(sack_ack(0, wnd, &[(1000, 2000)])).expect_nothing();
    s.at(201).recv(sack_ack(0, wnd, &[(1000, 3000)])).expect_nothing();
    s.at(202).recv(sack_ack(0, wnd, &[(1000, 4000)])).expect_send(&[(0, 1000)]);
    s.at(203).recv(sack_ack(0, wnd, &[(1000, 5000)])).expect_nothing();
    // Segment 6 SACKed: 5 was sent before it and reo_wnd is 0 in recovery: lost, and resent
    // at once (pipe = the resent 0 + segments 7–9 = 4000, cwnd 5000).
    s.at(204).recv(sack_ack(0, wnd, &[(6000, 7000), (1000, 5000)])).expect_send(&[(5000, 1000)]);
    s.at(205).recv(sack_ack(0, wnd, &[(6000, 8000), (1000, 5000)])).expect_nothing();
    s.at(206).recv(sack_ack(0, wnd, &[(6000, 9000), (1000, 5000)])).expect_nothing();
    s.at(207).recv(sack_ack(0, wnd, &[(6000, 10_000), (1000, 5000)])).expect_nothing();
    // Nothing more arrives: the RTO (202 + 300 ms) fires. cwnd = 1 MSS: only segment 0 goes,
    // not the go-back-N from 1000 that RFC 6675 does.
    s.timer_at(502).expect_send(&[(0, 1000)]).expect_recovery(true);
    assert_eq!(s.e.stats().coarse_timeouts, 1);
    // It arrives: the ACK jumps to 5000 over the SACKed 1–4; slow start gives cwnd 2000; the
    // only hole is 5, then new data from 10 000 (window 5000 + 10 000), never 6–9.
    s.at(602).recv(sack_ack(5000, wnd, &[(6000, 10_000)])).expect_send(&[(5000, 1000), (10_000, 1000)]);
    s.at(702).recv(sack_ack(10_000, wnd, &[])).expect_recovery(false);
    // Every segment sent is in the script above: 0 and 5 twice each, nothing SACKed.
    assert_eq!(s.e.stats().retransmitted_segments, 4);
}

#[test]
fn after_a_timeout_rfc6675_resends_what_the_receiver_holds() {
    // The contrast (the validate-linux collapse): the same losses under RFC 6675; after the
    // RTO the scoreboard is dropped and go-back-N resends segment 1 000, which was SACKed.
    let wnd = 10_000;
    let mut s = ten_in_flight(RecoveryKind::Rfc6675, wnd);
    for (t, hi) in [(200u64, 2000u32), (201, 3000), (202, 4000), (203, 5000)] {
        s.at(t).recv(sack_ack(0, wnd, &[(1000, hi)]));
    }
    for (t, hi) in [(204u64, 7000u32), (205, 8000), (206, 9000), (207, 10_000)] {
        s.at(t).recv(sack_ack(0, wnd, &[(6000, hi), (1000, 5000)]));
    }
    drain(&mut s.e, s.now);
    // (RFC 6675 resent segment 5 by NextSeg, which moved the RTO.)
    let rto = s.e.next_timer().unwrap() / MS;
    s.timer_at(rto).expect_send(&[(0, 1000)]);
    s.at(rto + 100).recv(sack_ack(1000, wnd, &[])).expect_send(&[(1000, 1000), (2000, 1000)]);
}

#[test]
fn reordering_within_the_window_is_not_a_loss() {
    let mut s = ten_in_flight(RecoveryKind::Rack, 65535);
    // Segment 0 is late: 1 and 2 are SACKed first. reo_wnd = min_RTT/4 = 25 ms, so the reorder
    // timer is set for 100 + RACK.rtt 101 + 25 = 226 ms and nothing is resent.
    s.at(200).recv(sack_ack(0, 65535, &[(1000, 2000)])).expect_nothing();
    s.at(201).recv(sack_ack(0, 65535, &[(1000, 3000)])).expect_nothing();
    assert_eq!(s.e.next_timer(), Some(226 * MS));
    // Segment 0 arrives at 220, within the window: no retransmission, the timer is gone (the
    // RTO remains), and new data goes as usual (cwnd 11 000, 7 segments in flight).
    s.at(220).recv(ack(3000, 65535)).expect_recovery(false).expect_cwnd(11_000).expect_send(&[(10_000, 1000), (11_000, 1000), (12_000, 1000), (13_000, 1000)]);
    assert!(s.e.next_timer() > Some(226 * MS));
    assert_eq!(s.e.stats().fast_retransmits, 0);
}

#[test]
fn the_reorder_timer_marks_the_hole_lost_when_it_outlives_the_window() {
    let mut s = ten_in_flight(RecoveryKind::Rack, 65535);
    s.at(200).recv(sack_ack(0, 65535, &[(1000, 2000)])).expect_nothing();
    s.at(201).recv(sack_ack(0, 65535, &[(1000, 3000)])).expect_nothing();
    // Segment 0 does not come: at 226 ms the timer fires, segment 0 is lost, recovery starts
    // and it is resent then, not one millisecond earlier.
    s.at(225);
    s.e.on_timer(s.now);
    s.expect_nothing().expect_recovery(false);
    s.timer_at(226).expect_send(&[(0, 1000)]).expect_recovery(true).expect_window(5000, 5000);
    assert_eq!(s.e.stats().coarse_timeouts, 0);
}

#[test]
fn rack_with_prr_spreads_the_reduction_as_prr() {
    // RFC 6937 §6's single loss (20 in flight, segment 0 lost) under RACK + PRR: RACK marks
    // segment 0 lost at the third SACKed segment (reo_wnd 0 from DupThresh SACKed), the same
    // ACK as RFC 6675's DupThresh, and PRR gives the schedule of tests/endpoint/prr.rs: one
    // new segment per two ACKs while pipe > ssthresh, then one per ACK.
    let mut s = in_flight(RecoveryKind::RackPrr, 65535, 20);
    assert_eq!(rack_name(&s), "rack-prr");
    let mut got = Vec::new();
    for n in 1..=19u32 {
        s.at(200 + n as u64).recv(sack_ack(0, 65535, &[(1000, 1000 + n * 1000)]));
        let sent = data(&drain(&mut s.e, s.now));
        if !sent.is_empty() {
            got.push((n, sent));
        }
    }
    let mut want = vec![(3, vec![(0, 1000)])];
    for (i, n) in [6u32, 8, 10, 12, 15, 16, 17, 18, 19].into_iter().enumerate() {
        want.push((n, vec![(20_000 + i as u32 * 1000, 1000)]));
    }
    assert_eq!(got, want);
    s.at(260).ack(20_000).expect_recovery(false).expect_window(10_000, 10_000);
    s.expect_send(&[(29_000, 1000)]);
}

#[test]
fn tail_loss_probe_finds_a_tail_loss_before_the_timeout() {
    // Exactly 10 segments to send; the last two (8 000, 9 000) are lost; RFC 6298's 1 s
    // minimum RTO. ACK 8 000 at 200 ms: RACK's SRTT is 100 ms, two segments outstanding, so
    // PTO = 2·SRTT = 200 ms, long before the RTO (200 ms + 1 s).
    let mut s = in_flight_of(RecoveryKind::Rack, 65535, 10, 10_000, 1000);
    s.at(200).ack(8000).expect_nothing();
    assert_eq!(s.e.next_timer(), Some(400 * MS));
    // The probe is the last segment, sent again.
    s.timer_at(400).expect_send(&[(9000, 1000)]).expect_recovery(false);
    // One probe per flight: the next deadline is the RTO, not another probe.
    assert_eq!(s.e.next_timer(), Some(1200 * MS));
    // Its SACK one RTT later shows 8 000, sent long before it, lost (100 + RACK.rtt 100 +
    // reo_wnd 25 ≤ 500): fast recovery and the retransmission at once, no timeout.
    s.at(500).recv(sack_ack(8000, 65535, &[(9000, 10_000)])).expect_send(&[(8000, 1000)]).expect_recovery(true);
    assert_eq!(s.e.stats().coarse_timeouts, 0);
    s.at(600).ack(10_000).expect_recovery(false);
    assert_eq!(s.e.stats().coarse_timeouts, 0);
}

#[test]
fn a_single_outstanding_segment_adds_the_delayed_ack_allowance_to_the_probe() {
    // After ACK 9 000 one segment is outstanding: PTO = 2·SRTT + WCDelAckT (200 ms) = 400 ms,
    // so with a 200 ms minimum the RTO (200 + 250 ms) comes first.
    let mut s = in_flight_of(RecoveryKind::Rack, 65535, 10, 10_000, 200);
    s.at(200).ack(9000).expect_nothing();
    assert_eq!(s.e.next_timer(), Some(450 * MS), "the RTO, before the PTO at 600 ms");
    s.timer_at(450).expect_send(&[(9000, 1000)]);
    assert_eq!(s.e.stats().coarse_timeouts, 1);
}

#[test]
fn the_probe_timeout_of_one_outstanding_segment_includes_the_delayed_ack_allowance() {
    // As above with a 1 s minimum RTO: the probe goes at 200 + 2·100 + 200 = 600 ms, not
    // earlier.
    let mut s = in_flight_of(RecoveryKind::Rack, 65535, 10, 10_000, 1000);
    s.at(200).ack(9000).expect_nothing();
    s.at(599);
    s.e.on_timer(s.now);
    s.expect_nothing();
    s.timer_at(600).expect_send(&[(9000, 1000)]);
    assert_eq!(s.e.stats().coarse_timeouts, 0);
}
