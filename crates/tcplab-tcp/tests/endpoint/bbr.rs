//! BBR v1 over a fixed-rate path (`link.rs`: a FIFO with unlimited buffer, fixed delay): the
//! model converges to the analytic bottleneck rate and propagation RTT, the states follow
//! STARTUP → DRAIN → PROBE_BW, the gain cycle advances one phase per min-RTT, PROBE_RTT starts
//! 10 s after the last new minimum and lasts 200 ms at 4 packets. Uses `link.rs` and `script.rs`.

use tcplab_tcp::cc::bbr::{BbrCc, Mode, PACING_GAIN, UNIT};
use tcplab_tcp::*;
use crate::link::*;
use crate::script::*;

const RATE: f64 = 1_250_000.0; // 10 Mbit/s
const DELAY: Nanos = 20 * MS;

fn bbr_of(e: &Endpoint) -> &BbrCc {
    e.congestion_control().as_any().and_then(|a| a.downcast_ref::<BbrCc>()).expect("bbr")
}

/// A BBR sender moving `secs` seconds' worth of bottleneck bandwidth (whole segments) over the
/// 10 Mbit/s, 40 ms path.
fn run(secs: u64) -> Outcome {
    let link = Link { delay: DELAY, rate: RATE, loss_fwd: 0.0, loss_rev: 0.0 };
    let bytes = (payload_rate() as u64 * secs) / 1000 * 1000;
    run_link(cfg("bbr"), cfg("bbr"), bytes, None, link, 7, None)
}

/// The payload rate of the bottleneck: 1000-byte segments with 40 header bytes.
fn payload_rate() -> f64 {
    RATE * 1000.0 / 1040.0
}

/// The smallest possible RTT: propagation both ways, one data segment and one ACK serialised.
fn propagation_rtt() -> Nanos {
    2 * DELAY + (1040.0 / RATE * 1e9) as Nanos + (40.0 / RATE * 1e9) as Nanos
}

#[test]
fn bandwidth_and_min_rtt_converge_to_the_path() {
    let o = run(8);
    let b = bbr_of(&o.a);
    let bw = b.bw() as f64;
    assert!((bw - payload_rate()).abs() / payload_rate() < 0.005, "bw {bw} vs bottleneck {}", payload_rate());
    // Linux `bbr_init`: min_rtt = tcp_min_rtt, the handshake's sample (a 52-byte SYN and
    // SYN-ACK serialised), below any data segment's RTT, so it stays.
    let handshake_rtt = 2 * DELAY + 2 * (52.0 / RATE * 1e9) as Nanos;
    assert_eq!(b.min_rtt.min_rtt, Some(handshake_rtt), "min RTT = the handshake's, not {}", propagation_rtt());
    // A full pipe: from the handshake to the last ACK, within 5 % of the bottleneck (one RTT
    // of the first round and STARTUP's ramp are the loss).
    let st = o.a.stats();
    let secs = (st.completion_time.get().unwrap() - st.established_at.get().unwrap()) as f64 / 1e9;
    let goodput = st.bytes_acked as f64 / secs;
    assert!(goodput > 0.95 * payload_rate() && goodput <= payload_rate(), "goodput {goodput}");
    assert_eq!(o.a.stats().retransmitted_segments, 0, "no loss on this path");
}

#[test]
fn startup_drain_probe_bw_in_order_and_drain_ends_with_a_bdp_in_flight() {
    let o = run(3);
    let b = bbr_of(&o.a);
    let modes: Vec<Mode> = b.transitions.iter().map(|&(_, m)| m).collect();
    assert_eq!(modes, [Mode::Startup, Mode::Drain, Mode::ProbeBw], "a clean path never probes RTT in 3 s");
    let (t_drain, t_probe) = (b.transitions[1].0, b.transitions[2].0);
    // STARTUP doubles per round and stops after 3 rounds without 25 % growth: the bottleneck
    // (BDP 49 packets) fills in ~3 rounds from IW10, then 3 more rounds whose RTT grows with
    // the queue STARTUP builds (up to 2.89 BDP in flight, ~3× the RTT): DRAIN by ~1 s.
    let rtt = propagation_rtt();
    assert!(t_drain > 100 * MS + 5 * rtt && t_drain < SEC, "drain at {t_drain}");
    // DRAIN paces at ln2/2 (the queue shrinks at 0.65 bw) until in-flight ≤ BDP: the ≤ 1.89 BDP
    // of queue takes ≤ 1.89/0.65 ≈ 2.9 propagation RTTs, plus one RTT for the ACKs to show it.
    assert!(t_probe > t_drain && t_probe - t_drain < 4 * rtt, "drain took {} ns", t_probe - t_drain);
    assert!(b.full_bw_reached);
}

