//! The columns of a run directory's Parquet trace that a graph needs, without polars (issue 28: a
//! `tcplab plot` at interactive speed; importing polars and running its queries were a third of a
//! plot's time). Source: the Parquet format (Apache Parquet, format/README: row groups, column
//! chunks, definition levels for nulls), read with the `parquet` crate's column readers, which the
//! native binary already links to write the same files. Deviations: none in what is read; only
//! flat schemas (no nested or repeated columns: the traces have none), and physical types BOOLEAN,
//! INT32, INT64, FLOAT, DOUBLE and BYTE_ARRAY (strings); anything else is an error the caller
//! answers by reading the file with polars, which also words the error of a file that is no
//! Parquet.
//!
//! What comes back per column is a buffer numpy views as it is: float columns as f64, integer and
//! boolean columns as i64, string columns as u32 codes into their distinct values (in order of
//! first appearance), with a byte per row that is 1 where the row is null (None when no row is).

use std::collections::HashMap;
use std::fs::File;

use parquet::basic::Type as PhysicalType;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// One column's rows (those kept by the filter), in file order.
pub enum Values {
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// Codes into the distinct strings, and the strings.
    Str(Vec<u32>, Vec<String>),
}

pub struct Column {
    pub name: String,
    pub values: Values,
    /// One byte per row, 1 where the value is null; None when no row is null.
    pub nulls: Option<Vec<u8>>,
}

pub struct Table {
    /// Every column of the file, in schema order.
    pub names: Vec<String>,
    /// The row numbers (in the file) of the rows kept.
    pub rows: Vec<u64>,
    /// The requested columns present in the file, in the order requested.
    pub columns: Vec<Column>,
}

type Res<T> = Result<T, String>;

fn perr(e: parquet::errors::ParquetError) -> String {
    e.to_string()
}

/// Every value of a column chunk with the definition levels, dense: (values for all rows, with
/// `fill` at nulls; per-row null flags, empty when the column cannot hold a null).
fn read_chunk<T: DataType>(r: &mut ColumnReaderImpl<T>, n: usize, max_def: i16, fill: T::T) -> Res<(Vec<T::T>, Vec<u8>)>
where
    T::T: Clone,
{
    let mut vals: Vec<T::T> = Vec::with_capacity(n);
    let mut defs: Vec<i16> = Vec::with_capacity(if max_def > 0 { n } else { 0 });
    let (records, nvals, _) = r.read_records(n, if max_def > 0 { Some(&mut defs) } else { None }, None, &mut vals).map_err(perr)?;
    if records != n {
        return Err(format!("a row group promises {n} rows and holds {records}"));
    }
    vals.truncate(nvals);
    if max_def == 0 || nvals == n {
        return Ok((vals, Vec::new()));
    }
    let mut dense = Vec::with_capacity(n);
    let mut nulls = vec![0u8; n];
    let mut it = vals.into_iter();
    for (i, d) in defs.iter().take(n).enumerate() {
        if *d == max_def {
            dense.push(it.next().ok_or("fewer values than definition levels")?);
        } else {
            dense.push(fill.clone());
            nulls[i] = 1;
        }
    }
    Ok((dense, nulls))
}

/// Per-row string codes of a BYTE_ARRAY chunk into `cats` (extended with new strings).
fn codes_of(vals: &[parquet::data_type::ByteArray], cats: &mut Vec<String>, index: &mut HashMap<Vec<u8>, u32>) -> Res<Vec<u32>> {
    let mut out = Vec::with_capacity(vals.len());
    let mut last: Option<(&[u8], u32)> = None; // runs of one value (one connection, one link) are common
    for v in vals {
        let b = v.data();
        if let Some((lb, lc)) = last {
            if lb == b {
                out.push(lc);
                continue;
            }
        }
        let code = match index.get(b) {
            Some(c) => *c,
            None => {
                let s = std::str::from_utf8(b).map_err(|_| "a string column holds bytes that are not UTF-8".to_string())?;
                let c = cats.len() as u32;
                cats.push(s.to_string());
                index.insert(b.to_vec(), c);
                c
            }
        };
        last = Some((b, code));
        out.push(code);
    }
    Ok(out)
}

