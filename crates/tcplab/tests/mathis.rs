//! Mathis' law: a long Reno flow with random loss p and no queueing loss gets throughput close to
//! (MSS/RTT)·sqrt(3/(2p)) (Mathis, Semke, Mahdavi, Ott 1997, with one ACK per segment).
//!
//! The law assumes losses are repaired by fast retransmit. With BSD's coarse 500 ms timer the
//! RTO is >= 1 s, and as p grows more losses end in a timeout (two losses in one window defeat
//! Reno's fast recovery), so the flow falls below the law — the effect Padhye et al. (1998)
//! model. Measured (seeds below): fine timer 1.02 / 0.92 / 0.84 of the law at p = 0.5 / 1 / 2 %,
//! BSD timer 0.95 / 0.91 / 0.80. Both are held to 25 %; the BSD flow at 2 % sits near the edge
//! for that reason, and is allowed down to 0.6 rather than tuned.

mod common;

fn scenario(p: f64, timer: &str) -> String {
    // The fine timer runs with Linux's 200 ms RTO floor (TCP_RTO_MIN) rather than RFC 6298's 1 s:
    // the law describes fast-recovery dynamics, and the floor sets how much each timeout costs.
    let min_rto = if timer == "fine" { "min_rto = \"200ms\"" } else { "" };
    format!(
        r#"
[run]
duration = "600s"
stop_when_done = false

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "b"
rate = "100Mbps"
delay = "50ms"
queue = {{ limit = "100000pkts" }}
ab = {{ loss = {p} }}

[[tcp]]
name = "reno"
from = "a"
to = "b"
variant = "reno"
duration = "600s"
mss = "1460B"
send_buffer = "8MB"
recv_buffer = "8MB"
window_scaling = true
timer = "{timer}"
{min_rto}
"#
    )
}

fn ratio(p: f64, timer: &str, seed: u64) -> f64 {
    let r = common::run(&scenario(p, timer), seed);
    let link = r.summary.links.iter().find(|l| l.name == "a->b").unwrap();
    assert_eq!(link.drops_by_reason["queue_overflow"], 0, "no queueing loss");
    let f = &r.summary.flows[0];
    let measured = f.bytes_acked as f64 / 600.0;
    // RTT: 100 ms propagation plus serialization of a 1500-byte packet at 100 Mb/s (0.12 ms).
    let rtt = 0.1 + 1500.0 * 8.0 / 100e6;
    let predicted = 1460.0 / rtt * (3.0 / (2.0 * p)).sqrt();
    let ratio = measured / predicted;
    eprintln!("p={p} timer={timer}: {measured:.0} B/s, Mathis {predicted:.0} B/s, ratio {ratio:.3}, timeouts {}", f.coarse_timeouts);
    ratio
}

#[test]
fn reno_follows_mathis_law() {
    for (i, p) in [0.005, 0.01, 0.02].into_iter().enumerate() {
        let r = ratio(p, "fine", 40 + i as u64);
        assert!((0.75..=1.25).contains(&r), "p={p}: throughput/Mathis = {r:.3}");
    }
}

#[test]
fn bsd_timer_reno_follows_the_law_until_timeouts_dominate() {
    for (i, p) in [0.005, 0.01, 0.02].into_iter().enumerate() {
        let r = ratio(p, "bsd", 50 + i as u64);
        let low = if p < 0.015 { 0.75 } else { 0.6 };
        assert!((low..=1.25).contains(&r), "p={p}: throughput/Mathis = {r:.3}");
    }
}
