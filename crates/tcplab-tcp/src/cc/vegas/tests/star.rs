//! Vegas* on bare state (000 §4.4, reading 11).

use super::*;

/// Vegas* at the start of a slow-start *growth* epoch that began with `segs` segments of
/// window, BaseRTT `base`, a probe armed (as `decide` arms it).
fn star(base: Nanos, segs: u32) -> (VegasCc, CcWindow) {
    let mut c = VegasCc::new(VegasParams { avg_rtt: false, star: true, ..Default::default() });
    c.base_rtt = Some(base);
    c.ss_grow = true;
    c.epoch_segments = segs;
    c.star_probe = Some(StarProbe::default());
    // No CAM round running: these tests look at the probe alone.
    c.want_dist = false;
    (c, win(segs * M))
}

/// An ACK at `t` advancing snd_una to `una` segments (no RTT sample, no distinguished segment).
fn star_ack(c: &mut VegasCc, w: &mut CcWindow, t: Nanos, una: u64) {
    let log = SendLog::default();
    c.on_ack(w, &sample(t, una * M as u64, None), &view(&log, t, 0), None);
}

/// The four probe segments (0..4) leave back to back at `t`.
fn star_send_probe(c: &mut VegasCc, t: Nanos) {
    for k in 0..4u64 {
        c.on_send(t + k, k * M as u64, M, false);
    }
}

#[test]
fn star_estimate_from_four_segments_sets_ssthresh() {
    // The thesis' numbers: MSS 1 KB, ACKs 5 ms apart → 200 KB/s; BaseRTT 100 ms.
    // ACKs of the four probe segments at 100, 105, 110, 115 ms: 3000 B / 15 ms = 200 000 B/s;
    // ssthresh = 200 000 B/s × 0.1 s = 20 000 B = 20 segments.
    let (mut c, mut w) = star(100 * MS, 4);
    let t0 = SEC0;
    star_send_probe(&mut c, t0);
    c.ss_grow = false; // the growth epoch ends; its probe was complete
    for k in 0..3u64 {
        star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
        assert_eq!(c.star_bw, None, "no estimate before the fourth segment's ACK");
        assert_eq!(w.ssthresh, 65535);
    }
    star_ack(&mut c, &mut w, t0 + 115 * MS, 4);
    let bw = c.star_bw.expect("estimate after the fourth ACK");
    assert_eq!(bw, 200_000.0);
    assert_eq!(w.ssthresh, 20 * M);
    assert!(c.star_probe.is_none(), "a probe gives one estimate");
    // A delayed-ACK receiver: one ACK covers segments 1-2 (at 100 ms), the next 3-4
    // (10 ms later): 2000 B / 10 ms = 200 000 B/s again.
    let (mut c, mut w) = star(100 * MS, 4);
    star_send_probe(&mut c, t0);
    star_ack(&mut c, &mut w, t0 + 100 * MS, 2);
    star_ack(&mut c, &mut w, t0 + 110 * MS, 4);
    assert_eq!(c.star_bw, Some(200_000.0));
    assert_eq!(w.ssthresh, 20 * M);
    // Whole segments, rounded down: with BaseRTT 47 ms, 200 000 × 0.047 = 9 400 B → 9 segments.
    let (mut c, mut w) = star(47 * MS, 4);
    star_send_probe(&mut c, t0);
    for k in 0..4u64 {
        star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
    }
    assert_eq!(w.ssthresh, 9 * M);
    // ... and never below 2 segments: 10 ms spacing (100 000 B/s) × 5 ms BaseRTT = 0.5 segment.
    let (mut c, mut w) = star(5 * MS, 4);
    star_send_probe(&mut c, t0);
    for k in 0..4u64 {
        star_ack(&mut c, &mut w, t0 + 100 * MS + k * 10 * MS, k + 1);
    }
    assert_eq!(w.ssthresh, 2 * M);
    // One (stretch) ACK covering the first and the fourth segment: no spacing, no estimate.
    let (mut c, mut w) = star(100 * MS, 4);
    star_send_probe(&mut c, t0);
    star_ack(&mut c, &mut w, t0 + 100 * MS, 4);
    assert_eq!(c.star_bw, None);
    assert!(c.star_probe.is_none());
    assert_eq!(w.ssthresh, 65535);
}

