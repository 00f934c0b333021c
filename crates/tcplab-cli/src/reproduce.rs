//! `tcplab reproduce NAME --no-report`: the runs natively, the comparison in Python.
//!
//! The runs of a reproduction (reproduce_spec.rs: every variant × point × seed, one per
//! distinct resolved scenario and seed) run here, on `--jobs` threads, as `tcplab run` runs a
//! scenario: the first run of each variant (every run with `analysis`) saved with its files
//! (summary.json, scenario.toml, traces, COMPLETE.json), the others kept as their summary only.
//! They go into a staging folder beside OUT (`.tcplab-prerun-<OUT>-<pid>`, with results.jsonl:
//! per run its resolved scenario's SHA-256, seed, summary JSON, wall time and saved folder),
//! and the command line is then handed to the Python CLI as it is, with
//! `TCPLAB_REPRODUCE_PRERUN` naming that folder. `tcplab.reproduce` builds its task list as
//! always and takes each run it finds there (same resolved scenario and seed: the run hash
//! but for the code version) instead of running it, stores the runs in OUT/results.duckdb,
//! computes comparison.json, prints the table and removes the folder. So the files, the output
//! and every error are the Python path's; only the runs' time is not (no Python worker
//! processes, no interpreter per run).
//!
//! Left to the Python CLI as a whole: `--list`, no experiment, the HTML report (without
//! `--no-report`), `--backend ray`, an OUT that already holds a results store (its stored runs
//! are not run again), and any reproduce.toml or scenario the native reader does not take.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::{Arg, ArgAction, ArgMatches, Command};

use tcplab::run::{prepare_with_limits, Limits, Traces, NATIVE_RUNTIME_BYTES, PYTHON_RUNTIME_BYTES};

use crate::launch::exec_python;
use crate::reproduce_spec::{tasks, Task};
use crate::{fmt, os_failure, rundir, traces, Failure};

/// The environment variable naming the staging folder (python/tcplab/reproduce.py reads it).
pub const PRERUN_ENV: &str = "TCPLAB_REPRODUCE_PRERUN";

/// A file in the staging folder when the runs were interrupted (python/tcplab/reproduce.py).
pub const INTERRUPTED_MARK: &str = "INTERRUPTED";

/// `positive_int` of `cli/args.py` in its plain form (decimal digits, no leading zero); anything
/// else is argparse's to judge.
fn positive_int(text: &str) -> Result<u64, String> {
    let plain = !text.is_empty() && !text.starts_with('0') && text.bytes().all(|b| b.is_ascii_digit());
    match text.parse::<u64>() {
        Ok(v) if plain && (1..=1_000_000_000).contains(&v) => Ok(v),
        _ => Err("expected a whole number of at least 1".into()),
    }
}

/// The flags of `python/tcplab/cli/reproduce.py` (with `add_runner_args`).
pub fn command() -> Command {
    Command::new("reproduce")
        .disable_help_flag(true)
        .arg(Arg::new("experiment").value_parser(clap::value_parser!(OsString)))
        .arg(Arg::new("list").long("list").action(ArgAction::SetTrue))
        .arg(Arg::new("out").long("out").value_parser(clap::value_parser!(PathBuf)))
        .arg(Arg::new("seed").long("seed").value_parser(fmt::parse_seed))
        .arg(Arg::new("seeds").long("seeds").value_name("N").value_parser(positive_int))
        .arg(Arg::new("no-report").long("no-report").action(ArgAction::SetTrue))
        .arg(Arg::new("jobs").long("jobs").short('j').value_name("N").value_parser(positive_int))
        .arg(Arg::new("backend").long("backend").value_parser(["local", "ray"]))
        .arg(Arg::new("ray-address").long("ray-address").value_name("ADDR"))
}

/// `tcplab-native __reproduce-tasks NAME [--seed S] [--seeds N]`: the runs the binary would run,
/// one JSON line each (resolved scenario SHA-256, seed, saved), or "unsupported" when it would
/// hand the whole command line to Python; tests/test_native_reproduce.py sets them beside the
/// Python step's task list for every bundled reproduction.
pub fn tasks_command() -> Command {
    Command::new("__reproduce-tasks")
        .hide(true)
        .arg(Arg::new("experiment").required(true).value_parser(clap::value_parser!(OsString)))
        .arg(Arg::new("seed").long("seed").value_parser(fmt::parse_seed))
        .arg(Arg::new("seeds").long("seeds").value_parser(positive_int))
}

pub fn print_tasks(a: &ArgMatches) -> Result<(), Failure> {
    let name = PathBuf::from(a.get_one::<OsString>("experiment").unwrap());
    let list = find_experiment(&name).and_then(|f| tasks(&f, a.get_one::<u64>("seed").copied(), a.get_one::<u64>("seeds").copied()));
    match list {
        None => println!("unsupported"),
        Some(list) => {
            for t in list {
                println!("{{\"scenario_sha256\": \"{}\", \"seed\": {}, \"save\": {}}}", t.scenario_sha256, t.seed, t.save_all);
            }
        }
    }
    Ok(())
}

