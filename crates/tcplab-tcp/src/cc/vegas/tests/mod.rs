//! Vegas on bare state: the CC driven with scripted sends/ACKs at exact times.
use super::*;
use crate::sendlog::SendLog;

mod star;

const M: u32 = 1000;

fn cc() -> VegasCc {
    VegasCc::new(VegasParams { avg_rtt: false, ..Default::default() })
}
fn win(cwnd: u32) -> CcWindow {
    CcWindow { cwnd, ssthresh: 65535, mss: M, max_cwnd: 65535 }
}
fn view(log: &SendLog, now: Nanos, dupacks: u32) -> SenderView<'_> {
    SenderView { now, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 65535, mss: M, dupacks, fine_srtt: None, in_recovery: false, send_log: log }
}
fn sample(now: Nanos, una: u64, rtt: Option<Nanos>) -> AckSample {
    AckSample { now, bytes_acked: M, rtt: None, fine_rtt: rtt, in_slow_start: false, snd_una: una, snd_nxt: 0, flight: 0, ece: false }
}

/// One CA round: BaseRTT `base`, distinguished RTT `rtt`, `segs` segments sent in it.
fn round(w: &mut CcWindow, base: Nanos, rtt: Nanos, segs: u64) -> (CamTrace, VegasCc) {
    let log = SendLog::default();
    let mut c = cc();
    c.slow_start = false;
    c.on_ack(w, &sample(0, 0, Some(base)), &view(&log, 0, 0), None);
    for k in 0..segs {
        c.on_send(SEC0, k * M as u64, M, false);
    }
    let mut cam = CamTrace::default();
    c.on_ack(w, &sample(SEC0 + rtt, M as u64, None), &view(&log, SEC0 + rtt, 0), Some(&mut cam));
    (cam, c)
}
const SEC0: Nanos = crate::SEC;

#[test]
fn once_per_rtt_decision_hand_computed() {
    // cwnd 10 segments, BaseRTT 100 ms, distinguished RTT 120 ms, 10 000 bytes sent:
    // Expected = 10000/0.1 = 100 000 B/s; Actual = 10000/0.12 = 83 333.3 B/s;
    // Diff = 16 666.7 × 0.1 / 1000 = 1.667 buffers → hold.
    let mut w = win(10 * M);
    let (cam, _) = round(&mut w, 100 * MS, 120 * MS, 10);
    assert_eq!(cam.len(), 1);
    assert!((cam.expected_bps[0] - 100_000.0).abs() < 1e-6);
    assert!((cam.actual_bps[0] - 83_333.333).abs() < 1e-2);
    assert!((cam.diff_buffers[0] - 1.6667).abs() < 1e-3);
    assert_eq!(cam.decision[0], DEC_HOLD);
    assert_eq!((cam.alpha[0], cam.beta[0]), (1.0, 3.0));
    // ACKs in between do not decide: only the distinguished segment's ACK does.
    assert_eq!(w.cwnd, 10 * M);
}

#[test]
fn thresholds_increase_hold_decrease() {
    // Diff = 10·(1 − 100/rtt): 105 ms → 0.476 (< α: +1), 120 ms → 1.67 (hold),
    // 150 ms → 3.33 (> β: −1).
    for (rtt, dec) in [(105, DEC_INCREASE), (120, DEC_HOLD), (150, DEC_DECREASE)] {
        let mut w = win(10 * M);
        let (cam, mut c) = round(&mut w, 100 * MS, rtt * MS, 10);
        assert_eq!(cam.decision[0], dec, "rtt {rtt}");
        // The change is spread over the next RTT's ACKs: 10 ACKs give exactly ±1 MSS.
        let log = SendLog::default();
        for k in 0..12u64 {
            c.on_ack(&mut w, &sample(2 * SEC0 + k, 2 * M as u64 + k, None), &view(&log, 2 * SEC0, 0), None);
        }
        assert_eq!(w.cwnd as i64, 10 * M as i64 + dec as i64 * M as i64, "rtt {rtt}");
    }
}

