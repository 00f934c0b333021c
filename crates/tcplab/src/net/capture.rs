//! A link direction's packet capture as the network layer sees it: a classic libpcap file in
//! memory ([`PcapWriter`]) and an encoder, supplied from above (`trace::pcap`), that writes each
//! packet's record. The network hands every packet that starts transmission to
//! [`LinkCapture::record`] and knows nothing of header formats.

use std::fmt;

use super::packet::Packet;
use crate::engine::SimTime;

pub const LINKTYPE_RAW: u32 = 101;
const MAGIC_NS: u32 = 0xa1b2_3c4d;
pub const SNAPLEN: u32 = 65535;
/// Bytes kept of a datagram that carries real payload (emulation): enough for any IPv4 + TCP
/// header with options.
pub const RAW_SNAP: usize = 120;

/// A classic pcap file being written into memory.
#[derive(Clone, Debug)]
pub struct PcapWriter {
    pub bytes: Vec<u8>,
    pub records: u64,
}

impl Default for PcapWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PcapWriter {
    pub fn new() -> PcapWriter {
        let mut bytes = Vec::with_capacity(4096);
        bytes.extend_from_slice(&MAGIC_NS.to_le_bytes());
        bytes.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
        bytes.extend_from_slice(&4u16.to_le_bytes());
        bytes.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        bytes.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        bytes.extend_from_slice(&SNAPLEN.to_le_bytes());
        bytes.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        PcapWriter { bytes, records: 0 }
    }

    /// Start a record at time `t_ns`; the caller appends `caplen` bytes next.
    fn header(&mut self, t_ns: u64, caplen: usize, orig_len: usize) {
        self.bytes.extend_from_slice(&((t_ns / 1_000_000_000) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
        self.bytes.extend_from_slice(&(caplen as u32).to_le_bytes());
        self.bytes.extend_from_slice(&(orig_len as u32).to_le_bytes());
        self.records += 1;
    }

    /// Append a record of `head`, the first bytes of a datagram of `orig_len` bytes.
    pub fn record_bytes(&mut self, t_ns: u64, head: &[u8], orig_len: usize) {
        self.header(t_ns, head.len(), orig_len);
        self.bytes.extend_from_slice(head);
    }

    /// Append a record whose body (`build` appends it, returning the datagram's full length)
    /// is written in place.
    pub fn record_with(&mut self, t_ns: u64, build: impl FnOnce(&mut Vec<u8>) -> usize) {
        let at = self.bytes.len();
        self.header(t_ns, 0, 0);
        let body = self.bytes.len();
        let orig = build(&mut self.bytes);
        let cap = self.bytes.len() - body;
        self.bytes[at + 8..at + 12].copy_from_slice(&(cap as u32).to_le_bytes());
        self.bytes[at + 12..at + 16].copy_from_slice(&(orig as u32).to_le_bytes());
    }
}

/// Writes one packet's record into the capture file (implemented by `trace::pcap`).
pub trait PacketEncoder: Send {
    /// A simulated packet starting transmission at `now`.
    fn record(&mut self, out: &mut PcapWriter, now: SimTime, p: &Packet);
    /// An emulated datagram (its real bytes) starting transmission at `now`.
    fn record_raw(&mut self, out: &mut PcapWriter, now: SimTime, p: &Packet, dgram: &[u8]);
}

/// The capture of one link direction.
pub struct LinkCapture {
    pub pcap: PcapWriter,
    encoder: Box<dyn PacketEncoder>,
}

impl fmt::Debug for LinkCapture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LinkCapture").field("records", &self.pcap.records).finish_non_exhaustive()
    }
}

impl LinkCapture {
    pub fn new(encoder: Box<dyn PacketEncoder>) -> LinkCapture {
        LinkCapture { pcap: PcapWriter::new(), encoder }
    }

    /// Record simulated packet `p` at `now`.
    pub fn record(&mut self, now: SimTime, p: &Packet) {
        self.encoder.record(&mut self.pcap, now, p);
    }

    /// Record an emulated datagram: its real bytes with the TTL and ECN field it has now.
    pub fn record_raw(&mut self, now: SimTime, p: &Packet, dgram: &[u8]) {
        self.encoder.record_raw(&mut self.pcap, now, p, dgram);
    }
}
