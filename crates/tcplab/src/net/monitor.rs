//! Per-link-direction monitors: counters, drops by reason with timestamps, utilization, and the
//! queue length as a time-weighted average plus min/max/average per interval (seed 000 Fig 2.7;
//! §6.2.2: "look at distributions and extremes, not just means").
//!
//! The interval series is recorded only on the link directions somebody looks at (issue 13):
//! traced ones, those named in `run.monitor_links`, and by default the slowest direction on each
//! flow's path (where the bottleneck is); the others keep only the run totals, a few counters.
//!
//! Invariant (tested): `arrived == departed + dropped_at_queue + queued` where `departed` counts
//! packets that left the queue for the wire and `queued` excludes the packet being transmitted.
//!
//! Seed 003's link statistics (Kelly, Figs 5–7, Tables 1–2): work arriving (bytes offered to the
//! link, dropped ones included), work forwarded, ECN-capable arrivals and CE marks per interval,
//! and each packet's queueing delay — from joining the queue to the start of its transmission
//! (0 for a packet that finds the link idle), as ns-2's queue monitor measures it. The delay is
//! matched to packets in arrival order, so it assumes a FIFO discipline (all of tcplab's are).
//! [`LinkCounters`] are cumulative; a measurement window is the difference of two snapshots.

use super::packet::DropReason;
use super::capture::LinkCapture;
use crate::engine::SimTime;

#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct IntervalStats {
    pub t_start_s: f64,
    pub min_pkts: u32,
    pub max_pkts: u32,
    pub avg_pkts: f64,
    /// Bytes that finished transmission in the interval (utilization per bucket, 000 Fig 2.5).
    pub bytes_out: u64,
    /// An active queue manager's own average (RED's `avg`) at the end of the interval.
    pub aqm_avg_pkts: Option<f64>,
    /// Bytes that arrived at the link in the interval, dropped ones included (work arrival).
    pub bytes_in: u64,
    /// ECN-capable packets that arrived, and those the queue CE-marked.
    pub ect_in: u64,
    pub ce_marks: u64,
    /// Queueing delays of the packets that left the queue in the interval: count, sum and sum of
    /// squares, seconds.
    pub delay_n: u64,
    pub delay_sum_s: f64,
    pub delay_sumsq_s2: f64,
}

/// Cumulative counters of a link direction, snapshotted at a measurement window's edges.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkCounters {
    pub at: SimTime,
    pub arrived_pkts: u64,
    pub arrived_bytes: u64,
    pub forwarded_bytes: u64,
    pub busy_ns: u64,
    pub drops: u64,
    pub ect_arrived: u64,
    pub ecn_marks: u64,
    pub delay_n: u64,
    pub delay_sum_s: f64,
    pub delay_sumsq_s2: f64,
    pub q_area: u128,
}

/// Recorded only for traced links: one row per arrival, departure and drop.
#[derive(Default, Debug)]
pub struct LinkTrace {
    pub t: Vec<u64>,
    /// 0 arrive, 1 depart, 2 drop
    pub event: Vec<u8>,
    pub bytes: Vec<u32>,
    pub qlen: Vec<u32>,
    pub reason: Vec<u8>,
    /// Whose packet: [`PacketTag`]'s fields, one per row.
    pub flow: Vec<u32>,
    pub kind: Vec<u8>,
    pub seq: Vec<i64>,
}

/// Whose packet a link trace row is about, so a user can tell whose packet was dropped.
/// `flow` indexes [`crate::sim::Simulation::trace_flow_name`] (`NO_FLOW`: not known, e.g. an
/// emulated datagram or a segment of a traffic connection that has already gone); `kind`
/// indexes [`PacketTag::KIND_NAMES`]; `seq` is, for TCP, a byte offset from the connection's
/// first data byte in the direction the number belongs to (as `trace_tcp.parquet`'s `seq`): the
/// segment's first payload byte for data, the acknowledged offset (next byte expected) for a
/// pure ACK, the SYN at -1 and the FIN at the offset after the data for control segments (the
/// raw wire number for a segment of a traffic connection that has gone); for UDP the
/// datagram's number from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketTag {
    pub flow: u32,
    pub kind: u8,
    pub seq: i64,
}

