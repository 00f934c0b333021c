//! RED, ECN, SACK and scripted drops through the whole simulator: a RED bottleneck with ECN
//! marks instead of dropping, flows react without retransmitting; the drop list drops exactly
//! its packets; SACK repairs them; bad RED/drop settings are errors naming the field.

use crate::common;

use tcplab::run::run_text;

/// The shared a–r–b path (tests/fixtures/path.toml) with a 1.5 Mb/s bottleneck whose queue is
/// `queue` (an inline table) plus `link_extra` (`key = value`), and two 20 s flows.
fn dumbbell(queue: &str, tcp_extra: &str, variant: &str, link_extra: &str) -> String {
    let mut set = vec!["run.stop_when_done=false".to_string(), "links[1].rate=1.5Mbps".into(), format!("links[1].queue={queue}")];
    if let Some((key, value)) = link_extra.split_once(" = ") {
        set.push(format!("links[1].{key}={value}"));
    }
    common::fixture(
        "path.toml",
        &set,
        &format!(
            r#"
[[tcp]]
name = "t1"
from = "a"
to = "b"
variant = "{variant}"
duration = "20s"
mss = "1000B"
recv_buffer = "64KB"
send_buffer = "64KB"
{tcp_extra}

[[tcp]]
name = "t2"
from = "a"
to = "b"
variant = "{variant}"
duration = "20s"
start = "300ms"
mss = "1000B"
recv_buffer = "64KB"
send_buffer = "64KB"
{tcp_extra}
"#
        ),
    )
}

#[test]
fn red_marks_ecn_flows_instead_of_dropping() {
    let q = r#"{ kind = "red", limit = "60pkts", min_th = 5, max_th = 15, ecn = true }"#;
    let r = common::run(&dumbbell(q, "ecn = true", "newreno", ""), 3);
    let l = r.summary.links.iter().find(|l| l.name == "r->b").unwrap();
    assert_eq!(l.queue_discipline, "red");
    assert!(l.ecn_marks > 10, "RED marked ECT packets: {}", l.ecn_marks);
    assert!(l.aqm_avg_pkts.is_some());
    for f in &r.summary.flows {
        assert!(f.ecn, "{}: ECN negotiated", f.name);
        assert!(f.ecn_reactions > 0 && f.ecn_ce_received > 0, "{}: reacted to marks", f.name);
        assert!(f.ecn_reactions <= f.ecn_ce_received);
    }
    // Every mark reached a receiver, except marked packets still in flight when the run ended.
    let received: u64 = r.summary.flows.iter().map(|f| f.ecn_ce_received).sum();
    assert!(received <= l.ecn_marks && l.ecn_marks - received <= r.sim.in_flight(), "{received} of {}", l.ecn_marks);
    // Whatever RED dropped (forced drops above max_th, a full buffer) is all that was resent.
    let dropped = l.drops;
    let resent: u64 = r.summary.flows.iter().map(|f| f.retransmitted_segments).sum();
    if dropped == 0 {
        assert_eq!(resent, 0, "marks alone cause no retransmission");
    }
    // Without ECN the same queue drops early instead.
    let r = common::run(&dumbbell(q, "", "newreno", ""), 3);
    let l = r.summary.links.iter().find(|l| l.name == "r->b").unwrap();
    assert_eq!(l.ecn_marks, 0);
    assert!(l.drops_by_reason["early"] > 0, "non-ECT packets are dropped early");
    // The RED average is recorded per monitor interval.
    let link = r.sim.links.iter().find(|l| l.name == "r->b").unwrap();
    assert!(link.monitor.intervals.iter().filter(|i| i.aqm_avg_pkts.is_some()).count() > 100);
}

#[test]
fn scripted_drops_hit_exactly_the_listed_segments_and_sack_repairs_them() {
    let drops = r#"drop = { packets = [{ flow = "t1", seq = 100000 }, { flow = "t1", seq = 102000 }, { flow = "t1", seq = 104000 }, { flow = "t1", seq = 106000 }] }"#;
    let q = r#"{ limit = "200pkts" }"#; // holds both 64 KB windows: no overflow
    for variant in ["sack", "sack-rfc6675", "reno"] {
        let r = common::run(&dumbbell(q, "", variant, drops), 1);
        let l = r.summary.links.iter().find(|l| l.name == "r->b").unwrap();
        assert_eq!(l.drops_by_reason["scripted"], 4, "{variant}");
        assert_eq!(l.drops, 4, "{variant}: nothing else was lost");
        let f = &r.summary.flows[0];
        if variant.starts_with("sack") {
            assert!(f.sack && f.sack_acks_received > 0, "{variant}");
            assert_eq!(f.retransmitted_segments, 4, "{variant}: only the four holes resent");
            assert_eq!(f.coarse_timeouts, 0, "{variant}");
        } else {
            assert!(!f.sack);
            assert!(f.retransmitted_segments >= 4);
        }
    }
}

