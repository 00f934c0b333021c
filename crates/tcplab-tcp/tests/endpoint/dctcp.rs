//! DCTCP (RFC 8257): the receiver's ECN-echo state machine with delayed ACKs (§3.2), the
//! sender's α per window (§3.3) and its convergence to the marked fraction, the once-per-window
//! reduction cwnd × (1 − α/2), and a step-marked bottleneck run.

use tcplab_tcp::cc::dctcp::{DctcpAlpha, ALPHA_ONE};
use tcplab_tcp::config::{AckPolicy, EndpointConfig};
use tcplab_tcp::*;
use crate::bottleneck::*;
use crate::script::*;

const ECE_CWR: Flags = Flags(Flags::ECE.0 | Flags::CWR.0);

fn dcfg() -> EndpointConfig {
    let mut c = cfg("dctcp");
    c.timestamps = false;
    c.window_scaling = false;
    // The echo state machine under BSD's every-second-segment rule (no quick-ACK start).
    c.quickack = 0;
    c
}

/// The DCTCP receiver, ECN agreed, established at 100 ms.
fn open_ecn_receiver(c: EndpointConfig) -> Script {
    let mut r = Endpoint::new(c, S_ISS);
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags(Flags::SYN.0 | ECE_CWR.0), wnd: 65535, mss: Some(1000), ..Default::default() });
    let out = drain(&mut r, 0);
    assert_eq!(out[0].flags, Flags(SYNACK.0 | Flags::ECE.0), "ECN agreed");
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    assert!(r.ecn_ok());
    Script { e: r, now: 100 * MS }
}

/// Deliver data segment k (CE if `ce`) now; the (ack, ECE) of every segment that leaves.
fn deliver(s: &mut Script, k: u32, ce: bool, cwr: bool) -> Vec<(u32, bool)> {
    let mut d = dseg(k * 1000, 1000);
    d.ect = true;
    d.ce = ce;
    if cwr {
        d.flags |= Flags::CWR;
    }
    s.recv(d);
    drain(&mut s.e, s.now).iter().map(|a| (a.ack.wrapping_sub(C_ISS + 1), a.flags.contains(Flags::ECE))).collect()
}

#[test]
fn registry_row_and_params() {
    let c = EndpointConfig::for_variant("dctcp").unwrap();
    assert!(c.ecn && c.ecn_dctcp_echo && !c.ecn_per_segment && c.sack);
    assert_eq!(c.ack_policy, AckPolicy::BsdDelayed);
    let mut c = c;
    c.set_param("g", 0.0625).unwrap();
    assert!(c.set_param("g", 0.2).unwrap_err().contains("power of two"));
    assert!(c.set_param("alpha", 0.2).unwrap_err().contains("g, alpha_init"));
}

#[test]
fn receiver_echo_state_machine_with_delayed_acks() {
    // RFC 8257 §3.2 Figure 1, with an ACK every second segment.
    let mut s = open_ecn_receiver(dcfg());
    s.at(200);
    assert_eq!(deliver(&mut s, 0, false, false), vec![], "delayed");
    assert_eq!(deliver(&mut s, 1, false, false), vec![(2000, false)]);
    // CE state 0 → 1 with nothing owed: no extra ACK; the pair is ACKed with ECE.
    assert_eq!(deliver(&mut s, 2, true, false), vec![]);
    assert_eq!(deliver(&mut s, 3, true, false), vec![(4000, true)]);
    // CWR does not clear DCTCP's echo (only the CE state does).
    assert_eq!(deliver(&mut s, 4, true, true), vec![]);
    // 1 → 0 with segment 4 owed: an immediate ACK of 5000 with the old state (ECE), then the
    // new segment waits for its pair.
    assert_eq!(deliver(&mut s, 5, false, false), vec![(5000, true)]);
    assert_eq!(deliver(&mut s, 6, false, false), vec![(7000, false)]);
    // 0 → 1 with segment 7 owed: immediate ACK of 8000 without ECE; segment 8 then waits.
    assert_eq!(deliver(&mut s, 7, false, false), vec![]);
    assert_eq!(deliver(&mut s, 8, true, false), vec![(8000, false)]);
    // The delayed ACK of segment 8 (Linux's 40 ms timer) carries the new state.
    s.timer_at(240);
    let out = drain(&mut s.e, s.now);
    assert_eq!(out.iter().map(|a| (a.ack.wrapping_sub(C_ISS + 1), a.flags.contains(Flags::ECE))).collect::<Vec<_>>(), vec![(9000, true)]);
    assert_eq!(s.e.stats().ecn_ce_received, 4);
}

