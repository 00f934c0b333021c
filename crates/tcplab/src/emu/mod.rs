//! Emulation (`tcplab emulate`): real protocol stacks through tcplab's own links, queues and
//! routers in real time — the hitbox WAN emulator of seed 002 §4 done with today's tools.
//!
//! - A host with `stack = "linux"` becomes a network namespace whose one interface is a TAP
//!   device; its flows are real Linux sockets with the requested congestion control
//!   (`variant = "linux-cubic"`), driven by the built-in bulk sender and sink ([`linux`]).
//! - A host with `stack = "tcplab"` runs tcplab's sans-IO endpoint (`tcplab-tcp`) inside this
//!   process; its segments become real IPv4/TCP datagrams ([`crate::wire`]) with a known
//!   byte pattern as payload, so a tcplab Vegas sender talks to a Linux receiver.
//! - Every other node, link, queue and router is the simulator's own code: one [`Simulation`]
//!   stepped with [`Simulation::run_until`] to the monotonic clock's "now" (no second link
//!   implementation). A datagram read from a TAP enters the simulation as a
//!   [`PacketKind::Raw`] packet at its source node at the time it was read; one that reaches a
//!   Linux host is written to that host's TAP as soon as it is due.
//!
//! Every frame is stamped when it is read, so nothing is released before arrival + queueing +
//! serialization + propagation ([`run`] tells how the first version got this wrong). Accuracy is
//! measured in every run and reported in `summary.json` under `emulation` ([`accuracy`]):
//! release lateness per delivering link at p50/p99/max with the count over 1 ms, datagrams
//! released early (zero), per link direction the achieved rate against the configured one, and
//! `fell_behind` when a p99 lateness exceeded 0.1 ms (the target) — a run that was not faithful
//! says so.
//!
//! Hosts with `stack = "linux"` can run user programs ([`commands`]).
//!
//! Deliberate limits: one link per emulated host; UDP sources and `[[traffic]]` run only
//! between simulated hosts; Linux flows use the kernel's defaults except the congestion
//! control and, when the scenario gives them, `mss` (TCP_MAXSEG) and the buffers (SO_SNDBUF /
//! SO_RCVBUF, which Linux doubles for its bookkeeping).

pub mod accuracy;
pub mod commands;
mod endpoints;
pub mod linux;
mod plan;
mod report;
mod run;
pub mod steplog;
pub mod sys;
#[cfg(test)]
mod tests;

use crate::scenario::ScenarioError;
use crate::sim::Simulation;

pub use run::{check_commands, emulate};

/// MAC address of the emulator's side of every TAP link.
const GATEWAY_MAC: [u8; 6] = [0x02, 0x74, 0x6c, 0x00, 0x00, 0xfe];
const ETH_HEADER: usize = 14;
/// Lateness above which a run is reported as having fallen behind (issue 16: 0.1 ms).
pub const LATENESS_TARGET_NS: u64 = 100_000;
const SINK_PORT_BASE: u16 = 5001;
/// The loop sleeps in ppoll until this long before the next due event and spins the rest. Short,
/// because spinning at real-time priority counts against the kernel's RT throttling (95 % of a
/// second), and a throttled emulator stalls for tens of milliseconds.
const SPIN_NS: u64 = 15_000;

/// Result of an emulation run.
pub struct EmuResult {
    pub sim: Simulation,
    pub summary_json: String,
    pub text: String,
    /// Interrupted by SIGINT/SIGTERM (the run directory is still written, marked so).
    pub interrupted: bool,
    /// One 32-byte record per datagram released to a host ([`accuracy::Record`], `<IIQQQ`).
    pub packet_records: Vec<u8>,
    /// Per user command: (name, stdout, stderr).
    pub command_outputs: Vec<(String, Vec<u8>, Vec<u8>)>,
}

/// An error of emulation: a scenario error (file, line, field) or a one-line refusal/system error.
#[derive(Debug)]
pub enum EmuError {
    Scenario(ScenarioError),
    Refused(String),
    System(String),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::Scenario(e) => write!(f, "{e}"),
            EmuError::Refused(m) | EmuError::System(m) => write!(f, "{m}"),
        }
    }
}

impl From<ScenarioError> for EmuError {
    fn from(e: ScenarioError) -> Self {
        EmuError::Scenario(e)
    }
}

/// Linux congestion controls as tcplab variants ("linux-cubic", ...).
pub fn linux_variants() -> Vec<String> {
    sys::available_congestion_controls().into_iter().map(|c| format!("linux-{c}")).collect()
}

/// Options of [`emulate`].
#[derive(Clone, Debug, Default)]
pub struct EmuOptions {
    pub seed: Option<u64>,
    pub overrides: Vec<String>,
}
