//! `seq_graph` of python/tcplab/plots/tcp.py: sequence number (KB) versus time for several flows
//! (seed 002 Figs 1, 2, 4). Top panel, the sender: a dot per data segment sent (at its first
//! byte), the cumulative ACK received (stepped), an x per retransmission, a tick over each SACK
//! block; bottom panel (when the trace has receiver rows), the receiver: segments received and
//! ACKs sent. Deviations: the flow's name is written at its last segment without matplotlib's
//! 3-point offset; both panels share the y range as there.

use plotters::style::text_anchor::{HPos, VPos};

use crate::figure::{Corner, Figure, Item, Key, Marker, Panel, Stroke, C_BLACK, C_DARK, FLOW_COLORS};
use crate::run::{Cols, Run, KB};
use crate::series::{decimate_points, decimate_step, inside, step_window, window};
use crate::PlotError;

const COLS: [&str; 5] = ["t_s", "kind", "seq", "snd_una", "len"];

fn pts(t: &[f64], v: &[f64], keep: &[bool]) -> Vec<(f64, f64)> {
    t.iter().zip(v).zip(keep).filter(|(_, k)| **k).map(|((a, b), _)| (*a, *b)).collect()
}

fn step_line(id: String, t: &[f64], v: &[f64], keep: &[bool], t0: f64, t1: f64, stroke: Stroke) -> Item {
    let (p, dec) = decimate_step(&pts(t, v, keep), t0, t1);
    Item::Line { id, pts: p, step: !dec, stroke }
}

