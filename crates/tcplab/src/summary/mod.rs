//! The per-run summary (`summary.json`). Field order is fixed by the structs, and floats are
//! printed by serde_json's shortest round-trip formatting, so the same run gives the same bytes.
//! The one field that measures the host rather than the simulation is `wall_s`.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::engine::SimTime;
use crate::net::packet::DropReason;
use crate::net::queue::QueueLimit;
use crate::sim::Simulation;

mod reasons;
pub use reasons::Reasons;

#[derive(Serialize, Clone, Debug)]
pub struct LinkSummary {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_s: f64,
    pub packets_arrived: u64,
    pub packets_forwarded: u64,
    pub bytes_forwarded: u64,
    pub drops: u64,
    pub drops_by_reason: Reasons,
    /// First drop times (seconds), at most 100 listed; `drops` has the count.
    pub drop_times_s: Vec<f64>,
    pub utilization: f64,
    pub queue_avg_pkts: f64,
    /// Waiting + in service, time-averaged.
    pub system_avg_pkts: f64,
    pub queue_max_pkts: u32,
    pub queue_now_pkts: u32,
    pub queue_discipline: &'static str,
    pub queue_limit_pkts: Option<u32>,
    pub queue_limit_bytes: Option<u64>,
    /// Packets CE-marked by this queue (ECN, RFC 3168).
    pub ecn_marks: u64,
    /// RED/ARED: the queue's average (packets) and max_p at the end of the run.
    pub aqm_avg_pkts: Option<f64>,
    /// ECN-capable arrivals, and the fraction of them CE-marked (seed 003's marking rate).
    pub ect_arrived: u64,
    pub marking_rate: Option<f64>,
    /// Queueing delay per packet (joining the queue → start of transmission): mean and standard
    /// deviation, seconds (seed 003 Tables 1–2).
    pub queue_delay_mean_s: Option<f64>,
    pub queue_delay_std_s: Option<f64>,
    /// Over the measurement window (`run.measure`), if any: utilization, work arriving / capacity,
    /// marking rate, queueing delay mean and std, drops, average queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_utilization: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_work_arrival: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_marking_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_queue_delay_mean_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_queue_delay_std_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_drops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_queue_avg_pkts: Option<f64>,
    /// The bufferbloat figures of a discipline that keeps them (CoDel, FQ-CoDel, PIE, DualPI2,
    /// step): absent for DropTail, RED and VQ, so their summaries are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aqm: Option<Box<AqmSummary>>,
}

/// Sojourn-time percentiles (seconds, within 3 % below; `net::aqm_stats`) of the packets that
/// left the queue for the wire, and its drops and CE marks by cause (`overflow` = buffer full,
/// `codel`, `fattest` = FQ-CoDel's drop from the largest queue, `step`, ...).
#[derive(Serialize, Clone, Debug)]
pub struct AqmSummary {
    pub departed: u64,
    pub sojourn_p50_s: Option<f64>,
    pub sojourn_p95_s: Option<f64>,
    pub sojourn_p99_s: Option<f64>,
    pub drops_by_cause: BTreeMap<&'static str, u64>,
    pub marks_by_cause: BTreeMap<&'static str, u64>,
    /// The same per class of a multi-queue discipline (DualPI2: `l4s`, `classic`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub classes: BTreeMap<&'static str, AqmSummary>,
    /// FQ-CoDel: every flow queue that carried packets, with the flows hashed to it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flow_queues: Vec<FlowQueueSummary>,
}

/// One flow queue's occupancy (`net::aqm_stats::FlowQueueStats`), its flows by name (a `[[tcp]]`
/// flow's data and ACKs, a `[[udp]]` source; "?" for a traffic source's connection).
#[derive(Serialize, Clone, Debug)]
pub struct FlowQueueSummary {
    pub queue: u32,
    pub flows: Vec<String>,
    pub avg_pkts: f64,
    pub avg_bytes: f64,
    pub max_pkts: u32,
    pub max_bytes: u64,
    pub departed: u64,
}

