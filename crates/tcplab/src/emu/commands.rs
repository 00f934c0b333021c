//! User programs on emulated Linux hosts (issue 24): `[[commands]]` tables, read by
//! `tcplab emulate` only (the simulator has nothing to run them on, so `tcplab run` rejects the
//! key as it rejects any unknown one).
//!
//! ```toml
//! [[commands]]
//! host = "h2"                       # a host with stack = "linux"
//! run = ["iperf3", "-s", "-1"]      # argv; "{ip:h2}" becomes host h2's address
//! start = "0s"                      # after the emulation's start (default 0s)
//! wait = true                       # the run ends when every waited command exited (default)
//! setup = false                     # true: run to completion before anything starts (below)
//! ```
//!
//! Each runs as `ip netns exec <namespace> argv...` in a process group of its own at normal scheduling priority (started by a
//! thread made before the emulator's loop took its real-time priority), its stdout and stderr
//! kept in the run directory (`command-<name>.stdout`, `.stderr`), its exit code in the summary.
//! A command still running at the end is killed with its process group (what it started too)
//! and its namespace.
//!
//! A `setup = true` command (sysctls, socket defaults) runs to completion in its namespace after
//! the namespace is made and before the emulator's sinks listen and its clock starts, so that
//! what it sets applies to every socket of the run (a listening socket takes `tcp_rmem[1]` when
//! it is made; a command at 0 s would come after it). It has no `start` (or `start = "0s"`), is
//! not waited for by the run's end, and a non-zero exit stops the emulation with its stderr.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::EmuError;
use crate::scenario::units;
use crate::scenario::ScenarioError;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandCfg {
    /// Name of its output files and summary row (default `<host>-<index>`).
    #[serde(default)]
    pub name: Option<String>,
    pub host: String,
    pub run: Vec<String>,
    #[serde(default)]
    pub start: Option<units::Duration>,
    #[serde(default = "yes")]
    pub wait: bool,
    /// Run to completion before the sinks listen and the clock starts.
    #[serde(default)]
    pub setup: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct OnlyCommands {
    #[serde(default)]
    commands: Vec<CommandCfg>,
}

/// Take the `[[commands]]` tables out of a scenario text: the text with their lines commented
/// out (so every other line keeps its number for the scenario's own errors) and the commands.
pub fn split(text: &str, file: &str) -> Result<(String, Vec<CommandCfg>), EmuError> {
    if !text.lines().any(is_commands_header) {
        return Ok((text.to_string(), Vec::new()));
    }
    let parsed: OnlyCommands = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start].lines().count().max(1));
        EmuError::Scenario(ScenarioError { file: file.into(), line, field: "commands".into(), message: e.message().to_string() })
    })?;
    let mut out = String::with_capacity(text.len() + 64);
    let mut inside = false;
    for l in text.lines() {
        let t = l.trim_start();
        if t.starts_with('[') {
            inside = is_commands_header(l);
        }
        if inside {
            out.push_str("# ");
        }
        out.push_str(l);
        out.push('\n');
    }
    Ok((out, parsed.commands))
}

fn is_commands_header(l: &str) -> bool {
    let t: String = l.split('#').next().unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
    t == "[[commands]]"
}

/// What a command's thread reports.
#[derive(Default)]
pub struct CommandState {
    /// Emulation time (ns) it was started / exited; 0 = not yet.
    pub started_at: AtomicU64,
    pub exited_at: AtomicU64,
    /// Exit code (signal: -signal number); meaningful once `exited_at` is set.
    pub code: AtomicI64,
    pub error: std::sync::Mutex<Option<String>>,
}

/// A command ready to start: its name, namespace, argv (addresses substituted), start time.
pub struct Ready {
    pub name: String,
    pub host: String,
    pub ns: String,
    pub argv: Vec<String>,
    pub start_ns: u64,
    pub wait: bool,
    pub setup: bool,
    pub stdout: std::path::PathBuf,
    pub stderr: std::path::PathBuf,
    pub state: Arc<CommandState>,
}

