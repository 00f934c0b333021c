//! A parse of a scenario that never holds its whole TOML document (issue 28's memory target).
//!
//! Our own design, no outside source. The classic parse (`super::parse_classic`) builds toml's
//! document of the whole text before serde reads it: 67 MB of inline tables, keys and decor for
//! the 1.9 MB, 4,096-flow dumbbell, the run's peak resident set. Most of a large scenario is its
//! entries: `nodes = [ {...}, ... ]` arrays of inline tables (the form `Scenario.to_toml()` and the
//! benchmarks write) and `[[tcp]]` tables. Here a scanner finds them, each entry is parsed and
//! deserialized on its own (toml's own value and document parsers, so every value reads exactly as
//! in the whole document) and freed, and the rest of the text (the entries blanked out, every line
//! kept where it was) is parsed as a document as before; serde sees one table holding both.
//!
//! Deviation from a whole-document parse, by design: none in what succeeds. Whatever the scanner
//! does not recognise (a quoted key or header, a sub-table of an entry such as `[tcp.x]`, a
//! section written both ways, a lone carriage return, an array element that is not an inline
//! table, anything malformed) makes it give up, and every error, the first one included, comes
//! from the classic parse, so errors keep their file, line and field exactly as before. A test
//! parses every scenario file of the repository both ways and compares the results.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::Scenario;

/// The sections whose entries are read one at a time (the lists of `Scenario`).
const SECTIONS: [&str; 8] = ["nodes", "links", "lan", "medium", "udp", "tcp", "traffic", "routes"];

/// One entry of a section, as written.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Entry<'a> {
    /// An inline table `{ ... }` of a `section = [ ... ]` array.
    Inline(&'a str),
    /// The body of a `[[section]]` table: its lines up to the next header.
    Body(&'a str),
}

/// Parse `text` without building its whole document; `None` when the text is not in a form this
/// reads (or is wrong in any way): the caller then parses it the classic way.
pub(crate) fn parse(text: &str) -> Option<Scenario> {
    let (rest, sections) = split(text)?;
    let de = toml::Deserializer::new(&rest);
    Scenario::deserialize(Merge { inner: de, extra: sections }).ok()
}

fn is_bare(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// The components of a dotted bare key (`a.b`, `a . b`), or None for a quoted or malformed one.
fn bare_key(s: &str) -> Option<Vec<&str>> {
    let parts: Vec<&str> = s.split('.').map(|p| p.trim_matches(|c| c == ' ' || c == '\t')).collect();
    parts.iter().all(|p| !p.is_empty() && p.bytes().all(is_bare)).then_some(parts)
}

/// The end of the string starting at `b[i]` (a quote), or None if it does not end well.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    if triple {
        let mut j = i + 3;
        while j < b.len() {
            if q == b'"' && b[j] == b'\\' {
                j += 2;
                continue;
            }
            if b[j] == q && b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                let mut end = j + 3;
                // Up to two quotes right before the closing three belong to the string.
                while end < b.len() && b[end] == q && end < j + 5 {
                    end += 1;
                }
                return Some(end);
            }
            j += 1;
        }
        return None;
    }
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\n' | b'\r' => return None,
            b'\\' if q == b'"' => j += 1,
            c if c == q => return Some(j + 1),
            _ => {}
        }
        j += 1;
    }
    None
}

/// From `i`, past spaces and tabs, and a comment if one follows: where the line's content ends.
fn skip_blank(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    if i < b.len() && b[i] == b'#' {
        while i < b.len() && b[i] != b'\n' {
            i += 1;
        }
    }
    i
}

/// Whether the line has nothing left at `i` (after [`skip_blank`]).
fn at_eol(b: &[u8], i: usize) -> bool {
    i >= b.len() || b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) == Some(&b'\n'))
}

/// From `i`, past whitespace, newlines and comments.
fn skip_space(b: &[u8], mut i: usize) -> usize {
    loop {
        i = skip_blank(b, i);
        if i < b.len() && (b[i] == b'\n' || b[i] == b'\r') {
            i += 1;
        } else {
            return i;
        }
    }
}

/// The end of the value starting at `i`: the first newline outside brackets and strings.
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                i = skip_string(b, i)?;
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.checked_sub(1)?,
            b'\n' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then_some(i)
}

