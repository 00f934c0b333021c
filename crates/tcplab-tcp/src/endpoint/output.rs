//! Output (4.4BSD tcp_output.c): what to send now — SYN/FIN, retransmissions asked for by
//! recovery or the CC, SACK-governed sends under the pipe, new data within the window (Nagle,
//! sender SWS, pacing), pure ACKs — and building each segment with its options.

use super::{Endpoint, TcpState, TCP_MAXWIN};
use crate::opt64::Opt64;
use crate::ecn::EcnState;
use crate::recovery::{SackSend, SendGate};
use crate::rto::RetransmitTimer;
use crate::trace::TraceKind;
use crate::{Flags, Nanos, Segment};

impl Endpoint {
    /// Advertised window (tcp_output.c): receiver SWS avoidance, never shrink, quantise to the
    /// scale factor, cap at TCP_MAXWIN << rcv_scale.
    pub(super) fn adv_window(&mut self, syn: bool) -> u32 {
        let mut win = self.recv_window_free();
        if win < self.cfg.recv_buffer / 4 && win < self.eff_mss {
            win = 0;
        }
        let edge = self.rcv_adv.saturating_sub(self.rcv_nxt).min(u32::MAX as u64) as u32;
        win = win.max(edge);
        let (cap, scale) = if syn { (TCP_MAXWIN, 0) } else { (TCP_MAXWIN << self.rcv_scale, self.rcv_scale) };
        win = win.min(cap);
        // Round the right edge up so it never shrinks; round the value down to the scale.
        let q = (win >> scale) << scale;
        let q = if q < edge { ((edge + (1 << scale) - 1) >> scale) << scale } else { q };
        let q = q.min(cap);
        self.rcv_adv = self.rcv_adv.max(self.rcv_nxt + q as u64);
        q
    }

    pub(super) fn base_segment(&mut self, now: Nanos, seq: u64) -> Segment {
        let wnd = self.adv_window(false);
        Segment {
            seq: self.wire_snd(seq),
            ack: self.wire_rcv(self.rcv_nxt),
            flags: Flags::ACK,
            wnd,
            len: 0,
            mss: None,
            wscale: None,
            ts: if self.ts_ok { Some((self.tsval(now), self.ts_recent)) } else { None },
            ce: false,
            ect: false,
            ect1: false,
            sack_ok: false,
            sack: Default::default(),
        }
    }

    pub(super) fn after_send(&mut self, now: Nanos, seg: &Segment) {
        self.stats.segments_sent += 1;
        if seg.flags.ack() {
            self.ack.on_ack_sent();
        }
        let _ = now;
    }

    /// Next segment to send, if any. Call until `None` after every input.
    #[inline]
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Segment> {
        let seg = self.poll_transmit_tcp(now);
        if seg.is_none() && self.cfg.send_buffer_linux {
            return self.poll_transmit_after_linux_write(now);
        }
        seg
    }

    /// TCP has sent what it may; now the woken writer writes (endpoint/sndbuf.rs). Out of line so
    /// that `poll_transmit_tcp` keeps one inlined call site on the path every other run takes.
    #[cold]
    #[inline(never)]
    fn poll_transmit_after_linux_write(&mut self, now: Nanos) -> Option<Segment> {
        if !self.linux_writer_wakes() {
            return None;
        }
        self.linux_write();
        self.poll_transmit_tcp(now)
    }

