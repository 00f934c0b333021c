//! Whole-simulator Vegas checks (issue 4): steady-state queue of N long-lived Vegas flows against
//! the α..β-packets-per-flow claim (seed 000 §4.3), and a lone Vegas transfer on the Brakmo path
//! (seed 000 Fig 4.3: "Vegas has no losses when there is no other traffic").

use crate::common;

use tcplab::run::run_text;
/// CAM decision "leave slow start" (tcplab_tcp cc::vegas::DEC_SS_EXIT).
const DEC_SS_EXIT: i8 = 3;

fn root(p: &str) -> String {
    format!("{}/../../{p}", env!("CARGO_MANIFEST_DIR"))
}

/// Dumbbell: N senders on one host, 10 Mb/s 20 ms bottleneck with a deep (1000-packet) buffer,
/// flows started 1 ms apart (all within one BaseRTT of ~45 ms).
fn dumbbell(n: usize, secs: u32, params: &str) -> String {
    let mut s = format!(
        r#"
[run]
duration = "{secs}s"
monitor_interval = "100ms"

[[nodes]]
name = "s"
kind = "host"
[[nodes]]
name = "r1"
kind = "router"
[[nodes]]
name = "r2"
kind = "router"
[[nodes]]
name = "d"
kind = "host"

[[links]]
a = "s"
b = "r1"
rate = "1Gbps"
delay = "1ms"
queue = {{ limit = "5000pkts" }}
[[links]]
name = "bottleneck"
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "20ms"
queue = {{ limit = "1000pkts" }}
[[links]]
a = "r2"
b = "d"
rate = "1Gbps"
delay = "1ms"
queue = {{ limit = "5000pkts" }}
"#
    );
    for i in 0..n {
        s += &format!(
            r#"
[[tcp]]
name = "f{i}"
from = "s"
to = "d"
variant = "vegas"
duration = "{secs}s"
start = "{i}ms"
mss = "1000B"
send_buffer = "1MB"
recv_buffer = "64KB"
{params}
"#
        );
    }
    s
}

/// Mean bottleneck queue (packets) over the second half of the run, and total drops.
fn second_half_queue(r: &tcplab::run::RunResult) -> (f64, u64) {
    let link = r.sim.links.iter().find(|l| l.name == "r1->r2").expect("bottleneck link");
    let iv = &link.monitor.intervals;
    assert!(iv.len() > 10, "monitor intervals missing");
    let half = &iv[iv.len() / 2..];
    let q = half.iter().map(|x| x.avg_pkts).sum::<f64>() / half.len() as f64;
    let drops = r.summary.links.iter().map(|l| l.drops).sum();
    (q, drops)
}

/// Each flow's own view of its queue, from its CAM rows (000 Fig 4.4): (Diff, decision) of every
/// congestion-avoidance decision (after the row that left slow start; these runs never re-enter
/// it), and the Diffs of the second half of the run.
struct FlowCam {
    ca: Vec<(f64, i8)>,
    late_diff: Vec<f64>,
}

fn flow_cams(r: tcplab::run::RunResult, from_s: f64) -> Vec<FlowCam> {
    let mut sim = r.sim;
    sim.tcp
        .iter_mut()
        .map(|c| {
            let tr = c.ep[0].take_trace();
            let exit = tr.cam.decision.iter().position(|&d| d == DEC_SS_EXIT).expect("slow start left");
            FlowCam {
                ca: (exit + 1..tr.cam.len()).map(|i| (tr.cam.diff_buffers[i], tr.cam.decision[i])).collect(),
                late_diff: (0..tr.cam.len()).filter(|&i| tr.cam.t[i] as f64 / 1e9 >= from_s).map(|i| tr.cam.diff_buffers[i]).collect(),
            }
        })
        .collect()
}

