//! Unit checks of BBR's constants, parameters and sizing arithmetic (the behaviour over a path is
//! tested in `tests/endpoint/bbr.rs`).

use super::*;

#[test]
fn gains_are_linuxs_fixed_point_values() {
    // Linux: bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1, bbr_drain_gain = BBR_UNIT * 1000 / 2885.
    assert_eq!(HIGH_GAIN, 739);
    assert_eq!(DRAIN_GAIN, 88);
    assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    assert_eq!(CWND_GAIN, 512);
}

#[test]
fn pacing_rate_keeps_a_one_percent_margin() {
    assert_eq!(BbrCc::rate_for(1_000_000, UNIT), 990_000);
    assert_eq!(BbrCc::rate_for(1_000_000, UNIT * 5 / 4), 1_237_500);
}

#[test]
fn bdp_rounds_up_to_whole_packets_and_quantization_adds_three_tso_goals() {
    let mut b = BbrCc::new(BbrParams::DEFAULT, 1);
    assert_eq!(b.bdp_pkts(1_000_000, UNIT, 1000), 10, "no RTT sample yet: TCP_INIT_CWND");
    b.min_rtt.update(0, 40 * MS);
    // 1 MB/s × 40 ms = 40 000 bytes = 40 packets; ×2.885 = 115.4 → 116.
    assert_eq!(b.bdp_pkts(1_000_000, UNIT, 1000), 40);
    assert_eq!(b.bdp_pkts(1_000_000, HIGH_GAIN, 1000), 116);
    // Pacing 1 MB/s: 1 MB/s >> 10 = 976 bytes < 1 segment, above 1.2 Mbit/s → TSO goal 2.
    b.pacing_rate = Some(1_000_000);
    assert_eq!(b.tso_segs_goal(1000), 2);
    assert_eq!(b.quantization_budget(41, 1000), 48, "41 + 6, rounded up to even");
    b.pacing_rate = Some(100_000); // below 1.2 Mbit/s: one segment
    assert_eq!(b.quantization_budget(40, 1000), 44, "40 + 3, rounded up to even");
    b.pacing_rate = Some(12_500_000); // 100 Mbit/s: 12 207 bytes per ms → 8 segments of 1448
    assert_eq!(b.tso_segs_goal(1448), 8);
}

#[test]
fn params_parse_and_reject() {
    let mut p = BbrParams::DEFAULT;
    p.set("bbr", "probe_rtt_ms", 100.0).unwrap();
    p.set("bbr", "ack_aggregation", 0.0).unwrap();
    assert_eq!(p, BbrParams { min_rtt_win_ms: 10_000, probe_rtt_ms: 100, ack_aggregation: false, lt_bw: true });
    p.set("bbr", "lt_bw", 0.0).unwrap();
    assert!(!p.lt_bw);
    assert!(p.set("bbr", "lt_bw", 3.0).unwrap_err().contains("0 or 1"));
    assert!(p.set("bbr", "ack_aggregation", 2.0).unwrap_err().contains("0 or 1"));
    assert!(p.set("bbr", "probe_rtt_ms", 1.5).unwrap_err().contains("whole number"));
    assert!(p.set("bbr", "gain", 1.0).unwrap_err().contains("min_rtt_win_ms"));
    p.min_rtt_win_ms = 0;
    assert!(p.check().is_err());
}

#[test]
fn probe_bw_never_starts_in_the_drain_phase() {
    // Linux: cycle_idx = CYCLE_LEN − 1 − random(7), then advanced: any phase but 3/4 (index 1).
    let mut seen = [false; 8];
    for seed in 0..200 {
        let mut b = BbrCc::new(BbrParams::DEFAULT, seed);
        b.reset_probe_bw_mode(0);
        seen[b.cycle_idx] = true;
    }
    assert_eq!(seen, [true, false, true, true, true, true, true, true]);
}

