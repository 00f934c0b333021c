//! Tahoe: fast retransmit, then slow start (Jacobson '88 + the 4.3BSD-Tahoe fast retransmit;
//! Fall & Floyd 1996 §2 "Tahoe").
//!
//! On the `dupack_threshold`-th duplicate ACK: ssthresh from the CC, cwnd = 1 MSS, and the
//! sender goes back to snd_una (go-back-N) in slow start. Further duplicate ACKs do nothing.
//!
//! Deliberate deviation: the 4.3BSD code restored snd_nxt to its old value after sending the
//! single retransmission; we follow the textbook/ns-2 Tahoe (Fall & Floyd) and resend from
//! snd_una, which is what "then slow start" means and lets Tahoe repair several losses of one
//! window without a timeout, at the price of resending segments that may have arrived.

use super::{LossRecovery, RecoveryCtx, RecoveryOutcome};
use crate::cc::LossEvent;

#[derive(Clone, Copy, Debug, Default)]
pub struct TahoeRecovery;

impl LossRecovery for TahoeRecovery {
    fn name(&self) -> &'static str {
        "tahoe"
    }
    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        if ctx.dupacks != ctx.dupack_threshold {
            return RecoveryOutcome::default();
        }
        ctx.w.ssthresh = ctx.new_ssthresh(LossEvent::FastRetransmit);
        ctx.w.cwnd = ctx.w.mss;
        RecoveryOutcome { set_snd_nxt: Some(ctx.snd_una), restart_timer: true, fast_retransmit: true, ..Default::default() }
    }
    fn on_ack(&mut self, _ctx: &mut RecoveryCtx<'_>, _ack: u64) -> RecoveryOutcome {
        RecoveryOutcome { allow_growth: true, ..Default::default() }
    }
    fn on_timeout(&mut self, _ctx: &mut RecoveryCtx<'_>) {}
    fn in_recovery(&self) -> bool {
        false
    }
}
