//! Issue 15, finding 4: the memory a run needs is estimated from the parsed scenario and checked
//! before anything is built.

use tcplab::run::{estimate_memory_text, prepare_with_limits, Limits};

/// Two hosts over one router; `link` is spliced into the first link, `flows` appended.
fn scenario(run_extra: &str, node_b: &str, link: &str, flows: &str) -> String {
    format!(
        r#"name = "rel"
[run]
duration = "2s"
{run_extra}

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "{node_b}"
kind = "host"

[[links]]
a = "a"
b = "{node_b}"
rate = "10Mbps"
delay = "5ms"
{link}

{flows}
"#
    )
}

/// This process's peak resident set (Linux `VmHWM`), bytes.
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/self/status");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

const TCP: &str = "[[tcp]]\nname = \"t\"\nfrom = \"a\"\nto = \"b\"\nvariant = \"newreno\"\nbytes = \"100KB\"\n";

/// Finding 4: a million flows built the whole simulation during validation and aborted at 4 GB.
/// The memory estimate comes from the parsed scenario, before anything is built.
#[test]
fn memory_estimate_refuses_huge_runs_before_building() {
    let traffic = "[[traffic]]\nname = \"bg\"\nkind = \"ahn\"\nfrom = \"a\"\nto = \"b\"\nvariant = \"reno\"\nsenders = 1000000\nsleep = \"1s\"\n";
    let text = scenario("", "b", "", traffic);
    let est = estimate_memory_text(&text, "rel.toml", &[], 0).unwrap().total;
    assert!(est > 1 << 30, "a million connections estimated at only {est} bytes");
    let e = match prepare_with_limits(&text, "rel.toml", None, &[], &Limits { max_memory: Some(512 << 20), runtime_bytes: 0, ..Default::default() }) {
        Ok(_) => panic!("a million senders fit in 512 MB?"),
        Err(e) => e,
    };
    // Refused before building: a million connections built would have taken gigabytes; this
    // process (its own test binary) never held more than the parsed scenario.
    let peak = peak_rss_bytes();
    assert!(peak < 256 << 20, "peak RSS {peak} bytes: the senders were built before the refusal");
    assert!(e.message.contains("--max-memory") && e.message.contains("MB"), "{e}");
    assert_eq!(e.field, "traffic[0].senders", "{e}");
    // Many [[tcp]] flows: the estimate grows with them and names the flows.
    let mut flows = String::new();
    for i in 0..20_000 {
        flows.push_str(&format!("[[tcp]]\nname = \"t{i}\"\nfrom = \"a\"\nto = \"b\"\nvariant = \"reno\"\nbytes = \"1MB\"\n"));
    }
    let e = match prepare_with_limits(&scenario("", "b", "", &flows), "rel.toml", None, &[], &Limits { max_memory: Some(64 << 20), runtime_bytes: 0, ..Default::default() }) {
        Ok(_) => panic!("20,000 flows fit in 64 MB?"),
        Err(e) => e,
    };
    assert_eq!(e.field, "tcp", "{e}");
    // A small scenario is estimated small and passes.
    let small = estimate_memory_text(&scenario("", "b", "", TCP), "rel.toml", &[], 0).unwrap().total;
    assert!(small < 64 << 20, "{small}");
    prepare_with_limits(&scenario("", "b", "", TCP), "rel.toml", None, &[], &Limits { max_memory: Some(64 << 20), runtime_bytes: 0, ..Default::default() }).unwrap();
}

