//! One direction of a point-to-point link: an output queue, a transmitter and a propagation
//! pipe. Like htsim's queue/pipe pair, the link is its own event source with at most two pending
//! events (transmission end, next arrival at the far end), however many packets it carries:
//! packets on the wire wait in a FIFO of (arrival time, packet), which is exact because every
//! packet on a link sees the same propagation delay.
//!
//! Timing: a packet of `size` bytes with `overhead` framing bytes occupies the transmitter for
//! ceil((size + overhead) · 8 / rate) ns and arrives `delay` ns after its last bit left.
//! Loss and corruption are decided when transmission ends: both consume the transmission time;
//! a lost packet vanishes on the wire, a corrupted one is carried and discarded by the receiving
//! node (hitbox does this, seed 002 §4.1).

use std::collections::VecDeque;

use super::monitor::LinkMonitor;
use super::node::NodeId;
use super::packet::{Packet, PacketId, PacketKind};
use super::queue::QueueDisc;
use crate::engine::{SimTime, StreamRng};
use rand::Rng;

pub type LinkId = u32;

/// `Link::lan` of a point-to-point link.
pub const NO_LAN: u32 = u32::MAX;
/// Set in `Link::lan` on a direction of a two-station FIFO segment (`sim::lan::Lan::solo`):
/// read as an `i32`, `Link::lan` is then negative but not -1 ([`NO_LAN`]), and non-negative on
/// any other LAN, so one compare tells the three kinds of direction apart (`sim::lan::tx_end`).
pub const SOLO_LAN: u32 = 1 << 31;
/// Most LANs in a scenario (15 bits, below [`SOLO_LAN`]), and most stations on one (16 bits).
pub const MAX_LANS: usize = (1 << 15) - 1;
pub const MAX_LAN_STATIONS: usize = u16::MAX as usize;

#[derive(Clone, Debug, PartialEq)]
pub struct LinkParams {
    pub rate_bps: u64,
    pub delay: SimTime,
    pub overhead_bytes: u32,
    pub mtu_bytes: u32,
    pub loss: f64,
    pub corruption: f64,
}

/// `repr(C)`, cache-line aligned, hot fields first (issue 13, issue 28). Line 0 holds all that a
/// packet's arrival at an idle direction, its transmission end and its arrival at the far end
/// read of the link itself: the transmitter, the memo, copies of the parameters those paths read
/// (`mtu_bytes`, `delay`, `lossy`) and the first packet on the wire (a point-to-point access link
/// rarely carries two). Lines 1-2 are the monitor's hot counters (see [`LinkMonitor`]). The
/// queue (visited only when it holds packets, or on an AQM), the parameters, the rest of the
/// pipe, drop script, name and loss RNG follow. At thousands of flows a flow's access links are
/// cold when its next packet comes: each line is a cache miss there (4,096-flow dumbbell: five
/// lines and the pipe's ring before; three now).
#[repr(C, align(64))]
pub struct Link {
    /// Packet being serialized, with its wire size.
    pub busy: Option<(PacketId, u32)>,
    pub to: NodeId,
    /// On a shared medium: the LAN's index << 16 | this direction's station on it, with
    /// [`SOLO_LAN`] set on a two-station FIFO segment ([`NO_LAN`]: a point-to-point link). The
    /// transmitter then waits for the medium (`sim::lan`). Packed into four bytes so `Link`
    /// keeps its size.
    pub lan: u32,
    /// `params.mtu_bytes` (see [`Link::copy_params`]).
    pub mtu_bytes: u32,
    /// The last packet size's transmission time (see [`TxMemo`]).
    pub tx_memo: TxMemo,
    /// The first packet propagating (valid when `pipe_len > 0`); the others wait in `pipe_rest`.
    pipe_head: PipeEntry,
    /// `params.delay` (see [`Link::copy_params`]).
    pub delay: SimTime,
    /// Packets propagating: `pipe_head` and `pipe_rest`'s.
    pipe_len: u32,
    /// `queue.sees_every_arrival()`, kept here so an arrival at an idle link need not visit
    /// the queue's own (cold) memory.
    pub aqm: bool,
    /// Whether `script` was given any entries (it may have used them all since).
    pub scripted: bool,
    /// `params.loss > 0 || params.corruption > 0` (see [`Link::copy_params`]): a lossless
    /// direction's transmission end does not read the parameters.
    pub lossy: bool,
    pub monitor: LinkMonitor,
    /// Fixed after the build (the per-packet copies above are made from it then). Right after
    /// the monitor, so that it lies in one cache line (the transmission time memo's misses
    /// read it).
    pub params: LinkParams,
    pub queue: Box<dyn QueueDisc>,
    /// Packets propagating after `pipe_head`, with their arrival times (FIFO, non-decreasing
    /// times), 12 bytes each: a burst on a cold access link writes fewer lines.
    pipe_rest: VecDeque<PipeEntry>,
    /// Scripted drops (`drop = { packets = [...] }`), checked as packets arrive at the queue.
    pub script: DropScript,
    pub from: NodeId,
    pub rng: StreamRng,
    pub name: String,
    /// A direction of a two-station FIFO segment (`sim::lan::Lan::solo`, [`SOLO_LAN`] set in
    /// `lan`): the medium it shares with the other direction, reached from here without looking
    /// up the LAN (read only on that LAN path, so it sits with the cold fields). Every other
    /// direction holds an unused medium, one shared by them all ([`super::ethernet::SoloFifo::unused`]), so that the
    /// per-packet path, which has told the kinds apart by `lan`, loads it without a test.
    pub solo: std::sync::Arc<super::ethernet::SoloFifo>,
}

