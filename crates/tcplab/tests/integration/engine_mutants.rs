//! Tests written from the survivors of `make mutants` over the engine/net modules (issue 17):
//! each checks a behaviour a planted bug changed without any other test noticing. Analytic
//! checks: a rate against its probability within four binomial standard errors.

use crate::common;

use tcplab::net::packet::DropReason;

/// 10,000 CBR datagrams over one link with loss probability `loss` and corruption probability
/// `corruption`; (sent, lost on the link, discarded as corrupted, received).
fn lossy_link(loss: f64, corruption: f64) -> (u64, u64, u64, u64) {
    // 1000 B every 1 ms at 100 Mb/s: never queued, so the link is the only cause of loss.
    let text = common::two_hosts(
        "100Mbps",
        "1ms",
        "{ limit = \"100pkts\" }",
        &format!("loss = {loss}\ncorruption = {corruption}"),
        "[[udp]]\nname = \"u\"\nfrom = \"a\"\nto = \"b\"\npattern = \"cbr\"\nrate = \"8Mbps\"\npacket_size = \"1000B\"\nstop = \"10s\"\n",
        "11s",
    );
    let r = common::run(&text, 7);
    let u = &r.sim.udp[0];
    let drops = |reason: DropReason| r.sim.links.iter().map(|l| l.monitor.drops[reason.index()]).sum::<u64>();
    (u.sent_pkts, drops(DropReason::LinkLoss), drops(DropReason::Corruption), u.rcvd_pkts)
}

fn within_binomial(what: &str, count: u64, n: u64, p: f64) {
    let mean = n as f64 * p;
    let se = (n as f64 * p * (1.0 - p)).sqrt();
    assert!((count as f64 - mean).abs() <= 4.0 * se, "{what}: {count} of {n}, expected {mean:.0} ± 4 × {se:.1}");
}

/// A packet is lost with probability `loss` and, if not lost, corrupted with probability
/// `corruption` (sim.rs `tx_done`: both decided when the last bit leaves); a corrupted packet
/// still crosses the link and is discarded at the far end.
#[test]
fn link_loss_and_corruption_happen_at_their_probabilities() {
    let (sent, lost, corrupted, rcvd) = lossy_link(0.05, 0.1);
    assert!((9_999..=10_001).contains(&sent), "{sent} datagrams in 10 s at 1,000 a second");
    assert_eq!(sent, lost + corrupted + rcvd, "every datagram lost, corrupted or received");
    within_binomial("lost", lost, sent, 0.05);
    within_binomial("corrupted", corrupted, sent - lost, 0.1);
    // Corruption alone, and neither.
    let (sent, lost, corrupted, rcvd) = lossy_link(0.0, 0.25);
    assert_eq!(lost, 0);
    within_binomial("corrupted alone", corrupted, sent, 0.25);
    assert_eq!(rcvd, sent - corrupted);
    let (sent, lost, corrupted, rcvd) = lossy_link(0.0, 0.0);
    assert_eq!((lost, corrupted, rcvd), (0, 0, sent));
}
