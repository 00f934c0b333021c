//! Shared pieces of the build: the error context (file, line, field) and the input limits of
//! issue 15 that several sections check.

use crate::engine::{RngStreams, SimTime};
use crate::scenario::{self, Scenario, ScenarioError};

/// Defaults written in the README and the schema.
pub const DEFAULT_QUEUE_PKTS: u32 = 50;
pub const DEFAULT_MTU: u32 = 65536;
pub const DEFAULT_MONITOR_INTERVAL: SimTime = SimTime::from_millis(100);

/// `run.duration` and `run.monitor_interval`, checked.
pub(super) fn run_times(ctx: &Ctx, sc: &Scenario) -> Result<(SimTime, SimTime), ScenarioError> {
    let end = sc.run.duration.0;
    if end.0 == 0 {
        return Err(ctx.err("run.duration".into(), "the run duration must be positive"));
    }
    let interval = sc.run.monitor_interval.map(|d| d.0).unwrap_or(DEFAULT_MONITOR_INTERVAL);
    if interval.0 == 0 {
        return Err(ctx.err("run.monitor_interval".into(), "must be positive"));
    }
    check_monitor_interval(ctx, end, interval)?;
    Ok((end, interval))
}

pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
}

impl Ctx<'_> {
    pub(super) fn err(&self, field: String, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: self.file.to_string(), line: scenario::locate(self.text, &field), field, message: message.into() }
    }
}

/// A start time: fixed, or drawn from the traffic stream `stream`/`index` (the seed decides it,
/// the TCP variant does not).
pub(super) fn start_time(ctx: &Ctx, field: String, start: Option<scenario::StartCfg>, rngs: &RngStreams, stream: &str, index: usize) -> Result<SimTime, ScenarioError> {
    use rand::Rng;
    match start {
        None => Ok(SimTime::ZERO),
        Some(scenario::StartCfg::At(d)) => Ok(d.0),
        Some(scenario::StartCfg::Random(scenario::StartDist::Uniform { min, max })) => {
            if max.0 < min.0 {
                return Err(ctx.err(format!("{field}.max"), "max must not be below min"));
            }
            Ok(SimTime(rngs.stream(stream, index as u64).gen_range(min.0 .0..=max.0 .0)))
        }
    }
}

/// `field` names the value in an error (made only then: 16,384 link directions at 4,096 flows).
pub(super) fn prob(ctx: &Ctx, field: impl FnOnce() -> String, p: Option<f64>) -> Result<f64, ScenarioError> {
    let p = p.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&p) || p.is_nan() {
        return Err(ctx.err(field(), format!("expected a probability between 0 and 1, got {p}")));
    }
    Ok(p)
}

pub(super) type NodeLookup<'a> = dyn Fn(String, &str) -> Result<u32, ScenarioError> + 'a;
pub(super) type RouteCheck<'a> = dyn Fn(String, u32, u32) -> Result<(), ScenarioError> + 'a;

// ------------------------------------------------------------------ input limits (issue 15)

/// Most monitor intervals one link direction may record over a run (32 bytes each).
pub const MAX_MONITOR_INTERVALS: u64 = 1_000_000;
/// A UDP source may offer at most this many times its fastest outgoing link's rate: beyond it
/// every extra packet is dropped at the first queue and only costs time.
pub const MAX_OVERLOAD: f64 = 1000.0;
/// Largest per-packet overhead or MTU of a link (the engine keeps them as u32).
pub const MAX_LINK_BYTES: u64 = 1 << 30;

/// A duration in the scenario's units, e.g. "61s", "100ms", "2ns".
pub(super) fn fmt_ns(ns: u64) -> String {
    for (unit, scale) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= scale && ns % scale == 0 {
            return format!("{}{unit}", ns / scale);
        }
    }
    if ns >= 1_000_000_000 {
        return format!("{:.3}s", ns as f64 / 1e9);
    }
    format!("{ns}ns")
}

/// Flow and node names are keys of the summary; node names also build link names "a->b".
pub(super) fn check_name(ctx: &Ctx, field: String, name: &str) -> Result<(), ScenarioError> {
    if name.trim().is_empty() {
        return Err(ctx.err(field, "must not be empty"));
    }
    if field.starts_with("nodes") && name.contains("->") {
        return Err(ctx.err(field, format!("{name:?} contains \"->\", which names link directions (\"a->b\")")));
    }
    Ok(())
}

pub(super) fn link_bytes(ctx: &Ctx, field: impl FnOnce() -> String, v: u64) -> Result<u32, ScenarioError> {
    if v > MAX_LINK_BYTES {
        return Err(ctx.err(field(), format!("must be at most 1GB, got {v} bytes")));
    }
    Ok(v as u32)
}

/// The monitor records one row per interval per link direction for the whole run.
pub(super) fn check_monitor_interval(ctx: &Ctx, end: SimTime, interval: SimTime) -> Result<(), ScenarioError> {
    let n = end.0 / interval.0;
    if n > MAX_MONITOR_INTERVALS {
        let least = SimTime(end.0.div_ceil(MAX_MONITOR_INTERVALS));
        return Err(ctx.err(
            "run.monitor_interval".into(),
            format!(
                "{} over a run of {} is {n} intervals per link direction; at most {MAX_MONITOR_INTERVALS} (use at least {})",
                fmt_ns(interval.0),
                fmt_ns(end.0),
                fmt_ns(least.0)
            ),
        ));
    }
    Ok(())
}