#[test]
fn thresholds_are_strict_at_alpha_and_beta() {
    // cwnd 5 segments, BaseRTT 100 ms: Diff = 5·(1 − 100/rtt) is exactly 1.0 at 125 ms and
    // exactly 3.0 at 250 ms (in binary floating point too). Diff = α and Diff = β hold
    // (reading 3: increase only below α, decrease only above β).
    for (rtt, want) in [(125, 1.0), (250, 3.0)] {
        let mut w = win(5 * M);
        let (cam, _) = round(&mut w, 100 * MS, rtt * MS, 5);
        assert_eq!(cam.diff_buffers[0], want, "rtt {rtt}");
        assert_eq!(cam.decision[0], DEC_HOLD, "rtt {rtt}: Diff {want}");
    }
}

#[test]
fn linear_decrease_is_one_segment_per_rtt() {
    // cwnd 5 segments, BaseRTT 100 ms, RTT 1 s: Diff = 5·0.9 = 4.5 > β: decrease; twenty
    // ACKs (four windows' worth) take off exactly one MSS and no more.
    let mut w = win(5 * M);
    let (cam, mut c) = round(&mut w, 100 * MS, SEC0, 5);
    assert_eq!(cam.decision[0], DEC_DECREASE);
    let log = SendLog::default();
    for k in 0..20u64 {
        c.on_ack(&mut w, &sample(3 * SEC0 + k, 2 * M as u64 + k, None), &view(&log, 3 * SEC0, 0), None);
    }
    assert_eq!(w.cwnd, 4 * M);
}

#[test]
fn slow_start_grows_every_other_rtt_and_exits_on_gamma() {
    // A path with BaseRTT 100 ms; each round the whole window is sent at once and ACKed one
    // RTT later; the distinguished segment's ACK comes first and ends the round.
    let log = SendLog::default();
    let mut c = cc();
    let mut w = win(M);
    let mut cam = CamTrace::default();
    let mut t: Nanos = 0;
    let mut seq = 0u64;
    let mut windows = vec![];
    for round in 0..8 {
        // from round 6 on, the queue makes the RTT 100 ms + 3 segments' worth (30 ms)
        let rtt = if round >= 6 { 130 * MS } else { 100 * MS };
        let n = (w.cwnd / M) as u64;
        windows.push(n);
        let first = seq;
        for _ in 0..n {
            c.on_send(t, seq, M, false);
            seq += M as u64;
        }
        t += rtt;
        for k in 0..n {
            let una = first + (k + 1) * M as u64;
            c.on_ack(&mut w, &sample(t + k, una, Some(rtt)), &view(&log, t, 0), Some(&mut cam));
        }
        if !c.slow_start {
            break;
        }
    }
    // The distinguished segment is the first of each burst, so its ACK ends the round and the
    // burst's other ACKs fall in the next round (as on a real path). Growth happens only on
    // ACKs of grow rounds; hold rounds leave the window as it is.
    assert_eq!(windows, vec![1, 1, 2, 3, 4, 7, 8]);
    assert_eq!(&cam.decision[..], &[DEC_SS_GROW, DEC_HOLD, DEC_SS_GROW, DEC_HOLD, DEC_SS_GROW, DEC_HOLD, DEC_SS_EXIT]);
    // Exit: Diff = 8·(1 − 100/130) = 1.85 > γ = 1.
    assert!((cam.diff_buffers[6] - 8.0 * (1.0 - 100.0 / 130.0)).abs() < 1e-6);
    assert!(!c.slow_start);
    assert_eq!(w.ssthresh, w.cwnd);
}

#[test]
fn linear_step_is_one_mss_per_window_with_delayed_acks() {
    // Increase decided at cwnd 10 segments; a delayed-ACK receiver acknowledges two segments
    // per ACK: five ACKs (one window of bytes) must add exactly one MSS, not half of one.
    let mut w = win(10 * M);
    let (cam, mut c) = round(&mut w, 100 * MS, 105 * MS, 10);
    assert_eq!(cam.decision[0], DEC_INCREASE);
    let log = SendLog::default();
    for k in 0..5u64 {
        let mut s = sample(2 * SEC0 + k, (3 + 2 * k) * M as u64, None);
        s.bytes_acked = 2 * M;
        c.on_ack(&mut w, &s, &view(&log, 2 * SEC0, 0), None);
    }
    assert_eq!(w.cwnd, 11 * M);
}

