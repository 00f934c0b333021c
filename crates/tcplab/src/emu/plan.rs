//! Planning an emulation: check the scenario's stacks (which hosts run Linux, which tcplab's
//! endpoint, which stay simulated), build the simulation of everything else with the
//! simulator's own builder, and take the emulated flows out of it.

use std::sync::Arc;

use tcplab_tcp::Endpoint;

use super::linux::FlowShared;
use super::{sys, EmuError, SINK_PORT_BASE};
use crate::scenario::{NodeStack, Scenario, ScenarioError};
use crate::sim::Simulation;
use crate::wire::WindowScales;

/// What runs a flow's two ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum End {
    Linux,
    Tcplab,
}

/// An emulated flow (at least one end on an emulated host).
pub(super) struct EmuFlow {
    pub(super) idx: usize,
    pub(super) name: String,
    pub(super) variant: String,
    pub(super) from: u32,
    pub(super) to: u32,
    pub(super) ends: (End, End),
    pub(super) bytes: Option<u64>,
    pub(super) duration_ns: Option<u64>,
    pub(super) start_ns: u64,
    pub(super) port_rcv: u16,
    /// The scenario's `mss`, given to a Linux sender as TCP_MAXSEG.
    pub(super) mss: Option<u32>,
    pub(super) shared: Arc<FlowShared>,
    /// tcplab endpoints: [sender, receiver] when that end is tcplab.
    pub(super) eps: [Option<EmuEndpoint>; 2],
}

pub(super) struct EmuEndpoint {
    pub(super) ep: Endpoint,
    pub(super) node: u32,
    pub(super) peer: u32,
    pub(super) lport: u16,
    pub(super) rport: u16,
    pub(super) scales: WindowScales,
    /// Our initial sequence number (the pattern's offset 0 is iss + 1).
    pub(super) iss: u32,
    /// The peer's, learnt from its SYN (a receiver checks payload bytes against the pattern).
    pub(super) peer_iss: Option<u32>,
    pub(super) corrupt: bool,
    pub(super) bsd_ticks: bool,
    pub(super) started: bool,
}


pub(super) struct Plan {
    pub(super) sim: Simulation,
    pub(super) flows: Vec<EmuFlow>,
    pub(super) emulated_hosts: Vec<u32>,
    pub(super) linux_hosts: Vec<u32>,
}

fn err(text: &str, file: &str, field: String, message: impl Into<String>) -> EmuError {
    EmuError::Scenario(ScenarioError { file: file.into(), line: crate::scenario::locate(text, &field), field, message: message.into() })
}

