//! 4.3BSD-Reno fast retransmit and fast recovery (Jacobson 1990 "Modified TCP congestion
//! avoidance algorithm", end2end-interest; 4.4BSD tcp_input.c; RFC 5681 §3.2 describes the same).
//!
//! * on the `dupack_threshold`-th duplicate ACK: ssthresh from the CC; retransmit the segment at
//!   snd_una; restart the retransmit timer and cancel RTT timing; cwnd = ssthresh + 3·MSS;
//! * each further duplicate ACK inflates cwnd by 1 MSS (the sender may then send new data);
//! * the first ACK that advances snd_una deflates cwnd to ssthresh and ends recovery; as in BSD
//!   that same ACK then goes through the normal window opening (congestion avoidance, since
//!   cwnd = ssthresh).
//!
//! BSD quirk kept behind a switch ([`DeflateTest`]): 4.4BSD deflates only
//! `if (t_dupacks > tcprexmtthresh && snd_cwnd > snd_ssthresh)`, so an episode with exactly three
//! duplicate ACKs leaves cwnd at ssthresh + 3·MSS. `reno` deflates always; the `lite` variants use
//! BSD's `>` and their `fix_dupack_ge` switch the `>=` of seed 001 §3.6 (see [`crate::lite`]).
//! Multiple losses in one window: a second fast retransmit needs three new duplicate ACKs; often
//! the retransmit timer fires instead (seed 000 §4.1) — Reno's known weakness.

use super::{LossRecovery, RecoveryCtx, RecoveryOutcome};
use crate::cc::LossEvent;

/// When the first new ACK after fast recovery deflates cwnd to ssthresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeflateTest {
    /// Always (the seeds' x-kernel Reno, RFC 5681).
    #[default]
    Always,
    /// 4.4BSD tcp_input.c: `t_dupacks > tcprexmtthresh`.
    DupacksAbove,
    /// Seed 001 §3.6's fix: `t_dupacks >= tcprexmtthresh`.
    DupacksAtLeast,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct RenoRecovery {
    pub in_recovery: bool,
    pub deflate_test: DeflateTest,
}

impl LossRecovery for RenoRecovery {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        let mss = ctx.w.mss;
        if ctx.dupacks == ctx.dupack_threshold {
            ctx.w.ssthresh = ctx.new_ssthresh(LossEvent::FastRetransmit);
            ctx.w.cwnd = ctx.w.ssthresh + mss * ctx.dupacks;
            self.in_recovery = true;
            ctx.cc.on_recovery(ctx.w, true);
            RecoveryOutcome {
                retransmit: Some(ctx.snd_una),
                restart_timer: true,
                fast_retransmit: true,
                entered: true,
                ..Default::default()
            }
        } else if ctx.dupacks > ctx.dupack_threshold && self.in_recovery {
            ctx.w.cwnd = ctx.w.cwnd.saturating_add(mss);
            RecoveryOutcome::default()
        } else {
            RecoveryOutcome::default()
        }
    }
    fn on_ack(&mut self, ctx: &mut RecoveryCtx<'_>, _ack: u64) -> RecoveryOutcome {
        if !self.in_recovery {
            return RecoveryOutcome { allow_growth: true, ..Default::default() };
        }
        self.in_recovery = false;
        let deflate = match self.deflate_test {
            DeflateTest::Always => true,
            DeflateTest::DupacksAbove => ctx.dupacks > ctx.dupack_threshold,
            DeflateTest::DupacksAtLeast => ctx.dupacks >= ctx.dupack_threshold,
        };
        if deflate && ctx.w.cwnd > ctx.w.ssthresh {
            ctx.w.cwnd = ctx.w.ssthresh;
        }
        ctx.cc.on_recovery(ctx.w, false);
        RecoveryOutcome { exited: true, allow_growth: true, ..Default::default() }
    }
    fn on_timeout(&mut self, _ctx: &mut RecoveryCtx<'_>) {
        self.in_recovery = false;
    }
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
}
