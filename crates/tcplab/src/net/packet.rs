//! Packets are headers only — no payload bytes are ever stored (x-Sim carried ~200 bytes of
//! header per packet; seed 000 §2.2). They live in a pool and are referred to by index, so
//! moving a packet through queues and links copies a `u32`, and freed slots are reused.
//!
//! A packet is one 64-byte cache line (issue 28): a TCP packet carries its segment packed
//! ([`PackedSeg`], 40 bytes), and the SACK blocks of a segment that has some ride beside it in
//! the pool ([`PacketPool::alloc_tcp`]), like an emulated datagram's bytes.

use tcplab_tcp::{PackedSeg, SackBlocks, Segment};

use super::node::NodeId;

pub type PacketId = u32;

#[derive(Clone, Copy, Debug)]
pub enum PacketKind {
    /// A UDP-like datagram of source `source`, sequence number `seq`, sent at `created` ns.
    Udp { source: u32, seq: u64, created: u64 },
    /// A TCP segment of connection slot `conn` in generation `gen`; `to_receiver` tells which
    /// endpoint it is for. Its SACK blocks are in the pool ([`PacketPool::segment`]).
    Tcp { conn: u32, gen: u16, to_receiver: bool, seg: PackedSeg },
    /// A real IPv4 datagram in emulation (`crate::emu`): its bytes ride beside the packet in
    /// the pool ([`PacketPool::alloc_raw`]); at its destination the simulator hands it to the
    /// emulator instead of an endpoint. It was read at `created` ns.
    Raw { created: u64 },
}

/// Aligned to a cache line, so that a packet in the pool is one line (a test checks the size):
/// the creation time, which only UDP delay statistics and the emulator read, is in their kinds.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub struct Packet {
    pub src: NodeId,
    pub dst: NodeId,
    /// Size on the wire in bytes (headers + payload), excluding per-link framing overhead.
    pub size: u32,
    pub ttl: u8,
    /// Set by a link whose corruption process hit this packet; the receiving node discards it.
    pub corrupted: bool,
    /// IP ECN codepoint (RFC 3168 §5); one byte beside `ttl`/`corrupted`, so the packet does
    /// not grow.
    pub ecn: Ecn,
    pub kind: PacketKind,
}

/// The two ECN bits of the IP header (RFC 3168 §5): ECT(0) is the classic ECN-capable codepoint
/// (RFC 3168 senders), ECT(1) the L4S identifier (RFC 9331 §8), which DualPI2 classifies into its
/// low-latency queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    #[default]
    NotEct,
    /// ECT(0), IP bits 10.
    Ect0,
    /// ECT(1), IP bits 01.
    Ect1,
    /// Congestion Experienced, set by a marking queue.
    Ce,
}

impl Ecn {
    /// The codepoint a TCP segment leaves with: Not-ECT, or ECT(0), or ECT(1) for an L4S sender
    /// (TCP Prague sets `ect1`, RFC 9331).
    pub fn of_segment(ect: bool, ect1: bool) -> Ecn {
        match (ect, ect1) {
            (false, _) => Ecn::NotEct,
            (true, false) => Ecn::Ect0,
            (true, true) => Ecn::Ect1,
        }
    }
}

/// Why a packet did not arrive. Every drop carries one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    QueueOverflow,
    LinkLoss,
    Corruption,
    NoRoute,
    Ttl,
    /// Larger than the outgoing link's MTU (tcplab does not fragment).
    Mtu,
    /// Dropped by an active queue manager (RED's early or forced drop) with room in the buffer.
    Early,
    /// Dropped by the link's scripted drop list (`drop = { packets = [...] }`).
    Scripted,
}

impl Ecn {
    /// ECN-capable: ECT(0), ECT(1) or already CE (a CE packet may be marked again, staying CE).
    #[inline]
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }
}

impl Packet {
    /// When the packet was sent or read (ns): a UDP datagram's or an emulated one's; 0 for a
    /// TCP segment, whose delays the endpoints measure themselves.
    pub fn created(&self) -> u64 {
        match self.kind {
            PacketKind::Udp { created, .. } | PacketKind::Raw { created } => created,
            PacketKind::Tcp { .. } => 0,
        }
    }
    /// A key naming the packet's flow for flow-queueing disciplines (FQ-CoDel's 5-tuple): the
    /// end nodes and the connection or UDP source.
    #[inline]
    pub fn flow_key(&self) -> u64 {
        let port = match self.kind {
            PacketKind::Udp { source, .. } => 1u64 << 40 | source as u64,
            PacketKind::Tcp { conn, gen, .. } => 2u64 << 40 | (gen as u64) << 32 | conn as u64,
            PacketKind::Raw { .. } => 3u64 << 40,
        };
        (self.src as u64) << 48 ^ (self.dst as u64) << 44 ^ port
    }
}

/// [`Packet::flow_key`] of a TCP connection's segments from `src` to `dst` (for naming the flows
/// of a flow-queueing discipline's statistics).
pub fn tcp_flow_key(src: u32, dst: u32, conn: u32, gen: u16) -> u64 {
    (src as u64) << 48 ^ (dst as u64) << 44 ^ (2u64 << 40 | (gen as u64) << 32 | conn as u64)
}

/// [`Packet::flow_key`] of a UDP source's packets.
pub fn udp_flow_key(src: u32, dst: u32, source: u32) -> u64 {
    (src as u64) << 48 ^ (dst as u64) << 44 ^ (1u64 << 40 | source as u64)
}

