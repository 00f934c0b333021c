//! tcplib conversations, Ahn senders and on/off sources through the whole simulator
//! (issue "Realistic load"): reproducible schedules, conversations that complete with every byte,
//! memory that follows the connections alive, and the offered-load calibration.

use crate::common;

use tcplab::apps::tcplib_tables::AppMix;
use tcplab::apps::traffic::{expected_conversation_bytes, plan_for, HEADER_BYTES};
use tcplab::engine::{RngStreams, SimTime};
use tcplab::run::run_text;

/// A dumbbell: src → r1 ══ bottleneck ══ r2 → dst, plus a second host pair for a bulk transfer.
fn dumbbell(rate: &str, queue: &str, traffic: &str, tcp: &str, duration: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
stop_when_done = false

[[nodes]]
name = "a"
kind = "host"
[[nodes]]
name = "c"
kind = "host"
[[nodes]]
name = "r1"
kind = "router"
[[nodes]]
name = "r2"
kind = "router"
[[nodes]]
name = "b"
kind = "host"
[[nodes]]
name = "d"
kind = "host"

[[links]]
a = "a"
b = "r1"
rate = "10Mbps"
delay = "1ms"
queue = {{ limit = "1000pkts" }}
[[links]]
a = "c"
b = "r1"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r1"
b = "r2"
rate = "{rate}"
delay = "50ms"
queue = {queue}
[[links]]
a = "r2"
b = "b"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r2"
b = "d"
rate = "10Mbps"
delay = "1ms"

{traffic}
{tcp}
"#
    )
}

fn tcplib(variant: &str, extra: &str) -> String {
    format!(
        r#"
[[traffic]]
name = "bg"
kind = "tcplib"
from = "a"
to = "b"
variant = "{variant}"
{extra}
"#
    )
}

