//! Builds the summary's entries from a finished simulation, one at a time: [`Summary::from_sim`]
//! collects them, and [`super::stream`] writes summary.json from them without holding the whole
//! summary beside the simulation (issue 28's memory target: 11 MB at 4,096 flows).

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};

use super::*;
use crate::engine::SimTime;
use crate::net::packet::DropReason;
use crate::net::queue::QueueLimit;
use crate::sim::Simulation;

/// A finished simulation, read for its summary.
pub struct Cx<'a> {
    pub sim: &'a Simulation,
    now: SimTime,
    window: Option<&'a crate::sim::MeasureWindow>,
    /// Flow keys to names, built the first time a queue with flow queues (FQ-CoDel) asks.
    names: OnceCell<HashMap<u64, String>>,
}

impl<'a> Cx<'a> {
    pub fn new(sim: &'a Simulation) -> Cx<'a> {
        Cx {
            sim,
            now: sim.now(),
            window: sim.measure.as_ref(),
            names: OnceCell::new(),
        }
    }

    fn node(&self, i: u32) -> String {
        self.sim.nodes[i as usize].name.clone()
    }

    /// Link direction `li`'s utilization over the run.
    pub fn utilization(&self, li: usize) -> f64 {
        let now = self.now;
        if now.0 == 0 {
            0.0
        } else {
            self.sim.links[li].monitor.busy_ns as f64 / now.0 as f64
        }
    }

    /// The summary of link direction `li`.
    pub fn link(&self, li: usize) -> LinkSummary {
        let (sim, now, window) = (self.sim, self.now, self.window);
        let l = &sim.links[li];
        let m = &l.monitor;
        let delay = mean_std(m.delay_n, m.delay_sum_s, m.delay_sumsq_s2);
        let win = window.and_then(|w| match w.links.get(li) {
            Some([Some(a), Some(b)]) => Some((*a, *b)),
            _ => None,
        });
        let wdelay = win.map(|(a, b)| {
            mean_std(
                b.delay_n - a.delay_n,
                b.delay_sum_s - a.delay_sum_s,
                b.delay_sumsq_s2 - a.delay_sumsq_s2,
            )
        });
        LinkSummary {
            name: l.name.clone(),
            from: self.node(l.from),
            to: self.node(l.to),
            rate_bps: l.params.rate_bps,
            delay_s: l.params.delay.as_secs_f64(),
            packets_arrived: m.arrived_pkts,
            packets_forwarded: m.forwarded_pkts,
            bytes_forwarded: m.forwarded_bytes,
            drops: m.total_drops(),
            drops_by_reason: reasons(&m.drops),
            drop_times_s: m
                .drop_times
                .iter()
                .take(100)
                .map(|(t, _)| t.as_secs_f64())
                .collect(),
            utilization: self.utilization(li),
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
            marking_rate: if m.ect_arrived > 0 {
                Some(m.ecn_marks as f64 / m.ect_arrived as f64)
            } else {
                None
            },
            queue_delay_mean_s: delay.0,
            queue_delay_std_s: delay.1,
            window_utilization: win.map(|(a, b)| (b.busy_ns - a.busy_ns) as f64 / span_ns(&a, &b)),
            window_work_arrival: win.map(|(a, b)| {
                (b.arrived_bytes - a.arrived_bytes) as f64 * 8.0
                    / (l.params.rate_bps as f64 * span_ns(&a, &b) / 1e9)
            }),
            window_marking_rate: win.and_then(|(a, b)| {
                let n = b.ect_arrived - a.ect_arrived;
                (n > 0).then(|| (b.ecn_marks - a.ecn_marks) as f64 / n as f64)
            }),
            window_queue_delay_mean_s: wdelay.and_then(|d| d.0),
            window_queue_delay_std_s: wdelay.and_then(|d| d.1),
            window_drops: win.map(|(a, b)| b.drops - a.drops),
            window_queue_avg_pkts: win.map(|(a, b)| (b.q_area - a.q_area) as f64 / span_ns(&a, &b)),
            aqm: AqmSummary::of_queue(l.queue.as_ref(), now, || {
                self.names.get_or_init(|| flow_names(sim))
            })
            .map(Box::new),
        }
    }

    /// The summary of `[[tcp]]` flow `ci`.
    pub fn flow(&self, ci: usize) -> FlowSummary {
        let (sim, now, window) = (self.sim, self.now, self.window);
        let c = &sim.tcp[ci];
        let st = c.ep[0].stats();
        let start = c.started_at.get().map_or(c.start, SimTime);
        let completion = st
            .completion_time
            .get()
            .map(|t| SimTime(t).saturating_sub(start).as_secs_f64());
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
            from: self.node(c.from),
            to: self.node(c.to),
            transfer_bytes: c.bytes.get(),
            start_s: start.as_secs_f64(),
            bytes_acked: st.bytes_acked,
            throughput_KBps: if span > 0.0 {
                bytes as f64 / 1024.0 / span
            } else {
                0.0
            },
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
                let [Some(a), Some(b)] = w.acked[ci] else {
                    return None;
                };
                let (Some(la), Some(lb)) = (
                    w.links.first().and_then(|l| l[0]),
                    w.links.first().and_then(|l| l[1]),
                ) else {
                    return None;
                };
                Some((b - a) as f64 * 8.0 / (span_ns(&la, &lb) / 1e9))
            }),
            mean_rtt_s: (st.rtt_samples > 0)
                .then(|| st.rtt_sum as f64 / st.rtt_samples as f64 / 1e9),
            max_rtt_s: st.max_rtt.get().map(|r| r as f64 / 1e9),
            loss_events: st.fast_retransmits + st.coarse_timeouts,
            limited_by_send_buffer: {
                let total: u64 = st.limited_ns.iter().sum();
                if total > 0 {
                    st.limited_ns[0] as f64 / total as f64
                } else {
                    0.0
                }
            },
            limited_by_receive_window: {
                let total: u64 = st.limited_ns.iter().sum();
                if total > 0 {
                    st.limited_ns[1] as f64 / total as f64
                } else {
                    0.0
                }
            },
        }
    }

    /// The number of `[[tcp]]` flows the summary lists.
    pub fn flows(&self) -> usize {
        self.sim.static_tcp
    }

    /// The warning flow `ci` (summarized as `f`) gets, if any.
    pub fn warning(&self, ci: usize, f: &FlowSummary) -> Option<String> {
        window_warning(f, self.sim.tcp[ci].ep[1].config().recv_buffer)
    }

    /// The link direction with the highest utilization among those that carried packets (ties: the
    /// first by name).
    pub fn bottleneck(&self) -> Option<String> {
        (0..self.sim.links.len())
            .filter(|&li| self.sim.links[li].monitor.arrived_pkts > 0)
            .map(|li| (self.utilization(li), &self.sim.links[li].name))
            .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(b.1.cmp(a.1)))
            .map(|(_, n)| n.clone())
    }

    /// Flows sharing a bottleneck, from the flows' throughputs (KB/s, in flow order).
    pub fn shared_bottlenecks(&self, throughput: &[f64]) -> Vec<SharedBottleneck> {
        let sim = self.sim;
        let paths: Vec<Vec<usize>> = sim.tcp[..sim.static_tcp]
            .iter()
            .map(|c| data_path(sim, c.from, c.to))
            .collect();
        let mut is_bottleneck = vec![false; sim.links.len()];
        for path in &paths {
            // The most utilized; among equals the slower, then the earlier on the path.
            let best = path.iter().copied().enumerate().max_by(|&(i, a), &(j, b)| {
                let (ua, ub) = (self.utilization(a), self.utilization(b));
                let (ra, rb) = (sim.links[a].params.rate_bps, sim.links[b].params.rate_bps);
                ua.partial_cmp(&ub)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(rb.cmp(&ra))
                    .then(j.cmp(&i))
            });
            if let Some((_, l)) = best {
                is_bottleneck[l] = true;
            }
        }
        let mut out = Vec::new();
        for (l, _) in is_bottleneck.iter().enumerate().filter(|(_, b)| **b) {
            let sharing: Vec<usize> = paths
                .iter()
                .enumerate()
                .filter(|(_, p)| p.contains(&l))
                .map(|(f, _)| f)
                .collect();
            if sharing.len() < 2 {
                continue;
            }
            let x: Vec<f64> = sharing.iter().map(|&f| throughput[f]).collect();
            out.push(SharedBottleneck {
                link: sim.links[l].name.clone(),
                flows: sharing.iter().map(|&f| sim.tcp[f].name.clone()).collect(),
                jain_index: crate::front_api::jain_index(&x).ok().flatten(),
                throughput_KBps: x.iter().sum::<f64>(),
            });
        }
        out
    }

    pub fn udp(&self) -> Vec<UdpSummary> {
        let sim = self.sim;
        sim.udp
            .iter()
            .map(|u| UdpSummary {
                name: u.name.clone(),
                from: self.node(u.from),
                to: self.node(u.to),
                sent_pkts: u.sent_pkts,
                sent_bytes: u.sent_bytes,
                received_pkts: u.rcvd_pkts,
                received_bytes: u.rcvd_bytes,
                mean_delay_s: if u.rcvd_pkts > 0 {
                    Some(u.delay_sum_ns as f64 / u.rcvd_pkts as f64 / 1e9)
                } else {
                    None
                },
                delay: u.delays.as_deref().map(UdpDelay::of),
            })
            .collect()
    }

    pub fn lans(&self) -> Vec<LanSummary> {
        lan_summaries(self.sim)
    }

    pub fn traffic(&self) -> Vec<TrafficSummary> {
        traffic_summaries(self.sim)
    }

    pub fn packets(&self) -> ConservationSummary {
        let sim = self.sim;
        ConservationSummary {
            created: sim.conservation.created,
            delivered: sim.conservation.delivered,
            dropped: sim.conservation.dropped,
            in_flight: sim.in_flight(),
        }
    }

    pub fn node_drops(&self) -> Reasons {
        reasons(&self.sim.node_drops)
    }
}

