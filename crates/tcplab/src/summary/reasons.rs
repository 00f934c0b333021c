//! Drop counts by reason as the summary holds and writes them.

use serde::Serialize;

use crate::net::packet::DropReason;

/// Drops counted by reason, written as a JSON object keyed by the reasons' names in name order
/// (as the `BTreeMap` it replaces wrote it). Held as the counts alone: a map per link direction
/// took 4.6 MB of a 4,096-flow dumbbell's summary (issue 28's memory target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reasons(pub [u64; DropReason::COUNT]);

impl Reasons {
    /// (name, count) in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let mut order = DropReason::ALL;
        order.sort_by_key(|r| r.name());
        order.into_iter().map(move |r| (r.name(), self.0[r.index()]))
    }

    pub fn get(&self, name: &str) -> Option<&u64> {
        DropReason::ALL.iter().find(|r| r.name() == name).map(|r| &self.0[r.index()])
    }
}

impl std::ops::Index<&str> for Reasons {
    type Output = u64;
    fn index(&self, name: &str) -> &u64 {
        let r = DropReason::ALL.iter().find(|r| r.name() == name).unwrap_or_else(|| panic!("no drop reason {name:?}"));
        &self.0[r.index()]
    }
}

impl Serialize for Reasons {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::{DropReason, Reasons};
    use std::collections::BTreeMap;

    /// `Reasons` writes what the `BTreeMap` of names wrote, byte for byte.
    #[test]
    fn reasons_serialize_as_the_map_of_names() {
        let counts = [3, 0, 7, 1, 0, 2, 9, 4];
        let map: BTreeMap<&str, u64> = DropReason::ALL.iter().map(|r| (r.name(), counts[r.index()])).collect();
        let r = Reasons(counts);
        assert_eq!(serde_json::to_string_pretty(&r).unwrap(), serde_json::to_string_pretty(&map).unwrap());
        assert_eq!(r["corruption"], 7);
        assert_eq!(r.get("scripted"), Some(&4));
        assert_eq!(r.get("nothing"), None);
    }
}
