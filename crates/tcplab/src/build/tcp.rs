//! `[[tcp]]` flows: each a pair of endpoints configured from the variant, the profile and the
//! flow's own keys (the same options a `[[traffic]]` source's `tcp` table takes); and the scripted
//! drops of the links, which name these flows.

use std::collections::HashMap;
use std::sync::Arc;

use tcplab_tcp::rto::fine::MAX_RTO;
use tcplab_tcp::{AckPolicy, EndpointConfig, TimerModel};

use super::checks::{check_name, fmt_ns, start_time, Ctx, NodeLookup, RouteCheck};
use super::topology::{path_rate_and_rtt, DirectionDrops};
use crate::engine::RngStreams;
use crate::net::link::{Link, ScriptedDrop};
use crate::net::node::{Node, NO_ROUTE};
use crate::scenario::{self, Scenario, ScenarioError};
use crate::sim::{self, TcpConn};

/// `[[tcp]]` flows (their names join `flow_names`).
#[allow(clippy::too_many_arguments)]
pub(super) fn flows<'a>(
    ctx: &Ctx,
    sc: &'a Scenario,
    rngs: &RngStreams,
    node: &NodeLookup,
    route: &RouteCheck,
    nodes: &[Node],
    links: &[Link],
    flow_names: &mut HashMap<&'a str, String>,
) -> Result<Vec<TcpConn>, ScenarioError> {
    let mut tcp = Vec::with_capacity(sc.tcp.len());
    let mut configs = SharedConfigs::default();
    for (i, t) in sc.tcp.iter().enumerate() {
        let f = |k: &str| format!("tcp[{i}].{k}");
        check_name(ctx, f("name"), &t.name)?;
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
        apply_profile(ctx, profile_field, profile, &mut cfg, &nodes, &links, from, to)?;
        apply_tcp_options(ctx, &format!("tcp[{i}]"), &t.conn_options(), &mut cfg)?;
        cfg.trace = sc.run.trace.tcp;
        // A pacing CC's randomness (seed 003 §3.3) from a stream of its own per flow.
        cfg.pacing_seed = rand::Rng::gen(&mut rngs.stream("pacing", i as u64));
        check_mss_fits_path(ctx, &f("mss"), &cfg, &nodes, &links, from, to)?;
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
        // The seed goes to the endpoints' CCs directly, so alike flows share one config.
        let seed = std::mem::take(&mut cfg.pacing_seed);
        let mut rcfg = cfg.clone();
        rcfg.close_on_peer_fin = true;
        // Fixed initial sequence numbers keep runs comparable across variants; the receiver's
        // sits half-way round the 32-bit space (wrap-around is covered by tcplab-tcp's tests).
        let sender = tcplab_tcp::Endpoint::new_shared(configs.get(cfg), seed, 0);
        let mut receiver = tcplab_tcp::Endpoint::new_shared(configs.get(rcfg), seed, 0x8000_0000);
        if let Some(r) = t.read_rate {
            receiver.set_read_rate(Some(r.0 / 8.0));
        }
        tcp.push(TcpConn::bulk(
            t.name.clone(),
            t.variant.clone(),
            from,
            to,
            start_time(ctx, f("start"), t.start, &rngs, "traffic:start/tcp", i)?,
            bytes,
            duration,
            [sender, receiver],
            bsd,
        ));
    }
    Ok(tcp)
}

/// The distinct endpoint configurations of a scenario's flows, each kept once (192 bytes per
/// endpoint otherwise: issue 28's idle-connection memory). Flows usually come in runs of alike
/// ones, so only the most recent few are compared.
#[derive(Default)]
struct SharedConfigs(Vec<Arc<EndpointConfig>>);

impl SharedConfigs {
    fn get(&mut self, cfg: EndpointConfig) -> Arc<EndpointConfig> {
        if let Some(c) = self.0.iter().rev().take(8).find(|c| ***c == cfg) {
            return c.clone();
        }
        let c = Arc::new(cfg);
        self.0.push(c.clone());
        c
    }
}

/// Scripted drops name TCP flows: resolve them now that the flows exist.
pub(super) fn scripted_drops(ctx: &Ctx, drop_cfgs: Vec<DirectionDrops>, tcp: &[TcpConn], links: &mut [Link]) -> Result<(), ScenarioError> {
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
    Ok(())
}

