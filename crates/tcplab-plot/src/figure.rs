//! A graph as data (panels stacked on one time axis, each with its items, labels and legend), and
//! its drawing to SVG or PNG with plotters. The graphs (crate::kinds) build a [`Figure`] the way
//! python/tcplab/plots/ builds a matplotlib figure — same series, axes, labels, titles, legends —
//! and the tests read it back. Source: matplotlib's look of those graphs (python/tcplab/plots/
//! style.py: Brakmo's palette, font sizes, line widths in points at 120 dpi). Deviations: plotters
//! picks the tick positions; multi-line axis labels are written on one line; everything a
//! panel draws is clipped to it by this module (plotters does not clip).

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub const DPI: f64 = 120.0;
/// Points to pixels at [`DPI`].
pub fn px(pt: f64) -> f64 {
    pt * DPI / 72.0
}

pub const C_BLACK: RGBColor = RGBColor(0, 0, 0);
pub const C_DARK: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub const C_MID: RGBColor = RGBColor(0x8c, 0x8c, 0x8c);
pub const C_LIGHT: RGBColor = RGBColor(0xb4, 0xb4, 0xb4);
pub const FLOW_COLORS: [RGBColor; 8] = [
    RGBColor(0, 0, 0),
    RGBColor(0x1f, 0x5f, 0xa8),
    RGBColor(0xb2, 0x39, 0x2f),
    RGBColor(0x2e, 0x7d, 0x32),
    RGBColor(0x7b, 0x4f, 0xa0),
    RGBColor(0xb8, 0x86, 0x0b),
    RGBColor(0x00, 0x83, 0x8f),
    RGBColor(0x6d, 0x4c, 0x41),
];
/// matplotlib's "-", "--", "-.", ":" as (on, off) dash lengths in points (None: solid).
pub const FLOW_DASHES: [Option<(f64, f64)>; 4] = [None, Some((3.7, 1.6)), Some((6.4, 1.6)), Some((1.0, 1.65))];

