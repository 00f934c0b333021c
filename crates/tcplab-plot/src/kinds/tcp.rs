//! `tcp_graph` of python/tcplab/plots/tcp.py and draw.py: the Brakmo TCP trace graph (seed 000
//! §3.5 Figs 3.13-3.15, Fig 4.1). Panels on one time axis: the windows (threshold dashed, send
//! window dark gray, congestion window light gray, unacked bytes thin black); the sending rate
//! over the last 12 segments; the bottleneck's queue (min–max bars and average). Along the top of
//! the windows panel a mark per segment sent, the KB count, diamonds at coarse timer ticks,
//! circles at coarse timeouts; marks on its x-axis at ACKs received; on every panel a full-height
//! line at the original send time of each segment later retransmitted; a Vegas flow's CAM panel
//! (crate::kinds::cam) third, above the queue.

use plotters::style::text_anchor::{HPos, VPos};

use crate::figure::{Figure, Item, Key, Marker, Panel, Stroke, C_BLACK, C_DARK, C_LIGHT, C_MID};
use crate::kinds::link::queue_bars;
use crate::run::{Cols, Run, KB};
use crate::series::{decimate_step, inside, step_window, window};
use crate::PlotError;

const COLS: [&str; 9] = ["t_s", "kind", "seq", "len", "snd_una", "cwnd", "ssthresh", "snd_wnd", "unacked"];
const RATE_SEGMENTS: usize = 12;

/// `sending_rate`: bytes of the last `n` segments over the time since the segment before them (NaN where undefined).
pub fn sending_rate(t: &[f64], bytes: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; t.len()];
    if t.len() < 2 {
        return out;
    }
    let mut cs = vec![0.0; t.len() + 1];
    for (i, b) in bytes.iter().enumerate() {
        cs[i + 1] = cs[i] + b;
    }
    for i in 0..t.len() {
        let j = i.saturating_sub(n);
        let dt = t[i] - t[j];
        if dt > 0.0 {
            out[i] = (cs[i + 1] - cs[j + 1]) / dt;
        }
    }
    out
}

/// `retransmitted_originals`: the original send time of each distinct segment later retransmitted, in time order.
pub fn retransmitted_originals(snd: &Cols) -> Vec<f64> {
    let (k, s, t, l) = (snd.s("kind"), snd.f("seq"), snd.f("t_s"), snd.f("len"));
    let mut rx: Vec<i64> = (0..snd.len).filter(|&i| k[i] == "retransmit").map(|i| s[i] as i64).collect();
    rx.sort_unstable();
    rx.dedup();
    if rx.is_empty() {
        return Vec::new();
    }
    // first send row of each seq, by seq
    let mut first: std::collections::BTreeMap<i64, (f64, i64)> = std::collections::BTreeMap::new();
    for i in (0..snd.len).filter(|&i| k[i] == "send") {
        first.entry(s[i] as i64).or_insert((t[i], l[i] as i64));
    }
    let seqs: Vec<(i64, (f64, i64))> = first.into_iter().collect();
    let mut ks: Vec<usize> = Vec::new();
    for r in rx {
        let p = seqs.partition_point(|(q, _)| *q <= r);
        if p > 0 && r < seqs[p - 1].0 + seqs[p - 1].1 .1 {
            ks.push(p - 1);
        }
    }
    ks.sort_unstable();
    ks.dedup();
    let mut out: Vec<f64> = ks.iter().map(|&i| seqs[i].1 .0).collect();
    out.sort_by(|a, b| a.total_cmp(b));
    out
}

fn nice_step(span: f64) -> f64 {
    if span <= 0.0 {
        return 1.0;
    }
    let raw = span / 12.0;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * mag >= raw {
            return (m * mag).max(1.0);
        }
    }
    (10.0 * mag).max(1.0)
}

