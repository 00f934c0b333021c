//! `tcplab bench` on the native path (issue 28): what `python/tcplab/bench.py`'s `bench()` does
//! (over the same cases, `tcplab::bench_cases`),
//! with the same flags, table and `--json` document, and no interpreter. Each case runs
//! `--repeat` times in a child process of its own (`tcplab-native __bench-measure`, so its peak
//! RSS is its own), then as whole `tcplab-native run FILE --out DIR` processes (under GNU time
//! when installed, for the child's own peak RSS) and, with `--callgrind`, once under valgrind's
//! callgrind for the core loop's instructions per event.
//!
//! What stays in Python: `--sweep` (it times the sweep machinery, which is Python) and an unknown
//! case name (argparse-side error text); the binary hands those command lines back. The "run() s" column is here the library
//! call that parses, builds and runs the scenario (Python's is `tcplab.run()`, the same call
//! through PyO3), and the peak RSS is the native process's.

use std::io::Write;
use std::time::Instant;

use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::bench_cases::{case, is_case, DEFAULT_CASES};
use crate::Failure;

/// The flags of `python/tcplab/cli/bench.py`.
pub fn command() -> Command {
    let flag = |name: &'static str| Arg::new(name).long(name).action(ArgAction::SetTrue);
    let count = |name: &'static str| Arg::new(name).long(name).value_parser(clap::value_parser!(u64).range(1..));
    Command::new("bench")
        .disable_help_flag(true)
        .arg(Arg::new("case").num_args(0..).action(ArgAction::Set))
        .arg(count("repeat"))
        .arg(flag("list"))
        .arg(flag("json"))
        .arg(flag("no-process"))
        .arg(flag("callgrind"))
        .arg(flag("sweep"))
        .arg(count("runs"))
        .arg(flag("ray"))
}

/// The hidden helpers: one case's in-process measurement, and one case's scenario text (for
/// the test that compares it with bench.py's).
pub fn helper_commands() -> [Command; 2] {
    [
        Command::new("__bench-measure").hide(true).arg(Arg::new("case").required(true)).arg(Arg::new("repeat").required(true).value_parser(clap::value_parser!(u64))),
        Command::new("__bench-case").hide(true).arg(Arg::new("case").required(true)),
    ]
}

/// A JSON value as Python's `json.dumps` writes it.
#[derive(Clone, Copy)]
pub enum Val {
    Int(i64),
    Float(f64),
    Null,
}

impl Val {
    fn json(self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Null => "null".into(),
            Val::Float(f) => py_float(f),
        }
    }
    fn f(self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(i as f64),
            Val::Float(f) => Some(f),
            Val::Null => None,
        }
    }
}

/// `repr(float)`: the shortest text that reads back, exponent form below 1e-4 and from 1e16.
fn py_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let s = format!("{f:?}"); // Rust's Debug switches to exponents at the same places
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = e.strip_prefix('-').map(|d| ('-', d)).unwrap_or(('+', e));
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// `statistics.median`: the middle value, or the mean of the two middle ones (a float).
pub fn median(mut v: Vec<Val>) -> Val {
    v.sort_by(|a, b| a.f().unwrap_or(0.0).total_cmp(&b.f().unwrap_or(0.0)));
    let n = v.len();
    if n % 2 == 1 {
        return v[n / 2];
    }
    Val::Float((v[n / 2 - 1].f().unwrap_or(0.0) + v[n / 2].f().unwrap_or(0.0)) / 2.0)
}

/// The figures of one case, in the order of bench.py's dictionaries.
const MEASURE_KEYS: [&str; 12] = [
    "flows",
    "sim_s",
    "events",
    "packet_hops",
    "core_wall_s",
    "run_wall_s",
    "events_per_s",
    "wall_per_sim_s",
    "ns_per_event",
    "ns_per_packet_hop",
    "peak_rss_bytes",
    "rss_per_flow_bytes",
];
const PROCESS_KEYS: [&str; 4] = ["process_s", "process_peak_rss_bytes", "process_core_wall_s", "instructions_per_event"];

struct Figures {
    case: String,
    vals: Vec<(&'static str, Val)>,
}

impl Figures {
    fn get(&self, key: &str) -> Val {
        self.vals.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).unwrap_or(Val::Null)
    }
    fn set(&mut self, key: &'static str, v: Val) {
        match self.vals.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = v,
            None => self.vals.push((key, v)),
        }
    }
}

