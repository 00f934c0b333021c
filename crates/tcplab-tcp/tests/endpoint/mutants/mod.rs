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
use tcplab_tcp::opt64::Opt64;
use tcplab_tcp::rto::{BsdRto, RetransmitTimer, SLOW_TICK};
use tcplab_tcp::sack::SackReceiver;
use tcplab_tcp::sendlog::SendLog;
use tcplab_tcp::testing::SendLogHooks;
use tcplab_tcp::{Flags, SackBlocks, Segment, MS, SEC};


mod endpoint;
mod recovery;

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
    // The owner keeps the deadline (`d`): the BSD model never sets it.
    let mut t = RetransmitTimer::new(TimerModel::Bsd);
    let mut d = Opt64::NONE;
    assert!(t.is_bsd() && !t.running(d) && !t.timing());
    assert_eq!(d.get(), None);
    assert_eq!(t.rto_ns(), 12 * SLOW_TICK);
    assert_eq!(SLOW_TICK, 500 * MS);
    assert_eq!(tcplab_tcp::rto::FAST_TICK, 200 * MS);
    t.arm(&mut d, 0);
    assert!(t.running(d));
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
    t.restart(&mut d, 0);
    for k in 1..9 {
        assert!(!t.on_slow_tick(), "tick {k}");
    }
    assert!(t.on_slow_tick(), "fires on the 9th tick");
    assert!(!t.running(d));
    assert!(!t.on_slow_tick(), "a stopped timer does not fire again");
    assert!(t.backoff());
    assert_eq!((t.backoffs(), t.rto_ns()), (1, 18 * SLOW_TICK));
    t.arm(&mut d, 0);
    t.stop(&mut d);
    assert!(!t.running(d));
    // An expiry does not advance t_rtt; timing restarts at 1.
    t.start_timing(0, 10);
    t.restart(&mut d, 0);
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
    let mut d = Opt64::NONE;
    assert!(!t.is_bsd() && !t.running(d));
    assert!(!t.on_slow_tick());
    t.arm(&mut d, 100 * MS);
    assert_eq!(d.get(), Some(1100 * MS));
    t.arm(&mut d, 500 * MS);
    assert_eq!(d.get(), Some(1100 * MS), "arm leaves a running timer alone");
    t.start_timing(100 * MS, 1);
    t.start_timing(150 * MS, 1001);
    assert_eq!(t.on_ack(400 * MS, 1), None, "ack == timed seq does not cover it");
    assert_eq!(t.on_ack(400 * MS, 2), Some(300 * MS));
    assert_eq!(t.srtt_ns(), 300 * MS);
    // RFC 6298: rto = srtt + max(G, 4·rttvar) = 300 + 600.
    assert_eq!(t.rto_ns(), 900 * MS);
    t.restart(&mut d, 400 * MS);
    assert_eq!(d.get(), Some(1300 * MS));
    assert!(t.backoff());
    assert_eq!((t.backoffs(), t.rto_ns()), (1, 1800 * MS));
    t.stop(&mut d);
    assert!(!t.running(d) && d.get().is_none());
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
