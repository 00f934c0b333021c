//! The run directory, written as `tcplab.api.Run.save` writes it: every file into a hidden
//! temporary directory beside OUT (`.NAME.tmp-*`), sealed with COMPLETE.json (each file's name,
//! size and SHA-256, as `tcplab.rundir.seal`), then swapped for OUT in one rename. Until then a
//! previous run directory at OUT stays as it was; a failed or interrupted run removes its
//! temporary directory.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use tcplab::sim::Simulation;

use crate::durable::{self, Budget, Sink, Written};
use crate::{os_failure, Failure};

/// Files a run directory may hold that tcplab wrote (`tcplab.api._RUN_FILES`).
const RUN_FILES: [&str; 9] = [
    "summary.json", "scenario.toml", "trace_tcp.parquet", "trace_cam.parquet", "trace_link.parquet", "queue_intervals.parquet",
    "COMPLETE.json", "report.html", "plots",
];

/// OUT may be created, or replaced if it is a run directory tcplab made (`tcplab.api._check_replaceable`).
pub fn check_replaceable(out: &Path) -> Result<(), Failure> {
    let Ok(meta) = fs::symlink_metadata(out) else { return Ok(()) };
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(Failure::error(format!(
            "{}: exists and is not a directory; refusing to replace it with a run directory",
            out.display()
        )));
    }
    let entries = fs::read_dir(out).map_err(|e| os_failure(out, &e))?;
    let names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !(n.starts_with("pcap_") && n.ends_with(".pcap")))
        .collect();
    let all_run_files = names.iter().all(|n| RUN_FILES.contains(&n.as_str()));
    if !names.is_empty() && !names.iter().any(|n| n == "COMPLETE.json") && !all_run_files {
        return Err(Failure::error(format!(
            "{}: exists and is not a tcplab run directory ({} other entries); refusing to replace it (choose another --out or remove it)",
            out.display(),
            names.len()
        )));
    }
    Ok(())
}

/// The temporary directory a run is written into; removed on drop unless it became OUT.
pub struct Staging {
    out: PathBuf,
    parent: PathBuf,
    dir: Option<PathBuf>,
    /// The helper threads its files may use (`durable.rs`).
    budget: Budget,
    /// The files written through a [`durable::Sink`]: hashed, and their flushes under way.
    written: Vec<Written>,
}

impl Staging {
    pub fn new(out: &Path) -> Result<Staging, Failure> {
        let abs = std::path::absolute(out).map_err(|e| os_failure(out, &e))?;
        let parent = abs.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
        fs::create_dir_all(&parent).map_err(|e| os_failure(&parent, &e))?;
        let name = out.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let dir = make_temp_dir(&parent, &format!(".{name}.tmp-"))?;
        Ok(Staging { out: out.to_path_buf(), parent, dir: Some(dir), budget: Budget::new(durable::MAX_THREADS), written: Vec::new() })
    }

    pub fn path(&self) -> &Path {
        self.dir.as_deref().expect("staging directory")
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(d) = self.dir.take() {
            let _ = fs::remove_dir_all(d);
        }
    }
}

/// `tempfile.mkdtemp(prefix, dir)`: a new directory, mode 0700, with a random suffix.
fn make_temp_dir(parent: &Path, prefix: &str) -> Result<PathBuf, Failure> {
    use std::os::unix::fs::DirBuilderExt;
    let mut seed = std::process::id() as u64 ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    for _ in 0..100 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let suffix: String = (0..8).map(|i| b"abcdefghijklmnopqrstuvwxyz0123456789_"[((seed >> (i * 7)) % 37) as usize] as char).collect();
        let p = parent.join(format!("{prefix}{suffix}"));
        match fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(os_failure(parent, &e)),
        }
    }
    Err(Failure::error(format!("{}: cannot make a temporary directory", parent.display())))
}

