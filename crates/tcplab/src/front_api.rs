//! What the Python front end (`tcplab._core`) needs from the core beyond running scenarios, so
//! it never keeps a second copy: the unit parsers of scenario files, the TOML key → line
//! locator (toml_edit's exact spans, also for sweep and reproduce files) and Jain's fairness
//! index (seed 000 §5.3.1, Jain, Chiu and Hawe 1984).

pub use crate::scenario::locate;
pub use crate::scenario::units::{parse_duration, parse_rate, parse_size};

/// Jain's fairness index (Σx)² / (n Σx²) of non-negative shares: 1 when all are equal, k/n when
/// k of n share equally and the rest get nothing. `Ok(None)` for no shares or all zero (the
/// index is undefined there); an error for a negative share.
pub fn jain_index(x: &[f64]) -> Result<Option<f64>, String> {
    if let Some(v) = x.iter().find(|v| !(**v >= 0.0)) {
        return Err(format!("Jain's index is defined for non-negative shares, got {v}"));
    }
    let (sum, sumsq) = (x.iter().sum::<f64>(), x.iter().map(|v| v * v).sum::<f64>());
    Ok((sumsq > 0.0).then(|| sum * sum / (x.len() as f64 * sumsq)))
}

/// 1-based line where the literal `key` (a sweep axis such as `"tcp[0].variant"`: dots are part
/// of the key, not a path) is written in TOML `text`: under the table `section` when given
/// (`[section]` or `section = { ... }`), else at the top level; failing that, the first place
/// anywhere in the document where a key of that name is written. None when the text is not
/// TOML or the key is nowhere.
pub fn locate_key(text: &str, key: &str, section: Option<&str>) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let line = |off: usize| text[..off.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1;
    let root: &dyn toml_edit::TableLike = doc.as_table();
    let scope = match section {
        None => Some(root),
        Some(s) => root.get(s).and_then(|i| i.as_table_like()),
    };
    if let Some(t) = scope {
        if let Some(off) = t.get_key_value(key).and_then(|(k, _)| k.span()).map(|s| s.start) {
            return Some(line(off));
        }
    }
    let mut first: Option<usize> = None;
    find_anywhere(root, key, &mut first);
    first.map(line)
}

fn find_anywhere(t: &dyn toml_edit::TableLike, key: &str, first: &mut Option<usize>) {
    for (k, item) in t.iter() {
        if k == key {
            if let Some(off) = t.get_key_value(k).and_then(|(k, _)| k.span()).map(|s| s.start) {
                *first = Some(first.map_or(off, |f| f.min(off)));
            }
        }
        match item {
            toml_edit::Item::ArrayOfTables(a) => a.iter().for_each(|t| find_anywhere(t, key, first)),
            toml_edit::Item::Value(toml_edit::Value::Array(a)) => {
                a.iter().filter_map(|v| v.as_inline_table()).for_each(|t| find_anywhere(t, key, first))
            }
            other => {
                if let Some(t) = other.as_table_like() {
                    find_anywhere(t, key, first)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_of_equal_and_skewed_shares() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), Ok(Some(1.0)));
        assert_eq!(jain_index(&[4.0, 0.0]), Ok(Some(0.5)));
        assert_eq!(jain_index(&[]), Ok(None));
        assert_eq!(jain_index(&[0.0, 0.0]), Ok(None));
        assert!(jain_index(&[1.0, -1.0]).is_err());
        assert!(jain_index(&[f64::NAN]).is_err());
    }

    #[test]
    fn locate_key_reads_quoted_dotted_keys_in_their_section() {
        let text = "title = \"t\"\nseeds = [1]\n\n[set]\n\"tcp[0].variant\" = \"reno\"\n\n[axes]\n\"tcp[0].variant\" = [\"reno\", \"vegas\"]\nmode = 1\n\n[[variants]]\nname = \"x\"\nset = { \"links[0].delay\" = \"1ms\" }\n";
        assert_eq!(locate_key(text, "tcp[0].variant", Some("axes")), Some(8));
        assert_eq!(locate_key(text, "tcp[0].variant", Some("set")), Some(5));
        assert_eq!(locate_key(text, "seeds", None), Some(2));
        // Not in the section: the first place anywhere.
        assert_eq!(locate_key(text, "links[0].delay", Some("axes")), Some(13));
        assert_eq!(locate_key(text, "name", None), Some(12));
        assert_eq!(locate_key(text, "absent", None), None);
        assert_eq!(locate_key("not toml = = 1", "x", None), None);
    }
}