#[test]
fn decision_completes_unfinished_step_and_counts_whole_segments() {
    // An increase whose RTT ended early (half the window ACKed): the next decision first
    // completes it, so the window judged is 11 segments, not 10.5.
    let log = SendLog::default();
    let mut c = cc();
    c.slow_start = false;
    let mut w = win(10 * M);
    c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
    c.adjust = Some(Adjust { dir: 1, target: 11 * M, over: 10 * M, acc: 0 });
    w.cwnd = 10 * M + M / 2;
    for k in 0..11u64 {
        c.on_send(SEC0, k * M as u64, M, false);
    }
    let mut cam = CamTrace::default();
    c.on_ack(&mut w, &sample(SEC0 + 100 * MS, M as u64, None), &view(&log, SEC0, 0), Some(&mut cam));
    assert!(w.cwnd >= 11 * M);
    // Expected = 11 000 B / 0.1 s; Actual = 11 000 B / 0.1 s → Diff 0 → increase.
    assert!((cam.expected_bps[0] - 110_000.0).abs() < 1e-6, "{}", cam.expected_bps[0]);
    assert_eq!(cam.decision[0], DEC_INCREASE);
    // A fractional segment of cwnd is not in transit and does not count in Expected.
    let mut w = win(10 * M + 900);
    let (cam, _) = round(&mut w, 100 * MS, 100 * MS, 10);
    assert!((cam.expected_bps[0] - 100_000.0).abs() < 1e-6, "{}", cam.expected_bps[0]);
    assert_eq!(cam.decision[0], DEC_INCREASE);
}

/// Ten segments sent at t = 0..9 ms; fine RTT samples of 100 ms (RTO = 100 + 4·50 = 300 ms
/// after the first sample, srtt 100 ms, rttvar 50 ms).
fn loaded() -> (VegasCc, SendLog, CcWindow) {
    let mut c = cc();
    c.slow_start = false;
    let mut log = SendLog::default();
    let mut w = win(10 * M);
    c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
    for k in 0..10u64 {
        log.on_send(k * MS, 1 + k * M as u64, 1 + (k + 1) * M as u64);
        c.on_send(k * MS, k * M as u64, M, false);
    }
    assert_eq!(c.fine_rto(), Some(300 * MS));
    (c, log, w)
}

#[test]
fn first_dupack_retransmits_only_when_fine_timer_expired() {
    let (mut c, log, mut w) = loaded();
    // Oldest sent at 0; at 250 ms the fine timeout (300 ms) has not expired: no retransmit
    // on the first or second duplicate.
    assert_eq!(c.on_dupack(&mut w, &view(&log, 250 * MS, 1)), CcVerdict::Continue);
    assert_eq!(c.on_dupack(&mut w, &view(&log, 260 * MS, 2)), CcVerdict::Continue);
    assert_eq!(w.cwnd, 10 * M);
    // A fresh series: the first duplicate at 301 ms finds it expired → retransmit at once,
    // window × 3/4 = 7.5 → 7 segments, plus one for the duplicate that left.
    let (mut c, mut log, mut w) = loaded();
    assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
    assert_eq!(w.ssthresh, 7 * M);
    assert_eq!(w.cwnd, 8 * M);
    log.on_send(301 * MS, 1, 1 + M as u64); // the retransmission leaves
    c.on_send(301 * MS, 0, M, true);
    // Reno's third-duplicate rule does not fire a second time in the same series.
    assert_eq!(c.on_dupack(&mut w, &view(&log, 302 * MS, 2)), CcVerdict::Continue);
    assert_eq!(w.cwnd, 9 * M);
    assert_eq!(c.on_dupack(&mut w, &view(&log, 303 * MS, 3)), CcVerdict::Continue);
}

