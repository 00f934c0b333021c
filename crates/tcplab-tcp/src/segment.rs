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
    /// IP CE codepoint set by a queue (for ECN, later).
    pub ce: bool,
    /// IP ECT codepoint set by the sender (for ECN, later).
    pub ect: bool,
}

impl Segment {
    /// IP (20) + TCP (20) header bytes plus options, padded to 4 bytes as BSD sends them:
    /// MSS 4, window scale 4 (NOP + 3), timestamps 12 (2 NOP + 10).
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
        h
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
