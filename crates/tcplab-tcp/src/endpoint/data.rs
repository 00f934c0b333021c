//! The receive side: the advertised window, in-order and out-of-order data (reassembly ranges),
//! the peer's FIN, the application's reads (optionally rate-limited) and the persist check.

use super::{Endpoint, TcpState};
use crate::opt64::Opt64;
use crate::ack_policy::Arrival;
use crate::trace::TraceKind;
use crate::{Nanos, Segment};

impl Endpoint {
    pub(super) fn recv_window_free(&self) -> u32 {
        let unread = self.rcv_data().saturating_sub(self.app_read);
        (self.cfg.recv_buffer as u64).saturating_sub(unread) as u32
    }

    /// Segment text and FIN (tcp_input.c "Process the segment text").
    pub(super) fn process_data(&mut self, now: Nanos, seg: &Segment, seg_seq: u64) {
        let mut len = seg.len as u64;
        let mut fin = seg.flags.fin();
        if len == 0 && !fin {
            return;
        }
        if self.fin_rcvd {
            // Peer already closed: a retransmission; re-ACK.
            self.ack.ack_now = true;
            return;
        }
        let mut s = seg_seq;
        let seg_end = s + len + fin as u64;
        // tcp_output.c: `adv >= 2 * t_maxseg` (w.mss is t_maxseg; see take_syn_options).
        let threshold = self.cfg.delack_bytes.map(|b| b as u64).unwrap_or(2 * self.w.mss as u64);
        let dto = self.delack_timeout();
        let rtt = self.hs_rtt.get();
        if seg_end <= self.rcv_nxt {
            if self.sack_ok && self.cfg.dsack && len > 0 {
                self.sack_rcv().on_duplicate(s, s + len);
            }
            // Entirely old (tcp_input.c: duplicate data → ACK now).
            self.ack.on_data(now, Arrival::Unacceptable, seg.len, threshold, self.cfg.recv_buffer, rtt, dto);
            return;
        }
        if s < self.rcv_nxt {
            len -= self.rcv_nxt - s;
            s = self.rcv_nxt;
        }
        let right = self.rcv_adv.max(self.rcv_nxt + self.recv_window_free() as u64);
        if len > 0 && s >= right {
            // Beyond the window (a zero-window probe): drop, ACK with our window.
            self.ack.on_data(now, Arrival::Unacceptable, seg.len, threshold, self.cfg.recv_buffer, rtt, dto);
            return;
        }
        if s + len > right {
            len = right - s;
            fin = false;
        }
        self.record(now, TraceKind::Recv, s, len as u32);
        let arrival;
        if s == self.rcv_nxt {
            let had_hole = !self.reass.is_empty();
            let before = self.rcv_nxt;
            self.rcv_nxt += len;
            while let Some(&(a, b)) = self.reass.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.reass.remove(0);
            }
            arrival = if had_hole { Arrival::FillsHole { advance: self.rcv_nxt - before } } else { Arrival::InOrder { len: len as u32 } };
            if had_hole && self.sack_ok {
                let rcv_nxt = self.rcv_nxt;
                self.sack_rcv().on_advance(rcv_nxt);
            }
        } else {
            self.stats.out_of_order_segments += 1;
            if len > 0 {
                if self.sack_ok && self.cfg.dsack && self.reass.iter().any(|&(a, b)| a <= s && s + len <= b) {
                    self.sack_rcv().on_duplicate(s, s + len);
                }
                self.reass_insert(s, s + len);
                if self.sack_ok {
                    let i = self.reass.partition_point(|r| r.1 < s);
                    let block = self.reass[i];
                    self.sack_rcv().on_out_of_order(block);
                }
            }
            arrival = Arrival::OutOfOrder;
        }
        if fin {
            self.peer_fin = Opt64::some(s + len);
        }
        if self.read_rate().is_none() {
            self.app_read = self.rcv_data();
            self.stats.bytes_delivered_to_app = self.app_read;
        }
        self.ack.on_data(now, arrival, len as u32, threshold, self.cfg.recv_buffer, rtt, dto);
        if let Some(f) = self.peer_fin.get() {
            if f == self.rcv_nxt && !self.fin_rcvd {
                self.rcv_nxt += 1;
                self.fin_rcvd = true;
                self.ack.ack_now = true;
                match self.state {
                    TcpState::Established | TcpState::SynReceived => self.state = TcpState::CloseWait,
                    TcpState::FinWait1 => self.state = TcpState::Closing,
                    TcpState::FinWait2 => {
                        self.state = TcpState::TimeWait;
                        self.tw_deadline = Opt64::some(now + self.cfg.time_wait);
                        self.timer.stop(&mut self.rto_deadline);
                    }
                    _ => {}
                }
            }
        }
        self.schedule_read(now);
    }

    pub(super) fn reass_insert(&mut self, a: u64, b: u64) {
        let i = self.reass.partition_point(|r| r.1 < a);
        let mut na = a;
        let mut nb = b;
        let mut j = i;
        while j < self.reass.len() && self.reass[j].0 <= nb {
            na = na.min(self.reass[j].0);
            nb = nb.max(self.reass[j].1);
            j += 1;
        }
        self.reass.splice(i..j, std::iter::once((na, nb)));
    }

    #[inline]
    pub(super) fn maybe_auto_close(&mut self) {
        if self.cfg.close_on_peer_fin && self.fin_rcvd && self.state == TcpState::CloseWait && self.app_read >= self.rcv_data() {
            self.app_close();
        }
    }

    /// Zero window with data waiting and nothing in flight: run the (persist) timer.
    pub(super) fn check_persist(&mut self, now: Nanos) {
        if self.snd_wnd == 0 && self.snd_max == self.snd_una && self.send_limit() > self.snd_una && !self.timer.running(self.rto_deadline) && self.is_established() {
            self.timer.restart(&mut self.rto_deadline, now);
        }
    }

    // ------------------------------------------------------------------ receive application

    /// The application reads what arrived: at once, or at its rate (out of line: a
    /// rate-limited reader is rare; issue 28).
    #[inline]
    pub(super) fn drain_reads(&mut self, now: Nanos) {
        match self.read_rate() {
            None => {
                self.app_read = self.rcv_data();
                self.stats.bytes_delivered_to_app = self.app_read;
                self.read_last = now;
            }
            Some(rate) => self.drain_reads_at(now, rate),
        }
    }

    #[inline(never)]
    fn drain_reads_at(&mut self, now: Nanos, rate: f64) {
        if now <= self.read_last {
            return;
        }
        let rcv_data = self.rcv_data();
        let unread = rcv_data - self.app_read;
        let before_free = self.recv_window_free();
        let rd = self.reader.as_deref_mut().expect("a read rate lives in the reader");
        if unread == 0 {
            rd.credit = 0.0;
        } else {
            rd.credit += (now - self.read_last) as f64 * rate / 1e9;
            let n = (rd.credit.floor() as u64).min(unread);
            self.app_read += n;
            rd.credit -= n as f64;
            if self.app_read == rcv_data {
                rd.credit = 0.0;
            }
        }
        self.read_last = now;
        self.stats.bytes_delivered_to_app = self.app_read;
        if rd.wake.get().is_some_and(|t| t <= now) {
            rd.wake = Opt64::NONE;
        }
        // tcp_output.c window-update rule after the application read.
        if self.recv_window_free() > before_free && self.is_established() && !self.fin_rcvd {
            let win = self.recv_window_free() as u64;
            let adv = win.saturating_sub(self.rcv_adv.saturating_sub(self.rcv_nxt));
            if adv >= 2 * self.eff_mss as u64 || 2 * adv >= self.cfg.recv_buffer as u64 {
                self.ack.ack_now = true;
            }
        }
        self.schedule_read(now);
        self.maybe_auto_close();
    }

    pub(super) fn schedule_read(&mut self, now: Nanos) {
        let Some(rate) = self.read_rate() else { return };
        let unread = self.rcv_data() - self.app_read;
        let eff_mss = self.eff_mss as u64;
        let rd = self.reader.as_deref_mut().expect("a read rate lives in the reader");
        if unread == 0 {
            rd.wake = Opt64::NONE;
            return;
        }
        let need = unread.min(eff_mss) as f64 - rd.credit;
        let dt = if need <= 0.0 { 1 } else { (need / rate * 1e9).ceil() as u64 };
        rd.wake = Opt64::some(now + dt.max(1));
    }
}
