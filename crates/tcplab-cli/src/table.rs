//! The run summary as `tcplab run` prints it, the same text as `python/tcplab/cli/summary.py`
//! (and `textable.format_table`): a cell is "-" for a missing value (and for a non-finite
//! float, which summary.json holds as null), a float with three decimals, a whole number as is.

use std::io::{self, Write};

use tcplab::sim::Simulation;
use tcplab::summary::{Cx, Summary};

use crate::fmt::fixed;

const FLOW_ROWS: usize = 10;

/// One table cell, typed as Python sees summary.json's value.
enum Cell {
    Text(String),
    Int(u64),
    Float(Option<f64>),
}

fn f(v: f64) -> Cell {
    Cell::Float(v.is_finite().then_some(v))
}

fn opt(v: Option<f64>) -> Cell {
    Cell::Float(v.filter(|x| x.is_finite()))
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Float(None) => "-".into(),
            Cell::Float(Some(v)) => fixed(*v, 3),
        }
    }
}

/// `textable.format_table`: first column left-aligned, the rest right-aligned, headers left.
fn format_table(w: &mut impl Write, headers: &[&str], rows: Vec<Vec<Cell>>) -> io::Result<()> {
    let cells: Vec<Vec<String>> = std::iter::once(headers.iter().map(|h| h.to_string()).collect())
        .chain(rows.iter().map(|r| r.iter().map(Cell::text).collect()))
        .collect();
    let widths: Vec<usize> = (0..headers.len()).map(|i| cells.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let pad = |s: &str, width: usize, left: bool| {
        let fill = " ".repeat(width.saturating_sub(s.chars().count()));
        if left {
            format!("{s}{fill}")
        } else {
            format!("{fill}{s}")
        }
    };
    for (i, r) in cells.iter().enumerate() {
        let parts: Vec<String> = r.iter().zip(&widths).enumerate().map(|(j, (c, &wd))| pad(c, wd, i == 0 || j == 0)).collect();
        writeln!(w, "{}", parts.join("  "))?;
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|&wd| "-".repeat(wd)).collect();
            writeln!(w, "{}", rule.join("  "))?;
        }
    }
    Ok(())
}

fn text(s: &str) -> Cell {
    Cell::Text(s.to_string())
}

/// What the table shows of a run, taken from the simulation one entry at a time (a 4,096-flow
/// run's whole [`Summary`] is 11 MB): the links and flows shown, and the figures over all flows.
pub struct Brief {
    /// The summary's scalar fields, its shared bottlenecks, warnings, traffic and UDP sources;
    /// `links` and `flows` only the rows shown, in the order shown.
    summary: Summary,
    /// Link directions that carried packets but are not shown.
    hidden_links: usize,
    /// Every flow's throughput (KB/s; 0 for a non-finite one), retransmitted bytes, timeouts and
    /// fast retransmits.
    rates: Vec<f64>,
    retransmitted_bytes: u64,
    coarse_timeouts: u64,
    fast_retransmits: u64,
}

impl Brief {
    pub fn of(sim: &Simulation, wall_s: f64, show_all: bool) -> Brief {
        let cx = Cx::new(sim);
        // The directions that carried packets; more than FLOW_ROWS of them: the busiest first (the
        // bottleneck leads), then the rest as a count.
        let mut busy: Vec<(usize, f64)> = (0..sim.links.len()).filter(|&li| sim.links[li].monitor.arrived_pkts > 0).map(|li| (li, cx.utilization(li))).collect();
        let mut hidden_links = 0;
        if busy.len() > FLOW_ROWS && !show_all {
            busy.sort_by(|a, b| b.1.total_cmp(&a.1));
            hidden_links = busy.len() - FLOW_ROWS;
            busy.truncate(FLOW_ROWS);
        }
        let shown = if show_all { cx.flows() } else { cx.flows().min(FLOW_ROWS) };
        let (mut flows, mut rates, mut warnings) = (Vec::new(), Vec::with_capacity(cx.flows()), Vec::new());
        let (mut retransmitted_bytes, mut coarse_timeouts, mut fast_retransmits) = (0, 0, 0);
        let mut throughput = Vec::with_capacity(cx.flows());
        for ci in 0..cx.flows() {
            let fl = cx.flow(ci);
            throughput.push(fl.throughput_KBps);
            rates.push(if fl.throughput_KBps.is_finite() { fl.throughput_KBps } else { 0.0 });
            retransmitted_bytes += fl.retransmitted_bytes;
            coarse_timeouts += fl.coarse_timeouts;
            fast_retransmits += fl.fast_retransmits;
            warnings.extend(cx.warning(ci, &fl));
            if ci < shown {
                flows.push(fl);
            }
        }
        let summary = Summary {
            tcplab_version: tcplab::VERSION,
            scenario: sim.name.clone(),
            seed: sim.seed,
            sim_end_s: sim.now().as_secs_f64(),
            wall_s,
            events: sim.events.events_popped(),
            bottleneck: None,
            links: busy.iter().map(|&(li, _)| cx.link(li)).collect(),
            lans: Vec::new(),
            shared_bottlenecks: cx.shared_bottlenecks(&throughput),
            flows,
            udp: cx.udp(),
            traffic: cx.traffic(),
            stale_segments: sim.stale_segments,
            packets: cx.packets(),
            node_drops_by_reason: cx.node_drops(),
            warnings,
        };
        Brief { summary, hidden_links, rates, retransmitted_bytes, coarse_timeouts, fast_retransmits }
    }
}

