//! The memory a run needs, estimated from the parsed scenario alone (nothing is built), so that
//! `--max-memory` can refuse a run that would not fit before it starts (issue 15) and pass every
//! run that would (issue 28: the old estimate charged every traced link its full rate for the
//! whole run and cried wolf at 77 GB for one traced 600 s flow).
//!
//! What it counts is what the process holds at its peak, each part from the scenario:
//! - `runtime`: the process before the first event (interpreter and libraries): measured;
//! - `scenario`: nodes, links, connections, their summary entries and the parsed text;
//! - `packets`: packets queued and in flight and their events, bounded both by the queues and
//!   pipes they can sit in and by the flows' windows that put them there;
//! - `run.monitor_interval`: the per-interval queue series of the watched link directions;
//! - `run.trace.tcp`, `run.trace.links`, `run.trace.pcap`: trace rows, which are held in memory
//!   until the run directory is written. Their count follows the packets the flows can really
//!   send: no faster than the slowest link on the path (shared among the flows crossing it), no
//!   more than a window per round trip, and for the 1994 loss-based senders a window that grows
//!   by at most one segment per round trip after the first 64 KB (congestion avoidance).
//!
//! The per-row and per-item byte figures were measured (peak RSS of `tcplab run` in a child
//! process, `benches/memory/matrix.py`, issue 28); the estimate is meant to be within 2× of the
//! measured peak, and is checked so by `tests/test_memory_estimate.py`.

use std::collections::HashMap;

use crate::scenario::units::QueueSize;
use crate::scenario::Scenario;

/// Where the memory of a run goes.
#[derive(Clone, Debug)]
pub struct MemoryEstimate {
    pub total: u64,
    /// (field of the scenario, bytes, what), largest first.
    pub parts: Vec<(String, u64, String)>,
}

/// The process before the first event: CPython, polars and the tcplab modules `tcplab run`
/// imports (peak RSS of a one-flow untraced run: 98–100 MB).
pub const PYTHON_RUNTIME_BYTES: u64 = 96 << 20;

/// The process before the first event under the native CLI (`tcplab-native run`): the binary
/// alone, no interpreter (peak RSS of a one-flow untraced 1 s run: 5.9–6.1 MB).
pub const NATIVE_RUNTIME_BYTES: u64 = 6 << 20;

const NODE_BYTES: u64 = 1536; // node, its name and summary entry, its share of the parsed text
const LINK_BYTES: u64 = 6 << 10; // two directions: queues, pipes, monitors, summary entries, text
const CONN_BYTES: u64 = 4 << 10; // two endpoints, their stats, summary entry and text
const SEGMENT_RECORD_BYTES: u64 = 64; // send-log record and reassembly entry per segment in flight
const PACKET_BYTES: u64 = 112 + 12 + 8 + 112; // pooled packet, its event, a queue slot; doubled Vecs
const TCP_ROW_BYTES: u64 = 440; // one TCP trace row: Rust columns, Python lists (names shared), the DataFrame
const LINK_ROW_BYTES: u64 = 330; // one link trace row (names shared)
const INTERVAL_ROW_BYTES: u64 = 500; // one monitor interval row, Rust and Python
const PCAP_PACKET_BYTES: u64 = 2 * (16 + 54); // record header + captured headers, Rust and Python
const TCP_ROWS_PER_SEGMENT: f64 = 4.0; // send, ack in; receive, ack out (measured: 4.0)
const LINK_ROWS_PER_PACKET: f64 = 2.0; // arrive and depart per traced direction
const HEADER_BYTES: f64 = 40.0;

/// One direction of a link: (link index, a→b?).
type Dir = (usize, bool);

struct Path {
    fwd: Vec<Dir>,
    /// Slowest forward rate, bits/s.
    rate: f64,
    /// Propagation out and back plus one segment's transmission per hop, seconds.
    rtt: f64,
}

/// Where a run's trace rows go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Traces {
    /// Held in memory until the run ends (the Python API's tables, `api.Run.save`).
    #[default]
    Held,
    /// Streamed to disk as the run goes (the native CLI, `tcplab-cli`): the simulation holds the
    /// rows of one progress slice, the writer one row group per table.
    Streamed,
}