/// Flow keys (`net::packet::Packet::flow_key`) of the scenario's own flows, both directions.
fn flow_names(sim: &Simulation) -> std::collections::HashMap<u64, String> {
    use crate::net::packet::{tcp_flow_key, udp_flow_key};
    let mut m = std::collections::HashMap::new();
    for (ci, c) in sim.tcp[..sim.static_tcp].iter().enumerate() {
        m.insert(tcp_flow_key(c.from, c.to, ci as u32, c.gen), c.name.clone());
        m.insert(tcp_flow_key(c.to, c.from, ci as u32, c.gen), c.name.clone());
    }
    for (ui, u) in sim.udp.iter().enumerate() {
        m.insert(udp_flow_key(u.from, u.to, ui as u32), u.name.clone());
    }
    m
}

impl AqmSummary {
    fn of_queue(q: &dyn crate::net::queue::QueueDisc, now: SimTime, names: &std::collections::HashMap<u64, String>) -> Option<AqmSummary> {
        let mut a = AqmSummary::of(q.aqm_stats()?);
        a.classes = q.class_stats().into_iter().map(|(n, s)| (n, AqmSummary::of(s))).collect();
        a.flow_queues = q
            .flow_queue_stats(now)
            .into_iter()
            .map(|f| FlowQueueSummary {
                queue: f.queue,
                flows: f.flow_keys.iter().map(|k| names.get(k).cloned().unwrap_or_else(|| "?".into())).collect(),
                avg_pkts: f.avg_pkts,
                avg_bytes: f.avg_bytes,
                max_pkts: f.max_pkts,
                max_bytes: f.max_bytes,
                departed: f.departed,
            })
            .collect();
        Some(a)
    }

    fn of(s: &crate::net::aqm_stats::AqmStats) -> AqmSummary {
        AqmSummary {
            classes: BTreeMap::new(),
            flow_queues: Vec::new(),
            departed: s.departed,
            sojourn_p50_s: s.sojourn_quantile_s(0.50),
            sojourn_p95_s: s.sojourn_quantile_s(0.95),
            sojourn_p99_s: s.sojourn_quantile_s(0.99),
            drops_by_cause: s.drops.clone(),
            marks_by_cause: s.marks.clone(),
        }
    }
}

/// Mean and population standard deviation from a count, sum and sum of squares.
fn mean_std(n: u64, sum: f64, sumsq: f64) -> (Option<f64>, Option<f64>) {
    if n == 0 {
        return (None, None);
    }
    let m = sum / n as f64;
    let var = (sumsq / n as f64 - m * m).max(0.0);
    (Some(m), Some(var.sqrt()))
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Serialize, Clone, Debug)]
#[allow(non_snake_case)] // `throughput_KBps`: KB/s with KB = 1024, the seeds' unit
pub struct FlowSummary {
    pub name: String,
    pub variant: String,
    pub from: String,
    pub to: String,
    pub transfer_bytes: Option<u64>,
    pub start_s: f64,
    pub bytes_acked: u64,
    pub throughput_KBps: f64,
    pub completion_s: Option<f64>,
    pub segments_sent: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    /// The same in KB (1024 bytes), the seeds' unit ("Retransmissions (KB)", 000 Tables 5.2–5.4).
    pub retransmitted_KB: f64,
    pub coarse_timeouts: u64,
    /// When the coarse timeouts happened (first 100), seconds.
    pub coarse_timeout_times_s: Vec<f64>,
    pub largest_timeout_gap_s: f64,
    pub fast_retransmits: u64,
    /// Duplicate ACKs the sender counted (4.4BSD's test: no data, same window, ack = snd_una,
    /// data outstanding).
    pub dup_acks_received: u64,
    /// ACKs taken by 4.4BSD-Lite's header-prediction fast path (0 for other variants; seed 001
    /// §3.1: the ACK that ended fast recovery "was handled by the header prediction code").
    pub header_predicted_acks: u64,
    pub max_cwnd_bytes: u32,
    /// The sender's send buffer: with the peer's advertised window it makes the trace graph's
    /// send window, min(send buffer, advertised window) (seed 000 §3.5).
    pub send_buffer_bytes: u32,
    /// Smallest RTT sample (what Vegas calls BaseRTT), seconds.
    pub min_rtt_s: Option<f64>,
    pub bytes_delivered: u64,
    pub completed: bool,
    /// ECN negotiated; CE marks the receiver saw; ECE ACKs and window reductions at the sender.
    pub ecn: bool,
    pub ecn_ce_received: u64,
    pub ecn_ece_received: u64,
    pub ecn_reactions: u64,
    /// ECE ACKs the sender ignored because ECN was not negotiated (RFC 3168 §6.1.1); written
    /// only when non-zero.
    #[serde(skip_serializing_if = "is_zero")]
    pub ecn_ece_ignored: u64,
    /// SACK negotiated; ACKs with SACK blocks and D-SACKs the sender received.
    pub sack: bool,
    pub sack_acks_received: u64,
    pub dsacks_received: u64,
    /// Goodput over the measurement window (`run.measure`): data bytes acknowledged in it × 8 /
    /// its length, bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_goodput_bps: Option<f64>,
    /// Mean and largest of the sender's fine RTT samples, seconds.
    pub mean_rtt_s: Option<f64>,
    pub max_rtt_s: Option<f64>,
    /// Loss events the sender reacted to: fast retransmits + coarse timeouts.
    pub loss_events: u64,
    /// Share of the time with data waiting during which the usable window was set by the send
    /// buffer, and by the receiver's advertised window (the rest: by cwnd).
    pub limited_by_send_buffer: f64,
    pub limited_by_receive_window: f64,
}

