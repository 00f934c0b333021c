//! TCP segment as exchanged with the host: headers only, no payload bytes (DESIGN.md: "packets
//! are headers only"). Header sizes follow RFC 791/793 and the option layouts BSD emits
//! (tcp_output.c: MSS 4 bytes, window scale 3+NOP = 4, timestamps 10+2 NOP = 12).
//!
//! [`PackedSeg`] is the same header as a network packet carries it (issue 28): 40 bytes instead
//! of [`Segment`]'s 76, the SACK blocks left beside it (the host keeps them in a side table,
//! touched only by a segment that has some), so that a packet fits one cache line.

/// TCP header flags (the bits of RFC 793 / RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: Flags = Flags(0x01);
    pub const SYN: Flags = Flags(0x02);
    pub const RST: Flags = Flags(0x04);
    pub const PSH: Flags = Flags(0x08);
    pub const ACK: Flags = Flags(0x10);
    pub const ECE: Flags = Flags(0x40);
    pub const CWR: Flags = Flags(0x80);
    pub const NONE: Flags = Flags(0);

    #[inline]
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    #[inline]
    pub fn syn(self) -> bool {
        self.0 & 0x02 != 0
    }
    #[inline]
    pub fn ack(self) -> bool {
        self.0 & 0x10 != 0
    }
    #[inline]
    pub fn fin(self) -> bool {
        self.0 & 0x01 != 0
    }
    #[inline]
    pub fn rst(self) -> bool {
        self.0 & 0x04 != 0
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, o: Flags) -> Flags {
        Flags(self.0 | o.0)
    }
}
impl std::ops::BitOrAssign for Flags {
    fn bitor_assign(&mut self, o: Flags) {
        self.0 |= o.0
    }
}

/// A TCP segment (headers only). `repr(C)`, the SACK blocks last: its first 40 bytes are laid
/// out as a [`PackedSeg`]'s, so that packing and unpacking are plain copies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Segment {
    pub seq: u32,
    pub ack: u32,
    /// Advertised receive window in bytes, already unscaled (the endpoint quantises it to the
    /// negotiated window-scale shift before sending).
    pub wnd: u32,
    /// Payload bytes.
    pub len: u32,
    /// Timestamps option (TSval, TSecr), RFC 1323.
    pub ts: Option<(u32, u32)>,
    /// MSS option (SYN segments only).
    pub mss: Option<u16>,
    /// Window-scale option (SYN segments only).
    pub wscale: Option<u8>,
    pub flags: Flags,
    /// IP CE codepoint set by a queue (RFC 3168; the host copies it from the packet).
    pub ce: bool,
    /// IP ECT codepoint set by the sender (RFC 3168 §6.1.2).
    pub ect: bool,
    /// With `ect`: the codepoint is ECT(1), the L4S identifier (RFC 9331 §4.1), not ECT(0).
    /// The host carries it on the packet (a queue may treat ECT(1) as L4S) and back as `ce`.
    pub ect1: bool,
    /// SACK-permitted option (SYN segments only, RFC 2018 §2).
    pub sack_ok: bool,
    /// SACK blocks (RFC 2018 §3), most recent first.
    pub sack: SackBlocks,
}

/// Up to four SACK blocks `[left, right)` in wire sequence numbers (RFC 2018 §3: at most 4
/// fit the 40 option bytes, 3 beside timestamps). Fixed-size so segments stay `Copy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub n: u8,
    pub b: [(u32, u32); 4],
}

impl SackBlocks {
    #[inline]
    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.b[..self.n as usize]
    }
    pub fn push(&mut self, left: u32, right: u32) {
        if (self.n as usize) < self.b.len() {
            self.b[self.n as usize] = (left, right);
            self.n += 1;
        }
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// Option bytes as Linux/BSD lay them out: 2 NOP + kind + length + 8 per block.
    #[inline]
    pub fn option_bytes(&self) -> u32 {
        if self.n == 0 {
            0
        } else {
            4 + 8 * self.n as u32
        }
    }
}

impl Segment {
    /// IP (20) + TCP (20) header bytes plus options, padded to 4 bytes as BSD sends them:
    /// MSS 4, window scale 4 (NOP + 3), timestamps 12 (2 NOP + 10), SACK-permitted 4 (2 NOP + 2),
    /// SACK 4 + 8 per block (2 NOP + 2 + 8n).
    #[inline]
    pub fn header_bytes(&self) -> u32 {
        let mut h = 40;
        if self.mss.is_some() {
            h += 4;
        }
        if self.wscale.is_some() {
            h += 4;
        }
        if self.ts.is_some() {
            h += 12;
        }
        if self.sack_ok {
            h += 4; // 2 NOP + SACK-permitted (kind 4, length 2)
        }
        h + self.sack.option_bytes()
    }
    /// Bytes on the wire at the IP layer: headers + payload.
    #[inline]
    pub fn wire_bytes(&self) -> u32 {
        self.header_bytes() + self.len
    }
    /// Sequence space consumed: payload + SYN + FIN.
    #[inline]
    pub fn seq_len(&self) -> u32 {
        self.len + self.flags.syn() as u32 + self.flags.fin() as u32
    }
}

