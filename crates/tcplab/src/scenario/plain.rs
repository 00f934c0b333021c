//! A reader for the plain TOML a large scenario's entries are written in (issue 28: the parse of a
//! 4,096-flow dumbbell's 16,387 inline tables and 4,096 `[[tcp]]` tables through toml's value and
//! document parsers cost ≈ 0.8 G instructions, most of the run's time outside its event loop).
//!
//! Our own design, no outside source. It reads a subset of TOML 1.0 (toml.io/en/v1.0.0) and hands
//! serde the same calls toml's deserializer makes for it (`toml_edit::de::ValueDeserializer`: a
//! string as `visit_string`'s text, an integer as `visit_i64`, a table as a map in written
//! order, an option as `visit_some`, a newtype as `visit_newtype_struct`, a unit enum variant from
//! a string), so what it reads deserializes exactly as through toml. The subset: bare keys (not
//! dotted), basic strings without escapes, literal strings (neither multi-line), decimal integers
//! without underscores, `true`/`false`, inline tables and one-line arrays of these, comments at the
//! end of a body's lines. Anything else (a float, a date, an escape, a dotted or quoted key, a
//! duplicate key, anything malformed) and it gives up: `None`, and the entry goes through toml as
//! before. Deviation: an enum variant written as a table is not read (an error, so the caller's
//! whole-document parse reads the file, as for any error).

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};

/// A value of the plain subset; strings borrow the text.
#[derive(Debug, PartialEq)]
pub(super) enum Plain<'a> {
    Str(&'a str),
    Int(i64),
    Bool(bool),
    Table(Vec<(&'a str, Plain<'a>)>),
    Array(Vec<Plain<'a>>),
}

fn is_bare(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// A character TOML allows in a string or comment as is: tab, or not a control character.
fn is_plain_char(c: u8) -> bool {
    c == b'\t' || (c >= 0x20 && c != 0x7f)
}

struct Reader<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Reader<'a> {
    fn b(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.b().get(self.i).copied()
    }

    fn blank(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn key(&mut self) -> Option<&'a str> {
        let start = self.i;
        while self.peek().is_some_and(is_bare) {
            self.i += 1;
        }
        (self.i > start).then(|| &self.s[start..self.i])
    }

    /// `key = value` at the reader, the key bare (not dotted).
    fn key_value(&mut self) -> Option<(&'a str, Plain<'a>)> {
        let k = self.key()?;
        self.blank();
        if self.peek()? != b'=' {
            return None;
        }
        self.i += 1;
        self.blank();
        Some((k, self.value()?))
    }

    /// Whether a value ends at the reader (what may follow a number or a boolean).
    fn at_delimiter(&self) -> bool {
        matches!(self.peek(), None | Some(b' ' | b'\t' | b',' | b'}' | b']' | b'#' | b'\n' | b'\r'))
    }

    fn string(&mut self, q: u8) -> Option<&'a str> {
        let b = self.b();
        // Not a multi-line string.
        if b.get(self.i + 1) == Some(&q) && b.get(self.i + 2) == Some(&q) {
            return None;
        }
        let start = self.i + 1;
        let mut j = start;
        loop {
            let c = *b.get(j)?;
            if c == q {
                break;
            }
            if (q == b'"' && c == b'\\') || !is_plain_char(c) {
                return None;
            }
            j += 1;
        }
        self.i = j + 1;
        Some(&self.s[start..j])
    }

    fn integer(&mut self) -> Option<i64> {
        let b = self.b();
        let start = self.i;
        let mut j = start;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let digits = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        // No leading zero (TOML), at least one digit.
        if j == digits || (b[digits] == b'0' && j > digits + 1) {
            return None;
        }
        self.i = j;
        if !self.at_delimiter() {
            return None; // a float, a date, an underscore, a hex prefix: toml's to read
        }
        let text = self.s[start..j].strip_prefix('+').unwrap_or(&self.s[start..j]);
        text.parse().ok()
    }

    fn value(&mut self) -> Option<Plain<'a>> {
        match self.peek()? {
            q @ (b'"' | b'\'') => self.string(q).map(Plain::Str),
            b'{' => self.table(),
            b'[' => self.array(),
            b't' | b'f' => {
                let v = if self.s[self.i..].starts_with("true") { true } else if self.s[self.i..].starts_with("false") { false } else { return None };
                self.i += if v { 4 } else { 5 };
                self.at_delimiter().then_some(Plain::Bool(v))
            }
            b'0'..=b'9' | b'+' | b'-' => self.integer().map(Plain::Int),
            _ => None,
        }
    }

    /// `{ k = v, ... }` on one line, no trailing comma, no key twice.
    fn table(&mut self) -> Option<Plain<'a>> {
        self.i += 1;
        self.blank();
        let mut items: Vec<(&'a str, Plain<'a>)> = Vec::new();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(Plain::Table(items));
        }
        loop {
            let (k, v) = self.key_value()?;
            if items.iter().any(|(x, _)| *x == k) {
                return None;
            }
            items.push((k, v));
            self.blank();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.blank();
                }
                b'}' => {
                    self.i += 1;
                    return Some(Plain::Table(items));
                }
                _ => return None,
            }
        }
    }

    /// `[ v, ... ]` on one line (a trailing comma allowed, as TOML allows it).
    fn array(&mut self) -> Option<Plain<'a>> {
        self.i += 1;
        self.blank();
        let mut items = Vec::new();
        loop {
            if self.peek()? == b']' {
                self.i += 1;
                return Some(Plain::Array(items));
            }
            items.push(self.value()?);
            self.blank();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.blank();
                }
                b']' => {}
                _ => return None,
            }
        }
    }

    /// Past a comment, if one starts here.
    fn comment(&mut self) -> Option<()> {
        if self.peek() == Some(b'#') {
            while let Some(c) = self.peek().filter(|&c| c != b'\n' && c != b'\r') {
                if !is_plain_char(c) {
                    return None;
                }
                self.i += 1;
            }
        }
        Some(())
    }

    /// Past a line end (`\n` or `\r\n`), or at the end of the text.
    fn line_end(&mut self) -> Option<()> {
        match self.peek() {
            None => Some(()),
            Some(b'\n') => {
                self.i += 1;
                Some(())
            }
            Some(b'\r') if self.b().get(self.i + 1) == Some(&b'\n') => {
                self.i += 2;
                Some(())
            }
            _ => None,
        }
    }
}

