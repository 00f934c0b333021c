//! `[[lan]]`: a shared medium per entry, and for every ordered pair of its stations a link
//! direction (queue, monitor, propagation pipe) whose transmitter waits for the medium. The
//! directions join the point-to-point ones, so routing, tracing and the summary treat them alike.

use std::collections::{HashMap, VecDeque};

use super::checks::{check_name, link_bytes, prob, Ctx, NodeLookup};
use super::queues;
use crate::engine::{RngStreams, SimTime};
use crate::net::ethernet::{Access, Medium, MediumParams, SoloFifo, GAP_BITS};
use crate::net::link::{Link, LinkParams, MAX_LANS, MAX_LAN_STATIONS, SOLO_LAN};
use crate::net::monitor::LinkMonitor;
use crate::net::node::{Node, NodeKind};
use crate::scenario::{LanAccess, Scenario, ScenarioError};
use crate::sim::Lan;

/// Ethernet defaults (IEEE 802.3, 10 Mbit/s).
pub const DEFAULT_LAN_RATE_BPS: u64 = 10_000_000;
pub const DEFAULT_LAN_DELAY: SimTime = SimTime::from_micros(5);
pub const DEFAULT_LAN_OVERHEAD: u64 = 26;
pub const DEFAULT_LAN_MIN_PACKET: u64 = 46;
pub const DEFAULT_LAN_MTU: u64 = 1500;

