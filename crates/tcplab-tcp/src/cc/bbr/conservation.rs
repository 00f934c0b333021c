//! The loss-state bookkeeping BBR v1 (`tcp_bbr.c`) and BBR v3 share: Linux's `icsk_ca_state`
//! as BBR reads it, `prior_cwnd` (`bbr_save_cwnd`), and packet conservation in the first round
//! of a recovery (`bbr_set_cwnd_to_recover_or_restore`): on entering, cwnd = in flight +
//! delivered, then cwnd = max(cwnd, in flight + delivered) until the round ends; on leaving
//! recovery or the loss state, cwnd = max(cwnd, prior_cwnd). "In flight" is the recovery's pipe
//! (SACKed and lost excluded), reported by the endpoint ([`crate::cc::CongestionControl::on_recovery_pipe`]).

use crate::cc::CcWindow;

/// The loss state BBR tracks (Linux `icsk_ca_state` as far as BBR reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(super) enum CaState {
    #[default]
    Open,
    Recovery,
    Loss,
}

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Conservation {
    pub ca_state: CaState,
    pub prev_ca_state: CaState,
    /// The cwnd saved at a loss, restored when recovery ends.
    pub prior_cwnd: u32,
    /// After a timeout: the sequence whose ACK ends the Loss state.
    loss_end: u64,
    packet_conservation: bool,
    /// The recovery episode's packet conservation has begun (its first pipe report).
    begun: bool,
}

impl Conservation {
    /// `bbr_save_cwnd`: outside recovery and PROBE_RTT the cwnd itself, else the larger.
    pub fn save_cwnd(&mut self, cwnd: u32, in_probe_rtt: bool) {
        if self.prev_ca_state < CaState::Recovery && !in_probe_rtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// An ACK up to `snd_una`: the Loss state ends once it covers what was sent at the timeout.
    pub fn on_ack(&mut self, snd_una: u64) {
        if self.ca_state == CaState::Loss && snd_una >= self.loss_end {
            self.ca_state = CaState::Open;
        }
    }

    /// A packet-timed round ended: conservation (first round of recovery) is over.
    pub fn on_round_start(&mut self) {
        self.packet_conservation = false;
    }

    /// Restore the cwnd saved at entry when recovery (or the loss state) ends; true while the
    /// first recovery round conserves packets. Inside a pipe-governed recovery the conservation
    /// itself comes from [`Conservation::on_recovery_pipe`]; here only the restore on exit.
    pub fn recover_or_restore(&mut self, w: &mut CcWindow) -> bool {
        let (prev, state) = (self.prev_ca_state, self.ca_state);
        if prev >= CaState::Recovery && state < CaState::Recovery {
            w.cwnd = w.cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
            self.begun = false;
        }
        self.prev_ca_state = state;
        state == CaState::Recovery && self.packet_conservation
    }

    /// Linux: on entering recovery cwnd = packets in flight + acked, then during the first round
    /// cwnd = max(cwnd, in flight + acked). Returns true at the episode's first report, when
    /// the caller starts a new round.
    pub fn on_recovery_pipe(&mut self, w: &mut CcWindow, pipe: u64, delivered: u64) -> bool {
        let conserve = (pipe + delivered).max(w.mss as u64).min(u32::MAX as u64) as u32;
        if !self.begun {
            self.begun = true;
            self.packet_conservation = true;
            self.prev_ca_state = CaState::Recovery;
            w.cwnd = conserve;
            true
        } else {
            if self.packet_conservation {
                w.cwnd = w.cwnd.max(conserve);
            }
            false
        }
    }

    /// In the first round of a recovery (packet conservation).
    pub fn conserving(&self) -> bool {
        self.ca_state == CaState::Recovery && self.packet_conservation
    }

    pub fn on_recovery(&mut self, entered: bool) {
        if entered {
            self.ca_state = CaState::Recovery;
            self.begun = false;
        } else if self.ca_state == CaState::Recovery {
            self.ca_state = CaState::Open;
        }
    }

    /// `bbr_set_state(TCP_CA_Loss)`, with what had been sent (`snd_max`) at the timeout.
    pub fn on_timeout(&mut self, snd_max: u64) {
        self.ca_state = CaState::Loss;
        self.prev_ca_state = CaState::Loss;
        self.loss_end = snd_max;
    }
}

/// The rate-estimator events both BBRs forward unchanged (inside `impl CongestionControl`).
macro_rules! forward_rate_events {
    () => {
        fn on_sacked(&mut self, now: crate::Nanos, start: u64, end: u64) {
            self.rate.on_sacked(now, start, end);
        }

        fn on_app_limited(&mut self) {
            self.rate.mark_app_limited();
        }

        fn on_app_limited_in_flight(&mut self, in_flight: u64) {
            self.rate.mark_app_limited_with(in_flight);
        }

        fn on_in_flight(&mut self, in_flight: u64, prior: bool) {
            self.rate.set_pipe(in_flight, prior);
        }
    };
}
pub(super) use forward_rate_events;

#[cfg(test)]
mod tests {
    use super::*;

    fn window(cwnd: u32) -> CcWindow {
        CcWindow { cwnd, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX }
    }

    #[test]
    fn first_round_conserves_then_exit_restores_prior_cwnd() {
        let mut c = Conservation::default();
        let mut w = window(50_000);
        c.save_cwnd(w.cwnd, false);
        c.on_recovery(true);
        // First report: cwnd = pipe + delivered (30 + 2 packets), a new round for the caller.
        assert!(c.on_recovery_pipe(&mut w, 30_000, 2000));
        assert_eq!(w.cwnd, 32_000);
        // Within the round: never below pipe + delivered, never cut.
        assert!(!c.on_recovery_pipe(&mut w, 25_000, 1000));
        assert_eq!(w.cwnd, 32_000);
        assert!(!c.on_recovery_pipe(&mut w, 40_000, 1000));
        assert_eq!(w.cwnd, 41_000);
        assert!(c.recover_or_restore(&mut w), "conserving in the first round");
        // The round ends: the CC's own cwnd rules again, still in recovery.
        c.on_round_start();
        assert!(!c.on_recovery_pipe(&mut w, 10_000, 1000));
        assert_eq!(w.cwnd, 41_000);
        assert!(!c.recover_or_restore(&mut w));
        // Recovery ends: cwnd back to at least the 50 packets saved at entry.
        c.on_recovery(false);
        w.cwnd = 20_000;
        assert!(!c.recover_or_restore(&mut w));
        assert_eq!(w.cwnd, 50_000);
    }

    #[test]
    fn loss_state_ends_when_the_ack_covers_what_was_sent_at_the_timeout() {
        let mut c = Conservation::default();
        c.save_cwnd(40_000, false);
        c.on_timeout(90_000);
        // Saved again while in Loss: the larger stays.
        c.save_cwnd(10_000, false);
        assert_eq!(c.prior_cwnd, 40_000);
        c.on_ack(89_999);
        assert_eq!(c.ca_state, CaState::Loss);
        c.on_ack(90_000);
        assert_eq!(c.ca_state, CaState::Open);
        let mut w = window(2000);
        assert!(!c.recover_or_restore(&mut w));
        assert_eq!(w.cwnd, 40_000);
        // PROBE_RTT keeps the larger saved cwnd too.
        c.save_cwnd(4000, true);
        assert_eq!(c.prior_cwnd, 40_000);
    }
}
