//! Scenario files: parse (TOML, strict units, unknown keys rejected), apply `--set` overrides,
//! validate against the topology, and report every error with file, line and field.

mod fast;
mod plain;
pub mod model;
pub mod template;
pub mod units;

use std::fmt;

pub use model::*;

/// An error in a scenario, pointing at the file, line and field.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    /// Field path, e.g. `links[2].delay`.
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: ", self.file, l)?,
            None => write!(f, "{}: ", self.file)?,
        }
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

pub(crate) fn parse_path(path: &str) -> Result<Vec<Seg>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        if part.is_empty() {
            return Err(format!("empty component in key {path:?}"));
        }
        let mut rest = part;
        let key_end = rest.find('[').unwrap_or(rest.len());
        let key = &rest[..key_end];
        if !key.is_empty() {
            if key.chars().all(|c| c.is_ascii_digit()) {
                out.push(Seg::Index(key.parse().unwrap()));
            } else {
                out.push(Seg::Key(key.to_string()));
            }
        }
        rest = &rest[key_end..];
        while let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']').ok_or_else(|| format!("missing ']' in key {path:?}"))?;
            let idx: usize = r[..close].parse().map_err(|_| format!("bad index in key {path:?}"))?;
            out.push(Seg::Index(idx));
            rest = &r[close + 1..];
        }
        if !rest.is_empty() {
            return Err(format!("cannot parse key {path:?}"));
        }
    }
    Ok(out)
}

pub(crate) fn path_string(segs: &[Seg]) -> String {
    let mut s = String::new();
    for seg in segs {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

/// A TOML syntax error as a located ScenarioError. The parser's message can be empty (a bare
/// carriage return); then say what the byte at the error is. A file with CR-only line endings
/// (old Mac) has one "line" for the parser: count its CRs as line breaks so the line means
/// something in the user's editor.
fn syntax_check(text: &str, file: &str) -> Result<(), ScenarioError> {
    let Err(e) = toml_edit::ImDocument::parse(text) else { return Ok(()) };
    let off = e.span().map(|sp| sp.start);
    let cr_only = !text.contains('\n') && text.contains('\r');
    let line = off.map(|o| {
        if cr_only {
            text[..o.min(text.len())].bytes().filter(|&b| b == b'\r').count() + 1
        } else {
            line_of_offset(text, o)
        }
    });
    // One line: the parser's message may continue on further lines.
    let mut message = e.message().split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    let lone_cr = text.as_bytes().windows(2).any(|w| w[0] == b'\r' && w[1] != b'\n') || text.ends_with('\r');
    if lone_cr {
        message = format!(
            "{}a carriage return without a line feed (CR-only line endings are not TOML; save the file with LF or CRLF line endings)",
            if message.is_empty() { String::new() } else { format!("{message}; ") }
        );
    } else if message.is_empty() {
        let at = off.and_then(|o| text.get(o..)).and_then(|r| r.chars().next());
        message = match at {
            Some(c) => format!("unexpected {c:?}"),
            None => "unexpected end of file".into(),
        };
    }
    Err(ScenarioError { file: file.to_string(), line, field: String::new(), message: format!("invalid TOML: {message}") })
}

/// Find the line where the item at `path` (e.g. `links[2].delay`) is written: the deepest part
/// of the path that exists in the document (the key if present, else its table).
pub fn locate(text: &str, path: &str) -> Option<usize> {
    let mut segs = parse_path(path).ok()?;
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    alias_medium(&mut segs, |k| doc.as_table().contains_key(k));
    let mut best: Option<usize> = None;
    let mut note = |span: Option<std::ops::Range<usize>>| {
        if let Some(sp) = span {
            best = Some(sp.start);
        }
    };
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    let mut i = 0;
    while i < segs.len() {
        let Seg::Key(k) = &segs[i] else { break };
        let Some((key, item)) = table.get_key_value(k) else { break };
        note(key.span());
        i += 1;
        match (item, segs.get(i)) {
            (toml_edit::Item::ArrayOfTables(arr), Some(Seg::Index(n))) => {
                let Some(t) = arr.get(*n) else { break };
                note(t.span());
                table = t;
                i += 1;
            }
            (toml_edit::Item::Value(toml_edit::Value::Array(arr)), Some(Seg::Index(n))) => {
                if let Some(v) = arr.get(*n) {
                    note(v.span());
                }
                break;
            }
            (item, _) => match item.as_table_like() {
                Some(t) => table = t,
                None => break,
            },
        }
    }
    best.map(|off| line_of_offset(text, off))
}

/// `[[medium]]` is another name of `[[lan]]` (issue 25 names both): a path that starts with the
/// name the document does not use is read with the one it does, so `--set medium[0].rate=...`
/// edits a file written with `[[lan]]` (and the reverse), and an error in `lan[0]` is located in
/// a file written with `[[medium]]`.
pub(crate) fn alias_medium(segs: &mut [Seg], has: impl Fn(&str) -> bool) {
    if let Some(Seg::Key(k)) = segs.first_mut() {
        let other = match k.as_str() {
            "lan" => "medium",
            "medium" => "lan",
            _ => return,
        };
        if !has(k) && has(other) {
            *k = other.to_string();
        }
    }
}

/// Apply `--set KEY=VALUE` overrides to the TOML text. VALUE is read as a TOML value when it is
/// one (number, boolean, quoted string, inline table or array), otherwise as a bare string, so
/// `--set links[0].delay=20ms` works without quotes.
pub fn apply_overrides(text: &str, file: &str, overrides: &[String]) -> Result<String, ScenarioError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let err = |field: &str, message: String| ScenarioError { file: file.to_string(), line: None, field: field.to_string(), message };
    // A syntax error is reported against the user's file, with its line.
    syntax_check(text, file)?;
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e: toml_edit::TomlError| err("", format!("invalid TOML: {}", e.message())))?;
    for ov in overrides {
        let (key, value) = ov
            .split_once('=')
            .ok_or_else(|| err("--set", format!("expected KEY=VALUE, got {ov:?}")))?;
        let key = key.trim();
        let mut segs = parse_path(key).map_err(|m| err("--set", m))?;
        alias_medium(&mut segs, |k| doc.as_table().contains_key(k));
        let value: toml_edit::Value = match value.trim().parse::<toml_edit::Value>() {
            Ok(v) => v,
            Err(_) => toml_edit::Value::from(value.trim()),
        };
        set_in_item(doc.as_item_mut(), &segs, 0, &value).map_err(|m| err(key, format!("--set {key}: {m}")))?;
    }
    Ok(doc.to_string())
}