#[test]
fn conversation_schedule_is_independent_of_variant_queue_and_topology() {
    let mut schedules = Vec::new();
    for (variant, queue, rate) in [
        ("reno", r#"{ limit = "10pkts" }"#, "200KB/s"),
        ("vegas", r#"{ limit = "10pkts" }"#, "200KB/s"),
        ("newreno", r#"{ limit = "40pkts" }"#, "200KB/s"),
        ("tahoe", r#"{ limit = "5pkts" }"#, "1Mbps"),
    ] {
        let text = dumbbell(rate, queue, &tcplib(variant, r#"interarrival = "300ms""#), "", "60s");
        let r = run_text(&text, "t.toml", Some(7), &[]).unwrap();
        let sched = r.sim.traffic[0].schedule.clone();
        assert!(sched.len() > 150, "{} conversations", sched.len());
        schedules.push((variant, sched, r.summary.traffic[0].sent_KB));
    }
    let (_, first, first_kb) = &schedules[0];
    for (v, s, kb) in &schedules[1..] {
        assert_eq!(s, first, "{v}: conversation schedule differs from reno's");
        // ... while what the network did with it differs.
        assert_ne!(kb, first_kb, "{v}: the runs themselves should differ");
    }
    // A different seed gives a different schedule.
    let text = dumbbell("200KB/s", r#"{ limit = "10pkts" }"#, &tcplib("reno", r#"interarrival = "300ms""#), "", "60s");
    let other = run_text(&text, "t.toml", Some(8), &[]).unwrap();
    assert_ne!(&other.sim.traffic[0].schedule, first);
    // The schedule is the pure function `plan_for` of (seed, source, conversation number).
    let rngs = RngStreams::new(7);
    let r = run_text(&text, "t.toml", Some(7), &[]).unwrap();
    let src = &r.sim.traffic[0];
    let mix = match &src.kind {
        tcplab::apps::traffic::SourceKind::Tcplib { mix, .. } => *mix,
        _ => unreachable!(),
    };
    for (k, e) in src.schedule.iter().enumerate().take(50) {
        let p = plan_for(&rngs, "traffic:bg", &mix, k as u64, e.start);
        assert_eq!((p.kind, p.originator_bytes(), p.telnet_duration), (e.kind, e.originator_bytes, e.telnet_duration));
    }
}

#[test]
fn traffic_runs_are_deterministic() {
    let traffic = tcplib("reno", r#"offered_load = 0.6
two_way = true"#);
    let tcp = r#"
[[tcp]]
name = "t"
from = "c"
to = "d"
variant = "vegas"
bytes = "500KB"
start = "20s"
"#;
    let text = dumbbell("200KB/s", r#"{ limit = "10pkts" }"#, &traffic, tcp, "120s");
    let a = common::summary_without_wall(&common::run(&text, 9));
    let b = common::summary_without_wall(&common::run(&text, 9));
    assert_eq!(a, b);
    assert!(a.contains("\"conversations_started\""));
}

#[test]
fn every_conversation_completes_with_every_byte() {
    // Conversations stop starting at 300 s; by 900 s every SMTP/FTP/NNTP conversation has closed
    // (both ends CLOSED after TIME_WAIT), over a lossy 10-buffer bottleneck.
    // About 30 % of the bottleneck in each direction (mean conversation ≈ 150 KB).
    let traffic = tcplib("reno", r#"interarrival = "2500ms"
stop = "300s"
mix = { smtp = 0.6, ftp = 0.3, nntp = 0.1 }
two_way = true"#);
    let text = dumbbell("200KB/s", r#"{ limit = "10pkts" }"#, &traffic, "", "900s");
    let r = run_text(&text, "t.toml", Some(3), &[]).unwrap();
    for (i, t) in r.summary.traffic.iter().enumerate() {
        let st = &r.sim.traffic[i].stats;
        assert!(t.conversations_started > 80, "{}: {}", t.name, t.conversations_started);
        assert_eq!(t.conversations_completed, t.conversations_started, "{}: all complete", t.name);
        assert_eq!(t.conversations_aborted, 0);
        assert_eq!(t.connections_alive_at_end, 0);
        // Bytes delivered = bytes written, in each direction, and = the planned bytes.
        assert_eq!(st.bytes_received[1], st.app_bytes[0], "{}: originator → responder", t.name);
        assert_eq!(st.bytes_received[0], st.app_bytes[1], "{}: responder → originator", t.name);
        let planned: u64 = r.sim.traffic[i].schedule.iter().map(|e| e.originator_bytes).sum();
        assert_eq!(st.app_bytes[0], planned);
        assert!(t.retransmitted_KB > 0.0, "{}: the bottleneck should have dropped something", t.name);
    }
    assert!(r.summary.links.iter().any(|l| l.drops > 0));
    // Slots came back: the table never grew past the peak number alive.
    let slots = r.sim.tcp.len() - r.sim.static_tcp;
    let peak: u64 = r.summary.traffic.iter().map(|t| t.peak_connections_alive).sum();
    assert!(slots as u64 <= peak, "{slots} slots for a peak of {peak}");
    let c = &r.summary.packets;
    assert_eq!(c.created, c.delivered + c.dropped + c.in_flight);
    common::assert_packets_conserved(&r.sim, "tcplib conversations");
}

#[test]
fn telnet_echoes_every_keystroke() {
    let traffic = tcplib("reno", r#"interarrival = "2s"
stop = "60s"
mix = { telnet = 1 }"#);
    let text = dumbbell("200KB/s", r#"{ limit = "20pkts" }"#, &traffic, "", "600s");
    let r = run_text(&text, "t.toml", Some(5), &[]).unwrap();
    let t = &r.summary.traffic[0];
    let st = &r.sim.traffic[0].stats;
    assert!(t.telnet_echoes > 100, "{} echoes", t.telnet_echoes);
    // Responders echo every byte that arrived; originators got back every byte echoed so far.
    assert_eq!(st.app_bytes[1], st.bytes_received[1], "echo = bytes received by the responder");
    let d = t.telnet_echo_delay_mean_s.unwrap();
    // An idle path: an echo takes one RTT (~104 ms) plus transmission.
    assert!((0.104..0.2).contains(&d), "mean echo delay {d}");
    assert!(t.telnet_echo_under_1s.unwrap() > 0.99);
}

/// A run of 10 simulated minutes opens thousands of conversations; the connection table and the
/// live endpoints follow the connections alive, not all that ever lived.
#[test]
fn memory_follows_connections_alive() {
    let traffic = tcplib("reno", r#"interarrival = "150ms""#);
    let text = dumbbell("1Mbps", r#"{ limit = "20pkts" }"#, &traffic, "", "600s");
    let r = run_text(&text, "t.toml", Some(2), &[]).unwrap();
    let t = &r.summary.traffic[0];
    assert!(t.conversations_started > 3000, "{}", t.conversations_started);
    let slots = (r.sim.tcp.len() - r.sim.static_tcp) as u64;
    let alive_slots = r.sim.tcp.iter().filter(|c| c.app.is_some()).count() as u64;
    assert_eq!(alive_slots, t.connections_alive_at_end);
    assert!(slots <= t.peak_connections_alive);
    // Slots are reused: far fewer than the conversations that lived.
    assert!(3 * slots < t.conversations_started, "{slots} slots for {} conversations", t.conversations_started);
}

/// The calibration formula against the conversations the generator really plans: mean wire bytes
/// of 20,000 planned SMTP/FTP/NNTP conversations vs `expected_conversation_bytes`.
#[test]
fn offered_load_formula_matches_planned_conversations() {
    let rngs = RngStreams::new(11);
    let mss = 1434u32;
    for mix in [AppMix::normalised([0.0, 0.0, 0.0, 1.0]), AppMix::normalised([0.3, 0.0, 0.0, 0.7])] {
        let n = 20_000u64;
        let mut total = 0.0;
        for k in 0..n {
            let p = plan_for(&rngs, "traffic:x", &mix, k, SimTime::ZERO);
            for &(req, rep, item) in &p.items {
                for b in [req, rep, item] {
                    if b > 0 {
                        total += b as f64 + HEADER_BYTES * (b as f64 / mss as f64).ceil();
                    }
                }
            }
        }
        let measured = total / n as f64;
        let expected = expected_conversation_bytes(&mix, mss);
        assert!((measured / expected - 1.0).abs() < 0.05, "{mix:?}: planned {measured:.0} B vs formula {expected:.0} B");
    }
}

/// On the otherwise idle bottleneck the offered load lands within 5 % of its target. SMTP-only
/// (light tail, short conversations) so that an hour of simulated time is a precise measurement;
/// the measured load counts data and 40-byte headers, as the calibration does.
#[test]
fn offered_load_lands_on_target_on_idle_bottleneck() {
    let traffic = tcplib("reno", r#"offered_load = 0.3
mix = { smtp = 1 }
tcp = { mss = "1434B" }"#);
    let text = dumbbell("200KB/s", r#"{ limit = "200pkts" }"#, &traffic, "", "3600s");
    let r = run_text(&text, "t.toml", Some(4), &[]).unwrap();
    let st = &r.sim.traffic[0].stats;
    let data = st.bytes_received[1] as f64;
    let segs: f64 = r.sim.traffic[0].schedule.iter().map(|e| (e.originator_bytes as f64 / 1434.0).ceil()).sum();
    let load = (data + HEADER_BYTES * segs) / (200.0 * 1024.0 * 3600.0);
    eprintln!("offered load measured {load:.4} for a target of 0.3");
    assert!((load / 0.3 - 1.0).abs() < 0.05, "offered load {load:.4} vs target 0.3");
}

#[test]
fn ahn_senders_and_on_off_sources() {
    let traffic = r#"
[[traffic]]
name = "ahn"
kind = "ahn"
from = "a"
to = "b"
variant = "vegas"
senders = 4
sleep = "1s"
two_way = true

[[traffic]]
name = "onoff"
kind = "onoff"
from = "c"
to = "d"
variant = "reno"
senders = 2
packet_size = "1KB"
rate = "100kbps"
on = "500ms"
off = "500ms"
shape = 1.5
"#;
    let text = dumbbell("800kbps", r#"{ limit = "16KB" }"#, traffic, "", "120s");
    let r = run_text(&text, "t.toml", Some(1), &[]).unwrap();
    let names: Vec<&str> = r.summary.traffic.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ahn", "ahn/reverse", "onoff"]);
    for t in &r.summary.traffic {
        assert!(t.sent_KB > 50.0, "{}: {} KB", t.name, t.sent_KB);
        assert_eq!(t.connections_alive_at_end, if t.name == "onoff" { 2 } else { 4 });
    }
    // On/off at 100 kbit/s while on, half the time on: about 50 kbit/s per sender on average.
    let onoff = &r.summary.traffic[2];
    let kbps = onoff.app_KB * 1024.0 * 8.0 / 120.0 / 1000.0 / 2.0;
    assert!((20.0..80.0).contains(&kbps), "on/off average {kbps} kbit/s per sender");
}

#[test]
fn bad_traffic_entries_name_the_field() {
    let cases = [
        (tcplib("reno", ""), "traffic[0].interarrival"),
        (tcplib("reno", r#"interarrival = "1s"
offered_load = 0.5"#), "traffic[0].interarrival"),
        (tcplib("reno", r#"offered_load = 0"#), "traffic[0].offered_load"),
        (tcplib("reno", r#"interarrival = "1s"
mix = { gopher = 1 }"#), "traffic[0].mix.gopher"),
        (tcplib("reno", r#"interarrival = "1s"
sleep = "1s""#), "traffic[0].sleep"),
        (tcplib("warp", r#"interarrival = "1s""#), "traffic[0].variant"),
        (tcplib("reno", r#"offered_load = 0.5
bottleneck = "x->y""#), "traffic[0].bottleneck"),
        (tcplib("reno", r#"interarrival = "1s"
tcp = { mss = "0B" }"#), "traffic[0].tcp.mss"),
    ];
    for (traffic, field) in cases {
        let text = dumbbell("200KB/s", r#"{ limit = "10pkts" }"#, &traffic, "", "10s");
        let e = run_text(&text, "t.toml", Some(1), &[]).err().unwrap_or_else(|| panic!("{field}: accepted"));
        assert_eq!(e.field, field, "{e}");
        assert!(e.line.is_some_and(|l| l > 0), "{e}");
    }
}

