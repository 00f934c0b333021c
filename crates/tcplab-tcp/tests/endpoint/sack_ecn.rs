//! Scripted SACK (RFC 2018 / RFC 2883 / Fall & Floyd 1996 / RFC 6675) and ECN (RFC 3168)
//! exchanges. Uses the conventions and helpers of `script.rs` (MSS 1000, client ISS `C_ISS`).

use tcplab_tcp::*;
use crate::script::*;

const ECE_CWR: Flags = Flags(Flags::ECE.0 | Flags::CWR.0);

/// Receiver (server) established with the SACK-permitted option exchanged (and timestamps if
/// `ts`).
fn open_sack_receiver(variant: &str, ts: bool) -> Endpoint {
    let mut c = cfg(variant);
    c.timestamps = ts;
    let mut r = Endpoint::new(c, S_ISS);
    r.listen();
    let syn_ts = if ts { Some((1, 0)) } else { None };
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), sack_ok: true, ts: syn_ts, ..Default::default() });
    let out = drain(&mut r, 0);
    assert_eq!(out.len(), 1);
    assert!(out[0].sack_ok, "the SYN-ACK agrees to SACK");
    assert_eq!(out[0].header_bytes(), 44 + 4 + if ts { 12 } else { 0 });
    let ack_ts = if ts { Some((2, 1)) } else { None };
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ts: ack_ts, ..Default::default() });
    assert!(r.sack_ok());
    r
}

fn blocks_rel(s: &Segment) -> Vec<(u32, u32)> {
    s.sack.as_slice().iter().map(|&(a, b)| (a.wrapping_sub(C_ISS + 1), b.wrapping_sub(C_ISS + 1))).collect()
}

/// Deliver data segment k (1000 bytes at offset k·1000) and return the ACK's (ack, blocks).
fn deliver(r: &mut Endpoint, t: Nanos, k: u32, ts: bool) -> (u32, Vec<(u32, u32)>, u32) {
    let mut d = dseg(k * 1000, 1000);
    if ts {
        d.ts = Some((3 + k, 2));
    }
    r.on_segment(t, &d);
    let out = drain(r, t);
    assert_eq!(out.len(), 1, "one ACK per segment");
    (out[0].ack.wrapping_sub(C_ISS + 1), blocks_rel(&out[0]), out[0].header_bytes())
}

#[test]
fn sack_receiver_blocks_byte_for_byte() {
    let mut r = open_sack_receiver("sack", false);
    let t = 200 * MS;
    assert_eq!(deliver(&mut r, t, 0, false), (1000, vec![], 40));
    assert_eq!(deliver(&mut r, t, 2, false), (1000, vec![(2000, 3000)], 40 + 12));
    assert_eq!(deliver(&mut r, t, 4, false), (1000, vec![(4000, 5000), (2000, 3000)], 40 + 20));
    assert_eq!(deliver(&mut r, t, 6, false).1, vec![(6000, 7000), (4000, 5000), (2000, 3000)]);
    assert_eq!(deliver(&mut r, t, 8, false), (1000, vec![(8000, 9000), (6000, 7000), (4000, 5000), (2000, 3000)], 40 + 36));
    // A fifth block: at most four are sent, the oldest falls off.
    assert_eq!(deliver(&mut r, t, 10, false).1, vec![(10000, 11000), (8000, 9000), (6000, 7000), (4000, 5000)]);
    // Segment 3 joins 2000–3000 and 4000–5000: the merged block goes first, the blocks it
    // absorbed are not repeated.
    assert_eq!(deliver(&mut r, t, 3, false).1, vec![(2000, 5000), (10000, 11000), (8000, 9000), (6000, 7000)]);
    // An in-order segment that does not fill the first hole: the list is unchanged.
    // Segment 1 fills the first hole: cumulative ACK 5000, the rest in most-recent order.
    assert_eq!(deliver(&mut r, t, 1, false), (5000, vec![(10000, 11000), (8000, 9000), (6000, 7000)], 40 + 28));
    assert_eq!(deliver(&mut r, t, 5, false).1, vec![(10000, 11000), (8000, 9000)]);
    assert_eq!(deliver(&mut r, t, 7, false).1, vec![(10000, 11000)]);
    assert_eq!(deliver(&mut r, t, 9, false), (11000, vec![], 40));
    // ns-2's Sack1 receiver sends no D-SACK: a duplicate gets a plain ACK.
    assert_eq!(deliver(&mut r, t, 0, false), (11000, vec![], 40));
}