/// `pcap_<from>-<to>.pcap` for link direction "<from>-><to>" (`tcplab.api.pcap_file_name`).
pub fn pcap_file_name(link: &str) -> String {
    let (a, b) = link.split_once("->").unwrap_or((link, ""));
    let clean = |s: &str| s.chars().map(|c| if c.is_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect::<String>();
    format!("pcap_{}-{}.pcap", clean(a), clean(b))
}

/// A JSON string as Python's `json.dumps` writes it (ASCII only).
pub(crate) fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// COMPLETE.json (`tcplab.rundir.seal`): each file flushed to disk, then listed with its size
/// and SHA-256; the marker written and flushed last.
///
/// The files in `written` were hashed as they were written and their flushes started when they
/// were closed (`durable.rs`); the others are read and hashed here while they are flushed, at
/// once, on at most [`durable::MAX_THREADS`] threads: every file is still on disk before the
/// marker is written, but a journaling filesystem commits the concurrent flushes together. One
/// after the other, each fsync was a journal commit and a disk flush of its own: 4-12 ms each on
/// the shared machine, 10-25 % of a 16-flow `tcplab run` (benches/2026-11-29-proc16.md).
fn seal(dir: &Path, names: &[String], written: Vec<Written>) -> std::io::Result<()> {
    let mut known: std::collections::HashMap<String, Written> = written.into_iter().map(|w| (w.name.clone(), w)).collect();
    let others: Vec<&String> = names.iter().filter(|n| !known.contains_key(*n)).collect();
    let files = others.iter().map(|name| fs::File::open(dir.join(name))).collect::<std::io::Result<Vec<fs::File>>>()?;
    let (hashed, synced) = durable::with_syncs(&files, durable::MAX_THREADS, || {
        let mut digests = std::collections::HashMap::new();
        for (name, f) in others.iter().zip(&files) {
            let mut h = Sha256::new();
            // 64 KB at a time: a 1 MB buffer was half the heap of a small run.
            let mut r = std::io::BufReader::with_capacity(1 << 16, f);
            let bytes = std::io::copy(&mut r, &mut h)?;
            digests.insert(name.as_str(), durable::Digest256 { bytes, sha256: h.finalize().into() });
        }
        Ok::<_, std::io::Error>(digests)
    });
    // every flush is waited for (the files stay open until then), even after a failed read
    let mut late = Vec::new();
    let mut waited = Ok(());
    let mut digests = std::collections::HashMap::new();
    for name in names {
        if let Some(w) = known.remove(name) {
            match w.wait() {
                Ok((d, unsynced)) => {
                    late.extend(unsynced);
                    digests.insert(name.as_str(), d);
                }
                Err(e) => waited = waited.and(Err(e)),
            }
        }
    }
    let ((), late_synced) = durable::with_syncs(&late, durable::MAX_THREADS, || ());
    synced?;
    waited?;
    late_synced?;
    digests.extend(hashed?);
    let entries: Vec<String> = names
        .iter()
        .map(|name| {
            let d = &digests[name.as_str()];
            format!("  {{\n   \"name\": {},\n   \"bytes\": {},\n   \"sha256\": \"{}\"\n  }}", json_str(name), d.bytes, d.hex())
        })
        .collect();
    let text = format!("{{\n \"tcplab_version\": {},\n \"files\": [\n{}\n ]\n}}\n", json_str(tcplab::VERSION), entries.join(",\n"));
    let mut f = fs::File::create(dir.join("COMPLETE.json"))?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// The process's umask, read once: reading it sets it for a moment, which another thread's
/// file creation must not see (`tcplab reproduce` saves runs on several threads).
pub(crate) fn umask() -> u32 {
    static UMASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    // SAFETY: umask is set and restored at once; the first call comes before any thread starts.
    *UMASK.get_or_init(|| unsafe {
        let m = libc::umask(0);
        libc::umask(m);
        m as u32
    })
}

/// Atomically swap two directory entries (renameat2 RENAME_EXCHANGE); false where unsupported.
fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let ca = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let cb = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: two valid C strings; the call only renames.
    let r = unsafe { libc::renameat2(libc::AT_FDCWD, ca.as_ptr(), libc::AT_FDCWD, cb.as_ptr(), libc::RENAME_EXCHANGE) };
    if r == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EINVAL) => Ok(false),
        _ => Err(e),
    }
}

/// Write scenario.toml (the scenario as run) into the staging directory: before the run, so
/// the text need not be held through it (1.9 MB at 4,096 flows); its flush to disk goes on
/// during the run.
pub fn write_scenario(staging: &mut Staging, text: &str) -> Result<(), Failure> {
    let shown = staging.out.join("scenario.toml");
    let written = fs::File::create(staging.path().join("scenario.toml")).and_then(|f| {
        let mut sink = Sink::new("scenario.toml", f, &staging.budget);
        sink.write_all(text.as_bytes())?;
        sink.finish()
    });
    staging.written.push(written.map_err(|e| os_failure(&shown, &e))?);
    Ok(())
}