/// The end of the inline table starting at `b[i] == '{'` (one past its `}`).
fn skip_inline_table(b: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                i = skip_string(b, i)?;
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            // Inline tables are one line; leave anything else to the classic parse.
            b'\n' | b'\r' | b'#' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The inline tables of the array starting at `b[i] == '['`, and the end of the array; None if
/// an element is not an inline table or the array is malformed.
fn split_array(b: &[u8], i: usize) -> Option<(Vec<(usize, usize)>, usize)> {
    let mut out = Vec::new();
    let mut j = skip_space(b, i + 1);
    loop {
        match b.get(j)? {
            b']' => return Some((out, j + 1)),
            b'{' => {
                let end = skip_inline_table(b, j)?;
                out.push((j, end));
                j = skip_space(b, end);
                match b.get(j)? {
                    b',' => j = skip_space(b, j + 1),
                    b']' => return Some((out, j + 1)),
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
}

#[derive(Default)]
struct Uses {
    /// `section = [ ... ]` statements: (statement start, array end, elements).
    inline: Vec<(usize, usize, Vec<(usize, usize)>)>,
    /// `[[section]]` headers: (header start, body start).
    blocks: Vec<(usize, usize)>,
    /// Any other use of the name (a sub-table, a dotted key, an array of something else).
    other: bool,
}

/// The text with the read-apart sections blanked (same length, same lines) and their entries.
fn split(text: &str) -> Option<(String, Vec<(&'static str, Vec<Entry<'_>>)>)> {
    let b = text.as_bytes();
    // A carriage return without a line feed: the classic parse says what is wrong.
    if b.iter().enumerate().any(|(k, &c)| c == b'\r' && b.get(k + 1) != Some(&b'\n')) {
        return None;
    }
    let mut uses: Vec<Uses> = SECTIONS.iter().map(|_| Uses::default()).collect();
    let sec = |name: &str| SECTIONS.iter().position(|s| *s == name);
    // Start of every header, to end the `[[section]]` bodies.
    let mut headers: Vec<usize> = Vec::new();
    let mut top = true;
    let mut i = skip_space(b, 0);
    while i < b.len() {
        if b[i] == b'[' {
            let dbl = b.get(i + 1) == Some(&b'[');
            let from = i + if dbl { 2 } else { 1 };
            let close = from + b[from..].iter().position(|&c| c == b']' || c == b'\n' || c == b'"' || c == b'\'')?;
            if b[close] != b']' || (dbl && b.get(close + 1) != Some(&b']')) {
                return None;
            }
            let end = close + if dbl { 2 } else { 1 };
            let key = bare_key(&text[from..close])?;
            let after = skip_blank(b, end);
            if !at_eol(b, after) {
                return None;
            }
            if let Some(s) = sec(key[0]) {
                if dbl && key.len() == 1 {
                    uses[s].blocks.push((i, after));
                } else {
                    uses[s].other = true;
                }
            }
            headers.push(i);
            top = false;
            i = skip_space(b, after);
            continue;
        }
        let eq = i + b[i..].iter().position(|&c| c == b'=' || c == b'\n' || c == b'"' || c == b'\'' || c == b'#')?;
        if b[eq] != b'=' {
            return None;
        }
        let key = bare_key(&text[i..eq])?;
        let v = skip_blank(b, eq + 1);
        let lazy = if top { sec(key[0]) } else { None };
        let mut end = None;
        if let Some(s) = lazy {
            match (key.len(), b.get(v)) {
                (1, Some(b'[')) => match split_array(b, v) {
                    Some((elems, close)) if at_eol(b, skip_blank(b, close)) => {
                        uses[s].inline.push((i, close, elems));
                        end = Some(skip_blank(b, close));
                    }
                    _ => uses[s].other = true,
                },
                _ => uses[s].other = true,
            }
        }
        let end = match end {
            Some(e) => e,
            None => skip_value(b, v)?,
        };
        i = skip_space(b, end);
    }
    headers.push(b.len());

    let mut rest = b.to_vec();
    let mut blank = |from: usize, to: usize| {
        for c in &mut rest[from..to] {
            if *c != b'\n' && *c != b'\r' {
                *c = b' ';
            }
        }
    };
    let mut out = Vec::new();
    for (s, u) in uses.iter().enumerate() {
        let entries: Vec<Entry> = match (u.other, u.inline.as_slice(), u.blocks.is_empty()) {
            (false, [(start, close, elems)], true) => {
                blank(*start, *close);
                elems.iter().map(|&(a, z)| Entry::Inline(&text[a..z])).collect()
            }
            (false, [], false) => u
                .blocks
                .iter()
                .map(|&(start, body)| {
                    let next = headers[headers.partition_point(|&h| h <= start)];
                    blank(start, next);
                    Entry::Body(&text[body..next])
                })
                .collect(),
            _ => continue,
        };
        out.push((SECTIONS[s], entries));
    }
    if out.is_empty() {
        return None;
    }
    Some((String::from_utf8(rest).ok()?, out))
}

/// The document's own deserializer, with the sections read apart added to its top-level table.
struct Merge<'a, D> {
    inner: D,
    extra: Vec<(&'static str, Vec<Entry<'a>>)>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Merge<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(MergeVisitor { visitor, extra: self.extra })
    }

    fn deserialize_struct<V: Visitor<'de>>(self, name: &'static str, fields: &'static [&'static str], visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_struct(name, fields, MergeVisitor { visitor, extra: self.extra })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

struct MergeVisitor<'a, V> {
    visitor: V,
    extra: Vec<(&'static str, Vec<Entry<'a>>)>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for MergeVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let mut extra = self.extra;
        extra.reverse();
        self.visitor.visit_map(MergeMap { inner: map, extra, pending: None })
    }
}

struct MergeMap<'a, A> {
    inner: A,
    /// Still to give, last first.
    extra: Vec<(&'static str, Vec<Entry<'a>>)>,
    pending: Option<Vec<Entry<'a>>>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for MergeMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        match self.extra.pop() {
            Some((name, entries)) => {
                self.pending = Some(entries);
                seed.deserialize(de::value::BorrowedStrDeserializer::new(name)).map(Some)
            }
            None => self.inner.next_key_seed(seed),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        match self.pending.take() {
            Some(entries) => seed.deserialize(Entries { entries: entries.into_iter(), err: std::marker::PhantomData }),
            None => self.inner.next_value_seed(seed),
        }
    }
}