/// Rows the native CLI buffers per trace table before writing a row group (`tcplab-cli`'s
/// `traces::ROW_GROUP_ROWS` is this constant).
pub const STREAM_ROW_GROUP_ROWS: f64 = 65536.0;
const STREAM_TCP_BUFFER_ROW_BYTES: f64 = 190.0; // 3 shared names (32 B each) and 11 numbers, column Vecs
const STREAM_LINK_BUFFER_ROW_BYTES: f64 = 170.0; // 4 shared names and 5 numbers
const SIM_TCP_ROW_BYTES: f64 = 2.0 * 68.0; // the endpoint's columns, doubled as Vecs grow
const SIM_LINK_ROW_BYTES: f64 = 2.0 * 31.0; // the link monitor's columns, likewise
const SIM_INTERVAL_ROW_BYTES: f64 = 2.0 * 96.0; // one IntervalStats, likewise

/// Rows a streamed trace holds at once, of a run that records `rows` in all: one progress slice
/// in the simulation (1/200 of the run, or PROGRESS_EVENTS events, each adding a row or less),
/// and a row group in the writer; (rows in the simulation, rows in the writer).
fn streamed_rows(rows: f64) -> (f64, f64) {
    let slice = (rows / 200.0).min(crate::sim::PROGRESS_EVENTS as f64);
    (slice.min(rows), STREAM_ROW_GROUP_ROWS.min(rows))
}

/// Estimate the memory a run of `sc` needs, with `runtime` bytes for the process itself, its
/// traces held in memory (the Python API).
pub fn estimate_memory_with(sc: &Scenario, runtime: u64) -> MemoryEstimate {
    estimate_memory_mode(sc, runtime, Traces::Held)
}

