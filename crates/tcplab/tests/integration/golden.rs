//! Results unchanged by speed work (issue 13): every scenario in `scenarios/`, alone and with each
//! reproduction variant's `set` overrides, must give a summary.json byte-identical (but for
//! `wall_s`) to the one the pre-rewrite engine (commit 255c22c) gave. The digests (FNV-1a 64 of
//! the summary text without its `wall_s` line) and event counts live in `tests/golden/summaries.txt`.
//!
//! `TCPLAB_GOLDEN_EDITED=1` also compares scenarios edited since (a rewrite meant to keep their
//! results, such as templates, must match the old digests).
//! `TCPLAB_GOLDEN_WRITE=1 cargo test --release -p tcplab --test integration golden::` rewrites the file (only
//! ever from a commit whose results are known good). The cases marked `long` in that file (over
//! ~3 s each) run only with `TCPLAB_GOLDEN_LONG=1` (`make test-golden`); the rest run in `make test`.
//! `TCPLAB_GOLDEN_DUMP=DIR` also writes each compared summary (without `wall_s`) to
//! `DIR/<case>.json`, for diffing two builds when a change is meant to alter a known field only
//! (e.g. `events`, when fewer timer events are scheduled for the same results).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use tcplab::run::run_text;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

/// (case name, scenario file, overrides) for every scenario file and every reproduction variant.
fn cases() -> Vec<(String, PathBuf, Vec<String>)> {
    let root = repo().join("scenarios");
    let mut files = Vec::new();
    toml_files(&root, &mut files);
    let rel = |p: &Path| p.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
    let mut out = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap();
        let is_sweep = doc.contains_key("title") && doc.contains_key("scenario") || doc.contains_key("variants");
        if !is_sweep {
            out.push((rel(f), f.clone(), Vec::new()));
            continue;
        }
        let Some(variants) = doc.get("variants").and_then(|v| v.as_array()) else { continue };
        let default_scen = doc.get("scenario").and_then(|s| s.as_str());
        for v in variants {
            let t = v.as_table().unwrap();
            let name = t.get("name").and_then(|n| n.as_str()).unwrap_or("?");
            // Emulated rows run in real time against the kernel: not simulator results.
            if t.get("emulate").and_then(|e| e.as_bool()) == Some(true) {
                continue;
            }
            let Some(scen) = t.get("scenario").and_then(|s| s.as_str()).or(default_scen) else { continue };
            let scen_path = f.parent().unwrap().join(scen);
            let overrides: Vec<String> = t
                .get("set")
                .and_then(|s| s.as_table())
                .map(|s| s.iter().map(|(k, v)| format!("{k}={v}")).collect())
                .unwrap_or_default();
            out.push((format!("{}#{name}", rel(f)), scen_path, overrides));
        }
    }
    out
}

fn golden_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/summaries.txt")
}

/// `case<TAB>input digest<TAB>digest<TAB>events<TAB>short|long`
fn read_golden() -> BTreeMap<String, (String, String, u64, bool)> {
    let text = std::fs::read_to_string(golden_path()).expect("tests/golden/summaries.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), (f[1].to_string(), f[2].to_string(), f[3].parse().unwrap(), f[4] == "long"))
        })
        .collect()
}

/// Digest of the input (scenario text and overrides): a scenario edited after the golden file
/// was written is reported, not compared.
fn input_digest(file: &Path, overrides: &[String]) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    format!("{:016x}", fnv1a(&format!("{text}\n{}", overrides.join("\n"))))
}

fn digest_of(name: &str, file: &Path, overrides: &[String]) -> (String, u64) {
    let text = std::fs::read_to_string(file).unwrap();
    let r = run_text(&text, &file.to_string_lossy(), None, overrides)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let body: String = r.summary.to_json().lines().filter(|l| !l.trim_start().starts_with("\"wall_s\"")).collect::<Vec<_>>().join("\n");
    if let Ok(dir) = std::env::var("TCPLAB_GOLDEN_DUMP") {
        let path = Path::new(&dir).join(format!("{}.json", name.replace(['/', '#'], "__")));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(path, &body).unwrap();
    }
    (format!("{:016x}", fnv1a(&body)), r.summary.events)
}

#[test]
fn summaries_identical_to_pre_rewrite_engine() {
    let all = cases();
    if std::env::var("TCPLAB_GOLDEN_WRITE").is_ok() {
        let mut lines = vec![
            "# case\tFNV-1a 64 of scenario text + overrides\tFNV-1a 64 of summary.json without wall_s\tevents\tshort|long (written by tests/golden.rs)".to_string(),
        ];
        // Cases whose input is unchanged keep their line (not rerun); a file the simulator does
        // not run (an emulation-only scenario) is left out, as the compare mode leaves it.
        let old = if golden_path().exists() { read_golden() } else { BTreeMap::new() };
        for (name, file, ov) in &all {
            let input = input_digest(file, ov);
            if let Some((i, d, ev, long)) = old.get(name).filter(|o| o.0 == input) {
                lines.push(format!("{name}\t{i}\t{d}\t{ev}\t{}", if *long { "long" } else { "short" }));
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            if let Err(e) = tcplab::run::prepare(&text, &file.to_string_lossy(), None, ov) {
                eprintln!("note: {name} not written: {e}");
                continue;
            }
            let t0 = Instant::now();
            let (d, ev) = digest_of(name, file, ov);
            let long = t0.elapsed().as_secs_f64() > 3.0;
            lines.push(format!("{name}\t{}\t{d}\t{ev}\t{}", input_digest(file, ov), if long { "long" } else { "short" }));
            eprintln!("{name} {:.2} s", t0.elapsed().as_secs_f64());
        }
        std::fs::create_dir_all(golden_path().parent().unwrap()).unwrap();
        std::fs::write(golden_path(), lines.join("\n") + "\n").unwrap();
        return;
    }
    let golden = read_golden();
    let run_long = std::env::var("TCPLAB_GOLDEN_LONG").is_ok();
    let mut todo = Vec::new();
    for (name, file, ov) in &all {
        let Some((input, want, want_events, long)) = golden.get(name) else {
            // A scenario added after the golden file was written: nothing to compare with.
            eprintln!("note: {name} has no golden digest");
            continue;
        };
        if *long && !run_long {
            continue;
        }
        // TCPLAB_GOLDEN_EDITED=1 compares edited scenarios too: a rewrite that must not change
        // results (e.g. a file rewritten with templates) is checked against the old digest.
        if input != &input_digest(file, ov) && std::env::var("TCPLAB_GOLDEN_EDITED").is_err() {
            eprintln!("note: {name} was edited after the golden file was written; not compared");
            continue;
        }
        todo.push((name, file, ov, want, want_events));
    }
    // The cases are independent runs: one thread per core takes the next case (this one test is
    // most of `cargo test`'s run time, and cargo runs one test binary at a time).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(todo.len().max(1));
    let mut failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut failed = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((name, file, ov, want, want_events)) = todo.get(i) else { break };
                        let (d, ev) = digest_of(name, file, ov);
                        if &d != *want {
                            failed.push(format!("{name}: digest {d} (events {ev}), golden {want} (events {want_events})"));
                        }
                    }
                    failed
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a golden case panicked")).collect()
    });
    failures.sort();
    let checked = todo.len();
    assert!(checked >= 10, "only {checked} golden cases ran");
    assert!(failures.is_empty(), "summaries changed:\n{}", failures.join("\n"));
}
