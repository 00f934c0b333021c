//! Segment arrival (RFC 793 §3.9 "SEGMENT ARRIVES", 4.4BSD tcp_input.c): the state machine's
//! checks, the ACK processing (duplicate ACKs, loss recovery, ECN echo, SACK blocks, the window
//! update, new data acknowledged), handing the payload to the receive side.

use super::{Endpoint, TcpState};
use crate::opt64::Opt64;
use crate::cc::{AckSample, CcVerdict, LossEvent, SenderView};
use crate::config::TimerModel;
use crate::recovery::{RecoveryCtx, RecoveryOutcome};
use crate::seq::unwrap;
use crate::trace::TraceKind;
use crate::{Flags, Nanos, Segment, MS};

impl Endpoint {
    /// Process one arriving segment.
    pub fn on_segment(&mut self, now: Nanos, seg: &Segment) {
        self.stats.segments_received += 1;
        self.idle_ticks = 0;
        self.drain_reads(now);
        match self.state {
            TcpState::Closed => {
                self.answer_with_rst(seg);
                return;
            }
            TcpState::Listen => {
                if seg.flags.rst() {
                    return;
                }
                if seg.flags.ack() {
                    self.answer_with_rst(seg);
                    return;
                }
                if seg.flags.syn() {
                    self.take_syn_options(seg);
                    self.state = TcpState::SynReceived;
                    self.syn_pending = true;
                    self.read_last = now;
                }
                return;
            }
            TcpState::SynSent => {
                let ack_ok = seg.flags.ack() && seg.ack == self.wire_snd(1);
                if seg.flags.ack() && !ack_ok {
                    if !seg.flags.rst() {
                        self.answer_with_rst(seg);
                    }
                    return;
                }
                if seg.flags.rst() {
                    if ack_ok {
                        self.abort(now);
                    }
                    return;
                }
                if seg.flags.syn() && ack_ok {
                    self.take_syn_options(seg);
                    self.snd_una = 1;
                    self.snd_wl1 = 0;
                    self.snd_wl2 = 1;
                    self.timer.on_ack(now, 1);
                    self.timer.stop(&mut self.rto_deadline);
                    self.log.ack(now, 1);
                    self.established(now);
                    self.ack.ack_now = true;
                    if self.close_requested {
                        // fall through to normal output which sends FIN
                    }
                }
                // Simultaneous open is not supported (deliberate).
                return;
            }
            _ => {}
        }

        // Synchronized states.
        let seg_seq = match unwrap(seg.seq, self.wire_rcv(self.rcv_nxt), self.rcv_nxt) {
            Some(s) => s,
            None => {
                self.ack.ack_now = true;
                return;
            }
        };
        if seg.flags.rst() {
            // RFC 5961-lite: accept a RST whose seq is within the window.
            let right = self.rcv_nxt + self.recv_window_free() as u64 + 1;
            if seg_seq >= self.rcv_nxt && seg_seq < right.max(self.rcv_adv + 1) {
                self.abort(now);
            }
            return;
        }
        if seg.flags.syn() {
            // A retransmitted SYN (our SYN-ACK was lost) or SYN-ACK (our ACK was lost):
            // answer with SYN-ACK / ACK again.
            if self.state == TcpState::SynReceived {
                self.syn_pending = true;
            } else {
                self.ack.ack_now = true;
            }
            return;
        }
        if self.state == TcpState::TimeWait {
            // Retransmitted FIN: ACK it and restart the 2MSL wait.
            if seg.len > 0 || seg.flags.fin() {
                self.ack.ack_now = true;
                self.tw_deadline = Opt64::some(now + self.cfg.time_wait);
            }
            return;
        }
        if self.ecn.ok {
            // (`EcnState::on_segment` and `take_ce_state` do nothing without ECN.)
            self.ecn_on_segment(now, seg);
        }
        // RFC 1323 ts_recent update (simplified PAWS-free rule of RFC 1323 §4.2.1).
        if let Some((tsval, _)) = seg.ts {
            if self.ts_ok && seg_seq <= self.rcv_nxt && seg_seq + seg.seq_len() as u64 >= self.rcv_nxt {
                self.ts_recent = tsval;
            }
        }
        if !seg.flags.ack() {
            return;
        }
        if self.state == TcpState::SynReceived {
            if seg.ack == self.wire_snd(1) {
                self.snd_una = 1;
                if self.snd_nxt < 1 {
                    self.snd_nxt = 1;
                }
                self.timer.on_ack(now, 1);
                self.timer.stop(&mut self.rto_deadline);
                self.log.ack(now, 1);
                self.established(now);
                self.snd_wnd = seg.wnd;
                self.max_sndwnd = self.max_sndwnd.max(seg.wnd);
                self.snd_wl1 = seg_seq;
                self.snd_wl2 = 1;
            } else {
                self.answer_with_rst(seg);
                return;
            }
        }
        if !self.process_ack(now, seg, seg_seq) {
            return;
        }
        if self.state == TcpState::Closed {
            return;
        }
        if seg.len > 0 || seg.flags.fin() {
            self.process_data(now, seg, seg_seq);
        }
        self.maybe_auto_close();
        if self.snd_wnd == 0 {
            self.check_persist(now);
        }
    }

