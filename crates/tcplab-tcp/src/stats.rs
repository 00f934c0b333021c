//! Per-connection counters (the `flows` entries of summary.json are derived from these).

use crate::opt64::Opt64;
use crate::Nanos;

/// How many coarse-timeout times [`ConnStats::timeout_times`] keeps.
pub const MAX_TIMEOUT_TIMES: usize = 100;

/// `repr(C)`, grouped by when they are touched (issue 28: at thousands of flows each cache line
/// of a cold endpoint is a miss): what every segment sent or received touches first; then
/// `first_send` (read at every data segment sent) and what a loss touches (a timeout's counters,
/// its time list, a retransmission's); the rest last. The field order is otherwise free.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ConnStats {
    // Hot: touched by every segment sent or received (the first three cache lines).
    /// Sum of the fine RTT samples (ns), see `rtt_samples`.
    pub rtt_sum: u128,
    /// Data bytes cumulatively acknowledged by the peer (excludes SYN/FIN).
    pub bytes_acked: u64,
    /// All segments emitted (data, control, pure ACKs).
    pub segments_sent: u64,
    /// Segments carrying data (first transmissions and retransmissions).
    pub data_segments_sent: u64,
    /// Data bytes sent for the first time.
    pub bytes_sent: u64,
    pub acks_sent: u64,
    pub segments_received: u64,
    /// Data bytes read by the receiving application.
    pub bytes_delivered_to_app: u64,
    /// ECN: CE-marked data segments received (receiver side).
    pub ecn_ce_received: u64,
    /// Fine RTT samples: how many, their sum and the largest (ns), for the mean and max RTT.
    pub rtt_samples: u64,
    /// Time (ns, between new ACKs at the sender) during which the usable window was set by the
    /// send buffer, by the peer's advertised (receive) window, or by cwnd or a full path (a
    /// buffer that binds while the RTT is above 1.5 × its minimum counts as the last).
    pub limited_ns: [u64; 3],
    /// Smallest fine RTT sample (ns): the minimum of all measured round-trip times, which is
    /// Vegas' BaseRTT (seed 000 §4.3) whenever no retransmission spoiled a sample.
    pub min_rtt: Opt64,
    pub max_rtt: Opt64,
    /// Time of the previous new ACK and the limit that bound then (index into `limited_ns`).
    pub limit_since: Opt64,
    /// Time the last byte of a finite transfer was acknowledged.
    pub completion_time: Opt64,
    pub max_cwnd_bytes: u32,
    /// Connection aborted (too many retransmissions, or RST).
    pub aborted: bool,
    /// The limit that bound at `limit_since` (index into `limited_ns`).
    pub limit_which: u8,
    // Every data segment sent reads `first_send`; a loss (a timeout or a fast retransmit and
    // the retransmission that follows) touches the rest of this group.
    /// Time of the first data segment sent.
    pub first_send: Opt64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    /// Retransmission-timer expiries with data outstanding (not persist probes).
    pub coarse_timeouts: u64,
    /// Largest gap between a timeout and the previous segment sent (seed 001 §3.2: "a delay of
    /// 1.7 seconds between the timeout and the previous packet sent").
    pub largest_timeout_gap: Nanos,
    /// When the first 100 (`MAX_TIMEOUT_TIMES`) of those expiries happened (seed 001 §3.1 lists
    /// Lite.0's at 3.5, 10.5 and 14.5 s).
    pub timeout_times: Vec<Nanos>,
    pub fast_retransmits: u64,
    pub dupacks_received: u64,
    // Cold: the handshake, the end, rarer events.
    /// Time the connection reached ESTABLISHED.
    pub established_at: Opt64,
    /// Time the connection became CLOSED.
    pub closed_at: Opt64,
    /// ACKs taken by 4.4BSD-Lite's header-prediction fast path (`lite` variants only).
    pub predicted_acks: u64,
    /// Slow-start restarts after an idle period (4.4BSD tcp_output.c).
    pub idle_restarts: u64,
    pub out_of_order_segments: u64,
    /// ECN: ACKs with ECE received (sender side).
    pub ecn_ece_received: u64,
    /// ECN: window reductions in response to ECE (at most one per window).
    pub ecn_reactions: u64,
    /// ECN: ACKs with ECE received on a connection that did not negotiate ECN, ignored (RFC 3168
    /// §6.1.1); SYN-ACKs not counted.
    pub ecn_ece_ignored: u64,
    /// SACK: ACKs carrying SACK blocks received, and D-SACK blocks among them (RFC 2883).
    pub sack_acks_received: u64,
    pub dsacks_received: u64,
}
