//! BBR v3's constants, parameters and the inflight_hi rule on hand-made rate samples (the
//! behaviour over a path: `tests/endpoint/bbr3.rs`).

use super::*;

#[test]
fn gains_and_thresholds_are_the_published_fixed_point_values() {
    assert_eq!(STARTUP_PACING_GAIN, 710, "BBR_UNIT * 277 / 100 + 1");
    assert_eq!((UP_GAIN, DOWN_GAIN, CWND_GAIN, UP_CWND_GAIN), (320, 230, 512, 576));
    assert_eq!((BETA, ECN_THRESH, INFLIGHT_HEADROOM), (76, 128, 38));
    assert_eq!(Bbr3Params::DEFAULT.loss_thresh, 5, "2 % of 256, truncated as Linux's bbr_loss_thresh");
}

#[test]
fn params_parse_and_reject() {
    let mut p = Bbr3Params::DEFAULT;
    p.set("bbr3", "loss_thresh", 0.05).unwrap();
    p.set("bbr3", "probe_rtt_interval_ms", 10_000.0).unwrap();
    assert_eq!((p.loss_thresh, p.probe_rtt_interval_ms), (13, 10_000));
    assert!(p.set("bbr3", "beta", 1.5).unwrap_err().contains("fraction"));
    assert!(p.set("bbr3", "probe_rtt_ms", -1.0).unwrap_err().contains("whole number"));
    assert!(p.set("bbr3", "gain", 1.0).unwrap_err().contains("probe_rtt_interval_ms"));
    p.probe_rtt_interval_ms = 0;
    assert!(p.check().is_err());
}

/// A v3 controller in PROBE_BW UP on a 1.25 MB/s, 40 ms path, probing (`bw_probe_samples`).
fn probing_up() -> (Bbr3Cc, CcWindow) {
    let mut b = Bbr3Cc::new(Bbr3Params::DEFAULT, 1);
    b.full_bw_reached = true;
    b.min_rtt = Some(40 * MS);
    b.bw_hi = [1_250_000, 0];
    b.pacing_rate = Some(1_250_000); // TSO goal 2 segments
    b.mode = Mode3::ProbeBw(Phase::Up);
    b.bw_probe_samples = true;
    b.ack_phase = AckPhase::ProbeFeedback;
    (b, CcWindow { cwnd: 120_000, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX })
}

fn sample(tx_in_flight: u64, lost: u64) -> RateSample {
    RateSample { delivered: 50_000, interval: 40 * MS, prior_delivered: 0, app_limited: false, prior_in_flight: tx_in_flight, lost, tx_in_flight, delivered_ce: 0 }
}

#[test]
fn loss_above_the_threshold_is_inflight_too_high_and_at_it_is_not() {
    let (b, _) = probing_up();
    // 100 000 bytes in flight: the threshold is 100 000 · 5/256 = 1953 bytes.
    assert!(!b.inflight_too_high(&sample(100_000, 1953)));
    assert!(b.inflight_too_high(&sample(100_000, 1954)));
    assert!(!b.inflight_too_high(&sample(100_000, 0)));
}

#[test]
fn inflight_hi_is_cut_to_max_of_tx_in_flight_and_beta_target_and_up_ends() {
    // target_inflight = min(BDP quantized, cwnd): 1.25 MB/s · 40 ms = 50 packets, + 3 TSO
    // goals of 2 = 56, + 2 in UP = 58 packets; (1 − β) · 58 000 = 58 000 · 180/256 = 40 781.
    let (mut b, w) = probing_up();
    assert_eq!(b.target_inflight(&w), 58_000);
    b.update_cycle_phase(MS, &sample(90_000, 2_000), 1000, true, &w);
    assert_eq!(b.inflight_hi, 90_000, "tx_in_flight is the larger");
    assert_eq!(b.mode, Mode3::ProbeBw(Phase::Down), "UP ends at once");
    assert!(!b.bw_probe_samples, "one reaction per probe");
    assert_eq!(b.hi_cuts, [HiCut { at: MS, tx_in_flight: 90_000, lost: 2_000, target: 58_000, inflight_hi: 90_000 }]);

    let (mut b, w) = probing_up();
    b.update_cycle_phase(MS, &sample(30_000, 1_000), 1000, true, &w);
    assert_eq!(b.inflight_hi, 58_000 * 180 / 256, "β · target is the larger");

    // At 1.9 % loss nothing is cut and UP goes on.
    let (mut b, w) = probing_up();
    b.update_cycle_phase(MS, &sample(90_000, 1_700), 1000, true, &w);
    assert_eq!((b.inflight_hi, b.mode), (u64::MAX, Mode3::ProbeBw(Phase::Up)));

    // Outside a probe (CRUISE, no bw_probe_samples) the same loss leaves inflight_hi alone.
    let (mut b, w) = probing_up();
    b.mode = Mode3::ProbeBw(Phase::Cruise);
    b.bw_probe_samples = false;
    b.update_cycle_phase(MS, &sample(90_000, 2_000), 1000, true, &w);
    assert_eq!(b.inflight_hi, u64::MAX);
}

