//! Planted faults: a test build switch for `tcplab diagnose` (issue 29), like the Lite switches
//! of [`crate::lite`] but for bugs no real stack is known to ship. Each is a `reno` endpoint with
//! one deliberate error, so the diagnosis rules can be checked against a known cause:
//!
//! | variant | fault | what a correct sender does | consulted in |
//! |---|---|---|---|
//! | `reno-fault-no-fast-retransmit` | the third duplicate ACK is ignored: no fast retransmit, no fast recovery (later dup ACKs neither), so every loss waits for the timer | RFC 5681 §3.2 step 2 | `Endpoint::process_ack` |
//! | `reno-fault-double-ca` | congestion avoidance grows cwnd twice as fast (each ACK's increase applied twice): 2 MSS per RTT | RFC 5681 §3.1: at most 1 MSS per RTT | `Endpoint::on_new_ack` |
//! | `reno-fault-no-rto-backoff` | the RTO is never doubled after a timeout (Karn's sample rule is kept) | RFC 6298 §5.5 | `Endpoint::rto_expired` |
//!
//! Deliberate deviation: none of these is a model of anything; they exist only to be found.

/// The planted-fault switches; all off for every ordinary variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlantedFaults {
    /// Ignore the duplicate ACK that reaches the threshold (no fast retransmit / recovery).
    pub no_fast_retransmit: bool,
    /// Apply each congestion-avoidance increase twice.
    pub double_ca: bool,
    /// Never back off the retransmission timer.
    pub no_rto_backoff: bool,
}

/// The variant names, each `reno` plus one fault.
pub const FAULT_VARIANTS: &[&str] = &["reno-fault-no-fast-retransmit", "reno-fault-double-ca", "reno-fault-no-rto-backoff"];

/// The faults of a `reno-fault-*` variant name (None for any other name).
pub fn parse(name: &str) -> Option<PlantedFaults> {
    let mut f = PlantedFaults::default();
    match name.strip_prefix("reno-fault-")? {
        "no-fast-retransmit" => f.no_fast_retransmit = true,
        "double-ca" => f.double_ca = true,
        "no-rto-backoff" => f.no_rto_backoff = true,
        _ => return None,
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_name_sets_one_fault() {
        for name in super::FAULT_VARIANTS {
            let f = super::parse(name).unwrap();
            assert_eq!([f.no_fast_retransmit, f.double_ca, f.no_rto_backoff].iter().filter(|x| **x).count(), 1, "{name}");
        }
        assert_eq!(super::parse("reno"), None);
        assert_eq!(super::parse("reno-fault-nope"), None);
    }
}
