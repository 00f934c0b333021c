//! Scripted exchanges for the 4.4BSD-Lite family (seed 001 §3; `tcplab_tcp::lite`).
//!
//! Six exchanges, one per behaviour a Lite switch changes. Each returns its transcript (the
//! segments the endpoint under test sent, with when); the specific tests assert the seed's claim on
//! Lite.0 and on the fixed version, and `each_fix_alone_changes_only_its_exchange` checks that
//! switching one fix on changes exactly the transcripts of its own exchange.
//!
//! Conventions as in `script.rs`: client ISS `C_ISS`, scripted peer ISS `S_ISS`, MSS 1000 bytes.
//! The scripted peer offers no timestamps except in the ACK-frequency exchange, so the sender
//! exchanges do not depend on the `timestamps` switch.

use tcplab_tcp::config::EndpointConfig;
use tcplab_tcp::lite::LITE_PARAMS;
use tcplab_tcp::rto::RetransmitTimer;
use tcplab_tcp::*;

const C_ISS: u32 = 1000;
const S_ISS: u32 = 5000;
const SYNACK: Flags = Flags(Flags::SYN.0 | Flags::ACK.0);

fn lite(params: &[(&str, f64)]) -> EndpointConfig {
    let mut c = EndpointConfig::for_variant("lite.0").unwrap();
    c.mss = 1000;
    c.trace = true;
    for (k, v) in params {
        c.set_param(k, *v).unwrap();
    }
    c
}

fn drain(e: &mut Endpoint, now: Nanos) -> Vec<Segment> {
    let mut v = Vec::new();
    while let Some(s) = e.poll_transmit(now) {
        v.push(s);
        assert!(v.len() < 10_000, "poll_transmit never returns None");
    }
    v
}

/// (relative seq, len) of data segments.
fn data(v: &[Segment]) -> Vec<(u32, u32)> {
    v.iter().filter(|s| s.len > 0).map(|s| (s.seq.wrapping_sub(C_ISS + 1), s.len)).collect()
}

fn ack(k: u32, wnd: u32) -> Segment {
    Segment { seq: S_ISS + 1, ack: C_ISS + 1 + k, flags: Flags::ACK, wnd, ..Default::default() }
}

/// Client established at 100 ms; the peer offers MSS 1000, window `peer_wnd`, no timestamps.
fn open_sender(c: EndpointConfig, peer_wnd: u32) -> Endpoint {
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    assert_eq!(drain(&mut e, 0).len(), 1);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: peer_wnd, mss: Some(1000), ..Default::default() });
    drain(&mut e, 100 * MS);
    assert_eq!(e.state(), TcpState::Established);
    e
}

/// A transcript line: time in ms and the data segments sent then.
fn line(t: Nanos, segs: &[Segment]) -> String {
    format!("{} ms {:?}", t / MS, data(segs))
}

// ------------------------------------------------------------------ the six exchanges

/// §3.1: ten segments out into a 12 000-byte peer window; the first is lost; seven duplicate
/// ACKs (fast retransmit at the third, cwnd inflated to 12 000 = snd_wnd by the seventh), then the
/// ACK for the first ten segments. Returns (transcript, cwnd and ssthresh after that ACK, the
/// segments it released).
fn exchange_header_prediction(c: EndpointConfig) -> (Vec<String>, (u32, u32), usize) {
    let mut c = c;
    c.initial_window_segments = 10;
    let mut e = open_sender(c, 12_000);
    e.app_write(1_000_000);
    let mut tr = vec![line(100 * MS, &drain(&mut e, 100 * MS))];
    let t = 200 * MS;
    for i in 0..7 {
        e.on_segment(t + i * MS, &ack(0, 12_000));
        tr.push(line(t + i * MS, &drain(&mut e, t + i * MS)));
    }
    assert_eq!(e.cwnd(), 12_000, "inflated to snd_wnd by the seventh dup ACK");
    let t = 300 * MS;
    e.on_segment(t, &ack(10_000, 12_000));
    let burst = drain(&mut e, t);
    tr.push(line(t, &burst));
    (tr, (e.cwnd(), e.ssthresh()), data(&burst).len())
}

