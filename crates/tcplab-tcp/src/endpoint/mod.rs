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
//!
//! Rooms (each an `impl Endpoint` block over the one state struct defined here, as BSD splits
//! one `tcpcb` over tcp_input.c / tcp_output.c / tcp_timer.c):
//! * `mod.rs` — the state, construction, the public API (application calls, accessors) and
//!   small helpers (wire sequence numbers, trace rows, SYN options);
//! * [`input`] — segment arrival: state-machine checks, ACK processing, recovery, ECN, SACK;
//! * [`data`] — the receive side: window, reassembly, FIN, application reads;
//! * [`timers`] — `next_timer`/`on_timer`, the BSD ticks, retransmission timeout;
//! * [`output`] — `poll_transmit` and building segments;
//! * [`pacing`] — the rate-pacing release clock (Linux internal pacing) for CCs that set a rate;
//! * [`sndbuf`] — Linux's send-buffer accounting and writer (opt-in, `send_buffer_linux`).

use crate::opt64::Opt64;
use crate::ack_policy::AckState;
use crate::cc::{CcWindow, CongestionControl};
use crate::config::{EndpointConfig, TimerModel};
use crate::ecn::EcnState;
use crate::recovery::LossRecovery;
use crate::sack::SackReceiver;
use crate::rto::RetransmitTimer;
use crate::sendlog::SendLog;
use crate::trace::{Row, Trace, TraceKind};
use crate::{ConnStats, Nanos, Segment, MS};
use std::sync::Arc;

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
            sack: match $ep.sack_in.as_deref() { Some(b) => &b[..$ep.sack_in_n as usize], None => &[] },
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
            fine_srtt: $ep.fine_srtt.get(),
            in_recovery: $ep.rec.in_recovery(),
            send_log: &$ep.log,
        }
    };
}

// The rooms of the endpoint, each an `impl Endpoint` block (declared after the macros above,
// which they use).
mod data;
mod input;
mod output;
mod pacing;
pub mod sndbuf;
mod timers;
#[cfg(test)]
mod layout;

/// A sans-IO TCP endpoint. See the crate documentation.
///
/// Field order is deliberate (`repr(C)`; issue 28): at thousands of flows an endpoint is cold
/// when its next segment arrives, and every cache line a segment touches is a miss. The fields
/// are grouped by who touches them (benches/2026-11-29-grow.md): first what every event reads
/// on both sides of a connection (`next_timer`'s deadlines and the reader, the pending-segment
/// slots `poll_transmit` checks, the state and flags); then the receive side (a data segment's
/// and `drain_reads`' fields, the ACK state), which a sender also reads when it builds a
/// segment; then the send side, the ECN state and the retransmit timer, which a receiver reads
/// too (the window update, `try_send_data`'s tests, the timer's estimator); then what only a
/// sender touches (the send log, the RTT clocks); the counters (their hot ones first, see
/// [`ConnStats`]); the handshake and the SACK receiver last. The rare and the large are boxed.
/// No padding: 896 bytes (`endpoint/layout.rs` prints the offsets and holds the size).
#[derive(Debug)]
#[repr(C)]
pub struct Endpoint {
    // Every event, both sides.
    /// Shared between endpoints built from one configuration (192 bytes each otherwise; issue 28).
    cfg: Arc<EndpointConfig>,
    cc: Box<dyn CongestionControl>,
    rec: Box<dyn LossRecovery>,
    tw_deadline: Opt64,
    /// A rate-limited receiving application (allocated by [`Endpoint::set_read_rate`]; absent,
    /// it reads instantly, as every endpoint but a few do: issue 28's idle flows). Read at every
    /// segment and every `next_timer`.
    reader: Option<Box<Reader>>,
    pending_retx: Opt64,
    /// Boxed: a RST is rare, and 76 bytes inline would be paid by every idle endpoint.
    rst_pending: Option<Box<Segment>>,
    /// DCTCP receiver: the immediate ACK of a CE-state change (RFC 8257 §3.2), sent first.
    /// Boxed for the same reason as `rst_pending`.
    ecn_ack_pending: Option<Box<Segment>>,
    /// Boxed, and only when `cfg.trace`: the columns take 456 bytes inline, which an untraced
    /// endpoint (the default) would carry in its cache footprint for nothing (issue 13).
    trace: Option<Box<Trace>>,
    /// Rate pacing's release clock (only moves when the CC sets a pacing rate; `next_timer`
    /// reads its wake-up).
    pacing: pacing::PacingClock,
    // Clocks.
    tcp_now: u32,
    /// BSD `t_idle`: slow ticks since a segment was last received.
    idle_ticks: u32,
    state: TcpState,
    ts_ok: bool,
    rcv_scale: u8,
    snd_scale: u8,
    close_requested: bool,
    force_probe: bool,
    syn_pending: bool,
    fin_rcvd: bool,
    sack_ok: bool,
    /// Sending under a pipe-governed recovery: the peer's window alone bounds new data.
    gate_open: bool,
    /// How many of `sack_in`'s blocks the ACK being processed carried.
    sack_in_n: u8,
    /// Which of the hooks for modern TCP this endpoint calls (decided when it is built).
    hooks: ModernHooks,
    ts_recent: u32,