#[test]
fn star_probe_needs_four_segments_of_one_growth_epoch_without_retransmission() {
    let t0 = SEC0;
    // The epoch ends (hold) after three probe segments: the fourth does not join the probe.
    let (mut c, mut w) = star(100 * MS, 4);
    for k in 0..3u64 {
        c.on_send(t0, k * M as u64, M, false);
    }
    c.ss_grow = false;
    c.on_send(t0 + MS, 3 * M as u64, M, false);
    assert!(c.star_probe.is_none());
    for k in 0..4u64 {
        star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
    }
    assert_eq!(c.star_bw, None);
    // A retransmission among the probe's segments abandons it (Karn).
    let (mut c, mut w) = star(100 * MS, 4);
    star_send_probe(&mut c, t0);
    c.on_send(t0 + 50 * MS, 0, M, true);
    for k in 0..4u64 {
        star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
    }
    assert_eq!(c.star_bw, None);
    // Zero-length sends (a FIN or window probe without data) are not probe segments.
    let (mut c, _) = star(100 * MS, 4);
    c.on_send(t0, 0, 0, false);
    assert_eq!(c.star_probe.map(|q| q.sent), Some(0));
    // `decide` arms a probe when a growth epoch starts with at least three segments, and
    // only for Vegas*: end of a hold epoch with Diff 0 (RTT = BaseRTT).
    for (star, segs, armed) in [(true, 3, true), (true, 2, false), (false, 4, false)] {
        let mut c = VegasCc::new(VegasParams { avg_rtt: false, star, ..Default::default() });
        let mut w = win(segs * M);
        let log = SendLog::default();
        c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
        for k in 0..segs as u64 {
            c.on_send(t0, k * M as u64, M, false);
        }
        let mut cam = CamTrace::default();
        c.on_ack(&mut w, &sample(t0 + 100 * MS, M as u64, None), &view(&log, t0 + 100 * MS, 0), Some(&mut cam));
        assert_eq!(cam.decision[0], DEC_SS_GROW);
        assert_eq!(c.star_probe.is_some(), armed, "star {star}, {segs} segments");
    }
    // A probe that was not complete when its growth epoch ended is dropped by `decide`.
    let mut c = VegasCc::new(VegasParams { avg_rtt: false, star: true, ..Default::default() });
    let mut w = win(4 * M);
    let log = SendLog::default();
    c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
    c.ss_grow = true;
    c.star_probe = Some(StarProbe::default());
    c.on_send(t0, 0, M, false); // distinguished and first probe segment
    c.on_ack(&mut w, &sample(t0 + 100 * MS, M as u64, None), &view(&log, t0 + 100 * MS, 0), None);
    assert!(!c.ss_grow);
    assert!(c.star_probe.is_none());
}