/// Estimate the memory a run of `sc` needs, with `runtime` bytes for the process itself and its
/// traces held or streamed.
pub fn estimate_memory_mode(sc: &Scenario, runtime: u64, traces: Traces) -> MemoryEstimate {
    let end_s = sc.run.duration.0.as_secs_f64();
    let mut parts: Vec<(String, u64, String)> = vec![("runtime".into(), runtime, "the process itself".into())];
    let topo = Topology::new(sc);
    let n = sc.nodes.len() as u64;
    let tables = topo.routers() as u64;
    let windows: u64 = sc.tcp.iter().map(|t| window_segments(sc, t) as u64).sum();

    // Packets: no more than the queues and pipes hold, nor than the windows put there.
    let (mut pipes, mut queues) = (0f64, 0f64);
    for i in 0..sc.links.len() {
        for ab in [true, false] {
            let (rate, delay) = topo.dir_params(sc, (i, ab));
            queues += queue_pkts(topo.queue_limit(sc, i, ab));
            pipes += rate * delay / 8.0 / 500.0;
        }
    }
    // TCP flows hold packets where they are bottlenecked: the direction of their path with the
    // smallest share of its rate per flow crossing it, which carries at most its queue plus its
    // rate for a round trip.
    let tcp_paths: Vec<Path> = sc.tcp.iter().filter_map(|t| topo.path(sc, &t.from, &t.to)).collect();
    let mut crossing_flows: HashMap<Dir, f64> = HashMap::new();
    for p in &tcp_paths {
        for d in &p.fwd {
            *crossing_flows.entry(*d).or_default() += 1.0;
        }
    }
    let mut bottlenecks: HashMap<Dir, f64> = HashMap::new();
    for p in &tcp_paths {
        let share = |d: &Dir| topo.dir_params(sc, *d).0 / crossing_flows[d];
        if let Some(&b) = p.fwd.iter().min_by(|x, y| share(x).total_cmp(&share(y))) {
            let e = bottlenecks.entry(b).or_default();
            *e = e.max(p.rtt);
        }
    }
    let closed_room: f64 = bottlenecks
        .iter()
        .map(|(&(l, ab), rtt)| queue_pkts(topo.queue_limit(sc, l, ab)) + topo.dir_params(sc, (l, ab)).0 * rtt / 8.0 / 1000.0)
        .sum::<f64>()
        * 2.0;
    let open_loop = !sc.udp.is_empty() || !sc.traffic.is_empty();
    let held = if open_loop { pipes + queues } else { closed_room.min(2.0 * windows as f64 + 64.0) };
    parts.push(("packets".into(), (held * PACKET_BYTES as f64) as u64, format!("{held:.0} packets queued and in flight at most")));
    let topology = n * NODE_BYTES + tables * n * 4 + sc.links.len() as u64 * LINK_BYTES;
    parts.push(("nodes".into(), topology, format!("{n} nodes and {} links", sc.links.len())));
    let tcp = sc.tcp.len() as u64 * CONN_BYTES + (held as u64).min(windows) * SEGMENT_RECORD_BYTES;
    parts.push(("tcp".into(), tcp, format!("{} TCP connections", sc.tcp.len())));
    for (i, t) in sc.traffic.iter().enumerate() {
        let field = match t.kind {
            crate::scenario::TrafficKind::Tcplib => format!("traffic[{i}]"),
            _ => format!("traffic[{i}].senders"),
        };
        let conns = traffic_conns(t);
        parts.push((field, conns.saturating_mul(CONN_BYTES), format!("{conns} connections")));
    }

    // Packets each flow can send (data; about as many acks come back), and the paths they take.
    // (packets, bytes per packet, path)
    let mut sent: Vec<(f64, f64, Path)> = Vec::new();
    for t in &sc.tcp {
        let Some(p) = topo.path(sc, &t.from, &t.to) else { continue };
        let mss = t.mss.map_or(1460.0, |m| m.0.max(1) as f64);
        let secs = t.duration.map_or(end_s, |d| d.0.as_secs_f64().min(end_s));
        let mut pkts = (p.rate / 8.0 / (mss + HEADER_BYTES)) * secs;
        if let Some(b) = t.bytes {
            pkts = pkts.min(b.0 as f64 / mss * 1.1 + 10.0);
        }
        let modern = t.profile.as_deref().or(sc.run.profile.as_deref()) == Some("modern");
        if !modern {
            let w = window_segments(sc, t) as f64;
            let rounds = secs / p.rtt.max(1e-6);
            pkts = pkts.min(w * rounds);
            if linear_growth(&t.variant) {
                pkts = pkts.min(linear_window_packets(w, (65536.0 / mss).min(w), rounds));
            }
        }
        sent.push((pkts, mss + HEADER_BYTES, p));
    }
    let tcp_flows = sent.len();
    for u in &sc.udp {
        let Some(p) = topo.path(sc, &u.from, &u.to) else { continue };
        let size = u.packet_size.0.max(1) as f64;
        let pps = match (u.rate, u.interval) {
            (Some(r), _) => r.0 / 8.0 / size,
            (None, Some(i)) => 1.0 / i.0.as_secs_f64().max(1e-9),
            _ => p.rate / 8.0 / size,
        };
        sent.push(((pps * end_s).min(p.rate / 8.0 / size * end_s), size, p));
    }
    for t in &sc.traffic {
        let Some(p) = topo.path(sc, &t.from, &t.to) else { continue };
        sent.push((p.rate / 8.0 / 1000.0 * end_s, 1000.0, p));
    }
    // Flows sharing a link direction share its capacity.
    let mut load: HashMap<Dir, f64> = HashMap::new();
    for (pkts, size, p) in &sent {
        for d in &p.fwd {
            *load.entry(*d).or_default() += pkts * size;
        }
    }
    for (pkts, _, p) in sent.iter_mut() {
        let scale = p.fwd.iter().map(|&d| {
            let cap = topo.dir_params(sc, d).0 / 8.0 * end_s;
            (cap / load[&d].max(1.0)).min(1.0)
        });
        *pkts *= scale.fold(1.0, f64::min);
    }

    if sc.run.trace.tcp {
        let segs: f64 = sent[..tcp_flows].iter().map(|s| s.0).sum();
        let rows = segs * TCP_ROWS_PER_SEGMENT;
        parts.push(match traces {
            Traces::Held => ("run.trace.tcp".into(), (rows * TCP_ROW_BYTES as f64) as u64, format!("{rows:.0} TCP trace rows")),
            Traces::Streamed => {
                let (sim, buf) = streamed_rows(rows);
                let bytes = sim * SIM_TCP_ROW_BYTES + buf * STREAM_TCP_BUFFER_ROW_BYTES;
                ("run.trace.tcp".into(), bytes as u64, format!("{rows:.0} TCP trace rows streamed to disk, {:.0} at a time", sim + buf))
            }
        });
    }
    // Per direction: packets crossing it (data forward, acks on the way back).
    let mut crossing: HashMap<Dir, f64> = HashMap::new();
    for (pkts, _, p) in &sent {
        for &(l, ab) in &p.fwd {
            *crossing.entry((l, ab)).or_default() += pkts;
            *crossing.entry((l, !ab)).or_default() += pkts;
        }
    }
    let traced = |names: &[String], (l, ab): Dir| {
        if names.is_empty() {
            return false; // nothing traced: no direction's name to make (32,772 at 4,096 flows)
        }
        let link = &sc.links[l];
        let dir = if ab { format!("{}->{}", link.a, link.b) } else { format!("{}->{}", link.b, link.a) };
        names.iter().any(|t| t == "all" || *t == dir || link.name.as_deref() == Some(t.as_str()))
    };
    let dirs: Vec<Dir> = (0..sc.links.len()).flat_map(|l| [(l, true), (l, false)]).collect();
    let link_rows: f64 = dirs.iter().filter(|&&d| traced(&sc.run.trace.links, d)).map(|d| crossing.get(d).copied().unwrap_or(0.0)).sum::<f64>() * LINK_ROWS_PER_PACKET;
    if link_rows > 0.0 {
        parts.push(match traces {
            Traces::Held => ("run.trace.links".into(), (link_rows * LINK_ROW_BYTES as f64) as u64, format!("{link_rows:.0} link trace rows")),
            Traces::Streamed => {
                let (sim, buf) = streamed_rows(link_rows);
                let bytes = sim * SIM_LINK_ROW_BYTES + buf * STREAM_LINK_BUFFER_ROW_BYTES;
                ("run.trace.links".into(), bytes as u64, format!("{link_rows:.0} link trace rows streamed to disk, {:.0} at a time", sim + buf))
            }
        });
    }
    let pcap: f64 = dirs.iter().filter(|&&d| traced(&sc.run.trace.pcap, d)).map(|d| crossing.get(d).copied().unwrap_or(0.0)).sum();
    if pcap > 0.0 {
        parts.push(("run.trace.pcap".into(), (pcap * PCAP_PACKET_BYTES as f64) as u64, format!("{pcap:.0} captured packets")));
    }
    // Watched directions: traced, named, and the slowest direction of each flow's path both ways.
    let mut watched: Vec<Dir> = dirs.iter().copied().filter(|&d| traced(&sc.run.trace.links, d) || traced(&sc.run.monitor_links, d)).collect();
    for (_, _, p) in &sent {
        watched.extend(p.first_slowest(&topo, sc));
        // The way back, first of its slowest directions from the far end.
        let back: Vec<Dir> = p.fwd.iter().rev().map(|&(l, ab)| (l, !ab)).collect();
        let slowest = back.iter().map(|&d| topo.dir_params(sc, d).0).fold(f64::INFINITY, f64::min);
        if let Some(&d) = back.iter().find(|&&d| topo.dir_params(sc, d).0 <= slowest) {
            watched.push(d);
        }
    }
    watched.sort_unstable();
    watched.dedup();
    let interval_s = sc.run.monitor_interval.map_or(0.1, |d| d.0.as_secs_f64()).max(1e-9);
    let intervals = (end_s / interval_s).min(1e12);
    let rows = watched.len() as f64 * intervals;
    let interval_bytes = match traces {
        Traces::Held => rows * INTERVAL_ROW_BYTES as f64,
        // The monitors' own series (96 B a row, doubled as Vecs grow), written at the end a
        // row group at a time.
        Traces::Streamed => rows * SIM_INTERVAL_ROW_BYTES + STREAM_ROW_GROUP_ROWS.min(rows) * STREAM_TCP_BUFFER_ROW_BYTES,
    };
    parts.push((
        "run.monitor_interval".into(),
        interval_bytes.min(1e18) as u64,
        format!("{intervals:.0} monitor intervals on each of {} link directions", watched.len()),
    ));
    let total = parts.iter().fold(0u64, |a, p| a.saturating_add(p.1));
    parts.sort_by(|a, b| b.1.cmp(&a.1));
    MemoryEstimate { total, parts }
}

