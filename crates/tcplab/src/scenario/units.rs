//! Quantities with units, parsed strictly.
//!
//! * Sizes: `B`, `KB`, `MB`, `GB` with KB = 1024 bytes, MB = 1024 KB, as the seeds write them
//!   ("a 1 MByte transfer", "1.4 KB packets"). Fractions are allowed and rounded to the
//!   nearest byte ("1.4KB" = 1434 bytes).
//! * Bit rates: `bps`/`bit/s`, `kbps`/`kbit/s`, `Mbps`/`Mbit/s`, `Gbps`/`Gbit/s`, with k = 1000.
//! * Byte rates: `B/s`, `KB/s`, `MB/s` with the same 1024 rule as sizes ("200KB/s" =
//!   204800 bytes/s = 1 638 400 bit/s).
//! * Durations: `ns`, `us`, `ms`, `s`, `min`.
//! * Queue limits: `10pkts` (also `pkt`, `packets`) or any size.
//! * Positions on a `[[lan]]` segment: a distance `m`/`km` (signals travel at 0.77 c, the
//!   minimum 802.3 allows on 10BASE5 coax: 4.33 ns per metre) or the signal's time from the
//!   segment's end in any duration unit (`"10us"`).
//!
//! A bare number is an error: the unit must be written.

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject, StringValidation};
use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

use crate::engine::SimTime;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    if num.is_empty() {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, unit.trim()))
}

/// Largest size a scenario may write (1 PB); more would not fit the engine's byte counters.
pub const MAX_SIZE_BYTES: u64 = 1 << 50;
/// Highest rate a scenario may write: 10 Tbit/s.
pub const MAX_RATE_BPS: f64 = 1e13;

pub fn parse_size(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("expected a size like \"1.4KB\", got {s:?}"))?;
    // Prefixes are case-insensitive ("kB" = "KB"); the B must be a capital: a lowercase b means
    // bits elsewhere, and a size in bits would be read 8× off.
    let mult = match unit {
        "" => return Err(format!("expected a size like \"1.4KB\", got {s:?} (the unit is required: B, KB, MB, GB)")),
        u if u.eq_ignore_ascii_case("bytes") || u.eq_ignore_ascii_case("byte") => 1.0,
        u if u.ends_with('B') => match u[..u.len() - 1].to_ascii_lowercase().as_str() {
            "" => 1.0,
            "k" => 1024.0,
            "m" => 1024.0 * 1024.0,
            "g" => 1024.0 * 1024.0 * 1024.0,
            _ => return Err(format!("expected a size like \"1.4KB\", got {s:?} (unknown unit {unit:?}; use B, KB, MB or GB)")),
        },
        u if u.ends_with('b') && u.len() <= 2 => {
            return Err(format!("expected a size like \"1.4KB\", got {s:?} (ambiguous unit {unit:?}: a lowercase b means bits; sizes are in bytes: B, KB, MB, GB)"))
        }
        _ => return Err(format!("expected a size like \"1.4KB\", got {s:?} (unknown unit {unit:?}; use B, KB, MB or GB)")),
    };
    if v < 0.0 {
        return Err(format!("expected a non-negative size, got {s:?}"));
    }
    // Larger values would saturate the u64 silently (a 40-digit size became u64::MAX).
    if v * mult > MAX_SIZE_BYTES as f64 {
        return Err(format!("size {s:?} is too large: at most 1048576GB (1 PB)"));
    }
    Ok((v * mult).round() as u64)
}

/// Returns bits per second.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let eg = "expected a rate like \"1.6Mbps\", \"800kbit/s\" or \"200KB/s\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{eg}, got {s:?}"))?;
    // Prefixes are case-insensitive ("10mbps" = "10Mbps"); what must stay exact is bits vs
    // bytes: "bps"/"bit/s" are bits, "B/s" (capital B) bytes, and "MBps" or "mb/s" are refused
    // as ambiguous rather than guessed.
    let lower = unit.to_ascii_lowercase();
    let prefix_mult = |p: &str, k: f64| -> Option<f64> {
        match p {
            "" => Some(1.0),
            "k" => Some(k),
            "m" => Some(k * k),
            "g" => Some(k * k * k),
            _ => None,
        }
    };
    let unknown = || format!("{eg}, got {s:?} (unknown unit {unit:?})");
    let bps = if unit.is_empty() {
        return Err(format!("{eg}, got {s:?} (the unit is required)"));
    } else if let Some(p) = lower.strip_suffix("bit/s") {
        prefix_mult(p, 1e3).ok_or_else(unknown)?
    } else if unit.ends_with("bps") {
        prefix_mult(&lower[..lower.len() - 3], 1e3).ok_or_else(unknown)?
    } else if let Some(p) = unit.strip_suffix("B/s") {
        8.0 * prefix_mult(&p.to_ascii_lowercase(), 1024.0).ok_or_else(unknown)?
    } else if unit.ends_with("Bps") || lower.ends_with("b/s") {
        return Err(format!("{eg}, got {s:?} (ambiguous unit {unit:?}: write \"Mbit/s\" or \"Mbps\" for bits, \"MB/s\" for bytes per second)"));
    } else {
        return Err(unknown());
    };
    if v <= 0.0 {
        return Err(format!("expected a positive rate, got {s:?}"));
    }
    // A 40-digit rate used to saturate to u64::MAX bit/s; transmission times below 1 ns per
    // byte would round to zero anyway.
    if v * bps > MAX_RATE_BPS {
        return Err(format!("rate {s:?} is too high: at most 10Tbit/s (\"10000Gbps\")"));
    }
    Ok(v * bps)
}

