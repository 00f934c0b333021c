//! A finished run directory as the graphs read it, as `tcplab.rundir.RunData` reads it (same checks,
//! same messages): the completion marker verified (every file's size; the SHA-256 of summary.json
//! and of each file a graph reads, when it first reads it), summary.json,
//! and the trace columns a graph draws through [`crate::parquet_read`]. Source: the run directory
//! contract (python/tcplab/rundir.py, docs/outputs.md). Deviations: a link given by its scenario
//! name (not its "a->b" direction) is not resolved here; the caller hands such a request to Python.
//! A file the graph does not read is checked by its size only, not its SHA-256 (RunData hashes
//! every file): it cannot change the graph, and hashing a whole 12 MB run was half of a plot.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::parquet_read::{self, Column, Table, Values};
use crate::PlotError;

pub const KB: f64 = 1024.0;
const MARKER: &str = "COMPLETE.json";

/// One row's value of a string column: shared with every other row holding the same string (a
/// trace's kinds, sides and names are a few distinct strings; a `String` per row was a third of
/// a TCP graph's time in the allocator, issue 28). Compares with `&str` and `String` as a string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Str(Arc<str>);

impl Str {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

/// Named columns of one length: numbers as f64, strings as their values.
#[derive(Default, Debug, Clone)]
pub struct Cols {
    pub num: HashMap<String, Vec<f64>>,
    pub str: HashMap<String, Vec<Str>>,
    pub len: usize,
}

impl Cols {
    pub fn f(&self, name: &str) -> &[f64] {
        self.num.get(name).map(|v| v.as_slice()).unwrap_or(&[])
    }
    pub fn s(&self, name: &str) -> &[Str] {
        self.str.get(name).map(|v| v.as_slice()).unwrap_or(&[])
    }
    /// The rows where `keep` is true, in order.
    pub fn take(&self, keep: &[bool]) -> Cols {
        let pick = |v: &Vec<f64>| v.iter().zip(keep).filter(|(_, k)| **k).map(|(x, _)| *x).collect();
        let picks = |v: &Vec<Str>| v.iter().zip(keep).filter(|(_, k)| **k).map(|(x, _)| x.clone()).collect();
        Cols {
            num: self.num.iter().map(|(k, v)| (k.clone(), pick(v))).collect(),
            str: self.str.iter().map(|(k, v)| (k.clone(), picks(v))).collect(),
            len: keep.iter().filter(|k| **k).count(),
        }
    }
    /// The rows whose string column `col` is one of `values`.
    pub fn where_in(&self, col: &str, values: &[&str]) -> Cols {
        let keep: Vec<bool> = self.s(col).iter().map(|v| values.contains(&v.as_str())).collect();
        self.take(&keep)
    }
    /// In time order (a stable sort on t_s), unless already.
    fn time_sorted(self) -> Cols {
        let t = self.f("t_s");
        if t.windows(2).all(|w| w[0] <= w[1]) {
            return self;
        }
        let mut idx: Vec<usize> = (0..self.len).collect();
        idx.sort_by(|&a, &b| t[a].total_cmp(&t[b]));
        Cols {
            num: self.num.iter().map(|(k, v)| (k.clone(), idx.iter().map(|&i| v[i]).collect())).collect(),
            str: self.str.iter().map(|(k, v)| (k.clone(), idx.iter().map(|&i| v[i].clone()).collect())).collect(),
            len: self.len,
        }
    }
}

pub struct Run {
    pub dir: PathBuf,
    pub summary: Value,
    /// With [`Run::shared`]: the trace columns decoded so far, for the next graph.
    cache: Option<ColumnCache>,
    /// The files [`Run::load`] found listed in the completion marker and no graph has read yet:
    /// their SHA-256 is checked when one does ([`Run::verified`]).
    unverified: Mutex<Listed>,
}

/// A trace file's columns decoded whole, once, for every graph of a report (issue 28: each TCP
/// graph decoded the whole TCP trace again for its flow's rows, ~0.16 s a graph on a 6-flow 60 s
/// run). Per file a lock: a graph waits while another decodes the columns it needs too, then
/// takes its rows from them.
#[derive(Default)]
struct ColumnCache {
    files: Mutex<HashMap<PathBuf, Arc<Mutex<FileColumns>>>>,
}

#[derive(Default)]
struct FileColumns {
    /// Every column of the file, in schema order (None until the file is first read).
    names: Option<Vec<String>>,
    cols: HashMap<String, Arc<Column>>,
}

/// The rows `sel` of a column (all of them when None), as [`parquet_read::read`] gives them.
fn take_column(c: &Column, sel: Option<&[usize]>) -> Column {
    fn pick<T: Clone>(v: &[T], sel: Option<&[usize]>) -> Vec<T> {
        match sel {
            None => v.to_vec(),
            Some(s) => s.iter().map(|&i| v[i].clone()).collect(),
        }
    }
    let values = match &c.values {
        Values::F64(v) => Values::F64(pick(v, sel)),
        Values::I64(v) => Values::I64(pick(v, sel)),
        Values::Str(v, cats) => Values::Str(pick(v, sel), cats.clone()),
    };
    let nulls = c.nulls.as_ref().map(|n| pick(n, sel)).filter(|n| n.iter().any(|&b| b != 0));
    Column { name: c.name.clone(), values, nulls }
}

impl ColumnCache {
    /// [`parquet_read::read`] of `path`, from the columns decoded so far (decoding those missing).
    fn read(&self, path: &Path, columns: &[String], filter: Option<(&str, &str)>) -> Result<Table, String> {
        let entry = self.files.lock().unwrap_or_else(|e| e.into_inner()).entry(path.to_path_buf()).or_default().clone();
        let (names, want, by, n) = {
            let mut f = entry.lock().unwrap_or_else(|e| e.into_inner());
            let mut need: Vec<String> = Vec::new();
            for c in columns.iter().map(String::as_str).chain(filter.map(|(c, _)| c)) {
                if !f.cols.contains_key(c) && f.names.as_ref().is_none_or(|n| n.iter().any(|x| x == c)) && !need.iter().any(|x| x == c) {
                    need.push(c.to_string());
                }
            }
            if f.names.is_none() || !need.is_empty() {
                let t = parquet_read::read(&path.to_string_lossy(), &need, None)?;
                f.names = Some(t.names);
                for c in t.columns {
                    f.cols.insert(c.name.clone(), Arc::new(c));
                }
            }
            let want: Vec<Arc<Column>> = columns.iter().filter_map(|c| f.cols.get(c).cloned()).collect();
            let by = match filter {
                None => None,
                Some((c, _)) => Some(f.cols.get(c).cloned().ok_or_else(|| format!("no column {c} to select rows by"))?),
            };
            let n = f.cols.values().next().map_or(0, |c| match &c.values {
                Values::F64(v) => v.len(),
                Values::I64(v) => v.len(),
                Values::Str(v, _) => v.len(),
            });
            (f.names.clone().unwrap_or_default(), want, by, n)
        };
        let sel: Option<Vec<usize>> = match (by, filter) {
            (Some(by), Some((_, value))) => {
                let Values::Str(codes, cats) = &by.values else {
                    return Err(format!("column {} to select rows by is not a string column", by.name));
                };
                let hit: Vec<bool> = cats.iter().map(|c| c == value).collect();
                let null = |i: usize| by.nulls.as_ref().is_some_and(|n| n[i] != 0);
                Some((0..codes.len()).filter(|&i| !null(i) && hit[codes[i] as usize]).collect())
            }
            _ => None,
        };
        let rows = match &sel {
            Some(s) => s.iter().map(|&i| i as u64).collect(),
            None => (0..n as u64).collect(),
        };
        let columns = want.iter().map(|c| take_column(c, sel.as_deref())).collect();
        Ok(Table { names, rows, columns })
    }
}

fn err(msg: impl Into<String>) -> PlotError {
    PlotError::Error(msg.into())
}

fn sha256(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The files the completion marker lists, each with its size and SHA-256.
type Listed = HashMap<String, (u64, String)>;

/// `tcplab.rundir.verify`, but for the SHA-256s: every file the marker lists is there with its
/// size; the files and their expected digests, for [`Run::verified`] to hash each when a graph
/// first reads it (issue 28: hashing the whole run directory was half of a `tcplab plot`'s
/// instructions; a graph now hashes what it reads, summary.json always).
fn check_marker(d: &Path) -> Result<Listed, PlotError> {
    let m = d.join(MARKER);
    if !m.is_file() {
        return Err(err(format!(
            "{}: not a complete tcplab run directory (no {MARKER}: the run that wrote it did not finish, or an older tcplab wrote it); run it again",
            d.display()
        )));
    }
    let text = std::fs::read_to_string(&m).map_err(|e| err(format!("{}: unreadable completion marker ({e})", m.display())))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| err(format!("{}: unreadable completion marker ({e})", m.display())))?;
    let files = v.get("files").and_then(Value::as_array).ok_or_else(|| err(format!("{}: unreadable completion marker ('files')", m.display())))?;
    let mut listed = Listed::new();
    for f in files {
        let (Some(name), Some(size), Some(digest)) = (f["name"].as_str(), f["bytes"].as_u64(), f["sha256"].as_str()) else {
            return Err(err(format!("{}: unreadable completion marker (an entry without name, bytes, sha256)", m.display())));
        };
        let p = d.join(name);
        if name.contains('/') || name.starts_with('.') || !p.is_file() {
            return Err(err(format!("{}: listed in {MARKER} but missing; the run directory is incomplete", p.display())));
        }
        if !std::fs::metadata(&p).is_ok_and(|md| md.len() == size) {
            return Err(changed(&p));
        }
        listed.insert(name.to_string(), (size, digest.to_string()));
    }
    Ok(listed)
}

fn changed(p: &Path) -> PlotError {
    err(format!("{}: changed since the run wrote it (size or SHA-256 differs from {MARKER})", p.display()))
}

/// The file has the size and SHA-256 the marker lists.
fn same_file(p: &Path, size: u64, digest: &str) -> Result<(), PlotError> {
    let same = std::fs::metadata(p).is_ok_and(|md| md.len() == size) && sha256(p).is_ok_and(|h| h == digest);
    if same { Ok(()) } else { Err(changed(p)) }
}

fn trace_switch(file: &str) -> Option<&'static str> {
    match file {
        "trace_tcp.parquet" => Some("the run had TCP tracing off: run it again with run.trace.tcp = true (or --set run.trace.tcp=true)"),
        "trace_link.parquet" => Some(
            "the run traced no link: run it again with run.trace.links = [\"a->b\"] or [\"all\"] (or --set 'run.trace.links=[\"all\"]')",
        ),
        _ => None,
    }
}