fn steady(n: usize) {
    let secs = 40;
    let text = dumbbell(n, secs, "").replacen("\n[[nodes]]", "\n[run.trace]\ntcp = true\n\n[[nodes]]", 1);
    let r = common::run(&text, 7);
    let (q, drops) = second_half_queue(&r);
    let (alpha, beta) = (1.0, 3.0);
    let retx: u64 = r.summary.flows.iter().map(|f| f.retransmitted_segments).sum();
    assert_eq!(drops, 0, "N={n}: Vegas lost packets with a deep buffer");
    assert_eq!(retx, 0, "N={n}: retransmissions without loss");
    let cams = flow_cams(r, secs as f64 / 2.0);
    let mut held = Vec::new();
    let mut increases = 0;
    for (i, c) in cams.iter().enumerate() {
        assert!(c.late_diff.len() >= 50, "N={n} flow {i}: {} CAM rows in the second half", c.late_diff.len());
        // The decision rule (000 §4.3, reading 3), checked on every congestion-avoidance row the
        // flow wrote: Diff < α increases, Diff > β decreases, in between holds.
        for &(d, dec) in &c.ca {
            let want = if d < alpha { 1 } else if d > beta { -1 } else { 0 };
            assert_eq!(dec, want, "N={n} flow {i}: Diff {d:.3} with α {alpha}, β {beta} decided {dec}");
            increases += (dec == 1) as u32;
        }
        // Theory: in equilibrium the flow keeps between α and β packets in the queue, so its
        // own Diff sits in [α, β] (its mean over the second half, and every row: all holds).
        let mean = c.late_diff.iter().sum::<f64>() / c.late_diff.len() as f64;
        let inside = c.late_diff.iter().filter(|&&d| d >= alpha && d <= beta).count() as f64 / c.late_diff.len() as f64;
        held.push((mean, inside));
        assert!(mean >= alpha && mean <= beta, "N={n} flow {i}: mean Diff {mean:.3} outside [α, β] = [{alpha}, {beta}]");
        assert!(inside >= 0.95, "N={n} flow {i}: only {inside:.2} of its second-half Diffs in [α, β]");
    }
    // With 16 flows every one leaves slow start with Diff already ≥ α (the others' packets are
    // queued), so only N = 1 and 4 exercise the rule below α.
    if n <= 4 {
        assert!(increases > 0, "N={n}: no flow ever increased in congestion avoidance: the rule below α untested");
    }
    let sum: f64 = held.iter().map(|h| h.0).sum();
    eprintln!(
        "N={n}: mean queue {q:.2} pkts, sum of the flows' mean Diff {sum:.2}; per flow (mean Diff, share in [α, β]) {:?}",
        held.iter().map(|(m, h)| ((m * 100.0).round() / 100.0, (h * 100.0).round() / 100.0)).collect::<Vec<_>>()
    );
    // Diff·MSS = cwnd − Actual·BaseRTT is the flow's backlog at the bottleneck (Little's law
    // with the exact BaseRTT these flows measure), so the bottleneck's queue is the sum of the
    // flows' Diffs. Measured: equal to 0.01 packet for N = 1, 4, 16; held to a quarter packet
    // (the monitor averages over time, the Diffs are one sample per RTT).
    assert!((q - sum).abs() <= 0.25, "N={n}: mean queue {q:.2} vs sum of per-flow Diff {sum:.2}");
    let (lo, hi) = (n as f64 * alpha, n as f64 * beta + 1.0);
    assert!(q >= lo && q <= hi, "N={n}: mean queue {q:.2} outside [{lo}, {hi}]");
}

#[test]
fn steady_state_queue_one_flow() {
    steady(1);
}

#[test]
fn steady_state_queue_four_flows() {
    steady(4);
}

#[test]
fn steady_state_queue_sixteen_flows() {
    steady(16);
}

#[test]
fn vegas_2_4_params_reach_the_endpoint() {
    // Vegas-2,4 (seed 000 §5.1) must hold more packets than Vegas-1,3 with one flow.
    let r13 = common::run(&dumbbell(1, 30, ""), 3);
    let r24 = common::run(&dumbbell(1, 30, "params = { alpha = 2, beta = 4 }"), 3);
    let (q13, _) = second_half_queue(&r13);
    let (q24, _) = second_half_queue(&r24);
    eprintln!("queue vegas-1,3 {q13:.2}, vegas-2,4 {q24:.2}");
    assert!((1.0..=5.0).contains(&q24), "vegas-2,4 queue {q24}");
    assert!(q24 > q13, "vegas-2,4 ({q24}) should queue more than vegas-1,3 ({q13})");
}

#[test]
fn unknown_vegas_param_is_named() {
    let e = run_text(&dumbbell(1, 1, "params = { delta = 2 }"), "x.toml", Some(1), &[]).err().expect("must fail");
    let m = e.to_string();
    assert!(m.contains("tcp[0].params.delta"), "{m}");
    let e = run_text(&dumbbell(1, 1, "params = { alpha = 4, beta = 3 }"), "x.toml", Some(1), &[]).err().expect("must fail");
    assert!(e.to_string().contains("tcp[0].params"), "{e}");
}

