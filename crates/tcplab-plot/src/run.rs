//! A finished run directory as the graphs read it, as `tcplab.rundir.RunData` reads it (same checks,
//! same messages): the completion marker verified (every file's size and SHA-256), summary.json,
//! and the trace columns a graph draws through [`crate::parquet_read`]. Source: the run directory
//! contract (python/tcplab/rundir.py, docs/outputs.md). Deviations: a link given by its scenario
//! name (not its "a->b" direction) is not resolved here; the caller hands such a request to Python.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::parquet_read::{self, Values};
use crate::PlotError;

pub const KB: f64 = 1024.0;
const MARKER: &str = "COMPLETE.json";

/// Named columns of one length: numbers as f64, strings as their values.
#[derive(Default, Debug, Clone)]
pub struct Cols {
    pub num: HashMap<String, Vec<f64>>,
    pub str: HashMap<String, Vec<String>>,
    pub len: usize,
}

impl Cols {
    pub fn f(&self, name: &str) -> &[f64] {
        self.num.get(name).map(|v| v.as_slice()).unwrap_or(&[])
    }
    pub fn s(&self, name: &str) -> &[String] {
        self.str.get(name).map(|v| v.as_slice()).unwrap_or(&[])
    }
    /// The rows where `keep` is true, in order.
    pub fn take(&self, keep: &[bool]) -> Cols {
        let pick = |v: &Vec<f64>| v.iter().zip(keep).filter(|(_, k)| **k).map(|(x, _)| *x).collect();
        let picks = |v: &Vec<String>| v.iter().zip(keep).filter(|(_, k)| **k).map(|(x, _)| x.clone()).collect();
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

/// `tcplab.rundir.verify`: every file the marker lists, with its size and SHA-256.
fn verify(d: &Path) -> Result<(), PlotError> {
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
    for f in files {
        let (Some(name), Some(size), Some(digest)) = (f["name"].as_str(), f["bytes"].as_u64(), f["sha256"].as_str()) else {
            return Err(err(format!("{}: unreadable completion marker (an entry without name, bytes, sha256)", m.display())));
        };
        let p = d.join(name);
        if name.contains('/') || name.starts_with('.') || !p.is_file() {
            return Err(err(format!("{}: listed in {MARKER} but missing; the run directory is incomplete", p.display())));
        }
        let same = std::fs::metadata(&p).map(|md| md.len() == size).unwrap_or(false) && sha256(&p).map(|h| h == digest).unwrap_or(false);
        if !same {
            return Err(err(format!("{}: changed since the run wrote it (size or SHA-256 differs from {MARKER})", p.display())));
        }
    }
    Ok(())
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
        verify(dir)?;
        Run::open(dir)
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
        Ok(Run { dir: dir.to_path_buf(), summary })
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
        let table = parquet_read::read(&p.to_string_lossy(), &want, filter).map_err(|e| err(format!("{}: cannot read {what}: {e}", p.display())))?;
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
                    let vals = codes.iter().enumerate().map(|(i, &k)| if nulls.get(i) == Some(&1) { String::new() } else { cats.get(k as usize).cloned().unwrap_or_default() }).collect();
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
    pub fn intervals(&self, link: &str) -> Option<Cols> {
        if !self.has("queue_intervals.parquet") {
            return None;
        }
        let p = self.dir.join("queue_intervals.parquet");
        let want: Vec<String> = ["link", "t_s", "min_pkts", "max_pkts", "avg_pkts", "aqm_avg_pkts"].iter().map(|s| s.to_string()).collect();
        let t = parquet_read::read(&p.to_string_lossy(), &want, Some(("link", link))).ok()?;
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
