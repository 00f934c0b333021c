//! BBR v3's per-ACK model update and its [`CongestionControl`] seam (`bbr_main` of the v3 file:
//! update the model and the state, then the pacing rate and the cwnd). The state it works on and
//! its sources: [`super`].

use super::*;

impl Bbr3Cc {
    /// One ACK that advanced snd_una.
    pub(super) fn on_ack_main(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>) {
        let now = s.now;
        self.cons.on_ack(s.snd_una);
        let cum_acked = s.bytes_acked as u64;
        let rs = self.rate.on_ack(now, s.snd_una, cum_acked, self.min_rtt);
        // `rs->acked_sacked`: data SACKed earlier was delivered (and counted) when SACKed.
        self.acked_sacked = self.rate.delivered.saturating_sub(self.delivered_mark);
        self.delivered_mark = self.rate.delivered;
        let acked = self.acked_sacked;
        let newly_lost = self.rate.lost - self.lost_seen;
        self.lost_seen = self.rate.lost;
        let ece = std::mem::take(&mut self.ack_ece);
        let prior_in_flight = rs.map_or(self.rate.reported_prior().unwrap_or(self.rate.in_flight() + cum_acked), |r| r.prior_in_flight);
        let cwnd_limited = prior_in_flight + w.mss as u64 >= w.cwnd as u64;
        self.update_round(rs);
        if let Some(rs) = rs {
            self.update_latest_delivery_signals(&rs);
            self.update_congestion_signals(&rs, newly_lost, ece, w);
            self.update_ecn_alpha();
            self.check_full_bw_reached(&rs);
            self.check_startup_too_high(&rs, newly_lost, w.mss);
            self.check_drain(now, w);
            self.update_cycle_phase(now, &rs, acked, cwnd_limited, w);
        } else {
            self.check_drain(now, w);
        }
        self.update_min_rtt(now, s.fine_rtt.or(s.rtt), w);
        if let Some(rs) = rs {
            if self.loss_round_start {
                // `bbr_advance_latest_delivery_signals`: the new loss round starts from this sample.
                self.bw_latest = rs.rate();
                self.inflight_latest = rs.delivered;
            }
        }
        self.update_gains();
        self.set_pacing_rate(view, w);
        self.set_cwnd(w, acked);
    }

