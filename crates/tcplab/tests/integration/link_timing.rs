//! Links: serialization + propagation timing of single packets exact to the nanosecond.

use crate::common;

use tcplab::engine::SimTime;

fn one_packet(rate: &str, delay: &str, size: &str, overhead: &str, hops: usize) -> u128 {
    let mut nodes = String::new();
    let mut links = String::new();
    for i in 0..=hops {
        let kind = if i == 0 || i == hops { "host" } else { "router" };
        nodes += &format!("[[nodes]]\nname = \"n{i}\"\nkind = \"{kind}\"\n\n");
        if i > 0 {
            links += &format!(
                "[[links]]\na = \"n{}\"\nb = \"n{i}\"\nrate = \"{rate}\"\ndelay = \"{delay}\"\noverhead = \"{overhead}\"\n\n",
                i - 1
            );
        }
    }
    let text = format!(
        "[run]\nduration = \"10s\"\n\n{nodes}{links}[[udp]]\nname = \"one\"\nfrom = \"n0\"\nto = \"n{hops}\"\npattern = \"cbr\"\nrate = \"1bps\"\npacket_size = \"{size}\"\nstart = \"1s\"\n"
    );
    let r = common::run(&text, 1);
    let u = &r.sim.udp[0];
    assert_eq!(u.sent_pkts, 1, "a 1 bit/s CBR source sends exactly one packet in 10 s");
    assert_eq!(u.rcvd_pkts, 1);
    u.delay_sum_ns
}

#[test]
fn single_hop_exact() {
    // 1000 bytes at 1 Mb/s = 8 ms serialization, + 10 ms propagation.
    assert_eq!(one_packet("1Mbps", "10ms", "1000B", "0B", 1), 18_000_000);
}

#[test]
fn overhead_counts_in_serialization() {
    // (1000 + 40) bytes at 8 Mb/s = 1.04 ms, + 5 ms.
    assert_eq!(one_packet("8Mbps", "5ms", "1000B", "40B", 1), 6_040_000);
}

#[test]
fn rounding_up_to_the_next_nanosecond() {
    // 1 byte at 3 bit/s... use 7 bytes = 56 bits at 3 Mb/s = 18666.67 ns -> 18667 ns.
    assert_eq!(one_packet("3Mbps", "0ms", "7B", "0B", 1), 18_667);
}

#[test]
fn store_and_forward_over_three_hops() {
    // Each hop: 1500 B at 10 Mb/s = 1.2 ms serialization + 2 ms propagation.
    assert_eq!(one_packet("10Mbps", "2ms", "1500B", "0B", 3), 3 * 3_200_000);
}

#[test]
fn byte_rates_use_1024() {
    // 200 KB/s = 1,638,400 bit/s; 1434 B = 11472 bits -> 7,001,953.125 ns -> 7,001,954 ns.
    assert_eq!(one_packet("200KB/s", "50ms", "1434B", "0B", 1), 7_001_954 + 50_000_000);
    assert_eq!(tcplab::engine::time::transmission_time(11472, 1_638_400), SimTime(7_001_954));
}

#[test]
fn node_processing_is_serial_and_fifo() {
    // A router that takes exactly 3 ms per packet, fed by a 100 Mb/s link with back-to-back
    // packets (a burst of 4 x 1000 B, 80 us apart): it processes one at a time, so packet k
    // leaves the router at 3 ms * (k+1) after the first arrival, in order.
    let text = r#"
[run]
duration = "10s"

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "r"
kind = "router"
processing_delay = { dist = "fixed", value = "3ms" }

[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "r"
rate = "100Mbps"
delay = "0ms"

[[links]]
a = "r"
b = "b"
rate = "1Gbps"
delay = "0ms"

[[udp]]
name = "burst"
from = "a"
to = "b"
pattern = "cbr"
rate = "400Mbps"
packet_size = "1000B"
stop = "80us"
"#;
    let r = common::run(text, 1);
    let u = &r.sim.udp[0];
    assert_eq!(u.sent_pkts, 4);
    assert_eq!(u.rcvd_pkts, 4);
    // Sent at 0, 20, 40, 60 us; arrive at the router at 80, 160, 240, 320 us (serialized at
    // 100 Mb/s behind each other); leave it at 3080, 6080, 9080, 12080 us; + 8 us at 1 Gb/s.
    let expected: u128 = [3_088_000u128, 6_088_000 - 20_000, 9_088_000 - 40_000, 12_088_000 - 60_000].iter().sum();
    assert_eq!(u.delay_sum_ns, expected);
}

/// Host a (1 ms), router r (2 ms) and host b (4 ms), each with a fixed processing delay and
/// `processing_at` = `at` ("" = not given); a burst of 4 x 1000 B from a to b over 100 Mb/s
/// links (80 us a packet). Returns the sum of the four one-way delays.
fn placed_delays(at: &str) -> Result<u128, tcplab::scenario::ScenarioError> {
    let mut text = String::from("[run]\nduration = \"1s\"\n\n");
    for (name, kind, ms) in [("a", "host", 1), ("r", "router", 2), ("b", "host", 4)] {
        text += &format!("[[nodes]]\nname = \"{name}\"\nkind = \"{kind}\"\nprocessing_delay = {{ dist = \"fixed\", value = \"{ms}ms\" }}\n{at}\n\n");
    }
    text += "[[links]]\na = \"a\"\nb = \"r\"\nrate = \"100Mbps\"\ndelay = \"0ms\"\n\n[[links]]\na = \"r\"\nb = \"b\"\nrate = \"100Mbps\"\ndelay = \"0ms\"\n\n";
    text += "[[udp]]\nname = \"burst\"\nfrom = \"a\"\nto = \"b\"\npattern = \"cbr\"\nrate = \"400Mbps\"\npacket_size = \"1000B\"\nstop = \"80us\"\n";
    let r = tcplab::run::run_text(&text, "t.toml", Some(1), &[])?;
    let u = &r.sim.udp[0];
    assert_eq!((u.sent_pkts, u.rcvd_pkts), (4, 4));
    Ok(u.delay_sum_ns)
}

#[test]
fn a_send_side_processing_delay_falls_before_the_node_sends() {
    // On arrival (the default): r and b delay, a does not. Sent at 0, 20, 40, 60 us; at r at
    // 80, 160, 240, 320 us; r done at 2.08, 4.08, 6.08, 8.08 ms (one at a time); at b 80 us
    // later; b done at 6.16, 10.16, 14.16, 18.16 ms.
    let on_arrival = 6_160_000 + 10_140_000 + 14_120_000 + 18_100_000;
    assert_eq!(placed_delays("").unwrap(), on_arrival);
    assert_eq!(placed_delays("processing_at = \"arrival\"").unwrap(), on_arrival);
    // Before sending (seed 000 §6.2.6): a and r delay, b (which only receives) does not. a done
    // at 1, 2, 3, 4 ms; at r 80 us later; r done at 3.08, 5.08, 7.08, 9.08 ms; at b 80 us later.
    let before_send = 3_160_000 + 5_140_000 + 7_120_000 + 9_100_000;
    assert_eq!(placed_delays("processing_at = \"send\"").unwrap(), before_send);
    // Placing a delay that is not there is refused, located.
    let text = "[run]\nduration = \"1s\"\n\n[[nodes]]\nname = \"a\"\nkind = \"host\"\nprocessing_at = \"send\"\n";
    let e = tcplab::run::prepare(text, "t.toml", None, &[]).err().expect("an error");
    assert_eq!(e.field, "nodes[0].processing_at");
    assert!(e.line.is_some(), "{e}");
}