/// BBR in PROBE_BW with bw 1 MB/s and min RTT 100 ms: target cwnd 2 BDP = 200 packets + the
/// quantization budget (no pacing rate: TSO goal 1, so 203 → 204 packets) = 204 000 bytes.
fn probing_bbr() -> (BbrCc, CcWindow) {
    let mut b = BbrCc::new(BbrParams { ack_aggregation: false, ..BbrParams::DEFAULT }, 1);
    b.min_rtt.update(0, 100 * MS);
    b.bw.update(BW_WINDOW_ROUNDS, 0, 1_000_000);
    b.mode = Mode::ProbeBw;
    b.cycle_idx = 2;
    b.update_gains();
    b.full_bw_reached = true;
    (b, CcWindow { cwnd: 100_000, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX })
}

#[test]
fn losses_marked_on_an_ack_come_off_cwnd_in_recovery() {
    // Linux `bbr_set_cwnd_to_recover_or_restore`: cwnd −= rs->losses first; on entering
    // recovery cwnd = in flight + acked; in the first round max(cwnd, in flight + acked); after
    // it min(cwnd + acked, target).
    let (mut b, mut w) = probing_bbr();
    assert_eq!(b.quantization_budget(b.bdp_pkts(b.bw(), b.cwnd_gain, 1000), 1000), 204);
    // The ACK that enters recovery marks 5 segments lost: conservation sets cwnd regardless.
    let _ = b.ssthresh(&w, 100_000, u32::MAX, LossEvent::FastRetransmit);
    b.on_marked_lost(5000);
    b.on_recovery(&mut w, true);
    b.on_recovery_pipe(&mut w, 80_000, 1000);
    assert_eq!(w.cwnd, 81_000, "in flight + acked");
    // First round, a duplicate ACK marking 3 lost: max(81 000 − 3000, 70 000 + 1000).
    b.on_marked_lost(3000);
    b.on_recovery_pipe(&mut w, 70_000, 1000);
    assert_eq!(w.cwnd, 78_000);
    // The round ends; a duplicate ACK marking 10 lost and SACKing one: 78 000 − 10 000 + 1000.
    b.cons.on_round_start();
    b.on_marked_lost(10_000);
    b.on_recovery_pipe(&mut w, 50_000, 1000);
    assert_eq!(w.cwnd, 69_000);
    // An ACK advancing snd_una by 3000 that marks 2 lost (its `bbr_main`): −2000 + 3000.
    b.on_marked_lost(2000);
    b.set_cwnd(&mut w, 3000);
    assert_eq!(w.cwnd, 70_000);
    // Losses belong to their ACK: one that delivered nothing deducts nothing and they are gone.
    b.on_marked_lost(4000);
    b.on_recovery_pipe(&mut w, 50_000, 0);
    b.set_cwnd(&mut w, 1000);
    assert_eq!(w.cwnd, 71_000);
    // Growth stops at the target.
    b.set_cwnd(&mut w, 500_000);
    assert_eq!(w.cwnd, 204_000);
}

#[test]
fn a_detected_policer_sets_bw_and_holds_probe_bw_at_gain_one() {
    let mut b = BbrCc::new(BbrParams::DEFAULT, 1);
    b.bw.update(BW_WINDOW_ROUNDS, 1, 2_000_000);
    b.mode = Mode::ProbeBw;
    b.cycle_idx = 0;
    b.update_gains();
    assert_eq!(b.pacing_gain, UNIT * 5 / 4);
    // Policed: bbr_bw is lt_bw, the max filter stays for cycle and full-pipe decisions.
    b.lt.use_bw = true;
    b.lt.lt_bw = 1_000_000;
    assert_eq!((b.bw(), b.max_bw()), (1_000_000, 2_000_000));
    b.update_gains();
    assert_eq!(b.pacing_gain, UNIT, "PROBE_BW paces at gain 1 while lt_bw is used");
    assert_eq!(b.cwnd_gain, CWND_GAIN);
    // With the estimator switched off nothing is sampled: losses never start an interval.
    let mut off = BbrCc::new(BbrParams { lt_bw: false, ..BbrParams::DEFAULT }, 1);
    off.on_marked_lost(100_000);
    off.lt_sample(0, off.lt_input(100_000, false));
    assert!(!off.lt.use_bw && off.lt.lt_bw == 0);
}

