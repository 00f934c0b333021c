//! The emulation's summary.json: the simulator's summary (links, queues, simulated flows) with
//! the emulated flows (Linux ones from TCP_INFO, tcplab ones from their own counters) and the
//! `emulation` section of accuracy figures from [`Accuracy`].

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use super::accuracy::{percentile, Accuracy};
use super::commands::Ready;
use super::plan::{EmuFlow, End};
use super::sys::CpuPlan;
use super::{EmuError, LATENESS_TARGET_NS};
use crate::sim::Simulation;
use crate::summary::Summary;

#[allow(clippy::too_many_arguments)]
pub(super) fn finish_summary(summary: &Summary, sim: &Simulation, flows: &[EmuFlow], cmds: &[Ready], acc: &Accuracy, interrupted: bool, wall_end: u64, (realtime, cpus): (bool, Option<&CpuPlan>)) -> Result<String, EmuError> {
    let mut v: Value = serde_json::from_str(&summary.to_json()).map_err(|e| EmuError::System(e.to_string()))?;
    let node = |n: u32| sim.nodes[n as usize].name.clone();
    let mut flow_rows = Vec::new();
    for f in flows {
        let mut row = json!({
            "name": f.name, "variant": f.variant, "from": node(f.from), "to": node(f.to),
            "stack": [stack_name(f.ends.0), stack_name(f.ends.1)],
            "transfer_bytes": f.bytes, "start_s": f.start_ns as f64 / 1e9,
        });
        let o = row.as_object_mut().unwrap();
        let mut completion = None;
        match f.ends.0 {
            End::Linux => {
                let info = *f.shared.last_info.lock().unwrap();
                let samples = f.shared.samples.lock().unwrap().clone();
                let done = f.shared.done_at.load(Ordering::Relaxed);
                if done != 0 {
                    completion = Some(done.saturating_sub(f.start_ns) as f64 / 1e9);
                }
                let info = info.unwrap_or_default();
                let acked = f.bytes.map_or(info.bytes_acked, |b| info.bytes_acked.min(b));
                o.insert("bytes_acked".into(), json!(acked));
                o.insert("segments_sent".into(), json!(info.data_segs_out));
                o.insert("retransmitted_segments".into(), json!(info.total_retrans));
                o.insert("retransmitted_bytes".into(), json!(info.bytes_retrans));
                o.insert("max_cwnd_bytes".into(), json!(samples.iter().map(|s| s.cwnd_segments as u64 * s.mss as u64).max().unwrap_or(0)));
                o.insert("min_rtt_s".into(), json!(info.min_rtt_us as f64 / 1e6));
                o.insert("rtt_s".into(), json!(info.rtt_us as f64 / 1e6));
                o.insert("congestion_control".into(), json!(f.variant.trim_start_matches("linux-")));
                o.insert(
                    "tcp_info_samples".into(),
                    json!({
                        "t_s": samples.iter().map(|s| s.t_ns as f64 / 1e9).collect::<Vec<_>>(),
                        "cwnd_bytes": samples.iter().map(|s| s.cwnd_segments as u64 * s.mss as u64).collect::<Vec<_>>(),
                        "rtt_s": samples.iter().map(|s| s.rtt_us as f64 / 1e6).collect::<Vec<_>>(),
                        "total_retrans": samples.iter().map(|s| s.total_retrans).collect::<Vec<_>>(),
                        "bytes_acked": samples.iter().map(|s| s.bytes_acked).collect::<Vec<_>>(),
                        "pacing_rate_Bps": samples.iter().map(|s| s.pacing_rate).collect::<Vec<_>>(),
                        "unacked_segments": samples.iter().map(|s| s.unacked).collect::<Vec<_>>(),
                        "ca_state": samples.iter().map(|s| s.ca_state).collect::<Vec<_>>(),
                        "app_limited": samples.iter().map(|s| s.app_limited).collect::<Vec<_>>(),
                        "sndbuf_limited_us": samples.iter().map(|s| s.sndbuf_limited_us).collect::<Vec<_>>(),
                        "bbr_pacing_gain": samples.iter().map(|s| s.bbr_pacing_gain).collect::<Vec<_>>(),
                        "bbr_cwnd_gain": samples.iter().map(|s| s.bbr_cwnd_gain).collect::<Vec<_>>(),
                    }),
                );
            }
            End::Tcplab => {
                let e = f.eps[0].as_ref().unwrap();
                let st = e.ep.stats();
                completion = st.completion_time.get().map(|t| t.saturating_sub(f.start_ns) as f64 / 1e9);
                o.insert("bytes_acked".into(), json!(st.bytes_acked));
                o.insert("segments_sent".into(), json!(st.data_segments_sent));
                o.insert("retransmitted_segments".into(), json!(st.retransmitted_segments));
                o.insert("retransmitted_bytes".into(), json!(st.retransmitted_bytes));
                o.insert("coarse_timeouts".into(), json!(st.coarse_timeouts));
                o.insert("fast_retransmits".into(), json!(st.fast_retransmits));
                o.insert("max_cwnd_bytes".into(), json!(st.max_cwnd_bytes));
                o.insert("min_rtt_s".into(), json!(st.min_rtt.get().map(|r| r as f64 / 1e9)));
            }
        }
        let acked = o["bytes_acked"].as_u64().unwrap_or(0);
        let span = completion.unwrap_or((wall_end.saturating_sub(f.start_ns)) as f64 / 1e9);
        o.insert("completion_s".into(), json!(completion));
        o.insert("throughput_KBps".into(), json!(if span > 0.0 { acked as f64 / 1024.0 / span } else { 0.0 }));
        o.insert("retransmitted_KB".into(), json!(o["retransmitted_bytes"].as_u64().unwrap_or(0) as f64 / 1024.0));
        let (delivered, intact) = match f.ends.1 {
            End::Linux => (f.shared.sink_bytes.load(Ordering::Relaxed), !f.shared.sink_corrupt.load(Ordering::Relaxed)),
            End::Tcplab => {
                let r = f.eps[1].as_ref().unwrap();
                (r.ep.bytes_received(), !r.corrupt)
            }
        };
        o.insert("bytes_delivered".into(), json!(delivered));
        o.insert("payload_intact".into(), json!(intact));
        o.insert("completed".into(), json!(completion.is_some()));
        if let Some(e) = f.shared.error.lock().unwrap().clone() {
            o.insert("error".into(), json!(e));
        }
        flow_rows.push((f.idx, row));
    }
    // Emulated flows keep their scenario order among the simulated ones.
    if let Some(arr) = v.get_mut("flows").and_then(|f| f.as_array_mut()) {
        for r in arr.iter_mut() {
            r.as_object_mut().unwrap().insert("stack".into(), json!(["sim", "sim"]));
        }
        for (_, row) in flow_rows {
            arr.push(row);
        }
    }
    let ms = |ns: f64| ns / 1e6;
    let lateness = |link: Option<u32>| {
        let (n, p50, p99, max, over) = acc.lateness(link);
        json!({
            "datagrams_released": n,
            "release_lateness_p50_ms": ms(p50), "release_lateness_p99_ms": ms(p99),
            "release_lateness_max_ms": ms(max as f64), "released_over_1ms_late": over,
            "fell_behind": Accuracy::behind(p99),
        })
    };
    let links: Vec<Value> = sim
        .links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.monitor.forwarded_pkts > 0)
        .map(|(i, l)| {
            let sim_busy = l.monitor.busy_ns;
            let (wall_busy, busy_bytes) = (acc.busy[i].3, acc.busy[i].4);
            let achieved = if wall_busy > 0 { busy_bytes as f64 * 8.0 / (wall_busy as f64 / 1e9) } else { 0.0 };
            let mut row = json!({
                "name": l.name, "index": i, "rate_bps": l.params.rate_bps,
                "achieved_rate_bps": achieved,
                "achieved_over_configured": if l.params.rate_bps > 0 { achieved / l.params.rate_bps as f64 } else { 0.0 },
                "busy_s": sim_busy as f64 / 1e9, "busy_wall_s": wall_busy as f64 / 1e9,
            });
            // Lateness of the datagrams this link delivered to a host (the last hop).
            if acc.delivering_links().any(|d| d as usize == i) {
                for (k, x) in lateness(Some(i as u32)).as_object().unwrap() {
                    row.as_object_mut().unwrap().insert(k.clone(), x.clone());
                }
            }
            row
        })
        .collect();
    let (p99_unheld, n_unheld) = acc.unheld_p99();
    let mut wake = acc.wake_late_ns.clone();
    wake.sort_unstable();
    let mut writes = acc.host_write_ns.clone();
    writes.sort_unstable();
    let all = lateness(None);
    let fell_behind = all["fell_behind"].as_bool().unwrap_or(false) || links.iter().any(|l| l["fell_behind"].as_bool().unwrap_or(false));
    let mut emulation = json!({
        "mode": "emulation",
        "realtime_priority": realtime,
        // Where the loop and the hosts ran (sys::CpuPlan; null: not pinned).
        "cpu_affinity": cpus.map(|p| json!({"emulator_cpu": p.emulator_cpu, "host_cpus": p.host_cpus, "host_receive_steered": p.rps})),
        "interrupted": interrupted,
        "wall_s": wall_end as f64 / 1e9,
        "lateness_target_ms": ms(LATENESS_TARGET_NS as f64),
        "released_early": acc.released_early,
        "slept_with_datagrams_due": acc.slept_with_datagrams_due,
        "packet_records_dropped": acc.records_dropped,
        "released_while_held": acc.records.len() - n_unheld,
        "release_lateness_p99_unheld_ms": ms(p99_unheld),
        "wakeup_lateness_p50_ms": ms(percentile(&wake, 0.5)),
        "wakeup_lateness_p99_ms": ms(percentile(&wake, 0.99)),
        "wakeup_lateness_max_ms": ms(wake.last().copied().unwrap_or(0) as f64),
        "host_write_p50_ms": ms(percentile(&writes, 0.5)),
        "host_write_p99_ms": ms(percentile(&writes, 0.99)),
        "host_write_max_ms": ms(writes.last().copied().unwrap_or(0) as f64),
        // Diagnostics of the loop (emu/steplog.rs): its steps over 0.2 ms by kind, and each
        // CPU's hard-interrupt and softirq time over the run.
        "slow_steps": acc.steps.summary().iter().map(|(k, n, t)| (k.to_string(), json!({"count": n, "ms": t}))).collect::<serde_json::Map<String, Value>>(),
        "cpu_irq_ms": acc.steps.cpu_irq_ms.iter().map(|c| c.0).collect::<Vec<_>>(),
        "cpu_softirq_ms": acc.steps.cpu_irq_ms.iter().map(|c| c.1).collect::<Vec<_>>(),
        "frames_from_hosts": acc.frames_in,
        "frames_dropped_unparsable": acc.bad_frames,
        "frames_dropped_not_for_the_scenario": acc.foreign_frames,
        "links": links,
    });
    let o = emulation.as_object_mut().unwrap();
    for (k, x) in all.as_object().unwrap() {
        o.insert(k.clone(), x.clone());
    }
    o.insert("fell_behind".into(), json!(fell_behind));
    // Faithful: nothing released early and every link within the lateness target.
    o.insert("faithful".into(), json!(!fell_behind && acc.released_early == 0));
    v.as_object_mut().unwrap().insert("emulation".into(), emulation);
    if !cmds.is_empty() {
        let s = |t: u64| if t == 0 { Value::Null } else { json!(t as f64 / 1e9) };
        let rows: Vec<Value> = cmds
            .iter()
            .map(|c| {
                let st = &c.state;
                let exited = st.exited_at.load(Ordering::Relaxed);
                json!({
                    "name": c.name, "host": c.host, "run": c.argv, "start_s": c.start_ns as f64 / 1e9, "wait": c.wait,
                    "started_s": s(st.started_at.load(Ordering::Relaxed)), "exited_s": s(exited),
                    "exit_code": if exited != 0 || c.setup { json!(st.code.load(Ordering::Relaxed)) } else { Value::Null },
                    "setup": c.setup,
                    "error": st.error.lock().unwrap().clone(),
                    "stdout": format!("command-{}.stdout", c.name), "stderr": format!("command-{}.stderr", c.name),
                })
            })
            .collect();
        v.as_object_mut().unwrap().insert("commands".into(), json!(rows));
    }
    serde_json::to_string_pretty(&v).map_err(|e| EmuError::System(e.to_string()))
}

fn stack_name(e: End) -> &'static str {
    match e {
        End::Linux => "linux",
        End::Tcplab => "tcplab",
    }
}

