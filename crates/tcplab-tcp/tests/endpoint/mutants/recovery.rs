//! Survivor tests of the recovery modules, the scoreboard, Lite's header prediction and the
//! scalable window, on bare state.

use super::*;

// ------------------------------------------------------------------ recovery modules

struct Rig {
    w: CcWindow,
    cc: RenoCc,
}

impl Rig {
    fn new(cwnd: u32) -> Rig {
        Rig { w: CcWindow { cwnd, ssthresh: 65535, mss: 1000, max_cwnd: 65535 }, cc: RenoCc::default() }
    }
    fn ctx<'a>(&'a mut self, una: u64, max: u64, dupacks: u32, sack: &'a [(u64, u64)]) -> RecoveryCtx<'a> {
        RecoveryCtx {
            now: 0,
            w: &mut self.w,
            cc: &mut self.cc,
            snd_una: una,
            snd_nxt: max,
            snd_max: max,
            snd_wnd: 65535,
            dupacks,
            dupack_threshold: 3,
            sack,
        }
    }
}

#[test]
fn reno_recovery_enters_on_the_third_dupack_inflates_and_deflates() {
    let mut rig = Rig::new(8000);
    let mut r = RenoRecovery::default();
    assert_eq!(r.name(), "reno");
    for d in 1..=2 {
        assert_eq!(r.on_dupack(&mut rig.ctx(1, 8001, d, &[])), RecoveryOutcome::default());
    }
    assert_eq!(rig.w.cwnd, 8000);
    let out = r.on_dupack(&mut rig.ctx(1, 8001, 3, &[]));
    assert_eq!(
        out,
        RecoveryOutcome { retransmit: Some(1), restart_timer: true, fast_retransmit: true, entered: true, ..Default::default() }
    );
    assert!(r.in_recovery());
    assert_eq!((rig.w.ssthresh, rig.w.cwnd), (4000, 7000));
    assert_eq!(r.on_dupack(&mut rig.ctx(1, 8001, 4, &[])), RecoveryOutcome::default());
    assert_eq!(rig.w.cwnd, 8000);
    let out = r.on_ack(&mut rig.ctx(1, 8001, 4, &[]), 8001);
    assert_eq!(out, RecoveryOutcome { exited: true, allow_growth: true, ..Default::default() });
    assert_eq!(rig.w.cwnd, 4000);
    assert!(!r.in_recovery());
    // Outside recovery: dupacks above the threshold do nothing; ACKs allow growth.
    assert_eq!(r.on_dupack(&mut rig.ctx(1, 8001, 5, &[])), RecoveryOutcome::default());
    assert_eq!(rig.w.cwnd, 4000);
    assert_eq!(r.on_ack(&mut rig.ctx(1, 8001, 0, &[]), 2001), RecoveryOutcome { allow_growth: true, ..Default::default() });
    // A timeout ends the episode.
    r.on_dupack(&mut rig.ctx(1, 8001, 3, &[]));
    r.on_timeout(&mut rig.ctx(1, 8001, 0, &[]));
    assert!(!r.in_recovery());
}

#[test]
fn reno_deflation_tests_of_bsd_and_its_fix() {
    // Exactly three dupacks: BSD's `>` keeps cwnd inflated, the `>=` fix and `Always` deflate.
    for (test, dupacks, expect) in [
        (DeflateTest::DupacksAbove, 3, 2000 + 3000),
        (DeflateTest::DupacksAbove, 4, 2000),
        (DeflateTest::DupacksAtLeast, 3, 2000),
        (DeflateTest::DupacksAtLeast, 2, 2000 + 3000),
        (DeflateTest::Always, 3, 2000),
    ] {
        let mut rig = Rig::new(4000);
        let mut r = RenoRecovery { in_recovery: false, deflate_test: test };
        r.on_dupack(&mut rig.ctx(1, 4001, 3, &[]));
        assert_eq!((rig.w.ssthresh, rig.w.cwnd), (2000, 5000));
        r.on_ack(&mut rig.ctx(1, 4001, dupacks, &[]), 4001);
        assert_eq!(rig.w.cwnd, expect, "{test:?} with {dupacks} dupacks");
    }
    // Deflation never raises cwnd.
    let mut rig = Rig::new(4000);
    let mut r = RenoRecovery::default();
    r.on_dupack(&mut rig.ctx(1, 4001, 3, &[]));
    rig.w.cwnd = 1500;
    r.on_ack(&mut rig.ctx(1, 4001, 3, &[]), 4001);
    assert_eq!(rig.w.cwnd, 1500);
    let lite = tcplab_tcp::recovery::lite(&tcplab_tcp::lite::LiteFixes { dupack_ge: true, ..Default::default() });
    assert_eq!(lite.name(), "reno");
}