/// A flow limited by its send buffer or the receiver's window for most of the time it had data
/// to send: the warning names the key to change.
fn window_warning(f: &FlowSummary, recv_buffer: u32) -> Option<String> {
    if f.limited_by_send_buffer > 0.5 {
        Some(format!(
            "flow {}: the send buffer ({} bytes) limited its window {:.0} % of the time; raise send_buffer or use profile = \"modern\"",
            f.name,
            f.send_buffer_bytes,
            100.0 * f.limited_by_send_buffer
        ))
    } else if f.limited_by_receive_window > 0.5 {
        Some(format!(
            "flow {}: the receiver's window ({} bytes) limited it {:.0} % of the time; raise recv_buffer or use profile = \"modern\"",
            f.name,
            recv_buffer,
            100.0 * f.limited_by_receive_window
        ))
    } else {
        None
    }
}

#[derive(Serialize, Clone, Debug)]
pub struct UdpSummary {
    pub name: String,
    pub from: String,
    pub to: String,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub received_pkts: u64,
    pub received_bytes: u64,
    pub mean_delay_s: Option<f64>,
    /// With `delay_percentiles = true`: one-way delay percentiles and CDF.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay: Option<UdpDelay>,
}

/// One-way delay of a UDP source's received packets (seconds, within 3 % below:
/// `net::aqm_stats`'s histogram): percentiles and the delay at every 1 % of the CDF.
#[derive(Serialize, Clone, Debug)]
pub struct UdpDelay {
    pub p50_s: Option<f64>,
    pub p90_s: Option<f64>,
    pub p99_s: Option<f64>,
    pub p999_s: Option<f64>,
    /// The delay at quantiles 0.01, 0.02, ..., 1.00.
    pub cdf_s: Vec<f64>,
}

impl UdpDelay {
    fn of(s: &crate::net::aqm_stats::AqmStats) -> UdpDelay {
        UdpDelay {
            p50_s: s.sojourn_quantile_s(0.50),
            p90_s: s.sojourn_quantile_s(0.90),
            p99_s: s.sojourn_quantile_s(0.99),
            p999_s: s.sojourn_quantile_s(0.999),
            cdf_s: (1..=100).filter_map(|i| s.sojourn_quantile_s(i as f64 / 100.0)).collect(),
        }
    }
}

/// A traffic source over all its connections (seed 000 Fig 2.4: the background as a whole).
#[derive(Serialize, Clone, Debug)]
#[allow(non_snake_case)]
pub struct TrafficSummary {
    pub name: String,
    pub kind: &'static str,
    pub variant: String,
    pub from: String,
    pub to: String,
    /// tcplib: mean time between conversation starts (after any offered-load calibration).
    pub mean_interarrival_s: Option<f64>,
    /// tcplib: the conversation mix in use (drawn per seed unless configured).
    pub mix: Option<BTreeMap<&'static str, f64>>,
    pub conversations_started: u64,
    pub conversations_completed: u64,
    pub conversations_aborted: u64,
    /// Still open when the run ended.
    pub connections_alive_at_end: u64,
    pub peak_connections_alive: u64,
    pub started_by_type: BTreeMap<&'static str, u64>,
    pub completed_by_type: BTreeMap<&'static str, u64>,
    /// Application bytes written (both directions).
    pub app_KB: f64,
    /// Data sent for the first time / retransmitted, both directions.
    pub sent_KB: f64,
    pub retransmitted_KB: f64,
    /// retransmitted / sent, in percent.
    pub retransmitted_pct: f64,
    pub retransmitted_segments: u64,
    /// In-order data received by the peers, per second of the source's active time.
    pub throughput_KBps: f64,
    pub coarse_timeouts: u64,
    pub fast_retransmits: u64,
    pub idle_restarts: u64,
    pub telnet_echoes: u64,
    pub telnet_echo_delay_mean_s: Option<f64>,
    /// Fraction of echoes back within 1 s (000 Fig 2.4).
    pub telnet_echo_under_1s: Option<f64>,
}