impl Run {
    /// `RunData.load`: a directory, complete (its marker verified), with a summary listing flows and links.
    pub fn load(dir: &Path) -> Result<Run, PlotError> {
        if !dir.is_dir() {
            return Err(err(format!("{}: not a directory (expected a tcplab run directory)", dir.display())));
        }
        let mut listed = check_marker(dir)?;
        if let Some((size, digest)) = listed.remove("summary.json") {
            same_file(&dir.join("summary.json"), size, &digest)?; // before it is parsed
        }
        Ok(Run { unverified: Mutex::new(listed), ..Run::open(dir)? })
    }

    /// `file` of the run directory as the completion marker lists it: its SHA-256 checked the
    /// first time it is asked for (see [`check_marker`]); a file the marker does not list, or
    /// one checked already, passes.
    fn verified(&self, file: &str) -> Result<(), PlotError> {
        let expected = self.unverified.lock().unwrap_or_else(|e| e.into_inner()).remove(file);
        match expected {
            Some((size, digest)) => same_file(&self.dir.join(file), size, &digest),
            None => Ok(()),
        }
    }

    /// A run directory whose completion marker the caller has just verified (`RunData.load`
    /// does, before `tcplab report` asks for its graphs): [`Run::load`] without hashing every
    /// file again (half of one graph's instructions on a 12 MB run).
    pub fn open(dir: &Path) -> Result<Run, PlotError> {
        if !dir.is_dir() {
            return Err(err(format!("{}: not a directory (expected a tcplab run directory)", dir.display())));
        }
        let p = dir.join("summary.json");
        if !p.is_file() {
            return Err(err(format!("{}: no such file (run summary); is {} a tcplab run directory?", p.display(), dir.display())));
        }
        let text = std::fs::read_to_string(&p).map_err(|e| err(format!("{}: {e}", p.display())))?;
        let summary: Value = serde_json::from_str(&text).map_err(|e| err(format!("{}: invalid JSON: {e}", p.display())))?;
        for key in ["flows", "links"] {
            if !summary.get(key).is_some_and(Value::is_array) {
                return Err(err(format!("{}: key '{key}' missing or not a list", p.display())));
            }
        }
        Ok(Run { dir: dir.to_path_buf(), summary, cache: None, unverified: Mutex::default() })
    }

