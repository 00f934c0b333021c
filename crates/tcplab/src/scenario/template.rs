//! Scenario templates: what OMNeT++'s NED vectors and ns-3's topology helpers give, expanded to
//! an ordinary scenario before it is parsed, so the CLI, the Python API and sweeps all see the
//! same plain file (`tcplab expand FILE` prints it).
//!
//! * `count = N` on a `[[nodes]]`, `[[links]]`, `[[udp]]`, `[[tcp]]` or `[[traffic]]` entry makes
//!   N instances; `{i}` in any string of the entry is the instance number 0..N-1 (also `{i+K}`,
//!   `{i-K}`, `{i*K}`, `{i/K}`, `{i%K}`, several left to right as in `{i/2+1}`, and `{n}` = N).
//!   `cycle = { variant = ["reno", "vegas"] }`
//!   gives instance i the element i mod len of each list.
//! * `[defaults.<section>]` fills the keys an entry of that section does not write (before
//!   `{i}` is substituted, so defaults may use it too).
//! * `[topology] kind = "dumbbell" | "parking-lot" | "star"` generates nodes and links placed
//!   before the written ones (names in the README).
//!
//! A file with none of these is left exactly as written. Errors found later in an expanded
//! entry are pointed back at the template: its line and the instance (`Expansion::relocate`).

use std::collections::BTreeMap;

use toml::{Table, Value};

use super::{locate, path_string, relocate_message, ScenarioError, Seg};

/// The sections whose entries may be templates, in the order they are written out.
pub const SECTIONS: [&str; 5] = ["nodes", "links", "udp", "tcp", "traffic"];

/// Largest `count` (and topology size): a guard against a typo making a billion entries.
pub const MAX_COUNT: i64 = 100_000;

#[derive(Clone, Debug)]
enum Origin {
    /// Entry `index` of the section as written; `instance` = Some(i) for the i-th of a `count`.
    Written { index: usize, instance: Option<i64> },
    /// Made by the `[topology]` generator.
    Topology,
}

/// The expanded text and where each expanded entry came from.
#[derive(Clone, Debug)]
pub struct Expansion {
    pub text: String,
    origins: BTreeMap<&'static str, Vec<Origin>>,
    /// Keys each written entry took from `[defaults.<section>]`: (section, index) -> keys.
    from_defaults: BTreeMap<(&'static str, usize), Vec<String>>,
    topology_kind: String,
}

fn err(file: &str, original: &str, field: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError { file: file.to_string(), line: locate(original, field), field: field.to_string(), message: message.into() }
}

/// Edit distance counting a swap of two neighbours as one edit (optimal string alignment), for
/// "did you mean": `form` is one edit from `from`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// The closest of `known` to `word` if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1) + usize::from(word.len() > 6);
    known.into_iter().map(|k| (edit_distance(word, k), k)).filter(|&(d, _)| d <= limit).min_by_key(|&(d, _)| d).map(|(_, k)| k)
}

fn unknown_key(file: &str, original: &str, field: &str, key: &str, known: &[&str]) -> ScenarioError {
    let hint = did_you_mean(key, known.iter().copied()).map(|k| format!("; did you mean `{k}`?")).unwrap_or_default();
    err(file, original, field, format!("unknown key `{key}`, expected one of {}{hint}", known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")))
}

/// Whether the text uses any template feature (cheap check on the parsed table).
/// False when the text cannot use templates: none of the keys [`uses_templates`] looks for is
/// written in it (and no escape could spell one in a quoted key). Saves a whole parse of large
/// plain scenarios (issue 13).
fn may_use_templates(text: &str) -> bool {
    text.contains('\\') || ["topology", "defaults", "count", "cycle"].iter().any(|k| text.contains(k))
}

fn uses_templates(doc: &Table) -> bool {
    doc.contains_key("topology")
        || doc.contains_key("defaults")
        || SECTIONS.iter().any(|s| {
            doc.get(*s)
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|e| e.as_table().is_some_and(|t| t.contains_key("count") || t.contains_key("cycle"))))
        })
}

