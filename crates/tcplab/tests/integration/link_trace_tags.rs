//! Link traces name the packet (issue 14, "A user's first hour"): every arrive/depart/drop row
//! carries the flow, the kind (data, ack, ctl, udp) and the sequence number, so a user can tell
//! whose packet was dropped. Checked against what the flows themselves counted.

use crate::common;

use tcplab::net::monitor::PacketTag;

const SCENARIO: &str = r#"
[run]
duration = "20s"
stop_when_done = false
trace = { links = ["all"] }

[topology]
kind = "dumbbell"
pairs = 3
bottleneck = { rate = "5Mbps", delay = "10ms", queue = { limit = "20pkts" }, drop = { packets = [{ flow = "a", seq = 14600 }] } }
access = { rate = "100Mbps", delay = "1ms", queue = { limit = "1000pkts" } }

[[tcp]]
name = "a"
from = "src0"
to = "dst0"
variant = "reno"
bytes = "300KB"

[[tcp]]
name = "b"
from = "src1"
to = "dst1"
variant = "newreno"
bytes = "300KB"
start = "0.1s"

[[udp]]
name = "u"
from = "src2"
to = "dst2"
pattern = "cbr"
packet_size = "1000B"
rate = "3Mbps"
stop = "3s"

[[traffic]]
name = "bg"
kind = "tcplib"
from = "src2"
to = "dst2"
variant = "reno"
interarrival = "0.5s"
stop = "3s"
"#;

struct Row {
    link: String,
    event: u8,
    reason: u8,
    flow: String,
    kind: &'static str,
    seq: i64,
}

#[test]
fn every_link_trace_row_names_its_packet() {
    let r = common::run(SCENARIO, 1);
    let mut rows = Vec::new();
    for l in &r.sim.links {
        let tr = l.monitor.trace.as_ref().expect("every link traced");
        for i in 0..tr.t.len() {
            rows.push(Row {
                link: l.name.clone(),
                event: tr.event[i],
                reason: tr.reason[i],
                flow: r.sim.trace_flow_name(tr.flow[i]).to_string(),
                kind: PacketTag::KIND_NAMES[tr.kind[i] as usize],
                seq: tr.seq[i],
            });
        }
    }
    // The scripted drop: flow a's data segment at offset 14600, on the bottleneck.
    let scripted = tcplab::net::DropReason::Scripted.index() as u8 + 1;
    let s: Vec<&Row> = rows.iter().filter(|x| x.event == 2 && x.reason == scripted).collect();
    assert_eq!(s.len(), 1);
    assert_eq!((s[0].link.as_str(), s[0].flow.as_str(), s[0].kind, s[0].seq), ("left->right", "a", "data", 14600));

    // Every drop names a flow, and the bottleneck dropped some of everyone's packets by overflow.
    let drops: Vec<&Row> = rows.iter().filter(|x| x.event == 2).collect();
    assert!(drops.iter().all(|x| !x.flow.is_empty() && !x.kind.is_empty()));
    // UDP: drop rows of source u over all links = datagrams sent - received (it stopped at 3 s,
    // the run ends at 20 s: none in flight).
    let u = &r.summary.udp[0];
    let u_drops = drops.iter().filter(|x| x.flow == "u").count() as u64;
    assert!(u_drops > 0, "the 3 Mbit/s CBR source beside TCP lost nothing at a 5 Mbit/s bottleneck?");
    assert_eq!(u_drops, u.sent_pkts - u.received_pkts);
    assert!(drops.iter().filter(|x| x.flow == "u").all(|x| x.kind == "udp"));
    // UDP datagram numbers: 0, 1, 2, ... as they arrive at the sender's access link.
    let useq: Vec<i64> = rows.iter().filter(|x| x.link == "src2->left" && x.event == 0 && x.flow == "u").map(|x| x.seq).collect();
    assert_eq!(useq, (0..u.sent_pkts as i64).collect::<Vec<_>>());

    // TCP: data rows arriving at each sender's access link = the data segments it sent;
    // offsets are whole segments from the first data byte (mss 1460 bytes).
    for (name, access) in [("a", "src0->left"), ("b", "src1->left")] {
        let f = r.summary.flows.iter().find(|f| f.name == name).unwrap();
        assert!(f.completed);
        let data: Vec<i64> = rows.iter().filter(|x| x.link == access && x.event == 0 && x.flow == name && x.kind == "data").map(|x| x.seq).collect();
        assert_eq!(data.len() as u64, f.segments_sent, "{name}");
        assert!(data.iter().all(|s| *s >= 0 && s % 1460 == 0 && *s < 300 * 1024), "{name}");
        // Its ACKs come back on the reverse access link, acknowledging up to the whole transfer.
        let back = format!("left->{}", access.split("->").next().unwrap());
        let acks: Vec<i64> = rows.iter().filter(|x| x.link == back && x.event == 1 && x.flow == name && x.kind == "ack").map(|x| x.seq).collect();
        assert!(!acks.is_empty(), "{name}");
        assert!(acks.iter().all(|a| *a <= 300 * 1024 + 1), "{name}");
        // Pure ACKs reach the last full segment (the ACK of the last bytes rides on the
        // receiver's FIN, a ctl row).
        let top = *acks.iter().max().unwrap();
        assert!((300 * 1024 - 1460..=300 * 1024 + 1).contains(&top), "{name}: highest ACK {top}");
        // The handshake: the SYN at offset -1.
        assert!(rows.iter().any(|x| x.link == access && x.flow == name && x.kind == "ctl" && x.seq == -1), "{name}");
    }
    // Traffic connections carry their source's name, data one way and ACKs the other.
    assert!(rows.iter().any(|x| x.flow == "bg" && x.kind == "data"));
    assert!(rows.iter().any(|x| x.flow == "bg" && x.kind == "ack"));
}

#[test]
fn untraced_links_record_nothing() {
    let text = SCENARIO.replace("trace = { links = [\"all\"] }", "");
    let r = common::run(&text, 1);
    assert!(r.sim.links.iter().all(|l| l.monitor.trace.is_none()));
}