#[test]
fn tahoe_goes_back_to_snd_una_with_one_segment() {
    let mut rig = Rig::new(8000);
    let mut t = TahoeRecovery;
    assert_eq!(t.name(), "tahoe");
    assert_eq!(t.on_dupack(&mut rig.ctx(1001, 9001, 2, &[])), RecoveryOutcome::default());
    assert_eq!(t.on_dupack(&mut rig.ctx(1001, 9001, 4, &[])), RecoveryOutcome::default());
    let out = t.on_dupack(&mut rig.ctx(1001, 9001, 3, &[]));
    assert_eq!(out, RecoveryOutcome { set_snd_nxt: Some(1001), restart_timer: true, fast_retransmit: true, ..Default::default() });
    assert_eq!((rig.w.ssthresh, rig.w.cwnd), (4000, 1000));
    assert!(!t.in_recovery());
    assert_eq!(t.on_ack(&mut rig.ctx(1001, 9001, 0, &[]), 2001), RecoveryOutcome { allow_growth: true, ..Default::default() });
}

#[test]
fn newreno_partial_and_full_acks() {
    let mut rig = Rig::new(10_000);
    rig.cc.halve_flight = true;
    let mut r = NewRenoRecovery::default();
    assert_eq!(r.name(), "newreno");
    assert_eq!(r.on_ack(&mut rig.ctx(1, 10_001, 0, &[]), 1001), RecoveryOutcome { allow_growth: true, ..Default::default() });
    assert_eq!(r.on_dupack(&mut rig.ctx(1001, 10_001, 2, &[])), RecoveryOutcome::default());
    let out = r.on_dupack(&mut rig.ctx(1001, 10_001, 3, &[]));
    assert!(out.entered && out.fast_retransmit && out.restart_timer);
    assert_eq!(out.retransmit, Some(1001));
    // FlightSize 9000: ssthresh 4500, cwnd 7500.
    assert_eq!((rig.w.ssthresh, rig.w.cwnd, r.recover), (4500, 7500, Some(10_001)));
    r.on_dupack(&mut rig.ctx(1001, 10_001, 4, &[]));
    assert_eq!(rig.w.cwnd, 8500);
    // Partial ACK of 2000 bytes: deflate by 2000, add back one MSS; restart the timer once.
    let out = r.on_ack(&mut rig.ctx(1001, 10_001, 0, &[]), 3001);
    assert_eq!(out, RecoveryOutcome { retransmit: Some(3001), restart_timer: true, ..Default::default() });
    assert_eq!(rig.w.cwnd, 7500);
    // A partial ACK of less than one MSS: no MSS back; the timer is not restarted again.
    let out = r.on_ack(&mut rig.ctx(3001, 10_001, 0, &[]), 3501);
    assert_eq!(out, RecoveryOutcome { retransmit: Some(3501), ..Default::default() });
    assert_eq!(rig.w.cwnd, 7000);
    // Dupacks after a partial ACK still inflate (the counter restarted at 1).
    r.on_dupack(&mut rig.ctx(3501, 10_001, 1, &[]));
    assert_eq!(rig.w.cwnd, 8000);
    // cwnd never falls below one MSS.
    rig.w.cwnd = 1500;
    r.on_ack(&mut rig.ctx(3501, 10_001, 0, &[]), 6501);
    assert_eq!(rig.w.cwnd, 1000);
    // The full ACK (exactly recover): cwnd = min(ssthresh, flight + MSS), no growth.
    let out = r.on_ack(&mut rig.ctx(6501, 12_001, 0, &[]), 10_001);
    assert_eq!(out, RecoveryOutcome { exited: true, ..Default::default() });
    assert_eq!(rig.w.cwnd, 3000);
    assert!(!r.in_recovery());
    // The recover guard: three dupacks at snd_una == recover start no new episode ...
    assert_eq!(r.on_dupack(&mut rig.ctx(10_001, 14_001, 3, &[])), RecoveryOutcome::default());
    // ... one byte above it does.
    assert!(r.on_dupack(&mut rig.ctx(10_002, 14_001, 3, &[])).entered);
    // A timeout moves recover to snd_max and leaves recovery.
    r.on_timeout(&mut rig.ctx(10_002, 20_001, 0, &[]));
    assert!(!r.in_recovery());
    assert_eq!(r.recover, Some(20_001));
}

