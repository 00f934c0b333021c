//! Classic pcap files (the libpcap format of `pcap-savefile(5)`; nanosecond timestamps, magic
//! 0xa1b23c4d; link type LINKTYPE_RAW = 101, each record an IPv4 datagram) for traced link
//! directions (`trace = { pcap = ["r1->r2"] }`).
//!
//! A packet is recorded when it starts transmission on the link (it has left the queue; a
//! packet dropped at the queue is not on the wire and is not recorded; one lost or corrupted on
//! the wire was transmitted and is), with the simulation time of that moment. Simulated
//! segments carry no payload bytes, so a record holds the headers only (written by
//! [`crate::wire`]) and its original length is the datagram's full length, as a capture taken
//! with `tcpdump -s <headers>` — Wireshark shows "[Packet size limited during capture]" for the
//! payload and analyses sequence numbers, lengths, SACK blocks and ECN as in any capture.
//! Ports: the sender of `[[tcp]]` flow / connection slot `c` uses port 10000 + c (mod 50000),
//! its receiver port 5001; UDP source `s` uses 20000 + s on both ends. Addresses: [`wire::node_ip`].
//!
//! Records are appended to memory during the run and written once at the end (x-Sim's rule:
//! tracing must not perturb the run).

use std::collections::HashMap;

use crate::engine::SimTime;
use crate::net::packet::{Packet, PacketKind};
use crate::wire::{self, IpInfo, Payload, WindowScales};

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

    /// Append a record of real datagram bytes (kept up to [`RAW_SNAP`] bytes).
    pub fn record_bytes(&mut self, t_ns: u64, dgram: &[u8]) {
        let cap = dgram.len().min(RAW_SNAP);
        self.header(t_ns, cap, dgram.len());
        self.bytes.extend_from_slice(&dgram[..cap]);
    }

    /// Append a record whose body (`build` appends it, returning the datagram's full length)
    /// is written in place.
    fn record_with(&mut self, t_ns: u64, build: impl FnOnce(&mut Vec<u8>) -> usize) {
        let at = self.bytes.len();
        self.header(t_ns, 0, 0);
        let body = self.bytes.len();
        let orig = build(&mut self.bytes);
        let cap = self.bytes.len() - body;
        self.bytes[at + 8..at + 12].copy_from_slice(&(cap as u32).to_le_bytes());
        self.bytes[at + 12..at + 16].copy_from_slice(&(orig as u32).to_le_bytes());
    }
}

/// Port of the sending side of TCP connection slot `conn`.
pub fn tcp_sender_port(conn: u32) -> u16 {
    (10_000 + conn % 50_000) as u16
}
pub const TCP_RECEIVER_PORT: u16 = 5001;
pub fn udp_port(source: u32) -> u16 {
    (20_000 + source % 40_000) as u16
}

/// The capture of one link direction in a simulation.
#[derive(Debug, Default)]
pub struct LinkCapture {
    pub pcap: PcapWriter,
    /// Window-scale shifts per connection slot and generation.
    scales: HashMap<(u32, u16), WindowScales>,
}

impl LinkCapture {
    pub fn new() -> LinkCapture {
        LinkCapture { pcap: PcapWriter::new(), scales: HashMap::new() }
    }

    /// Record simulated packet `p` at `now`. Emulated packets carry their bytes elsewhere:
    /// the simulator passes them to [`LinkCapture::record_raw`].
    pub fn record(&mut self, now: SimTime, p: &Packet) {
        let ip = IpInfo { src: wire::node_ip(p.src), dst: wire::node_ip(p.dst), ttl: p.ttl, ecn: p.ecn, id: 0 };
        match p.kind {
            PacketKind::Tcp { conn, gen, to_receiver, seg } => {
                let dir = if to_receiver { 0 } else { 1 };
                let shift = self.scales.entry((conn, gen)).or_default().on_segment(dir, &seg);
                let (sport, dport) = if to_receiver { (tcp_sender_port(conn), TCP_RECEIVER_PORT) } else { (TCP_RECEIVER_PORT, tcp_sender_port(conn)) };
                // The queue's CE mark is in `p.ecn`; the segment's own `ce` is only set on delivery.
                let seg = tcplab_tcp::Segment { ce: false, ect: false, ..seg };
                self.pcap.record_with(now.0, |out| wire::write_tcp(out, &ip, sport, dport, &seg, shift, Payload::Zeros(seg.len)));
            }
            PacketKind::Udp { source, .. } => {
                let payload = (p.size as usize).saturating_sub(wire::IPV4_HEADER + wire::UDP_HEADER) as u32;
                let port = udp_port(source);
                self.pcap.record_with(now.0, |out| wire::write_udp(out, &ip, port, port, Payload::Zeros(payload)));
            }
            PacketKind::Raw => {}
        }
    }

    /// Record an emulated datagram: its real bytes with the TTL and ECN field it has now.
    pub fn record_raw(&mut self, now: SimTime, p: &Packet, dgram: &[u8]) {
        let mut head = [0u8; RAW_SNAP];
        let n = dgram.len().min(RAW_SNAP);
        head[..n].copy_from_slice(&dgram[..n]);
        wire::rewrite_ttl_ecn(&mut head[..n], p.ttl, p.ecn);
        self.pcap.header(now.0, n, dgram.len());
        self.pcap.bytes.extend_from_slice(&head[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Ecn;
    use tcplab_tcp::{Flags, Segment};

    #[test]
    fn file_header_and_records_are_laid_out_as_libpcap() {
        let mut cap = LinkCapture::new();
        let seg = Segment { seq: 100, ack: 1, flags: Flags::ACK, wnd: 8192, len: 1000, ..Segment::default() };
        let p = Packet { src: 0, dst: 3, size: seg.wire_bytes(), ttl: 63, corrupted: false, ecn: Ecn::Ce, created: 0, kind: PacketKind::Tcp { conn: 2, gen: 0, to_receiver: true, seg } };
        cap.record(SimTime(1_500_000_123), &p);
        let b = &cap.pcap.bytes;
        assert_eq!(u32::from_le_bytes(b[0..4].try_into().unwrap()), 0xa1b23c4d);
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), LINKTYPE_RAW);
        let r = &b[24..];
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 500_000_123);
        let caplen = u32::from_le_bytes(r[8..12].try_into().unwrap()) as usize;
        let orig = u32::from_le_bytes(r[12..16].try_into().unwrap());
        assert_eq!(caplen, 40, "headers only");
        assert_eq!(orig, 1040, "original length = the packet's size");
        assert_eq!(b.len(), 24 + 16 + caplen);
        let d = &r[16..16 + caplen];
        assert_eq!(d[1] & 3, 3, "CE set by the queue is in the ECN field");
        assert_eq!(d[8], 63);
        assert_eq!(u16::from_be_bytes([d[20], d[21]]), tcp_sender_port(2));
        assert_eq!(u32::from_be_bytes([d[24], d[25], d[26], d[27]]), 100);
        // Completing the payload with zeros gives a datagram whose checksums verify.
        let mut full = d.to_vec();
        full.resize(1040, 0);
        assert!(wire::parse_ipv4(&full).is_ok());
    }
}