/// Whether this command line runs its runs here: an experiment, no report, the local backend.
pub fn takes(a: &ArgMatches) -> bool {
    a.get_one::<OsString>("experiment").is_some()
        && !a.get_flag("list")
        && a.get_flag("no-report")
        && a.get_one::<String>("backend").is_none_or(|b| b == "local")
        && a.get_one::<String>("ray-address").is_none()
}

/// `tcplab.paths.find_experiment`: NAME as a folder with reproduce.toml, else under
/// $TCPLAB_SCENARIOS, else ./scenarios, then the installed package's scenarios.
fn find_experiment(name: &Path) -> Option<PathBuf> {
    if name.join("reproduce.toml").is_file() {
        return Some(name.to_path_buf());
    }
    let roots: Vec<PathBuf> = match std::env::var_os("TCPLAB_SCENARIOS").filter(|v| !v.is_empty()) {
        Some(env) => vec![PathBuf::from(env)],
        None => {
            let cwd = std::env::current_dir().ok()?.join("scenarios");
            let mut r = if cwd.is_dir() { vec![cwd] } else { vec![] };
            r.extend(crate::launch::package_dir().map(|p| p.join("scenarios")));
            r
        }
    };
    roots.into_iter().map(|r| r.join(name)).find(|d| d.join("reproduce.toml").is_file())
}

/// One finished run, as a line of results.jsonl.
struct Done {
    sha: String,
    seed: u64,
    summary: String,
    wall_s: f64,
    dir: Option<String>,
}

/// Run one task as `tcplab run` does (no memory limit, as the sweep's workers run): into `out`
/// with its files when given, else only its summary (traces held and dropped, as Python's
/// in-process run of an unsaved task). Its summary.json text without the final newline.
fn run_task(t: &Task, out: Option<&Path>) -> Result<(String, f64), Failure> {
    let traces_mode = if out.is_some() { Traces::Streamed } else { Traces::Held };
    let runtime = if out.is_some() { NATIVE_RUNTIME_BYTES } else { PYTHON_RUNTIME_BYTES };
    let limits = Limits { max_memory: None, runtime_bytes: runtime, traces: traces_mode };
    let (mut sim, text) = prepare_with_limits(&t.text, &t.file, Some(t.seed), &t.overrides, &limits)?;
    let Some(out) = out else {
        let t0 = Instant::now();
        sim.run();
        let wall = t0.elapsed().as_secs_f64();
        let mut buf = Vec::new();
        tcplab::summary::write_json_streamed(&sim, wall, &mut buf).map_err(|e| Failure::error(e.to_string()))?;
        let text = String::from_utf8(buf).map_err(|e| Failure::error(e.to_string()))?;
        return Ok((text.trim_end_matches('\n').to_string(), wall));
    };
    let mut staging = rundir::Staging::new(out)?;
    rundir::write_scenario(&mut staging, &text)?;
    drop(text);
    let t0 = Instant::now();
    let mut stop: Option<Failure> = None;
    let mut files = traces::TraceFiles::new(staging.path(), &sim);
    let finished = sim.run_with_progress_mut(|sim| match files.drain(sim) {
        Ok(()) => !crate::INTERRUPTED.load(Ordering::Relaxed),
        Err(e) => {
            stop = Some(e);
            false
        }
    });
    if !finished {
        return Err(stop.unwrap_or_else(|| Failure { message: "\ninterrupted".into(), status: 130 }));
    }
    let wall = t0.elapsed().as_secs_f64();
    files.drain(&mut sim)?;
    rundir::write_summary(&mut staging, &sim, wall)?;
    drop(std::mem::take(&mut sim.tcp));
    let names = files.finish(&sim)?;
    rundir::save(staging, names, &mut sim)?;
    let summary = std::fs::read_to_string(out.join("summary.json")).map_err(|e| os_failure(&out.join("summary.json"), &e))?;
    Ok((summary.trim_end_matches('\n').to_string(), wall))
}