impl PacketTag {
    pub const NO_FLOW: u32 = u32::MAX;
    /// data: a TCP segment with payload; ack: no payload, no SYN/FIN/RST; ctl: SYN, FIN or RST
    /// without payload; udp: a datagram; raw: an emulated IPv4 datagram.
    pub const KIND_NAMES: [&'static str; 6] = ["", "data", "ack", "ctl", "udp", "raw"];
    pub const NONE: PacketTag = PacketTag { flow: Self::NO_FLOW, kind: 0, seq: 0 };
}

pub const MAX_DROP_TIMES: usize = 100_000;

/// Field order is deliberate (`repr(C)`, hot first): at thousands of flows a link direction
/// is cold when its next packet comes, and every cache line its per-packet bookkeeping touches
/// is a miss (issue 13). The first ~160 bytes hold what every arrival, departure and
/// transmission end updates; the interval accumulators (`cur_*`) follow and are touched only
/// where the interval series is recorded; drops, ECN and the result vectors come last.
#[derive(Debug)]
#[repr(C)]
pub struct LinkMonitor {
    // Queue length (waiting packets) and system occupancy (waiting + in service), time-weighted.
    last_change: SimTime,
    q_len: u32,
    in_service: u32,
    q_area: u128,
    // No system-occupancy integral of its own: with at most one packet in service it is
    // `q_area + busy_ns` exactly (see `system_avg`), one u128 multiply-add less per change.
    pub busy_ns: u64,
    pub arrived_pkts: u64,
    pub arrived_bytes: u64,
    /// Left the queue and began transmission.
    pub departed_pkts: u64,
    /// Finished transmission and left onto the wire (delivered or lost/corrupted on the wire).
    pub forwarded_pkts: u64,
    pub forwarded_bytes: u64,
    /// Queueing delay of every packet that left the queue: count, sum, sum of squares (s, s²).
    pub delay_n: u64,
    pub delay_sum_s: f64,
    pub delay_sumsq_s2: f64,
    pub q_max: u32,
    /// Whether `intervals` is recorded on this link direction (see the module header).
    pub record_intervals: bool,
    /// Boxed: an untraced link direction (the default) pays one pointer, not eight vectors,
    /// which keeps `Link` small on the per-packet path.
    pub trace: Option<Box<LinkTrace>>,
    /// pcap capture of this link direction (`trace = { pcap = [...] }`), see [`super::capture`].
    pub pcap: Option<Box<LinkCapture>>,
    // Interval stats (updated only when `record_intervals`).
    /// `q_area` at the start of the current interval: the interval's area is `q_area`'s growth
    /// since, so only a crossed boundary costs anything beyond the run total's integral.
    area_at_start: u128,
    interval: u64,
    /// End of the current interval (it started at `cur_end - interval`).
    cur_end: u64,
    cur_min: u32,
    cur_max: u32,
    cur_bytes: u64,
    cur_bytes_in: u64,
    cur_delay_n: u64,
    cur_delay_sum: f64,
    cur_delay_sq: f64,
    cur_ect_in: u64,
    cur_marks: u64,
    /// Arrival times of the packets waiting in the (FIFO) queue.
    enq_times: std::collections::VecDeque<u64>,
    /// ECN-capable packets that arrived.
    pub ect_arrived: u64,
    /// Packets whose ECN codepoint this link's queue set to CE.
    pub ecn_marks: u64,
    /// Latest average reported by an AQM queue (RED), recorded per interval.
    pub aqm_avg: Option<f64>,
    pub drops: [u64; DropReason::COUNT],
    pub drop_times: Vec<(SimTime, DropReason)>,
    pub intervals: Vec<IntervalStats>,
}

impl LinkMonitor {
    pub fn new(interval: SimTime, trace: bool) -> Self {
        LinkMonitor {
            arrived_pkts: 0,
            arrived_bytes: 0,
            departed_pkts: 0,
            forwarded_pkts: 0,
            forwarded_bytes: 0,
            drops: [0; DropReason::COUNT],
            drop_times: Vec::new(),
            busy_ns: 0,
            q_len: 0,
            in_service: 0,
            last_change: SimTime::ZERO,
            q_area: 0,
            q_max: 0,
            interval: interval.0.max(1),
            cur_end: interval.0.max(1),
            cur_min: 0,
            cur_max: 0,
            area_at_start: 0,
            cur_bytes: 0,
            intervals: Vec::new(),
            record_intervals: true,
            trace: if trace { Some(Box::default()) } else { None },
            ecn_marks: 0,
            aqm_avg: None,
            ect_arrived: 0,
            delay_n: 0,
            delay_sum_s: 0.0,
            delay_sumsq_s2: 0.0,
            enq_times: std::collections::VecDeque::new(),
            cur_bytes_in: 0,
            cur_ect_in: 0,
            cur_marks: 0,
            cur_delay_n: 0,
            cur_delay_sum: 0.0,
            cur_delay_sq: 0.0,
            pcap: None,
        }
    }