/// Check the scenario for emulation and build its simulation (the links, queues, routers and
/// simulated hosts), taking the emulated flows out of it.
pub(super) fn plan(sc: &Scenario, text: &str, file: &str, seed: Option<u64>) -> Result<Plan, EmuError> {
    let stack_of = |name: &str| sc.nodes.iter().find(|n| n.name == name).and_then(|n| n.stack).unwrap_or(NodeStack::Sim);
    let linux_cc = sys::available_congestion_controls();
    // Validate with the simulator's own checks: Linux variants are checked here, and built as
    // "reno" only to pass the simulator's validation of everything else.
    let mut full = sc.clone();
    let mut emulated = vec![false; sc.tcp.len()];
    for (i, t) in sc.tcp.iter().enumerate() {
        let f = |k: &str| format!("tcp[{i}].{k}");
        let (a, b) = (stack_of(&t.from), stack_of(&t.to));
        let is_linux_variant = t.variant.starts_with("linux-");
        if is_linux_variant {
            let cc = &t.variant["linux-".len()..];
            if !linux_cc.iter().any(|c| c == cc) {
                return Err(err(text, file, f("variant"), format!("unknown Linux variant {:?}: this kernel offers no congestion control {cc:?}; available: {}", t.variant, linux_cc.iter().map(|c| format!("linux-{c}")).collect::<Vec<_>>().join(", "))));
            }
            if a != NodeStack::Linux {
                return Err(err(text, file, f("variant"), format!("{:?} is Linux TCP: its sender {:?} must have stack = \"linux\"", t.variant, t.from)));
            }
            full.tcp[i].variant = "reno".into();
        } else if a == NodeStack::Linux {
            return Err(err(text, file, f("variant"), format!("the sender {:?} runs Linux (stack = \"linux\"): use a Linux variant ({})", t.from, linux_cc.iter().map(|c| format!("linux-{c}")).collect::<Vec<_>>().join(", "))));
        }
        if (a == NodeStack::Sim) != (b == NodeStack::Sim) {
            return Err(err(text, file, f("to"), "a flow runs between two simulated hosts or two emulated ones (stack = \"linux\" or \"tcplab\"), not one of each"));
        }
        emulated[i] = a != NodeStack::Sim;
    }
    for (i, u) in sc.udp.iter().enumerate() {
        if stack_of(&u.from) != NodeStack::Sim || stack_of(&u.to) != NodeStack::Sim {
            return Err(err(text, file, format!("udp[{i}].from"), "UDP sources run between simulated hosts only in emulation"));
        }
    }
    for (i, t) in sc.traffic.iter().enumerate() {
        if stack_of(&t.from) != NodeStack::Sim || stack_of(&t.to) != NodeStack::Sim {
            return Err(err(text, file, format!("traffic[{i}].from"), "traffic sources run between simulated hosts only in emulation"));
        }
    }
    let mut full_sim = crate::build::build(&full, text, file, seed)?;
    let mut linux_hosts = Vec::new();
    let mut emulated_hosts = Vec::new();
    for (i, n) in sc.nodes.iter().enumerate() {
        let st = n.stack.unwrap_or(NodeStack::Sim);
        if st == NodeStack::Sim {
            continue;
        }
        let field = format!("nodes[{i}].stack");
        if n.kind != crate::scenario::NodeKind::Host {
            return Err(err(text, file, field, "only hosts run a real stack; a router is the simulator's"));
        }
        let links = full_sim.links.iter().filter(|l| l.from == i as u32).count();
        if links != 1 {
            return Err(err(text, file, field, format!("an emulated host has exactly one link (its TAP device); {:?} has {links}", n.name)));
        }
        emulated_hosts.push(i as u32);
        if st == NodeStack::Linux {
            linux_hosts.push(i as u32);
        }
    }
    let mut flows = Vec::new();
    for (i, t) in sc.tcp.iter().enumerate() {
        if !emulated[i] {
            continue;
        }
        let conn = &mut full_sim.tcp[i];
        let ends = (if stack_of(&t.from) == NodeStack::Linux { End::Linux } else { End::Tcplab }, if stack_of(&t.to) == NodeStack::Linux { End::Linux } else { End::Tcplab });
        let port_snd = crate::trace::pcap::tcp_sender_port(i as u32);
        let port_rcv = SINK_PORT_BASE + i as u16;
        let take = |ep: &mut Endpoint, node: u32, peer: u32, lport: u16, rport: u16, iss: u32| -> EmuEndpoint {
            let ep = std::mem::replace(ep, Endpoint::new(ep.config().clone(), 0));
            let bsd_ticks = crate::sim::is_bsd(&ep.config().timer_model);
            EmuEndpoint { ep, node, peer, lport, rport, scales: WindowScales::default(), iss, peer_iss: None, corrupt: false, bsd_ticks, started: false }
        };
        let snd = (ends.0 == End::Tcplab).then(|| take(&mut conn.ep[0], conn.from, conn.to, port_snd, port_rcv, 0));
        let rcv = (ends.1 == End::Tcplab).then(|| take(&mut conn.ep[1], conn.to, conn.from, port_rcv, port_snd, 0x8000_0000));
        flows.push(EmuFlow {
            idx: i,
            name: t.name.clone(),
            variant: t.variant.clone(),
            from: conn.from,
            to: conn.to,
            ends,
            bytes: conn.bytes.get(),
            duration_ns: conn.duration.get(),
            start_ns: conn.start.0,
            port_rcv,
            mss: t.mss.map(|m| m.0.min(65495) as u32),
            shared: Arc::new(FlowShared::default()),
            eps: [snd, rcv],
        });
    }
    // The network itself: the scenario without its emulated flows.
    let mut net = full.clone();
    net.tcp = full.tcp.iter().enumerate().filter(|(i, _)| !emulated[*i]).map(|(_, t)| t.clone()).collect();
    let sim = crate::build::build(&net, text, file, seed)?;
    Ok(Plan { sim, flows, emulated_hosts, linux_hosts })
}

