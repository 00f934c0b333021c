//! The TCP endpoint: connection state machine (RFC 793 §3.9 event processing, organised like
//! 4.4BSD tcp_input.c / tcp_output.c / tcp_timer.c) composed from the seams in `cc`, `recovery`,
//! `rto` and `ack_policy`.
//!
//! Deliberate deviations from 4.4BSD, all documented where they happen:
//! * no payload bytes — segments carry lengths only; the receiver tracks ranges;
//! * TIME_WAIT is a deadline of `time_wait` ns (not 2·MSL in slow ticks), seed 000 §2.2.2;
//! * the persist timer is folded into the retransmit timer: with a zero peer window and nothing
//!   in flight the retransmit timer runs, and its expiry sends a one-byte window probe without
//!   touching cwnd (BSD has a separate TCPT_PERSIST with its own backoff);
//! * no urgent data, no PUSH semantics, no keepalive, no simultaneous open, no RST generation
//!   beyond answering segments for a closed connection;
//! * receiver silly-window avoidance as tcp_output.c (`win < hiwat/4 && win < maxseg → 0`,
//!   never shrink the advertised right edge); sender SWS and Nagle as tcp_output.c.

use crate::ack_policy::{AckState, Arrival};
use crate::cc::{self, AckSample, CcVerdict, CcWindow, CongestionControl, LossEvent, SenderView};
use crate::config::{EndpointConfig, TimerModel};
use crate::ecn::EcnState;
use crate::recovery::{self, LossRecovery, RecoveryCtx, RecoveryOutcome, SackSend, SendGate};
use crate::sack::SackReceiver;
use crate::rto::RetransmitTimer;
use crate::sendlog::SendLog;
use crate::seq::unwrap;
use crate::trace::{Row, Trace, TraceKind};
use crate::{ConnStats, Flags, Nanos, Segment, MS};

/// RFC 793 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TcpState {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// 4.4BSD TCP_MAXWIN.
const TCP_MAXWIN: u32 = 65535;
/// MSS assumed when the peer sends no MSS option (RFC 1122 §4.2.2.6).
const DEFAULT_PEER_MSS: u32 = 536;

/// The loss-recovery module's context (a macro for the same reason as `sender_view!`).
macro_rules! recovery_ctx {
    ($ep:ident, $now:expr) => {
        RecoveryCtx {
            now: $now,
            w: &mut $ep.w,
            cc: &mut *$ep.cc,
            snd_una: $ep.snd_una,
            snd_nxt: $ep.snd_nxt,
            snd_max: $ep.snd_max,
            snd_wnd: $ep.snd_wnd,
            dupacks: $ep.dupacks,
            dupack_threshold: $ep.cfg.dupack_threshold,
            sack: &$ep.sack_in[..$ep.sack_in_n],
        }
    };
}

/// The congestion controller's read-only view of the sender (a macro rather than a method so the
/// borrow of the send log stays disjoint from the `&mut` borrows of the window and controller).
macro_rules! sender_view {
    ($ep:ident, $now:expr, $dupacks:expr) => {
        SenderView {
            now: $now,
            snd_una: $ep.snd_una.saturating_sub(1),
            snd_nxt: $ep.snd_nxt.saturating_sub(1),
            snd_max: $ep.snd_max.saturating_sub(1),
            snd_wnd: $ep.snd_wnd,
            mss: $ep.eff_mss,
            dupacks: $dupacks,
            fine_srtt: $ep.fine_srtt,
            in_recovery: $ep.rec.in_recovery(),
            send_log: &$ep.log,
        }
    };
}

/// A sans-IO TCP endpoint. See the crate documentation.
#[derive(Debug)]
pub struct Endpoint {
    cfg: EndpointConfig,
    state: TcpState,
    iss: u32,
    irs: u32,

    // Negotiated.
    eff_mss: u32,
    ts_ok: bool,
    rcv_scale: u8,
    snd_scale: u8,

    // Sender, in 64-bit offsets of our sequence space (0 = SYN, 1 = first data byte).
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    snd_wnd: u32,
    max_sndwnd: u32,
    snd_wl1: u64,
    snd_wl2: u64,
    w: CcWindow,
    app_written: u64,
    close_requested: bool,
    fin_seq: Option<u64>,
    dupacks: u32,
    pending_retx: Option<u64>,
    force_probe: bool,
    syn_pending: bool,
    timer: RetransmitTimer,
    cc: Box<dyn CongestionControl>,
    rec: Box<dyn LossRecovery>,
    log: SendLog,
    fine_srtt: Option<Nanos>,
    last_send: Option<Nanos>,
    rst_pending: Option<Segment>,

    // Receiver, in 64-bit offsets of the peer's sequence space (0 = peer SYN).
    rcv_nxt: u64,
    rcv_adv: u64,
    reass: Vec<(u64, u64)>,
    peer_fin: Option<u64>,
    fin_rcvd: bool,
    app_read: u64,
    read_rate: Option<f64>,
    read_credit: f64,
    read_last: Nanos,
    read_wake: Option<Nanos>,
    ack: AckState,
    ts_recent: u32,
    hs_sent_at: Option<Nanos>,
    hs_rtt: Option<Nanos>,

    // Clocks and timers.
    tcp_now: u32,
    /// BSD `t_idle`: slow ticks since a segment was last received.
    idle_ticks: u32,
    tw_deadline: Option<Nanos>,

    stats: ConnStats,
    /// Boxed, and only when `cfg.trace`: the columns take 456 bytes inline, which an untraced
    /// endpoint (the default) would carry in its cache footprint for nothing (issue 13).
    trace: Option<Box<Trace>>,

    // ECN (RFC 3168) and SACK (RFC 2018) seams: state lives in `ecn.rs`, `sack.rs` and the
    // SACK recovery modules; the endpoint only carries it between segments.
    ecn: EcnState,
    sack_ok: bool,
    sack_rcv: SackReceiver,
    /// The SACK blocks of the ACK being processed, unwrapped.
    sack_in: [(u64, u64); 4],
    sack_in_n: usize,
    /// Sending under a pipe-governed recovery: the peer's window alone bounds new data.
    gate_open: bool,
}

impl Endpoint {
    /// A closed endpoint with initial send sequence `iss`.
    pub fn new(cfg: EndpointConfig, iss: u32) -> Self {
        let mut rcv_scale = 0u8;
        if cfg.window_scaling {
            while rcv_scale < 14 && (TCP_MAXWIN << rcv_scale) < cfg.recv_buffer {
                rcv_scale += 1;
            }
        }
        let eff = cfg.mss.max(1);
        let w = CcWindow {
            cwnd: cfg.initial_window_segments.max(1) * eff,
            ssthresh: cfg.initial_ssthresh,
            mss: eff,
            max_cwnd: TCP_MAXWIN,
        };
        Endpoint {
            timer: RetransmitTimer::for_config(&cfg),
            cc: cc::build(cfg.variant.cc, cfg.pacing_seed),
            // A CC that owns loss handling (Vegas) brings its own pass-through recovery; Lite its
            // BSD deflation test.
            rec: cc::recovery_for(cfg.variant.cc)
                .or_else(|| cfg.lite.as_ref().map(recovery::lite))
                .unwrap_or_else(|| recovery::build(cfg.variant.recovery)),
            ack: AckState::new(cfg.ack_policy),
            state: TcpState::Closed,
            iss,
            irs: 0,
            eff_mss: eff,
            ts_ok: false,
            rcv_scale,
            snd_scale: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            snd_wnd: 0,
            max_sndwnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            w,
            app_written: 0,
            close_requested: false,
            fin_seq: None,
            dupacks: 0,
            pending_retx: None,
            force_probe: false,
            syn_pending: false,
            log: SendLog::default(),
            fine_srtt: None,
            last_send: None,
            rst_pending: None,
            rcv_nxt: 0,
            rcv_adv: 0,
            reass: Vec::new(),
            peer_fin: None,
            fin_rcvd: false,
            app_read: 0,
            read_rate: None,
            read_credit: 0.0,
            read_last: 0,
            read_wake: None,
            ts_recent: 0,
            hs_sent_at: None,
            hs_rtt: None,
            tcp_now: 1,
            idle_ticks: 0,
            tw_deadline: None,
            stats: ConnStats::default(),
            trace: if cfg.trace { Some(Box::default()) } else { None },
            ecn: EcnState { per_segment: cfg.ecn_per_segment, ..EcnState::default() },
            sack_ok: false,
            sack_rcv: SackReceiver::default(),
            sack_in: [(0, 0); 4],
            sack_in_n: 0,
            gate_open: false,
            cfg,
        }
    }

