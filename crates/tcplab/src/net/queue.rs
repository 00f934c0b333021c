//! The queue-discipline interface every output queue implements: DropTail in [`super::droptail`],
//! RED/Adaptive RED in [`super::red`], Kelly's virtual queue in [`super::vq`], ...; the registry of
//! them by name in [`super::registry`].
//!
//! ECN (RFC 3168 §5): a discipline that wants to signal congestion without dropping answers
//! [`Admit::QueuedMarkCe`] for an ECN-capable arrival (`Arrival::ect`); the simulator then sets
//! the packet's codepoint to CE and counts the mark. This is the generic "mark" path any marker
//! uses; a discipline must never mark a packet that is not ECT (it drops it instead).
//!
//! Counter invariant (tested): `arrived == departed + dropped + queued` at every instant, where
//! "queued" excludes the packet being serialized on the link (it has departed the queue).

use super::packet::{DropReason, Ecn, PacketId};
use crate::engine::SimTime;

/// What the queue may look at when deciding.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub id: PacketId,
    pub bytes: u32,
    /// Whether the link is currently serializing a packet (that packet has already left the
    /// queue).
    pub link_busy: bool,
    pub busy_bytes: u32,
    /// The packet's ECN codepoint ([`Arrival::ect`]: it may be CE-marked).
    pub ecn: Ecn,
    /// Its flow ([`super::packet::Packet::flow_key`]), for flow-queueing disciplines.
    pub flow: u64,
}

impl Arrival {
    /// ECN-capable (ECT(0), ECT(1) or CE), so a marker may CE-mark it instead of dropping it.
    #[inline]
    pub fn ect(&self) -> bool {
        self.ecn.capable()
    }
}

/// How an accepted packet was admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Queued,
    /// Queued, and the simulator must set its ECN codepoint to CE (only for `Arrival::ect`).
    QueuedMarkCe,
}

pub trait QueueDisc: Send {
    /// Accept the packet or refuse it with a reason. On `Err`, the caller frees the packet.
    fn enqueue(&mut self, now: SimTime, a: Arrival) -> Result<Admit, DropReason>;
    /// Next packet to transmit.
    fn dequeue(&mut self, now: SimTime) -> Option<(PacketId, u32)>;
    fn len_pkts(&self) -> usize;
    fn len_bytes(&self) -> u64;
    fn name(&self) -> &'static str;
    /// The configured capacity, for reports (None for disciplines without a fixed limit).
    fn limit(&self) -> Option<QueueLimit> {
        None
    }
    /// Whether every arrival must pass through `enqueue`, even one that finds the link idle and
    /// the queue empty (RED updates its average on every arrival; DropTail lets such a packet go
    /// straight onto the wire).
    fn sees_every_arrival(&self) -> bool {
        false
    }
    /// An active queue manager's average queue (RED's `avg`), in packets, for the queue graph.
    /// Asked only of `sees_every_arrival` queues (the per-packet path skips the call otherwise).
    fn average_pkts(&self) -> Option<f64> {
        None
    }
    /// Whether the packet the last `dequeue` returned is to be CE-marked (a discipline that
    /// marks on dequeue: CoDel, DualPI2's L queue). Asked only of `sees_every_arrival` queues,
    /// and only for an ECN-capable packet.
    fn dequeue_mark(&mut self) -> bool {
        false
    }
    /// A packet the discipline dropped from inside its buffer (CoDel's head drops, FQ-CoDel's
    /// fattest-queue drop) since the last call; the simulator frees and counts each after every
    /// enqueue and dequeue of a `sees_every_arrival` queue.
    fn pop_inner_drop(&mut self) -> Option<(PacketId, u32, DropReason)> {
        None
    }
    /// The queueing delay of the packet the last `dequeue` returned, for disciplines that keep
    /// packets out of arrival order or drop from inside (the link monitor's own FIFO of
    /// enqueue times assumes neither). `None`: the monitor measures it. Asked only of
    /// `sees_every_arrival` queues.
    fn last_sojourn(&self) -> Option<SimTime> {
        None
    }
    /// Sojourn-time percentiles and drops/marks by cause, for disciplines that keep them.
    fn aqm_stats(&self) -> Option<&super::aqm_stats::AqmStats> {
        None
    }
    /// The same per class of a multi-queue discipline (DualPI2's `l4s` and `classic` queues).
    fn class_stats(&self) -> Vec<(&'static str, &super::aqm_stats::AqmStats)> {
        Vec::new()
    }
    /// Per flow queue occupancy of a flow-queueing discipline (FQ-CoDel), up to `now`.
    fn flow_queue_stats(&self, _now: SimTime) -> Vec<super::aqm_stats::FlowQueueStats> {
        Vec::new()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}