    /// The interval row being closed (its queue area `area`), with the seed-003 columns, and
    /// reset them.
    fn take_interval(&mut self, span: u64, area: u128) -> IntervalStats {
        let row = IntervalStats {
            t_start_s: SimTime(self.cur_end - self.interval).as_secs_f64(),
            min_pkts: self.cur_min,
            max_pkts: self.cur_max,
            avg_pkts: area as f64 / span.max(1) as f64,
            bytes_out: self.cur_bytes,
            aqm_avg_pkts: self.aqm_avg,
            bytes_in: self.cur_bytes_in,
            ect_in: self.cur_ect_in,
            ce_marks: self.cur_marks,
            delay_n: self.cur_delay_n,
            delay_sum_s: self.cur_delay_sum,
            delay_sumsq_s2: self.cur_delay_sq,
        };
        self.cur_bytes = 0;
        self.cur_bytes_in = 0;
        self.cur_ect_in = 0;
        self.cur_marks = 0;
        self.cur_delay_n = 0;
        self.cur_delay_sum = 0.0;
        self.cur_delay_sq = 0.0;
        row
    }

    /// An arrival's ECN capability (after `on_arrive`).
    #[inline]
    pub fn on_arrive_ecn(&mut self, now: SimTime, bytes: u32, ect: bool) {
        self.advance(now);
        if self.record_intervals {
            self.cur_bytes_in += bytes as u64;
            self.cur_ect_in += ect as u64;
        }
        if ect {
            self.ect_arrived += 1;
        }
    }

    /// The queue CE-marked an arrival.
    #[inline]
    pub fn on_mark(&mut self) {
        self.ecn_marks += 1;
        if self.record_intervals {
            self.cur_marks += 1;
        }
    }

    /// A packet joined the waiting queue at `now`.
    #[inline]
    pub fn on_enqueued(&mut self, now: SimTime) {
        self.enq_times.push_back(now.0);
    }

    /// A packet left for the wire: `waited` = it came from the queue (else it found the link idle).
    #[inline]
    pub fn on_delay(&mut self, now: SimTime, waited: bool) {
        let d = if waited { self.enq_times.pop_front().map_or(0, |t| now.0.saturating_sub(t)) } else { 0 };
        self.on_delay_of(now, SimTime(d));
    }

    /// A packet found the link idle and left at once (a delay of 0). Counted without the sums:
    /// adding 0.0 leaves them as they are (they only ever hold +0.0 or more).
    #[inline]
    pub fn on_no_wait(&mut self) {
        self.delay_n += 1;
        // A test, not a branch-free add of 0: the add wrote the interval accumulators' cache
        // line on every such packet of every unwatched direction (a miss per packet on a cold
        // access link at thousands of flows; issue 28).
        if self.record_intervals {
            self.cur_delay_n += 1;
        }
    }

    /// A packet left for the wire after waiting `d` (a discipline that measures it itself).
    #[inline]
    pub fn on_delay_of(&mut self, _now: SimTime, d: SimTime) {
        let s = d.0 as f64 / 1e9;
        self.delay_n += 1;
        self.delay_sum_s += s;
        self.delay_sumsq_s2 += s * s;
        if self.record_intervals {
            self.cur_delay_n += 1;
            self.cur_delay_sum += s;
            self.cur_delay_sq += s * s;
        }
    }

    /// Cumulative counters as of `now`.
    pub fn counters(&mut self, now: SimTime) -> LinkCounters {
        self.advance(now);
        LinkCounters {
            at: now,
            arrived_pkts: self.arrived_pkts,
            arrived_bytes: self.arrived_bytes,
            forwarded_bytes: self.forwarded_bytes,
            busy_ns: self.busy_ns,
            drops: self.total_drops(),
            ect_arrived: self.ect_arrived,
            ecn_marks: self.ecn_marks,
            delay_n: self.delay_n,
            delay_sum_s: self.delay_sum_s,
            delay_sumsq_s2: self.delay_sumsq_s2,
            q_area: self.q_area,
        }
    }

    /// Advance the time integrals to `now` (closing any interval boundaries passed). Inline: the
    /// time test, the run totals and, on a watched direction, the boundary test; only closing
    /// an interval is out of line. (The out-of-line call for every direction cost ~15
    /// instructions per event in its prologue and epilogue alone, and the interval's own
    /// integral, called on every change of a watched direction, ~10 per event; issue 28.)
    #[inline(always)]
    fn advance(&mut self, now: SimTime) {
        if now > self.last_change {
            if self.record_intervals && now.0 >= self.cur_end {
                self.close_intervals(now);
            }
            self.advance_totals(now);
        }
    }

