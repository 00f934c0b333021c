//! The network of a scenario: nodes, the two directions of every link with their queues and
//! monitors, which directions are traced or captured, and the routing tables; plus the path
//! questions later sections ask (is there a route, which link is the slowest, the path's RTT).

use std::collections::HashMap;

use super::checks::{check_name, link_bytes, prob, Ctx, NodeLookup, DEFAULT_MTU};
use super::queues;
use crate::engine::{RngStreams, SimTime};
use crate::net::link::{Link, LinkParams};
use crate::net::monitor::LinkMonitor;
use crate::net::node::{Node, NodeKind, ProcessingDelay, NO_ROUTE};
use crate::net::routing;
use crate::scenario::{self, DelayCfg, DropCfg, Scenario, ScenarioError};

/// A link direction's scripted drops as written: (link index, "ab"/"ba", the list, whether the
/// direction's own table holds it); resolved once the TCP flows exist (`tcp::scripted_drops`).
pub(super) type DirectionDrops = (usize, &'static str, Option<DropCfg>, bool);

/// `[[nodes]]`, and the index of their names.
pub(super) fn nodes<'a>(ctx: &Ctx, sc: &'a Scenario, rngs: &RngStreams) -> Result<(Vec<Node>, HashMap<&'a str, u32>), ScenarioError> {
    if sc.nodes.is_empty() {
        return Err(ctx.err("nodes".into(), "at least one node is required"));
    }
    let mut node_ix: HashMap<&str, u32> = HashMap::new();
    // Sized exactly: at 10^4+ flows a doubling Vec leaves up to half its bytes unused (issue 13).
    let mut nodes = Vec::with_capacity(sc.nodes.len());
    for (i, n) in sc.nodes.iter().enumerate() {
        check_name(ctx, format!("nodes[{i}].name"), &n.name)?;
        if node_ix.insert(n.name.as_str(), i as u32).is_some() {
            return Err(ctx.err(format!("nodes[{i}].name"), format!("duplicate node name {:?}", n.name)));
        }
        let processing = match &n.processing_delay {
            None => ProcessingDelay::None,
            Some(DelayCfg::Fixed { value }) => ProcessingDelay::Fixed(value.0),
            Some(DelayCfg::Uniform { min, max }) => {
                if max.0 < min.0 {
                    return Err(ctx.err(format!("nodes[{i}].processing_delay"), "max must not be below min"));
                }
                ProcessingDelay::Uniform(min.0, max.0)
            }
            Some(DelayCfg::Normal { mean, stddev }) => ProcessingDelay::Normal(mean.0 .0 as f64, stddev.0 .0 as f64),
        };
        let delay_on_send = match n.processing_at {
            None | Some(scenario::ProcessingAt::Arrival) => false,
            Some(scenario::ProcessingAt::Send) if n.processing_delay.is_none() => {
                return Err(ctx.err(format!("nodes[{i}].processing_at"), "needs a processing_delay to place"));
            }
            Some(scenario::ProcessingAt::Send) => processing != ProcessingDelay::None,
        };
        let delay_on_arrival = processing != ProcessingDelay::None && !delay_on_send;
        nodes.push(Node {
            delay_on_send,
            delay_on_arrival,
            name: n.name.clone(),
            kind: match n.kind {
                scenario::NodeKind::Host => NodeKind::Host,
                scenario::NodeKind::Router => NodeKind::Router,
            },
            next_link: Vec::new(),
            only_link: None,
            processing,
            rng: rngs.stream("node-delay", i as u64),
            busy_until: SimTime::ZERO,
        });
    }
    Ok((nodes, node_ix))
}

/// Looks a node up by name; the error lists the known names.
pub(super) fn lookup(ctx: &Ctx, node_ix: &HashMap<&str, u32>, field: String, name: &str) -> Result<u32, ScenarioError> {
    node_ix.get(name).copied().ok_or_else(|| {
        let mut known: Vec<&str> = node_ix.keys().copied().collect();
        known.sort();
        ctx.err(field, format!("no node named {name:?} (nodes: {})", known.join(", ")))
    })
}

