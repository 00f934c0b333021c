//! `[[lan]]` shared media in whole runs: a lone sender's throughput is the rate less framing
//! (exactly), saturated senders collide and back off with every packet accounted for, TCP runs
//! across two LANs, the same seed gives the same collisions, and bad input is located.

use crate::common::{assert_packets_conserved, run, summary_without_wall};
use tcplab::run::prepare;

/// Hosts h1..hN and router r on one segment; `sources` are UDP sources.
fn segment(stations: usize, lan_extra: &str, sources: &str, duration: &str) -> String {
    let mut t = format!("[run]\nduration = \"{duration}\"\nstop_when_done = false\n\n");
    let mut names = Vec::new();
    for i in 1..=stations {
        t += &format!("[[nodes]]\nname = \"h{i}\"\nkind = \"host\"\n\n");
        names.push(format!("\"h{i}\""));
    }
    t += &format!("[[lan]]\nname = \"seg\"\nnodes = [{}]\n{lan_extra}\n\n{sources}\n", names.join(", "));
    t
}

fn cbr(name: &str, from: &str, to: &str, size: &str, rate: &str) -> String {
    format!("[[udp]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"{to}\"\npattern = \"cbr\"\npacket_size = \"{size}\"\nrate = \"{rate}\"\n\n")
}

#[test]
fn a_lone_sender_gets_the_rate_less_framing_and_gap_exactly() {
    for access in ["ethernet", "fifo"] {
        // 1000 B packets: (1000 + 26) * 8 bits = 820.8 us on the wire, then a 9.6 us gap; the
        // n-th arrives at n * 830.4 us - 9.6 us + 5 us. In 1 s: n <= 1204.26, so 1204 packets.
        let text = segment(2, &format!("access = \"{access}\""), &cbr("u", "h1", "h2", "1000B", "20Mbps"), "1s");
        let r = run(&text, 1);
        let u = &r.sim.udp[0];
        assert_eq!(u.rcvd_pkts, 1204, "{access}");
        let lan = &r.summary.lans[0];
        assert_eq!(lan.collisions, 0, "{access}: no one to collide with");
        assert_eq!(lan.frames, 1204, "{access}: the 1205th would end at 1.0006 s");
        assert_packets_conserved(&r.sim, access);
    }
}

#[test]
fn a_short_packet_occupies_a_minimum_frame() {
    // 20 B packets are padded to 46 B: 72 B = 57.6 us, + 9.6 us gap = 67.2 us per packet.
    let text = segment(2, "", &cbr("u", "h1", "h2", "20B", "10Mbps"), "100ms");
    let r = run(&text, 1);
    // n-th arrives at n * 67.2 - 9.6 + 5 us <= 100 ms: n <= 1488.16.
    assert_eq!(r.sim.udp[0].rcvd_pkts, 1488);
}

#[test]
fn saturated_senders_collide_back_off_and_lose_nothing_uncounted() {
    let mut sources = String::new();
    for i in 1..=4 {
        sources += &cbr(&format!("u{i}"), &format!("h{i}"), "h5", "200B", "5Mbps");
    }
    let text = segment(5, "", &sources, "2s");
    let r = run(&text, 3);
    let lan = &r.summary.lans[0];
    assert!(lan.collisions > 100, "{lan:?}");
    assert!(lan.backoff_slots > 0);
    assert_packets_conserved(&r.sim, "saturated");
    // Every frame that got through arrived (or is still on the wire), every excessive-collision
    // drop is a counted link loss.
    let delivered: u64 = r.sim.udp.iter().map(|u| u.rcvd_pkts).sum();
    let on_wire: u64 = r.sim.links.iter().map(|l| l.pipe_len() as u64).sum();
    assert_eq!(lan.frames, delivered + on_wire);
    let link_losses: u64 = r.sim.links.iter().map(|l| l.monitor.drops[tcplab::net::DropReason::LinkLoss.index()]).sum();
    assert_eq!(lan.excessive_collision_drops, link_losses);
    // The medium is busy almost all the time, but not more than the frames allow.
    assert!(lan.utilization > 0.6 && lan.utilization < 0.96, "{}", lan.utilization);
    println!("4 saturated senders: {lan:?}");
}

#[test]
fn the_same_seed_gives_the_same_collisions() {
    let mut sources = String::new();
    for i in 1..=3 {
        sources += &cbr(&format!("u{i}"), &format!("h{i}"), "h4", "100B", "4Mbps");
    }
    let text = segment(4, "", &sources, "500ms");
    let a = run(&text, 9);
    let b = run(&text, 9);
    assert!(a.summary.lans[0].collisions > 0);
    assert_eq!(summary_without_wall(&a), summary_without_wall(&b));
}

