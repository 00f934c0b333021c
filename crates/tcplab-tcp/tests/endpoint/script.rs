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


/// A packet script against one endpoint, smoltcp style (`recv!`, `send!`, `recv_nothing!` at
/// `time N`): set the clock with [`Script::at`] (milliseconds), feed segments or timers, and
/// state exactly what the endpoint sends at that instant.
///
/// ```ignore
/// let mut s = Script::sender(cfg("reno"), 65535); // handshake done at 100 ms
/// s.write(100_000).expect_send(&[(0, 1000)]);
/// s.at(200).recv(ack(1000, 65535)).expect_cwnd(2000).expect_send(&[(1000, 1000), (2000, 1000)]);
/// s.at(201).dupack(1000).expect_nothing();
/// ```
///
/// Every expectation drains what the endpoint has to send *now*; a failure points at the script
/// line (`#[track_caller]`) and names the script time.
pub(crate) struct Script {
    pub(crate) e: Endpoint,
    pub(crate) now: Nanos,
}

impl Script {
    /// The client of [`open_sender`], established at 100 ms, peer window `peer_wnd`.
    #[track_caller]
    pub(crate) fn sender(c: EndpointConfig, peer_wnd: u32) -> Script {
        Script { e: open_sender(c, peer_wnd), now: 100 * MS }
    }

    /// The server of [`open_receiver`], established at 100 ms.
    #[track_caller]
    pub(crate) fn receiver(c: EndpointConfig) -> Script {
        Script { e: open_receiver(c), now: 100 * MS }
    }

    /// Move the clock to `ms` milliseconds (never backwards).
    #[track_caller]
    pub(crate) fn at(&mut self, ms: u64) -> &mut Self {
        self.at_ns(ms * MS)
    }

    /// Move the clock to `t` nanoseconds (never backwards).
    #[track_caller]
    pub(crate) fn at_ns(&mut self, t: Nanos) -> &mut Self {
        assert!(t >= self.now, "script time goes back: {t} < {}", self.now);
        self.now = t;
        self
    }

    /// The application writes `bytes`.
    pub(crate) fn write(&mut self, bytes: u64) -> &mut Self {
        self.e.app_write(bytes);
        self
    }

    /// A segment arrives now.
    pub(crate) fn recv(&mut self, seg: Segment) -> &mut Self {
        self.e.on_segment(self.now, &seg);
        self
    }

    /// The peer acknowledges `k` data bytes (window 65535); repeated, a duplicate ACK.
    pub(crate) fn ack(&mut self, k: u32) -> &mut Self {
        self.recv(ack(k, 65535))
    }

    /// `n` duplicate ACKs for `k` arrive 1 ms apart from now (the clock ends on the last), each
    /// answered by nothing.
    #[track_caller]
    pub(crate) fn dupacks_silent(&mut self, k: u32, n: u64) -> &mut Self {
        let t0 = self.now;
        for i in 0..n {
            self.at_ns(t0 + i * MS).ack(k).expect_nothing();
        }
        self
    }

    /// The endpoint's next fine-grained deadline is `ms`; move the clock there and fire it.
    #[track_caller]
    pub(crate) fn timer_at(&mut self, ms: u64) -> &mut Self {
        assert_eq!(self.e.next_timer(), Some(ms * MS), "next timer at script time {} ms", self.now / MS);
        self.at(ms);
        self.e.on_timer(self.now);
        self
    }

    /// A BSD 200 ms fast tick now (delayed ACKs).
    pub(crate) fn fast_tick(&mut self) -> &mut Self {
        self.e.on_fast_tick(self.now);
        self
    }

    /// A BSD 500 ms slow tick now.
    pub(crate) fn slow_tick(&mut self) -> &mut Self {
        self.e.on_slow_tick(self.now);
        self
    }

    /// Exactly these data segments (relative seq, len) leave now (pure ACKs not counted).
    #[track_caller]
    pub(crate) fn expect_send(&mut self, expected: &[(u32, u32)]) -> &mut Self {
        let out = drain(&mut self.e, self.now);
        assert_eq!(data(&out), expected, "data sent at {} ms", self.now / MS);
        self
    }

    /// Exactly these ACK numbers (relative to the client's data) leave now.
    #[track_caller]
    pub(crate) fn expect_acks(&mut self, expected: &[u32]) -> &mut Self {
        let out = drain(&mut self.e, self.now);
        assert_eq!(acks_of(&out), expected, "ACKs sent at {} ms", self.now / MS);
        self
    }

    /// Nothing at all leaves now.
    #[track_caller]
    pub(crate) fn expect_nothing(&mut self) -> &mut Self {
        let out = drain(&mut self.e, self.now);
        assert!(out.is_empty(), "expected nothing at {} ms, sent {out:?}", self.now / MS);
        self
    }

    #[track_caller]
    pub(crate) fn expect_cwnd(&mut self, cwnd: u32) -> &mut Self {
        assert_eq!(self.e.cwnd(), cwnd, "cwnd at {} ms", self.now / MS);
        self
    }

    /// (ssthresh, cwnd) now.
    #[track_caller]
    pub(crate) fn expect_window(&mut self, ssthresh: u32, cwnd: u32) -> &mut Self {
        assert_eq!((self.e.ssthresh(), self.e.cwnd()), (ssthresh, cwnd), "(ssthresh, cwnd) at {} ms", self.now / MS);
        self
    }

    #[track_caller]
    pub(crate) fn expect_recovery(&mut self, in_recovery: bool) -> &mut Self {
        assert_eq!(self.e.in_recovery(), in_recovery, "in recovery at {} ms", self.now / MS);
        self
    }

    /// Any other check on the endpoint at this point of the script.
    #[track_caller]
    pub(crate) fn check(&mut self, f: impl FnOnce(&Endpoint)) -> &mut Self {
        f(&self.e);
        self
    }
}