/// A profile's TCP defaults, applied before the flow's own keys (which override them).
/// `bsd-1994` is the variant's defaults as they are (the seeds' hosts). `modern` is a host of
/// today: window scaling (RFC 7323) and send/receive buffers of twice the path's
/// bandwidth-delay product (at least 64 KB), Linux's RTO for the variants that model it (their
/// `linux` timer), else the fine RFC 6298 timer with Linux's 200 ms minimum
/// RTO and a 1 ms clock, an initial window of 10 segments (RFC 6928), no initial ssthresh
/// (slow start until the first loss) and Linux's delayed ACKs (40 ms timer, quick-ACK mode for
/// the first 16 segments).
#[allow(clippy::too_many_arguments)]
pub(super) fn apply_profile(ctx: &Ctx, field: String, profile: Option<&str>, cfg: &mut EndpointConfig, nodes: &[Node], links: &[Link], from: u32, to: u32) -> Result<(), ScenarioError> {
    match profile {
        None | Some("bsd-1994") => Ok(()),
        Some("modern") => {
            let (rate_bps, rtt) = path_rate_and_rtt(nodes, links, from, to);
            let bdp = rate_bps as f64 / 8.0 * rtt.as_secs_f64();
            let buffer = (2.0 * bdp).clamp(65536.0, (1u64 << 30) as f64) as u32;
            cfg.window_scaling = true;
            cfg.send_buffer = buffer;
            cfg.recv_buffer = buffer;
            // A variant that runs Linux's own estimator (`timer = "linux"`: modern, cubic, bbr,
            // ...) keeps it; any other gets RFC 6298 with Linux's 200 ms minimum.
            if !matches!(cfg.timer_model, TimerModel::Linux { .. }) {
                cfg.timer_model = TimerModel::Fine { granularity: 1_000_000, min_rto: 200_000_000, initial_rto: 1_000_000_000 };
            }
            cfg.initial_window_segments = 10;
            // Slow start until the first loss (Linux: initial ssthresh "infinite"), not 64 KB.
            cfg.initial_ssthresh = 1 << 30;
            // Linux's receiver: 40 ms delayed-ACK timer (TCP_DELACK_MIN), quick-ACK at start.
            cfg.ack_policy = AckPolicy::BsdDelayed;
            cfg.delack_timeout = 40_000_000;
            cfg.quickack = 16;
            Ok(())
        }
        Some(other) => {
            let hint = scenario::template::did_you_mean(other, scenario::PROFILES.iter().copied()).map(|k| format!("; did you mean \"{k}\"?")).unwrap_or_default();
            Err(ctx.err(field, format!("unknown profile {other:?}: expected one of {}{hint}", scenario::PROFILES.join(", "))))
        }
    }
}

/// Apply the shared TCP options of a `[[tcp]]` entry or of a traffic source's `tcp` table; errors
/// name `{prefix}.KEY`.
pub(super) fn apply_tcp_options(ctx: &Ctx, prefix: &str, t: &scenario::ConnOptions, cfg: &mut EndpointConfig) -> Result<(), ScenarioError> {
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
    match t.send_buffer_model.as_deref() {
        None => {}
        Some("payload") => cfg.send_buffer_linux = false,
        Some("linux") => cfg.send_buffer_linux = true,
        Some(other) => return Err(ctx.err(f("send_buffer_model"), format!("unknown send buffer model {other:?}; known: payload, linux"))),
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
        // Linux's estimator (tcplab_tcp::rto::linux) with TCP_RTO_MIN 200 ms, 1 s initial RTO.
        Some("linux") if !matches!(cfg.timer_model, TimerModel::Linux { .. }) => {
            cfg.timer_model = TimerModel::Linux { granularity: 1_000_000, min_rto: 200_000_000, initial_rto: 1_000_000_000 };
        }
        Some("linux") => {}
        // ns-2's agent timer with its 2002 defaults (tcpTick_ 0.1, minrto_ 1, rtxcur_init_ 6).
        Some("ns2") => cfg.timer_model = TimerModel::NS2_2002,
        Some(other) => return Err(ctx.err(f("timer"), format!("unknown timer model {other:?}; known: bsd, fine, linux, ns2"))),
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
        TimerModel::Fine { granularity, min_rto: m, .. } | TimerModel::Linux { granularity, min_rto: m, .. } | TimerModel::Ns2 { tick: granularity, min_rto: m, .. } => {
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

/// Data segments (MSS + headers) larger than a link's MTU on the path are all dropped (reason
/// "mtu"): the flow could never deliver a byte.
pub(super) fn check_mss_fits_path(ctx: &Ctx, field: &str, cfg: &EndpointConfig, nodes: &[Node], links: &[Link], from: u32, to: u32) -> Result<(), ScenarioError> {
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