#[test]
fn star_probe_through_the_epochs_estimate_then_paced_growth() {
    // A whole Vegas* slow start from a 4-segment hold epoch, BaseRTT 100 ms, bottleneck
    // 200 KB/s (5 ms per 1 KB segment), driven through `decide` as on a path.
    let log = SendLog::default();
    let mut c = VegasCc::new(VegasParams { avg_rtt: false, star: true, ..Default::default() });
    let mut w = win(4 * M);
    let t0 = SEC0;
    let mut cam = CamTrace::default();
    let mut seq = 0u64;
    let mut send = |c: &mut VegasCc, t: Nanos, n: u64| {
        for _ in 0..n {
            c.on_send(t, seq * M as u64, M, false);
            seq += 1;
        }
    };
    let ack = |c: &mut VegasCc, w: &mut CcWindow, cam: &mut CamTrace, t: Nanos, una: u64| {
        c.on_ack(w, &sample(t, una * M as u64, None), &view(&log, t, 0), Some(cam));
    };
    c.on_ack(&mut w, &sample(0, 0, Some(100 * MS)), &view(&log, 0, 0), None);
    // Hold epoch: segments 0-3; segment 0's ACK at +100 ms, Diff 0 → grow, probe armed.
    send(&mut c, t0, 4);
    ack(&mut c, &mut w, &mut cam, t0 + 100 * MS, 1);
    assert_eq!(cam.decision[0], DEC_SS_GROW);
    // Growth epoch: segment 4 (distinguished, probe 1), then two per ACK: 5-6, 7-8, 9-10.
    send(&mut c, t0 + 100 * MS, 1);
    for (k, una) in [(1u64, 2u64), (2, 3), (3, 4)] {
        // ACKs of the hold epoch's segments, below the first probe segment: not timed.
        ack(&mut c, &mut w, &mut cam, t0 + 100 * MS + k * 5 * MS, una);
        send(&mut c, t0 + 100 * MS + k * 5 * MS, 2);
    }
    assert_eq!(w.cwnd, 7 * M);
    // Segment 4's ACK at +200 ms ends the growth epoch (cwnd 8): the probe was complete and
    // stays; its timing starts here.
    ack(&mut c, &mut w, &mut cam, t0 + 200 * MS, 5);
    assert_eq!(cam.decision[1], DEC_HOLD);
    assert_eq!(w.cwnd, 8 * M);
    assert_eq!(w.ssthresh, 65535);
    // Hold epoch: segments 11-18, one per ACK; the ACK of segment 7 (snd_una 8) at +215 ms
    // completes the probe: 3000 B / 15 ms = 200 000 B/s; threshold 200 000 × 0.1 s = 20 segments.
    send(&mut c, t0 + 200 * MS, 2);
    for (k, una) in [(1u64, 6u64), (2, 7), (3, 8), (4, 9), (5, 10), (6, 11)] {
        ack(&mut c, &mut w, &mut cam, t0 + 200 * MS + k * 5 * MS, una);
        send(&mut c, t0 + 200 * MS + k * 5 * MS, 1);
        if una == 8 {
            assert_eq!(c.star_bw, Some(200_000.0));
            assert_eq!(w.ssthresh, 20 * M);
        }
    }
    assert_eq!(w.cwnd, 8 * M);
    // Segment 11's ACK at +300 ms: 8 segments in 100 ms, Diff 0 → grow again (8 < 20).
    ack(&mut c, &mut w, &mut cam, t0 + 300 * MS, 12);
    assert_eq!(cam.decision[2], DEC_SS_GROW);
    // Now paced: the first ACK of this growth epoch schedules its increase 8 expected ACKs
    // × 5 ms = 40 ms later, and the window holds until then.
    send(&mut c, t0 + 300 * MS, 1);
    ack(&mut c, &mut w, &mut cam, t0 + 305 * MS, 13);
    assert_eq!(w.cwnd, 8 * M);
    assert_eq!(c.next_timer(), Some(t0 + 345 * MS));
}

#[test]
fn star_two_acks_at_one_instant_give_no_estimate() {
    let (mut c, mut w) = star(100 * MS, 4);
    star_send_probe(&mut c, SEC0);
    star_ack(&mut c, &mut w, SEC0 + 100 * MS, 1);
    star_ack(&mut c, &mut w, SEC0 + 100 * MS, 4);
    assert_eq!(c.star_bw, None);
    assert!(c.star_probe.is_none());
    assert_eq!(w.ssthresh, 65535);
}