    /// Like [`Endpoint::new`] but with congestion control and loss recovery supplied by the
    /// caller (for variants defined outside this crate's registry, e.g. Vegas).
    pub fn with_parts(cfg: EndpointConfig, iss: u32, cc: Box<dyn CongestionControl>, rec: Box<dyn LossRecovery>) -> Self {
        let mut e = Endpoint::new(cfg, iss);
        e.cc = cc;
        e.rec = rec;
        e
    }

    // ------------------------------------------------------------------ public API

    /// Active open: a SYN will be emitted by the next `poll_transmit`.
    pub fn connect(&mut self, now: Nanos) {
        if self.state != TcpState::Closed {
            return;
        }
        self.state = TcpState::SynSent;
        self.syn_pending = true;
        self.read_last = now;
    }

    /// Passive open.
    pub fn listen(&mut self) {
        if self.state == TcpState::Closed {
            self.state = TcpState::Listen;
        }
    }

    /// Whether the application has closed its sending side (FIN queued or sent).
    pub fn close_requested(&self) -> bool {
        self.close_requested
    }

    /// The application offers `bytes` more bytes (`u64::MAX` = unlimited).
    pub fn app_write(&mut self, bytes: u64) {
        if self.close_requested {
            return;
        }
        self.app_written = self.app_written.saturating_add(bytes);
    }

    /// Send FIN after all data written so far. With an unlimited writer the stream ends with
    /// what is already in the send buffer.
    pub fn app_close(&mut self) {
        if self.close_requested {
            return;
        }
        if self.app_written == u64::MAX {
            self.app_written = self.send_limit().saturating_sub(1).max(self.snd_max.saturating_sub(1));
        }
        self.close_requested = true;
        // RFC 793 CLOSE: in LISTEN (or SYN-SENT with nothing queued) delete the TCB; otherwise
        // the FIN follows the queued data once established.
        match self.state {
            TcpState::Listen => self.enter_closed(None),
            TcpState::SynSent if self.app_written == 0 => self.enter_closed(None),
            _ => {}
        }
    }

    /// Receiving application's read rate; `None` reads instantly.
    pub fn set_read_rate(&mut self, bytes_per_s: Option<f64>) {
        self.read_rate = bytes_per_s.filter(|r| *r > 0.0 && r.is_finite());
    }

    pub fn state(&self) -> TcpState {
        self.state
    }
    pub fn config(&self) -> &EndpointConfig {
        &self.cfg
    }
    /// The initial send sequence number this endpoint was made with.
    pub fn iss(&self) -> u32 {
        self.iss
    }
    pub fn is_closed(&self) -> bool {
        self.state == TcpState::Closed
    }
    pub fn is_established(&self) -> bool {
        !matches!(self.state, TcpState::Closed | TcpState::Listen | TcpState::SynSent | TcpState::SynReceived)
    }
    /// The peer's FIN has been received.
    pub fn peer_closed(&self) -> bool {
        self.fin_rcvd
    }
    pub fn stats(&self) -> &ConnStats {
        &self.stats
    }
    /// Effective payload bytes per segment (after MSS negotiation and options).
    pub fn mss(&self) -> u32 {
        self.eff_mss
    }
    pub fn cwnd(&self) -> u32 {
        self.w.cwnd
    }
    pub fn ssthresh(&self) -> u32 {
        self.w.ssthresh
    }
    /// Peer's advertised window.
    pub fn snd_wnd(&self) -> u32 {
        self.snd_wnd
    }
    /// Unacknowledged bytes relative to the first data byte.
    pub fn snd_una(&self) -> u64 {
        self.snd_una.saturating_sub(1)
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt.saturating_sub(1)
    }
    pub fn in_recovery(&self) -> bool {
        self.rec.in_recovery()
    }
    /// A SACK recovery's pipe estimate in bytes (None outside SACK recovery).
    pub fn pipe_bytes(&self) -> Option<i64> {
        self.rec.pipe_bytes()
    }
    /// ECN negotiated in the handshake.
    pub fn ecn_ok(&self) -> bool {
        self.ecn.ok
    }
    /// SACK negotiated in the handshake.
    pub fn sack_ok(&self) -> bool {
        self.sack_ok
    }
    /// The retransmission timer (estimator state) — for tests and diagnostics.
    pub fn rto_timer(&self) -> &RetransmitTimer {
        &self.timer
    }
    /// In-order data bytes received from the peer.
    pub fn bytes_received(&self) -> u64 {
        self.rcv_data()
    }
    /// A real-valued congestion window in segments, for CCs that keep one (`scalable-ecn`).
    pub fn real_cwnd(&self) -> Option<f64> {
        self.cc.real_cwnd()
    }
    /// Congestion control, for variants that want to inspect it.
    pub fn congestion_control(&self) -> &dyn CongestionControl {
        &*self.cc
    }

    /// Columnar trace recorded so far (the endpoint keeps recording into a fresh one).
    pub fn take_trace(&mut self) -> Trace {
        self.trace.as_deref_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Earliest absolute time `on_timer` must be called.
    pub fn next_timer(&self) -> Option<Nanos> {
        let mut t: Option<Nanos> = None;
        let mut m = |x: Option<Nanos>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        m(self.timer.deadline());
        m(self.ack.delack_deadline);
        m(self.tw_deadline);
        m(self.read_wake);
        if self.is_established() {
            m(self.cc.next_timer());
        }
        t
    }

    /// Fine-grained timers due: RTO (fine model), delayed ACK (fine model), TIME_WAIT, reads.
    pub fn on_timer(&mut self, now: Nanos) {
        if matches!(self.tw_deadline, Some(d) if d <= now) {
            self.tw_deadline = None;
            if self.state == TcpState::TimeWait {
                self.enter_closed(Some(now));
                return;
            }
        }
        self.drain_reads(now);
        self.ack.on_timer(now);
        if self.is_established() && self.cc.next_timer().is_some_and(|d| d <= now) {
            self.cc.on_timer(now, &mut self.w);
            self.note_cwnd();
        }
        if self.timer.expired(now) {
            self.timer.stop();
            self.rto_expired(now);
        }
    }

    /// BSD 500 ms slow tick (tcp_slowtimo).
    pub fn on_slow_tick(&mut self, now: Nanos) {
        self.tcp_now = self.tcp_now.wrapping_add(1);
        self.idle_ticks = self.idle_ticks.saturating_add(1);
        if !self.timer.is_bsd() || self.state == TcpState::Closed {
            return;
        }
        if self.snd_max > self.snd_una && self.is_established() {
            self.record(now, TraceKind::SlowTick, 0, 0);
        }
        if self.timer.on_slow_tick() {
            self.rto_expired(now);
        }
    }

    /// BSD 200 ms fast tick (tcp_fasttimo): delayed ACKs.
    pub fn on_fast_tick(&mut self, _now: Nanos) {
        if matches!(self.cfg.timer_model, TimerModel::Bsd) {
            self.ack.on_fast_tick();
        }
    }

    // ------------------------------------------------------------------ helpers

    #[inline]
    fn wire_snd(&self, x: u64) -> u32 {
        self.iss.wrapping_add(x as u32)
    }
    #[inline]
    fn wire_rcv(&self, x: u64) -> u32 {
        self.irs.wrapping_add(x as u32)
    }
    #[inline]
    fn rcv_data(&self) -> u64 {
        self.rcv_nxt.saturating_sub(1 + self.fin_rcvd as u64)
    }
    /// One past the last data byte the send buffer lets us send (absolute offset).
    #[inline]
    fn send_limit(&self) -> u64 {
        let acked_data = self.snd_una.saturating_sub(1).min(self.app_written);
        1u64.saturating_add(self.app_written.min(acked_data.saturating_add(self.cfg.send_buffer as u64)))
    }
    #[inline]
    fn fin_abs(&self) -> Option<u64> {
        if self.close_requested {
            Some(1 + self.app_written)
        } else {
            None
        }
    }
    fn data_acked(&self, ack: u64) -> u64 {
        let d = ack.saturating_sub(1);
        match self.fin_seq {
            Some(f) if ack > f => d - 1,
            _ => d,
        }
    }
    fn tsval(&self, now: Nanos) -> u32 {
        match self.cfg.timer_model {
            TimerModel::Bsd => self.tcp_now,
            TimerModel::Fine { .. } | TimerModel::Ns2 { .. } => (now / MS) as u32 + 1,
        }
    }
    fn delack_timeout(&self) -> Option<Nanos> {
        match self.cfg.timer_model {
            TimerModel::Bsd => None,
            TimerModel::Fine { .. } | TimerModel::Ns2 { .. } => Some(self.cfg.delack_timeout),
        }
    }

    #[inline]
    fn record(&mut self, now: Nanos, kind: TraceKind, seq: u64, len: u32) {
        if !self.cfg.trace {
            return;
        }
        let r = Row {
            t: now,
            kind,
            snd_una: self.snd_una.saturating_sub(1),
            snd_nxt: self.snd_nxt.saturating_sub(1),
            cwnd: self.w.cwnd,
            ssthresh: self.w.ssthresh,
            snd_wnd: self.snd_wnd,
            unacked: (self.snd_max - self.snd_una).min(u32::MAX as u64) as u32,
            srtt: self.timer.srtt_ns(),
            rto: self.timer.rto_ns(),
            seq: seq.saturating_sub(1),
            len,
        };
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.push(r);
        }
    }