#[test]
fn non_dup_ack_checks_first_and_second_only() {
    let (mut c, mut log, mut w) = loaded();
    assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
    log.on_send(301 * MS, 1, 1 + M as u64);
    c.on_send(301 * MS, 0, M, true);
    // 1st non-dup ACK (the retransmission's) at 400 ms: deflate to 7 segments; oldest is
    // now segment 1, sent at 1 ms → expired → retransmit; no second decrease (sent before
    // the last decrease at 301 ms).
    log.ack(400 * MS, 1 + M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 400 * MS, 0)), CcVerdict::RetransmitOldest);
    assert_eq!(w.cwnd, 7 * M);
    log.on_send(400 * MS, 1 + M as u64, 1 + 2 * M as u64);
    c.on_send(400 * MS, M as u64, M, true);
    // Its ACK (1st after that retransmission) and the next (2nd) each check segment 2, 3.
    log.ack(500 * MS, 1 + 2 * M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 500 * MS, 0)), CcVerdict::RetransmitOldest);
    log.on_send(500 * MS, 1 + 2 * M as u64, 1 + 3 * M as u64);
    c.on_send(500 * MS, 2 * M as u64, M, true);
    log.ack(600 * MS, 1 + 3 * M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 600 * MS, 0)), CcVerdict::RetransmitOldest);
    log.on_send(600 * MS, 1 + 3 * M as u64, 1 + 4 * M as u64);
    c.on_send(600 * MS, 3 * M as u64, M, true);
    // Single decrease for the four losses of one window.
    assert_eq!(c.loss_decreases, 1);
    assert_eq!(w.cwnd, 7 * M);
    // Without a retransmission, non-duplicate ACKs check nothing: two ACKs use up the
    // checks, the third does not look even though segment 6 is expired.
    let (mut c, mut log, mut w) = loaded();
    c.checks_left = 0;
    log.ack(900 * MS, 1 + 5 * M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 900 * MS, 0)), CcVerdict::Continue);
}

#[test]
fn decrease_is_half_for_a_segment_already_retransmitted() {
    let (mut c, mut log, mut w) = loaded();
    assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
    log.on_send(301 * MS, 1, 1 + M as u64);
    c.on_send(301 * MS, 0, M, true);
    let _ = c.on_ack_check(&mut w, &view(&log, 302 * MS, 0)); // deflate to 7 segments
    c.checks_left = 0;
    // The retransmission is lost too: a new series at 700 ms; the segment was last sent at
    // 301 ms, after the last decrease (301 ms is not later than 301 ms → equal: no decrease),
    // so push the decrease mark back and check the 1/2 branch.
    c.last_decrease = Some(300 * MS);
    assert_eq!(c.on_dupack(&mut w, &view(&log, 700 * MS, 1)), CcVerdict::RetransmitOldest);
    assert_eq!(w.ssthresh, 3 * M); // 7 / 2 = 3.5 → 3 segments
    assert_eq!(c.loss_decreases, 2);
}

// ---- Survivors of the mutation check (README, Tests): each asserts one exact behaviour ----

#[test]
fn avg_rtt_divides_by_the_mean_fine_rtt_of_the_round() {
    // 002 §2.1 (Vegas 0.8): Actual = bytes / the average RTT measured during the round.
    // cwnd 10 segments, BaseRTT 100 ms; during the distinguished segment's round trip two
    // fine samples arrive, 140 ms and 100 ms (mean 120 ms); its own RTT is 100 ms.
    for (avg, actual, diff, dec) in [(true, 10_000.0 / 0.12, 10.0 * (1.0 - 100.0 / 120.0), DEC_HOLD), (false, 100_000.0, 0.0, DEC_INCREASE)] {
        let log = SendLog::default();
        let mut c = VegasCc::new(VegasParams { avg_rtt: avg, ..Default::default() });
        c.slow_start = false;
        let mut w = win(10 * M);
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        for k in 0..10u64 {
            c.on_send(SEC0, k * M as u64, M, false);
        }
        let mut cam = CamTrace::default();
        // An ACK of older data (snd_una below the distinguished segment) with a 140 ms sample.
        let mut s = sample(SEC0 + 50 * MS, 0, Some(140 * MS));
        s.bytes_acked = 0;
        c.on_ack(&mut w, &s, &view(&log, SEC0 + 50 * MS, 0), Some(&mut cam));
        assert_eq!(cam.len(), 0, "an ACK below the distinguished segment does not decide");
        c.on_ack(&mut w, &sample(SEC0 + 100 * MS, M as u64, Some(100 * MS)), &view(&log, SEC0 + 100 * MS, 0), Some(&mut cam));
        assert_eq!(cam.len(), 1);
        assert!((cam.actual_bps[0] - actual).abs() < 1e-6, "avg {avg}: {}", cam.actual_bps[0]);
        assert!((cam.diff_buffers[0] - diff).abs() < 1e-9, "avg {avg}: {}", cam.diff_buffers[0]);
        assert_eq!(cam.decision[0], dec, "avg {avg}");
    }
    // With avg_rtt but no fine sample in the round, the distinguished segment's RTT (120 ms).
    let log = SendLog::default();
    let mut c = VegasCc::new(VegasParams::default());
    c.slow_start = false;
    let mut w = win(10 * M);
    c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
    for k in 0..10u64 {
        c.on_send(SEC0, k * M as u64, M, false);
    }
    let mut cam = CamTrace::default();
    c.on_ack(&mut w, &sample(SEC0 + 120 * MS, M as u64, None), &view(&log, SEC0, 0), Some(&mut cam));
    assert!((cam.actual_bps[0] - 10_000.0 / 0.12).abs() < 1e-6, "{}", cam.actual_bps[0]);
}

