//! Wire format: a simulator packet as the bytes of an IPv4 datagram carrying TCP or UDP, and
//! real IPv4 frames parsed back into segments. One writer serves the simulator's pcap traces
//! ([`crate::trace::pcap`]) and the emulator (`crate::emu`), so what Wireshark shows of a simulated
//! run is what the emulator puts on a TAP device.
//!
//! Sources: RFC 791 (IPv4 header, header checksum), RFC 793 (TCP header; the checksum over
//! the pseudo-header), RFC 768 (UDP), RFC 1071 (the Internet checksum), RFC 7323 (window
//! scale, timestamps), RFC 2018 (SACK-permitted, SACK blocks), RFC 3168 §5 (the ECN field:
//! ECT(0) = 0b10, CE = 0b11) and §6.1 (ECE/CWR flags, carried in [`Segment::flags`]).
//!
//! Deliberate choices:
//! - Options are laid out as 4.4BSD's tcp_output.c does, each padded to 4 bytes with NOPs
//!   (MSS 4; NOP+WS 4; 2 NOP+SACK-permitted 4; 2 NOP+timestamps 12; 2 NOP+SACK 4+8n), so the
//!   header length is exactly [`Segment::header_bytes`] and the IP total length of a simulated
//!   packet equals its size in the simulator. The parser accepts any order (Linux puts
//!   MSS, SACK-permitted, timestamps, NOP, WS in its SYN).
//! - A simulated segment carries no payload bytes; its payload is taken as zeros, which add
//!   nothing to the one's-complement sum, so checksums are correct for an all-zero payload of
//!   the segment's length without materializing it ([`Payload::Zeros`]).
//! - The advertised window is written shifted right by the sender's negotiated window-scale
//!   shift ([`WindowScales`] learns it from the SYNs); the parser returns the raw field.
//! - ECT(1) is read as ECT (the simulator does not tell the two apart).

use tcplab_tcp::{Flags, SackBlocks, Segment};

use crate::net::packet::Ecn;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const IPV4_HEADER: usize = 20;
pub const UDP_HEADER: usize = 8;

/// The IPv4 address tcplab gives node `node` in traces and emulation: 10.0.0.0/8, node index + 1
/// in the low 24 bits (node 0 = 10.0.0.1).
pub fn node_ip(node: u32) -> [u8; 4] {
    let n = node + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The node index of an address made by [`node_ip`].
pub fn ip_node(ip: [u8; 4]) -> Option<u32> {
    if ip[0] != 10 {
        return None;
    }
    let n = ((ip[1] as u32) << 16) | ((ip[2] as u32) << 8) | ip[3] as u32;
    n.checked_sub(1)
}

/// The fields of an IPv4 header that tcplab sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpInfo {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub ttl: u8,
    pub ecn: Ecn,
    /// Identification field (tcplab numbers datagrams per capture; 0 is fine with DF set).
    pub id: u16,
}

/// Payload of a datagram: real bytes, or `n` zero bytes that are counted in lengths and
/// checksums but not written (a capture truncated to its headers, as `tcpdump -s` makes).
#[derive(Clone, Copy, Debug)]
pub enum Payload<'a> {
    Bytes(&'a [u8]),
    Zeros(u32),
}

impl Payload<'_> {
    fn len(&self) -> usize {
        match self {
            Payload::Bytes(b) => b.len(),
            Payload::Zeros(n) => *n as usize,
        }
    }
}

/// RFC 1071 one's-complement sum of `data` (an odd byte is padded with zero), added to `acc`.
pub fn sum16(mut acc: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        acc += (*b as u32) << 8;
    }
    acc
}

/// Fold a sum into the 16-bit one's-complement checksum.
pub fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

fn ecn_bits(e: Ecn) -> u8 {
    match e {
        Ecn::NotEct => 0b00,
        Ecn::Ect0 => 0b10,
        Ecn::Ect1 => 0b01,
        Ecn::Ce => 0b11,
    }
}

