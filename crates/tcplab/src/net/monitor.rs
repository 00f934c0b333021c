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

use super::packet::DropReason;
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
}

pub const MAX_DROP_TIMES: usize = 100_000;

#[derive(Debug)]
pub struct LinkMonitor {
    pub arrived_pkts: u64,
    pub arrived_bytes: u64,
    /// Left the queue and began transmission.
    pub departed_pkts: u64,
    /// Finished transmission and left onto the wire (delivered or lost/corrupted on the wire).
    pub forwarded_pkts: u64,
    pub forwarded_bytes: u64,
    pub drops: [u64; DropReason::COUNT],
    pub drop_times: Vec<(SimTime, DropReason)>,
    pub busy_ns: u64,
    // Queue length (waiting packets) and system occupancy (waiting + in service), time-weighted.
    q_len: u32,
    in_service: u32,
    last_change: SimTime,
    q_area: u128,
    sys_area: u128,
    pub q_max: u32,
    // Interval stats
    interval: u64,
    cur_start: SimTime,
    cur_min: u32,
    cur_max: u32,
    cur_area: u128,
    cur_bytes: u64,
    pub intervals: Vec<IntervalStats>,
    /// Whether `intervals` is recorded on this link direction (see the module header).
    pub record_intervals: bool,
    pub trace: Option<LinkTrace>,
    /// Packets whose ECN codepoint this link's queue set to CE.
    pub ecn_marks: u64,
    /// Latest average reported by an AQM queue (RED), recorded per interval.
    pub aqm_avg: Option<f64>,
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
            sys_area: 0,
            q_max: 0,
            interval: interval.0.max(1),
            cur_start: SimTime::ZERO,
            cur_min: 0,
            cur_max: 0,
            cur_area: 0,
            cur_bytes: 0,
            intervals: Vec::new(),
            record_intervals: true,
            trace: if trace { Some(LinkTrace::default()) } else { None },
            ecn_marks: 0,
            aqm_avg: None,
        }
    }

    /// Advance the time integrals to `now` (closing any interval boundaries passed).
    fn advance(&mut self, now: SimTime) {
        if now <= self.last_change {
            return;
        }
        let q = self.q_len as u128;
        let mut t = self.last_change;
        while self.record_intervals && now.0 >= self.cur_start.0 + self.interval {
            let end = SimTime(self.cur_start.0 + self.interval);
            self.cur_area += q * (end.0 - t.0) as u128;
            self.intervals.push(IntervalStats {
                t_start_s: self.cur_start.as_secs_f64(),
                min_pkts: self.cur_min,
                max_pkts: self.cur_max,
                avg_pkts: self.cur_area as f64 / self.interval as f64,
                bytes_out: self.cur_bytes,
                aqm_avg_pkts: self.aqm_avg,
            });
            self.cur_bytes = 0;
            self.cur_start = end;
            self.cur_min = self.q_len;
            self.cur_max = self.q_len;
            self.cur_area = 0;
            t = end;
        }
        self.cur_area += q * (now.0 - t.0) as u128;
        let dt = (now.0 - self.last_change.0) as u128;
        self.q_area += q * dt;
        self.sys_area += (self.q_len + self.in_service) as u128 * dt;
        if self.in_service > 0 {
            self.busy_ns += now.0 - self.last_change.0;
        }
        self.last_change = now;
    }

    fn set_queue(&mut self, now: SimTime, q_len: u32, in_service: u32) {
        self.advance(now);
        self.q_len = q_len;
        self.in_service = in_service;
        self.q_max = self.q_max.max(q_len);
        self.cur_min = self.cur_min.min(q_len);
        self.cur_max = self.cur_max.max(q_len);
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
        self.cur_bytes += bytes as u64;
        self.forwarded_pkts += 1;
        self.forwarded_bytes += bytes as u64;
    }

    /// Append a trace row (traced links only); `event`: 0 arrive, 1 depart, 2 drop.
    #[inline]
    pub fn trace(&mut self, now: SimTime, event: u8, bytes: u32, reason: Option<DropReason>) {
        if let Some(tr) = &mut self.trace {
            tr.t.push(now.0);
            tr.event.push(event);
            tr.bytes.push(bytes);
            tr.qlen.push(self.q_len);
            tr.reason.push(reason.map_or(0, |r| r.index() as u8 + 1));
        }
    }

    pub fn on_drop(&mut self, now: SimTime, bytes: u32, reason: DropReason) {
        self.drops[reason.index()] += 1;
        if self.drop_times.len() < MAX_DROP_TIMES {
            self.drop_times.push((now, reason));
        }
        self.trace(now, 2, bytes, Some(reason));
    }

    /// Close the books at the end of the run.
    pub fn finish(&mut self, now: SimTime) {
        self.advance(now);
        if self.record_intervals && now > self.cur_start {
            let span = (now.0 - self.cur_start.0).max(1);
            self.intervals.push(IntervalStats {
                t_start_s: self.cur_start.as_secs_f64(),
                min_pkts: self.cur_min,
                max_pkts: self.cur_max,
                avg_pkts: self.cur_area as f64 / span as f64,
                bytes_out: self.cur_bytes,
                aqm_avg_pkts: self.aqm_avg,
            });
            self.cur_start = now;
            self.cur_area = 0;
            self.cur_bytes = 0;
        }
    }

    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    pub fn queue_avg(&self, now: SimTime) -> f64 {
        if now.0 == 0 { 0.0 } else { self.q_area as f64 / now.0 as f64 }
    }
    pub fn system_avg(&self, now: SimTime) -> f64 {
        if now.0 == 0 { 0.0 } else { self.sys_area as f64 / now.0 as f64 }
    }
    pub fn queue_len(&self) -> u32 {
        self.q_len
    }
}
