//! Linux's retransmission timer through the endpoint (`rto::linux`): the SYN is the first
//! sample (RTO = SRTT + max(2·SRTT, 200 ms)), then every ACK that newly acknowledges data is a
//! sample from the oldest segment it covers, a SACK reporting a newly received segment is a
//! sample from that segment, and a repeated SACK block is none.

use tcplab_tcp::config::{EndpointConfig, TimerModel};
use tcplab_tcp::rto::{DeadlineRto, LinuxRto, RetransmitTimer};
use tcplab_tcp::*;
use crate::script::*;

fn linux_est(e: &Endpoint) -> LinuxRto {
    match e.rto_timer() {
        RetransmitTimer::Fine { est: DeadlineRto::Linux(l), .. } => *l,
        other => panic!("not the linux timer: {other:?}"),
    }
}

fn sack_ack(k: u32, blocks: &[(u32, u32)]) -> Segment {
    let mut a = ack(k, 65535);
    for &(l, r) in blocks {
        a.sack.push(C_ISS + 1 + l, C_ISS + 1 + r);
    }
    a
}

/// SACK sender on the linux timer, SYN at 0, SYN-ACK at 100 ms, four segments sent at 100 ms.
fn four_in_flight() -> Endpoint {
    let mut c: EndpointConfig = cfg("sack-rfc6675");
    c.initial_window_segments = 4;
    c.timer_model = TimerModel::Linux { granularity: MS, min_rto: 200 * MS, initial_rto: SEC };
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    drain(&mut e, 0);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), sack_ok: true, ..Default::default() });
    e.app_write(4000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000), (1000, 1000), (2000, 1000), (3000, 1000)]);
    e
}

#[test]
fn every_ack_is_a_sample_and_the_rto_is_srtt_plus_rto_min() {
    let mut e = four_in_flight();
    // SYN sample 100 ms: SRTT 100, mdev 200, rttvar 200 → RTO 300 ms.
    let l = linux_est(&e);
    assert_eq!((l.srtt, l.rttvar, e.rto_timer().rto_ns()), (Some(100 * MS), 200 * MS, 300 * MS));
    // 150 ms: the first segment (sent at 100) → 50 ms; SRTT 93.75; |err| 50 − mdev/4 50 = 0:
    // mdev stays 200; snd_una passed rtt_seq: the round closes, mdev_max restarts at 200 ms.
    e.on_segment(150 * MS, &ack(1000, 65535));
    let l = linux_est(&e);
    assert_eq!((l.srtt, l.mdev, l.rttvar), (Some(93_750_000), 200 * MS, 200 * MS));
    // 160 ms: the second → 60 ms, a second sample in the same round trip (RFC 6298's one timed
    // segment per RTT would not take it): SRTT 89.53125, mdev 200 − 16.25.
    e.on_segment(160 * MS, &ack(2000, 65535));
    let l = linux_est(&e);
    assert_eq!((l.srtt, l.mdev), (Some(89_531_250), 183_750_000));
    // RTO = SRTT + rttvar (200 ms, the floor): 289.53125 ms, where RFC 6298 gives max(200 ms,
    // SRTT + 4·RTTVAR).
    assert_eq!(e.rto_timer().rto_ns(), 289_531_250);
    // 170 ms: a duplicate ACK SACKing the fourth segment (sent at 100) → 70 ms sample:
    // SRTT −= 19.53125/8.
    e.on_segment(170 * MS, &sack_ack(2000, &[(3000, 4000)]));
    assert_eq!(linux_est(&e).srtt, Some(89_531_250 - 2_441_406));
    // 175 ms: the same block again is no new sample.
    e.on_segment(175 * MS, &sack_ack(2000, &[(3000, 4000)]));
    assert_eq!(linux_est(&e).srtt, Some(89_531_250 - 2_441_406));
}

#[test]
fn acked_retransmitted_data_is_no_sample() {
    let mut e = four_in_flight();
    e.on_segment(150 * MS, &ack(1000, 65535));
    let before = linux_est(&e);
    // The retransmission timer (RTO 293.75 ms from 150 ms) fires at 443.75 ms; the second
    // segment goes again; its ACK at 500 ms covers a retransmission: no sample (Karn,
    // FLAG_RETRANS_DATA_ACKED), the backoff stays.
    let t = 150 * MS + e.rto_timer().rto_ns();
    assert_eq!(t, 443_750_000);
    e.on_timer(t);
    assert_eq!(data(&drain(&mut e, t)), vec![(1000, 1000)]);
    assert_eq!(e.rto_timer().backoffs(), 1);
    e.on_segment(500 * MS, &ack(2000, 65535));
    let after = linux_est(&e);
    assert_eq!((after.srtt, after.mdev, after.backoffs), (before.srtt, before.mdev, 1));
}