#[test]
fn sack_receiver_three_blocks_beside_timestamps_and_dsack() {
    let mut r = open_sack_receiver("sack", true);
    let t = 200 * MS;
    for k in [2, 4, 6] {
        deliver(&mut r, t, k, true);
    }
    let (ack, blocks, hdr) = deliver(&mut r, t, 8, true);
    assert_eq!((ack, blocks), (0, vec![(8000, 9000), (6000, 7000), (4000, 5000)]));
    assert_eq!(hdr, 40 + 12 + 4 + 24, "timestamps + 3 blocks = 40 option bytes");
    // RFC 2883: the modern receiver reports a duplicate segment first, once.
    let mut r = open_sack_receiver("sack-rfc6675", false);
    deliver(&mut r, t, 0, false);
    deliver(&mut r, t, 3, false);
    assert_eq!(deliver(&mut r, t, 0, false), (1000, vec![(0, 1000), (3000, 4000)], 40 + 20));
    assert_eq!(deliver(&mut r, t, 3, false).1, vec![(3000, 4000), (3000, 4000)], "D-SACK inside the first SACK block");
    assert_eq!(deliver(&mut r, t, 5, false).1, vec![(5000, 6000), (3000, 4000)]);
}

/// A deterministic two-endpoint network: one-way delay `delay`, the sender's data segments
/// listed in `drop_first` (data offsets) lost on their first transmission. Returns the sender
/// and receiver after `until`, and the (time, offset) of every retransmission, and checks
/// `pipe ≤ cwnd` after every transmission in recovery.
struct Net {
    a: Endpoint,
    b: Endpoint,
    retx: Vec<(Nanos, u32)>,
    max_pipe_over_cwnd: i64,
    first_fast_retx: Option<Nanos>,
}

fn run_scripted(variant: &str, drop_first: &[u32], segments: u64, delay: Nanos, until: Nanos) -> Net {
    let mut ca = cfg(variant);
    ca.initial_window_segments = 20;
    ca.recv_buffer = 64 * 1024;
    ca.send_buffer = 64 * 1024;
    let mut cb = ca.clone();
    cb.close_on_peer_fin = true;
    let mut a = Endpoint::new(ca, C_ISS);
    let mut b = Endpoint::new(cb, S_ISS);
    b.listen();
    a.connect(0);
    a.app_write(segments * 1000);
    a.app_close();
    let mut net = Net { a, b, retx: Vec::new(), max_pipe_over_cwnd: i64::MIN, first_fast_retx: None };
    // (arrival time, insertion order, to_b, segment)
    let mut q: std::collections::BTreeMap<(Nanos, u64), (bool, Segment)> = Default::default();
    let mut order = 0u64;
    let mut dropped: Vec<u32> = Vec::new();
    let mut now = 0;
    loop {
        for side in [true, false] {
            let ep = if side { &mut net.a } else { &mut net.b };
            while let Some(s) = ep.poll_transmit(now) {
                if side && s.len > 0 {
                    let off = s.seq.wrapping_sub(C_ISS + 1);
                    let retx = net.retx.len();
                    if ep.stats().retransmitted_segments as usize > retx {
                        net.retx.push((now, off));
                        if net.first_fast_retx.is_none() && ep.stats().fast_retransmits > 0 {
                            net.first_fast_retx = Some(now);
                        }
                    }
                    // The fast retransmission that opens recovery is forced; every later
                    // transmission in recovery must find room in the pipe.
                    let opening = net.first_fast_retx == Some(now) && net.retx.len() == 1;
                    if let (Some(p), false) = (ep.pipe_bytes(), opening) {
                        net.max_pipe_over_cwnd = net.max_pipe_over_cwnd.max(p - ep.cwnd() as i64);
                    }
                    if drop_first.contains(&off) && !dropped.contains(&off) {
                        dropped.push(off);
                        continue;
                    }
                }
                order += 1;
                q.insert((now + delay, order), (side, s));
            }
        }
        let next_timer = [net.a.next_timer(), net.b.next_timer()].into_iter().flatten().min();
        let next_pkt = q.keys().next().map(|k| k.0);
        // BSD coarse ticks: slow every 500 ms, fast every 200 ms (phase 0).
        let next_tick = ((now / (100 * MS)) + 1) * 100 * MS;
        let t = [next_timer, next_pkt, Some(next_tick)].into_iter().flatten().min().unwrap();
        if net.a.is_closed() && net.b.is_closed() && q.is_empty() {
            break;
        }
        if t > until {
            break;
        }
        now = t;
        if let Some(&key) = q.keys().next() {
            if key.0 == now {
                let (to_b, s) = q.remove(&key).unwrap();
                if to_b {
                    net.b.on_segment(now, &s);
                } else {
                    net.a.on_segment(now, &s);
                }
                continue;
            }
        }
        for ep in [&mut net.a, &mut net.b] {
            if ep.next_timer().is_some_and(|x| x <= now) {
                ep.on_timer(now);
            }
            if now % (500 * MS) == 0 {
                ep.on_slow_tick(now);
            }
            if now % (200 * MS) == 0 {
                ep.on_fast_tick(now);
            }
        }
    }
    net
}