/// Walk `segs[at..]` from `item` and set the last key (or array element) to `value`. Tables,
/// arrays of tables, inline tables and inline arrays are all walked the same way, so
/// `links[0].queue.limit` works whether the file writes `[[links]]` or `links = [ {...} ]`
/// (the form `Scenario.to_toml()` writes).
fn set_in_item(item: &mut toml_edit::Item, segs: &[Seg], at: usize, value: &toml_edit::Value) -> Result<(), String> {
    match item {
        toml_edit::Item::Value(v) => set_in_value(v, segs, at, value),
        toml_edit::Item::ArrayOfTables(a) => {
            let here = path_string(&segs[..at]);
            let Seg::Index(idx) = segs[at] else { return Err(format!("{here} is an array; give an index like {here}[0]")) };
            let n = a.len();
            let t = a.get_mut(idx).ok_or_else(|| format!("{here} has {n} entries, no index {idx}"))?;
            if at + 1 == segs.len() {
                return Err("cannot replace a whole table".into());
            }
            set_in_table_like(t, segs, at + 1, value, false)
        }
        _ => match item.as_table_like_mut() {
            Some(t) => set_in_table_like(t, segs, at, value, false),
            None => Err(format!("{} is not a table", path_string(&segs[..at]))),
        },
    }
}

fn set_in_table_like(t: &mut dyn toml_edit::TableLike, segs: &[Seg], at: usize, value: &toml_edit::Value, inline: bool) -> Result<(), String> {
    let Seg::Key(k) = &segs[at] else {
        return Err(format!("{} is not an array", path_string(&segs[..at])));
    };
    if at + 1 == segs.len() {
        t.insert(k, toml_edit::Item::Value(value.clone()));
        return Ok(());
    }
    if t.get(k).is_none() {
        let fresh = if inline {
            toml_edit::Item::Value(toml_edit::Value::InlineTable(toml_edit::InlineTable::new()))
        } else {
            toml_edit::Item::Table(toml_edit::Table::new())
        };
        t.insert(k, fresh);
    }
    set_in_item(t.get_mut(k).expect("just inserted"), segs, at + 1, value)
}

