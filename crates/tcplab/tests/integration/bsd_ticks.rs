//! BSD coarse ticks cost nothing where no connection needs them (issue 13): a host whose only
//! TCP is a traffic source's conversations schedules its 500 ms and 200 ms ticks while a
//! conversation is open there, and none between or after them; when one opens again the ticks
//! resume on the host's own phase, so results are those of a host that never stopped ticking
//! (the golden summaries of brakmo/table5.4 and lite/table4, whose hosts go idle between
//! conversations, kept every field but the event count).

use tcplab::run::run_text;

fn scenario(duration: &str, stop: &str, smtp_only: bool) -> String {
    let mix = if smtp_only { "mix = { smtp = 1.0 }\n" } else { "" };
    format!(
        r#"
[run]
duration = "{duration}"
stop_when_done = false

[[nodes]]
name = "a"
kind = "host"
[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "10ms"
queue = {{ limit = "100pkts" }}

[[traffic]]
name = "mail"
kind = "tcplib"
from = "a"
to = "b"
variant = "reno"
interarrival = "2s"
stop = "{stop}"
{mix}tcp = {{ timer = "bsd" }}
"#
    )
}

fn events_and_summary(text: &str) -> (u64, serde_json::Value) {
    let r = run_text(text, "ticks.toml", Some(3), &[]).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&r.summary.to_json()).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.remove("wall_s");
    (r.summary.events, v)
}

/// After the last conversation has closed, a longer run adds no events at all: before this
/// change each of the two hosts scheduled 2 + 5 ticks per second for ever (1,400 events in the
/// extra 100 s).
#[test]
fn idle_hosts_schedule_no_ticks() {
    let (short, s) = events_and_summary(&scenario("100s", "20s", true));
    let (long, _) = events_and_summary(&scenario("200s", "20s", true));
    let src = &s["traffic"][0];
    assert!(src["conversations_completed"].as_u64().unwrap() >= 5, "{src}");
    assert_eq!(src["connections_alive_at_end"].as_u64(), Some(0), "{src}");
    assert_eq!(long, short, "events after the last conversation: {}", long as i64 - short as i64);
}

/// Ticks that resume are on the host's own phase, as if they had never stopped: the same
/// telnet conversations (whose delayed ACKs wait for the 200 ms tick) see the same delays and
/// counts whether their hosts stop ticking between conversations or are kept ticking all along by
/// a finished `[[tcp]]` transfer registered there (the old behaviour of every BSD host).
#[test]
fn resumed_ticks_keep_the_hosts_phase() {
    let traffic_stats = |static_on_ab: bool| {
        let (from, to) = if static_on_ab { ("a", "b") } else { ("c", "d") };
        let text = scenario("60s", "60s", false).replacen("stop_when_done = false", "stop_when_done = false\n", 1)
            + &format!(
                r#"
[[nodes]]
name = "c"
kind = "host"
[[nodes]]
name = "d"
kind = "host"
[[links]]
a = "c"
b = "d"
rate = "10Mbps"
delay = "10ms"

[[tcp]]
name = "early"
from = "{from}"
to = "{to}"
variant = "reno"
bytes = "1KB"
timer = "bsd"
"#
            );
        let text = text.replace("interarrival = \"2s\"", "interarrival = \"2s\"\nstart = \"5s\"").replace("mix = { smtp = 1.0 }\n", "");
        let (_, s) = events_and_summary(&text);
        s["traffic"][0].clone()
    };
    let lazy = traffic_stats(false);
    let always = traffic_stats(true);
    assert!(lazy["telnet_echoes"].as_u64().unwrap() > 100, "{lazy}");
    assert_eq!(lazy, always);
}
