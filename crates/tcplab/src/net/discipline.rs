//! The parts of a queue-discipline registry row ([`super::registry`]): the parameters a scenario
//! set, what every discipline is built from, and the row itself.

use super::queue::{QueueDisc, QueueLimit};
use crate::engine::{SimTime, StreamRng};

/// A parameter value as the scenario typed it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamValue {
    Num(f64),
    Bool(bool),
    /// Bytes.
    Size(u64),
    Duration(SimTime),
}

/// A parameter refused: its name and why.
pub type ParamError = (&'static str, String);

/// The parameters a scenario set on one queue (only those it set).
#[derive(Clone, Copy, Debug)]
pub struct Params<'a> {
    pub set: &'a [(&'static str, ParamValue)],
}

impl Params<'_> {
    fn get(&self, k: &str) -> Option<ParamValue> {
        self.set.iter().find(|(n, _)| *n == k).map(|(_, v)| *v)
    }
    pub fn is_set(&self, k: &str) -> bool {
        self.get(k).is_some()
    }
    pub fn num(&self, k: &str) -> Option<f64> {
        match self.get(k) {
            Some(ParamValue::Num(v)) => Some(v),
            _ => None,
        }
    }
    pub fn flag(&self, k: &str) -> Option<bool> {
        match self.get(k) {
            Some(ParamValue::Bool(v)) => Some(v),
            _ => None,
        }
    }
    pub fn size(&self, k: &str) -> Option<u64> {
        match self.get(k) {
            Some(ParamValue::Size(v)) => Some(v),
            _ => None,
        }
    }
    pub fn duration(&self, k: &str) -> Option<SimTime> {
        match self.get(k) {
            Some(ParamValue::Duration(v)) => Some(v),
            _ => None,
        }
    }
    /// A positive duration, or `default` when unset.
    pub fn positive_duration(&self, k: &'static str, default: SimTime) -> Result<SimTime, ParamError> {
        match self.duration(k) {
            Some(d) if d.0 == 0 => Err((k, "must be positive".into())),
            Some(d) => Ok(d),
            None => Ok(default),
        }
    }
    /// A positive size that fits in 32 bits, or `default` when unset.
    pub fn packet_size(&self, k: &'static str, default: u32) -> Result<u32, ParamError> {
        match self.size(k) {
            Some(s) if s == 0 || s > u32::MAX as u64 => Err((k, "must be a positive size".into())),
            Some(s) => Ok(s as u32),
            None => Ok(default),
        }
    }
    /// A finite number > 0, or `default` when unset.
    pub fn positive(&self, k: &'static str, default: f64) -> Result<f64, ParamError> {
        match self.num(k) {
            Some(v) if !(v > 0.0 && v.is_finite()) => Err((k, format!("must be a finite number > 0, got {v}"))),
            Some(v) => Ok(v),
            None => Ok(default),
        }
    }
}

/// What every discipline is built from besides its own parameters.
pub struct QueueSetup {
    /// The buffer (`limit`).
    pub limit: QueueLimit,
    /// The rate of the link direction this queue feeds.
    pub link_rate_bps: u64,
    /// This queue's own random stream (`queue/<kind>/<from>-><to>`).
    pub rng: StreamRng,
}

/// One row of the registry.
#[derive(Clone, Copy, Debug)]
pub struct Discipline {
    pub name: &'static str,
    /// How its parameters are called in messages ("RED parameter").
    pub family: &'static str,
    /// One line for `tcplab variants`.
    pub description: &'static str,
    /// Parameters besides `limit` (which every discipline takes).
    pub params: &'static [&'static str],
    pub build: fn(QueueSetup, &Params) -> Result<Box<dyn QueueDisc>, ParamError>,
}