/// A string column chunk: its distinct values (`dict`), per row an index into them, and per-row
/// null flags (empty when the column cannot hold a null). Dictionary-encoded chunks (what polars
/// and the native writer write) are decoded from their pages directly: a value per row through the
/// column reader costs a reference-counted buffer per row, 3-4 times the time (issue 28).
struct StrChunk {
    dict: Vec<Vec<u8>>,
    idx: Vec<u32>,
    nulls: Vec<u8>,
}

fn str_chunk(rg: &dyn parquet::file::reader::RowGroupReader, ci: usize, n: usize, max_def: i16) -> Res<StrChunk> {
    let mut pages = rg.get_column_page_reader(ci).map_err(perr)?;
    if let Some(c) = dict_pages(pages.as_mut(), n, max_def)? {
        return Ok(c);
    }
    // Not dictionary-encoded throughout: through the column reader.
    let mut r = match rg.get_column_reader(ci).map_err(perr)? {
        ColumnReader::ByteArrayColumnReader(r) => r,
        _ => return Err("not a string column".to_string()),
    };
    // a null's place holds an empty string (a ByteArray without data panics when read)
    let (vals, nulls) = read_chunk(&mut r, n, max_def, parquet::data_type::ByteArray::from(Vec::<u8>::new()))?;
    let mut dict: Vec<String> = Vec::new();
    let mut index = HashMap::new();
    let idx = codes_of(&vals, &mut dict, &mut index)?;
    Ok(StrChunk { dict: dict.into_iter().map(String::into_bytes).collect(), idx, nulls })
}

/// Bits of a level or dictionary index in the RLE/bit-packed hybrid encoding for `max` at most.
fn bit_width(max: u32) -> u32 {
    32 - max.leading_zeros()
}

/// Decode `n` values of the RLE/bit-packed hybrid encoding (Parquet format, Encodings.md) of
/// `bw`-bit values from `data` onto `out`.
fn hybrid(data: &[u8], bw: u32, n: usize, out: &mut Vec<u32>) -> Res<()> {
    if bw > 32 {
        return Err(format!("a bit width of {bw}"));
    }
    let short = || "a page ends inside its encoded values".to_string();
    let target = out.len() + n;
    let width_bytes = bw.div_ceil(8) as usize;
    let mask: u64 = if bw == 32 { u32::MAX as u64 } else { (1u64 << bw) - 1 };
    let mut pos = 0usize;
    while out.len() < target {
        let mut header: u64 = 0;
        let mut shift = 0;
        loop {
            let b = *data.get(pos).ok_or_else(short)?;
            pos += 1;
            header |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 56 {
                return Err("a run header longer than 8 bytes".to_string());
            }
        }
        let left = target - out.len();
        if header & 1 == 0 {
            let count = (header >> 1) as usize;
            let bytes = data.get(pos..pos + width_bytes).ok_or_else(short)?;
            pos += width_bytes;
            let v = bytes.iter().rev().fold(0u32, |acc, b| (acc << 8) | u32::from(*b));
            out.extend(std::iter::repeat(v).take(count.min(left)));
        } else {
            let groups = (header >> 1) as usize;
            let nbytes = groups * bw as usize;
            let end = (pos + nbytes).min(data.len());
            let chunk = &data[pos..end];
            pos += nbytes;
            let take = (groups * 8).min(left);
            if take * bw as usize > chunk.len() * 8 {
                return Err(short());
            }
            for i in 0..take {
                let bit = i * bw as usize;
                let (byte, off) = (bit / 8, bit % 8);
                let mut w: u64 = 0;
                for (k, b) in chunk[byte..chunk.len().min(byte + 5)].iter().enumerate() {
                    w |= u64::from(*b) << (8 * k);
                }
                out.push(((w >> off) & mask) as u32);
            }
        }
    }
    Ok(())
}