/// Fall & Floyd's test (seed 004 Fig. 1): four packets of one window dropped. SACK repairs
/// exactly the four holes within one RTT of the fast retransmit, without a timeout, and keeps
/// pipe ≤ cwnd throughout.
#[test]
fn sack_repairs_four_losses_in_one_window_within_one_rtt() {
    let drops = [14_000u32, 16_000, 18_000, 20_000];
    let rtt = 100 * MS;
    for variant in ["sack", "sack-rfc6675"] {
        let n = run_scripted(variant, &drops, 60, rtt / 2, 60 * SEC);
        let what = variant;
        assert!(n.a.sack_ok() && n.b.sack_ok(), "{what}: SACK negotiated");
        assert_eq!(n.a.stats().coarse_timeouts, 0, "{what}: no timeout");
        assert_eq!(n.a.stats().fast_retransmits, 1, "{what}: one recovery episode");
        let offs: Vec<u32> = n.retx.iter().map(|r| r.1).collect();
        assert_eq!(offs, drops.to_vec(), "{what}: exactly the four holes, in order");
        let t0 = n.first_fast_retx.unwrap();
        assert!(n.retx.iter().all(|&(t, _)| t < t0 + rtt + MS), "{what}: all within one RTT: {:?}", n.retx);
        assert!(n.max_pipe_over_cwnd <= 0, "{what}: pipe exceeded cwnd by {}", n.max_pipe_over_cwnd);
        assert_eq!(n.b.bytes_received(), 60_000, "{what}: every byte delivered");
        assert!(n.a.stats().sack_acks_received > 0);
    }
    // Reno on the same drops cannot repair four holes with fast retransmits alone.
    let n = run_scripted("reno", &drops, 60, rtt / 2, 60 * SEC);
    assert_eq!(n.b.bytes_received(), 60_000);
    assert!(n.a.stats().coarse_timeouts >= 1, "reno: {:?}", n.a.stats());
}

/// A SACK sender (`variant`, MSS 1000, IW 10) established at 100 ms with SACK-permitted agreed.
fn sack_sender(variant: &str) -> Script {
    let mut c = cfg(variant);
    c.initial_window_segments = 10;
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    assert!(drain(&mut e, 0)[0].sack_ok, "the SYN offers SACK");
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), sack_ok: true, ..Default::default() });
    drain(&mut e, 100 * MS);
    assert!(e.sack_ok());
    Script { e, now: 100 * MS }
}

/// A duplicate ACK for `k` data bytes SACKing `[k + 1000, right)` (relative offsets).
fn sack_dup(k: u32, right: u32) -> Segment {
    let mut sack = SackBlocks::default();
    sack.push(C_ISS + 1 + k + 1000, C_ISS + 1 + right);
    Segment { sack, ..ack(k, 65535) }
}