pub fn parse_duration(s: &str) -> Result<SimTime, String> {
    let eg = "expected a duration like \"50ms\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{eg}, got {s:?}"))?;
    let ns = match unit.to_ascii_lowercase().as_str() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "" => return Err(format!("{eg}, got {s:?} (the unit is required: ns, us, ms, s, min)")),
        _ => return Err(format!("{eg}, got {s:?} (unknown unit {unit:?})")),
    };
    if v < 0.0 {
        return Err(format!("expected a non-negative duration, got {s:?}"));
    }
    let total = v * ns;
    if total > u64::MAX as f64 / 2.0 {
        return Err(format!("duration {s:?} is too long"));
    }
    Ok(SimTime(total.round() as u64))
}

macro_rules! string_quantity {
    ($name:ident, $inner:ty, $parse:expr, $fmt:expr, $pattern:expr, $desc:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($desc)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("{}, got {} (a bare number: write the unit, in quotes)", $desc, v)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("{}, got {} (a bare number: write the unit, in quotes)", $desc, v)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("{}, got {} (a bare number: write the unit, in quotes)", $desc, v)))
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$fmt(self.0))
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                Schema::Object(SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    string: Some(Box::new(StringValidation { pattern: Some($pattern.to_string()), ..Default::default() })),
                    metadata: Some(Box::new(schemars::schema::Metadata {
                        description: Some($desc.to_string()),
                        ..Default::default()
                    })),
                    ..Default::default()
                })
            }
        }
    };
}

string_quantity!(
    Size,
    u64,
    parse_size,
    |b: u64| format!("{b}B"),
    r"^\s*[0-9.]+\s*([kKmMgG]?B|[bB][yY][tT][eE][sS]?)\s*$",
    "expected a size like \"1.4KB\" (KB = 1024 bytes)"
);
string_quantity!(
    Rate,
    f64,
    parse_rate,
    |b: f64| format!("{b}bps"),
    r"^\s*[0-9.]+\s*([kKmMgG]?(bps|[bB][iI][tT]/[sS])|[kKmMgG]?B/s)\s*$",
    "expected a rate like \"1.6Mbps\", \"800kbit/s\" or \"200KB/s\""
);
string_quantity!(
    Duration,
    SimTime,
    parse_duration,
    |t: SimTime| format!("{}ns", t.0),
    r"^\s*[0-9.]+\s*([nNuUµmM]?[sS]|[mM][iI][nN])\s*$",
    "expected a duration like \"50ms\""
);

/// Speed of a signal on the segment, in metres per second (802.3 §8.4.1.3: 0.77 c on coax).
pub const LAN_SIGNAL_SPEED_M_PER_S: f64 = 0.77 * 299_792_458.0;

/// A station's place on a `[[lan]]` segment, as the time a signal takes to get there from the
/// segment's end.
pub fn parse_position(s: &str) -> Result<SimTime, String> {
    let eg = "expected a position like \"2000m\", \"1.5km\" or \"10us\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{eg}, got {s:?}"))?;
    let metres = match unit.to_ascii_lowercase().as_str() {
        "m" => Some(1.0),
        "km" => Some(1000.0),
        _ => None,
    };
    match metres {
        Some(mult) => {
            if v < 0.0 {
                return Err(format!("expected a non-negative position, got {s:?}"));
            }
            let ns = v * mult / LAN_SIGNAL_SPEED_M_PER_S * 1e9;
            if ns > 1e15 {
                return Err(format!("position {s:?} is too far"));
            }
            Ok(SimTime(ns.round() as u64))
        }
        None => parse_duration(s).map_err(|_| format!("{eg}, got {s:?}")),
    }
}

string_quantity!(
    Position,
    SimTime,
    parse_position,
    |t: SimTime| format!("{}ns", t.0),
    r"^\s*[0-9.]+\s*([kK]?[mM]|[nNuUµmM]?[sS]|[mM][iI][nN])\s*$",
    "expected a position like \"2000m\", \"1.5km\" or \"10us\""
);

/// A queue limit: packets (`"10pkts"`) or bytes (`"128KB"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueSize {
    Packets(u32),
    Bytes(u64),
}