    /// A segment of an ECN connection: the CE state and the echo (RFC 3168 §6.1.3, RFC 8257
    /// §3.2), counted.
    #[inline(never)]
    fn ecn_on_segment(&mut self, now: Nanos, seg: &Segment) {
        if self.ecn.on_segment(seg) && (self.ack.delack || self.ack.unacked_bytes > 0) {
            // RFC 8257 §3.2: the CE state changes; ACK what came before with the old state.
            let a = self.pure_ack(now);
            self.ecn_ack_pending = Some(Box::new(a));
        }
        self.ecn.take_ce_state(seg);
        self.stats.ecn_ce_received = self.ecn.ce_received;
    }

    pub(super) fn answer_with_rst(&mut self, seg: &Segment) {
        if seg.flags.rst() {
            return;
        }
        let (seq, ack, flags) = if seg.flags.ack() {
            (seg.ack, 0, Flags::RST)
        } else {
            (0, seg.seq.wrapping_add(seg.seq_len()), Flags::RST | Flags::ACK)
        };
        self.rst_pending = Some(Box::new(Segment { seq, ack, flags, ..Default::default() }));
    }

    /// ACK processing (tcp_input.c "Ack processing"). Returns false if the segment is to be
    /// dropped after this (ack beyond snd_max → dropafterack).
    ///
    /// Inlined into `on_segment`: a receiver's data segment (no new ACK) stops here; a new ACK,
    /// a duplicate ACK, SACK blocks and ECN echoes go out of line (issue 28).
    #[inline]
    pub(super) fn process_ack(&mut self, now: Nanos, seg: &Segment, seg_seq: u64) -> bool {
        let ack = match unwrap(seg.ack, self.wire_snd(self.snd_una), self.snd_una) {
            Some(a) => a,
            None => return true,
        };
        if ack > self.snd_max {
            self.ack.ack_now = true;
            return false;
        }
        self.report_in_flight(true);
        self.take_sack_blocks(now, seg, ack);
        if self.hooks.cc() && ack > self.snd_una {
            // Every ACK that advances snd_una, before the ECN reaction (Linux `in_ack_event`).
            let bytes = (self.data_acked(ack) - self.data_acked(self.snd_una)).min(u32::MAX as u64) as u32;
            let ece = self.ecn.ok && seg.flags.contains(Flags::ECE);
            self.cc.on_ack_event(now, bytes, ece, ack.saturating_sub(1), self.snd_nxt.max(ack).saturating_sub(1));
        }
        let mut ecn_reduced = false;
        if seg.flags.contains(Flags::ECE) {
            if !self.ecn.ok {
                // RFC 3168 §6.1.1: ECN was not negotiated, so ECE means nothing here (an
                // ECN-setup SYN-ACK is the handshake's business, not counted).
                if !seg.flags.contains(Flags::SYN) {
                    self.stats.ecn_ece_ignored += 1;
                }
            } else if ack >= self.snd_una {
                ecn_reduced = self.on_ecn_echo(now, ack);
            }
        }
        let old_wnd = self.snd_wnd;
        let old_una = self.snd_una;
        if ack <= self.snd_una {
            // Duplicate-ACK test of 4.4BSD tcp_input.c: no data, same window, ack == snd_una,
            // retransmit timer running (here: data outstanding and the window open — in BSD a
            // zero-window probe runs the persist timer, not REXMT, so its ACKs are not counted).
            if seg.len == 0 && seg.wnd == self.snd_wnd && !seg.flags.fin() {
                if self.snd_max <= self.snd_una || ack != self.snd_una || self.snd_wnd == 0 {
                    self.dupacks = 0;
                } else {
                    self.dupacks += 1;
                    self.stats.dupacks_received += 1;
                    self.record(now, TraceKind::DupAck, ack, 0);
                    // Planted fault (crate::faults): the threshold dup ACK is ignored.
                    if self.timer.is_linux() {
                        self.linux_rtt_sample(now, ack, None);
                    }
                    if !(self.cfg.faults.no_fast_retransmit && self.dupacks >= self.cfg.dupack_threshold) {
                        self.on_dupack(now);
                    }
                }
            } else {
                self.dupacks = 0;
            }
        } else {
            let predicted = self.on_new_ack(now, seg, seg_seq, ack, ecn_reduced);
            if self.state == TcpState::Closed {
                return false;
            }
            if predicted {
                // BSD's fast path returns here (the window is unchanged: tiwin == snd_wnd).
                return true;
            }
        }
        // Window update (RFC 793 / tcp_input.c step 6).
        if self.snd_wl1 < seg_seq || (self.snd_wl1 == seg_seq && (self.snd_wl2 < ack || (self.snd_wl2 == ack && seg.wnd > self.snd_wnd))) {
            self.snd_wnd = seg.wnd;
            self.snd_wl1 = seg_seq;
            self.snd_wl2 = ack;
            self.max_sndwnd = self.max_sndwnd.max(seg.wnd);
            if old_wnd == 0 && seg.wnd > 0 && ack == self.snd_una && self.snd_nxt > self.snd_una {
                // The window re-opened: what we sent into the closed window (a probe) was
                // dropped by the receiver; resend from snd_una (tcp_output.c pulls snd_nxt back
                // when the window shrinks to zero).
                self.snd_nxt = self.snd_una;
            }
        }
        // Seed 001 §3.5 (Lite.6), "inserted after the window information is updated":
        // `if (acked >= 3*t_maxseg && (snd_cwnd - (snd_nxt - snd_una)) > 3*t_maxseg)` cut cwnd to
        // (snd_nxt - snd_una) + 3*t_maxseg (crate::lite::limit_big_ack).
        if ack > old_una && self.cfg.lite.is_some_and(|l| l.big_ack) {
            crate::lite::limit_big_ack(&mut self.w, ack - old_una, self.snd_nxt - self.snd_una);
        }
        true
    }

