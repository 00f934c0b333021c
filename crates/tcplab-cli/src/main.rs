//! `tcplab-native`: the `tcplab` command (issue 28). It does `tcplab run`, `validate` and
//! `bench` itself — parse, build, run, print the summary table and write the run directory
//! (summary.json, scenario.toml, the trace Parquet files, pcaps, COMPLETE.json) — with no Python
//! interpreter and no polars in the process — and parses `tcplab plot`, which `tcplab-plot` beside
//! it draws in png and svg (plot.rs, plot_main.rs, the graphs of crates/tcplab-plot). The wheel
//! installs it as `bin/tcplab` and `make setup` links `.venv/bin/tcplab` to it.
//!
//! The Python CLI (`python -m tcplab`, argparse) stays the one full CLI: this binary execs it for
//! anything it does not take itself (`--help`, a flag value it does not accept, any other
//! command), so argparse prints every usage message and error; `launch` finds the interpreter.
//! The flags here must be those of `python/tcplab/cli/{run,validate,bench}.py`:
//! `tests/test_native_cli.py` compares the two definitions (`tcplab-native __flags`).
//! docs/architecture.md has the why.

mod bench;
mod bench_cases;
mod bench_process;
mod bench_table;
mod durable;
mod fmt;
mod launch;
mod plot;
mod reproduce;
mod reproduce_spec;
mod rundir;
mod table;
mod traces;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{Arg, ArgAction, ArgMatches, Command};

use launch::exec_python;

use tcplab::run::{fmt_bytes, prepare_with_limits, prepare_with_limits_owned, Limits, Traces, NATIVE_RUNTIME_BYTES};
use tcplab::scenario::ScenarioError;

/// Why a command stopped: the message (printed after "error: " or as is) and the exit status.
pub struct Failure {
    pub message: String,
    pub status: i32,
}

impl Failure {
    fn error(message: impl Into<String>) -> Failure {
        Failure { message: format!("error: {}", message.into()), status: 2 }
    }
}

impl From<ScenarioError> for Failure {
    fn from(e: ScenarioError) -> Failure {
        // As the Python CLI prints a ScenarioError: its lines joined by "; ".
        let text = e.to_string();
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        Failure::error(lines.join("; "))
    }
}

/// An OS error on `path` as Python's CLI prints it ("tcplab: no such file: X" or "error: X: reason").
pub fn os_failure(path: &Path, e: &std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::NotFound {
        return Failure { message: format!("tcplab: no such file: {}", path.display()), status: 2 };
    }
    Failure::error(format!("{}: {}", path.display(), fmt::strerror(e)))
}

fn scenario_arg() -> Arg {
    Arg::new("scenario").required(true).value_parser(clap::value_parser!(OsString))
}

fn set_arg() -> Arg {
    Arg::new("set").long("set").action(ArgAction::Append).value_name("KEY=VALUE")
}

fn max_memory_arg() -> Arg {
    Arg::new("max-memory").long("max-memory").value_name("SIZE").value_parser(fmt::parse_memory)
}

/// The flags of `run` and `validate`, as `python/tcplab/cli/run.py` and `validate.py` define them.
fn command() -> Command {
    let run = Command::new("run")
        .disable_help_flag(true)
        .arg(scenario_arg())
        .arg(Arg::new("seed").long("seed").value_parser(fmt::parse_seed))
        .arg(set_arg())
        .arg(Arg::new("out").long("out").value_parser(clap::value_parser!(PathBuf)))
        .arg(Arg::new("json").long("json").action(ArgAction::SetTrue))
        .arg(Arg::new("all").long("all").action(ArgAction::SetTrue))
        .arg(Arg::new("timeout").long("timeout").value_name("SECONDS").value_parser(fmt::parse_seconds))
        .arg(max_memory_arg());
    let validate = Command::new("validate").disable_help_flag(true).arg(scenario_arg()).arg(set_arg()).arg(max_memory_arg());
    Command::new("tcplab")
        .disable_help_flag(true)
        .disable_version_flag(true)
        .subcommand_required(true)
        .subcommand(run)
        .subcommand(validate)
        .subcommand(bench::command())
        .subcommand(plot::command())
        .subcommand(reproduce::command())
        .subcommand(reproduce::tasks_command())
        .subcommands(bench::helper_commands())
        .subcommand(Command::new("__flags").hide(true))
}