#[test]
fn ack_short_of_the_distinguished_segment_does_not_decide() {
    // The distinguished segment is bytes 0..1000: an ACK to 999 leaves the round running,
    // the ACK to exactly 1000 ends it.
    let log = SendLog::default();
    let mut c = cc();
    c.slow_start = false;
    let mut w = win(10 * M);
    c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
    for k in 0..10u64 {
        c.on_send(SEC0, k * M as u64, M, false);
    }
    let mut cam = CamTrace::default();
    c.on_ack(&mut w, &sample(SEC0 + 100 * MS, M as u64 - 1, None), &view(&log, SEC0, 0), Some(&mut cam));
    assert_eq!(cam.len(), 0);
    c.on_ack(&mut w, &sample(SEC0 + 120 * MS, M as u64, None), &view(&log, SEC0, 0), Some(&mut cam));
    assert_eq!(cam.len(), 1);
    assert_eq!(cam.t[0], SEC0 + 120 * MS);
    // RTT 120 ms → Diff 10·(1 − 100/120) = 1.667: hold.
    assert!((cam.diff_buffers[0] - 10.0 / 6.0).abs() < 1e-9);
}

/// One slow-start round (not yet a growth epoch): BaseRTT `base`, RTT `rtt`, `segs` sent.
fn ss_round(w: &mut CcWindow, base: Nanos, rtt: Nanos, segs: u64) -> (CamTrace, VegasCc) {
    let log = SendLog::default();
    let mut c = cc();
    c.on_ack(w, &sample(0, 0, Some(base)), &view(&log, 0, 0), None);
    for k in 0..segs {
        c.on_send(SEC0, k * M as u64, M, false);
    }
    let mut cam = CamTrace::default();
    c.on_ack(w, &sample(SEC0 + rtt, M as u64, None), &view(&log, SEC0 + rtt, 0), Some(&mut cam));
    (cam, c)
}

#[test]
fn gamma_is_strict() {
    // cwnd 5 segments, BaseRTT 100 ms: Diff = 5·(1 − 100/125) = 1.0 exactly = γ → grow;
    // at 130 ms Diff = 1.154 > γ → leave slow start with ssthresh = cwnd.
    let mut w = win(5 * M);
    let (cam, c) = ss_round(&mut w, 100 * MS, 125 * MS, 5);
    assert_eq!(cam.diff_buffers[0], 1.0);
    assert_eq!(cam.decision[0], DEC_SS_GROW);
    assert!(c.slow_start && c.ss_grow);
    assert_eq!(w.ssthresh, 65535);
    let mut w = win(5 * M);
    let (cam, c) = ss_round(&mut w, 100 * MS, 130 * MS, 5);
    assert_eq!(cam.decision[0], DEC_SS_EXIT);
    assert!(!c.slow_start);
    assert_eq!(w.ssthresh, 5 * M);
}