#[test]
fn the_gain_cycle_steps_through_eight_phases_one_min_rtt_each() {
    let o = run(4);
    let b = bbr_of(&o.a);
    let min_rtt = b.min_rtt.min_rtt.unwrap();
    assert!(b.phases.len() > 40, "about one phase per RTT over 3 s, got {}", b.phases.len());
    let ack_spacing = (1040.0 / RATE * 1e9) as Nanos;
    for pair in b.phases.windows(2) {
        let ((t0, i0), (t1, i1)) = (pair[0], pair[1]);
        assert_eq!(i1, (i0 + 1) % 8, "phases advance in order");
        let len = t1 - t0;
        match PACING_GAIN[i0] {
            g if g == UNIT => {
                // Wall-clock phases end on the first ACK after one min-RTT.
                assert!(len > min_rtt && len <= min_rtt + 2 * ack_spacing, "phase {i0} lasted {len}");
            }
            g if g > UNIT => assert!(len > min_rtt, "5/4 phase lasted at least min_rtt: {len}"),
            _ => assert!(len <= min_rtt + 2 * ack_spacing, "3/4 phase ends by min_rtt or earlier: {len}"),
        }
    }
    // The pacing rate is the estimate times the phase's gain, less 1 %.
    let expect = (b.bw() as u128 * PACING_GAIN[b.cycle_idx] as u128 * 99 / (UNIT as u128 * 100)) as u64;
    assert_eq!(b.pacing_rate_now(), Some(expect));
}

#[test]
fn probe_rtt_after_ten_seconds_without_a_new_minimum() {
    let o = run(13);
    let b = bbr_of(&o.a);
    let entries: Vec<Nanos> = b.transitions.iter().filter(|(_, m)| *m == Mode::ProbeRtt).map(|&(t, _)| t).collect();
    assert_eq!(entries.len(), 1, "one PROBE_RTT in 13 s: {:?}", b.transitions);
    // The minimum was last matched in STARTUP (paced below the bottleneck rate, nothing queued);
    // the standing queue of PROBE_BW keeps every later sample above it.
    let t_min = b.probe_rtt_min_stamps[0];
    let t_drain = b.transitions[1].0;
    assert!(t_min < t_drain, "min last taken at {t_min}, drain at {t_drain}");
    let t_enter = entries[0];
    let ack_spacing = (1040.0 / RATE * 1e9) as Nanos;
    assert!(t_enter > t_min + 10 * SEC && t_enter <= t_min + 10 * SEC + 2 * ack_spacing, "PROBE_RTT at {t_enter}, min at {t_min}");
    // It lasts at least 200 ms (from the moment 4 packets are in flight), then PROBE_BW again.
    let i = b.transitions.iter().position(|&(t, m)| m == Mode::ProbeRtt && t == t_enter).unwrap();
    let (t_exit, next) = b.transitions[i + 1];
    assert_eq!(next, Mode::ProbeBw);
    assert!(t_exit - t_enter > 200 * MS && t_exit - t_enter < 200 * MS + 3 * propagation_rtt(), "PROBE_RTT lasted {}", t_exit - t_enter);
    // The drained queue gave a fresh sample equal to the propagation RTT.
    assert_eq!(b.min_rtt.min_rtt, Some(propagation_rtt()));
    assert!(b.min_rtt.stamp >= t_exit, "the filter was restarted at PROBE_RTT's end");
}