/// ns-2 `tcp-sack1.cc`, `Sack1TcpAgent::recv`, fast-recovery branch: the ACK that ends recovery
/// ("ACK indicates fast recovery is over") sets `recover_ = 0`, so `dupack_action`'s
/// `highest_ack_ > recover_` lets the next three duplicate ACKs fast-retransmit even when they
/// acknowledge exactly the old `recover_` (issue 31 item 1). Here the first new segment sent in
/// recovery (10000, = recover) is lost as well: once recovery has ended on ACK 10000, its three
/// duplicate ACKs start a second recovery at once instead of waiting for the timer.
#[test]
fn sack1_recover_is_forgotten_after_a_normal_exit() {
    let mut s = sack_sender("sack");
    let ten: Vec<(u32, u32)> = (0..10).map(|k| (k * 1000, 1000)).collect();
    s.write(100_000).expect_send(&ten);
    // Segment 0 lost: three duplicate ACKs, fast retransmit, recover = 10000, pipe = 10 − 3.
    s.at(200).recv(sack_dup(0, 2000)).expect_nothing();
    s.at(201).recv(sack_dup(0, 3000)).expect_nothing();
    s.at(202).recv(sack_dup(0, 4000)).expect_send(&[(0, 1000)]).expect_window(5000, 5000);
    // Segments 4..9 arrive: pipe 7 → 1, new data whenever pipe < cwnd (5 segments).
    s.at(203).recv(sack_dup(0, 5000)).expect_nothing();
    s.at(204).recv(sack_dup(0, 6000)).expect_nothing();
    s.at(205).recv(sack_dup(0, 7000)).expect_send(&[(10_000, 1000)]);
    s.at(206).recv(sack_dup(0, 8000)).expect_send(&[(11_000, 1000)]);
    s.at(207).recv(sack_dup(0, 9000)).expect_send(&[(12_000, 1000)]);
    s.at(208).recv(sack_dup(0, 10_000)).expect_send(&[(13_000, 1000)]);
    // The retransmission arrives: ACK 10000 covers recover and ends recovery (cwnd = ssthresh).
    s.at(300).ack(10_000).expect_recovery(false).expect_window(5000, 5000).expect_send(&[(14_000, 1000)]);
    // 10000 was lost too; 11000..13000 arrive: three duplicate ACKs of exactly the old recover.
    s.at(301).recv(sack_dup(10_000, 12_000)).expect_nothing();
    s.at(302).recv(sack_dup(10_000, 13_000)).expect_nothing();
    s.at(303).recv(sack_dup(10_000, 14_000)).expect_send(&[(10_000, 1000)]).expect_window(2000, 2000);
    assert!(s.e.in_recovery());
    assert_eq!((s.e.stats().fast_retransmits, s.e.stats().coarse_timeouts), (2, 0));
}

// ------------------------------------------------------------------ ECN

/// Sender established with ECN negotiated (SYN with ECE|CWR, SYN-ACK with ECE).
fn open_ecn_sender() -> Endpoint {
    let mut c = cfg("reno");
    c.ecn = true;
    c.initial_window_segments = 10;
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    let out = drain(&mut e, 0);
    assert_eq!(out[0].flags, Flags::SYN | ECE_CWR, "RFC 3168 §6.1.1: ECN-setup SYN");
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK | Flags::ECE, wnd: 65535, mss: Some(1000), ..Default::default() });
    drain(&mut e, 100 * MS);
    assert!(e.ecn_ok());
    e
}

fn ece_ack(k: u32) -> Segment {
    let mut a = ack(k, 65535);
    a.flags |= Flags::ECE;
    a
}