/// A packet on the wire and its arrival time, in 12 bytes (so that the first one fits in
/// `Link`'s first line).
#[derive(Clone, Copy, Debug)]
#[repr(C, packed(4))]
struct PipeEntry {
    at: u64,
    id: PacketId,
}

pub use super::tx_memo::TxMemo;

/// Nanoseconds a packet of `bytes` (plus `overhead` framing bytes) occupies a `rate` transmitter.
#[inline]
fn tx_time_of(bytes: u32, overhead: u32, rate: u64) -> u64 {
    crate::engine::time::transmission_time((bytes as u64 + overhead as u64) * 8, rate).0
}

/// One scripted drop: the `occurrence`-th transmission (1 = the first) of the data segment of
/// TCP connection `conn` whose first byte has wire sequence number `wire_seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedDrop {
    pub conn: u32,
    pub wire_seq: u32,
    pub occurrence: u32,
    pub seen: u32,
}

/// A link's drop list. Entries are removed once they have dropped their packet, so an empty
/// script costs one branch per arrival.
#[derive(Clone, Debug, Default)]
pub struct DropScript {
    pub entries: Vec<ScriptedDrop>,
    pub dropped: u64,
}

impl DropScript {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `p` is to be dropped now (consumes the matching entry).
    pub fn hit(&mut self, p: &Packet) -> bool {
        let PacketKind::Tcp { conn, to_receiver: true, seg, .. } = &p.kind else { return false };
        if seg.len == 0 {
            return false;
        }
        for i in 0..self.entries.len() {
            let e = &mut self.entries[i];
            if e.conn == *conn && e.wire_seq == seg.seq {
                e.seen += 1;
                if e.seen == e.occurrence {
                    self.entries.remove(i);
                    self.dropped += 1;
                    return true;
                }
            }
        }
        false
    }
}

