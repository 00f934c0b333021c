//! SACK loss recovery as ns-2's `Sack1` agent, the one seed 004 ran (K. Fall, S. Floyd,
//! "Simulation-based Comparisons of Tahoe, Reno, and SACK TCP", CCR 26(3), 1996, §3; ns-2
//! `tcp/tcp-sack1.cc`, `tcp/scoreboard.cc`; seed 004 §2.3). Window growth is Reno's
//! (`RenoCc`, seed 004 §2.3: "the same algorithms for increasing and decreasing the congestion
//! window").
//!
//! * enter on the `dupack_threshold`-th duplicate ACK, unless the cumulative ACK has not passed
//!   `recover` (ns-2 `bug_fix_`, default true: one fast retransmit per window; `recover` is set
//!   only by a fast retransmit still in progress or by a timeout, see below): `recover =
//!   snd_max`; ssthresh from the CC (halving); **cwnd = ssthresh** (no inflation: ns-2
//!   `slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF)`); `pipe = outstanding segments − 3`
//!   (ns-2 `pipe_ = maxseq_ − highest_ack_ − numdupacks`, which may exceed cwnd: then nothing
//!   is sent until enough ACKs have drained it); retransmit snd_una (not counted in pipe, as
//!   ns-2's `dupack_action` sends it outside `send_much`);
//! * every ACK during recovery: `pipe −= 1`; a partial ACK (advances snd_una, below `recover`):
//!   `pipe −= 1` once more — "the sender decrements pipe by two rather than one for partial
//!   ACKs", seed 004 §2.3 (ns-2 `partial_ack_` false, the default);
//! * while `pipe < cwnd` (in segments): retransmit the first hole below the highest SACKed byte
//!   not yet retransmitted in this episode (`GetNextRetran`), else new data within the peer's
//!   window; every transmission `pipe += 1`;
//! * the ACK that covers `recover` ends recovery; cwnd stays at ssthresh and does not grow on
//!   that ACK (ns-2 calls `newack`, not `opencwnd`); the scoreboard is cleared and `recover`
//!   forgotten (ns-2 `recover_ = 0`), so the next three duplicate ACKs fast-retransmit again;
//! * a timeout clears the scoreboard and sets `recover = snd_max` (ns-2 `Sack1::timeout`).
//!
//! ns-2 defaults this variant follows where seed 004 is silent: `maxburst_ 0` (no burst limit),
//! `numdupacks_ 3`, the `TCPSink/Sack1` receiver ACKs every packet (no delayed ACK). `window_`
//! (20 packets in ns-2) is the scenario's `recv_buffer`. A hole retransmitted once is not
//! retransmitted again in the same episode; if the retransmission is lost, the timer recovers.

use super::scoreboard::Scoreboard;
use super::{LossRecovery, RecoveryCtx, RecoveryOutcome, SackSend, SendGate};
use crate::cc::LossEvent;

#[derive(Clone, Debug, Default)]
pub struct Sack1Recovery {
    pub in_recovery: bool,
    recover: Option<u64>,
    /// Estimated segments in the path (may go negative, as ns-2's `int pipe_`).
    pub pipe: i64,
    pub sb: Scoreboard,
    mss: u32,
    /// The fast retransmission that opens recovery is not counted in pipe (ns-2's
    /// `dupack_action` calls `output` directly; only `send_much` does `pipe_++`).
    uncounted_fast_retransmit: bool,
}

impl LossRecovery for Sack1Recovery {
    fn name(&self) -> &'static str {
        "sack1"
    }
    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        self.sb.update(ctx.snd_una, ctx.sack);
        if self.in_recovery {
            self.pipe -= 1;
            return RecoveryOutcome::default();
        }
        if ctx.dupacks != ctx.dupack_threshold {
            return RecoveryOutcome::default();
        }
        if let Some(r) = self.recover {
            if ctx.snd_una <= r {
                return RecoveryOutcome::default();
            }
        }
        let mss = ctx.w.mss.max(1) as u64;
        self.mss = ctx.w.mss;
        self.recover = Some(ctx.snd_max);
        let outstanding = (ctx.snd_max - ctx.snd_una).div_ceil(mss) as i64;
        self.pipe = outstanding - ctx.dupack_threshold as i64;
        ctx.w.ssthresh = ctx.new_ssthresh(LossEvent::FastRetransmit);
        ctx.w.cwnd = ctx.w.ssthresh;
        self.in_recovery = true;
        self.uncounted_fast_retransmit = true;
        self.sb.clear_retransmitted();
        ctx.cc.on_recovery(ctx.w, true);
        RecoveryOutcome { retransmit: Some(ctx.snd_una), restart_timer: true, fast_retransmit: true, entered: true, ..Default::default() }
    }
    fn on_ack(&mut self, ctx: &mut RecoveryCtx<'_>, ack: u64) -> RecoveryOutcome {
        if !self.in_recovery {
            self.sb.clear();
            return RecoveryOutcome { allow_growth: true, ..Default::default() };
        }
        self.pipe -= 1;
        if ack >= self.recover.unwrap_or(0) {
            self.in_recovery = false;
            // ns-2 `tcp-sack1.cc`, `Sack1TcpAgent::recv`, fast-recovery branch, "ACK indicates
            // fast recovery is over": `recover_ = 0`. The next `dupack_action` then finds
            // `highest_ack_ > recover_` and may fast-retransmit at once, even for a loss at
            // exactly the old `recover_`; only a timeout's `recover_ = maxseq_` stays as a guard.
            self.recover = None;
            self.sb.clear();
            ctx.cc.on_recovery(ctx.w, false);
            return RecoveryOutcome { exited: true, ..Default::default() };
        }
        self.pipe -= 1;
        self.sb.update(ack, ctx.sack);
        RecoveryOutcome::default()
    }
    fn on_timeout(&mut self, ctx: &mut RecoveryCtx<'_>) {
        self.in_recovery = false;
        self.recover = Some(ctx.snd_max);
        self.sb.clear();
    }
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    fn governs_sending(&self) -> bool {
        self.in_recovery
    }
    fn next_send(&mut self, g: &SendGate) -> SackSend {
        let cwnd_segs = (g.cwnd / g.mss.max(1)) as i64;
        if self.pipe >= cwnd_segs {
            return SackSend::Blocked;
        }
        if let Some((a, b)) = self.sb.next_unretransmitted_hole(g.snd_una) {
            if a < g.snd_max {
                let len = (b.min(g.snd_max) - a).min(g.mss as u64) as u32;
                self.sb.mark_retransmitted(a, a + len as u64);
                return SackSend::Retransmit { seq: a, len };
            }
        }
        if g.snd_nxt < g.snd_una + g.snd_wnd as u64 && g.snd_nxt < g.send_limit {
            return SackSend::NewData;
        }
        SackSend::Blocked
    }
    fn pipe_bytes(&self) -> Option<i64> {
        self.in_recovery.then_some(self.pipe * self.mss as i64)
    }
    fn on_transmit(&mut self, seq: u64, len: u32, _retransmit: bool) {
        if self.in_recovery {
            if std::mem::take(&mut self.uncounted_fast_retransmit) {
                // Chosen by `on_dupack`, not `next_send`: mark it, do not count it.
                self.sb.mark_retransmitted(seq, seq + len as u64);
                return;
            }
            self.pipe += 1;
            self.sb.mark_retransmitted(seq, seq + len as u64);
        }
    }
}
