//! CUBIC (RFC 9438, Linux `tcp_cubic.c`): analytic checks of the window curve against
//! W(t) = C(t−K)³ + W_max, K as RFC 9438 §4.2, fast convergence, the TCP-friendly region, and
//! HyStart / HyStart++ leaving slow start before the first loss on a deep-buffer path.

use tcplab_tcp::cc::{AckSample, CcWindow, CongestionControl, CubicCc, CubicParams, LossEvent, SenderView};
use tcplab_tcp::config::EndpointConfig;
use tcplab_tcp::sendlog::SendLog;
use tcplab_tcp::*;
use crate::bottleneck::*;

const MSS: u32 = 1000;

/// Drives a CUBIC controller directly: every round (one RTT) each of the cwnd packets in flight
/// is acknowledged, evenly spread over the RTT (an ACK clock), with an RTT sample of `rtt`.
struct Driver {
    cc: CubicCc,
    w: CcWindow,
    now: Nanos,
    rtt: Nanos,
    log: SendLog,
    una: u64,
}

impl Driver {
    fn new(params: CubicParams, cwnd_pkts: u32, rtt: Nanos) -> Driver {
        let w = CcWindow { cwnd: cwnd_pkts * MSS, ssthresh: cwnd_pkts * MSS, mss: MSS, max_cwnd: u32::MAX };
        Driver { cc: CubicCc::new(params), w, now: SEC, rtt, log: SendLog::default(), una: 0 }
    }
    fn pkts(&self) -> u32 {
        self.w.cwnd / MSS
    }
    /// One round of ACKs; the cwnd in packets at its end.
    fn round(&mut self) -> u32 {
        let n = self.pkts();
        let gap = self.rtt / n as u64;
        for _ in 0..n {
            self.now += gap;
            self.una += MSS as u64;
            let flight = self.w.cwnd.saturating_sub(MSS);
            let s = AckSample { now: self.now, bytes_acked: MSS, rtt: Some(self.rtt), fine_rtt: Some(self.rtt), in_slow_start: false, snd_una: self.una, snd_nxt: self.una + flight as u64, flight, ece: false };
            let v = SenderView { now: self.now, snd_una: self.una, snd_nxt: self.una + flight as u64, snd_max: self.una + flight as u64, snd_wnd: u32::MAX, mss: MSS, dupacks: 0, fine_srtt: Some(self.rtt), in_recovery: false, send_log: &self.log };
            self.cc.on_ack(&mut self.w, &s, &v, None);
        }
        self.pkts()
    }
    /// A loss: ssthresh from CUBIC, cwnd = ssthresh (as recovery leaves it).
    fn loss(&mut self) {
        self.w.ssthresh = self.cc.ssthresh(&self.w, self.w.cwnd, u32::MAX, LossEvent::FastRetransmit);
        self.w.cwnd = self.w.ssthresh;
    }
}

/// RFC 9438 §4.2 eq. 2.
fn rfc_k(w_max: f64, cwnd_epoch: f64, c: f64) -> f64 {
    ((w_max - cwnd_epoch) / c).cbrt()
}

#[test]
fn window_follows_the_cubic_curve_after_a_loss() {
    // 100 ms RTT, W_max = 100: the Reno estimate (0.53/RTT) stays below the curve, so this is
    // the concave then convex region of RFC 9438 §4.4/§4.5.
    let rtt = 100 * MS;
    let mut d = Driver::new(CubicParams::DEFAULT, 100, rtt);
    d.round(); // delay_min = 100 ms (the window grows 5 % before any loss)
    let w_max = d.pkts();
    d.loss();
    assert_eq!(d.cc.last_max_cwnd, w_max, "first loss: W_max is the window at the loss");
    let cwnd_epoch = d.pkts();
    assert_eq!(cwnd_epoch, w_max * 717 / 1024, "β = 717/1024");
    d.round();
    let c = CubicParams::DEFAULT.c();
    let k = rfc_k(w_max as f64, cwnd_epoch as f64, c);
    assert!((d.cc.k_seconds() - k).abs() < 0.002, "K {} s, RFC 9438 §4.2 gives {k} s", d.cc.k_seconds());
    assert!(k > 4.0 && k < 4.5, "K = cbrt(0.3·W_max/0.4) ≈ 4.3 s, got {k}");
    let t0 = d.now - rtt; // the epoch began at the first ACK of that round
    let mut checked = 0;
    let mut t_after_k = false;
    for _ in 0..90 {
        let cwnd = d.round() as f64;
        let t = (d.now - t0) as f64 / 1e9;
        let model = c * (t - k).powi(3) + w_max as f64;
        let tol = (0.03 * model).max(2.0);
        assert!((cwnd - model).abs() <= tol, "t = {t:.2} s: cwnd {cwnd}, W(t) = {model:.1}");
        checked += 1;
        t_after_k |= t > k + 2.0;
    }
    assert!(checked == 90 && t_after_k, "the run covers both sides of K");
}