    /// This run with its trace columns decoded once and kept for every later read (the report's
    /// graphs, drawn together: see [`ColumnCache`]); a single plot reads only its flow's rows.
    pub fn shared(self) -> Run {
        Run { cache: Some(ColumnCache::default()), ..self }
    }

    /// [`parquet_read::read`], through the column cache when the run has one.
    fn table(&self, p: &Path, want: &[String], filter: Option<(&str, &str)>) -> Result<Table, String> {
        match &self.cache {
            Some(c) => c.read(p, want, filter),
            None => parquet_read::read(&p.to_string_lossy(), want, filter),
        }
    }

    fn list(&self, key: &str) -> &[Value] {
        self.summary.get(key).and_then(Value::as_array).map(|v| v.as_slice()).unwrap_or(&[])
    }

    pub fn conns(&self) -> Vec<String> {
        self.list("flows").iter().filter_map(|f| f["name"].as_str().map(String::from)).collect()
    }

    pub fn link_names(&self) -> Vec<String> {
        self.list("links").iter().filter_map(|f| f["name"].as_str().map(String::from)).collect()
    }

    pub fn udp_names(&self) -> Vec<String> {
        self.list("udp").iter().filter_map(|f| f["name"].as_str().map(String::from)).collect()
    }

    /// `RunData.flow`: the flow's summary, or the error naming the flows.
    pub fn flow(&self, conn: &str) -> Result<&Value, PlotError> {
        self.list("flows").iter().find(|f| f["name"].as_str() == Some(conn)).ok_or_else(|| {
            let names: Vec<String> = self.conns().iter().map(|c| format!("'{c}'")).collect();
            err(format!("no flow '{conn}' in {}; flows: [{}]", self.dir.join("summary.json").display(), names.join(", ")))
        })
    }