/// §3.3: the receiver under test gets six full segments in order, one per ms (the peer offers
/// timestamps). Returns, per segment, the ACK it sent (0 = none) and the payload per segment.
fn exchange_ack_frequency(c: EndpointConfig) -> (Vec<String>, Vec<u32>, u32) {
    let mut r = Endpoint::new(c, S_ISS);
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ts: Some((1, 0)), ..Default::default() });
    let synack = drain(&mut r, 0);
    assert_eq!(synack.len(), 1);
    let ts_ok = synack[0].ts.is_some();
    let echo = |v: u32| if ts_ok { Some((v, 1)) } else { None };
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ts: echo(2), ..Default::default() });
    assert!(drain(&mut r, 100 * MS).is_empty());
    let payload = r.mss();
    let mut tr = Vec::new();
    let mut acks = Vec::new();
    for k in 0..6u32 {
        let t = 200 * MS + k as u64 * MS;
        let seg = Segment { seq: C_ISS + 1 + k * payload, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, len: payload, ts: echo(3 + k), ..Default::default() };
        r.on_segment(t, &seg);
        let out = drain(&mut r, t);
        let a = out.last().map_or(0, |s| s.ack.wrapping_sub(C_ISS + 1));
        acks.push(a);
        tr.push(format!("{} ms acks {:?}", t / MS, out.iter().map(|s| s.ack.wrapping_sub(C_ISS + 1)).collect::<Vec<_>>()));
    }
    (tr, acks, payload)
}

/// §3.3: congestion avoidance from ssthresh 2000, every segment acknowledged one RTT (100 ms)
/// after it left. Returns (transcript, cwnd at the start of each round).
fn exchange_linear_increase(c: EndpointConfig) -> (Vec<String>, Vec<u32>) {
    let mut c = c;
    c.initial_ssthresh = 2000;
    let mut e = open_sender(c, 65535);
    e.app_write(10_000_000);
    let mut t = 100 * MS;
    let first = drain(&mut e, t);
    let mut tr = vec![line(t, &first)];
    let mut outstanding = data(&first);
    let mut starts = Vec::new();
    for _round in 0..10 {
        starts.push(e.cwnd());
        t += 100 * MS;
        let mut next = Vec::new();
        for (seq, len) in outstanding.drain(..) {
            e.on_segment(t, &ack(seq + len, 65535));
            let out = drain(&mut e, t);
            tr.push(line(t, &out));
            next.extend(data(&out));
            t += MS;
        }
        outstanding = next;
    }
    starts.push(e.cwnd());
    (tr, starts)
}

/// §3.5: ten segments out, one ACK for all ten. Returns (transcript, segments released).
fn exchange_big_ack(c: EndpointConfig) -> (Vec<String>, usize, (u32, u32)) {
    let mut c = c;
    c.initial_window_segments = 10;
    let mut e = open_sender(c, 65535);
    e.app_write(1_000_000);
    let mut tr = vec![line(100 * MS, &drain(&mut e, 100 * MS))];
    e.on_segment(200 * MS, &ack(10_000, 65535));
    let out = drain(&mut e, 200 * MS);
    tr.push(line(200 * MS, &out));
    (tr, data(&out).len(), (e.cwnd(), e.ssthresh()))
}