    /// Tell the CC the data in flight as Linux counts it, when the recovery keeps a scoreboard
    /// (`prior`: at the start of an ACK, Linux `prior_in_flight`).
    pub(super) fn report_in_flight(&mut self, prior: bool) {
        if self.hooks.cc() {
            if let Some(p) = self.rec.linux_in_flight() {
                self.cc.on_in_flight(p, prior);
            }
        }
    }

    #[inline(never)]
    pub(super) fn on_dupack(&mut self, now: Nanos) {
        let verdict = if self.hooks.cc_segment() {
            let view = sender_view!(self, now, self.dupacks);
            self.cc.on_dupack(&mut self.w, &view)
        } else {
            CcVerdict::Continue
        };
        if verdict == CcVerdict::RetransmitOldest {
            self.cc_retransmit(now);
        }
        let mut ctx = recovery_ctx!(self, now);
        let out = self.rec.on_dupack(&mut ctx);
        if out.entered || out.fast_retransmit {
            self.ecn.on_loss_reduction(self.snd_max);
        }
        self.apply_recovery(now, out);
        self.cc_sack_ack(now);
        let mss = self.eff_mss as u64;
        self.report_recovery_pipe(mss);
        self.note_cwnd();
    }

    /// A duplicate ACK reaches the CC's model (Linux `tcp_cong_control` on every ACK; BBR v1),
    /// with the data in flight after its SACK blocks and loss marks.
    fn cc_sack_ack(&mut self, now: Nanos) {
        if !self.hooks.cc() {
            return;
        }
        self.report_in_flight(false);
        let sample = AckSample {
            now,
            bytes_acked: 0,
            rtt: None,
            fine_rtt: None,
            in_slow_start: self.w.in_slow_start(),
            snd_una: self.snd_una.saturating_sub(1),
            snd_nxt: self.snd_nxt.saturating_sub(1),
            flight: (self.snd_max - self.snd_una).min(u32::MAX as u64) as u32,
            ece: false,
        };
        let view = sender_view!(self, now, self.dupacks);
        self.cc.on_sack_ack(&mut self.w, &sample, &view);
    }