fn set_in_value(v: &mut toml_edit::Value, segs: &[Seg], at: usize, value: &toml_edit::Value) -> Result<(), String> {
    let here = path_string(&segs[..at]);
    match (&segs[at], v) {
        (Seg::Key(_), toml_edit::Value::InlineTable(t)) => set_in_table_like(t, segs, at, value, true),
        (Seg::Index(idx), toml_edit::Value::Array(a)) => {
            let n = a.len();
            if *idx >= n {
                return Err(format!("{here} has {n} entries, no index {idx}"));
            }
            if at + 1 == segs.len() {
                a.replace(*idx, value.clone());
                return Ok(());
            }
            set_in_value(a.get_mut(*idx).expect("checked"), segs, at + 1, value)
        }
        (Seg::Key(_), _) => Err(format!("{here} is not a table")),
        (Seg::Index(_), _) => Err(format!("{here} is not an array")),
    }
}

/// Parse scenario TOML text. `file` names the source in errors.
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    if let Some(off) = text.find(|c: char| c.is_control() && !matches!(c, '\t' | '\n' | '\r')) {
        let c = text[off..].chars().next().unwrap_or('\0');
        return Err(ScenarioError {
            file: file.to_string(),
            line: Some(line_of_offset(text, off)),
            field: String::new(),
            message: format!("not a TOML text file (binary content: control character U+{:04X})", c as u32),
        });
    }
    if text.trim().is_empty() {
        return Err(ScenarioError {
            file: file.to_string(),
            line: None,
            field: String::new(),
            message: "empty scenario: expected at least [run], [[nodes]] and [[links]]".into(),
        });
    }
    // Large files are read without their whole document (`fast`); anything it does not read,
    // and every error, goes through the whole-document parse below.
    if let Some(sc) = fast::parse(text) {
        return Ok(sc);
    }
    parse_classic(text, file)
}

/// [`parse`] through toml's document of the whole text: the reference the fast path is tested
/// against, and the source of every error's file, line and field.
pub(crate) fn parse_classic(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::new(text);
    match serde_path_to_error::deserialize::<_, Scenario>(de) {
        Ok(s) => Ok(s),
        Err(e) => {
            // A malformed file says "invalid TOML" rather than a bare parser message. Checked
            // only on failure: a second parse of a valid 10^5-flow text costs a second (issue 13).
            syntax_check(text, file)?;
            let path = e.path().to_string();
            let inner = e.into_inner();
            let mut line = inner.span().map(|sp| line_of_offset(text, sp.start)).or_else(|| locate(text, &path));
            let mut field = if path == "." { String::new() } else { path };
            let message = inner.message().trim().to_string();
            // "missing field `x`": name the missing field itself. A missing top-level key has no
            // line of its own (the span is the whole document), so give none rather than line 1.
            if let Some(name) = message.strip_prefix("missing field `").and_then(|r| r.strip_suffix('`')) {
                if field.is_empty() {
                    line = None;
                    field = name.to_string();
                } else {
                    field = format!("{field}.{name}");
                }
                return Err(ScenarioError { file: file.to_string(), line, field, message: "required field is missing".into() });
            }
            // `[[commands]]` is emulation's own table (issue 24): say which command reads it.
            if field == "commands" && message.starts_with("unknown field `commands`") {
                let message = "[[commands]] runs programs on emulated Linux hosts, which only `tcplab emulate` can do; \
                               run this scenario with `tcplab emulate` (or remove the [[commands]] tables to simulate it)";
                return Err(ScenarioError { file: file.to_string(), line, field, message: message.into() });
            }
            Err(ScenarioError { file: file.to_string(), line, field, message: suggest_key(&plain_types(&message)) })
        }
    }
}

/// serde's "unknown field `varient`, expected one of `name`, ..." with "did you mean `variant`?"
/// (and the same for unknown variants of an enum).
fn suggest_key(msg: &str) -> String {
    let Some(rest) = msg.strip_prefix("unknown field `").or_else(|| msg.strip_prefix("unknown variant `")) else { return msg.to_string() };
    let Some((word, tail)) = rest.split_once('`') else { return msg.to_string() };
    let known: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    match template::did_you_mean(word, known) {
        Some(k) => format!("{msg}; did you mean `{k}`?"),
        None => msg.to_string(),
    }
}

/// serde's type words in user terms: "expected struct RunCfg" -> "expected a table",
/// "expected a sequence" -> "expected an array".
fn plain_types(msg: &str) -> String {
    let mut out = msg.replace("expected a sequence", "expected an array");
    if let Some(pos) = out.find("expected struct ") {
        let rest = &out[pos + "expected struct ".len()..];
        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        out = format!("{}expected a table{}", &out[..pos], &rest[end..]);
    }
    out
}