    // Receiver, in 64-bit offsets of the peer's sequence space (0 = peer SYN).
    rcv_nxt: u64,
    rcv_adv: u64,
    app_read: u64,
    read_last: Nanos,
    peer_fin: Opt64,
    hs_rtt: Opt64,
    irs: u32,
    // Negotiated.
    eff_mss: u32,
    reass: Vec<(u64, u64)>,
    /// The retransmission timer's deadline (the fine models'; the BSD model counts ticks in
    /// `timer`), kept out of `timer` and beside the delayed-ACK deadline: a timer event that
    /// finds nothing due reads the lines of `tw_deadline`, the flags and these two only, not
    /// the enum's tag and deadline 80 bytes apart in two further lines (issue 28).
    rto_deadline: Opt64,
    ack: AckState,

    // Sender, in 64-bit offsets of our sequence space (0 = SYN, 1 = first data byte).
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    app_written: u64,
    /// Linux's send buffer (`cfg.send_buffer_linux`): what the writer has handed to TCP.
    wr: sndbuf::LinuxWriter,
    w: CcWindow,
    iss: u32,
    snd_wnd: u32,
    max_sndwnd: u32,
    dupacks: u32,
    fin_seq: Opt64,
    // ECN (RFC 3168) and SACK (RFC 2018) seams: state lives in `ecn.rs`, `sack.rs` and the
    // SACK recovery modules; the endpoint only carries it between segments.
    ecn: EcnState,
    timer: RetransmitTimer,

    // The sender alone.
    log: SendLog,
    fine_srtt: Opt64,
    last_send: Opt64,
    /// The SACK blocks of the ACK being processed, unwrapped (allocated at the first ACK that
    /// carries any: a connection without SACK never needs it).
    sack_in: Option<Box<[(u64, u64); 4]>>,

    stats: ConnStats,

    // Cold: the handshake, the SACK receiver's block list.
    hs_sent_at: Opt64,
    /// Allocated at the first out-of-order or duplicate segment of a SACK connection (only
    /// those write it): the others, and every idle connection, carry a pointer (issue 28).
    sack_rcv: Option<Box<SackReceiver>>,
}

/// A rate-limited receiving application: its rate (bytes/s; `None` reads instantly), its read
/// credit (bytes) and when it next reads. An endpoint without one behaves as one with
/// `rate: None, credit: 0.0, wake: None`.
#[derive(Clone, Debug)]
struct Reader {
    rate: Option<f64>,
    credit: f64,
    wake: Opt64,
}

/// The hooks added for modern TCP (pacing rate, ACK event, app-limited mark, recovery pipe,
/// the recovery's own timer) are virtual calls on every segment; a classic connection
/// (Reno/NewReno/Vegas/scalable CC, no RACK) would pay them for no-ops, ~7 % of a NewReno
/// dumbbell's instructions (issue 28). They are skipped when the parts are known to leave them
/// at their defaults; parts supplied by a caller ([`Endpoint::with_parts`]) get every hook.
///
/// One byte of flags (three `bool`s would be three, and the endpoint would pad to 912 bytes:
/// issue 28's idle flows).
#[derive(Clone, Copy, Debug)]
struct ModernHooks(u8);