/// Hand the heap pages freed so far back to the system (glibc's `malloc_trim`). Parsing a large
/// scenario holds its whole TOML document (60 MB for a 4,096-flow dumbbell) and the build frees
/// the parsed scenario; without this the simulation's allocations land beyond those free pages,
/// and the peak resident set was the two added up (issue 28: 110 MB at 4,096 flows).
pub fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A queue limit in packets (bytes in 500-byte packets).
fn queue_pkts(q: QueueSize) -> f64 {
    match q {
        QueueSize::Packets(p) => p as f64,
        QueueSize::Bytes(b) => b as f64 / 500.0,
    }
}

/// Connections a `[[traffic]]` source keeps at once.
fn traffic_conns(t: &crate::scenario::TrafficCfg) -> u64 {
    let ways = if t.two_way { 2 } else { 1 };
    match t.kind {
        crate::scenario::TrafficKind::Tcplib => 1000 * ways,
        _ => t.senders.unwrap_or(1) as u64 * ways,
    }
}

/// A flow's largest window in segments (buffers, 64 KB without window scaling).
fn window_segments(sc: &Scenario, t: &crate::scenario::TcpCfg) -> f64 {
    let mss = t.mss.map_or(1460.0, |m| m.0.max(1) as f64);
    let modern = t.profile.as_deref().or(sc.run.profile.as_deref()) == Some("modern");
    let default = if modern { 4.0 * 1024.0 * 1024.0 } else { 50.0 * 1024.0 };
    let mut w = t.send_buffer.map_or(default, |s| s.0 as f64).min(t.recv_buffer.map_or(default, |s| s.0 as f64));
    if !modern && t.window_scaling != Some(true) {
        w = w.min(65535.0);
    }
    w / mss + 1.0
}