/// `[[links]]`: two directions each, with their queue discipline and monitor.
pub(super) fn links(ctx: &Ctx, sc: &Scenario, rngs: &RngStreams, nodes: &[Node], node: &NodeLookup, interval: SimTime) -> Result<(Vec<Link>, Vec<DirectionDrops>), ScenarioError> {
    let mut links: Vec<Link> = Vec::with_capacity(2 * sc.links.len());
    // The medium a point-to-point direction holds and never uses (`Link::solo`).
    let unused = std::sync::Arc::new(crate::net::ethernet::SoloFifo::unused());
    let mut drop_cfgs = Vec::with_capacity(2 * sc.links.len());
    let mut names = HashMap::new();
    for (i, l) in sc.links.iter().enumerate() {
        let a = node(format!("links[{i}].a"), &l.a)?;
        let b = node(format!("links[{i}].b"), &l.b)?;
        if a == b {
            return Err(ctx.err(format!("links[{i}].b"), format!("a link must join two different nodes (both are {:?})", l.a)));
        }
        for (dir, (from, to), ov) in [("ab", (a, b), &l.ab), ("ba", (b, a), &l.ba)] {
            let ov = ov.clone().unwrap_or_default();
            let f = |k: &str| {
                if (dir == "ab" && l.ab.is_some()) || (dir == "ba" && l.ba.is_some()) {
                    format!("links[{i}].{dir}.{k}")
                } else {
                    format!("links[{i}].{k}")
                }
            };
            let rate = ov.rate.unwrap_or(l.rate).0;
            if rate < 1.0 {
                return Err(ctx.err(f("rate"), format!("rate must be at least 1 bit/s, got {rate}")));
            }
            let params = LinkParams {
                rate_bps: rate.round() as u64,
                delay: ov.delay.unwrap_or(l.delay).0,
                overhead_bytes: link_bytes(ctx, || f("overhead"), ov.overhead.or(l.overhead).map_or(0, |s| s.0))?,
                mtu_bytes: link_bytes(ctx, || f("mtu"), ov.mtu.or(l.mtu).map_or(DEFAULT_MTU as u64, |s| s.0))?,
                loss: prob(ctx, || f("loss"), ov.loss.or(l.loss))?,
                corruption: prob(ctx, || f("corruption"), ov.corruption.or(l.corruption))?,
            };
            if params.mtu_bytes == 0 {
                return Err(ctx.err(f("mtu"), "mtu must be positive"));
            }
            let idx = links.len() as u64;
            let name = format!("{}->{}", nodes[from as usize].name, nodes[to as usize].name);
            let queue = queues::make_queue(ctx, || f("queue"), ov.queue.as_deref().or(l.queue.as_deref()), params.rate_bps, rngs, &name)?;
            if names.insert(name.clone(), i).is_some() {
                return Err(ctx.err(format!("links[{i}]"), format!("a second link joins {} and {}; parallel links are not supported", l.a, l.b)));
            }
            let pipe_capacity = ((params.rate_bps as f64 * params.delay.as_secs_f64() / 320.0).ceil() as usize + 1).min(16);
            let trace = sc.run.trace.links.iter().any(|t| t == "all" || *t == name || l.name.as_deref() == Some(t.as_str()));
            let watched = trace || sc.run.monitor_links.iter().any(|t| t == "all" || *t == name || l.name.as_deref() == Some(t.as_str()));
            let monitor = {
                let mut m = LinkMonitor::new(interval, trace);
                m.record_intervals = watched;
                m
            };
            // The pipe's room is sized once here so a link's first packets in flight do not
            // allocate on the hot path (issue 13): up to 16, or what its bandwidth-delay product
            // holds in 40-byte packets; a fuller pipe still grows, once.
            links.push(Link::new(name, from, to, params, queue, monitor, rngs.stream("link-loss", idx), crate::net::link::NO_LAN, pipe_capacity, unused.clone()));
            drop_cfgs.push((i, dir, ov.drop.clone().or_else(|| l.drop.clone()), (dir == "ab" && l.ab.as_ref().is_some_and(|o| o.drop.is_some())) || (dir == "ba" && l.ba.as_ref().is_some_and(|o| o.drop.is_some()))));
        }
    }
    Ok((links, drop_cfgs))
}

