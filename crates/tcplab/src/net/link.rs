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

/// `repr(C)`, hot fields first and cache-line aligned: what a packet's arrival, transmission
/// end and propagation touch, with the monitor's hot counters (see [`LinkMonitor`]), fills the
/// first four cache lines; drop script, name, loss RNG and the rest follow (issue 13).
#[repr(C, align(64))]
pub struct Link {
    /// Packet being serialized, with its wire size.
    pub busy: Option<(PacketId, u32)>,
    pub to: NodeId,
    pub queue: Box<dyn QueueDisc>,
    /// `queue.sees_every_arrival()`, kept here so an arrival at an idle link need not visit
    /// the queue's own (cold) memory.
    pub aqm: bool,
    /// Whether `script` was given any entries (it may have used them all since).
    pub scripted: bool,
    /// On a shared medium: the LAN's index << 16 | this direction's station on it, with
    /// [`SOLO_LAN`] set on a two-station FIFO segment ([`NO_LAN`]: a point-to-point link). The
    /// transmitter then waits for the medium (`sim::lan`). Packed into four bytes so `Link`
    /// keeps its size.
    pub lan: u32,
    /// The last packet size's transmission time (see [`TxMemo`]).
    pub tx_memo: TxMemo,
    pub params: LinkParams,
    /// Packets propagating, with their arrival times (FIFO, non-decreasing times).
    pub pipe: VecDeque<(SimTime, PacketId)>,
    pub monitor: LinkMonitor,
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
    /// (LAN index, station) if this direction is on a shared medium.
    #[inline]
    pub fn on_lan(&self) -> Option<(u32, u32)> {
        (self.lan != NO_LAN).then_some(((self.lan & !SOLO_LAN) >> 16, self.lan & 0xffff))
    }

    /// [`Link::tx_time`] through the link's one-entry memo (the per-packet path).
    #[inline]
    pub fn tx_time_memo(&mut self, bytes: u32) -> SimTime {
        let (rate, overhead) = (self.params.rate_bps, self.params.overhead_bytes);
        SimTime(self.tx_memo.time(bytes, |b| tx_time_of(b, overhead, rate)))
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