    #[inline]
    fn poll_transmit_tcp(&mut self, now: Nanos) -> Option<Segment> {
        if self.rst_pending.is_some() || self.ecn_ack_pending.is_some() {
            return self.take_pending();
        }
        match self.state {
            TcpState::Closed | TcpState::Listen => return None,
            TcpState::SynSent | TcpState::SynReceived => {
                if !self.syn_pending {
                    return None;
                }
                return Some(self.syn_segment(now));
            }
            TcpState::TimeWait => {
                if self.ack.ack_now {
                    return Some(self.pure_ack(now));
                }
                return None;
            }
            _ => {}
        }
        // Forced single-segment retransmission (fast retransmit, partial ACK, CC request).
        if let Some(s) = self.pending_retx.take() {
            if let Some(seg) = self.forced_retransmit(now, s) {
                return Some(seg);
            }
        }
        if self.hooks.rec_send() && self.rec.governs_sending() {
            if let Some(seg) = self.send_under_pipe(now) {
                return Some(seg);
            }
        } else if let Some(seg) = self.poll_data(now) {
            return Some(seg);
        }
        if self.ack.ack_now {
            return Some(self.pure_ack(now));
        }
        None
    }

    /// A RST, then a DCTCP receiver's ACK of a CE-state change (out of line: rare).
    #[cold]
    #[inline(never)]
    fn take_pending(&mut self) -> Option<Segment> {
        if let Some(r) = self.rst_pending.take() {
            self.stats.segments_sent += 1;
            return Some(*r);
        }
        // Built (and counted) when the CE state changed (RFC 8257 §3.2).
        self.ecn_ack_pending.take().map(|a| *a)
    }

    /// The single-segment retransmission of `s` asked for by recovery or the CC, if `s` is
    /// still outstanding (out of line: rare).
    #[inline(never)]
    fn forced_retransmit(&mut self, now: Nanos, s: u64) -> Option<Segment> {
        if s >= self.snd_una && s < self.snd_max {
            let limit = self.send_limit();
            let len = limit.saturating_sub(s).min(self.eff_mss as u64) as u32;
            let fin = self.fin_abs() == Some(s + len as u64) && self.fin_seq.get().is_some();
            if len > 0 || fin {
                return Some(self.emit(now, s, len, fin, true));
            }
        }
        None
    }

    /// The SYN (or SYN-ACK) `poll_transmit` sends now (out of line: once per connection).
    #[inline(never)]
    fn syn_segment(&mut self, now: Nanos) -> Segment {
        self.syn_pending = false;
        let synack = self.state == TcpState::SynReceived;
        let wnd = self.adv_window(true);
        let seg = Segment {
            seq: self.iss,
            ack: if synack { self.wire_rcv(self.rcv_nxt) } else { 0 },
            flags: (if synack { Flags::SYN | Flags::ACK } else { Flags::SYN }) | EcnState::syn_flags(self.cfg.ecn, synack, self.ecn.ok),
            wnd,
            len: 0,
            mss: Some(self.cfg.mss.min(u16::MAX as u32) as u16),
            wscale: if self.cfg.window_scaling && (!synack || self.rcv_scale > 0 || self.snd_scale > 0) { Some(self.rcv_scale) } else { None },
            ts: if self.cfg.timestamps && (!synack || self.ts_ok) { Some((self.tsval(now), if synack { self.ts_recent } else { 0 })) } else { None },
            ce: false,
            ect: false,
            ect1: false,
            sack_ok: self.cfg.sack && (!synack || self.sack_ok),
            sack: Default::default(),
        };
        if self.snd_max == 0 {
            self.timer.start_timing(now, 0);
            self.hs_sent_at = Opt64::some(now);
        } else {
            self.timer.cancel_timing();
        }
        self.snd_nxt = 1;
        self.snd_max = 1;
        self.timer.restart(&mut self.rto_deadline, now);
        self.after_send(now, &seg);
        seg
    }

    /// SACK recovery: the recovery module picks a hole to retransmit or lets new data go
    /// (Fall & Floyd 1996 §3; RFC 6675 §5 `NextSeg`).
    pub(super) fn send_gate(&self) -> SendGate {
        SendGate {
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_max: self.snd_max,
            cwnd: self.w.cwnd,
            mss: self.eff_mss,
            snd_wnd: self.snd_wnd,
            send_limit: self.send_limit(),
        }
    }