/// Flows sharing a bottleneck (issue 14). A `[[tcp]]` flow's bottleneck is the most utilized
/// link direction on its data path (sender to receiver, as routed; ties: the slower link, then
/// the first on the path). Every direction that is some flow's bottleneck is listed with every
/// `[[tcp]]` flow whose data crosses it — so a flow crossing two bottlenecks (a parking lot's
/// long flow) is in both — when two or more flows share it, with Jain's fairness index over
/// their throughputs (seed 000 §5.3.1: (Σx)² / (n Σx²)).
#[derive(Serialize, Clone, Debug)]
#[allow(non_snake_case)]
pub struct SharedBottleneck {
    pub link: String,
    pub flows: Vec<String>,
    /// None when every flow's throughput is 0.
    pub jain_index: Option<f64>,
    /// The flows' throughputs summed.
    pub throughput_KBps: f64,
}

/// The link directions from `from` to `to` as routed (empty if there is no route).
fn data_path(sim: &Simulation, from: u32, to: u32) -> Vec<usize> {
    let mut path = Vec::new();
    let mut at = from;
    while at != to && path.len() <= sim.nodes.len() {
        let l = sim.nodes[at as usize].route(to);
        if l == crate::net::node::NO_ROUTE {
            return Vec::new();
        }
        path.push(l as usize);
        at = sim.links[l as usize].to;
    }
    path
}

fn shared_bottlenecks(sim: &Simulation, links: &[LinkSummary], flows: &[FlowSummary]) -> Vec<SharedBottleneck> {
    let paths: Vec<Vec<usize>> = sim.tcp[..sim.static_tcp].iter().map(|c| data_path(sim, c.from, c.to)).collect();
    let mut is_bottleneck = vec![false; links.len()];
    for path in &paths {
        // The most utilized; among equals the slower, then the earlier on the path.
        let best = path.iter().copied().enumerate().max_by(|&(i, a), &(j, b)| {
            let (la, lb) = (&links[a], &links[b]);
            la.utilization.partial_cmp(&lb.utilization).unwrap_or(std::cmp::Ordering::Equal).then(lb.rate_bps.cmp(&la.rate_bps)).then(j.cmp(&i))
        });
        if let Some((_, l)) = best {
            is_bottleneck[l] = true;
        }
    }
    let mut out = Vec::new();
    for (l, _) in is_bottleneck.iter().enumerate().filter(|(_, b)| **b) {
        let sharing: Vec<usize> = paths.iter().enumerate().filter(|(_, p)| p.contains(&l)).map(|(f, _)| f).collect();
        if sharing.len() < 2 {
            continue;
        }
        let x: Vec<f64> = sharing.iter().map(|&f| flows[f].throughput_KBps).collect();
        out.push(SharedBottleneck {
            link: links[l].name.clone(),
            flows: sharing.iter().map(|&f| flows[f].name.clone()).collect(),
            jain_index: crate::front_api::jain_index(&x).ok().flatten(),
            throughput_KBps: x.iter().sum::<f64>(),
        });
    }
    out
}

/// A shared medium's counters over the run (`crate::net::ethernet::MediumCounters`).
#[derive(Serialize, Clone, Debug)]
pub struct LanSummary {
    pub name: String,
    pub access: &'static str,
    pub stations: Vec<String>,
    /// Frames that got through.
    pub frames: u64,
    /// Collisions detected by senders (two stations colliding count two).
    pub collisions: u64,
    pub collisions_per_frame: f64,
    pub backoff_slots: u64,
    pub excessive_collision_drops: u64,
    pub deferrals: u64,
    /// Fraction of the run the medium carried frames that got through (preamble to FCS).
    pub utilization: f64,
    /// Fraction of station-time spent in transmissions that collided (frame parts and jams).
    pub collision_time: f64,
    /// `[[lan]] trace = true`: every transmission, columns of equal length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medium_trace: Option<MediumTrace>,
}

