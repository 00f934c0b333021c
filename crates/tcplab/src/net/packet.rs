//! Packets are headers only — no payload bytes are ever stored (x-Sim carried ~200 bytes of
//! header per packet; seed 000 §2.2). They live in a pool and are referred to by index, so
//! moving a packet through queues and links copies a `u32`, and freed slots are reused.

use tcplab_tcp::Segment;

use super::node::NodeId;

pub type PacketId = u32;

#[derive(Clone, Copy, Debug)]
pub enum PacketKind {
    /// A UDP-like datagram of source `source`, sequence number `seq`.
    Udp { source: u32, seq: u64 },
    /// A TCP segment of connection slot `conn` in generation `gen`; `to_receiver` tells which
    /// endpoint it is for.
    Tcp { conn: u32, gen: u16, to_receiver: bool, seg: Segment },
    /// A real IPv4 datagram in emulation (`crate::emu`): its bytes ride beside the packet in
    /// the pool ([`PacketPool::alloc_raw`]); at its destination the simulator hands it to the
    /// emulator instead of an endpoint.
    Raw,
}

#[derive(Clone, Copy, Debug)]
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
    pub created: u64,
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
    /// A key naming the packet's flow for flow-queueing disciplines (FQ-CoDel's 5-tuple): the
    /// end nodes and the connection or UDP source.
    #[inline]
    pub fn flow_key(&self) -> u64 {
        let port = match self.kind {
            PacketKind::Udp { source, .. } => 1u64 << 40 | source as u64,
            PacketKind::Tcp { conn, gen, .. } => 2u64 << 40 | (gen as u64) << 32 | conn as u64,
            PacketKind::Raw => 3u64 << 40,
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
}

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