    /// Tell the CC the recovery's pipe after an ACK (BBR's packet conservation).
    pub(super) fn report_recovery_pipe(&mut self, delivered: u64) {
        if !self.hooks.cc() {
            return;
        }
        let g = self.send_gate();
        if let Some(pipe) = self.rec.pipe_now(&g) {
            self.cc.on_recovery_pipe(&mut self.w, pipe, delivered);
        }
    }

    pub(super) fn send_under_pipe(&mut self, now: Nanos) -> Option<Segment> {
        let g = self.send_gate();
        match self.rec.next_send(&g) {
            SackSend::Retransmit { seq, len } => {
                if self.pacing_holds(now) {
                    return None;
                }
                let limit = self.send_limit();
                let len = (len as u64).min(limit.saturating_sub(seq)) as u32;
                let fin = self.fin_abs() == Some(seq + len as u64) && self.fin_seq.get().is_some();
                if len > 0 || fin {
                    return Some(self.emit(now, seq, len, fin, true));
                }
                None
            }
            SackSend::NewData => {
                self.gate_open = true;
                let seg = self.try_send_data(now);
                self.gate_open = false;
                seg
            }
            SackSend::NewDataFrom(from) => {
                self.snd_nxt = self.snd_nxt.max(from.min(self.snd_max));
                self.gate_open = true;
                let seg = self.try_send_data(now);
                self.gate_open = false;
                seg
            }
            SackSend::Blocked => None,
        }
    }

    pub(super) fn pure_ack(&mut self, now: Nanos) -> Segment {
        let mut seg = self.base_segment(now, self.snd_max);
        if self.sack_ok && self.sack_rcv.as_deref().is_some_and(|r| r.has_blocks()) {
            // RFC 2018 §3: 4 blocks fit the 40 option bytes, 3 beside timestamps.
            let max = if self.ts_ok { 3 } else { 4 };
            let irs = self.irs;
            seg.sack = self.sack_rcv().blocks(max, |x| irs.wrapping_add(x as u32));
        }
        self.ecn.decorate(&mut seg, false);
        self.stats.acks_sent += 1;
        self.after_send(now, &seg);
        if self.trace.is_some() {
            let r = self.rcv_nxt;
            self.record(now, TraceKind::AckSent, r, 0);
        }
        seg
    }

    /// The window new data may fill: the peer's offer, and the congestion window unless a
    /// pipe-governed recovery has opened the gate (`gate_open`).
    #[inline(always)]
    fn send_window(&self) -> u64 {
        if self.gate_open { self.snd_wnd as u64 } else { self.w.cwnd.min(self.snd_wnd) as u64 }
    }

    /// FIN may ride on the segment that carries the last byte, or go alone once all data is
    /// sent (and again after a go-back-N that rewound snd_nxt to it).
    #[inline(always)]
    fn fin_goes_with(&self, limit: u64, len: u64) -> bool {
        self.fin_abs().is_some_and(|f| self.snd_nxt + len == f && limit == f)
    }

    /// tcp_output.c: how much may be sent from snd_nxt now, with sender SWS avoidance and Nagle.
    #[inline]
    pub(super) fn try_send_data(&mut self, now: Nanos) -> Option<Segment> {
        let limit = self.send_limit();
        let win = self.send_window();
        let off = self.snd_nxt - self.snd_una;
        let avail = limit.saturating_sub(self.snd_nxt);
        let usable = win.saturating_sub(off);
        let mut len = avail.min(self.eff_mss as u64).min(usable);
        if self.hooks.cc() && avail < self.eff_mss as u64 && off < win && !self.rec.in_recovery() && !self.cfg.send_buffer_linux {
            // Less than a segment to send with room in the window: the application limits us.
            self.cc.on_app_limited();
        }
        let mut forced = false;
        if self.force_probe {
            self.force_probe = false;
            if len == 0 && avail > 0 {
                len = 1;
                forced = true;
            }
        }
        let fin = self.fin_goes_with(limit, len);
        if len == 0 && !fin {
            return None;
        }
        self.send_data_now(now, limit, off, len, fin, forced)
    }