pub fn parse_queue_size(s: &str) -> Result<QueueSize, String> {
    let eg = "expected a queue limit like \"10pkts\" or \"128KB\"";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{eg}, got {s:?}"))?;
    match unit.to_ascii_lowercase().as_str() {
        "pkts" | "pkt" | "packets" | "packet" => {
            if v < 0.0 || v.fract() != 0.0 || v > u32::MAX as f64 {
                return Err(format!("{eg}: the packet count must be a whole non-negative number, got {s:?}"));
            }
            Ok(QueueSize::Packets(v as u32))
        }
        _ => parse_size(s).map(QueueSize::Bytes).map_err(|_| format!("{eg}, got {s:?}")),
    }
}

string_quantity!(
    QueueLimitQ,
    QueueSize,
    parse_queue_size,
    |q: QueueSize| match q {
        QueueSize::Packets(n) => format!("{n}pkts"),
        QueueSize::Bytes(b) => format!("{b}B"),
    },
    r"^\s*[0-9.]+\s*([pP][kK][tT][sS]?|[pP][aA][cC][kK][eE][tT][sS]?|[kKmMgG]?B|[bB][yY][tT][eE][sS]?)\s*$",
    "expected a queue limit like \"10pkts\" or \"128KB\""
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_metres_at_0_77c_or_times() {
        assert_eq!(parse_position("10us").unwrap(), SimTime(10_000));
        assert_eq!(parse_position("0m").unwrap(), SimTime(0));
        // 2000 m / (0.77 × 299 792 458 m/s) = 8.6644 µs.
        assert_eq!(parse_position("2000m").unwrap(), SimTime(8_664));
        assert_eq!(parse_position("2km").unwrap(), SimTime(8_664));
        assert!(parse_position("-5m").is_err());
        assert!(parse_position("5 furlongs").unwrap_err().contains("2000m"));
    }

    #[test]
    fn sizes_use_1024() {
        assert_eq!(parse_size("1MB").unwrap(), 1_048_576);
        assert_eq!(parse_size("1.4KB").unwrap(), 1434);
        assert_eq!(parse_size("16KB").unwrap(), 16384);
        assert_eq!(parse_size("40B").unwrap(), 40);
        assert!(parse_size("10").is_err());
        assert!(parse_size("10kb").is_err());
        assert!(parse_size("-1KB").is_err());
    }

    #[test]
    fn rates_bits_are_decimal_bytes_binary() {
        assert_eq!(parse_rate("1.6Mbps").unwrap(), 1.6e6);
        assert_eq!(parse_rate("800kbit/s").unwrap(), 800e3);
        assert_eq!(parse_rate("200KB/s").unwrap(), 200.0 * 1024.0 * 8.0);
        assert_eq!(parse_rate("30Mbps").unwrap(), 30e6);
        assert!(parse_rate("0Mbps").is_err());
        assert!(parse_rate("-5Mbps").is_err());
        assert!(parse_rate("5").is_err());
        assert!(parse_rate("5 furlongs/s").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("50ms").unwrap(), SimTime::from_millis(50));
        assert_eq!(parse_duration("1.5s").unwrap(), SimTime::from_millis(1500));
        assert_eq!(parse_duration("200us").unwrap(), SimTime::from_micros(200));
        let e = parse_duration("50").unwrap_err();
        assert!(e.contains("expected a duration like \"50ms\", got \"50\""), "{e}");
    }

    #[test]
    fn queue_limits() {
        assert_eq!(parse_queue_size("10pkts").unwrap(), QueueSize::Packets(10));
        assert_eq!(parse_queue_size("128KB").unwrap(), QueueSize::Bytes(131072));
        assert!(parse_queue_size("2.5pkts").is_err());
        assert!(parse_queue_size("10").is_err());
        assert_eq!(parse_queue_size("10PKTS").unwrap(), QueueSize::Packets(10));
    }

    #[test]
    fn prefixes_are_case_insensitive_where_unambiguous() {
        assert_eq!(parse_rate("10mbps").unwrap(), 10e6);
        assert_eq!(parse_rate("10MBIT/S").unwrap(), 10e6);
        assert_eq!(parse_rate("200kB/s").unwrap(), 200.0 * 1024.0 * 8.0);
        assert_eq!(parse_size("64kB").unwrap(), 65536);
        assert_eq!(parse_duration("50MS").unwrap(), SimTime::from_millis(50));
        assert_eq!(parse_duration("2Min").unwrap(), SimTime(120_000_000_000));
        // Bits vs bytes stays exact: these are refused, not guessed.
        for bad in ["10MBps", "10mb/s", "10Mb/s"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains("ambiguous"), "{bad}: {e}");
        }
        let e = parse_size("10Mb").unwrap_err();
        assert!(e.contains("ambiguous"), "{e}");
    }
}