    pub fn link(&self, name: &str) -> Option<&Value> {
        self.list("links").iter().find(|l| l["name"].as_str() == Some(name))
    }

    /// `RunData.bottleneck`: summary["bottleneck"], else the most utilised link.
    pub fn bottleneck(&self) -> Option<String> {
        if let Some(b) = self.summary.get("bottleneck").and_then(Value::as_str).filter(|b| !b.is_empty()) {
            return Some(b.to_string());
        }
        let mut best: Option<(&Value, f64)> = None;
        for l in self.list("links") {
            let u = l["utilization"].as_f64().unwrap_or(0.0);
            if best.is_none_or(|(_, b)| u > b) {
                best = Some((l, u));
            }
        }
        best.and_then(|(l, _)| l["name"].as_str().map(String::from))
    }

    /// summary.json's sim_end_s (None when absent).
    pub fn sim_end(&self) -> Option<f64> {
        self.summary.get("sim_end_s").and_then(Value::as_f64)
    }

    pub fn has(&self, file: &str) -> bool {
        self.dir.join(file).is_file()
    }

    /// `_need`: the file, or the error saying how to record it.
    fn need(&self, file: &str, what: &str) -> Result<PathBuf, PlotError> {
        let p = self.dir.join(file);
        if p.is_file() {
            self.verified(file)?;
            return Ok(p);
        }
        if let Some(how) = trace_switch(file) {
            if self.dir.join("summary.json").is_file() && self.dir.join(MARKER).is_file() {
                return Err(err(format!("{}: no {what} ({file}); {how}", self.dir.display())));
            }
        }
        Err(err(format!("{}: no such file ({what}); is {} a tcplab run directory?", p.display(), self.dir.display())))
    }

