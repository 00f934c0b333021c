//! A serde serializer that builds Python objects directly (dict, list, str, int, float, bool,
//! None), so the run summary reaches Python without a JSON text in between: `json.loads` of the
//! 20 MB summary of a 4,096-flow run took 0.25 s and, with the text in Rust and in Python, about
//! 100 MB at the run's end (issue 13).
//!
//! The objects equal what `json.loads(serde_json::to_string(value))` gives: struct fields and map
//! entries in serialization order, skipped fields absent, non-finite floats as None (serde_json
//! writes them as `null`), unit variants as their name, newtype variants as a one-entry dict.
//! Dict keys that are strings are interned, as `json.loads` shares repeated keys.
//!
//! Measured against the `pythonize` crate (0.23, the same objects) on 2026-11-27 (issue 23), best
//! of 15 on a loaded 2-core machine: a 256-flow run's summary (1.3 MB of JSON) 2.1-2.4 ms here,
//! 2.4-8.1 ms with pythonize; a 1,024-flow run's (5.0 MB) 25-34 ms here, 60-69 ms with pythonize
//! (json.loads of the text: 65-94 ms). pythonize also hands NaN over as a float where
//! summary.json has null, and makes every dict key anew. So this file stays.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde::ser::{self, Serialize};

#[derive(Debug)]
pub struct Error(pub PyErr);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error(PyValueError::new_err(msg.to_string()))
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error(e)
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

/// `value` as Python objects.
pub fn to_python<'py, T: Serialize + ?Sized>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let names = FieldNames::default();
    value.serialize(PySerializer { py, names: &names }).map_err(|e| e.0)
}

/// Struct field names as Python strings, made once per name: a summary has ~650,000 fields at
/// 4,096 flows, of ~130 names. The names are `&'static str`, so their address is the key.
#[derive(Default)]
struct FieldNames<'py>(std::cell::RefCell<std::collections::HashMap<(usize, usize), Bound<'py, PyString>>>);

impl<'py> FieldNames<'py> {
    fn get(&self, py: Python<'py>, name: &'static str) -> Bound<'py, PyString> {
        self.0.borrow_mut().entry((name.as_ptr() as usize, name.len())).or_insert_with(|| PyString::intern(py, name)).clone()
    }
}

#[derive(Clone, Copy)]
pub struct PySerializer<'a, 'py> {
    py: Python<'py>,
    names: &'a FieldNames<'py>,
}

type Obj<'py> = Bound<'py, PyAny>;

fn key<'py>(py: Python<'py>, k: &str) -> Obj<'py> {
    PyString::intern(py, k).into_any()
}

impl<'a, 'py> ser::Serializer for PySerializer<'a, 'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    type SerializeSeq = SeqBuilder<'a, 'py>;
    type SerializeTuple = SeqBuilder<'a, 'py>;
    type SerializeTupleStruct = SeqBuilder<'a, 'py>;
    type SerializeTupleVariant = VariantSeqBuilder<'a, 'py>;
    type SerializeMap = MapBuilder<'a, 'py>;
    type SerializeStruct = MapBuilder<'a, 'py>;
    type SerializeStructVariant = VariantMapBuilder<'a, 'py>;

    fn serialize_bool(self, v: bool) -> Result<Obj<'py>, Error> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }
    fn serialize_i8(self, v: i8) -> Result<Obj<'py>, Error> {
        self.serialize_i64(v as i64)
    }
    fn serialize_i16(self, v: i16) -> Result<Obj<'py>, Error> {
        self.serialize_i64(v as i64)
    }
    fn serialize_i32(self, v: i32) -> Result<Obj<'py>, Error> {
        self.serialize_i64(v as i64)
    }
    fn serialize_i64(self, v: i64) -> Result<Obj<'py>, Error> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn serialize_i128(self, v: i128) -> Result<Obj<'py>, Error> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn serialize_u8(self, v: u8) -> Result<Obj<'py>, Error> {
        self.serialize_u64(v as u64)
    }
    fn serialize_u16(self, v: u16) -> Result<Obj<'py>, Error> {
        self.serialize_u64(v as u64)
    }
    fn serialize_u32(self, v: u32) -> Result<Obj<'py>, Error> {
        self.serialize_u64(v as u64)
    }
    fn serialize_u64(self, v: u64) -> Result<Obj<'py>, Error> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn serialize_u128(self, v: u128) -> Result<Obj<'py>, Error> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn serialize_f32(self, v: f32) -> Result<Obj<'py>, Error> {
        // serde_json writes an f32's shortest decimal, which json.loads reads as the nearest f64
        // (0.1f32 -> "0.1" -> 0.1, not 0.10000000149011612).
        self.serialize_f64(if v.is_finite() { v.to_string().parse().unwrap_or(v as f64) } else { v as f64 })
    }
    fn serialize_f64(self, v: f64) -> Result<Obj<'py>, Error> {
        if v.is_finite() {
            Ok(PyFloat::new(self.py, v).into_any())
        } else {
            self.serialize_none() // serde_json writes NaN and ±inf as null
        }
    }
    fn serialize_char(self, v: char) -> Result<Obj<'py>, Error> {
        self.serialize_str(v.encode_utf8(&mut [0u8; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Obj<'py>, Error> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Obj<'py>, Error> {
        // serde_json writes bytes as an array of numbers.
        let items: Vec<Obj<'py>> = v.iter().map(|b| self.serialize_u8(*b)).collect::<Result<_, _>>()?;
        Ok(PyList::new(self.py, items)?.into_any())
    }
    fn serialize_none(self) -> Result<Obj<'py>, Error> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Obj<'py>, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Obj<'py>, Error> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Obj<'py>, Error> {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<Obj<'py>, Error> {
        Ok(key(self.py, variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<Obj<'py>, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Obj<'py>, Error> {
        let d = PyDict::new(self.py);
        d.set_item(key(self.py, variant), value.serialize(self)?)?;
        Ok(d.into_any())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder<'a, 'py>, Error> {
        Ok(SeqBuilder { ser: self, items: Vec::with_capacity(len.unwrap_or(0)) })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqBuilder<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSeqBuilder<'a, 'py>, Error> {
        Ok(VariantSeqBuilder { variant, seq: self.serialize_seq(Some(len))? })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapBuilder<'a, 'py>, Error> {
        Ok(MapBuilder { ser: self, dict: PyDict::new(self.py), key: None })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<MapBuilder<'a, 'py>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantMapBuilder<'a, 'py>, Error> {
        Ok(VariantMapBuilder { variant, map: self.serialize_map(Some(len))? })
    }
}

pub struct SeqBuilder<'a, 'py> {
    ser: PySerializer<'a, 'py>,
    items: Vec<Obj<'py>>,
}

impl<'a, 'py> SeqBuilder<'a, 'py> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(value.serialize(self.ser)?);
        Ok(())
    }
    fn finish(self) -> Result<Obj<'py>, Error> {
        Ok(PyList::new(self.ser.py, self.items)?.into_any())
    }
}

impl<'a, 'py> ser::SerializeSeq for SeqBuilder<'a, 'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        self.finish()
    }
}

impl<'a, 'py> ser::SerializeTuple for SeqBuilder<'a, 'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        self.finish()
    }
}

impl<'a, 'py> ser::SerializeTupleStruct for SeqBuilder<'a, 'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        self.finish()
    }
}