/// §3.6: ten segments out, the first lost, exactly three duplicate ACKs, then two ACKs of two
/// segments each (small ACKs, so the big-ACK fix stays out of it). Returns the transcript and
/// cwnd after the first new ACK.
fn exchange_three_dupacks(c: EndpointConfig) -> (Vec<String>, u32) {
    let mut c = c;
    c.initial_window_segments = 10;
    let mut e = open_sender(c, 65535);
    e.app_write(1_000_000);
    let mut tr = vec![line(100 * MS, &drain(&mut e, 100 * MS))];
    for i in 0..3 {
        e.on_segment(200 * MS + i * MS, &ack(0, 65535));
        tr.push(line(200 * MS + i * MS, &drain(&mut e, 200 * MS + i * MS)));
    }
    e.on_segment(300 * MS, &ack(2000, 65535));
    tr.push(line(300 * MS, &drain(&mut e, 300 * MS)));
    let cwnd = e.cwnd();
    e.on_segment(301 * MS, &ack(4000, 65535));
    tr.push(line(301 * MS, &drain(&mut e, 301 * MS)));
    (tr, cwnd)
}

/// §3.2: the RTT samples of Table 2 (the handshake is row 1; rows 2–11 here, `m` slow ticks
/// between send and ACK), then a segment that is never acknowledged: the slow ticks until it is
/// retransmitted are the RTO of row 11 (original 3, new 2). Ticks every 500 ms from 150 ms.
fn exchange_rto(c: EndpointConfig) -> (Vec<String>, u32) {
    let mut e = open_sender(c, 65535);
    let mut t = 100 * MS;
    let mut tick = 150 * MS;
    let mut tr = Vec::new();
    for m in [0, 0, 0, 1, 0, 0, 0, 0, 0, 0] {
        e.app_write(1000);
        let sent = drain(&mut e, t);
        assert_eq!(data(&sent).len(), 1);
        tr.push(line(t, &sent));
        for _ in 0..m {
            e.on_slow_tick(tick);
            tick += 500 * MS;
        }
        t = tick - 100 * MS;
        let acked = e.snd_nxt() as u32;
        e.on_segment(t, &ack(acked, 65535));
        tick += 500 * MS;
        t = tick - 400 * MS;
    }
    e.app_write(1000);
    let sent = drain(&mut e, t);
    tr.push(line(t, &sent));
    let mut ticks = 0;
    loop {
        e.on_slow_tick(tick);
        ticks += 1;
        let out = drain(&mut e, tick);
        if !out.is_empty() {
            tr.push(format!("retransmitted after {ticks} ticks: {}", line(tick, &out)));
            break;
        }
        assert!(ticks < 20);
        tick += 500 * MS;
    }
    (tr, ticks)
}

// ------------------------------------------------------------------ the seed's claims

#[test]
fn lite0_header_prediction_skips_deflation_and_bursts() {
    let (_, (cwnd, ssthresh), burst) = exchange_header_prediction(lite(&[]));
    assert_eq!(ssthresh, 5000);
    assert_eq!(cwnd, 12_000, "the predicted ACK leaves cwnd inflated");
    assert_eq!(burst, 10, "snd_una moved 10 000 bytes: 10 segments at once");
    // Lite.1: t_dupacks = 7 >= tcprexmtthresh sends the ACK down the slow path: deflate to
    // ssthresh, then open by one MSS (cwnd == ssthresh is slow start); 2000 still in flight.
    let (_, (cwnd, ssthresh), burst) = exchange_header_prediction(lite(&[("fix_header_prediction", 1.0)]));
    assert_eq!((cwnd, ssthresh), (5000 + 1000, 5000));
    assert_eq!(burst, 4);
}

#[test]
fn header_prediction_counted_only_for_lite() {
    let mut e = open_sender(lite(&[]), 2000);
    e.app_write(100_000);
    drain(&mut e, 100 * MS);
    // cwnd 1000 < snd_wnd 2000: slow path.
    e.on_segment(200 * MS, &ack(1000, 2000));
    assert_eq!(e.stats().predicted_acks, 0);
    assert_eq!(e.cwnd(), 2000);
    drain(&mut e, 200 * MS);
    // cwnd 2000 >= snd_wnd 2000: predicted, cwnd not opened.
    e.on_segment(300 * MS, &ack(2000, 2000));
    assert_eq!(e.stats().predicted_acks, 1);
    assert_eq!(e.cwnd(), 2000);
    // A window change is not predicted (tiwin != snd_wnd).
    drain(&mut e, 300 * MS);
    e.on_segment(400 * MS, &ack(3000, 4000));
    assert_eq!(e.stats().predicted_acks, 1);
    assert_eq!(e.cwnd(), 3000);
}

