//! Issue 14: defaults that do not silently cap a modern run. A receive buffer above 64 KB
//! switches window scaling on (or is an error when the file switched it off), and the `modern`
//! profile sizes buffers to the path; `bsd-1994` stays the seeds' defaults.

use tcplab::run::{prepare, run_text};

/// 10 Mbit/s, 40 ms one way (80 ms RTT; BDP = 100 KB): the user's path from the issue.
fn path(flow_extra: &str, run_extra: &str) -> String {
    format!(
        r#"[run]
duration = "30s"
{run_extra}
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "38ms", queue = {{ limit = "200pkts" }} }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[tcp]]
name = "t"
from = "src0"
to = "dst0"
variant = "newreno"
bytes = "8MB"
{flow_extra}
"#
    )
}

fn throughput(text: &str) -> f64 {
    let r = run_text(text, "p.toml", None, &[]).unwrap_or_else(|e| panic!("{e}"));
    let v: serde_json::Value = serde_json::from_str(&r.summary.to_json()).unwrap();
    v["flows"][0]["throughput_KBps"].as_f64().unwrap()
}

#[test]
fn large_receive_buffer_switches_window_scaling_on() {
    // 50 KB windows per 80 ms round trip: at most 625 KB/s.
    let default = throughput(&path("", ""));
    assert!(default < 640.0, "{default}");
    // recv_buffer = 1MB used to be capped at 64 KB (≤ 800 KB/s); now the window opens to the link.
    let big = throughput(&path("send_buffer = \"1MB\"\nrecv_buffer = \"1MB\"", ""));
    assert!(big > 1000.0, "{big}");
    let e = prepare(&path("recv_buffer = \"1MB\"\nwindow_scaling = false", ""), "p.toml", None, &[]).err().expect("refused");
    assert!(e.to_string().contains("needs window scaling"), "{e}");
    assert_eq!(e.field, "tcp[0].recv_buffer");
}

#[test]
fn modern_profile_fills_the_path_and_bsd_1994_is_the_default() {
    let modern_run = throughput(&path("", "profile = \"modern\""));
    let modern_flow = throughput(&path("profile = \"modern\"", ""));
    assert_eq!(modern_run, modern_flow);
    assert!(modern_run > 900.0, "{modern_run}"); // 625 KB/s is the 50 KB cap
    assert_eq!(throughput(&path("profile = \"bsd-1994\"", "")), throughput(&path("", "")));
    // A flow's own key overrides its profile.
    let capped = throughput(&path("profile = \"modern\"\nsend_buffer = \"50KB\"", ""));
    assert!(capped < 640.0, "{capped}");
    let e = prepare(&path("profile = \"moden\"", ""), "p.toml", None, &[]).err().expect("refused");
    assert!(e.to_string().contains("did you mean \"modern\""), "{e}");
}

#[test]
fn a_flow_capped_by_its_buffers_gets_a_warning_naming_the_key() {
    let summary = |text: &str| -> serde_json::Value {
        let r = run_text(text, "p.toml", None, &[]).unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&r.summary.to_json()).unwrap()
    };
    let capped = summary(&path("", ""));
    let f = &capped["flows"][0];
    assert!(f["limited_by_send_buffer"].as_f64().unwrap() > 0.5, "{f}");
    let w = capped["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].as_str().unwrap().contains("flow t: the send buffer (51200 bytes)") && w[0].as_str().unwrap().contains("raise send_buffer"), "{w:?}");
    // A big send buffer with the default 50 KB receive buffer: the receiver's window binds.
    let rwnd = summary(&path("send_buffer = \"1MB\"", ""));
    assert!(rwnd["warnings"][0].as_str().unwrap().contains("raise recv_buffer"), "{}", rwnd["warnings"]);
    let modern = summary(&path("", "profile = \"modern\""));
    assert_eq!(modern["warnings"].as_array().unwrap().len(), 0, "{}", modern["warnings"]);
    let f = &modern["flows"][0];
    assert!(f["mean_rtt_s"].as_f64().unwrap() >= 0.08 && f["max_rtt_s"].as_f64().unwrap() >= f["mean_rtt_s"].as_f64().unwrap(), "{f}");
    assert_eq!(f["loss_events"].as_u64().unwrap(), f["fast_retransmits"].as_u64().unwrap() + f["coarse_timeouts"].as_u64().unwrap());
}

/// The same path carrying a traffic source's connections instead of a `[[tcp]]` flow: one
/// on/off sender writing 8 Mbit/s while on (on for the whole run).
fn traffic_path(source_extra: &str, run_extra: &str) -> String {
    format!(
        r#"[run]
duration = "20s"
stop_when_done = false
{run_extra}
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "38ms", queue = {{ limit = "200pkts" }} }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[traffic]]
name = "bg"
kind = "onoff"
from = "src0"
to = "dst0"
variant = "newreno"
packet_size = "1000B"
rate = "8Mbps"
on = "1000s"
off = "1ms"
{source_extra}
"#
    )
}

#[test]
fn profiles_apply_to_traffic_connections_as_to_flows() {
    let kbps = |text: &str| -> f64 {
        let r = run_text(text, "p.toml", None, &[]).unwrap_or_else(|e| panic!("{e}"));
        r.summary.traffic[0].throughput_KBps
    };
    // bsd-1994: 50 KB windows per 80 ms round trip cap the connection at 625 KB/s.
    let default = kbps(&traffic_path("", ""));
    assert!(default < 640.0, "{default}");
    assert_eq!(kbps(&traffic_path("profile = \"bsd-1994\"", "")), default);
    // modern (the source's own key or run.profile): buffers sized to the path, the 8 Mbit/s
    // (976 KB/s) the application writes gets through.
    let own = kbps(&traffic_path("profile = \"modern\"", ""));
    let run = kbps(&traffic_path("", "profile = \"modern\""));
    assert_eq!(own, run);
    assert!(own > 850.0, "{own}");
    // The source's `tcp` table overrides the profile's buffers.
    let capped = kbps(&traffic_path("profile = \"modern\"\ntcp = { send_buffer = \"50KB\" }", ""));
    assert!(capped < 640.0, "{capped}");
    let e = prepare(&traffic_path("profile = \"moden\"", ""), "p.toml", None, &[]).err().expect("refused");
    assert_eq!(e.field, "traffic[0].profile");
    assert!(e.to_string().contains("did you mean \"modern\""), "{e}");
}

#[test]
fn modern_profile_keeps_a_linux_variants_own_rto() {
    use tcplab_tcp::config::TimerModel;
    // `modern` (CUBIC as Linux) runs Linux's RTT estimator and RTO (`timer = "linux"`); the
    // profile used to replace it with RFC 6298 (200 ms minimum) on every flow. Other variants
    // still get RFC 6298 with Linux's 200 ms minimum from the profile.
    let timer = |variant: &str| {
        let text = path("profile = \"modern\"", "").replace("variant = \"newreno\"", &format!("variant = \"{variant}\""));
        let (sim, _) = prepare(&text, "p.toml", None, &[]).unwrap_or_else(|e| panic!("{e}"));
        sim.tcp[0].ep[0].config().timer_model
    };
    assert!(matches!(timer("modern"), TimerModel::Linux { min_rto: 200_000_000, .. }), "{:?}", timer("modern"));
    assert!(matches!(timer("bbr"), TimerModel::Linux { .. }));
    assert!(matches!(timer("newreno"), TimerModel::Fine { min_rto: 200_000_000, granularity: 1_000_000, .. }), "{:?}", timer("newreno"));
}
