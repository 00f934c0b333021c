//! Linux's send buffer as a bulk writer meets it (`EndpointConfig::send_buffer_linux`, the
//! scenario key `send_buffer_model = "linux"`). Written from a reading of Linux 6.x
//! `net/ipv4/tcp.c` (`tcp_sendmsg_locked`, `tcp_poll`), `include/net/sock.h`
//! (`sk_stream_memory_free`, `__sk_stream_is_writeable`, `sk_stream_min_wspace`),
//! `net/ipv4/tcp_input.c` (`tcp_check_space`) and `net/ipv4/tcp_rate.c`
//! (`tcp_rate_check_app_limited`); the code is our own.
//!
//! * Accounting: `sk_wmem_queued` counts each queued segment (sent or not, until cumulatively
//!   acknowledged) at its skb's truesize, payload + [`SKB_OVERHEAD`] bytes; SACKed segments are
//!   merged by `tcp_shift_skb_data` (tcp_input.c) into one skb per SACKed range, whose overhead
//!   is then counted once (the recovery's scoreboard gives the ranges). A
//!   writer copies while `sk_wmem_queued < sk_sndbuf` (the tail skb is filled to a whole
//!   segment regardless): a full buffer holds ⌈sndbuf / (mss + 832)⌉ segments, 7,359 of
//!   1,448 bytes in 16 MiB.
//! * Wake-up: a writer that found the buffer full sleeps (in `poll`, or in `sendmsg`) until an
//!   ACK leaves the socket writable, `sndbuf − queued ≥ queued / 2` (`tcp_check_space` →
//!   `sk_stream_write_space`), i.e. a third of the buffer free; then it fills it again.
//! * Every write first runs `tcp_rate_check_app_limited`: less than a segment of unsent data,
//!   nothing in the host's queues (always so here), packets in flight below cwnd and every
//!   segment marked lost retransmitted — in loss recovery too — mark the connection
//!   app-limited with delivered + packets in flight (the recovery's pipe while in recovery).
//!   A woken writer writes after TCP has sent what the ACK allowed (`tcp_data_snd_check` runs
//!   before `tcp_check_space`, and the writer is another task): `Endpoint::poll_transmit`
//!   runs the write once nothing more goes out.
//!
//! Measured (2026-11-29, this machine's kernel 6.18, x86-64): a socket with `tcp_wmem` = 16 MiB,
//! MSS 1448, one segment per skb (`gso_max_size 1500`), its path cut so nothing is acknowledged,
//! accepted 10,655,832 bytes = 7,359 segments from a non-blocking writer; `ss -m` then showed
//! `w16778520` = 7,359 × 2,280: 832 bytes of truesize beyond the payload per skb.
//!
//! Deviations: the overhead is that measured constant (Linux's depends on the kernel build and
//! on how many segments an skb holds); a SACKed range is one skb however long (Linux stops a
//! merge at `MAX_SKB_FRAGS` page fragments, some hundreds of segments); the writer writes as soon as the socket is writable
//! (the emulator's writer wakes from `poll` within microseconds); without this switch the
//! endpoint keeps its own rule (payload bytes, refilled at once, app-limited outside recovery).

use super::{Endpoint, TcpState};

/// Bytes of skb truesize beyond the payload of a one-segment skb (measured, see above).
pub const SKB_OVERHEAD: u64 = 832;

/// The writer's side of a Linux send buffer.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LinuxWriter {
    /// Data bytes the writer has handed to TCP (absolute, from the first data byte).
    pub filled: u64,
}

/// `sk_wmem_queued` for `queued` data bytes in segments of `mss`, `sacked` of them SACKed in
/// `runs` discontiguous ranges: `tcp_shift_skb_data` merges each SACKed range into one skb, so
/// a range costs its payload and one skb's overhead.
pub fn wmem_queued(queued: u64, mss: u64, sacked: u64, runs: u64) -> u64 {
    let sacked = sacked.min(queued);
    queued + ((queued - sacked).div_ceil(mss.max(1)) + runs) * SKB_OVERHEAD
}

/// Data bytes a writer adds to a buffer of `sndbuf` holding `wmem` bytes of truesize: whole
/// segments while the truesize is below the buffer (`sk_stream_memory_free` before each skb).
pub fn fill_bytes(sndbuf: u64, wmem: u64, mss: u64) -> u64 {
    sndbuf.saturating_sub(wmem).div_ceil(mss.max(1) + SKB_OVERHEAD) * mss.max(1)
}