pub fn print_summary(w: &mut impl Write, b: &Brief, show_all: bool) -> io::Result<()> {
    let s = &b.summary;
    writeln!(w, "tcplab {}  scenario {}  seed {}", s.tcplab_version, s.scenario, s.seed)?;
    let rate = if s.wall_s > 0.0 { s.events as f64 / s.wall_s / 1e6 } else { f64::NAN };
    writeln!(w, "simulated {} s in {} s wall, {} events ({} M events/s)\n", fixed(s.sim_end_s, 3), fixed(s.wall_s, 3), s.events, fixed(rate, 2))?;
    let links = &s.links;
    let hidden_links = b.hidden_links;
    if !links.is_empty() {
        let rows = links
            .iter()
            .map(|l| {
                vec![
                    text(&l.name),
                    f(l.rate_bps as f64 / 1e6),
                    Cell::Int(l.packets_forwarded),
                    f(l.bytes_forwarded as f64 / 1048576.0),
                    Cell::Int(l.drops),
                    f(l.utilization),
                    f(l.queue_avg_pkts),
                    Cell::Int(l.queue_max_pkts as u64),
                ]
            })
            .collect();
        format_table(w, &["link", "rate Mbit/s", "pkts fwd", "MB fwd", "drops", "util", "queue avg", "queue max"], rows)?;
        if hidden_links > 0 {
            writeln!(w, "... {hidden_links} more link directions, less busy (--all prints every one)")?;
        }
        writeln!(w)?;
    }
    let n_flows = b.rates.len();
    if n_flows > 0 {
        let shown = &s.flows;
        let rows = shown
            .iter()
            .map(|fl| {
                vec![
                    text(&fl.name),
                    text(&fl.variant),
                    f(fl.bytes_acked as f64 / 1024.0),
                    f(fl.throughput_KBps),
                    f(fl.throughput_KBps * 8192.0 / 1e6),
                    opt(fl.completion_s),
                    Cell::Int(fl.segments_sent),
                    Cell::Int(fl.retransmitted_segments),
                    f(fl.retransmitted_bytes as f64 / 1024.0),
                    Cell::Int(fl.coarse_timeouts),
                    Cell::Int(fl.fast_retransmits),
                    f(fl.max_cwnd_bytes as f64 / 1024.0),
                    opt(fl.mean_rtt_s.map(|x| x * 1e3)),
                    opt(fl.max_rtt_s.map(|x| x * 1e3)),
                ]
            })
            .collect();
        format_table(
            w,
            &["flow", "variant", "KB acked", "KB/s", "Mbit/s", "time s", "segs", "retx segs", "retx KB", "timeouts", "fast rtx", "max cwnd KB", "RTT ms mean", "RTT ms max"],
            rows,
        )?;
        if shown.len() < n_flows {
            writeln!(w, "... {} more flows (--all prints every one; summary.json has them all)", n_flows - shown.len())?;
        }
        if n_flows > 1 {
            let rates = &b.rates;
            let total: f64 = rates.iter().sum();
            let jain = tcplab::front_api::jain_index(rates).ok().flatten().unwrap_or(f64::NAN);
            let (min, max) = rates.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &r| (a.min(r), b.max(r)));
            let retx = b.retransmitted_bytes;
            writeln!(
                w,
                "all {} flows: {} KB/s ({} Mbit/s) summed over the flows, {} KB/s mean, min {}, max {}; Jain's index {}; retransmitted {} KB; timeouts {}, fast retransmits {}",
                n_flows,
                fixed(total, 1),
                fixed(total * 8192.0 / 1e6, 2),
                fixed(total / n_flows as f64, 1),
                fixed(min, 1),
                fixed(max, 1),
                fixed(jain, 3),
                fixed(retx as f64 / 1024.0, 1),
                b.coarse_timeouts,
                b.fast_retransmits,
            )?;
        }
        // Per shared bottleneck (summary.json "shared_bottlenecks"): the flows whose data crosses it.
        let shared = &s.shared_bottlenecks;
        let shown_b = if show_all { &shared[..] } else { &shared[..shared.len().min(FLOW_ROWS)] };
        for b in shown_b {
            let mut names = b.flows.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
            if b.flows.len() > 4 {
                names += &format!(", ... ({} more)", b.flows.len() - 4);
            }
            let j = b.jain_index.filter(|x| x.is_finite()).map(|x| fixed(x, 3)).unwrap_or_else(|| "n/a".into());
            writeln!(
                w,
                "bottleneck {}: {} flows ({names}), {} KB/s ({} Mbit/s), Jain's index {j}",
                b.link,
                b.flows.len(),
                fixed(b.throughput_KBps, 1),
                fixed(b.throughput_KBps * 8192.0 / 1e6, 2)
            )?;
        }
        if shared.len() > FLOW_ROWS && !show_all {
            writeln!(w, "... {} more shared bottlenecks (--all prints every one)", shared.len() - FLOW_ROWS)?;
        }
        writeln!(w, "(KB = 1024 bytes; Mbit = 10^6 bits)")?;
        writeln!(w)?;
    }
    let warnings = &s.warnings;
    let shown_w = if show_all { &warnings[..] } else { &warnings[..warnings.len().min(FLOW_ROWS)] };
    for wn in shown_w {
        writeln!(w, "warning: {wn}")?;
    }
    if warnings.len() > FLOW_ROWS && !show_all {
        writeln!(w, "warning: ... and {} more flows like these (summary.json \"warnings\")", warnings.len() - FLOW_ROWS)?;
    }
    if !warnings.is_empty() {
        writeln!(w)?;
    }
    if !s.traffic.is_empty() {
        let rows = s
            .traffic
            .iter()
            .map(|t| {
                vec![
                    text(&t.name),
                    text(t.kind),
                    text(&t.variant),
                    Cell::Int(t.conversations_started),
                    Cell::Int(t.conversations_completed),
                    Cell::Int(t.connections_alive_at_end),
                    f(t.sent_KB),
                    f(t.retransmitted_KB),
                    f(t.retransmitted_pct),
                    f(t.throughput_KBps),
                    Cell::Int(t.coarse_timeouts),
                    opt(t.telnet_echo_delay_mean_s.map(|x| x * 1e3)),
                    opt(t.telnet_echo_under_1s),
                ]
            })
            .collect();
        format_table(
            w,
            &["traffic", "kind", "variant", "started", "done", "alive", "KB sent", "retx KB", "retx %", "KB/s", "timeouts", "echo ms", "echo <1s"],
            rows,
        )?;
        writeln!(w)?;
    }
    if !s.udp.is_empty() {
        let rows = s
            .udp
            .iter()
            .map(|u| {
                let loss = if u.sent_pkts > 0 { 100.0 * (1.0 - u.received_pkts as f64 / u.sent_pkts as f64) } else { 0.0 };
                vec![text(&u.name), Cell::Int(u.sent_pkts), Cell::Int(u.received_pkts), f(loss), opt(u.mean_delay_s.map(|x| x * 1e3))]
            })
            .collect();
        format_table(w, &["udp source", "sent pkts", "recv pkts", "loss %", "mean delay ms"], rows)?;
        writeln!(w)?;
    }
    Ok(())
}