impl ModernHooks {
    /// The CC may override `pacing_rate`, `on_ack_event`, `on_app_limited`,
    /// `on_ack_in_recovery` or `on_recovery_pipe`.
    const CC: u8 = 1;
    /// The loss recovery may keep a timer of its own (`next_timer`/`on_timer`).
    const REC_TIMER: u8 = 2;
    /// The CC may keep a timer of its own (Vegas' and the scalable family's; Reno's never): a
    /// Reno receiver otherwise visits its CC's allocation (a cache miss at thousands of flows)
    /// and makes a virtual call at every `next_timer` (issue 28).
    const CC_TIMER: u8 = 4;
    /// The CC may override the per-segment hooks of the classic trait (`on_send`,
    /// `on_ack_check`, `on_dupack`, `pacing_release`, `ect_on_retransmit`): every CC but Reno's
    /// two, whose no-op defaults a NewReno dumbbell would otherwise call 3–4 times a segment.
    const CC_SEGMENT: u8 = 8;
    /// The loss recovery may govern sending or watch transmissions (`governs_sending`,
    /// `next_send`, `on_transmit`): the SACK and RACK modules; Tahoe, Reno, NewReno, Lite's Reno
    /// and Vegas' pass-through keep the trait's defaults.
    const REC_SEND: u8 = 16;
    const ALL: ModernHooks = ModernHooks(Self::CC | Self::REC_TIMER | Self::CC_TIMER | Self::CC_SEGMENT | Self::REC_SEND);

    fn of(cfg: &EndpointConfig) -> ModernHooks {
        use crate::recovery::RecoveryKind as R;
        let kind = &cfg.variant;
        let own_recovery = !kind.cc.owns_loss_recovery() && cfg.lite.is_none();
        // `CcKind::build` makes a `RenoCc` or a `LinuxRenoCc` of these: neither has a timer nor
        // overrides a per-segment hook.
        let reno = matches!(kind.cc, crate::cc::CcKind::Reno { .. } | crate::cc::CcKind::LinuxReno);
        // `build_parts_seeded`: Vegas' own recovery, Lite's Reno, else the variant's module.
        let rec_send = own_recovery && !matches!(kind.recovery, R::Tahoe | R::Reno | R::NewReno);
        let bit = |on: bool, b: u8| if on { b } else { 0 };
        ModernHooks(
            bit(kind.cc.uses_modern_hooks(), Self::CC)
                | bit(own_recovery && kind.recovery.has_own_timer(), Self::REC_TIMER)
                | bit(!reno, Self::CC_TIMER)
                | bit(!reno, Self::CC_SEGMENT)
                | bit(rec_send, Self::REC_SEND),
        )
    }

    fn cc(self) -> bool {
        self.0 & Self::CC != 0
    }
    fn rec_timer(self) -> bool {
        self.0 & Self::REC_TIMER != 0
    }
    fn cc_timer(self) -> bool {
        self.0 & Self::CC_TIMER != 0
    }
    fn cc_segment(self) -> bool {
        self.0 & Self::CC_SEGMENT != 0
    }
    fn rec_send(self) -> bool {
        self.0 & Self::REC_SEND != 0
    }
}

impl Endpoint {
    /// A closed endpoint with initial send sequence `iss`.
    pub fn new(cfg: EndpointConfig, iss: u32) -> Self {
        let seed = cfg.pacing_seed;
        Endpoint::new_shared(Arc::new(cfg), seed, iss)
    }

    /// Like [`Endpoint::new`] with a configuration shared with other endpoints (a builder that
    /// makes many alike keeps one copy); `pacing_seed` seeds this endpoint's congestion control
    /// in place of `cfg.pacing_seed`.
    pub fn new_shared(cfg: Arc<EndpointConfig>, pacing_seed: u64, iss: u32) -> Self {
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
        let (cc, rec) = cfg.build_parts_seeded(pacing_seed);
        Endpoint {
            timer: RetransmitTimer::for_config(&cfg),
            rto_deadline: Opt64::NONE,
            cc,
            rec,
            ack: AckState::new(cfg.ack_policy).with_quickack(cfg.quickack),
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
            wr: sndbuf::LinuxWriter::default(),
            close_requested: false,
            fin_seq: Opt64::NONE,
            dupacks: 0,
            pending_retx: Opt64::NONE,
            force_probe: false,
            syn_pending: false,
            log: SendLog::default(),
            fine_srtt: Opt64::NONE,
            last_send: Opt64::NONE,
            rst_pending: None,
            ecn_ack_pending: None,
            rcv_nxt: 0,
            rcv_adv: 0,
            reass: Vec::new(),
            peer_fin: Opt64::NONE,
            fin_rcvd: false,
            app_read: 0,
            reader: None,
            read_last: 0,
            ts_recent: 0,
            hs_sent_at: Opt64::NONE,
            hs_rtt: Opt64::NONE,
            tcp_now: 1,
            idle_ticks: 0,
            tw_deadline: Opt64::NONE,
            stats: ConnStats::default(),
            trace: if cfg.trace { Some(Box::default()) } else { None },
            ecn: EcnState { per_segment: cfg.ecn_per_segment, dctcp_echo: cfg.ecn_dctcp_echo, l4s: cfg.ecn_l4s, ..EcnState::default() },
            sack_ok: false,
            sack_rcv: None,
            sack_in: None,
            sack_in_n: 0,
            gate_open: false,
            pacing: pacing::PacingClock::default(),
            hooks: ModernHooks::of(&cfg),
            cfg,
        }
    }

