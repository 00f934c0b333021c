//! Where the emulator's loop spends its time when a release is late (issue 26): every step of
//! the real-time loop that took longer than [`SLOW_STEP_NS`] — a write to a host's TAP (the
//! host's receive path runs inside it), a read, the simulation's advance, a sleep that woke
//! late — with its wall-clock start, length and the CPU it ran on (`sched_getcpu`). Kept in
//! memory (bounded) and written as text only when `TCPLAB_EMU_STEPLOG=FILE` is set: a
//! diagnostic, not part of the run's results. The per-CPU interrupt and softirq time of the run
//! (from /proc/stat) is always measured, and reported in the summary.

/// A step longer than this is logged.
pub const SLOW_STEP_NS: u64 = 200_000;
const CAP: usize = 1 << 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// One write of a datagram to host `arg`'s TAP.
    Write,
    /// One read from a host's TAP.
    Read,
    /// `Simulation::run_until` and the link sampling after it.
    Advance,
    /// A sleep in ppoll that returned this much later than asked (`arg`: ns asked for).
    Sleep,
    /// The progress callback.
    Progress,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::Write => "write",
            Step::Read => "read",
            Step::Advance => "advance",
            Step::Sleep => "sleep_late",
            Step::Progress => "progress",
        }
    }
}

#[derive(Default)]
pub struct StepLog {
    on: bool,
    rows: Vec<(u64, u64, Step, i32, u64)>,
    /// Slow steps seen (also beyond the kept ones), and their summed length, per kind.
    pub counts: [(u64, u64); 5],
    /// Per CPU: hard-interrupt and softirq ms at the run's start, then their growth over it.
    pub cpu_irq_ms: Vec<(f64, f64)>,
}

impl StepLog {
    pub fn new() -> StepLog {
        StepLog { on: std::env::var_os("TCPLAB_EMU_STEPLOG").is_some(), ..Default::default() }
    }

    /// A step of `kind` began at `start` and took `dur` ns.
    #[inline]
    pub fn step(&mut self, kind: Step, start: u64, dur: u64, arg: u64) {
        if dur <= SLOW_STEP_NS {
            return;
        }
        let c = &mut self.counts[kind as usize];
        c.0 += 1;
        c.1 += dur;
        if self.on && self.rows.len() < CAP {
            let cpu = unsafe { libc::sched_getcpu() };
            self.rows.push((start, dur, kind, cpu, arg));
        }
    }

    /// Note the per-CPU interrupt times at the run's start.
    pub fn start(&mut self) {
        self.cpu_irq_ms = cpu_irq_ms();
    }

    /// The growth of the per-CPU interrupt times since [`StepLog::start`].
    pub fn finish(&mut self) {
        let now = cpu_irq_ms();
        self.cpu_irq_ms = now.iter().zip(self.cpu_irq_ms.iter()).map(|(a, b)| (a.0 - b.0, a.1 - b.1)).collect();
    }

    /// Write the kept rows to `TCPLAB_EMU_STEPLOG` (tab-separated: start_ns, dur_ns, kind, cpu,
    /// arg), if it is set.
    pub fn write(&self) {
        let Some(path) = std::env::var_os("TCPLAB_EMU_STEPLOG") else { return };
        let mut s = String::from("start_ns\tdur_ns\tkind\tcpu\targ\n");
        for (t, d, k, c, a) in &self.rows {
            s.push_str(&format!("{t}\t{d}\t{}\t{c}\t{a}\n", k.name()));
        }
        let _ = std::fs::write(path, s);
    }

    /// Per kind: (name, count, summed ms) of the slow steps.
    pub fn summary(&self) -> Vec<(&'static str, u64, f64)> {
        [Step::Write, Step::Read, Step::Advance, Step::Sleep, Step::Progress].iter().map(|&k| (k.name(), self.counts[k as usize].0, self.counts[k as usize].1 as f64 / 1e6)).collect()
    }
}

/// Per CPU: the time spent in hard interrupts and softirqs so far, in ms (/proc/stat's `irq`
/// and `softirq` columns, USER_HZ ticks).
pub fn cpu_irq_ms() -> Vec<(f64, f64)> {
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let Ok(s) = std::fs::read_to_string("/proc/stat") else { return Vec::new() };
    s.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(|b| b.is_ascii_digit()))
        .map(|l| {
            let f: Vec<f64> = l.split_whitespace().skip(1).map(|x| x.parse().unwrap_or(0.0)).collect();
            (f.get(5).copied().unwrap_or(0.0) * 1e3 / hz, f.get(6).copied().unwrap_or(0.0) * 1e3 / hz)
        })
        .collect()
}