    fn enter_closed(&mut self, now: Option<Nanos>) {
        self.state = TcpState::Closed;
        self.timer.stop();
        self.tw_deadline = None;
        self.read_wake = None;
        self.ack.delack_deadline = None;
        self.pending_retx = None;
        if self.stats.closed_at.is_none() {
            self.stats.closed_at = now;
        }
    }

    fn abort(&mut self, now: Nanos) {
        self.stats.aborted = true;
        self.enter_closed(Some(now));
    }

    fn note_cwnd(&mut self) {
        if self.w.cwnd > self.stats.max_cwnd_bytes {
            self.stats.max_cwnd_bytes = self.w.cwnd;
        }
    }

    /// Adopt the peer's SYN options.
    fn take_syn_options(&mut self, seg: &Segment) {
        let peer_mss = seg.mss.map(|m| m as u32).unwrap_or(DEFAULT_PEER_MSS);
        self.ts_ok = self.cfg.timestamps && seg.ts.is_some();
        self.ecn.on_syn(self.cfg.ecn, seg);
        self.sack_ok = self.cfg.sack && seg.sack_ok;
        if self.cfg.window_scaling {
            if let Some(s) = seg.wscale {
                self.snd_scale = s.min(14);
            } else {
                self.rcv_scale = 0;
            }
        } else {
            self.rcv_scale = 0;
        }
        // 4.4BSD tcp_mss + tcp_output: payload = min(our, peer) − option bytes.
        let mut mss = self.cfg.mss.min(peer_mss);
        if self.ts_ok {
            mss = mss.saturating_sub(12);
        }
        self.eff_mss = mss.max(1);
        self.w.mss = self.eff_mss;
        if self.cfg.lite.is_some() {
            // 4.4BSD-Lite's tcp_mss keeps t_maxseg = the negotiated MSS; only each segment's
            // payload loses the option bytes (tcp_output.c), so cwnd and the receiver's
            // `2 * t_maxseg` ACK rule count in t_maxseg (seed 001 §3.3).
            self.w.mss = self.cfg.mss.min(peer_mss).max(1);
        }
        self.w.cwnd = self.cfg.initial_window_segments.max(1) * self.w.mss;
        self.w.max_cwnd = TCP_MAXWIN << self.snd_scale;
        if let Some((tsval, _)) = seg.ts {
            self.ts_recent = tsval;
        }
        self.irs = seg.seq;
        self.rcv_nxt = 1;
        self.rcv_adv = 1;
        self.snd_wnd = seg.wnd;
        self.max_sndwnd = seg.wnd;
        self.snd_wl1 = 0;
        self.snd_wl2 = 0;
        self.note_cwnd();
    }

    fn established(&mut self, now: Nanos) {
        self.state = TcpState::Established;
        self.stats.established_at = Some(now);
        if let Some(t0) = self.hs_sent_at.take() {
            self.hs_rtt = Some(now.saturating_sub(t0));
        }
    }

    // ------------------------------------------------------------------ input

    /// Process one arriving segment.
    pub fn on_segment(&mut self, now: Nanos, seg: &Segment) {
        self.stats.segments_received += 1;
        self.idle_ticks = 0;
        self.drain_reads(now);
        match self.state {
            TcpState::Closed => {
                self.answer_with_rst(seg);
                return;
            }
            TcpState::Listen => {
                if seg.flags.rst() {
                    return;
                }
                if seg.flags.ack() {
                    self.answer_with_rst(seg);
                    return;
                }
                if seg.flags.syn() {
                    self.take_syn_options(seg);
                    self.state = TcpState::SynReceived;
                    self.syn_pending = true;
                    self.read_last = now;
                }
                return;
            }
            TcpState::SynSent => {
                let ack_ok = seg.flags.ack() && seg.ack == self.wire_snd(1);
                if seg.flags.ack() && !ack_ok {
                    if !seg.flags.rst() {
                        self.answer_with_rst(seg);
                    }
                    return;
                }
                if seg.flags.rst() {
                    if ack_ok {
                        self.abort(now);
                    }
                    return;
                }
                if seg.flags.syn() && ack_ok {
                    self.take_syn_options(seg);
                    self.snd_una = 1;
                    self.snd_wl1 = 0;
                    self.snd_wl2 = 1;
                    self.timer.on_ack(now, 1);
                    self.timer.stop();
                    self.log.ack(now, 1);
                    self.established(now);
                    self.ack.ack_now = true;
                    if self.close_requested {
                        // fall through to normal output which sends FIN
                    }
                }
                // Simultaneous open is not supported (deliberate).
                return;
            }
            _ => {}
        }

        // Synchronized states.
        let seg_seq = match unwrap(seg.seq, self.wire_rcv(self.rcv_nxt), self.rcv_nxt) {
            Some(s) => s,
            None => {
                self.ack.ack_now = true;
                return;
            }
        };
        if seg.flags.rst() {
            // RFC 5961-lite: accept a RST whose seq is within the window.
            let right = self.rcv_nxt + self.recv_window_free() as u64 + 1;
            if seg_seq >= self.rcv_nxt && seg_seq < right.max(self.rcv_adv + 1) {
                self.abort(now);
            }
            return;
        }
        if seg.flags.syn() {
            // A retransmitted SYN (our SYN-ACK was lost) or SYN-ACK (our ACK was lost):
            // answer with SYN-ACK / ACK again.
            if self.state == TcpState::SynReceived {
                self.syn_pending = true;
            } else {
                self.ack.ack_now = true;
            }
            return;
        }
        if self.state == TcpState::TimeWait {
            // Retransmitted FIN: ACK it and restart the 2MSL wait.
            if seg.len > 0 || seg.flags.fin() {
                self.ack.ack_now = true;
                self.tw_deadline = Some(now + self.cfg.time_wait);
            }
            return;
        }
        self.ecn.on_segment(seg);
        self.stats.ecn_ce_received = self.ecn.ce_received;
        // RFC 1323 ts_recent update (simplified PAWS-free rule of RFC 1323 §4.2.1).
        if let Some((tsval, _)) = seg.ts {
            if self.ts_ok && seg_seq <= self.rcv_nxt && seg_seq + seg.seq_len() as u64 >= self.rcv_nxt {
                self.ts_recent = tsval;
            }
        }
        if !seg.flags.ack() {
            return;
        }
        if self.state == TcpState::SynReceived {
            if seg.ack == self.wire_snd(1) {
                self.snd_una = 1;
                if self.snd_nxt < 1 {
                    self.snd_nxt = 1;
                }
                self.timer.on_ack(now, 1);
                self.timer.stop();
                self.log.ack(now, 1);
                self.established(now);
                self.snd_wnd = seg.wnd;
                self.max_sndwnd = self.max_sndwnd.max(seg.wnd);
                self.snd_wl1 = seg_seq;
                self.snd_wl2 = 1;
            } else {
                self.answer_with_rst(seg);
                return;
            }
        }
        if !self.process_ack(now, seg, seg_seq) {
            return;
        }
        if self.state == TcpState::Closed {
            return;
        }
        self.process_data(now, seg, seg_seq);
        self.maybe_auto_close();
        self.check_persist(now);
    }

