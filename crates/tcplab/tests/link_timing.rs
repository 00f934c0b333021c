//! Links: serialization + propagation timing of single packets exact to the nanosecond.

mod common;

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