/// The medium trace of a LAN (`crate::net::ethernet::Span`), column-wise for data frames.
#[derive(Serialize, Clone, Debug)]
pub struct MediumTrace {
    /// Station names, in order: `station` indexes them.
    pub stations: Vec<String>,
    pub station: Vec<u32>,
    pub start_s: Vec<f64>,
    pub end_s: Vec<f64>,
    pub collided: Vec<bool>,
    /// More transmissions happened than the trace keeps (`net::ethernet::TRACE_LIMIT`).
    pub truncated: bool,
}

fn lan_summaries(sim: &Simulation) -> Vec<LanSummary> {
    let now = sim.now().0.max(1) as f64;
    sim.lans
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let c = x.counters(i as u32, &sim.links);
            let stations: Vec<String> = x.station_nodes.iter().map(|&n| sim.nodes[n as usize].name.clone()).collect();
            let medium_trace = x.medium.trace.as_ref().map(|t| MediumTrace {
                stations: stations.clone(),
                station: t.iter().map(|s| s.station).collect(),
                start_s: t.iter().map(|s| s.start.as_secs_f64()).collect(),
                end_s: t.iter().map(|s| s.end.as_secs_f64()).collect(),
                collided: t.iter().map(|s| s.collided).collect(),
                truncated: x.medium.trace_truncated,
            });
            LanSummary {
                name: x.medium.name.clone(),
                access: x.medium.params.access.name(),
                stations,
                frames: c.frames,
                collisions: c.collisions,
                collisions_per_frame: if c.frames == 0 { 0.0 } else { c.collisions as f64 / c.frames as f64 },
                backoff_slots: c.backoff_slots,
                excessive_collision_drops: c.excessive_collision_drops,
                deferrals: c.deferrals,
                utilization: c.frame_ns as f64 / now,
                collision_time: c.collision_ns as f64 / now,
                medium_trace,
            }
        })
        .collect()
}