/// Python's `f"{v:g}"`: six significant digits, trailing zeros dropped.
pub fn g(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return if v.is_nan() { "nan".into() } else if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let trim = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if (-4..6).contains(&exp) {
        trim(format!("{v:.*}", (5 - exp) as usize))
    } else {
        format!("{}e{}{:02}", trim(mantissa.to_string()), if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Stroke {
    pub color: RGBColor,
    /// Width in points.
    pub width: f64,
    pub alpha: f64,
    /// (on, off) in points.
    pub dash: Option<(f64, f64)>,
}

impl Stroke {
    pub fn new(color: RGBColor, width: f64) -> Stroke {
        Stroke { color, width, alpha: 1.0, dash: None }
    }
    pub fn dashed(self, on: f64, off: f64) -> Stroke {
        Stroke { dash: Some((on, off)), ..self }
    }
    pub fn alpha(self, a: f64) -> Stroke {
        Stroke { alpha: a, ..self }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Marker {
    Dot,
    Cross,
    Diamond,
    Circle,
}

/// How a legend entry is drawn: a line sample, a marker, or both.
#[derive(Clone, Debug)]
pub struct Key {
    pub label: String,
    pub line: Option<Stroke>,
    pub marker: Option<(Marker, f64, RGBColor, bool)>,
}

impl Key {
    pub fn line(label: impl Into<String>, s: Stroke) -> Key {
        Key { label: label.into(), line: Some(s), marker: None }
    }
    pub fn marker(label: impl Into<String>, m: Marker, size: f64, color: RGBColor, filled: bool) -> Key {
        Key { label: label.into(), line: None, marker: Some((m, size, color, filled)) }
    }
}

/// What a panel draws. `id` is the matplotlib version's gid (python/tcplab/plots/__init__.py).
#[derive(Clone)]
pub enum Item {
    /// A polyline in data coordinates; `step`: drawn as steps-post.
    Line { id: String, pts: Vec<(f64, f64)>, step: bool, stroke: Stroke },
    /// Vertical strokes at data x from axes fraction `y0` to `y1` (may lie above the panel).
    Marks { id: String, xs: Vec<f64>, y0: f64, y1: f64, stroke: Stroke, clip: bool },
    /// Vertical bars (x, low, high) in data coordinates, `width` in points.
    Bars { id: String, bars: Vec<(f64, f64, f64)>, width: f64, color: RGBColor },
    /// Markers in data coordinates; `frac_y`: y is an axes fraction (drawn above the panel too).
    Markers { id: String, pts: Vec<(f64, f64)>, marker: Marker, size: f64, color: RGBColor, filled: bool, frac_y: bool },
    /// A horizontal line across the panel at data y.
    HLine { id: String, y: f64, stroke: Stroke },
    /// Text at data x (or axes fraction when `frac_x`), axes-fraction y, size in points.
    Text { id: String, x: f64, y: f64, text: String, size: f64, color: RGBColor, anchor: (HPos, VPos), frac_x: bool },
}

impl Item {
    pub fn id(&self) -> &str {
        match self {
            Item::Line { id, .. } | Item::Marks { id, .. } | Item::Bars { id, .. } | Item::Markers { id, .. } | Item::HLine { id, .. } | Item::Text { id, .. } => id,
        }
    }
    /// Number of drawn elements (points of a line, marks, bars, markers; 1 for a line or text).
    pub fn count(&self) -> usize {
        match self {
            Item::Line { pts, .. } | Item::Markers { pts, .. } => pts.len(),
            Item::Marks { xs, .. } => xs.len(),
            Item::Bars { bars, .. } => bars.len(),
            Item::HLine { .. } | Item::Text { .. } => 1,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Corner {
    UpperRight,
    UpperLeft,
}

#[derive(Clone)]
pub struct Panel {
    pub y: (f64, f64),
    pub ylabel: String,
    pub items: Vec<Item>,
    pub legend: Vec<Key>,
    pub legend_at: Corner,
    pub legend_cols: usize,
    /// Relative height.
    pub ratio: f64,
    /// Pixels kept free above the panel (for marks and labels drawn there).
    pub headroom: u32,
}

impl Panel {
    pub fn new(ylabel: impl Into<String>) -> Panel {
        Panel { y: (0.0, 1.0), ylabel: ylabel.into(), items: Vec::new(), legend: Vec::new(), legend_at: Corner::UpperRight, legend_cols: 1, ratio: 1.0, headroom: 0 }
    }
}

#[derive(Clone)]
pub struct Figure {
    /// Inches, as matplotlib's figsize (drawn at [`DPI`]).
    pub size: (f64, f64),
    pub title: String,
    pub x: (f64, f64),
    pub xlabel: String,
    pub panels: Vec<Panel>,
    /// A legend below the panels (the TCP graph's).
    pub bottom_legend: Vec<Key>,
}

impl Figure {
    pub fn pixels(&self) -> (u32, u32) {
        ((self.size.0 * DPI).round() as u32, (self.size.1 * DPI).round() as u32)
    }
    /// Every item with this id, in any panel.
    pub fn items(&self, id: &str) -> Vec<&Item> {
        self.panels.iter().flat_map(|p| p.items.iter()).filter(|i| i.id() == id).collect()
    }
    /// `count_gid` of the matplotlib version: the elements drawn by the items with this id.
    pub fn count(&self, id: &str) -> usize {
        self.items(id).iter().map(|i| i.count()).sum()
    }
}

const FONT: &str = "sans-serif";
/// Pixels left of a panel for its y tick labels.
const Y_LABELS: i32 = 50;

/// Registers the bundled DejaVu Sans once (fonts/LICENSE_DEJAVU: the Bitstream Vera licence).
pub fn register_font() {
    font()
}

fn font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, include_bytes!("../fonts/DejaVuSans.ttf"));
    });
}

fn rgba(c: RGBColor, a: f64) -> RGBAColor {
    c.mix(a)
}

fn text_style(size_pt: f64, color: RGBColor) -> TextStyle<'static> {
    (FONT, px(size_pt)).into_font().color(&color)
}

/// A mapping from data to the pixels of a panel's plotting area.
#[derive(Clone, Copy)]
struct Map {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    px0: f64,
    px1: f64,
    py0: f64, // pixel row of y0 (bottom)
    py1: f64, // pixel row of y1 (top)
}

impl Map {
    fn x(&self, x: f64) -> f64 {
        self.px0 + (x - self.x0) / (self.x1 - self.x0) * (self.px1 - self.px0)
    }
    fn y(&self, y: f64) -> f64 {
        self.py0 + (y - self.y0) / (self.y1 - self.y0) * (self.py1 - self.py0)
    }
    fn fy(&self, f: f64) -> f64 {
        self.py0 + f * (self.py1 - self.py0)
    }
}

/// Liang–Barsky clipping of a segment to the rectangle; None when outside.
fn clip(a: (f64, f64), b: (f64, f64), r: (f64, f64, f64, f64)) -> Option<((f64, f64), (f64, f64))> {
    let (xmin, xmax, ymin, ymax) = r;
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, a.0 - xmin), (dx, xmax - a.0), (-dy, a.1 - ymin), (dy, ymax - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    (t0 <= t1).then(|| ((a.0 + t0 * dx, a.1 + t0 * dy), (a.0 + t1 * dx, a.1 + t1 * dy)))
}

/// A polyline in pixels clipped to `r`: the pieces inside.
fn clip_polyline(pts: &[(f64, f64)], r: (f64, f64, f64, f64)) -> Vec<Vec<(i32, i32)>> {
    let mut out: Vec<Vec<(i32, i32)>> = Vec::new();
    let mut cur: Vec<(i32, i32)> = Vec::new();
    let ip = |p: (f64, f64)| (p.0.round() as i32, p.1.round() as i32);
    for w in pts.windows(2) {
        if !(w[0].0.is_finite() && w[0].1.is_finite() && w[1].0.is_finite() && w[1].1.is_finite()) {
            if cur.len() > 1 {
                out.push(std::mem::take(&mut cur));
            }
            cur.clear();
            continue;
        }
        match clip(w[0], w[1], r) {
            Some((a, b)) => {
                let (a, b) = (ip(a), ip(b));
                if cur.last() != Some(&a) {
                    if cur.len() > 1 {
                        out.push(std::mem::take(&mut cur));
                    }
                    cur.clear();
                    cur.push(a);
                }
                if cur.last() != Some(&b) || cur.len() == 1 {
                    cur.push(b);
                }
            }
            None => {
                if cur.len() > 1 {
                    out.push(std::mem::take(&mut cur));
                }
                cur.clear();
            }
        }
    }
    if cur.len() > 1 {
        out.push(cur);
    }
    out
}

/// A step series (steps-post) as the polyline drawn.
pub fn steps(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(pts.len() * 2);
    for (i, p) in pts.iter().enumerate() {
        if i > 0 {
            out.push((p.0, pts[i - 1].1));
        }
        out.push(*p);
    }
    out
}

/// A stroke of whole pixels (the bitmap backend draws no fractions): 0.9 pt (1.5 px) is 1 px,
/// 1.8 pt 3 px, rounding a quarter pixel down as matplotlib's antialiased lines look.
fn style(s: &Stroke) -> ShapeStyle {
    ShapeStyle { color: rgba(s.color, s.alpha), filled: false, stroke_width: (px(s.width) - 0.25).round().max(1.0) as u32 }
}

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn draw_path<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, pts: &[(f64, f64)], s: &Stroke, r: (f64, f64, f64, f64)) -> DrawResult<DB> {
    for piece in clip_polyline(pts, r) {
        match s.dash {
            None => root.draw(&PathElement::new(piece, style(s)))?,
            Some((on, off)) => {
                let (on, off) = ((px(on * s.width.max(0.5)) as i32).max(2), (px(off * s.width.max(0.5)) as i32).max(2));
                root.draw(&DashedPathElement::new(piece.into_iter(), on, off, style(s)))?
            }
        }
    }
    Ok(())
}

fn draw_marker<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, at: (i32, i32), m: Marker, size: f64, color: RGBColor, filled: bool) -> DrawResult<DB> {
    // a dot's edge is not drawn (matplotlib's mew=0): its radius a half pixel less
    let r = if m == Marker::Dot { px(size) / 2.0 - 0.5 } else { px(size) / 2.0 };
    let ri = r.round().max(1.0) as i32;
    let fill = ShapeStyle { color: color.to_rgba(), filled: true, stroke_width: 1 };
    let line = ShapeStyle { color: color.to_rgba(), filled: false, stroke_width: 1 };
    match m {
        Marker::Dot | Marker::Circle => {
            if filled {
                root.draw(&Circle::new(at, ri.max(1), fill))
            } else {
                root.draw(&Circle::new(at, ri.max(1), WHITE.filled()))?;
                root.draw(&Circle::new(at, ri.max(1), line))
            }
        }
        Marker::Cross => {
            root.draw(&PathElement::new(vec![(at.0 - ri, at.1 - ri), (at.0 + ri, at.1 + ri)], line))?;
            root.draw(&PathElement::new(vec![(at.0 - ri, at.1 + ri), (at.0 + ri, at.1 - ri)], line))
        }
        Marker::Diamond => {
            let pts = vec![(at.0, at.1 - ri), (at.0 + ri, at.1), (at.0, at.1 + ri), (at.0 - ri, at.1)];
            if filled {
                root.draw(&Polygon::new(pts, fill))
            } else {
                root.draw(&Polygon::new(pts.clone(), WHITE.filled()))?;
                let mut closed = pts;
                closed.push(closed[0]);
                root.draw(&PathElement::new(closed, line))
            }
        }
    }
}

/// Text width in pixels, as the font measures it.
fn text_width<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, text: &str, st: &TextStyle) -> i32 {
    root.estimate_text_size(text, st).map(|(w, _)| w as i32).unwrap_or((text.len() as f64 * st.font.get_size() * 0.55) as i32)
}