    /// The run totals' integrals from `last_change` to `now`. An empty queue adds nothing to
    /// `q_area` (0 × dt), so the 128-bit multiply-add is skipped then: the sum is the same.
    #[inline(always)]
    fn advance_totals(&mut self, now: SimTime) {
        let dt = now.0 - self.last_change.0;
        if self.q_len > 0 {
            self.q_area += self.q_len as u128 * dt as u128;
        }
        if self.in_service > 0 {
            self.busy_ns += dt;
        }
        self.last_change = now;
    }

    /// Close a watched direction's intervals that end by `now` (before
    /// [`LinkMonitor::advance_totals`], which moves `last_change`). The queue length has been
    /// `q_len` since `last_change`, so the total area at a boundary `end` is
    /// `q_area + q_len · (end - last_change)`, and an interval's area is the growth of that
    /// total over it: the same integer sum as adding each change's piece to the interval
    /// (exact, u128).
    #[cold]
    #[inline(never)]
    fn close_intervals(&mut self, now: SimTime) {
        let q = self.q_len as u128;
        while now.0 >= self.cur_end {
            let end = self.cur_end;
            let area = self.q_area + q * (end - self.last_change.0) as u128;
            let row = self.take_interval(self.interval, area - self.area_at_start);
            self.intervals.push(row);
            self.cur_end = end + self.interval;
            self.cur_min = self.q_len;
            self.cur_max = self.q_len;
            self.area_at_start = area;
        }
    }

    fn set_queue(&mut self, now: SimTime, q_len: u32, in_service: u32) {
        self.advance(now);
        self.q_len = q_len;
        self.in_service = in_service;
        self.q_max = self.q_max.max(q_len);
        if self.record_intervals {
            self.cur_min = self.cur_min.min(q_len);
            self.cur_max = self.cur_max.max(q_len);
        }
    }

    #[inline]
    pub fn on_arrive(&mut self, bytes: u32) {
        self.arrived_pkts += 1;
        self.arrived_bytes += bytes as u64;
    }

    /// Queue length or service state changed (after an enqueue, dequeue or transmission end).
    #[inline]
    pub fn on_queue_change(&mut self, now: SimTime, q_len: u32, in_service: bool) {
        self.set_queue(now, q_len, in_service as u32);
    }

    /// An AQM queue's average after an arrival (kept for the interval series).
    #[inline]
    pub fn on_aqm_avg(&mut self, now: SimTime, avg: f64) {
        self.advance(now);
        self.aqm_avg = Some(avg);
    }

    #[inline]
    pub fn on_depart(&mut self) {
        self.departed_pkts += 1;
    }

    #[inline]
    pub fn on_forwarded(&mut self, now: SimTime, bytes: u32) {
        self.advance(now);
        if self.record_intervals {
            self.cur_bytes += bytes as u64;
        }
        self.forwarded_pkts += 1;
        self.forwarded_bytes += bytes as u64;
    }