#[test]
fn ack_frequency_with_and_without_timestamps() {
    // Lite.0: 12 option bytes per segment, payload 988; `adv >= 2 * t_maxseg` = 2000 needs a
    // third segment.
    let (_, acks, payload) = exchange_ack_frequency(lite(&[]));
    assert_eq!(payload, 988);
    assert_eq!(acks, vec![0, 0, 3 * 988, 0, 0, 6 * 988]);
    // Lite.3: no timestamps, every second full segment.
    let (_, acks, payload) = exchange_ack_frequency(lite(&[("timestamps", 0.0)]));
    assert_eq!(payload, 1000);
    assert_eq!(acks, vec![0, 2000, 0, 4000, 0, 6000]);
    // Lite.5: every segment.
    let (_, acks, _) = exchange_ack_frequency(lite(&[("ack_every_packet", 1.0)]));
    assert_eq!(acks, (1..=6).map(|k| k * 988).collect::<Vec<_>>());
}

#[test]
fn lite_sender_counts_cwnd_in_t_maxseg_with_timestamps() {
    // 4.4BSD-Lite tcp_output trims each segment to t_maxseg - 12 but cwnd grows by t_maxseg.
    let mut e = Endpoint::new(lite(&[]), C_ISS);
    e.connect(0);
    assert!(drain(&mut e, 0)[0].ts.is_some());
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), ts: Some((7, 1)), ..Default::default() });
    drain(&mut e, 100 * MS);
    e.app_write(100_000);
    assert_eq!(e.mss(), 988);
    assert_eq!(e.cwnd(), 1000);
    assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 988)]);
    e.on_segment(200 * MS, &Segment { ts: Some((8, 1)), ..ack(988, 65535) });
    assert_eq!(e.cwnd(), 2000);
    // 2000 bytes of window: two 988-byte segments; the 24 left wait (sender SWS avoidance).
    assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(988, 988), (1976, 988)]);
}

#[test]
fn linear_increase_per_rtt_with_and_without_the_eighth() {
    let (_, starts) = exchange_linear_increase(lite(&[]));
    let growth: Vec<i64> = starts.windows(2).map(|w| w[1] as i64 - w[0] as i64).collect();
    // Rounds after slow start (cwnd > ssthresh = 2000 from round 2 on).
    let ca = &growth[2..];
    assert!(ca.iter().all(|&g| g > 1000), "Lite.0 grows more than one MSS per RTT: {growth:?}");
    assert!(ca.last() > ca.first(), "and the growth grows with cwnd: {growth:?}");
    let (_, starts) = exchange_linear_increase(lite(&[("fix_extra_increase", 1.0)]));
    let growth: Vec<i64> = starts.windows(2).map(|w| w[1] as i64 - w[0] as i64).collect();
    assert!(growth[2..].iter().all(|&g| g > 0 && g <= 1000), "Lite.4: at most one MSS per RTT: {growth:?}");
}

#[test]
fn big_ack_releases_at_most_three_segments() {
    let (_, n, _) = exchange_big_ack(lite(&[]));
    assert_eq!(n, 11, "Lite.0: 10 000 bytes acked, cwnd 11 000: eleven segments at once");
    let (_, n, (cwnd, ssthresh)) = exchange_big_ack(lite(&[("fix_big_ack", 1.0)]));
    assert_eq!(n, 3);
    assert_eq!(cwnd, 3000);
    assert_eq!(ssthresh, 65535, "ssthresh only raised to cwnd when below it");
}