/// `tcplab-native __flags`: each command's options as JSON lines, `[command, flag, takes a value,
/// repeatable]`, for the test that keeps this CLI and the Python one alike.
fn print_flags(cmd: &Command) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        for a in sub.get_arguments() {
            let takes = !matches!(a.get_action(), ArgAction::SetTrue);
            let name = a.get_long().map(|l| format!("--{l}")).unwrap_or_else(|| a.get_id().to_string());
            let repeat = matches!(a.get_action(), ArgAction::Append);
            println!("[\"{}\", \"{name}\", {takes}, {repeat}]", sub.get_name());
        }
    }
}

/// A request for help: no arguments, `help`, or `-h`/`--help` anywhere before a `--`.
fn wants_help(args: &[OsString]) -> bool {
    args.is_empty() || args[0] == "help" || args.iter().take_while(|a| *a != "--").any(|a| a == "-h" || a == "--help")
}

/// The help of the commands this binary runs itself, for when the Python CLI (whose argparse
/// help is the full one) cannot start: a checkout without its virtual environment.
fn print_native_help(cmd: &Command, args: &[OsString]) {
    let sub = args.iter().filter_map(|a| a.to_str()).find_map(|a| cmd.find_subcommand(a).filter(|s| !s.is_hide_set() && s.get_name() != "reproduce"));
    let mut out = String::new();
    match sub {
        Some(s) => out.push_str(&s.clone().bin_name(format!("tcplab {}", s.get_name())).render_help().to_string()),
        None => {
            out.push_str("usage: tcplab COMMAND ...\n\ncommands this binary runs itself (no Python):\n");
            // `reproduce` runs its runs here but needs the Python CLI for the comparison
            for s in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "reproduce") {
                out.push_str(&format!("  {}\n", s.get_name()));
            }
            out.push_str("\n`tcplab COMMAND --help` lists a command's options.\n");
        }
    }
    println!("{}", out.trim_end());
    println!(
        "\nThe full CLI (every command's help, plots, reports, sweeps) is the Python package's, which \
         this Python cannot import ({}): run `make setup` in a checkout, or `pip install tcplab`.",
        launch::python().to_string_lossy()
    );
}

pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub(crate) extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

fn main() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if std::env::var_os("TCPLAB_NATIVE").is_some_and(|v| v == "0") {
        exec_python(&args); // every command on the Python path
    }
    let cmd = command();
    let handback = std::env::var_os("TCPLAB_NO_HANDBACK").is_none_or(|v| v != "1");
    if handback && wants_help(&args) && !launch::python_cli_available() {
        print_native_help(&cmd, &args);
        return;
    }
    let m = match cmd.clone().try_get_matches_from(std::iter::once(OsString::from("tcplab")).chain(args.iter().cloned())) {
        Ok(m) => m,
        Err(_) => exec_python(&args),
    };
    // A panic in the core is reported as the Python CLI reports one (exit 3), after the
    // unwinding has removed the run's temporary directory.
    static PANIC: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    std::panic::set_hook(Box::new(|info| {
        let text = info.payload().downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| info.payload().downcast_ref::<String>().cloned());
        *PANIC.lock().unwrap_or_else(|e| e.into_inner()) = text.unwrap_or_else(|| "panic".into());
    }));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match m.subcommand() {
        Some(("run", a)) => run(a),
        Some(("validate", a)) => validate(a),
        Some(("bench", a)) if bench::takes(a) => bench::run(a),
        Some(("plot", _)) => exec_plot(&args),
        Some(("reproduce", a)) if reproduce::takes(a) => reproduce::run(a, &args),
        Some(("__reproduce-tasks", a)) => reproduce::print_tasks(a),
        Some(("__bench-measure", a)) => bench::measure(a),
        Some(("__bench-case", a)) => bench::print_case(a),
        Some(("__flags", _)) => {
            print_flags(&cmd);
            Ok(())
        }
        _ => exec_python(&args),
    }))
    .unwrap_or_else(|_| {
        let text = PANIC.lock().map(|s| s.clone()).unwrap_or_default();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("panic").to_string();
        Err(Failure { message: format!("error: internal error in the tcplab core (please report it with the scenario): {first}"), status: 3 })
    });
    if let Err(f) = result {
        let _ = std::io::stdout().flush();
        eprintln!("{}", f.message);
        std::process::exit(f.status);
    }
}

