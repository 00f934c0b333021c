//! PRR (RFC 6937) as a recovery plug-in: the sending schedule during recovery against the
//! RFC's single-loss example (§6: 20 segments in flight, one lost, ssthresh half — PRR sends
//! one segment per two ACKs while pipe exceeds ssthresh, spreading the reduction over the
//! recovery, where RFC 6675 alone waits until pipe falls below ssthresh and then sends one per
//! ACK), and the window at the end.

use tcplab_tcp::config::{EndpointConfig, RecoveryKind};
use tcplab_tcp::*;
use crate::script::*;

/// SACK-negotiated sender with 20 segments of 1000 bytes in flight at 100 ms.
fn twenty_in_flight(recovery: RecoveryKind) -> Script {
    let mut c: EndpointConfig = cfg("sack-rfc6675");
    c.variant.recovery = recovery;
    c.initial_window_segments = 20;
    c.initial_ssthresh = 1 << 30;
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    drain(&mut e, 0);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), sack_ok: true, ..Default::default() });
    assert!(e.sack_ok());
    let mut s = Script { e, now: 100 * MS };
    s.write(200_000);
    let sent = drain(&mut s.e, s.now);
    assert_eq!(data(&sent), (0..20).map(|k| (k * 1000, 1000)).collect::<Vec<_>>());
    s
}

/// Duplicate ACK for 0 SACKing [1000, hi).
fn sack_dup(hi: u32) -> Segment {
    let mut a = ack(0, 65535);
    a.sack.push(C_ISS + 1 + 1000, C_ISS + 1 + hi);
    a
}

/// Feed the 19 duplicate ACKs of segment 0's loss; the data sent after each (by index 1..=19).
fn schedule(s: &mut Script) -> Vec<(u32, Vec<(u32, u32)>)> {
    let mut out = Vec::new();
    for n in 1..=19u32 {
        s.at(200 + n as u64).recv(sack_dup(1000 + n * 1000));
        let sent = data(&drain(&mut s.e, s.now));
        if !sent.is_empty() {
            out.push((n, sent));
        }
    }
    out
}

#[test]
fn prr_spreads_the_reduction_over_recovery() {
    let mut s = twenty_in_flight(RecoveryKind::Prr);
    let got = schedule(&mut s);
    // Hand-computed from RFC 6937 §3.1 with RFC 6675 SetPipe. Dup ACK 3 enters recovery:
    // ssthresh = 20 000/2, RecoverFS = 20 000; the fast retransmission goes at once. While
    // pipe > ssthresh (through ACK 13) sndcnt = ⌈prr_delivered·ssthresh/RecoverFS⌉ − prr_out
    // lets one new segment go per two ACKs (6, 8, 10, 12). At ACK 14 pipe = ssthresh (the
    // retransmission, segments 15–19 and 20–23): sndcnt = ssthresh − pipe = 0. From ACK 15 the
    // slow-start reduction bound keeps pipe at ssthresh: one segment per ACK.
    let mut want = vec![(3, vec![(0, 1000)])];
    for (i, n) in [6u32, 8, 10, 12, 15, 16, 17, 18, 19].into_iter().enumerate() {
        want.push((n, vec![(20_000 + i as u32 * 1000, 1000)]));
    }
    assert_eq!(got, want);
    assert_eq!(s.e.ssthresh(), 10_000);
    // The retransmission arrives: ACK 20 000 covers RecoveryPoint; cwnd = ssthresh with 9
    // segments in flight, so one more leaves: the window is ssthresh right at the end.
    s.at(260).ack(20_000).expect_recovery(false).expect_window(10_000, 10_000);
    s.expect_send(&[(29_000, 1000)]);
}

#[test]
fn rfc6675_alone_waits_then_sends_one_per_ack() {
    // The contrast of RFC 6937 §6: cwnd = ssthresh at once, nothing until pipe < ssthresh
    // (dup ACK 11), then one segment per ACK.
    let mut s = twenty_in_flight(RecoveryKind::Rfc6675);
    let got = schedule(&mut s);
    let mut want = vec![(3, vec![(0, 1000)])];
    for (i, n) in (11..=19).enumerate() {
        want.push((n, vec![(20_000 + i as u32 * 1000, 1000)]));
    }
    assert_eq!(got, want);
}

#[test]
fn modern_variant_is_cubic_with_rack_and_prr() {
    let c = EndpointConfig::for_variant("modern").unwrap();
    assert_eq!(c.variant.recovery, RecoveryKind::RackPrr);
    assert_eq!(c.variant.cc.name(), "cubic");
    assert!(c.sack && c.dsack && c.timestamps && c.window_scaling);
    assert_eq!(c.initial_window_segments, 10);
    let (cc, rec) = c.build_parts();
    assert_eq!((cc.name(), rec.name()), ("cubic", "rack-prr"));
}