#[test]
fn brakmo_path_lone_vegas_retransmits_nothing() {
    let text = std::fs::read_to_string(root("scenarios/brakmo/single-transfer/scenario.toml")).unwrap();
    let r = run_text(&text, "x.toml", Some(1), &["tcp[0].variant=\"vegas\"".to_string()]).unwrap();
    let f = &r.summary.flows[0];
    eprintln!(
        "Brakmo path, Vegas: {:.1} KB/s (paper 169, 166), retransmitted {} B, timeouts {}",
        f.throughput_KBps, f.retransmitted_bytes, f.coarse_timeouts
    );
    assert!(f.completed);
    assert_eq!(f.retransmitted_bytes, 0);
    assert_eq!(f.coarse_timeouts, 0);
    assert_eq!(r.summary.links.iter().map(|l| l.drops).sum::<u64>(), 0);
    // CAM rows were recorded (trace on in this scenario).
    let mut ep = r.sim.tcp.into_iter().next().unwrap().ep;
    let tr = ep[0].take_trace();
    assert!(tr.cam.len() > 10, "CAM rows: {}", tr.cam.len());
    assert!(tr.cam.decision.contains(&3), "slow start was never left");
}

/// Issue 4's second, documented scenario: a Vegas flow that starts while four others hold a
/// standing queue takes that queue into its BaseRTT and gets more than its share (see the header
/// of scenarios/examples/vegas-late-starter.toml for the mechanism).
#[test]
fn late_starter_overestimates_base_rtt_and_takes_more() {
    let text = std::fs::read_to_string(root("scenarios/examples/vegas-late-starter.toml")).unwrap();
    let late_start = 20.0;
    let full = run_text(&text, "vegas-late-starter.toml", Some(1), &[]).unwrap();
    // The same run stopped when the late flow starts (the simulation is deterministic, so the
    // first 20 s are identical): bytes per flow in [20 s, 60 s] are the difference.
    let before = run_text(&text, "vegas-late-starter.toml", Some(1), &["run.duration=\"20s\"".to_string()]).unwrap();
    assert_eq!(full.summary.links.iter().map(|l| l.drops).sum::<u64>(), 0);
    assert_eq!(full.summary.flows.iter().map(|f| f.retransmitted_segments).sum::<u64>(), 0);
    let n_early = 4;
    let acked = |r: &tcplab::run::RunResult, i: usize| r.summary.flows[i].bytes_acked as f64;
    let early_bytes: Vec<f64> = (0..n_early).map(|i| acked(&full, i) - acked(&before, i)).collect();
    let late_bytes = acked(&full, n_early);
    let total = early_bytes.iter().sum::<f64>() + late_bytes;
    let share = late_bytes / total;

    // True RTT of a data segment on an empty path: 2 × (0.5 + 4 + 0.5) ms propagation, a
    // 1040-byte packet at 1 Mb/s (8.32 ms) and a 40-byte ACK at 1 Mb/s (0.32 ms) on the
    // bottleneck, 1 Gb/s serialisation on the access links (~17 us).
    let pkt_s = 1040.0 * 8.0 / 1e6;
    let true_rtt = 0.010 + pkt_s + 40.0 * 8.0 / 1e6;
    let base = |i: usize| full.sim.tcp[i].ep[0].stats().min_rtt.get().expect("RTT sample") as f64 / 1e9;
    let early_base: Vec<f64> = (0..n_early).map(base).collect();
    let late_base = base(n_early);
    // Standing queue when the late flow arrives: the smallest queue the monitor saw in the
    // 5 s before it (packets waiting, the one being sent included as the monitor counts them).
    let link = full.sim.links.iter().find(|l| l.name == "r1->r2").unwrap();
    let standing = link
        .monitor
        .intervals
        .iter()
        .filter(|x| x.t_start_s >= late_start - 5.0 && x.t_start_s < late_start)
        .map(|x| x.min_pkts)
        .min()
        .unwrap();
    eprintln!(
        "late starter: true RTT {:.2} ms; early BaseRTTs {:?} ms; late BaseRTT {:.2} ms; standing queue {} pkts \
         ({:.2} ms); bytes in [20, 60] s: early {:?} KB, late {:.0} KB; late share {:.3} (fair {:.3})",
        true_rtt * 1e3,
        early_base.iter().map(|b| (b * 1e5).round() / 100.0).collect::<Vec<_>>(),
        late_base * 1e3,
        standing,
        standing as f64 * pkt_s * 1e3,
        early_bytes.iter().map(|b| (b / 1024.0).round()).collect::<Vec<_>>(),
        late_bytes / 1024.0,
        share,
        1.0 / (n_early + 1) as f64
    );
    // The early flows measured the (nearly) empty path: the first one exactly, the others'
    // first segments may wait behind the earlier flows' first segments (at most n_early − 1
    // packet times; seen: 18.66, 25.98, 33.28, 33.28 ms).
    assert!((early_base[0] - true_rtt).abs() < 1e-4, "early0 BaseRTT {}", early_base[0]);
    for b in &early_base {
        assert!(*b >= true_rtt - 1e-4 && *b <= true_rtt + (n_early - 1) as f64 * pkt_s + 1e-4, "early BaseRTT {b}");
    }
    assert!(standing >= n_early as u32, "standing queue {standing} pkts: the early flows must hold one or more each");
    // The late flow's BaseRTT includes the standing queue: at least (standing − 1) full packet
    // times (the packet in service may be partly sent when late's segment arrives).
    let excess = late_base - true_rtt;
    assert!(
        excess >= (standing - 1) as f64 * pkt_s,
        "late BaseRTT exceeds the true RTT by {:.2} ms, standing queue {standing} pkts = {:.2} ms",
        excess * 1e3,
        standing as f64 * pkt_s * 1e3
    );
    // ... and it takes more than its fair share, more than any early flow.
    assert!(share > 1.0 / (n_early + 1) as f64, "late share {share:.3}");
    for e in &early_bytes {
        assert!(late_bytes > *e, "late {late_bytes} vs early {e}");
    }
}

