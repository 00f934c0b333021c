//! Survivor tests on the endpoint: scripted exchanges.
//!
//! Conventions of `script.rs`: the endpoint under test is the client (ISS `C_ISS`), MSS 1000, the
//! scripted peer's ISS is `S_ISS`; data byte k has wire sequence `C_ISS + 1 + k`.

use tcplab_tcp::config::EndpointConfig;
use tcplab_tcp::*;
// The scripted-exchange helpers and constants of `script.rs`, shared.
use crate::script::{ack, data, drain, open_sender, C_ISS, S_ISS, SYNACK};

fn cfg(variant: &str) -> EndpointConfig {
    let mut c = EndpointConfig::for_variant(variant).unwrap();
    c.mss = 1000;
    c
}

#[test]
fn rst_in_window_aborts_out_of_window_is_ignored() {
    let rst = |seq: u32| Segment { seq, flags: Flags::RST, ..Default::default() };
    let mut e = open_sender(cfg("reno"), 65535);
    // Beyond the receive window (50 KB): ignored.
    e.on_segment(200 * MS, &rst(S_ISS + 1 + 60_000));
    assert_eq!(e.state(), TcpState::Established);
    // Below rcv_nxt: ignored.
    e.on_segment(200 * MS, &rst(S_ISS));
    assert_eq!(e.state(), TcpState::Established);
    // Inside the window, not at rcv_nxt: accepted (RFC 793 window test).
    let mut f = open_sender(cfg("reno"), 65535);
    f.on_segment(200 * MS, &rst(S_ISS + 1 + 1000));
    assert!(f.is_closed());
    // At rcv_nxt exactly.
    e.on_segment(300 * MS, &rst(S_ISS + 1));
    assert!(e.is_closed());
    assert!(drain(&mut e, 300 * MS).is_empty(), "no answer to a RST");
}

#[test]
fn closed_and_listening_endpoints_answer_with_exact_rsts() {
    let mut e = Endpoint::new(cfg("reno"), C_ISS);
    assert!(e.is_closed());
    // A segment with ACK: <SEQ=SEG.ACK><CTL=RST> (RFC 793 p. 36).
    e.on_segment(0, &Segment { seq: 700, ack: 9000, flags: Flags::ACK, len: 10, ..Default::default() });
    assert_eq!(drain(&mut e, 0), vec![Segment { seq: 9000, ack: 0, flags: Flags::RST, ..Default::default() }]);
    // Without ACK: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; a SYN counts one.
    e.on_segment(0, &Segment { seq: 700, flags: Flags::SYN, ..Default::default() });
    assert_eq!(drain(&mut e, 0), vec![Segment { seq: 0, ack: 701, flags: Flags::RST | Flags::ACK, ..Default::default() }]);
    e.on_segment(0, &Segment { seq: 700, flags: Flags::RST, ..Default::default() });
    assert!(drain(&mut e, 0).is_empty(), "a RST is never answered");
    let mut l = Endpoint::new(cfg("reno"), S_ISS);
    l.listen();
    assert_eq!(l.state(), TcpState::Listen);
    l.on_segment(0, &Segment { seq: 1, flags: Flags::RST, ..Default::default() });
    assert!(drain(&mut l, 0).is_empty());
    l.on_segment(0, &Segment { seq: 1, ack: 77, flags: Flags::ACK, ..Default::default() });
    assert_eq!(drain(&mut l, 0), vec![Segment { seq: 77, flags: Flags::RST, ..Default::default() }]);
    assert_eq!(l.state(), TcpState::Listen);
}

#[test]
fn time_wait_acks_a_retransmitted_fin_and_ignores_a_pure_ack() {
    let mut c = Endpoint::new(cfg("reno"), C_ISS);
    let mut s = Endpoint::new(cfg("reno"), S_ISS);
    s.listen();
    c.connect(0);
    c.app_write(1500);
    c.app_close();
    let mut t = 0;
    let mut last_from_s = None;
    for _ in 0..20 {
        for seg in drain(&mut c, t) {
            s.on_segment(t + 10 * MS, &seg);
        }
        for seg in drain(&mut s, t + 10 * MS) {
            last_from_s = Some(seg);
            c.on_segment(t + 20 * MS, &seg);
        }
        t += 20 * MS;
    }
    assert_eq!(c.state(), TcpState::TimeWait);
    let fin = last_from_s.unwrap();
    assert!(fin.flags.fin(), "the server's last segment is its FIN");
    let d = c.next_timer().unwrap();
    // A pure ACK: no answer, the 2MSL wait is not restarted.
    let pure = Segment { flags: Flags::ACK, len: 0, ..fin };
    c.on_segment(t + 100 * MS, &pure);
    assert!(drain(&mut c, t + 100 * MS).is_empty());
    assert_eq!(c.next_timer(), Some(d));
    // The retransmitted FIN: ACKed at once, and the wait restarts (1 s TIME_WAIT).
    c.on_segment(t + 200 * MS, &fin);
    let out = drain(&mut c, t + 200 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].flags, out[0].ack), (Flags::ACK, fin.seq.wrapping_add(1)));
    assert_eq!(c.next_timer(), Some(t + 200 * MS + SEC));
    c.on_timer(t + 200 * MS + SEC);
    assert!(c.is_closed());
}