    /// Like [`Endpoint::new`] but with congestion control and loss recovery supplied by the
    /// caller (for variants defined outside this crate's registry, e.g. Vegas).
    pub fn with_parts(cfg: EndpointConfig, iss: u32, cc: Box<dyn CongestionControl>, rec: Box<dyn LossRecovery>) -> Self {
        let mut e = Endpoint::new(cfg, iss);
        e.cc = cc;
        e.rec = rec;
        e.hooks = ModernHooks::ALL;
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
        if self.cfg.send_buffer_linux {
            self.linux_write();
        }
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
        let rate = bytes_per_s.filter(|r| *r > 0.0 && r.is_finite());
        match self.reader.as_deref_mut() {
            Some(rd) => rd.rate = rate,
            None if rate.is_some() => self.reader = Some(Box::new(Reader { rate, credit: 0.0, wake: Opt64::NONE })),
            None => {}
        }
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
        if self.cfg.send_buffer_linux {
            return self.linux_send_limit();
        }
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
        match self.fin_seq.get() {
            Some(f) if ack > f => d - 1,
            _ => d,
        }
    }
    fn tsval(&self, now: Nanos) -> u32 {
        match self.cfg.timer_model {
            TimerModel::Bsd => self.tcp_now,
            TimerModel::Fine { .. } | TimerModel::Ns2 { .. } | TimerModel::Linux { .. } => (now / MS) as u32 + 1,
        }
    }
    fn delack_timeout(&self) -> Option<Nanos> {
        match self.cfg.timer_model {
            TimerModel::Bsd => None,
            TimerModel::Fine { .. } | TimerModel::Ns2 { .. } | TimerModel::Linux { .. } => Some(self.cfg.delack_timeout),
        }
    }

    /// A trace row (traced endpoints only: `trace` is `Some` exactly when `cfg.trace`).
    #[inline]
    fn record(&mut self, now: Nanos, kind: TraceKind, seq: u64, len: u32) {
        if self.trace.is_some() {
            self.record_row(now, kind, seq, len);
        }
    }

    #[cold]
    fn record_row(&mut self, now: Nanos, kind: TraceKind, seq: u64, len: u32) {
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

    /// The SACK receiver's block list, made at its first use.
    fn read_rate(&self) -> Option<f64> {
        self.reader.as_ref().and_then(|rd| rd.rate)
    }

    fn read_wake(&self) -> Option<Nanos> {
        self.reader.as_ref().and_then(|rd| rd.wake.get())
    }

    fn sack_rcv(&mut self) -> &mut SackReceiver {
        self.sack_rcv.get_or_insert_with(Box::default)
    }

    fn enter_closed(&mut self, now: Option<Nanos>) {
        self.state = TcpState::Closed;
        self.timer.stop(&mut self.rto_deadline);
        self.tw_deadline = Opt64::NONE;
        if let Some(rd) = self.reader.as_deref_mut() {
            rd.wake = Opt64::NONE;
        }
        self.ack.delack_deadline = Opt64::NONE;
        self.pending_retx = Opt64::NONE;
        if self.stats.closed_at.get().is_none() {
            self.stats.closed_at = Opt64::from(now);
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
        self.stats.established_at = Opt64::some(now);
        if let Some(t0) = self.hs_sent_at.take() {
            self.hs_rtt = Opt64::some(now.saturating_sub(t0));
        }
        self.cc.on_established(now, &self.w, self.hs_rtt.get());
    }
}

#[allow(dead_code)]
fn _assert_send() {
    fn f<T: Send>() {}
    f::<Endpoint>();
}