/// Build every `[[lan]]`, appending its link directions to `links`.
pub(super) fn lans(ctx: &Ctx, sc: &Scenario, rngs: &RngStreams, nodes: &[Node], node: &NodeLookup, links: &mut Vec<Link>, interval: SimTime) -> Result<Vec<Lan>, ScenarioError> {
    if sc.links.is_empty() && sc.lan.is_empty() {
        return Err(ctx.err("links".into(), "missing: a scenario joins its nodes with [[links]], [[lan]] segments, or both"));
    }
    let mut out = Vec::with_capacity(sc.lan.len());
    // Which segment (or point-to-point link) each host's one interface is on.
    let mut host_on: HashMap<u32, String> = HashMap::new();
    for l in links.iter() {
        for n in [l.from, l.to] {
            if nodes[n as usize].kind == NodeKind::Host {
                host_on.entry(n).or_insert_with(|| format!("the point-to-point link {}", l.name));
            }
        }
    }
    let mut names: HashMap<&str, usize> = HashMap::new();
    // The medium every direction but a two-station FIFO segment's holds (`Link::solo`).
    let unused = links.first().map_or_else(|| std::sync::Arc::new(SoloFifo::unused()), |l| l.solo.clone());
    if sc.lan.len() > MAX_LANS {
        return Err(ctx.err("lan".into(), format!("at most {MAX_LANS} lans, got {}", sc.lan.len())));
    }
    for (i, cfg) in sc.lan.iter().enumerate() {
        let f = |k: &str| format!("lan[{i}].{k}");
        check_name(ctx, f("name"), &cfg.name)?;
        if names.insert(cfg.name.as_str(), i).is_some() {
            return Err(ctx.err(f("name"), format!("duplicate lan name {:?}", cfg.name)));
        }
        if cfg.nodes.len() > MAX_LAN_STATIONS {
            return Err(ctx.err(f("nodes"), format!("at most {MAX_LAN_STATIONS} nodes on a lan, got {}", cfg.nodes.len())));
        }
        if cfg.nodes.len() < 2 {
            return Err(ctx.err(f("nodes"), format!("a lan joins at least two nodes, got {}", cfg.nodes.len())));
        }
        let mut stations: Vec<u32> = Vec::with_capacity(cfg.nodes.len());
        for (j, name) in cfg.nodes.iter().enumerate() {
            let n = node(format!("lan[{i}].nodes[{j}]"), name)?;
            if stations.contains(&n) {
                return Err(ctx.err(format!("lan[{i}].nodes[{j}]"), format!("{name:?} is listed twice")));
            }
            if nodes[n as usize].kind == NodeKind::Host {
                if let Some(other) = host_on.get(&n) {
                    return Err(ctx.err(
                        format!("lan[{i}].nodes[{j}]"),
                        format!("host {name:?} is already on {other}; a host has one interface: attach it to one segment, or make it a router (kind = \"router\")"),
                    ));
                }
                host_on.insert(n, format!("lan {:?}", cfg.name));
            }
            stations.push(n);
        }
        let rate = cfg.rate.map_or(DEFAULT_LAN_RATE_BPS as f64, |r| r.0);
        if rate < 1.0 {
            return Err(ctx.err(f("rate"), format!("rate must be at least 1 bit/s, got {rate}")));
        }
        let access = match cfg.access.unwrap_or(LanAccess::Ethernet) {
            LanAccess::Ethernet => Access::Ethernet,
            LanAccess::Fifo => Access::Fifo,
        };
        let positions: Vec<SimTime> = match &cfg.positions {
            None => Vec::new(),
            Some(_) if cfg.delay.is_some() => {
                return Err(ctx.err(f("positions"), "give either delay (one for every pair of stations) or positions, not both"));
            }
            Some(p) if p.len() != stations.len() => {
                return Err(ctx.err(f("positions"), format!("one position per node: {} nodes, {} positions", stations.len(), p.len())));
            }
            Some(p) => p.iter().map(|x| x.0).collect(),
        };
        // With positions, `delay` is the segment's span (the farthest pair).
        let span = match (positions.iter().min(), positions.iter().max()) {
            (Some(&lo), Some(&hi)) => hi - lo,
            _ => cfg.delay.map_or(DEFAULT_LAN_DELAY, |d| d.0),
        };
        let mut params = MediumParams {
            access,
            rate_bps: rate.round() as u64,
            delay: span,
            positions,
            overhead_bytes: link_bytes(ctx, || f("overhead"), cfg.overhead.map_or(DEFAULT_LAN_OVERHEAD, |s| s.0))?,
            min_packet_bytes: link_bytes(ctx, || f("min_packet"), cfg.min_packet.map_or(DEFAULT_LAN_MIN_PACKET, |s| s.0))?,
            gap: SimTime::ZERO,
        };
        params.gap = cfg.gap.map_or_else(|| params.bit_times(GAP_BITS), |d| d.0);
        let mtu = link_bytes(ctx, || f("mtu"), cfg.mtu.map_or(DEFAULT_LAN_MTU, |s| s.0))?;
        if mtu == 0 || mtu < params.min_packet_bytes {
            return Err(ctx.err(f("mtu"), format!("mtu must be positive and at least min_packet ({} B), got {mtu} B", params.min_packet_bytes)));
        }
        // A sender must still be sending when the farthest collision reaches it.
        let shortest = params.frame_time(0);
        if access == Access::Ethernet && shortest.0 < 2 * params.delay.0 {
            return Err(ctx.err(
                f(if params.positions.is_empty() { "delay" } else { "positions" }),
                format!(
                    "a round trip of {} ns exceeds the shortest frame ({} ns): collisions would go undetected; shorten the segment or raise min_packet",
                    2 * params.delay.0,
                    shortest.0
                ),
            ));
        }
        let link_params = LinkParams {
            rate_bps: params.rate_bps,
            delay: params.delay, // per direction below when positions are given
            overhead_bytes: params.overhead_bytes,
            mtu_bytes: mtu,
            loss: prob(ctx, || f("loss"), cfg.loss)?,
            corruption: prob(ctx, || f("corruption"), cfg.corruption)?,
        };
        let lan_ix = out.len() as u32;
        let first_direction = links.len();
        for (si, &from) in stations.iter().enumerate() {
            for (ti, &to) in stations.iter().enumerate() {
                if to == from {
                    continue;
                }
                let mut direction_params = link_params.clone();
                direction_params.delay = params.prop(si as u32, ti as u32);
                let name = format!("{}->{}", nodes[from as usize].name, nodes[to as usize].name);
                if links.iter().any(|l| l.name == name) {
                    return Err(ctx.err(f("nodes"), format!("{name} is already a link direction; two nodes may share one link or one segment, not both")));
                }
                let queue = queues::make_queue(ctx, || f("queue"), cfg.queue.as_ref(), params.rate_bps, rngs, &name)?;
                let trace = sc.run.trace.links.iter().any(|t| t == "all" || *t == name || *t == cfg.name);
                let watched = trace || sc.run.monitor_links.iter().any(|t| t == "all" || *t == name || *t == cfg.name);
                let idx = links.len() as u64;
                let monitor = {
                    let mut m = LinkMonitor::new(interval, trace);
                    m.record_intervals = watched;
                    m
                };
                let lan = (lan_ix << 16) | si as u32;
                links.push(Link::new(name, from, to, direction_params, queue, monitor, rngs.stream("link-loss", idx), lan, 4, unused.clone()));
            }
        }
        let rng = rngs.stream(&format!("lan-backoff/{}", cfg.name), 0);
        let mut medium = Medium::new(cfg.name.clone(), params, stations.len(), rng);
        if cfg.trace {
            medium.trace = Some(Vec::new());
        }
        // A two-station FIFO segment without its trace: its two directions share the medium's
        // state directly (`Lan::solo`).
        let solo = access == Access::Fifo && stations.len() == 2 && medium.trace.is_none();
        if solo {
            let shared = std::sync::Arc::new(SoloFifo::new(medium.params.clone()));
            for link in &mut links[first_direction..] {
                link.solo = shared.clone();
                link.lan |= SOLO_LAN;
            }
        }
        out.push(Lan {
            solo,
            fifo: access == Access::Fifo,
            fifo_waiting: 0,
            medium,
            pending: vec![VecDeque::new(); stations.len()],
            scratch: Vec::new(),
            station_nodes: stations,
        });
    }
    Ok(out)
}
