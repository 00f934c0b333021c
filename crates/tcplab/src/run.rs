//! One-call entry points used by the CLI/Python layer and the tests: text in, results out.

use std::time::Instant;

use crate::build::build;
use crate::scenario::{fix_error, load_text, ScenarioError};
use crate::sim::Simulation;
use crate::summary::Summary;

pub struct RunResult {
    pub sim: Simulation,
    pub summary: Summary,
    /// The scenario text as run (after `--set` overrides).
    pub text: String,
}

/// Parse, validate and build without running.
pub fn prepare(text: &str, file: &str, seed: Option<u64>, overrides: &[String]) -> Result<(Simulation, String), ScenarioError> {
    let (sc, new_text, x) = load_text(text, file, overrides)?;
    // Build errors are located in the text as run; point them back at the user's file.
    let sim = build(&sc, &new_text, file, seed).map_err(|e| fix_error(e, text, overrides, x.as_ref()))?;
    Ok((sim, new_text))
}

pub fn run_text(text: &str, file: &str, seed: Option<u64>, overrides: &[String]) -> Result<RunResult, ScenarioError> {
    run_text_with_progress(text, file, seed, overrides, |_| true).map(|r| r.expect("never abandoned"))
}

/// Like [`run_text`], with a progress callback between slices of simulated time; `Ok(None)` if
/// the callback abandoned the run.
pub fn run_text_with_progress(
    text: &str,
    file: &str,
    seed: Option<u64>,
    overrides: &[String],
    progress: impl FnMut(&Simulation) -> bool,
) -> Result<Option<RunResult>, ScenarioError> {
    let (mut sim, text) = prepare(text, file, seed, overrides)?;
    let t0 = Instant::now();
    if !sim.run_with_progress(progress) {
        return Ok(None);
    }
    let wall = t0.elapsed().as_secs_f64();
    let summary = Summary::from_sim(&sim, wall);
    Ok(Some(RunResult { sim, summary, text }))
}

// ------------------------------------------------------------------ resource limits (issue 15)

/// Limits checked before a run starts.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Refuse a scenario whose estimated memory exceeds this many bytes.
    pub max_memory: Option<u64>,
}

/// Where the memory of a run goes, estimated from the parsed scenario alone (nothing is built).
/// Upper-bound-ish figures per item, including the trace columns handed to Python
/// (≈ 600 bytes per trace row there and in Rust together).
#[derive(Clone, Debug)]
pub struct MemoryEstimate {
    pub total: u64,
    /// (field of the scenario, bytes, what) for the largest contributors.
    pub parts: Vec<(String, u64, String)>,
}

const CONN_BYTES: u64 = 4096; // two endpoints, their stats and the glue's connection record
const SEGMENT_RECORD_BYTES: u64 = 64; // send-log record and reassembly entry per segment in flight
const TRACE_ROW_BYTES: u64 = 600; // one TCP or link trace row, Rust columns + Python lists
const INTERVAL_ROW_BYTES: u64 = 250; // one monitor interval row, Rust + Python
const PACKET_BYTES: u64 = 96; // a packet header in the pool
const TYPICAL_PACKET: f64 = 500.0; // bytes, to turn link rates into packet counts

