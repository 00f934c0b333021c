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

/// A link monitor fed a two-packet script by hand (the calls `sim.rs` makes): A arrives at 0 ms
/// on an idle link and is transmitted until 10 ms; B arrives at 2 ms, waits 8 ms, is transmitted
/// until 20 ms; the run ends at 40 ms. Every integral worked out on paper.
#[test]
fn link_monitor_integrals_of_a_scripted_queue() {
    use tcplab::engine::SimTime;
    use tcplab::net::monitor::LinkMonitor;
    let ms = |x: u64| SimTime(x * 1_000_000);
    let mut m = LinkMonitor::new(ms(100), false);
    m.on_arrive(1000);
    m.on_queue_change(ms(0), 0, true);
    m.on_delay(ms(0), false);
    m.on_arrive(1000);
    m.on_enqueued(ms(2));
    m.on_queue_change(ms(2), 1, true);
    m.on_forwarded(ms(10), 1000);
    m.on_queue_change(ms(10), 0, true);
    m.on_delay(ms(10), true);
    m.on_forwarded(ms(20), 1000);
    m.on_queue_change(ms(20), 0, false);
    m.finish(ms(40));
    // Waiting: 1 packet for 8 ms. In the system: 1 for 2 ms, 2 for 8 ms, 1 for 10 ms = 28 ms.
    assert_eq!(m.queue_avg(ms(40)), 8.0 / 40.0);
    assert_eq!(m.system_avg(ms(40)), 28.0 / 40.0);
    assert_eq!(m.busy_ns, 20_000_000);
    // Queueing delays 0 and 8 ms.
    assert_eq!(m.delay_n, 2);
    assert!((m.delay_sum_s - 0.008).abs() < 1e-15, "{}", m.delay_sum_s);
    assert!((m.delay_sumsq_s2 - 0.008 * 0.008).abs() < 1e-15, "{}", m.delay_sumsq_s2);
    // `finish` closes the one unfinished 100 ms interval as a 40 ms row.
    assert_eq!(m.intervals.len(), 1, "{:?}", m.intervals);
    let row = m.intervals[0];
    assert_eq!((row.t_start_s, row.min_pkts, row.max_pkts, row.bytes_out, row.delay_n), (0.0, 0, 1, 2000, 2));
    assert_eq!(row.avg_pkts, 8.0 / 40.0);
    assert!((row.delay_sum_s - 0.008).abs() < 1e-15);
    let c = m.counters(ms(40));
    assert_eq!((c.arrived_pkts, c.forwarded_bytes, c.q_area), (2, 2000, 8_000_000));
}

/// Adaptive RED's automatic parameters (Floyd, Gummadi, Shenker 2001 §5, ns-2 `red.cc`): with
/// C the link's rate in mean-size packets per second, min_th = max(5, target·C/2), max_th =
/// 3·min_th, w_q = 1 − exp(−1/C).
#[test]
fn ared_parameters_follow_the_link_rate() {
    use tcplab::net::queue::QueueLimit;
    use tcplab::net::red::{AredParams, RedParams};
    // 100 Mb/s of 500 B packets: C = 25,000 packets/s, target 5 ms.
    let p = RedParams::ared(QueueLimit::Packets(1000), 100_000_000, 500, AredParams::default());
    let c = 25_000.0f64;
    assert_eq!((p.min_th, p.max_th), (62.5, 187.5));
    assert!((p.w_q - (1.0 - (-1.0 / c).exp())).abs() < 1e-15, "w_q {}", p.w_q);
    assert!((p.w_q - 4.0e-5).abs() < 1e-9, "w_q {} is about 1/C", p.w_q);
    // A slow link: the 5-packet floor.
    let p = RedParams::ared(QueueLimit::Packets(1000), 1_000_000, 1000, AredParams::default());
    assert_eq!((p.min_th, p.max_th), (5.0, 15.0));
    assert!((p.w_q - (1.0 - (-1.0f64 / 125.0).exp())).abs() < 1e-15, "w_q {}", p.w_q);
}

fn arrival(id: u32, bytes: u32) -> tcplab::net::queue::Arrival {
    tcplab::net::queue::Arrival { id, bytes, link_busy: true, busy_bytes: 1000, ecn: tcplab::net::packet::Ecn::NotEct, flow: 0 }
}

