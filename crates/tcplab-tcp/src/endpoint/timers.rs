//! Timers (4.4BSD tcp_timer.c): the host-facing entry points (`next_timer`, `on_timer`, the BSD
//! slow and fast ticks) and the retransmission timeout (`rto_expired`: back off, cwnd to one
//! segment, go back N; or a window probe with a zero peer window).

use super::{Endpoint, TcpState};
use crate::opt64::Opt64;
use crate::cc::LossEvent;
use crate::config::TimerModel;
use crate::recovery::RecoveryCtx;
use crate::trace::TraceKind;
use crate::Nanos;

impl Endpoint {
    /// Earliest absolute time `on_timer` must be called.
    pub fn next_timer(&self) -> Option<Nanos> {
        let mut t: Option<Nanos> = None;
        let mut m = |x: Option<Nanos>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |t| t.min(x)));
            }
        };
        m(self.rto_deadline.get());
        m(self.ack.delack_deadline.get());
        m(self.tw_deadline.get());
        m(self.read_wake());
        if self.hooks.rec_timer() {
            m(self.rec.next_timer());
        }
        if self.is_established() {
            if self.hooks.cc_timer() {
                m(self.cc.next_timer());
            }
            m(self.pacing_deadline());
        }
        t
    }

    /// Fine-grained timers due: RTO (fine model), delayed ACK (fine model), TIME_WAIT, reads.
    pub fn on_timer(&mut self, now: Nanos) {
        if matches!(self.tw_deadline.get(), Some(d) if d <= now) {
            self.tw_deadline = Opt64::NONE;
            if self.state == TcpState::TimeWait {
                self.enter_closed(Some(now));
                return;
            }
        }
        self.drain_reads(now);
        self.ack.on_timer(now);
        self.pacing_on_timer(now);
        if self.hooks.cc_timer() && self.is_established() && self.cc.next_timer().is_some_and(|d| d <= now) {
            self.cc.on_timer(now, &mut self.w);
            self.note_cwnd();
        }
        if self.hooks.rec_timer() && self.rec.next_timer().is_some_and(|d| d <= now) {
            // The recovery's own timer (RACK's reorder timer): no ACK, so no SACK blocks.
            self.sack_in_n = 0;
            let out = {
                let mut ctx = recovery_ctx!(self, now);
                self.rec.on_timer(&mut ctx)
            };
            if out.entered || out.fast_retransmit {
                self.ecn.on_loss_reduction(self.snd_max);
            }
            self.apply_recovery(now, out);
            self.note_cwnd();
        }
        if self.rto_deadline.get().is_some_and(|d| d <= now) {
            self.timer.stop(&mut self.rto_deadline);
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

    pub(super) fn rto_expired(&mut self, now: Nanos) {
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => {
                if !self.timer.backoff() {
                    self.abort(now);
                    return;
                }
                self.syn_pending = true;
                self.hs_sent_at = Opt64::NONE;
                return;
            }
            TcpState::Closed | TcpState::Listen | TcpState::TimeWait => return,
            _ => {}
        }
        let data_waiting = self.send_limit() > self.snd_una || (self.fin_abs().is_some() && self.fin_seq.get().is_none_or(|f| self.snd_una <= f));
        if self.snd_wnd == 0 && (self.snd_max > self.snd_una || data_waiting) {
            // Persist: probe the zero window; cwnd untouched (tcp_timer.c TCPT_PERSIST).
            let _ = self.timer.backoff();
            self.snd_nxt = self.snd_una;
            self.force_probe = true;
            self.timer.restart(&mut self.rto_deadline, now);
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
        if let Some(last) = self.last_send.get() {
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
        self.pending_retx = Opt64::NONE;
        self.ecn.on_loss_reduction(self.snd_max);
        self.timer.restart(&mut self.rto_deadline, now);
        self.record(now, TraceKind::Timeout, self.snd_una, 0);
    }
}
