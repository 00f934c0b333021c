//! DCTCP's queue oscillation against its analysis (Alizadeh, Greenberg, Maltz, Padhye, Patel,
//! Prabhakar, Sengupta, Sridharan, "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.3; refined in
//! Alizadeh, Javanmard, Prabhakar, SIGMETRICS 2011). N long-lived synchronized flows, capacity C,
//! propagation RTT, step marking at K packets: each window saws between W*(1 − α/2) and W* + 1
//! with W* = (C·RTT + K)/N and α ≈ √(2/W*), so the queue oscillates with
//!
//! * amplitude A = N·D = ½·√(2N(C·RTT + K)) packets (eq. 8, D = (W* + 1)·α/2),
//! * period T_C = D = ½·√(2(C·RTT + K)/N) round trips (eq. 9; the window grows one packet per
//!   RTT, and an RTT is the propagation RTT plus the queue's own delay),
//! * maximum Q_max = K + N packets (eq. 10).
//!
//! The case: the paper's Fig. 12 setting — C = 10 Gbit/s, RTT 100 µs, K = 40, 1500-byte packets
//! (C·RTT = 84.5 packets with the serialisation in the RTT), g = 1/16 — through the simulator's
//! `step` queue with `dctcp` senders (Linux's delayed ACKs). Measured over 0.1–0.3 s: the
//! amplitude is the median over 1 ms windows of the queue's max − min; Q_max the median of the
//! windows' maxima; the period from upward crossings of the mean queue (2-packet hysteresis).
//! N = 2 (the synchronized case the analysis describes; measured A 10 vs 11.2, T_C 4.95 vs 5.58
//! RTTs, Q_max 43 vs 42) is asserted: A within 25 %, T_C within 25 %, Q_max within 3 packets.
//! For N = 10 and 40 eq. 10 holds within 10 % (asserted; 53 vs 50, 85 vs 80) but the queue swings
//! wider than eq. 8 (31 vs 24.9, 69 vs 49.9) and more slowly than eq. 9 (3.85 vs 2.49, 3.32 vs
//! 1.25 RTTs): listed as misses in docs/modern-tcp.md.
//!
//! Synchronisation, measured (the senders' `ecn_reduce` trace rows, cycles between upward
//! crossings of the mean queue): the flows DO reduce together at every N. The share of the N
//! flows that cut their window in a cycle is 0.995 / 1.000 / 0.997 at N = 2 / 10 / 40 (asserted
//! ≥ 0.95), so the misses are not desynchronisation. What does differ from the analysis' one cut
//! of α/2 per flow per cycle with α = √(2/W*): a flow cuts 1.11 / 1.43 / 1.84 times a cycle, each
//! cut 0.063 / 0.143 / 0.178 of its window against α/2 = 0.090 / 0.200 / 0.401, and at N = 40
//! W* = 3.1 packets (the fluid analysis assumes W* ≫ 1; windows of 3–6 packets here). Which of
//! these sets the wider, slower swing is not measured.

use crate::common;
use tcplab_tcp::TraceKind;

const C_RTT_PKTS: f64 = 10e9 * 101.367e-6 / (8.0 * 1500.0);
const K: f64 = 40.0;

fn scenario(n: usize) -> String {
    let mut s = String::from("[run]\nduration = \"0.3s\"\nmonitor_interval = \"2us\"\nmonitor_links = [\"s->r\"]\ntrace = { tcp = true }\n\n[[nodes]]\nname = \"s\"\nkind = \"router\"\n\n[[nodes]]\nname = \"r\"\nkind = \"host\"\n\n");
    s += "[[links]]\na = \"s\"\nb = \"r\"\nrate = \"10Gbps\"\ndelay = \"25us\"\nqueue = { kind = \"step\", k_packets = 40, limit = \"1000pkts\" }\n\n";
    for i in 0..n {
        s += &format!(
            "[[nodes]]\nname = \"h{i}\"\nkind = \"host\"\n\n[[links]]\na = \"h{i}\"\nb = \"s\"\nrate = \"100Gbps\"\ndelay = \"25us\"\n\n[[tcp]]\nname = \"f{i}\"\nfrom = \"h{i}\"\nto = \"r\"\nvariant = \"dctcp\"\nduration = \"0.3s\"\nmss = \"1460B\"\nsend_buffer = \"4MB\"\nrecv_buffer = \"4MB\"\nstart = \"{}us\"\n\n",
            i * 3
        );
    }
    s
}

/// Measured over 0.1–0.3 s.
struct Oscillation {
    amplitude: f64,
    q_max: f64,
    /// Period, in RTTs.
    period: f64,
    mean_queue: f64,
    /// Of the queue's cycles (between upward crossings of the mean): the mean share of the N
    /// flows that cut their window for ECN in a cycle, and the mean cuts per flow per cycle.
    share_cutting: f64,
    cuts_per_flow: f64,
    /// The mean cut, as a share of the window before it.
    mean_cut: f64,
}