/// `kb_marks`: (time, n) for the KB labels along the top: when the n-th KB was first sent.
pub fn kb_marks(snd: &Cols, total_bytes: Option<f64>, t0: f64, t1: f64) -> Vec<(f64, i64)> {
    let s = snd.where_in("kind", &["send", "retransmit"]);
    if s.len == 0 {
        return Vec::new();
    }
    let t = s.f("t_s");
    let mut hi = Vec::with_capacity(s.len);
    let mut m = i64::MIN;
    for (q, l) in s.f("seq").iter().zip(s.f("len")) {
        m = m.max(*q as i64 + *l as i64);
        hi.push(m);
    }
    let top = *hi.last().unwrap();
    let kb = KB as i64;
    let ceil_kb = |b: i64| (b + kb - 1).div_euclid(kb);
    let total_kb = ceil_kb(total_bytes.filter(|b| *b > 0.0).map(|b| b as i64).unwrap_or(top)).min(ceil_kb(top));
    let when = |n: i64| {
        let i = hi.partition_point(|&h| h < (n - 1) * kb + 1);
        t[i.min(t.len() - 1)]
    };
    let inw: Vec<usize> = (0..t.len()).filter(|&i| inside(t[i], t0, t1)).collect();
    let (Some(&a), Some(&b)) = (inw.first(), inw.last()) else { return Vec::new() };
    let kb_lo = if a > 0 { hi[a].div_euclid(kb) } else { 0 };
    let kb_hi = ceil_kb(hi[b]);
    let step = nice_step((kb_hi - kb_lo) as f64) as i64;
    let first = (kb_lo.div_euclid(step) + 1) * step;
    let mut ns: Vec<i64> = (first..=kb_hi).step_by(step.max(1) as usize).collect();
    if kb_hi == total_kb {
        ns.retain(|&n| n < total_kb && (total_kb - n) as f64 >= 0.6 * step as f64);
        ns.push(total_kb);
    }
    ns.into_iter().map(|n| (when(n), n)).filter(|(tt, _)| *tt >= t0 && *tt <= t1).collect()
}

fn step_item(id: &str, t: &[f64], v: &[f64], keep: &[bool], t0: f64, t1: f64, stroke: Stroke) -> Item {
    let p: Vec<(f64, f64)> = t.iter().zip(v).zip(keep).filter(|(_, k)| **k).map(|((a, b), _)| (*a, *b)).collect();
    let (p, dec) = decimate_step(&p, t0, t1);
    Item::Line { id: id.into(), pts: p, step: !dec, stroke }
}

fn nanmax(v: &[f64]) -> Option<f64> {
    v.iter().copied().filter(|x| !x.is_nan()).reduce(f64::max)
}

/// `_queue_interval_for`: 100 ms bars as in 000 Fig 2.7, coarser for long windows (about 150 bars at most).
fn queue_interval_for(span: f64) -> f64 {
    [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0].into_iter().find(|iv| span / iv <= 150.0).unwrap_or(span / 150.0)
}