/// Run every task on `jobs` threads into `staging`; a run that fails is left out (the Python
/// step runs it again and stores its error as the Python path does).
fn run_all(list: &[Task], staging: &Path, jobs: usize) -> Vec<Done> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Done>> = Mutex::new(Vec::new());
    let tty = std::io::stderr().is_terminal();
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs.min(list.len()).max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= list.len() || crate::INTERRUPTED.load(Ordering::Relaxed) {
                    break;
                }
                let t = &list[i];
                let dir = t.save_all.then(|| format!("run-{i}"));
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_task(t, dir.as_ref().map(|d| staging.join(d)).as_deref())));
                if let Ok(Ok((summary, wall_s))) = r {
                    let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
                    d.push(Done { sha: t.scenario_sha256.clone(), seed: t.seed, summary, wall_s, dir });
                    if tty && t0.elapsed().as_secs_f64() > 1.0 {
                        let _ = write!(std::io::stderr(), "\r  {} of {} runs [{:.0} s]\x1b[K", d.len(), list.len(), t0.elapsed().as_secs_f64());
                    }
                }
            });
        }
    });
    if tty && t0.elapsed().as_secs_f64() > 1.0 {
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
    done.into_inner().unwrap_or_else(|e| e.into_inner())
}

fn write_results(staging: &Path, done: &[Done]) -> std::io::Result<()> {
    let mut text = String::new();
    for d in done {
        let dir = d.dir.as_deref().map_or("null".to_string(), rundir::json_str);
        text.push_str(&format!(
            "{{\"scenario_sha256\": \"{}\", \"seed\": {}, \"wall_s\": {}, \"dir\": {dir}, \"summary_json\": {}}}\n",
            d.sha,
            d.seed,
            crate::reproduce_spec::py_float_repr(d.wall_s),
            rundir::json_str(&d.summary)
        ));
    }
    std::fs::write(staging.join("results.jsonl"), text)
}

/// `tcplab reproduce NAME --no-report ...`: the runs here, then the Python CLI with the same
/// arguments (see the module's note). Returns only on an interrupt or when nothing could start.
pub fn run(a: &ArgMatches, args: &[OsString]) -> Result<(), Failure> {
    if std::env::var_os("TCPLAB_NO_HANDBACK").is_some_and(|v| v == "1") {
        exec_python(args); // a caller that runs what the binary hands back itself
    }
    let name = PathBuf::from(a.get_one::<OsString>("experiment").unwrap());
    let Some(folder) = find_experiment(&name) else { exec_python(args) };
    let out = match a.get_one::<PathBuf>("out") {
        Some(o) => fmt::normalize(o),
        None => Path::new("runs").join("reproduce").join(name.to_string_lossy().replace('/', "_")),
    };
    if out.join("results.duckdb").exists() {
        exec_python(args); // runs stored earlier are not run again: the store knows which
    }
    let Some(list) = tasks(&folder, a.get_one::<u64>("seed").copied(), a.get_one::<u64>("seeds").copied()) else { exec_python(args) };
    let abs = std::path::absolute(&out).map_err(|e| os_failure(&out, &e))?;
    let parent = abs.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
    if std::fs::create_dir_all(&parent).is_err() {
        exec_python(args);
    }
    let base = abs.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let staging = parent.join(format!(".tcplab-prerun-{base}-{}", std::process::id()));
    if std::fs::create_dir(&staging).is_err() {
        exec_python(args);
    }
    // SAFETY: the handler only stores to an atomic. SIGTERM as Ctrl-C: either stops the runs
    // and hands the finished ones over to be stored (see `interrupted` below).
    unsafe {
        libc::signal(libc::SIGINT, crate::on_sigint as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, crate::on_sigint as *const () as libc::sighandler_t);
    }
    let jobs = a.get_one::<u64>("jobs").map(|&j| j as usize).unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    rundir::umask(); // read before the threads start
    let done = run_all(&list, &staging, jobs);
    // Interrupted (SIGINT or SIGTERM): no run was started after it; a saved run in flight was
    // dropped at its next progress step, an unsaved one (a plain `sim.run()`) finished and is
    // kept. The finished runs go to the Python step with an INTERRUPTED mark: it stores them
    // as its sweep stores the runs finished before a Ctrl-C, runs nothing more, and ends as
    // the Python path's interrupted reproduce ("interrupted", exit 130). A rerun resumes.
    let interrupted = crate::INTERRUPTED.load(Ordering::Relaxed);
    let written = write_results(&staging, &done).and_then(|()| if interrupted { std::fs::write(staging.join(INTERRUPTED_MARK), "") } else { Ok(()) });
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
        if interrupted {
            return Err(Failure { message: "\ninterrupted".into(), status: 130 });
        }
        exec_python(args);
    }
    // As launch::exec_python, but a Python CLI that cannot start leaves no staging folder behind.
    // (The exec puts SIGINT and SIGTERM back to their default actions: the Python step's own.)
    use std::os::unix::process::CommandExt;
    let python = crate::launch::python();
    let err = std::process::Command::new(&python).env(PRERUN_ENV, &staging).arg("-m").arg("tcplab").args(args).exec();
    let _ = std::fs::remove_dir_all(&staging);
    Err(Failure::error(format!("cannot start the Python CLI ({}): {err}", Path::new(&python).display())))
}
