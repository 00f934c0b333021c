//! NewReno (RFC 6582), with the recover guard of §3.2 step 2 ("careful" variant of RFC 6582 §4.1
//! / RFC 3782). Timer: the first partial ACK restarts the retransmit timer (§3.2 step 5); since
//! the endpoint also restarts it on every ACK that advances snd_una (RFC 6298 §5.3, as BSD), the
//! behaviour is RFC 6582 §4's "Slow-but-Steady" variant, not "Impatient".
//!
//! * entering: on the threshold-th duplicate ACK, if the cumulative ACK covers more than
//!   `recover` (or no recovery happened yet): recover = snd_max; ssthresh from the CC (RFC 5681
//!   eq. 4 via `RenoCc { halve_flight }`); retransmit snd_una; cwnd = ssthresh + 3·MSS;
//! * further duplicate ACKs: cwnd += MSS;
//! * partial ACK (does not cover `recover`): retransmit the first
//!   unacknowledged segment, deflate cwnd by the amount acknowledged, add back one MSS if that
//!   amount was ≥ MSS; stay in recovery;
//! * full ACK (ack ≥ recover): cwnd = min(ssthresh, FlightSize + MSS) (§3.2 step 3, option 1);
//!   exit; no window growth on this ACK;
//! * timeout: recover = snd_max; leave recovery (§4 of RFC 6582 / RFC 5681 §3.2 note).

use super::{LossRecovery, RecoveryCtx, RecoveryOutcome};
use crate::cc::LossEvent;

#[derive(Clone, Copy, Debug, Default)]
pub struct NewRenoRecovery {
    pub in_recovery: bool,
    /// `recover` (64-bit relative); None before any loss (RFC: initialised to ISS).
    pub recover: Option<u64>,
    partial_acks: u32,
}

impl LossRecovery for NewRenoRecovery {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        let mss = ctx.w.mss;
        if self.in_recovery {
            // Every further duplicate ACK, also after a partial ACK (which resets the endpoint's
            // duplicate counter), inflates the window (§3.2 step 4).
            ctx.w.cwnd = ctx.w.cwnd.saturating_add(mss);
            return RecoveryOutcome::default();
        }
        if ctx.dupacks != ctx.dupack_threshold {
            return RecoveryOutcome::default();
        }
        // RFC 6582 §3.2 step 2: only if the ACK covers more than `recover`.
        // The duplicate ACK's value is snd_una; ack − 1 > recover ⇔ snd_una > recover.
        if let Some(r) = self.recover {
            if ctx.snd_una <= r {
                return RecoveryOutcome::default();
            }
        }
        self.recover = Some(ctx.snd_max);
        ctx.w.ssthresh = ctx.new_ssthresh(LossEvent::FastRetransmit);
        ctx.w.cwnd = ctx.w.ssthresh + mss * ctx.dupack_threshold;
        self.in_recovery = true;
        self.partial_acks = 0;
        ctx.cc.on_recovery(ctx.w, true);
        RecoveryOutcome { retransmit: Some(ctx.snd_una), restart_timer: true, fast_retransmit: true, entered: true, ..Default::default() }
    }
    fn on_ack(&mut self, ctx: &mut RecoveryCtx<'_>, ack: u64) -> RecoveryOutcome {
        if !self.in_recovery {
            return RecoveryOutcome { allow_growth: true, ..Default::default() };
        }
        let mss = ctx.w.mss;
        let recover = self.recover.unwrap_or(0);
        if ack >= recover {
            // Full acknowledgement.
            let flight = ctx.snd_max.saturating_sub(ack).min(u32::MAX as u64) as u32;
            ctx.w.cwnd = ctx.w.ssthresh.min(flight.saturating_add(mss));
            self.in_recovery = false;
            ctx.cc.on_recovery(ctx.w, false);
            return RecoveryOutcome { exited: true, ..Default::default() };
        }
        // Partial acknowledgement.
        let acked = (ack - ctx.snd_una).min(u32::MAX as u64) as u32;
        ctx.w.cwnd = ctx.w.cwnd.saturating_sub(acked);
        if acked >= mss {
            ctx.w.cwnd = ctx.w.cwnd.saturating_add(mss);
        }
        ctx.w.cwnd = ctx.w.cwnd.max(mss);
        self.partial_acks += 1;
        RecoveryOutcome { retransmit: Some(ack), restart_timer: self.partial_acks == 1, ..Default::default() }
    }
    fn on_timeout(&mut self, ctx: &mut RecoveryCtx<'_>) {
        self.recover = Some(ctx.snd_max);
        self.in_recovery = false;
    }
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
}