pub fn seq_graph(run: &Run, conns: &[String], t_from: Option<f64>, t_to: Option<f64>) -> Result<Figure, PlotError> {
    let mut sides: Vec<(Cols, Cols)> = Vec::new();
    for c in conns {
        if !run.conns().contains(c) {
            // a name the summary does not list: the Python version looks it up in the whole trace
            return Err(PlotError::NotNative(format!("connection {c} is not in the summary")));
        }
        let all = run.tcp(c, &COLS)?;
        sides.push((all.where_in("side", &["snd"]), all.where_in("side", &["rcv"])));
    }
    let have_rcv = sides.iter().any(|(_, r)| r.len > 0);
    let last_t = |c: &Cols| c.f("t_s").iter().cloned().fold(0.0, f64::max);
    let mut end = run.sim_end().unwrap_or(0.0);
    for (s, r) in &sides {
        end = end.max(last_t(s)).max(last_t(r));
    }
    if run.sim_end().is_none() {
        let every = run.read("trace_tcp.parquet", "TCP trace", &["conn", "side", "t_s", "kind"], &["t_s"], None)?;
        end = end.max(last_t(&every));
    }
    let (t0, t1) = window(t_from, t_to, 0.0, end);
    let mut top = Panel::new("Sequence (KB) sender");
    top.legend_at = Corner::UpperLeft;
    let mut bottom = Panel::new("Sequence (KB) receiver");
    let mut in_window: Vec<f64> = Vec::new();
    let mut drawn: Vec<f64> = Vec::new();
    let mut labels: Vec<(f64, f64, String, plotters::style::RGBColor)> = Vec::new();
    for (i, (c, (snd, rcv))) in conns.iter().zip(&sides).enumerate() {
        let color = if conns.len() > 1 { FLOW_COLORS[i % FLOW_COLORS.len()] } else { C_BLACK };
        let t = snd.f("t_s");
        let kinds = snd.s("kind");
        let seq: Vec<f64> = snd.f("seq").iter().map(|v| v / KB).collect();
        let una: Vec<f64> = snd.f("snd_una").iter().map(|v| v / KB).collect();
        let w: Vec<bool> = t.iter().map(|&x| inside(x, t0, t1)).collect();
        let is = |k: &str| kinds.iter().map(|x| x == k).collect::<Vec<bool>>();
        let and = |a: &[bool], b: &[bool]| a.iter().zip(b).map(|(x, y)| *x && *y).collect::<Vec<bool>>();
        let ds = and(&w, &is("send"));
        let data = pts(t, &seq, &ds);
        if let Some(&(lt, ly)) = data.last() {
            labels.push((lt, ly, c.clone(), color));
        }
        let dots = decimate_points(&data, t0, t1);
        drawn.extend(dots.iter().map(|p| p.1));
        top.items.push(Item::Markers { id: format!("seq-data:{c}"), pts: dots, marker: Marker::Dot, size: 2.2, color, filled: true, frac_y: false });
        let am: Vec<bool> = kinds.iter().map(|k| k == "ack" || k == "dupack").collect();
        let sm = and(&step_window(t, t0, t1), &am);
        let ack = step_line(format!("seq-ack:{c}"), t, &una, &sm, t0, t1, Stroke::new(color, 0.7).alpha(0.55));
        if let Item::Line { pts: p, .. } = &ack {
            drawn.extend(p.iter().map(|p| p.1));
        }
        top.items.push(ack);
        let rx = and(&w, &is("retransmit"));
        let retx = pts(t, &seq, &rx);
        in_window.extend(data.iter().map(|p| p.1));
        in_window.extend(pts(t, &una, &and(&w, &am)).iter().map(|p| p.1));
        in_window.extend(retx.iter().map(|p| p.1));
        drawn.extend(retx.iter().map(|p| p.1));
        top.items.push(Item::Markers { id: format!("seq-retx:{c}"), pts: retx, marker: Marker::Cross, size: 4.0, color, filled: false, frac_y: false });
        let sk = and(&w, &is("sack"));
        if sk.iter().any(|x| *x) {
            // SACK blocks as tcptrace draws them: a short vertical tick over each block
            let len = snd.f("len");
            let mut p = Vec::new();
            for j in (0..t.len()).filter(|&j| sk[j]) {
                p.extend([(t[j], seq[j]), (t[j], seq[j] + len[j] / KB), (f64::NAN, f64::NAN)]);
                drawn.extend([seq[j], seq[j] + len[j] / KB]);
            }
            top.items.push(Item::Line { id: format!("seq-sack:{c}"), pts: p, step: false, stroke: Stroke::new(color, 1.2).alpha(0.8) });
        }
        top.legend.push(Key { label: c.clone(), line: Some(Stroke::new(color, 0.7)), marker: Some((Marker::Dot, 2.2, color, true)) });
        if have_rcv {
            let tr = rcv.f("t_s");
            let kr = rcv.s("kind");
            let sr: Vec<f64> = rcv.f("seq").iter().map(|v| v / KB).collect();
            let dm: Vec<bool> = tr.iter().zip(kr).map(|(&x, k)| inside(x, t0, t1) && k == "recv").collect();
            let got = decimate_points(&pts(tr, &sr, &dm), t0, t1);
            drawn.extend(got.iter().map(|p| p.1));
            bottom.items.push(Item::Markers { id: format!("seq-rcv:{c}"), pts: got, marker: Marker::Dot, size: 2.2, color, filled: true, frac_y: false });
            let amr: Vec<bool> = step_window(tr, t0, t1).iter().zip(kr).map(|(m, k)| *m && k == "ack_sent").collect();
            let l = step_line(format!("seq-rcvack:{c}"), tr, &sr, &amr, t0, t1, Stroke::new(color, 0.7).alpha(0.55));
            if let Item::Line { pts: p, .. } = &l {
                drawn.extend(p.iter().map(|p| p.1));
            }
            bottom.items.push(l);
        }
    }
    top.legend.push(Key::line("ACK", Stroke::new(C_DARK, 0.7).alpha(0.6)));
    top.legend.push(Key::marker("retransmit", Marker::Cross, 4.0, C_DARK, false));
    let fin = |v: &[f64]| v.iter().copied().filter(|x| x.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let y = if (t_from.is_some() || t_to.is_some()) && !in_window.is_empty() {
        // a time window zooms the sequence axis too, to what is drawn in it (+ one MSS-ish pad)
        let (lo, hi) = fin(&in_window);
        let pad = ((hi - lo) * 0.05).max(1.5);
        ((lo - pad).max(0.0), hi + pad)
    } else {
        // matplotlib's autoscale (5 % margins) with the bottom at 0
        let (lo, hi) = fin(&drawn);
        if hi.is_finite() && hi > 0.0 { (0.0, hi + 0.05 * (hi - lo.min(hi))) } else { (0.0, 1.0) }
    };
    for (lt, ly, c, color) in labels {
        let f = (ly - y.0) / (y.1 - y.0);
        top.items.push(Item::Text { id: format!("seq-name:{c}"), x: lt, y: f, text: format!(" {c}"), size: 6.5, color, anchor: (HPos::Left, VPos::Center), frac_x: false });
    }
    top.y = y;
    bottom.y = y;
    let mut panels = vec![top];
    if have_rcv {
        panels.push(bottom);
    }
    Ok(Figure { size: (8.0, if have_rcv { 5.6 } else { 5.6 * 0.6 }), title: "Sequence number versus time".into(), x: (t0, t1), xlabel: "Time (seconds)".into(), panels, bottom_legend: Vec::new() })
}
