//! `tcplab plot` drawn in this binary (issue 28: a plot at interactive speed; importing matplotlib
//! alone takes about a second on the project's machine). The graphs are crates/tcplab-plot's; what
//! it does not draw (pdf, the CAM graph, ...) and any flag value this parser does not take are
//! handed to the Python CLI, which draws with matplotlib. The flags are those of
//! python/tcplab/cli/plot.py (`tests/test_native_cli.py` compares them).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Arg, ArgMatches, Command};

use crate::{fmt, launch, Failure};
use tcplab_plot::{PlotError, Request, KINDS};

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

pub fn run(a: &ArgMatches, args: &[OsString]) -> Result<(), Failure> {
    let req = Request {
        run_dir: fmt::normalize(a.get_one::<PathBuf>("run_dir").unwrap()),
        conn: a.get_one::<String>("conn").cloned(),
        kind: a.get_one::<String>("kind").unwrap().clone(),
        t_from: a.get_one::<f64>("from").copied(),
        t_to: a.get_one::<f64>("to").copied(),
        format: a.get_one::<String>("format").unwrap().clone(),
        out: a.get_one::<PathBuf>("out").map(|p| fmt::normalize(p)),
    };
    if let (Some(f), Some(t)) = (req.t_from, req.t_to) {
        if f >= t {
            return Err(Failure::error(format!("--from {} s is not before --to {} s", fmt::g(f), fmt::g(t))));
        }
    }
    match tcplab_plot::plot(&req) {
        Ok(paths) => {
            if let Some(out) = &req.out {
                let ext = out.extension().map(|e| e.to_string_lossy().to_lowercase());
                if matches!(ext.as_deref(), Some("png" | "svg" | "pdf")) && paths.len() > 1 {
                    let stem = out.file_stem().unwrap_or_default().to_string_lossy();
                    let suffix = out.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
                    eprintln!(
                        "note: --out {} names one file and {} graphs were drawn: each is written beside it as {stem}-<name>{suffix}",
                        out.display(),
                        paths.len()
                    );
                }
            }
            for p in paths {
                println!("{}", p.display());
            }
            Ok(())
        }
        Err(PlotError::NotNative(_)) => launch::exec_python(args),
        Err(PlotError::Error(m)) => Err(Failure::error(m)),
    }
}