#[test]
fn ack_beyond_snd_max_is_answered_and_dropped() {
    let mut e = open_sender(cfg("reno"), 65535);
    e.app_write(3000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
    e.on_segment(200 * MS, &ack(5000, 65535));
    let out = drain(&mut e, 200 * MS);
    assert_eq!(out.len(), 1, "an ACK for data never sent gets an ACK back");
    assert_eq!((out[0].len, out[0].ack), (0, S_ISS + 1));
    assert_eq!(e.snd_una(), 0);
    assert_eq!(e.stats().bytes_acked, 0);
    // The right ACK then works.
    e.on_segment(300 * MS, &ack(1000, 65535));
    assert_eq!(e.snd_una(), 1000);
    assert_eq!(data(&drain(&mut e, 300 * MS)), vec![(1000, 1000), (2000, 1000)]);
}

#[test]
fn only_bsd_duplicate_acks_count() {
    let mut e = open_sender(cfg("reno"), 50_000);
    e.app_write(20_000);
    drain(&mut e, 100 * MS);
    // Open the window to 4 segments.
    for (i, k) in [1000u32, 2000, 3000].iter().enumerate() {
        e.on_segment((200 + i as u64) * MS, &ack(*k, 50_000));
        drain(&mut e, (200 + i as u64) * MS);
    }
    assert_eq!(e.stats().dupacks_received, 0);
    // A window change is no duplicate (and the window is taken: 60 000).
    e.on_segment(300 * MS, &ack(3000, 60_000));
    assert_eq!((e.stats().dupacks_received, e.snd_wnd()), (0, 60_000));
    // Nor is a segment carrying data.
    e.on_segment(301 * MS, &Segment { len: 100, ..ack(3000, 60_000) });
    assert_eq!(e.stats().dupacks_received, 0);
    let dup = Segment { seq: S_ISS + 101, ..ack(3000, 60_000) };
    // Two true duplicates, then a window change: the count starts again.
    e.on_segment(310 * MS, &dup);
    e.on_segment(311 * MS, &dup);
    assert_eq!(e.stats().dupacks_received, 2);
    e.on_segment(312 * MS, &Segment { wnd: 61_000, ..dup });
    let dup = Segment { wnd: 61_000, ..dup };
    e.on_segment(313 * MS, &dup);
    e.on_segment(314 * MS, &dup);
    assert_eq!(e.stats().fast_retransmits, 0, "the window update reset the count");
    // The third in a row starts fast retransmit of segment 3.
    e.on_segment(315 * MS, &dup);
    assert_eq!(e.stats().dupacks_received, 5);
    assert_eq!(e.stats().fast_retransmits, 1);
    assert!(e.in_recovery());
    assert_eq!(data(&drain(&mut e, 320 * MS))[0], (3000, 1000));
}

// -------------------------------------------------------------- the seams' contracts

use tcplab_tcp::cc::{AckSample, CcWindow, CongestionControl, SenderView};
use tcplab_tcp::recovery::{LossRecovery, RecoveryCtx, RecoveryOutcome};
use tcplab_tcp::CamTrace;
use std::sync::{Arc, Mutex};

/// A congestion control that records every `AckSample` and opens the window by one MSS.
#[derive(Debug, Default)]
struct Recorder {
    samples: Arc<Mutex<Vec<AckSample>>>,
}

impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, _v: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        self.samples.lock().unwrap().push(*s);
        w.cwnd += w.mss;
    }
}

fn open_with(mut e: Endpoint, synack: Segment) -> Endpoint {
    e.connect(0);
    assert_eq!(drain(&mut e, 0).len(), 1);
    e.on_segment(100 * MS, &synack);
    assert_eq!(drain(&mut e, 100 * MS).len(), 1);
    assert_eq!(e.state(), TcpState::Established);
    e
}

fn synack() -> Segment {
    Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), ..Default::default() }
}