impl DropReason {
    pub const COUNT: usize = 8;
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::QueueOverflow,
        DropReason::LinkLoss,
        DropReason::Corruption,
        DropReason::NoRoute,
        DropReason::Ttl,
        DropReason::Mtu,
        DropReason::Early,
        DropReason::Scripted,
    ];
    pub fn name(self) -> &'static str {
        match self {
            DropReason::QueueOverflow => "queue_overflow",
            DropReason::LinkLoss => "link_loss",
            DropReason::Corruption => "corruption",
            DropReason::NoRoute => "no_route",
            DropReason::Ttl => "ttl",
            DropReason::Mtu => "mtu",
            DropReason::Early => "early",
            DropReason::Scripted => "scripted",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Slab of packets with a free list. `alloc` reuses freed slots, so the steady state allocates
/// nothing.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    live: usize,
    /// Bytes of emulated datagrams, by packet id (empty in a simulation).
    raw: Vec<Vec<u8>>,
    /// SACK blocks of TCP packets, by packet id: written for a segment that has some, read
    /// when its `nsack` says so (empty while no segment has carried any).
    sack: Vec<[(u32, u32); 4]>,
}

/// The blocks of a packet without SACK blocks.
const NO_SACK: [(u32, u32); 4] = [(0, 0); 4];

impl PacketPool {
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PacketId
        }
    }
    pub fn free(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id);
        if let Some(b) = self.raw.get_mut(id as usize) {
            b.clear();
        }
    }
    /// Allocate a TCP packet `p` (its segment packed, [`PackedSeg::pack`]) whose segment had
    /// the SACK blocks `sack`.
    #[inline]
    pub fn alloc_tcp(&mut self, p: Packet, sack: &SackBlocks) -> PacketId {
        let id = self.alloc(p);
        if sack.n > 0 {
            self.put_sack(id, sack);
        }
        id
    }
    #[cold]
    #[inline(never)]
    fn put_sack(&mut self, id: PacketId, sack: &SackBlocks) {
        if self.sack.len() <= id as usize {
            self.sack.resize(self.slots.len().max(id as usize + 1), NO_SACK);
        }
        self.sack[id as usize] = sack.b;
    }
    /// The SACK blocks beside packet `id` (the first `nsack` of its segment's are its own).
    #[inline]
    pub fn sack(&self, id: PacketId, seg: &PackedSeg) -> &[(u32, u32); 4] {
        if seg.nsack == 0 {
            &NO_SACK
        } else {
            &self.sack[id as usize]
        }
    }
    /// The whole segment of TCP packet `id` with its SACK blocks (`ce` as the sender left it).
    #[inline]
    pub fn segment(&self, id: PacketId, seg: &PackedSeg) -> Segment {
        seg.unpack(self.sack(id, seg))
    }
    /// Allocate a [`PacketKind::Raw`] packet carrying `bytes`.
    pub fn alloc_raw(&mut self, p: Packet, bytes: &[u8]) -> PacketId {
        let id = self.alloc(p);
        if self.raw.len() <= id as usize {
            self.raw.resize_with(id as usize + 1, Vec::new);
        }
        self.raw[id as usize].clear();
        self.raw[id as usize].extend_from_slice(bytes);
        id
    }
    /// The bytes of emulated packet `id` (empty for a simulated one).
    pub fn raw(&self, id: PacketId) -> &[u8] {
        self.raw.get(id as usize).map_or(&[], |b| b.as_slice())
    }
    /// Take the bytes of emulated packet `id` out of the pool.
    pub fn take_raw(&mut self, id: PacketId) -> Vec<u8> {
        self.raw.get_mut(id as usize).map(std::mem::take).unwrap_or_default()
    }
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
    /// Packets currently allocated (in queues, on links, or in node processing).
    pub fn live(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_tcp::Flags;

    fn tcp(seg: &Segment) -> Packet {
        let kind = PacketKind::Tcp { conn: 3, gen: 1, to_receiver: false, seg: PackedSeg::pack(seg) };
        Packet { src: 1, dst: 2, size: seg.wire_bytes(), ttl: 64, corrupted: false, ecn: Ecn::NotEct, kind }
    }

    /// A packet is one cache line, and the pool's slots start on line boundaries.
    #[test]
    fn a_packet_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 64);
        let mut pool = PacketPool::default();
        let ids: Vec<_> = (0..3).map(|_| pool.alloc(tcp(&Segment::default()))).collect();
        for id in ids {
            assert_eq!(pool.get(id) as *const Packet as usize % 64, 0);
        }
    }

    /// A segment's SACK blocks come back with it, and a slot reused by a segment without blocks
    /// does not inherit the previous owner's.
    #[test]
    fn sack_blocks_ride_beside_the_packet() {
        let mut pool = PacketPool::default();
        let plain = Segment { seq: 9, ack: 10, flags: Flags::ACK, ts: Some((1, 2)), ..Segment::default() };
        let first = pool.alloc_tcp(tcp(&plain), &plain.sack);
        let mut sacked = Segment { len: 0, ..plain };
        sacked.sack.push(100, 200);
        sacked.sack.push(300, 400);
        let id = pool.alloc_tcp(tcp(&sacked), &sacked.sack);
        let seg_of = |pool: &PacketPool, id| match pool.get(id).kind {
            PacketKind::Tcp { seg, .. } => pool.segment(id, &seg),
            _ => unreachable!(),
        };
        assert_eq!(seg_of(&pool, id), sacked);
        assert_eq!(seg_of(&pool, first), plain);
        pool.free(id);
        let again = pool.alloc_tcp(tcp(&plain), &plain.sack);
        assert_eq!(again, id, "the freed slot is reused");
        assert_eq!(seg_of(&pool, again), plain);
        assert_eq!(pool.live(), 2);
    }
}