fn statm_rss() -> u64 {
    crate::fmt::rss_bytes().unwrap_or(0)
}

fn peak_rss_self() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss as u64 * 1024
}

/// `tcplab-native __bench-measure CASE REPEAT`: bench.py's `measure()`, the figures on one line.
pub fn measure(a: &ArgMatches) -> Result<(), Failure> {
    let name = a.get_one::<String>("case").unwrap();
    let repeat = (*a.get_one::<u64>("repeat").unwrap()).max(1);
    let (text, file) = case(name).ok_or_else(|| Failure::error(format!("unknown benchmark {name}")))?.map_err(Failure::error)?;
    let rss_before = statm_rss();
    let (mut walls, mut api_walls, mut last) = (Vec::new(), Vec::new(), None);
    for _ in 0..repeat {
        let t0 = Instant::now();
        let r = tcplab::run::run_text(&text, &file, None, &[])?;
        api_walls.push(Val::Float(t0.elapsed().as_secs_f64()));
        walls.push(Val::Float(r.summary.wall_s));
        last = Some(r.summary);
    }
    let s = last.expect("at least one run");
    let wall = median(walls).f().unwrap_or(0.0);
    let hops: u64 = s.links.iter().map(|l| l.packets_forwarded).sum();
    let flows = s.flows.len() as u64 + s.udp.len() as u64 + s.traffic.iter().map(|t| t.conversations_started).sum::<u64>();
    let peak = peak_rss_self();
    let ev = s.events as f64;
    let vals = [
        Val::Int(flows as i64),
        Val::Float(s.sim_end_s),
        Val::Int(s.events as i64),
        Val::Int(hops as i64),
        Val::Float(wall),
        median(api_walls),
        Val::Float(ev / wall),
        Val::Float(wall / s.sim_end_s.max(1e-9)),
        Val::Float(wall / ev * 1e9),
        Val::Float(wall / hops.max(1) as f64 * 1e9),
        Val::Int(peak as i64),
        Val::Float((peak as f64 - rss_before as f64) / flows.max(1) as f64),
    ];
    let line: Vec<String> = vals.iter().map(|v| v.json()).collect();
    println!("{}", line.join(" "));
    Ok(())
}

/// `tcplab-native __bench-case CASE`: the case's scenario text.
pub fn print_case(a: &ArgMatches) -> Result<(), Failure> {
    let name = a.get_one::<String>("case").unwrap();
    let (text, _) = case(name).ok_or_else(|| Failure::error(format!("unknown benchmark {name}")))?.map_err(Failure::error)?;
    print!("{text}");
    Ok(())
}

/// Whether this command line is one the binary takes (else the Python CLI does).
pub fn takes(a: &ArgMatches) -> bool {
    let names: Vec<&String> = a.get_many::<String>("case").map(|v| v.collect()).unwrap_or_default();
    !a.get_flag("sweep") && (a.get_flag("list") || names.iter().all(|n| is_case(n)))
}