    /// A CC asked for the oldest segment to be retransmitted now (Vegas). Counted and traced as
    /// a fast retransmit; like BSD's fast retransmit the coarse timer is stopped so that it
    /// re-arms when the retransmission leaves.
    pub(super) fn cc_retransmit(&mut self, now: Nanos) {
        if self.snd_max > self.snd_una {
            self.pending_retx = Opt64::some(self.snd_una);
            self.timer.cancel_timing();
            self.timer.stop(&mut self.rto_deadline);
            self.stats.fast_retransmits += 1;
            self.record(now, TraceKind::FastRetransmit, self.snd_una, 0);
        }
    }

    /// Act on what the recovery decided; most ACKs decide nothing (issue 28: out of line only
    /// when there is something to do).
    #[inline]
    pub(super) fn apply_recovery(&mut self, now: Nanos, out: RecoveryOutcome) {
        if out.restart_timer || out.fast_retransmit || out.entered || out.exited || out.set_snd_nxt.is_some() || out.retransmit.is_some() {
            self.apply_recovery_outcome(now, out);
        }
    }

    #[inline(never)]
    fn apply_recovery_outcome(&mut self, now: Nanos, out: RecoveryOutcome) {
        if out.restart_timer {
            self.timer.stop(&mut self.rto_deadline);
            self.timer.cancel_timing();
        }
        if out.fast_retransmit {
            self.stats.fast_retransmits += 1;
            self.record(now, TraceKind::FastRetransmit, self.snd_una, 0);
        }
        if out.entered {
            self.record(now, TraceKind::RecoveryEnter, self.snd_una, 0);
        }
        if let Some(n) = out.set_snd_nxt {
            self.snd_nxt = n;
            self.pending_retx = Opt64::NONE;
        }
        if let Some(s) = out.retransmit {
            if s < self.snd_max {
                self.pending_retx = Opt64::some(s);
            }
        }
        if out.exited {
            self.record(now, TraceKind::RecoveryExit, self.snd_una, 0);
        }
        if out.restart_timer && self.snd_max > self.snd_una && out.retransmit.is_none() && out.set_snd_nxt.is_none() {
            self.timer.restart(&mut self.rto_deadline, now);
        }
    }

    /// Linux's RTT sample of an ACK (`tcp_clean_rtx_queue` → `tcp_ack_update_rtt`), for the
    /// `linux` timer model: the oldest newly acknowledged segment (none if any of them was
    /// retransmitted), else the newly SACKed segment the first SACK block reports (the most
    /// recently received, RFC 2018; none if retransmitted or if the block is a D-SACK or a
    /// repeat), else the timestamp echo `ts_rtt`. Deviation: Linux skips segments SACKed before
    /// the cumulative ACK reached them; tcplab's send log does not know them, and outside
    /// reordering the first of them is a retransmission, which gives no sample in both.
    fn linux_rtt_sample(&mut self, now: Nanos, ack: u64, ts_rtt: Option<Nanos>) {
        let seq_rtt = if ack > self.snd_una { self.log.oldest_acked_rtt(now, ack) } else { None };
        let mut sack_rtt = None;
        if let Some(blocks) = self.sack_in.as_deref().filter(|_| self.sack_in_n > 0) {
            let (a, b) = blocks[0];
            let dsack = b <= ack || (self.sack_in_n > 1 && blocks[1].0 <= a && b <= blocks[1].1);
            if !dsack && self.timer.linux_newly_sacked(b) {
                sack_rtt = self.log.sacked_rtt(now, b - 1);
            }
        }
        if let Some(r) = seq_rtt.or(sack_rtt).or(ts_rtt) {
            self.timer.sample_linux(r, ack.max(self.snd_una), self.snd_max);
        }
    }

