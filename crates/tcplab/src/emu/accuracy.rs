//! How faithful an emulation run was, measured in the run itself (issue 24).
//!
//! Every datagram handed to a host leaves one [`Record`]: the wall-clock time it was read from
//! its sender's TAP (or sent by a tcplab endpoint) — stamped at that moment, never earlier —
//! its due time in the simulation (arrival + queueing + serialization + propagation on every
//! link of its path) and the wall-clock time it was released. From these:
//!
//! - release lateness (released − due, released being the moment the write to the host's TAP
//!   began: the kernel runs the host's receive path inside that write, and its duration, the
//!   host's processing, is reported apart as `host_write_*`) per delivering link: p50, p99, max and the count over
//!   1 ms, against the 0.1 ms target ([`LATENESS_TARGET_NS`]);
//! - `released_early`: datagrams released before their due time, or due sooner after their
//!   arrival than serialization and propagation along their path allow — zero in a correct run;
//! - per link direction, the achieved rate (bytes of its busy periods over their wall-clock
//!   length) against the configured one;
//! - the loop's own wake-up lateness (how late ppoll returned against the time it asked for): what
//!   this machine allowed the emulator at that moment, so a test can tell an emulator that fell
//!   behind from a machine that could not keep up.

use super::LATENESS_TARGET_NS;
use crate::sim::Simulation;

/// One datagram released to a host (32 bytes; the Python side reads them as `<HHIQQQ`).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Record {
    /// The link that delivered it (the last hop of its path).
    pub link: u16,
    /// 1 when the machine held the emulator between its due time and its release (took the CPU
    /// from it — a higher-priority task, RT throttling — or woke it from a sleep more than
    /// 0.05 ms late), so its lateness is the machine's, not the emulator's.
    pub held: u16,
    pub size: u32,
    /// Wall-clock ns since the emulation's start when it entered the network.
    pub arrival_ns: u64,
    /// Due time: when the simulation delivered it.
    pub due_ns: u64,
    /// Wall-clock ns when it was written to the host's TAP (or handed to a tcplab endpoint).
    pub released_ns: u64,
}

/// Records kept for the per-packet file (32 bytes each: 4 M = 128 MB); beyond that only the
/// counts, max and early checks go on.
const MAX_RECORDS: usize = 4 << 20;

pub struct Accuracy {
    pub records: Vec<Record>,
    pub records_dropped: u64,
    /// Per link: (max lateness, count over 1 ms, released).
    per_link: Vec<(u64, u64, u64)>,
    pub released_early: u64,
    /// Per link: (was busy, wall time its busy period began, forwarded bytes then, wall busy
    /// ns and bytes of the busy periods seen from start to end).
    pub busy: Vec<(bool, u64, u64, u64, u64)>,
    pub wake_late_ns: Vec<u64>,
    /// How long each write of a datagram to a host's TAP took (the kernel runs the host's
    /// receive path inside the write).
    pub host_write_ns: Vec<u64>,
    /// Times the loop went to sleep with a delivered datagram not yet released: zero in a
    /// correct loop, whatever the machine's load (its wake-up is timed by the pending events).
    pub slept_with_datagrams_due: u64,
    pub frames_in: u64,
    pub bad_frames: u64,
    pub foreign_frames: u64,
    /// The loop's slow steps (diagnostics, [`super::steplog`]).
    pub steps: super::steplog::StepLog,
}

impl Accuracy {
    pub fn new(sim: &Simulation) -> Accuracy {
        Accuracy {
            records: Vec::with_capacity(1 << 16),
            records_dropped: 0,
            per_link: vec![(0, 0, 0); sim.links.len()],
            released_early: 0,
            busy: vec![(false, 0, 0, 0, 0); sim.links.len()],
            wake_late_ns: Vec::with_capacity(1 << 16),
            host_write_ns: Vec::with_capacity(1 << 16),
            slept_with_datagrams_due: 0,
            frames_in: 0,
            bad_frames: 0,
            foreign_frames: 0,
            steps: super::steplog::StepLog::new(),
        }
    }

    /// A datagram from `src` (which entered at `arrival`) was released to `node` at `released`,
    /// due at `due`.
    #[allow(clippy::too_many_arguments)]
    pub fn released(&mut self, sim: &Simulation, src: u32, node: u32, size: u32, arrival: u64, due: u64, released: u64, held: bool) {
        let (link, min_latency) = path_min_latency(sim, src, node, size);
        if released < due || due < arrival + min_latency {
            self.released_early += 1;
        }
        let late = released.saturating_sub(due);
        let l = &mut self.per_link[link as usize];
        l.0 = l.0.max(late);
        l.1 += (late > 1_000_000) as u64;
        l.2 += 1;
        if self.records.len() < MAX_RECORDS {
            self.records.push(Record { link: link as u16, held: held as u16, size, arrival_ns: arrival, due_ns: due, released_ns: released });
        } else {
            self.records_dropped += 1;
        }
    }

    /// A write to a host's TAP took `ns` (kept for the first [`MAX_RECORDS`] writes).
    pub fn host_write(&mut self, ns: u64) {
        if self.host_write_ns.len() < MAX_RECORDS {
            self.host_write_ns.push(ns);
        }
    }

    /// Note which links are transmitting at wall time `wall` (busy periods in wall-clock time).
    pub fn sample_links(&mut self, sim: &Simulation, wall: u64) {
        for (i, l) in sim.links.iter().enumerate() {
            let b = &mut self.busy[i];
            let now_busy = l.busy.is_some();
            // A busy period's bytes are those forwarded by its end, plus the one in service at its
            // start when that was already on the wire (it is counted when it finishes).
            if now_busy && !b.0 {
                b.1 = wall;
                b.2 = l.monitor.forwarded_bytes;
            } else if !now_busy && b.0 {
                b.3 += wall - b.1;
                b.4 += l.monitor.forwarded_bytes - b.2;
            }
            b.0 = now_busy;
        }
    }