#[test]
fn sack1_pipe_accounting() {
    let mut rig = Rig::new(8000);
    let mut s = Sack1Recovery::default();
    assert_eq!(s.name(), "sack1");
    assert_eq!(s.pipe_bytes(), None);
    let sack1: &[(u64, u64)] = &[(2001, 3001)];
    assert_eq!(s.on_dupack(&mut rig.ctx(1, 8001, 1, sack1)), RecoveryOutcome::default());
    assert!(!s.governs_sending());
    let sack3: &[(u64, u64)] = &[(4001, 5001), (2001, 3001)];
    let out = s.on_dupack(&mut rig.ctx(1, 8001, 3, sack3));
    assert_eq!(
        out,
        RecoveryOutcome { retransmit: Some(1), restart_timer: true, fast_retransmit: true, entered: true, ..Default::default() }
    );
    // 8 segments outstanding − 3 = 5; cwnd = ssthresh = 4000, no inflation.
    assert_eq!((s.pipe, rig.w.ssthresh, rig.w.cwnd), (5, 4000, 4000));
    assert!(s.in_recovery() && s.governs_sending());
    assert_eq!(s.pipe_bytes(), Some(5000));
    // The fast retransmission is not counted in pipe, later ones are.
    s.on_transmit(1, 1000, true);
    assert_eq!(s.pipe, 5);
    let g = SendGate { snd_una: 1, snd_nxt: 8001, snd_max: 8001, cwnd: 4000, mss: 1000, snd_wnd: 65535, send_limit: 100_000 };
    assert_eq!(s.next_send(&g), SackSend::Blocked, "pipe 5 ≥ cwnd 4 segments");
    s.on_dupack(&mut rig.ctx(1, 8001, 4, sack3));
    assert_eq!(s.pipe, 4);
    assert_eq!(s.next_send(&g), SackSend::Blocked, "pipe 4 ≥ 4");
    s.on_dupack(&mut rig.ctx(1, 8001, 5, sack3));
    assert_eq!(s.pipe, 3);
    // First hole not yet retransmitted: [1001, 2001) (1 was the fast retransmission).
    assert_eq!(s.next_send(&g), SackSend::Retransmit { seq: 1001, len: 1000 });
    s.on_transmit(1001, 1000, true);
    assert_eq!(s.pipe, 4);
    s.on_dupack(&mut rig.ctx(1, 8001, 6, sack3));
    assert_eq!(s.next_send(&g), SackSend::Retransmit { seq: 3001, len: 1000 });
    s.on_transmit(3001, 1000, true);
    s.on_dupack(&mut rig.ctx(1, 8001, 7, sack3));
    // No hole left below the highest SACKed byte: new data.
    assert_eq!(s.next_send(&g), SackSend::NewData);
    assert_eq!(s.next_send(&SendGate { send_limit: 8001, ..g }), SackSend::Blocked, "nothing more to send");
    assert_eq!(s.next_send(&SendGate { snd_wnd: 8000, ..g }), SackSend::Blocked, "peer window full");
    // A partial ACK takes two off pipe.
    let before = s.pipe;
    assert_eq!(s.on_ack(&mut rig.ctx(1, 8001, 0, sack3), 1001), RecoveryOutcome::default());
    assert_eq!(s.pipe, before - 2);
    // The ACK covering recover ends recovery without growth.
    assert_eq!(s.on_ack(&mut rig.ctx(1001, 8001, 0, &[]), 8001), RecoveryOutcome { exited: true, ..Default::default() });
    assert!(!s.in_recovery());
    assert_eq!(s.pipe_bytes(), None);
    assert!(s.sb.is_empty());
    // A normal exit forgets recover (ns-2 `recover_ = 0`): three duplicate ACKs at exactly the
    // old recover enter recovery again (issue 31 item 1).
    assert!(s.on_dupack(&mut rig.ctx(8001, 9001, 3, &[(8501, 9001)])).entered);
    // A timeout leaves recovery and keeps recover = snd_max as the guard.
    s.on_timeout(&mut rig.ctx(8001, 12_001, 0, &[]));
    assert!(s.sb.is_empty() && !s.in_recovery());
    assert_eq!(s.on_dupack(&mut rig.ctx(12_001, 13_001, 3, &[])), RecoveryOutcome::default(), "recover = 12001 after the timeout");
    assert!(s.on_dupack(&mut rig.ctx(12_002, 13_001, 3, &[])).entered);
}

