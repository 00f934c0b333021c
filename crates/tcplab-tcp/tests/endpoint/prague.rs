//! TCP Prague (L4S): ECT(1) on data, DCTCP's α and reduction, and the RTT-independent
//! additive increase (the rate grows by 1/R_ref² packets/s² whatever the RTT below R_ref).

use tcplab_tcp::cc::{AckSample, CcWindow, CongestionControl, PragueCc, PragueParams, SenderView};
use tcplab_tcp::config::EndpointConfig;
use tcplab_tcp::sendlog::SendLog;
use tcplab_tcp::*;
use crate::bottleneck::*;

/// Δcwnd (packets) of a Prague sender in congestion avoidance over `secs` of ACK-clocked rounds
/// at RTT `rtt`.
fn growth(rtt: Nanos, secs: f64) -> f64 {
    let mss = 1000;
    let mut cc = PragueCc::new(PragueParams::DEFAULT);
    let mut w = CcWindow { cwnd: 100 * mss, ssthresh: 100 * mss, mss, max_cwnd: u32::MAX };
    let log = SendLog::default();
    let rounds = (secs * 1e9 / rtt as f64).round() as u64;
    let mut now = 0;
    let mut una = 0u64;
    for _ in 0..rounds {
        for _ in 0..w.cwnd / mss {
            now += rtt / (w.cwnd / mss) as u64;
            una += mss as u64;
            let s = AckSample { now, bytes_acked: mss, rtt: Some(rtt), fine_rtt: Some(rtt), in_slow_start: false, snd_una: una, snd_nxt: una + w.cwnd as u64, flight: w.cwnd - mss, ece: false };
            let v = SenderView { now, snd_una: una, snd_nxt: una, snd_max: una, snd_wnd: u32::MAX, mss, dupacks: 0, fine_srtt: Some(rtt), in_recovery: false, send_log: &log };
            cc.on_ack(&mut w, &s, &v, None);
        }
    }
    (w.cwnd / mss) as f64 - 100.0
}

#[test]
fn rate_growth_is_rtt_independent_below_the_reference() {
    // Rate = cwnd/R; over 4 s it should grow by 4/R_ref² = 6400 packets/s at every R < 25 ms,
    // i.e. the window by 6400·R packets (± the one packet of integer rounding).
    let expect = 4.0 / (0.025f64 * 0.025);
    for rtt_ms in [2.5f64, 5.0, 10.0, 20.0] {
        let rtt = (rtt_ms * 1e6) as Nanos;
        let pkts = growth(rtt, 4.0);
        let want = expect * rtt_ms / 1000.0;
        assert!((pkts - want).abs() <= 1.0, "R = {rtt_ms} ms: cwnd +{pkts}, expected {want:.1} (rate +{expect:.0} pkt/s)");
    }
    // At and above R_ref: Reno's +1 packet per round trip.
    assert_eq!(growth(50 * MS, 4.0), 80.0);
}

#[test]
fn data_is_ect1_and_step_marking_holds_the_queue() {
    let mut c = EndpointConfig::for_variant("prague").unwrap();
    assert!(c.ecn && c.ecn_l4s && c.ecn_dctcp_echo);
    c.mss = 1448;
    c.send_buffer = 4 << 20;
    c.recv_buffer = 4 << 20;
    c.initial_window_segments = 10;
    c.trace = false;
    let link = Bottleneck { rate: 12.5e6, delay: 100_000, limit: 100, mark_k: Some(20) };
    let (a, b, o) = run_bottleneck(c.clone(), c.clone(), link, 2 * SEC);
    assert!(a.ecn_ok());
    assert_eq!(o.drops, 0);
    assert!(o.marks > 0 && o.max_queue < 60, "queue peaks at {}", o.max_queue);
    assert!(b.bytes_received() as f64 / 2.0 > 0.9 * 12.5e6 * 1448.0 / 1500.0);
    // Every data segment the sender emits is ECT(1); a classic ECN sender's are ECT(0).
    let mut e = Endpoint::new(c, 7);
    e.connect(0);
    let _ = e.poll_transmit(0);
    e.on_segment(MS, &Segment { seq: 99, ack: 8, flags: Flags(Flags::SYN.0 | Flags::ACK.0 | Flags::ECE.0), wnd: 65535, mss: Some(1000), ..Default::default() });
    e.app_write(5000);
    let mut data = 0;
    while let Some(s) = e.poll_transmit(MS) {
        if s.len > 0 {
            assert!(s.ect && s.ect1, "{s:?}");
            data += 1;
        }
    }
    assert!(data > 0);
}
