//! `tcplab bench`'s whole-process runs (bench.py's `measure_processes`): the case written as a
//! scenario file, run as `tcplab-native run FILE --out DIR` processes (wall time, the child's
//! peak RSS: read by GNU time when installed, else from wait4's rusage), and with `--callgrind`
//! once more under valgrind's callgrind, counting instructions only inside the core's event loop.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::bench::{median, Val};
use crate::Failure;

/// GNU time: a child forked from it is charged its own peak RSS, not ours before its exec.
const GNU_TIME: &str = "/usr/bin/time";
/// The core's event loop, the function callgrind counts instructions in (as bench.py).
const CORE_LOOP_SYMBOL: &str = "*Simulation::run_with_progress*";

pub struct ProcessFigures {
    pub process_s: Val,
    pub peak_rss: Val,
    pub core_wall_s: Val,
    pub instructions_per_event: Option<f64>,
}

/// A temporary directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> Result<TempDir, Failure> {
        let base = std::env::temp_dir();
        for i in 0..1000u32 {
            let p = base.join(format!("{prefix}{}-{i}", std::process::id()));
            if std::fs::create_dir(&p).is_ok() {
                return Ok(TempDir(p));
            }
        }
        Err(Failure::error(format!("cannot create a temporary directory in {}", base.display())))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn executable(p: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// Run `cmd` with standard output discarded: (wall seconds, the child's peak RSS in bytes); a
/// non-zero exit is an error naming the command and the last line of its standard error.
fn run_child(cmd: &[String]) -> Result<(f64, u64), Failure> {
    let tmp = TempDir::new("tcplab-rss-")?;
    let rss_file = tmp.0.join("rss.txt");
    let timed = executable(GNU_TIME);
    let mut full: Vec<String> = if timed { vec![GNU_TIME.into(), "-f".into(), "%M".into(), "-o".into(), rss_file.display().to_string()] } else { vec![] };
    full.extend(cmd.iter().cloned());
    let t0 = Instant::now();
    let mut child = Command::new(&full[0])
        .args(&full[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Failure::error(format!("cannot start {}: {e}", full[0])))?;
    let mut err = String::new();
    let pid = child.id() as libc::pid_t;
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    // SAFETY: wait4 on our own child's pid fills `status` and `ru`.
    let (mut status, mut ru): (libc::c_int, libc::rusage) = (0, unsafe { std::mem::zeroed() });
    unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let wall = t0.elapsed().as_secs_f64();
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -libc::WTERMSIG(status) };
    if code != 0 {
        let last = err.trim().lines().last().unwrap_or("").to_string();
        return Err(Failure::error(format!("{}: exit {code}: {last}", cmd.join(" "))));
    }
    let mut rss = ru.ru_maxrss as u64 * 1024;
    if timed {
        if let Some(kb) = std::fs::read_to_string(&rss_file).ok().and_then(|t| t.split_whitespace().last().and_then(|w| w.parse::<u64>().ok())) {
            rss = kb * 1024;
        }
    }
    Ok((wall, rss))
}

/// summary.json's `wall_s` and `events`.
fn summary_figures(out: &Path) -> Result<(f64, u64), Failure> {
    let path = out.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| crate::os_failure(&path, &e))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| Failure::error(format!("{}: {e}", path.display())))?;
    Ok((v["wall_s"].as_f64().unwrap_or(0.0), v["events"].as_u64().unwrap_or(0)))
}

/// Case `name` run `repeat` times as a whole `tcplab run` process (medians), and with
/// `callgrind` the core loop's instructions per event (None without valgrind).
pub fn measure_processes(exe: &Path, name: &str, repeat: u64, callgrind: bool) -> Result<ProcessFigures, Failure> {
    let (text, _) = crate::bench_cases::case(name).expect("a known case").map_err(Failure::error)?;
    let tmp = TempDir::new("tcplab-bench-")?;
    let path = tmp.0.join(format!("{name}.toml"));
    std::fs::write(&path, text).map_err(|e| crate::os_failure(&path, &e))?;
    let out = tmp.0.join("out");
    let run_cmd = |prefix: &[String]| -> Vec<String> {
        let mut c = prefix.to_vec();
        c.extend([exe.display().to_string(), "run".into(), path.display().to_string(), "--out".into(), out.display().to_string()]);
        c
    };
    let (mut walls, mut rsss, mut cores, mut events) = (vec![], vec![], vec![], None);
    for _ in 0..repeat.max(1) {
        let _ = std::fs::remove_dir_all(&out);
        let (wall, rss) = run_child(&run_cmd(&[]))?;
        let (core, ev) = summary_figures(&out)?;
        walls.push(Val::Float(wall));
        rsss.push(Val::Int(rss as i64));
        cores.push(Val::Float(core));
        events.get_or_insert(ev);
    }
    let mut figures = ProcessFigures { process_s: median(walls), peak_rss: median(rsss), core_wall_s: median(cores), instructions_per_event: None };
    if callgrind {
        if let Some(vg) = which("valgrind") {
            let cg = tmp.0.join("callgrind.out");
            let _ = std::fs::remove_dir_all(&out);
            let prefix = [
                vg.display().to_string(),
                "--tool=callgrind".into(),
                format!("--callgrind-out-file={}", cg.display()),
                "--collect-atstart=no".into(),
                format!("--toggle-collect={CORE_LOOP_SYMBOL}"),
            ];
            run_child(&run_cmd(&prefix))?;
            let text = std::fs::read_to_string(&cg).unwrap_or_default();
            let ir = text.lines().find_map(|l| {
                let rest = l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:"))?;
                rest.split_whitespace().next()?.parse::<u64>().ok()
            });
            // No count means callgrind never entered the loop: its symbol is gone (inlined or
            // stripped), and a "-" in the table would hide that the figure is missing.
            let ir = ir.filter(|&i| i > 0).ok_or_else(|| Failure::error(missing_loop_message(exe)))?;
            let (_, ev) = summary_figures(&out)?;
            figures.instructions_per_event = Some(ir as f64 / ev as f64);
        }
    }
    Ok(figures)
}

/// Why `--callgrind` has no figure when valgrind ran but counted nothing.
fn missing_loop_message(exe: &Path) -> String {
    format!(
        "callgrind counted no instructions inside {CORE_LOOP_SYMBOL}: the core loop's symbol is missing from {} (inlined or stripped), so instructions per event cannot be measured",
        exe.display()
    )
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(program)).find(|p| p.to_str().is_some_and(executable))
}