/// Variants whose window grows by at most a segment per round trip once past slow start.
fn linear_growth(variant: &str) -> bool {
    ["reno", "newreno", "tahoe", "sack", "vegas", "lite", "reno-sack"].iter().any(|v| variant.eq_ignore_ascii_case(v))
}

/// Segments sent in `rounds` round trips by a window starting at `start` segments, growing by one
/// per round trip up to `max`.
fn linear_window_packets(max: f64, start: f64, rounds: f64) -> f64 {
    let to_max = (max - start).max(0.0);
    if rounds <= to_max {
        start * rounds + rounds * rounds / 2.0
    } else {
        start * to_max + to_max * to_max / 2.0 + max * (rounds - to_max)
    }
}

impl Path {
    /// The first of the slowest directions on the path, where its queue builds.
    fn first_slowest(&self, topo: &Topology, sc: &Scenario) -> Option<Dir> {
        self.fwd.iter().copied().find(|&d| topo.dir_params(sc, d).0 <= self.rate)
    }
}

/// The links as a graph over node numbers, for the flows' paths. A breadth-first search per
/// flow over a 4,096-flow dumbbell visits the router's 4,096 neighbours each time: with names in
/// hash maps that was 20 s of a run's start; over numbered nodes with a stamped visited array
/// (never cleared between searches) it was 2 s. Now the flows share searches (issue 28): a
/// source with one link (a host) starts its path through that link, and the search from the node
/// behind it is kept and resumed for the next flow from the same place, so a dumbbell's 4,096
/// flows cost one search from the left router. The paths found are those of a search per flow:
/// the BFS tree from a leaf's neighbour is the tree from the leaf minus the leaf itself, and a
/// node's parent in a BFS tree is fixed when the node is first reached, however far the search
/// then goes.
struct Topology<'a> {
    ids: HashMap<&'a str, usize>,
    adj: Vec<Vec<(usize, Dir)>>,
    search: std::cell::RefCell<Search>,
}

