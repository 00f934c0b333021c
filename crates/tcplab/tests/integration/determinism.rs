//! Determinism: the same scenario and seed give byte-identical summaries (but for `wall_s`);
//! a different seed gives different draws; the traffic stream does not depend on other streams.

use crate::common;

const POISSON: &str = r#"
[[udp]]
name = "p"
from = "a"
to = "b"
pattern = "poisson"
interval = "900us"
packet_size = "1000B"
size_dist = "exponential"

[[udp]]
name = "bursts"
from = "a"
to = "b"
pattern = "bursts"
burst_size = "8KB"
burst_interval = "50ms"
packet_size = "1KB"
"#;

fn text(loss: f64) -> String {
    common::two_hosts("10Mbps", "5ms", "{ limit = \"20pkts\" }", &format!("loss = {loss}"), POISSON, "20s")
}

#[test]
fn same_seed_same_bytes() {
    let a = common::run(&text(0.01), 5);
    let b = common::run(&text(0.01), 5);
    assert_eq!(common::summary_without_wall(&a), common::summary_without_wall(&b));
    assert!(a.summary.events > 10_000);
}

#[test]
fn different_seed_different_draws() {
    let a = common::run(&text(0.01), 5);
    let b = common::run(&text(0.01), 6);
    assert_ne!(a.sim.udp[0].sent_bytes, b.sim.udp[0].sent_bytes);
}

#[test]
fn traffic_stream_is_independent_of_link_loss_stream() {
    // Changing the link's loss draws must not change what the sources send.
    let a = common::run(&text(0.0), 5);
    let b = common::run(&text(0.05), 5);
    assert_eq!(a.sim.udp[0].sent_bytes, b.sim.udp[0].sent_bytes);
    assert_eq!(a.sim.udp[1].sent_pkts, b.sim.udp[1].sent_pkts);
    assert_ne!(a.sim.udp[0].rcvd_pkts, b.sim.udp[0].rcvd_pkts);
}

#[test]
fn several_simulations_in_one_process() {
    let t = text(0.01);
    let handles: Vec<_> = (0..4).map(|_| { let t = t.clone(); std::thread::spawn(move || common::summary_without_wall(&common::run(&t, 9))) }).collect();
    let outs: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(outs.windows(2).all(|w| w[0] == w[1]));
}