/// Seed 000 §4.4 / Fig 4.7 claims for Vegas* against Vegas during the initial slow start: the
/// threshold window set from the ACK-spacing estimate halts exponential growth "at the right
/// time", the sending rate "never exceeds the available bandwidth by much", Vegas* "does not need
/// as many buffers as Vegas", and overall "the new mechanism does not have a measurable impact on
/// throughput, and only marginally improves the loss rate". On the Brakmo path (200 KB/s, 10
/// buffers) plain Vegas already loses nothing, so no loss can be avoided; what is tested is what
/// our Vegas* shows there (see the numbers printed and the assertions' comments).
///
/// Vegas* estimates the bottleneck from the ACKs of the first four segments of a growth epoch
/// (cc/vegas.rs reading 11) and sets the threshold before it leaves slow start, which plain
/// Vegas never does (its threshold stays 65535 until the exit row sets ssthresh = cwnd). This test
/// was `#[ignore]`d while Vegas* watched the ACKs *arriving* in a growth epoch and never estimated.
#[test]
fn brakmo_path_vegas_star_against_vegas() {
    let text = std::fs::read_to_string(root("scenarios/brakmo/single-transfer/scenario.toml")).unwrap();
    struct LtView {
        t: Vec<u64>,
        qlen: Vec<u32>,
    }
    struct Out {
        kbps: f64,
        exit_s: f64,
        q_ss: u32,
        q_max: u32,
        ssthresh: u32,
    }
    let run = |variant: &str| {
        let r = run_text(&text, "x.toml", Some(1), &[format!("tcp[0].variant=\"{variant}\"")]).unwrap();
        let f = r.summary.flows[0].clone();
        assert!(f.completed, "{variant}");
        assert_eq!(f.retransmitted_bytes, 0, "{variant}");
        assert_eq!(r.summary.links.iter().map(|l| l.drops).sum::<u64>(), 0, "{variant}");
        let link = r.sim.links.iter().find(|l| l.name == "Gateway1->Gateway2").unwrap();
        let lt = link.monitor.trace.as_ref().expect("link trace on in this scenario");
        let lt: Vec<(u64, u32)> = lt.t.iter().copied().zip(lt.qlen.iter().copied()).collect();
        let q_max = link.monitor.q_max;
        let mut sim = r.sim;
        let tr = sim.tcp.remove(0).ep[0].take_trace();
        let i = tr.cam.decision.iter().position(|&d| d == DEC_SS_EXIT).expect("slow start left");
        let exit = tr.cam.t[i];
        let lt = (lt.iter().map(|x| x.0).collect::<Vec<_>>(), lt.iter().map(|x| x.1).collect::<Vec<_>>());
        let lt = LtView { t: lt.0, qlen: lt.1 };
        let q_ss = lt.t.iter().zip(&lt.qlen).filter(|(t, _)| **t <= exit).map(|(_, q)| *q).max().unwrap_or(0);
        // The threshold window in force *before* the row that leaves slow start (which sets
        // ssthresh = cwnd for either variant): only Vegas* has one from its estimate by then.
        let ssthresh = tr.t.iter().zip(&tr.ssthresh).filter(|(t, _)| **t < exit).map(|(_, s)| *s).min().unwrap();
        Out { kbps: f.throughput_KBps, exit_s: exit as f64 / 1e9, q_ss, q_max, ssthresh }
    };
    let v = run("vegas");
    let s = run("vegas-star");
    // Plain Vegas has no estimate: its threshold stays at the initial 65535 until it leaves.
    assert_eq!(v.ssthresh, 65535, "plain Vegas set a threshold window before leaving slow start");
    eprintln!(
        "Brakmo path: vegas {:.1} KB/s, slow start left at {:.3} s, peak queue in slow start {} pkts, overall {}; \
         vegas-star {:.1} KB/s, left at {:.3} s with ssthresh {} B, peak queue in slow start {} pkts, overall {}",
        v.kbps, v.exit_s, v.q_ss, v.q_max, s.kbps, s.exit_s, s.ssthresh, s.q_ss, s.q_max
    );
    // Vegas* sets the threshold window from its estimate: the bottleneck's payload rate
    // (200 KB/s × 1434/1474 payload per wire byte) × BaseRTT, in whole segments — the
    // bandwidth-delay product, within one segment.
    let payload_rate = 200.0 * 1024.0 * 1434.0 / 1474.0;
    let base_rtt = 0.1 + 2.0 * 1474.0 * 8.0 / 10e6 + 1474.0 * 8.0 / (200.0 * 1024.0 * 8.0) + 3.0 * 40.0 * 8.0 / 10e6 + 40.0 * 8.0 / (200.0 * 1024.0 * 8.0);
    let bdp_segments = payload_rate * base_rtt / 1434.0;
    let est_segments = s.ssthresh as f64 / 1434.0;
    assert!((est_segments - bdp_segments).abs() <= 1.0, "ssthresh {est_segments} segments vs BDP {bdp_segments:.2}");
    // "The new mechanism does not have a measurable impact on throughput" (000 §4.4).
    assert!((s.kbps - v.kbps).abs() <= 0.02 * v.kbps, "vegas-star {:.1} vs vegas {:.1}", s.kbps, v.kbps);
    // It needs no more buffers than Vegas in slow start. On this path Vegas itself leaves slow
    // start at the same window (Diff > gamma at 16 segments), so the two peaks are equal here;
    // the "fewer buffers" of Fig 4.7 needs a path where Vegas overshoots, which this is not.
    assert!(s.q_ss <= v.q_ss, "Vegas* slow-start queue peak {} vs Vegas {}", s.q_ss, v.q_ss);
    assert!(s.exit_s <= v.exit_s + 0.2);
}