#[test]
fn linear_steps_follow_the_bytes_of_uneven_acks() {
    // Increase decided at 10 segments: each ACK adds MSS × bytes_acked / 10 000 B, the
    // remainder carried: 3000 B → +300, 1500 B → +150, 333 B → +33 (rem 3 000 000 − ...),
    // 4167 B → the rest, capped at the target 11 000.
    let mut w = win(10 * M);
    let (cam, mut c) = round(&mut w, 100 * MS, 105 * MS, 10);
    assert_eq!(cam.decision[0], DEC_INCREASE);
    let log = SendLog::default();
    let mut una = 2 * M as u64;
    let mut step = |c: &mut VegasCc, w: &mut CcWindow, bytes: u32| {
        una += bytes as u64;
        let mut s = sample(2 * SEC0, una, None);
        s.bytes_acked = bytes;
        c.on_ack(w, &s, &view(&log, 2 * SEC0, 0), None);
        w.cwnd
    };
    assert_eq!(step(&mut c, &mut w, 3000), 10_300);
    assert_eq!(step(&mut c, &mut w, 1500), 10_450);
    assert_eq!(step(&mut c, &mut w, 333), 10_483);
    // 333 000 − 33·10 000 = 3000 carried; 67 B → 67 000 + 3000 = 70 000 → +7 exactly.
    assert_eq!(step(&mut c, &mut w, 67), 10_490);
    assert_eq!(step(&mut c, &mut w, 9000), 11_000);
    assert_eq!(step(&mut c, &mut w, 9000), 11_000, "stops at the target");
    // Decrease decided at 5 segments (RTT 1 s): 1000 B → −200, 2500 B → −500, then capped at 4000.
    let mut w = win(5 * M);
    let (cam, mut c) = round(&mut w, 100 * MS, SEC0, 5);
    assert_eq!(cam.decision[0], DEC_DECREASE);
    let mut una = 2 * M as u64;
    let mut step = |c: &mut VegasCc, w: &mut CcWindow, bytes: u32| {
        una += bytes as u64;
        let mut s = sample(3 * SEC0, una, None);
        s.bytes_acked = bytes;
        c.on_ack(w, &s, &view(&log, 3 * SEC0, 0), None);
        w.cwnd
    };
    assert_eq!(step(&mut c, &mut w, 1000), 4800);
    assert_eq!(step(&mut c, &mut w, 2500), 4300);
    assert_eq!(step(&mut c, &mut w, 5000), 4000);
    assert!(c.adjust.is_none());
}

#[test]
fn decision_applies_only_a_sub_mss_remainder_of_the_last_step() {
    let log = SendLog::default();
    // (step direction, target, cwnd when the round ends, cwnd the decision judges)
    // Applied: a remainder of 1..MSS−1 bytes. Not applied: exactly one MSS or more (the step
    // had hardly begun). (A window at or past the target cannot get here: the ACK's own
    // step clamps it to the target and ends the adjustment first.)
    for (dir, target, cwnd, judged) in [
        (-1i8, 9 * M, 9 * M + 500, 9 * M),
        (1, 11 * M, 11 * M - 1, 11 * M),
        (1, 11 * M, 9 * M, 9 * M),
        (1, 11 * M, 10 * M, 10 * M),
        (-1, 9 * M, 10 * M, 10 * M),
    ] {
        let mut c = cc();
        c.slow_start = false;
        let mut w = win(cwnd);
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        c.adjust = Some(Adjust { dir, target, over: 10 * M, acc: 0 });
        for k in 0..9u64 {
            c.on_send(SEC0, k * M as u64, M, false);
        }
        let mut cam = CamTrace::default();
        let mut s = sample(SEC0 + 100 * MS, M as u64, None);
        s.bytes_acked = 0;
        c.on_ack(&mut w, &s, &view(&log, SEC0, 0), Some(&mut cam));
        let segs = (judged / M) as f64;
        assert!((cam.expected_bps[0] - segs * M as f64 / 0.1).abs() < 1e-6, "{dir} {target} {cwnd}: {}", cam.expected_bps[0]);
    }
}

#[test]
fn segment_sent_at_the_instant_of_the_last_decrease_does_not_decrease_again() {
    // 000 §4.5: decrease only for segments sent *after* the last decrease. Segment 0 left
    // at t = 0; a decrease at t = 0 makes its retransmission leave the window alone.
    let (mut c, log, mut w) = loaded();
    c.last_decrease = Some(0);
    assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
    assert_eq!(c.loss_decreases, 0);
    assert_eq!(w.ssthresh, 65535);
    assert_eq!(w.cwnd, 11 * M, "window kept, plus one MSS for the duplicate");
    assert_eq!(c.vegas_retransmits, 1);
    // Segment 1 left at 1 ms, after that decrease: 10 → 7 segments (+1 for the duplicate).
    let (mut c, mut log, mut w) = loaded();
    c.last_decrease = Some(0);
    log.ack(300 * MS, 1 + M as u64);
    assert_eq!(c.on_dupack(&mut w, &view(&log, 302 * MS, 1)), CcVerdict::RetransmitOldest);
    assert_eq!(c.loss_decreases, 1);
    assert_eq!(w.ssthresh, 7 * M);
    assert_eq!(w.cwnd, 8 * M);
}

