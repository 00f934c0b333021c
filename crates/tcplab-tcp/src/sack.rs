//! SACK receiver (RFC 2018 §4) and D-SACK (RFC 2883 §4), the endpoint's receiving SACK seam.
//!
//! The receiver keeps the out-of-order blocks it has reported, most recent first:
//! * the first block is the contiguous block holding the segment that triggered the ACK
//!   (RFC 2018 §4 "The first SACK block ... MUST specify the contiguous block of data containing
//!   the segment which triggered this ACK, unless that segment advanced the Acknowledgment
//!   Number"); blocks it absorbed (merged with) are dropped from the list;
//! * the rest repeat the most recently reported blocks, newest first ("as many distinct SACK
//!   blocks as possible"), never a block now covered by the cumulative ACK;
//! * at most 4 blocks, 3 when timestamps are in use (the 40 option bytes; RFC 2018 §3);
//! * D-SACK (RFC 2883), when enabled: a segment that is entirely duplicate puts its range first
//!   on the next ACK, once.
//!
//! SACK blocks ride on pure ACKs. Deliberate deviation: a data segment sent while out-of-order
//! data is held carries none (tcplab's applications are one-way bulk transfers, so data and
//! holes never coexist on one side); the option bytes are counted in the ACK's wire size.

/// Receiver state. Blocks are 64-bit offsets of the peer's sequence space.
#[derive(Clone, Debug, Default)]
pub struct SackReceiver {
    /// Reported blocks, most recent first (each one a current reassembly block).
    recent: Vec<(u64, u64)>,
    dsack: Option<(u64, u64)>,
}

impl SackReceiver {
    /// Out-of-order data arrived; `block` is the reassembly block now holding it.
    pub fn on_out_of_order(&mut self, block: (u64, u64)) {
        self.recent.retain(|&(a, b)| b < block.0 || a > block.1);
        self.recent.insert(0, block);
    }

    /// The cumulative ACK point moved to `rcv_nxt`.
    pub fn on_advance(&mut self, rcv_nxt: u64) {
        self.recent.retain(|&(_, b)| b > rcv_nxt);
    }

    /// A segment `[a, b)` that carried nothing new arrived (RFC 2883 D-SACK).
    pub fn on_duplicate(&mut self, a: u64, b: u64) {
        if b > a {
            self.dsack = Some((a, b));
        }
    }

    /// Blocks for the next ACK (consumes a pending D-SACK block).
    pub fn blocks(&mut self, max: usize, mut to_wire: impl FnMut(u64) -> u32) -> crate::SackBlocks {
        let mut out = crate::SackBlocks::default();
        if let Some((a, b)) = self.dsack.take() {
            out.push(to_wire(a), to_wire(b));
        }
        for &(a, b) in &self.recent {
            if out.n as usize >= max {
                break;
            }
            out.push(to_wire(a), to_wire(b));
        }
        out
    }

    pub fn has_blocks(&self) -> bool {
        !self.recent.is_empty() || self.dsack.is_some()
    }
}