/// One breadth-first search, resumable: its root, its queue (`queue[head..]` still to expand),
/// and per node the search that reached it (a stamp, so the arrays are never cleared) and the
/// node and direction it came from.
struct Search {
    root: usize,
    stamp: u32,
    queue: Vec<usize>,
    head: usize,
    visited: Vec<u32>,
    prev: Vec<(usize, Dir)>,
}

impl Search {
    /// Make `root` the search's root (a new search unless it already is).
    fn start(&mut self, root: usize) {
        if self.stamp != 0 && self.root == root {
            return;
        }
        self.root = root;
        self.stamp += 1;
        self.queue.clear();
        self.queue.push(root);
        self.head = 0;
        self.visited[root] = self.stamp;
    }

    fn reached(&self, n: usize) -> bool {
        self.visited[n] == self.stamp
    }

    /// Expand the search until `dst` is reached or nothing is left; whether it was reached.
    fn reach(&mut self, adj: &[Vec<(usize, Dir)>], dst: usize) -> bool {
        while !self.reached(dst) && self.head < self.queue.len() {
            let n = self.queue[self.head];
            self.head += 1;
            for &(m, d) in &adj[n] {
                if self.visited[m] != self.stamp {
                    self.visited[m] = self.stamp;
                    self.prev[m] = (n, d);
                    self.queue.push(m);
                }
            }
        }
        self.reached(dst)
    }
}