/// Substitute `{i}`, `{i+K}`, ..., `{n}` in one string.
fn substitute(s: &str, i: i64, n: i64) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return Ok(out);
        };
        let inner: String = after[..close].chars().filter(|c| !c.is_whitespace()).collect();
        let value = if inner == "n" {
            Some(n)
        } else if let Some(mut expr) = inner.strip_prefix('i') {
            // Operations apply left to right: {i/2+1} is (i / 2) + 1.
            let mut v = i;
            while !expr.is_empty() {
                let (op, rest) = expr.split_at(1);
                let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
                let (num, tail) = rest.split_at(end);
                let k: i64 = num.parse().map_err(|_| format!("cannot read {{{inner}}}: expected {{i}}, {{i+K}}, {{i-K}}, {{i*K}}, {{i/K}} or {{i%K}} with a whole number K (several apply left to right: {{i/2+1}})"))?;
                v = match op {
                    "+" => v + k,
                    "-" => v - k,
                    "*" => v * k,
                    "/" | "%" if k == 0 => return Err(format!("{{{inner}}}: division by zero")),
                    "/" => v / k,
                    "%" => v % k,
                    _ => return Err(format!("cannot read {{{inner}}}: expected {{i}}, {{i+K}}, {{i-K}}, {{i*K}}, {{i/K}} or {{i%K}}")),
                };
                expr = tail;
            }
            Some(v)
        } else {
            None
        };
        match value {
            Some(v) => out.push_str(&v.to_string()),
            None => {
                out.push('{');
                out.push_str(&after[..close]);
                out.push('}');
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn substitute_value(v: &mut Value, i: i64, n: i64) -> Result<(), String> {
    match v {
        Value::String(s) => *s = substitute(s, i, n)?,
        Value::Array(a) => {
            for x in a {
                substitute_value(x, i, n)?;
            }
        }
        Value::Table(t) => {
            for (_, x) in t.iter_mut() {
                substitute_value(x, i, n)?;
            }
        }
        _ => {}
    }
    Ok(())
}

struct Gen {
    nodes: Vec<Table>,
    links: Vec<Table>,
}

fn node(name: String, kind: &str) -> Table {
    let mut t = Table::new();
    t.insert("name".into(), Value::String(name));
    t.insert("kind".into(), Value::String(kind.into()));
    t
}

fn link(name: Option<String>, a: String, b: String, params: &Table) -> Table {
    let mut t = params.clone();
    if let Some(n) = name {
        t.insert("name".into(), Value::String(n));
    }
    t.insert("a".into(), Value::String(a));
    t.insert("b".into(), Value::String(b));
    t
}

const TOPOLOGY_KINDS: [&str; 3] = ["dumbbell", "parking-lot", "star"];

/// Generate the `[topology]`'s nodes and links.
fn topology(file: &str, original: &str, topo: &Value) -> Result<(Gen, String), ScenarioError> {
    let e = |field: &str, m: String| err(file, original, field, m);
    let t = topo.as_table().ok_or_else(|| e("topology", "expected a table: [topology] kind = \"dumbbell\", ...".into()))?;
    let kind = t.get("kind").and_then(Value::as_str).ok_or_else(|| e("topology.kind", format!("required: one of {}", TOPOLOGY_KINDS.join(", "))))?;
    let (count_key, known): (&str, &[&str]) = match kind {
        "dumbbell" => ("pairs", &["kind", "pairs", "bottleneck", "access"]),
        "parking-lot" => ("hops", &["kind", "hops", "hop", "access"]),
        "star" => ("hosts", &["kind", "hosts", "access"]),
        other => {
            let hint = did_you_mean(other, TOPOLOGY_KINDS).map(|k| format!("; did you mean \"{k}\"?")).unwrap_or_default();
            return Err(e("topology.kind", format!("unknown topology {other:?}: expected one of {}{hint}", TOPOLOGY_KINDS.join(", "))));
        }
    };
    for k in t.keys() {
        if !known.contains(&k.as_str()) {
            return Err(unknown_key(file, original, &format!("topology.{k}"), k, known));
        }
    }
    let n = match t.get(count_key) {
        Some(Value::Integer(n)) if (1..=MAX_COUNT).contains(n) => *n,
        Some(v) => return Err(e(&format!("topology.{count_key}"), format!("expected a whole number from 1 to {MAX_COUNT}, got {v}"))),
        None => return Err(e(&format!("topology.{count_key}"), format!("required: how many ({kind})"))),
    };
    let params = |k: &str| -> Result<Table, ScenarioError> {
        match t.get(k) {
            None => Ok(Table::new()),
            Some(Value::Table(p)) => {
                for bad in ["a", "b", "name", "count", "cycle"] {
                    if p.contains_key(bad) {
                        return Err(e(&format!("topology.{k}.{bad}"), format!("the generator names the links itself; `{bad}` cannot be set here")));
                    }
                }
                Ok(p.clone())
            }
            Some(v) => Err(e(&format!("topology.{k}"), format!("expected a table of link keys like {{ rate = \"100Mbps\", delay = \"1ms\" }}, got {v}"))),
        }
    };
    let access = params("access")?;
    let mut g = Gen { nodes: Vec::new(), links: Vec::new() };
    match kind {
        "dumbbell" => {
            let bottleneck = params("bottleneck")?;
            g.nodes.push(node("left".into(), "router"));
            g.nodes.push(node("right".into(), "router"));
            g.links.push(link(Some("bottleneck".into()), "left".into(), "right".into(), &bottleneck));
            for i in 0..n {
                g.nodes.push(node(format!("src{i}"), "host"));
                g.nodes.push(node(format!("dst{i}"), "host"));
            }
            for i in 0..n {
                g.links.push(link(None, format!("src{i}"), "left".into(), &access));
                g.links.push(link(None, "right".into(), format!("dst{i}"), &access));
            }
        }
        "parking-lot" => {
            let hop = params("hop")?;
            for k in 0..=n {
                g.nodes.push(node(format!("r{k}"), "router"));
            }
            g.nodes.push(node("src".into(), "host"));
            g.nodes.push(node("dst".into(), "host"));
            for k in 0..n {
                g.nodes.push(node(format!("cross_src{k}"), "host"));
                g.nodes.push(node(format!("cross_dst{k}"), "host"));
            }
            for k in 0..n {
                g.links.push(link(Some(format!("hop{k}")), format!("r{k}"), format!("r{}", k + 1), &hop));
            }
            g.links.push(link(None, "src".into(), "r0".into(), &access));
            g.links.push(link(None, format!("r{n}"), "dst".into(), &access));
            for k in 0..n {
                g.links.push(link(None, format!("cross_src{k}"), format!("r{k}"), &access));
                g.links.push(link(None, format!("r{}", k + 1), format!("cross_dst{k}"), &access));
            }
        }
        _ => {
            g.nodes.push(node("hub".into(), "router"));
            for i in 0..n {
                g.nodes.push(node(format!("h{i}"), "host"));
            }
            for i in 0..n {
                g.links.push(link(None, format!("h{i}"), "hub".into(), &access));
            }
        }
    }
    Ok((g, kind.to_string()))
}

/// Expand the templates of `text` (already overridden). `original` is the user's file, for
/// error lines. `Ok(None)` when the text uses no template feature (it is then parsed as it is).
pub fn expand(text: &str, original: &str, file: &str) -> Result<Option<Expansion>, ScenarioError> {
    if !may_use_templates(text) {
        return Ok(None);
    }
    let Ok(mut doc) = text.parse::<Table>() else { return Ok(None) }; // syntax errors are reported by the parser
    if !uses_templates(&doc) {
        return Ok(None);
    }
    let e = |field: &str, m: String| err(file, original, field, m);

    let mut defaults: BTreeMap<&'static str, Table> = BTreeMap::new();
    if let Some(d) = doc.remove("defaults") {
        let d = d.as_table().ok_or_else(|| e("defaults", "expected tables like [defaults.tcp]".into()))?;
        for (k, v) in d {
            let Some(sec) = SECTIONS.iter().find(|s| **s == k.as_str()) else {
                return Err(unknown_key(file, original, &format!("defaults.{k}"), k, &SECTIONS));
            };
            let t = v.as_table().ok_or_else(|| e(&format!("defaults.{k}"), format!("expected a table: [defaults.{k}] with keys of a [[{k}]] entry")))?;
            for bad in ["count", "cycle"] {
                if t.contains_key(bad) {
                    return Err(e(&format!("defaults.{k}.{bad}"), format!("`{bad}` belongs on an entry, not in [defaults.{k}]")));
                }
            }
            defaults.insert(sec, t.clone());
        }
    }

    let mut gen = Gen { nodes: Vec::new(), links: Vec::new() };
    let mut topology_kind = String::new();
    if let Some(t) = doc.remove("topology") {
        let (g, kind) = topology(file, original, &t)?;
        gen = g;
        topology_kind = kind;
    }

    let mut origins: BTreeMap<&'static str, Vec<Origin>> = BTreeMap::new();
    let mut from_defaults = BTreeMap::new();
    let mut sections: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for sec in SECTIONS {
        let generated = match sec {
            "nodes" => std::mem::take(&mut gen.nodes),
            "links" => std::mem::take(&mut gen.links),
            _ => Vec::new(),
        };
        let written = match doc.remove(sec) {
            None => Vec::new(),
            Some(Value::Array(a)) => a,
            Some(other) => {
                // Not an array: leave it for the parser's own message.
                doc.insert(sec.to_string(), other);
                continue;
            }
        };
        let defs = defaults.get(sec);
        let mut out: Vec<Value> = Vec::new();
        let mut orig: Vec<Origin> = Vec::new();
        for mut g in generated {
            if let Some(d) = defs {
                for (k, v) in d {
                    g.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            out.push(Value::Table(g));
            orig.push(Origin::Topology);
        }
        for (k, entry) in written.into_iter().enumerate() {
            let Value::Table(mut t) = entry else {
                out.push(entry);
                orig.push(Origin::Written { index: k, instance: None });
                continue;
            };
            if let Some(d) = defs {
                let mut took = Vec::new();
                for (key, v) in d {
                    if !t.contains_key(key) {
                        t.insert(key.clone(), v.clone());
                        took.push(key.clone());
                    }
                }
                from_defaults.insert((sec, k), took);
            }
            let field = |key: &str| format!("{sec}[{k}].{key}");
            let count = match t.remove("count") {
                None => None,
                Some(Value::Integer(n)) if (0..=MAX_COUNT).contains(&n) => Some(n),
                Some(v) => return Err(e(&field("count"), format!("expected a whole number from 0 to {MAX_COUNT}, got {v}"))),
            };
            let cycle = match t.remove("cycle") {
                None => Table::new(),
                Some(Value::Table(c)) => {
                    if count.is_none() {
                        return Err(e(&field("cycle"), "`cycle` needs `count` on the same entry".into()));
                    }
                    for (key, v) in &c {
                        match v {
                            Value::Array(a) if !a.is_empty() => {}
                            _ => return Err(e(&format!("{sec}[{k}].cycle.{key}"), format!("expected a non-empty list of values for `{key}`, got {v}"))),
                        }
                        if t.contains_key(key) {
                            return Err(e(&format!("{sec}[{k}].cycle.{key}"), format!("`{key}` is written both on the entry and in `cycle`")));
                        }
                    }
                    c
                }
                Some(v) => return Err(e(&field("cycle"), format!("expected a table of lists like {{ variant = [\"reno\", \"vegas\"] }}, got {v}"))),
            };
            let Some(n) = count else {
                out.push(Value::Table(t));
                orig.push(Origin::Written { index: k, instance: None });
                continue;
            };
            for i in 0..n {
                let mut inst = t.clone();
                for (key, v) in &cycle {
                    let a = v.as_array().expect("checked");
                    inst.insert(key.clone(), a[(i as usize) % a.len()].clone());
                }
                let mut v = Value::Table(inst);
                substitute_value(&mut v, i, n).map_err(|m| e(&format!("{sec}[{k}]"), m))?;
                out.push(v);
                orig.push(Origin::Written { index: k, instance: Some(i) });
            }
        }
        origins.insert(sec, orig);
        sections.push((sec, out));
    }

    // Write: the top-level keys as they were (name, description, run, ...), then the sections in
    // the usual order, nested tables of an entry inline (one entry, one block).
    let mut head = Table::new();
    for (k, v) in doc {
        head.insert(k, v);
    }
    let mut out = String::new();
    let mut scalars = Table::new();
    let mut tables = Table::new();
    for (k, v) in head {
        if v.is_table() {
            tables.insert(k, v);
        } else {
            scalars.insert(k, v);
        }
    }
    out.push_str(&toml::to_string(&scalars).map_err(|m| e("", m.to_string()))?);
    for (k, v) in tables {
        let mut one = Table::new();
        one.insert(k, v);
        out.push('\n');
        out.push_str(&toml::to_string(&one).map_err(|m| e("", m.to_string()))?);
    }
    for (sec, entries) in sections {
        if entries.is_empty() {
            continue;
        }
        let mut one = Table::new();
        one.insert(sec.to_string(), Value::Array(entries));
        let text = toml::to_string(&one).map_err(|m| e("", m.to_string()))?;
        out.push('\n');
        out.push_str(&inline_nested(&text));
    }
    Ok(Some(Expansion { text: out, origins, from_defaults, topology_kind }))
}

/// `[[tcp]]` entries with `[tcp.start]` sub-tables, rewritten with the sub-tables inline.
fn inline_nested(text: &str) -> String {
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else { return text.to_string() };
    for (_, item) in doc.as_table_mut().iter_mut() {
        if let toml_edit::Item::ArrayOfTables(a) = item {
            for t in a.iter_mut() {
                for (_, v) in t.iter_mut() {
                    if v.is_table() {
                        let taken = std::mem::take(v);
                        *v = match taken.into_value() {
                            Ok(val) => toml_edit::Item::Value(val),
                            Err(it) => it,
                        };
                    }
                }
            }
        }
    }
    doc.to_string()
}

impl Expansion {
    /// Point an error found in the expanded scenario back at the template it came from: the line
    /// of the key in the template as written (or in `[defaults.*]`, or `[topology]`), and a note
    /// naming the instance: `tcp[37] (from the tcp template at line 12, i = 5)`.
    pub fn relocate(&self, mut e: ScenarioError, original: &str, overrides: &[String]) -> ScenarioError {
        let segs = match super::parse_path(&e.field) {
            Ok(s) if !e.field.is_empty() => s,
            _ => {
                e.line = if e.field.is_empty() { None } else { locate(original, &e.field) };
                return e;
            }
        };
        let (Some(Seg::Key(sec)), Some(Seg::Index(idx))) = (segs.first(), segs.get(1)) else {
            e.line = locate(original, &e.field);
            e.message = relocate_message(e.message, &e.field, overrides);
            return e;
        };
        let Some(origin) = self.origins.get(sec.as_str()).and_then(|o| o.get(*idx)) else {
            e.line = locate(original, &e.field);
            return e;
        };
        let rest = &segs[2..];
        let sec_static = SECTIONS.iter().copied().find(|s| *s == sec).unwrap_or("");
        match origin.clone() {
            Origin::Topology => {
                let key = rest.first().and_then(|s| if let Seg::Key(k) = s { Some(k.clone()) } else { None });
                let from_defaults = key.as_ref().is_some_and(|k| locate_exact(original, &format!("defaults.{sec}.{k}")));
                e.line = if from_defaults { locate(original, &format!("defaults.{sec}.{}", key.unwrap())) } else { locate(original, "topology") };
                e.message = format!("{} ({sec}[{idx}] generated by [topology] kind = \"{}\")", e.message, self.topology_kind);
            }
            Origin::Written { index, instance } => {
                let mut written = vec![Seg::Key(sec.clone()), Seg::Index(index)];
                written.extend_from_slice(rest);
                let wf = path_string(&written);
                let key = rest.first().and_then(|s| if let Seg::Key(k) = s { Some(k.clone()) } else { None });
                let took_default = key.as_ref().is_some_and(|k| self.from_defaults.get(&(sec_static, index)).is_some_and(|t| t.contains(k)));
                e.line = if took_default { locate(original, &format!("defaults.{sec}.{}", key.clone().unwrap())) } else { locate(original, &wf) };
                e.message = relocate_message(e.message, &wf, overrides);
                let entry_line = locate(original, &format!("{sec}[{index}]"));
                let at = entry_line.map(|l| format!(" at line {l}")).unwrap_or_default();
                if let Some(i) = instance {
                    e.message = format!("{} ({sec}[{idx}] from the {sec} template{at}, i = {i})", e.message);
                } else if index != *idx {
                    e.message = format!("{} ({sec}[{idx}] is {sec}[{index}] as written{at})", e.message);
                }
                if took_default {
                    e.message = format!("{} (the value comes from [defaults.{sec}])", e.message);
                }
            }
        }
        e
    }
}

/// Whether `path` itself (not just a parent table) is written in `text`.
fn locate_exact(text: &str, path: &str) -> bool {
    let Ok(doc) = text.parse::<Table>() else { return false };
    let mut cur = Value::Table(doc);
    for part in path.split('.') {
        match cur {
            Value::Table(mut t) => match t.remove(part) {
                Some(v) => cur = v,
                None => return false,
            },
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_forms() {
        assert_eq!(substitute("h{i}", 3, 8).unwrap(), "h3");
        assert_eq!(substitute("h{i+16}-{i%4}-{i*2}-{i/2}-{i-1}-of-{n}", 5, 8).unwrap(), "h21-1-10-2-4-of-8");
        assert_eq!(substitute("{x} stays", 1, 2).unwrap(), "{x} stays");
        assert!(substitute("h{i^2}", 1, 2).is_err());
        assert!(substitute("h{i%0}", 1, 2).is_err());
        // Several operations, left to right (interleaved 1-based names: L1, D1, L2, D2, ...).
        assert_eq!(substitute("L{i/2+1}", 5, 8).unwrap(), "L3");
        assert_eq!(substitute("{i*2+1}-{i+1*2}", 3, 8).unwrap(), "7-8");
        assert!(substitute("h{i/2+}", 1, 2).is_err());
    }

    #[test]
    fn did_you_mean_finds_typos() {
        assert_eq!(did_you_mean("varient", ["variant", "name", "from"]), Some("variant"));
        assert_eq!(did_you_mean("zzz", ["variant", "name"]), None);
    }
}