    /// Unwrap the ACK's SACK blocks into `sack_in`, count them and D-SACKs (RFC 2883 §4: the
    /// first block lies below the cumulative ACK or inside the second block), trace them.
    #[inline]
    pub(super) fn take_sack_blocks(&mut self, now: Nanos, seg: &Segment, ack: u64) {
        self.sack_in_n = 0;
        if self.sack_ok && !seg.sack.is_empty() {
            self.take_sack_blocks_of(now, seg, ack);
        }
    }

    #[inline(never)]
    fn take_sack_blocks_of(&mut self, now: Nanos, seg: &Segment, ack: u64) {
        self.stats.sack_acks_received += 1;
        let mut blocks = [(0u64, 0u64); 4];
        let mut n = 0;
        for &(l, r) in seg.sack.as_slice() {
            let (Some(a), Some(b)) = (unwrap(l, self.wire_snd(self.snd_una), self.snd_una), unwrap(r, self.wire_snd(self.snd_una), self.snd_una)) else { continue };
            if b > a && b <= self.snd_max {
                blocks[n] = (a, b);
                n += 1;
            }
        }
        let blocks = &blocks[..n];
        for &(a, b) in blocks {
            // Delivery-rate estimation (BBR) counts SACKed data when it is reported.
            if b > ack {
                self.cc.on_sacked(now, a.max(ack).saturating_sub(1), b.saturating_sub(1));
            }
        }
        if let Some(&(a, b)) = blocks.first() {
            let inside_second = blocks.len() > 1 && blocks[1].0 <= a && b <= blocks[1].1;
            if b <= ack || inside_second {
                self.stats.dsacks_received += 1;
            }
        }
        if self.trace.is_some() {
            for &(a, b) in blocks {
                self.record(now, TraceKind::Sack, a, (b - a).min(u32::MAX as u64) as u32);
            }
        }
        if n > 0 {
            self.sack_in.get_or_insert_with(Box::default)[..n].copy_from_slice(blocks);
            self.sack_in_n = n as u8;
        }
    }

    /// An ACK with ECE (RFC 3168 §6.1.2, ns-2 `TcpAgent::ecn`). Returns true if the window was
    /// reduced.
    #[inline(never)]
    pub(super) fn on_ecn_echo(&mut self, now: Nanos, ack: u64) -> bool {
        let reduce = self.ecn.on_ece(ack, self.snd_max, self.rec.in_recovery());
        self.stats.ecn_ece_received = self.ecn.ece_acks;
        if !reduce {
            return false;
        }
        self.stats.ecn_reactions = self.ecn.reactions;
        let flight = (self.snd_max - self.snd_una).min(u32::MAX as u64) as u32;
        self.w.ssthresh = self.cc.ssthresh(&self.w, flight, self.snd_wnd, LossEvent::Ecn);
        self.w.cwnd = self.w.ssthresh;
        self.record(now, TraceKind::EcnReduce, ack, 0);
        true
    }