fn view(log: &crate::sendlog::SendLog, now: Nanos) -> SenderView<'_> {
    SenderView { now, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 1 << 30, mss: 1000, dupacks: 0, fine_srtt: Some(100 * MS), in_recovery: true, send_log: log }
}

fn cum_ack(now: Nanos, snd_una: u64, bytes_acked: u32) -> AckSample {
    AckSample { now, bytes_acked, rtt: Some(100 * MS), fine_rtt: Some(100 * MS), in_slow_start: false, snd_una, snd_nxt: 40_000, flight: 0, ece: false }
}

/// STARTUP, 40 segments of 1000 bytes sent at 0; segment 0 lost; duplicate ACKs in recovery
/// SACK segments 1..=19, one each, at 1 ms (the clock is compressed so that the delivery-rate
/// sample, 20 segments in 2 ms, puts STARTUP's target far above cwnd). Returns the controller and its window after them.
fn startup_in_recovery_with_19_sacked() -> (BbrCc, CcWindow) {
    let mut b = BbrCc::new(BbrParams { ack_aggregation: false, ..BbrParams::DEFAULT }, 1);
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
    (b, w)
}

#[test]
fn a_cumulative_ack_over_sacked_data_counts_only_what_it_newly_delivered() {
    // Linux `tcp_ack` hands `bbr_main` rs->acked_sacked = tp->delivered after − before the ACK:
    // the segments SACKed earlier and now covered by the cumulative ACK were delivered (and
    // counted) when SACKed. The retransmission of segment 0 arrives: snd_una jumps 20 segments,
    // one of them newly delivered.
    let (mut b, mut w) = startup_in_recovery_with_19_sacked();
    let log = crate::sendlog::SendLog::default();
    // The recovery's first round: cwnd = max(cwnd, pipe + acked_sacked). Pipe 20,000 (20 unsacked
    // beyond snd_una): 21,000 with the one newly delivered segment; counting the 20-segment jump
    // would give 40,000.
    w.cwnd = 10_000;
    b.on_ack_in_recovery(&mut w, &cum_ack(2 * MS, 20_000, 20_000), &view(&log, 2 * MS));
    b.on_recovery_pipe(&mut w, 20_000, 20_000);
    assert_eq!(w.cwnd, 21_000, "pipe + the one segment this ACK delivered");
    assert_eq!(b.rate.delivered, 20_000, "each segment delivered once");
}

#[test]
fn startup_grows_cwnd_by_newly_delivered_bytes_not_by_the_cumulative_jump() {
    // `bbr_set_cwnd` in STARTUP (below the target): cwnd += acked, acked = rs->acked_sacked.
    let (mut b, mut w) = startup_in_recovery_with_19_sacked();
    let log = crate::sendlog::SendLog::default();
    // Recovery over (the first round ended long ago, prior cwnd restored): the cumulative ACK
    // over segment 0's retransmission and the 19 SACKed segments grows cwnd by 1000, not 20,000.
    b.on_recovery(&mut w, false);
    b.cons.on_round_start();
    w.cwnd = 40_000;
    // The ACK covers a retransmission: no RTT (Karn), and none of the compressed clock's
    // 100 ms to judge its 2 ms rate sample by (Linux `tcp_rate_gen` against `tcp_min_rtt`).
    let s = AckSample { rtt: None, fine_rtt: None, ..cum_ack(2 * MS, 20_000, 20_000) };
    b.on_ack(&mut w, &s, &view(&log, 2 * MS), None);
    assert_eq!(w.cwnd, 41_000);
    // The next ACK delivers two unsacked segments (sent at 0, an RTT of 3 ms): +2000.
    b.on_ack(&mut w, &AckSample { fine_rtt: Some(3 * MS), ..cum_ack(3 * MS, 22_000, 2000) }, &view(&log, 3 * MS), None);
    assert_eq!(w.cwnd, 43_000);
}

