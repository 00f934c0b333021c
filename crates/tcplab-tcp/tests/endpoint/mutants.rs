//! Tests written against the survivors of a mutation run (issue 17; README "Mutation testing"):
//! each checks a documented behaviour of one seam with exact values — the SACK receiver, the
//! segment header arithmetic, the send log, ECN, the variant registry and its parameter checks,
//! the retransmission timers, the recovery modules and the scoreboard — so that a planted
//! off-by-one, a flipped comparison or a dropped statement in them fails a test.

use tcplab_tcp::cc::{CcWindow, RenoCc};
use tcplab_tcp::config::{AckPolicy, CcKind, EndpointConfig, RecoveryKind, TimerModel};
use tcplab_tcp::ecn::EcnState;
use tcplab_tcp::recovery::scoreboard::Scoreboard;
use tcplab_tcp::recovery::{
    DeflateTest, LossRecovery, NewRenoRecovery, RecoveryCtx, RecoveryOutcome, RenoRecovery, Sack1Recovery, SackSend,
    SendGate, TahoeRecovery,
};
use tcplab_tcp::rto::{BsdRto, RetransmitTimer, SLOW_TICK};
use tcplab_tcp::sack::SackReceiver;
use tcplab_tcp::sendlog::SendLog;
use tcplab_tcp::testing::SendLogHooks;
use tcplab_tcp::{Flags, SackBlocks, Segment, MS, SEC};

// ------------------------------------------------------------------ SACK receiver (RFC 2018 §4)

fn wire(x: u64) -> u32 {
    x as u32
}

#[test]
fn sack_receiver_has_blocks_only_when_it_has_something_to_report() {
    let mut r = SackReceiver::default();
    assert!(!r.has_blocks());
    assert!(r.blocks(4, wire).is_empty());
    // An empty range is no duplicate (RFC 2883 reports data, not a zero-length segment).
    r.on_duplicate(3000, 3000);
    assert!(!r.has_blocks());
    r.on_duplicate(3000, 4000);
    assert!(r.has_blocks());
    assert_eq!(r.blocks(4, wire).as_slice(), &[(3000, 4000)]);
    // The D-SACK block is sent once.
    assert!(!r.has_blocks());
    r.on_out_of_order((5000, 6000));
    assert!(r.has_blocks());
}

#[test]
fn sack_receiver_forgets_blocks_the_cumulative_ack_covers() {
    let mut r = SackReceiver::default();
    r.on_out_of_order((2000, 3000));
    r.on_out_of_order((5000, 6000));
    // rcv_nxt reaches 3000 exactly: the block ending there is covered, the other stays.
    r.on_advance(3000);
    assert_eq!(r.blocks(4, wire).as_slice(), &[(5000, 6000)]);
    // rcv_nxt inside no block but below the other: it stays.
    r.on_advance(4000);
    assert_eq!(r.blocks(4, wire).as_slice(), &[(5000, 6000)]);
    r.on_advance(6000);
    assert!(!r.has_blocks());
}

#[test]
fn sack_receiver_caps_blocks_after_the_dsack_block() {
    let mut r = SackReceiver::default();
    for k in [2u64, 4, 6, 8] {
        r.on_out_of_order((k * 1000, k * 1000 + 1000));
    }
    r.on_duplicate(0, 1000);
    // Three blocks beside timestamps: the D-SACK block counts as one of them.
    assert_eq!(r.blocks(3, wire).as_slice(), &[(0, 1000), (8000, 9000), (6000, 7000)]);
    assert_eq!(r.blocks(3, wire).as_slice(), &[(8000, 9000), (6000, 7000), (4000, 5000)]);
    // A merged block replaces the blocks it absorbed and goes first.
    r.on_out_of_order((4000, 7000));
    assert_eq!(r.blocks(4, wire).as_slice(), &[(4000, 7000), (8000, 9000), (2000, 3000)]);
}

// ------------------------------------------------------------------ segment header arithmetic

#[test]
fn flags_bits_and_predicates() {
    let all = [Flags::FIN, Flags::SYN, Flags::RST, Flags::PSH, Flags::ACK, Flags::ECE, Flags::CWR];
    for (i, f) in all.iter().enumerate() {
        assert!(f.contains(*f));
        for (j, g) in all.iter().enumerate() {
            assert_eq!(f.contains(*g), i == j, "{f:?} contains {g:?}");
        }
        assert_eq!(f.syn(), *f == Flags::SYN);
        assert_eq!(f.ack(), *f == Flags::ACK);
        assert_eq!(f.fin(), *f == Flags::FIN);
        assert_eq!(f.rst(), *f == Flags::RST);
    }
    let synack = Flags::SYN | Flags::ACK;
    assert_eq!(synack, Flags(0x12));
    assert!(synack.syn() && synack.ack() && !synack.fin() && !synack.rst());
    assert!(synack.contains(Flags::SYN) && synack.contains(Flags::ACK) && !synack.contains(Flags::ECE | Flags::ACK));
    assert!(synack.contains(Flags::NONE));
    let mut f = Flags::ACK;
    f |= Flags::FIN;
    assert_eq!(f, Flags(0x11));
    assert!(f.fin() && f.ack());
    let rst = Flags::RST | Flags::ACK;
    assert!(rst.rst() && !rst.syn());
}

#[test]
fn sack_blocks_hold_four_and_cost_four_plus_eight_each() {
    let mut b = SackBlocks::default();
    assert!(b.is_empty());
    assert_eq!(b.option_bytes(), 0);
    assert!(b.as_slice().is_empty());
    for k in 0..6u32 {
        b.push(k * 10, k * 10 + 5);
        assert!(!b.is_empty());
    }
    assert_eq!(b.n, 4, "a fifth block does not fit the 40 option bytes");
    assert_eq!(b.as_slice(), &[(0, 5), (10, 15), (20, 25), (30, 35)]);
    assert_eq!(b.option_bytes(), 36);
    let mut one = SackBlocks::default();
    one.push(7, 9);
    assert_eq!((one.as_slice(), one.option_bytes()), (&[(7u32, 9u32)][..], 12));
}

#[test]
fn header_bytes_add_each_option() {
    let base = Segment::default();
    assert_eq!(base.header_bytes(), 40);
    assert_eq!(Segment { mss: Some(1460), ..base }.header_bytes(), 44);
    assert_eq!(Segment { wscale: Some(2), ..base }.header_bytes(), 44);
    assert_eq!(Segment { ts: Some((1, 1)), ..base }.header_bytes(), 52);
    assert_eq!(Segment { sack_ok: true, ..base }.header_bytes(), 44);
    let mut sack = SackBlocks::default();
    sack.push(1, 2);
    sack.push(3, 4);
    assert_eq!(Segment { sack, ..base }.header_bytes(), 60);
    let all = Segment { mss: Some(1), wscale: Some(1), ts: Some((1, 1)), sack_ok: true, sack, len: 100, ..base };
    assert_eq!(all.header_bytes(), 40 + 4 + 4 + 12 + 4 + 20);
    assert_eq!(all.wire_bytes(), 84 + 100);
    assert_eq!(Segment { len: 1000, ..base }.wire_bytes(), 1040);
}

#[test]
fn seq_len_counts_syn_and_fin() {
    let s = |flags, len| Segment { flags, len, ..Default::default() }.seq_len();
    assert_eq!(s(Flags::ACK, 1000), 1000);
    assert_eq!(s(Flags::SYN, 0), 1);
    assert_eq!(s(Flags::FIN | Flags::ACK, 500), 501);
    assert_eq!(s(Flags::SYN | Flags::FIN, 10), 12);
}

// ------------------------------------------------------------------ send log

#[test]
fn send_log_appends_marks_retransmissions_and_straddles_the_tail() {
    let mut log = SendLog::default();
    assert!(log.is_empty() && log.oldest().is_none());
    log.record_send(10, 1, 1001);
    log.record_send(20, 1001, 2001);
    log.record_send(30, 2001, 3001);
    log.record_send(31, 2001, 2001); // empty: ignored
    assert_eq!(log.len(), 3);
    assert!(!log.is_empty());
    assert_eq!(log.oldest().map(|r| (r.seq, r.end, r.sent_at)), Some((1, 1001, 10)));
    assert_eq!(log.find(0), None);
    assert_eq!(log.find(1).map(|r| r.seq), Some(1));
    assert_eq!(log.find(1000).map(|r| r.seq), Some(1));
    assert_eq!(log.find(1001).map(|r| r.seq), Some(1001));
    assert_eq!(log.find(3000).map(|r| r.seq), Some(2001));
    assert_eq!(log.find(3001), None);
    // Retransmit [1001, 2001): only that record is marked.
    log.record_send(40, 1001, 2001);
    let recs: Vec<_> = log.iter().map(|r| (r.seq, r.sent_at, r.first_sent_at, r.retransmits)).collect();
    assert_eq!(recs, vec![(1, 10, 10, 0), (1001, 40, 20, 1), (2001, 30, 30, 0)]);
    // Twice more, spanning two records: counts grow by one each time.
    log.record_send(50, 1001, 3001);
    log.record_send(55, 1001, 1500);
    let recs: Vec<_> = log.iter().map(|r| (r.seq, r.sent_at, r.retransmits)).collect();
    assert_eq!(recs, vec![(1, 10, 0), (1001, 55, 3), (2001, 50, 1)]);
    // A retransmission that runs past the old tail: the new part is a fresh record.
    log.record_send(60, 2001, 4001);
    let recs: Vec<_> = log.iter().map(|r| (r.seq, r.end, r.sent_at, r.retransmits)).collect();
    assert_eq!(recs, vec![(1, 1001, 10, 0), (1001, 2001, 55, 3), (2001, 3001, 60, 2), (3001, 4001, 60, 0)]);
}

#[test]
fn send_log_ack_gives_the_newest_clean_rtt() {
    let mut log = SendLog::default();
    log.record_send(100, 1, 1001);
    log.record_send(200, 1001, 2001);
    log.record_send(300, 2001, 3001);
    // Below the first record's end: nothing dropped, no sample.
    assert_eq!(log.record_ack(400, 1000), None);
    assert_eq!(log.len(), 3);
    // Covers two records: the newest one's RTT (600 − 200).
    assert_eq!(log.record_ack(600, 2001), Some(400));
    assert_eq!(log.len(), 1);
    // Karn: the newest acknowledged record was retransmitted, so no sample.
    log.record_send(700, 2001, 3001);
    assert_eq!(log.record_ack(900, 3001), None);
    assert!(log.is_empty());
}