fn measure(n: usize, seed: u64) -> Oscillation {
    let mut r = common::run(&scenario(n), seed);
    let link = r.summary.links.iter().find(|l| l.name == "s->r").unwrap();
    assert_eq!(link.drops_by_reason["queue_overflow"], 0, "N {n}: the marks hold the queue");
    for f in &r.summary.flows {
        assert_eq!(f.coarse_timeouts, 0, "N {n}: {} timed out", f.name);
    }
    let iv = &r.sim.links.iter().find(|l| l.monitor.intervals.len() > 1000).unwrap().monitor.intervals;
    let steady: Vec<_> = iv.iter().filter(|x| x.t_start_s >= 0.1).collect();
    let mean = steady.iter().map(|x| x.avg_pkts).sum::<f64>() / steady.len() as f64;
    let (mut amps, mut peaks) = (Vec::new(), Vec::new());
    for w in steady.chunks(500) {
        let hi = w.iter().map(|x| x.max_pkts).max().unwrap() as f64;
        amps.push(hi - w.iter().map(|x| x.min_pkts).min().unwrap() as f64);
        peaks.push(hi);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (mut ups, mut below) = (Vec::new(), false);
    for x in &steady {
        if x.avg_pkts < mean - 2.0 {
            below = true;
        } else if below && x.avg_pkts > mean + 2.0 {
            ups.push(x.t_start_s);
            below = false;
        }
    }
    let span = steady.last().unwrap().t_start_s - steady[0].t_start_s;
    // An RTT of the sawtooth: propagation plus the mean queue's delay (1.2 µs per packet).
    let rtt = 101.367e-6 + mean * 1500.0 * 8.0 / 10e9;
    // Each sender's ECN window cuts, by the cycle they fall in.
    let cycles = ups.len() - 1;
    let (mut cutting, mut cuts, mut cut_sum) = (0usize, 0usize, 0.0);
    for c in r.sim.tcp.iter_mut() {
        let tr = c.ep[0].take_trace();
        let mut in_cycle = vec![0u32; cycles];
        for i in 1..tr.t.len() {
            let t = tr.t[i] as f64 / 1e9;
            if tr.kind[i] != TraceKind::EcnReduce as u8 || t < ups[0] || t >= ups[cycles] {
                continue;
            }
            in_cycle[ups.partition_point(|&u| u <= t) - 1] += 1;
            cut_sum += 1.0 - tr.cwnd[i] as f64 / tr.cwnd[i - 1] as f64;
        }
        cutting += in_cycle.iter().filter(|&&k| k > 0).count();
        cuts += in_cycle.iter().sum::<u32>() as usize;
    }
    let flow_cycles = (n * cycles) as f64;
    Oscillation {
        amplitude: median(&mut amps),
        q_max: median(&mut peaks),
        period: span / ups.len() as f64 / rtt,
        mean_queue: mean,
        share_cutting: cutting as f64 / flow_cycles,
        cuts_per_flow: cuts as f64 / flow_cycles,
        mean_cut: cut_sum / cuts as f64,
    }
}

fn print(n: usize, m: &Oscillation) {
    let (a_pred, qmax_pred, t_pred) = analysis(n);
    let half_alpha = 0.5 * (2.0 * n as f64 / (C_RTT_PKTS + K)).sqrt();
    println!(
        "N {n}: A {} (eq. 8: {a_pred:.1}), Q_max {} (eq. 10: {qmax_pred}), T_C {:.2} RTT (eq. 9: {t_pred:.2}), mean {:.1}; \
         flows cutting per cycle {:.3}, cuts per flow per cycle {:.2}, mean cut {:.3} (alpha/2 {half_alpha:.3})",
        m.amplitude, m.q_max, m.period, m.mean_queue, m.share_cutting, m.cuts_per_flow, m.mean_cut
    );
}

fn analysis(n: usize) -> (f64, f64, f64) {
    let n = n as f64;
    (0.5 * (2.0 * n * (C_RTT_PKTS + K)).sqrt(), K + n, 0.5 * (2.0 * (C_RTT_PKTS + K) / n).sqrt())
}

#[test]
fn queue_oscillation_of_two_flows_matches_section_3_3() {
    let (a_pred, qmax_pred, t_pred) = analysis(2);
    {
        // The run is deterministic (fixed start times); one seed.
        let m = measure(2, 1);
        print(2, &m);
        let (a, qmax, t) = (m.amplitude, m.q_max, m.period);
        assert!(m.share_cutting >= 0.95, "the two flows cut together: {}", m.share_cutting);
        assert!((a - a_pred).abs() <= 0.25 * a_pred, "amplitude {a} vs {a_pred}");
        assert!((t - t_pred).abs() <= 0.25 * t_pred, "period {t} vs {t_pred} RTTs");
        assert!((qmax - qmax_pred).abs() <= 3.0, "Q_max {qmax} vs {qmax_pred}");
    }
}

#[test]
fn queue_oscillation_of_ten_and_forty_flows_is_printed_beside_the_analysis() {
    // Still synchronised (every flow cuts in nearly every cycle: measured 1.000 and 0.997), and
    // eq. 10's peak K + N still holds (within 10 %, measured 53/50 and 85/80); the swing is wider
    // than eq. 8 (measured 31 vs 24.9, 69 vs 49.9) and slower than eq. 9 (3.85 vs 2.49, 3.32 vs
    // 1.25 RTTs), with 1.43 and 1.84 cuts per flow per cycle of 0.143 and 0.178 of the window
    // (eq. 8's one cut of α/2 = 0.200 and 0.401).
    for n in [10usize, 40] {
        let (a_pred, qmax_pred, _) = analysis(n);
        let m = measure(n, 1);
        print(n, &m);
        let (a, qmax) = (m.amplitude, m.q_max);
        assert!(m.share_cutting >= 0.95, "N {n}: the flows cut together: {}", m.share_cutting);
        assert!((qmax - qmax_pred).abs() <= 0.1 * qmax_pred, "N {n}: Q_max {qmax} vs {qmax_pred}");
        assert!(a >= a_pred, "N {n}: desynchronized flows swing at least as wide: {a} vs {a_pred}");
    }
}