/// BBR in DRAIN (bw 1 MB/s, min RTT 100 ms: BDP 100 segments) with 150 segments of 1000 bytes
/// out, segments 1..=80 SACKed; then the ACK of segment 0 at 2 ms. With `report`, the endpoint
/// reports Linux's `tcp_packets_in_flight` around the ACK (150 000 − 80 000 before, 69 000
/// after), as a RACK scoreboard does.
fn drain_with_80_sacked(report: bool) -> BbrCc {
    let mut b = BbrCc::new(BbrParams { ack_aggregation: false, ..BbrParams::DEFAULT }, 1);
    let mut w = CcWindow { cwnd: 300_000, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX };
    b.min_rtt.update(0, 100 * MS);
    b.bw.update(BW_WINDOW_ROUNDS, 0, 1_000_000);
    b.full_bw_reached = true;
    b.mode = Mode::Drain;
    b.update_gains();
    for k in 0..150u64 {
        b.on_send(0, k * 1000, 1000, false);
    }
    b.on_sacked(MS, 1000, 81_000);
    let log = crate::sendlog::SendLog::default();
    if report {
        b.on_in_flight(70_000, true);
        b.on_in_flight(69_000, false);
    }
    let v = SenderView { in_recovery: false, ..view(&log, 2 * MS) };
    b.on_ack(&mut w, &cum_ack(2 * MS, 1000, 1000), &v, None);
    b
}

#[test]
fn drain_ends_when_linuxs_in_flight_not_everything_unacknowledged_reaches_the_bdp() {
    // Linux `bbr_check_drain`: tcp_packets_in_flight(tp) <= bbr_inflight(sk, bw, BBR_UNIT),
    // in flight = packets_out − sacked_out − lost_out + retrans_out: 69 segments here, under the
    // 100-segment BDP, though 149 000 bytes are above snd_una.
    assert_eq!(drain_with_80_sacked(true).mode, Mode::ProbeBw);
    // Without a scoreboard report the estimate is snd_max − snd_una and DRAIN goes on.
    assert_eq!(drain_with_80_sacked(false).mode, Mode::Drain);
}

#[test]
fn probe_rtt_starts_its_200_ms_once_linuxs_in_flight_is_four_packets() {
    // Linux `bbr_update_min_rtt`: PROBE_RTT's timer starts when tcp_packets_in_flight <=
    // bbr_cwnd_min_target (4 packets). 10 segments out, 7 SACKed: 3 in flight.
    let run = |report: bool| {
        let (mut b, mut w) = probing_bbr();
        b.mode = Mode::ProbeRtt;
        b.probe_rtt_done = None;
        for k in 0..10u64 {
            b.on_send(0, k * 1000, 1000, false);
        }
        b.on_sacked(MS, 2000, 9000);
        let log = crate::sendlog::SendLog::default();
        if report {
            b.on_in_flight(3000, true);
            b.on_in_flight(2000, false);
        }
        let v = SenderView { in_recovery: false, ..view(&log, 2 * MS) };
        b.on_ack(&mut w, &cum_ack(2 * MS, 1000, 1000), &v, None);
        b.probe_rtt_done
    };
    assert_eq!(run(true), Some(2 * MS + 200 * MS));
    assert_eq!(run(false), None, "9000 bytes above snd_una: more than 4 packets");
}