/// A [`Segment`] as a packet carries it: 40 bytes, every field of the segment but the SACK
/// blocks' values (their count is kept; the holder stores the blocks, see [`PackedSeg::pack`]),
/// in the segment's own order (both `repr(C)`). `pack` then `unpack` with the same blocks gives
/// back the segment exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PackedSeg {
    pub seq: u32,
    pub ack: u32,
    pub wnd: u32,
    pub len: u32,
    pub ts: Option<(u32, u32)>,
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub flags: Flags,
    pub ce: bool,
    pub ect: bool,
    pub ect1: bool,
    pub sack_ok: bool,
    /// SACK blocks the segment carries (0 to 4; their values are held beside it).
    pub nsack: u8,
}

impl PackedSeg {
    /// `seg` packed; its SACK blocks (`seg.sack`) are for the caller to keep.
    #[inline]
    pub fn pack(seg: &Segment) -> PackedSeg {
        PackedSeg {
            seq: seg.seq,
            ack: seg.ack,
            wnd: seg.wnd,
            len: seg.len,
            ts: seg.ts,
            mss: seg.mss,
            wscale: seg.wscale,
            flags: seg.flags,
            ce: seg.ce,
            ect: seg.ect,
            ect1: seg.ect1,
            sack_ok: seg.sack_ok,
            nsack: seg.sack.n,
        }
    }

    /// The segment, with the first `nsack` of `sack` as its SACK blocks.
    #[inline]
    pub fn unpack(&self, sack: &[(u32, u32); 4]) -> Segment {
        let mut blocks = SackBlocks::default();
        if self.nsack > 0 {
            let n = (self.nsack as usize).min(4);
            blocks.n = n as u8;
            blocks.b[..n].copy_from_slice(&sack[..n]);
        }
        Segment {
            seq: self.seq,
            ack: self.ack,
            flags: self.flags,
            wnd: self.wnd,
            len: self.len,
            mss: self.mss,
            wscale: self.wscale,
            ts: self.ts,
            ce: self.ce,
            ect: self.ect,
            ect1: self.ect1,
            sack_ok: self.sack_ok,
            sack: blocks,
        }
    }

    /// [`Segment::seq_len`] of the packed segment.
    #[inline]
    pub fn seq_len(&self) -> u32 {
        self.len + self.flags.syn() as u32 + self.flags.fin() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field survives packing, each option present and absent, with 0 to 4 SACK blocks;
    /// the packed form is the 40 bytes a one-cache-line packet has room for.
    #[test]
    fn pack_then_unpack_gives_the_segment_back() {
        assert_eq!(std::mem::size_of::<PackedSeg>(), 40);
        let full = Segment {
            seq: 0xdead_beef,
            ack: 7,
            flags: Flags::SYN | Flags::ACK | Flags::ECE,
            wnd: 1 << 30,
            len: 1448,
            mss: Some(0),
            wscale: Some(14),
            ts: Some((0, u32::MAX)),
            ce: true,
            ect: true,
            ect1: true,
            sack_ok: true,
            sack: SackBlocks::default(),
        };
        let mut cases = vec![full, Segment::default(), Segment { mss: Some(1460), ..Segment::default() }];
        for k in 0..7 {
            let mut s = full;
            match k {
                0 => s.mss = None,
                1 => s.wscale = None,
                2 => s.ts = None,
                3 => s.ce = false,
                4 => s.ect = false,
                5 => s.ect1 = false,
                _ => s.sack_ok = false,
            }
            cases.push(s);
        }
        for n in 1..=4u32 {
            let mut s = Segment { flags: Flags::ACK, ts: Some((3, 4)), ..Segment::default() };
            for i in 0..n {
                s.sack.push(100 * i + 1, 100 * i + 50);
            }
            cases.push(s);
        }
        for seg in cases {
            let p = PackedSeg::pack(&seg);
            let mut side = [(0, 0); 4];
            side[..seg.sack.n as usize].copy_from_slice(seg.sack.as_slice());
            assert_eq!(p.unpack(&side), seg);
            assert_eq!(p.seq_len(), seg.seq_len());
            // Blocks past the count are not the segment's.
            assert_eq!(p.unpack(&[(9, 9); 4]).sack.as_slice().len(), seg.sack.n as usize);
        }
    }
}
