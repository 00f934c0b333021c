//! `pattern = "bursts"` and the sender's own queue (issue 14): a burst leaves the host paced at
//! its access link's rate, so under default settings (a 50-packet host queue) a source loses
//! nothing before the bottleneck, which is elsewhere.

use crate::common;

fn scenario(bottleneck_queue: &str) -> String {
    format!(
        r#"
[run]
duration = "30s"
stop_when_done = false

[[nodes]]
name = "s"
kind = "host"
[[nodes]]
name = "r"
kind = "router"
[[nodes]]
name = "d"
kind = "host"

[[links]]                 # the host's access link: default queue (50 packets)
a = "s"
b = "r"
rate = "100Mbps"
delay = "1ms"

[[links]]                 # the bottleneck
a = "r"
b = "d"
rate = "4Mbps"
delay = "10ms"
queue = {{ limit = "{bottleneck_queue}" }}

[[udp]]                   # mean 200 packets per burst, 1.6 Mbit/s on average (this seed: 2.6)
name = "b"
from = "s"
to = "d"
pattern = "bursts"
packet_size = "1000B"
burst_size = "200000B"
burst_interval = "1s"
stop = "25s"
"#
    )
}

#[test]
fn a_burst_loses_nothing_at_its_own_host_queue() {
    let r = common::run(&scenario("100000pkts"), 1);
    let host = r.summary.links.iter().find(|l| l.name == "s->r").unwrap();
    let u = &r.summary.udp[0];
    assert!(u.sent_pkts > 2000, "{}", u.sent_pkts);
    assert_eq!(host.drops, 0, "the host's own queue dropped {} of {} datagrams", host.drops, u.sent_pkts);
    // Paced at the access rate: at most the packet in service and one arriving as it ends.
    assert!(host.queue_max_pkts <= 1, "{}", host.queue_max_pkts);
    // Nothing lost anywhere with a bottleneck queue that holds every burst; the bottleneck
    // queue is where the bursts wait (the largest burst is well over 50 packets).
    assert_eq!(u.received_pkts, u.sent_pkts);
    let bottleneck = r.summary.links.iter().find(|l| l.name == "r->d").unwrap();
    assert!(bottleneck.queue_max_pkts > 100, "{}", bottleneck.queue_max_pkts);
    // The sizes are the same draws as before pacing: same seed, same datagrams and bytes.
    let again = common::run(&scenario("50pkts"), 1);
    assert_eq!((again.summary.udp[0].sent_pkts, again.summary.udp[0].sent_bytes), (u.sent_pkts, u.sent_bytes));
    // With the default 50-packet queue at the bottleneck, the losses are there, not at the host.
    let host2 = again.summary.links.iter().find(|l| l.name == "s->r").unwrap();
    let b2 = again.summary.links.iter().find(|l| l.name == "r->d").unwrap();
    assert_eq!(host2.drops, 0);
    assert_eq!(b2.drops, u.sent_pkts - again.summary.udp[0].received_pkts);
    assert!(b2.drops > 0);
}
