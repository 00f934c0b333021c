//! Jain's index per bottleneck (issue 14): summary.json's `shared_bottlenecks` lists each link
//! direction that is some flow's bottleneck (the most utilized direction on its data path) with
//! the flows crossing it and Jain's index over their throughputs. A parking lot with two
//! bottlenecks: the long flow is in both groups, each cross flow in its own hop's.

use crate::common;

const PARKING_LOT: &str = r#"
[run]
duration = "20s"
stop_when_done = false

[topology]
kind = "parking-lot"       # routers r0, r1, r2; hops r0->r1 and r1->r2
hops = 2
hop = { rate = "10Mbps", delay = "10ms", queue = { limit = "60pkts" } }
access = { rate = "100Mbps", delay = "1ms", queue = { limit = "1000pkts" } }

[defaults.tcp]
variant = "reno"
duration = "20s"
send_buffer = "256KB"
recv_buffer = "256KB"

[[tcp]]
name = "long"
from = "src"
to = "dst"

[[tcp]]
count = 2
name = "hop0-{i}"
from = "cross_src0"
to = "cross_dst0"
start = "{i*100}ms"

[[tcp]]
name = "hop1"
from = "cross_src1"
to = "cross_dst1"
start = "50ms"
"#;

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

#[test]
fn each_bottleneck_has_its_own_jain_index() {
    let r = common::run(PARKING_LOT, 1);
    let s = &r.summary;
    let tput = |n: &str| s.flows.iter().find(|f| f.name == n).unwrap().throughput_KBps;
    let groups: Vec<(&str, Vec<&str>)> = s.shared_bottlenecks.iter().map(|b| (b.link.as_str(), b.flows.iter().map(|f| f.as_str()).collect())).collect();
    assert_eq!(groups, vec![("r0->r1", vec!["long", "hop0-0", "hop0-1"]), ("r1->r2", vec!["long", "hop1"])]);
    for b in &s.shared_bottlenecks {
        let x: Vec<f64> = b.flows.iter().map(|f| tput(f)).collect();
        assert!((b.jain_index.unwrap() - jain(&x)).abs() < 1e-12);
        assert!((b.throughput_KBps - x.iter().sum::<f64>()).abs() < 1e-9);
        // Both hops are full: the flows crossing each share its 10 Mbit/s (1220 KB/s).
        assert!(b.throughput_KBps > 1000.0 && b.throughput_KBps < 1221.0, "{}: {}", b.link, b.throughput_KBps);
    }
    // The per-bottleneck indices are not the index over all four flows.
    let all: Vec<f64> = s.flows.iter().map(|f| f.throughput_KBps).collect();
    let per: Vec<f64> = s.shared_bottlenecks.iter().map(|b| b.jain_index.unwrap()).collect();
    assert!(per.iter().all(|j| (j - jain(&all)).abs() > 1e-3), "{per:?} vs {}", jain(&all));
    let json = s.to_json();
    assert!(json.contains("\"shared_bottlenecks\""));
}

#[test]
fn a_bottleneck_nobody_shares_is_not_listed() {
    // One flow alone: no group, and the field is left out of summary.json.
    let one = PARKING_LOT.split("[[tcp]]\ncount = 2").next().unwrap();
    let r = common::run(one, 1);
    assert!(r.summary.shared_bottlenecks.is_empty());
    assert!(!r.summary.to_json().contains("shared_bottlenecks"));
}
