//! Scripted exchanges for Kelly's scalable TCP (`scalable-ecn`, seed 003 §3.3): per-segment ECN
//! echo, paced fractional windows, loss fallback with byte-stream integrity. Uses the helpers of
//! `script.rs`.

use tcplab_tcp::config::{AckPolicy, EndpointConfig};
use tcplab_tcp::*;
use crate::link::*;
use crate::script::*;

const ECE_CWR: Flags = Flags(Flags::ECE.0 | Flags::CWR.0);

fn scfg() -> EndpointConfig {
    let mut c = EndpointConfig::for_variant("scalable-ecn").unwrap();
    c.mss = 1012; // 1000 payload bytes beside the 12 timestamp bytes
    c.trace = true;
    c
}

#[test]
fn registry_scalable_defaults_and_params() {
    let c = EndpointConfig::for_variant("scalable-ecn").unwrap();
    assert!(c.ecn && c.ecn_per_segment && c.timestamps);
    assert_eq!(c.ack_policy, AckPolicy::EveryPacket, "no delayed ACKs (seed 003 fn. 14)");
    assert_eq!(c.variant.cc, CcKind::Scalable(tcplab_tcp::config::ScalableParams { a: 0.125, base_b: 0.005, ssgrace: 3, b_cap: 0.1 }));
    let mut c2 = c.clone();
    c2.set_param("base_b", 0.01).unwrap();
    c2.set_param("ssgrace", 0.0).unwrap();
    assert!(c2.set_param("ssgrace", 1.5).unwrap_err().contains("whole number"));
    assert!(c2.set_param("b_cap", 1.0).unwrap_err().contains("(0, 1)"));
    assert!(c2.set_param("a", -1.0).unwrap_err().contains("> 0"));
    let e = c2.set_param("alpha", 1.0).unwrap_err();
    assert!(e.contains("a, base_b, ssgrace, b_cap"), "{e}");
}

#[test]
fn receiver_echoes_each_segments_mark_on_its_own_ack() {
    let mut r = Endpoint::new(scfg(), S_ISS);
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags(Flags::SYN.0 | ECE_CWR.0), wnd: 65535, mss: Some(1012), ts: Some((1, 0)), ..Default::default() });
    let out = drain(&mut r, 0);
    assert_eq!(out[0].flags, Flags(SYNACK.0 | Flags::ECE.0), "ECN agreed");
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ts: Some((2, 1)), ..Default::default() });
    assert!(r.ecn_ok());
    let marks = [false, true, false, true, true, false, false, true];
    for (k, &ce) in marks.iter().enumerate() {
        let mut d = dseg(k as u32 * 1000, 1000);
        d.ts = Some((3 + k as u32, 2));
        d.ce = ce;
        d.ect = true;
        let t = (200 + k as u64) * MS;
        r.on_segment(t, &d);
        let out = drain(&mut r, t);
        assert_eq!(out.len(), 1, "one ACK per segment");
        assert_eq!(out[0].ack, C_ISS + 1 + (k as u32 + 1) * 1000);
        assert_eq!(out[0].flags.contains(Flags::ECE), ce, "segment {k}: ECE iff that segment was CE");
        assert!(!out[0].flags.contains(Flags::CWR));
    }
    assert_eq!(r.stats().ecn_ce_received, 4);
}

/// Two scalable endpoints over a pipe with a fixed one-way delay and no queue; data segments are
/// CE-marked while `mark(k)` says so (k counts data segments delivered). Returns the sender and
/// its data send times up to `until`.
fn paced_run(c: EndpointConfig, one_way: Nanos, until: Nanos, mark: impl Fn(u64) -> bool) -> (Endpoint, Vec<Nanos>) {
    let mut a = Endpoint::new(c.clone(), C_ISS);
    let mut b = Endpoint::new(c, S_ISS);
    b.listen();
    a.connect(0);
    a.app_write(u64::MAX);
    let mut q: [std::collections::VecDeque<(Nanos, Segment)>; 2] = Default::default();
    let mut sends = Vec::new();
    let mut delivered = 0u64;
    let mut now = 0;
    loop {
        while let Some(s) = a.poll_transmit(now) {
            if s.len > 0 {
                sends.push(now);
            }
            q[0].push_back((now + one_way, s));
        }
        while let Some(s) = b.poll_transmit(now) {
            q[1].push_back((now + one_way, s));
        }
        let mut next = u64::MAX;
        for side in &q {
            if let Some(&(t, _)) = side.front() {
                next = next.min(t);
            }
        }
        for t in [a.next_timer(), b.next_timer()].into_iter().flatten() {
            next = next.min(t);
        }
        if next > until {
            break;
        }
        assert!(next >= now);
        now = next;
        while q[0].front().is_some_and(|&(t, _)| t <= now) {
            let (_, mut s) = q[0].pop_front().unwrap();
            if s.len > 0 {
                s.ce = s.ect && mark(delivered);
                delivered += 1;
            }
            b.on_segment(now, &s);
        }
        while q[1].front().is_some_and(|&(t, _)| t <= now) {
            let (_, s) = q[1].pop_front().unwrap();
            a.on_segment(now, &s);
        }
        for ep in [&mut a, &mut b] {
            if ep.next_timer().is_some_and(|t| t <= now) {
                ep.on_timer(now);
            }
        }
    }
    (a, sends)
}