    /// Which limit binds the usable window now (0 send buffer, 1 advertised window, 2 cwnd or a
    /// full path), and
    /// charge the time since the previous new ACK to the limit that bound then. Only while the
    /// application has more to send than the send buffer holds (a finished writer is limited by
    /// nothing).
    pub(super) fn account_window_limit(&mut self, now: Nanos) {
        if let Some(since) = self.stats.limit_since.get() {
            self.stats.limited_ns[self.stats.limit_which as usize] += now.saturating_sub(since);
        }
        let acked_data = self.snd_una.saturating_sub(1).min(self.app_written);
        let backlog = self.app_written.saturating_sub(acked_data);
        let sndbuf = self.cfg.send_buffer;
        let which = if backlog < sndbuf as u64 {
            None
        } else if sndbuf <= self.snd_wnd.min(self.w.cwnd) {
            Some(0)
        } else if self.snd_wnd < self.w.cwnd {
            Some(1)
        } else {
            Some(2)
        };
        // A buffer that binds while a queue has built up (smoothed RTT above 1.5 × the minimum)
        // is not what holds the flow back: the path is full. Count that time as cwnd/path time.
        let queued = matches!((self.fine_srtt.get(), self.stats.min_rtt.get()), (Some(s), Some(m)) if s > m + m / 2);
        let which = which.map(|w| if w < 2 && queued { 2 } else { w });
        match which {
            Some(w) => {
                self.stats.limit_since = Opt64::some(now);
                self.stats.limit_which = w;
            }
            None => self.stats.limit_since = Opt64::NONE,
        }
    }