#[test]
fn ack_samples_given_to_congestion_control_are_exact() {
    let rec = Recorder::default();
    let samples = rec.samples.clone();
    // ECN negotiated with per-segment feedback (no RFC 3168 halving), so the ECE ACK below
    // reaches the CC; without negotiation it must not (scalable::ece_without_negotiated_ecn_is_ignored).
    let mut c = cfg("reno");
    c.ecn = true;
    c.ecn_per_segment = true;
    let e = Endpoint::with_parts(c, C_ISS, Box::new(rec), tcplab_tcp::recovery::build(tcplab_tcp::config::RecoveryKind::Reno));
    let mut e = open_with(e, Segment { flags: SYNACK | Flags::ECE, ..synack() });
    assert!(e.ecn_ok());
    e.app_write(5000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
    e.on_segment(300 * MS, &ack(1000, 65535));
    assert_eq!(data(&drain(&mut e, 300 * MS)), vec![(1000, 1000), (2000, 1000)]);
    e.on_slow_tick(500 * MS);
    e.on_segment(450 * MS, &Segment { flags: Flags::ACK | Flags::ECE, ..ack(2000, 65535) });
    let v = samples.lock().unwrap().clone();
    assert_eq!(v.len(), 2);
    let a = v[0];
    assert_eq!((a.now, a.bytes_acked, a.rtt, a.fine_rtt), (300 * MS, 1000, Some(0), Some(200 * MS)));
    assert_eq!((a.in_slow_start, a.snd_una, a.snd_nxt, a.flight, a.ece), (true, 1000, 1000, 0, false));
    let b = v[1];
    // One slow tick while segment 1 was timed: one tick (origin 0) = 500 ms.
    assert_eq!((b.now, b.bytes_acked, b.rtt, b.fine_rtt), (450 * MS, 1000, Some(SLOW_TICK), Some(150 * MS)));
    assert_eq!((b.snd_una, b.snd_nxt, b.flight, b.ece), (2000, 3000, 1000, true), "the ACK's ECE bit, as received (ECN negotiated)");
    assert_eq!(e.cwnd(), 3000);
}

use tcplab_tcp::rto::SLOW_TICK;

#[test]
fn timestamp_rtt_samples_in_both_timer_models() {
    for (variant, ticks, expect) in [("reno", 2u32, 2 * SLOW_TICK), ("newreno", 0, 250 * MS)] {
        let rec = Recorder::default();
        let samples = rec.samples.clone();
        let mut c = cfg(variant);
        c.timestamps = true;
        let kind = c.variant.recovery;
        let e = Endpoint::with_parts(c, C_ISS, Box::new(rec), tcplab_tcp::recovery::build(kind));
        let mut e = open_with(e, Segment { ts: Some((77, 0)), ..synack() });
        e.app_write(1000);
        let out = drain(&mut e, 100 * MS);
        assert_eq!(out.len(), 1);
        let (tsval, tsecr) = out[0].ts.expect("timestamps negotiated");
        assert_eq!(tsecr, 77);
        for k in 0..ticks {
            e.on_slow_tick((200 + k as u64) * MS);
        }
        // Timestamps take 12 option bytes: 988-byte segments.
        assert_eq!(out[0].len, 988);
        e.on_segment(350 * MS, &Segment { ts: Some((78, tsval)), ..ack(988, 65535) });
        let v = samples.lock().unwrap().clone();
        assert_eq!(v.len(), 1, "{variant}");
        assert_eq!(v[0].rtt, Some(expect), "{variant}: rtt from the echoed timestamp");
        assert_eq!(v[0].fine_rtt, Some(250 * MS), "{variant}");
    }
}

/// A recovery that asks only for the timer to restart (no retransmission) on every ACK.
#[derive(Debug)]
struct RestartOnly;

impl LossRecovery for RestartOnly {
    fn name(&self) -> &'static str {
        "restart-only"
    }
    fn on_dupack(&mut self, _ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        RecoveryOutcome { restart_timer: true, ..Default::default() }
    }
    fn on_ack(&mut self, _ctx: &mut RecoveryCtx<'_>, _ack: u64) -> RecoveryOutcome {
        RecoveryOutcome { restart_timer: true, allow_growth: true, ..Default::default() }
    }
    fn on_timeout(&mut self, _ctx: &mut RecoveryCtx<'_>) {}
    fn in_recovery(&self) -> bool {
        false
    }
}

#[test]
fn a_timer_restart_without_retransmission_rearms_only_with_data_outstanding() {
    let c = cfg("newreno"); // fine timer: the deadline is visible
    let cc = tcplab_tcp::cc::build(c.variant.cc, 0);
    let e = Endpoint::with_parts(c, C_ISS, cc, Box::new(RestartOnly));
    let mut e = open_with(e, synack());
    e.app_write(2000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
    assert_eq!(e.next_timer(), Some(1100 * MS));
    // Partly acknowledged: restarted from now.
    e.on_segment(200 * MS, &ack(1000, 65535));
    assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(1000, 1000)]);
    assert_eq!(e.next_timer(), Some(200 * MS + e.rto_timer().rto_ns()));
    // Everything acknowledged: the restart request leaves the timer off.
    e.on_segment(300 * MS, &ack(2000, 65535));
    assert!(drain(&mut e, 300 * MS).is_empty());
    assert_eq!(e.next_timer(), None);
}

fn sack_synack() -> Segment {
    Segment { sack_ok: true, ..synack() }
}

#[test]
fn dsack_detection_reads_only_this_acks_blocks() {
    let mut e = open_with(Endpoint::new(cfg("sack"), C_ISS), sack_synack());
    assert!(e.sack_ok());
    e.app_write(10_000);
    drain(&mut e, 100 * MS);
    for (i, k) in [1000u32, 2000, 3000].iter().enumerate() {
        e.on_segment((200 + i as u64) * MS, &ack(*k, 65535));
        drain(&mut e, (200 + i as u64) * MS);
    }
    let w = |k: u32| C_ISS + 1 + k;
    let mut two = SackBlocks::default();
    two.push(w(5000), w(6000));
    two.push(w(4000), w(6000));
    // First block inside the second: a D-SACK (RFC 2883 §4).
    e.on_segment(300 * MS, &Segment { sack: two, ..ack(3000, 65535) });
    assert_eq!((e.stats().sack_acks_received, e.stats().dsacks_received), (1, 1));
    // One block only, inside the previous ACK's second block: not a D-SACK.
    let mut one = SackBlocks::default();
    one.push(w(4000), w(5000));
    e.on_segment(301 * MS, &Segment { sack: one, ..ack(3000, 65535) });
    assert_eq!((e.stats().sack_acks_received, e.stats().dsacks_received), (2, 1));
    // One block below the cumulative ACK: a D-SACK.
    let mut below = SackBlocks::default();
    below.push(w(1000), w(2000));
    e.on_segment(302 * MS, &Segment { sack: below, ..ack(3000, 65535) });
    assert_eq!((e.stats().sack_acks_received, e.stats().dsacks_received), (3, 2));
    // Blocks beyond snd_max are not taken.
    let mut beyond = SackBlocks::default();
    beyond.push(w(9000), w(90_000));
    e.on_segment(303 * MS, &Segment { sack: beyond, ..ack(3000, 65535) });
    assert_eq!(e.stats().dsacks_received, 2);
}

#[test]
fn window_updates_follow_rfc793_wl1_wl2() {
    let mut e = open_sender(cfg("reno"), 50_000);
    e.app_write(5000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
    e.on_segment(200 * MS, &ack(1000, 40_000));
    assert_eq!(e.snd_wnd(), 40_000, "a new ACK updates the window, smaller or not");
    assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(1000, 1000), (2000, 1000)]);
    // Same seq, same ack, smaller window: not an update (wl2 == ack needs a larger window).
    e.on_segment(210 * MS, &ack(1000, 30_000));
    assert_eq!(e.snd_wnd(), 40_000);
    e.on_segment(220 * MS, &ack(1000, 45_000));
    assert_eq!(e.snd_wnd(), 45_000);
    // The peer sends 500 bytes, then a pure ACK after them: wl1 moves to that seq.
    e.on_segment(230 * MS, &Segment { len: 500, ..ack(1000, 45_000) });
    e.on_segment(235 * MS, &Segment { seq: S_ISS + 501, ..ack(1000, 44_000) });
    assert_eq!(e.snd_wnd(), 44_000, "a later seq updates the window");
    // An older segment (seq below wl1) never updates it, even with a newer ACK.
    e.on_segment(240 * MS, &ack(2000, 20_000));
    assert_eq!(e.snd_una(), 2000);
    assert_eq!(e.snd_wnd(), 44_000);
}

