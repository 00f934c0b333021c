//! `tcplab-plot`: `tcplab plot` in png and svg, drawn without a Python interpreter (issue 28). The
//! `tcplab` binary execs it for `tcplab plot ...` (it is installed beside it: the wheel's
//! bin/tcplab-plot, `make setup`'s python/tcplab/_bin/tcplab-plot); run alone, `tcplab-plot RUN_DIR
//! [flags]` is the same command. Its own executable so that the graphs' code (plotters, the font)
//! is not mapped into every `tcplab run` (src/plot.rs). What crates/tcplab-plot does not draw is
//! handed to the Python CLI, as the `tcplab` binary hands over what it does not take.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, Command};
use tcplab_plot::{PlotError, Request};

#[allow(dead_code)] // the `tcplab` binary's helpers; this one uses a few
mod fmt;
#[allow(dead_code)]
mod launch;
mod plot;

fn main() {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_none_or(|a| a != "plot") {
        args.insert(0, OsString::from("plot"));
    }
    let cmd = Command::new("tcplab").subcommand(plot::command());
    let m = match cmd.try_get_matches_from(std::iter::once(OsString::from("tcplab")).chain(args.iter().cloned())) {
        Ok(m) => m,
        Err(_) => launch::exec_python(&args), // argparse writes the error (or the help)
    };
    let a = m.subcommand_matches("plot").expect("the one subcommand");
    if let Err(message) = run(a, &args) {
        eprintln!("error: {message}");
        std::process::exit(2);
    }
}

fn run(a: &ArgMatches, args: &[OsString]) -> Result<(), String> {
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
            return Err(format!("--from {} s is not before --to {} s", fmt::g(f), fmt::g(t)));
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
        Err(PlotError::Error(m)) => Err(m),
    }
}