/// Estimate the memory a run of `sc` needs.
pub fn estimate_memory(sc: &crate::scenario::Scenario) -> MemoryEstimate {
    use crate::scenario::units::QueueSize;
    let end_s = sc.run.duration.0.as_secs_f64();
    let mut parts: Vec<(String, u64, String)> = Vec::new();
    let n = sc.nodes.len() as u64;
    // Only nodes with more than one link keep a routing table (one entry per node).
    let mut degree: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for l in &sc.links {
        *degree.entry(l.a.as_str()).or_default() += 1;
        *degree.entry(l.b.as_str()).or_default() += 1;
    }
    let tables = degree.values().filter(|&&d| d > 1).count() as u64;
    parts.push(("nodes".into(), tables * n * 4 + n * 256, format!("{n} nodes and {tables} routing tables")));
    let interval_s = sc.run.monitor_interval.map_or(0.1, |d| d.0.as_secs_f64()).max(1e-9);
    let intervals = (end_s / interval_s).min(1e12) as u64;
    // Recorded on traced and named links and the slowest direction of each flow's path (at most).
    let all_dirs = 2 * sc.links.len() as u64;
    let every = sc.run.monitor_links.iter().chain(&sc.run.trace.links).any(|t| t == "all");
    let flows = (sc.udp.len() + 2 * sc.tcp.len() + 2 * sc.traffic.len()) as u64;
    let dirs = if every {
        all_dirs
    } else {
        all_dirs.min(2 * (sc.run.monitor_links.len() + sc.run.trace.links.len()) as u64 + flows)
    };
    parts.push((
        "run.monitor_interval".into(),
        dirs * intervals.saturating_mul(INTERVAL_ROW_BYTES),
        format!("{intervals} monitor intervals on each of {dirs} link directions"),
    ));
    let mut max_rate = 0f64;
    for (i, l) in sc.links.iter().enumerate() {
        let mut bytes = 0u64;
        for ov in [&l.ab, &l.ba] {
            let ov = ov.clone().unwrap_or_default();
            let rate = ov.rate.unwrap_or(l.rate).0;
            max_rate = max_rate.max(rate);
            let delay = ov.delay.unwrap_or(l.delay).0.as_secs_f64();
            let in_flight = rate * delay / 8.0 / TYPICAL_PACKET;
            let queued = match ov.queue.as_ref().or(l.queue.as_ref()).map(|q| q.limit.0) {
                Some(QueueSize::Packets(p)) => p as f64,
                Some(QueueSize::Bytes(b)) => b as f64 / 40.0,
                None => crate::build::DEFAULT_QUEUE_PKTS as f64,
            };
            bytes = bytes.saturating_add(((in_flight + queued) * PACKET_BYTES as f64).min(1e18) as u64);
            let name = l.name.as_deref();
            let traced = sc.run.trace.links.iter().any(|t| t == "all" || Some(t.as_str()) == name || *t == format!("{}->{}", l.a, l.b) || *t == format!("{}->{}", l.b, l.a));
            if traced {
                let rows = 3.0 * rate * end_s / 8.0 / TYPICAL_PACKET;
                bytes = bytes.saturating_add((rows * TRACE_ROW_BYTES as f64).min(1e18) as u64);
            }
        }
        parts.push((format!("links[{i}]"), bytes, "packets queued and in flight, and the link trace".into()));
    }
    let conn = |send: Option<u64>, recv: Option<u64>, mss: Option<u64>| -> u64 {
        let window = send.unwrap_or(50 * 1024).min(recv.unwrap_or(50 * 1024));
        let segs = window / mss.unwrap_or(1460).max(1) + 1;
        CONN_BYTES + 2 * segs * SEGMENT_RECORD_BYTES
    };
    // A timed flow sends at most a window per round trip...
    let min_delay_s = sc.links.iter().map(|l| l.delay.0.as_secs_f64()).fold(f64::INFINITY, f64::min);
    let rtt_floor_s = (2.0 * min_delay_s).max(1e-3);
    let mut tcp_bytes = 0u64;
    // Timed flows that share their slowest link share its capacity: their payloads together are
    // bounded by rate × time there (64 flows over one bottleneck carry one bottleneck's worth).
    let mut shared: std::collections::HashMap<usize, (f64, f64)> = std::collections::HashMap::new();
    for t in &sc.tcp {
        tcp_bytes = tcp_bytes.saturating_add(conn(t.send_buffer.map(|s| s.0), t.recv_buffer.map(|s| s.0), t.mss.map(|s| s.0)));
        if sc.run.trace.tcp {
            let payload = match (t.bytes, t.duration) {
                (Some(b), _) => b.0 as f64,
                (None, Some(d)) => {
                    let mut window = t.send_buffer.map_or(50.0 * 1024.0, |s| s.0 as f64).min(t.recv_buffer.map_or(50.0 * 1024.0, |s| s.0 as f64));
                    if t.profile.as_deref().or(sc.run.profile.as_deref()) == Some("modern") {
                        window = f64::INFINITY; // buffers sized to the path: the link bounds it
                    }
                    // ...and no faster than the slowest link on its path.
                    let (rate, link) = path_bottleneck_bps(sc, &t.from, &t.to).unwrap_or((max_rate, usize::MAX));
                    let secs = d.0.as_secs_f64().min(end_s);
                    let own = (rate / 8.0).min(window / rtt_floor_s) * secs;
                    if link != usize::MAX {
                        let e = shared.entry(link).or_insert((0.0, 0.0));
                        e.0 += own;
                        e.1 = e.1.max(rate / 8.0 * secs);
                        0.0
                    } else {
                        own
                    }
                }
                _ => 0.0,
            };
            let rows = 4.0 * payload / t.mss.map_or(1460, |m| m.0.max(1)) as f64;
            tcp_bytes = tcp_bytes.saturating_add((rows * TRACE_ROW_BYTES as f64).min(1e18) as u64);
        }
    }
    let smallest_mss = sc.tcp.iter().map(|t| t.mss.map_or(1460, |m| m.0.max(1))).min().unwrap_or(1460) as f64;
    for (_, (sum, cap)) in shared {
        let rows = 4.0 * sum.min(cap) / smallest_mss;
        tcp_bytes = tcp_bytes.saturating_add((rows * TRACE_ROW_BYTES as f64).min(1e18) as u64);
    }
    parts.push(("tcp".into(), tcp_bytes, format!("{} TCP connections", sc.tcp.len())));
    for (i, t) in sc.traffic.iter().enumerate() {
        let o = t.tcp.clone().unwrap_or_default();
        let per = conn(o.send_buffer.map(|s| s.0), o.recv_buffer.map(|s| s.0), o.mss.map(|s| s.0));
        let ways = if t.two_way { 2 } else { 1 };
        let (field, conns) = match t.kind {
            crate::scenario::TrafficKind::Tcplib => (format!("traffic[{i}]"), 1000u64),
            _ => (format!("traffic[{i}].senders"), t.senders.unwrap_or(1) as u64),
        };
        parts.push((field, per.saturating_mul(conns * ways), format!("{} connections", conns * ways)));
    }
    let total = parts.iter().fold(0u64, |a, p| a.saturating_add(p.1));
    parts.sort_by(|a, b| b.1.cmp(&a.1));
    MemoryEstimate { total, parts }
}