fn draw_legend<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, keys: &[Key], cols: usize, at: (i32, i32), anchor_right: bool, boxed: bool, size_pt: f64) -> DrawResult<DB> {
    if keys.is_empty() {
        return Ok(());
    }
    let st = text_style(size_pt, C_BLACK);
    let line_h = (px(size_pt) * 1.45).round() as i32;
    let sample = px(size_pt * 2.0).round() as i32;
    let pad = 5;
    let cols = cols.clamp(1, keys.len());
    let rows = keys.len().div_ceil(cols);
    let mut col_w = vec![0i32; cols];
    for (i, k) in keys.iter().enumerate() {
        let w = sample + 6 + text_width(root, &k.label, &st) + 12;
        col_w[i % cols] = col_w[i % cols].max(w);
    }
    let total_w: i32 = col_w.iter().sum::<i32>() + 2 * pad;
    let total_h = rows as i32 * line_h + 2 * pad;
    let x0 = if anchor_right { at.0 - total_w } else { at.0 };
    let y0 = at.1;
    if boxed {
        root.draw(&Rectangle::new([(x0, y0), (x0 + total_w, y0 + total_h)], WHITE.mix(0.85).filled()))?;
        root.draw(&Rectangle::new([(x0, y0), (x0 + total_w, y0 + total_h)], ShapeStyle { color: C_LIGHT.to_rgba(), filled: false, stroke_width: 1 }))?;
    }
    for (i, k) in keys.iter().enumerate() {
        let (c, r) = (i % cols, i / cols);
        let x = x0 + pad + col_w[..c].iter().sum::<i32>();
        let yc = y0 + pad + r as i32 * line_h + line_h / 2;
        if let Some(s) = &k.line {
            let full = (0..=1).map(|j| ((x + j * sample) as f64, yc as f64)).collect::<Vec<_>>();
            draw_path(root, &full, s, (-1e9, 1e9, -1e9, 1e9))?;
        }
        if let Some((m, size, color, filled)) = k.marker {
            draw_marker(root, (x + sample / 2, yc), m, size, color, filled)?;
        }
        root.draw(&Text::new(k.label.clone(), (x + sample + 6, yc), st.pos(Pos::new(HPos::Left, VPos::Center))))?;
    }
    Ok(())
}

