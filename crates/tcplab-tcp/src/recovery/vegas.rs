//! Loss recovery for a congestion control that owns it (Vegas, seed 000 §4.5): a pass-through.
//! Vegas decides its retransmissions (fine timeout on the first duplicate ACK, the checks after a
//! retransmission) and its window cuts inside the CC; Reno's fast recovery must not act on top.
//! As in Linux, where `tcp_vegas.c` leaves loss recovery to the stack, the pass-through lives with
//! the recovery modules, not with the algorithm.

use super::{LossRecovery, RecoveryCtx, RecoveryOutcome};

/// Pass-through loss recovery for Vegas: the CC decides retransmissions and window changes.
#[derive(Clone, Copy, Debug, Default)]
pub struct VegasRecovery;

impl LossRecovery for VegasRecovery {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn on_dupack(&mut self, _ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        RecoveryOutcome::default()
    }
    fn on_ack(&mut self, _ctx: &mut RecoveryCtx<'_>, _ack: u64) -> RecoveryOutcome {
        RecoveryOutcome { allow_growth: true, ..Default::default() }
    }
    fn on_timeout(&mut self, _ctx: &mut RecoveryCtx<'_>) {}
    fn in_recovery(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcWindow, VegasCc, VegasParams};
    use crate::{Nanos, SEC};

    const M: u32 = 1000;
    const SEC0: Nanos = SEC;

    fn win(cwnd: u32) -> CcWindow {
        CcWindow { cwnd, ssthresh: 65535, mss: M, max_cwnd: 65535 }
    }

    #[test]
    fn vegas_recovery_passes_every_decision_to_the_cc() {
        let mut r = VegasRecovery;
        assert_eq!(r.name(), "vegas");
        assert!(!r.in_recovery());
        let mut c = VegasCc::new(VegasParams::default());
        let mut w = win(10 * M);
        let mut ctx = RecoveryCtx { now: SEC0, w: &mut w, cc: &mut c, snd_una: 0, snd_nxt: 10 * M as u64, snd_max: 10 * M as u64, snd_wnd: 65535, dupacks: 3, dupack_threshold: 3, sack: &[] };
        let o = r.on_dupack(&mut ctx);
        assert_eq!((o.retransmit, o.entered, o.fast_retransmit, o.allow_growth), (None, false, false, false));
        let o = r.on_ack(&mut ctx, M as u64);
        assert!(o.allow_growth, "Vegas' own window rules run on every ACK");
        assert_eq!((o.retransmit, o.exited), (None, false));
        r.on_timeout(&mut ctx);
        assert!(!r.in_recovery());
        assert_eq!(w, win(10 * M), "the recovery never touches the window");
    }
}
