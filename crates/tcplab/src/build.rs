//! Build a `Simulation` from a parsed scenario, validating every reference against the topology.
//! Errors name the file, line and field.

use std::collections::HashMap;

use tcplab_tcp::{AckPolicy, EndpointConfig, TimerModel};

use crate::apps::conversation::OnOffParams;
use crate::apps::tcplib_tables::{AppMix, ConvKind};
use crate::apps::traffic::{SourceKind, TrafficSource};
use crate::apps::udp::{Pattern, UdpSource};
use crate::engine::{RngStreams, SimTime};
use crate::net::link::{Link, LinkParams};
use crate::net::monitor::LinkMonitor;
use crate::net::node::{Node, NodeKind, ProcessingDelay, NO_ROUTE};
use crate::net::link::{DropScript, ScriptedDrop};
use crate::net::queue::{DropTail, QueueDisc, QueueLimit};
use crate::net::red::{AredParams, Red, RedParams};
use crate::net::vq::{VirtualQueue, VqParams};
use crate::net::routing;
use crate::scenario::units::QueueSize;
use crate::scenario::{self, DelayCfg, QueueCfg, Scenario, ScenarioError, SizeDist, TrafficKind, UdpPattern};
use crate::sim::Simulation;
use crate::sim::{self, TcpConn};
use tcplab_tcp::rto::fine::MAX_RTO;

/// Defaults written in the README and the schema.
pub const DEFAULT_QUEUE_PKTS: u32 = 50;
pub const DEFAULT_MTU: u32 = 65536;
pub const DEFAULT_MONITOR_INTERVAL: SimTime = SimTime::from_millis(100);

struct Ctx<'a> {
    text: &'a str,
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, field: String, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: self.file.to_string(), line: scenario::locate(self.text, &field), field, message: message.into() }
    }
}

/// A start time: fixed, or drawn from the traffic stream `stream`/`index` (the seed decides it,
/// the TCP variant does not).
fn start_time(ctx: &Ctx, field: String, start: Option<scenario::StartCfg>, rngs: &RngStreams, stream: &str, index: usize) -> Result<SimTime, ScenarioError> {
    use rand::Rng;
    match start {
        None => Ok(SimTime::ZERO),
        Some(scenario::StartCfg::At(d)) => Ok(d.0),
        Some(scenario::StartCfg::Random(scenario::StartDist::Uniform { min, max })) => {
            if max.0 < min.0 {
                return Err(ctx.err(format!("{field}.max"), "max must not be below min"));
            }
            Ok(SimTime(rngs.stream(stream, index as u64).gen_range(min.0 .0..=max.0 .0)))
        }
    }
}

fn prob(ctx: &Ctx, field: String, p: Option<f64>) -> Result<f64, ScenarioError> {
    let p = p.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&p) || p.is_nan() {
        return Err(ctx.err(field, format!("expected a probability between 0 and 1, got {p}")));
    }
    Ok(p)
}

fn make_queue(ctx: &Ctx, field: String, q: Option<&QueueCfg>, rate_bps: u64, rng: crate::engine::StreamRng) -> Result<Box<dyn QueueDisc>, ScenarioError> {
    let Some(q) = q else { return Ok(Box::new(DropTail::new(QueueLimit::Packets(DEFAULT_QUEUE_PKTS), false))) };
    let limit = match q.limit.0 {
        QueueSize::Packets(n) => QueueLimit::Packets(n),
        QueueSize::Bytes(b) => QueueLimit::Bytes(b),
    };
    let red_fields: [(&str, bool); 11] = [
        ("min_th", q.min_th.is_some()),
        ("max_th", q.max_th.is_some()),
        ("w_q", q.w_q.is_some()),
        ("max_p", q.max_p.is_some()),
        ("gentle", q.gentle.is_some()),
        ("wait", q.wait.is_some()),
        ("byte_mode", q.byte_mode.is_some()),
        ("mean_pktsize", q.mean_pktsize.is_some()),
        ("ecn", q.ecn.is_some()),
        ("target_delay", q.target_delay.is_some()),
        ("interval", q.interval.is_some()),
    ];
    let vq_fields: [(&str, bool); 4] = [
        ("theta", q.theta.is_some()),
        ("phi", q.phi.is_some()),
        ("packet_size", q.packet_size.is_some()),
        ("cap_pkts", q.cap_pkts.is_some()),
    ];
    if q.kind != "vq" {
        if let Some((k, _)) = vq_fields.iter().find(|f| f.1) {
            return Err(ctx.err(format!("{field}.{k}"), format!("{k} is a virtual-queue parameter (kind = \"vq\")")));
        }
    }
    match q.kind.as_str() {
        "vq" => {
            if let Some((k, _)) = red_fields.iter().find(|f| f.1) {
                return Err(ctx.err(format!("{field}.{k}"), format!("{k} is a RED parameter; vq takes limit, theta, phi, packet_size, cap_pkts")));
            }
            if q.count_in_service {
                return Err(ctx.err(format!("{field}.count_in_service"), "the virtual-queue marker's FIFO counts waiting packets only; count_in_service applies to droptail"));
            }
            let packet_size = match q.packet_size {
                Some(s) if s.0 == 0 || s.0 > u32::MAX as u64 => return Err(ctx.err(format!("{field}.packet_size"), "must be a positive size")),
                Some(s) => s.0 as u32,
                None => 1000,
            };
            let p = VqParams {
                theta: q.theta.unwrap_or(0.9),
                phi: q.phi.unwrap_or(0.125),
                packet_size,
                cap_pkts: q.cap_pkts.unwrap_or(30.0),
                limit,
                link_rate_bps: rate_bps,
            };
            p.validate().map_err(|(k, m)| ctx.err(format!("{field}.{k}"), m))?;
            Ok(Box::new(VirtualQueue::new(p, rng)))
        }
        "droptail" => {
            if let Some((k, _)) = red_fields.iter().find(|f| f.1) {
                return Err(ctx.err(format!("{field}.{k}"), format!("{k} is a RED parameter; droptail takes limit and count_in_service (use kind = \"red\")")));
            }
            Ok(Box::new(DropTail::new(limit, q.count_in_service)))
        }
        "red" | "ared" => {
            if q.count_in_service {
                return Err(ctx.err(format!("{field}.count_in_service"), "RED counts waiting packets only (as ns-2); count_in_service applies to droptail"));
            }
            let ared = q.kind == "ared";
            if !ared {
                for (k, set) in &red_fields[9..] {
                    if *set {
                        return Err(ctx.err(format!("{field}.{k}"), format!("{k} is an Adaptive RED parameter (kind = \"ared\")")));
                    }
                }
            }
            let mean = match q.mean_pktsize {
                Some(s) if s.0 == 0 || s.0 > u32::MAX as u64 => return Err(ctx.err(format!("{field}.mean_pktsize"), "must be a positive size")),
                Some(s) => s.0 as u32,
                None => 500,
            };
            let mut p = if ared {
                let mut a = AredParams::default();
                if let Some(d) = q.target_delay {
                    if d.0 .0 == 0 {
                        return Err(ctx.err(format!("{field}.target_delay"), "must be positive"));
                    }
                    a.target_delay = d.0;
                }
                if let Some(d) = q.interval {
                    if d.0 .0 == 0 {
                        return Err(ctx.err(format!("{field}.interval"), "must be positive"));
                    }
                    a.interval = d.0;
                }
                RedParams::ared(limit, rate_bps, mean, a)
            } else {
                let mut p = RedParams::ns2(limit, rate_bps);
                p.mean_pktsize = mean;
                p
            };
            if let Some(v) = q.min_th {
                p.min_th = v;
                if ared && q.max_th.is_none() {
                    p.max_th = 3.0 * v;
                }
            }
            if let Some(v) = q.max_th {
                p.max_th = v;
            }
            if let Some(v) = q.w_q {
                p.w_q = v;
            }
            if let Some(v) = q.max_p {
                p.max_p = v;
            }
            if let Some(v) = q.gentle {
                p.gentle = v;
            }
            if let Some(v) = q.wait {
                p.wait = v;
            }
            if let Some(v) = q.byte_mode {
                p.byte_mode = v;
            }
            if let Some(v) = q.ecn {
                p.ecn = v;
            }
            p.validate().map_err(|(k, m)| ctx.err(format!("{field}.{k}"), m))?;
            Ok(Box::new(Red::new(p, rng)))
        }
        other => Err(ctx.err(format!("{field}.kind"), format!("unknown queue discipline {other:?}; known: droptail, red, ared, vq"))),
    }
}

