//! Conventions and helpers shared by the scripted exchanges: the endpoint under test is the
//! client with ISS `C_ISS`; the scripted peer uses ISS `S_ISS`. MSS is 1000 payload bytes so
//! sequence arithmetic is readable: data byte k has wire sequence `C_ISS + 1 + k`.

use tcplab_tcp::config::{EndpointConfig, TimerModel};
use tcplab_tcp::rto::RetransmitTimer;
use tcplab_tcp::*;

pub(crate) const C_ISS: u32 = 1000;
pub(crate) const S_ISS: u32 = 5000;
pub(crate) const SYNACK: Flags = Flags(Flags::SYN.0 | Flags::ACK.0);

pub(crate) fn cfg(variant: &str) -> EndpointConfig {
    let mut c = EndpointConfig::for_variant(variant).unwrap();
    c.mss = 1000;
    c.trace = true;
    c
}

/// NewReno with a 200 ms minimum RTO so the scripted numbers stay small.
pub(crate) fn cfg_fine200() -> EndpointConfig {
    let mut c = cfg("newreno");
    c.timer_model = TimerModel::Fine { granularity: MS, min_rto: 200 * MS, initial_rto: SEC };
    c
}

pub(crate) fn drain(e: &mut Endpoint, now: Nanos) -> Vec<Segment> {
    let mut v = Vec::new();
    while let Some(s) = e.poll_transmit(now) {
        v.push(s);
        assert!(v.len() < 10_000, "poll_transmit never returns None");
    }
    v
}

/// (relative seq, len) of data segments.
pub(crate) fn data(v: &[Segment]) -> Vec<(u32, u32)> {
    v.iter().filter(|s| s.len > 0).map(|s| (s.seq.wrapping_sub(C_ISS + 1), s.len)).collect()
}

/// A peer ACK acknowledging `k` data bytes of the client.
pub(crate) fn ack(k: u32, wnd: u32) -> Segment {
    Segment { seq: S_ISS + 1, ack: C_ISS + 1 + k, flags: Flags::ACK, wnd, ..Default::default() }
}

/// Client established at t = 100 ms: SYN at 0, SYN-ACK (MSS 1000, window `peer_wnd`) at 100 ms.
pub(crate) fn open_sender(c: EndpointConfig, peer_wnd: u32) -> Endpoint {
    let mut e = Endpoint::new(c, C_ISS);
    e.connect(0);
    let out = drain(&mut e, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::SYN);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: peer_wnd, mss: Some(1000), ..Default::default() });
    let out = drain(&mut e, 100 * MS);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, Flags::ACK);
    assert_eq!(e.state(), TcpState::Established);
    e
}

/// Server (receiver) established at t = 100 ms.
pub(crate) fn open_receiver(c: EndpointConfig) -> Endpoint {
    let mut r = Endpoint::new(c, S_ISS);
    r.listen();
    r.on_segment(0, &Segment { seq: C_ISS, flags: Flags::SYN, wnd: 65535, mss: Some(1000), ..Default::default() });
    let out = drain(&mut r, 0);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, SYNACK);
    r.on_segment(100 * MS, &Segment { seq: C_ISS + 1, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, ..Default::default() });
    assert!(drain(&mut r, 100 * MS).is_empty());
    assert_eq!(r.state(), TcpState::Established);
    r
}

/// A client data segment of `len` bytes at data offset `k`.
pub(crate) fn dseg(k: u32, len: u32) -> Segment {
    Segment { seq: C_ISS + 1 + k, ack: S_ISS + 1, flags: Flags::ACK, wnd: 65535, len, ..Default::default() }
}

pub(crate) fn acks_of(v: &[Segment]) -> Vec<u32> {
    v.iter().map(|s| s.ack.wrapping_sub(C_ISS + 1)).collect()
}

pub(crate) fn bsd_est(e: &Endpoint) -> tcplab_tcp::rto::BsdRto {
    match e.rto_timer() {
        RetransmitTimer::Bsd { est, .. } => *est,
        _ => panic!("not bsd"),
    }
}