    fn answer_with_rst(&mut self, seg: &Segment) {
        if seg.flags.rst() {
            return;
        }
        let (seq, ack, flags) = if seg.flags.ack() {
            (seg.ack, 0, Flags::RST)
        } else {
            (0, seg.seq.wrapping_add(seg.seq_len()), Flags::RST | Flags::ACK)
        };
        self.rst_pending = Some(Segment { seq, ack, flags, ..Default::default() });
    }

    /// ACK processing (tcp_input.c "Ack processing"). Returns false if the segment is to be
    /// dropped after this (ack beyond snd_max → dropafterack).
    fn process_ack(&mut self, now: Nanos, seg: &Segment, seg_seq: u64) -> bool {
        let ack = match unwrap(seg.ack, self.wire_snd(self.snd_una), self.snd_una) {
            Some(a) => a,
            None => return true,
        };
        if ack > self.snd_max {
            self.ack.ack_now = true;
            return false;
        }
        self.take_sack_blocks(now, seg, ack);
        let mut ecn_reduced = false;
        if seg.flags.contains(Flags::ECE) && ack >= self.snd_una {
            ecn_reduced = self.on_ecn_echo(now, ack);
        }
        let old_wnd = self.snd_wnd;
        let old_una = self.snd_una;
        if ack <= self.snd_una {
            // Duplicate-ACK test of 4.4BSD tcp_input.c: no data, same window, ack == snd_una,
            // retransmit timer running (here: data outstanding and the window open — in BSD a
            // zero-window probe runs the persist timer, not REXMT, so its ACKs are not counted).
            if seg.len == 0 && seg.wnd == self.snd_wnd && !seg.flags.fin() {
                if self.snd_max <= self.snd_una || ack != self.snd_una || self.snd_wnd == 0 {
                    self.dupacks = 0;
                } else {
                    self.dupacks += 1;
                    self.stats.dupacks_received += 1;
                    self.record(now, TraceKind::DupAck, ack, 0);
                    // Planted fault (crate::faults): the threshold dup ACK is ignored.
                    if !(self.cfg.faults.no_fast_retransmit && self.dupacks >= self.cfg.dupack_threshold) {
                        self.on_dupack(now);
                    }
                }
            } else {
                self.dupacks = 0;
            }
        } else {
            let predicted = self.on_new_ack(now, seg, seg_seq, ack, ecn_reduced);
            if self.state == TcpState::Closed {
                return false;
            }
            if predicted {
                // BSD's fast path returns here (the window is unchanged: tiwin == snd_wnd).
                return true;
            }
        }
        // Window update (RFC 793 / tcp_input.c step 6).
        if self.snd_wl1 < seg_seq || (self.snd_wl1 == seg_seq && (self.snd_wl2 < ack || (self.snd_wl2 == ack && seg.wnd > self.snd_wnd))) {
            self.snd_wnd = seg.wnd;
            self.snd_wl1 = seg_seq;
            self.snd_wl2 = ack;
            self.max_sndwnd = self.max_sndwnd.max(seg.wnd);
            if old_wnd == 0 && seg.wnd > 0 && ack == self.snd_una && self.snd_nxt > self.snd_una {
                // The window re-opened: what we sent into the closed window (a probe) was
                // dropped by the receiver; resend from snd_una (tcp_output.c pulls snd_nxt back
                // when the window shrinks to zero).
                self.snd_nxt = self.snd_una;
            }
        }
        // Seed 001 §3.5 (Lite.6), "inserted after the window information is updated":
        // `if (acked >= 3*t_maxseg && (snd_cwnd - (snd_nxt - snd_una)) > 3*t_maxseg)` cut cwnd to
        // (snd_nxt - snd_una) + 3*t_maxseg (crate::lite::limit_big_ack).
        if ack > old_una && self.cfg.lite.is_some_and(|l| l.big_ack) {
            crate::lite::limit_big_ack(&mut self.w, ack - old_una, self.snd_nxt - self.snd_una);
        }
        true
    }

    fn on_dupack(&mut self, now: Nanos) {
        let view = sender_view!(self, now, self.dupacks);
        let verdict = self.cc.on_dupack(&mut self.w, &view);
        if verdict == CcVerdict::RetransmitOldest {
            self.cc_retransmit(now);
        }
        let mut ctx = recovery_ctx!(self, now);
        let out = self.rec.on_dupack(&mut ctx);
        if out.entered || out.fast_retransmit {
            self.ecn.on_loss_reduction(self.snd_max);
        }
        self.apply_recovery(now, out);
        self.note_cwnd();
    }

    /// A CC asked for the oldest segment to be retransmitted now (Vegas). Counted and traced as
    /// a fast retransmit; like BSD's fast retransmit the coarse timer is stopped so that it
    /// re-arms when the retransmission leaves.
    fn cc_retransmit(&mut self, now: Nanos) {
        if self.snd_max > self.snd_una {
            self.pending_retx = Some(self.snd_una);
            self.timer.cancel_timing();
            self.timer.stop();
            self.stats.fast_retransmits += 1;
            self.record(now, TraceKind::FastRetransmit, self.snd_una, 0);
        }
    }

    fn apply_recovery(&mut self, now: Nanos, out: RecoveryOutcome) {
        if out.restart_timer {
            self.timer.stop();
            self.timer.cancel_timing();
        }
        if out.fast_retransmit {
            self.stats.fast_retransmits += 1;
            self.record(now, TraceKind::FastRetransmit, self.snd_una, 0);
        }
        if out.entered {
            self.record(now, TraceKind::RecoveryEnter, self.snd_una, 0);
        }
        if let Some(n) = out.set_snd_nxt {
            self.snd_nxt = n;
            self.pending_retx = None;
        }
        if let Some(s) = out.retransmit {
            if s < self.snd_max {
                self.pending_retx = Some(s);
            }
        }
        if out.exited {
            self.record(now, TraceKind::RecoveryExit, self.snd_una, 0);
        }
        if out.restart_timer && self.snd_max > self.snd_una && out.retransmit.is_none() && out.set_snd_nxt.is_none() {
            self.timer.restart(now);
        }
    }

