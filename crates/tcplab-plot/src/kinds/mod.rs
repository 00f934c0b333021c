//! The graphs, one module per family as in python/tcplab/plots/: [`link`] (link bandwidth, queue
//! length), [`flows`] (every flow's throughput), [`seq`] (sequence numbers), [`tcp`] (the trace graph), [`cam`] (Vegas CAM).

pub mod cam;
pub mod flows;
pub mod link;
pub mod seq;
pub mod tcp;

use crate::figure::{Corner, Figure, Panel};

/// A one-panel figure of matplotlib size (w, h) inches.
pub(crate) fn single(size: (f64, f64), title: String, x: (f64, f64), ylabel: &str) -> Figure {
    let mut p = Panel::new(ylabel);
    p.legend_at = Corner::UpperRight;
    Figure { size, title, x, xlabel: "Time (seconds)".into(), panels: vec![p], bottom_legend: Vec::new() }
}

pub(crate) fn max_of(v: &[f64]) -> Option<f64> {
    v.iter().copied().filter(|x| !x.is_nan()).reduce(f64::max)
}
