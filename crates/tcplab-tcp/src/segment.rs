//! TCP segment as exchanged with the host: headers only, no payload bytes (DESIGN.md: "packets
//! are headers only"). Header sizes follow RFC 791/793 and the option layouts BSD emits
//! (tcp_output.c: MSS 4 bytes, window scale 3+NOP = 4, timestamps 10+2 NOP = 12).

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

/// A TCP segment (headers only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    pub seq: u32,
    pub ack: u32,
    pub flags: Flags,
    /// Advertised receive window in bytes, already unscaled (the endpoint quantises it to the
    /// negotiated window-scale shift before sending).
    pub wnd: u32,
    /// Payload bytes.
    pub len: u32,
    /// MSS option (SYN segments only).
    pub mss: Option<u16>,
    /// Window-scale option (SYN segments only).
    pub wscale: Option<u8>,
    /// Timestamps option (TSval, TSecr), RFC 1323.
    pub ts: Option<(u32, u32)>,
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
