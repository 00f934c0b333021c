//! What the native CLI shares with Python's: flag value parsers (strict: a value they do not take
//! goes to argparse, which decides and words the error), numbers printed as Python prints them,
//! paths as `pathlib.Path` writes them, the memory limit and the progress bar.

use std::io::{IsTerminal, Write};
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

/// `--max-memory`: a size as scenario files write it (KB = 1024 B), or TB (`cli/args.py`).
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let t = text.trim();
    match t.strip_suffix("TB") {
        Some(gb) => tcplab::front_api::parse_size(&format!("{gb}GB")).map(|b| b.saturating_mul(1024)),
        None => tcplab::front_api::parse_size(t),
    }
}

/// `--seed`: what Python's `int(text, 0)` reads in its plain forms (decimal without leading
/// zeros, 0x/0o/0b); anything else is argparse's to judge.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let (digits, radix) = match text.get(..2) {
        Some("0x") | Some("0X") => (&text[2..], 16),
        Some("0o") | Some("0O") => (&text[2..], 8),
        Some("0b") | Some("0B") => (&text[2..], 2),
        _ if text.len() > 1 && text.starts_with('0') => return Err("leading zero".into()),
        _ => (text, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err("not a plain whole number".into());
    }
    u64::from_str_radix(digits, radix).map_err(|e| e.to_string())
}

/// `--timeout`: a plain positive finite decimal number of seconds.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let plain = !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    match text.parse::<f64>() {
        Ok(v) if plain && v > 0.0 && v.is_finite() => Ok(v),
        _ => Err("expected a positive number of seconds".into()),
    }
}

/// 80 % of physical memory, as `tcplab.api.default_max_memory`.
pub fn default_max_memory() -> Option<u64> {
    // SAFETY: sysconf reads a system constant.
    let (page, pages) = unsafe { (libc::sysconf(libc::_SC_PAGESIZE), libc::sysconf(libc::_SC_PHYS_PAGES)) };
    (page > 0 && pages > 0).then(|| (page as f64 * pages as f64 * 0.8) as u64)
}

/// Resident memory of this process, from /proc/self/statm. The file is opened once and read
/// again in place at each call: `tcplab run` asks ~200 times a run (each progress slice, for
/// `--max-memory`), and opening it each time cost five system calls where one does.
pub fn rss_bytes() -> Option<u64> {
    use std::os::unix::fs::FileExt;
    static STATM: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let f = STATM.get_or_init(|| std::fs::File::open("/proc/self/statm").ok()).as_ref()?;
    let mut buf = [0u8; 256];
    let n = f.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    let pages: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: as above.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * page.max(1) as u64)
}

/// A path as `str(pathlib.Path(p))` writes it: no `.` parts, no doubled or trailing slashes.
pub fn normalize(p: &Path) -> PathBuf {
    let parts: PathBuf = p.components().filter(|c| !matches!(c, Component::CurDir)).collect();
    if parts.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        parts
    }
}

/// An OS error's reason without Rust's " (os error N)" tail (Python's `strerror`).
pub fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Python's `f"{v:.{nd}f}"` (nan, inf and -inf spelt as Python spells them).
pub fn fixed(v: f64, nd: usize) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v:.nd$}")
    }
}

/// Python's `f"{v:g}"`: six significant digits, trailing zeros dropped; one copy, the graphs'
/// tick labels' (tcplab-plot).
pub use tcplab_plot::figure::g;

/// The run's progress on a terminal: simulated seconds, shown once a run has taken a second
/// and erased when it ends (as `tcplab.progress.SimProgress`); nothing off a terminal.
pub struct Progress {
    t0: Instant,
    tty: bool,
    shown: bool,
    last: Instant,
}

impl Progress {
    pub fn new(t0: Instant) -> Progress {
        Progress { t0, tty: std::io::stderr().is_terminal(), shown: false, last: t0 }
    }

    pub fn update(&mut self, t: f64, end: f64) {
        if !self.tty || self.t0.elapsed().as_secs_f64() < 1.0 || self.last.elapsed().as_secs_f64() < 0.1 {
            return;
        }
        self.last = Instant::now();
        self.shown = true;
        let pct = if end > 0.0 { 100.0 * t / end } else { 100.0 };
        let _ = write!(std::io::stderr(), "\r  simulated {t:.3} s of {end:.3} s {pct:5.1} % [{:.0} s]\x1b[K", self.t0.elapsed().as_secs_f64());
    }

    pub fn done(&mut self) {
        if self.shown {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_matches_python() {
        for (v, s) in [(10.0, "10"), (0.5, "0.5"), (1.25, "1.25"), (1e-5, "1e-05"), (1234567.0, "1.23457e+06"), (0.0001, "0.0001")] {
            assert_eq!(g(v), s);
        }
    }

    #[test]
    fn seeds_python_reads_alike() {
        assert_eq!(parse_seed("0x10"), Ok(16));
        assert_eq!(parse_seed("7"), Ok(7));
        assert_eq!(parse_seed("0"), Ok(0));
        assert!(parse_seed("010").is_err()); // Python refuses it: argparse words the error
        assert!(parse_seed("-1").is_err());
        assert!(parse_seed("18446744073709551616").is_err());
    }

    #[test]
    fn paths_as_pathlib_writes_them() {
        assert_eq!(normalize(Path::new("./out//x/")), PathBuf::from("out/x"));
        assert_eq!(normalize(Path::new("./")), PathBuf::from("."));
    }
}