/// `tcplab plot`: exec `tcplab-plot` from this binary's folder (plot_main.rs), with this process's
/// argv[0] so that it finds the Python CLI as this binary would; without it, the Python CLI draws.
fn exec_plot(args: &[OsString]) -> Result<(), Failure> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.join("tcplab-plot")));
    match exe.filter(|p| p.is_file()) {
        Some(p) => {
            let arg0 = std::env::args_os().next().unwrap_or_else(|| OsString::from("tcplab"));
            let err = std::process::Command::new(&p).arg0(arg0).args(args).exec();
            Err(Failure::error(format!("cannot start {}: {}", p.display(), fmt::strerror(&err))))
        }
        None => exec_python(args),
    }
}

/// The scenario text, read as `tcplab.api.Scenario.load` reads it (and failing alike).
fn load(path: &Path) -> Result<String, Failure> {
    if path.is_dir() {
        return Err(Failure::error(format!("{}: is a directory, expected a scenario TOML file", path.display())));
    }
    let raw = std::fs::read(path).map_err(|e| os_failure(path, &e))?;
    String::from_utf8(raw).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        Failure::error(format!("{}:{line}: not a TOML text file (invalid UTF-8 at byte {at})", path.display()))
    })
}

fn overrides(a: &ArgMatches) -> Vec<String> {
    a.get_many::<String>("set").map(|v| v.cloned().collect()).unwrap_or_default()
}

fn max_memory(a: &ArgMatches) -> Option<u64> {
    a.get_one::<u64>("max-memory").copied().or_else(fmt::default_max_memory)
}

fn validate(a: &ArgMatches) -> Result<(), Failure> {
    let path = PathBuf::from(a.get_one::<OsString>("scenario").unwrap());
    let text = load(&path)?;
    let file = path.to_string_lossy().into_owned();
    let sets = overrides(a);
    let text = tcplab::emu::check_commands(&text, &file, &sets).map_err(|e| match e {
        tcplab::emu::EmuError::Scenario(e) => Failure::from(e),
        e => Failure::error(e.to_string()),
    })?;
    let limits = Limits { max_memory: max_memory(a), runtime_bytes: NATIVE_RUNTIME_BYTES, traces: Traces::Streamed };
    prepare_with_limits(&text, &file, None, &sets, &limits)?;
    println!("{}: ok", path.display());
    Ok(())
}