#[test]
fn three_dupacks_deflate_only_with_ge_fix() {
    // `t_dupacks > tcprexmtthresh`: with exactly 3, cwnd stays ssthresh + 3 MSS = 8000, then the
    // linear step 1000²/8000 + 1000/8 = 250; the next ACK (+246) leaves room for two segments
    // beside the 6000 in flight.
    let (tr, cwnd) = exchange_three_dupacks(lite(&[]));
    assert_eq!(cwnd, 8250);
    assert!(tr.last().unwrap().ends_with("[(10000, 1000), (11000, 1000)]"), "{tr:?}");
    // `>=`: deflated to 5000, then slow start +1000; 6000 in flight after the next ACK: nothing.
    let (tr, cwnd) = exchange_three_dupacks(lite(&[("fix_dupack_ge", 1.0)]));
    assert_eq!(cwnd, 6000);
    assert!(tr.last().unwrap().ends_with("[]"), "{tr:?}");
}

#[test]
fn rto_fix_through_the_endpoint() {
    let (_, ticks) = exchange_rto(lite(&[]));
    assert_eq!(ticks, 3, "Table 2 row 11, original RTO");
    let (_, ticks) = exchange_rto(lite(&[("fix_rto", 1.0)]));
    assert_eq!(ticks, 2, "Table 2 row 11, new RTO");
    let e = open_sender(lite(&[("fix_rto", 1.0)]), 65535);
    assert!(matches!(e.rto_timer(), RetransmitTimer::Bsd { est, .. } if est.rescaled));
}

/// Switching one fix on changes the transcript of its own exchange and of no other.
#[test]
fn each_fix_alone_changes_only_its_exchange() {
    type Exchange = fn(EndpointConfig) -> Vec<String>;
    let exchanges: [(&str, Exchange, &[&str]); 6] = [
        ("header prediction", |c| exchange_header_prediction(c).0, &["fix_header_prediction"]),
        ("ack frequency", |c| exchange_ack_frequency(c).0, &["timestamps", "ack_every_packet"]),
        ("linear increase", |c| exchange_linear_increase(c).0, &["fix_extra_increase"]),
        ("big ack", |c| exchange_big_ack(c).0, &["fix_big_ack"]),
        ("three dupacks", |c| exchange_three_dupacks(c).0, &["fix_dupack_ge"]),
        ("rto", |c| exchange_rto(c).0, &["fix_rto"]),
    ];
    // The value of each switch that differs from Lite.0.
    let fixed = |p: &str| if p == "timestamps" { 0.0 } else { 1.0 };
    for (name, ex, own) in exchanges {
        let base = ex(lite(&[]));
        for p in LITE_PARAMS {
            let other = ex(lite(&[(p, fixed(p))]));
            if own.contains(p) {
                assert_ne!(other, base, "{p} must change the {name} exchange");
            } else {
                assert_eq!(other, base, "{p} must not change the {name} exchange");
            }
        }
    }
}

#[test]
fn lite_params_are_switches() {
    let mut c = EndpointConfig::for_variant("lite.4").unwrap();
    assert!(c.set_param("fix_rto", 0.5).unwrap_err().contains("0 or 1"));
    let e = c.set_param("alpha", 1.0).unwrap_err();
    assert!(e.contains("fix_header_prediction") && e.contains("fix_dupack_ge"), "{e}");
    assert!(EndpointConfig::for_variant("reno").unwrap().set_param("fix_rto", 1.0).is_err());
    // A level then single switches: lite.6 without the big-ACK fix is lite.4.
    c.set_param("fix_big_ack", 0.0).unwrap();
    let mut six = EndpointConfig::for_variant("lite.6").unwrap();
    six.set_param("fix_big_ack", 0.0).unwrap();
    six.variant.name = c.variant.name.clone();
    assert_eq!(six, c);
}