#[test]
fn classic_receiver_still_echoes_until_cwr() {
    // The same sequence under RFC 3168 (`sack-rfc6675` with ECN): ECE from the first CE on every
    // ACK until CWR, no immediate ACK on a change.
    let mut c = cfg("sack-rfc6675");
    c.ecn = true;
    c.ack_policy = AckPolicy::BsdDelayed;
    let mut s = open_ecn_receiver(c);
    s.at(200);
    assert_eq!(deliver(&mut s, 0, false, false), vec![]);
    assert_eq!(deliver(&mut s, 1, true, false), vec![(2000, true)]);
    assert_eq!(deliver(&mut s, 2, false, false), vec![]);
    assert_eq!(deliver(&mut s, 3, false, false), vec![(4000, true)], "sticky until CWR");
    assert_eq!(deliver(&mut s, 4, false, true), vec![]);
    assert_eq!(deliver(&mut s, 5, false, false), vec![(6000, false)]);
}

#[test]
fn alpha_converges_to_the_marked_fraction() {
    // Windows of 20 segments of which m are marked: α → m/20 (the EWMA's fixed point, less the
    // integer truncation of Linux's 1024ths).
    for marked in [0u64, 2, 6, 10, 20] {
        let mut a = DctcpAlpha::new(4, ALPHA_ONE);
        let mut una = 0;
        for _ in 0..300 {
            let end = una + 20_000;
            for k in 0..20 {
                una += 1000;
                a.on_ack(1000, k < marked, una, end + 20_000);
            }
        }
        let p = marked as f64 / 20.0;
        assert!((a.fraction() - p).abs() <= 0.02, "marked {p}: α = {}", a.fraction());
        assert!(a.updates >= 299, "one update per window");
    }
}

#[test]
fn sender_cuts_by_alpha_once_per_window() {
    let mut c = dcfg();
    c.initial_window_segments = 10;
    c.initial_ssthresh = 10_000; // start in congestion avoidance
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    drain(&mut e, 0);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: Flags(SYNACK.0 | Flags::ECE.0), wnd: 65535, mss: Some(1000), ..Default::default() });
    let mut s = Script { e, now: 100 * MS };
    assert!(s.e.ecn_ok());
    s.write(1_000_000);
    let sent = drain(&mut s.e, s.now);
    assert_eq!(data(&sent).len(), 10);
    assert!(sent.iter().filter(|x| x.len > 0).all(|x| x.ect), "data is ECT");
    // ACK 1000 with ECE ends the initial window (window_end 0): α = 1024 − 1024/16 + (1000 <<
    // 6)/1000 = 1024, i.e. 1. Cut: 10 − 10·1024/2048 = 5 packets, ssthresh = cwnd.
    let mut ece = ack(1000, 65535);
    ece.flags |= Flags::ECE;
    s.at(200).recv(ece);
    s.expect_window(5000, 5000);
    s.expect_nothing(); // 9 segments in flight, cwnd 5
    // More ECE within the same window: no further cut.
    let mut ece = ack(2000, 65535);
    ece.flags |= Flags::ECE;
    s.at(201).recv(ece).expect_window(5000, 5000);
    // An unmarked ACK grows the window again (+1 per cwnd packets, Reno).
    s.at(202).ack(3000).check(|e| assert!(e.cwnd() >= 5000));
    // An ECE on the ACK of exactly the data outstanding at the cut still belongs to that window:
    // no second cut (the reaction waits for an ACK beyond it, as RFC 3168 / ns-2 `recover_`).
    let mut ece = ack(10_000, 65535);
    ece.flags |= Flags::ECE;
    s.at(203).recv(ece).check(|e| assert_eq!(e.ssthresh(), 5000));
    assert!(data(&drain(&mut s.e, s.now)).len() > 0);
}

#[test]
fn step_marking_holds_the_queue_near_k_without_loss() {
    // 100 Mbit/s, 2 × 100 µs, K = 20 packets, buffer 100: DCTCP keeps the queue near K, loses
    // nothing after slow start and keeps the link busy (Alizadeh et al. 2010 §3.3).
    let mut c = EndpointConfig::for_variant("dctcp").unwrap();
    c.mss = 1448;
    c.send_buffer = 4 << 20;
    c.recv_buffer = 4 << 20;
    c.initial_window_segments = 10;
    let link = Bottleneck { rate: 12.5e6, delay: 100_000, limit: 100, mark_k: Some(20) };
    let (a, b, o) = run_bottleneck(c.clone(), c, link, 2 * SEC);
    assert_eq!(o.drops, 0, "no loss: the marks hold the queue below the buffer");
    assert!(o.marks > 0);
    assert!(o.max_queue < 60, "queue peaks at {} packets (K = 20)", o.max_queue);
    let goodput = b.bytes_received() as f64 / 2.0;
    assert!(goodput > 0.9 * 12.5e6 * 1448.0 / 1500.0, "goodput {goodput:.0} B/s");
    assert_eq!(a.stats().retransmitted_segments, 0);
}