#[test]
fn bbr_paces_after_the_initial_window() {
    // The first ten segments leave as a burst; the next wait for the pacing clock.
    let mut s = Script::sender(cfg("bbr"), 65535);
    s.write(100_000).expect_send(&(0..10).map(|k| (k * 1000, 1000)).collect::<Vec<_>>());
    // BBR set its rate at establishment (Linux `bbr_init_pacing_rate_from_rtt`): 2.89 · IW /
    // the handshake's 100 ms RTT · 99 %. The tenth segment advanced the clock (Linux counts it
    // in `data_segs_out` before its check); the eleventh would wait.
    let rate0 = bbr_of(&s.e).pacing_rate_now().expect("rate set at establishment");
    assert_eq!(rate0, 10_000 * 10 * 739 * 99 / (256 * 100), "10 000 B / 100 ms × 739/256 × 0.99");
    s.check(|e| assert_eq!(e.pacing_next_release(), Some(100 * MS + 1000 * SEC / rate0)));
    // The ACK of the first segment at 140 ms: cwnd grows by one segment, the two new segments
    // are spaced by the pacing clock.
    s.at(140).ack(1000);
    let rate = bbr_of(&s.e).pacing_rate_now().expect("rate set");
    let out = drain(&mut s.e, 140 * MS);
    assert_eq!(data(&out), [(10_000, 1000)], "one segment now, the next held");
    let gap = 1000 * SEC / rate;
    s.check(|e| assert_eq!(e.pacing_next_release(), Some(140 * MS + gap)));
    s.check(|e| assert_eq!(e.next_timer().filter(|t| *t < SEC), Some(140 * MS + gap)));
}

/// A BBR sender (RACK-TLP) with SACK: ten 1000-byte segments sent at 100 ms, after a 100 ms
/// handshake.
fn bbr_sack_sender() -> Script {
    let mut e = Endpoint::new(cfg("bbr"), C_ISS);
    e.connect(0);
    drain(&mut e, 0);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), sack_ok: true, ..Default::default() });
    assert!(e.sack_ok());
    let mut s = Script { e, now: 100 * MS };
    s.write(1_000_000);
    assert_eq!(data(&drain(&mut s.e, s.now)).len(), 10);
    s
}

fn sack_ack(k: u32, blocks: &[(u32, u32)]) -> Segment {
    let mut a = ack(k, 65535);
    for &(l, r) in blocks {
        a.sack.push(C_ISS + 1 + l, C_ISS + 1 + r);
    }
    a
}

#[test]
fn a_duplicate_ack_that_sacks_new_data_runs_bbr_on_that_ack() {
    // Linux runs `cong_control` on every ACK (`tcp_ack`: `tcp_rate_gen`, `tcp_cong_control`), a
    // duplicate ACK that newly SACKs data included: STARTUP's cwnd grows by what it SACKed on
    // that ACK, with a rate sample from the segment it SACKed. Here segment 2 is missing while
    // 3–4 are SACKed at 152 ms, within RACK's reordering window (min_RTT/4 = 12.5 ms): no
    // recovery, and the hole is filled at 160 ms.
    let mut s = bbr_sack_sender();
    s.at(150).recv(sack_ack(2000, &[]));
    drain(&mut s.e, s.now);
    let (cwnd, delivered) = (s.e.cwnd(), bbr_of(&s.e).rate.delivered);
    s.at(152).recv(sack_ack(2000, &[(3000, 5000)])).expect_recovery(false);
    assert_eq!(s.e.cwnd(), cwnd + 2000, "STARTUP's cwnd grew by the two segments SACKed");
    assert_eq!(bbr_of(&s.e).rate.delivered, delivered + 2000);
    drain(&mut s.e, s.now);
    // The cumulative ACK over the SACKed data grows cwnd by the one segment it newly delivered,
    // not by the three it covers: the SACKed two were counted on their own ACK.
    let cwnd = s.e.cwnd();
    s.at(160).recv(sack_ack(5000, &[])).expect_recovery(false);
    assert_eq!(s.e.cwnd(), cwnd + 1000);
}