/// Where a figure's parts go, in pixels: the size, the panels' left and right edges, each
/// panel's top row and height, the bottom legend's height. One layout for the plotters drawing
/// and the report's zoomable SVG (crate::zsvg).
pub struct Layout {
    pub w: i32,
    pub h: i32,
    pub left: i32,
    pub right: i32,
    pub legend_h: i32,
    pub panels: Vec<(i32, i32)>,
}

pub fn layout(fig: &Figure) -> Layout {
    let (w, h) = fig.pixels();
    let (w, h) = (w as i32, h as i32);
    let top = (px(9.0) * 2.2) as i32;
    let legend_h = if fig.bottom_legend.is_empty() { 0 } else { (px(6.5) * 1.45) as i32 * fig.bottom_legend.len().div_ceil(7) as i32 + 14 };
    let x_area = (px(7.0) + px(8.0) + 18.0) as i32;
    let bottom = h - legend_h - x_area;
    let (left, right) = ((w as f64 * 0.1).max(px(8.0) * 2.0 + 60.0) as i32, (w as f64 * 0.97) as i32);
    let gap = 10;
    let n = fig.panels.len() as i32;
    let free: i32 = bottom - top - fig.panels.iter().map(|p| p.headroom as i32).sum::<i32>() - gap * (n - 1);
    let total_ratio: f64 = fig.panels.iter().map(|p| p.ratio).sum();
    let mut y = top;
    let mut panels = Vec::new();
    for p in &fig.panels {
        y += p.headroom as i32;
        let ph = (free as f64 * p.ratio / total_ratio).round() as i32;
        panels.push((y, ph));
        y += ph + gap;
    }
    Layout { w, h, left, right, legend_h, panels }
}