/// Seed 002 Fig 1 V-R: a lone Vegas sender against a BSD delayed-ACK receiver must fill the
/// 800 kbit/s path as well as against an every-packet receiver ("Vegas is more resilient to
/// different receiver acknowledgment strategies", 002 §7). Regression: per-ACK linear steps gave
/// half an MSS per RTT, the next decision cancelled the rest and the fractional segment of cwnd
/// (never in transit) read as a phantom buffer in Diff, holding cwnd at ~12 of ~22 segments.
#[test]
fn ahn_path_vegas_delayed_acks_fill_the_pipe() {
    let text = std::fs::read_to_string(root("scenarios/ahn/figure1/scenario.toml")).unwrap();
    let run = |ack: &str| {
        let set = ["tcp[0].variant=\"vegas\"".to_string(), format!("tcp[0].ack_policy=\"{ack}\"")];
        let r = run_text(&text, "x.toml", Some(1), &set).unwrap();
        let f = r.summary.flows[0].clone();
        assert!(f.completed);
        assert_eq!(f.retransmitted_bytes, 0, "{ack}");
        (f.throughput_KBps, f.max_cwnd_bytes)
    };
    let (every, _) = run("every");
    let (delayed, cwnd) = run("bsd-delayed");
    eprintln!("Ahn path, Vegas: every-packet {every:.1} KB/s, bsd-delayed {delayed:.1} KB/s (max cwnd {cwnd})");
    // BDP ≈ 100 KB/s × 112 ms ≈ 11 KB = 22 segments of 512 B.
    assert!(cwnd >= 20 * 512, "max cwnd {cwnd}");
    assert!(delayed > 0.9 * every, "delayed {delayed:.1} vs every {every:.1}");
}