// ------------------------------------------------------------------ ECN (RFC 3168 §6.1)

#[test]
fn ecn_negotiation_flags() {
    assert_eq!(EcnState::syn_flags(false, false, true), Flags::NONE);
    assert_eq!(EcnState::syn_flags(false, true, true), Flags::NONE);
    assert_eq!(EcnState::syn_flags(true, false, false), Flags::ECE | Flags::CWR);
    assert_eq!(EcnState::syn_flags(true, true, true), Flags::ECE);
    assert_eq!(EcnState::syn_flags(true, true, false), Flags::NONE);
    let syn = |flags| Segment { flags, ..Default::default() };
    let mut e = EcnState::default();
    e.on_syn(true, &syn(Flags::SYN | Flags::ECE | Flags::CWR));
    assert!(e.ok);
    e.on_syn(true, &syn(Flags::SYN | Flags::ECE));
    assert!(!e.ok, "a SYN must carry both ECE and CWR");
    e.on_syn(false, &syn(Flags::SYN | Flags::ECE | Flags::CWR));
    assert!(!e.ok);
    e.on_syn(true, &syn(Flags::SYN | Flags::ACK | Flags::ECE));
    assert!(e.ok);
    e.on_syn(true, &syn(Flags::SYN | Flags::ACK | Flags::ECE | Flags::CWR));
    assert!(!e.ok, "a SYN-ACK with CWR is not an ECN-setup SYN-ACK");
}

#[test]
fn ecn_receiver_echoes_until_cwr() {
    let data = |ce, flags, len| Segment { ce, flags, len, ..Default::default() };
    let mut off = EcnState::default();
    off.on_segment(&data(true, Flags::ACK, 1000));
    assert!(!off.echo_ece && off.ce_received == 0, "not negotiated: marks ignored");
    let mut e = EcnState { ok: true, ..Default::default() };
    e.on_segment(&data(true, Flags::ACK, 0));
    assert!(!e.echo_ece, "a CE on a pure ACK is ignored");
    e.on_segment(&data(true, Flags::ACK, 1000));
    e.on_segment(&data(true, Flags::ACK, 1000));
    assert_eq!((e.echo_ece, e.ce_received), (true, 2));
    e.on_segment(&data(false, Flags::ACK, 1000));
    assert!(e.echo_ece, "echo persists until CWR");
    e.on_segment(&data(false, Flags::ACK | Flags::CWR, 1000));
    assert!(!e.echo_ece);
    e.on_segment(&data(true, Flags::ACK | Flags::CWR, 1000));
    assert_eq!((e.echo_ece, e.ce_received), (true, 3), "CWR clears before CE sets again");
    let mut seg = Segment::default();
    e.decorate(&mut seg, false);
    assert_eq!((seg.flags, seg.ect), (Flags::ECE, false));
    // Per-segment feedback: ECE mirrors each data segment's mark.
    let mut k = EcnState { ok: true, per_segment: true, ..Default::default() };
    k.on_segment(&data(true, Flags::ACK, 1000));
    assert_eq!((k.echo_ece, k.ce_received), (true, 1));
    k.on_segment(&data(true, Flags::ACK, 0));
    assert_eq!((k.echo_ece, k.ce_received), (true, 1), "pure ACKs change nothing");
    k.on_segment(&data(false, Flags::ACK | Flags::CWR, 1000));
    assert_eq!((k.echo_ece, k.ce_received), (false, 1));
}

#[test]
fn ecn_sender_reacts_once_per_window() {
    let mut off = EcnState::default();
    assert!(!off.on_ece(5000, 9000, false));
    assert_eq!(off.ece_acks, 0);
    let mut e = EcnState { ok: true, ..Default::default() };
    assert!(e.on_ece(1000, 9000, false));
    assert_eq!((e.recover, e.cwr_pending, e.reactions, e.ece_acks), (9000, true, 1, 1));
    assert!(!e.on_ece(9000, 12000, false), "not beyond recover: same window");
    assert!(e.on_ece(9001, 12000, false));
    assert_eq!((e.recover, e.reactions, e.ece_acks), (12000, 2, 3));
    assert!(!e.on_ece(20000, 30000, true), "no reaction in loss recovery");
    assert_eq!((e.recover, e.reactions, e.ece_acks), (12000, 2, 4));
    // A loss reduction stands for the window's reaction; recover never moves back.
    e.on_loss_reduction(40000);
    assert!(!e.on_ece(39000, 41000, false));
    e.on_loss_reduction(100);
    assert_eq!(e.recover, 40000);
    // CWR rides on the next new data segment only, with ECT.
    let mut retx = Segment::default();
    e.decorate(&mut retx, false);
    assert_eq!((retx.flags, retx.ect), (Flags::NONE, false));
    let mut d = Segment { flags: Flags::ACK, ..Default::default() };
    e.decorate(&mut d, true);
    assert_eq!((d.flags, d.ect), (Flags::ACK | Flags::CWR, true));
    let mut d2 = Segment { flags: Flags::ACK, ..Default::default() };
    e.decorate(&mut d2, true);
    assert_eq!((d2.flags, d2.ect), (Flags::ACK, true));
    // Per-segment mode counts the echo but never halves.
    let mut k = EcnState { ok: true, per_segment: true, ..Default::default() };
    assert!(!k.on_ece(5000, 9000, false));
    assert_eq!((k.ece_acks, k.reactions, k.cwr_pending), (1, 0, false));
}

// ------------------------------------------------------------------ variant registry and params

#[test]
fn every_variant_composes_its_seams() {
    let reno = CcKind::Reno { extra_eighth: false, halve_flight: false };
    let rfc = CcKind::Reno { extra_eighth: false, halve_flight: true };
    let fine = TimerModel::Fine { granularity: MS, min_rto: SEC, initial_rto: SEC };
    let rows: [(&str, CcKind, RecoveryKind, TimerModel, bool, bool); 5] = [
        ("tahoe", reno, RecoveryKind::Tahoe, TimerModel::Bsd, false, false),
        ("reno", reno, RecoveryKind::Reno, TimerModel::Bsd, false, false),
        ("newreno", rfc, RecoveryKind::NewReno, fine, false, false),
        ("sack", reno, RecoveryKind::Sack1, TimerModel::Bsd, true, false),
        ("sack-rfc6675", rfc, RecoveryKind::Rfc6675, fine, true, true),
    ];
    for (name, cc, rec, timer, sack, dsack) in rows {
        let c = EndpointConfig::for_variant(name).unwrap();
        assert_eq!((c.variant.name.as_str(), c.variant.cc, c.variant.recovery, c.timer_model), (name, cc, rec, timer));
        assert_eq!((c.sack, c.dsack, c.ecn, c.timestamps, c.lite.is_some()), (sack, dsack, false, false, false), "{name}");
        assert_eq!((c.mss, c.send_buffer, c.recv_buffer, c.time_wait), (1460, 51200, 51200, SEC), "{name}");
        assert_eq!((c.delack_timeout, c.delack_bytes, c.nagle, c.idle_restart), (200 * MS, None, true, true), "{name}");
    }
    let v = EndpointConfig::for_variant("vegas").unwrap();
    assert!(matches!(v.variant.cc, CcKind::Vegas(p) if !p.star && p.alpha == 1.0 && p.beta == 3.0 && p.gamma == 1.0));
    assert_eq!(v.timer_model, TimerModel::Bsd);
    let vs = EndpointConfig::for_variant("vegas-star").unwrap();
    assert!(matches!(vs.variant.cc, CcKind::Vegas(p) if p.star));
    let s = EndpointConfig::for_variant("scalable-ecn").unwrap();
    assert!(matches!(s.variant.cc, CcKind::Scalable(_)));
    assert_eq!((s.variant.recovery, s.timer_model), (RecoveryKind::NewReno, fine));
    assert_eq!((s.ecn, s.ecn_per_segment, s.timestamps, s.ack_policy), (true, true, true, AckPolicy::EveryPacket));
    for n in 0..=6u32 {
        let name = format!("lite.{n}");
        let c = EndpointConfig::for_variant(&name).unwrap();
        let (fixes, ts, eighth, every) = tcplab_tcp::lite::level(n);
        assert_eq!(c.lite, Some(fixes), "{name}");
        assert_eq!(c.timestamps, ts, "{name}");
        assert_eq!(c.variant.cc, CcKind::Reno { extra_eighth: eighth, halve_flight: false }, "{name}");
        assert_eq!(c.ack_policy, if every { AckPolicy::EveryPacket } else { AckPolicy::BsdDelayed }, "{name}");
        assert_eq!((c.variant.recovery, c.timer_model), (RecoveryKind::Reno, TimerModel::Bsd), "{name}");
    }
    assert_eq!(EndpointConfig::for_variant("lite").unwrap().lite, EndpointConfig::for_variant("lite.0").unwrap().lite);
    for name in tcplab_tcp::config::KNOWN_VARIANTS {
        assert!(EndpointConfig::for_variant(name).is_ok(), "{name}");
    }
}

#[test]
fn ack_policy_names_round_trip() {
    for p in [AckPolicy::EveryPacket, AckPolicy::BsdDelayed, AckPolicy::TahoeReceiver, AckPolicy::Lbl] {
        assert_eq!(AckPolicy::parse(p.name()), Ok(p));
    }
    assert_eq!(AckPolicy::EveryPacket.name(), "every_packet");
    assert_eq!(AckPolicy::BsdDelayed.name(), "bsd_delayed");
    assert_eq!(AckPolicy::TahoeReceiver.name(), "tahoe_receiver");
    assert_eq!(AckPolicy::Lbl.name(), "lbl");
    assert_eq!(AckPolicy::parse("delayed"), Ok(AckPolicy::BsdDelayed));
    assert_eq!(AckPolicy::parse("every"), Ok(AckPolicy::EveryPacket));
    assert_eq!(AckPolicy::parse("tahoe"), Ok(AckPolicy::TahoeReceiver));
    let e = AckPolicy::parse("sometimes").unwrap_err();
    assert!(e.contains("\"sometimes\"") && e.contains("lbl"), "{e}");
}