/// A string column chunk from its pages when every data page is dictionary-encoded; None when
/// one is not (PLAIN after a dictionary grew too big, say).
fn dict_pages(pages: &mut dyn parquet::column::page::PageReader, n: usize, max_def: i16) -> Res<Option<StrChunk>> {
    use parquet::basic::Encoding;
    use parquet::column::page::Page;
    let mut dict: Vec<Vec<u8>> = Vec::new();
    let mut idx: Vec<u32> = Vec::with_capacity(n);
    let mut nulls: Vec<u8> = Vec::new();
    let mut levels: Vec<u32> = Vec::new();
    let mut vals: Vec<u32> = Vec::new();
    let lbw = bit_width(max_def.max(0) as u32);
    while let Some(page) = pages.get_next_page().map_err(perr)? {
        let (buf, rows, levels_at, values_at) = match &page {
            Page::DictionaryPage { buf, num_values, encoding, .. } => {
                if !matches!(encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
                    return Ok(None);
                }
                let b: &[u8] = buf.as_ref();
                let mut pos = 0usize;
                dict.clear();
                for _ in 0..*num_values {
                    let len = b.get(pos..pos + 4).ok_or("a dictionary page ends early")?;
                    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
                    dict.push(b.get(pos + 4..pos + 4 + len).ok_or("a dictionary page ends early")?.to_vec());
                    pos += 4 + len;
                }
                continue;
            }
            Page::DataPage { buf, num_values, encoding, def_level_encoding, .. } => {
                if !matches!(encoding, Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY)
                    || (max_def > 0 && *def_level_encoding != Encoding::RLE)
                {
                    return Ok(None);
                }
                let b: &[u8] = buf.as_ref();
                if max_def > 0 {
                    let len = b.get(0..4).ok_or("a data page ends early")?;
                    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
                    (buf, *num_values as usize, Some((4usize, 4 + len)), 4 + len)
                } else {
                    (buf, *num_values as usize, None, 0)
                }
            }
            Page::DataPageV2 { buf, num_values, encoding, def_levels_byte_len, rep_levels_byte_len, .. } => {
                if !matches!(encoding, Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY) || *rep_levels_byte_len != 0 {
                    return Ok(None);
                }
                let d = *def_levels_byte_len as usize;
                (buf, *num_values as usize, if max_def > 0 { Some((0usize, d)) } else { None }, d)
            }
        };
        let b: &[u8] = buf.as_ref();
        let present = match levels_at {
            Some((from, to)) => {
                levels.clear();
                hybrid(b.get(from..to).ok_or("a data page ends early")?, lbw, rows, &mut levels)?;
                if nulls.is_empty() {
                    nulls.resize(idx.len(), 0);
                }
                levels.iter().filter(|&&l| l == max_def as u32).count()
            }
            None => rows,
        };
        vals.clear();
        if present > 0 {
            let body = b.get(values_at..).ok_or("a data page ends early")?;
            let bw = u32::from(*body.first().ok_or("a data page ends early")?);
            hybrid(&body[1..], bw, present, &mut vals)?;
        }
        if vals.iter().any(|&v| v as usize >= dict.len()) {
            return Err("a dictionary index past the dictionary".to_string());
        }
        if levels_at.is_some() {
            let mut it = vals.iter();
            for &l in &levels {
                if l == max_def as u32 {
                    idx.push(*it.next().ok_or("fewer values than levels")?);
                    nulls.push(0);
                } else {
                    idx.push(0);
                    nulls.push(1);
                }
            }
        } else {
            idx.extend_from_slice(&vals);
            if !nulls.is_empty() {
                nulls.resize(idx.len(), 0);
            }
        }
    }
    if idx.len() != n {
        return Err(format!("a row group promises {n} rows and holds {}", idx.len()));
    }
    if dict.is_empty() && n > 0 && nulls.iter().any(|&x| x == 0) {
        return Err("dictionary indices without a dictionary".to_string());
    }
    Ok(Some(StrChunk { dict, idx, nulls }))
}