/// `run.trace.links`, `run.trace.pcap` and `run.monitor_links` name existing link directions;
/// the pcap ones get their capture.
pub(super) fn select_links(ctx: &Ctx, sc: &Scenario, links: &mut [Link]) -> Result<(), ScenarioError> {
    for (i, t) in sc.run.trace.links.iter().enumerate() {
        if t != "all" && !links.iter().any(|l| &l.name == t) && !sc.links.iter().any(|l| l.name.as_deref() == Some(t)) && !sc.lan.iter().any(|c| c.name == *t) {
            let known: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
            return Err(ctx.err(
                format!("run.trace.links[{i}]"),
                format!("no link direction named {t:?}; write \"all\", a link's name, or a direction of a link: {}", known.join(", ")),
            ));
        }
    }

    for (i, t) in sc.run.trace.pcap.iter().enumerate() {
        let mut hit = false;
        for l in links.iter_mut() {
            let named = sc.links.iter().any(|c| c.name.as_deref() == Some(t.as_str()) && (format!("{}->{}", c.a, c.b) == l.name || format!("{}->{}", c.b, c.a) == l.name));
            let on_lan = l.on_lan().is_some_and(|(x, _)| sc.lan[x as usize].name == *t);
            if t == "all" || *t == l.name || named || on_lan {
                l.monitor.pcap = Some(Box::new(crate::trace::pcap::link_capture()));
                hit = true;
            }
        }
        if !hit {
            let known: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
            return Err(ctx.err(
                format!("run.trace.pcap[{i}]"),
                format!("no link direction named {t:?}; write \"all\", a link's name, or a direction of a link: {}", known.join(", ")),
            ));
        }
    }

    for (i, t) in sc.run.monitor_links.iter().enumerate() {
        if t != "all" && !links.iter().any(|l| &l.name == t) && !sc.links.iter().any(|l| l.name.as_deref() == Some(t)) && !sc.lan.iter().any(|c| c.name == *t) {
            let known: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
            return Err(ctx.err(
                format!("run.monitor_links[{i}]"),
                format!("no link direction named {t:?}; write \"all\", a link's name, or a direction of a link: {}", known.join(", ")),
            ));
        }
    }
    Ok(())
}

/// The routing tables: a table only for nodes with more than one outgoing link (one BFS each);
/// a node with a single link sends everything over it. `[[routes]]` then replace entries.
/// Returns each link direction's (from, to) and each node's outgoing link directions.
#[allow(clippy::type_complexity)]
pub(super) fn routes(ctx: &Ctx, sc: &Scenario, nodes: &mut [Node], links: &[Link], node: &NodeLookup) -> Result<(Vec<(u32, u32)>, Vec<Vec<u32>>), ScenarioError> {
    let pairs: Vec<(u32, u32)> = links.iter().map(|l| (l.from, l.to)).collect();
    let forwards: Vec<bool> = nodes.iter().map(|n| n.kind == NodeKind::Router).collect();
    let out = routing::out_links(nodes.len(), &pairs);
    for (i, n) in nodes.iter_mut().enumerate() {
        match out[i].len() {
            0 => {}
            1 => n.only_link = Some(out[i][0]),
            _ => n.next_link = routing::first_hops(i, &pairs, &out, &forwards),
        }
    }
    for (i, r) in sc.routes.iter().enumerate() {
        let f = |k: &str| format!("routes[{i}].{k}");
        let at = node(f("at"), &r.at)?;
        let to = node(f("to"), &r.to)?;
        let via = node(f("via"), &r.via)?;
        if at == to {
            return Err(ctx.err(f("to"), format!("{:?} is the node the route is at; a route is for another destination", r.to)));
        }
        let Some(&l) = out[at as usize].iter().find(|&&l| pairs[l as usize].1 == via) else {
            return Err(ctx.err(f("via"), format!("no link from {:?} to {:?}: `via` must be a neighbour of `at`", r.at, r.via)));
        };
        if via != to && !forwards[via as usize] {
            return Err(ctx.err(f("via"), format!("{:?} is a host and hosts do not forward; make {:?} a router (kind = \"router\")", r.via, r.via)));
        }
        let n = &mut nodes[at as usize];
        if n.only_link.is_none() {
            n.next_link[to as usize] = l;
        }
    }
    Ok((pairs, out))
}