fn span_ns(a: &crate::net::monitor::LinkCounters, b: &crate::net::monitor::LinkCounters) -> f64 {
    (b.at.0.saturating_sub(a.at.0)).max(1) as f64
}

fn reasons(counts: &[u64; DropReason::COUNT]) -> Reasons {
    Reasons(*counts)
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

fn lan_summaries(sim: &Simulation) -> Vec<LanSummary> {
    let now = sim.now().0.max(1) as f64;
    sim.lans
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let c = x.counters(i as u32, &sim.links);
            let stations: Vec<String> = x
                .station_nodes
                .iter()
                .map(|&n| sim.nodes[n as usize].name.clone())
                .collect();
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
                collisions_per_frame: if c.frames == 0 {
                    0.0
                } else {
                    c.collisions as f64 / c.frames as f64
                },
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
            let by = |v: &[u64; 4]| {
                ConvKind::ALL
                    .iter()
                    .map(|k| (k.name(), v[k.index()]))
                    .collect::<BTreeMap<_, _>>()
            };
            let (mean_ia, mix) = match &src.kind {
                SourceKind::Tcplib {
                    mean_interarrival_ns,
                    mix,
                } => (
                    Some(mean_interarrival_ns / 1e9),
                    Some(
                        ConvKind::ALL
                            .iter()
                            .map(|k| (k.name(), mix.0[k.index()]))
                            .collect(),
                    ),
                ),
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
                retransmitted_pct: if st.bytes_sent > 0 {
                    100.0 * st.retransmitted_bytes as f64 / st.bytes_sent as f64
                } else {
                    0.0
                },
                retransmitted_segments: st.retransmitted_segments,
                throughput_KBps: if active > 0.0 {
                    kb(st.bytes_received[0] + st.bytes_received[1]) / active
                } else {
                    0.0
                },
                coarse_timeouts: st.coarse_timeouts,
                fast_retransmits: st.fast_retransmits,
                idle_restarts: st.idle_restarts,
                telnet_echoes: st.echo_count,
                telnet_echo_delay_mean_s: (st.echo_count > 0)
                    .then(|| st.echo_delay_sum_ns as f64 / st.echo_count as f64 / 1e9),
                telnet_echo_under_1s: (st.echo_count > 0)
                    .then(|| st.echo_under_1s as f64 / st.echo_count as f64),
            }
        })
        .collect()
}
