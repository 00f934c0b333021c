//! Build a `Simulation` from a parsed scenario, validating every reference against the topology.
//! Errors name the file, line and field.
//!
//! One section of the scenario per file, in the order [`build`] runs them: [`topology`] (nodes,
//! links, traced directions, routes) with [`queues`] (each direction's discipline), [`traffic`]
//! (`[[udp]]` and `[[traffic]]` sources), [`tcp`] (`[[tcp]]` flows, their options and profiles,
//! scripted drops); [`checks`] holds the error context and the input limits they share.

mod checks;
mod lan;
mod queues;
mod tcp;
mod topology;
mod traffic;

use std::collections::HashMap;

use crate::engine::RngStreams;
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::Simulation;

pub use lan::{DEFAULT_LAN_DELAY, DEFAULT_LAN_MIN_PACKET, DEFAULT_LAN_MTU, DEFAULT_LAN_OVERHEAD, DEFAULT_LAN_RATE_BPS};
pub use checks::{DEFAULT_MONITOR_INTERVAL, DEFAULT_MTU, DEFAULT_QUEUE_PKTS, MAX_LINK_BYTES, MAX_MONITOR_INTERVALS, MAX_OVERLOAD};

/// Validate and build. `text` is the (overridden) TOML text, used to find lines for errors.
pub fn build(sc: &Scenario, text: &str, file: &str, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
    let ctx = checks::Ctx { text, file };
    let seed = seed.unwrap_or(sc.run.seed);
    let rngs = RngStreams::new(seed);
    let (end, interval) = checks::run_times(&ctx, sc)?;

    let (mut nodes, node_ix) = topology::nodes(&ctx, sc, &rngs)?;
    let node = |field: String, name: &str| topology::lookup(&ctx, &node_ix, field, name);
    let (mut links, drop_cfgs) = topology::links(&ctx, sc, &rngs, &nodes, &node, interval)?;
    let lans = lan::lans(&ctx, sc, &rngs, &nodes, &node, &mut links, interval)?;
    topology::select_links(&ctx, sc, &mut links)?;
    let (pairs, out) = topology::routes(&ctx, sc, &mut nodes, &links, &node)?;
    let route = |field: String, from: u32, to: u32| -> Result<(), ScenarioError> {
        topology::check_route(&ctx, field, &nodes, &pairs, &out, from, to, !sc.routes.is_empty())
    };

    let mut flow_names: HashMap<&str, String> = HashMap::new();
    let udp = traffic::udp_sources(&ctx, sc, &rngs, &node, &route, &links, &mut flow_names)?;
    let tcp = tcp::flows(&ctx, sc, &rngs, &node, &route, &nodes, &links, &mut flow_names)?;
    tcp::scripted_drops(&ctx, drop_cfgs, &tcp, &mut links)?;
    let traffic = traffic::connections(&ctx, sc, &rngs, &node, &route, &nodes, &links, &mut flow_names)?;

    let name = sc.name.clone().unwrap_or_else(|| {
        std::path::Path::new(file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "scenario".into())
    });
    let mut ends: Vec<(u32, u32)> = udp.iter().map(|u| (u.from, u.to)).collect();
    ends.extend(tcp.iter().flat_map(|c| [(c.from, c.to), (c.to, c.from)]));
    ends.extend(traffic.iter().flat_map(|t| [(t.from, t.to), (t.to, t.from)]));
    topology::watch_bottlenecks(&nodes, &mut links, ends);
    let mut sim = Simulation::assemble(name, seed, nodes, links, udp, tcp, traffic, end, sc.run.stop_when_done);
    sim.lans = lans;
    if let Some(m) = &sc.run.measure {
        if m.from.0 >= m.to.0 {
            return Err(ctx.err("run.measure.to".to_string(), format!("the window must end after it starts ({} >= {})", checks::fmt_ns(m.from.0 .0), checks::fmt_ns(m.to.0 .0))));
        }
        // A window that opens at or after the end of the run (e.g. a run shortened with --set) is
        // empty: summary.json then has no window_* fields.
        if m.from.0 < end {
            sim.set_measure(m.from.0, m.to.0);
        }
    }
    Ok(sim)
}