#[test]
fn a_receiver_that_sent_nothing_has_no_completion_time() {
    let mut c = Endpoint::new(cfg("reno"), C_ISS);
    let mut s = Endpoint::new(cfg("reno"), S_ISS);
    s.listen();
    c.connect(0);
    c.app_write(1500);
    c.app_close();
    let mut t = 0;
    for _ in 0..20 {
        for seg in drain(&mut c, t) {
            s.on_segment(t + 10 * MS, &seg);
        }
        for seg in drain(&mut s, t + 10 * MS) {
            c.on_segment(t + 20 * MS, &seg);
        }
        t += 20 * MS;
    }
    assert!(s.is_closed() && c.state() == TcpState::TimeWait);
    assert_eq!(s.stats().completion_time.get(), None);
    assert!(c.stats().completion_time.get().is_some());
}

// -------------------------------------------------------------- receiving

/// Server established at 100 ms with a `buf`-byte receive buffer; its application reads one
/// byte per second (so nothing is read during a test).
fn open_slow_receiver(buf: u32) -> Endpoint {
    let mut c = cfg("reno");
    c.recv_buffer = buf;
    let mut r = Endpoint::new(c, S_ISS);
    r.set_read_rate(Some(1.0));
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
    assert_eq!(drain(&mut r, 0).len(), 1);
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    assert_eq!(r.state(), TcpState::Established);
    r
}

fn dseg(k: u32, len: u32) -> Segment {
    Segment { seq: C_ISS + 1 + k, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, len, ..Default::default() }
}

/// (relative ACK, window) of the one ACK the receiver sends for `seg` at `t`.
fn ack_for(r: &mut Endpoint, t: Nanos, seg: &Segment) -> (u32, u32) {
    r.on_segment(t, seg);
    let out = drain(r, t);
    assert_eq!(out.len(), 1, "one ACK");
    (out[0].ack.wrapping_sub(C_ISS + 1), out[0].wnd)
}

#[test]
fn receiver_trims_overlap_and_the_window_edge_and_drops_beyond() {
    let mut r = open_slow_receiver(3000);
    assert_eq!(ack_for(&mut r, 200 * MS, &dseg(0, 1000)), (1000, 2000));
    // Starts below rcv_nxt, ends above: the new half is taken.
    assert_eq!(ack_for(&mut r, 210 * MS, &dseg(500, 1000)), (1500, 1500));
    assert_eq!(r.bytes_received(), 1500);
    // Runs past the right edge (3000): trimmed to it.
    assert_eq!(ack_for(&mut r, 220 * MS, &dseg(1500, 2000)), (3000, 0));
    assert_eq!(r.bytes_received(), 3000);
    // A zero-window probe at the edge and a segment far beyond: dropped, ACKed with window 0.
    assert_eq!(ack_for(&mut r, 230 * MS, &dseg(3000, 1000)), (3000, 0));
    assert_eq!(ack_for(&mut r, 240 * MS, &dseg(6000, 1000)), (3000, 0));
    assert_eq!(r.bytes_received(), 3000);
    // An old duplicate is ACKed at once too.
    assert_eq!(ack_for(&mut r, 250 * MS, &dseg(0, 1000)), (3000, 0));
    assert_eq!(r.stats().out_of_order_segments, 0);
}

#[test]
fn receiver_window_updates_after_reads_and_silly_window_avoidance() {
    let mut c = cfg("reno");
    c.recv_buffer = 3000;
    let mut r = Endpoint::new(c, S_ISS);
    r.set_read_rate(Some(10_000.0)); // 10 bytes per ms
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
    drain(&mut r, 0);
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    let t = 200 * MS;
    assert_eq!(ack_for(&mut r, t, &dseg(0, 1000)), (1000, 2000));
    assert_eq!(ack_for(&mut r, t, &dseg(1000, 1000)), (2000, 1000));
    assert_eq!(ack_for(&mut r, t, &dseg(2000, 1000)), (3000, 0));
    // 50 ms later the application has read 500 bytes: a window of 500 is silly (below one
    // MSS and below a quarter of the buffer, 750), so no update is sent and it stays closed.
    r.on_timer(250 * MS);
    assert!(drain(&mut r, 250 * MS).is_empty());
    assert_eq!(ack_for(&mut r, 251 * MS, &dseg(0, 1000)), (3000, 0), "SWS avoidance advertises 0");
    // 1000 bytes read (at 300 ms): 1000 < 2 MSS and 2000 < the 3000-byte buffer: no update.
    r.on_timer(300 * MS);
    assert!(drain(&mut r, 300 * MS).is_empty());
    // 1500 read (at 350 ms): half the buffer opened: a window update at once.
    r.on_timer(350 * MS);
    let out = drain(&mut r, 350 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].ack.wrapping_sub(C_ISS + 1), out[0].wnd, out[0].len), (3000, 1500, 0));
}

#[test]
fn synack_carries_window_scale_only_when_the_syn_did() {
    for (offer, expect) in [(None, None), (Some(3u8), Some(1u8))] {
        let mut c = cfg("reno");
        c.window_scaling = true;
        c.recv_buffer = 100_000; // scale 1
        let mut r = Endpoint::new(c, S_ISS);
        r.listen();
        r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), wscale: offer, ..Default::default() });
        let out = drain(&mut r, 0);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].wscale, expect, "peer offered {offer:?}");
    }
    // Our own SYN always offers it.
    let mut c = cfg("reno");
    c.window_scaling = true;
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    assert_eq!(drain(&mut e, 0)[0].wscale, Some(0));
}

