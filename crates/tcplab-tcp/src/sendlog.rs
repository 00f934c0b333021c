//! Per-segment send records: the sender's memory of what left when.
//!
//! A `VecDeque` ring (grows to the largest window once, then reuses its storage — no allocation
//! per segment in steady state). Used for fine-grained RTT samples (Vegas, the `fine` timer
//! model's diagnostics) and exposed read-only to congestion control through
//! [`crate::cc::SenderView::send_log`]. Sequence numbers are the endpoint's 64-bit offsets.

use crate::Nanos;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendRecord {
    /// First sequence offset of the segment.
    pub seq: u64,
    /// One past the last sequence offset (includes FIN).
    pub end: u64,
    /// Time of the most recent transmission.
    pub sent_at: Nanos,
    /// Time of the first transmission.
    pub first_sent_at: Nanos,
    /// Number of retransmissions.
    pub retransmits: u32,
}

#[derive(Clone, Debug, Default)]
pub struct SendLog {
    recs: VecDeque<SendRecord>,
}

impl SendLog {
    pub fn iter(&self) -> impl Iterator<Item = &SendRecord> {
        self.recs.iter()
    }
    pub fn len(&self) -> usize {
        self.recs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }
    /// The oldest unacknowledged segment.
    pub fn oldest(&self) -> Option<&SendRecord> {
        self.recs.front()
    }
    /// The record containing sequence offset `seq`.
    pub fn find(&self, seq: u64) -> Option<&SendRecord> {
        let i = self.recs.partition_point(|r| r.end <= seq);
        self.recs.get(i).filter(|r| r.seq <= seq)
    }

    /// Record a transmission of [seq, end). New data (seq at or beyond the last record's end)
    /// appends; a retransmission marks every record it overlaps.
    pub(crate) fn on_send(&mut self, now: Nanos, seq: u64, end: u64) {
        if end <= seq {
            return;
        }
        let tail = self.recs.back().map(|r| r.end).unwrap_or(0);
        if self.recs.is_empty() || seq >= tail {
            if self.recs.capacity() == 0 {
                // One allocation at the first send for the usual windows (issue 13).
                self.recs.reserve(16);
            }
            self.recs.push_back(SendRecord { seq, end, sent_at: now, first_sent_at: now, retransmits: 0 });
            return;
        }
        let mut i = self.recs.partition_point(|r| r.end <= seq);
        while i < self.recs.len() && self.recs[i].seq < end {
            let r = &mut self.recs[i];
            r.sent_at = now;
            r.retransmits += 1;
            i += 1;
        }
        if end > tail {
            // Retransmission straddling the old tail (e.g. resegmentation after go-back-N).
            self.recs.push_back(SendRecord { seq: tail, end, sent_at: now, first_sent_at: now, retransmits: 0 });
        }
    }

    /// Linux's `seq_rtt_us` for a cumulative ACK to `una` (`tcp_clean_rtx_queue`): the time since
    /// the oldest newly acknowledged segment was sent, none when nothing is newly acknowledged or
    /// any newly acknowledged segment was retransmitted (`FLAG_RETRANS_DATA_ACKED`, Karn). Call
    /// before [`SendLog::ack`].
    pub(crate) fn oldest_acked_rtt(&self, now: Nanos, una: u64) -> Option<Nanos> {
        let first = self.recs.front().filter(|r| r.end <= una)?;
        let retransmitted = self.recs.iter().take_while(|r| r.end <= una).any(|r| r.retransmits > 0);
        (!retransmitted).then(|| now.saturating_sub(first.sent_at))
    }

    /// Linux's `sack_rtt_us` for a segment newly SACKed at `seq`: the time since it was sent,
    /// none if it was retransmitted.
    pub(crate) fn sacked_rtt(&self, now: Nanos, seq: u64) -> Option<Nanos> {
        self.find(seq).filter(|r| r.retransmits == 0).map(|r| now.saturating_sub(r.sent_at))
    }

    /// Drop records fully acknowledged by `una`. Returns the fine RTT of the newest dropped
    /// record that was never retransmitted (Karn), if any.
    pub(crate) fn ack(&mut self, now: Nanos, una: u64) -> Option<Nanos> {
        let mut rtt = None;
        while let Some(r) = self.recs.front() {
            if r.end <= una {
                rtt = if r.retransmits == 0 { Some(now.saturating_sub(r.sent_at)) } else { None };
                self.recs.pop_front();
            } else {
                break;
            }
        }
        rtt
    }
}