#[test]
fn fractional_window_sends_one_packet_per_one_over_cwnd_rtts() {
    // RTT 100 ms; base_b 0.01 → b = 0.1; ssgrace 0; a tiny so cwnd stays put between marks.
    let mut c = scfg();
    c.set_param("base_b", 0.01).unwrap();
    c.set_param("ssgrace", 0.0).unwrap();
    c.set_param("a", 1e-9).unwrap();
    // Mark the first 7 data segments: cwnd = 0.9^7 = 0.478 segments.
    let (a, sends) = paced_run(c, 50 * MS, 30 * SEC, |k| k < 7);
    let cwnd = a.real_cwnd().unwrap();
    assert!((cwnd - 0.9f64.powi(7)).abs() < 1e-6, "cwnd {cwnd}");
    assert_eq!(a.cwnd(), 1000, "⌈cwnd⌉ = 1 segment");
    // After the marks, each gap is RTT̄/cwnd = 100 ms / 0.478 = 209 ms: one packet per 1/cwnd RTTs.
    let gaps: Vec<Nanos> = sends.windows(2).map(|w| w[1] - w[0]).collect();
    let tail = &gaps[gaps.len() - 20..];
    let expect = 100e6 / cwnd;
    for &g in tail {
        assert!((g as f64 - expect).abs() < 1e-3 * expect, "gap {g} vs {expect}");
    }
    assert_eq!(a.stats().retransmitted_segments, 0);
    assert_eq!(a.stats().ecn_reactions, 0, "no RFC 3168 halving");
    assert_eq!(a.stats().ecn_ece_received, 7);
}

#[test]
fn unmarked_flow_grows_by_a_per_ack_and_paces_within_the_window() {
    // No marks: soft-start never ends (ssgrace stays 3): +a·8 = +1 segment per ACK; every send
    // waits for the pacing timer, so no two data segments leave at the same instant.
    let c = scfg();
    let (a, sends) = paced_run(c, 50 * MS, 1 * SEC, |_| false);
    let acks = a.stats().bytes_acked / 1000;
    let cwnd = a.real_cwnd().unwrap();
    assert!((cwnd - (1.0 + acks as f64)).abs() < 1e-9, "cwnd {cwnd} after {acks} ACKs");
    assert!(sends.windows(2).all(|w| w[1] > w[0]), "paced: one segment per timer");
}

#[test]
fn scalable_integrity_over_loss_and_determinism() {
    let bytes = 300_000 + 123;
    for (i, loss) in [0.0, 0.01, 0.05].into_iter().enumerate() {
        let mut c = EndpointConfig::for_variant("scalable-ecn").unwrap();
        c.mss = 1400;
        c.pacing_seed = 11;
        let o = run_pair(c.clone(), c.clone(), bytes, loss, i as u64 + 1, None);
        check_integrity(&o, bytes, &format!("scalable-ecn loss {loss}"));
        let o2 = run_pair(c.clone(), c, bytes, loss, i as u64 + 1, None);
        assert_eq!(o.a.stats(), o2.a.stats(), "deterministic");
        if loss > 0.0 {
            assert!(o.a.stats().retransmitted_segments > 0);
        }
    }
}

/// RFC 3168 §6.1.1: without an ECN-setup SYN-ACK the connection is not ECN-capable and the
/// sender ignores ECE (issue 31 item 8). A `scalable-ecn` sender whose peer does not agree to
/// ECN, fed the same ACK with and without ECE, must end with the same window; the ignored echo
/// is counted.
#[test]
fn ece_without_negotiated_ecn_is_ignored() {
    let open = || {
        let mut e = Endpoint::new(scfg(), C_ISS);
        e.connect(0);
        assert_eq!(drain(&mut e, 0)[0].flags, Flags(Flags::SYN.0 | ECE_CWR.0), "scalable-ecn offers ECN");
        // The peer does not agree: its SYN-ACK carries no ECE.
        e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1012), ts: Some((1, 1)), ..Default::default() });
        drain(&mut e, 100 * MS);
        assert!(!e.ecn_ok());
        e.app_write(100_000);
        let out = drain(&mut e, 100 * MS);
        assert_eq!(data(&out), vec![(0, 1000)]);
        assert!(!out[0].ect, "not ECN-capable: no ECT");
        e
    };
    let (mut plain, mut echoed) = (open(), open());
    plain.on_segment(200 * MS, &ack(1000, 65535));
    echoed.on_segment(200 * MS, &Segment { flags: Flags::ACK | Flags::ECE, ..ack(1000, 65535) });
    assert_eq!(echoed.real_cwnd(), plain.real_cwnd(), "the echo must not reach the congestion control");
    assert_eq!(echoed.cwnd(), plain.cwnd());
    assert_eq!(data(&drain(&mut echoed, 200 * MS)), data(&drain(&mut plain, 200 * MS)));
    assert_eq!((echoed.stats().ecn_ece_ignored, plain.stats().ecn_ece_ignored), (1, 0), "the ignored echo is counted");
    assert_eq!((echoed.stats().ecn_ece_received, echoed.stats().ecn_reactions), (0, 0));
    // The same for a window-based sender (its reaction is RFC 3168's halving): no halving, counted.
    let mut reno = open_sender(cfg("reno"), 65535);
    reno.app_write(10_000);
    drain(&mut reno, 100 * MS);
    reno.on_segment(200 * MS, &Segment { flags: Flags::ACK | Flags::ECE, ..ack(1000, 65535) });
    assert_eq!((reno.cwnd(), reno.stats().ecn_reactions, reno.stats().ecn_ece_ignored), (2000, 0, 1));
}