/// Retransmits at snd_una on the first duplicate ACK and at snd_una + 2000 on the second,
/// without touching the timer (so only Karn's rule in `emit` decides about RTT timing).
#[derive(Debug)]
struct RetransmitOnDup;

impl LossRecovery for RetransmitOnDup {
    fn name(&self) -> &'static str {
        "retransmit-on-dup"
    }
    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        let at = if ctx.dupacks == 1 { ctx.snd_una } else { ctx.snd_una + 2000 };
        RecoveryOutcome { retransmit: Some(at), ..Default::default() }
    }
    fn on_ack(&mut self, _ctx: &mut RecoveryCtx<'_>, _ack: u64) -> RecoveryOutcome {
        RecoveryOutcome { allow_growth: true, ..Default::default() }
    }
    fn on_timeout(&mut self, _ctx: &mut RecoveryCtx<'_>) {}
    fn in_recovery(&self) -> bool {
        false
    }
}

#[test]
fn karn_cancels_timing_only_for_a_retransmission_of_the_timed_segment() {
    // The BSD tick counter (`reno`) and the fine deadline timer (`newreno`).
    for variant in ["reno", "newreno"] {
        karn_case(variant);
    }
}

fn karn_case(variant: &str) {
    let mut c = cfg(variant);
    c.initial_window_segments = 3;
    let cc = tcplab_tcp::cc::build(c.variant.cc, 0);
    let mut e = open_with(Endpoint::with_parts(c, C_ISS, cc, Box::new(RetransmitOnDup)), synack());
    e.app_write(20_000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000), (1000, 1000), (2000, 1000)]);
    e.on_segment(200 * MS, &ack(1000, 65535));
    // Segments 1 and 2 still out; 3 and 4 leave now and segment 3 is timed.
    assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(3000, 1000), (4000, 1000)]);
    assert!(e.rto_timer().timing());
    let sent = e.stats().segments_sent;
    e.on_segment(210 * MS, &ack(1000, 65535));
    assert_eq!(data(&drain(&mut e, 210 * MS)), vec![(1000, 1000)]);
    assert!(e.rto_timer().timing(), "{variant}: segment 1 is not the timed one");
    e.on_segment(220 * MS, &ack(1000, 65535));
    assert_eq!(data(&drain(&mut e, 220 * MS)), vec![(3000, 1000)]);
    assert!(!e.rto_timer().timing(), "{variant}: segment 3 is: its sample is void");
    let st = e.stats();
    assert_eq!((st.segments_sent, st.retransmitted_segments, st.retransmitted_bytes), (sent + 2, 2, 2000));
    // Handshake SYN + ACK, then 5 new and 2 retransmitted data segments.
    assert_eq!((st.segments_sent, st.data_segments_sent, st.bytes_sent), (2 + 5 + 2, 7, 5000));
}

#[test]
fn newreno_timeout_halves_the_flight() {
    let mut e = open_sender(cfg("newreno"), 65535);
    e.app_write(20_000);
    drain(&mut e, 100 * MS);
    for k in 1..=4u32 {
        e.on_segment((100 + 100 * k as u64) * MS, &ack(1000 * k, 65535));
        drain(&mut e, (100 + 100 * k as u64) * MS);
    }
    // snd_una 4000, cwnd 5000: five segments (4000..9000) out.
    assert_eq!((e.snd_una(), e.snd_nxt()), (4000, 9000));
    let d = e.next_timer().unwrap();
    e.on_timer(d);
    assert_eq!(e.stats().coarse_timeouts, 1);
    assert_eq!((e.ssthresh(), e.cwnd()), (2500, 1000), "max(FlightSize/2, 2 MSS)");
    assert_eq!(data(&drain(&mut e, d)), vec![(4000, 1000)]);
    assert_eq!(e.stats().timeout_times, vec![d], "the expiry's time is recorded");
}

#[test]
fn window_limit_time_is_charged_to_the_limit_that_bound() {
    let mut c = cfg("reno");
    c.send_buffer = 3000;
    let mut e = open_sender(c, 65535);
    e.app_write(100_000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
    for k in 1..=4u32 {
        let t = (100 + 100 * k as u64) * MS;
        e.on_segment(t, &ack(1000 * k, 65535));
        drain(&mut e, t);
    }
    // 200–400 ms: cwnd (1000, 2000) below the 3000-byte buffer; 400–500 ms: cwnd 3000 =
    // the buffer, which binds.
    assert_eq!(e.stats().limited_ns, [100 * MS, 0, 200 * MS]);
    // The peer's window binds when it is below both.
    let mut c = cfg("reno");
    c.send_buffer = 10_000;
    let mut e = open_sender(c, 1500);
    e.app_write(100_000);
    drain(&mut e, 100 * MS);
    for k in 1..=3u32 {
        let t = (100 + 100 * k as u64) * MS;
        e.on_segment(t, &ack(1000 * k, 1500));
        drain(&mut e, t);
    }
    // At 200 ms cwnd 1000 < window 1500 (cwnd binds); from 300 ms cwnd 2000 > 1500.
    assert_eq!(e.stats().limited_ns, [0, 100 * MS, 100 * MS]);
}

#[test]
fn a_small_write_goes_at_once_when_idle_then_nagle_holds_the_next() {
    let mut e = open_sender(cfg("reno"), 65535);
    e.app_write(500);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 500)], "idle: the whole buffer goes");
    e.app_write(300);
    assert!(drain(&mut e, 110 * MS).is_empty(), "Nagle: a small segment waits for the ACK");
    e.on_segment(200 * MS, &ack(500, 65535));
    assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(500, 300)]);
    // Without Nagle the second small write goes at once.
    let mut c = cfg("reno");
    c.nagle = false;
    let mut f = open_sender(c, 65535);
    f.app_write(500);
    drain(&mut f, 100 * MS);
    f.app_write(300);
    assert_eq!(data(&drain(&mut f, 110 * MS)), vec![(500, 300)]);
}

