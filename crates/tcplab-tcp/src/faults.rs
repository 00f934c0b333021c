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
    use crate::config::EndpointConfig;
    use crate::*;

    const C_ISS: u32 = 1000;
    const S_ISS: u32 = 5000;

    fn drain(e: &mut Endpoint, now: Nanos) -> Vec<Segment> {
        let mut v = Vec::new();
        while let Some(s) = e.poll_transmit(now) {
            v.push(s);
            assert!(v.len() < 10_000);
        }
        v
    }

    fn ack(k: u32) -> Segment {
        Segment { seq: S_ISS + 1, ack: C_ISS + 1 + k, flags: Flags::ACK, wnd: 60_000, ..Default::default() }
    }

    /// A sender of `variant` (MSS 1000, IW 8, ssthresh `ssthresh`) with 8 segments in flight at 100 ms.
    fn sender(variant: &str, ssthresh: u32) -> Endpoint {
        let mut c = EndpointConfig::for_variant(variant).unwrap();
        c.mss = 1000;
        c.initial_window_segments = 8;
        c.initial_ssthresh = ssthresh;
        let mut e = Endpoint::new(c, C_ISS);
        e.connect(0);
        drain(&mut e, 0);
        let synack = Flags(Flags::SYN.0 | Flags::ACK.0);
        e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: synack, wnd: 60_000, mss: Some(1000), ..Default::default() });
        e.app_write(100_000);
        assert_eq!(drain(&mut e, 100 * MS).iter().filter(|s| s.len > 0).count(), 8);
        e
    }

    #[test]
    fn each_name_sets_one_fault() {
        for name in super::FAULT_VARIANTS {
            let f = super::parse(name).unwrap();
            assert_eq!([f.no_fast_retransmit, f.double_ca, f.no_rto_backoff].iter().filter(|x| **x).count(), 1, "{name}");
            assert!(EndpointConfig::for_variant(name).is_ok());
        }
        assert_eq!(super::parse("reno"), None);
        assert_eq!(super::parse("reno-fault-nope"), None);
        assert_eq!(EndpointConfig::for_variant("reno").unwrap().faults, super::PlantedFaults::default());
    }

    /// ACK of segment 0, then dup ACKs for 1000: reno retransmits 1000 on the third, the fault never.
    fn retransmits_after_dupacks(variant: &str, dups: u32) -> Vec<u32> {
        let mut e = sender(variant, 65535);
        e.on_segment(200 * MS, &ack(1000));
        drain(&mut e, 200 * MS);
        let mut out = vec![];
        for i in 0..dups {
            let t = (210 + i as u64) * MS;
            e.on_segment(t, &ack(1000));
            out.extend(drain(&mut e, t).iter().filter(|s| s.len > 0 && s.seq == C_ISS + 1 + 1000).map(|_| i + 1));
        }
        out
    }

    #[test]
    fn no_fast_retransmit_ignores_the_third_dup_ack() {
        assert_eq!(retransmits_after_dupacks("reno", 6), vec![3]);
        assert_eq!(retransmits_after_dupacks("reno-fault-no-fast-retransmit", 6), Vec::<u32>::new());
    }

    #[test]
    fn double_ca_doubles_the_increase_per_ack() {
        // ssthresh 2000 < cwnd 8000: congestion avoidance from the first ACK, + MSS²/cwnd = 125.
        let growth = |variant: &str| {
            let mut e = sender(variant, 2000);
            let before = e.cwnd();
            e.on_segment(200 * MS, &ack(1000));
            e.cwnd() - before
        };
        assert_eq!(growth("reno"), 125);
        assert_eq!(growth("reno-fault-double-ca"), 250);
    }

    #[test]
    fn no_rto_backoff_keeps_the_rto() {
        // Slow ticks every 500 ms until two timeouts; the RTO after each, in ns.
        let rtos = |variant: &str| {
            let mut e = sender(variant, 65535);
            let mut out = vec![];
            let mut t = 100 * MS;
            while out.len() < 2 && t < 200 * SEC {
                t += 500 * MS;
                let n = e.stats().coarse_timeouts;
                e.on_slow_tick(t);
                drain(&mut e, t);
                if e.stats().coarse_timeouts > n {
                    out.push(e.rto_timer().rto_ns());
                }
            }
            out
        };
        let reno = rtos("reno");
        assert_eq!(reno[1], 2 * reno[0], "{reno:?}");
        let fault = rtos("reno-fault-no-rto-backoff");
        assert_eq!(fault[0], fault[1], "{fault:?}");
        assert!(fault[0] < reno[0], "the fault's first RTO is not doubled: {fault:?} vs {reno:?}");
    }
}