const TWO_LAN: &str = include_str!("../../../../python/tcplab/scenarios/examples/two-lan.toml");

#[test]
fn tcp_crosses_two_lans_through_the_routers() {
    let r = run(TWO_LAN, 1);
    for f in &r.summary.flows {
        assert_eq!(f.bytes_acked, 1 << 20, "{}", f.name);
    }
    assert_eq!(r.summary.lans.len(), 2);
    assert!(r.summary.lans.iter().all(|l| l.frames > 1000));
    // The bottleneck, not the LANs, limits the transfers: the LANs are mostly idle.
    assert!(r.summary.lans.iter().all(|l| l.utilization < 0.3));
    assert_packets_conserved(&r.sim, "two-lan");
}

fn error(text: &str) -> tcplab::scenario::ScenarioError {
    match prepare(text, "lan.toml", None, &[]) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn bad_lans_are_located() {
    // A host on two segments.
    let text = segment(3, "", "", "1s") + "[[lan]]\nname = \"other\"\nnodes = [\"h1\", \"h2\"]\n";
    let e = error(&text);
    assert_eq!(e.field, "lan[1].nodes[0]");
    assert!(e.message.contains("one interface"), "{}", e.message);
    assert_eq!(e.line, Some(line_of(&text, "name = \"other\"") + 1));
    // A host on a segment and a point-to-point link.
    let text = segment(2, "", "", "1s") + "[[nodes]]\nname = \"x\"\nkind = \"host\"\n[[links]]\na = \"h1\"\nb = \"x\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
    let e = error(&text);
    assert_eq!(e.field, "lan[0].nodes[0]");
    assert!(e.message.contains("point-to-point link h1->x"), "{}", e.message);
    // Rate zero.
    let text = segment(2, "rate = \"0bps\"", "", "1s");
    let e = error(&text);
    assert_eq!(e.field, "lan[0].rate");
    assert_eq!(e.line, Some(line_of(&text, "rate =")));
    // A frame limit below the MSS.
    let text = segment(2, "mtu = \"576B\"", "[[tcp]]\nname = \"t\"\nfrom = \"h1\"\nto = \"h2\"\nvariant = \"reno\"\nbytes = \"10KB\"\nmss = \"1460B\"\n", "1s");
    let e = error(&text);
    assert_eq!(e.field, "tcp[0].mss");
    assert!(e.message.contains("mtu 576 B of link h1->h2"), "{}", e.message);
    // A segment too long for collision detection.
    let e = error(&segment(2, "delay = \"40us\"", "", "1s"));
    assert_eq!(e.field, "lan[0].delay");
    assert!(e.message.contains("collisions would go undetected"), "{}", e.message);
    // Unknown node, too few nodes, unknown access.
    assert_eq!(error(&segment(2, "", "", "1s").replace("\"h2\"]", "\"h9\"]")).field, "lan[0].nodes[1]");
    assert_eq!(error(&segment(1, "", "", "1s")).field, "lan[0].nodes");
    let e = error(&segment(2, "access = \"token-ring\"", "", "1s"));
    assert!(e.message.contains("ethernet") && e.message.contains("fifo"), "{}", e.message);
}

#[test]
fn a_lan_name_selects_its_directions_for_traces() {
    let text = segment(2, "", &cbr("u", "h1", "h2", "500B", "1Mbps"), "100ms").replace("stop_when_done = false", "stop_when_done = false\ntrace = { links = [\"seg\"] }");
    let r = run(&text, 1);
    assert!(r.sim.links.iter().all(|l| l.monitor.traced()));
}

/// A two-station FIFO segment takes the direct path (`Lan::solo`: a frame's end is its link
/// direction's own transmission end, counted when it takes the medium); the medium trace turns
/// it off, so the same run with the trace on takes the general FIFO path. Both give the same
/// run to the byte, frame count and utilization included, with both directions contending and
/// frames still on the medium when the run ends (the count taken off at the end).
#[test]
fn a_two_station_fifo_segment_runs_as_the_general_fifo_path_does() {
    let sources = cbr("ab", "h1", "h2", "1000B", "7Mbps") + &cbr("ba", "h2", "h1", "300B", "4Mbps");
    let direct = run(&segment(2, "access = \"fifo\"", &sources, "1.2345s"), 3);
    let mut general = run(&segment(2, "access = \"fifo\"\ntrace = true", &sources, "1.2345s"), 3);
    assert!(direct.sim.lans[0].solo && !general.sim.lans[0].solo);
    assert!(direct.sim.links.iter().any(|l| l.busy.is_some()), "a frame is on the medium at the end");
    assert!(general.summary.lans[0].medium_trace.take().is_some());
    assert_eq!(summary_without_wall(&direct), summary_without_wall(&general));
    assert!(direct.summary.lans[0].frames > 1000 && direct.summary.lans[0].utilization > 0.9, "{:?}", direct.summary.lans[0]);
    assert_packets_conserved(&direct.sim, "direct");
}

/// A two-station FIFO segment that is not the scenario's first: its directions are marked as a
/// `solo` segment's in `Link::lan` (`SOLO_LAN`) and still read back as their LAN and station, so
/// its counters find them; the general segment beside it is not marked. Each lone sender gets
/// the 1,204 frames of `a_lone_sender_gets_the_rate_less_framing_and_gap_exactly`.
#[test]
fn a_solo_segment_after_another_keeps_its_index_and_counters() {
    let mut text = String::from("[run]\nduration = \"1s\"\nstop_when_done = false\n\n");
    for i in 1..=4 {
        text += &format!("[[nodes]]\nname = \"h{i}\"\nkind = \"host\"\n\n");
    }
    text += "[[lan]]\nname = \"one\"\nnodes = [\"h1\", \"h2\"]\n\n[[lan]]\nname = \"two\"\nnodes = [\"h3\", \"h4\"]\naccess = \"fifo\"\n\n";
    text += &(cbr("u", "h1", "h2", "1000B", "20Mbps") + &cbr("v", "h4", "h3", "1000B", "20Mbps"));
    let r = run(&text, 1);
    assert!(!r.sim.lans[0].solo && r.sim.lans[1].solo);
    for l in &r.sim.links {
        let (lan, station) = l.on_lan().expect("every direction is on a segment");
        let on_two = l.name.starts_with("h3") || l.name.starts_with("h4");
        assert_eq!((lan, l.lan & tcplab::net::link::SOLO_LAN != 0), (on_two as u32, on_two), "{}", l.name);
        assert_eq!(station, if l.name.starts_with("h1") || l.name.starts_with("h3") { 0 } else { 1 }, "{}", l.name);
    }
    assert_eq!((r.summary.lans[0].frames, r.summary.lans[1].frames), (1204, 1204));
    assert_eq!((r.sim.udp[0].rcvd_pkts, r.sim.udp[1].rcvd_pkts), (1204, 1204));
    assert_packets_conserved(&r.sim, "two segments");
}

#[test]
fn the_medium_trace_accounts_for_every_transmission() {
    let mut sources = String::new();
    for i in 1..=3 {
        sources += &cbr(&format!("u{i}"), &format!("h{i}"), "h4", "200B", "4Mbps");
    }
    let text = segment(4, "trace = true", &sources, "300ms");
    let r = run(&text, 5);
    let lan = &r.summary.lans[0];
    let t = lan.medium_trace.as_ref().expect("trace = true records the medium");
    let n = t.station.len();
    assert!(lan.collisions > 10 && lan.frames > 100, "{lan:?}");
    assert!(!t.truncated && t.start_s.len() == n && t.end_s.len() == n && t.collided.len() == n);
    // One span per frame that got through and one per collision a sender detected.
    assert_eq!(t.collided.iter().filter(|&&c| !c).count() as u64, lan.frames);
    assert_eq!(t.collided.iter().filter(|&&c| c).count() as u64, lan.collisions);
    // A frame that got through is exactly one frame time (200 B + 26 B = 180.8 us) long and
    // overlaps no other transmission: no one else started within it, minus the propagation delay.
    let frame = (200.0 + 26.0) * 8.0 / 10e6;
    let tau = 5e-6;
    for i in (0..n).filter(|&i| !t.collided[i]) {
        assert!((t.end_s[i] - t.start_s[i] - frame).abs() < 1e-9, "span {i}: {}", t.end_s[i] - t.start_s[i]);
        for j in (0..n).filter(|&j| j != i) {
            let overlap = t.start_s[j].max(t.start_s[i] + tau) < t.end_s[j].min(t.end_s[i] - tau);
            assert!(!overlap, "frame {i} overlaps transmission {j}");
        }
    }
    // Every collided span overlaps another transmission (its partner in the collision).
    for i in (0..n).filter(|&i| t.collided[i]) {
        assert!((0..n).any(|j| j != i && t.collided[j] && t.start_s[j] < t.end_s[i] && t.start_s[i] < t.end_s[j]), "collision {i} alone");
    }
    // Without `trace` there is none.
    assert!(run(&segment(4, "", &sources, "300ms"), 5).summary.lans[0].medium_trace.is_none());
}

#[test]
fn positions_set_each_pairs_distance_and_bad_ones_are_located() {
    // h1 at 0 m, h2 at 2000 m (8,664 ns at 0.77 c), h3 at 500 m (2,166 ns): each direction's
    // propagation delay is its pair's distance, and a lone 1000 B frame h1 -> h2 arrives
    // 820.8 us + 8,664 ns after it starts.
    let text = segment(3, "positions = [\"0m\", \"2000m\", \"500m\"]", &cbr("u", "h1", "h2", "1000B", "8Mbps"), "1ms");
    let r = run(&text, 1);
    let delay = |name: &str| r.sim.links.iter().find(|l| l.name == name).unwrap().params.delay.0;
    assert_eq!((delay("h1->h2"), delay("h2->h1"), delay("h1->h3"), delay("h2->h3")), (8_664, 8_664, 2_166, 6_498));
    assert_eq!(r.sim.udp[0].rcvd_pkts, 1, "the frame ends at 820.8 us and arrives at 829.464 us");
    let text = segment(3, "positions = [\"0m\", \"2000m\", \"500m\"]", &cbr("u", "h1", "h2", "1000B", "8Mbps"), "829463ns");
    assert_eq!(run(&text, 1).sim.udp[0].rcvd_pkts, 0, "not yet at 829.463 us");
    // Both delay and positions; one position too few; a bad unit; too long for detection.
    let text = segment(2, "delay = \"5us\"\npositions = [\"0m\", \"10m\"]", "", "1s");
    let e = error(&text);
    assert_eq!(e.field, "lan[0].positions");
    assert!(e.message.contains("not both"), "{}", e.message);
    assert_eq!(e.line, Some(line_of(&text, "positions =")));
    let e = error(&segment(3, "positions = [\"0m\", \"10m\"]", "", "1s"));
    assert_eq!(e.field, "lan[0].positions");
    assert!(e.message.contains("3 nodes, 2 positions"), "{}", e.message);
    let e = error(&segment(2, "positions = [\"0m\", \"10 furlongs\"]", "", "1s"));
    assert!(e.message.contains("2000m"), "{}", e.message);
    let e = error(&segment(2, "positions = [\"0m\", \"10km\"]", "", "1s"));
    assert_eq!(e.field, "lan[0].positions");
    assert!(e.message.contains("collisions would go undetected"), "{}", e.message);
}

#[test]
fn medium_is_another_name_of_lan() {
    // The same segment written `[[medium]]` runs identically, byte for byte.
    let lan = segment(3, "", &(cbr("u", "h1", "h2", "1000B", "20Mbps") + &cbr("v", "h3", "h2", "1000B", "20Mbps")), "100ms");
    let medium = lan.replace("[[lan]]", "[[medium]]");
    assert_ne!(lan, medium);
    let (a, b) = (run(&lan, 3), run(&medium, 3));
    assert!(a.summary.lans[0].collisions > 0);
    assert_eq!(summary_without_wall(&a), summary_without_wall(&b));
    // `--set` reaches the table by either name, whichever the file uses.
    for text in [&lan, &medium] {
        for key in ["lan", "medium"] {
            let e = match prepare(text, "lan.toml", None, &[format!("{key}[0].rate=0bps")]) {
                Ok(_) => panic!("expected an error"),
                Err(e) => e,
            };
            // Named as the file writes the table (the rate is checked where the file is read).
            let want = if text.contains("[[medium]]") { "medium[0].rate" } else { "lan[0].rate" };
            assert_eq!(e.field, want, "{key}");
            assert!(e.message.contains(&format!("(from --set {key}[0].rate=0bps)")), "{}", e.message);
        }
    }
    // Errors are located in a file written `[[medium]]`: one found reading the file names the
    // table as written, one found building the network names it `lan` (a host on two segments).
    let text = medium.replace("nodes = [", "rate = \"0bps\"\nnodes = [");
    let e = error(&text);
    assert_eq!(e.field, "medium[0].rate");
    assert_eq!(e.line, Some(line_of(&text, "rate = \"0bps\"")));
    let text = medium.clone() + "[[medium]]\nname = \"other\"\nnodes = [\"h1\", \"h2\"]\n";
    let e = error(&text);
    assert_eq!(e.field, "lan[1].nodes[0]");
    assert!(e.message.contains("one interface"), "{}", e.message);
    assert_eq!(e.line, Some(line_of(&text, "name = \"other\"") + 1));
    // One file, one name: both tables at once is an error, not a silent merge.
    let both = lan.clone() + "[[medium]]\nname = \"other\"\nnodes = [\"h1\", \"h2\"]\n";
    assert!(prepare(&both, "lan.toml", None, &[]).is_err());
}