    /// Unwrap the ACK's SACK blocks into `sack_in`, count them and D-SACKs (RFC 2883 §4: the
    /// first block lies below the cumulative ACK or inside the second block), trace them.
    fn take_sack_blocks(&mut self, now: Nanos, seg: &Segment, ack: u64) {
        self.sack_in_n = 0;
        if !self.sack_ok || seg.sack.is_empty() {
            return;
        }
        self.stats.sack_acks_received += 1;
        for &(l, r) in seg.sack.as_slice() {
            let (Some(a), Some(b)) = (unwrap(l, self.wire_snd(self.snd_una), self.snd_una), unwrap(r, self.wire_snd(self.snd_una), self.snd_una)) else { continue };
            if b > a && b <= self.snd_max {
                self.sack_in[self.sack_in_n] = (a, b);
                self.sack_in_n += 1;
            }
        }
        if self.sack_in_n > 0 {
            let (a, b) = self.sack_in[0];
            let inside_second = self.sack_in_n > 1 && self.sack_in[1].0 <= a && b <= self.sack_in[1].1;
            if b <= ack || inside_second {
                self.stats.dsacks_received += 1;
            }
        }
        if self.cfg.trace {
            for i in 0..self.sack_in_n {
                let (a, b) = self.sack_in[i];
                self.record(now, TraceKind::Sack, a, (b - a).min(u32::MAX as u64) as u32);
            }
        }
    }

    /// An ACK with ECE (RFC 3168 §6.1.2, ns-2 `TcpAgent::ecn`). Returns true if the window was
    /// reduced.
    fn on_ecn_echo(&mut self, now: Nanos, ack: u64) -> bool {
        let reduce = self.ecn.on_ece(ack, self.snd_max, self.rec.in_recovery());
        self.stats.ecn_ece_received = self.ecn.ece_acks;
        if !reduce {
            return false;
        }
        self.stats.ecn_reactions = self.ecn.reactions;
        let flight = (self.snd_max - self.snd_una).min(u32::MAX as u64) as u32;
        self.w.ssthresh = self.cc.ssthresh(&self.w, flight, self.snd_wnd, LossEvent::Ecn);
        self.w.cwnd = self.w.ssthresh;
        self.record(now, TraceKind::EcnReduce, ack, 0);
        true
    }

    /// Which limit binds the usable window now (0 send buffer, 1 advertised window, 2 cwnd or a
    /// full path), and
    /// charge the time since the previous new ACK to the limit that bound then. Only while the
    /// application has more to send than the send buffer holds (a finished writer is limited by
    /// nothing).
    fn account_window_limit(&mut self, now: Nanos) {
        if let Some((since, which)) = self.stats.limit_since {
            self.stats.limited_ns[which as usize] += now.saturating_sub(since);
        }
        let acked_data = self.snd_una.saturating_sub(1).min(self.app_written);
        let backlog = self.app_written.saturating_sub(acked_data);
        let sndbuf = self.cfg.send_buffer;
        let which = if backlog < sndbuf as u64 {
            None
        } else if sndbuf <= self.snd_wnd.min(self.w.cwnd) {
            Some(0)
        } else if self.snd_wnd < self.w.cwnd {
            Some(1)
        } else {
            Some(2)
        };
        // A buffer that binds while a queue has built up (smoothed RTT above 1.5 × the minimum)
        // is not what holds the flow back: the path is full. Count that time as cwnd/path time.
        let queued = matches!((self.fine_srtt, self.stats.min_rtt), (Some(s), Some(m)) if s > m + m / 2);
        let which = which.map(|w| if w < 2 && queued { 2 } else { w });
        self.stats.limit_since = which.map(|w| (now, w));
    }

    /// An ACK that advances snd_una. Returns true if Lite's header prediction took it.
    fn on_new_ack(&mut self, now: Nanos, seg: &Segment, seg_seq: u64, ack: u64, ecn_reduced: bool) -> bool {
        self.account_window_limit(now);
        // 4.4BSD-Lite header prediction of a pure ACK (crate::lite::predicts_pure_ack):
        // `ti_len == 0 && SEQ_GT(ti_ack, snd_una) && SEQ_LEQ(ti_ack, snd_max) && snd_cwnd >=
        // snd_wnd` [Lite.1: `&& t_dupacks < tcprexmtthresh`], seed 001 §3.1. The fast path takes
        // the RTT sample and drops the acked data, but skips recovery (no deflation), the window
        // opening and the `t_dupacks = 0` of the slow path.
        let predicted = self.cfg.lite.is_some_and(|l| {
            crate::lite::predicts_pure_ack(
                &crate::lite::PredictionInput {
                    established: self.state == TcpState::Established,
                    only_ack_flag: !seg.flags.syn() && !seg.flags.fin() && !seg.flags.rst(),
                    in_sequence: seg_seq == self.rcv_nxt,
                    seg_len: seg.len,
                    seg_wnd: seg.wnd,
                    snd_wnd: self.snd_wnd,
                    snd_una: self.snd_una,
                    snd_nxt: self.snd_nxt,
                    snd_max: self.snd_max,
                    ack,
                    cwnd: self.w.cwnd,
                    dupacks: self.dupacks,
                    dupack_threshold: self.cfg.dupack_threshold,
                },
                l.header_prediction,
            )
        });

        // RTT: timestamps if negotiated (4.4BSD: rtt = tcp_now − ts_ecr + 1), else the timed
        // segment (Karn's rule: timing was cancelled by any retransmission).
        let mut rtt = None;
        if let (true, Some((_, ecr))) = (self.ts_ok, seg.ts) {
            if ecr != 0 {
                let ticks = self.tsval(now).wrapping_sub(ecr) as i32 + 1;
                let ns = match self.cfg.timer_model {
                    TimerModel::Bsd => (ticks.max(1) as u64 - 1) * crate::rto::SLOW_TICK,
                    TimerModel::Fine { .. } | TimerModel::Ns2 { .. } => (ticks.max(1) as u64 - 1) * MS,
                };
                self.timer.sample_external(ns, ticks);
                rtt = Some(ns);
            }
        }
        if rtt.is_none() {
            rtt = self.timer.on_ack(now, ack);
        }
        let fine_rtt = self.log.ack(now, ack);
        if let Some(r) = fine_rtt {
            self.stats.min_rtt = Some(self.stats.min_rtt.map_or(r, |m| m.min(r)));
            self.stats.rtt_samples += 1;
            self.stats.rtt_sum += r as u128;
            self.stats.max_rtt = Some(self.stats.max_rtt.map_or(r, |m| m.max(r)));
            self.fine_srtt = Some(match self.fine_srtt {
                None => r,
                Some(s) => s - s / 8 + r / 8,
            });
        }

        let prev_una = self.snd_una;
        let out = if predicted {
            self.stats.predicted_acks += 1;
            RecoveryOutcome::default()
        } else {
            let mut ctx = recovery_ctx!(self, now);
            let out = self.rec.on_ack(&mut ctx, ack);
            self.dupacks = 0;
            out
        };

        let newly_data = self.data_acked(ack) - self.data_acked(prev_una);
        self.snd_una = ack;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        if matches!(self.pending_retx, Some(p) if p < ack) {
            self.pending_retx = None;
        }
        // tcp_input.c: stop the timer when everything is acknowledged, else restart it.
        if ack == self.snd_max {
            self.timer.stop();
        } else {
            self.timer.restart(now);
        }
        // Vegas-style checks on non-duplicate ACKs: after snd_una moved, so the send log's
        // oldest record is the segment now at the head; before the window grows.
        let verdict = {
            let view = sender_view!(self, now, self.dupacks);
            self.cc.on_ack_check(&mut self.w, &view)
        };
        if out.allow_growth && !ecn_reduced {
            let sample = AckSample {
                now,
                bytes_acked: newly_data.min(u32::MAX as u64) as u32,
                rtt,
                fine_rtt,
                in_slow_start: self.w.in_slow_start(),
                snd_una: self.snd_una.saturating_sub(1),
                snd_nxt: self.snd_nxt.saturating_sub(1),
                flight: (self.snd_max - self.snd_una).min(u32::MAX as u64) as u32,
                ece: seg.flags.contains(Flags::ECE),
            };
            let view = sender_view!(self, now, 0);
            let cam = self.trace.as_deref_mut().map(|t| &mut t.cam);
            let before = self.w.cwnd;
            self.cc.on_ack(&mut self.w, &sample, &view, cam);
            if self.cfg.faults.double_ca && !sample.in_slow_start && self.w.cwnd > before {
                // Planted fault (crate::faults): the congestion-avoidance increase, twice.
                self.w.cwnd = self.w.cwnd.saturating_add(self.w.cwnd - before).min(self.w.max_cwnd.max(before));
            }
        }
        self.apply_recovery(now, out);
        if out.retransmit.is_some() && out.restart_timer {
            // NewReno: first partial ACK resets the timer (RFC 6582 §3.2 step 5).
            self.timer.restart(now);
        }
        if verdict == CcVerdict::RetransmitOldest {
            self.cc_retransmit(now);
        }
        self.note_cwnd();
        self.stats.bytes_acked = self.data_acked(self.snd_una);
        if self.stats.completion_time.is_none() && self.app_written != u64::MAX && self.app_written > 0 && self.stats.bytes_acked >= self.app_written {
            self.stats.completion_time = Some(now);
        }
        self.record(now, TraceKind::Ack, ack, newly_data.min(u32::MAX as u64) as u32);

        // Our FIN acknowledged?
        if let Some(f) = self.fin_seq {
            if ack > f {
                match self.state {
                    TcpState::FinWait1 => self.state = TcpState::FinWait2,
                    TcpState::Closing => {
                        self.state = TcpState::TimeWait;
                        self.tw_deadline = Some(now + self.cfg.time_wait);
                        self.timer.stop();
                    }
                    TcpState::LastAck => self.enter_closed(Some(now)),
                    _ => {}
                }
            }
        }
        predicted
    }

