//! Loss-recovery seam: what the sender does on duplicate ACKs and on the ACKs that end (or
//! partially end) a recovery episode.
//!
//! The endpoint counts duplicate ACKs with 4.4BSD's definition (tcp_input.c: no data, window
//! unchanged, ack == snd_una, retransmit timer running) and hands each one to
//! [`LossRecovery::on_dupack`]; every ACK that advances snd_una goes to [`LossRecovery::on_ack`]
//! *before* snd_una moves and before congestion control grows the window. Recovery algorithms
//! change cwnd/ssthresh (ssthresh obtained from [`CongestionControl::ssthresh`]) and return a
//! [`RecoveryOutcome`] telling the endpoint what to (re)send.
//!
//! SACK senders ([`Sack1Recovery`], [`Rfc6675Recovery`]) keep their scoreboard fed from
//! [`RecoveryCtx::sack`] (the ACK's blocks, unwrapped), and while in recovery they take over the
//! decision of what to send: the endpoint asks [`LossRecovery::next_send`] before each
//! transmission instead of applying the usual cwnd − flight rule ("use of the pipe variable
//! decouples the decision of when to send a packet from the decision of which packet to send",
//! Fall & Floyd 1996 §3), and reports every transmission to [`LossRecovery::on_transmit`].

mod kind;
mod newreno;
mod prr;
mod rack;
mod reno;
mod rfc6675;
mod sack1;
pub mod scoreboard;
mod tahoe;
mod vegas;
pub use kind::{build, lite, RecoveryKind};
pub use newreno::NewRenoRecovery;
pub use prr::PrrRecovery;
pub use rack::RackRecovery;
pub use reno::{DeflateTest, RenoRecovery};
pub use rfc6675::Rfc6675Recovery;
pub use sack1::Sack1Recovery;
pub use tahoe::TahoeRecovery;
pub use vegas::VegasRecovery;

use crate::cc::{CcWindow, CongestionControl, LossEvent};
use crate::Nanos;

/// What recovery sees (and may change) when an ACK is processed.
pub struct RecoveryCtx<'a> {
    pub now: Nanos,
    pub w: &'a mut CcWindow,
    pub cc: &'a mut dyn CongestionControl,
    /// snd_una *before* this ACK is applied.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub snd_wnd: u32,
    /// Duplicate ACKs counted so far (including this one, for `on_dupack`).
    pub dupacks: u32,
    pub dupack_threshold: u32,
    /// SACK blocks of the ACK being processed (64-bit offsets, most recent first); empty
    /// without SACK.
    pub sack: &'a [(u64, u64)],
}

impl RecoveryCtx<'_> {
    pub fn flight(&self) -> u32 {
        (self.snd_max - self.snd_una).min(u32::MAX as u64) as u32
    }
    /// Ask the CC for the new ssthresh.
    pub fn new_ssthresh(&mut self, ev: LossEvent) -> u32 {
        let f = self.flight();
        self.cc.ssthresh(self.w, f, self.snd_wnd, ev)
    }
}

/// Instructions back to the endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveryOutcome {
    /// Send one segment starting at this sequence offset now, regardless of the window.
    pub retransmit: Option<u64>,
    /// Move snd_nxt here (go-back-N).
    pub set_snd_nxt: Option<u64>,
    /// Stop the retransmit timer and cancel RTT timing (BSD fast retransmit: `t_timer[REXMT] = 0;
    /// t_rtt = 0`); the timer re-arms when the retransmission leaves.
    pub restart_timer: bool,
    /// This was a fast retransmit (stats, trace).
    pub fast_retransmit: bool,
    pub entered: bool,
    pub exited: bool,
    /// For `on_ack`: let congestion control grow the window on this ACK.
    pub allow_growth: bool,
}

/// What a pipe-governed (SACK) recovery lets the sender do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SackSend {
    /// Retransmit `len` bytes at `seq`.
    Retransmit { seq: u64, len: u32 },
    /// Send new data from snd_nxt (within the peer's window).
    NewData,
    /// Move snd_nxt up to this offset first (never back), then as [`SackSend::NewData`]: a
    /// recovery that kept its scoreboard across an RTO (RACK) skips what is SACKed or resent.
    NewDataFrom(u64),
    /// Nothing now (pipe ≥ cwnd, or nothing eligible).
    Blocked,
}

/// The sender state a pipe-governed recovery decides on.
#[derive(Clone, Copy, Debug)]
pub struct SendGate {
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub cwnd: u32,
    pub mss: u32,
    pub snd_wnd: u32,
    /// One past the last byte the application has given us.
    pub send_limit: u64,
}

pub trait LossRecovery: std::fmt::Debug + Send {
    fn name(&self) -> &'static str;
    /// A duplicate ACK (ctx.dupacks already incremented).
    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome;
    /// An ACK advancing snd_una to `ack`.
    fn on_ack(&mut self, ctx: &mut RecoveryCtx<'_>, ack: u64) -> RecoveryOutcome;
    /// The retransmission timer expired (cwnd/ssthresh already reset by the endpoint).
    fn on_timeout(&mut self, ctx: &mut RecoveryCtx<'_>);
    fn in_recovery(&self) -> bool;
    /// True while this module, not the cwnd − flight rule, decides what to send.
    fn governs_sending(&self) -> bool {
        false
    }
    /// Asked before each transmission while [`LossRecovery::governs_sending`].
    fn next_send(&mut self, _g: &SendGate) -> SackSend {
        SackSend::Blocked
    }
    /// Every data transmission (`seq` 64-bit offset), new or retransmitted.
    fn on_transmit(&mut self, _seq: u64, _len: u32, _retransmit: bool) {}
    /// [`LossRecovery::on_transmit`] with the time of sending (RACK's per-segment send times).
    fn on_transmit_at(&mut self, _now: Nanos, seq: u64, len: u32, retransmit: bool) {
        self.on_transmit(seq, len, retransmit)
    }
    /// The recovery's own timer (RACK's reorder timer), absolute.
    fn next_timer(&self) -> Option<Nanos> {
        None
    }
    /// The recovery's timer is due (the endpoint applies the outcome as for an ACK's).
    fn on_timer(&mut self, _ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        RecoveryOutcome::default()
    }
    /// The pipe estimate in bytes after the last transmission (SACK recoveries, in recovery).
    fn pipe_bytes(&self) -> Option<i64> {
        None
    }
    /// Some segment is marked lost and not yet retransmitted (Linux `lost_out > retrans_out`,
    /// a condition of `tcp_rate_check_app_limited`). Default: the recovery marks nothing lost.
    fn lost_unretransmitted(&self) -> bool {
        false
    }
    /// SACKed bytes above `snd_una` and the number of discontiguous SACKed ranges they form
    /// (Linux's send-buffer accounting, endpoint/sndbuf.rs). Default: none.
    fn sacked_ranges(&self, _snd_una: u64) -> (u64, u64) {
        (0, 0)
    }
    /// The pipe recomputed now (RFC 6675 `SetPipe`), while in a pipe-governed recovery; for
    /// congestion controls that size cwnd from it (BBR's packet conservation).
    fn pipe_now(&self, _g: &SendGate) -> Option<u64> {
        None
    }
    /// Linux's `tcp_packets_in_flight` in bytes (outstanding − SACKed − marked lost, a
    /// retransmission counting once), in and out of recovery; None for recoveries without a
    /// scoreboard outside recovery (the endpoint then counts snd_max − snd_una).
    fn linux_in_flight(&self) -> Option<u64> {
        None
    }
}