#[test]
fn rfc6675_is_lost_pipe_and_next_seg() {
    use tcplab_tcp::recovery::Rfc6675Recovery;
    let mut rig = Rig::new(10_000);
    let mut r = Rfc6675Recovery::default();
    assert_eq!(r.name(), "sack-rfc6675");
    // Ten segments out (1..10001); the receiver holds 3001–4001, 5001–6001, 7001–8001.
    let three: &[(u64, u64)] = &[(7001, 8001), (5001, 6001), (3001, 4001)];
    assert_eq!(r.on_dupack(&mut rig.ctx(1, 10_001, 2, three)), RecoveryOutcome::default());
    let out = r.on_dupack(&mut rig.ctx(1, 10_001, 3, three));
    assert_eq!(out, RecoveryOutcome { retransmit: Some(1), restart_timer: true, fast_retransmit: true, entered: true, ..Default::default() });
    assert_eq!((rig.w.ssthresh, rig.w.cwnd), (5000, 5000));
    assert!(r.in_recovery() && r.governs_sending());
    assert_eq!(r.on_dupack(&mut rig.ctx(1, 10_001, 4, three)), RecoveryOutcome::default(), "already in recovery");
    let g = SendGate { snd_una: 1, snd_nxt: 10_001, snd_max: 10_001, cwnd: 5000, mss: 1000, snd_wnd: 65535, send_limit: 100_000 };
    // IsLost: 1, 1001, 2001 have three SACKed blocks above; 4001 two blocks and 2000 bytes
    // (not more than 2 MSS): not lost. Pipe = 4001, 6001, 8001, 9001 = 4000.
    assert_eq!(r.pipe(&g), 4000);
    r.on_transmit(1, 1000, true); // the fast retransmission: HighRxt = 1001
    assert_eq!(r.pipe(&g), 5000, "a retransmitted lost segment counts once");
    assert_eq!(r.next_send(&g), SackSend::Blocked, "cwnd 5000 < pipe 5000 + 1 MSS");
    assert_eq!(r.pipe_bytes(), Some(5000));
    // 8001–9001 SACKed too: it merges with 7001–8001; now 4001 has 3000 SACKed bytes above: lost.
    let more: &[(u64, u64)] = &[(8001, 9001), (5001, 6001), (3001, 4001)];
    r.on_dupack(&mut rig.ctx(1, 10_001, 5, more));
    assert_eq!(r.pipe(&g), 3000, "1 (retransmitted), 6001, 9001");
    assert_eq!(r.next_send(&g), SackSend::Retransmit { seq: 1001, len: 1000 }, "rule 1: the first lost byte above HighRxt");
    r.on_transmit(1001, 1000, true);
    assert_eq!(r.next_send(&g), SackSend::Retransmit { seq: 2001, len: 1000 });
    r.on_transmit(2001, 1000, true);
    assert_eq!(r.pipe_bytes(), Some(4000 + 1000), "the pipe of the decision plus what it sent");
    assert_eq!(r.pipe(&g), 5000);
    assert_eq!(r.next_send(&g), SackSend::Blocked);
    // A partial ACK to 3001: 4001 is still lost (3000 bytes SACKed above it).
    assert_eq!(r.on_ack(&mut rig.ctx(1, 10_001, 0, more), 3001), RecoveryOutcome::default());
    let g = SendGate { snd_una: 3001, ..g };
    assert_eq!(r.pipe(&g), 2000, "6001 and 9001");
    assert_eq!(r.next_send(&g), SackSend::Retransmit { seq: 4001, len: 1000 });
    r.on_transmit(4001, 1000, true);
    // 6001 is not lost (2000 bytes above it): new data first (rule 2) ...
    assert_eq!(r.next_send(&g), SackSend::NewData);
    // ... and with nothing new to send, rule 3: the first un-SACKed byte above HighRxt.
    assert_eq!(r.next_send(&SendGate { send_limit: 10_001, ..g }), SackSend::Retransmit { seq: 6001, len: 1000 });
    // Rule 2 also needs room in the peer's window: snd_una + snd_wnd = 10 001 = snd_nxt is full.
    assert_eq!(r.next_send(&SendGate { snd_wnd: 7000, ..g }), SackSend::Retransmit { seq: 6001, len: 1000 });
    assert_eq!(r.next_send(&SendGate { snd_wnd: 7001, ..g }), SackSend::NewData);
    // The ACK that covers the recovery point ends recovery without growth.
    assert_eq!(r.on_ack(&mut rig.ctx(3001, 10_001, 0, &[]), 10_001), RecoveryOutcome { exited: true, ..Default::default() });
    assert!(!r.in_recovery() && r.sb.is_empty());
    assert_eq!(r.pipe_bytes(), None);
    assert_eq!(r.on_ack(&mut rig.ctx(10_001, 12_001, 0, &[]), 11_001), RecoveryOutcome { allow_growth: true, ..Default::default() });
    // RecoveryPoint guard: at snd_una == RecoveryPoint no new episode; one byte above, yes.
    assert_eq!(r.on_dupack(&mut rig.ctx(10_001, 12_001, 3, &[(11_001, 12_001)])), RecoveryOutcome::default());
    assert!(r.on_dupack(&mut rig.ctx(10_002, 12_001, 3, &[(11_001, 12_001)])).entered);
    // A timeout ends recovery, forgets the scoreboard and moves the recovery point.
    r.on_timeout(&mut rig.ctx(10_002, 20_001, 0, &[]));
    assert!(!r.in_recovery() && r.sb.is_empty());
    assert_eq!(r.on_dupack(&mut rig.ctx(20_001, 21_001, 3, &[(20_501, 21_001)])), RecoveryOutcome::default());
}