fn ecn_from_bits(b: u8) -> Ecn {
    match b & 3 {
        0b00 => Ecn::NotEct,
        0b11 => Ecn::Ce,
        0b01 => Ecn::Ect1,
        _ => Ecn::Ect0,
    }
}

fn write_ipv4(out: &mut Vec<u8>, ip: &IpInfo, proto: u8, total_len: usize) {
    let start = out.len();
    out.extend_from_slice(&[0x45, ecn_bits(ip.ecn)]);
    out.extend_from_slice(&(total_len.min(0xffff) as u16).to_be_bytes());
    out.extend_from_slice(&ip.id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0x00]); // DF, no fragments (tcplab never fragments)
    out.extend_from_slice(&[ip.ttl, proto, 0, 0]);
    out.extend_from_slice(&ip.src);
    out.extend_from_slice(&ip.dst);
    let c = fold(sum16(0, &out[start..start + IPV4_HEADER]));
    out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
}

fn pseudo_sum(ip: &IpInfo, proto: u8, l4_len: usize) -> u32 {
    let mut acc = sum16(0, &ip.src);
    acc = sum16(acc, &ip.dst);
    acc + proto as u32 + l4_len as u32
}

/// TCP option bytes of `seg` in 4.4BSD's layout (length = `seg.header_bytes() - 40`).
fn write_options(out: &mut Vec<u8>, seg: &Segment) {
    const NOP: u8 = 1;
    if let Some(mss) = seg.mss {
        out.extend_from_slice(&[2, 4]);
        out.extend_from_slice(&mss.to_be_bytes());
    }
    if let Some(ws) = seg.wscale {
        out.extend_from_slice(&[NOP, 3, 3, ws]);
    }
    if seg.sack_ok {
        out.extend_from_slice(&[NOP, NOP, 4, 2]);
    }
    if let Some((val, ecr)) = seg.ts {
        out.extend_from_slice(&[NOP, NOP, 8, 10]);
        out.extend_from_slice(&val.to_be_bytes());
        out.extend_from_slice(&ecr.to_be_bytes());
    }
    if !seg.sack.is_empty() {
        out.extend_from_slice(&[NOP, NOP, 5, 2 + 8 * seg.sack.n]);
        for &(l, r) in seg.sack.as_slice() {
            out.extend_from_slice(&l.to_be_bytes());
            out.extend_from_slice(&r.to_be_bytes());
        }
    }
}

