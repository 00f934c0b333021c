//! A [`Figure`] as the report's zoomable inline SVG (python/tcplab/report/figures.py; issue 28: the
//! report drawn without matplotlib). The report's zoom script (report/assets/zoom.js) reads the
//! structure matplotlib's SVG has after the report tags it, so this writer emits that structure
//! directly: one group `<uid>-zax<i>` per panel; inside it one group `<uid>-zx<n>-<item id>` per
//! item whose x is a time (lines and marks as `<path>` of M and implicit-lineto pairs, markers as
//! `<use x=…>`, labels as `<text x=…>`), and the x ticks as groups `<uid>-xtick_<k>` holding a
//! `<use x=…>` and their label. Units are points (the figure's inches × 72), as matplotlib's;
//! [`Meta`] gives each panel's box and time range in those units.
//!
//! Source: the layout of crate::figure (one [`layout`] for both); matplotlib's SVG structure as
//! the report's zoom script reads it. Deviations from the plotters drawing: ticks at "nice" steps
//! (1, 2, 2.5, 5 × 10ⁿ, the zoom script's own rule) instead of plotters' choice; text is left to
//! the browser's font (DejaVu Sans when installed, else its sans-serif), measured with the
//! bundled DejaVu Sans only for legend boxes.

use std::fmt::Write;

use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::{IntoFont, RGBColor};

use crate::figure::{layout, px, steps, Corner, Figure, Item, Key, Marker, Stroke, C_BLACK, C_LIGHT};

/// Pixels (at figure::DPI) to points.
const S: f64 = 72.0 / crate::figure::DPI;

/// One panel's box (points, from the SVG's top left) and time range, as the zoom script reads it.
pub struct AxesMeta {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
    pub t0: f64,
    pub t1: f64,
}

pub struct Meta {
    pub w: f64,
    pub h: f64,
    pub axes: Vec<AxesMeta>,
}

impl Meta {
    /// The report's `data-zoom` JSON (figures.py `_zoomable_svg`'s meta).
    pub fn json(&self, uid: &str) -> String {
        let axes: Vec<serde_json::Value> = self
            .axes
            .iter()
            .enumerate()
            .map(|(i, a)| serde_json::json!({"g": format!("zax{i}"), "x0": r4(a.x0), "x1": r4(a.x1), "y0": r4(a.y0), "y1": r4(a.y1), "t0": a.t0, "t1": a.t1}))
            .collect();
        serde_json::json!({"uid": uid, "w": self.w, "h": self.h, "axes": axes}).to_string()
    }
}

fn r4(v: f64) -> f64 {
    (v * 1e4).round() / 1e4
}

/// `v` with at most `d` decimals, trailing zeros dropped.
fn num(out: &mut String, v: f64, d: usize) {
    let start = out.len();
    let _ = write!(out, "{v:.d$}");
    if d > 0 {
        let t = out[start..].trim_end_matches('0').trim_end_matches('.').len();
        out.truncate(start + t);
    }
    if &out[start..] == "-0" {
        out.truncate(start);
        out.push('0');
    }
}