#[test]
fn fast_convergence_lowers_w_max() {
    for fc in [true, false] {
        let mut p = CubicParams::DEFAULT;
        p.fast_convergence = fc;
        let mut d = Driver::new(p, 100, 100 * MS);
        d.round();
        let w_max = d.pkts();
        d.loss();
        assert_eq!(d.cc.last_max_cwnd, w_max);
        // Grow a little, then lose again below the old W_max.
        while d.pkts() < 90 {
            d.round();
        }
        let at_loss = d.pkts();
        d.loss();
        let expect = if fc { at_loss * (1024 + 717) / 2048 } else { at_loss };
        assert!(at_loss < w_max);
        assert_eq!(d.cc.last_max_cwnd, expect, "fast_convergence = {fc}: W_max after a loss at {at_loss} < {w_max}");
        assert_eq!(d.pkts(), at_loss * 717 / 1024);
    }
}

#[test]
fn friendly_region_dominates_at_small_bdp() {
    // 10 ms RTT, W_max = 20: K ≈ 2.5 s, so the cubic curve hardly moves in 100 RTTs, while the
    // Reno estimate gains α = 3(1−β)/(1+β) ≈ 0.53 packet per RTT (RFC 9438 §4.3 eq. 4). (Linux
    // re-evaluates an unchanged window at most every HZ/32 = 31 ms, so at RTTs of a few ms the
    // Reno estimate advances in bursts.)
    let rtt = 10 * MS;
    let mut d = Driver::new(CubicParams::DEFAULT, 20, rtt);
    d.w.cwnd = 20 * MSS;
    d.loss();
    let start = d.pkts() as f64;
    let beta = 717.0 / 1024.0;
    let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
    let rounds = 100;
    for _ in 0..rounds {
        d.round();
    }
    let cwnd = d.pkts() as f64;
    let reno = start + alpha * rounds as f64;
    let k = rfc_k(20.0, start, 0.4);
    let cubic = 0.4 * ((rounds as f64 * 0.010) - k).powi(3) + 20.0;
    assert!((cwnd - reno).abs() <= 0.1 * reno, "cwnd {cwnd} follows the Reno estimate {reno:.1}");
    assert!(cwnd > 2.0 * cubic, "and not the cubic curve ({cubic:.1})");
    // Without the friendly region the window follows the curve (minus rounding).
    let mut p = CubicParams::DEFAULT;
    p.tcp_friendliness = false;
    let mut d = Driver::new(p, 20, rtt);
    d.loss();
    for _ in 0..rounds {
        d.round();
    }
    assert!((d.pkts() as f64) < cubic + 2.0, "cubic only: {} vs W(t) {cubic:.1}", d.pkts());
}

#[test]
fn timeout_resets_the_epoch_and_w_max() {
    let mut d = Driver::new(CubicParams::DEFAULT, 100, 100 * MS);
    d.round();
    let w_max = d.pkts();
    d.loss();
    d.round();
    assert!(d.cc.epoch_start.is_some() && d.cc.last_max_cwnd == w_max);
    d.w.ssthresh = d.cc.ssthresh(&d.w, d.w.cwnd, u32::MAX, LossEvent::Timeout);
    d.w.cwnd = MSS;
    d.cc.on_timeout(&mut d.w);
    assert_eq!((d.cc.epoch_start, d.cc.last_max_cwnd, d.cc.found), (None, 0, false), "bictcp_reset on TCP_CA_Loss");
}