    /// The rest of [`Endpoint::try_send_data`] once there is something to send (out of line:
    /// the frequent "nothing to send" answer then costs no large stack frame; issue 28).
    #[inline(never)]
    fn send_data_now(&mut self, now: Nanos, limit: u64, off: u64, mut len: u64, fin: bool, forced: bool) -> Option<Segment> {
        // A pacing CC (seed 003 §3.3) releases one segment when its timer has fired.
        if !forced && self.hooks.cc_segment() && self.cc.pacing_release().is_some_and(|t| t > now) {
            return None;
        }
        // A rate-pacing CC (BBR): wait for the release clock (endpoint/pacing.rs).
        if !forced && len > 0 && self.pacing_holds(now) {
            return None;
        }
        if len > 0 && self.snd_max == self.snd_una && self.snd_nxt == self.snd_max && self.restart_after_idle(now) {
            // The window may have shrunk to one segment: recompute what may go now.
            len = len.min(self.w.cwnd.min(self.snd_wnd) as u64);
            if len == 0 {
                return None;
            }
        }
        if len > 0 && len < self.eff_mss as u64 && !forced && !self.small_segment_may_go(limit, off, len) {
            return None;
        }
        let s = self.snd_nxt;
        Some(self.emit(now, s, len as u32, fin, false))
    }

    /// tcp_output.c's test of a segment shorter than the MSS: it goes if it takes everything
    /// buffered and Nagle allows (nothing in flight, or Nagle off), or it is at least half the
    /// largest window the peer offered, or it is a retransmission (sender SWS avoidance, Nagle).
    #[inline]
    fn small_segment_may_go(&self, limit: u64, off: u64, len: u64) -> bool {
        let idle = self.snd_max == self.snd_una;
        let buffered = limit - self.snd_una; // unacked + unsent bytes in the buffer
        let takes_all = len + off >= buffered && self.snd_nxt + len == limit;
        ((idle || !self.cfg.nagle) && takes_all) || len >= (self.max_sndwnd / 2) as u64 && self.max_sndwnd > 0 || self.snd_nxt < self.snd_max
    }

    /// [`Endpoint::try_send_data`] for `poll_transmit`, with its frequent answer "nothing" found
    /// inline (issue 28: about three polls in four find nothing to send — the receiver's, the
    /// one after the last segment of a flush, a window with room for less than a segment). The
    /// screen runs only where it decides exactly as `try_send_data` would: no modern hooks
    /// (`on_app_limited`, the pacing clock's wake-up) and no window probe pending. A short
    /// segment with data in flight is refused here by the same test `send_data_now` applies;
    /// `send_data_now`'s earlier checks (a pacing CC's release, an idle restart) would refuse it
    /// too or do not apply (the restart needs nothing in flight), and change nothing.
    #[inline(always)]
    fn poll_data(&mut self, now: Nanos) -> Option<Segment> {
        if self.hooks.cc() || self.force_probe {
            return self.try_send_data(now);
        }
        let win = self.send_window();
        let off = self.snd_nxt - self.snd_una;
        // Without a FIN to send, nothing goes with a full window or nothing written past snd_nxt
        // (the send limit never passes `app_written + 1`): found before the limit is computed.
        if !self.close_requested && (win <= off || self.app_written.saturating_add(1) <= self.snd_nxt) {
            return None;
        }
        let limit = self.send_limit();
        let avail = limit.saturating_sub(self.snd_nxt);
        let len = avail.min(self.eff_mss as u64).min(win.saturating_sub(off));
        let fin = self.fin_goes_with(limit, len);
        if len == 0 && !fin {
            return None;
        }
        if len > 0 && len < self.eff_mss as u64 && self.snd_max != self.snd_una && !self.small_segment_may_go(limit, off, len) {
            return None;
        }
        self.send_data_now(now, limit, off, len, fin, false)
    }