#[test]
fn congestion_controls_are_named() {
    for (name, cc) in [("reno", "reno"), ("newreno", "reno"), ("scalable-ecn", "scalable"), ("vegas", "vegas")] {
        let c = EndpointConfig::for_variant(name).unwrap();
        assert_eq!(tcplab_tcp::cc::build(c.variant.cc, 0).name(), cc, "{name}");
    }
}

// ------------------------------------------------------------------ scoreboard

#[test]
fn scoreboard_ranges() {
    let mut sb = Scoreboard::default();
    assert!(sb.is_empty());
    assert_eq!(sb.high_sacked(), 0);
    assert!(sb.update(1, &[(3001, 4001)]));
    assert!(!sb.update(1, &[(3001, 4001)]), "nothing new");
    assert!(!sb.update(1, &[(3001, 3501)]), "inside a known block");
    assert!(sb.update(1, &[(5001, 6001), (3001, 4001)]));
    assert!(sb.update(1, &[(4001, 5001)]), "fills the gap between two blocks: they merge");
    assert_eq!(sb.blocks_above(0), 1);
    assert!(sb.update(1, &[(7001, 8001)]));
    assert!(!sb.update(1, &[(0, 1)]), "below snd_una: ignored");
    assert!(!sb.update(1, &[(10, 10)]), "empty: ignored");
    assert_eq!(sb.high_sacked(), 8001);
    assert!(!sb.is_sacked(3000) && sb.is_sacked(3001) && sb.is_sacked(6000) && !sb.is_sacked(6001));
    assert_eq!(sb.sacked_above(1), 4000);
    assert_eq!(sb.sacked_above(4001), 3000);
    assert_eq!(sb.sacked_above(6001), 1000);
    assert_eq!(sb.sacked_above(8001), 0);
    assert_eq!((sb.blocks_above(1), sb.blocks_above(3001), sb.blocks_above(3000), sb.blocks_above(7001)), (2, 1, 2, 0));
    assert_eq!(sb.holes(1).collect::<Vec<_>>(), vec![(1, 3001), (6001, 7001)]);
    assert_eq!(sb.holes(3001).collect::<Vec<_>>(), vec![(6001, 7001)]);
    assert_eq!(sb.next_unretransmitted_hole(1), Some((1, 3001)));
    sb.mark_retransmitted(1, 1001);
    assert!(sb.is_retransmitted(1) && sb.is_retransmitted(1000) && !sb.is_retransmitted(1001));
    assert_eq!(sb.next_unretransmitted_hole(1), Some((1001, 3001)));
    sb.mark_retransmitted(2001, 2501);
    assert_eq!(sb.next_unretransmitted_hole(1), Some((1001, 2001)), "up to the next retransmitted range");
    sb.mark_retransmitted(1001, 2001);
    assert_eq!(sb.next_unretransmitted_hole(1), Some((2501, 3001)));
    sb.mark_retransmitted(2501, 3001);
    assert_eq!(sb.next_unretransmitted_hole(1), Some((6001, 7001)));
    // The cumulative ACK trims both lists; a block straddling it is cut at snd_una.
    assert!(!sb.update(3501, &[]));
    assert_eq!(sb.sacked_above(0), 2500 + 1000);
    assert!(!sb.is_retransmitted(2600));
    sb.clear_retransmitted();
    assert!(!sb.is_retransmitted(1));
    assert_eq!(sb.next_unretransmitted_hole(3501), Some((6001, 7001)));
    sb.clear();
    assert!(sb.is_empty());
    assert_eq!(sb.next_unretransmitted_hole(0), None);
}