fn cubic_cfg(hystart: bool, plus_plus: bool) -> EndpointConfig {
    let mut c = EndpointConfig::for_variant("cubic").unwrap();
    c.mss = 1000 + 12;
    c.initial_window_segments = 10;
    c.send_buffer = 8 << 20;
    c.recv_buffer = 8 << 20;
    c.set_param("hystart", hystart as u8 as f64).unwrap();
    c.set_param("hystart_plus_plus", plus_plus as u8 as f64).unwrap();
    c
}

#[test]
fn registry_row() {
    let c = EndpointConfig::for_variant("cubic").unwrap();
    assert_eq!(c.variant.cc, CcKind::Cubic(CubicParams::DEFAULT));
    assert_eq!(c.variant.recovery, RecoveryKind::Rfc6675);
    assert!(c.sack && c.timestamps && c.window_scaling && c.initial_ssthresh >= 1 << 30);
    let mut c = c;
    assert!(c.set_param("hystart_low_window", 0.5).unwrap_err().contains("whole number"));
}

#[test]
fn hystart_leaves_slow_start_before_the_first_loss_on_a_deep_buffer() {
    // 10 Mbit/s, 2 × 20 ms: BDP 50 packets; the buffer holds 8 BDP. Slow start without HyStart
    // doubles past BDP + buffer and loses packets; HyStart (ACK train / delay increase) leaves
    // slow start near the BDP. HyStart++ sees the delay only one round later (a round's first
    // packets left when the window was half as large), then grows by 1/4 for 5 CSS rounds: it
    // leaves slow start later, still short of the buffer.
    let link = Bottleneck { rate: 1.25e6, delay: 20 * MS, limit: 400, mark_k: None };
    let bdp = 1.25e6 * 0.040 / 1052.0;
    let (_, _, plain) = run_bottleneck(cubic_cfg(false, false), cubic_cfg(false, false), link, 5 * SEC);
    let first_drop = plain.first_drop.expect("plain slow start overflows the buffer");
    let (exit_t, _, _) = plain.ss_exit.expect("the loss ends slow start");
    assert!(exit_t >= first_drop, "without HyStart slow start ends with the loss");
    let (a, _, o) = run_bottleneck(cubic_cfg(true, false), cubic_cfg(true, false), link, 5 * SEC);
    let (t, cwnd, ssthresh) = o.ss_exit.expect("HyStart exits slow start");
    assert!(t < o.first_drop.unwrap_or(u64::MAX), "slow start ends at {t} ns, before any loss ({:?})", o.first_drop);
    assert!(t < first_drop, "before plain slow start's first loss");
    assert_eq!(ssthresh, cwnd, "HyStart sets ssthresh = cwnd (no reduction)");
    let pkts = cwnd as f64 / a.mss() as f64;
    assert!(pkts > bdp && pkts < bdp + 40.0, "exit at {pkts:.0} packets (BDP {bdp:.0})");
    // HyStart++: Conservative Slow Start begins before the loss, so the overshoot is smaller.
    let (_, _, pp) = run_bottleneck(cubic_cfg(false, true), cubic_cfg(false, true), link, 5 * SEC);
    let window_at = |o: &Observed, t: Nanos| o.cwnd.iter().take_while(|x| x.0 <= t).last().unwrap().1;
    let pp_drop = pp.first_drop.unwrap_or(u64::MAX);
    assert!(pp_drop > first_drop, "HyStart++ reaches the buffer's end later");
    assert!(pp.drops * 3 < plain.drops, "HyStart++ drops {} vs slow start's {}", pp.drops, plain.drops);
    if pp_drop != u64::MAX {
        // In CSS the window grew by at most 1/4 per round before the loss (two RTTs ≈ 0.4 s here).
        let before = window_at(&pp, pp_drop - 400 * MS);
        assert!((window_at(&pp, pp_drop) as f64) < 1.8 * before as f64, "CSS growth before the loss");
    }
}