#[test]
fn a_scaled_window_never_shrinks_the_right_edge() {
    let mut c = cfg("reno");
    c.window_scaling = true;
    c.recv_buffer = 100_000; // receive scale 1: windows in units of 2 bytes
    let mut r = Endpoint::new(c, S_ISS);
    r.set_read_rate(Some(1.0));
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), wscale: Some(0), ..Default::default() });
    let synack = drain(&mut r, 0);
    assert_eq!((synack[0].wnd, synack[0].wscale), (65535, Some(1)), "the SYN-ACK's window is never scaled");
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    assert_eq!(ack_for(&mut r, 200 * MS, &dseg(0, 1000)), (1000, 99_000));
    // 999 more bytes: 98 001 free, an odd number; rounding down to the scale would pull the
    // advertised right edge (1000 + 99 000) back by a byte, so it is rounded up instead.
    assert_eq!(ack_for(&mut r, 210 * MS, &dseg(1000, 999)), (1999, 98_002));
}

#[test]
fn a_zero_read_rate_means_an_application_that_reads_at_once() {
    let mut r = open_slow_receiver(3000);
    r.set_read_rate(Some(0.0));
    assert_eq!(ack_for(&mut r, 200 * MS, &dseg(0, 1000)), (1000, 3000));
    assert_eq!(r.stats().bytes_delivered_to_app, 1000);
    assert_eq!(r.next_timer(), None);
}

#[test]
fn only_sack_recoveries_report_a_pipe() {
    let mut e = open_sender(cfg("reno"), 65535);
    e.app_write(10_000);
    drain(&mut e, 100 * MS);
    e.on_segment(200 * MS, &ack(1000, 65535));
    drain(&mut e, 200 * MS);
    for i in 0..3 {
        e.on_segment((210 + i) * MS, &ack(1000, 65535));
    }
    assert!(e.in_recovery());
    assert_eq!(e.pipe_bytes(), None);
}

// -------------------------------------------------------------- survivors of sample B

/// A receiver with a 3000-byte buffer whose application reads 10 bytes per ms, filled at
/// 200 ms (window 0 advertised).
fn full_reader(c: EndpointConfig) -> Endpoint {
    let mut r = Endpoint::new(c, S_ISS);
    r.set_read_rate(Some(10_000.0));
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
    drain(&mut r, 0);
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    for k in 0..3 {
        ack_for(&mut r, 200 * MS, &dseg(1000 * k, 1000));
    }
    r
}

#[test]
fn a_rst_inside_the_window_reads_opened_but_not_yet_advertised_is_accepted() {
    // At 250 ms 500 bytes are read: free space 500, not advertised (silly), so the
    // advertised edge is still 3000; the receive window reaches 3500 (RFC 793: rcv_nxt +
    // RCV.WND), and a RST at its last byte, 3499... 3500 with the RFC 5961-lite `+ 1`, is in.
    for (at, aborts) in [(3500u32, true), (3501, false)] {
        let mut c = cfg("reno");
        c.recv_buffer = 3000;
        let mut r = full_reader(c);
        r.on_timer(250 * MS);
        assert!(drain(&mut r, 250 * MS).is_empty());
        r.on_segment(250 * MS, &Segment { seq: C_ISS + 1 + at, flags: Flags::RST, ..Default::default() });
        assert_eq!(r.is_closed(), aborts, "RST at {at}");
    }
}

#[test]
fn ts_recent_is_taken_only_from_a_segment_that_covers_rcv_nxt() {
    let mut c = cfg("reno");
    c.timestamps = true;
    let mut r = Endpoint::new(c, S_ISS);
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ts: Some((100, 0)), ..Default::default() });
    let sa = drain(&mut r, 0);
    let (our_ts, echo) = sa[0].ts.expect("timestamps negotiated");
    assert_eq!(echo, 100);
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ts: Some((101, our_ts)), ..Default::default() });
    let mut echo_of = |t: Nanos, seg: Segment| {
        r.on_segment(t, &seg);
        let out = drain(&mut r, t);
        assert_eq!(out.len(), 1, "one ACK");
        out[0].ts.expect("timestamps on every segment").1
    };
    // In order (seq = rcv_nxt): its TSval is echoed.
    assert_eq!(echo_of(200 * MS, Segment { ts: Some((200, 0)), ..dseg(0, 988) }), 200);
    // Out of order (988..1976 missing): not taken (RFC 1323 §4.2.1: SEG.SEQ <= Last.ACK.sent).
    assert_eq!(echo_of(210 * MS, Segment { ts: Some((300, 0)), ..dseg(1976, 988) }), 200);
    // An old duplicate wholly below rcv_nxt: not taken either.
    assert_eq!(echo_of(220 * MS, Segment { ts: Some((350, 0)), ..dseg(0, 500) }), 200);
    // The hole filled: taken.
    assert_eq!(echo_of(230 * MS, Segment { ts: Some((400, 0)), ..dseg(988, 988) }), 400);
}

use tcplab_tcp::cc::CcVerdict;

/// A congestion control that asks for snd_una to be retransmitted on the first duplicate
/// ACK (what Vegas does when the oldest segment's fine timer has run out).
#[derive(Debug)]
struct RetransmitOnFirstDup;

impl CongestionControl for RetransmitOnFirstDup {
    fn name(&self) -> &'static str {
        "retransmit-on-first-dup"
    }
    fn on_dupack(&mut self, _w: &mut CcWindow, v: &SenderView<'_>) -> CcVerdict {
        if v.dupacks == 1 {
            CcVerdict::RetransmitOldest
        } else {
            CcVerdict::Continue
        }
    }
}