impl Link {
    /// A direction with no packet in service or on the wire: its parameters (and their
    /// per-packet copies), queue, monitor, loss RNG, medium and name. `pipe_capacity`: room
    /// reserved for the packets on the wire beyond the first (so that a busy pipe's first packets
    /// do not allocate on the hot path: issue 13).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        from: NodeId,
        to: NodeId,
        params: LinkParams,
        queue: Box<dyn QueueDisc>,
        monitor: LinkMonitor,
        rng: StreamRng,
        lan: u32,
        pipe_capacity: usize,
        solo: std::sync::Arc<super::ethernet::SoloFifo>,
    ) -> Link {
        let mut link = Link {
            busy: None,
            to,
            lan,
            mtu_bytes: 0,
            tx_memo: TxMemo::default(),
            pipe_head: PipeEntry { at: 0, id: 0 },
            delay: SimTime::ZERO,
            pipe_len: 0,
            aqm: queue.sees_every_arrival(),
            scripted: false,
            lossy: false,
            monitor,
            queue,
            params,
            pipe_rest: VecDeque::with_capacity(pipe_capacity),
            script: DropScript::default(),
            from,
            rng,
            name,
            solo,
        };
        link.copy_params();
        link
    }

    /// Refresh the per-packet copies of `params` (`mtu_bytes`, `delay`, `lossy`).
    pub fn copy_params(&mut self) {
        self.mtu_bytes = self.params.mtu_bytes;
        self.delay = self.params.delay;
        self.lossy = self.params.loss > 0.0 || self.params.corruption > 0.0;
    }

    /// Loss and corruption of the packet whose transmission ends now, drawn from the link's
    /// stream: (lost, corrupted). Only a `lossy` direction draws.
    #[inline]
    pub fn draw_loss(&mut self) -> (bool, bool) {
        if !self.lossy {
            return (false, false);
        }
        let lost = self.params.loss > 0.0 && self.rng.gen::<f64>() < self.params.loss;
        let corrupt = !lost && self.params.corruption > 0.0 && self.rng.gen::<f64>() < self.params.corruption;
        (lost, corrupt)
    }

    /// Put packet `id` on the wire, to arrive at `at` (not before those already there): true if
    /// it is the only one, whose arrival the caller must schedule.
    #[inline]
    pub fn pipe_push(&mut self, at: SimTime, id: PacketId) -> bool {
        self.pipe_len += 1;
        if self.pipe_len == 1 {
            self.pipe_head = PipeEntry { at: at.0, id };
            return true;
        }
        self.pipe_rest.push_back(PipeEntry { at: at.0, id });
        false
    }

    /// The packet arriving now (the first on the wire), and the next one's arrival time if
    /// another follows.
    #[inline]
    pub fn pipe_pop(&mut self) -> (PacketId, Option<SimTime>) {
        assert!(self.pipe_len > 0, "Arrive with empty pipe");
        let id = self.pipe_head.id;
        self.pipe_len -= 1;
        if self.pipe_len == 0 {
            return (id, None);
        }
        let next = self.pipe_rest.pop_front().expect("pipe_len counts pipe_rest");
        self.pipe_head = next;
        (id, Some(SimTime(next.at)))
    }

    /// Packets on the wire.
    pub fn pipe_len(&self) -> usize {
        self.pipe_len as usize
    }

    /// (LAN index, station) if this direction is on a shared medium.
    #[inline]
    pub fn on_lan(&self) -> Option<(u32, u32)> {
        (self.lan != NO_LAN).then_some(((self.lan & !SOLO_LAN) >> 16, self.lan & 0xffff))
    }

    /// [`Link::tx_time`] through the link's one-entry memo (the per-packet path).
    #[inline]
    pub fn tx_time_memo(&mut self, bytes: u32) -> SimTime {
        // The parameters are read only when the memo misses (they are not in the first line).
        let params = &self.params;
        SimTime(self.tx_memo.time(bytes, |b| tx_time_of(b, params.overhead_bytes, params.rate_bps)))
    }

    /// Transmission time of a packet of `bytes` on this link.
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> SimTime {
        SimTime(tx_time_of(bytes, self.params.overhead_bytes, self.params.rate_bps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an arrival at an idle direction, its transmission end and its arrival at the far
    /// end read of the link itself fills line 0, and the monitor's hot counters start line 1
    /// (issue 28: three lines per cold access link, not five and the pipe's ring).
    #[test]
    fn per_packet_fields_fill_the_first_line() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<TxMemo>(), 12);
        assert_eq!(size_of::<PipeEntry>(), 12);
        for (name, end) in [
            ("busy", offset_of!(Link, busy) + size_of::<Option<(PacketId, u32)>>()),
            ("to", offset_of!(Link, to) + 4),
            ("lan", offset_of!(Link, lan) + 4),
            ("mtu_bytes", offset_of!(Link, mtu_bytes) + 4),
            ("tx_memo", offset_of!(Link, tx_memo) + 12),
            ("pipe_head", offset_of!(Link, pipe_head) + 12),
            ("delay", offset_of!(Link, delay) + 8),
            ("pipe_len", offset_of!(Link, pipe_len) + 4),
            ("aqm", offset_of!(Link, aqm) + 1),
            ("scripted", offset_of!(Link, scripted) + 1),
            ("lossy", offset_of!(Link, lossy) + 1),
        ] {
            assert!(end <= 64, "Link::{name} ends at byte {end}, past the first cache line");
        }
        assert_eq!(offset_of!(Link, monitor), 64);
        // The parameters (read when the memo misses) in one line.
        let p = offset_of!(Link, params);
        assert_eq!(p / 64, (p + size_of::<LinkParams>() - 1) / 64, "Link::params straddles two cache lines");
    }

    /// The pipe is a FIFO whether its packets sit in the head or behind it: the first push
    /// reports that an arrival needs scheduling, each pop gives the next arrival time.
    #[test]
    fn pipe_is_fifo_across_head_and_rest() {
        let params = LinkParams { rate_bps: 1_000_000, delay: SimTime(1), overhead_bytes: 0, mtu_bytes: 1500, loss: 0.0, corruption: 0.0 };
        let queue = Box::new(crate::net::droptail::DropTail::new(crate::net::queue::QueueLimit::Packets(10), false));
        let monitor = LinkMonitor::new(SimTime(1_000_000), false);
        let rng = crate::engine::RngStreams::new(1).stream("test", 0);
        let solo = std::sync::Arc::new(super::super::ethernet::SoloFifo::unused());
        let mut l = Link::new(String::new(), 0, 1, params, queue, monitor, rng, NO_LAN, 0, solo);
        assert!(l.pipe_push(SimTime(10), 1));
        assert!(!l.pipe_push(SimTime(20), 2));
        assert!(!l.pipe_push(SimTime(20), 3));
        assert_eq!(l.pipe_len(), 3);
        assert_eq!(l.pipe_pop(), (1, Some(SimTime(20))));
        assert!(!l.pipe_push(SimTime(30), 4));
        assert_eq!(l.pipe_pop(), (2, Some(SimTime(20))));
        assert_eq!(l.pipe_pop(), (3, Some(SimTime(30))));
        assert_eq!(l.pipe_pop(), (4, None));
        assert_eq!(l.pipe_len(), 0);
        assert!(l.pipe_push(SimTime(40), 5));
        assert_eq!(l.pipe_pop(), (5, None));
        assert!(!l.lossy && l.mtu_bytes == 1500 && l.delay == SimTime(1));
    }

    /// The memo answers exactly what the division gives, for sizes that change, repeat and
    /// alternate (ACKs and data on one direction), and divides only when the size changes.
    #[test]
    fn tx_memo_is_the_transmission_time_and_divides_on_changes_only() {
        let mut memo = TxMemo::default();
        let mut divisions = 0;
        let sizes = [1500, 1500, 52, 52, 1500, 40, 0, 1, 65_535, 65_535, u32::MAX - 1];
        for &b in &sizes {
            let got = memo.time(b, |b| {
                divisions += 1;
                tx_time_of(b, 8, 30_000_000)
            });
            assert_eq!(got, crate::engine::time::transmission_time((b as u64 + 8) * 8, 30_000_000).0, "{b} bytes");
        }
        assert_eq!(divisions, 8);
        // 1500 + 8 bytes at 30 Mb/s: 402,133.3 ns, rounded up.
        assert_eq!(memo.time(1500, |b| tx_time_of(b, 8, 30_000_000)), 402_134);
    }
}
