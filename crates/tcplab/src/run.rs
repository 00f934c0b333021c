//! One-call entry points used by the CLI/Python layer and the tests: text in, results out.

use std::time::Instant;

use crate::build::build;
use crate::scenario::{load_text, relocate, ScenarioError};
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
    let (sc, new_text) = load_text(text, file, overrides)?;
    // Build errors are located in the overridden text; point them back at the user's file.
    let sim = build(&sc, &new_text, file, seed).map_err(|e| relocate(e, text, overrides))?;
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
