//! The emulator's pieces that need neither root nor TUN: raw datagrams through the simulator,
//! the plan's checks, the accuracy records.

use super::accuracy::{path_min_latency, Accuracy};
use super::linux::pattern_byte;
use super::plan::plan;
use super::EmuError;
use crate::engine::SimTime;
use crate::net::packet::{Ecn, Packet, PacketKind};
use crate::run::prepare;
use crate::scenario::load_text;
use crate::wire::{self, IpInfo, Payload};
use tcplab_tcp::Segment;

/// The shared a–r–b path (tests/fixtures/path.toml, also read by the integration and Python
/// tests) at 8 Mbit/s and 1 ms on both links (1000 bytes: 1 ms on the wire), a 2-packet queue on
/// a->r, a pcap capture on r->b; `extra` overrides on top.
fn net_with(extra: &[&str]) -> String {
    let text = include_str!("../../../../tests/fixtures/path.toml");
    let mut set: Vec<String> = ["run.duration=10s", r#"run.trace={ pcap = ["r->b"] }"#, "links[0].rate=8Mbps", r#"links[0].queue={ limit = "2pkts" }"#, "links[1].rate=8Mbps", "links[1].delay=1ms"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    set.extend(extra.iter().map(|s| s.to_string()));
    crate::scenario::apply_overrides(text, "tests/fixtures/path.toml", &set).expect("the fixture takes these overrides")
}

fn net() -> String {
    net_with(&[])
}

fn datagram(len: u32, id: u8) -> Vec<u8> {
    let seg = Segment { seq: 1000 * id as u32, ack: 1, flags: tcplab_tcp::Flags::ACK, wnd: 1000, len, ..Segment::default() };
    let payload: Vec<u8> = (0..len).map(|k| pattern_byte(k as u64) ^ id).collect();
    let mut out = Vec::new();
    let ip = IpInfo { src: wire::node_ip(0), dst: wire::node_ip(2), ttl: 64, ecn: Ecn::Ect0, id: 0 };
    wire::write_tcp(&mut out, &ip, 1, 2, &seg, 0, Payload::Bytes(&payload));
    out
}

/// Real datagrams cross the simulator's links with exact timing, keep their bytes, lose one
/// TTL per router, are dropped by a full queue (their bytes released), and are captured.
#[test]
fn raw_datagrams_cross_the_simulated_network() {
    let (mut sim, _) = prepare(&net(), "raw.toml", None, &[]).unwrap();
    let mut sent = Vec::new();
    for id in 0..5u8 {
        let d = datagram(960, id); // 1000 bytes: 1 ms at 8 Mbit/s
        assert_eq!(d.len(), 1000);
        let p = Packet { src: 0, dst: 2, size: d.len() as u32, ttl: 64, corrupted: false, ecn: Ecn::Ect0, created: 0, kind: PacketKind::Raw };
        sim.send_raw(SimTime::ZERO, p, &d);
        sent.push(d);
    }
    sim.run_until(SimTime::from_millis(100));
    // one in service + 2 queued pass the first link; 2 overflow
    assert_eq!(sim.raw_out.len(), 3);
    let a_r = sim.link_id("a->r").unwrap() as usize;
    assert_eq!(sim.links[a_r].monitor.total_drops(), 2);
    for (k, d) in sim.raw_out.iter().enumerate() {
        // tx 1 ms + 1 ms + tx 1 ms + 1 ms after its predecessor's
        assert_eq!(d.at, SimTime::from_millis(4 + k as u64));
        assert_eq!(d.node, 2);
        assert_eq!(d.packet.ttl, 63, "one router");
        let mut got = d.bytes.clone();
        wire::rewrite_ttl_ecn(&mut got, d.packet.ttl, d.packet.ecn);
        let p = wire::parse_ipv4(&got).expect("still a valid datagram");
        assert_eq!(p.ip.ttl, 63);
        let mut want = sent[k].clone();
        wire::rewrite_ttl_ecn(&mut want, 63, Ecn::Ect0);
        assert_eq!(got, want, "bytes intact");
    }
    assert_eq!(sim.pool.live(), 0);
    assert_eq!(sim.conservation.created, 5);
    assert_eq!(sim.conservation.delivered + sim.conservation.dropped, 5);
    let r_b = sim.link_id("r->b").unwrap() as usize;
    let cap = sim.links[r_b].monitor.pcap.as_ref().unwrap();
    assert_eq!(cap.pcap.records, 3);
}

#[test]
fn linux_variant_in_the_simulator_points_to_emulate() {
    let text = format!("{}\n[[tcp]]\nname = \"t\"\nfrom = \"a\"\nto = \"b\"\nvariant = \"linux-cubic\"\nbytes = \"10KB\"\n", net());
    let e = prepare(&text, "l.toml", None, &[]).err().expect("refused");
    assert_eq!(e.field, "tcp[0].variant");
    assert!(e.message.contains("tcplab emulate"), "{}", e.message);
}

#[test]
fn emulation_plan_checks_stacks() {
    let mk = |stack_a: &str, variant: &str| {
        format!("{}\n[[tcp]]\nname = \"t\"\nfrom = \"a\"\nto = \"b\"\nvariant = \"{variant}\"\nbytes = \"10KB\"\n", net_with(&[&format!("nodes[0].stack={stack_a}")]))
    };
    // one end emulated, the other simulated
    let text = mk("tcplab", "vegas");
    let (sc, t, _) = load_text(&text, "p.toml", &[]).unwrap();
    match plan(&sc, &t, "p.toml", None) {
        Err(EmuError::Scenario(e)) => assert_eq!(e.field, "tcp[0].to"),
        _ => panic!("expected a located error"),
    }
    // a Linux sender with a tcplab variant
    let text = mk("linux", "vegas");
    let (sc, t, _) = load_text(&text, "p.toml", &[]).unwrap();
    match plan(&sc, &t, "p.toml", None) {
        Err(EmuError::Scenario(e)) => assert_eq!(e.field, "tcp[0].variant"),
        _ => panic!("expected a located error"),
    }
}

/// The least latency of a path is serialization and propagation on each of its links, and a
/// datagram due sooner than that, or released before it is due, counts as released early.
#[test]
fn accuracy_flags_early_releases_and_measures_lateness_per_link() {
    let (sim, _) = prepare(&net(), "acc.toml", None, &[]).unwrap();
    let r_b = sim.link_id("r->b").unwrap() as u32;
    // 1000 bytes: 1 ms + 1 ms on a->r, 1 ms + 1 ms on r->b
    assert_eq!(path_min_latency(&sim, 0, 2, 1000), (r_b, 4_000_000));
    let mut acc = Accuracy::new(&sim);
    acc.released(&sim, 0, 2, 1000, 0, 4_000_000, 4_000_000, false); // on time
    acc.released(&sim, 0, 2, 1000, 0, 5_000_000, 7_000_000, true); // 2 ms late, held
    assert_eq!(acc.released_early, 0);
    acc.released(&sim, 0, 2, 1000, 1_000_000, 4_000_000, 4_000_000, false); // due 1 ms too soon
    acc.released(&sim, 0, 2, 1000, 0, 6_000_000, 5_999_999, false); // released before due
    assert_eq!(acc.released_early, 2);
    let (n, p50, _, max, over) = acc.lateness(Some(r_b));
    assert_eq!((n, max, over), (4, 2_000_000, 1));
    assert_eq!(p50, 0.0);
    assert_eq!(acc.unheld_p99(), (0.0, 3));
    assert_eq!(acc.delivering_links().collect::<Vec<_>>(), vec![r_b]);
    assert_eq!(super::accuracy::records_bytes(&acc.records).len(), 4 * 32);
}

#[test]
fn a_hung_setup_command_is_killed_at_its_limit() {
    use super::commands::wait_within;
    use std::time::{Duration, Instant};
    let child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep runs");
    let t = Instant::now();
    let err = wait_within(child, Duration::from_millis(100)).expect_err("sleep 30 outlives 100 ms");
    assert!(err.contains("still running after 100ms: killed"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(10), "killed, not waited for");
    let done = std::process::Command::new("true").spawn().expect("true runs");
    assert!(wait_within(done, Duration::from_secs(10)).expect("exits").success());
}

#[test]
fn a_setup_commands_children_are_killed_with_it() {
    // `sh -c` starts a grandchild; killing only `sh` (the child) would leave it running.
    use super::commands::{group_leader, wait_within};
    use std::time::{Duration, Instant};
    let dir = std::env::temp_dir().join(format!("tcplab-emu-pg-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("grandchild.pid");
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg(format!("sleep 30 & echo $! > {}; wait", pidfile.display()));
    let child = group_leader(&mut cmd).spawn().expect("sh runs");
    let t = Instant::now();
    let grandchild: i32 = loop {
        if let Some(p) = std::fs::read_to_string(&pidfile).ok().and_then(|s| s.trim().parse().ok()) {
            break p;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "sh wrote its child's pid");
        std::thread::sleep(Duration::from_millis(5));
    };
    let err = wait_within(child, Duration::from_millis(50)).expect_err("sh waits for sleep 30");
    assert!(err.contains("killed"), "{err}");
    // The grandchild is gone or a zombie waiting for its new parent to reap it.
    let t = Instant::now();
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()).unwrap_or("gone").to_string();
        if state == "gone" || state == "Z" || state == "X" {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "grandchild {grandchild} still running (state {state})");
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