/// `tcplab bench [CASE...]`.
pub fn run(a: &ArgMatches) -> Result<(), Failure> {
    if a.get_flag("list") {
        // as bench.py prints them: the name padded to 24 columns, the description
        let mut out = std::io::stdout().lock();
        for (name, what) in tcplab::bench_cases::CASES {
            let _ = writeln!(out, "{}", format!("{name:<24} {what}").trim_end());
        }
        return Ok(());
    }
    let repeat = *a.get_one::<u64>("repeat").unwrap_or(&3);
    let names: Vec<String> = match a.get_many::<String>("case") {
        Some(v) if v.len() > 0 => v.cloned().collect(),
        _ => DEFAULT_CASES.iter().map(|s| s.to_string()).collect(),
    };
    let (as_json, process, callgrind) = (a.get_flag("json"), !a.get_flag("no-process"), a.get_flag("callgrind"));
    let exe = std::env::current_exe().map_err(|e| Failure::error(format!("cannot find tcplab-native: {e}")))?;
    let sizes = tcplab::run::hot_struct_sizes();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let table = crate::bench_table::Table::new();
    if !as_json {
        let sz: Vec<String> = sizes.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(out, "hot structs (bytes): {}", sz.join(", "));
        let _ = writeln!(out, "{}", table.header());
        let _ = out.flush();
    }
    let mut results = Vec::new();
    for name in &names {
        let p = std::process::Command::new(&exe)
            .args(["__bench-measure", name.as_str(), &repeat.to_string()])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| Failure::error(format!("cannot start {}: {e}", exe.display())))?;
        let text = String::from_utf8_lossy(&p.stdout);
        let parsed = text.lines().last().map(parse_measure).filter(|v| p.status.success() && v.len() == MEASURE_KEYS.len());
        let Some(vals) = parsed else {
            let err = String::from_utf8_lossy(&p.stderr);
            let last = err.trim().lines().last().map(str::to_string).unwrap_or_else(|| p.status.code().unwrap_or(1).to_string());
            return Err(Failure { message: format!("{name}: failed: {last}"), status: 1 });
        };
        let mut m = Figures { case: name.clone(), vals: MEASURE_KEYS.iter().copied().zip(vals).collect() };
        for k in PROCESS_KEYS {
            m.set(k, Val::Null);
        }
        if process || callgrind {
            let pm = crate::bench_process::measure_processes(&exe, name, if process { repeat } else { 1 }, callgrind)?;
            if process {
                m.set("process_s", pm.process_s);
                m.set("process_peak_rss_bytes", pm.peak_rss);
                m.set("process_core_wall_s", pm.core_wall_s);
            }
            m.set("instructions_per_event", pm.instructions_per_event.map(Val::Float).unwrap_or(Val::Null));
        }
        if !as_json {
            let _ = writeln!(out, "{}", table.row(&m.case, &row_values(&m)));
            let _ = out.flush();
        }
        results.push(m);
    }
    if as_json {
        let _ = write!(out, "{}", json_document(&sizes, repeat, &results));
        let _ = out.flush();
    }
    Ok(())
}

fn parse_measure(line: &str) -> Vec<Val> {
    line.split_whitespace()
        .map(|w| match w.parse::<i64>() {
            Ok(i) if !w.contains(['.', 'e', 'E']) => Val::Int(i),
            _ => w.parse::<f64>().map(Val::Float).unwrap_or(Val::Null),
        })
        .collect()
}

/// The table's cells after the case name (bench.py's `table.row(...)` arguments).
fn row_values(m: &Figures) -> Vec<Option<f64>> {
    let g = |k: &str| m.get(k).f();
    let scaled = |k: &str, s: f64| g(k).map(|v| v / s);
    vec![
        g("flows"),
        g("sim_s"),
        g("core_wall_s"),
        g("run_wall_s"),
        g("events"),
        scaled("events_per_s", 1e6),
        g("ns_per_event"),
        g("ns_per_packet_hop"),
        scaled("peak_rss_bytes", 1048576.0),
        scaled("rss_per_flow_bytes", 1024.0),
        g("wall_per_sim_s").map(|v| v * 1e3),
        g("process_s"),
        scaled("process_peak_rss_bytes", 1048576.0),
        g("instructions_per_event"),
    ]
}

/// `json.dumps({"struct_sizes_bytes": ..., "repeat": ..., "cases": [...]}, indent=1)` and a newline.
fn json_document(sizes: &[(&str, usize)], repeat: u64, results: &[Figures]) -> String {
    let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut s = String::from("{\n \"struct_sizes_bytes\": {\n");
    let sz: Vec<String> = sizes.iter().map(|(k, v)| format!("  {}: {v}", q(k))).collect();
    s += &sz.join(",\n");
    s += &format!("\n }},\n \"repeat\": {repeat},\n \"cases\": [");
    if results.is_empty() {
        return s + "]\n}\n";
    }
    s += "\n";
    let cases: Vec<String> = results
        .iter()
        .map(|m| {
            let mut fields = vec![format!("   \"case\": {}", q(&m.case))];
            fields.extend(m.vals.iter().map(|(k, v)| format!("   {}: {}", q(k), v.json())));
            format!("  {{\n{}\n  }}", fields.join(",\n"))
        })
        .collect();
    s + &cases.join(",\n") + "\n ]\n}\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_repr() {
        for (f, s) in [(60.0, "60.0"), (0.1, "0.1"), (1e-7, "1e-07"), (1.5e16, "1.5e+16"), (12345678.9, "12345678.9"), (0.0001, "0.0001")] {
            assert_eq!(py_float(f), s);
        }
    }

    #[test]
    fn median_is_statistics_median() {
        assert!(matches!(median(vec![Val::Int(3), Val::Int(1), Val::Int(2)]), Val::Int(2)));
        assert!(matches!(median(vec![Val::Int(3), Val::Int(2)]), Val::Float(f) if f == 2.5));
    }
}