impl<'a> Topology<'a> {
    fn new(sc: &'a Scenario) -> Self {
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut adj: Vec<Vec<(usize, Dir)>> = Vec::new();
        let mut id = |name: &'a str, adj: &mut Vec<Vec<(usize, Dir)>>| {
            let next = ids.len();
            let i = *ids.entry(name).or_insert(next);
            if i == adj.len() {
                adj.push(Vec::new());
            }
            i
        };
        for (i, l) in sc.links.iter().enumerate() {
            let (a, b) = (id(l.a.as_str(), &mut adj), id(l.b.as_str(), &mut adj));
            adj[a].push((b, (i, true)));
            adj[b].push((a, (i, false)));
        }
        let n = adj.len();
        let search = Search { root: 0, stamp: 0, queue: Vec::with_capacity(n), head: 0, visited: vec![0; n], prev: vec![(0, (0, false)); n] };
        Topology { ids, adj, search: std::cell::RefCell::new(search) }
    }

    /// Nodes with more than one link (they hold a routing table).
    fn routers(&self) -> usize {
        self.adj.iter().filter(|v| v.len() > 1).count()
    }

    /// Rate (bits/s) and delay (s) of one direction, overrides applied.
    fn dir_params(&self, sc: &Scenario, (l, ab): Dir) -> (f64, f64) {
        let link = &sc.links[l];
        let ov = if ab { link.ab.as_ref() } else { link.ba.as_ref() };
        let rate = ov.and_then(|o| o.rate).unwrap_or(link.rate).0;
        let delay = ov.and_then(|o| o.delay).unwrap_or(link.delay).0.as_secs_f64();
        (rate, delay)
    }

    fn queue_limit(&self, sc: &Scenario, l: usize, ab: bool) -> QueueSize {
        let link = &sc.links[l];
        let ov = if ab { link.ab.as_ref() } else { link.ba.as_ref() };
        ov.and_then(|o| o.queue.as_ref()).or(link.queue.as_ref()).map(|q| q.limit.0).unwrap_or(QueueSize::Packets(crate::build::DEFAULT_QUEUE_PKTS))
    }

    /// A fewest-hops path from `from` to `to` (as routing picks paths), or None: the path a
    /// breadth-first search from `from` finds (links in order at each node).
    fn path(&self, sc: &Scenario, from: &str, to: &str) -> Option<Path> {
        let (&src, &dst) = (self.ids.get(from)?, self.ids.get(to)?);
        if src == dst {
            return None;
        }
        let mut fwd = Vec::new();
        // A source with one link: the path starts with it, the rest is the search from behind it.
        let root = match self.adj[src].as_slice() {
            &[(next, d)] => {
                fwd.push(d);
                next
            }
            _ => src,
        };
        let mut search = self.search.borrow_mut();
        search.start(root);
        if !search.reach(&self.adj, dst) {
            return None;
        }
        let first = fwd.len();
        let mut at = dst;
        while at != root {
            let (p, d) = search.prev[at];
            fwd.push(d);
            at = p;
        }
        fwd[first..].reverse();
        let (mut rate, mut rtt) = (f64::INFINITY, 0.0);
        for &d in &fwd {
            let (r, delay) = self.dir_params(sc, d);
            rate = rate.min(r);
            let (rr, back) = self.dir_params(sc, (d.0, !d.1));
            rtt += delay + back + 1500.0 * 8.0 / r.max(1.0) + HEADER_BYTES * 8.0 / rr.max(1.0);
        }
        (!fwd.is_empty()).then_some(Path { fwd, rate, rtt })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path a breadth-first search from `from` alone finds (the search per flow that
    /// `Topology::path` shares between flows): directions in link order at each node.
    fn reference_path(sc: &Scenario, from: &str, to: &str) -> Option<Vec<Dir>> {
        let topo = Topology::new(sc);
        let (&src, &dst) = (topo.ids.get(from)?, topo.ids.get(to)?);
        let mut prev: HashMap<usize, (usize, Dir)> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([src]);
        let mut seen = vec![false; topo.adj.len()];
        seen[src] = true;
        while let Some(n) = queue.pop_front() {
            for &(m, d) in &topo.adj[n] {
                if !seen[m] {
                    seen[m] = true;
                    prev.insert(m, (n, d));
                    queue.push_back(m);
                }
            }
        }
        if !seen[dst] || src == dst {
            return None;
        }
        let mut fwd = Vec::new();
        let mut at = dst;
        while at != src {
            let (p, d) = prev[&at];
            fwd.push(d);
            at = p;
        }
        fwd.reverse();
        Some(fwd)
    }

    /// Shared and resumed searches find the paths of one search per flow, whatever order the
    /// flows come in: ties (a diamond, two equal ways), leaves (hosts) on routers and on a
    /// chain, a leaf pair on its own, and an unconnected node.
    #[test]
    fn shared_searches_find_the_paths_of_a_search_per_flow() {
        let links = [
            ("h1", "r1"), ("r1", "r2"), ("r1", "r3"), ("r2", "r4"), ("r3", "r4"), ("r4", "h2"), ("r4", "h3"),
            ("r2", "c1"), ("c1", "c2"), ("c2", "h4"), ("h5", "r3"), ("r1", "h6"), ("x1", "x2"),
        ];
        let mut text = String::from("[run]\nduration = \"1s\"\n[[nodes]]\nname = \"h1\"\nkind = \"host\"\n");
        for (a, b) in links {
            text.push_str(&format!("[[links]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n"));
        }
        text.push_str("[[links]]\na = \"lone\"\nb = \"lone2\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n");
        let sc = crate::scenario::parse(&text, "t.toml").unwrap();
        let mut names: Vec<&str> = links.iter().flat_map(|&(a, b)| [a, b]).collect();
        names.extend(["lone", "lone2", "nowhere"]);
        names.sort_unstable();
        names.dedup();
        let topo = Topology::new(&sc);
        let mut checked = 0;
        // Sources in turn, then destinations in turn (so searches are resumed and restarted).
        let by_source = names.iter().flat_map(|&a| names.iter().map(move |&b| (a, b)));
        let by_dest = names.iter().flat_map(|&b| names.iter().map(move |&a| (a, b)));
        for (a, b) in by_source.chain(by_dest) {
            let got = topo.path(&sc, a, b).map(|p| p.fwd);
            assert_eq!(got, reference_path(&sc, a, b), "{a} -> {b}");
            checked += usize::from(got.is_some());
        }
        assert!(checked > 200, "{checked} paths");
        // The diamond's tie goes the way of the lower link: h1 -> r1 -> r2 -> r4 -> h2.
        assert_eq!(topo.path(&sc, "h1", "h2").unwrap().fwd, vec![(0, true), (1, true), (3, true), (5, true)]);
    }
}