fn run(a: &ArgMatches) -> Result<(), Failure> {
    let path = PathBuf::from(a.get_one::<OsString>("scenario").unwrap());
    let out = match a.get_one::<PathBuf>("out") {
        Some(o) => fmt::normalize(o),
        None => Path::new("runs").join(path.file_stem().unwrap_or_default()),
    };
    let source = load(&path)?;
    let file = path.to_string_lossy().into_owned();
    rundir::check_replaceable(&out)?;
    let seed = a.get_one::<u64>("seed").copied();
    let timeout = a.get_one::<f64>("timeout").copied();
    let max_mem = max_memory(a);
    let limits = Limits { max_memory: max_mem, runtime_bytes: NATIVE_RUNTIME_BYTES, traces: Traces::Streamed };
    // `text` is the scenario as run (overridden, expanded): the copy scenario.toml gets.
    let (mut sim, text) = prepare_with_limits_owned(source, &file, seed, &overrides(a), &limits)?;
    let mut staging = rundir::Staging::new(&out)?;
    rundir::write_scenario(&mut staging, &text)?;
    drop(text);

    // SAFETY: the handler only stores to an atomic.
    unsafe { libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t) };
    let t0 = Instant::now();
    let mut meter = fmt::Progress::new(t0);
    let mut stop: Option<Failure> = None;
    let mut traces = traces::TraceFiles::new(staging.path(), &sim);
    let finished = sim.run_with_progress_mut(|sim| {
        if INTERRUPTED.load(Ordering::Relaxed) {
            stop = Some(Failure { message: "\ninterrupted".into(), status: 130 });
            return false;
        }
        let (t, end) = (sim.now().as_secs_f64(), sim.end.as_secs_f64());
        if let Some(limit) = timeout {
            if t0.elapsed() > Duration::from_secs_f64(limit) {
                stop = Some(Failure::error(format!(
                    "{file}: the run exceeded --timeout {} s at simulated time {t:.3} s of {end:.3} s; nothing was saved",
                    fmt::g(limit)
                )));
                return false;
            }
        }
        if let (Some(max), Some(rss)) = (max_mem, fmt::rss_bytes()) {
            if rss > max {
                stop = Some(Failure::error(format!(
                    "{file}: the run exceeded --max-memory {} (resident {}) at simulated time {t:.3} s; nothing was saved",
                    fmt_bytes(max),
                    fmt_bytes(rss)
                )));
                return false;
            }
        }
        if let Err(e) = traces.drain(sim) {
            stop = Some(e);
            return false;
        }
        meter.update(t, end);
        true
    });
    meter.done();
    if !finished {
        return Err(stop.unwrap_or_else(|| Failure { message: "\ninterrupted".into(), status: 130 }));
    }
    let wall = t0.elapsed().as_secs_f64();
    // summary.json is written from the simulation an entry at a time, and the table takes only
    // the rows it shows: no whole summary is held beside the simulation (11 MB at 4,096 flows).
    // Both come before the trace files' last row groups, and the connections are freed between:
    // their pages go to the Parquet writers' zstd contexts (1.4 MB) instead of new ones.
    traces.drain(&mut sim)?;
    rundir::write_summary(&mut staging, &sim, wall)?;
    let all = a.get_flag("all");
    let brief = (!a.get_flag("json")).then(|| table::Brief::of(&sim, wall, all));
    drop(std::mem::take(&mut sim.tcp));
    let trace_files = traces.finish(&sim)?;
    // The zstd contexts the Parquet writers freed (1.4 MB, part of it touched) and the connections
    // go back to the system before the run directory is sealed: the seal's fsync threads map
    // pages of libc of their own (~0.2 MB), which then stay under the run's peak instead of
    // raising it (16 flows: peak RSS as before the threads, 7.84-7.87 MB median).
    tcplab::memory::release_free_pages();
    rundir::save(staging, trace_files, &mut sim)?;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    // A closed pipe (`tcplab run ... | head`) ends the output quietly, as in Python.
    let _ = match &brief {
        // The same bytes as the file just written.
        None => std::fs::File::open(out.join("summary.json")).and_then(|mut f| std::io::copy(&mut f, &mut w)).map(|_| ()),
        Some(b) => table::print_summary(&mut w, b, all).and_then(|_| writeln!(w, "wrote {}/summary.json", out.display())),
    };
    let _ = w.flush();
    // The process ends once the summary is printed: freeing a 4,096-flow simulation piece by
    // piece costs 10-30 ms that the exit does at once.
    std::mem::forget(sim);
    Ok(())
}
