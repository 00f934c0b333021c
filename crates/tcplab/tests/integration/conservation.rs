//! Conservation: for random topologies and loads, every packet sent is delivered, dropped (with a
//! reason) or still in a queue, on a transmitter, on the wire or in a node's processing delay at
//! the end, each counted on its own (`common::assert_packets_conserved`); queue counters satisfy
//! arrived = departed + dropped at the queue + queued.

use crate::common;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

fn random_scenario(rng: &mut Pcg64Mcg) -> String {
    let routers = rng.gen_range(1..6);
    let hosts = rng.gen_range(2..8);
    let mut s = String::from("[run]\nduration = \"3s\"\nmonitor_interval = \"50ms\"\n\n");
    for r in 0..routers {
        s += &format!("[[nodes]]\nname = \"r{r}\"\nkind = \"router\"\n");
        if rng.gen_bool(0.3) {
            s += "processing_delay = { dist = \"uniform\", min = \"0us\", max = \"50us\" }\n";
        }
        s += "\n";
    }
    for h in 0..hosts {
        s += &format!("[[nodes]]\nname = \"h{h}\"\nkind = \"host\"\n\n");
    }
    let link = |a: String, b: String, rng: &mut Pcg64Mcg| {
        let rate = [1, 2, 5, 10, 100][rng.gen_range(0..5)];
        let q = if rng.gen_bool(0.5) {
            format!("{}pkts", rng.gen_range(1..30))
        } else {
            format!("{}KB", rng.gen_range(2..40))
        };
        format!(
            "[[links]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"{rate}Mbps\"\ndelay = \"{}ms\"\nloss = {}\ncorruption = {}\nmtu = \"{}B\"\nqueue = {{ limit = \"{q}\", count_in_service = {} }}\n\n",
            rng.gen_range(0..30),
            if rng.gen_bool(0.5) { rng.gen_range(0.0..0.05) } else { 0.0 },
            if rng.gen_bool(0.3) { rng.gen_range(0.0..0.05) } else { 0.0 },
            if rng.gen_bool(0.1) { 1200 } else { 1500 },
            rng.gen_bool(0.5),
        )
    };
    // A random tree over the routers plus a few extra router links, hosts hanging off routers.
    for r in 1..routers {
        let p = rng.gen_range(0..r);
        s += &link(format!("r{p}"), format!("r{r}"), rng);
    }
    for _ in 0..rng.gen_range(0..3) {
        let (a, b) = (rng.gen_range(0..routers), rng.gen_range(0..routers));
        if a != b && !s.contains(&format!("a = \"r{a}\"\nb = \"r{b}\"")) && !s.contains(&format!("a = \"r{b}\"\nb = \"r{a}\"")) {
            s += &link(format!("r{a}"), format!("r{b}"), rng);
        }
    }
    for h in 0..hosts {
        let r = rng.gen_range(0..routers);
        s += &link(format!("h{h}"), format!("r{r}"), rng);
    }
    for i in 0..rng.gen_range(1..10) {
        let a = rng.gen_range(0..hosts);
        let mut b = rng.gen_range(0..hosts);
        if a == b {
            b = (b + 1) % hosts;
        }
        let size = rng.gen_range(40..1500);
        let src = match rng.gen_range(0..3) {
            0 => format!("pattern = \"cbr\"\nrate = \"{}kbps\"\npacket_size = \"{size}B\"", rng.gen_range(100..5000)),
            1 => format!(
                "pattern = \"poisson\"\ninterval = \"{}us\"\npacket_size = \"{size}B\"\nsize_dist = \"exponential\"",
                rng.gen_range(200..5000)
            ),
            _ => format!(
                "pattern = \"bursts\"\nburst_size = \"8KB\"\nburst_interval = \"{}ms\"\npacket_size = \"{size}B\"",
                rng.gen_range(5..200)
            ),
        };
        s += &format!("[[udp]]\nname = \"u{i}\"\nfrom = \"h{a}\"\nto = \"h{b}\"\n{src}\n\n");
    }
    s
}