    /// Columns `cols` of a trace file, the rows whose `filter.0` is `filter.1` (all when None),
    /// checked as `_check_values` checks them (finite and non-negative numbers), in time order.
    pub fn read(&self, file: &str, what: &str, required: &[&str], cols: &[&str], filter: Option<(&str, &str)>) -> Result<Cols, PlotError> {
        let p = self.need(file, what)?;
        let want: Vec<String> = cols.iter().map(|s| s.to_string()).collect();
        let table = self.table(&p, &want, filter).map_err(|e| err(format!("{}: cannot read {what}: {e}", p.display())))?;
        let missing: Vec<String> = required.iter().filter(|c| !table.names.iter().any(|n| n == *c)).map(|c| format!("'{c}'")).collect();
        if !missing.is_empty() {
            return Err(err(format!("{}: missing column(s) [{}] ({what})", p.display(), missing.join(", "))));
        }
        let mut out = Cols { len: table.rows.len(), ..Default::default() };
        for c in table.columns {
            let nulls = c.nulls.unwrap_or_default();
            let checked = !matches!(c.name.as_str(), "diff_buffers") && !(c.name == "seq" && what == "link trace");
            let num = match c.values {
                Values::F64(v) => v,
                Values::I64(v) => v.into_iter().map(|x| x as f64).collect(),
                Values::Str(codes, cats) => {
                    let cats: Vec<Str> = cats.into_iter().map(|c| Str(c.into())).collect();
                    let none = Str::default();
                    let vals = codes.iter().enumerate().map(|(i, &k)| if nulls.get(i) == Some(&1) { none.clone() } else { cats.get(k as usize).unwrap_or(&none).clone() }).collect();
                    out.str.insert(c.name, vals);
                    continue;
                }
            };
            if checked {
                if let Some(i) = (0..num.len()).find(|&i| nulls.get(i) == Some(&1) || !num[i].is_finite() || num[i] < 0.0) {
                    let shown = if nulls.get(i) == Some(&1) { "None".to_string() } else { crate::figure::g(num[i]) };
                    return Err(err(format!(
                        "{}: column {} row {} holds {shown}; trace values must be finite and non-negative",
                        p.display(),
                        c.name,
                        table.rows[i]
                    )));
                }
            }
            out.num.insert(c.name, num);
        }
        Ok(out.time_sorted())
    }

    /// One connection's TCP trace rows (both sides, split by the caller).
    pub fn tcp(&self, conn: &str, cols: &[&str]) -> Result<Cols, PlotError> {
        let mut all = vec!["conn", "side"];
        all.extend(cols.iter().filter(|c| !all.contains(c)).collect::<Vec<_>>());
        self.read("trace_tcp.parquet", "TCP trace", &["conn", "side", "t_s", "kind"], &all, Some(("conn", conn)))
    }

    /// One link direction's rows of the link trace.
    pub fn link_events(&self, link: &str) -> Result<Cols, PlotError> {
        self.read("trace_link.parquet", "link trace", &["link", "t_s", "event"], &["link", "t_s", "event", "bytes", "qlen_pkts"], Some(("link", link)))
    }

    /// The link monitor's interval series of `link` (queue_intervals.parquet), when the run has one.
    pub fn intervals(&self, link: &str) -> Result<Option<Cols>, PlotError> {
        if !self.has("queue_intervals.parquet") {
            return Ok(None);
        }
        self.verified("queue_intervals.parquet")?;
        Ok(self.interval_rows(link))
    }

    fn interval_rows(&self, link: &str) -> Option<Cols> {
        let p = self.dir.join("queue_intervals.parquet");
        let want: Vec<String> = ["link", "t_s", "min_pkts", "max_pkts", "avg_pkts", "aqm_avg_pkts"].iter().map(|s| s.to_string()).collect();
        let t = self.table(&p, &want, Some(("link", link))).ok()?;
        let mut out = Cols { len: t.rows.len(), ..Default::default() };
        for c in t.columns {
            let nulls = c.nulls.unwrap_or_default();
            let mut v: Vec<f64> = match c.values {
                Values::F64(v) => v,
                Values::I64(v) => v.into_iter().map(|x| x as f64).collect(),
                Values::Str(..) => continue,
            };
            for (i, n) in nulls.iter().enumerate() {
                if *n == 1 {
                    v[i] = f64::NAN;
                }
            }
            out.num.insert(c.name, v);
        }
        Some(out)
    }
}