// ------------------------------------------------------------------ Lite header prediction

#[test]
fn header_prediction_needs_every_condition() {
    use tcplab_tcp::lite::{predicts_pure_ack, PredictionInput};
    let base = PredictionInput {
        established: true,
        only_ack_flag: true,
        in_sequence: true,
        seg_len: 0,
        seg_wnd: 8000,
        snd_wnd: 8000,
        snd_una: 1001,
        snd_nxt: 5001,
        snd_max: 5001,
        ack: 2001,
        cwnd: 8000,
        dupacks: 2,
        dupack_threshold: 3,
    };
    assert!(predicts_pure_ack(&base, false) && predicts_pure_ack(&base, true));
    let misses: [(&str, PredictionInput); 12] = [
        ("not established", PredictionInput { established: false, ..base }),
        ("other flags", PredictionInput { only_ack_flag: false, ..base }),
        ("out of sequence", PredictionInput { in_sequence: false, ..base }),
        ("carries data", PredictionInput { seg_len: 1, ..base }),
        ("zero window", PredictionInput { seg_wnd: 0, snd_wnd: 0, ..base }),
        ("window changed", PredictionInput { seg_wnd: 9000, ..base }),
        ("snd_nxt behind snd_max", PredictionInput { snd_nxt: 4001, ..base }),
        ("ack == snd_una", PredictionInput { ack: 1001, ..base }),
        ("ack below snd_una", PredictionInput { ack: 1000, ..base }),
        ("ack beyond snd_max", PredictionInput { ack: 5002, ..base }),
        ("cwnd below snd_wnd", PredictionInput { cwnd: 7999, ..base }),
        ("cwnd below snd_wnd (fixed too)", PredictionInput { cwnd: 1000, ..base }),
    ];
    for (why, p) in misses {
        assert!(!predicts_pure_ack(&p, false), "{why}");
        assert!(!predicts_pure_ack(&p, true), "{why}");
    }
    // Edges that still predict: ack == snd_max, cwnd == snd_wnd.
    assert!(predicts_pure_ack(&PredictionInput { ack: 5001, ..base }, false));
    assert!(predicts_pure_ack(&PredictionInput { cwnd: 8000, ..base }, false));
    // Seed 001 §3.1's fix: not once the duplicate ACKs reached the threshold (Lite.0 still does).
    let at_threshold = PredictionInput { dupacks: 3, ..base };
    assert!(predicts_pure_ack(&at_threshold, false));
    assert!(!predicts_pure_ack(&at_threshold, true));
}