#[test]
fn a_retransmission_a_cc_asks_for_resends_snd_una_at_once() {
    let mut c = cfg("reno");
    c.initial_window_segments = 3;
    let kind = c.variant.recovery;
    let e = Endpoint::with_parts(c, C_ISS, Box::new(RetransmitOnFirstDup), tcplab_tcp::recovery::build(kind));
    let mut e = open_with(e, synack());
    e.app_write(3000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000), (1000, 1000), (2000, 1000)]);
    e.on_segment(200 * MS, &ack(1000, 65535));
    assert!(data(&drain(&mut e, 200 * MS)).is_empty());
    e.on_segment(210 * MS, &ack(1000, 65535));
    assert_eq!(data(&drain(&mut e, 210 * MS)), vec![(1000, 1000)], "the first duplicate: segment 1 again");
    assert_eq!((e.stats().fast_retransmits, e.stats().retransmitted_segments), (1, 1));
    e.on_segment(220 * MS, &ack(1000, 65535));
    assert!(data(&drain(&mut e, 220 * MS)).is_empty());
    // The receiver had segment 1 after all: the ACK of everything comes, the window grows
    // to 2 segments, and segments 3 and 4 leave.
    e.on_segment(300 * MS, &ack(3000, 65535));
    // RTT samples: segment 0 (sent 100 ms, ACKed 200 ms) and segment 2 (sent 100 ms, ACKed
    // 300 ms); segment 1 was sent twice (Karn).
    let st = e.stats();
    assert_eq!((st.rtt_samples, st.rtt_sum, st.min_rtt.get(), st.max_rtt.get()), (2, 300 * MS as u128, Some(100 * MS), Some(200 * MS)));
}

#[test]
fn a_cc_retransmission_overtaken_by_an_ack_is_dropped() {
    let mut c = cfg("reno");
    c.initial_window_segments = 3;
    let kind = c.variant.recovery;
    let e = Endpoint::with_parts(c, C_ISS, Box::new(RetransmitOnFirstDup), tcplab_tcp::recovery::build(kind));
    let mut e = open_with(e, synack());
    e.app_write(3000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000), (1000, 1000), (2000, 1000)]);
    e.on_segment(200 * MS, &ack(1000, 65535));
    drain(&mut e, 200 * MS);
    // The duplicate asks for segment 1 again; before the host polls, the ACK of segment 1
    // arrives: the request is stale and nothing below snd_una leaves.
    e.on_segment(210 * MS, &ack(1000, 65535));
    e.on_segment(210 * MS, &ack(2000, 65535));
    assert!(data(&drain(&mut e, 210 * MS)).is_empty());
    assert_eq!(e.stats().retransmitted_segments, 0);
}

#[test]
fn close_requested_reports_the_applications_close() {
    let mut e = open_sender(cfg("reno"), 65535);
    e.app_write(500);
    assert!(!e.close_requested());
    e.app_close();
    assert!(e.close_requested());
    let out = drain(&mut e, 100 * MS);
    assert_eq!((out.len(), out[0].len, out[0].flags.fin()), (1, 500, true), "the FIN rides on the data");
}

#[test]
fn a_sack_recovery_reports_its_pipe() {
    let mut e = open_with(Endpoint::new(cfg("sack"), C_ISS), sack_synack());
    e.app_write(20_000);
    drain(&mut e, 100 * MS);
    for (i, k) in [1000u32, 2000, 3000].iter().enumerate() {
        e.on_segment((200 + i as u64) * MS, &ack(*k, 65535));
        drain(&mut e, (200 + i as u64) * MS);
    }
    assert_eq!((e.snd_una(), e.snd_nxt(), e.pipe_bytes()), (3000, 7000, None));
    let w = |k: u32| C_ISS + 1 + k;
    for (i, hi) in [5000u32, 6000, 7000].iter().enumerate() {
        let mut b = SackBlocks::default();
        b.push(w(4000), w(*hi));
        e.on_segment((300 + i as u64) * MS, &Segment { sack: b, ..ack(3000, 65535) });
    }
    assert!(e.in_recovery());
    // Fall & Floyd's pipe on entry: 4 segments out less 3 duplicate ACKs = 1 segment; the
    // fast retransmission adds one.
    assert_eq!(e.pipe_bytes(), Some(1000));
    assert_eq!(data(&drain(&mut e, 302 * MS))[0], (3000, 1000));
    assert_eq!(e.pipe_bytes(), Some(2000));
}

#[test]
fn buffer_limited_time_with_a_queue_built_up_counts_as_path_time() {
    let mut c = cfg("reno");
    c.send_buffer = 3000;
    let mut e = open_sender(c, 65535);
    e.app_write(100_000);
    drain(&mut e, 100 * MS);
    for k in 1..=4u32 {
        let t = (100 + 100 * k as u64) * MS;
        e.on_segment(t, &ack(1000 * k, 65535));
        drain(&mut e, t);
    }
    // As in `window_limit_time_is_charged_to_the_limit_that_bound`: 100 ms cwnd, 200 ms buffer.
    assert_eq!(e.stats().limited_ns, [100 * MS, 0, 200 * MS]);
    // Every RTT so far was 100 ms. The next ACKs come 1 s late: the smoothed RTT rises above
    // 1.5 × 100 ms with the first of them (each ACK charges the interval before it and picks
    // the limit for the next one before its own sample is taken, so 500–1600 ms is still
    // buffer time); from then on the buffer-bound time is charged to the path (index 2).
    e.on_segment(1500 * MS, &ack(5000, 65535));
    drain(&mut e, 1500 * MS);
    e.on_segment(1600 * MS, &ack(6000, 65535));
    drain(&mut e, 1600 * MS);
    assert_eq!(e.stats().limited_ns, [1200 * MS, 0, 200 * MS]);
    e.on_segment(1700 * MS, &ack(7000, 65535));
    assert_eq!(e.stats().limited_ns, [1200 * MS, 0, 300 * MS]);
}