/// Check the commands against the scenario's hosts and resolve them. `hosts`: Linux host name →
/// (namespace, address).
pub fn resolve(cmds: &[CommandCfg], text: &str, file: &str, hosts: &HashMap<String, (String, [u8; 4])>, all_hosts: &HashMap<String, [u8; 4]>, dir: &std::path::Path) -> Result<Vec<Ready>, EmuError> {
    let mut out = Vec::new();
    for (i, c) in cmds.iter().enumerate() {
        let err = |k: &str, m: String| EmuError::Scenario(ScenarioError { file: file.into(), line: crate::scenario::locate(text, &format!("commands[{i}].{k}")), field: format!("commands[{i}].{k}"), message: m });
        let Some((ns, _)) = hosts.get(&c.host) else {
            return Err(err("host", format!("{:?} is not a host with stack = \"linux\": commands run in a Linux host's namespace", c.host)));
        };
        if c.run.is_empty() {
            return Err(err("run", "give the command and its arguments, e.g. [\"iperf3\", \"-s\"]".into()));
        }
        let mut argv = Vec::new();
        for a in &c.run {
            argv.push(substitute(a, all_hosts).map_err(|m| err("run", m))?);
        }
        let name = c.name.clone().unwrap_or_else(|| format!("{}-{i}", c.host));
        if name.is_empty() || !name.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch)) || out.iter().any(|r: &Ready| r.name == name) {
            return Err(err("name", format!("{name:?}: a command's name must be unique and made of letters, digits, '-', '_', '.'")));
        }
        if c.setup && c.start.is_some_and(|d| d.0 .0 != 0) {
            return Err(err("start", "a setup command runs before the emulation's clock starts: leave out `start` (or set \"0s\")".into()));
        }
        out.push(Ready {
            stdout: dir.join(format!("{name}.stdout")),
            stderr: dir.join(format!("{name}.stderr")),
            name,
            host: c.host.clone(),
            ns: ns.clone(),
            argv,
            start_ns: c.start.map_or(0, |d| d.0 .0),
            // A setup command has exited before the run starts: the run's end never waits for it.
            wait: c.wait && !c.setup,
            setup: c.setup,
            state: Arc::new(CommandState::default()),
        });
    }
    Ok(out)
}

/// "{ip:NAME}" → host NAME's address.
fn substitute(arg: &str, hosts: &HashMap<String, [u8; 4]>) -> Result<String, String> {
    let mut s = arg.to_string();
    while let Some(i) = s.find("{ip:") {
        let j = s[i..].find('}').ok_or_else(|| format!("unclosed {{ip:...}} in {arg:?}"))? + i;
        let name = &s[i + 4..j];
        let ip = hosts.get(name).ok_or_else(|| format!("{{ip:{name}}}: no host {name:?}"))?;
        s.replace_range(i..=j, &format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]));
    }
    Ok(s)
}

/// How long a setup command may run: it must finish before the run starts, so one that hangs
/// (a command waiting for input, a network call) would hang the whole run.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Run a setup command to completion now (before the clock starts): its outputs in its files,
/// its exit code in its state (`started_at`/`exited_at` stay 0: it ran before time 0). A
/// non-zero exit, a start failure or a run longer than [`SETUP_TIMEOUT`] (the command is then
/// killed) is an error naming the command, its host and its stderr.
pub fn run_setup(r: &Ready) -> Result<(), EmuError> {
    let files = std::fs::File::create(&r.stdout).and_then(|o| Ok((o, std::fs::File::create(&r.stderr)?)));
    let child = files.and_then(|(o, e)| in_namespace(&r.ns, &r.argv).stdout(o).stderr(e).spawn());
    let fail = |m: String| {
        *r.state.error.lock().unwrap() = Some(m.clone());
        EmuError::System(format!("setup command {:?} on host {}: {m}", r.name, r.host))
    };
    let status = match child {
        Err(e) => return Err(fail(format!("{}: {e}", r.argv[0]))),
        Ok(c) => wait_within(c, SETUP_TIMEOUT).map_err(fail)?,
    };
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().map_or(-(status.signal().unwrap_or(0) as i64), |c| c as i64);
    r.state.code.store(code, Ordering::SeqCst);
    if code != 0 {
        let err = std::fs::read_to_string(&r.stderr).unwrap_or_default();
        return Err(fail(format!("exited {code}: {}", err.trim())));
    }
    Ok(())
}