/// Load, override and parse a scenario from text (used by the CLI and Python). Returns the
/// scenario, the text as run (overridden, templates expanded) and the expansion (None for a
/// file without templates), which [`fix_error`] needs to point later errors at the user's file.
pub fn load_text(text: &str, file: &str, overrides: &[String]) -> Result<(Scenario, String, Option<template::Expansion>), ScenarioError> {
    let new_text = apply_overrides(text, file, overrides)?;
    // A text that is not TOML is left to `parse`, which says what is wrong with it.
    let expansion = template::expand(&new_text, text, file)?;
    let Some(x) = expansion else {
        let sc = parse(&new_text, file).map_err(|e| relocate(e, text, overrides))?;
        return Ok((sc, new_text, None));
    };
    let sc = parse(&x.text, file).map_err(|e| x.relocate(e, text, overrides))?;
    Ok((sc, x.text.clone(), Some(x)))
}

/// Point an error found in the text as run (see [`load_text`]) at the user's file.
pub fn fix_error(e: ScenarioError, original: &str, overrides: &[String], expansion: Option<&template::Expansion>) -> ScenarioError {
    match expansion {
        Some(x) => x.relocate(e, original, overrides),
        None => relocate(e, original, overrides),
    }
}

/// `tcplab expand`: the scenario with its templates written out (the text as it would run).
pub fn expand_text(text: &str, file: &str, overrides: &[String]) -> Result<String, ScenarioError> {
    load_text(text, file, overrides).map(|(_, t, _)| t)
}

/// Point an error found in the overridden text back at the user's file: `--set` may add lines,
/// so line numbers of the overridden text are not lines of the file. The line is looked up again
/// in `original`, and an error in a field that an override wrote says so.
pub fn relocate(mut e: ScenarioError, original: &str, overrides: &[String]) -> ScenarioError {
    if overrides.is_empty() {
        return e;
    }
    e.line = if e.field.is_empty() { None } else { locate(original, &e.field) };
    let field = e.field.clone();
    e.message = relocate_message(e.message, &field, overrides);
    e
}

/// The error message, with "(from --set K=V)" when an override wrote the field `field`.
pub(crate) fn relocate_message(message: String, field: &str, overrides: &[String]) -> String {
    let touched = overrides.iter().find(|ov| {
        let key = ov.split_once('=').map_or(ov.as_str(), |(k, _)| k.trim());
        let Ok(mut segs) = parse_path(key) else { return false };
        // `medium[0].x` and `lan[0].x` are one field (see `alias_medium`).
        alias_medium(&mut segs, |k| k == "lan");
        let key = path_string(&segs);
        let f = field.strip_prefix("medium").map_or(field.to_string(), |r| format!("lan{r}"));
        let f = f.as_str();
        !f.is_empty()
            && (f == key
                || f.starts_with(&format!("{key}."))
                || f.starts_with(&format!("{key}["))
                || key.starts_with(&format!("{f}."))
                || key.starts_with(&format!("{f}[")))
    });
    match touched {
        Some(ov) => format!("{message} (from --set {ov})"),
        None => message,
    }
}