#[test]
fn vegas_retransmits_counts_each_retransmission_decided_here() {
    let (mut c, mut log, mut w) = loaded();
    assert_eq!(c.vegas_retransmits, 0);
    assert_eq!(c.on_dupack(&mut w, &view(&log, 301 * MS, 1)), CcVerdict::RetransmitOldest);
    assert_eq!(c.vegas_retransmits, 1);
    log.on_send(301 * MS, 1, 1 + M as u64);
    c.on_send(301 * MS, 0, M, true);
    log.ack(400 * MS, 1 + M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 400 * MS, 0)), CcVerdict::RetransmitOldest);
    assert_eq!(c.vegas_retransmits, 2);
    assert_eq!(c.loss_decreases, 1);
}

#[test]
fn only_the_first_two_non_duplicate_acks_after_a_retransmission_are_checked() {
    // A third-duplicate retransmission at 250 ms (fine timer not expired: RTO 300 ms).
    let (mut c, mut log, mut w) = loaded();
    assert_eq!(c.on_dupack(&mut w, &view(&log, 250 * MS, 3)), CcVerdict::RetransmitOldest);
    assert_eq!(c.checks_left, 2);
    log.on_send(250 * MS, 1, 1 + M as u64);
    c.on_send(250 * MS, 0, M, true);
    // 1st and 2nd non-duplicate ACKs: the oldest segments (sent at 1 and 2 ms) have not
    // expired at 260 / 270 ms.
    log.ack(260 * MS, 1 + M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 260 * MS, 0)), CcVerdict::Continue);
    assert_eq!(c.checks_left, 1);
    log.ack(270 * MS, 1 + 2 * M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 270 * MS, 0)), CcVerdict::Continue);
    assert_eq!(c.checks_left, 0);
    // 3rd: segment 2 (sent at 2 ms) has expired at 400 ms, but it is not checked.
    log.ack(280 * MS, 1 + 3 * M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 400 * MS, 0)), CcVerdict::Continue);
    assert_eq!(c.checks_left, 0);
    assert_eq!(c.vegas_retransmits, 1);
    // Whereas the 2nd check does retransmit an expired segment.
    let (mut c, mut log, mut w) = loaded();
    assert_eq!(c.on_dupack(&mut w, &view(&log, 250 * MS, 3)), CcVerdict::RetransmitOldest);
    log.on_send(250 * MS, 1, 1 + M as u64);
    c.on_send(250 * MS, 0, M, true);
    log.ack(260 * MS, 1 + M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 260 * MS, 0)), CcVerdict::Continue);
    log.ack(270 * MS, 1 + 2 * M as u64);
    assert_eq!(c.on_ack_check(&mut w, &view(&log, 400 * MS, 0)), CcVerdict::RetransmitOldest);
}

#[test]
fn an_ack_covering_a_retransmitted_byte_gives_no_fine_sample() {
    // Karn per segment: bytes 0..1000 were retransmitted; the ACK that first covers them
    // (snd_una 0 → 1000) gives no sample even if the send log offers one; the next ACK does.
    let log = SendLog::default();
    let mut c = cc();
    let mut w = win(10 * M);
    c.on_send(0, 0, M, false);
    c.on_send(MS, M as u64, M, false);
    c.on_send(500 * MS, 0, M, true);
    c.on_ack(&mut w, &sample(600 * MS, M as u64, Some(100 * MS)), &view(&log, 600 * MS, 0), None);
    assert_eq!(c.fine_rto(), None);
    assert_eq!(c.base_rtt, None);
    c.on_ack(&mut w, &sample(601 * MS, 2 * M as u64, Some(120 * MS)), &view(&log, 601 * MS, 0), None);
    // First sample 120 ms: srtt 120, rttvar 60 → RTO 120 + 240 = 360 ms.
    assert_eq!(c.fine_rto(), Some(360 * MS));
    assert_eq!(c.base_rtt, Some(120 * MS));
}