/// The inline table that is the whole of `s` (`{ ... }`), if it is plain.
pub(super) fn inline_table(s: &str) -> Option<Plain<'_>> {
    let mut r = Reader { s, i: 0 };
    if r.peek()? != b'{' {
        return None;
    }
    let v = r.table()?;
    (r.i == s.len()).then_some(v)
}

/// The table a `[[section]]`'s body writes (`key = value` lines, blank lines, comments), if plain.
pub(super) fn body(s: &str) -> Option<Plain<'_>> {
    let mut r = Reader { s, i: 0 };
    let mut items: Vec<(&str, Plain)> = Vec::new();
    while r.i < s.len() {
        r.blank();
        if !matches!(r.peek(), None | Some(b'#' | b'\n' | b'\r')) {
            let (k, v) = r.key_value()?;
            if items.iter().any(|(x, _)| *x == k) {
                return None;
            }
            items.push((k, v));
            r.blank();
        }
        r.comment()?;
        r.line_end()?;
    }
    Some(Plain::Table(items))
}

/// Deserializes a [`Plain`] value as toml's `ValueDeserializer` deserializes the same value.
pub(super) struct PlainDe<'a>(pub Plain<'a>);

pub(super) type Error = de::value::Error;

impl<'de> Deserializer<'de> for PlainDe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Plain::Str(s) => visitor.visit_str(s),
            Plain::Int(n) => visitor.visit_i64(n),
            Plain::Bool(b) => visitor.visit_bool(b),
            Plain::Table(items) => visitor.visit_map(TableAccess { items: items.into_iter(), value: None }),
            Plain::Array(items) => visitor.visit_seq(ArrayAccess { items: items.into_iter() }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(self, _name: &'static str, _variants: &'static [&'static str], visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Plain::Str(s) => visitor.visit_enum(IntoDeserializer::<Error>::into_deserializer(s.to_string())),
            _ => Err(de::Error::custom("an enum variant written as a table: left to toml")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

struct TableAccess<'a> {
    items: std::vec::IntoIter<(&'a str, Plain<'a>)>,
    value: Option<Plain<'a>>,
}

impl<'de> MapAccess<'de> for TableAccess<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        match self.items.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(de::value::StrDeserializer::<Error>::new(k)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        let v = self.value.take().ok_or_else(|| de::Error::custom("a value before its key"))?;
        seed.deserialize(PlainDe(v))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct ArrayAccess<'a> {
    items: std::vec::IntoIter<Plain<'a>>,
}

impl<'de> SeqAccess<'de> for ArrayAccess<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        self.items.next().map(|v| seed.deserialize(PlainDe(v))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_plain_subset() {
        let t = inline_table("{ a = \"s0\", b = 'x y', n = -12, z = 0, on = true, q = { limit = \"1000pkts\" }, l = [1, \"a\", ], e = {} }").unwrap();
        let Plain::Table(items) = t else { panic!() };
        let keys: Vec<&str> = items.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["a", "b", "n", "z", "on", "q", "l", "e"]);
        assert_eq!(items[0].1, Plain::Str("s0"));
        assert_eq!(items[1].1, Plain::Str("x y"));
        assert_eq!(items[2].1, Plain::Int(-12));
        assert_eq!(items[4].1, Plain::Bool(true));
        assert_eq!(items[5].1, Plain::Table(vec![("limit", Plain::Str("1000pkts"))]));
        assert_eq!(items[6].1, Plain::Array(vec![Plain::Int(1), Plain::Str("a")]));
        let b = body("name = \"tcp0\"  # first\n\n# a comment\r\nstart = \"0ms\"\nwindow_scaling = false\n").unwrap();
        assert_eq!(b, Plain::Table(vec![("name", Plain::Str("tcp0")), ("start", Plain::Str("0ms")), ("window_scaling", Plain::Bool(false))]));
    }

    /// Whatever is not plain, or not TOML, is left to toml (`None`).
    #[test]
    fn gives_up_on_what_is_not_plain() {
        for s in [
            "{ a = 1.5 }",
            "{ a = 1e3 }",
            "{ a = 1_000 }",
            "{ a = 012 }",
            "{ a = 0x1f }",
            "{ a = 1979-05-27 }",
            "{ a = \"x\\ty\" }",
            "{ a = \"\"\"x\"\"\" }",
            "{ a.b = 1 }",
            "{ \"a\" = 1 }",
            "{ a = 1, a = 2 }",
            "{ a = 1, }",
            "{ a = 1 } x",
            "{ a = inf }",
            "{ a = nan }",
            "{ a = truex }",
            "{ a = \"x }",
            "{ a = 99999999999999999999 }",
            "{ a = \"\u{1}\" }",
        ] {
            assert_eq!(inline_table(s), None, "{s}");
        }
        for s in ["a = 1\na = 2\n", "a = 1 b = 2\n", "a.b = 1\n", "a = 1\r", "a = 1 # \u{1}\n", "a = [1,\n2]\n"] {
            assert_eq!(body(s), None, "{s:?}");
        }
    }
}