/// The JSON Schema of the scenario format.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    let mut v = serde_json::to_value(&schema).expect("schema serializes");
    // schemars does not list serde aliases: `medium` is `lan` by another name (`alias_medium`).
    if let Some(props) = v.get_mut("properties").and_then(|p| p.as_object_mut()) {
        if let Some(mut lan) = props.get("lan").cloned() {
            if let Some(o) = lan.as_object_mut() {
                o.insert("description".into(), "Another name of `lan` (a file uses one of the two).".into());
            }
            props.insert("medium".into(), lan);
        }
    }
    serde_json::to_string_pretty(&v).expect("schema serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "[run]\nduration = \"1s\"\n\n[[links]]\na = \"x\"\n\n[[links]]\na = \"y\"\ndelay = \"50\"\n";

    #[test]
    fn locate_finds_the_line_of_a_field() {
        assert_eq!(locate(TEXT, "run.duration"), Some(2));
        assert_eq!(locate(TEXT, "links[1].delay"), Some(9));
        assert_eq!(locate(TEXT, "links[0].a"), Some(5));
        // A missing field points at its table.
        assert_eq!(locate(TEXT, "links[1].rate"), Some(7));
    }

    #[test]
    fn parse_errors_name_file_line_and_field() {
        let e = parse(TEXT, "x.toml").unwrap_err();
        assert_eq!(e.file, "x.toml");
        // The first link lacks rate/delay; serde reports the first problem it meets.
        assert!(e.field.starts_with("links[0]"), "{e}");
        assert!(e.line.is_some(), "{e}");
        let bad = "[run]\nduration = \"50\"\n[[nodes]]\nname = \"a\"\nkind = \"host\"\n[[links]]\na = \"a\"\nb = \"a\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
        let e = parse(bad, "y.toml").unwrap_err();
        assert_eq!(e.to_string(), "y.toml:2: run.duration: expected a duration like \"50ms\", got \"50\" (the unit is required: ns, us, ms, s, min)");
    }

    /// A link's queue and its per-direction overrides are boxed in the model (issue 28): an
    /// error inside them still names the line and the whole field path, in both TOML forms.
    #[test]
    fn errors_in_boxed_link_tables_name_line_and_field() {
        let head = "[run]\nduration = \"1s\"\n[[nodes]]\nname = \"a\"\nkind = \"host\"\n";
        let text = format!("{head}[[links]]\na = \"a\"\nb = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[links.ab]\nrate = \"2Mbps\"\n[links.ab.queue]\nlimit = \"10 parcels\"\n");
        let e = parse(&text, "q.toml").unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (Some(14), "links[0].ab.queue.limit"), "{e}");
        // The form `Scenario.to_toml()` writes (the benchmarks' files): arrays of inline tables.
        let text = "nodes = [ { name = \"a\", kind = \"host\" } ]\nlinks = [\n  { a = \"a\", b = \"b\", rate = \"1Mbps\", delay = \"1ms\", queue = { limit = 5, kind = \"droptail\" } },\n  { a = \"a\", b = \"c\", rate = \"1Mbps\", delay = \"1ms\", ba = { dely = \"2ms\" } },\n]\n[run]\nduration = \"1s\"\n";
        let e = parse(text, "q.toml").unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (Some(3), "links[0].queue.limit"), "{e}");
        let text = text.replace("limit = 5", "limit = \"5pkts\"");
        let e = parse(&text, "q.toml").unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (Some(4), "links[1].ba.dely"), "{e}");
        assert!(e.message.contains("did you mean `delay`?"), "{e}");
        // Written, they are read back whole.
        let text = text.replace("dely", "delay");
        let sc = parse(&text, "q.toml").unwrap();
        assert_eq!(sc.links[1].ba.as_ref().and_then(|o| o.delay).map(|d| d.0 .0), Some(2_000_000));
        assert!(sc.links[0].queue.is_some() && sc.links[1].queue.is_none() && sc.links[0].ab.is_none());
    }

    #[test]
    fn the_schema_admits_medium_as_lan() {
        let v: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
        let p = &v["properties"];
        assert_eq!(p["medium"]["items"], p["lan"]["items"]);
        assert!(p["medium"]["description"].as_str().unwrap().contains("lan"));
    }

    #[test]
    fn overrides_edit_nested_fields() {
        let t = apply_overrides(TEXT, "x.toml", &["links[1].delay=20ms".into(), "run.seed=4".into()]).unwrap();
        assert!(t.contains("delay = \"20ms\""), "{t}");
        assert!(t.contains("seed = 4"), "{t}");
        assert!(apply_overrides(TEXT, "x.toml", &["links[5].delay=1ms".into()]).is_err());
        assert!(apply_overrides(TEXT, "x.toml", &["nokey".into()]).is_err());
    }

    #[test]
    fn overrides_walk_inline_tables_and_arrays() {
        // The form Scenario.to_toml() writes: arrays of inline tables.
        let text = "links = [ { a = \"x\", b = \"y\", queue = { limit = \"5pkts\" }, drop = { packets = [{ flow = \"t\", seq = 1 }] } } ]\n";
        let t = apply_overrides(text, "x.toml", &["links[0].queue.limit=20pkts".into(), "links[0].delay=3ms".into(), "links[0].drop.packets[0].seq=7".into(), "links[0].ab.rate=1Mbps".into()]).unwrap();
        let v: toml::Value = toml::from_str(&t).unwrap();
        let l = &v["links"][0];
        assert_eq!(l["queue"]["limit"].as_str(), Some("20pkts"), "{t}");
        assert_eq!(l["delay"].as_str(), Some("3ms"), "{t}");
        assert_eq!(l["drop"]["packets"][0]["seq"].as_integer(), Some(7), "{t}");
        assert_eq!(l["ab"]["rate"].as_str(), Some("1Mbps"), "{t}");
        let e = apply_overrides(text, "x.toml", &["links[1].delay=3ms".into()]).unwrap_err();
        assert!(e.message.contains("links has 1 entries, no index 1"), "{e}");
        let e = apply_overrides(text, "x.toml", &["links[0].a.b=3".into()]).unwrap_err();
        assert!(e.message.contains("links[0].a is not a table"), "{e}");
    }
}