#[test]
fn an_out_of_order_fin_alone_adds_no_sack_block() {
    let mut r = Endpoint::new(cfg("sack"), S_ISS);
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), sack_ok: true, ..Default::default() });
    drain(&mut r, 0);
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    let w = |k: u32| C_ISS + 1 + k;
    // 0..1000 and 2000..3000 lost; 1000..2000 arrives, then the FIN alone at 3000.
    r.on_segment(200 * MS, &dseg(1000, 1000));
    let out = drain(&mut r, 200 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].ack, out[0].sack.as_slice()), (w(0), &[(w(1000), w(2000))][..]));
    r.on_segment(210 * MS, &Segment { flags: Flags::ACK | Flags::FIN, ..dseg(3000, 0) });
    let out = drain(&mut r, 210 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].ack, out[0].sack.as_slice()), (w(0), &[(w(1000), w(2000))][..]), "no block for the FIN");
    assert_eq!(r.stats().out_of_order_segments, 2);
}

#[test]
fn an_aborted_endpoint_sends_nothing_more() {
    let mut e = open_sender(cfg("reno"), 65535);
    e.app_write(5000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
    // An ACK opens the window to two segments, and a RST arrives in the same instant,
    // before the host polls: the data the ACK let go must not leave a closed endpoint.
    e.on_segment(200 * MS, &ack(1000, 65535));
    e.on_segment(200 * MS, &Segment { seq: S_ISS + 1, flags: Flags::RST, ..Default::default() });
    assert!(e.is_closed());
    assert!(drain(&mut e, 200 * MS).is_empty());
    e.on_timer(5 * SEC);
    assert!(drain(&mut e, 5 * SEC).is_empty(), "no retransmission after the abort");
}

#[test]
fn a_fin_alone_after_an_idle_period_goes_at_once_and_keeps_cwnd() {
    let mut e = open_sender(cfg("newreno"), 65535);
    e.app_write(3000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
    e.on_segment(200 * MS, &ack(1000, 65535));
    assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(1000, 1000), (2000, 1000)]);
    e.on_segment(300 * MS, &ack(3000, 65535));
    assert!(drain(&mut e, 300 * MS).is_empty());
    assert_eq!(e.cwnd(), 3000);
    // Ten seconds idle (far beyond the RTO), then the application closes: the FIN alone
    // leaves at once, and the idle restart (which applies to data) leaves cwnd alone.
    e.app_close();
    let out = drain(&mut e, 10 * SEC);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].seq, out[0].len, out[0].flags.fin()), (C_ISS + 1 + 3000, 0, true));
    assert_eq!((e.cwnd(), e.stats().idle_restarts), (3000, 0));
}

#[test]
fn a_delayed_ack_receiver_with_a_buffer_above_64k_unscaled_still_delays() {
    let mut c = cfg("reno");
    c.recv_buffer = 200_000;
    c.window_scaling = false;
    c.ack_policy = tcplab_tcp::config::AckPolicy::BsdDelayed;
    let mut r = Endpoint::new(c, S_ISS);
    r.set_read_rate(Some(1.0)); // one byte per second: no read changes the window here
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
    let sa = drain(&mut r, 0);
    assert_eq!(sa[0].wnd, 65535, "the unscaled window is capped");
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    // 199 000 bytes free but 65 535 advertised: no read happened, so no window update; the
    // first segment's ACK is delayed, the second's goes at once (ACK every other segment).
    r.on_segment(200 * MS, &dseg(0, 1000));
    assert!(drain(&mut r, 200 * MS).is_empty(), "delayed");
    r.on_segment(210 * MS, &dseg(1000, 1000));
    let out = drain(&mut r, 210 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].ack, out[0].wnd), (C_ISS + 1 + 2000, 65535));
    r.on_segment(220 * MS, &dseg(2000, 1000));
    assert!(drain(&mut r, 220 * MS).is_empty(), "delayed again");
}

// -------------------------------------------------------------- survivors of sample D
// (written after sample D's run, from its survivors: they do not move D's score)

#[test]
fn slow_ticks_are_traced_only_once_established_with_data_out() {
    let mut c = cfg("reno");
    c.trace = true;
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    assert_eq!(drain(&mut e, 0).len(), 1);
    // The SYN waits two ticks for its answer: the handshake is not data outstanding.
    e.on_slow_tick(500 * MS);
    e.on_slow_tick(1000 * MS);
    assert_eq!(e.state(), TcpState::SynSent);
    e.on_segment(1100 * MS, &synack());
    drain(&mut e, 1100 * MS);
    e.app_write(1000);
    assert_eq!(data(&drain(&mut e, 1100 * MS)), vec![(0, 1000)]);
    e.on_slow_tick(1500 * MS);
    assert_eq!(e.take_trace().rows_of(tcplab_tcp::TraceKind::SlowTick).count(), 1, "only the tick with segment 0 out");
}

#[test]
fn a_fin_on_an_ack_is_no_pure_ack_for_lites_header_prediction() {
    // Lite's prediction needs cwnd >= snd_wnd: a 1000-byte peer window and cwnd 1000. The
    // fast path skips the window opening of the slow path.
    for (flags, cwnd, state) in [(Flags::ACK, 1000, TcpState::Established), (Flags::ACK | Flags::FIN, 2000, TcpState::CloseWait)] {
        let mut e = open_sender(cfg("lite"), 1000);
        e.app_write(3000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
        e.on_segment(200 * MS, &Segment { flags, ..ack(1000, 1000) });
        assert_eq!((e.snd_una(), e.cwnd(), e.state()), (1000, cwnd, state), "{flags:?}");
    }
}