pub struct VariantSeqBuilder<'a, 'py> {
    variant: &'static str,
    seq: SeqBuilder<'a, 'py>,
}

impl<'a, 'py> ser::SerializeTupleVariant for VariantSeqBuilder<'a, 'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.seq.push(value)
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        let py = self.seq.ser.py;
        let d = PyDict::new(py);
        d.set_item(key(py, self.variant), self.seq.finish()?)?;
        Ok(d.into_any())
    }
}

pub struct MapBuilder<'a, 'py> {
    ser: PySerializer<'a, 'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Obj<'py>>,
}

/// Map keys: strings (interned), numbers and booleans written as JSON does (as strings).
struct KeySerializer<'py> {
    py: Python<'py>,
}

impl<'py> KeySerializer<'py> {
    fn text(&self, s: &str) -> Result<Obj<'py>, Error> {
        Ok(key(self.py, s))
    }
}

fn key_must_be_a_string() -> Error {
    <Error as ser::Error>::custom("key must be a string")
}

impl<'py> ser::Serializer for KeySerializer<'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    type SerializeSeq = ser::Impossible<Obj<'py>, Error>;
    type SerializeTuple = ser::Impossible<Obj<'py>, Error>;
    type SerializeTupleStruct = ser::Impossible<Obj<'py>, Error>;
    type SerializeTupleVariant = ser::Impossible<Obj<'py>, Error>;
    type SerializeMap = ser::Impossible<Obj<'py>, Error>;
    type SerializeStruct = ser::Impossible<Obj<'py>, Error>;
    type SerializeStructVariant = ser::Impossible<Obj<'py>, Error>;

    fn serialize_bool(self, v: bool) -> Result<Obj<'py>, Error> {
        self.text(if v { "true" } else { "false" })
    }
    fn serialize_i8(self, v: i8) -> Result<Obj<'py>, Error> {
        self.text(&v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<Obj<'py>, Error> {
        self.text(&v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<Obj<'py>, Error> {
        self.text(&v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<Obj<'py>, Error> {
        self.text(&v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<Obj<'py>, Error> {
        self.text(&v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<Obj<'py>, Error> {
        self.text(&v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<Obj<'py>, Error> {
        self.text(&v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<Obj<'py>, Error> {
        self.text(&v.to_string())
    }
    fn serialize_f32(self, _v: f32) -> Result<Obj<'py>, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_f64(self, _v: f64) -> Result<Obj<'py>, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_char(self, v: char) -> Result<Obj<'py>, Error> {
        self.text(v.encode_utf8(&mut [0u8; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Obj<'py>, Error> {
        self.text(v)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Obj<'py>, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<Obj<'py>, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<Obj<'py>, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<Obj<'py>, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Obj<'py>, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<Obj<'py>, Error> {
        self.text(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<Obj<'py>, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<Obj<'py>, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

impl<'a, 'py> ser::SerializeMap for MapBuilder<'a, 'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Error> {
        self.key = Some(k.serialize(KeySerializer { py: self.ser.py })?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let k = self.key.take().ok_or_else(|| <Error as ser::Error>::custom("map value without a key"))?;
        self.dict.set_item(k, value.serialize(self.ser)?)?;
        Ok(())
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        Ok(self.dict.into_any())
    }
}

impl<'a, 'py> ser::SerializeStruct for MapBuilder<'a, 'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, name: &'static str, value: &T) -> Result<(), Error> {
        self.dict.set_item(self.ser.names.get(self.ser.py, name), value.serialize(self.ser)?)?;
        Ok(())
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        Ok(self.dict.into_any())
    }
}

pub struct VariantMapBuilder<'a, 'py> {
    variant: &'static str,
    map: MapBuilder<'a, 'py>,
}

impl<'a, 'py> ser::SerializeStructVariant for VariantMapBuilder<'a, 'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, name: &'static str, value: &T) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(&mut self.map, name, value)
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        let py = self.map.ser.py;
        let d = PyDict::new(py);
        d.set_item(key(py, self.variant), self.map.dict)?;
        Ok(d.into_any())
    }
}