pub fn tcp_graph(run: &Run, conn: &str, t_from: Option<f64>, t_to: Option<f64>) -> Result<Figure, PlotError> {
    let flow = run.flow(conn)?.clone();
    let cam = crate::kinds::cam::cam_rows(run, conn)?;
    let snd = run.tcp(conn, &COLS)?.where_in("side", &["snd"]);
    let t = snd.f("t_s").to_vec();
    let end = run.sim_end().unwrap_or(0.0).max(t.iter().cloned().fold(0.0, f64::max));
    let (t0, t1) = window(t_from, t_to, 0.0, end);
    let kinds = snd.s("kind");

    // the windows panel
    let mut pw = Panel::new("Windows (KB)");
    pw.ratio = 2.3;
    pw.headroom = 48;
    let m = step_window(&t, t0, t1);
    let kbv = |c: &str| snd.f(c).iter().map(|v| v / KB).collect::<Vec<f64>>();
    let sb = flow.get("send_buffer_bytes").and_then(|v| v.as_f64()).filter(|v| *v != 0.0);
    let sndwnd: Vec<f64> = snd.f("snd_wnd").iter().map(|v| sb.map_or(*v, |b| v.min(b)) / KB).collect();
    let (ssthresh, cwnd, unacked) = (kbv("ssthresh"), kbv("cwnd"), kbv("unacked"));
    let s_th = Stroke::new(C_BLACK, 0.8).dashed(4.0, 2.0);
    let s_sw = Stroke::new(C_DARK, 1.6);
    let s_cw = Stroke::new(C_LIGHT, 2.2);
    let s_un = Stroke::new(C_BLACK, 0.6);
    // drawn in matplotlib's z-order: send window, congestion window, then threshold and unacked
    pw.items.push(step_item("line-sndwnd", &t, &sndwnd, &m, t0, t1, s_sw));
    pw.items.push(step_item("line-cwnd", &t, &cwnd, &m, t0, t1, s_cw));
    pw.items.push(step_item("line-ssthresh", &t, &ssthresh, &m, t0, t1, s_th));
    pw.items.push(step_item("line-unacked", &t, &unacked, &m, t0, t1, s_un));
    let sel = |v: &[f64]| v.iter().zip(&m).filter(|(_, k)| **k).map(|(x, _)| *x).collect::<Vec<f64>>();
    let base = [nanmax(&sel(&cwnd)), nanmax(&sel(&unacked)), Some(1.0)].into_iter().flatten().fold(f64::MIN, f64::max);
    let mut ytop = base;
    for v in [&sndwnd, &ssthresh] {
        if let Some(mx) = nanmax(&sel(v)) {
            if mx <= 2.0 * base {
                ytop = ytop.max(mx);
            }
        }
    }
    pw.y = (0.0, ytop * 1.12);

    // the sending rate
    let mut pr = Panel::new(format!("Sending KB/s (last {RATE_SEGMENTS} segs)"));
    let sends = snd.where_in("kind", &["send", "retransmit"]);
    let ts = sends.f("t_s");
    let r: Vec<f64> = sending_rate(ts, sends.f("len"), RATE_SEGMENTS).iter().map(|v| v / KB).collect();
    let mr = step_window(ts, t0, t1);
    pr.items.push(step_item("rate-line", ts, &r, &mr, t0, t1, Stroke::new(C_BLACK, 0.5)));
    let top = nanmax(&r.iter().zip(&mr).filter(|(_, k)| **k).map(|(x, _)| *x).collect::<Vec<_>>()).unwrap_or(1.0);
    pr.y = (0.0, if top > 0.0 { top * 1.1 } else { 1.0 });

    // the bottleneck's queue
    let link = run.bottleneck();
    let mut pq = Panel::new("Queue (pkts)");
    match link.as_deref().filter(|_| run.has("trace_link.parquet")) {
        None => {
            pq.items.push(Item::Text { id: "no-link-trace".into(), x: 0.5, y: 0.5, text: "no link trace".into(), size: 8.0, color: C_MID, anchor: (HPos::Center, VPos::Center), frac_x: true });
        }
        Some(l) => {
            let limit = run.link(l).and_then(|v| v.get("queue_limit_pkts")).and_then(|v| v.as_f64()).unwrap_or(0.0);
            let iv = queue_interval_for(t1 - t0);
            let top = queue_bars(run, l, t0, t1, iv, "queue", 7.0, &mut pq)?;
            pq.legend.clear(); // this panel names its marks in a note instead
            pq.y = (0.0, 1f64.max(top.max(limit) * 1.12));
            pq.ylabel = format!("Queue (pkts) {l}");
            pq.items.push(Item::Text {
                id: "queue-note".into(),
                x: 0.995,
                y: 0.96,
                text: format!("min–max per {} ms, average", crate::figure::g(iv * 1000.0)),
                size: 6.0,
                color: C_DARK,
                anchor: (HPos::Right, VPos::Top),
                frac_x: true,
            });
        }
    }

    // the marks along the windows panel (000 §3.5 list 1-6)
    let w: Vec<bool> = t.iter().map(|&x| inside(x, t0, t1)).collect();
    let at = |f: &dyn Fn(&str) -> bool| (0..t.len()).filter(|&i| w[i] && f(&kinds[i])).map(|i| t[i]).collect::<Vec<f64>>();
    pw.items.push(Item::Marks { id: "ack-marks".into(), xs: at(&|k| k == "ack" || k == "dupack"), y0: 0.0, y1: 0.035, stroke: Stroke::new(C_BLACK, 0.4), clip: true });
    pw.items.push(Item::Marks { id: "send-marks".into(), xs: at(&|k| k == "send" || k == "retransmit"), y0: 1.0, y1: 1.03, stroke: Stroke::new(C_BLACK, 0.4), clip: false });
    let ticks: Vec<(f64, f64)> = at(&|k| k == "slow_tick").into_iter().map(|x| (x, 1.055)).collect();
    pw.items.push(Item::Markers { id: "tick-diamonds".into(), pts: ticks, marker: Marker::Diamond, size: 2.6, color: C_BLACK, filled: false, frac_y: true });
    let touts: Vec<(f64, f64)> = at(&|k| k == "timeout").into_iter().map(|x| (x, 1.055)).collect();
    pw.items.push(Item::Markers { id: "timeout-circles".into(), pts: touts, marker: Marker::Circle, size: 6.5, color: C_BLACK, filled: true, frac_y: true });
    for (tt, n) in kb_marks(&snd, flow.get("transfer_bytes").and_then(|v| v.as_f64()), t0, t1) {
        pw.items.push(Item::Text { id: "kb-label".into(), x: tt, y: 1.085, text: n.to_string(), size: 6.0, color: C_BLACK, anchor: (HPos::Center, VPos::Bottom), frac_x: false });
    }
    let rt: Vec<f64> = retransmitted_originals(&snd).into_iter().filter(|&x| inside(x, t0, t1)).collect();
    // a Vegas flow's CAM panel third (000 Fig 4.3)
    let with_cam = cam.len > 0;
    let mut panels = vec![pw, pr];
    if with_cam {
        let mut pc = crate::kinds::cam::cam_panel(run, conn, &cam, t0, t1);
        pc.ratio = 1.1;
        panels.push(pc);
    }
    panels.push(pq);
    let names: &[&str] = if with_cam { &["windows", "rate", "cam", "queue"] } else { &["windows", "rate", "queue"] };
    for (i, (p, name)) in panels.iter_mut().zip(names).enumerate() {
        let id = if i == 0 { "retx-lines".to_string() } else { format!("retx-lines:{name}") };
        p.items.insert(0, Item::Marks { id, xs: rt.clone(), y0: 0.0, y1: 1.0, stroke: Stroke::new(C_BLACK, 0.7), clip: true });
    }

    let legend = vec![
        Key::line("threshold window", s_th),
        Key::line("send window", s_sw),
        Key::line("congestion window", s_cw),
        Key::line("unacked bytes", s_un),
        Key::marker("coarse tick", Marker::Diamond, 3.0, C_BLACK, false),
        Key::marker("coarse timeout", Marker::Circle, 5.0, C_BLACK, true),
        Key::line("later retransmitted", Stroke::new(C_BLACK, 0.7)),
    ];
    let mut title = conn.to_string();
    if let Some(v) = flow.get("variant").and_then(|v| v.as_str()).filter(|v| !v.is_empty()) {
        title += &format!(" — TCP {v}");
    }
    if let Some(tp) = flow.get("throughput_KBps").and_then(|v| v.as_f64()) {
        title += &format!(" (throughput: {tp:.0} KB/s)");
    }
    Ok(Figure { size: (8.0, if with_cam { 6.6 + 1.3 } else { 6.6 }), title, x: (t0, t1), xlabel: "Time (seconds)".into(), panels, bottom_legend: legend })
}
