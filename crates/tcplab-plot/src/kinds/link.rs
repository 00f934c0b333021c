//! The link graphs of python/tcplab/plots/links.py: `link_graph` (output bandwidth averaged over
//! 100 ms and 300 ms, the capacity, a mark per drop; seed 000 Fig 2.8) and `queue_graph` (a
//! min–max bar and the time-weighted average per interval, the queue limit, RED's average; 000
//! Figs 2.7, 6.10). Deviations: none in the data drawn.

use crate::figure::{g, Figure, Item, Key, Marker, Stroke, C_BLACK, C_DARK, C_LIGHT, C_MID};
use crate::kinds::{max_of, single};
use crate::run::{Cols, Run, KB};
use crate::series::{bins, interval_steps, inside, per_interval_rate, queue_intervals, step_window, window};
use crate::PlotError;

/// The link's capacity in KB/s (summary rate_bps), when known.
pub fn capacity_kbps(run: &Run, link: &str) -> Option<f64> {
    let r = run.link(link)?.get("rate_bps")?.as_f64()?;
    (r > 0.0).then(|| r / 8.0 / KB)
}

/// `_link_bandwidth`: (interval starts, KB/s departed).
pub fn link_bandwidth(run: &Run, ev: &Cols, interval: f64) -> (Vec<f64>, Vec<f64>) {
    let dep = ev.where_in("event", &["depart"]);
    let t = dep.f("t_s");
    let end = run.sim_end().unwrap_or(0.0).max(t.iter().cloned().fold(0.0, f64::max));
    let nb = bins(end, interval);
    let starts: Vec<f64> = (0..nb).map(|k| k as f64 * interval).collect();
    (starts, per_interval_rate(t, dep.f("bytes"), interval, nb))
}

fn windowed(pts: Vec<(f64, f64)>, t0: f64, t1: f64) -> Vec<(f64, f64)> {
    let t: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let m = step_window(&t, t0, t1);
    pts.into_iter().zip(m).filter(|(_, k)| *k).map(|(p, _)| p).collect()
}

pub fn link_graph(run: &Run, link: &str, t_from: Option<f64>, t_to: Option<f64>) -> Result<Figure, PlotError> {
    let ev = run.link_events(link)?;
    let end = run.sim_end().filter(|e| *e != 0.0).unwrap_or(1.0);
    let (t0, t1) = window(t_from, t_to, 0.0, end);
    let drops: Vec<f64> = ev.where_in("event", &["drop"]).f("t_s").to_vec();
    let mut fig = single((8.0, 2.8), format!("Output bandwidth of {link} (drops: {} marked on the axis)", drops.len()), (t0, t1), "Output KB/s");
    let p = &mut fig.panels[0];
    let mut tops = vec![1.0];
    for (interval, lw, color, id) in [(0.1, 0.6, C_MID, "link-thin"), (0.3, 1.8, C_BLACK, "link-thick")] {
        let (bt, bv) = link_bandwidth(run, &ev, interval);
        let pts = interval_steps(&bt, &bv, interval);
        tops.push(max_of(&bv).unwrap_or(0.0));
        let s = Stroke::new(color, lw);
        p.legend.push(Key::line(format!("{:.0} ms average", interval * 1000.0), s));
        p.items.push(Item::Line { id: id.into(), pts: windowed(pts, t0, t1), step: true, stroke: s });
    }
    if let Some(cap) = capacity_kbps(run, link) {
        let s = Stroke::new(C_DARK, 0.7).dashed(5.0, 3.0);
        p.items.push(Item::HLine { id: "capacity".into(), y: cap, stroke: s });
        p.legend.push(Key::line(format!("capacity {cap:.0} KB/s"), s));
        tops.push(cap);
    }
    let shown: Vec<f64> = drops.iter().copied().filter(|&t| inside(t, t0, t1)).collect();
    p.items.push(Item::Marks { id: "drop-marks".into(), xs: shown, y0: 0.0, y1: 0.05, stroke: Stroke::new(C_BLACK, 0.6), clip: true });
    p.y = (0.0, tops.iter().cloned().fold(f64::MIN, f64::max) * 1.15);
    p.legend_cols = 3;
    Ok(fig)
}

/// `_queue_interval_for`'s choice is the caller's; this is `RunData.queue(link, interval)`: the
/// monitor's series when it gives the same answer (`_queue_from_monitor`), else the trace's.
pub fn queue_stats(run: &Run, link: &str, interval: f64) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>), PlotError> {
    let end = run.sim_end().unwrap_or(0.0);
    if let Some(iv) = run.intervals(link)? {
        if let Some(got) = from_monitor(&iv, interval, end) {
            return Ok(got);
        }
    }
    let ev = run.link_events(link)?;
    let t = ev.f("t_s");
    let end = end.max(t.iter().cloned().fold(0.0, f64::max));
    Ok(queue_intervals(t, ev.f("qlen_pkts"), interval, end))
}