#[test]
fn the_reported_in_flight_grows_with_what_is_sent_after_the_report() {
    let mut d = rate::DeliveryRate::default();
    for k in 0..10u64 {
        d.on_send(0, k * 1000, 1000);
    }
    assert_eq!(d.pipe(), 10_000, "no report: snd_max − snd_una");
    d.set_pipe(4000, false);
    assert_eq!(d.pipe(), 4000);
    d.on_send(MS, 10_000, 1000);
    assert_eq!(d.pipe(), 5000);
}

#[test]
fn establishment_seeds_min_rtt_and_the_pacing_rate_from_the_handshake_rtt() {
    // Linux `bbr_init`: min_rtt_us = tcp_min_rtt(tp) (the SYN's RTT) stamped now, pacing rate
    // = high_gain · cwnd / srtt · 99 %. A flow whose first data segments queue behind other
    // flows' initial windows keeps that minimum: a later, larger RTT does not replace it.
    let mut b = BbrCc::new(BbrParams::DEFAULT, 1);
    let w = CcWindow { cwnd: 14_480, ssthresh: u32::MAX, mss: 1448, max_cwnd: u32::MAX };
    b.on_established(300 * MS, &w, Some(50 * MS));
    assert_eq!(b.min_rtt.min_rtt, Some(50 * MS));
    assert_eq!(b.min_rtt.stamp, 300 * MS);
    // 14 480 B / 50 ms = 289 600 B/s; × 739/256 × 0.99.
    assert_eq!(b.pacing_rate_now(), Some(BbrCc::rate_for(289_600, HIGH_GAIN)));
    assert!(!b.min_rtt.update(400 * MS, 86 * MS), "a queued first sample is not a new minimum");
    assert_eq!(b.min_rtt.min_rtt, Some(50 * MS));
    // BDP from the handshake's minimum: 300 kB/s × 50 ms = 15 000 B → 11 packets of 1448.
    assert_eq!(b.bdp_pkts(300_000, UNIT, 1448), 11);
    // A retransmitted SYN gives no sample: nothing seeded, only the stamp.
    let mut c = BbrCc::new(BbrParams::DEFAULT, 1);
    c.on_established(300 * MS, &w, None);
    assert_eq!((c.min_rtt.min_rtt, c.min_rtt.stamp, c.pacing_rate_now()), (None, 300 * MS, None));
}

/// BBR with segments of 1000 bytes sent at 0, 1, .., 9 ms (the SACK-RTT tests).
fn ten_segments_sent_a_ms_apart() -> (BbrCc, CcWindow) {
    let mut b = BbrCc::new(BbrParams::DEFAULT, 1);
    let w = CcWindow { cwnd: 40_000, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX };
    for k in 0..10u64 {
        b.on_send(k * MS, k * 1000, 1000, false);
    }
    (b, w)
}

/// A duplicate ACK at `now` whose SACK blocks were given to `on_sacked`, outside recovery.
fn duplicate_ack_that_sacks(b: &mut BbrCc, w: &mut CcWindow, now: Nanos) {
    let log = crate::sendlog::SendLog::default();
    let v = SenderView { in_recovery: false, ..view(&log, now) };
    let dup = AckSample { rtt: None, fine_rtt: None, bytes_acked: 0, ..cum_ack(now, 0, 0) };
    b.on_sack_ack(w, &dup, &v);
}

#[test]
fn a_sack_only_ack_gives_min_rtt_the_rtt_of_the_last_segment_it_newly_sacked() {
    // Linux `tcp_clean_rtx_queue`: with newly SACKed data, ca_rtt_us = now − last_sackt (the
    // last never-retransmitted segment the SACK tagged), which `tcp_ack_update_rtt` puts in
    // rs->rtt_us for `bbr_update_min_rtt`. Segments 0..10 leave at k ms; segment 0 is
    // retransmitted at 20 ms; at 50 ms a duplicate ACK SACKs segments 0..=6 (segment 0 was
    // retransmitted, so gives no RTT): the RTT is 50 − 6 = 44 ms.
    let (mut b, mut w) = ten_segments_sent_a_ms_apart();
    b.on_send(20 * MS, 0, 1000, true);
    assert!(b.min_rtt.min_rtt.is_none());
    b.on_sacked(50 * MS, 0, 7000);
    duplicate_ack_that_sacks(&mut b, &mut w, 50 * MS);
    assert_eq!(b.min_rtt.min_rtt, Some(44 * MS));
    assert_eq!(b.tcp_min_rtt(), Some(44 * MS));
}

