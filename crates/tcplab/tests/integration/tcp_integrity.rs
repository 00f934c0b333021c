//! Byte-stream integrity through the whole simulator: over random link loss (0–10 %) on a
//! reordering-free path, every variant and receiver policy delivers exactly the bytes sent, in
//! order, and the transfer terminates; conservation holds with TCP traffic.

use crate::common;

use std::collections::BTreeMap;

use tcplab::engine::SimTime;
use tcplab::run::RunResult;
use tcplab::tcp::TraceKind;

/// Runs `text` one event at a time, recording the receiver's in-order offset (the end of the
/// bytes it has handed up, `bytes_received`) after every event that moves it. Then checks the
/// sequence of delivered offsets against the receiver's own trace of the segments it accepted:
/// at every step the delivered offset equals the end of the contiguous prefix of bytes received
/// by then (never a byte it has not received, never a hole skipped, nothing held back), and it
/// never moves backwards. Packets carry headers only, so offsets are what there is to order.
fn run_checking_order(text: &str, seed: u64, tag: &str) -> RunResult {
    let traced = text.replacen("\n[[nodes]]", "\n[run.trace]\ntcp = true\n\n[[nodes]]", 1);
    let (mut sim, text) = tcplab::run::prepare(&traced, "test.toml", Some(seed), &[]).expect("scenario");
    let mut delivered: Vec<(u64, u64)> = Vec::new();
    let mut last = 0;
    loop {
        let ended = sim.run_until_bounded(SimTime::MAX, 1);
        let d = sim.tcp[0].ep[1].bytes_received();
        assert!(d >= last, "{tag}: delivered offset went back from {last} to {d}");
        if d != last {
            delivered.push((sim.now().0, d));
            last = d;
        }
        let app = sim.tcp[0].ep[1].stats().bytes_delivered_to_app;
        assert!(app <= d, "{tag}: the application read {app} bytes, only {d} are in order");
        if ended == Some(true) {
            break;
        }
    }
    let now = sim.now();
    for l in &mut sim.links {
        l.monitor.finish(now);
    }
    let trace = sim.tcp[0].ep[1].take_trace();
    let recv: Vec<usize> = trace.rows_of(TraceKind::Recv).collect();
    assert!(!recv.is_empty() && !delivered.is_empty(), "{tag}: no data received");
    // The contiguous prefix of received bytes, rebuilt from the trace rows (time order).
    let mut prefix = 0u64;
    let mut pending: BTreeMap<u64, u64> = BTreeMap::new();
    let mut rows = recv.iter().peekable();
    for &(t, d) in &delivered {
        while let Some(&&i) = rows.peek() {
            if trace.t[i] > t {
                break;
            }
            rows.next();
            let (a, b) = (trace.seq[i], trace.seq[i] + trace.len[i] as u64);
            let e = pending.entry(a).or_insert(b);
            *e = (*e).max(b);
            while let Some((&a, &b)) = pending.first_key_value() {
                if a > prefix {
                    break;
                }
                prefix = prefix.max(b);
                pending.remove(&a);
            }
        }
        assert_eq!(d, prefix, "{tag}: at {t} ns the receiver delivered up to {d}, the bytes received reach {prefix}");
    }
    let summary = tcplab::summary::Summary::from_sim(&sim, 0.0);
    RunResult { sim, summary, text }
}

/// The shared a–r–b path (tests/fixtures/path.toml: 1 Mb/s, 8 packets) losing `loss` of the
/// bottleneck's packets, and one transfer of `bytes`.
fn scenario(variant: &str, ack: &str, loss: f64, bytes: &str) -> String {
    common::fixture(
        "path.toml",
        &["run.duration=600s".to_string(), format!("links[1].loss={loss}")],
        &format!(
            r#"
[[tcp]]
name = "t"
from = "a"
to = "b"
variant = "{variant}"
ack_policy = "{ack}"
bytes = "{bytes}"
mss = "1000B"
"#
        ),
    )
}

#[test]
fn every_variant_delivers_every_byte_in_order() {
    let mut seed = 100;
    for variant in ["tahoe", "reno", "newreno", "sack", "sack-rfc6675"] {
        for ack in ["every", "bsd-delayed", "tahoe", "lbl"] {
            for loss in [0.0, 0.01, 0.05, 0.1] {
                seed += 1;
                let tag = format!("{variant}/{ack}/loss {loss}");
                let r = run_checking_order(&scenario(variant, ack, loss, "200KB"), seed, &tag);
                let f = &r.summary.flows[0];
                assert!(f.completed, "{tag}: transfer did not complete");
                assert_eq!(f.bytes_acked, 200 * 1024, "{tag}");
                // The receiving application read exactly the bytes sent.
                assert_eq!(f.bytes_delivered, 200 * 1024, "{tag}");
                common::assert_packets_conserved(&r.sim, &tag);
                if loss == 0.0 {
                    assert_eq!(r.summary.links.iter().map(|l| l.drops_by_reason["link_loss"]).sum::<u64>(), 0);
                } else if loss >= 0.05 {
                    assert!(f.retransmitted_segments > 0, "{tag}: losses must cause retransmissions");
                }
            }
        }
    }
}

#[test]
fn timed_transfer_sends_for_its_duration_only() {
    // A 10 s timed transfer starting at 2 s in a 60 s run over a 1 Mb/s bottleneck: it stops
    // writing at 12 s, drains what is in its send buffer, and its throughput is measured over
    // its 10 s (seed 000 §6.2.5).
    let text = scenario("newreno", "every", 0.0, "1KB")
        .replace("bytes = \"1KB\"", "duration = \"10s\"\nstart = \"2s\"\nsend_buffer = \"16KB\"")
        .replace("duration = \"600s\"", "duration = \"60s\"\nstop_when_done = false");
    let r = common::run(&text, 7);
    let f = &r.summary.flows[0];
    let c = &r.sim.tcp[0];
    let at_stop = c.acked_at_stop.get().expect("the stop event ran");
    let capacity_kbps = 1e6 / 8.0 / 1024.0;
    assert!(f.throughput_KBps <= capacity_kbps, "{}", f.throughput_KBps);
    assert!(f.throughput_KBps > 0.8 * capacity_kbps, "{}", f.throughput_KBps);
    assert!((f.throughput_KBps - at_stop as f64 / 1024.0 / 10.0).abs() < 1e-9);
    // After the stop only the send buffer drains: at most 16 KB more are acknowledged.
    assert!(f.bytes_acked >= at_stop && f.bytes_acked <= at_stop + 16 * 1024, "{} vs {}", f.bytes_acked, at_stop);
    assert_eq!(f.bytes_delivered, f.bytes_acked, "the stream ends cleanly with a FIN after the data");
    assert!(c.ep[0].is_closed() && c.ep[1].is_closed(), "both ends closed after the FIN exchange");
}
