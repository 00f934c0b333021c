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