#[test]
fn a_sack_of_data_sent_again_in_another_cut_gives_no_rtt() {
    // Karn as Linux does it: every retransmitted skb carries TCPCB_EVER_RETRANS and
    // `tcp_sacktag_one` takes no `last_sackt` from it. Segments of 1000 bytes leave at k ms;
    // [1500, 2500) is sent again at 40 ms, cut across two of them; at 45 ms a duplicate ACK
    // SACKs [1000, 2500). Every byte it SACKs was sent twice: no RTT. (Marking only a record
    // that starts where the resend starts left both unmarked and gave 45 − 40 = 5 ms, the
    // resend's, for a path whose RTT is 40 ms or more.)
    let (mut b, mut w) = ten_segments_sent_a_ms_apart();
    b.on_send(40 * MS, 1500, 1000, true);
    b.on_sacked(45 * MS, 1000, 2500);
    duplicate_ack_that_sacks(&mut b, &mut w, 45 * MS);
    assert_eq!(b.min_rtt.min_rtt, None);
    // A segment past the resend, SACKed at 50 ms, gives its own RTT: 50 − 3 = 47 ms.
    b.on_sacked(50 * MS, 3000, 4000);
    duplicate_ack_that_sacks(&mut b, &mut w, 50 * MS);
    assert_eq!(b.min_rtt.min_rtt, Some(47 * MS));
}

#[test]
fn rate_samples_are_judged_against_the_connections_min_rtt_not_bbrs_filter() {
    // Linux `tcp_rate_gen` discards a sample whose interval is under `tcp_min_rtt(tp)`, the
    // connection's 300-s minimum (`tcp_update_rtt_min`, updated by the same ACK first), not
    // BBR's 10-s `min_rtt`, which an expired filter replaces by whatever sample comes next
    // (`bbr_update_min_rtt`), a queue-inflated one included. Path minimum 200 ms; BBR's filter
    // holds 350 ms; two segments sent at 1000 ms and ACKed at 1250 ms give a 250 ms sample of
    // 8000 B/s, which counts (judged against 350 ms it was dropped, and in PROBE_RTT on a path
    // whose ACKs carried no RTT no round ever ended).
    let mut b = BbrCc::new(BbrParams::DEFAULT, 1);
    let mut w = CcWindow { cwnd: 40_000, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX };
    let log = crate::sendlog::SendLog::default();
    b.on_send(0, 0, 1000, false);
    let v = SenderView { in_recovery: false, ..view(&log, 200 * MS) };
    b.on_ack(&mut w, &AckSample { fine_rtt: Some(200 * MS), ..cum_ack(200 * MS, 1000, 1000) }, &v, None);
    assert_eq!((b.tcp_min_rtt(), b.max_bw(), b.rtt_cnt), (Some(200 * MS), 5000, 1));
    b.min_rtt.min_rtt = Some(350 * MS);
    b.on_send(1000 * MS, 1000, 1000, false);
    b.on_send(1000 * MS, 2000, 1000, false);
    let v = SenderView { now: 1250 * MS, ..v };
    b.on_ack(&mut w, &AckSample { fine_rtt: Some(250 * MS), ..cum_ack(1250 * MS, 3000, 2000) }, &v, None);
    assert_eq!((b.max_bw(), b.rtt_cnt), (8000, 2));
    assert_eq!((b.tcp_min_rtt(), b.min_rtt.min_rtt), (Some(200 * MS), Some(250 * MS)));
}