/// The slowest link rate on a fewest-hops path from `from` to `to` (as routing picks paths),
/// or None when there is none. Per-direction overrides count at their fastest (an upper bound).
/// Also the index of that link (the first of the slowest).
fn path_bottleneck_bps(sc: &crate::scenario::Scenario, from: &str, to: &str) -> Option<(f64, usize)> {
    use std::collections::{HashMap, VecDeque};
    let mut adj: HashMap<&str, Vec<(&str, f64, usize)>> = HashMap::new();
    for (i, l) in sc.links.iter().enumerate() {
        let over = |o: &Option<crate::scenario::DirectionOverride>| o.as_ref().and_then(|o| o.rate).map_or(0.0, |r| r.0);
        let rate = l.rate.0.max(over(&l.ab)).max(over(&l.ba));
        adj.entry(l.a.as_str()).or_default().push((l.b.as_str(), rate, i));
        adj.entry(l.b.as_str()).or_default().push((l.a.as_str(), rate, i));
    }
    let mut best: HashMap<&str, (f64, usize)> = HashMap::from([(from, (f64::INFINITY, usize::MAX))]);
    let mut queue = VecDeque::from([from]);
    while let Some(n) = queue.pop_front() {
        if n == to {
            return best.get(n).copied().filter(|r| r.0.is_finite());
        }
        let here = best[n];
        for &(m, rate, i) in adj.get(n).map(|v| v.as_slice()).unwrap_or(&[]) {
            if !best.contains_key(m) {
                best.insert(m, if rate < here.0 { (rate, i) } else { here });
                queue.push_back(m);
            }
        }
    }
    None
}