/// `_monitor_queue`: per `interval` from the monitor's intervals, None unless exact.
fn from_monitor(iv: &Cols, interval: f64, end: f64) -> Option<(Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>)> {
    let (t, mn, mx, av) = (iv.f("t_s"), iv.f("min_pkts"), iv.f("max_pkts"), iv.f("avg_pkts"));
    if t.len() < 2 || mn.len() != t.len() || mx.len() != t.len() || av.len() != t.len() {
        return None;
    }
    if [mn, mx, av, t].iter().any(|c| c.iter().any(|v| v.is_nan())) {
        return None;
    }
    let step = t[1] - t[0];
    let tol = 1e-9 * 1f64.max(t[t.len() - 1]);
    if !(step > 0.0) || t.iter().enumerate().any(|(i, &x)| (x - i as f64 * step).abs() > tol) {
        return None;
    }
    let k = (interval / step).round() as usize;
    if k < 1 || (k as f64 * step - interval).abs() > 1e-9 * interval || !(end > 0.0) {
        return None;
    }
    let nb = bins(end, interval);
    if (nb as f64 * interval - end).abs() > 1e-9 * 1f64.max(end) || t.len() != nb * k {
        return None;
    }
    let chunk = |c: &[f64], f: fn(&[f64]) -> f64| (0..nb).map(|b| f(&c[b * k..(b + 1) * k])).collect::<Vec<f64>>();
    Some((
        (0..nb).map(|b| b as f64 * interval).collect(),
        chunk(mn, |s| s.iter().cloned().fold(f64::INFINITY, f64::min)),
        chunk(mx, |s| s.iter().cloned().fold(f64::NEG_INFINITY, f64::max)),
        chunk(av, |s| s.iter().sum::<f64>() / s.len() as f64),
    ))
}

/// `_draw_queue_bars`: the bars and the average line on `p`; returns the highest max drawn.
pub fn queue_bars(run: &Run, link: &str, t0: f64, t1: f64, interval: f64, prefix: &str, width_in: f64, p: &mut crate::figure::Panel) -> Result<f64, PlotError> {
    let (ts, mn, mx, av) = queue_stats(run, link, interval)?;
    let px_per_s = width_in * 72.0 / (t1 - t0).max(1e-9);
    let lw = (0.7 * interval * px_per_s).clamp(0.3, 6.0);
    let mut bars = Vec::new();
    let mut avg = Vec::new();
    let mut top: f64 = 0.0;
    for i in 0..ts.len() {
        let t = ts[i] + interval / 2.0;
        if t >= t0 - interval && t <= t1 + interval {
            bars.push((t, mn[i], mx[i].max(mn[i] + 0.04)));
            avg.push((t, av[i]));
            top = top.max(mx[i]);
        }
    }
    let few = avg.len() <= 120;
    p.items.push(Item::Bars { id: format!("{prefix}-bars"), bars, width: lw, color: C_LIGHT });
    let s = Stroke::new(C_BLACK, 0.7);
    if few {
        p.items.push(Item::Markers { id: format!("{prefix}-avg-dots"), pts: avg.clone(), marker: Marker::Dot, size: 1.6, color: C_BLACK, filled: true, frac_y: false });
    }
    p.items.push(Item::Line { id: format!("{prefix}-avg"), pts: avg, step: false, stroke: s });
    p.legend.push(Key { label: "min–max".into(), line: Some(Stroke::new(C_LIGHT, lw.min(4.0))), marker: None });
    p.legend.push(Key { label: "average".into(), line: Some(s), marker: few.then_some((Marker::Dot, 1.6, C_BLACK, true)) });
    Ok(top)
}

pub fn queue_graph(run: &Run, link: &str, interval: f64, t_from: Option<f64>, t_to: Option<f64>) -> Result<Figure, PlotError> {
    let end = run.sim_end().filter(|e| *e != 0.0).unwrap_or(1.0);
    let (t0, t1) = window(t_from, t_to, 0.0, end);
    let title = format!("Queue size at {link} ({} ms intervals: min–max bars, average)", g(interval * 1000.0));
    let mut fig = single((8.0, 2.8), title, (t0, t1), "Queue (pkts)");
    let p = &mut fig.panels[0];
    let lim = run.link(link).and_then(|l| l.get("queue_limit_pkts")).and_then(|v| v.as_f64()).filter(|v| *v != 0.0);
    let mut legend_lim = None;
    if let Some(l) = lim {
        let s = Stroke::new(C_DARK, 0.6).dashed(5.0, 3.0);
        p.items.push(Item::HLine { id: "queue-limit".into(), y: l, stroke: s });
        legend_lim = Some(Key::line(format!("limit {}", g(l)), s));
    }
    if !run.has("trace_link.parquet") {
        p.items.push(Item::Text { id: "no-link-trace".into(), x: 0.5, y: 0.5, text: "no link trace".into(), size: 8.0, color: C_MID, anchor: (plotters::style::text_anchor::HPos::Center, plotters::style::text_anchor::VPos::Center), frac_x: true });
        p.y = (0.0, 1.0);
    } else {
        let top = queue_bars(run, link, t0, t1, interval, "queue", 8.0 * 0.87, p)?;
        p.y = (0.0, 1f64.max(top.max(lim.unwrap_or(0.0)) * 1.12));
    }
    // legend order as matplotlib collects it: lines (limit, average, RED), then the bars' collection
    let mut keys: Vec<Key> = legend_lim.into_iter().collect();
    let bars_key = p.legend.iter().position(|k| k.label == "min–max").map(|i| p.legend.remove(i));
    keys.append(&mut p.legend);
    if let Some(iv) = run.intervals(link)? {
        let (t, a) = (iv.f("t_s"), iv.f("aqm_avg_pkts"));
        let pts: Vec<(f64, f64)> = t.iter().zip(a).filter(|(_, v)| !v.is_nan()).map(|(x, v)| (*x, *v)).collect();
        if !pts.is_empty() {
            let s = Stroke::new(C_DARK, 1.0).dashed(3.7, 1.6);
            p.items.push(Item::Line { id: "queue-red-avg".into(), pts, step: false, stroke: s });
            keys.push(Key::line("RED average", s));
        }
    }
    keys.extend(bars_key);
    p.legend = keys;
    p.legend_cols = 3;
    Ok(fig)
}