#[test]
fn ecn_sender_halves_once_per_window_and_sets_cwr() {
    let mut e = open_ecn_sender();
    e.app_write(1_000_000);
    let out = drain(&mut e, 100 * MS);
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|s| s.ect && !s.flags.contains(Flags::CWR)), "new data is ECT");
    assert_eq!(e.cwnd(), 10_000);
    // First ECE: halve (ssthresh = cwnd/2 = 5000, cwnd = ssthresh), no growth on this ACK.
    let t = 200 * MS;
    e.on_segment(t, &ece_ack(1000));
    assert_eq!((e.cwnd(), e.ssthresh()), (5000, 5000));
    assert!(drain(&mut e, t).is_empty(), "9000 bytes in flight > cwnd");
    // The receiver keeps echoing ECE until it sees CWR: the rest of this window's ACKs carry
    // ECE and must not reduce again. The first new data segment sent carries CWR.
    let mut sent = Vec::new();
    for k in 2..=10 {
        e.on_segment(t + k as u64 * MS, &ece_ack(k * 1000));
        sent.extend(drain(&mut e, t + k as u64 * MS));
    }
    assert_eq!(e.stats().ecn_reactions, 1, "one reduction per window");
    assert!(sent.len() >= 2);
    assert!(sent[0].flags.contains(Flags::CWR) && sent[0].ect, "CWR on the first new segment");
    assert!(sent[1..].iter().all(|s| !s.flags.contains(Flags::CWR)));
    // 4.4BSD: cwnd = ssthresh still counts as slow start (one MSS), then linear.
    assert!(e.cwnd() > 5000 && e.cwnd() < 8000, "growth resumed: {}", e.cwnd());
    // An ECE acknowledging data sent after the reduction (next RTT): a second halving.
    let before = e.cwnd();
    e.on_segment(t + 100 * MS, &ece_ack(11_000));
    assert_eq!(e.stats().ecn_reactions, 2);
    assert_eq!(e.cwnd(), tcplab_tcp::cc::bsd_halve(before, 1000));
    assert_eq!(e.stats().retransmitted_segments, 0, "no loss, no retransmission");
    assert_eq!(e.stats().coarse_timeouts + e.stats().fast_retransmits, 0);
    assert_eq!(e.take_trace().rows_of(TraceKind::EcnReduce).count(), 2);
}

#[test]
fn ecn_receiver_echoes_ece_until_cwr() {
    let mut c = cfg("reno");
    c.ecn = true;
    let mut r = Endpoint::new(c, S_ISS);
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN | ECE_CWR, wnd: 65535, mss: Some(1000), ..Default::default() });
    let out = drain(&mut r, 0);
    assert_eq!(out[0].flags, SYNACK | Flags::ECE, "ECN-setup SYN-ACK");
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    assert!(r.ecn_ok());
    let t = 200 * MS;
    let send = |r: &mut Endpoint, k: u32, ce: bool, cwr: bool| -> Segment {
        let mut d = dseg(k * 1000, 1000);
        d.ect = true;
        d.ce = ce;
        if cwr {
            d.flags |= Flags::CWR;
        }
        r.on_segment(t, &d);
        let out = drain(r, t);
        assert_eq!(out.len(), 1);
        out[0]
    };
    assert!(!send(&mut r, 0, false, false).flags.contains(Flags::ECE));
    assert!(send(&mut r, 1, true, false).flags.contains(Flags::ECE), "CE → ECE");
    for k in 2..6 {
        assert!(send(&mut r, k, false, false).flags.contains(Flags::ECE), "ECE persists until CWR");
    }
    assert!(!send(&mut r, 6, false, true).flags.contains(Flags::ECE), "CWR clears ECE");
    assert!(!send(&mut r, 7, false, false).flags.contains(Flags::ECE));
    assert!(send(&mut r, 8, true, true).flags.contains(Flags::ECE), "CE after CWR on the same segment sets it again");
    assert_eq!(r.stats().ecn_ce_received, 2);
    // Without ECN negotiated, CE is ignored.
    let mut plain = open_receiver(cfg("reno"));
    let mut d = dseg(0, 1000);
    d.ce = true;
    plain.on_segment(t, &d);
    assert!(!drain(&mut plain, t)[0].flags.contains(Flags::ECE));
}

#[test]
fn ecn_not_negotiated_when_peer_does_not_offer() {
    let mut c = cfg("reno");
    c.ecn = true;
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    drain(&mut e, 0);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), ..Default::default() });
    drain(&mut e, 100 * MS);
    assert!(!e.ecn_ok());
    e.app_write(5000);
    assert!(drain(&mut e, 100 * MS).iter().all(|s| !s.ect));
}