#[derive(Serialize, Clone, Debug)]
pub struct ConservationSummary {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

#[derive(Serialize, Clone, Debug)]
pub struct Summary {
    pub tcplab_version: &'static str,
    pub scenario: String,
    pub seed: u64,
    pub sim_end_s: f64,
    pub wall_s: f64,
    pub events: u64,
    /// The link direction with the highest utilization (drawn in the TCP trace graph).
    pub bottleneck: Option<String>,
    pub links: Vec<LinkSummary>,
    /// Shared media (`[[lan]]`); absent when the scenario has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lans: Vec<LanSummary>,
    pub flows: Vec<FlowSummary>,
    /// Jain's index per bottleneck shared by two or more flows (see [`SharedBottleneck`]);
    /// absent when no bottleneck is shared.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared_bottlenecks: Vec<SharedBottleneck>,
    pub udp: Vec<UdpSummary>,
    pub traffic: Vec<TrafficSummary>,
    /// Segments that arrived for a traffic connection that had already gone.
    pub stale_segments: u64,
    pub packets: ConservationSummary,
    pub node_drops_by_reason: Reasons,
    /// Things a user should know about the run (flows capped by a buffer, ...).
    pub warnings: Vec<String>,
}

fn span_ns(a: &crate::net::monitor::LinkCounters, b: &crate::net::monitor::LinkCounters) -> f64 {
    (b.at.0.saturating_sub(a.at.0)).max(1) as f64
}

fn reasons(counts: &[u64; DropReason::COUNT]) -> Reasons {
    Reasons(*counts)
}

impl Summary {
    pub fn from_sim(sim: &Simulation, wall_s: f64) -> Summary {
        let now = sim.now();
        let secs = now.as_secs_f64();
        let node = |i: u32| sim.nodes[i as usize].name.clone();
        let window = sim.measure.as_ref();
        let names = flow_names(sim);
        let links: Vec<LinkSummary> = sim
            .links
            .iter()
            .enumerate()
            .map(|(li, l)| {
                let m = &l.monitor;
                let delay = mean_std(m.delay_n, m.delay_sum_s, m.delay_sumsq_s2);
                let win = window.and_then(|w| match w.links.get(li) {
                    Some([Some(a), Some(b)]) => Some((*a, *b)),
                    _ => None,
                });
                let wdelay = win.map(|(a, b)| mean_std(b.delay_n - a.delay_n, b.delay_sum_s - a.delay_sum_s, b.delay_sumsq_s2 - a.delay_sumsq_s2));
                LinkSummary {
                    name: l.name.clone(),
                    from: node(l.from),
                    to: node(l.to),
                    rate_bps: l.params.rate_bps,
                    delay_s: l.params.delay.as_secs_f64(),
                    packets_arrived: m.arrived_pkts,
                    packets_forwarded: m.forwarded_pkts,
                    bytes_forwarded: m.forwarded_bytes,
                    drops: m.total_drops(),
                    drops_by_reason: reasons(&m.drops),
                    drop_times_s: m.drop_times.iter().take(100).map(|(t, _)| t.as_secs_f64()).collect(),
                    utilization: if now.0 == 0 { 0.0 } else { m.busy_ns as f64 / now.0 as f64 },
                    queue_avg_pkts: m.queue_avg(now),
                    system_avg_pkts: m.system_avg(now),
                    queue_max_pkts: m.q_max,
                    queue_now_pkts: m.queue_len(),
                    queue_discipline: l.queue.name(),
                    queue_limit_pkts: match l.queue.limit() {
                        Some(QueueLimit::Packets(n)) => Some(n),
                        _ => None,
                    },
                    queue_limit_bytes: match l.queue.limit() {
                        Some(QueueLimit::Bytes(b)) => Some(b),
                        _ => None,
                    },
                    ecn_marks: m.ecn_marks,
                    aqm_avg_pkts: l.queue.average_pkts(),
                    ect_arrived: m.ect_arrived,
                    marking_rate: if m.ect_arrived > 0 { Some(m.ecn_marks as f64 / m.ect_arrived as f64) } else { None },
                    queue_delay_mean_s: delay.0,
                    queue_delay_std_s: delay.1,
                    window_utilization: win.map(|(a, b)| (b.busy_ns - a.busy_ns) as f64 / span_ns(&a, &b)),
                    window_work_arrival: win.map(|(a, b)| (b.arrived_bytes - a.arrived_bytes) as f64 * 8.0 / (l.params.rate_bps as f64 * span_ns(&a, &b) / 1e9)),
                    window_marking_rate: win.and_then(|(a, b)| {
                        let n = b.ect_arrived - a.ect_arrived;
                        (n > 0).then(|| (b.ecn_marks - a.ecn_marks) as f64 / n as f64)
                    }),
                    window_queue_delay_mean_s: wdelay.and_then(|d| d.0),
                    window_queue_delay_std_s: wdelay.and_then(|d| d.1),
                    window_drops: win.map(|(a, b)| b.drops - a.drops),
                    window_queue_avg_pkts: win.map(|(a, b)| (b.q_area - a.q_area) as f64 / span_ns(&a, &b)),
                    aqm: AqmSummary::of_queue(l.queue.as_ref(), now, &names).map(Box::new),
                }
            })
            .collect();
        let bottleneck = links
            .iter()
            .filter(|l| l.packets_arrived > 0)
            .max_by(|a, b| a.utilization.partial_cmp(&b.utilization).unwrap().then(b.name.cmp(&a.name)))
            .map(|l| l.name.clone());
        let flows: Vec<FlowSummary> = sim.tcp[..sim.static_tcp]
            .iter()
            .enumerate()
            .map(|(ci, c)| {
                let st = c.ep[0].stats();
                let start = c.started_at.get().map_or(c.start, SimTime);
                let completion = st.completion_time.get().map(|t| SimTime(t).saturating_sub(start).as_secs_f64());
                // A byte transfer is measured to its last ACK; a timed one over its sending time
                // (bytes acknowledged when it ended), or up to the end of the run if that came first.
                let elapsed = now.saturating_sub(start).as_secs_f64();
                let (bytes, span) = match (c.bytes.get(), c.duration.get().map(SimTime)) {
                    (Some(_), _) => (st.bytes_acked, completion.unwrap_or(elapsed)),
                    (None, Some(d)) => match c.acked_at_stop.get() {
                        Some(b) => (b, d.as_secs_f64()),
                        None => (st.bytes_acked, elapsed),
                    },
                    (None, None) => (st.bytes_acked, elapsed),
                };
                FlowSummary {
                    name: c.name.clone(),
                    variant: c.variant.clone(),
                    from: node(c.from),
                    to: node(c.to),
                    transfer_bytes: c.bytes.get(),
                    start_s: start.as_secs_f64(),
                    bytes_acked: st.bytes_acked,
                    throughput_KBps: if span > 0.0 { bytes as f64 / 1024.0 / span } else { 0.0 },
                    completion_s: completion,
                    segments_sent: st.data_segments_sent,
                    retransmitted_segments: st.retransmitted_segments,
                    retransmitted_bytes: st.retransmitted_bytes,
                    retransmitted_KB: st.retransmitted_bytes as f64 / 1024.0,
                    coarse_timeouts: st.coarse_timeouts,
                    coarse_timeout_times_s: st.timeout_times.iter().map(|&t| t as f64 / 1e9).collect(),
                    largest_timeout_gap_s: st.largest_timeout_gap as f64 / 1e9,
                    fast_retransmits: st.fast_retransmits,
                    dup_acks_received: st.dupacks_received,
                    header_predicted_acks: st.predicted_acks,
                    max_cwnd_bytes: st.max_cwnd_bytes,
                    send_buffer_bytes: c.ep[0].config().send_buffer,
                    min_rtt_s: st.min_rtt.get().map(|r| r as f64 / 1e9),
                    bytes_delivered: c.ep[1].stats().bytes_delivered_to_app,
                    completed: st.completion_time.get().is_some(),
                    ecn: c.ep[0].ecn_ok(),
                    ecn_ce_received: c.ep[1].stats().ecn_ce_received,
                    ecn_ece_received: st.ecn_ece_received,
                    ecn_reactions: st.ecn_reactions,
                    ecn_ece_ignored: st.ecn_ece_ignored,
                    sack: c.ep[0].sack_ok(),
                    sack_acks_received: st.sack_acks_received,
                    dsacks_received: st.dsacks_received,
                    window_goodput_bps: window.and_then(|w| {
                        let [Some(a), Some(b)] = w.acked[ci] else { return None };
                        let (Some(la), Some(lb)) = (w.links.first().and_then(|l| l[0]), w.links.first().and_then(|l| l[1])) else { return None };
                        Some((b - a) as f64 * 8.0 / (span_ns(&la, &lb) / 1e9))
                    }),
                    mean_rtt_s: (st.rtt_samples > 0).then(|| st.rtt_sum as f64 / st.rtt_samples as f64 / 1e9),
                    max_rtt_s: st.max_rtt.get().map(|r| r as f64 / 1e9),
                    loss_events: st.fast_retransmits + st.coarse_timeouts,
                    limited_by_send_buffer: {
                        let total: u64 = st.limited_ns.iter().sum();
                        if total > 0 { st.limited_ns[0] as f64 / total as f64 } else { 0.0 }
                    },
                    limited_by_receive_window: {
                        let total: u64 = st.limited_ns.iter().sum();
                        if total > 0 { st.limited_ns[1] as f64 / total as f64 } else { 0.0 }
                    },
                }
            })
            .collect();
        let warnings = flows
            .iter()
            .zip(&sim.tcp)
            .filter_map(|(f, c)| window_warning(f, c.ep[1].config().recv_buffer))
            .collect();
        let udp = sim
            .udp
            .iter()
            .map(|u| UdpSummary {
                name: u.name.clone(),
                from: node(u.from),
                to: node(u.to),
                sent_pkts: u.sent_pkts,
                sent_bytes: u.sent_bytes,
                received_pkts: u.rcvd_pkts,
                received_bytes: u.rcvd_bytes,
                mean_delay_s: if u.rcvd_pkts > 0 { Some(u.delay_sum_ns as f64 / u.rcvd_pkts as f64 / 1e9) } else { None },
                delay: u.delays.as_deref().map(UdpDelay::of),
            })
            .collect();
        Summary {
            tcplab_version: crate::VERSION,
            scenario: sim.name.clone(),
            seed: sim.seed,
            sim_end_s: secs,
            wall_s,
            events: sim.events.events_popped(),
            bottleneck,
            shared_bottlenecks: shared_bottlenecks(sim, &links, &flows),
            lans: lan_summaries(sim),
            links,
            flows,
            udp,
            traffic: traffic_summaries(sim),
            stale_segments: sim.stale_segments,
            packets: ConservationSummary {
                created: sim.conservation.created,
                delivered: sim.conservation.delivered,
                dropped: sim.conservation.dropped,
                in_flight: sim.in_flight(),
            },
            node_drops_by_reason: reasons(&sim.node_drops),
            warnings,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("summary serializes")
    }

    /// Write `summary.json`: the bytes of [`Summary::to_json`] and a newline, streamed to `w`
    /// (a 4,096-flow run's summary is 20 MB; no text of it is built in memory).
    pub fn write_json(&self, w: impl std::io::Write) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, w);
        serde_json::to_writer_pretty(&mut w, self).map_err(std::io::Error::from)?;
        std::io::Write::write_all(&mut w, b"\n")?;
        std::io::Write::flush(&mut w)
    }
}

