//! One-call entry points used by the CLI/Python layer and the tests: text in, results out.

use std::time::Instant;

use crate::build::build;
use crate::scenario::{fix_error, load_text, ScenarioError};
use crate::sim::Simulation;
use crate::summary::Summary;

pub struct RunResult {
    pub sim: Simulation,
    pub summary: Summary,
    /// The scenario text as run (after `--set` overrides).
    pub text: String,
}

/// Parse, validate and build without running.
pub fn prepare(text: &str, file: &str, seed: Option<u64>, overrides: &[String]) -> Result<(Simulation, String), ScenarioError> {
    let (sc, new_text, x) = load_text(text, file, overrides)?;
    // Build errors are located in the text as run; point them back at the user's file.
    let sim = build(&sc, &new_text, file, seed).map_err(|e| fix_error(e, text, overrides, x.as_ref()))?;
    Ok((sim, new_text))
}

pub fn run_text(text: &str, file: &str, seed: Option<u64>, overrides: &[String]) -> Result<RunResult, ScenarioError> {
    run_text_with_progress(text, file, seed, overrides, |_| true).map(|r| r.expect("never abandoned"))
}

/// Like [`run_text`], with a progress callback between slices of simulated time; `Ok(None)` if
/// the callback abandoned the run.
pub fn run_text_with_progress(
    text: &str,
    file: &str,
    seed: Option<u64>,
    overrides: &[String],
    progress: impl FnMut(&Simulation) -> bool,
) -> Result<Option<RunResult>, ScenarioError> {
    let (mut sim, text) = prepare(text, file, seed, overrides)?;
    let t0 = Instant::now();
    if !sim.run_with_progress(progress) {
        return Ok(None);
    }
    let wall = t0.elapsed().as_secs_f64();
    let summary = Summary::from_sim(&sim, wall);
    Ok(Some(RunResult { sim, summary, text }))
}

// ------------------------------------------------------------------ resource limits (issue 15)

/// Limits checked before a run starts.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Refuse a scenario whose estimated memory exceeds this many bytes.
    pub max_memory: Option<u64>,
    /// The process's own memory before the run (an interpreter and its libraries), counted in
    /// the estimate: [`PYTHON_RUNTIME_BYTES`] under Python, 0 for the library alone.
    pub runtime_bytes: u64,
    /// Where the trace rows go: held in memory (the Python API) or streamed to disk (the
    /// native CLI); the estimate counts what each holds.
    pub traces: Traces,
}

pub use crate::memory::{estimate_memory_mode, estimate_memory_with, MemoryEstimate, Traces, NATIVE_RUNTIME_BYTES, PYTHON_RUNTIME_BYTES, STREAM_ROW_GROUP_ROWS};

/// Estimate the memory a run of `sc` needs in this process (no interpreter counted).
pub fn estimate_memory(sc: &crate::scenario::Scenario) -> MemoryEstimate {
    estimate_memory_with(sc, 0)
}

/// Bytes as "512 MB" / "4.2 GB".
pub fn fmt_bytes(b: u64) -> String {
    let mb = b as f64 / (1u64 << 20) as f64;
    if mb >= 1024.0 {
        format!("{:.1} GB", mb / 1024.0)
    } else {
        format!("{mb:.0} MB")
    }
}

/// Refuse a scenario whose memory estimate exceeds `limits.max_memory`: the message gives the
/// estimate's breakdown and what would make the run cheaper.
pub fn check_limits(sc: &crate::scenario::Scenario, text: &str, file: &str, limits: &Limits) -> Result<(), ScenarioError> {
    let Some(max) = limits.max_memory else { return Ok(()) };
    let est = estimate_memory_mode(sc, limits.runtime_bytes, limits.traces);
    if est.total <= max {
        return Ok(());
    }
    let (field, _, _) = est.parts.iter().find(|p| p.0 != "runtime").cloned().unwrap_or_default();
    let breakdown: Vec<String> = est.parts.iter().filter(|p| p.1 > 0).take(4).map(|(f, b, what)| format!("{} {f} ({what})", fmt_bytes(*b))).collect();
    let cheaper = match field.as_str() {
        "run.trace.links" => "trace fewer link directions in run.trace.links (the bottleneck only, say) or shorten run.duration",
        "run.trace.tcp" => "turn off run.trace.tcp, trace fewer or shorter flows, or shorten run.duration",
        "run.trace.pcap" => "capture fewer link directions in run.trace.pcap or shorten run.duration",
        "run.monitor_interval" => "lengthen run.monitor_interval, watch fewer links (run.monitor_links) or shorten run.duration",
        _ => "run fewer flows or nodes",
    };
    // Held traces (the Python API) are what the native `tcplab run` streams to disk instead.
    let streams = limits.traces == Traces::Held && matches!(field.as_str(), "run.trace.links" | "run.trace.tcp");
    let cheaper = if streams { format!("{cheaper}, or run it with the `tcplab run` command, which streams traces to disk") } else { cheaper.to_string() };
    Err(ScenarioError {
        file: file.to_string(),
        line: crate::scenario::locate(text, &field),
        field,
        message: format!(
            "the run needs an estimated {} of memory, more than --max-memory {}: {}; to make it cheaper, {cheaper}, or raise --max-memory",
            fmt_bytes(est.total),
            fmt_bytes(max),
            breakdown.join(", ")
        ),
    })
}

