//! Conservative SACK-based loss recovery, RFC 6675 (Blanton, Allman, Wang, Järvinen, Kojo,
//! Nishida 2012), the modern rule set (variant `sack-rfc6675`). Byte-based; SMSS = the
//! effective MSS; DupThresh = the endpoint's duplicate-ACK threshold (3).
//!
//! * `IsLost(s)` (§4): DupThresh discontiguous SACKed ranges above `s`, or more than
//!   (DupThresh − 1)·SMSS SACKed bytes above it.
//! * `SetPipe` (§4): over every un-SACKed segment in [HighACK, HighData): +len if not `IsLost`,
//!   +len again if it was retransmitted (at or below HighRxt).
//! * Entering (§5 steps 4.1–4.4): on the DupThresh-th duplicate ACK, if HighACK > RecoveryPoint
//!   (or none yet): RecoveryPoint = HighData; cwnd = ssthresh = the CC's value (`sack-rfc6675`
//!   uses RFC 5681 eq. 4, max(FlightSize/2, 2·SMSS)); retransmit the first segment; then
//!   `NextSeg` while cwnd − pipe ≥ 1 SMSS.
//! * `NextSeg` (§4): (1) the first un-SACKed byte above HighRxt, below the highest SACKed byte,
//!   that `IsLost`; (2) new data within the peer's window; (3) the first un-SACKed byte above
//!   HighRxt below the highest SACKed byte; else nothing. Deliberate deviation: rule (4),
//!   the RescueRxt of the last segment, is not implemented.
//! * Every ACK in recovery updates the scoreboard and recomputes pipe; the ACK that covers
//!   RecoveryPoint ends recovery (§5 step 3) with cwnd = ssthresh and no growth on that ACK.
//! * A timeout (§5.1) ends recovery and clears the scoreboard (the SACK information is not
//!   used after an RTO, as ns-2 and RFC 2018 §8 allow), HighRxt = HighACK.

use super::scoreboard::Scoreboard;
use super::{LossRecovery, RecoveryCtx, RecoveryOutcome, SackSend, SendGate};
use crate::cc::LossEvent;

#[derive(Clone, Debug, Default)]
pub struct Rfc6675Recovery {
    pub in_recovery: bool,
    recovery_point: Option<u64>,
    high_rxt: u64,
    dupthresh: u32,
    pub sb: Scoreboard,
    /// Pipe (bytes) computed for the last send decision, plus what was then sent.
    last_pipe: i64,
}

impl Rfc6675Recovery {
    fn is_lost(&self, s: u64, mss: u32) -> bool {
        let dt = self.dupthresh.max(1);
        self.sb.blocks_above(s) >= dt as usize || self.sb.sacked_above(s) > (dt as u64 - 1) * mss as u64
    }

    /// RFC 6675 `SetPipe`, in bytes.
    pub fn pipe(&self, g: &SendGate) -> u64 {
        let mss = g.mss.max(1) as u64;
        let mut pipe = 0u64;
        let mut s = g.snd_una;
        while s < g.snd_max {
            let end = (s + mss).min(g.snd_max);
            if self.sb.is_sacked(s) {
                s = end;
                continue;
            }
            let len = end - s;
            if !self.is_lost(s, g.mss) {
                pipe += len;
            }
            if s < self.high_rxt {
                pipe += len;
            }
            s = end;
        }
        pipe
    }
}

impl LossRecovery for Rfc6675Recovery {
    fn name(&self) -> &'static str {
        "sack-rfc6675"
    }
    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        self.dupthresh = ctx.dupack_threshold;
        self.sb.update(ctx.snd_una, ctx.sack);
        if self.in_recovery || ctx.dupacks != ctx.dupack_threshold {
            return RecoveryOutcome::default();
        }
        if let Some(r) = self.recovery_point {
            if ctx.snd_una <= r {
                return RecoveryOutcome::default();
            }
        }
        self.recovery_point = Some(ctx.snd_max);
        ctx.w.ssthresh = ctx.new_ssthresh(LossEvent::FastRetransmit);
        ctx.w.cwnd = ctx.w.ssthresh;
        self.in_recovery = true;
        self.high_rxt = ctx.snd_una;
        ctx.cc.on_recovery(ctx.w, true);
        RecoveryOutcome { retransmit: Some(ctx.snd_una), restart_timer: true, fast_retransmit: true, entered: true, ..Default::default() }
    }
    fn on_ack(&mut self, ctx: &mut RecoveryCtx<'_>, ack: u64) -> RecoveryOutcome {
        self.dupthresh = ctx.dupack_threshold;
        self.sb.update(ack, ctx.sack);
        if !self.in_recovery {
            return RecoveryOutcome { allow_growth: true, ..Default::default() };
        }
        if ack >= self.recovery_point.unwrap_or(0) {
            self.in_recovery = false;
            self.sb.clear();
            ctx.cc.on_recovery(ctx.w, false);
            return RecoveryOutcome { exited: true, ..Default::default() };
        }
        self.high_rxt = self.high_rxt.max(ack);
        RecoveryOutcome::default()
    }
    fn on_timeout(&mut self, ctx: &mut RecoveryCtx<'_>) {
        self.in_recovery = false;
        self.recovery_point = Some(ctx.snd_max);
        self.high_rxt = ctx.snd_una;
        self.sb.clear();
    }
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    fn governs_sending(&self) -> bool {
        self.in_recovery
    }
    fn next_send(&mut self, g: &SendGate) -> SackSend {
        let pipe = self.pipe(g);
        self.last_pipe = pipe as i64;
        if (g.cwnd as u64) < pipe + g.mss as u64 {
            return SackSend::Blocked;
        }
        let high_sacked = self.sb.high_sacked();
        let from = self.high_rxt.max(g.snd_una);
        let mut rule3 = None;
        for (a, b) in self.sb.holes(from) {
            let b = b.min(high_sacked);
            let mut s = a;
            while s < b {
                if self.is_lost(s, g.mss) {
                    let len = (b - s).min(g.mss as u64) as u32;
                    return SackSend::Retransmit { seq: s, len };
                }
                if rule3.is_none() {
                    rule3 = Some((s, (b - s).min(g.mss as u64) as u32));
                }
                s += g.mss as u64;
            }
        }
        if g.snd_nxt < g.snd_una + g.snd_wnd as u64 && g.snd_nxt < g.send_limit {
            return SackSend::NewData;
        }
        match rule3 {
            Some((seq, len)) => SackSend::Retransmit { seq, len },
            None => SackSend::Blocked,
        }
    }
    fn on_transmit(&mut self, seq: u64, len: u32, retransmit: bool) {
        if self.in_recovery {
            self.last_pipe += len as i64;
            if retransmit {
                self.high_rxt = self.high_rxt.max(seq + len as u64);
            }
        }
    }
    fn pipe_bytes(&self) -> Option<i64> {
        self.in_recovery.then_some(self.last_pipe)
    }
    fn pipe_now(&self, g: &SendGate) -> Option<u64> {
        self.in_recovery.then(|| self.pipe(g))
    }
}