/// Bytes as "512 MB" / "4.2 GB".
pub fn fmt_bytes(b: u64) -> String {
    let mb = b as f64 / (1u64 << 20) as f64;
    if mb >= 1024.0 {
        format!("{:.1} GB", mb / 1024.0)
    } else {
        format!("{mb:.0} MB")
    }
}

/// Refuse a scenario whose memory estimate exceeds `limits.max_memory`, naming its largest part.
pub fn check_limits(sc: &crate::scenario::Scenario, text: &str, file: &str, limits: &Limits) -> Result<(), ScenarioError> {
    let Some(max) = limits.max_memory else { return Ok(()) };
    let est = estimate_memory(sc);
    if est.total <= max {
        return Ok(());
    }
    let (field, bytes, what) = est.parts.first().cloned().unwrap_or_default();
    Err(ScenarioError {
        file: file.to_string(),
        line: crate::scenario::locate(text, &field),
        field,
        message: format!(
            "the run needs an estimated {} of memory, more than --max-memory {} ({} of it for {what}); reduce it or raise --max-memory",
            fmt_bytes(est.total),
            fmt_bytes(max),
            fmt_bytes(bytes)
        ),
    })
}

/// The memory estimate of a scenario text (after overrides), in bytes.
pub fn estimate_memory_text(text: &str, file: &str, overrides: &[String]) -> Result<u64, ScenarioError> {
    let (sc, _, _) = load_text(text, file, overrides)?;
    Ok(estimate_memory(&sc).total)
}

/// [`prepare`] with the memory estimate checked before anything is built.
pub fn prepare_with_limits(
    text: &str,
    file: &str,
    seed: Option<u64>,
    overrides: &[String],
    limits: &Limits,
) -> Result<(Simulation, String), ScenarioError> {
    let (sc, new_text, x) = load_text(text, file, overrides)?;
    check_limits(&sc, &new_text, file, limits).map_err(|e| fix_error(e, text, overrides, x.as_ref()))?;
    let sim = build(&sc, &new_text, file, seed).map_err(|e| fix_error(e, text, overrides, x.as_ref()))?;
    Ok((sim, new_text))
}

/// [`run_text_with_progress`] with [`Limits`] checked before the run.
pub fn run_text_with_limits(
    text: &str,
    file: &str,
    seed: Option<u64>,
    overrides: &[String],
    limits: &Limits,
    progress: impl FnMut(&Simulation) -> bool,
) -> Result<Option<RunResult>, ScenarioError> {
    let (mut sim, text) = prepare_with_limits(text, file, seed, overrides, limits)?;
    let t0 = Instant::now();
    if !sim.run_with_progress(progress) {
        return Ok(None);
    }
    let wall = t0.elapsed().as_secs_f64();
    let summary = Summary::from_sim(&sim, wall);
    Ok(Some(RunResult { sim, summary, text }))
}

/// Sizes in bytes of the structures a packet event touches, for the benchmark's report.
pub fn hot_struct_sizes() -> Vec<(&'static str, usize)> {
    use std::mem::size_of;
    vec![
        ("Event", size_of::<crate::sim::Event>()),
        ("Packet", size_of::<crate::net::packet::Packet>()),
        ("Link", size_of::<crate::net::link::Link>()),
        ("LinkMonitor", size_of::<crate::net::monitor::LinkMonitor>()),
        ("Node", size_of::<crate::net::node::Node>()),
        ("TcpConn (two endpoints)", size_of::<crate::sim::TcpConn>()),
        ("Endpoint", size_of::<tcplab_tcp::Endpoint>()),
    ]
}
