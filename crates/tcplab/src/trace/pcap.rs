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
//! tracing must not perturb the run). The network layer holds each link direction's file
//! ([`crate::net::capture`]) and hands it every packet through the narrow [`PacketEncoder`]
//! interface; this module, above it, knows the wire formats.

use std::collections::HashMap;

use crate::engine::SimTime;
pub use crate::net::capture::{LinkCapture, PacketEncoder, PcapWriter, LINKTYPE_RAW, RAW_SNAP, SNAPLEN};
use crate::net::packet::{Packet, PacketKind};
use crate::wire::{self, IpInfo, Payload, WindowScales};

/// Port of the sending side of TCP connection slot `conn`.
pub fn tcp_sender_port(conn: u32) -> u16 {
    (10_000 + conn % 50_000) as u16
}
pub const TCP_RECEIVER_PORT: u16 = 5001;
pub fn udp_port(source: u32) -> u16 {
    (20_000 + source % 40_000) as u16
}

/// The capture of one link direction in a simulation: a libpcap file whose records this
/// module's [`HeaderEncoder`] writes.
pub fn link_capture() -> LinkCapture {
    LinkCapture::new(Box::new(HeaderEncoder::default()))
}

/// Writes each packet's record: synthesized IPv4 + TCP/UDP headers for a simulated packet, the
/// real bytes (rewritten TTL and ECN) for an emulated one.
#[derive(Debug, Default)]
pub struct HeaderEncoder {
    /// Window-scale shifts per connection slot and generation.
    scales: HashMap<(u32, u16), WindowScales>,
}

impl PacketEncoder for HeaderEncoder {
    fn record(&mut self, out: &mut PcapWriter, now: SimTime, p: &Packet) {
        let ip = IpInfo { src: wire::node_ip(p.src), dst: wire::node_ip(p.dst), ttl: p.ttl, ecn: p.ecn, id: 0 };
        match p.kind {
            PacketKind::Tcp { conn, gen, to_receiver, seg } => {
                let dir = if to_receiver { 0 } else { 1 };
                let shift = self.scales.entry((conn, gen)).or_default().on_segment(dir, &seg);
                let (sport, dport) = if to_receiver { (tcp_sender_port(conn), TCP_RECEIVER_PORT) } else { (TCP_RECEIVER_PORT, tcp_sender_port(conn)) };
                // The queue's CE mark is in `p.ecn`; the segment's own `ce` is only set on delivery.
                let seg = tcplab_tcp::Segment { ce: false, ect: false, ..seg };
                out.record_with(now.0, |out| wire::write_tcp(out, &ip, sport, dport, &seg, shift, Payload::Zeros(seg.len)));
            }
            PacketKind::Udp { source, .. } => {
                let payload = (p.size as usize).saturating_sub(wire::IPV4_HEADER + wire::UDP_HEADER) as u32;
                let port = udp_port(source);
                out.record_with(now.0, |out| wire::write_udp(out, &ip, port, port, Payload::Zeros(payload)));
            }
            PacketKind::Raw => {}
        }
    }

    fn record_raw(&mut self, out: &mut PcapWriter, now: SimTime, p: &Packet, dgram: &[u8]) {
        let mut head = [0u8; RAW_SNAP];
        let n = dgram.len().min(RAW_SNAP);
        head[..n].copy_from_slice(&dgram[..n]);
        wire::rewrite_ttl_ecn(&mut head[..n], p.ttl, p.ecn);
        out.record_bytes(now.0, &head[..n], dgram.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Ecn;
    use tcplab_tcp::{Flags, Segment};

    #[test]
    fn file_header_and_records_are_laid_out_as_libpcap() {
        let mut cap = link_capture();
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
