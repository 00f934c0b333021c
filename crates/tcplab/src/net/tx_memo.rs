//! A link's (or a shared medium's) memo of its last transmission time, in a module of its own
//! so that `link` and `ethernet`, which both use it, need not use each other.

/// The transmission time of the last packet size seen on a link direction. A direction carries
/// mostly one size (full data segments one way, ACKs the other), so this spares the 64-bit
/// division of `transmission_time` on nearly every packet; the value is the function's own, so
/// results are unchanged. `bytes == u32::MAX`: empty.
///
/// Packed to 12 bytes (4-byte aligned) so that it fits in `Link`'s first cache line beside the
/// transmitter and the pipe's head (issue 28).
#[derive(Clone, Copy, Debug)]
#[repr(C, packed(4))]
pub struct TxMemo {
    bytes: u32,
    ns: u64,
}

impl TxMemo {
    /// `compute(bytes)`, computed only when `bytes` differs from the last call's.
    #[inline]
    pub fn time(&mut self, bytes: u32, compute: impl FnOnce(u32) -> u64) -> u64 {
        if self.bytes != bytes {
            *self = TxMemo { bytes, ns: compute(bytes) };
        }
        self.ns
    }
}

impl Default for TxMemo {
    fn default() -> Self {
        TxMemo { bytes: u32::MAX, ns: 0 }
    }
}