#[test]
fn star_estimate_reached_ends_slow_start_at_the_threshold() {
    // After an estimate of 200 KB/s × 40 ms (ssthresh 8 segments), a growth epoch that
    // started at 4 segments grows to 8 and stops; the end of the next epoch leaves slow start
    // with the decision "reached the threshold window" and keeps ssthresh = 8 segments.
    let (mut c, mut w) = star(40 * MS, 4);
    let t0 = SEC0;
    star_send_probe(&mut c, t0);
    // The probe's ACKs come in the next (hold) epoch: the window does not move.
    c.ss_grow = false;
    for k in 0..4u64 {
        star_ack(&mut c, &mut w, t0 + 40 * MS + k * 5 * MS, k + 1);
    }
    assert_eq!(w.ssthresh, 8 * M);
    assert_eq!(w.cwnd, 4 * M);
    // Next growth epoch: four ACKs, each scheduling its increase.
    c.ss_grow = true;
    for k in 0..4u64 {
        star_ack(&mut c, &mut w, t0 + 80 * MS + k * 5 * MS, 5 + k);
    }
    assert_eq!(w.cwnd, 4 * M);
    let fired: Vec<Nanos> = std::iter::from_fn(|| {
        let t = c.next_timer()?;
        c.on_timer(t, &mut w);
        Some(t)
    })
    .collect();
    assert_eq!(fired.len(), 4, "each of the four ACKs scheduled its increase");
    assert_eq!(w.cwnd, 8 * M);
    let log = SendLog::default();
    c.ss_grow = false;
    c.want_dist = true;
    c.on_send(t0 + SEC0, 10 * M as u64, M, false);
    let mut cam = CamTrace::default();
    c.on_ack(&mut w, &sample(t0 + SEC0 + 40 * MS, 11 * M as u64, None), &view(&log, t0 + SEC0, 0), Some(&mut cam));
    assert_eq!(cam.decision[0], DEC_SS_EXIT);
    assert!(!c.slow_start);
    assert_eq!(w.ssthresh, 8 * M);
}

#[test]
fn star_increases_are_scheduled_at_the_expected_ack_spacing() {
    // Estimate 200 KB/s (5 ms per 1 KB segment), ssthresh 8 segments (BaseRTT 40 ms); the
    // next growth epoch starts at 4 segments: each ACK schedules its +1 MSS 4 ACKs × 5 ms =
    // 20 ms later (the thesis' "5×4" example) instead of growing at once.
    let (mut c, mut w) = star(40 * MS, 4);
    c.star_probe = None;
    c.star_bw = Some(200_000.0);
    w.ssthresh = 8 * M;
    let t0 = SEC0;
    for k in 0..3u64 {
        star_ack(&mut c, &mut w, t0 + k * 5 * MS, k + 1);
        assert_eq!(w.cwnd, 4 * M);
    }
    assert_eq!(c.next_timer(), Some(t0 + 20 * MS));
    // Not due yet: nothing happens a nanosecond early.
    c.on_timer(t0 + 20 * MS - 1, &mut w);
    assert_eq!(w.cwnd, 4 * M);
    c.on_timer(t0 + 20 * MS, &mut w);
    assert_eq!(w.cwnd, 5 * M);
    assert_eq!(c.next_timer(), Some(t0 + 25 * MS));
    // A late timer call applies everything due by then (25 and 30 ms).
    c.on_timer(t0 + 31 * MS, &mut w);
    assert_eq!(w.cwnd, 7 * M);
    assert_eq!(c.next_timer(), None);
    // Increases stop at ssthresh: five more ACKs take the window to 8 segments, not 12.
    for k in 3..8u64 {
        star_ack(&mut c, &mut w, t0 + k * 5 * MS, k + 1);
    }
    while let Some(t) = c.next_timer() {
        c.on_timer(t, &mut w);
    }
    assert_eq!(w.cwnd, 8 * M);
}

#[test]
fn star_pending_increases_are_dropped_on_timeout_and_plain_vegas_never_schedules() {
    let (mut c, mut w) = star(SEC0, 4);
    c.star_bw = Some(200_000.0);
    let t0 = SEC0;
    star_ack(&mut c, &mut w, t0, 1);
    assert_eq!(c.next_timer(), Some(t0 + 20 * MS));
    c.on_timeout(&mut w);
    assert_eq!(c.next_timer(), None);
    assert!(c.star_probe.is_none());
    // Plain Vegas: the same ACKs grow the window at once and nothing is estimated.
    let mut c = cc();
    c.want_dist = false;
    c.ss_grow = true;
    c.epoch_segments = 4;
    c.base_rtt = Some(SEC0);
    let mut w = win(4 * M);
    for k in 0..4u64 {
        c.on_send(t0 + k, k * M as u64, M, false);
    }
    for k in 0..6u64 {
        star_ack(&mut c, &mut w, t0 + 100 * MS + k * 5 * MS, k + 1);
    }
    assert_eq!(w.cwnd, 10 * M);
    assert_eq!(c.star_bw, None);
    assert_eq!(c.next_timer(), None);
}