#[test]
fn probe_rtt_cwnd_is_half_the_bdp_and_cruise_keeps_fifteen_percent_headroom() {
    let (mut b, _) = probing_up();
    assert_eq!(b.probe_rtt_cwnd(1000), 25_000, "50-packet BDP / 2");
    b.bw_hi = [50_000, 0]; // BDP 2 packets: the 4-packet floor
    assert_eq!(b.probe_rtt_cwnd(1000), 4000);
    b.inflight_hi = 100_000;
    assert_eq!(b.inflight_with_headroom(1000), 100_000 - 100_000 * 38 / 256, "15 % as Linux: 38/256");
    b.inflight_hi = 4000;
    assert_eq!(b.inflight_with_headroom(1000), 4000, "never below 4 packets");
}

#[test]
fn a_cumulative_ack_over_sacked_data_conserves_with_what_it_newly_delivered() {
    // As v1 (`rs->acked_sacked`): 40 segments sent, segment 0 lost, duplicate ACKs in recovery
    // SACK segments 1..=19; the retransmission of segment 0 then moves snd_una 20 segments, one
    // of them newly delivered. The first recovery round's cwnd is max(cwnd, pipe + that one
    // segment): 20,000 + 1000, not 20,000 + 20,000.
    let mut b = Bbr3Cc::new(Bbr3Params::DEFAULT, 1);
    let mut w = CcWindow { cwnd: 40_000, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX };
    for k in 0..40u64 {
        b.on_send(0, k * 1000, 1000, false);
    }
    let _ = b.ssthresh(&w, 40_000, u32::MAX, LossEvent::FastRetransmit);
    b.on_recovery(&mut w, true);
    for k in 1..20u64 {
        b.on_sacked(MS, k * 1000, (k + 1) * 1000);
        b.on_recovery_pipe(&mut w, 40_000 - k * 1000, 1000);
    }
    w.cwnd = 10_000;
    let log = crate::sendlog::SendLog::default();
    let view = SenderView { now: 2 * MS, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 1 << 30, mss: 1000, dupacks: 0, fine_srtt: Some(100 * MS), in_recovery: true, send_log: &log };
    let ack = AckSample { now: 2 * MS, bytes_acked: 20_000, rtt: Some(100 * MS), fine_rtt: Some(100 * MS), in_slow_start: false, snd_una: 20_000, snd_nxt: 40_000, flight: 20_000, ece: false };
    b.on_ack_in_recovery(&mut w, &ack, &view);
    b.on_recovery_pipe(&mut w, 20_000, 20_000);
    assert_eq!(w.cwnd, 21_000);
    assert_eq!(b.rate.delivered, 20_000, "each segment delivered once");
}

/// 100 segments of 1000 bytes sent back to back (`tx.in_flight` 1000, 2000, … 100 000), then a
/// retransmission timeout taken as the endpoint does (ssthresh with the window, cwnd = 1 MSS).
fn timeout_after_100_segments(b: &mut Bbr3Cc, w: &CcWindow) {
    for k in 0..100u64 {
        b.on_send(MS + k * 10_000, k * 1000, 1000, false);
    }
    let mut w = *w;
    b.ssthresh(&w, 100_000, u32::MAX, LossEvent::Timeout);
    w.cwnd = w.mss;
    b.on_timeout(&mut w);
}

#[test]
fn a_timeout_while_probing_cuts_inflight_hi_at_the_first_segment_over_the_threshold() {
    // Google's v3 builds no sample from the whole flight: each segment the timeout marks lost
    // reaches `bbr_skb_marked_lost`. The first (tx.in_flight 1000, 1000 lost) is already too
    // high, so inflight_hi = max(1000, (1 − β) · 58 000 with the cwnd from before the timeout)
    // = 40 781, once. (The old single sample, snd_max − snd_una = 100 000 lost of 100 000 in
    // flight, set inflight_hi to 100 000.)
    let (mut b, w) = probing_up();
    timeout_after_100_segments(&mut b, &w);
    assert_eq!(b.inflight_hi, 40_781);
    assert_eq!(b.hi_cuts.len(), 1);
    assert!(!b.bw_probe_samples);
    assert!(b.loss_in_round, "bbr_note_loss");
    // The cut ended UP (DOWN is not probing), so `bbr_set_state` then sets inflight_lo.
    assert_eq!(b.mode, Mode3::ProbeBw(Phase::Down));
    assert_eq!(b.inflight_lo, 120_000);
}

#[test]
fn a_timeout_while_not_probing_sets_inflight_lo_to_the_cwnd_before_it() {
    // CRUISE, no bounds yet: `bbr_set_state(TCP_CA_Loss)` sets inflight_lo = max(cwnd,
    // prior_cwnd) = 120 000 and restarts full-bandwidth detection; inflight_hi is untouched.
    let (mut b, w) = probing_up();
    b.mode = Mode3::ProbeBw(Phase::Cruise);
    b.bw_probe_samples = false;
    b.full_bw = 1_000_000;
    b.full_bw_cnt = 2;
    let hi = b.inflight_hi;
    timeout_after_100_segments(&mut b, &w);
    assert_eq!(b.inflight_lo, 120_000);
    assert_eq!((b.full_bw, b.full_bw_cnt), (0, 0));
    assert_eq!(b.inflight_hi, hi);
    assert!(b.hi_cuts.is_empty());
}
