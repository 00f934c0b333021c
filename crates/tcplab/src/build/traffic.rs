//! Traffic: `[[udp]]` sources, and `[[traffic]]` sources whose TCP connections come and go
//! (tcplib conversations, Ahn's senders, on/off senders).

use std::collections::HashMap;

use tcplab_tcp::EndpointConfig;

use super::checks::{check_name, start_time, Ctx, NodeLookup, RouteCheck, MAX_OVERLOAD};
use super::tcp::{apply_profile, apply_tcp_options, check_mss_fits_path};
use super::topology::slowest_on_path;
use crate::apps::conversation::OnOffParams;
use crate::apps::tcplib_tables::{AppMix, ConvKind};
use crate::apps::traffic::{SourceKind, TrafficSource};
use crate::apps::udp::{Pattern, UdpSource};
use crate::engine::{RngStreams, SimTime};
use crate::net::link::Link;
use crate::net::node::Node;
use crate::scenario::{self, Scenario, ScenarioError, SizeDist, TrafficKind, UdpPattern};
use crate::sim;

/// `[[udp]]` sources (their names join `flow_names`).
pub(super) fn udp_sources<'a>(
    ctx: &Ctx,
    sc: &'a Scenario,
    rngs: &RngStreams,
    node: &NodeLookup,
    route: &RouteCheck,
    links: &[Link],
    flow_names: &mut HashMap<&'a str, String>,
) -> Result<Vec<UdpSource>, ScenarioError> {
    let mut udp = Vec::new();
    for (i, u) in sc.udp.iter().enumerate() {
        check_name(ctx, format!("udp[{i}].name"), &u.name)?;
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
                    pareto_shape: pareto_shape(ctx, &format!("udp[{i}].shape"), u.shape)?,
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
        check_offered_rate(ctx, i, u, &pattern, size, &links, from)?;
        let start = start_time(ctx, format!("udp[{i}].start"), u.start, &rngs, "traffic:start/udp", i)?;
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
            ecn: match u.ecn {
                None | Some(crate::scenario::model::UdpEcn::NotEct) => crate::net::packet::Ecn::NotEct,
                Some(crate::scenario::model::UdpEcn::Ect0) => crate::net::packet::Ecn::Ect0,
                Some(crate::scenario::model::UdpEcn::Ect1) => crate::net::packet::Ecn::Ect1,
            },
            delays: u.delay_percentiles.unwrap_or(false).then(Default::default),
        });
    }
    Ok(udp)
}

/// `[[traffic]]` sources (one per entry, two with `two_way`).
#[allow(clippy::too_many_arguments)]
pub(super) fn connections<'a>(
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
        let opts = t.tcp.clone().unwrap_or_default();
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

pub(super) fn senders(ctx: &Ctx, field: &str, n: Option<u32>) -> Result<u32, ScenarioError> {
    match n.unwrap_or(1) {
        0 => Err(ctx.err(field.to_string(), "must be at least 1")),
        n if n > 1_000_000 => Err(ctx.err(field.to_string(), format!("{n} senders is more than tcplab allows (1,000,000)"))),
        n => Ok(n),
    }
}

pub(super) fn pareto_shape(ctx: &Ctx, field: &str, shape: Option<f64>) -> Result<Option<f64>, ScenarioError> {
    match shape {
        None => Ok(None),
        Some(a) if a.is_finite() && a > 1.0 && a <= 100.0 => Ok(Some(a)),
        Some(a) => Err(ctx.err(field.to_string(), format!("a Pareto shape must be above 1 (finite mean) and at most 100, got {a}"))),
    }
}

/// A UDP source's mean offered rate against its fastest outgoing link (see MAX_OVERLOAD).
pub(super) fn check_offered_rate(ctx: &Ctx, i: usize, u: &scenario::UdpCfg, pattern: &Pattern, size: u64, links: &[Link], from: u32) -> Result<(), ScenarioError> {
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