    /// Lateness figures of link `link` (or of every link with None): (released, p50, p99, max,
    /// over 1 ms), in ns. Percentiles from the kept records; max and counts over all.
    pub fn lateness(&self, link: Option<u32>) -> (u64, f64, f64, u64, u64) {
        let mut late: Vec<u64> = self.records.iter().filter(|r| link.is_none_or(|l| r.link as u32 == l)).map(|r| r.released_ns.saturating_sub(r.due_ns)).collect();
        late.sort_unstable();
        let (max, over, n) = match link {
            Some(l) => self.per_link[l as usize],
            None => self.per_link.iter().fold((0, 0, 0), |a, b| (a.0.max(b.0), a.1 + b.1, a.2 + b.2)),
        };
        (n, percentile(&late, 0.5), percentile(&late, 0.99), max, over)
    }

    /// Lateness p99 (ns) of the datagrams whose release the machine did not interrupt, and their
    /// count.
    pub fn unheld_p99(&self) -> (f64, usize) {
        let mut late: Vec<u64> = self.records.iter().filter(|r| r.held == 0).map(|r| r.released_ns.saturating_sub(r.due_ns)).collect();
        late.sort_unstable();
        (percentile(&late, 0.99), late.len())
    }

    /// Links that delivered datagrams to hosts.
    pub fn delivering_links(&self) -> impl Iterator<Item = u32> + '_ {
        self.per_link.iter().enumerate().filter(|(_, p)| p.2 > 0).map(|(i, _)| i as u32)
    }

    /// Whether a lateness p99 means the run fell behind its target.
    pub fn behind(p99_ns: f64) -> bool {
        p99_ns > LATENESS_TARGET_NS as f64
    }
}

/// The last link of the simulator's route from `src` to `dst` and the least time a datagram of
/// `size` bytes can take along it (serialization and propagation on every link, no queueing).
pub fn path_min_latency(sim: &Simulation, src: u32, dst: u32, size: u32) -> (u32, u64) {
    let (mut node, mut total, mut last) = (src, 0u64, 0u32);
    for _ in 0..sim.nodes.len() {
        if node == dst {
            break;
        }
        let l = sim.nodes[node as usize].route(dst);
        let Some(link) = sim.links.get(l as usize) else { break };
        total += link.tx_time(size).0 + link.params.delay.0;
        last = l;
        node = link.to;
    }
    (last, total)
}

pub fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64
}

/// The records as little-endian bytes, 32 per datagram (`<HHIQQQ`: link, held, size,
/// arrival_ns, due_ns, released_ns).
pub fn records_bytes(records: &[Record]) -> Vec<u8> {
    let mut out = Vec::with_capacity(records.len() * 32);
    for r in records {
        out.extend_from_slice(&r.link.to_le_bytes());
        out.extend_from_slice(&r.held.to_le_bytes());
        out.extend_from_slice(&r.size.to_le_bytes());
        out.extend_from_slice(&r.arrival_ns.to_le_bytes());
        out.extend_from_slice(&r.due_ns.to_le_bytes());
        out.extend_from_slice(&r.released_ns.to_le_bytes());
    }
    out
}

/// A wake-up from ppoll this much later than asked means the machine held the emulator.
pub const HELD_WAKE_NS: u64 = 50_000;

/// When the machine held the emulator's thread: took the CPU from it (its involuntary context
/// switches, getrusage RUSAGE_THREAD), kept it waiting for a CPU more than [`HELD_WAKE_NS`]
/// between two steps of the loop (schedstat's run delay: a wake-up by a readable TAP that waited
/// behind another task, which neither the switch count nor the timer's lateness shows), both
/// sampled at every step of the loop, or woke it from a timed sleep more than [`HELD_WAKE_NS`]
/// late; kept is the wall time this was last seen. Must be made on the thread it watches.
pub struct Held {
    count: i64,
    run_delay: super::sys::RunDelay,
    delay: u64,
    last_change_at: u64,
}

impl Default for Held {
    fn default() -> Self {
        Self::new()
    }
}

impl Held {
    pub fn new() -> Held {
        let mut run_delay = super::sys::RunDelay::open();
        let delay = run_delay.read().unwrap_or(0);
        Held { count: super::sys::involuntary_switches(), run_delay, delay, last_change_at: 0 }
    }

    /// Sample the counters at wall time `t`.
    pub fn sample(&mut self, t: u64) {
        let c = super::sys::involuntary_switches();
        if c != self.count {
            self.count = c;
            self.last_change_at = t;
        }
        if let Some(d) = self.run_delay.read() {
            if d.saturating_sub(self.delay) > HELD_WAKE_NS {
                self.last_change_at = t;
            }
            self.delay = d;
        }
    }

    /// The loop woke at `t` from a sleep `late` ns after the time it asked for: beyond
    /// [`HELD_WAKE_NS`] the machine held the emulator too (it could not run when it should).
    pub fn woke(&mut self, t: u64, late: u64) {
        if late > HELD_WAKE_NS {
            self.last_change_at = t;
        }
    }

    /// Whether the machine may have held the thread since wall time `since`: a late wake-up or a
    /// sample that saw the switch count grow after it (the switch itself lies between that
    /// sample and the one before).
    pub fn since(&self, since: u64) -> bool {
        self.last_change_at > since
    }
}