/// Append an IPv4 + TCP datagram for `seg` to `out`; `window_shift` is the sender's window-scale
/// shift (0 on SYNs, RFC 7323 §2.2). Returns the IP total length (headers + payload).
pub fn write_tcp(out: &mut Vec<u8>, ip: &IpInfo, sport: u16, dport: u16, seg: &Segment, window_shift: u8, payload: Payload) -> usize {
    let mut ip = *ip;
    if seg.ect && ip.ecn == Ecn::NotEct {
        ip.ecn = Ecn::of_segment(true, seg.ect1);
    }
    if seg.ce {
        ip.ecn = Ecn::Ce;
    }
    let start = out.len();
    let opt_start_len = {
        let mut opts = Vec::with_capacity(40);
        write_options(&mut opts, seg);
        opts
    };
    let tcp_hdr = 20 + opt_start_len.len();
    let l4_len = tcp_hdr + payload.len();
    let total = IPV4_HEADER + l4_len;
    write_ipv4(out, &ip, PROTO_TCP, total);
    let t = out.len();
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&seg.seq.to_be_bytes());
    out.extend_from_slice(&seg.ack.to_be_bytes());
    out.push(((tcp_hdr / 4) as u8) << 4);
    out.push(seg.flags.0);
    let shift = if seg.flags.syn() { 0 } else { window_shift.min(14) };
    out.extend_from_slice(&((seg.wnd >> shift).min(0xffff) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    out.extend_from_slice(&opt_start_len);
    if let Payload::Bytes(b) = payload {
        out.extend_from_slice(b);
    }
    let c = fold(sum16(pseudo_sum(&ip, PROTO_TCP, l4_len), &out[t..]));
    out[t + 16..t + 18].copy_from_slice(&c.to_be_bytes());
    debug_assert_eq!(out.len() - start, match payload { Payload::Bytes(_) => total, Payload::Zeros(_) => total - payload.len() });
    total
}

/// Append an IPv4 + UDP datagram to `out`. Returns the IP total length.
pub fn write_udp(out: &mut Vec<u8>, ip: &IpInfo, sport: u16, dport: u16, payload: Payload) -> usize {
    let l4_len = UDP_HEADER + payload.len();
    let total = IPV4_HEADER + l4_len;
    write_ipv4(out, ip, PROTO_UDP, total);
    let u = out.len();
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&(l4_len.min(0xffff) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    if let Payload::Bytes(b) = payload {
        out.extend_from_slice(b);
    }
    let mut c = fold(sum16(pseudo_sum(ip, PROTO_UDP, l4_len), &out[u..]));
    if c == 0 {
        c = 0xffff; // RFC 768: a computed zero is sent as all ones
    }
    out[u + 6..u + 8].copy_from_slice(&c.to_be_bytes());
    total
}

/// Rewrite the TTL and ECN field of an IPv4 datagram in place (a router forwarding it, a queue
/// marking CE) and fix the header checksum.
pub fn rewrite_ttl_ecn(dgram: &mut [u8], ttl: u8, ecn: Ecn) {
    if dgram.len() < IPV4_HEADER {
        return;
    }
    dgram[1] = (dgram[1] & !3) | ecn_bits(ecn);
    dgram[8] = ttl;
    dgram[10] = 0;
    dgram[11] = 0;
    let ihl = ((dgram[0] & 0x0f) as usize * 4).clamp(IPV4_HEADER, dgram.len());
    let c = fold(sum16(0, &dgram[..ihl]));
    dgram[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Why a frame could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    Truncated,
    NotIpv4,
    BadIpChecksum,
    BadL4Checksum,
    Fragment,
    BadOptions,
}

/// A parsed IPv4 datagram.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub ip: IpInfo,
    pub proto: u8,
    /// IP total length.
    pub total_len: usize,
    pub l4: L4,
}

#[derive(Clone, Debug, PartialEq)]
pub enum L4 {
    /// A TCP segment; `seg.wnd` is the raw 16-bit field (scale it with the peer's shift),
    /// `seg.ect`/`seg.ce` come from the IP ECN field. Payload at `payload` (a byte range).
    Tcp { sport: u16, dport: u16, seg: Segment, payload: std::ops::Range<usize> },
    Udp { sport: u16, dport: u16, payload: std::ops::Range<usize> },
    Other,
}

fn parse_options(opts: &[u8], seg: &mut Segment) -> Result<(), WireError> {
    let mut i = 0;
    while i < opts.len() {
        match opts[i] {
            0 => break,
            1 => i += 1,
            kind => {
                let len = *opts.get(i + 1).ok_or(WireError::BadOptions)? as usize;
                if len < 2 || i + len > opts.len() {
                    return Err(WireError::BadOptions);
                }
                let body = &opts[i + 2..i + len];
                match (kind, len) {
                    (2, 4) => seg.mss = Some(u16::from_be_bytes([body[0], body[1]])),
                    (3, 3) => seg.wscale = Some(body[0]),
                    (4, 2) => seg.sack_ok = true,
                    (8, 10) => {
                        let v = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
                        let e = u32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                        seg.ts = Some((v, e));
                    }
                    (5, _) if (len - 2) % 8 == 0 => {
                        let mut blocks = SackBlocks::default();
                        for b in body.chunks_exact(8) {
                            blocks.push(u32::from_be_bytes([b[0], b[1], b[2], b[3]]), u32::from_be_bytes([b[4], b[5], b[6], b[7]]));
                        }
                        seg.sack = blocks;
                    }
                    _ => {} // unknown options are skipped (RFC 793 §3.1)
                }
                i += len;
            }
        }
    }
    Ok(())
}

/// Parse an IPv4 datagram, verifying the header checksum and the TCP/UDP checksum (over the
/// payload present: pass a complete datagram).
pub fn parse_ipv4(d: &[u8]) -> Result<Parsed, WireError> {
    if d.len() < IPV4_HEADER {
        return Err(WireError::Truncated);
    }
    if d[0] >> 4 != 4 {
        return Err(WireError::NotIpv4);
    }
    let ihl = (d[0] & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([d[2], d[3]]) as usize;
    if ihl < IPV4_HEADER || total < ihl || d.len() < total {
        return Err(WireError::Truncated);
    }
    if fold(sum16(0, &d[..ihl])) != 0 {
        return Err(WireError::BadIpChecksum);
    }
    let frag = u16::from_be_bytes([d[6], d[7]]);
    if frag & 0x3fff != 0 {
        return Err(WireError::Fragment);
    }
    let ip = IpInfo {
        src: [d[12], d[13], d[14], d[15]],
        dst: [d[16], d[17], d[18], d[19]],
        ttl: d[8],
        ecn: ecn_from_bits(d[1]),
        id: u16::from_be_bytes([d[4], d[5]]),
    };
    let proto = d[9];
    let l4 = &d[ihl..total];
    let l4 = match proto {
        PROTO_TCP => {
            if l4.len() < 20 {
                return Err(WireError::Truncated);
            }
            let off = (l4[12] >> 4) as usize * 4;
            if off < 20 || off > l4.len() {
                return Err(WireError::Truncated);
            }
            if fold(sum16(pseudo_sum(&ip, PROTO_TCP, l4.len()), l4)) != 0 {
                return Err(WireError::BadL4Checksum);
            }
            let mut seg = Segment {
                seq: u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]),
                ack: u32::from_be_bytes([l4[8], l4[9], l4[10], l4[11]]),
                flags: Flags(l4[13]),
                wnd: u16::from_be_bytes([l4[14], l4[15]]) as u32,
                len: (l4.len() - off) as u32,
                ect: ip.ecn != Ecn::NotEct,
                ect1: ip.ecn == Ecn::Ect1,
                ce: ip.ecn == Ecn::Ce,
                ..Segment::default()
            };
            parse_options(&l4[20..off], &mut seg)?;
            L4::Tcp {
                sport: u16::from_be_bytes([l4[0], l4[1]]),
                dport: u16::from_be_bytes([l4[2], l4[3]]),
                seg,
                payload: ihl + off..total,
            }
        }
        PROTO_UDP => {
            if l4.len() < UDP_HEADER {
                return Err(WireError::Truncated);
            }
            let c = u16::from_be_bytes([l4[6], l4[7]]);
            if c != 0 && fold(sum16(pseudo_sum(&ip, PROTO_UDP, l4.len()), l4)) != 0 {
                return Err(WireError::BadL4Checksum);
            }
            L4::Udp { sport: u16::from_be_bytes([l4[0], l4[1]]), dport: u16::from_be_bytes([l4[2], l4[3]]), payload: ihl + UDP_HEADER..total }
        }
        _ => L4::Other,
    };
    Ok(Parsed { ip, proto, total_len: total, l4 })
}

/// Window-scale shifts per direction of a connection, learnt from its SYN and SYN-ACK
/// (RFC 7323 §2.2: scaling applies only when both sides sent the option; SYNs are unscaled).
#[derive(Clone, Copy, Debug, Default)]
pub struct WindowScales {
    offered: [Option<u8>; 2],
    seen_syn: [bool; 2],
}

impl WindowScales {
    /// Note a segment sent in direction `dir` (0 or 1); returns the shift to write its window with.
    pub fn on_segment(&mut self, dir: usize, seg: &Segment) -> u8 {
        if seg.flags.syn() {
            if !seg.flags.ack() {
                // A new SYN starts a new connection on these ports.
                *self = WindowScales::default();
            }
            self.offered[dir] = seg.wscale;
            self.seen_syn[dir] = true;
            return 0;
        }
        self.shift(dir)
    }
    /// The shift direction `dir` applies to the windows it sends.
    pub fn shift(&self, dir: usize) -> u8 {
        match (self.offered[dir], self.offered[1 - dir]) {
            (Some(s), Some(_)) => s.min(14),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3168 §5: ECT(0) = 10, ECT(1) = 01 (the L4S identifier, RFC 9331), CE = 11; each
    /// codepoint survives the round trip through the IP header.
    #[test]
    fn ecn_codepoints_round_trip() {
        for (e, bits) in [(Ecn::NotEct, 0b00), (Ecn::Ect0, 0b10), (Ecn::Ect1, 0b01), (Ecn::Ce, 0b11)] {
            assert_eq!(ecn_bits(e), bits);
            assert_eq!(ecn_from_bits(bits), e);
        }
    }

    fn ip() -> IpInfo {
        IpInfo { src: node_ip(0), dst: node_ip(7), ttl: 64, ecn: Ecn::NotEct, id: 1 }
    }

    #[test]
    fn node_addresses_round_trip() {
        for n in [0u32, 1, 254, 255, 256, 70_000] {
            assert_eq!(ip_node(node_ip(n)), Some(n));
        }
        assert_eq!(node_ip(0), [10, 0, 0, 1]);
        assert_eq!(ip_node([192, 168, 0, 1]), None);
    }

    #[test]
    fn checksum_matches_rfc1071_example() {
        // RFC 1071 §3: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2 (checksum = !0xddf2).
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum16(0, &d)), !0xddf2);
    }

    #[test]
    fn known_ipv4_header_checksum() {
        // A textbook header (Wikipedia "IPv4 header checksum"): 4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7.
        let mut h = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];
        let c = fold(sum16(0, &h));
        assert_eq!(c, 0xb861);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(fold(sum16(0, &h)), 0);
    }

    fn full_segment() -> Segment {
        let mut sack = SackBlocks::default();
        sack.push(1000, 2460);
        sack.push(5000, 6460);
        sack.push(9000, 10460);
        Segment {
            seq: 0xfffff000,
            ack: 12345,
            flags: Flags::ACK | Flags::ECE | Flags::PSH,
            wnd: 40000,
            len: 1448,
            mss: None,
            wscale: None,
            ts: Some((111, 222)),
            ce: true,
            ect: true,
            ect1: false,
            sack_ok: false,
            sack,
        }
    }

    #[test]
    fn tcp_round_trip_with_every_option() {
        let seg = full_segment();
        let payload: Vec<u8> = (0..seg.len).map(|i| (i * 7) as u8).collect();
        let mut out = Vec::new();
        let total = write_tcp(&mut out, &ip(), 1234, 80, &seg, 0, Payload::Bytes(&payload));
        assert_eq!(total, seg.wire_bytes() as usize, "header layout = Segment::header_bytes");
        assert_eq!(out.len(), total);
        let p = parse_ipv4(&out).expect("parses");
        assert_eq!(p.ip.ecn, Ecn::Ce);
        assert_eq!(p.total_len, total);
        let L4::Tcp { sport, dport, seg: got, payload: range } = p.l4 else { panic!("not tcp") };
        assert_eq!((sport, dport), (1234, 80));
        assert_eq!(got, seg);
        assert_eq!(&out[range], &payload[..]);
    }

    #[test]
    fn syn_options_round_trip_and_window_is_unscaled() {
        let seg = Segment { seq: 1, flags: Flags::SYN | Flags::ECE | Flags::CWR, wnd: 65535, mss: Some(1460), wscale: Some(7), ts: Some((5, 0)), sack_ok: true, ..Segment::default() };
        let mut out = Vec::new();
        let total = write_tcp(&mut out, &ip(), 1, 2, &seg, 7, Payload::Zeros(0));
        assert_eq!(total, seg.wire_bytes() as usize);
        let L4::Tcp { seg: got, .. } = parse_ipv4(&out).unwrap().l4 else { panic!() };
        assert_eq!(got, seg, "a SYN's window is never scaled");
    }

    #[test]
    fn window_is_written_scaled_after_the_handshake() {
        let mut ws = WindowScales::default();
        let syn = Segment { flags: Flags::SYN, wscale: Some(3), ..Segment::default() };
        let synack = Segment { flags: Flags::SYN | Flags::ACK, wscale: Some(5), ..Segment::default() };
        assert_eq!(ws.on_segment(0, &syn), 0);
        assert_eq!(ws.on_segment(1, &synack), 0);
        let data = Segment { flags: Flags::ACK, wnd: 1 << 18, ..Segment::default() };
        assert_eq!(ws.on_segment(0, &data), 3);
        assert_eq!(ws.on_segment(1, &data), 5);
        let mut out = Vec::new();
        write_tcp(&mut out, &ip(), 1, 2, &data, 3, Payload::Zeros(0));
        let L4::Tcp { seg: got, .. } = parse_ipv4(&out).unwrap().l4 else { panic!() };
        assert_eq!(got.wnd, (1 << 18) >> 3);
        // Only one side offering: no scaling (RFC 7323 §2.2).
        let mut one = WindowScales::default();
        one.on_segment(0, &syn);
        one.on_segment(1, &Segment { flags: Flags::SYN | Flags::ACK, ..Segment::default() });
        assert_eq!(one.shift(0), 0);
    }

    #[test]
    fn zero_payload_checksum_equals_materialized_zeros() {
        let seg = full_segment();
        let zeros = vec![0u8; seg.len as usize];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_tcp(&mut a, &ip(), 9, 10, &seg, 0, Payload::Zeros(seg.len));
        write_tcp(&mut b, &ip(), 9, 10, &seg, 0, Payload::Bytes(&zeros));
        assert_eq!(&a[..], &b[..a.len()], "headers identical, checksum included");
        assert!(parse_ipv4(&b).is_ok());
    }

    #[test]
    fn udp_round_trip_and_checksum() {
        let payload = b"hello, hitbox";
        let mut out = Vec::new();
        let total = write_udp(&mut out, &ip(), 9000, 9001, Payload::Bytes(payload));
        assert_eq!(total, 28 + payload.len());
        let p = parse_ipv4(&out).unwrap();
        let L4::Udp { sport, dport, payload: r } = p.l4 else { panic!() };
        assert_eq!((sport, dport), (9000, 9001));
        assert_eq!(&out[r], payload);
    }

    #[test]
    fn corruption_is_detected() {
        let seg = full_segment();
        let payload = vec![0xabu8; seg.len as usize];
        let mut out = Vec::new();
        write_tcp(&mut out, &ip(), 1, 2, &seg, 0, Payload::Bytes(&payload));
        let mut bad = out.clone();
        bad[100] ^= 0x01;
        assert_eq!(parse_ipv4(&bad), Err(WireError::BadL4Checksum));
        let mut bad = out.clone();
        bad[8] ^= 0x01; // TTL without fixing the header checksum
        assert_eq!(parse_ipv4(&bad), Err(WireError::BadIpChecksum));
        assert_eq!(parse_ipv4(&out[..30]), Err(WireError::Truncated));
    }

    #[test]
    fn rewrite_keeps_checksums_valid() {
        let seg = full_segment();
        let mut out = Vec::new();
        write_tcp(&mut out, &IpInfo { ecn: Ecn::Ect0, ..ip() }, 1, 2, &Segment { ce: false, ..seg }, 0, Payload::Bytes(&vec![1u8; seg.len as usize]));
        rewrite_ttl_ecn(&mut out, 17, Ecn::Ce);
        let p = parse_ipv4(&out).expect("still valid: the TCP checksum does not cover TTL or ECN");
        assert_eq!(p.ip.ttl, 17);
        assert_eq!(p.ip.ecn, Ecn::Ce);
    }

    #[test]
    fn linux_syn_option_order_parses() {
        // MSS, SACK-permitted, timestamps, NOP, window scale: what Linux sends.
        let opts = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7];
        let mut seg = Segment::default();
        parse_options(&opts, &mut seg).unwrap();
        assert_eq!(seg.mss, Some(1460));
        assert!(seg.sack_ok);
        assert_eq!(seg.ts, Some((1, 0)));
        assert_eq!(seg.wscale, Some(7));
        assert_eq!(parse_options(&[2, 9, 0], &mut seg), Err(WireError::BadOptions));
    }
}