/// The memory estimate of a scenario text (after overrides), in bytes, with `runtime_bytes` for
/// the process itself.
pub fn estimate_memory_text(text: &str, file: &str, overrides: &[String], runtime_bytes: u64) -> Result<MemoryEstimate, ScenarioError> {
    estimate_memory_text_mode(text, file, overrides, runtime_bytes, Traces::Held)
}

/// [`estimate_memory_text`] with the traces held or streamed.
pub fn estimate_memory_text_mode(text: &str, file: &str, overrides: &[String], runtime_bytes: u64, traces: Traces) -> Result<MemoryEstimate, ScenarioError> {
    let (sc, _, _) = load_text(text, file, overrides)?;
    Ok(estimate_memory_mode(&sc, runtime_bytes, traces))
}

/// [`prepare`] with the memory estimate checked before anything is built.
pub fn prepare_with_limits(
    text: &str,
    file: &str,
    seed: Option<u64>,
    overrides: &[String],
    limits: &Limits,
) -> Result<(Simulation, String), ScenarioError> {
    let (sc, new_text, x) = load_text(text, file, overrides)?;
    check_and_build(sc, new_text, x, text, file, seed, overrides, limits)
}

/// [`prepare_with_limits`] for a caller that gives its text up (`tcplab run`): when no override
/// or template changed it, the text as run is the file's text, and the build holds one copy of it
/// instead of two (1.9 MB each at 4,096 flows, at the run's peak). The errors are the same: they
/// are located in a text equal to the file's.
pub fn prepare_with_limits_owned(
    text: String,
    file: &str,
    seed: Option<u64>,
    overrides: &[String],
    limits: &Limits,
) -> Result<(Simulation, String), ScenarioError> {
    let (sc, new_text, x) = load_text(&text, file, overrides)?;
    let original = (new_text != text).then_some(text);
    check_and_build(sc, new_text, x, original.as_deref(), file, seed, overrides, limits)
}

/// The memory check and the build of a loaded scenario; errors are pointed at `original` (the
/// user's text; `None` when it is the text as run).
#[allow(clippy::too_many_arguments)]
fn check_and_build<'a>(
    sc: crate::scenario::Scenario,
    new_text: String,
    x: Option<crate::scenario::template::Expansion>,
    original: impl Into<Option<&'a str>>,
    file: &str,
    seed: Option<u64>,
    overrides: &[String],
    limits: &Limits,
) -> Result<(Simulation, String), ScenarioError> {
    let original = original.into();
    let text = original.unwrap_or(&new_text);
    check_limits(&sc, &new_text, file, limits).map_err(|e| fix_error(e, text, overrides, x.as_ref()))?;
    // The TOML document is gone, and after the build the parsed scenario: their pages go back
    // before the simulation's own are touched, so the peak is the larger of the two, not the sum.
    crate::memory::release_free_pages();
    let sim = build(&sc, &new_text, file, seed).map_err(|e| fix_error(e, text, overrides, x.as_ref()))?;
    drop(sc);
    crate::memory::release_free_pages();
    Ok((sim, new_text))
}

/// [`run_text_with_progress`] with [`Limits`] checked before the run.
pub fn run_text_with_limits(
    text: &str,
    file: &str,
    seed: Option<u64>,
    overrides: &[String],
    limits: &Limits,
    progress: impl FnMut(&Simulation) -> bool,
) -> Result<Option<RunResult>, ScenarioError> {
    let (mut sim, text) = prepare_with_limits(text, file, seed, overrides, limits)?;
    let t0 = Instant::now();
    if !sim.run_with_progress(progress) {
        return Ok(None);
    }
    let wall = t0.elapsed().as_secs_f64();
    let summary = Summary::from_sim(&sim, wall);
    Ok(Some(RunResult { sim, summary, text }))
}

/// Sizes in bytes of the structures a packet event touches, for the benchmark's report.
pub fn hot_struct_sizes() -> Vec<(&'static str, usize)> {
    use std::mem::size_of;
    vec![
        ("Event", size_of::<crate::sim::Event>()),
        ("Packet", size_of::<crate::net::packet::Packet>()),
        ("Link", size_of::<crate::net::link::Link>()),
        ("LinkMonitor", size_of::<crate::net::monitor::LinkMonitor>()),
        ("Node", size_of::<crate::net::node::Node>()),
        ("TcpConn (two endpoints)", size_of::<crate::sim::TcpConn>()),
        ("Endpoint", size_of::<tcplab_tcp::Endpoint>()),
    ]
}
