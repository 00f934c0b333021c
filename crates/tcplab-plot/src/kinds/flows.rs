//! `flows_graph` of python/tcplab/plots/links.py: each TCP flow's throughput per interval from its
//! ACK progress, their total and the bottleneck's capacity (seed 004 Figs 2-6). Deviations: a run
//! with UDP sources is left to the Python version (their rates come from the link trace's flow
//! column).

use crate::figure::{g, Figure, Item, Key, Stroke, C_DARK, C_MID, FLOW_COLORS, FLOW_DASHES};
use crate::kinds::link::capacity_kbps;
use crate::kinds::{max_of, single};
use crate::run::{Cols, Run, KB};
use crate::series::{bins, interval_steps, step_window, window};
use crate::PlotError;

pub const LEGEND_MAX_FLOWS: usize = 12;

/// `flow_throughput`: (interval starts, KB/s acknowledged per interval) from a flow's sender rows.
pub fn flow_throughput(snd: &Cols, interval: f64, end: f64) -> (Vec<f64>, Vec<f64>) {
    let acks = snd.where_in("kind", &["ack", "dupack"]);
    let t = acks.f("t_s");
    let mut una = Vec::with_capacity(t.len());
    let mut hi = f64::NEG_INFINITY;
    for &u in acks.f("snd_una") {
        hi = hi.max(u);
        una.push(hi);
    }
    let nb = bins(end, interval);
    let acked: Vec<f64> = (0..=nb)
        .map(|k| {
            let e = k as f64 * interval;
            let i = t.partition_point(|&x| x <= e);
            if i == 0 { 0.0 } else { una[i - 1] }
        })
        .collect();
    ((0..nb).map(|k| k as f64 * interval).collect(), acked.windows(2).map(|w| (w[1] - w[0]) / interval / KB).collect())
}

fn windowed(pts: Vec<(f64, f64)>, t0: f64, t1: f64) -> Vec<(f64, f64)> {
    let t: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let m = step_window(&t, t0, t1);
    pts.into_iter().zip(m).filter(|(_, k)| *k).map(|(p, _)| p).collect()
}

pub fn flows_graph(run: &Run, t_from: Option<f64>, t_to: Option<f64>) -> Result<Figure, PlotError> {
    if !run.udp_names().is_empty() {
        return Err(PlotError::NotNative("UDP sources in the flows graph".into()));
    }
    let conns = run.conns();
    let end = run.sim_end().filter(|e| *e != 0.0).unwrap_or(1.0);
    let interval = [0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0].into_iter().find(|iv| end / iv <= 60.0).unwrap_or(end / 60.0);
    let (t0, t1) = window(t_from, t_to, 0.0, end);
    let many = conns.len() > LEGEND_MAX_FLOWS;
    let mut what = "Throughput of each flow (from ACK progress)".to_string();
    if many {
        what += &format!(" — {} flows, not labelled", conns.len());
    }
    let mut fig = single((8.0, 3.2), what, (t0, t1), &format!("Throughput KB/s ({} ms)", g(interval * 1000.0)));
    let p = &mut fig.panels[0];
    let mut tops = vec![1.0];
    let mut total: Option<Vec<f64>> = None;
    let mut starts = Vec::new();
    // one read of the sender rows of every flow, split by connection
    let all = if conns.is_empty() {
        Cols::default()
    } else {
        run.read("trace_tcp.parquet", "TCP trace", &["conn", "side", "t_s", "kind"], &["conn", "t_s", "kind", "snd_una"], Some(("side", "snd")))?
    };
    for (i, c) in conns.iter().enumerate() {
        let keep: Vec<bool> = all.s("conn").iter().map(|x| x == c).collect();
        let (t, v) = flow_throughput(&all.take(&keep), interval, end);
        total = Some(match total {
            None => v.clone(),
            Some(tt) => tt.iter().zip(&v).map(|(a, b)| a + b).collect(),
        });
        let mut s = Stroke::new(FLOW_COLORS[i % FLOW_COLORS.len()], 0.9);
        s.dash = FLOW_DASHES[(i / FLOW_COLORS.len()) % FLOW_DASHES.len()];
        tops.push(max_of(&v).unwrap_or(0.0));
        p.items.push(Item::Line { id: format!("flow-tput:{c}"), pts: windowed(interval_steps(&t, &v, interval), t0, t1), step: true, stroke: s });
        if !many {
            p.legend.push(Key::line(c.clone(), s));
        }
        starts = t;
    }
    if let Some(tot) = total.filter(|_| conns.len() > 1) {
        let s = Stroke::new(C_MID, 0.8);
        tops.push(max_of(&tot).unwrap_or(0.0));
        p.items.push(Item::Line { id: "flow-total".into(), pts: windowed(interval_steps(&starts, &tot, interval), t0, t1), step: true, stroke: s });
        p.legend.push(Key::line("total", s));
    }
    if let Some(link) = run.bottleneck() {
        if let Some(cap) = capacity_kbps(run, &link) {
            let s = Stroke::new(C_DARK, 0.7).dashed(5.0, 3.0);
            p.items.push(Item::HLine { id: "capacity".into(), y: cap, stroke: s });
            p.legend.push(Key::line(format!("{link} capacity"), s));
            tops.push(cap);
        }
    }
    p.y = (0.0, tops.iter().cloned().fold(f64::MIN, f64::max) * 1.15);
    p.legend_cols = if many { 2 } else { 5.min(conns.len() + 2) };
    Ok(fig)
}
