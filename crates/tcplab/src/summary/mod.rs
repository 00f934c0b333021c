//! The per-run summary (`summary.json`). Field order is fixed by the structs, and floats are
//! printed by serde_json's shortest round-trip formatting, so the same run gives the same bytes.
//! The one field that measures the host rather than the simulation is `wall_s`.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::engine::SimTime;
use crate::sim::Simulation;

mod cx;
mod reasons;
mod stream;
pub use cx::Cx;
pub use reasons::Reasons;
pub use stream::write_json_streamed;

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

impl AqmSummary {
    /// `names` gives the flow keys' names; called only for a queue with flow queues.
    fn of_queue<'n>(q: &dyn crate::net::queue::QueueDisc, now: SimTime, names: impl FnOnce() -> &'n std::collections::HashMap<u64, String>) -> Option<AqmSummary> {
        let mut a = AqmSummary::of(q.aqm_stats()?);
        a.classes = q.class_stats().into_iter().map(|(n, s)| (n, AqmSummary::of(s))).collect();
        let queues = q.flow_queue_stats(now);
        if !queues.is_empty() {
            let names = names();
            a.flow_queues = queues
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
        }
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





impl Summary {
    pub fn from_sim(sim: &Simulation, wall_s: f64) -> Summary {
        let cx = Cx::new(sim);
        let links: Vec<LinkSummary> = (0..sim.links.len()).map(|li| cx.link(li)).collect();
        let flows: Vec<FlowSummary> = (0..cx.flows()).map(|ci| cx.flow(ci)).collect();
        let throughput: Vec<f64> = flows.iter().map(|f| f.throughput_KBps).collect();
        let warnings = flows.iter().enumerate().filter_map(|(ci, f)| cx.warning(ci, f)).collect();
        Summary {
            tcplab_version: crate::VERSION,
            scenario: sim.name.clone(),
            seed: sim.seed,
            sim_end_s: sim.now().as_secs_f64(),
            wall_s,
            events: sim.events.events_popped(),
            bottleneck: cx.bottleneck(),
            shared_bottlenecks: cx.shared_bottlenecks(&throughput),
            lans: cx.lans(),
            links,
            flows,
            udp: cx.udp(),
            traffic: cx.traffic(),
            stale_segments: sim.stale_segments,
            packets: cx.packets(),
            node_drops_by_reason: cx.node_drops(),
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