// ------------------------------------------------------------------ scalable TCP's real window

fn scalable_ack(now: tcplab_tcp::Nanos) -> tcplab_tcp::cc::AckSample {
    tcplab_tcp::cc::AckSample { now, bytes_acked: 1000, rtt: None, fine_rtt: Some(100 * MS), in_slow_start: false, snd_una: 0, snd_nxt: 0, flight: 0, ece: false }
}

#[test]
fn scalable_adopts_a_window_set_by_recovery_at_once() {
    use tcplab_tcp::cc::{CongestionControl, ScalableCc, SenderView};
    let log = SendLog::default();
    let view = SenderView { now: 0, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 1 << 30, mss: 1000, dupacks: 0, fine_srtt: None, in_recovery: false, send_log: &log };
    let mut cc = ScalableCc::new(tcplab_tcp::config::ScalableParams { a: 0.125, base_b: 0.005, ssgrace: 0, b_cap: 0.1 }, 1);
    let mut w = CcWindow { cwnd: 1000, ssthresh: 65535, mss: 1000, max_cwnd: 1 << 30 };
    for _ in 0..40 {
        cc.on_ack(&mut w, &scalable_ack(0), &view, None);
    }
    assert!((cc.cwnd - 6.0).abs() < 1e-9, "{}", cc.cwnd);
    assert_eq!(w.cwnd, 6000);
    // NewReno's fast retransmit halved the byte window: the real window follows before any ACK.
    w.cwnd = 3000;
    cc.on_recovery(&mut w, true);
    assert!((cc.cwnd - 3.0).abs() < 1e-12, "{}", cc.cwnd);
    assert_eq!(cc.real_cwnd(), Some(3.0));
    assert_eq!(w.cwnd, 3000);
}

#[test]
fn scalable_rereads_its_window_in_segments_of_a_new_mss() {
    use tcplab_tcp::cc::{CongestionControl, ScalableCc, SenderView};
    let log = SendLog::default();
    let view = SenderView { now: 0, snd_una: 0, snd_nxt: 0, snd_max: 0, snd_wnd: 1 << 30, mss: 1000, dupacks: 0, fine_srtt: None, in_recovery: false, send_log: &log };
    let mut cc = ScalableCc::new(tcplab_tcp::config::ScalableParams { a: 0.125, base_b: 0.005, ssgrace: 0, b_cap: 0.1 }, 1);
    let mut w = CcWindow { cwnd: 2000, ssthresh: 65535, mss: 1000, max_cwnd: 1 << 30 };
    cc.on_ack(&mut w, &scalable_ack(0), &view, None);
    assert!((cc.cwnd - 2.125).abs() < 1e-12);
    assert_eq!(w.cwnd, 3000);
    // The same 3000 bytes in 500-byte segments: six of them.
    w.mss = 500;
    cc.on_timeout(&mut w);
    assert!((cc.cwnd - 6.0).abs() < 1e-12, "{}", cc.cwnd);
    cc.on_ack(&mut w, &scalable_ack(0), &view, None);
    assert!((cc.cwnd - 6.125).abs() < 1e-12);
    assert_eq!(w.cwnd, 3500, "⌈6.125⌉ segments of 500 bytes");
}

#[test]
fn splitmix64_gives_the_reference_sequence() {
    // Vigna's splitmix64.c from state 0 (the pacing factor's generator, cc/scalable.rs).
    let mut g = tcplab_tcp::cc::scalable::SplitMix64::new(0);
    assert_eq!([g.next_u64(), g.next_u64(), g.next_u64()], [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F]);
}
