//! Byte-stream integrity through the whole simulator: over random link loss (0–10 %) on a
//! reordering-free path, every variant and receiver policy delivers exactly the bytes sent and
//! the transfer terminates; conservation holds with TCP traffic.

mod common;

fn scenario(variant: &str, ack: &str, loss: f64, bytes: &str) -> String {
    format!(
        r#"
[run]
duration = "600s"

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "r"
kind = "router"

[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "r"
rate = "10Mbps"
delay = "1ms"

[[links]]
a = "r"
b = "b"
rate = "1Mbps"
delay = "20ms"
loss = {loss}
queue = {{ limit = "8pkts" }}

[[tcp]]
name = "t"
from = "a"
to = "b"
variant = "{variant}"
ack_policy = "{ack}"
bytes = "{bytes}"
mss = "1000B"
"#
    )
}

#[test]
fn every_variant_delivers_every_byte_in_order() {
    let mut seed = 100;
    for variant in ["tahoe", "reno", "newreno", "sack", "sack-rfc6675"] {
        for ack in ["every", "bsd-delayed", "tahoe", "lbl"] {
            for loss in [0.0, 0.01, 0.05, 0.1] {
                seed += 1;
                let r = common::run(&scenario(variant, ack, loss, "200KB"), seed);
                let f = &r.summary.flows[0];
                let tag = format!("{variant}/{ack}/loss {loss}");
                assert!(f.completed, "{tag}: transfer did not complete");
                assert_eq!(f.bytes_acked, 200 * 1024, "{tag}");
                // The receiving application read exactly the bytes sent.
                assert_eq!(f.bytes_delivered, 200 * 1024, "{tag}");
                let c = r.sim.conservation;
                assert_eq!(c.created, c.delivered + c.dropped + r.sim.in_flight(), "{tag}");
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
    let at_stop = c.acked_at_stop.expect("the stop event ran");
    let capacity_kbps = 1e6 / 8.0 / 1024.0;
    assert!(f.throughput_KBps <= capacity_kbps, "{}", f.throughput_KBps);
    assert!(f.throughput_KBps > 0.8 * capacity_kbps, "{}", f.throughput_KBps);
    assert!((f.throughput_KBps - at_stop as f64 / 1024.0 / 10.0).abs() < 1e-9);
    // After the stop only the send buffer drains: at most 16 KB more are acknowledged.
    assert!(f.bytes_acked >= at_stop && f.bytes_acked <= at_stop + 16 * 1024, "{} vs {}", f.bytes_acked, at_stop);
    assert_eq!(f.bytes_delivered, f.bytes_acked, "the stream ends cleanly with a FIN after the data");
    assert!(c.ep[0].is_closed() && c.ep[1].is_closed(), "both ends closed after the FIN exchange");
}