fn n(v: f64, d: usize) -> String {
    let mut s = String::new();
    num(&mut s, v, d);
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

fn stroke_attrs(s: &Stroke) -> String {
    let mut a = format!(r##"fill="none" stroke="{}" stroke-width="{}""##, hex(s.color), n(s.width, 2));
    if s.alpha < 1.0 {
        let _ = write!(a, r##" stroke-opacity="{}""##, n(s.alpha, 3));
    }
    if let Some((on, off)) = s.dash {
        let k = s.width.max(0.5);
        let _ = write!(a, r##" stroke-dasharray="{},{}""##, n(on * k, 2), n(off * k, 2));
    }
    a
}

/// The "nice" ticks in [lo, hi] (zoom.js's niceStep and decimals), and the decimals to print.
fn ticks(lo: f64, hi: f64, target: usize) -> (Vec<f64>, usize) {
    let span = hi - lo;
    if !(span > 0.0) || !span.is_finite() {
        return (vec![lo], 0);
    }
    let raw = span / target as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let r = raw / mag;
    let step = (if r <= 1.0 { 1.0 } else if r <= 2.0 { 2.0 } else if r <= 2.5 { 2.5 } else if r <= 5.0 { 5.0 } else { 10.0 }) * mag;
    let mut d = 12;
    for k in 0..12 {
        let s = step * 10f64.powi(k);
        if (s - s.round()).abs() < 1e-6 * s.max(1.0) {
            d = k as usize;
            break;
        }
    }
    let first = (lo / step - 1e-9).ceil() as i64;
    let mut out = Vec::new();
    let mut i = first;
    while (i as f64) * step <= hi + step * 1e-9 {
        out.push(i as f64 * step);
        i += 1;
    }
    (out, d)
}

fn label(v: f64, d: usize) -> String {
    format!("{v:.d$}").replace('-', "\u{2212}")
}

/// Text at (x, y) points; `anchor` as plotters' (the baseline moved for vertical centring).
fn text(out: &mut String, x: f64, y: f64, s: &str, size: f64, color: RGBColor, anchor: (HPos, VPos), extra: &str) {
    let ta = match anchor.0 {
        HPos::Left => "start",
        HPos::Center => "middle",
        HPos::Right => "end",
    };
    let dy = match anchor.1 {
        VPos::Top => 0.76 * size,
        VPos::Center => 0.36 * size,
        VPos::Bottom => 0.0,
    };
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" font-size="{}" fill="{}" text-anchor="{ta}" font-family="DejaVu Sans, Bitstream Vera Sans, sans-serif"{extra}>{}</text>"##,
        n(x, 2),
        n(y + dy, 2),
        n(size, 2),
        hex(color),
        esc(s)
    );
}

/// A text's width in points: the bundled font's measure, or DejaVu Sans' average advance (0.6 em
/// per character) when that is wider (the browser's own font decides the drawn width).
fn text_width_pt(s: &str, size_pt: f64) -> f64 {
    crate::figure::register_font();
    let est = s.chars().count() as f64 * size_pt * 0.6;
    ("sans-serif", px(size_pt)).into_font().box_size(s).map(|(w, _)| (w as f64 * S).max(est)).unwrap_or(est)
}

/// A marker's shape centred on (0, 0), points.
fn marker_path(m: Marker, size: f64) -> String {
    let r = size / 2.0;
    let (a, b) = (n(r, 3), n(-r, 3));
    match m {
        Marker::Dot | Marker::Circle => {
            format!("M {b} 0 A {a} {a} 0 1 0 {a} 0 A {a} {a} 0 1 0 {b} 0 Z")
        }
        Marker::Cross => format!("M {b} {b} L {a} {a} M {b} {a} L {a} {b}"),
        Marker::Diamond => format!("M 0 {b} L {a} 0 L 0 {a} L {b} 0 Z"),
    }
}

fn marker_style(m: Marker, color: RGBColor, filled: bool) -> String {
    let c = hex(color);
    match (m, filled) {
        (Marker::Cross, _) => format!(r##"fill="none" stroke="{c}" stroke-width="0.5""##),
        (Marker::Dot, true) => format!(r##"fill="{c}""##),
        (_, true) => format!(r##"fill="{c}" stroke="{c}" stroke-width="0.5""##),
        (_, false) => format!(r##"fill="#ffffff" stroke="{c}" stroke-width="0.5""##),
    }
}

struct Writer<'a> {
    uid: &'a str,
    defs: String,
    body: String,
    markers: Vec<(Marker, u64, RGBColor, bool)>,
    zx: usize,
    xtick: usize,
}

impl Writer<'_> {
    /// The id of the def drawing this marker (added on first use).
    fn marker(&mut self, m: Marker, size: f64, color: RGBColor, filled: bool) -> String {
        let key = (m, size.to_bits(), color, filled);
        let i = match self.markers.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                self.markers.push(key);
                let i = self.markers.len() - 1;
                let _ = write!(self.defs, r##"<path id="{}-m{i}" d="{}" {}/>"##, self.uid, marker_path(m, size), marker_style(m, color, filled));
                i
            }
        };
        format!("{}-m{i}", self.uid)
    }

    fn legend(&mut self, keys: &[Key], cols: usize, at: (f64, f64), anchor_right: bool, boxed: bool, size: f64) {
        if keys.is_empty() {
            return;
        }
        let line_h = size * 1.45;
        let sample = size * 2.0;
        let pad = 3.0;
        let cols = cols.clamp(1, keys.len());
        let rows = keys.len().div_ceil(cols);
        let mut col_w = vec![0.0f64; cols];
        for (i, k) in keys.iter().enumerate() {
            col_w[i % cols] = col_w[i % cols].max(sample + 4.0 + text_width_pt(&k.label, size) + 7.0);
        }
        let total_w: f64 = col_w.iter().sum::<f64>() + 2.0 * pad;
        let total_h = rows as f64 * line_h + 2.0 * pad;
        let x0 = if anchor_right { at.0 - total_w } else { at.0 };
        let y0 = at.1;
        let b = &mut self.body;
        if boxed {
            let _ = write!(b, r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#ffffff" fill-opacity="0.85" stroke="{}" stroke-width="0.6"/>"##, n(x0, 2), n(y0, 2), n(total_w, 2), n(total_h, 2), hex(C_LIGHT));
        }
        for (i, k) in keys.iter().enumerate() {
            let (c, r) = (i % cols, i / cols);
            let x = x0 + pad + col_w[..c].iter().sum::<f64>();
            let yc = y0 + pad + r as f64 * line_h + line_h / 2.0;
            if let Some(s) = &k.line {
                let b = &mut self.body;
                let _ = write!(b, r##"<path d="M {} {} L {} {}" {}/>"##, n(x, 2), n(yc, 2), n(x + sample, 2), n(yc, 2), stroke_attrs(s));
            }
            if let Some((m, size, color, filled)) = k.marker {
                let id = self.marker(m, size, color, filled);
                let _ = write!(self.body, r##"<use xlink:href="#{id}" x="{}" y="{}"/>"##, n(x + sample / 2.0, 2), n(yc, 2));
            }
            text(&mut self.body, x + sample + 4.0, yc, &k.label, size, C_BLACK, (HPos::Left, VPos::Center), "");
        }
    }
}

/// Points of a polyline as one path's d: "M x y x y …", a new "M" after a gap (a non-finite
/// point); consecutive points that print the same are written once.
fn path_d(pts: impl Iterator<Item = (f64, f64)>, d: usize) -> String {
    let mut out = String::new();
    let mut pen = false;
    let mut last = (String::new(), String::new());
    for (x, y) in pts {
        if !(x.is_finite() && y.is_finite()) {
            pen = false;
            continue;
        }
        let (xs, ys) = (n(x, d), n(y, d));
        if pen && xs == last.0 && ys == last.1 {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        if !pen {
            out.push_str("M ");
            pen = true;
        }
        out.push_str(&xs);
        out.push(' ');
        out.push_str(&ys);
        last = (xs, ys);
    }
    out
}

/// `fig` as the report's zoomable SVG, every id prefixed with `uid`, and its axes description.
pub fn to_zoom_svg(fig: &Figure, uid: &str) -> (String, Meta) {
    let lay = layout(fig);
    let (w, h) = (lay.w as f64 * S, lay.h as f64 * S);
    let (left, right) = (lay.left as f64 * S, lay.right as f64 * S);
    let mut wr = Writer { uid, defs: String::new(), body: String::new(), markers: Vec::new(), zx: 0, xtick: 0 };
    let mut meta = Meta { w, h, axes: Vec::new() };
    let _ = write!(wr.defs, r##"<path id="{uid}-xt" d="M 0 0 L 0 3.5" stroke="#000000" stroke-width="0.8"/><path id="{uid}-yt" d="M 0 0 L -3.5 0" stroke="#000000" stroke-width="0.8"/>"##);
    let _ = write!(wr.body, r##"<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>"##, n(w, 2), n(h, 2));
    text(&mut wr.body, w / 2.0, (px(9.0) * 0.5 + 4.0) * S, &fig.title, 9.0, C_BLACK, (HPos::Center, VPos::Top), "");
    let (t0, t1) = fig.x;
    let (xt, xd) = ticks(t0, t1, 8);
    let xpt = |x: f64| left + (x - t0) / (t1 - t0) * (right - left);
    for (i, p) in fig.panels.iter().enumerate() {
        let (ypx, phpx) = lay.panels[i];
        let (top, bot) = (ypx as f64 * S, (ypx + phpx) as f64 * S);
        let last = i + 1 == fig.panels.len();
        let ypt = |v: f64| bot + (v - p.y.0) / (p.y.1 - p.y.0) * (top - bot);
        let fy = |f: f64| bot + f * (top - bot);
        meta.axes.push(AxesMeta { x0: left, x1: right, y0: top, y1: bot, t0, t1 });
        let clip = format!("{uid}-p{i}");
        let _ = write!(wr.defs, r##"<clipPath id="{clip}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath>"##, n(left, 3), n(top, 3), n(right - left, 3), n(bot - top, 3));
        let cp = format!(r##" clip-path="url(#{clip})""##);
        let _ = write!(wr.body, r##"<g id="{uid}-zax{i}">"##);
        for it in &p.items {
            let zx = |wr: &mut Writer| {
                let id: String = it.id().chars().map(|c| if c.is_ascii_alphanumeric() || "_.:-".contains(c) { c } else { '_' }).collect();
                let g = if id.is_empty() { format!("{uid}-zx{}", wr.zx) } else { format!("{uid}-zx{}-{id}", wr.zx) };
                wr.zx += 1;
                let _ = write!(wr.body, r##"<g id="{g}">"##);
            };
            match it {
                Item::Line { pts, step, stroke, .. } => {
                    let drawn = if *step { steps(pts) } else { pts.clone() };
                    let d = path_d(drawn.iter().map(|&(a, b)| (xpt(a), ypt(b))), if drawn.len() > 200 { 1 } else { 3 });
                    zx(&mut wr);
                    let _ = write!(wr.body, r##"<path d="{d}"{cp} {} stroke-linejoin="round"/></g>"##, stroke_attrs(stroke));
                }
                Item::Marks { xs, y0, y1, stroke, clip, .. } => {
                    // as the matplotlib version: one mark per column above 12,800, 0.1 pt then
                    let (xs, many) = crate::series::decimate_marks(xs);
                    let dp = if many { 1 } else { 2 };
                    let (a, b) = (n(fy(*y0), dp), n(fy(*y1), dp));
                    let mut d = String::new();
                    let mut last = String::new();
                    for x in xs {
                        let xs = n(xpt(x), dp);
                        if xs == last || !x.is_finite() {
                            continue;
                        }
                        let _ = write!(d, "{}M {xs} {a} {xs} {b}", if d.is_empty() { "" } else { " " });
                        last = xs;
                    }
                    zx(&mut wr);
                    let _ = write!(wr.body, r##"<path d="{d}"{} {}/></g>"##, if *clip { cp.as_str() } else { "" }, stroke_attrs(stroke));
                }
                Item::Bars { bars, width, color, .. } => {
                    let mut d = String::new();
                    for &(x, lo, hi) in bars {
                        if !(x.is_finite() && lo.is_finite() && hi.is_finite()) {
                            continue;
                        }
                        let _ = write!(d, "{}M {} {} {} {}", if d.is_empty() { "" } else { " " }, n(xpt(x), 2), n(ypt(lo), 1), n(xpt(x), 2), n(ypt(hi), 1));
                    }
                    zx(&mut wr);
                    let _ = write!(wr.body, r##"<path d="{d}"{cp} fill="none" stroke="{}" stroke-width="{}"/></g>"##, hex(*color), n(*width, 2));
                }
                Item::Markers { pts, marker, size, color, filled, frac_y, .. } => {
                    let id = wr.marker(*marker, *size, *color, *filled);
                    zx(&mut wr);
                    let _ = write!(wr.body, "<g{}>", if *frac_y { "" } else { cp.as_str() });
                    for &(a, b) in pts {
                        let y = if *frac_y { fy(b) } else { ypt(b) };
                        if a.is_finite() && y.is_finite() {
                            let _ = write!(wr.body, r##"<use xlink:href="#{id}" x="{}" y="{}"/>"##, n(xpt(a), 2), n(y, 2));
                        }
                    }
                    wr.body.push_str("</g></g>");
                }
                Item::HLine { y, stroke, .. } => {
                    let yy = n(ypt(*y), 2);
                    let _ = write!(wr.body, r##"<path d="M {} {yy} L {} {yy}"{cp} {}/>"##, n(left, 2), n(right, 2), stroke_attrs(stroke));
                }
                Item::Text { x, y, text: s, size, color, anchor, frac_x, .. } => {
                    if *frac_x {
                        text(&mut wr.body, left + x * (right - left), fy(*y), s, *size, *color, *anchor, "");
                    } else if *x >= t0 && *x <= t1 {
                        zx(&mut wr);
                        text(&mut wr.body, xpt(*x), fy(*y), s, *size, *color, *anchor, "");
                        wr.body.push_str("</g>");
                    }
                }
            }
        }
        // the frame, the ticks and their labels
        let _ = write!(wr.body, r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#000000" stroke-width="0.8"/>"##, n(left, 3), n(top, 3), n(right - left, 3), n(bot - top, 3));
        for &v in &xt {
            wr.xtick += 1;
            let x = n(xpt(v), 3);
            let _ = write!(wr.body, r##"<g id="{uid}-xtick_{}"><use xlink:href="#{uid}-xt" x="{x}" y="{}"/>"##, wr.xtick, n(bot, 3));
            if last {
                text(&mut wr.body, xpt(v), bot + 5.0, &label(v, xd), 7.0, C_BLACK, (HPos::Center, VPos::Top), "");
            }
            wr.body.push_str("</g>");
        }
        let (yt, yd) = ticks(p.y.0, p.y.1, 5);
        for &v in &yt {
            let y = ypt(v);
            let _ = write!(wr.body, r##"<g><use xlink:href="#{uid}-yt" x="{}" y="{}"/>"##, n(left, 3), n(y, 3));
            text(&mut wr.body, left - 5.5, y, &label(v, yd), 7.0, C_BLACK, (HPos::Right, VPos::Center), "");
            wr.body.push_str("</g>");
        }
        // the y label, rotated, made smaller when longer than the panel is high (written on one line)
        let ylabel = p.ylabel.replace('\n', " ");
        let ysize = (8.0 * (bot - top) / text_width_pt(&ylabel, 8.0).max(1.0)).clamp(5.0, 8.0);
        let (lx, ly) = ((px(8.0) * 0.3 + 2.0) * S + ysize * 0.76, (top + bot) / 2.0);
        let _ = write!(
            wr.body,
            r##"<text transform="translate({} {}) rotate(-90)" font-size="{}" text-anchor="middle" font-family="DejaVu Sans, Bitstream Vera Sans, sans-serif">{}</text>"##,
            n(lx, 2),
            n(ly, 2),
            n(ysize, 2),
            esc(&ylabel)
        );
        if !p.legend.is_empty() {
            let (at, right_side) = match p.legend_at {
                Corner::UpperRight => ((right - 4.0, top + 4.0), true),
                Corner::UpperLeft => ((left + 4.0, top + 4.0), false),
            };
            wr.legend(&p.legend, p.legend_cols, at, right_side, true, 6.5);
        }
        if last {
            text(&mut wr.body, (left + right) / 2.0, bot + (px(7.0) + 14.0) * S, &fig.xlabel, 8.0, C_BLACK, (HPos::Center, VPos::Top), "");
        }
        wr.body.push_str("</g>");
    }
    if !fig.bottom_legend.is_empty() {
        let size = 6.5;
        let cols = fig.bottom_legend.len().min(7);
        let sample = size * 2.0;
        let mut widths = vec![0.0f64; cols];
        for (i, k) in fig.bottom_legend.iter().enumerate() {
            widths[i % cols] = widths[i % cols].max(sample + 4.0 + text_width_pt(&k.label, size) + 7.0);
        }
        let total: f64 = widths.iter().sum::<f64>() + 6.0;
        let keys = fig.bottom_legend.clone();
        wr.legend(&keys, cols, ((w - total) / 2.0, h - lay.legend_h as f64 * S), false, false, size);
    }
    let svg = format!(
        r##"<svg class="graph zsvg" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 {} {}" version="1.1"><defs>{}</defs><g id="{uid}-figure_1">{}</g></svg>"##,
        n(w, 3),
        n(h, 3),
        wr.defs,
        wr.body
    );
    (svg, meta)
}

/// Markers the figure draws (each one an element in the SVG).
pub fn marker_count(fig: &Figure) -> usize {
    fig.panels.iter().flat_map(|p| p.items.iter()).map(|i| if let Item::Markers { pts, .. } = i { pts.len() } else { 0 }).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Panel, Stroke, C_BLACK};

    fn fig() -> Figure {
        let mut p = Panel::new("KB");
        p.y = (0.0, 10.0);
        p.items.push(Item::Line { id: "line-cwnd".into(), pts: vec![(0.0, 1.0), (5.0, 9.0), (10.0, 2.0)], step: false, stroke: Stroke::new(C_BLACK, 1.0) });
        p.items.push(Item::Marks { id: "retx-lines".into(), xs: vec![2.5, 7.5], y0: 0.0, y1: 1.0, stroke: Stroke::new(C_BLACK, 0.7), clip: true });
        p.items.push(Item::HLine { id: "cap".into(), y: 5.0, stroke: Stroke::new(C_BLACK, 0.5) });
        Figure { size: (8.0, 3.0), title: "t & <x>".into(), x: (0.0, 10.0), xlabel: "Time (seconds)".into(), panels: vec![p], bottom_legend: Vec::new() }
    }

    #[test]
    fn zoomable_structure_and_time_mapping() {
        let (svg, meta) = to_zoom_svg(&fig(), "zg7");
        assert!(svg.starts_with(r##"<svg class="graph zsvg" "##));
        assert!(svg.contains(r##"<g id="zg7-zax0">"##));
        assert!(svg.contains("t &amp; &lt;x&gt;"));
        let a = &meta.axes[0];
        assert_eq!((a.t0, a.t1), (0.0, 10.0));
        assert!((meta.w - 8.0 * 72.0).abs() < 1.0);
        // the retransmission marks: x where their time is on the axes box, as the zoom script maps it
        let i = svg.find(r##"-retx-lines"><path d="M "##).expect("tagged marks");
        let d: Vec<f64> = svg[i + 23..].split('"').next().unwrap().split(' ').filter_map(|t| t.parse().ok()).collect();
        let want = a.x0 + 0.25 * (a.x1 - a.x0);
        assert!((d[0] - want).abs() < 0.01, "{} vs {want}", d[0]);
        // the horizontal line spans the panel: not tagged as time-dependent
        assert_eq!(svg.matches("-zx").count(), 2);
        // x ticks at 0, 2, 4, ... 10 with a tick mark each
        assert_eq!(svg.matches(r##"-xtick_"##).count(), 6);
        let meta_json: serde_json::Value = serde_json::from_str(&meta.json("zg7")).unwrap();
        assert_eq!(meta_json["axes"][0]["g"], "zax0");
    }

    #[test]
    fn nice_ticks_and_numbers() {
        assert_eq!(ticks(0.0, 60.0, 8), (vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0], 0));
        assert_eq!(ticks(0.0, 1.0, 5).1, 1);
        assert_eq!(n(1.50, 3), "1.5");
        assert_eq!(n(-0.0001, 2), "0");
        assert_eq!(label(-2.0, 0), "\u{2212}2");
    }
}
