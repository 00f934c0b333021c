//! Helpers shared by the integration tests.
#![allow(dead_code)]

use tcplab::run::{run_text, RunResult};

pub fn run(text: &str, seed: u64) -> RunResult {
    run_text(text, "test.toml", Some(seed), &[]).unwrap_or_else(|e| panic!("scenario error: {e}"))
}

/// Summary JSON without the one host-dependent field.
pub fn summary_without_wall(r: &RunResult) -> String {
    r.summary.to_json().lines().filter(|l| !l.trim_start().starts_with("\"wall_s\"")).collect::<Vec<_>>().join("\n")
}

/// The shared scenario fixture `tests/fixtures/<name>` at the repository root (the Python tests
/// read the same files), with `--set`-style `overrides` applied and `extra` (sources) appended.
pub fn fixture(name: &str, overrides: &[String], extra: &str) -> String {
    let path = format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let text = tcplab::scenario::apply_overrides(&text, &path, overrides).unwrap_or_else(|e| panic!("{e}"));
    format!("{text}\n{extra}\n")
}

/// Two hosts joined by one link.
pub fn two_hosts(rate: &str, delay: &str, queue: &str, extra_link: &str, sources: &str, duration: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "b"
rate = "{rate}"
delay = "{delay}"
queue = {queue}
{extra_link}

{sources}
"#
    )
}

/// Every packet's fate, each term from its own counter (not the packet pool's live count):
/// created = delivered + dropped by reason (links' monitors + nodes) + queued + in transmission
/// + on the wire + in a node's processing delay. A packet that disappears without a fate (never
/// freed, or freed without being counted) breaks the identity. Returns the terms for printing.
pub fn assert_packets_conserved(sim: &tcplab::sim::Simulation, tag: &str) -> [u64; 6] {
    let c = sim.conservation;
    let dropped_by_reason: u64 =
        sim.links.iter().map(|l| l.monitor.total_drops()).sum::<u64>() + sim.node_drops.iter().sum::<u64>();
    let queued: u64 = sim.links.iter().map(|l| l.queue.len_pkts() as u64).sum();
    let transmitting: u64 = sim.links.iter().filter(|l| l.busy.is_some()).count() as u64;
    let on_wire: u64 = sim.links.iter().map(|l| l.pipe_len() as u64).sum();
    let processing = c.in_processing;
    let terms = [c.delivered, dropped_by_reason, queued, transmitting, on_wire, processing];
    assert_eq!(
        c.created,
        terms.iter().sum::<u64>(),
        "{tag}: created {} != delivered {} + dropped {} + queued {} + transmitting {} + on the wire {} + processing {}",
        c.created, terms[0], terms[1], terms[2], terms[3], terms[4], terms[5]
    );
    // The simulator's own drop total counts each drop once, with its reason.
    assert_eq!(c.dropped, dropped_by_reason, "{tag}: drops counted without a reason, or twice");
    // Cross-check: the pool holds exactly the packets still inside the network.
    assert_eq!(sim.in_flight(), queued + transmitting + on_wire + processing, "{tag}: pool live count");
    terms
}