enum Acc {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<u32>, Vec<String>, HashMap<Vec<u8>, u32>),
}

/// Read `columns` of the Parquet file at `path`, keeping only the rows whose string column
/// `filter.0` equals `filter.1` (every row without a filter).
pub fn read(path: &str, columns: &[String], filter: Option<(&str, &str)>) -> Res<Table> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let reader = SerializedFileReader::new(file).map_err(perr)?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let names: Vec<String> = (0..schema.num_columns()).map(|i| schema.column(i).path().string()).collect();
    let index_of = |name: &str| names.iter().position(|n| n == name);
    for i in 0..schema.num_columns() {
        let c = schema.column(i);
        if c.max_rep_level() > 0 || c.path().parts().len() != 1 {
            return Err(format!("column {} is nested or repeated", names[i]));
        }
    }
    let wanted: Vec<(usize, String)> = columns.iter().filter_map(|c| index_of(c).map(|i| (i, c.clone()))).collect();
    let filter_col = match filter {
        Some((c, v)) => Some((index_of(c).ok_or_else(|| format!("no column {c} to select rows by"))?, v)),
        None => None,
    };
    let mut accs: Vec<Acc> = Vec::with_capacity(wanted.len());
    for (ci, _) in &wanted {
        accs.push(match schema.column(*ci).physical_type() {
            PhysicalType::FLOAT | PhysicalType::DOUBLE => Acc::F64(Vec::new()),
            PhysicalType::BOOLEAN | PhysicalType::INT32 | PhysicalType::INT64 => Acc::I64(Vec::new()),
            PhysicalType::BYTE_ARRAY => Acc::Str(Vec::new(), Vec::new(), HashMap::new()),
            t => return Err(format!("column {} has physical type {t}", names[*ci])),
        });
    }
    let mut nulls: Vec<Vec<u8>> = vec![Vec::new(); wanted.len()];
    let mut any_null = vec![false; wanted.len()];
    let mut rows: Vec<u64> = Vec::new();
    let mut first_row: u64 = 0;
    for g in 0..reader.num_row_groups() {
        let rg = reader.get_row_group(g).map_err(perr)?;
        let n = usize::try_from(rg.metadata().num_rows()).map_err(|_| "a row group has a negative row count".to_string())?;
        // The rows of this group to keep (all of them without a filter).
        let sel: Option<Vec<usize>> = match filter_col {
            None => None,
            Some((fi, value)) => {
                if schema.column(fi).physical_type() != PhysicalType::BYTE_ARRAY {
                    return Err(format!("column {} to select rows by is not a string column", names[fi]));
                }
                let c = str_chunk(rg.as_ref(), fi, n, schema.column(fi).max_def_level())?;
                let want = value.as_bytes();
                let hit: Vec<bool> = c.dict.iter().map(|d| d.as_slice() == want).collect();
                Some((0..n).filter(|&i| (c.nulls.is_empty() || c.nulls[i] == 0) && hit[c.idx[i] as usize]).collect())
            }
        };
        if let Some(s) = &sel {
            if s.is_empty() {
                first_row += n as u64;
                continue;
            }
            rows.extend(s.iter().map(|&i| first_row + i as u64));
        } else {
            rows.extend(first_row..first_row + n as u64);
        }
        let kept = sel.as_ref().map_or(n, |s| s.len());
        for (k, (ci, _)) in wanted.iter().enumerate() {
            let max_def = schema.column(*ci).max_def_level();
            let reader = rg.get_column_reader(*ci).map_err(perr)?;
            let nl: Vec<u8>;
            match (reader, &mut accs[k]) {
                (ColumnReader::DoubleColumnReader(mut r), Acc::F64(out)) => {
                    let (v, l) = read_chunk(&mut r, n, max_def, f64::NAN)?;
                    take_into(out, &v, sel.as_deref());
                    nl = l;
                }
                (ColumnReader::FloatColumnReader(mut r), Acc::F64(out)) => {
                    let (v, l) = read_chunk(&mut r, n, max_def, f32::NAN)?;
                    let v: Vec<f64> = v.into_iter().map(f64::from).collect();
                    take_into(out, &v, sel.as_deref());
                    nl = l;
                }
                (ColumnReader::Int64ColumnReader(mut r), Acc::I64(out)) => {
                    let (v, l) = read_chunk(&mut r, n, max_def, 0)?;
                    take_into(out, &v, sel.as_deref());
                    nl = l;
                }
                (ColumnReader::Int32ColumnReader(mut r), Acc::I64(out)) => {
                    let (v, l) = read_chunk(&mut r, n, max_def, 0)?;
                    let v: Vec<i64> = v.into_iter().map(i64::from).collect();
                    take_into(out, &v, sel.as_deref());
                    nl = l;
                }
                (ColumnReader::BoolColumnReader(mut r), Acc::I64(out)) => {
                    let (v, l) = read_chunk(&mut r, n, max_def, false)?;
                    let v: Vec<i64> = v.into_iter().map(i64::from).collect();
                    take_into(out, &v, sel.as_deref());
                    nl = l;
                }
                (ColumnReader::ByteArrayColumnReader(_), Acc::Str(out, cats, index)) => {
                    let c = str_chunk(rg.as_ref(), *ci, n, max_def)?;
                    // dictionary index -> code among the column's distinct strings so far
                    let mut map = Vec::with_capacity(c.dict.len());
                    for d in &c.dict {
                        map.push(match index.get(d) {
                            Some(code) => *code,
                            None => {
                                let text = std::str::from_utf8(d).map_err(|_| "a string column holds bytes that are not UTF-8".to_string())?;
                                let code = cats.len() as u32;
                                cats.push(text.to_string());
                                index.insert(d.clone(), code);
                                code
                            }
                        });
                    }
                    let code_of = |i: usize| if c.nulls.is_empty() || c.nulls[i] == 0 { map[c.idx[i] as usize] } else { 0 };
                    match sel.as_deref() {
                        None => out.extend((0..n).map(code_of)),
                        Some(s) => out.extend(s.iter().map(|&i| code_of(i))),
                    }
                    nl = c.nulls;
                }
                _ => return Err(format!("column {} changes type between row groups", names[*ci])),
            }
            let dst = &mut nulls[k];
            if nl.is_empty() {
                dst.resize(dst.len() + kept, 0);
            } else {
                let before = dst.len();
                take_into(dst, &nl, sel.as_deref());
                any_null[k] |= dst[before..].iter().any(|&b| b != 0);
            }
        }
        first_row += n as u64;
    }
    let columns = wanted
        .into_iter()
        .zip(accs)
        .zip(nulls.into_iter().zip(any_null))
        .map(|(((_, name), acc), (nl, any))| Column {
            name,
            values: match acc {
                Acc::F64(v) => Values::F64(v),
                Acc::I64(v) => Values::I64(v),
                Acc::Str(v, cats, _) => Values::Str(v, cats),
            },
            nulls: if any { Some(nl) } else { None },
        })
        .collect();
    Ok(Table { names, rows, columns })
}

fn take_into<T: Clone>(out: &mut Vec<T>, v: &[T], sel: Option<&[usize]>) {
    match sel {
        None => out.extend_from_slice(v),
        Some(s) => out.extend(s.iter().map(|&i| v[i].clone())),
    }
}