/// A RED queue with a byte limit admits a packet while the bytes queued plus its own fit, and
/// counts the bytes it holds (the average stays far below min_th here: no early drop).
#[test]
fn red_byte_limit_counts_the_bytes_queued() {
    use tcplab::engine::{RngStreams, SimTime};
    use tcplab::net::packet::DropReason;
    use tcplab::net::queue::{QueueDisc, QueueLimit};
    use tcplab::net::red::{AredParams, Red, RedParams};
    let p = RedParams::ared(QueueLimit::Bytes(2500), 10_000_000, 1000, AredParams::default());
    let mut r = Red::new(p, RngStreams::new(3).stream("red", 0));
    let t = SimTime(1_000_000);
    assert!(r.enqueue(t, arrival(1, 1000)).is_ok());
    assert_eq!(r.len_bytes(), 1000);
    assert!(r.enqueue(t, arrival(2, 1000)).is_ok());
    assert_eq!(r.len_bytes(), 2000);
    assert_eq!(r.enqueue(t, arrival(3, 1000)), Err(DropReason::QueueOverflow), "3000 B > 2500 B");
    assert!(r.enqueue(t, arrival(4, 500)).is_ok(), "exactly 2500 B fits");
    assert_eq!((r.len_pkts(), r.len_bytes()), (3, 2500));
    assert_eq!(r.dequeue(t), Some((1, 1000)));
    assert_eq!(r.len_bytes(), 1500);
}

/// Kelly's virtual queue: θ in (0, 1], φ > 0; the real FIFO admits up to its limit and refuses the
/// next; the average drawn is the virtual queue in packets of `packet_size`.
#[test]
fn virtual_queue_limit_validation_and_average() {
    use tcplab::engine::{RngStreams, SimTime};
    use tcplab::net::packet::DropReason;
    use tcplab::net::queue::{QueueDisc, QueueLimit};
    use tcplab::net::vq::{VirtualQueue, VqParams};
    let p = VqParams { theta: 0.9, phi: 0.125, packet_size: 1000, cap_pkts: 30.0, limit: QueueLimit::Packets(2), link_rate_bps: 8_000_000 };
    assert!(p.validate().is_ok());
    assert_eq!(VqParams { theta: 0.0, ..p }.validate().map_err(|e| e.0), Err("theta"));
    assert_eq!(VqParams { theta: 1.0, ..p }.validate().map_err(|e| e.0), Ok(()));
    assert_eq!(VqParams { phi: 0.0, ..p }.validate().map_err(|e| e.0), Err("phi"), "a gain of 0 never marks");
    let mut q = VirtualQueue::new(p, RngStreams::new(3).stream("vq", 0));
    let t = SimTime::ZERO;
    assert!(q.enqueue(t, arrival(1, 1000)).is_ok());
    // One 1000 B packet in the virtual queue at t = 0 (no drain yet): one packet.
    assert_eq!(q.average_pkts(), Some(1.0));
    assert!(q.enqueue(t, arrival(2, 500)).is_ok());
    assert_eq!(q.average_pkts(), Some(1.5));
    assert_eq!(q.enqueue(t, arrival(3, 1000)), Err(DropReason::QueueOverflow), "a 2-packet FIFO");
    // The refused packet still passed the marker: 2.5 packets, drained at 0.9 × 1 MB/s =
    // 0.9 bytes per µs, so 1 ms later 2500 − 900 = 1600 bytes.
    assert_eq!(q.average_pkts(), Some(2.5));
    assert_eq!((q.len_pkts(), q.len_bytes()), (2, 1500));
    assert_eq!(q.dequeue(t), Some((1, 1000)));
    assert!(q.enqueue(SimTime(1_000_000), arrival(4, 0)).is_ok());
    let avg = q.average_pkts().unwrap();
    assert!((avg - 1.6).abs() < 1e-9, "{avg}");
}

/// RED counts each early drop it makes (`early_drops`, in the summary), apart from its forced
/// drops: an average held between the thresholds gives early drops.
#[test]
fn red_counts_its_early_drops() {
    use tcplab::engine::{RngStreams, SimTime};
    use tcplab::net::packet::DropReason;
    use tcplab::net::queue::{QueueDisc, QueueLimit};
    use tcplab::net::red::{AredParams, Red, RedParams};
    // min_th 5, max_th 15, max_p 0.1, gentle, w_q ≈ 8e-4 (10 Mb/s of 1000 B packets).
    let p = RedParams::ared(QueueLimit::Packets(100_000), 10_000_000, 1000, AredParams::default());
    let mut r = Red::new(p, RngStreams::new(5).stream("red", 0));
    let t = SimTime::ZERO;
    let mut dropped = 0u64;
    for i in 0..400u32 {
        if i == 2 {
            r.avg = 12.0;
        }
        match r.enqueue(t, arrival(i, 1000)) {
            Ok(_) => {}
            Err(DropReason::Early) => dropped += 1,
            Err(e) => panic!("{e:?}"),
        }
    }
    assert!(r.early_drops > 0, "no early drop with the average between the thresholds");
    assert_eq!(r.early_drops + r.forced_drops, dropped);
}