    /// 4.4BSD tcp_output.c: `idle = (snd_max == snd_una); if (idle && t_idle >= t_rxtcur)
    /// snd_cwnd = t_maxseg` — after an idle period of at least the RTO no ACKs are left to clock
    /// data out, so slow start again. BSD measures `t_idle` in slow ticks since the last segment
    /// received; the fine timer model uses RFC 5681 §4.1 (time since the last send exceeds the RTO,
    /// restart window = min(initial window, cwnd)). Returns whether cwnd was reduced.
    pub(super) fn restart_after_idle(&mut self, now: Nanos) -> bool {
        if !self.cfg.idle_restart || self.snd_max <= 1 {
            return false;
        }
        let idle_long = match &self.timer {
            RetransmitTimer::Bsd { est, .. } => self.idle_ticks as i64 >= est.rxtcur as i64,
            RetransmitTimer::Fine { .. } => {
                let since = now.saturating_sub(self.last_send.get().unwrap_or(now));
                since > self.timer.rto_ns()
            }
        };
        let restart = self.cfg.initial_window_segments.max(1) * self.eff_mss;
        if idle_long && self.w.cwnd > restart {
            self.w.cwnd = restart;
            self.stats.idle_restarts += 1;
            self.note_cwnd();
            return true;
        }
        false
    }

    pub(super) fn emit(&mut self, now: Nanos, s: u64, len: u32, fin: bool, single: bool) -> Segment {
        let end = s + len as u64 + fin as u64;
        let is_retx = s < self.snd_max;
        let mut seg = self.base_segment(now, s);
        seg.len = len;
        if fin {
            seg.flags |= Flags::FIN;
            self.fin_seq = Opt64::some(end - 1);
            match self.state {
                TcpState::Established | TcpState::SynReceived => self.state = TcpState::FinWait1,
                TcpState::CloseWait => self.state = TcpState::LastAck,
                _ => {}
            }
        }
        self.ecn.decorate(&mut seg, len > 0 && (!is_retx || (self.hooks.cc_segment() && self.cc.ect_on_retransmit())));
        if len > 0 && self.hooks.rec_send() {
            self.rec.on_transmit_at(now, s, len, is_retx);
        }
        if !single || s <= self.snd_nxt {
            self.snd_nxt = self.snd_nxt.max(end);
        }
        if !single {
            self.snd_nxt = end;
        }
        self.snd_max = self.snd_max.max(end);
        if len > 0 {
            self.stats.data_segments_sent += 1;
            self.pacing_on_send(now, len);
            if self.stats.first_send.get().is_none() {
                self.stats.first_send = Opt64::some(now);
            }
        }
        if is_retx {
            self.stats.retransmitted_segments += 1;
            self.stats.retransmitted_bytes += len as u64;
            // Karn: a retransmission of the timed segment invalidates its sample.
            if let RetransmitTimer::Bsd { t_rtt, rtseq, .. } = &self.timer {
                if *t_rtt != 0 && *rtseq >= s && *rtseq < end {
                    self.timer.cancel_timing();
                }
            } else if let Some((ts, _)) = self.timer.timed() {
                if ts >= s && ts < end {
                    self.timer.cancel_timing();
                }
            }
        } else {
            self.stats.bytes_sent += len as u64;
            // tcp_output.c: time this segment if nothing is being timed.
            self.timer.start_timing(now, s);
        }
        // tcp_output.c: start the retransmit timer if it is not running.
        if !self.timer.running(self.rto_deadline) && self.snd_max > self.snd_una {
            self.timer.restart(&mut self.rto_deadline, now);
        }
        self.log.on_send(now, s, end);
        if self.hooks.cc_segment() {
            self.cc.on_send(now, s.saturating_sub(1), len, is_retx);
        }
        self.last_send = Opt64::some(now);
        self.record(now, if is_retx { TraceKind::Retransmit } else { TraceKind::Send }, s, len);
        self.after_send(now, &seg);
        seg
    }
}