/// `ip netns exec NS argv...` (which execs argv in the namespace), stdin closed, in a process
/// group of its own so that [`kill_group`] reaches what it started (`sh -c "a; b"`'s children).
pub(crate) fn in_namespace(ns: &str, argv: &[String]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns]).args(argv);
    group_leader(&mut c);
    c
}

/// Make the command the leader of a new process group (its id = its pid).
pub(crate) fn group_leader(c: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    c.stdin(Stdio::null()).process_group(0)
}

/// Kill `child`'s process group (the child and every process it started that stayed in its
/// group: killing only the child would leave a grandchild running) and reap the child.
pub(crate) fn kill_group(child: &mut std::process::Child) {
    let pid = child.id() as libc::pid_t;
    // The group exists only if the child leads it ([`group_leader`]); otherwise ESRCH.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let _ = child.kill();
    let _ = child.wait();
}

/// Wait for `child` at most `limit`; past it, kill it and say so.
pub(crate) fn wait_within(mut child: std::process::Child, limit: Duration) -> Result<std::process::ExitStatus, String> {
    let since = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Ok(st),
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for it: {e}")),
        }
        if since.elapsed() >= limit {
            kill_group(&mut child);
            return Err(format!("still running after {:?}: killed (a setup command must finish before the run starts)", limit));
        }
        std::thread::sleep(Duration::from_millis(2).min(limit));
    }
}

/// Start the command at its time in a thread of normal priority, wait for it, report.
pub fn spawn(r: &Ready, t0: Instant, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let (ns, argv, start, state) = (r.ns.clone(), r.argv.clone(), r.start_ns, r.state.clone());
    let (out, err) = (r.stdout.clone(), r.stderr.clone());
    std::thread::spawn(move || {
        let now = || t0.elapsed().as_nanos() as u64;
        while now() < start {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_nanos((start - now()).min(5_000_000)));
        }
        let files = std::fs::File::create(&out).and_then(|o| Ok((o, std::fs::File::create(&err)?)));
        let child = files.and_then(|(o, e)| in_namespace(&ns, &argv).stdout(o).stderr(e).spawn());
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                *state.error.lock().unwrap() = Some(format!("{}: {e}", argv[0]));
                state.code.store(-1, Ordering::SeqCst);
                state.exited_at.store(now().max(1), Ordering::SeqCst);
                return;
            }
        };
        state.started_at.store(now().max(1), Ordering::SeqCst);
        loop {
            match child.try_wait() {
                Ok(Some(st)) => {
                    use std::os::unix::process::ExitStatusExt;
                    state.code.store(st.code().map_or(-(st.signal().unwrap_or(0) as i64), |c| c as i64), Ordering::SeqCst);
                    state.exited_at.store(now().max(1), Ordering::SeqCst);
                    return;
                }
                Ok(None) => {}
                Err(_) => return,
            }
            if stop.load(Ordering::Relaxed) {
                kill_group(&mut child);
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    })
}

/// Every waited command has exited (false when none is waited for).
pub fn all_waited_exited(cmds: &[Ready]) -> bool {
    cmds.iter().any(|c| c.wait) && cmds.iter().filter(|c| c.wait).all(|c| c.state.exited_at.load(Ordering::Relaxed) != 0)
}