/// The interval series by default: the slowest direction on every flow's path, both ways.
pub(super) fn watch_bottlenecks(nodes: &[Node], links: &mut [Link], mut ends: Vec<(u32, u32)>) {
    ends.sort_unstable();
    ends.dedup();
    for (a, b) in ends {
        if let Some(l) = slowest_on_path(nodes, links, a, b) {
            links[l as usize].monitor.record_intervals = true;
        }
    }
}

/// A routed path from `from` to `to` exists (followed hop by hop through the tables the run uses);
/// otherwise an error saying why: not connected, only through a host, or a loop of explicit routes.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_route(
    ctx: &Ctx,
    field: String,
    nodes: &[Node],
    pairs: &[(u32, u32)],
    out: &[Vec<u32>],
    from: u32,
    to: u32,
    explicit: bool,
) -> Result<(), ScenarioError> {
    let name = |i: u32| &nodes[i as usize].name;
    let mut at = from;
    let mut path = vec![from];
    for _ in 0..=nodes.len() {
        if at == to {
            return Ok(());
        }
        let l = if at != from && nodes[at as usize].kind == NodeKind::Host { NO_ROUTE } else { nodes[at as usize].route(to) };
        if l == NO_ROUTE {
            let message = match routing::path_if_all_forward(from as usize, to as usize, pairs, out) {
                None => format!("no route from {:?} to {:?}: the destination is not connected", name(from), name(to)),
                Some(p) => {
                    let host = p[1..p.len() - 1].iter().find(|&&n| nodes[n].kind == NodeKind::Host).map_or(at, |&n| n as u32);
                    format!(
                        "no route from {:?} to {:?}: the only path runs through host {:?}, and hosts do not forward; make {:?} a router (kind = \"router\")",
                        name(from), name(to), name(host), name(host)
                    )
                }
            };
            return Err(ctx.err(field, message));
        }
        at = pairs[l as usize].1;
        path.push(at);
    }
    let shown: Vec<&str> = path.iter().take(12).map(|&n| name(n).as_str()).collect();
    let why = if explicit { "check `routes`" } else { "a routing loop" };
    Err(ctx.err(field, format!("no route from {:?} to {:?}: packets loop ({} ...); {why}", name(from), name(to), shown.join(" -> "))))
}

/// The slowest link direction on the routed path from `from` to `to`.
pub(super) fn slowest_on_path(nodes: &[Node], links: &[Link], from: u32, to: u32) -> Option<u32> {
    let mut at = from;
    let mut best: Option<u32> = None;
    for _ in 0..nodes.len() {
        if at == to {
            return best;
        }
        let l = nodes[at as usize].route(to);
        if l == NO_ROUTE {
            return None;
        }
        if best.is_none_or(|b| links[l as usize].params.rate_bps < links[b as usize].params.rate_bps) {
            best = Some(l);
        }
        at = links[l as usize].to;
    }
    None
}

/// The slowest rate on the routed path from `from` to `to` and the round-trip propagation delay
/// (out and back, transmission times not counted).
pub(super) fn path_rate_and_rtt(nodes: &[Node], links: &[Link], from: u32, to: u32) -> (u64, SimTime) {
    let mut rate = u64::MAX;
    let mut rtt = SimTime::ZERO;
    for (a, b) in [(from, to), (to, from)] {
        let mut at = a;
        for _ in 0..nodes.len() {
            if at == b {
                break;
            }
            let l = nodes[at as usize].route(b);
            if l == NO_ROUTE {
                break;
            }
            let p = &links[l as usize].params;
            if a == from {
                rate = rate.min(p.rate_bps);
            }
            rtt = rtt + p.delay;
            at = links[l as usize].to;
        }
    }
    (if rate == u64::MAX { 0 } else { rate }, rtt)
}