#[test]
fn scalable_params_are_checked_at_their_bounds() {
    let mut c = EndpointConfig::for_variant("scalable-ecn").unwrap();
    let p = |c: &EndpointConfig| match c.variant.cc {
        CcKind::Scalable(p) => p,
        _ => unreachable!(),
    };
    assert!(c.set_param("a", 0.0).unwrap_err().contains("a must be a finite number > 0"));
    assert!(c.set_param("a", -1.0).is_err());
    assert!(c.set_param("base_b", f64::INFINITY).is_err());
    assert!(c.set_param("base_b", 0.0).is_err());
    c.set_param("a", 0.25).unwrap();
    c.set_param("base_b", 0.01).unwrap();
    assert_eq!((p(&c).a, p(&c).base_b), (0.25, 0.01));
    for bad in [0.0, 1.0, -0.5, 1.5] {
        assert!(c.set_param("b_cap", bad).unwrap_err().contains("b_cap must be in (0, 1)"), "{bad}");
    }
    c.set_param("b_cap", 0.5).unwrap();
    assert_eq!(p(&c).b_cap, 0.5);
    for bad in [-1.0, 31.0, 2.5] {
        assert!(c.set_param("ssgrace", bad).unwrap_err().contains("ssgrace"), "{bad}");
    }
    c.set_param("ssgrace", 0.0).unwrap();
    assert_eq!(p(&c).ssgrace, 0);
    c.set_param("ssgrace", 30.0).unwrap();
    assert_eq!(p(&c).ssgrace, 30);
    let e = c.set_param("alpha", 1.0).unwrap_err();
    assert!(e.contains("no parameter \"alpha\"") && e.contains("ssgrace"), "{e}");
}

#[test]
fn vegas_and_lite_params_are_checked() {
    let mut v = EndpointConfig::for_variant("vegas").unwrap();
    assert!(v.set_param("alpha", -0.1).is_err());
    assert!(v.set_param("alpha", f64::NAN).is_err());
    v.set_param("alpha", 0.0).unwrap();
    v.set_param("beta", 2.0).unwrap();
    v.set_param("gamma", 4.0).unwrap();
    v.set_param("avg_rtt", 0.0).unwrap();
    let CcKind::Vegas(p) = v.variant.cc else { unreachable!() };
    assert_eq!((p.alpha, p.beta, p.gamma, p.avg_rtt), (0.0, 2.0, 4.0, false));
    v.set_param("avg_rtt", 1.0).unwrap();
    assert!(matches!(v.variant.cc, CcKind::Vegas(p) if p.avg_rtt));
    assert!(v.set_param("avg_rtt", 0.5).unwrap_err().contains("avg_rtt is 0 or 1"));
    assert!(v.set_param("delta", 1.0).unwrap_err().contains("no parameter \"delta\""));
    assert!(v.check_params().is_ok());
    v.set_param("alpha", 2.0).unwrap();
    assert!(v.check_params().is_ok(), "alpha == beta is allowed");
    v.set_param("alpha", 2.5).unwrap();
    assert!(v.check_params().unwrap_err().contains("must not exceed beta"));

    let mut l = EndpointConfig::for_variant("lite").unwrap();
    assert!(l.set_param("fix_rto", 0.5).unwrap_err().contains("is a switch"));
    assert!(l.set_param("fix_rto", 2.0).is_err());
    l.set_param("fix_rto", 1.0).unwrap();
    l.set_param("fix_header_prediction", 1.0).unwrap();
    l.set_param("fix_big_ack", 1.0).unwrap();
    l.set_param("fix_dupack_ge", 1.0).unwrap();
    let f = l.lite.unwrap();
    assert!(f.rto && f.header_prediction && f.big_ack && f.dupack_ge);
    l.set_param("fix_rto", 0.0).unwrap();
    assert!(!l.lite.unwrap().rto);
    assert!(l.timestamps);
    l.set_param("timestamps", 0.0).unwrap();
    assert!(!l.timestamps);
    l.set_param("fix_extra_increase", 1.0).unwrap();
    assert_eq!(l.variant.cc, CcKind::Reno { extra_eighth: false, halve_flight: false });
    l.set_param("fix_extra_increase", 0.0).unwrap();
    assert_eq!(l.variant.cc, CcKind::Reno { extra_eighth: true, halve_flight: false });
    l.set_param("ack_every_packet", 1.0).unwrap();
    assert_eq!(l.ack_policy, AckPolicy::EveryPacket);
    l.set_param("ack_every_packet", 0.0).unwrap();
    assert_eq!(l.ack_policy, AckPolicy::BsdDelayed);
    assert!(l.set_param("alpha", 1.0).unwrap_err().contains("fix_dupack_ge"));
    let mut r = EndpointConfig::for_variant("reno").unwrap();
    assert!(r.set_param("alpha", 1.0).unwrap_err().contains("takes no parameter"));
    assert!(r.check_params().is_ok());
}

// ------------------------------------------------------------------ retransmission timers

#[test]
fn bsd_timer_counts_down_slow_ticks_and_times_one_segment() {
    let mut t = RetransmitTimer::new(TimerModel::Bsd);
    assert!(t.is_bsd() && !t.running() && !t.timing());
    assert_eq!(t.deadline(), None);
    assert_eq!(t.rto_ns(), 12 * SLOW_TICK);
    assert_eq!(SLOW_TICK, 500 * MS);
    assert_eq!(tcplab_tcp::rto::FAST_TICK, 200 * MS);
    t.arm(0);
    assert!(t.running());
    t.start_timing(0, 1);
    t.start_timing(0, 1001); // already timing: ignored
    assert!(t.timing());
    // The ACK of the timed segment's first byte only (ack == rtseq) is no sample.
    assert!(!t.on_slow_tick());
    assert_eq!(t.on_ack(0, 1), None);
    assert!(!t.on_slow_tick());
    // Two ticks passed: t_rtt = 3, sample of 2 ticks (origin 0) = 1 s.
    assert_eq!(t.on_ack(0, 2), Some(2 * SLOW_TICK));
    assert!(!t.timing());
    assert_eq!(t.on_ack(0, 5000), None, "one sample per timed segment");
    let est = match &t {
        RetransmitTimer::Bsd { est, rexmt, .. } => {
            assert_eq!(*rexmt, 10, "two of the 12 initial ticks have passed; arm does not restart");
            *est
        }
        _ => unreachable!(),
    };
    // First sample: sa = 3 << 3, sd = 3 << 1, rto = 3 + 6.
    assert_eq!((est.srtt, est.rttvar, est.rxtcur), (24, 6, 9));
    assert_eq!(t.rto_ns(), 9 * SLOW_TICK);
    assert_eq!(t.srtt_ns(), 3 * SLOW_TICK);
    t.restart(0);
    for k in 1..9 {
        assert!(!t.on_slow_tick(), "tick {k}");
    }
    assert!(t.on_slow_tick(), "fires on the 9th tick");
    assert!(!t.running());
    assert!(!t.on_slow_tick(), "a stopped timer does not fire again");
    assert!(t.backoff());
    assert_eq!((t.backoffs(), t.rto_ns()), (1, 18 * SLOW_TICK));
    t.arm(0);
    t.stop();
    assert!(!t.running());
    // An expiry does not advance t_rtt; timing restarts at 1.
    t.start_timing(0, 10);
    t.restart(0);
    let mut ticks = 0;
    while !t.on_slow_tick() {
        ticks += 1;
    }
    assert_eq!(ticks, 17);
    match &t {
        RetransmitTimer::Bsd { t_rtt, .. } => assert_eq!(*t_rtt, 18, "advanced on the 17 ticks before the expiry only"),
        _ => unreachable!(),
    }
    assert!(t.backoff());
    assert!(!t.timing(), "Karn: a backoff cancels timing");
    // A timestamp sample: bsd_ticks of 0 counts as 1; it stops timing and resets the backoff.
    t.start_timing(0, 20);
    t.sample_external(0, 0);
    assert!(!t.timing());
    assert_eq!(t.backoffs(), 0);
    t.cancel_timing();
    assert!(!t.timing());
}

#[test]
fn fine_timer_deadline_and_samples() {
    let mut t = RetransmitTimer::new(TimerModel::Fine { granularity: MS, min_rto: 200 * MS, initial_rto: SEC });
    assert!(!t.is_bsd() && !t.running());
    assert!(!t.on_slow_tick());
    t.arm(100 * MS);
    assert_eq!(t.deadline(), Some(1100 * MS));
    t.arm(500 * MS);
    assert_eq!(t.deadline(), Some(1100 * MS), "arm leaves a running timer alone");
    assert!(!t.expired(1100 * MS - 1));
    assert!(t.expired(1100 * MS));
    t.start_timing(100 * MS, 1);
    t.start_timing(150 * MS, 1001);
    assert_eq!(t.on_ack(400 * MS, 1), None, "ack == timed seq does not cover it");
    assert_eq!(t.on_ack(400 * MS, 2), Some(300 * MS));
    assert_eq!(t.srtt_ns(), 300 * MS);
    // RFC 6298: rto = srtt + max(G, 4·rttvar) = 300 + 600.
    assert_eq!(t.rto_ns(), 900 * MS);
    t.restart(400 * MS);
    assert_eq!(t.deadline(), Some(1300 * MS));
    assert!(t.backoff());
    assert_eq!((t.backoffs(), t.rto_ns()), (1, 1800 * MS));
    t.stop();
    assert!(!t.running() && !t.expired(u64::MAX));
    t.start_timing(0, 5);
    t.sample_external(100 * MS, 0);
    assert!(!t.timing());
    assert_eq!(t.backoffs(), 0);
    let n = RetransmitTimer::new(TimerModel::NS2_2002);
    assert!(!n.is_bsd());
    assert_eq!(n.backoffs(), 0);
}

#[test]
fn timer_for_a_lite_config_with_fix_rto_is_rescaled() {
    let mut c = EndpointConfig::for_variant("lite.2").unwrap();
    let rescaled = |c: &EndpointConfig| match RetransmitTimer::for_config(c) {
        RetransmitTimer::Bsd { est, .. } => est.rescaled,
        _ => unreachable!(),
    };
    assert!(rescaled(&c));
    c.set_param("fix_rto", 0.0).unwrap();
    assert!(!rescaled(&c));
    assert!(!rescaled(&EndpointConfig::for_variant("reno").unwrap()));
}