    /// An ACK that advances snd_una. Returns true if Lite's header prediction took it.
    #[inline(never)]
    pub(super) fn on_new_ack(&mut self, now: Nanos, seg: &Segment, seg_seq: u64, ack: u64, ecn_reduced: bool) -> bool {
        self.account_window_limit(now);
        // 4.4BSD-Lite header prediction of a pure ACK (crate::lite::predicts_pure_ack):
        // `ti_len == 0 && SEQ_GT(ti_ack, snd_una) && SEQ_LEQ(ti_ack, snd_max) && snd_cwnd >=
        // snd_wnd` [Lite.1: `&& t_dupacks < tcprexmtthresh`], seed 001 §3.1. The fast path takes
        // the RTT sample and drops the acked data, but skips recovery (no deflation), the window
        // opening and the `t_dupacks = 0` of the slow path.
        let predicted = self.cfg.lite.is_some_and(|l| {
            crate::lite::predicts_pure_ack(
                &crate::lite::PredictionInput {
                    established: self.state == TcpState::Established,
                    only_ack_flag: !seg.flags.syn() && !seg.flags.fin() && !seg.flags.rst(),
                    in_sequence: seg_seq == self.rcv_nxt,
                    seg_len: seg.len,
                    seg_wnd: seg.wnd,
                    snd_wnd: self.snd_wnd,
                    snd_una: self.snd_una,
                    snd_nxt: self.snd_nxt,
                    snd_max: self.snd_max,
                    ack,
                    cwnd: self.w.cwnd,
                    dupacks: self.dupacks,
                    dupack_threshold: self.cfg.dupack_threshold,
                },
                l.header_prediction,
            )
        });

        // RTT: timestamps if negotiated (4.4BSD: rtt = tcp_now − ts_ecr + 1), else the timed
        // segment (Karn's rule: timing was cancelled by any retransmission).
        let mut rtt = None;
        if let (true, Some((_, ecr))) = (self.ts_ok, seg.ts) {
            if ecr != 0 {
                let ticks = self.tsval(now).wrapping_sub(ecr) as i32 + 1;
                let ns = match self.cfg.timer_model {
                    TimerModel::Bsd => (ticks.max(1) as u64 - 1) * crate::rto::SLOW_TICK,
                    TimerModel::Fine { .. } | TimerModel::Ns2 { .. } | TimerModel::Linux { .. } => (ticks.max(1) as u64 - 1) * MS,
                };
                self.timer.sample_external(ns, ticks);
                rtt = Some(ns);
            }
        }
        if self.timer.is_linux() {
            self.linux_rtt_sample(now, ack, rtt);
        } else if rtt.is_none() {
            rtt = self.timer.on_ack(now, ack);
        }
        let fine_rtt = self.log.ack(now, ack);
        if let Some(r) = fine_rtt {
            self.stats.min_rtt = Opt64::some(self.stats.min_rtt.get().map_or(r, |m| m.min(r)));
            self.stats.rtt_samples += 1;
            self.stats.rtt_sum += r as u128;
            self.stats.max_rtt = Opt64::some(self.stats.max_rtt.get().map_or(r, |m| m.max(r)));
            self.fine_srtt = Opt64::some(match self.fine_srtt.get() {
                None => r,
                Some(s) => s - s / 8 + r / 8,
            });
        }

        let prev_una = self.snd_una;
        let out = if predicted {
            self.stats.predicted_acks += 1;
            RecoveryOutcome::default()
        } else {
            let mut ctx = recovery_ctx!(self, now);
            let out = self.rec.on_ack(&mut ctx, ack);
            self.dupacks = 0;
            out
        };

        let newly_data = self.data_acked(ack) - self.data_acked(prev_una);
        self.snd_una = ack;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        if matches!(self.pending_retx.get(), Some(p) if p < ack) {
            self.pending_retx = Opt64::NONE;
        }
        // tcp_input.c: stop the timer when everything is acknowledged, else restart it.
        if ack == self.snd_max {
            self.timer.stop(&mut self.rto_deadline);
        } else {
            self.timer.restart(&mut self.rto_deadline, now);
        }
        self.report_in_flight(false);
        // Vegas-style checks on non-duplicate ACKs: after snd_una moved, so the send log's
        // oldest record is the segment now at the head; before the window grows.
        let verdict = if self.hooks.cc_segment() {
            let view = sender_view!(self, now, self.dupacks);
            self.cc.on_ack_check(&mut self.w, &view)
        } else {
            CcVerdict::Continue
        };
        let sample = AckSample {
            now,
            bytes_acked: newly_data.min(u32::MAX as u64) as u32,
            rtt,
            fine_rtt,
            in_slow_start: self.w.in_slow_start(),
            snd_una: self.snd_una.saturating_sub(1),
            snd_nxt: self.snd_nxt.saturating_sub(1),
            flight: (self.snd_max - self.snd_una).min(u32::MAX as u64) as u32,
            // Only a negotiated echo reaches the CC (RFC 3168 §6.1.1).
            ece: self.ecn.ok && seg.flags.contains(Flags::ECE),
        };
        if out.allow_growth && !ecn_reduced {
            let view = sender_view!(self, now, 0);
            let cam = self.trace.as_deref_mut().map(|t| &mut t.cam);
            let before = self.w.cwnd;
            self.cc.on_ack(&mut self.w, &sample, &view, cam);
            if self.cfg.faults.double_ca && !sample.in_slow_start && self.w.cwnd > before {
                // Planted fault (crate::faults): the congestion-avoidance increase, twice.
                self.w.cwnd = self.w.cwnd.saturating_add(self.w.cwnd - before).min(self.w.max_cwnd.max(before));
            }
        } else if self.hooks.cc() {
            let view = sender_view!(self, now, 0);
            self.cc.on_ack_in_recovery(&mut self.w, &sample, &view);
            self.report_recovery_pipe(newly_data);
        }
        self.apply_recovery(now, out);
        if out.retransmit.is_some() && out.restart_timer {
            // NewReno: first partial ACK resets the timer (RFC 6582 §3.2 step 5).
            self.timer.restart(&mut self.rto_deadline, now);
        }
        if verdict == CcVerdict::RetransmitOldest {
            self.cc_retransmit(now);
        }
        self.note_cwnd();
        self.stats.bytes_acked = self.data_acked(self.snd_una);
        if self.stats.completion_time.get().is_none() && self.app_written != u64::MAX && self.app_written > 0 && self.stats.bytes_acked >= self.app_written {
            self.stats.completion_time = Opt64::some(now);
        }
        self.record(now, TraceKind::Ack, ack, newly_data.min(u32::MAX as u64) as u32);

        // Our FIN acknowledged?
        if let Some(f) = self.fin_seq.get() {
            if ack > f {
                match self.state {
                    TcpState::FinWait1 => self.state = TcpState::FinWait2,
                    TcpState::Closing => {
                        self.state = TcpState::TimeWait;
                        self.tw_deadline = Opt64::some(now + self.cfg.time_wait);
                        self.timer.stop(&mut self.rto_deadline);
                    }
                    TcpState::LastAck => self.enter_closed(Some(now)),
                    _ => {}
                }
            }
        }
        predicted
    }
}