fn traffic_summaries(sim: &Simulation) -> Vec<TrafficSummary> {
    use crate::apps::tcplib_tables::ConvKind;
    use crate::apps::traffic::SourceKind;
    let now = sim.now();
    sim.traffic
        .iter()
        .enumerate()
        .map(|(i, src)| {
            let mut st = src.stats.clone();
            for c in &sim.tcp[sim.static_tcp..] {
                if c.app.as_ref().is_some_and(|a| a.source == i as u32) {
                    crate::sim::fold_stats(&mut st, c);
                }
            }
            let by = |v: &[u64; 4]| ConvKind::ALL.iter().map(|k| (k.name(), v[k.index()])).collect::<BTreeMap<_, _>>();
            let (mean_ia, mix) = match &src.kind {
                SourceKind::Tcplib { mean_interarrival_ns, mix } => {
                    (Some(mean_interarrival_ns / 1e9), Some(ConvKind::ALL.iter().map(|k| (k.name(), mix.0[k.index()])).collect()))
                }
                _ => (None, None),
            };
            let active = now.saturating_sub(src.start).as_secs_f64();
            let kb = |b: u64| b as f64 / 1024.0;
            TrafficSummary {
                name: src.name.clone(),
                kind: src.kind_name(),
                variant: src.variant.clone(),
                from: sim.nodes[src.from as usize].name.clone(),
                to: sim.nodes[src.to as usize].name.clone(),
                mean_interarrival_s: mean_ia,
                mix,
                conversations_started: st.started.iter().sum(),
                conversations_completed: st.completed.iter().sum(),
                conversations_aborted: st.aborted,
                connections_alive_at_end: st.alive,
                peak_connections_alive: st.peak_alive,
                started_by_type: by(&st.started),
                completed_by_type: by(&st.completed),
                app_KB: kb(st.app_bytes[0] + st.app_bytes[1]),
                sent_KB: kb(st.bytes_sent),
                retransmitted_KB: kb(st.retransmitted_bytes),
                retransmitted_pct: if st.bytes_sent > 0 { 100.0 * st.retransmitted_bytes as f64 / st.bytes_sent as f64 } else { 0.0 },
                retransmitted_segments: st.retransmitted_segments,
                throughput_KBps: if active > 0.0 { kb(st.bytes_received[0] + st.bytes_received[1]) / active } else { 0.0 },
                coarse_timeouts: st.coarse_timeouts,
                fast_retransmits: st.fast_retransmits,
                idle_restarts: st.idle_restarts,
                telnet_echoes: st.echo_count,
                telnet_echo_delay_mean_s: (st.echo_count > 0).then(|| st.echo_delay_sum_ns as f64 / st.echo_count as f64 / 1e9),
                telnet_echo_under_1s: (st.echo_count > 0).then(|| st.echo_under_1s as f64 / st.echo_count as f64),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::run::run_text;

    /// `summary.json` streamed to a file is the text the golden test pins, plus a newline: for
    /// a run with flows, UDP sources, link and queue figures, and one with tcplib traffic.
    #[test]
    fn written_summary_is_the_json_text() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        for (file, overrides) in [
            ("examples/vegas-late-starter.toml", vec![]),
            ("examples/udp-dumbbell.toml", vec!["run.duration=\"2s\"".to_string()]),
            ("brakmo/single-transfer/scenario.toml", vec![]),
        ] {
            let path = root.join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            let r = run_text(&text, file, Some(3), &overrides).unwrap();
            let mut written = Vec::new();
            r.summary.write_json(&mut written).unwrap();
            let expected = r.summary.to_json() + "\n";
            assert!(expected.len() > 1000, "{file}: a real summary");
            assert_eq!(String::from_utf8(written).unwrap(), expected, "{file}");
        }
    }
}