/// `__sk_stream_is_writeable`: `sk_stream_wspace(sk) >= sk_stream_min_wspace(sk)`.
pub fn writable(sndbuf: u64, queued_truesize: u64) -> bool {
    sndbuf as i64 - queued_truesize as i64 >= (queued_truesize >> 1) as i64
}

impl Endpoint {
    fn acked_data(&self) -> u64 {
        self.snd_una.saturating_sub(1).min(self.app_written)
    }

    /// `sk_wmem_queued` now.
    fn wmem_queued_now(&self) -> u64 {
        let queued = self.wr.filled.saturating_sub(self.acked_data());
        let (sacked, runs) = self.rec.sacked_ranges(self.snd_una);
        wmem_queued(queued, self.eff_mss as u64, sacked, runs)
    }

    /// One past the last data byte the writer has handed to TCP (the Linux buffer's send limit).
    pub(super) fn linux_send_limit(&self) -> u64 {
        1u64.saturating_add(self.app_written.min(self.wr.filled))
    }

    /// An application write (`tcp_sendmsg_locked`): the app-limited check, then copy until the
    /// buffer is full.
    pub(super) fn linux_write(&mut self) {
        if self.hooks.cc() && self.linux_app_limited() {
            let in_flight = match (self.rec.linux_in_flight(), self.rec.pipe_bytes()) {
                (Some(p), _) => p,
                (None, Some(p)) => p.max(0) as u64,
                (None, None) => self.snd_max.saturating_sub(self.snd_una),
            };
            self.cc.on_app_limited_in_flight(in_flight);
        }
        let add = fill_bytes(self.cfg.send_buffer as u64, self.wmem_queued_now(), self.eff_mss as u64);
        let queued_end = self.wr.filled.max(self.acked_data());
        self.wr.filled = queued_end.saturating_add(add).min(self.app_written);
    }

    /// `tcp_rate_check_app_limited`'s conditions (the host queues are empty in the simulator).
    fn linux_app_limited(&self) -> bool {
        let unsent = self.linux_send_limit().saturating_sub(self.snd_nxt.max(1));
        let in_flight = match self.rec.pipe_bytes() {
            Some(p) => p.max(0) as u64,
            None => self.snd_max.saturating_sub(self.snd_una),
        };
        unsent < self.eff_mss as u64 && in_flight < self.w.cwnd as u64 && !self.rec.lost_unretransmitted()
    }

    /// A writer with more to write that the socket lets write now (`tcp_check_space` after
    /// an ACK, or its own `poll`: only an ACK frees buffer space, so asking once TCP has
    /// nothing more to send is the same).
    pub(super) fn linux_writer_wakes(&self) -> bool {
        if self.wr.filled >= self.app_written || !matches!(self.state, TcpState::Established | TcpState::CloseWait) {
            return false;
        }
        writable(self.cfg.send_buffer as u64, self.wmem_queued_now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_16_mib_buffer_holds_the_measured_7359_segments() {
        // The kernel accepted 10,655,832 bytes (7,359 × 1,448) with `w16778520` queued.
        assert_eq!(fill_bytes(16 << 20, 0, 1448), 10_655_832);
        assert_eq!(wmem_queued(10_655_832, 1448, 0, 0), 16_778_520);
        // One segment fewer is still below the buffer, so the writer adds one more.
        assert!(wmem_queued(10_655_832 - 1448, 1448, 0, 0) < 16 << 20);
    }

    #[test]
    fn a_sacked_range_costs_one_skb_overhead() {
        // 10 segments queued, 6 of them SACKed in two ranges: 4 + 2 skbs of overhead.
        assert_eq!(wmem_queued(10_000, 1000, 6000, 2), 10_000 + 6 * SKB_OVERHEAD);
        assert_eq!(wmem_queued(10_000, 1000, 0, 0), 10_000 + 10 * SKB_OVERHEAD);
    }

    #[test]
    fn writable_only_below_two_thirds() {
        let sndbuf = 16u64 << 20;
        let two_thirds = sndbuf * 2 / 3;
        assert!(writable(sndbuf, two_thirds));
        assert!(!writable(sndbuf, two_thirds + 2));
        assert!(!writable(sndbuf, sndbuf));
        assert!(writable(sndbuf, 0));
    }
}
