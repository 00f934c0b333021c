//! `tcplab plot`'s flags (issue 28: a plot at interactive speed; importing matplotlib alone takes
//! about a second on the project's machine). The `tcplab` binary parses them and execs
//! `tcplab-plot` beside itself (src/plot_main.rs), which draws crates/tcplab-plot's graphs: the
//! drawing code lives in its own executable so that it is not mapped into every `tcplab run`
//! (+1.3 MB of peak RSS on the 16-flow dumbbell when it was linked in). What it does not draw
//! (pdf, the CAM graph, ...) and any flag value this parser does not take are handed to the Python
//! CLI, which draws with matplotlib. The flags are those of python/tcplab/cli/plot.py
//! (`tests/test_native_cli.py` compares them).

use std::path::PathBuf;

use clap::{Arg, Command};
use tcplab_plot::KINDS;

/// --from/--to: seconds >= 0, bare or with a unit (s, ms, us); anything else goes to argparse.
fn parse_time(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = if let Some(x) = t.strip_suffix("ms") {
        (x, 1e-3)
    } else if let Some(x) = t.strip_suffix("us") {
        (x, 1e-6)
    } else if let Some(x) = t.strip_suffix('s') {
        (x, 1.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && !num.trim().is_empty() => Ok(v * scale),
        _ => Err(format!("expected a time in seconds >= 0, e.g. 2.5, got '{text}'")),
    }
}

pub fn command() -> Command {
    Command::new("plot")
        .disable_help_flag(true)
        .arg(Arg::new("run_dir").required(true).value_parser(clap::value_parser!(PathBuf)))
        .arg(Arg::new("conn").long("conn"))
        .arg(Arg::new("kind").long("kind").value_parser(KINDS).default_value("tcp"))
        .arg(Arg::new("from").long("from").value_parser(parse_time))
        .arg(Arg::new("to").long("to").value_parser(parse_time))
        .arg(Arg::new("format").long("format").value_parser(["png", "svg", "pdf"]).default_value("png"))
        .arg(Arg::new("out").long("out").value_parser(clap::value_parser!(PathBuf)))
}
