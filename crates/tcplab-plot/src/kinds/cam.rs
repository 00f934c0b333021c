//! `cam_graph` and the CAM panel of `tcp_graph` (python/tcplab/plots/tcp.py, draw.py `_draw_cam`):
//! the Vegas congestion-avoidance graph (seed 000 Fig 4.4). Expected (gray, thick), Actual (solid
//! black), the α and β thresholds (dashed) drawn around Expected as Expected − α·MSS/BaseRTT and
//! Expected − β·MSS/BaseRTT, all in KB/s, and a small mark at each decision. MSS/BaseRTT per row
//! is recovered from the trace ((Expected − Actual)/Diff), as series.py
//! `cam_scale_KBps_per_buffer` does. Deviations: none in the series.

use plotters::style::text_anchor::{HPos, VPos};

use crate::figure::{Corner, Figure, Item, Key, Panel, Stroke, C_BLACK, C_DARK, C_MID};
use crate::run::{Cols, Run, KB};
use crate::series::{inside, window};
use crate::PlotError;

const CAM_COLS: [&str; 7] = ["conn", "t_s", "expected_KBps", "actual_KBps", "diff_buffers", "alpha", "beta"];

/// A flow's CAM rows (empty when the run has no CAM trace).
pub fn cam_rows(run: &Run, conn: &str) -> Result<Cols, PlotError> {
    if !run.has("trace_cam.parquet") {
        return Ok(Cols::default());
    }
    run.read("trace_cam.parquet", "Vegas CAM trace", &CAM_COLS, &CAM_COLS, Some(("conn", conn)))
}

/// `cam_scale_KBps_per_buffer`: per CAM row, the rate one buffer is (KB/s), MSS/BaseRTT.
pub fn cam_scale(run: &Run, conn: &str, cam: &Cols) -> Vec<f64> {
    let (e, a, d) = (cam.f("expected_KBps"), cam.f("actual_KBps"), cam.f("diff_buffers"));
    let mut k: Vec<f64> = (0..cam.len)
        .map(|i| {
            let v = if d[i].abs() > 0.05 { (e[i] - a[i]) / d[i] } else { f64::NAN };
            if v.is_finite() && v > 0.0 { v } else { f64::NAN }
        })
        .collect();
    let Some(first) = k.iter().position(|v| !v.is_nan()) else {
        let mut fallback = f64::NAN;
        if let Ok(snd) = run.tcp(conn, &["t_s", "kind", "len", "srtt_s"]).map(|c| c.where_in("side", &["snd"])) {
            let mss = run.flow(conn).ok().and_then(|f| f.get("mss").and_then(|v| v.as_f64())).filter(|m| *m != 0.0).or_else(|| snd.f("len").iter().copied().reduce(f64::max));
            let srtt = snd.f("srtt_s").iter().copied().filter(|s| *s > 0.0).reduce(f64::min);
            if let (Some(m), Some(s)) = (mss, srtt) {
                if m != 0.0 {
                    fallback = m / KB / s;
                }
            }
        }
        return vec![fallback; cam.len];
    };
    let mut last = k[first];
    for v in k.iter_mut() {
        if v.is_nan() {
            *v = last;
        } else {
            last = *v;
        }
    }
    k
}

/// `_draw_cam`: the CAM panel over [t0, t1].
pub fn cam_panel(run: &Run, conn: &str, cam: &Cols, t0: f64, t1: f64) -> Panel {
    let mut p = Panel::new("CAM KB/s");
    let t = cam.f("t_s");
    let m: Vec<bool> = t.iter().map(|&x| inside(x, t0, t1)).collect();
    if !m.iter().any(|b| *b) {
        p.items.push(Item::Text { id: "cam-empty".into(), x: 0.5, y: 0.5, text: "no CAM decisions in range".into(), size: 8.0, color: C_MID, anchor: (HPos::Center, VPos::Center), frac_x: true });
        return p;
    }
    let k = cam_scale(run, conn, cam);
    let e = cam.f("expected_KBps").to_vec();
    let a = cam.f("actual_KBps").to_vec();
    let al: Vec<f64> = (0..cam.len).map(|i| e[i] - cam.f("alpha")[i] * k[i]).collect();
    let be: Vec<f64> = (0..cam.len).map(|i| e[i] - cam.f("beta")[i] * k[i]).collect();
    let parts = [
        ("cam-expected", e, Stroke::new(C_MID, 1.6), "Expected"),
        ("cam-actual", a, Stroke::new(C_BLACK, 0.9), "Actual"),
        ("cam-alpha", al, Stroke::new(C_BLACK, 0.6).dashed(3.0, 2.0), "α threshold"),
        ("cam-beta", be, Stroke::new(C_DARK, 0.6).dashed(1.0, 1.5), "β threshold"),
    ];
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (id, v, stroke, label) in parts {
        let pts: Vec<(f64, f64)> = (0..cam.len).filter(|&i| m[i]).map(|i| (t[i], v[i])).collect();
        let fin: Vec<f64> = pts.iter().map(|p| p.1).filter(|y| y.is_finite()).collect();
        if fin.is_empty() {
            continue;
        }
        for y in fin {
            lo = lo.min(y);
            hi = hi.max(y);
        }
        p.items.push(Item::Line { id: id.into(), pts, step: false, stroke });
        p.legend.push(Key::line(label, stroke));
    }
    let xs: Vec<f64> = (0..cam.len).filter(|&i| m[i]).map(|i| t[i]).collect();
    p.items.push(Item::Marks { id: "cam-decisions".into(), xs, y0: 0.0, y1: 0.07, stroke: Stroke::new(C_BLACK, 0.6), clip: true });
    p.y = if hi.is_finite() { ((lo * 0.9).max(0.0), hi * 1.12) } else { (0.0, 1.0) };
    p.legend_at = Corner::UpperRight;
    p.legend_cols = 4;
    p
}

/// `cam_graph`: one flow's CAM panel alone.
pub fn cam_graph(run: &Run, conn: &str, t_from: Option<f64>, t_to: Option<f64>) -> Result<Figure, PlotError> {
    run.flow(conn)?;
    let cam = cam_rows(run, conn)?;
    let tmax = cam.f("t_s").iter().copied().reduce(f64::max);
    let end = run.sim_end().filter(|e| *e != 0.0).or(tmax).filter(|e| *e != 0.0).unwrap_or(1.0);
    let (t0, t1) = window(t_from, t_to, 0.0, end);
    let panel = if cam.len == 0 {
        let mut p = Panel::new("");
        p.items.push(Item::Text { id: "cam-empty".into(), x: 0.5, y: 0.5, text: format!("no CAM trace for {conn} (not a Vegas flow?)"), size: 8.0, color: C_MID, anchor: (HPos::Center, VPos::Center), frac_x: true });
        p
    } else {
        cam_panel(run, conn, &cam, t0, t1)
    };
    Ok(Figure { size: (8.0, 2.8), title: format!("{conn} — Vegas congestion avoidance (CAM)"), x: (t0, t1), xlabel: "Time (seconds)".into(), panels: vec![panel], bottom_legend: Vec::new() })
}