#[test]
fn bsd_estimator_clamps_and_gives_up_after_twelve_backoffs() {
    // A long first sample then short ones: srtt and rttvar fall towards zero but stay ≥ 1.
    let mut e = BsdRto::new();
    e.sample(20); // sa 160, sd 40, rto 60
    assert_eq!((e.srtt, e.rttvar, e.rxtcur), (160, 40, 60));
    e.sample(1); // m = 0: delta = -20: sa 140; |delta| 20 - 10 = 10: sd 50; rto 17 + 50
    assert_eq!((e.srtt, e.rttvar, e.rxtcur), (140, 50, 67));
    for _ in 0..200 {
        e.sample(1);
    }
    assert_eq!((e.srtt, e.rttvar), (7, 3), "BSD's fixed point for zero-tick samples");
    let mut e = BsdRto { srtt: 3, rttvar: 1, ..BsdRto::new() };
    e.sample(1); // delta = 0 - 0 = 0: sa 3; sd 1 + (0 - 0) = 1
    assert_eq!((e.srtt, e.rttvar, e.rxtcur), (3, 1, 2), "rto clamped up to 2 ticks");
    let mut e = BsdRto { srtt: 1, rttvar: 1, ..BsdRto::new() };
    e.sample(1); // sa 1 + (0 - 0) = 1
    assert_eq!(e.srtt, 1);
    let mut e = BsdRto { srtt: 8, rttvar: 1, ..BsdRto::new() };
    e.sample(1); // delta = -1: sa 7; |delta| 1 - 0: sd 2
    assert_eq!((e.srtt, e.rttvar), (7, 2));
    // Backoff: the 4th folds srtt into rttvar; the 13th gives up.
    let mut e = BsdRto::new();
    e.sample(5); // sa 40 sd 10 rto 15
    for k in 1..=3 {
        assert!(e.backoff());
        assert_eq!(e.srtt, 40, "backoff {k}");
    }
    assert!(e.backoff());
    assert_eq!((e.srtt, e.rttvar, e.rxtshift), (0, 15, 4));
    for _ in 5..=12 {
        assert!(e.backoff());
    }
    assert_eq!((e.rxtshift, e.rxtcur), (12, 128));
    assert!(!e.backoff());
    assert_eq!(e.rxtshift, 12);
}

#[test]
fn rescaled_estimator_steps() {
    let mut e = BsdRto::rescaled();
    assert_eq!((e.srtt, e.rttvar, e.rxtcur, e.floor), (0, 96, 12, 0));
    e.sample(3); // first: sa 3 << 5 = 96, sd 3 << 3 = 24, floor m + 2 = 4; rto max(4, (12 + 24) >> 2 = 9)
    assert_eq!((e.srtt, e.rttvar, e.floor, e.rxtcur), (96, 24, 4, 9));
    assert_eq!(e.srtt_ticks(), 3.0);
    e.sample(1); // m 0: sdelta = 0 - 12 = -12: sa 84; 12 - 6 = 6: sd 30; rto max(2, (10 + 30) >> 2 = 10)
    assert_eq!((e.srtt, e.rttvar, e.floor, e.rxtcur), (84, 30, 2, 10));
    let mut c = BsdRto { srtt: 1, rttvar: 1, ..BsdRto::rescaled() };
    c.sample(1); // sdelta 0: sa 1; sd 1 + (0 - 0)
    assert_eq!((c.srtt, c.rttvar), (1, 1));
    let mut c = BsdRto { srtt: 4, rttvar: 1, ..BsdRto::rescaled() };
    c.sample(1); // sdelta = 0 - 0 = 0; sd = 1
    assert_eq!((c.srtt, c.rttvar, c.rxtcur), (4, 1, 2));
    let mut c = BsdRto { srtt: 16, rttvar: 3, ..BsdRto::rescaled() };
    c.sample(1); // sdelta = -2: sa 14; 2 - 0 = 2: sd 5
    assert_eq!((c.srtt, c.rttvar), (14, 5));
}

#[test]
fn ns2_timeout_is_at_least_two_ticks() {
    use tcplab_tcp::rto::Ns2Rto;
    // With no minimum RTO the floor is ns-2's two ticks (`rtt_timeout`: `if (timeout < 2 * tcpTick_)`).
    let mut e = Ns2Rto::new(100 * MS, 0, 6 * SEC, 64 * SEC);
    e.rtxcur = 50 * MS;
    assert_eq!(e.rto(), 200 * MS);
    e.rtxcur = 250 * MS;
    assert_eq!(e.rto(), 250 * MS);
    e.backoff = 4;
    assert_eq!(e.rto(), SEC);
    e.rtxcur = 20 * SEC;
    assert_eq!(e.rto(), 64 * SEC, "maxrto_");
}

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

// ------------------------------------------------------------------ endpoint: scripted exchanges
//
// Conventions of `tests.rs`: the endpoint under test is the client (ISS `C_ISS`), MSS 1000, the
// scripted peer's ISS is `S_ISS`; data byte k has wire sequence `C_ISS + 1 + k`.

mod endpoint {
    use tcplab_tcp::config::EndpointConfig;
    use tcplab_tcp::*;
    // The scripted-exchange helpers and constants of `tests.rs`, shared.
    use crate::script::{ack, data, drain, open_sender, C_ISS, S_ISS, SYNACK};

    fn cfg(variant: &str) -> EndpointConfig {
        let mut c = EndpointConfig::for_variant(variant).unwrap();
        c.mss = 1000;
        c
    }

    #[test]
    fn rst_in_window_aborts_out_of_window_is_ignored() {
        let rst = |seq: u32| Segment { seq, flags: Flags::RST, ..Default::default() };
        let mut e = open_sender(cfg("reno"), 65535);
        // Beyond the receive window (50 KB): ignored.
        e.on_segment(200 * MS, &rst(S_ISS + 1 + 60_000));
        assert_eq!(e.state(), TcpState::Established);
        // Below rcv_nxt: ignored.
        e.on_segment(200 * MS, &rst(S_ISS));
        assert_eq!(e.state(), TcpState::Established);
        // Inside the window, not at rcv_nxt: accepted (RFC 793 window test).
        let mut f = open_sender(cfg("reno"), 65535);
        f.on_segment(200 * MS, &rst(S_ISS + 1 + 1000));
        assert!(f.is_closed());
        // At rcv_nxt exactly.
        e.on_segment(300 * MS, &rst(S_ISS + 1));
        assert!(e.is_closed());
        assert!(drain(&mut e, 300 * MS).is_empty(), "no answer to a RST");
    }

    #[test]
    fn closed_and_listening_endpoints_answer_with_exact_rsts() {
        let mut e = Endpoint::new(cfg("reno"), C_ISS);
        assert!(e.is_closed());
        // A segment with ACK: <SEQ=SEG.ACK><CTL=RST> (RFC 793 p. 36).
        e.on_segment(0, &Segment { seq: 700, ack: 9000, flags: Flags::ACK, len: 10, ..Default::default() });
        assert_eq!(drain(&mut e, 0), vec![Segment { seq: 9000, ack: 0, flags: Flags::RST, ..Default::default() }]);
        // Without ACK: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; a SYN counts one.
        e.on_segment(0, &Segment { seq: 700, flags: Flags::SYN, ..Default::default() });
        assert_eq!(drain(&mut e, 0), vec![Segment { seq: 0, ack: 701, flags: Flags::RST | Flags::ACK, ..Default::default() }]);
        e.on_segment(0, &Segment { seq: 700, flags: Flags::RST, ..Default::default() });
        assert!(drain(&mut e, 0).is_empty(), "a RST is never answered");
        let mut l = Endpoint::new(cfg("reno"), S_ISS);
        l.listen();
        assert_eq!(l.state(), TcpState::Listen);
        l.on_segment(0, &Segment { seq: 1, flags: Flags::RST, ..Default::default() });
        assert!(drain(&mut l, 0).is_empty());
        l.on_segment(0, &Segment { seq: 1, ack: 77, flags: Flags::ACK, ..Default::default() });
        assert_eq!(drain(&mut l, 0), vec![Segment { seq: 77, flags: Flags::RST, ..Default::default() }]);
        assert_eq!(l.state(), TcpState::Listen);
    }