#[test]
fn bad_red_and_drop_settings_name_the_field() {
    let err = |text: String| run_text(&text, "bad.toml", Some(1), &[]).err().expect("must fail").to_string();
    let e = err(dumbbell(r#"{ limit = "10pkts", min_th = 3 }"#, "", "reno", ""));
    assert!(e.contains("links[1].queue.min_th") && e.contains("RED"), "{e}");
    let e = err(dumbbell(r#"{ kind = "red", limit = "10pkts", min_th = 8, max_th = 4 }"#, "", "reno", ""));
    assert!(e.contains("links[1].queue.max_th"), "{e}");
    let e = err(dumbbell(r#"{ kind = "red", limit = "10pkts", w_q = 0 }"#, "", "reno", ""));
    assert!(e.contains("links[1].queue.w_q"), "{e}");
    let e = err(dumbbell(r#"{ kind = "red", limit = "10pkts", target_delay = "5ms" }"#, "", "reno", ""));
    assert!(e.contains("links[1].queue.target_delay") && e.contains("ared"), "{e}");
    let e = err(dumbbell(r#"{ kind = "blue", limit = "10pkts" }"#, "", "reno", ""));
    assert!(e.contains("links[1].queue.kind") && e.contains("red"), "{e}");
    let e = err(dumbbell(r#"{ limit = "10pkts" }"#, "", "reno", r#"drop = { packets = [{ flow = "nope", seq = 0 }] }"#));
    assert!(e.contains("links[1].drop.packets[0].flow") && e.contains("t1"), "{e}");
    let e = err(dumbbell(r#"{ limit = "10pkts" }"#, "", "reno", r#"drop = { packets = [{ flow = "t1", seq = 0, occurrence = 0 }] }"#));
    assert!(e.contains("links[1].drop.packets[0].occurrence"), "{e}");
}

/// Packets are copied on the hot path: the ECN codepoint rides in the padding beside `ttl`, and
/// SACK blocks (four fixed slots in the segment) are what the packet grew by.
#[test]
fn packet_stays_small() {
    let packet = std::mem::size_of::<tcplab::net::Packet>();
    let segment = std::mem::size_of::<tcplab_tcp::Segment>();
    println!("size_of Packet = {packet} B, Segment = {segment} B");
    assert!(packet <= 128, "Packet is {packet} bytes");
}

/// Issue 31 item 7: each queue discipline draws from its own stream, keyed by its kind and link
/// direction, so a VQ marker added elsewhere (on an existing link, or on a new link listed
/// before the RED bottleneck) leaves RED's early drops identical in count and time.
#[test]
fn a_marker_elsewhere_does_not_change_red_drops() {
    let red = r#"{ kind = "red", limit = "60pkts", min_th = 5, max_th = 15 }"#;
    let base = dumbbell(red, "", "newreno", "");
    let red_drops = |text: &str| {
        let r = common::run(text, 11);
        let l = r.summary.links.iter().find(|l| l.name == "r->b").unwrap().clone();
        assert_eq!(l.queue_discipline, "red");
        (l.drops_by_reason.clone(), l.drop_times_s.clone(), l.packets_forwarded)
    };
    let before = red_drops(&base);
    assert!(before.0.get("early").copied().unwrap_or(0) > 0, "RED dropped early: {:?}", before.0);
    // A marker on the access link a->r.
    let on_access = base.replacen("delay = \"1ms\"\n", "delay = \"1ms\"\nqueue = { kind = \"vq\", limit = \"64KB\" }\n", 1);
    assert_ne!(on_access, base);
    assert_eq!(red_drops(&on_access), before, "VQ on a->r changed RED's drops");
    // A new stub router c with a marked link, listed before the bottleneck.
    let stub = "[[nodes]]\nname = \"c\"\nkind = \"router\"\n\n[[links]]\na = \"r\"\nb = \"c\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\nqueue = { kind = \"vq\", limit = \"64KB\" }\n\n[[links]]\na = \"r\"\nb = \"b\"";
    let with_stub = base.replacen("[[links]]\na = \"r\"\nb = \"b\"", stub, 1);
    assert_ne!(with_stub, base);
    assert_eq!(red_drops(&with_stub), before, "a VQ link before the bottleneck changed RED's drops");
}
