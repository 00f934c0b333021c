//! Closed-form throughput models of a long Reno flow with random loss, for tests to hold the
//! simulator against.
//!
//! * Mathis, Semke, Mahdavi, Ott, *The macroscopic behavior of the TCP congestion avoidance
//!   algorithm* (CCR 1997): B = (MSS/RTT)·sqrt(3/(2bp)) — fast retransmit repairs every loss.
//! * Padhye, Firoiu, Towsley, Kurose, *Modeling TCP throughput: a simple model and its empirical
//!   validation* (SIGCOMM 1998; ToN 2000 eq. 30, the "full model" below the receiver-window limit):
//!   a triple-duplicate period plus, with probability Q, a timeout sequence of first length T0
//!   doubling up to 64·T0:
//!
//!   B = ((1−p)/p + E[W] + Q/(1−p)) / (RTT·(b·E[W]/2 + 1) + Q·T0·f(p)/(1−p)) packets/s,
//!   E[W] = (2+b)/(3b) + sqrt(8(1−p)/(3bp) + ((2+b)/(3b))²),
//!   f(p) = 1 + p + 2p² + 4p³ + 8p⁴ + 16p⁵ + 32p⁶.
//!
//!   PFTK model Q as Q̂(E[W]) (eq. 24, [`pftk_timeout_share`]); a caller that measured the share
//!   of loss indications ending in a timeout passes that instead (the deviation the tests take:
//!   Q̂ assumes one loss ends a round, BSD's coarse timer and recovery variant set the real share).

/// Mathis' law in packets per second (`b` packets acknowledged per ACK).
pub fn mathis_pkts_per_s(p: f64, rtt_s: f64, b: f64) -> f64 {
    (3.0 / (2.0 * b * p)).sqrt() / rtt_s
}

/// PFTK's expected window E[W] in packets at loss rate `p`.
pub fn pftk_window(p: f64, b: f64) -> f64 {
    let k = (2.0 + b) / (3.0 * b);
    k + (8.0 * (1.0 - p) / (3.0 * b * p) + k * k).sqrt()
}

/// PFTK's Q̂(w): probability that a loss indication in a window of `w` packets is a timeout.
pub fn pftk_timeout_share(p: f64, w: f64) -> f64 {
    let q = 1.0 - p;
    ((1.0 - q.powi(3)) * (1.0 + q.powi(3) * (1.0 - q.powf(w - 3.0))) / (1.0 - q.powf(w))).min(1.0)
}

/// PFTK's full model in packets per second, with timeout share `q` and first timeout `t0_s`.
pub fn pftk_pkts_per_s(p: f64, rtt_s: f64, t0_s: f64, q: f64, b: f64) -> f64 {
    let w = pftk_window(p, b);
    let f = 1.0 + p + 2.0 * p.powi(2) + 4.0 * p.powi(3) + 8.0 * p.powi(4) + 16.0 * p.powi(5) + 32.0 * p.powi(6);
    ((1.0 - p) / p + w + q / (1.0 - p)) / (rtt_s * (b * w / 2.0 + 1.0) + q * t0_s * f / (1.0 - p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn hand_computed_values() {
        // p = 1 %, RTT 100 ms, b = 1: Mathis sqrt(150)/0.1 = 122.474 pkt/s.
        assert!(close(mathis_pkts_per_s(0.01, 0.1, 1.0), 150f64.sqrt() / 0.1));
        assert!(close(mathis_pkts_per_s(0.01, 0.1, 2.0), 75f64.sqrt() / 0.1));
        // E[W] = 1 + sqrt(264 + 1) = 17.27882; B = (99 + E[W]) / (0.1 (E[W]/2 + 1)) = 120.62856.
        assert!(close(pftk_window(0.01, 1.0), 1.0 + 265f64.sqrt()));
        assert!((pftk_pkts_per_s(0.01, 0.1, 1.0, 0.0, 1.0) - 120.628562).abs() < 1e-5);
        // Q = 0.5, T0 = 1 s: f(0.01) = 1.0102040816; B = 79.221421.
        assert!((pftk_pkts_per_s(0.01, 0.1, 1.0, 0.5, 1.0) - 79.221421).abs() < 1e-5);
        // b = 2, p = 2 %, Q = 0.25: E[W] = 8.777017, B = 46.871221.
        assert!((pftk_window(0.02, 2.0) - 8.777017).abs() < 1e-6);
        assert!((pftk_pkts_per_s(0.02, 0.1, 1.0, 0.25, 2.0) - 46.871221).abs() < 1e-5);
        // Q̂: 0.210479 at p = 1 %, w = 17.27882; 0.315909 at p = 2 %, w = 12; capped at 1.
        assert!((pftk_timeout_share(0.01, 17.278820596) - 0.210479).abs() < 1e-6);
        assert!((pftk_timeout_share(0.02, 12.0) - 0.315909).abs() < 1e-6);
        assert_eq!(pftk_timeout_share(0.02, 3.0), 1.0);
        // Timeouts only lower the rate, and more so with a longer T0.
        let b0 = pftk_pkts_per_s(0.02, 0.1, 1.0, 0.0, 1.0);
        let b1 = pftk_pkts_per_s(0.02, 0.1, 1.0, 0.3, 1.0);
        let b2 = pftk_pkts_per_s(0.02, 0.1, 2.0, 0.3, 1.0);
        assert!(b0 > b1 && b1 > b2);
    }
}