/// Draws `fig` on `root` (sized to [`Figure::pixels`]).
pub fn draw<DB: DrawingBackend>(fig: &Figure, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
    font();
    root.fill(&WHITE)?;
    let lay = layout(fig);
    let (w, h, left, right, legend_h) = (lay.w, lay.h, lay.left, lay.right, lay.legend_h);
    root.draw(&Text::new(fig.title.clone(), (w / 2, (px(9.0) * 0.5) as i32 + 4), text_style(9.0, C_BLACK).pos(Pos::new(HPos::Center, VPos::Top))))?;
    let xs = (fig.x.0, fig.x.1);
    for (i, p) in fig.panels.iter().enumerate() {
        let (y, ph) = lay.panels[i];
        let last = i + 1 == fig.panels.len();
        // the axes, ticks and labels: plotters' mesh on a chart whose plotting area is the panel
        let (yl, xl) = (Y_LABELS, if last { (px(7.0) + 8.0) as i32 } else { 6 });
        let area = root.clone().shrink((left - yl, y), ((right - left + yl) as u32, (ph + xl) as u32));
        let mut chart = ChartBuilder::on(&area).x_label_area_size(xl as u32).y_label_area_size(yl as u32).build_cartesian_2d(xs.0..xs.1, p.y.0..p.y.1)?;
        let label = text_style(7.0, C_BLACK);
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh().disable_y_mesh().x_labels(10).y_labels(5).label_style(label.clone()).axis_style(ShapeStyle { color: C_BLACK.to_rgba(), filled: false, stroke_width: 1 });
        mesh.set_all_tick_mark_size(px(3.0) as i32);
        let fmt_x = |v: &f64| g((v * 1e6).round() / 1e6);
        let fmt_y = |v: &f64| g((v * 1e6).round() / 1e6);
        let blank = |_: &f64| String::new();
        if last {
            mesh.x_label_formatter(&fmt_x);
        } else {
            mesh.x_label_formatter(&blank);
        }
        mesh.y_label_formatter(&fmt_y);
        mesh.draw()?;
        let map = Map { x0: xs.0, x1: xs.1, y0: p.y.0, y1: p.y.1, px0: left as f64, px1: right as f64, py0: (y + ph) as f64, py1: y as f64 };
        let rect = (left as f64, right as f64, y as f64, (y + ph) as f64);
        let free_rect = (left as f64, right as f64, 0.0, h as f64);
        for it in &p.items {
            match it {
                Item::Line { pts, step, stroke, .. } => {
                    let drawn = if *step { steps(pts) } else { pts.clone() };
                    let pix: Vec<(f64, f64)> = drawn.iter().map(|&(a, b)| (map.x(a), map.y(b))).collect();
                    draw_path(root, &pix, stroke, rect)?;
                }
                Item::Marks { xs, y0, y1, stroke, clip, .. } => {
                    let r = if *clip { rect } else { free_rect };
                    let st = style(stroke);
                    let (a, b) = (map.fy(*y0).round() as i32, map.fy(*y1).round() as i32);
                    let mut last_x = i32::MIN;
                    for &x in xs {
                        let xp = map.x(x);
                        if xp < r.0 - 0.5 || xp > r.1 + 0.5 {
                            continue;
                        }
                        let xi = xp.round() as i32;
                        if xi == last_x {
                            continue; // one stroke per pixel column
                        }
                        last_x = xi;
                        root.draw(&PathElement::new(vec![(xi, a), (xi, b)], st))?;
                    }
                }
                Item::Bars { bars, width, color, .. } => {
                    let half = (px(*width) / 2.0).max(0.5);
                    for &(x, lo, hi) in bars {
                        let (xa, xb) = ((map.x(x) - half).max(rect.0), (map.x(x) + half).min(rect.1));
                        let (ya, yb) = (map.y(hi).max(rect.2), map.y(lo).min(rect.3));
                        if xa < xb && ya <= yb {
                            root.draw(&Rectangle::new([(xa.round() as i32, ya.round() as i32), ((xb.round() as i32).max(xa.round() as i32 + 1), (yb.round() as i32).max(ya.round() as i32 + 1))], color.filled()))?;
                        }
                    }
                }
                Item::Markers { pts, marker, size, color, filled, frac_y, .. } => {
                    for &(a, b) in pts {
                        let (xp, yp) = (map.x(a), if *frac_y { map.fy(b) } else { map.y(b) });
                        let inside = xp >= rect.0 - 0.5 && xp <= rect.1 + 0.5 && (*frac_y || (yp >= rect.2 - 0.5 && yp <= rect.3 + 0.5));
                        if inside {
                            draw_marker(root, (xp.round() as i32, yp.round() as i32), *marker, *size, *color, *filled)?;
                        }
                    }
                }
                Item::HLine { y: v, stroke, .. } => {
                    draw_path(root, &[(rect.0, map.y(*v)), (rect.1, map.y(*v))], stroke, rect)?;
                }
                Item::Text { x, y: fy, text, size, color, anchor, frac_x, .. } => {
                    let xp = if *frac_x { map.px0 + x * (map.px1 - map.px0) } else { map.x(*x) };
                    if xp >= rect.0 - 0.5 && xp <= rect.1 + 0.5 {
                        root.draw(&Text::new(text.clone(), (xp.round() as i32, map.fy(*fy).round() as i32), text_style(*size, *color).pos(Pos::new(anchor.0, anchor.1))))?;
                    }
                }
            }
        }
        // the frame (matplotlib's four spines)
        root.draw(&Rectangle::new([(left, y), (right, y + ph)], ShapeStyle { color: C_BLACK.to_rgba(), filled: false, stroke_width: 1 }))?;
        // the y label, rotated, left of the tick labels
        let ylabel = text_style(8.0, C_BLACK).transform(FontTransform::Rotate270).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(p.ylabel.clone(), ((px(8.0) * 0.3) as i32 + 2, y + ph / 2), ylabel))?;
        if !p.legend.is_empty() {
            let (at, right_side) = match p.legend_at {
                Corner::UpperRight => ((right - 6, y + 6), true),
                Corner::UpperLeft => ((left + 6, y + 6), false),
            };
            draw_legend(root, &p.legend, p.legend_cols, at, right_side, true, 6.5)?;
        }
        if last {
            root.draw(&Text::new(fig.xlabel.clone(), ((left + right) / 2, y + ph + (px(7.0) + 14.0) as i32), text_style(8.0, C_BLACK).pos(Pos::new(HPos::Center, VPos::Top))))?;
        }
        drop(chart);
    }
    if !fig.bottom_legend.is_empty() {
        let st = text_style(6.5, C_BLACK);
        let cols = fig.bottom_legend.len().min(7);
        // centred: measure as draw_legend does
        let sample = px(6.5 * 2.0).round() as i32;
        let mut widths = vec![0i32; cols];
        for (i, k) in fig.bottom_legend.iter().enumerate() {
            widths[i % cols] = widths[i % cols].max(sample + 6 + text_width(root, &k.label, &st) + 12);
        }
        let total: i32 = widths.iter().sum::<i32>() + 10;
        draw_legend(root, &fig.bottom_legend, cols, ((w - total) / 2, h - legend_h), false, false, 6.5)?;
    }
    Ok(())
}

/// The figure as an SVG document.
pub fn to_svg(fig: &Figure) -> Result<String, String> {
    let (w, h) = fig.pixels();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
        draw(fig, &root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(s)
}

/// The figure as a PNG file's bytes (RGB, zlib level 3 as the matplotlib path writes them).
pub fn to_png(fig: &Figure) -> Result<Vec<u8>, String> {
    let (w, h) = fig.pixels();
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw(fig, &root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        enc.add_text_chunk("Software".into(), "tcplab".into()).map_err(|e| e.to_string())?;
        let mut wr = enc.write_header().map_err(|e| e.to_string())?;
        wr.write_image_data(&buf).map_err(|e| e.to_string())?;
    }
    Ok(out)
}
