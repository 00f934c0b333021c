//! The first-in-first-out buffer every discipline keeps its packets in (issue 23: one copy, not
//! three): packet ids in arrival order with their sizes, the byte and packet counts, and the
//! limit test. A discipline that needs more per packet (CoDel's enqueue time) stores it in the
//! `stamp`; DropTail, RED and the VQ marker use `()`, so an entry stays 8 bytes.

use std::collections::VecDeque;

use super::packet::PacketId;
use super::queue::QueueLimit;

/// One queued packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued<S> {
    pub id: PacketId,
    pub bytes: u32,
    pub stamp: S,
}

#[derive(Debug)]
pub struct Fifo<S: Copy = ()> {
    q: VecDeque<Queued<S>>,
    bytes: u64,
}

impl<S: Copy> Default for Fifo<S> {
    fn default() -> Self {
        Fifo { q: VecDeque::new(), bytes: 0 }
    }
}

impl<S: Copy> Fifo<S> {
    pub fn with_capacity(n: usize) -> Self {
        Fifo { q: VecDeque::with_capacity(n), bytes: 0 }
    }

    /// Whether an arrival of `bytes` fits under `limit` with `extra_pkts`/`extra_bytes` counted
    /// besides the waiting packets (DropTail's packet in service).
    #[inline]
    pub fn fits(&self, limit: QueueLimit, bytes: u32, extra_pkts: u64, extra_bytes: u64) -> bool {
        match limit {
            QueueLimit::Packets(n) => (self.q.len() as u64 + extra_pkts) < n as u64,
            QueueLimit::Bytes(b) => self.bytes + extra_bytes + bytes as u64 <= b,
        }
    }

    #[inline]
    pub fn push(&mut self, id: PacketId, bytes: u32, stamp: S) {
        self.q.push_back(Queued { id, bytes, stamp });
        self.bytes += bytes as u64;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Queued<S>> {
        let e = self.q.pop_front()?;
        self.bytes -= e.bytes as u64;
        Some(e)
    }

    #[inline]
    pub fn front(&self) -> Option<&Queued<S>> {
        self.q.front()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_and_limits() {
        let mut f: Fifo = Fifo::default();
        f.push(1, 100, ());
        f.push(2, 300, ());
        assert_eq!((f.len(), f.bytes()), (2, 400));
        assert!(f.fits(QueueLimit::Packets(3), 10, 0, 0));
        assert!(!f.fits(QueueLimit::Packets(3), 10, 1, 0));
        assert!(f.fits(QueueLimit::Bytes(500), 100, 0, 0));
        assert!(!f.fits(QueueLimit::Bytes(500), 100, 0, 1));
        assert_eq!(f.pop().map(|e| (e.id, e.bytes)), Some((1, 100)));
        assert_eq!((f.len(), f.bytes()), (1, 300));
        assert_eq!(f.pop().map(|e| e.id), Some(2));
        assert!(f.pop().is_none() && f.is_empty() && f.bytes() == 0);
    }
}