    #[test]
    fn time_wait_acks_a_retransmitted_fin_and_ignores_a_pure_ack() {
        let mut c = Endpoint::new(cfg("reno"), C_ISS);
        let mut s = Endpoint::new(cfg("reno"), S_ISS);
        s.listen();
        c.connect(0);
        c.app_write(1500);
        c.app_close();
        let mut t = 0;
        let mut last_from_s = None;
        for _ in 0..20 {
            for seg in drain(&mut c, t) {
                s.on_segment(t + 10 * MS, &seg);
            }
            for seg in drain(&mut s, t + 10 * MS) {
                last_from_s = Some(seg);
                c.on_segment(t + 20 * MS, &seg);
            }
            t += 20 * MS;
        }
        assert_eq!(c.state(), TcpState::TimeWait);
        let fin = last_from_s.unwrap();
        assert!(fin.flags.fin(), "the server's last segment is its FIN");
        let d = c.next_timer().unwrap();
        // A pure ACK: no answer, the 2MSL wait is not restarted.
        let pure = Segment { flags: Flags::ACK, len: 0, ..fin };
        c.on_segment(t + 100 * MS, &pure);
        assert!(drain(&mut c, t + 100 * MS).is_empty());
        assert_eq!(c.next_timer(), Some(d));
        // The retransmitted FIN: ACKed at once, and the wait restarts (1 s TIME_WAIT).
        c.on_segment(t + 200 * MS, &fin);
        let out = drain(&mut c, t + 200 * MS);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].flags, out[0].ack), (Flags::ACK, fin.seq.wrapping_add(1)));
        assert_eq!(c.next_timer(), Some(t + 200 * MS + SEC));
        c.on_timer(t + 200 * MS + SEC);
        assert!(c.is_closed());
    }

    #[test]
    fn ack_beyond_snd_max_is_answered_and_dropped() {
        let mut e = open_sender(cfg("reno"), 65535);
        e.app_write(3000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
        e.on_segment(200 * MS, &ack(5000, 65535));
        let out = drain(&mut e, 200 * MS);
        assert_eq!(out.len(), 1, "an ACK for data never sent gets an ACK back");
        assert_eq!((out[0].len, out[0].ack), (0, S_ISS + 1));
        assert_eq!(e.snd_una(), 0);
        assert_eq!(e.stats().bytes_acked, 0);
        // The right ACK then works.
        e.on_segment(300 * MS, &ack(1000, 65535));
        assert_eq!(e.snd_una(), 1000);
        assert_eq!(data(&drain(&mut e, 300 * MS)), vec![(1000, 1000), (2000, 1000)]);
    }

    #[test]
    fn only_bsd_duplicate_acks_count() {
        let mut e = open_sender(cfg("reno"), 50_000);
        e.app_write(20_000);
        drain(&mut e, 100 * MS);
        // Open the window to 4 segments.
        for (i, k) in [1000u32, 2000, 3000].iter().enumerate() {
            e.on_segment((200 + i as u64) * MS, &ack(*k, 50_000));
            drain(&mut e, (200 + i as u64) * MS);
        }
        assert_eq!(e.stats().dupacks_received, 0);
        // A window change is no duplicate (and the window is taken: 60 000).
        e.on_segment(300 * MS, &ack(3000, 60_000));
        assert_eq!((e.stats().dupacks_received, e.snd_wnd()), (0, 60_000));
        // Nor is a segment carrying data.
        e.on_segment(301 * MS, &Segment { len: 100, ..ack(3000, 60_000) });
        assert_eq!(e.stats().dupacks_received, 0);
        let dup = Segment { seq: S_ISS + 101, ..ack(3000, 60_000) };
        // Two true duplicates, then a window change: the count starts again.
        e.on_segment(310 * MS, &dup);
        e.on_segment(311 * MS, &dup);
        assert_eq!(e.stats().dupacks_received, 2);
        e.on_segment(312 * MS, &Segment { wnd: 61_000, ..dup });
        let dup = Segment { wnd: 61_000, ..dup };
        e.on_segment(313 * MS, &dup);
        e.on_segment(314 * MS, &dup);
        assert_eq!(e.stats().fast_retransmits, 0, "the window update reset the count");
        // The third in a row starts fast retransmit of segment 3.
        e.on_segment(315 * MS, &dup);
        assert_eq!(e.stats().dupacks_received, 5);
        assert_eq!(e.stats().fast_retransmits, 1);
        assert!(e.in_recovery());
        assert_eq!(data(&drain(&mut e, 320 * MS))[0], (3000, 1000));
    }

    // -------------------------------------------------------------- the seams' contracts

    use tcplab_tcp::cc::{AckSample, CcWindow, CongestionControl, SenderView};
    use tcplab_tcp::recovery::{LossRecovery, RecoveryCtx, RecoveryOutcome};
    use tcplab_tcp::CamTrace;
    use std::sync::{Arc, Mutex};

    /// A congestion control that records every `AckSample` and opens the window by one MSS.
    #[derive(Debug, Default)]
    struct Recorder {
        samples: Arc<Mutex<Vec<AckSample>>>,
    }

    impl CongestionControl for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, _v: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
            self.samples.lock().unwrap().push(*s);
            w.cwnd += w.mss;
        }
    }

    fn open_with(mut e: Endpoint, synack: Segment) -> Endpoint {
        e.connect(0);
        assert_eq!(drain(&mut e, 0).len(), 1);
        e.on_segment(100 * MS, &synack);
        assert_eq!(drain(&mut e, 100 * MS).len(), 1);
        assert_eq!(e.state(), TcpState::Established);
        e
    }

    fn synack() -> Segment {
        Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), ..Default::default() }
    }

    #[test]
    fn ack_samples_given_to_congestion_control_are_exact() {
        let rec = Recorder::default();
        let samples = rec.samples.clone();
        // ECN negotiated with per-segment feedback (no RFC 3168 halving), so the ECE ACK below
        // reaches the CC; without negotiation it must not (scalable::ece_without_negotiated_ecn_is_ignored).
        let mut c = cfg("reno");
        c.ecn = true;
        c.ecn_per_segment = true;
        let e = Endpoint::with_parts(c, C_ISS, Box::new(rec), tcplab_tcp::recovery::build(tcplab_tcp::config::RecoveryKind::Reno));
        let mut e = open_with(e, Segment { flags: SYNACK | Flags::ECE, ..synack() });
        assert!(e.ecn_ok());
        e.app_write(5000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
        e.on_segment(300 * MS, &ack(1000, 65535));
        assert_eq!(data(&drain(&mut e, 300 * MS)), vec![(1000, 1000), (2000, 1000)]);
        e.on_slow_tick(500 * MS);
        e.on_segment(450 * MS, &Segment { flags: Flags::ACK | Flags::ECE, ..ack(2000, 65535) });
        let v = samples.lock().unwrap().clone();
        assert_eq!(v.len(), 2);
        let a = v[0];
        assert_eq!((a.now, a.bytes_acked, a.rtt, a.fine_rtt), (300 * MS, 1000, Some(0), Some(200 * MS)));
        assert_eq!((a.in_slow_start, a.snd_una, a.snd_nxt, a.flight, a.ece), (true, 1000, 1000, 0, false));
        let b = v[1];
        // One slow tick while segment 1 was timed: one tick (origin 0) = 500 ms.
        assert_eq!((b.now, b.bytes_acked, b.rtt, b.fine_rtt), (450 * MS, 1000, Some(SLOW_TICK), Some(150 * MS)));
        assert_eq!((b.snd_una, b.snd_nxt, b.flight, b.ece), (2000, 3000, 1000, true), "the ACK's ECE bit, as received (ECN negotiated)");
        assert_eq!(e.cwnd(), 3000);
    }

    use tcplab_tcp::rto::SLOW_TICK;

    #[test]
    fn timestamp_rtt_samples_in_both_timer_models() {
        for (variant, ticks, expect) in [("reno", 2u32, 2 * SLOW_TICK), ("newreno", 0, 250 * MS)] {
            let rec = Recorder::default();
            let samples = rec.samples.clone();
            let mut c = cfg(variant);
            c.timestamps = true;
            let kind = c.variant.recovery;
            let e = Endpoint::with_parts(c, C_ISS, Box::new(rec), tcplab_tcp::recovery::build(kind));
            let mut e = open_with(e, Segment { ts: Some((77, 0)), ..synack() });
            e.app_write(1000);
            let out = drain(&mut e, 100 * MS);
            assert_eq!(out.len(), 1);
            let (tsval, tsecr) = out[0].ts.expect("timestamps negotiated");
            assert_eq!(tsecr, 77);
            for k in 0..ticks {
                e.on_slow_tick((200 + k as u64) * MS);
            }
            // Timestamps take 12 option bytes: 988-byte segments.
            assert_eq!(out[0].len, 988);
            e.on_segment(350 * MS, &Segment { ts: Some((78, tsval)), ..ack(988, 65535) });
            let v = samples.lock().unwrap().clone();
            assert_eq!(v.len(), 1, "{variant}");
            assert_eq!(v[0].rtt, Some(expect), "{variant}: rtt from the echoed timestamp");
            assert_eq!(v[0].fine_rtt, Some(250 * MS), "{variant}");
        }
    }

    /// A recovery that asks only for the timer to restart (no retransmission) on every ACK.
    #[derive(Debug)]
    struct RestartOnly;

    impl LossRecovery for RestartOnly {
        fn name(&self) -> &'static str {
            "restart-only"
        }
        fn on_dupack(&mut self, _ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
            RecoveryOutcome { restart_timer: true, ..Default::default() }
        }
        fn on_ack(&mut self, _ctx: &mut RecoveryCtx<'_>, _ack: u64) -> RecoveryOutcome {
            RecoveryOutcome { restart_timer: true, allow_growth: true, ..Default::default() }
        }
        fn on_timeout(&mut self, _ctx: &mut RecoveryCtx<'_>) {}
        fn in_recovery(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_timer_restart_without_retransmission_rearms_only_with_data_outstanding() {
        let c = cfg("newreno"); // fine timer: the deadline is visible
        let cc = tcplab_tcp::cc::build(c.variant.cc, 0);
        let e = Endpoint::with_parts(c, C_ISS, cc, Box::new(RestartOnly));
        let mut e = open_with(e, synack());
        e.app_write(2000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
        assert_eq!(e.next_timer(), Some(1100 * MS));
        // Partly acknowledged: restarted from now.
        e.on_segment(200 * MS, &ack(1000, 65535));
        assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(1000, 1000)]);
        assert_eq!(e.next_timer(), Some(200 * MS + e.rto_timer().rto_ns()));
        // Everything acknowledged: the restart request leaves the timer off.
        e.on_segment(300 * MS, &ack(2000, 65535));
        assert!(drain(&mut e, 300 * MS).is_empty());
        assert_eq!(e.next_timer(), None);
    }

    fn sack_synack() -> Segment {
        Segment { sack_ok: true, ..synack() }
    }

    #[test]
    fn dsack_detection_reads_only_this_acks_blocks() {
        let mut e = open_with(Endpoint::new(cfg("sack"), C_ISS), sack_synack());
        assert!(e.sack_ok());
        e.app_write(10_000);
        drain(&mut e, 100 * MS);
        for (i, k) in [1000u32, 2000, 3000].iter().enumerate() {
            e.on_segment((200 + i as u64) * MS, &ack(*k, 65535));
            drain(&mut e, (200 + i as u64) * MS);
        }
        let w = |k: u32| C_ISS + 1 + k;
        let mut two = SackBlocks::default();
        two.push(w(5000), w(6000));
        two.push(w(4000), w(6000));
        // First block inside the second: a D-SACK (RFC 2883 §4).
        e.on_segment(300 * MS, &Segment { sack: two, ..ack(3000, 65535) });
        assert_eq!((e.stats().sack_acks_received, e.stats().dsacks_received), (1, 1));
        // One block only, inside the previous ACK's second block: not a D-SACK.
        let mut one = SackBlocks::default();
        one.push(w(4000), w(5000));
        e.on_segment(301 * MS, &Segment { sack: one, ..ack(3000, 65535) });
        assert_eq!((e.stats().sack_acks_received, e.stats().dsacks_received), (2, 1));
        // One block below the cumulative ACK: a D-SACK.
        let mut below = SackBlocks::default();
        below.push(w(1000), w(2000));
        e.on_segment(302 * MS, &Segment { sack: below, ..ack(3000, 65535) });
        assert_eq!((e.stats().sack_acks_received, e.stats().dsacks_received), (3, 2));
        // Blocks beyond snd_max are not taken.
        let mut beyond = SackBlocks::default();
        beyond.push(w(9000), w(90_000));
        e.on_segment(303 * MS, &Segment { sack: beyond, ..ack(3000, 65535) });
        assert_eq!(e.stats().dsacks_received, 2);
    }

    #[test]
    fn window_updates_follow_rfc793_wl1_wl2() {
        let mut e = open_sender(cfg("reno"), 50_000);
        e.app_write(5000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
        e.on_segment(200 * MS, &ack(1000, 40_000));
        assert_eq!(e.snd_wnd(), 40_000, "a new ACK updates the window, smaller or not");
        assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(1000, 1000), (2000, 1000)]);
        // Same seq, same ack, smaller window: not an update (wl2 == ack needs a larger window).
        e.on_segment(210 * MS, &ack(1000, 30_000));
        assert_eq!(e.snd_wnd(), 40_000);
        e.on_segment(220 * MS, &ack(1000, 45_000));
        assert_eq!(e.snd_wnd(), 45_000);
        // The peer sends 500 bytes, then a pure ACK after them: wl1 moves to that seq.
        e.on_segment(230 * MS, &Segment { len: 500, ..ack(1000, 45_000) });
        e.on_segment(235 * MS, &Segment { seq: S_ISS + 501, ..ack(1000, 44_000) });
        assert_eq!(e.snd_wnd(), 44_000, "a later seq updates the window");
        // An older segment (seq below wl1) never updates it, even with a newer ACK.
        e.on_segment(240 * MS, &ack(2000, 20_000));
        assert_eq!(e.snd_una(), 2000);
        assert_eq!(e.snd_wnd(), 44_000);
    }

    #[test]
    fn a_receiver_that_sent_nothing_has_no_completion_time() {
        let mut c = Endpoint::new(cfg("reno"), C_ISS);
        let mut s = Endpoint::new(cfg("reno"), S_ISS);
        s.listen();
        c.connect(0);
        c.app_write(1500);
        c.app_close();
        let mut t = 0;
        for _ in 0..20 {
            for seg in drain(&mut c, t) {
                s.on_segment(t + 10 * MS, &seg);
            }
            for seg in drain(&mut s, t + 10 * MS) {
                c.on_segment(t + 20 * MS, &seg);
            }
            t += 20 * MS;
        }
        assert!(s.is_closed() && c.state() == TcpState::TimeWait);
        assert_eq!(s.stats().completion_time, None);
        assert!(c.stats().completion_time.is_some());
    }

    // -------------------------------------------------------------- receiving

    /// Server established at 100 ms with a `buf`-byte receive buffer; its application reads one
    /// byte per second (so nothing is read during a test).
    fn open_slow_receiver(buf: u32) -> Endpoint {
        let mut c = cfg("reno");
        c.recv_buffer = buf;
        let mut r = Endpoint::new(c, S_ISS);
        r.set_read_rate(Some(1.0));
        r.listen();
        r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
        assert_eq!(drain(&mut r, 0).len(), 1);
        r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
        assert_eq!(r.state(), TcpState::Established);
        r
    }

    fn dseg(k: u32, len: u32) -> Segment {
        Segment { seq: C_ISS + 1 + k, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, len, ..Default::default() }
    }

    /// (relative ACK, window) of the one ACK the receiver sends for `seg` at `t`.
    fn ack_for(r: &mut Endpoint, t: Nanos, seg: &Segment) -> (u32, u32) {
        r.on_segment(t, seg);
        let out = drain(r, t);
        assert_eq!(out.len(), 1, "one ACK");
        (out[0].ack.wrapping_sub(C_ISS + 1), out[0].wnd)
    }

    #[test]
    fn receiver_trims_overlap_and_the_window_edge_and_drops_beyond() {
        let mut r = open_slow_receiver(3000);
        assert_eq!(ack_for(&mut r, 200 * MS, &dseg(0, 1000)), (1000, 2000));
        // Starts below rcv_nxt, ends above: the new half is taken.
        assert_eq!(ack_for(&mut r, 210 * MS, &dseg(500, 1000)), (1500, 1500));
        assert_eq!(r.bytes_received(), 1500);
        // Runs past the right edge (3000): trimmed to it.
        assert_eq!(ack_for(&mut r, 220 * MS, &dseg(1500, 2000)), (3000, 0));
        assert_eq!(r.bytes_received(), 3000);
        // A zero-window probe at the edge and a segment far beyond: dropped, ACKed with window 0.
        assert_eq!(ack_for(&mut r, 230 * MS, &dseg(3000, 1000)), (3000, 0));
        assert_eq!(ack_for(&mut r, 240 * MS, &dseg(6000, 1000)), (3000, 0));
        assert_eq!(r.bytes_received(), 3000);
        // An old duplicate is ACKed at once too.
        assert_eq!(ack_for(&mut r, 250 * MS, &dseg(0, 1000)), (3000, 0));
        assert_eq!(r.stats().out_of_order_segments, 0);
    }

    #[test]
    fn receiver_window_updates_after_reads_and_silly_window_avoidance() {
        let mut c = cfg("reno");
        c.recv_buffer = 3000;
        let mut r = Endpoint::new(c, S_ISS);
        r.set_read_rate(Some(10_000.0)); // 10 bytes per ms
        r.listen();
        r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
        drain(&mut r, 0);
        r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
        let t = 200 * MS;
        assert_eq!(ack_for(&mut r, t, &dseg(0, 1000)), (1000, 2000));
        assert_eq!(ack_for(&mut r, t, &dseg(1000, 1000)), (2000, 1000));
        assert_eq!(ack_for(&mut r, t, &dseg(2000, 1000)), (3000, 0));
        // 50 ms later the application has read 500 bytes: a window of 500 is silly (below one
        // MSS and below a quarter of the buffer, 750), so no update is sent and it stays closed.
        r.on_timer(250 * MS);
        assert!(drain(&mut r, 250 * MS).is_empty());
        assert_eq!(ack_for(&mut r, 251 * MS, &dseg(0, 1000)), (3000, 0), "SWS avoidance advertises 0");
        // 1000 bytes read (at 300 ms): 1000 < 2 MSS and 2000 < the 3000-byte buffer: no update.
        r.on_timer(300 * MS);
        assert!(drain(&mut r, 300 * MS).is_empty());
        // 1500 read (at 350 ms): half the buffer opened: a window update at once.
        r.on_timer(350 * MS);
        let out = drain(&mut r, 350 * MS);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].ack.wrapping_sub(C_ISS + 1), out[0].wnd, out[0].len), (3000, 1500, 0));
    }

    #[test]
    fn synack_carries_window_scale_only_when_the_syn_did() {
        for (offer, expect) in [(None, None), (Some(3u8), Some(1u8))] {
            let mut c = cfg("reno");
            c.window_scaling = true;
            c.recv_buffer = 100_000; // scale 1
            let mut r = Endpoint::new(c, S_ISS);
            r.listen();
            r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), wscale: offer, ..Default::default() });
            let out = drain(&mut r, 0);
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].wscale, expect, "peer offered {offer:?}");
        }
        // Our own SYN always offers it.
        let mut c = cfg("reno");
        c.window_scaling = true;
        let mut e = Endpoint::new(c, C_ISS);
        e.connect(0);
        assert_eq!(drain(&mut e, 0)[0].wscale, Some(0));
    }

    /// Retransmits at snd_una on the first duplicate ACK and at snd_una + 2000 on the second,
    /// without touching the timer (so only Karn's rule in `emit` decides about RTT timing).
    #[derive(Debug)]
    struct RetransmitOnDup;

    impl LossRecovery for RetransmitOnDup {
        fn name(&self) -> &'static str {
            "retransmit-on-dup"
        }
        fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
            let at = if ctx.dupacks == 1 { ctx.snd_una } else { ctx.snd_una + 2000 };
            RecoveryOutcome { retransmit: Some(at), ..Default::default() }
        }
        fn on_ack(&mut self, _ctx: &mut RecoveryCtx<'_>, _ack: u64) -> RecoveryOutcome {
            RecoveryOutcome { allow_growth: true, ..Default::default() }
        }
        fn on_timeout(&mut self, _ctx: &mut RecoveryCtx<'_>) {}
        fn in_recovery(&self) -> bool {
            false
        }
    }

    #[test]
    fn karn_cancels_timing_only_for_a_retransmission_of_the_timed_segment() {
        // The BSD tick counter (`reno`) and the fine deadline timer (`newreno`).
        for variant in ["reno", "newreno"] {
            karn_case(variant);
        }
    }

    fn karn_case(variant: &str) {
        let mut c = cfg(variant);
        c.initial_window_segments = 3;
        let cc = tcplab_tcp::cc::build(c.variant.cc, 0);
        let mut e = open_with(Endpoint::with_parts(c, C_ISS, cc, Box::new(RetransmitOnDup)), synack());
        e.app_write(20_000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000), (1000, 1000), (2000, 1000)]);
        e.on_segment(200 * MS, &ack(1000, 65535));
        // Segments 1 and 2 still out; 3 and 4 leave now and segment 3 is timed.
        assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(3000, 1000), (4000, 1000)]);
        assert!(e.rto_timer().timing());
        let sent = e.stats().segments_sent;
        e.on_segment(210 * MS, &ack(1000, 65535));
        assert_eq!(data(&drain(&mut e, 210 * MS)), vec![(1000, 1000)]);
        assert!(e.rto_timer().timing(), "{variant}: segment 1 is not the timed one");
        e.on_segment(220 * MS, &ack(1000, 65535));
        assert_eq!(data(&drain(&mut e, 220 * MS)), vec![(3000, 1000)]);
        assert!(!e.rto_timer().timing(), "{variant}: segment 3 is: its sample is void");
        let st = e.stats();
        assert_eq!((st.segments_sent, st.retransmitted_segments, st.retransmitted_bytes), (sent + 2, 2, 2000));
        // Handshake SYN + ACK, then 5 new and 2 retransmitted data segments.
        assert_eq!((st.segments_sent, st.data_segments_sent, st.bytes_sent), (2 + 5 + 2, 7, 5000));
    }

    #[test]
    fn newreno_timeout_halves_the_flight() {
        let mut e = open_sender(cfg("newreno"), 65535);
        e.app_write(20_000);
        drain(&mut e, 100 * MS);
        for k in 1..=4u32 {
            e.on_segment((100 + 100 * k as u64) * MS, &ack(1000 * k, 65535));
            drain(&mut e, (100 + 100 * k as u64) * MS);
        }
        // snd_una 4000, cwnd 5000: five segments (4000..9000) out.
        assert_eq!((e.snd_una(), e.snd_nxt()), (4000, 9000));
        let d = e.next_timer().unwrap();
        e.on_timer(d);
        assert_eq!(e.stats().coarse_timeouts, 1);
        assert_eq!((e.ssthresh(), e.cwnd()), (2500, 1000), "max(FlightSize/2, 2 MSS)");
        assert_eq!(data(&drain(&mut e, d)), vec![(4000, 1000)]);
        assert_eq!(e.stats().timeout_times, vec![d], "the expiry's time is recorded");
    }

    #[test]
    fn window_limit_time_is_charged_to_the_limit_that_bound() {
        let mut c = cfg("reno");
        c.send_buffer = 3000;
        let mut e = open_sender(c, 65535);
        e.app_write(100_000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
        for k in 1..=4u32 {
            let t = (100 + 100 * k as u64) * MS;
            e.on_segment(t, &ack(1000 * k, 65535));
            drain(&mut e, t);
        }
        // 200–400 ms: cwnd (1000, 2000) below the 3000-byte buffer; 400–500 ms: cwnd 3000 =
        // the buffer, which binds.
        assert_eq!(e.stats().limited_ns, [100 * MS, 0, 200 * MS]);
        // The peer's window binds when it is below both.
        let mut c = cfg("reno");
        c.send_buffer = 10_000;
        let mut e = open_sender(c, 1500);
        e.app_write(100_000);
        drain(&mut e, 100 * MS);
        for k in 1..=3u32 {
            let t = (100 + 100 * k as u64) * MS;
            e.on_segment(t, &ack(1000 * k, 1500));
            drain(&mut e, t);
        }
        // At 200 ms cwnd 1000 < window 1500 (cwnd binds); from 300 ms cwnd 2000 > 1500.
        assert_eq!(e.stats().limited_ns, [0, 100 * MS, 100 * MS]);
    }

    #[test]
    fn a_small_write_goes_at_once_when_idle_then_nagle_holds_the_next() {
        let mut e = open_sender(cfg("reno"), 65535);
        e.app_write(500);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 500)], "idle: the whole buffer goes");
        e.app_write(300);
        assert!(drain(&mut e, 110 * MS).is_empty(), "Nagle: a small segment waits for the ACK");
        e.on_segment(200 * MS, &ack(500, 65535));
        assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(500, 300)]);
        // Without Nagle the second small write goes at once.
        let mut c = cfg("reno");
        c.nagle = false;
        let mut f = open_sender(c, 65535);
        f.app_write(500);
        drain(&mut f, 100 * MS);
        f.app_write(300);
        assert_eq!(data(&drain(&mut f, 110 * MS)), vec![(500, 300)]);
    }

    #[test]
    fn a_scaled_window_never_shrinks_the_right_edge() {
        let mut c = cfg("reno");
        c.window_scaling = true;
        c.recv_buffer = 100_000; // receive scale 1: windows in units of 2 bytes
        let mut r = Endpoint::new(c, S_ISS);
        r.set_read_rate(Some(1.0));
        r.listen();
        r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), wscale: Some(0), ..Default::default() });
        let synack = drain(&mut r, 0);
        assert_eq!((synack[0].wnd, synack[0].wscale), (65535, Some(1)), "the SYN-ACK's window is never scaled");
        r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
        assert_eq!(ack_for(&mut r, 200 * MS, &dseg(0, 1000)), (1000, 99_000));
        // 999 more bytes: 98 001 free, an odd number; rounding down to the scale would pull the
        // advertised right edge (1000 + 99 000) back by a byte, so it is rounded up instead.
        assert_eq!(ack_for(&mut r, 210 * MS, &dseg(1000, 999)), (1999, 98_002));
    }

    #[test]
    fn a_zero_read_rate_means_an_application_that_reads_at_once() {
        let mut r = open_slow_receiver(3000);
        r.set_read_rate(Some(0.0));
        assert_eq!(ack_for(&mut r, 200 * MS, &dseg(0, 1000)), (1000, 3000));
        assert_eq!(r.stats().bytes_delivered_to_app, 1000);
        assert_eq!(r.next_timer(), None);
    }

    #[test]
    fn only_sack_recoveries_report_a_pipe() {
        let mut e = open_sender(cfg("reno"), 65535);
        e.app_write(10_000);
        drain(&mut e, 100 * MS);
        e.on_segment(200 * MS, &ack(1000, 65535));
        drain(&mut e, 200 * MS);
        for i in 0..3 {
            e.on_segment((210 + i) * MS, &ack(1000, 65535));
        }
        assert!(e.in_recovery());
        assert_eq!(e.pipe_bytes(), None);
    }

    // -------------------------------------------------------------- survivors of sample B

    /// A receiver with a 3000-byte buffer whose application reads 10 bytes per ms, filled at
    /// 200 ms (window 0 advertised).
    fn full_reader(c: EndpointConfig) -> Endpoint {
        let mut r = Endpoint::new(c, S_ISS);
        r.set_read_rate(Some(10_000.0));
        r.listen();
        r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
        drain(&mut r, 0);
        r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
        for k in 0..3 {
            ack_for(&mut r, 200 * MS, &dseg(1000 * k, 1000));
        }
        r
    }

    #[test]
    fn a_rst_inside_the_window_reads_opened_but_not_yet_advertised_is_accepted() {
        // At 250 ms 500 bytes are read: free space 500, not advertised (silly), so the
        // advertised edge is still 3000; the receive window reaches 3500 (RFC 793: rcv_nxt +
        // RCV.WND), and a RST at its last byte, 3499... 3500 with the RFC 5961-lite `+ 1`, is in.
        for (at, aborts) in [(3500u32, true), (3501, false)] {
            let mut c = cfg("reno");
            c.recv_buffer = 3000;
            let mut r = full_reader(c);
            r.on_timer(250 * MS);
            assert!(drain(&mut r, 250 * MS).is_empty());
            r.on_segment(250 * MS, &Segment { seq: C_ISS + 1 + at, flags: Flags::RST, ..Default::default() });
            assert_eq!(r.is_closed(), aborts, "RST at {at}");
        }
    }

    #[test]
    fn ts_recent_is_taken_only_from_a_segment_that_covers_rcv_nxt() {
        let mut c = cfg("reno");
        c.timestamps = true;
        let mut r = Endpoint::new(c, S_ISS);
        r.listen();
        r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ts: Some((100, 0)), ..Default::default() });
        let sa = drain(&mut r, 0);
        let (our_ts, echo) = sa[0].ts.expect("timestamps negotiated");
        assert_eq!(echo, 100);
        r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ts: Some((101, our_ts)), ..Default::default() });
        let mut echo_of = |t: Nanos, seg: Segment| {
            r.on_segment(t, &seg);
            let out = drain(&mut r, t);
            assert_eq!(out.len(), 1, "one ACK");
            out[0].ts.expect("timestamps on every segment").1
        };
        // In order (seq = rcv_nxt): its TSval is echoed.
        assert_eq!(echo_of(200 * MS, Segment { ts: Some((200, 0)), ..dseg(0, 988) }), 200);
        // Out of order (988..1976 missing): not taken (RFC 1323 §4.2.1: SEG.SEQ <= Last.ACK.sent).
        assert_eq!(echo_of(210 * MS, Segment { ts: Some((300, 0)), ..dseg(1976, 988) }), 200);
        // An old duplicate wholly below rcv_nxt: not taken either.
        assert_eq!(echo_of(220 * MS, Segment { ts: Some((350, 0)), ..dseg(0, 500) }), 200);
        // The hole filled: taken.
        assert_eq!(echo_of(230 * MS, Segment { ts: Some((400, 0)), ..dseg(988, 988) }), 400);
    }

    use tcplab_tcp::cc::CcVerdict;

    /// A congestion control that asks for snd_una to be retransmitted on the first duplicate
    /// ACK (what Vegas does when the oldest segment's fine timer has run out).
    #[derive(Debug)]
    struct RetransmitOnFirstDup;

    impl CongestionControl for RetransmitOnFirstDup {
        fn name(&self) -> &'static str {
            "retransmit-on-first-dup"
        }
        fn on_dupack(&mut self, _w: &mut CcWindow, v: &SenderView<'_>) -> CcVerdict {
            if v.dupacks == 1 {
                CcVerdict::RetransmitOldest
            } else {
                CcVerdict::Continue
            }
        }
    }

    #[test]
    fn a_retransmission_a_cc_asks_for_resends_snd_una_at_once() {
        let mut c = cfg("reno");
        c.initial_window_segments = 3;
        let kind = c.variant.recovery;
        let e = Endpoint::with_parts(c, C_ISS, Box::new(RetransmitOnFirstDup), tcplab_tcp::recovery::build(kind));
        let mut e = open_with(e, synack());
        e.app_write(3000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000), (1000, 1000), (2000, 1000)]);
        e.on_segment(200 * MS, &ack(1000, 65535));
        assert!(data(&drain(&mut e, 200 * MS)).is_empty());
        e.on_segment(210 * MS, &ack(1000, 65535));
        assert_eq!(data(&drain(&mut e, 210 * MS)), vec![(1000, 1000)], "the first duplicate: segment 1 again");
        assert_eq!((e.stats().fast_retransmits, e.stats().retransmitted_segments), (1, 1));
        e.on_segment(220 * MS, &ack(1000, 65535));
        assert!(data(&drain(&mut e, 220 * MS)).is_empty());
        // The receiver had segment 1 after all: the ACK of everything comes, the window grows
        // to 2 segments, and segments 3 and 4 leave.
        e.on_segment(300 * MS, &ack(3000, 65535));
        // RTT samples: segment 0 (sent 100 ms, ACKed 200 ms) and segment 2 (sent 100 ms, ACKed
        // 300 ms); segment 1 was sent twice (Karn).
        let st = e.stats();
        assert_eq!((st.rtt_samples, st.rtt_sum, st.min_rtt, st.max_rtt), (2, 300 * MS as u128, Some(100 * MS), Some(200 * MS)));
    }

    #[test]
    fn a_cc_retransmission_overtaken_by_an_ack_is_dropped() {
        let mut c = cfg("reno");
        c.initial_window_segments = 3;
        let kind = c.variant.recovery;
        let e = Endpoint::with_parts(c, C_ISS, Box::new(RetransmitOnFirstDup), tcplab_tcp::recovery::build(kind));
        let mut e = open_with(e, synack());
        e.app_write(3000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000), (1000, 1000), (2000, 1000)]);
        e.on_segment(200 * MS, &ack(1000, 65535));
        drain(&mut e, 200 * MS);
        // The duplicate asks for segment 1 again; before the host polls, the ACK of segment 1
        // arrives: the request is stale and nothing below snd_una leaves.
        e.on_segment(210 * MS, &ack(1000, 65535));
        e.on_segment(210 * MS, &ack(2000, 65535));
        assert!(data(&drain(&mut e, 210 * MS)).is_empty());
        assert_eq!(e.stats().retransmitted_segments, 0);
    }

    #[test]
    fn close_requested_reports_the_applications_close() {
        let mut e = open_sender(cfg("reno"), 65535);
        e.app_write(500);
        assert!(!e.close_requested());
        e.app_close();
        assert!(e.close_requested());
        let out = drain(&mut e, 100 * MS);
        assert_eq!((out.len(), out[0].len, out[0].flags.fin()), (1, 500, true), "the FIN rides on the data");
    }

    #[test]
    fn a_sack_recovery_reports_its_pipe() {
        let mut e = open_with(Endpoint::new(cfg("sack"), C_ISS), sack_synack());
        e.app_write(20_000);
        drain(&mut e, 100 * MS);
        for (i, k) in [1000u32, 2000, 3000].iter().enumerate() {
            e.on_segment((200 + i as u64) * MS, &ack(*k, 65535));
            drain(&mut e, (200 + i as u64) * MS);
        }
        assert_eq!((e.snd_una(), e.snd_nxt(), e.pipe_bytes()), (3000, 7000, None));
        let w = |k: u32| C_ISS + 1 + k;
        for (i, hi) in [5000u32, 6000, 7000].iter().enumerate() {
            let mut b = SackBlocks::default();
            b.push(w(4000), w(*hi));
            e.on_segment((300 + i as u64) * MS, &Segment { sack: b, ..ack(3000, 65535) });
        }
        assert!(e.in_recovery());
        // Fall & Floyd's pipe on entry: 4 segments out less 3 duplicate ACKs = 1 segment; the
        // fast retransmission adds one.
        assert_eq!(e.pipe_bytes(), Some(1000));
        assert_eq!(data(&drain(&mut e, 302 * MS))[0], (3000, 1000));
        assert_eq!(e.pipe_bytes(), Some(2000));
    }

    #[test]
    fn buffer_limited_time_with_a_queue_built_up_counts_as_path_time() {
        let mut c = cfg("reno");
        c.send_buffer = 3000;
        let mut e = open_sender(c, 65535);
        e.app_write(100_000);
        drain(&mut e, 100 * MS);
        for k in 1..=4u32 {
            let t = (100 + 100 * k as u64) * MS;
            e.on_segment(t, &ack(1000 * k, 65535));
            drain(&mut e, t);
        }
        // As in `window_limit_time_is_charged_to_the_limit_that_bound`: 100 ms cwnd, 200 ms buffer.
        assert_eq!(e.stats().limited_ns, [100 * MS, 0, 200 * MS]);
        // Every RTT so far was 100 ms. The next ACKs come 1 s late: the smoothed RTT rises above
        // 1.5 × 100 ms with the first of them (each ACK charges the interval before it and picks
        // the limit for the next one before its own sample is taken, so 500–1600 ms is still
        // buffer time); from then on the buffer-bound time is charged to the path (index 2).
        e.on_segment(1500 * MS, &ack(5000, 65535));
        drain(&mut e, 1500 * MS);
        e.on_segment(1600 * MS, &ack(6000, 65535));
        drain(&mut e, 1600 * MS);
        assert_eq!(e.stats().limited_ns, [1200 * MS, 0, 200 * MS]);
        e.on_segment(1700 * MS, &ack(7000, 65535));
        assert_eq!(e.stats().limited_ns, [1200 * MS, 0, 300 * MS]);
    }

    #[test]
    fn an_out_of_order_fin_alone_adds_no_sack_block() {
        let mut r = Endpoint::new(cfg("sack"), S_ISS);
        r.listen();
        r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), sack_ok: true, ..Default::default() });
        drain(&mut r, 0);
        r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
        let w = |k: u32| C_ISS + 1 + k;
        // 0..1000 and 2000..3000 lost; 1000..2000 arrives, then the FIN alone at 3000.
        r.on_segment(200 * MS, &dseg(1000, 1000));
        let out = drain(&mut r, 200 * MS);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].ack, out[0].sack.as_slice()), (w(0), &[(w(1000), w(2000))][..]));
        r.on_segment(210 * MS, &Segment { flags: Flags::ACK | Flags::FIN, ..dseg(3000, 0) });
        let out = drain(&mut r, 210 * MS);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].ack, out[0].sack.as_slice()), (w(0), &[(w(1000), w(2000))][..]), "no block for the FIN");
        assert_eq!(r.stats().out_of_order_segments, 2);
    }

    #[test]
    fn an_aborted_endpoint_sends_nothing_more() {
        let mut e = open_sender(cfg("reno"), 65535);
        e.app_write(5000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
        // An ACK opens the window to two segments, and a RST arrives in the same instant,
        // before the host polls: the data the ACK let go must not leave a closed endpoint.
        e.on_segment(200 * MS, &ack(1000, 65535));
        e.on_segment(200 * MS, &Segment { seq: S_ISS + 1, flags: Flags::RST, ..Default::default() });
        assert!(e.is_closed());
        assert!(drain(&mut e, 200 * MS).is_empty());
        e.on_timer(5 * SEC);
        assert!(drain(&mut e, 5 * SEC).is_empty(), "no retransmission after the abort");
    }

    #[test]
    fn a_fin_alone_after_an_idle_period_goes_at_once_and_keeps_cwnd() {
        let mut e = open_sender(cfg("newreno"), 65535);
        e.app_write(3000);
        assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
        e.on_segment(200 * MS, &ack(1000, 65535));
        assert_eq!(data(&drain(&mut e, 200 * MS)), vec![(1000, 1000), (2000, 1000)]);
        e.on_segment(300 * MS, &ack(3000, 65535));
        assert!(drain(&mut e, 300 * MS).is_empty());
        assert_eq!(e.cwnd(), 3000);
        // Ten seconds idle (far beyond the RTO), then the application closes: the FIN alone
        // leaves at once, and the idle restart (which applies to data) leaves cwnd alone.
        e.app_close();
        let out = drain(&mut e, 10 * SEC);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].seq, out[0].len, out[0].flags.fin()), (C_ISS + 1 + 3000, 0, true));
        assert_eq!((e.cwnd(), e.stats().idle_restarts), (3000, 0));
    }

    #[test]
    fn a_delayed_ack_receiver_with_a_buffer_above_64k_unscaled_still_delays() {
        let mut c = cfg("reno");
        c.recv_buffer = 200_000;
        c.window_scaling = false;
        c.ack_policy = tcplab_tcp::config::AckPolicy::BsdDelayed;
        let mut r = Endpoint::new(c, S_ISS);
        r.set_read_rate(Some(1.0)); // one byte per second: no read changes the window here
        r.listen();
        r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
        let sa = drain(&mut r, 0);
        assert_eq!(sa[0].wnd, 65535, "the unscaled window is capped");
        r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
        // 199 000 bytes free but 65 535 advertised: no read happened, so no window update; the
        // first segment's ACK is delayed, the second's goes at once (ACK every other segment).
        r.on_segment(200 * MS, &dseg(0, 1000));
        assert!(drain(&mut r, 200 * MS).is_empty(), "delayed");
        r.on_segment(210 * MS, &dseg(1000, 1000));
        let out = drain(&mut r, 210 * MS);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].ack, out[0].wnd), (C_ISS + 1 + 2000, 65535));
        r.on_segment(220 * MS, &dseg(2000, 1000));
        assert!(drain(&mut r, 220 * MS).is_empty(), "delayed again");
    }

    // -------------------------------------------------------------- survivors of sample D
    // (written after sample D's run, from its survivors: they do not move D's score)

    #[test]
    fn slow_ticks_are_traced_only_once_established_with_data_out() {
        let mut c = cfg("reno");
        c.trace = true;
        let mut e = Endpoint::new(c, C_ISS);
        e.connect(0);
        assert_eq!(drain(&mut e, 0).len(), 1);
        // The SYN waits two ticks for its answer: the handshake is not data outstanding.
        e.on_slow_tick(500 * MS);
        e.on_slow_tick(1000 * MS);
        assert_eq!(e.state(), TcpState::SynSent);
        e.on_segment(1100 * MS, &synack());
        drain(&mut e, 1100 * MS);
        e.app_write(1000);
        assert_eq!(data(&drain(&mut e, 1100 * MS)), vec![(0, 1000)]);
        e.on_slow_tick(1500 * MS);
        assert_eq!(e.take_trace().rows_of(tcplab_tcp::TraceKind::SlowTick).count(), 1, "only the tick with segment 0 out");
    }

    #[test]
    fn a_fin_on_an_ack_is_no_pure_ack_for_lites_header_prediction() {
        // Lite's prediction needs cwnd >= snd_wnd: a 1000-byte peer window and cwnd 1000. The
        // fast path skips the window opening of the slow path.
        for (flags, cwnd, state) in [(Flags::ACK, 1000, TcpState::Established), (Flags::ACK | Flags::FIN, 2000, TcpState::CloseWait)] {
            let mut e = open_sender(cfg("lite"), 1000);
            e.app_write(3000);
            assert_eq!(data(&drain(&mut e, 100 * MS)), vec![(0, 1000)]);
            e.on_segment(200 * MS, &Segment { flags, ..ack(1000, 1000) });
            assert_eq!((e.snd_una(), e.cwnd(), e.state()), (1000, cwnd, state), "{flags:?}");
        }
    }
}