/// Validate and build. `text` is the (overridden) TOML text, used to find lines for errors.
pub fn build(sc: &Scenario, text: &str, file: &str, seed: Option<u64>) -> Result<Simulation, ScenarioError> {
    let ctx = Ctx { text, file };
    let seed = seed.unwrap_or(sc.run.seed);
    let rngs = RngStreams::new(seed);
    let end = sc.run.duration.0;
    if end.0 == 0 {
        return Err(ctx.err("run.duration".into(), "the run duration must be positive"));
    }
    let interval = sc.run.monitor_interval.map(|d| d.0).unwrap_or(DEFAULT_MONITOR_INTERVAL);
    if interval.0 == 0 {
        return Err(ctx.err("run.monitor_interval".into(), "must be positive"));
    }
    check_monitor_interval(&ctx, end, interval)?;

    // Nodes
    if sc.nodes.is_empty() {
        return Err(ctx.err("nodes".into(), "at least one node is required"));
    }
    let mut node_ix: HashMap<&str, u32> = HashMap::new();
    // Sized exactly: at 10^4+ flows a doubling Vec leaves up to half its bytes unused (issue 13).
    let mut nodes = Vec::with_capacity(sc.nodes.len());
    for (i, n) in sc.nodes.iter().enumerate() {
        check_name(&ctx, format!("nodes[{i}].name"), &n.name)?;
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
        nodes.push(Node {
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
    let node = |field: String, name: &str| -> Result<u32, ScenarioError> {
        node_ix.get(name).copied().ok_or_else(|| {
            let mut known: Vec<&str> = node_ix.keys().copied().collect();
            known.sort();
            ctx.err(field, format!("no node named {name:?} (nodes: {})", known.join(", ")))
        })
    };

    // Links: two directions each.
    let mut links: Vec<Link> = Vec::with_capacity(2 * sc.links.len());
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
                overhead_bytes: link_bytes(&ctx, f("overhead"), ov.overhead.or(l.overhead).map_or(0, |s| s.0))?,
                mtu_bytes: link_bytes(&ctx, f("mtu"), ov.mtu.or(l.mtu).map_or(DEFAULT_MTU as u64, |s| s.0))?,
                loss: prob(&ctx, f("loss"), ov.loss.or(l.loss))?,
                corruption: prob(&ctx, f("corruption"), ov.corruption.or(l.corruption))?,
            };
            if params.mtu_bytes == 0 {
                return Err(ctx.err(f("mtu"), "mtu must be positive"));
            }
            let idx = links.len() as u64;
            let queue = make_queue(&ctx, f("queue"), ov.queue.as_ref().or(l.queue.as_ref()), params.rate_bps, rngs.stream("red", idx))?;
            let name = format!("{}->{}", nodes[from as usize].name, nodes[to as usize].name);
            if names.insert(name.clone(), i).is_some() {
                return Err(ctx.err(format!("links[{i}]"), format!("a second link joins {} and {}; parallel links are not supported", l.a, l.b)));
            }
            let pipe_capacity = ((params.rate_bps as f64 * params.delay.as_secs_f64() / 320.0).ceil() as usize + 1).min(16);
            let trace = sc.run.trace.links.iter().any(|t| t == "all" || *t == name || l.name.as_deref() == Some(t.as_str()));
            let watched = trace || sc.run.monitor_links.iter().any(|t| t == "all" || *t == name || l.name.as_deref() == Some(t.as_str()));
            links.push(Link {
                name,
                from,
                to,
                params,
                aqm: queue.sees_every_arrival(),
                queue,
                busy: None,
                // Sized once here so a link's first packets in flight do not allocate on the hot
                // path (issue 13): up to 16, or what its bandwidth-delay product holds in 40-byte
                // packets; a fuller pipe still grows, once.
                pipe: std::collections::VecDeque::with_capacity(pipe_capacity),
                monitor: {
                    let mut m = LinkMonitor::new(interval, trace);
                    m.record_intervals = watched;
                    m
                },
                rng: rngs.stream("link-loss", idx),
                script: DropScript::default(),
                scripted: false,
            });
            drop_cfgs.push((i, dir, ov.drop.clone().or_else(|| l.drop.clone()), (dir == "ab" && l.ab.as_ref().is_some_and(|o| o.drop.is_some())) || (dir == "ba" && l.ba.as_ref().is_some_and(|o| o.drop.is_some()))));
        }
    }
    for (i, t) in sc.run.trace.links.iter().enumerate() {
        if t != "all" && !links.iter().any(|l| &l.name == t) && !sc.links.iter().any(|l| l.name.as_deref() == Some(t)) {
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
            if t == "all" || *t == l.name || named {
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
        if t != "all" && !links.iter().any(|l| &l.name == t) && !sc.links.iter().any(|l| l.name.as_deref() == Some(t)) {
            let known: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
            return Err(ctx.err(
                format!("run.monitor_links[{i}]"),
                format!("no link direction named {t:?}; write \"all\", a link's name, or a direction of a link: {}", known.join(", ")),
            ));
        }
    }

    // Routing: a table only for nodes with more than one outgoing link (one BFS each); a node
    // with a single link sends everything over it.
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
    let route = |field: String, from: u32, to: u32| -> Result<(), ScenarioError> {
        check_route(&ctx, field, &nodes, &pairs, &out, from, to, !sc.routes.is_empty())
    };
    // UDP sources
    let mut udp = Vec::new();
    let mut flow_names: HashMap<&str, String> = HashMap::new();
    for (i, u) in sc.udp.iter().enumerate() {
        check_name(&ctx, format!("udp[{i}].name"), &u.name)?;
        let from = node(format!("udp[{i}].from"), &u.from)?;
        let to = node(format!("udp[{i}].to"), &u.to)?;
        if from == to {
            return Err(ctx.err(format!("udp[{i}].to"), "source and destination are the same node"));
        }
        route(format!("udp[{i}].to"), from, to)?;
        if flow_names.insert(u.name.as_str(), format!("udp[{i}]")).is_some() {
            return Err(ctx.err(format!("udp[{i}].name"), format!("duplicate flow name {:?}", u.name)));
        }
        let size = u.packet_size.0;
        if size == 0 || size > u32::MAX as u64 {
            return Err(ctx.err(format!("udp[{i}].packet_size"), "packet size must be positive"));
        }
        let size_bits = size as f64 * 8.0;
        let pattern = match u.pattern {
            UdpPattern::Cbr => {
                let Some(rate) = u.rate else { return Err(ctx.err(format!("udp[{i}].rate"), "a cbr source needs `rate`")) };
                Pattern::Cbr { interval: SimTime(((size_bits / rate.0) * 1e9).round().max(1.0) as u64) }
            }
            UdpPattern::Poisson => {
                let mean = match (u.interval, u.rate) {
                    (Some(iv), None) => iv.0 .0 as f64,
                    (None, Some(r)) => size_bits / r.0 * 1e9,
                    _ => return Err(ctx.err(format!("udp[{i}].interval"), "a poisson source needs exactly one of `interval` or `rate`")),
                };
                if mean <= 0.0 {
                    return Err(ctx.err(format!("udp[{i}].interval"), "the mean interval must be positive"));
                }
                Pattern::Poisson { mean_interval_ns: mean, exp_sizes: u.size_dist == Some(SizeDist::Exponential) }
            }
            UdpPattern::Bursts => {
                let Some(b) = u.burst_size else { return Err(ctx.err(format!("udp[{i}].burst_size"), "a bursts source needs `burst_size`")) };
                let Some(iv) = u.burst_interval else { return Err(ctx.err(format!("udp[{i}].burst_interval"), "a bursts source needs `burst_interval`")) };
                if iv.0 .0 == 0 || b.0 == 0 {
                    return Err(ctx.err(format!("udp[{i}].burst_interval"), "burst size and interval must be positive"));
                }
                Pattern::Bursts { mean_burst_bytes: b.0 as f64, mean_interval_ns: iv.0 .0 as f64 }
            }
            UdpPattern::Onoff => {
                let Some(rate) = u.rate else { return Err(ctx.err(format!("udp[{i}].rate"), "an onoff source needs `rate` (the rate while on)")) };
                let mean = |k: &str, d: Option<scenario::units::Duration>| match d {
                    Some(d) if d.0 .0 > 0 => Ok(d.0 .0 as f64),
                    _ => Err(ctx.err(format!("udp[{i}].{k}"), format!("an onoff source needs a positive `{k}` (mean {k} period)"))),
                };
                Pattern::OnOff {
                    interval: SimTime(((size_bits / rate.0) * 1e9).round().max(1.0) as u64),
                    mean_on_ns: mean("on", u.on)?,
                    mean_off_ns: mean("off", u.off)?,
                    pareto_shape: pareto_shape(&ctx, &format!("udp[{i}].shape"), u.shape)?,
                }
            }
        };
        if u.pattern != UdpPattern::Onoff {
            for (k, present) in [("on", u.on.is_some()), ("off", u.off.is_some()), ("shape", u.shape.is_some())] {
                if present {
                    return Err(ctx.err(format!("udp[{i}].{k}"), format!("`{k}` applies to pattern = \"onoff\" only")));
                }
            }
        }
        check_offered_rate(&ctx, i, u, &pattern, size, &links, from)?;
        let start = start_time(&ctx, format!("udp[{i}].start"), u.start, &rngs, "traffic:start/udp", i)?;
        let stop = u.stop.map_or(SimTime::MAX, |d| d.0);
        udp.push(UdpSource {
            name: u.name.clone(),
            from,
            to,
            pattern,
            packet_size: size as u32,
            start,
            stop,
            rng: rngs.stream("traffic", i as u64),
            on_until: SimTime::ZERO,
            seq: 0,
            sent_pkts: 0,
            sent_bytes: 0,
            rcvd_pkts: 0,
            rcvd_bytes: 0,
            delay_sum_ns: 0,
            burst_queue: Default::default(),
        });
    }

    // TCP connections
    let mut tcp = Vec::with_capacity(sc.tcp.len());
    for (i, t) in sc.tcp.iter().enumerate() {
        let f = |k: &str| format!("tcp[{i}].{k}");
        check_name(&ctx, f("name"), &t.name)?;
        let from = node(f("from"), &t.from)?;
        let to = node(f("to"), &t.to)?;
        if from == to {
            return Err(ctx.err(f("to"), "sender and receiver are the same node"));
        }
        route(f("to"), from, to)?;
        route(f("from"), to, from)?;
        if flow_names.insert(t.name.as_str(), f("name")).is_some() {
            return Err(ctx.err(f("name"), format!("duplicate flow name {:?}", t.name)));
        }
        if t.variant.starts_with("linux-") {
            return Err(ctx.err(f("variant"), format!("{:?} is real Linux TCP: run this scenario with `tcplab emulate` (the simulator runs tcplab's variants)", t.variant)));
        }
        let mut cfg = EndpointConfig::for_variant(&t.variant).map_err(|m| ctx.err(f("variant"), m))?;
        let (profile, profile_field) = match &t.profile {
            Some(p) => (Some(p.as_str()), f("profile")),
            None => (sc.run.profile.as_deref(), "run.profile".to_string()),
        };
        apply_profile(&ctx, profile_field, profile, &mut cfg, &nodes, &links, from, to)?;
        apply_tcp_options(&ctx, &format!("tcp[{i}]"), t, &mut cfg)?;
        cfg.trace = sc.run.trace.tcp;
        // A pacing CC's randomness (seed 003 §3.3) from a stream of its own per flow.
        cfg.pacing_seed = rand::Rng::gen(&mut rngs.stream("pacing", i as u64));
        check_mss_fits_path(&ctx, &f("mss"), &cfg, &nodes, &links, from, to)?;
        let (bytes, duration) = match (t.bytes, t.duration) {
            (Some(b), None) => {
                if b.0 == 0 {
                    return Err(ctx.err(f("bytes"), "the transfer size must be positive"));
                }
                (Some(b.0), None)
            }
            (None, Some(d)) => (None, Some(d.0)),
            _ => return Err(ctx.err(f("bytes"), "give exactly one of `bytes` (e.g. \"1MB\") or `duration` (e.g. \"10s\")")),
        };
        let bsd = sim::is_bsd(&cfg.timer_model);
        let mut rcfg = cfg.clone();
        rcfg.close_on_peer_fin = true;
        // Fixed initial sequence numbers keep runs comparable across variants; the receiver's
        // sits half-way round the 32-bit space (wrap-around is covered by tcplab-tcp's tests).
        let sender = tcplab_tcp::Endpoint::new(cfg, 0);
        let mut receiver = tcplab_tcp::Endpoint::new(rcfg, 0x8000_0000);
        if let Some(r) = t.read_rate {
            receiver.set_read_rate(Some(r.0 / 8.0));
        }
        tcp.push(TcpConn::bulk(
            t.name.clone(),
            t.variant.clone(),
            from,
            to,
            start_time(&ctx, f("start"), t.start, &rngs, "traffic:start/tcp", i)?,
            bytes,
            duration,
            [sender, receiver],
            bsd,
        ));
    }

    // Scripted drops name TCP flows: resolve them now that the flows exist.
    for (li, (i, dir, cfg, own)) in drop_cfgs.into_iter().enumerate() {
        let Some(cfg) = cfg else { continue };
        let base = if own { format!("links[{i}].{dir}.drop") } else { format!("links[{i}].drop") };
        for (k, d) in cfg.packets.iter().enumerate() {
            let Some(c) = tcp.iter().position(|c: &TcpConn| c.name == d.flow) else {
                let known: Vec<&str> = tcp.iter().map(|c| c.name.as_str()).collect();
                return Err(ctx.err(format!("{base}.packets[{k}].flow"), format!("no TCP flow named {:?} (flows: {})", d.flow, known.join(", "))));
            };
            if d.seq >= u32::MAX as u64 {
                return Err(ctx.err(format!("{base}.packets[{k}].seq"), "sequence offsets must be below 2^32 - 1"));
            }
            let occurrence = d.occurrence.unwrap_or(1);
            if occurrence == 0 {
                return Err(ctx.err(format!("{base}.packets[{k}].occurrence"), "1 is the first transmission; 0 is not allowed"));
            }
            // The sender's ISS is 0 (see the TCP loop above) and the SYN takes sequence 0: data offset x is wire x + 1.
            links[li].scripted = true;
            links[li].script.entries.push(ScriptedDrop { conn: c as u32, wire_seq: (d.seq as u32).wrapping_add(1), occurrence, seen: 0 });
        }
    }

    let traffic = build_traffic(&ctx, sc, &rngs, &node, &route, &nodes, &links, &mut flow_names)?;

    let name = sc.name.clone().unwrap_or_else(|| {
        std::path::Path::new(file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "scenario".into())
    });
    // The interval series by default: the slowest direction on every flow's path, both ways.
    let mut ends: Vec<(u32, u32)> = udp.iter().map(|u| (u.from, u.to)).collect();
    ends.extend(tcp.iter().flat_map(|c| [(c.from, c.to), (c.to, c.from)]));
    ends.extend(traffic.iter().flat_map(|t| [(t.from, t.to), (t.to, t.from)]));
    ends.sort_unstable();
    ends.dedup();
    for (a, b) in ends {
        if let Some(l) = slowest_on_path(&nodes, &links, a, b) {
            links[l as usize].monitor.record_intervals = true;
        }
    }
    let mut sim = Simulation::assemble(name, seed, nodes, links, udp, tcp, traffic, end, sc.run.stop_when_done);
    if let Some(m) = &sc.run.measure {
        if m.from.0 >= m.to.0 {
            return Err(ctx.err("run.measure.to".to_string(), format!("the window must end after it starts ({} >= {})", fmt_ns(m.from.0 .0), fmt_ns(m.to.0 .0))));
        }
        // A window that opens at or after the end of the run (e.g. a run shortened with --set) is
        // empty: summary.json then has no window_* fields.
        if m.from.0 < end {
            sim.set_measure(m.from.0, m.to.0);
        }
    }
    Ok(sim)
}

/// Apply a `[[tcp]]` entry's options (or a traffic source's `tcp` table, as a `TcpCfg`); errors
/// name `{prefix}.KEY`.
/// A profile's TCP defaults, applied before the flow's own keys (which override them).
/// `bsd-1994` is the variant's defaults as they are (the seeds' hosts). `modern` is a host of
/// today: window scaling (RFC 7323) and send/receive buffers of twice the path's
/// bandwidth-delay product (at least 64 KB), the fine RFC 6298 timer with Linux's 200 ms minimum
/// RTO and a 1 ms clock, an initial window of 10 segments (RFC 6928), no initial ssthresh
/// (slow start until the first loss) and delayed ACKs.
#[allow(clippy::too_many_arguments)]
fn apply_profile(ctx: &Ctx, field: String, profile: Option<&str>, cfg: &mut EndpointConfig, nodes: &[Node], links: &[Link], from: u32, to: u32) -> Result<(), ScenarioError> {
    match profile {
        None | Some("bsd-1994") => Ok(()),
        Some("modern") => {
            let (rate_bps, rtt) = path_rate_and_rtt(nodes, links, from, to);
            let bdp = rate_bps as f64 / 8.0 * rtt.as_secs_f64();
            let buffer = (2.0 * bdp).clamp(65536.0, (1u64 << 30) as f64) as u32;
            cfg.window_scaling = true;
            cfg.send_buffer = buffer;
            cfg.recv_buffer = buffer;
            cfg.timer_model = TimerModel::Fine { granularity: 1_000_000, min_rto: 200_000_000, initial_rto: 1_000_000_000 };
            cfg.initial_window_segments = 10;
            // Slow start until the first loss (Linux: initial ssthresh "infinite"), not 64 KB.
            cfg.initial_ssthresh = 1 << 30;
            cfg.ack_policy = AckPolicy::BsdDelayed;
            Ok(())
        }
        Some(other) => {
            let hint = scenario::template::did_you_mean(other, scenario::PROFILES.iter().copied()).map(|k| format!("; did you mean \"{k}\"?")).unwrap_or_default();
            Err(ctx.err(field, format!("unknown profile {other:?}: expected one of {}{hint}", scenario::PROFILES.join(", "))))
        }
    }
}

/// The slowest rate on the routed path from `from` to `to` and the round-trip propagation delay
/// (out and back, transmission times not counted).
fn path_rate_and_rtt(nodes: &[Node], links: &[Link], from: u32, to: u32) -> (u64, SimTime) {
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

fn apply_tcp_options(ctx: &Ctx, prefix: &str, t: &scenario::TcpCfg, cfg: &mut EndpointConfig) -> Result<(), ScenarioError> {
    let f = |k: &str| format!("{prefix}.{k}");
    let small = |k: &str, v: u64| -> Result<u32, ScenarioError> {
        if v == 0 || v > (1 << 30) {
            return Err(ctx.err(f(k), format!("must be between 1 byte and 1GB, got {v} bytes")));
        }
        Ok(v as u32)
    };
    if let Some(m) = t.mss {
        cfg.mss = small("mss", m.0)?;
    }
    if let Some(b) = t.send_buffer {
        cfg.send_buffer = small("send_buffer", b.0)?;
    }
    if let Some(b) = t.recv_buffer {
        cfg.recv_buffer = small("recv_buffer", b.0)?;
    }
    if let Some(p) = &t.ack_policy {
        cfg.ack_policy = AckPolicy::parse(p).map_err(|m| ctx.err(f("ack_policy"), m))?;
    }
    let gran = t.timer_granularity.map(|d| d.0 .0);
    let min_rto = t.min_rto.map(|d| d.0 .0);
    match t.timer.as_deref() {
        None => {}
        Some("bsd") => cfg.timer_model = TimerModel::Bsd,
        Some("fine") if !matches!(cfg.timer_model, TimerModel::Fine { .. }) => {
            // RFC 6298 as `newreno` uses it: 1 ms clock, 1 s minimum and initial RTO.
            cfg.timer_model = TimerModel::Fine { granularity: 1_000_000, min_rto: 1_000_000_000, initial_rto: 1_000_000_000 };
        }
        Some("fine") => {}
        // ns-2's agent timer with its 2002 defaults (tcpTick_ 0.1, minrto_ 1, rtxcur_init_ 6).
        Some("ns2") => cfg.timer_model = TimerModel::NS2_2002,
        Some(other) => return Err(ctx.err(f("timer"), format!("unknown timer model {other:?}; known: bsd, fine, ns2"))),
    }
    // FineRto clamps every RTO into [min_rto, MAX_RTO] and asserts min <= max: check here, by name.
    for (k, v) in [("timer_granularity", gran), ("min_rto", min_rto)] {
        if let Some(v) = v {
            if v > MAX_RTO {
                return Err(ctx.err(f(k), format!("must be at most 60s (the largest RTO), got {}", fmt_ns(v))));
            }
        }
    }
    match &mut cfg.timer_model {
        // For ns2, timer_granularity is tcpTick_.
        TimerModel::Fine { granularity, min_rto: m, .. } | TimerModel::Ns2 { tick: granularity, min_rto: m, .. } => {
            if let Some(g) = gran {
                *granularity = g.max(1);
            }
            if let Some(r) = min_rto {
                *m = r;
            }
        }
        TimerModel::Bsd if gran.is_some() || min_rto.is_some() => {
            return Err(ctx.err(f("timer_granularity"), "timer_granularity and min_rto apply to the fine and ns2 timer models only"));
        }
        TimerModel::Bsd => {}
    }
    if let Some(v) = t.timestamps {
        cfg.timestamps = v;
    }
    if let Some(v) = t.window_scaling {
        cfg.window_scaling = v;
    }
    // A receive buffer above 64 KB cannot be advertised without window scaling (the window
    // field is 16 bits): switch it on rather than cap the window silently, unless the file
    // switched it off, which is then an error that says so.
    if cfg.recv_buffer > 65536 && !cfg.window_scaling {
        if t.window_scaling == Some(false) {
            return Err(ctx.err(
                f("recv_buffer"),
                format!("a receive buffer of {} bytes needs window scaling (RFC 7323: the window field holds at most 65535 bytes); remove window_scaling = false or use at most 64KB", cfg.recv_buffer),
            ));
        }
        cfg.window_scaling = true;
    }
    if let Some(s) = t.initial_ssthresh {
        cfg.initial_ssthresh = small("initial_ssthresh", s.0)?;
    }
    if let Some(w) = t.initial_window {
        if w == 0 {
            return Err(ctx.err(f("initial_window"), "must be at least 1 segment"));
        }
        cfg.initial_window_segments = w;
    }
    if let Some(tw) = t.time_wait {
        cfg.time_wait = tw.0 .0;
    }
    if let Some(e) = t.ecn {
        cfg.ecn = e;
    }
    // Variant parameters (e.g. Vegas alpha/beta/gamma); unknown keys name `tcp[i].params.KEY`.
    for (k, v) in &t.params {
        cfg.set_param(k, *v).map_err(|m| ctx.err(format!("{prefix}.params.{k}"), m))?;
    }
    if let Err(m) = cfg.check_params() {
        let k = t.params.keys().next().map(String::as_str).unwrap_or("alpha");
        return Err(ctx.err(format!("{prefix}.params.{k}"), m));
    }
    Ok(())
}

/// A routed path from `from` to `to` exists (followed hop by hop through the tables the run uses);
/// otherwise an error saying why: not connected, only through a host, or a loop of explicit routes.
#[allow(clippy::too_many_arguments)]
fn check_route(
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
fn slowest_on_path(nodes: &[Node], links: &[Link], from: u32, to: u32) -> Option<u32> {
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

type NodeLookup<'a> = dyn Fn(String, &str) -> Result<u32, ScenarioError> + 'a;
type RouteCheck<'a> = dyn Fn(String, u32, u32) -> Result<(), ScenarioError> + 'a;

/// `[[traffic]]` sources (one per entry, two with `two_way`).
#[allow(clippy::too_many_arguments)]
fn build_traffic<'a>(
    ctx: &Ctx,
    sc: &'a Scenario,
    rngs: &RngStreams,
    node: &NodeLookup,
    route: &RouteCheck,
    nodes: &[Node],
    links: &[Link],
    flow_names: &mut HashMap<&'a str, String>,
) -> Result<Vec<TrafficSource>, ScenarioError> {
    let mut out = Vec::new();
    let mut reverse_names: Vec<String> = Vec::new();
    for (i, t) in sc.traffic.iter().enumerate() {
        let f = |k: &str| format!("traffic[{i}].{k}");
        if t.name.is_empty() {
            return Err(ctx.err(f("name"), "must not be empty"));
        }
        if flow_names.get(t.name.as_str()).is_some() {
            return Err(ctx.err(f("name"), format!("duplicate flow name {:?}", t.name)));
        }
        flow_names.insert(t.name.as_str(), f("name"));
        let from = node(f("from"), &t.from)?;
        let to = node(f("to"), &t.to)?;
        if from == to {
            return Err(ctx.err(f("to"), "originator and responder are the same node"));
        }
        route(f("to"), from, to)?;
        route(f("from"), to, from)?;
        let opts = t.tcp.clone().unwrap_or_default().as_tcp(&t.variant);
        let mut cfg = EndpointConfig::for_variant(&t.variant).map_err(|m| ctx.err(f("variant"), m))?;
        // The profile as for [[tcp]] flows: its own, else run.profile; buffers sized to the
        // forward path (a two_way source's reverse connections use the same).
        let (profile, profile_field) = match &t.profile {
            Some(p) => (Some(p.as_str()), f("profile")),
            None => (sc.run.profile.as_deref(), "run.profile".to_string()),
        };
        apply_profile(ctx, profile_field, profile, &mut cfg, nodes, links, from, to)?;
        apply_tcp_options(ctx, &f("tcp"), &opts, &mut cfg)?;
        check_mss_fits_path(ctx, &f("tcp.mss"), &cfg, nodes, links, from, to)?;
        cfg.trace = false;
        // Applications close explicitly (conversation.rs), never on the peer's FIN alone.
        cfg.close_on_peer_fin = false;
        let bsd = sim::is_bsd(&cfg.timer_model);
        let start = t.start.map_or(SimTime::ZERO, |d| d.0);
        let stop = t.stop.map_or(SimTime::MAX, |d| d.0);
        if stop <= start {
            return Err(ctx.err(f("stop"), "stop must be after start"));
        }
        let positive = |k: &str, d: Option<scenario::units::Duration>| -> Result<f64, ScenarioError> {
            match d {
                Some(d) if d.0 .0 > 0 => Ok(d.0 .0 as f64),
                Some(_) => Err(ctx.err(f(k), "must be positive")),
                None => Err(ctx.err(f(k), format!("a {:?} source needs `{k}`", t.kind).to_lowercase())),
            }
        };
        // Keys that belong to other kinds are errors, not silently ignored.
        let unused = |keys: &[(&str, bool)]| -> Result<(), ScenarioError> {
            for &(k, present) in keys {
                if present {
                    return Err(ctx.err(f(k), format!("`{k}` does not apply to kind = {:?}", format!("{:?}", t.kind).to_lowercase())));
                }
            }
            Ok(())
        };
        let mut mix_configured = false;
        let mut offered = None;
        let kind = match t.kind {
            TrafficKind::Tcplib => {
                unused(&[("senders", t.senders.is_some()), ("sleep", t.sleep.is_some()), ("packet_size", t.packet_size.is_some()), ("rate", t.rate.is_some()), ("on", t.on.is_some()), ("off", t.off.is_some()), ("shape", t.shape.is_some())])?;
                let mut mix = AppMix::means();
                if let Some(m) = &t.mix {
                    let mut w = [0.0; 4];
                    for (k, v) in m {
                        let Some(kind) = ConvKind::parse(k) else {
                            return Err(ctx.err(format!("traffic[{i}].mix.{k}"), "unknown conversation type; known: ftp, telnet, nntp, smtp"));
                        };
                        if !(v.is_finite() && *v >= 0.0) {
                            return Err(ctx.err(format!("traffic[{i}].mix.{k}"), "weights must be finite and non-negative"));
                        }
                        w[kind.index()] = *v;
                    }
                    if w.iter().sum::<f64>() <= 0.0 {
                        return Err(ctx.err(f("mix"), "at least one weight must be positive"));
                    }
                    mix = AppMix::normalised(w);
                    mix_configured = true;
                }
                let mean = match (t.interarrival, t.offered_load) {
                    (Some(_), None) => positive("interarrival", t.interarrival)?,
                    (None, Some(load)) => {
                        if !(load > 0.0 && load <= 10.0) {
                            return Err(ctx.err(f("offered_load"), format!("expected a fraction of the bottleneck rate in (0, 10], got {load}")));
                        }
                        let l = match &t.bottleneck {
                            Some(name) => links.iter().position(|l| &l.name == name).ok_or_else(|| {
                                ctx.err(f("bottleneck"), format!("no link direction named {name:?} (write it as \"a->b\")"))
                            })? as u32,
                            None => slowest_on_path(nodes, links, from, to).ok_or_else(|| ctx.err(f("to"), "no route"))?,
                        };
                        offered = Some((load, links[l as usize].params.rate_bps as f64 / 8.0));
                        1.0
                    }
                    _ => return Err(ctx.err(f("interarrival"), "a tcplib source needs exactly one of `interarrival` (mean time between conversations) or `offered_load` (fraction of the bottleneck)")),
                };
                if t.bottleneck.is_some() && t.offered_load.is_none() {
                    return Err(ctx.err(f("bottleneck"), "`bottleneck` goes with `offered_load`"));
                }
                SourceKind::Tcplib { mean_interarrival_ns: mean, mix }
            }
            TrafficKind::Ahn => {
                unused(&[("interarrival", t.interarrival.is_some()), ("offered_load", t.offered_load.is_some()), ("mix", t.mix.is_some()), ("packet_size", t.packet_size.is_some()), ("rate", t.rate.is_some()), ("on", t.on.is_some()), ("off", t.off.is_some()), ("shape", t.shape.is_some())])?;
                SourceKind::Ahn { senders: senders(ctx, &f("senders"), t.senders)?, mean_sleep_ns: positive("sleep", t.sleep)? }
            }
            TrafficKind::Onoff => {
                unused(&[("interarrival", t.interarrival.is_some()), ("offered_load", t.offered_load.is_some()), ("mix", t.mix.is_some()), ("sleep", t.sleep.is_some())])?;
                let Some(size) = t.packet_size else { return Err(ctx.err(f("packet_size"), "an onoff source needs `packet_size`")) };
                if size.0 == 0 || size.0 > (1 << 30) {
                    return Err(ctx.err(f("packet_size"), "must be between 1 byte and 1GB"));
                }
                let Some(rate) = t.rate else { return Err(ctx.err(f("rate"), "an onoff source needs `rate` (the sending rate while on)")) };
                if rate.0 < 1.0 {
                    return Err(ctx.err(f("rate"), "must be at least 1 bit/s"));
                }
                let interval = SimTime(((size.0 as f64 * 8.0 / rate.0) * 1e9).round().max(1.0) as u64);
                let params = OnOffParams {
                    packet_size: size.0 as u32,
                    interval,
                    mean_on_ns: positive("on", t.on)?,
                    mean_off_ns: positive("off", t.off)?,
                    pareto_shape: pareto_shape(ctx, &f("shape"), t.shape)?,
                };
                SourceKind::OnOff { senders: senders(ctx, &f("senders"), t.senders)?, params }
            }
        };
        let rcfg = cfg.clone();
        let mut dirs = vec![(t.name.clone(), from, to)];
        if t.two_way {
            dirs.push((format!("{}/reverse", t.name), to, from));
        }
        for (name, a, b) in dirs {
            if name != t.name {
                if flow_names.contains_key(name.as_str()) || reverse_names.contains(&name) {
                    return Err(ctx.err(f("name"), format!("the reverse source's name {name:?} is taken")));
                }
                reverse_names.push(name.clone());
            }
            // The reverse source loads the slowest link of its own path (its route was checked).
            let offered = offered.map(|(load, forward_rate)| match a == from {
                true => (load, forward_rate),
                false => (load, slowest_on_path(nodes, links, a, b).map_or(forward_rate, |l| links[l as usize].params.rate_bps as f64 / 8.0)),
            });
            out.push(TrafficSource::new(rngs, name, kind.clone(), mix_configured, offered, a, b, t.variant.clone(), [cfg.clone(), rcfg.clone()], bsd, start, stop));
        }
    }
    Ok(out)
}

fn senders(ctx: &Ctx, field: &str, n: Option<u32>) -> Result<u32, ScenarioError> {
    match n.unwrap_or(1) {
        0 => Err(ctx.err(field.to_string(), "must be at least 1")),
        n if n > 1_000_000 => Err(ctx.err(field.to_string(), format!("{n} senders is more than tcplab allows (1,000,000)"))),
        n => Ok(n),
    }
}

fn pareto_shape(ctx: &Ctx, field: &str, shape: Option<f64>) -> Result<Option<f64>, ScenarioError> {
    match shape {
        None => Ok(None),
        Some(a) if a.is_finite() && a > 1.0 && a <= 100.0 => Ok(Some(a)),
        Some(a) => Err(ctx.err(field.to_string(), format!("a Pareto shape must be above 1 (finite mean) and at most 100, got {a}"))),
    }
}

// ------------------------------------------------------------------ input limits (issue 15)

/// Most monitor intervals one link direction may record over a run (32 bytes each).
pub const MAX_MONITOR_INTERVALS: u64 = 1_000_000;
/// A UDP source may offer at most this many times its fastest outgoing link's rate: beyond it
/// every extra packet is dropped at the first queue and only costs time.
pub const MAX_OVERLOAD: f64 = 1000.0;
/// Largest per-packet overhead or MTU of a link (the engine keeps them as u32).
pub const MAX_LINK_BYTES: u64 = 1 << 30;

/// A duration in the scenario's units, e.g. "61s", "100ms", "2ns".
fn fmt_ns(ns: u64) -> String {
    for (unit, scale) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= scale && ns % scale == 0 {
            return format!("{}{unit}", ns / scale);
        }
    }
    if ns >= 1_000_000_000 {
        return format!("{:.3}s", ns as f64 / 1e9);
    }
    format!("{ns}ns")
}

/// Flow and node names are keys of the summary; node names also build link names "a->b".
fn check_name(ctx: &Ctx, field: String, name: &str) -> Result<(), ScenarioError> {
    if name.trim().is_empty() {
        return Err(ctx.err(field, "must not be empty"));
    }
    if field.starts_with("nodes") && name.contains("->") {
        return Err(ctx.err(field, format!("{name:?} contains \"->\", which names link directions (\"a->b\")")));
    }
    Ok(())
}

fn link_bytes(ctx: &Ctx, field: String, v: u64) -> Result<u32, ScenarioError> {
    if v > MAX_LINK_BYTES {
        return Err(ctx.err(field, format!("must be at most 1GB, got {v} bytes")));
    }
    Ok(v as u32)
}

/// The monitor records one row per interval per link direction for the whole run.
fn check_monitor_interval(ctx: &Ctx, end: SimTime, interval: SimTime) -> Result<(), ScenarioError> {
    let n = end.0 / interval.0;
    if n > MAX_MONITOR_INTERVALS {
        let least = SimTime(end.0.div_ceil(MAX_MONITOR_INTERVALS));
        return Err(ctx.err(
            "run.monitor_interval".into(),
            format!(
                "{} over a run of {} is {n} intervals per link direction; at most {MAX_MONITOR_INTERVALS} (use at least {})",
                fmt_ns(interval.0),
                fmt_ns(end.0),
                fmt_ns(least.0)
            ),
        ));
    }
    Ok(())
}

/// A UDP source's mean offered rate against its fastest outgoing link (see MAX_OVERLOAD).
fn check_offered_rate(ctx: &Ctx, i: usize, u: &scenario::UdpCfg, pattern: &Pattern, size: u64, links: &[Link], from: u32) -> Result<(), ScenarioError> {
    let (bps, key) = match *pattern {
        Pattern::Cbr { interval } => (size as f64 * 8e9 / interval.0 as f64, "rate"),
        Pattern::Poisson { mean_interval_ns, .. } => (size as f64 * 8e9 / mean_interval_ns, if u.interval.is_some() { "interval" } else { "rate" }),
        Pattern::Bursts { mean_burst_bytes, mean_interval_ns } => (mean_burst_bytes * 8e9 / mean_interval_ns, "burst_interval"),
        Pattern::OnOff { interval, .. } => (size as f64 * 8e9 / interval.0 as f64, "rate"),
    };
    let Some(out) = links.iter().filter(|l| l.from == from).max_by_key(|l| l.params.rate_bps) else { return Ok(()) };
    if bps > MAX_OVERLOAD * out.params.rate_bps as f64 {
        return Err(ctx.err(
            format!("udp[{i}].{key}"),
            format!(
                "the source offers {:.3e} bit/s on average, more than {MAX_OVERLOAD} times its fastest link {} ({} bit/s); the excess would only be dropped at the first queue",
                bps, out.name, out.params.rate_bps
            ),
        ));
    }
    Ok(())
}

/// Data segments (MSS + headers) larger than a link's MTU on the path are all dropped (reason
/// "mtu"): the flow could never deliver a byte.
fn check_mss_fits_path(ctx: &Ctx, field: &str, cfg: &EndpointConfig, nodes: &[Node], links: &[Link], from: u32, to: u32) -> Result<(), ScenarioError> {
    let header = 40 + if cfg.timestamps { 12 } else { 0 };
    let packet = cfg.mss as u64 + header;
    let mut at = from;
    for _ in 0..nodes.len() {
        if at == to {
            break;
        }
        let l = nodes[at as usize].route(to);
        if l == NO_ROUTE {
            break;
        }
        let link = &links[l as usize];
        if packet > link.params.mtu_bytes as u64 {
            return Err(ctx.err(
                field.to_string(),
                format!(
                    "mss {} B + {header} B of headers = {packet} B does not fit the mtu {} B of link {} on the path: every data segment would be dropped",
                    cfg.mss, link.params.mtu_bytes, link.name
                ),
            ));
        }
        at = link.to;
    }
    Ok(())
}