    fn recv_window_free(&self) -> u32 {
        let unread = self.rcv_data().saturating_sub(self.app_read);
        (self.cfg.recv_buffer as u64).saturating_sub(unread) as u32
    }

    /// Segment text and FIN (tcp_input.c "Process the segment text").
    fn process_data(&mut self, now: Nanos, seg: &Segment, seg_seq: u64) {
        let mut len = seg.len as u64;
        let mut fin = seg.flags.fin();
        if len == 0 && !fin {
            return;
        }
        if self.fin_rcvd {
            // Peer already closed: a retransmission; re-ACK.
            self.ack.ack_now = true;
            return;
        }
        let mut s = seg_seq;
        let seg_end = s + len + fin as u64;
        // tcp_output.c: `adv >= 2 * t_maxseg` (w.mss is t_maxseg; see take_syn_options).
        let threshold = self.cfg.delack_bytes.map(|b| b as u64).unwrap_or(2 * self.w.mss as u64);
        let dto = self.delack_timeout();
        let rtt = self.hs_rtt;
        if seg_end <= self.rcv_nxt {
            if self.sack_ok && self.cfg.dsack && len > 0 {
                self.sack_rcv.on_duplicate(s, s + len);
            }
            // Entirely old (tcp_input.c: duplicate data → ACK now).
            self.ack.on_data(now, Arrival::Unacceptable, seg.len, threshold, self.cfg.recv_buffer, rtt, dto);
            return;
        }
        if s < self.rcv_nxt {
            len -= self.rcv_nxt - s;
            s = self.rcv_nxt;
        }
        let right = self.rcv_adv.max(self.rcv_nxt + self.recv_window_free() as u64);
        if len > 0 && s >= right {
            // Beyond the window (a zero-window probe): drop, ACK with our window.
            self.ack.on_data(now, Arrival::Unacceptable, seg.len, threshold, self.cfg.recv_buffer, rtt, dto);
            return;
        }
        if s + len > right {
            len = right - s;
            fin = false;
        }
        self.record(now, TraceKind::Recv, s, len as u32);
        let arrival;
        if s == self.rcv_nxt {
            let had_hole = !self.reass.is_empty();
            let before = self.rcv_nxt;
            self.rcv_nxt += len;
            while let Some(&(a, b)) = self.reass.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.reass.remove(0);
            }
            arrival = if had_hole { Arrival::FillsHole { advance: self.rcv_nxt - before } } else { Arrival::InOrder { len: len as u32 } };
            if had_hole && self.sack_ok {
                self.sack_rcv.on_advance(self.rcv_nxt);
            }
        } else {
            self.stats.out_of_order_segments += 1;
            if len > 0 {
                if self.sack_ok && self.cfg.dsack && self.reass.iter().any(|&(a, b)| a <= s && s + len <= b) {
                    self.sack_rcv.on_duplicate(s, s + len);
                }
                self.reass_insert(s, s + len);
                if self.sack_ok {
                    let i = self.reass.partition_point(|r| r.1 < s);
                    self.sack_rcv.on_out_of_order(self.reass[i]);
                }
            }
            arrival = Arrival::OutOfOrder;
        }
        if fin {
            self.peer_fin = Some(s + len);
        }
        if self.read_rate.is_none() {
            self.app_read = self.rcv_data();
            self.stats.bytes_delivered_to_app = self.app_read;
        }
        self.ack.on_data(now, arrival, len as u32, threshold, self.cfg.recv_buffer, rtt, dto);
        if let Some(f) = self.peer_fin {
            if f == self.rcv_nxt && !self.fin_rcvd {
                self.rcv_nxt += 1;
                self.fin_rcvd = true;
                self.ack.ack_now = true;
                match self.state {
                    TcpState::Established | TcpState::SynReceived => self.state = TcpState::CloseWait,
                    TcpState::FinWait1 => self.state = TcpState::Closing,
                    TcpState::FinWait2 => {
                        self.state = TcpState::TimeWait;
                        self.tw_deadline = Some(now + self.cfg.time_wait);
                        self.timer.stop();
                    }
                    _ => {}
                }
            }
        }
        self.schedule_read(now);
    }

    fn reass_insert(&mut self, a: u64, b: u64) {
        let i = self.reass.partition_point(|r| r.1 < a);
        let mut na = a;
        let mut nb = b;
        let mut j = i;
        while j < self.reass.len() && self.reass[j].0 <= nb {
            na = na.min(self.reass[j].0);
            nb = nb.max(self.reass[j].1);
            j += 1;
        }
        self.reass.splice(i..j, std::iter::once((na, nb)));
    }

    fn maybe_auto_close(&mut self) {
        if self.cfg.close_on_peer_fin && self.fin_rcvd && self.state == TcpState::CloseWait && self.app_read >= self.rcv_data() {
            self.app_close();
        }
    }

    /// Zero window with data waiting and nothing in flight: run the (persist) timer.
    fn check_persist(&mut self, now: Nanos) {
        if self.snd_wnd == 0 && self.snd_max == self.snd_una && self.send_limit() > self.snd_una && !self.timer.running() && self.is_established() {
            self.timer.restart(now);
        }
    }

    // ------------------------------------------------------------------ receive application

    fn drain_reads(&mut self, now: Nanos) {
        let rate = match self.read_rate {
            None => {
                self.app_read = self.rcv_data();
                self.stats.bytes_delivered_to_app = self.app_read;
                self.read_last = now;
                return;
            }
            Some(r) => r,
        };
        if now <= self.read_last {
            return;
        }
        let unread = self.rcv_data() - self.app_read;
        let before_free = self.recv_window_free();
        if unread == 0 {
            self.read_credit = 0.0;
        } else {
            self.read_credit += (now - self.read_last) as f64 * rate / 1e9;
            let n = (self.read_credit.floor() as u64).min(unread);
            self.app_read += n;
            self.read_credit -= n as f64;
            if self.app_read == self.rcv_data() {
                self.read_credit = 0.0;
            }
        }
        self.read_last = now;
        self.stats.bytes_delivered_to_app = self.app_read;
        if self.read_wake.is_some_and(|t| t <= now) {
            self.read_wake = None;
        }
        // tcp_output.c window-update rule after the application read.
        if self.recv_window_free() > before_free && self.is_established() && !self.fin_rcvd {
            let win = self.recv_window_free() as u64;
            let adv = win.saturating_sub(self.rcv_adv.saturating_sub(self.rcv_nxt));
            if adv >= 2 * self.eff_mss as u64 || 2 * adv >= self.cfg.recv_buffer as u64 {
                self.ack.ack_now = true;
            }
        }
        self.schedule_read(now);
        self.maybe_auto_close();
    }

    fn schedule_read(&mut self, now: Nanos) {
        let Some(rate) = self.read_rate else { return };
        let unread = self.rcv_data() - self.app_read;
        if unread == 0 {
            self.read_wake = None;
            return;
        }
        let need = unread.min(self.eff_mss as u64) as f64 - self.read_credit;
        let dt = if need <= 0.0 { 1 } else { (need / rate * 1e9).ceil() as u64 };
        self.read_wake = Some(now + dt.max(1));
    }

    // ------------------------------------------------------------------ timers

    fn rto_expired(&mut self, now: Nanos) {
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => {
                if !self.timer.backoff() {
                    self.abort(now);
                    return;
                }
                self.syn_pending = true;
                self.hs_sent_at = None;
                return;
            }
            TcpState::Closed | TcpState::Listen | TcpState::TimeWait => return,
            _ => {}
        }
        let data_waiting = self.send_limit() > self.snd_una || (self.fin_abs().is_some() && self.fin_seq.is_none_or(|f| self.snd_una <= f));
        if self.snd_wnd == 0 && (self.snd_max > self.snd_una || data_waiting) {
            // Persist: probe the zero window; cwnd untouched (tcp_timer.c TCPT_PERSIST).
            let _ = self.timer.backoff();
            self.snd_nxt = self.snd_una;
            self.force_probe = true;
            self.timer.restart(now);
            return;
        }
        if self.snd_max <= self.snd_una {
            return;
        }
        // Retransmission timeout (tcp_timer.c TCPT_REXMT).
        self.stats.coarse_timeouts += 1;
        if self.stats.timeout_times.len() < crate::stats::MAX_TIMEOUT_TIMES {
            if self.stats.timeout_times.capacity() == 0 {
                // Room for 32 at the first timeout, then doubling up to the cap: reserving all
                // 100 up front cost 800 bytes per endpoint that ever timed out (6.1 MB of heap
                // in the 4,096-flow dumbbell, where most see a few); past 32 the rare growth is
                // amortized, and `no_alloc` at 4,096 flows counts the same 200 (issue 13).
                self.stats.timeout_times.reserve_exact(32);
            }
            self.stats.timeout_times.push(now);
        }
        if let Some(last) = self.last_send {
            self.stats.largest_timeout_gap = self.stats.largest_timeout_gap.max(now.saturating_sub(last));
        }
        if self.cfg.faults.no_rto_backoff {
            // Planted fault (crate::faults): no backoff; Karn's rule still drops the timing.
            self.timer.cancel_timing();
        } else if !self.timer.backoff() {
            self.abort(now);
            return;
        }
        let flight = (self.snd_max - self.snd_una).min(u32::MAX as u64) as u32;
        self.w.ssthresh = self.cc.ssthresh(&self.w, flight, self.snd_wnd, LossEvent::Timeout);
        self.w.cwnd = self.w.mss;
        self.cc.on_timeout(&mut self.w);
        {
            let mut ctx = recovery_ctx!(self, now);
            self.rec.on_timeout(&mut ctx);
        }
        self.dupacks = 0;
        self.snd_nxt = self.snd_una;
        self.pending_retx = None;
        self.ecn.on_loss_reduction(self.snd_max);
        self.timer.restart(now);
        self.record(now, TraceKind::Timeout, self.snd_una, 0);
    }

    // ------------------------------------------------------------------ output

    /// Advertised window (tcp_output.c): receiver SWS avoidance, never shrink, quantise to the
    /// scale factor, cap at TCP_MAXWIN << rcv_scale.
    fn adv_window(&mut self, syn: bool) -> u32 {
        let mut win = self.recv_window_free();
        if win < self.cfg.recv_buffer / 4 && win < self.eff_mss {
            win = 0;
        }
        let edge = self.rcv_adv.saturating_sub(self.rcv_nxt).min(u32::MAX as u64) as u32;
        win = win.max(edge);
        let (cap, scale) = if syn { (TCP_MAXWIN, 0) } else { (TCP_MAXWIN << self.rcv_scale, self.rcv_scale) };
        win = win.min(cap);
        // Round the right edge up so it never shrinks; round the value down to the scale.
        let q = (win >> scale) << scale;
        let q = if q < edge { ((edge + (1 << scale) - 1) >> scale) << scale } else { q };
        let q = q.min(cap);
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + q as u64);
        q
    }

    fn base_segment(&mut self, now: Nanos, seq: u64) -> Segment {
        let wnd = self.adv_window(false);
        Segment {
            seq: self.wire_snd(seq),
            ack: self.wire_rcv(self.rcv_nxt),
            flags: Flags::ACK,
            wnd,
            len: 0,
            mss: None,
            wscale: None,
            ts: if self.ts_ok { Some((self.tsval(now), self.ts_recent)) } else { None },
            ce: false,
            ect: false,
            sack_ok: false,
            sack: Default::default(),
        }
    }

    fn after_send(&mut self, now: Nanos, seg: &Segment) {
        self.stats.segments_sent += 1;
        if seg.flags.ack() {
            self.ack.on_ack_sent();
        }
        let _ = now;
    }

    /// Next segment to send, if any. Call until `None` after every input.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Segment> {
        if let Some(r) = self.rst_pending.take() {
            self.stats.segments_sent += 1;
            return Some(r);
        }
        match self.state {
            TcpState::Closed | TcpState::Listen => return None,
            TcpState::SynSent | TcpState::SynReceived => {
                if !self.syn_pending {
                    return None;
                }
                self.syn_pending = false;
                let synack = self.state == TcpState::SynReceived;
                let wnd = self.adv_window(true);
                let seg = Segment {
                    seq: self.iss,
                    ack: if synack { self.wire_rcv(self.rcv_nxt) } else { 0 },
                    flags: (if synack { Flags::SYN | Flags::ACK } else { Flags::SYN }) | EcnState::syn_flags(self.cfg.ecn, synack, self.ecn.ok),
                    wnd,
                    len: 0,
                    mss: Some(self.cfg.mss.min(u16::MAX as u32) as u16),
                    wscale: if self.cfg.window_scaling && (!synack || self.rcv_scale > 0 || self.snd_scale > 0) { Some(self.rcv_scale) } else { None },
                    ts: if self.cfg.timestamps && (!synack || self.ts_ok) { Some((self.tsval(now), if synack { self.ts_recent } else { 0 })) } else { None },
                    ce: false,
                    ect: false,
                    sack_ok: self.cfg.sack && (!synack || self.sack_ok),
                    sack: Default::default(),
                };
                if self.snd_max == 0 {
                    self.timer.start_timing(now, 0);
                    self.hs_sent_at = Some(now);
                } else {
                    self.timer.cancel_timing();
                }
                self.snd_nxt = 1;
                self.snd_max = 1;
                self.timer.restart(now);
                self.after_send(now, &seg);
                return Some(seg);
            }
            TcpState::TimeWait => {
                if self.ack.ack_now {
                    return Some(self.pure_ack(now));
                }
                return None;
            }
            _ => {}
        }
        // Forced single-segment retransmission (fast retransmit, partial ACK, CC request).
        if let Some(s) = self.pending_retx.take() {
            if s >= self.snd_una && s < self.snd_max {
                let limit = self.send_limit();
                let len = limit.saturating_sub(s).min(self.eff_mss as u64) as u32;
                let fin = self.fin_abs() == Some(s + len as u64) && self.fin_seq.is_some();
                if len > 0 || fin {
                    return Some(self.emit(now, s, len, fin, true));
                }
            }
        }
        if self.rec.governs_sending() {
            if let Some(seg) = self.send_under_pipe(now) {
                return Some(seg);
            }
        } else if let Some(seg) = self.try_send_data(now) {
            return Some(seg);
        }
        if self.ack.ack_now {
            return Some(self.pure_ack(now));
        }
        None
    }

    /// SACK recovery: the recovery module picks a hole to retransmit or lets new data go
    /// (Fall & Floyd 1996 §3; RFC 6675 §5 `NextSeg`).
    fn send_under_pipe(&mut self, now: Nanos) -> Option<Segment> {
        let g = SendGate {
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_max,
            cwnd: self.w.cwnd,
            mss: self.eff_mss,
            snd_wnd: self.snd_wnd,
            send_limit: self.send_limit(),
        };
        match self.rec.next_send(&g) {
            SackSend::Retransmit { seq, len } => {
                let limit = self.send_limit();
                let len = (len as u64).min(limit.saturating_sub(seq)) as u32;
                let fin = self.fin_abs() == Some(seq + len as u64) && self.fin_seq.is_some();
                if len > 0 || fin {
                    return Some(self.emit(now, seq, len, fin, true));
                }
                None
            }
            SackSend::NewData => {
                self.gate_open = true;
                let seg = self.try_send_data(now);
                self.gate_open = false;
                seg
            }
            SackSend::Blocked => None,
        }
    }

    fn pure_ack(&mut self, now: Nanos) -> Segment {
        let mut seg = self.base_segment(now, self.snd_max);
        if self.sack_ok && self.sack_rcv.has_blocks() {
            // RFC 2018 §3: 4 blocks fit the 40 option bytes, 3 beside timestamps.
            let max = if self.ts_ok { 3 } else { 4 };
            let irs = self.irs;
            seg.sack = self.sack_rcv.blocks(max, |x| irs.wrapping_add(x as u32));
        }
        self.ecn.decorate(&mut seg, false);
        self.stats.acks_sent += 1;
        self.after_send(now, &seg);
        if self.cfg.trace {
            let r = self.rcv_nxt;
            self.record(now, TraceKind::AckSent, r, 0);
        }
        seg
    }

    /// tcp_output.c: how much may be sent from snd_nxt now, with sender SWS avoidance and Nagle.
    fn try_send_data(&mut self, now: Nanos) -> Option<Segment> {
        let limit = self.send_limit();
        let fin_abs = self.fin_abs();
        let win = if self.gate_open { self.snd_wnd as u64 } else { self.w.cwnd.min(self.snd_wnd) as u64 };
        let off = self.snd_nxt - self.snd_una;
        let avail = limit.saturating_sub(self.snd_nxt);
        let usable = win.saturating_sub(off);
        let mut len = avail.min(self.eff_mss as u64).min(usable);
        let mut forced = false;
        if self.force_probe {
            self.force_probe = false;
            if len == 0 && avail > 0 {
                len = 1;
                forced = true;
            }
        }
        // FIN may ride on the segment that carries the last byte, or go alone once all data is
        // sent (and again after a go-back-N that rewound snd_nxt to it).
        let fin = match fin_abs {
            Some(f) => self.snd_nxt + len == f && limit == f,
            None => false,
        };
        if len == 0 && !fin {
            return None;
        }
        // A pacing CC (seed 003 §3.3) releases one segment when its timer has fired.
        if !forced && self.cc.pacing_release().is_some_and(|t| t > now) {
            return None;
        }
        if len > 0 && self.snd_max == self.snd_una && self.snd_nxt == self.snd_max && self.restart_after_idle(now) {
            // The window may have shrunk to one segment: recompute what may go now.
            len = len.min(self.w.cwnd.min(self.snd_wnd) as u64);
            if len == 0 {
                return None;
            }
        }
        if len > 0 && len < self.eff_mss as u64 && !forced {
            let idle = self.snd_max == self.snd_una;
            let buffered = limit - self.snd_una; // unacked + unsent bytes in the buffer
            let takes_all = len + off >= buffered.saturating_sub(0) && self.snd_nxt + len == limit;
            let ok = ((idle || !self.cfg.nagle) && takes_all)
                || len >= (self.max_sndwnd / 2) as u64 && self.max_sndwnd > 0
                || self.snd_nxt < self.snd_max;
            if !ok {
                return None;
            }
        }
        let s = self.snd_nxt;
        Some(self.emit(now, s, len as u32, fin, false))
    }

    /// 4.4BSD tcp_output.c: `idle = (snd_max == snd_una); if (idle && t_idle >= t_rxtcur)
    /// snd_cwnd = t_maxseg` — after an idle period of at least the RTO no ACKs are left to clock
    /// data out, so slow start again. BSD measures `t_idle` in slow ticks since the last segment
    /// received; the fine timer model uses RFC 5681 §4.1 (time since the last send exceeds the RTO,
    /// restart window = min(initial window, cwnd)). Returns whether cwnd was reduced.
    fn restart_after_idle(&mut self, now: Nanos) -> bool {
        if !self.cfg.idle_restart || self.snd_max <= 1 {
            return false;
        }
        let idle_long = match &self.timer {
            RetransmitTimer::Bsd { est, .. } => self.idle_ticks as i64 >= est.rxtcur as i64,
            RetransmitTimer::Fine { .. } => {
                let since = now.saturating_sub(self.last_send.unwrap_or(now));
                since > self.timer.rto_ns()
            }
        };
        let restart = self.cfg.initial_window_segments.max(1) * self.eff_mss;
        if idle_long && self.w.cwnd > restart {
            self.w.cwnd = restart;
            self.stats.idle_restarts += 1;
            self.note_cwnd();
            return true;
        }
        false
    }

    fn emit(&mut self, now: Nanos, s: u64, len: u32, fin: bool, single: bool) -> Segment {
        let end = s + len as u64 + fin as u64;
        let is_retx = s < self.snd_max;
        let mut seg = self.base_segment(now, s);
        seg.len = len;
        if fin {
            seg.flags |= Flags::FIN;
            self.fin_seq = Some(end - 1);
            match self.state {
                TcpState::Established | TcpState::SynReceived => self.state = TcpState::FinWait1,
                TcpState::CloseWait => self.state = TcpState::LastAck,
                _ => {}
            }
        }
        self.ecn.decorate(&mut seg, len > 0 && !is_retx);
        if len > 0 {
            self.rec.on_transmit(s, len, is_retx);
        }
        if !single || s <= self.snd_nxt {
            self.snd_nxt = self.snd_nxt.max(end);
        }
        if !single {
            self.snd_nxt = end;
        }
        self.snd_max = self.snd_max.max(end);
        if len > 0 {
            self.stats.data_segments_sent += 1;
            if self.stats.first_send.is_none() {
                self.stats.first_send = Some(now);
            }
        }
        if is_retx {
            self.stats.retransmitted_segments += 1;
            self.stats.retransmitted_bytes += len as u64;
            // Karn: a retransmission of the timed segment invalidates its sample.
            if let RetransmitTimer::Bsd { t_rtt, rtseq, .. } = &self.timer {
                if *t_rtt != 0 && *rtseq >= s && *rtseq < end {
                    self.timer.cancel_timing();
                }
            } else if let RetransmitTimer::Fine { timing: Some((ts, _)), .. } = &self.timer {
                if *ts >= s && *ts < end {
                    self.timer.cancel_timing();
                }
            }
        } else {
            self.stats.bytes_sent += len as u64;
            // tcp_output.c: time this segment if nothing is being timed.
            self.timer.start_timing(now, s);
        }
        // tcp_output.c: start the retransmit timer if it is not running.
        if !self.timer.running() && self.snd_max > self.snd_una {
            self.timer.restart(now);
        }
        self.log.on_send(now, s, end);
        self.cc.on_send(now, s.saturating_sub(1), len, is_retx);
        self.last_send = Some(now);
        self.record(now, if is_retx { TraceKind::Retransmit } else { TraceKind::Send }, s, len);
        self.after_send(now, &seg);
        seg
    }
}

#[allow(dead_code)]
fn _assert_send() {
    fn f<T: Send>() {}
    f::<Endpoint>();
}