/// A section's entries as a sequence, each parsed when serde asks for it.
struct Entries<'a, E> {
    entries: std::vec::IntoIter<Entry<'a>>,
    err: std::marker::PhantomData<E>,
}

impl<'de, E: de::Error> Deserializer<'de> for Entries<'_, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_seq(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de, E: de::Error> SeqAccess<'de> for Entries<'_, E> {
    type Error = E;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, E> {
        let value = match self.entries.next() {
            None => return Ok(None),
            // The plain TOML most entries are written in is read without toml's parsers (the
            // same values, several times faster); the rest goes through toml.
            Some(Entry::Inline(s)) => match super::plain::inline_table(s) {
                Some(v) => return seed.deserialize(super::plain::PlainDe(v)).map(Some).map_err(E::custom),
                None => seed.deserialize(toml::de::ValueDeserializer::new(s)),
            },
            Some(Entry::Body(s)) => match super::plain::body(s) {
                Some(v) => return seed.deserialize(super::plain::PlainDe(v)).map(Some).map_err(E::custom),
                None => seed.deserialize(toml::Deserializer::new(s)),
            },
        };
        value.map(Some).map_err(E::custom)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classic(text: &str) -> Scenario {
        super::super::parse_classic(text, "t.toml").unwrap()
    }

    const BASE: &str = "name = \"x\"\nnodes = [\n  { name = \"a\", kind = \"host\" }, # a [comment] {\n  { name = \"b\", kind = \"host\" },\n]\nlinks = [ { a = \"a\", b = \"b\", rate = \"1Mbps\", delay = \"1ms\", queue = { limit = \"5pkts\" } } ]\n[run]\nduration = \"1s\"\n\n[[tcp]]\nname = \"t]{\"\nfrom = \"a\"\nto = \"b\"\nvariant = \"reno\"\n\n[[tcp]]\nname = '''x\n[[tcp]]\n'''\nfrom = \"b\" # ]]\nto = \"a\"\nvariant = \"reno\"\n";

    #[test]
    fn reads_sections_apart_and_agrees_with_the_whole_document() {
        let (rest, secs) = split(BASE).unwrap();
        assert_eq!(rest.len(), BASE.len());
        assert_eq!(rest.lines().count(), BASE.lines().count());
        assert!(!rest.contains("kind") && !rest.contains("tcp") && rest.contains("[run]"), "{rest}");
        let names: Vec<_> = secs.iter().map(|(n, e)| (*n, e.len())).collect();
        assert_eq!(names, [("nodes", 2), ("links", 1), ("tcp", 2)]);
        assert!(matches!(secs[2].1[1], Entry::Body(b) if b.contains("[[tcp]]\n'''")));
        let fast = parse(BASE).expect("read apart");
        assert_eq!(format!("{fast:?}"), format!("{:?}", classic(BASE)));
        assert_eq!(fast.tcp[1].name, "x\n[[tcp]]\n");
    }

    /// What it does not read apart is left to the classic parse (`None`), never read wrong.
    #[test]
    fn gives_up_on_what_it_does_not_read() {
        let cases = [
            // a sub-table of an entry
            BASE.replace("to = \"a\"\n", "to = \"a\"\n[tcp.x]\ny = 1\n"),
            // a section written both ways (not TOML)
            format!("{BASE}\n[[links]]\na = \"a\"\n"),
            // a quoted key
            BASE.replace("name = \"x\"", "\"name\" = \"x\""),
            // an element that is not an inline table
            BASE.replace("links = [ {", "links = [ 1, {"),
            // a missing comma
            BASE.replace("\"host\" }, #", "\"host\" } #"),
            // something after the array
            BASE.replace("\"5pkts\" } } ]", "\"5pkts\" } } ] x"),
            // a lone carriage return
            BASE.replace("[run]\n", "[run]\r"),
            // an unterminated string
            BASE.replace("name = \"t]{\"", "name = \"t]{"),
        ];
        for c in &cases {
            assert!(parse(c).is_none(), "{c}");
        }
        // Only the sections themselves: a file with none is parsed the classic way.
        assert!(split("[run]\nduration = \"1s\"\n").is_none());
    }

    /// A wrong value in an entry makes the fast parse fail; the error is the classic one.
    #[test]
    fn errors_come_from_the_classic_parse() {
        let bad = BASE.replace("delay = \"1ms\"", "delay = \"1\"");
        assert!(parse(&bad).is_none());
        let e = super::super::parse(&bad, "t.toml").unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (Some(6), "links[0].delay"), "{e}");
        let bad = BASE.replace("to = \"a\"\n", "to = \"a\"\nsart = \"1s\"\n");
        let e = super::super::parse(&bad, "t.toml").unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (Some(22), "tcp[1].sart"), "{e}");
    }

    /// Every scenario file of the repository reads the same both ways.
    #[test]
    fn every_scenario_file_reads_the_same_both_ways() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        let mut dirs = vec![root.join("scenarios"), root.join("benches"), root.join("python/tcplab")];
        while let Some(d) = dirs.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else { continue };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "toml") {
                    files.push(p);
                }
            }
        }
        let mut read_apart = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let Ok(whole) = super::super::parse_classic(&text, "t.toml") else { continue };
            if let Some(fast) = parse(&text) {
                assert_eq!(format!("{fast:?}"), format!("{whole:?}"), "{}", f.display());
                read_apart += 1;
            }
        }
        assert!(read_apart >= 4, "{read_apart} of {} files read apart", files.len());
    }

    /// The benchmark dumbbells' entries are all plain TOML: none goes through toml's parsers.
    #[test]
    fn benchmark_entries_are_read_plain() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/htsim-dumbbell/scenarios");
        for name in ["tcp-dumbbell-16.toml", "tcp-dumbbell-64-10g.toml"] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let (_, secs) = split(&text).unwrap();
            let n: usize = secs.iter().map(|(_, e)| e.len()).sum();
            assert!(n > 80, "{name}: {n} entries");
            for (sec, entries) in &secs {
                for e in entries {
                    let plain = match e {
                        Entry::Inline(s) => super::super::plain::inline_table(s),
                        Entry::Body(s) => super::super::plain::body(s),
                    };
                    assert!(plain.is_some(), "{name}: {sec}: {e:?}");
                }
            }
        }
    }
}