/// Write summary.json into the staging directory, streamed from the finished simulation (and
/// hashed on its way, on a thread of its own past the first megabyte).
pub fn write_summary(staging: &mut Staging, sim: &Simulation, wall_s: f64) -> Result<(), Failure> {
    let shown = staging.out.join("summary.json");
    let written = fs::File::create(staging.path().join("summary.json")).and_then(|f| {
        let mut sink = Sink::new("summary.json", f, &staging.budget);
        tcplab::summary::write_json_streamed(sim, wall_s, &mut sink)?;
        sink.finish()
    });
    staging.written.push(written.map_err(|e| os_failure(&shown, &e))?);
    Ok(())
}

/// Finish the run directory: beside summary.json ([`write_summary`]), scenario.toml
/// ([`write_scenario`]) and the trace files (already streamed into the staging directory), the
/// pcaps and COMPLETE.json; then OUT is replaced in one rename.
pub fn save(mut staging: Staging, trace_files: Vec<&'static str>, sim: &mut Simulation) -> Result<(), Failure> {
    let out = staging.out.clone();
    let tmp = staging.path().to_path_buf();
    let io = |name: &str, e: std::io::Error| os_failure(&out.join(name), &e);
    let mut names: Vec<String> = vec!["summary.json".into(), "scenario.toml".into()];
    names.extend(trace_files.iter().map(|s| s.to_string()));
    let mut pcaps: Vec<(String, Vec<u8>)> = sim.links.iter_mut().filter_map(|l| l.monitor.pcap.take().map(|c| (l.name.clone(), c.pcap.bytes))).collect();
    pcaps.sort_by(|a, b| a.0.cmp(&b.0));
    for (link, bytes) in pcaps {
        let fname = pcap_file_name(&link);
        fs::write(tmp.join(&fname), bytes).map_err(|e| io(&fname, e))?;
        names.push(fname);
    }
    seal(&tmp, &names, std::mem::take(&mut staging.written)).map_err(|e| io("COMPLETE.json", e))?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755 & !umask())).map_err(|e| io("", e))?;
    if fs::symlink_metadata(&out).is_ok() {
        check_replaceable(&out)?;
        if exchange(&tmp, &out).map_err(|e| os_failure(&out, &e))? {
            // `tmp` now names the previous run directory: the drop removes it.
        } else {
            let old = make_temp_dir(&staging.parent, &format!(".{}.old-", out.file_name().unwrap_or_default().to_string_lossy()))?;
            fs::rename(&out, old.join(out.file_name().unwrap_or_default())).map_err(|e| os_failure(&out, &e))?;
            fs::rename(&tmp, &out).map_err(|e| os_failure(&out, &e))?;
            staging.dir = Some(old);
        }
    } else {
        fs::rename(&tmp, &out).map_err(|e| os_failure(&out, &e))?;
        staging.dir = None;
    }
    if let Ok(d) = fs::File::open(&staging.parent) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marker lists every file with its size and SHA-256, in the order given.
    #[test]
    fn seal_lists_each_file_with_its_digest() {
        let dir = make_temp_dir(&std::env::temp_dir(), ".tcplab-seal-test-").unwrap_or_else(|f| panic!("{}", f.message));
        fs::write(dir.join("a.txt"), b"abc").unwrap();
        fs::write(dir.join("b.txt"), b"").unwrap();
        // c.txt as summary.json is written: hashed on its way
        let budget = Budget::new(durable::MAX_THREADS);
        let mut sink = Sink::new("c.txt", fs::File::create(dir.join("c.txt")).unwrap(), &budget);
        sink.write_all(b"abc").unwrap();
        let c = sink.finish().unwrap();
        let r = seal(&dir, &["a.txt".into(), "c.txt".into(), "b.txt".into()], vec![c]);
        let marker = fs::read_to_string(dir.join("COMPLETE.json"));
        let missing = seal(&dir, &["a.txt".into(), "none.txt".into()], Vec::new());
        let _ = fs::remove_dir_all(&dir);
        r.unwrap();
        let m: serde_json::Value = serde_json::from_str(&marker.unwrap()).unwrap();
        let files = m["files"].as_array().unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(files[0]["name"], "a.txt");
        assert_eq!(files[0]["bytes"], 3);
        assert_eq!(files[0]["sha256"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(files[1]["name"], "c.txt");
        assert_eq!(files[1]["sha256"], files[0]["sha256"]);
        assert_eq!(files[2]["name"], "b.txt");
        assert_eq!(files[2]["bytes"], 0);
        assert_eq!(files[2]["sha256"], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(missing.expect_err("a missing file fails the seal").kind(), std::io::ErrorKind::NotFound);
    }
}
