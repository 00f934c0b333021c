//! The runs of a reproduction (`scenarios/<study>/<name>/reproduce.toml`), read as
//! `tcplab.reproduce.Spec` and `tcplab.reproduce.reproduce` read them: every variant over the
//! grid's axis points (or named `[points]`) × seeds, each run's overrides and its scenario as
//! resolved by the core (`_core.validate`, the text the run hash is taken of).
//!
//! Only what the runs need is read here; the Python step (which computes the comparison, checks
//! `[derived]` and `[[claims]]` and writes every message) reads the whole file again. Anything
//! this reader does not take as the Python one does (a key it does not know, a value of another
//! type, a scenario that does not resolve) is `None`: the command line then goes to the Python
//! CLI as it is, which runs it or words the error.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toml_edit::{DocumentMut, Item, Value};

use tcplab::run::{prepare_with_limits, Limits, Traces, PYTHON_RUNTIME_BYTES};

/// A TOML value in the order the file gives it (Python's `tomllib` dicts keep that order).
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<Val>),
    Tab(Vec<(String, Val)>),
}

impl Val {
    fn get(&self, key: &str) -> Option<&Val> {
        match self {
            Val::Tab(t) => t.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn table(&self) -> Option<&[(String, Val)]> {
        match self {
            Val::Tab(t) => Some(t),
            _ => None,
        }
    }

    fn str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }
}

fn from_value(v: &Value) -> Option<Val> {
    Some(match v {
        Value::String(s) => Val::Str(s.value().clone()),
        Value::Integer(i) => Val::Int(*i.value()),
        Value::Float(f) => Val::Float(*f.value()),
        Value::Boolean(b) => Val::Bool(*b.value()),
        Value::Datetime(_) => return None,
        Value::Array(a) => Val::Arr(a.iter().map(from_value).collect::<Option<_>>()?),
        Value::InlineTable(t) => Val::Tab(t.iter().map(|(k, v)| from_value(v).map(|v| (k.to_string(), v))).collect::<Option<_>>()?),
    })
}

fn from_item(item: &Item) -> Option<Val> {
    match item {
        Item::None => None,
        Item::Value(v) => from_value(v),
        Item::Table(t) => Some(Val::Tab(t.iter().map(|(k, v)| from_item(v).map(|v| (k.to_string(), v))).collect::<Option<_>>()?)),
        Item::ArrayOfTables(a) => Some(Val::Arr(a.iter().map(|t| from_item(&Item::Table(t.clone()))).collect::<Option<_>>()?)),
    }
}

/// A TOML document as a [`Val::Tab`]; None when it does not parse (the Python step words it).
pub fn parse_toml(text: &str) -> Option<Val> {
    let doc: DocumentMut = text.parse().ok()?;
    from_item(doc.as_item())
}

/// Python's `repr` of a float (shortest round trip; exponent outside 1e-4 .. 1e16).
pub fn py_float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{v:e}"); // shortest digits: "1.5e-5", "-2e3"
    let (mant, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp >= 0 {
            if n > exp + 1 {
                format!("{}.{}", &digits[..(exp + 1) as usize], &digits[(exp + 1) as usize..])
            } else {
                format!("{}{}.0", digits, "0".repeat((exp + 1 - n) as usize))
            }
        } else {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        };
        format!("{sign}{body}")
    } else {
        let m = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits };
        format!("{sign}{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// `tcplab.api._toml_literal`: a value as the TOML literal of a `--set` override.
pub fn toml_literal(v: &Val) -> String {
    match v {
        Val::Bool(b) => if *b { "true" } else { "false" }.into(),
        Val::Int(i) => i.to_string(),
        Val::Float(f) => py_float_repr(*f),
        Val::Str(s) => crate::rundir::json_str(s),
        Val::Arr(a) => format!("[{}]", a.iter().map(toml_literal).collect::<Vec<_>>().join(", ")),
        Val::Tab(t) => format!("{{ {} }}", t.iter().map(|(k, v)| format!("{k} = {}", toml_literal(v))).collect::<Vec<_>>().join(", ")),
    }
}

const TOP_KEYS: [&str; 16] = [
    "title", "description", "note", "scenario", "flow", "seeds", "metrics", "axes", "points", "derived", "variants", "claims", "mode",
    "fidelity", "figure", "analysis",
];
const VARIANT_KEYS: [&str; 10] = ["name", "label", "scenario", "set", "point_set", "paper", "source", "note", "emulate", "axis_at"];

/// One run: its scenario as resolved (the hash's text), seed, and how to run it.
pub struct Task {
    pub scenario_sha256: String,
    pub seed: u64,
    pub overrides: Vec<String>,
    pub text: std::sync::Arc<String>,
    pub file: String,
    /// Saved with its files (the first run of each variant, every run with `analysis`).
    pub save_all: bool,
}

/// `{**a, **b}`: keys in their first position, the last value.
fn merge(into: &mut Vec<(String, Val)>, from: &[(String, Val)]) {
    for (k, v) in from {
        match into.iter_mut().find(|(x, _)| x == k) {
            Some(slot) => slot.1 = v.clone(),
            None => into.push((k.clone(), v.clone())),
        }
    }
}

fn seed_list(raw: Option<&Val>) -> Option<Option<Vec<u64>>> {
    let Some(raw) = raw else { return Some(None) };
    let list: Vec<u64> = match raw {
        Val::Arr(a) => {
            let l: Vec<u64> = a.iter().map(|s| if let Val::Int(i) = s { u64::try_from(*i).ok() } else { None }).collect::<Option<_>>()?;
            let mut sorted = l.clone();
            sorted.sort_unstable();
            sorted.dedup();
            if l.is_empty() || sorted.len() != l.len() {
                return None;
            }
            l
        }
        Val::Tab(t) => {
            if t.iter().any(|(k, _)| k != "from" && k != "count") {
                return None;
            }
            let from = match raw.get("from") {
                None => 1,
                Some(Val::Int(i)) if *i >= 0 => *i as u64,
                _ => return None,
            };
            let count = match raw.get("count") {
                Some(Val::Int(i)) if *i >= 1 => *i as u64,
                _ => return None,
            };
            (0..count).map(|i| from.checked_add(i)).collect::<Option<_>>()?
        }
        _ => return None,
    };
    Some(Some(list))
}

/// `sweep.axis_points`: the grid (or, with `mode = "zip"`, the zipped lists) of the axes.
fn axis_points(axes: &[(String, Val)], zip: bool) -> Option<Vec<Vec<(String, Val)>>> {
    let lists: Vec<(&String, &Vec<Val>)> =
        axes.iter().map(|(k, v)| if let Val::Arr(a) = v { (!a.is_empty()).then_some((k, a)) } else { None }).collect::<Option<_>>()?;
    if lists.is_empty() {
        return Some(vec![vec![]]);
    }
    if zip {
        let n = lists[0].1.len();
        if lists.iter().any(|(_, a)| a.len() != n) {
            return None;
        }
        return Some((0..n).map(|i| lists.iter().map(|(k, a)| ((*k).clone(), a[i].clone())).collect()).collect());
    }
    let mut out: Vec<Vec<(String, Val)>> = vec![vec![]];
    for (k, a) in &lists {
        out = out.iter().flat_map(|p| a.iter().map(move |x| [p.clone(), vec![((*k).clone(), x.clone())]].concat())).collect();
    }
    Some(out)
}

/// `run.seed` of a scenario text (default 1), as `reproduce` reads it with `tomllib`.
fn base_seed(text: &str) -> Option<u64> {
    match parse_toml(text)?.get("run").and_then(|r| r.get("seed")) {
        None => Some(1),
        Some(Val::Int(i)) => u64::try_from(*i).ok(),
        Some(_) => None,
    }
}

/// The scenario as `_core.validate` resolves it with these overrides; None when it does not.
fn resolve(text: &str, file: &str, overrides: &[String]) -> Option<String> {
    let text = tcplab::emu::check_commands(text, file, overrides).ok()?;
    let limits = Limits { max_memory: None, runtime_bytes: PYTHON_RUNTIME_BYTES, traces: Traces::Held };
    prepare_with_limits(&text, file, None, overrides, &limits).ok().map(|(_, t)| t)
}

pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The runs of the reproduction in `folder` (`--seed`, `--seeds` as given), one per distinct
/// resolved scenario and seed, as `reproduce` lists them; None for anything to leave to Python.
pub fn tasks(folder: &Path, seed: Option<u64>, seeds: Option<u64>) -> Option<Vec<Task>> {
    let path = folder.join("reproduce.toml");
    let spec = parse_toml(&std::fs::read_to_string(&path).ok()?)?;
    let top = spec.table()?;
    if top.iter().any(|(k, _)| !TOP_KEYS.contains(&k.as_str())) {
        return None;
    }
    let file_seeds = seed_list(spec.get("seeds"))?;
    let zip = spec.get("mode").and_then(Val::str) == Some("zip");
    let axes = match spec.get("axes") {
        None => vec![],
        Some(a) => a.table()?.to_vec(),
    };
    let named: Option<Vec<(String, Val)>> = match spec.get("points") {
        None => None,
        Some(p) => {
            let p = p.table()?;
            if !axes.is_empty() || p.is_empty() || p.iter().any(|(n, v)| !matches!(v, Val::Tab(t) if !t.is_empty()) || !n.replace('_', "").chars().all(char::is_alphanumeric) || n.replace('_', "").is_empty()) {
                return None;
            }
            Some(p.to_vec())
        }
    };
    let points: Vec<Vec<(String, Val)>> = match &named {
        Some(p) => p.iter().map(|(_, v)| v.table().unwrap().to_vec()).collect(),
        None => axis_points(&axes, zip)?,
    };
    let point_keys: Vec<&String> = axes.iter().map(|(k, _)| k).chain(points.iter().flatten().map(|(k, _)| k)).collect();
    let analysis = spec.get("analysis").is_some();
    let default_scenario = folder.join(match spec.get("scenario") {
        None => "scenario.toml",
        Some(s) => s.str()?,
    });
    let Some(Val::Arr(variants)) = spec.get("variants") else { return None };
    if variants.is_empty() {
        return None;
    }
    let mut names = Vec::new();
    let mut all: Vec<Task> = Vec::new();
    let mut texts: Vec<(PathBuf, std::sync::Arc<String>)> = Vec::new();
    for v in variants {
        let t = v.table()?;
        if t.iter().any(|(k, _)| !VARIANT_KEYS.contains(&k.as_str())) {
            return None;
        }
        let name = v.get("name")?.str()?.to_string();
        if names.contains(&name) {
            return None;
        }
        names.push(name);
        let fixed = match v.get("set") {
            None => vec![],
            Some(s) => s.table()?.to_vec(),
        };
        if fixed.iter().any(|(k, _)| point_keys.contains(&k)) {
            return None;
        }
        let at = match v.get("axis_at") {
            None => vec![],
            Some(a) => a.table()?.to_vec(),
        };
        if at.iter().any(|(k, x)| x.str().is_none() || !axes.iter().any(|(a, _)| a == k)) {
            return None;
        }
        let own_points = match v.get("point_set") {
            None => vec![],
            Some(ps) => {
                let ps = ps.table()?;
                let named = named.as_ref()?;
                if ps.iter().any(|(p, x)| !named.iter().any(|(n, _)| n == p) || x.table().is_none()) {
                    return None;
                }
                ps.to_vec()
            }
        };
        let scen = match v.get("scenario") {
            None => default_scenario.clone(),
            Some(s) => folder.join(s.str()?),
        };
        if !scen.is_file() {
            return None;
        }
        if v.get("emulate").is_some_and(|e| e != &Val::Bool(false)) {
            continue; // run in real time by the Python step (`tcplab emulate`)
        }
        let text = match texts.iter().find(|(p, _)| p == &scen) {
            Some((_, t)) => t.clone(),
            None => {
                let t = std::sync::Arc::new(String::from_utf8(std::fs::read(&scen).ok()?).ok()?);
                texts.push((scen.clone(), t.clone()));
                t
            }
        };
        let file = scen.to_string_lossy().into_owned();
        let base = base_seed(&text)?;
        let seed_list: Vec<u64> = if seed.is_some() || seeds.is_some() {
            let first = seed.or_else(|| file_seeds.as_ref().map(|s| s[0])).unwrap_or(base);
            let count = seeds.unwrap_or_else(|| file_seeds.as_ref().map_or(1, |s| s.len() as u64));
            (0..count).map(|i| first.checked_add(i)).collect::<Option<_>>()?
        } else {
            file_seeds.clone().unwrap_or_else(|| vec![base])
        };
        let first_of_variant = all.len();
        for (i, point) in points.iter().enumerate() {
            let mut ov = fixed.clone();
            let placed: Vec<(String, Val)> =
                point.iter().map(|(k, x)| (at.iter().find(|(a, _)| a == k).and_then(|(_, p)| p.str()).unwrap_or(k.as_str()).to_string(), x.clone())).collect();
            merge(&mut ov, &placed);
            if let Some((_, own)) = named.as_ref().and_then(|n| own_points.iter().find(|(p, _)| *p == n[i].0)) {
                merge(&mut ov, own.table()?);
            }
            let overrides: Vec<String> = ov.iter().map(|(k, x)| format!("{k}={}", toml_literal(x))).collect();
            let resolved = resolve(&text, &file, &overrides)?;
            let sha = sha256_hex(&resolved);
            for &s in &seed_list {
                all.push(Task { scenario_sha256: sha.clone(), seed: s, overrides: overrides.clone(), text: text.clone(), file: file.clone(), save_all: analysis });
            }
        }
        if let Some(t) = all.get_mut(first_of_variant) {
            t.save_all = true;
        }
    }
    // One run per resolved scenario and seed (the run hash), saved if any of its variants saves it.
    let mut unique: Vec<Task> = Vec::new();
    for t in all {
        match unique.iter_mut().find(|u| u.scenario_sha256 == t.scenario_sha256 && u.seed == t.seed) {
            Some(u) => u.save_all |= t.save_all,
            None => unique.push(t),
        }
    }
    Some(unique)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_python_repr_writes_them() {
        for (v, s) in [(0.01, "0.01"), (1e-5, "1e-05"), (100.0, "100.0"), (1e16, "1e+16"), (123456.789, "123456.789"), (0.0001, "0.0001"), (-2.5, "-2.5"), (1.5e300, "1.5e+300")] {
            assert_eq!(py_float_repr(v), s);
        }
    }

    #[test]
    fn literals_as_the_python_api_writes_them() {
        let v = parse_toml("a = { x = \"10pkts\", y = [1, 2.0, true] }").unwrap();
        assert_eq!(toml_literal(v.get("a").unwrap()), "{ x = \"10pkts\", y = [1, 2.0, true] }");
        assert_eq!(toml_literal(&Val::Str("é".into())), "\"\\u00e9\"");
    }

    #[test]
    fn merged_keys_keep_their_first_place() {
        let mut a = vec![("k".to_string(), Val::Int(1)), ("m".to_string(), Val::Int(2))];
        merge(&mut a, &[("k".to_string(), Val::Int(3)), ("z".to_string(), Val::Int(4))]);
        assert_eq!(a, vec![("k".to_string(), Val::Int(3)), ("m".to_string(), Val::Int(2)), ("z".to_string(), Val::Int(4))]);
    }

    #[test]
    fn grid_and_zip_points() {
        let axes = vec![("a".to_string(), Val::Arr(vec![Val::Int(1), Val::Int(2)])), ("b".to_string(), Val::Arr(vec![Val::Int(3), Val::Int(4)]))];
        assert_eq!(axis_points(&axes, false).unwrap().len(), 4);
        assert_eq!(axis_points(&axes, false).unwrap()[1], vec![("a".to_string(), Val::Int(1)), ("b".to_string(), Val::Int(4))]);
        assert_eq!(axis_points(&axes, true).unwrap().len(), 2);
    }
}