#[test]
fn packets_are_conserved_on_random_networks() {
    let mut rng = Pcg64Mcg::seed_from_u64(2024);
    let mut total_drops_by_reason = [0u64; tcplab::net::DropReason::COUNT];
    // delivered, dropped, queued, transmitting, on the wire, processing: summed over the cases.
    let mut fate_totals = [0u64; 6];
    for case in 0..60 {
        let text = random_scenario(&mut rng);
        let r = common::run(&text, case);
        let c = r.sim.conservation;
        assert!(c.created > 0, "case {case}: no traffic\n{text}");
        let terms = common::assert_packets_conserved(&r.sim, &format!("case {case}\n{text}"));
        for (t, v) in fate_totals.iter_mut().zip(terms) {
            *t += v;
        }
        let mut link_drops = 0;
        for l in &r.sim.links {
            let m = &l.monitor;
            let at_queue = m.drops[0] + m.drops[5]; // queue overflow + MTU
            let queued = l.queue.len_pkts() as u64;
            assert_eq!(m.arrived_pkts, m.departed_pkts + at_queue + queued, "case {case} link {}", l.name);
            // Departed packets finished transmission, or one is still on the transmitter.
            assert_eq!(m.departed_pkts, m.forwarded_pkts + l.busy.is_some() as u64, "case {case} link {}", l.name);
            link_drops += m.total_drops();
            for (i, d) in m.drops.iter().enumerate() {
                total_drops_by_reason[i] += d;
            }
        }
        let node_drops: u64 = r.sim.node_drops.iter().sum();
        assert_eq!(link_drops + node_drops, c.dropped, "case {case}: every drop is counted with its reason once");
        // UDP view: received <= sent.
        for u in &r.sim.udp {
            assert!(u.rcvd_pkts <= u.sent_pkts);
        }
    }
    // Every fate occurs in some case (packets are cut off in queues, transmitters, pipes and
    // processing delays by the end of the run), so each term of the identity is exercised.
    eprintln!("fates over the cases (delivered, dropped, queued, transmitting, wire, processing): {fate_totals:?}");
    // (Processing delays here are at most 50 us, so a run rarely ends with a packet inside one:
    // `cut_off_in_every_place` below covers that term.)
    for (i, t) in fate_totals.iter().enumerate().take(5) {
        assert!(*t > 0, "fate {i} never exercised: {fate_totals:?}");
    }
    // The random cases must exercise every link-side reason.
    assert!(total_drops_by_reason[0] > 0, "no queue overflow exercised");
    assert!(total_drops_by_reason[1] > 0, "no link loss exercised");
    assert!(total_drops_by_reason[2] > 0, "no corruption exercised");
    assert!(total_drops_by_reason[5] > 0, "no MTU drop exercised");
}

/// A run cut off while packets sit in every place a packet can be: the router's processing delay
/// (uniform 1–3 ms per packet, one at a time: 500 packets/s, more than the 1 Mb/s bottleneck drains and fewer than the 2,500 packets/s that arrive, so packets pile up in both), the
/// bottleneck's queue and transmitter, and both propagation pipes. Every term of the identity is
/// non-zero at the end, so a packet that one place forgets is noticed.
#[test]
fn cut_off_in_every_place() {
    let text = r#"
[run]
duration = "1.2s"

[[nodes]]
name = "a"
kind = "host"
[[nodes]]
name = "r"
kind = "router"
processing_delay = { dist = "uniform", min = "1ms", max = "3ms" }
[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "r"
rate = "100Mbps"
delay = "10ms"
[[links]]
a = "r"
b = "b"
rate = "1Mbps"
delay = "30ms"
queue = { limit = "20pkts" }

[[udp]]
name = "cbr"
from = "a"
to = "b"
pattern = "cbr"
rate = "20Mbps"
packet_size = "1000B"
"#;
    let r = common::run(text, 3);
    let terms = common::assert_packets_conserved(&r.sim, "cut off");
    eprintln!("delivered, dropped, queued, transmitting, wire, processing: {terms:?}");
    for (i, t) in terms.iter().enumerate() {
        assert!(*t > 0, "term {i} is zero: {terms:?}");
    }
}