    /// Append a trace row (traced links only); `event`: 0 arrive, 1 depart, 2 drop.
    #[inline(always)]
    pub fn trace(&mut self, now: SimTime, event: u8, bytes: u32, reason: Option<DropReason>, tag: PacketTag) {
        // The test inline, the recording out of line: untraced links (the default) pay a branch.
        if self.trace.is_some() {
            self.trace_row(now, event, bytes, reason, tag);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_row(&mut self, now: SimTime, event: u8, bytes: u32, reason: Option<DropReason>, tag: PacketTag) {
        if let Some(tr) = &mut self.trace {
            tr.t.push(now.0);
            tr.event.push(event);
            tr.bytes.push(bytes);
            tr.qlen.push(self.q_len);
            tr.reason.push(reason.map_or(0, |r| r.index() as u8 + 1));
            tr.flow.push(tag.flow);
            tr.kind.push(tag.kind);
            tr.seq.push(tag.seq);
        }
    }

    /// Whether this link direction records a trace (callers skip working out a packet's tag
    /// when it does not).
    #[inline]
    pub fn traced(&self) -> bool {
        self.trace.is_some()
    }

    pub fn on_drop(&mut self, now: SimTime, bytes: u32, reason: DropReason, tag: PacketTag) {
        self.drops[reason.index()] += 1;
        if self.drop_times.len() < MAX_DROP_TIMES {
            self.drop_times.push((now, reason));
        }
        self.trace(now, 2, bytes, Some(reason), tag);
    }

    /// Close the books at the end of the run.
    pub fn finish(&mut self, now: SimTime) {
        self.advance(now);
        let cur_start = self.cur_end - self.interval;
        if self.record_intervals && now.0 > cur_start {
            let span = (now.0 - cur_start).max(1);
            let row = self.take_interval(span, self.q_area - self.area_at_start);
            self.intervals.push(row);
            self.cur_end = now.0 + self.interval;
            self.area_at_start = self.q_area;
        }
    }

    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    pub fn queue_avg(&self, now: SimTime) -> f64 {
        if now.0 == 0 { 0.0 } else { self.q_area as f64 / now.0 as f64 }
    }
    pub fn system_avg(&self, now: SimTime) -> f64 {
        // Occupancy = waiting + in service (0 or 1), so its integral is the queue's plus the
        // time the transmitter was busy.
        if now.0 == 0 { 0.0 } else { (self.q_area + self.busy_ns as u128) as f64 / now.0 as f64 }
    }
    pub fn queue_len(&self) -> u32 {
        self.q_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The occupancy average (waiting + in service), now `q_area + busy_ns`, equals the integral
    /// of waiting + in-service packets taken step by step.
    #[test]
    fn system_average_is_the_queue_plus_the_packet_in_service() {
        let mut m = LinkMonitor::new(SimTime(300), false);
        // (time, waiting, in service)
        let steps = [(0u64, 0u32, true), (100, 2, true), (250, 1, true), (400, 0, true), (700, 0, false), (1000, 3, true), (1300, 0, false), (1700, 1, true)];
        let (mut area, mut last) = (0u128, (0u64, 0u32));
        for &(t, q, busy) in &steps {
            area += last.1 as u128 * (t - last.0) as u128;
            m.on_queue_change(SimTime(t), q, busy);
            last = (t, q + busy as u32);
        }
        let end = 2000;
        area += last.1 as u128 * (end - last.0) as u128;
        m.finish(SimTime(end));
        assert_eq!(area, 2_950);
        assert_eq!(m.system_avg(SimTime(end)), area as f64 / end as f64);
        assert_eq!(m.busy_ns, 1_300);
    }

    /// The interval series against a step-by-step reference: random queue changes (several per
    /// interval, some intervals with none, some changes exactly on a boundary), each row's
    /// average the exact integral of the queue length over its interval, its min/max those of
    /// the lengths it saw, and the partial last row closed by `finish`.
    #[test]
    fn interval_rows_integrate_the_queue_exactly() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(28);
        let interval = 1_000u64;
        let mut m = LinkMonitor::new(SimTime(interval), false);
        // (time, queue length) steps, starting from an empty queue at 0.
        let mut steps = vec![(0u64, 0u32)];
        let mut t = 0u64;
        for _ in 0..2_000 {
            t += match rng.gen_range(0..10) {
                0 => 0,
                1 => interval - t % interval, // exactly on the next boundary
                2 => rng.gen_range(0..5 * interval),
                _ => rng.gen_range(1..300),
            };
            let q = rng.gen_range(0..40);
            m.on_queue_change(SimTime(t), q, q > 0);
            steps.push((t, q));
        }
        let end = t + 1_234;
        m.finish(SimTime(end));
        // Reference: the queue length at each ns is that of the last step at or before it.
        let n_rows = end.div_ceil(interval) as usize;
        assert_eq!(m.intervals.len(), n_rows);
        let mut prev_q = 0u32;
        for (k, row) in m.intervals.iter().enumerate() {
            let (a, b) = (k as u64 * interval, ((k as u64 + 1) * interval).min(end));
            let mut area = 0u128;
            let (mut lo, mut hi) = (prev_q, prev_q);
            let mut q = prev_q;
            let mut from = a;
            for &(st, sq) in steps.iter().filter(|s| s.0 >= a && s.0 < b) {
                area += q as u128 * (st - from) as u128;
                q = sq;
                from = st;
                lo = lo.min(sq);
                hi = hi.max(sq);
            }
            area += q as u128 * (b - from) as u128;
            assert_eq!(row.avg_pkts, area as f64 / (b - a) as f64, "row {k}");
            assert_eq!((row.min_pkts, row.max_pkts), (lo, hi), "row {k}");
            assert_eq!(row.t_start_s, SimTime(a).as_secs_f64());
            prev_q = q;
        }
        let total: u128 = steps.windows(2).map(|w| w[0].1 as u128 * (w[1].0 - w[0].0) as u128).sum::<u128>()
            + steps.last().unwrap().1 as u128 * (end - t) as u128;
        assert_eq!(m.queue_avg(SimTime(end)), total as f64 / end as f64);
    }
}