    fn update_round(&mut self, rs: Option<RateSample>) {
        self.round_start = false;
        let Some(rs) = rs else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.rate.delivered;
            self.round_count += 1;
            self.round_start = true;
            self.cons.on_round_start();
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
        }
    }

    /// `bbr_update_latest_delivery_signals`: the loss round and this round's best rate/delivery.
    fn update_latest_delivery_signals(&mut self, rs: &RateSample) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rs.rate());
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.rate.delivered;
            self.loss_round_start = true;
        }
    }

    /// `bbr_update_congestion_signals`: the max-bw sample, loss/CE in this round, and at the end
    /// of a loss round the lower bounds.
    fn update_congestion_signals(&mut self, rs: &RateSample, newly_lost: u64, ece: bool, w: &CcWindow) {
        let bw = rs.rate();
        if !rs.app_limited || bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(bw);
        }
        if ece && self.min_rtt.is_some_and(|m| m <= ECN_MAX_RTT) {
            self.ecn_eligible = true;
        }
        self.loss_in_round |= newly_lost > 0;
        self.ecn_in_round |= self.ecn_eligible && ece;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(w);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `bbr_adapt_lower_bounds`: cut bw_lo/inflight_lo by β on loss, inflight_lo by α/3 on ECN.
    fn adapt_lower_bounds(&mut self, w: &CcWindow) {
        if self.is_probing_bw() {
            return;
        }
        let keep = UNIT - self.p.beta;
        let mut ecn_inflight_lo = u64::MAX;
        if self.ecn_in_round {
            if self.inflight_lo == u64::MAX {
                self.inflight_lo = w.cwnd as u64;
            }
            let cut = UNIT - self.ecn_alpha * ECN_FACTOR / UNIT;
            ecn_inflight_lo = self.inflight_lo * cut / UNIT;
        }
        if self.loss_in_round {
            if self.bw_lo == u64::MAX {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo == u64::MAX {
                self.inflight_lo = w.cwnd as u64;
            }
            self.bw_lo = self.bw_latest.max(self.bw_lo * keep / UNIT).max(1);
            self.inflight_lo = self.inflight_latest.max(self.inflight_lo * keep / UNIT);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
    }

    /// `bbr_update_ecn_alpha`: per round, α ← (1 − 1/16)·α + 1/16 · CE share of the round.
    fn update_ecn_alpha(&mut self) {
        if !self.round_start {
            return;
        }
        let delivered = self.rate.delivered - self.alpha_delivered;
        let ce = self.rate.delivered_ce - self.alpha_delivered_ce;
        self.alpha_delivered = self.rate.delivered;
        self.alpha_delivered_ce = self.rate.delivered_ce;
        if delivered == 0 || !self.ecn_eligible {
            return;
        }
        let ratio = (ce * UNIT / delivered).min(UNIT);
        self.ecn_alpha = ((UNIT - ECN_ALPHA_GAIN) * self.ecn_alpha / UNIT + ECN_ALPHA_GAIN * ratio / UNIT).min(UNIT);
        // STARTUP's ECN exit counts rounds whose CE share reached the threshold.
        if !self.full_bw_reached {
            self.startup_ecn_rounds = if ratio >= ECN_THRESH { self.startup_ecn_rounds + 1 } else { 0 };
        }
    }

    /// `bbr_check_full_bw_reached`: 3 non-app-limited rounds without 25 % growth of max_bw.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || rs.app_limited || !self.round_start {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_THRESH / UNIT {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_COUNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// STARTUP's loss and ECN exits (`bbr_check_loss_too_high_in_startup`, `..._ecn_...`).
    fn check_startup_too_high(&mut self, rs: &RateSample, newly_lost: u64, mss: u32) {
        if self.full_bw_reached {
            return;
        }
        if newly_lost > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1;
        }
        let loss_exit = self.loss_round_start && self.cons.ca_state == CaState::Recovery && self.loss_events_in_round >= FULL_LOSS_CNT && self.inflight_too_high(rs);
        if loss_exit || self.startup_ecn_rounds >= FULL_ECN_CNT {
            // `bbr_handle_queue_too_high_in_startup`.
            self.full_bw_reached = true;
            self.full_bw_now = true;
            let bdp = self.inflight(self.max_bw(), UNIT, mss);
            self.inflight_hi = bdp.max(self.inflight_latest);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    fn check_drain(&mut self, now: Nanos, w: &CcWindow) {
        if self.mode == Mode3::Startup && self.full_bw_reached {
            self.enter(now, Mode3::Drain);
        }
        if self.mode == Mode3::Drain && self.rate.pipe() <= self.inflight(self.max_bw(), UNIT, w.mss) {
            self.start_down(now);
        }
    }

    /// `bbr_adapt_upper_bounds` then `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(&mut self, now: Nanos, rs: &RateSample, acked: u64, cwnd_limited: bool, w: &CcWindow) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(now, rs, acked, cwnd_limited, w) {
            return;
        }
        let Mode3::ProbeBw(phase) = self.mode else { return };
        let inflight = rs.prior_in_flight;
        match phase {
            Phase::Down => {
                if self.check_time_to_probe(now, w) {
                    return;
                }
                let cruise = inflight <= self.inflight_with_headroom(w.mss) && inflight <= self.inflight(self.max_bw(), UNIT, w.mss);
                if cruise {
                    self.start_cruise(now);
                }
            }
            Phase::Cruise => {
                self.check_time_to_probe(now, w);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_up(now, rs.rate(), w);
                }
            }
            Phase::Up => {
                let done = if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    true
                } else if cwnd_limited && w.cwnd as u64 >= self.inflight_hi {
                    // inflight_hi limits the probe: the plateau test starts again.
                    self.reset_full_bw();
                    self.full_bw = rs.rate();
                    false
                } else {
                    self.full_bw_now
                };
                if done {
                    self.prev_probe_too_high = false;
                    self.start_down(now);
                }
            }
        }
    }

    /// Returns true when it already changed state.
    fn adapt_upper_bounds(&mut self, now: Nanos, rs: &RateSample, acked: u64, cwnd_limited: bool, w: &CcWindow) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if matches!(self.mode, Mode3::ProbeBw(_)) && !rs.app_limited && self.bw_hi[1] > 0 {
                // `bbr_advance_max_bw_filter`: a new cycle's slot.
                self.bw_hi[0] = self.bw_hi[1];
                self.bw_hi[1] = 0;
            }
            if matches!(self.mode, Mode3::ProbeBw(_)) && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_refill(now);
                return true;
            }
        }
        if self.inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(now, rs, w);
                return true;
            }
            return false;
        }
        if self.inflight_hi == u64::MAX {
            return false;
        }
        if rs.tx_in_flight > self.inflight_hi {
            self.inflight_hi = rs.tx_in_flight;
        }
        if self.mode == Mode3::ProbeBw(Phase::Up) {
            self.probe_inflight_hi_upward(acked, cwnd_limited, w);
        }
        false
    }

    /// `bbr_check_time_to_probe_bw`: probe_wait elapsed, or the Reno-coexistence round count.
    fn check_time_to_probe(&mut self, now: Nanos, w: &CcWindow) -> bool {
        let reno_rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(w) / w.mss.max(1) as u64);
        if now > self.cycle_stamp + self.probe_wait || self.rounds_since_probe >= reno_rounds {
            self.start_refill(now);
            return true;
        }
        false
    }

    /// `bbr_update_min_rtt` (v3): `probe_rtt_min` over 5 s feeds the 10 s `min_rtt`; PROBE_RTT
    /// when `probe_rtt_min` expires.
    fn update_min_rtt(&mut self, now: Nanos, rtt: Option<Nanos>, w: &mut CcWindow) {
        let interval = self.p.probe_rtt_interval_ms * MS;
        let probe_rtt_expired = now > self.probe_rtt_min_stamp + interval;
        let stamp_before = self.probe_rtt_min_stamp;
        if let Some(r) = rtt {
            if self.probe_rtt_min.is_none_or(|m| r < m) || probe_rtt_expired {
                self.probe_rtt_min = Some(r);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(p) = self.probe_rtt_min {
            if self.min_rtt.is_none_or(|m| p <= m) || min_rtt_expired {
                self.min_rtt = Some(p);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
        if self.p.probe_rtt_ms > 0 && probe_rtt_expired && self.mode != Mode3::ProbeRtt && self.probe_rtt_min.is_some() {
            self.enter(now, Mode3::ProbeRtt);
            if self.probe_rtt_min_stamps.len() < LOG_CAP {
                self.probe_rtt_min_stamps.push(stamp_before);
            }
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.mode == Mode3::ProbeRtt {
            self.rate.mark_app_limited();
            if self.probe_rtt_done.is_none() && self.rate.pipe() <= self.probe_rtt_cwnd(w.mss) {
                self.probe_rtt_done = Some(now + self.p.probe_rtt_ms * MS);
                self.probe_rtt_round_done = false;
                self.start_round();
            } else if let Some(done) = self.probe_rtt_done {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.probe_rtt_min_stamp = now;
                    w.cwnd = w.cwnd.max(self.cons.prior_cwnd);
                    // `bbr_exit_probe_rtt`.
                    self.reset_lower_bounds();
                    if self.full_bw_reached {
                        self.start_down(now);
                        self.start_cruise(now);
                    } else {
                        self.enter(now, Mode3::Startup);
                    }
                }
            }
        }
    }

    /// PROBE_RTT's cwnd: max(BDP/2, 4 packets).
    pub(super) fn probe_rtt_cwnd(&self, mss: u32) -> u64 {
        self.bdp(self.bw(), PROBE_RTT_CWND_GAIN, mss).max(MIN_CWND_PKTS as u64 * mss as u64)
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode3::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode3::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN),
            Mode3::ProbeBw(Phase::Up) => (UP_GAIN, UP_CWND_GAIN),
            Mode3::ProbeBw(Phase::Down) => (DOWN_GAIN, CWND_GAIN),
            Mode3::ProbeBw(_) => (UNIT, CWND_GAIN),
            Mode3::ProbeRtt => (UNIT, UNIT),
        };
    }

    fn set_pacing_rate(&mut self, view: &SenderView<'_>, w: &CcWindow) {
        if !self.has_seen_rtt {
            if let Some(srtt) = view.fine_srtt.filter(|r| *r > 0) {
                self.has_seen_rtt = true;
                let bw = (w.cwnd as u128 * SEC as u128 / srtt as u128) as u64;
                self.pacing_rate = Some(BbrCc::rate_for(bw, STARTUP_PACING_GAIN));
            }
        }
        let rate = BbrCc::rate_for(self.bw(), self.pacing_gain);
        if self.full_bw_reached || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    /// `bbr_set_cwnd` with the v3 bounds (`bbr_bound_cwnd_for_inflight_model`).
    fn set_cwnd(&mut self, w: &mut CcWindow, acked: u64) {
        let mss = w.mss as u64;
        let min_cwnd = MIN_CWND_PKTS as u64 * mss;
        if acked > 0 && !self.cons.recover_or_restore(w) {
            let target = self.inflight(self.bw(), self.cwnd_gain, w.mss);
            let mut cwnd = w.cwnd as u64;
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || self.rate.delivered < 10 * mss {
                cwnd += acked;
            }
            w.cwnd = cwnd.max(min_cwnd).min(u32::MAX as u64) as u32;
        }
        if self.mode == Mode3::ProbeRtt {
            w.cwnd = (w.cwnd as u64).min(self.probe_rtt_cwnd(w.mss)) as u32;
        }
        let cap = match self.mode {
            Mode3::ProbeBw(Phase::Cruise) | Mode3::ProbeRtt => self.inflight_with_headroom(w.mss),
            Mode3::ProbeBw(_) => self.inflight_hi,
            _ => u64::MAX,
        };
        let cap = cap.min(self.inflight_lo).max(min_cwnd);
        w.cwnd = (w.cwnd as u64).min(cap).min(w.max_cwnd as u64) as u32;
    }

}

impl CongestionControl for Bbr3Cc {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        self.on_ack_main(w, s, view);
    }

    fn on_ack_in_recovery(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>) {
        self.on_ack_main(w, s, view);
        self.acked_this_ack = true;
    }

    fn on_ack_event(&mut self, _now: Nanos, bytes_acked: u32, ece: bool, _snd_una: u64, _snd_nxt: u64) {
        if ece {
            self.rate.on_ce(bytes_acked as u64);
            self.ack_ece = true;
        }
    }

    /// No multiplicative decrease (the bounds do it); the cwnd is saved for the restore.
    fn ssthresh(&mut self, w: &CcWindow, _flight: u32, _snd_wnd: u32, _ev: LossEvent) -> u32 {
        self.loss_cwnd = w.cwnd;
        self.save_cwnd(w.cwnd);
        w.cwnd
    }

    fn on_send(&mut self, now: Nanos, seq: u64, len: u32, retransmit: bool) {
        if retransmit {
            self.rate.on_lost(len as u64);
        }
        self.rate.on_send(now, seq, len);
    }

    fn on_recovery_pipe(&mut self, w: &mut CcWindow, pipe: u64, delivered: u64) {
        // An ACK that advanced snd_una conserves with what it newly delivered, not the
        // cumulative advance the endpoint reports; a duplicate ACK with the segment it SACKed,
        // which the next ACK must not count again.
        let delivered = if std::mem::take(&mut self.acked_this_ack) {
            self.acked_sacked
        } else {
            self.delivered_mark = self.rate.delivered;
            delivered
        };
        if self.cons.on_recovery_pipe(w, pipe, delivered) {
            self.start_round();
        }
    }

    forward_rate_events!();

    fn on_recovery(&mut self, _w: &mut CcWindow, entered: bool) {
        self.cons.on_recovery(entered);
        self.acked_this_ack = false;
    }

    /// A timeout as Google's v3 takes it (`tcp_enter_loss`): first the flight is marked lost a
    /// segment at a time (`bbr_skb_marked_lost`: the loss round is noted and, while probing, each
    /// segment's `tx.in_flight` and the losses since it left, this one included, are checked
    /// against the loss threshold, with the cwnd from before the timeout); then
    /// `bbr_set_state(TCP_CA_Loss)` restarts full-pipe detection and, when not probing with no
    /// `inflight_lo`, sets `inflight_lo` = max(cwnd, prior_cwnd). No sample of its own.
    fn on_timeout(&mut self, w: &mut CcWindow) {
        let pre = CcWindow { cwnd: w.cwnd.max(self.loss_cwnd), ..*w };
        let now = self.cycle_stamp.max(self.rate.delivered_time);
        let mut lost = self.rate.lost;
        let marks: Vec<(u64, u64, u64, bool)> = self.rate.unsacked().collect();
        for (len, tx_in_flight, tx_lost, app_limited) in marks {
            lost += len;
            self.note_loss();
            if !self.bw_probe_samples {
                continue;
            }
            let rs = RateSample { tx_in_flight, lost: lost - tx_lost, app_limited, ..Default::default() };
            if self.inflight_too_high(&rs) {
                self.handle_inflight_too_high(now, &rs, &pre);
            }
        }
        self.cons.on_timeout(self.rate.snd_max());
        self.reset_full_bw();
        if !self.is_probing_bw() && self.inflight_lo == u64::MAX {
            self.inflight_lo = (w.cwnd.max(self.cons.prior_cwnd)) as u64;
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.pacing_rate
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}
