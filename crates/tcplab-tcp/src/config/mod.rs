//! Endpoint configuration; the variant registry is the table in [`variants`].
//!
//! A *variant* is a named composition of the four seams — congestion control ([`CcKind`]), loss
//! recovery ([`RecoveryKind`]), retransmission timer ([`TimerModel`]) and receiver ACK policy
//! ([`AckPolicy`]) — with documented parameters. [`EndpointConfig::for_variant`] looks a name up
//! in [`variants::VARIANTS`]; each algorithm's parameters live in its own file
//! ([`crate::cc::VegasParams`], [`crate::cc::ScalableParams`], [`crate::lite`]).
//!
//! Defaults common to `tahoe`, `reno`, `newreno` (sources in brackets):
//! * initial window 1 segment [4.4BSD `tcp_newtcpcb`: snd_cwnd = 1 segment after SYN];
//! * initial ssthresh 65535 bytes [4.4BSD: TCP_MAXWIN; seeds: "64 KB"];
//! * duplicate-ACK threshold 3 [4.4BSD `tcprexmtthresh`];
//! * linear increase MSS·MSS/cwnd per ACK, *without* 4.4BSD's extra MSS/8 term
//!   [seed 001 footnote 7: "our version of Reno doesn't have the 1/8th increase"];
//! * send buffer 50 KB, receive buffer 50 KB [seed 000 §6.1.1 uses a 50 KB send buffer];
//! * MSS 1460 payload bytes (the host/scenario overrides it, e.g. 1.4 KB packets in seed 000);
//! * timestamps and window scaling off (the x-kernel Reno of the seeds has neither);
//! * receiver ACK policy: ACK every segment [seed 001 §4: the x-kernel Reno does not delay ACKs];
//! * TIME_WAIT 1 s (short, seed 000 §2.2.2: a simulator need not hold 2·MSL; long TIME_WAIT
//!   only costs memory);
//! * Nagle's algorithm on [4.4BSD default].
//!
//! Per variant: see [`variants`].

pub mod variants;

pub use crate::cc::{CcKind, CubicParams, DctcpParams, PragueParams, ScalableParams, VegasParams};
pub use crate::recovery::RecoveryKind;
pub use variants::{VariantEntry, KNOWN_VARIANTS, VARIANTS};

use crate::lite::LiteFixes;
use crate::Nanos;

/// Retransmission-timer model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerModel {
    /// 4.4BSD: a 500 ms slow tick and a 200 ms fast tick driven by the host
    /// ([`crate::Endpoint::on_slow_tick`], [`crate::Endpoint::on_fast_tick`]); RTT measured in
    /// slow ticks; Jacobson's scaled-integer estimator (seed 001 §3.2).
    Bsd,
    /// RFC 6298 with clock granularity G, a lower bound on the RTO and an initial RTO; the
    /// delayed-ACK timer is a per-connection deadline of `delack_timeout`.
    Fine { granularity: Nanos, min_rto: Nanos, initial_rto: Nanos },
    /// ns-2's agent timer ([`crate::rto::ns2`]): RTT counted in `tick`s with Jacobson's scaled
    /// integers, the floor applied after the backoff, a deadline rather than a tick countdown;
    /// delayed ACKs (if any) as in `Fine`.
    Ns2 { tick: Nanos, min_rto: Nanos, initial_rto: Nanos, max_rto: Nanos },
    /// Linux's timer ([`crate::rto::linux`]): RTT sampled on every ACK, RTO = SRTT + a variance
    /// term floored at `min_rto` per round trip; a deadline and delayed ACKs as in `Fine`
    /// (`granularity` is the clock of timestamps, 1 ms as Linux's `tcp_time_stamp`).
    Linux { granularity: Nanos, min_rto: Nanos, initial_rto: Nanos },
}

impl TimerModel {
    /// ns-2's defaults of 2002 (seed 004's simulator): see [`crate::rto::ns2`].
    pub const NS2_2002: TimerModel = TimerModel::Ns2 {
        tick: crate::rto::ns2::NS2_TICK,
        min_rto: crate::rto::ns2::NS2_MIN_RTO,
        initial_rto: crate::rto::ns2::NS2_INITIAL_RTO,
        max_rto: crate::rto::ns2::NS2_MAX_RTO,
    };
}

/// Receiver acknowledgement policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPolicy {
    /// ACK every segment at once (x-kernel Reno of the seeds, seed 001 §4).
    EveryPacket,
    /// 4.4BSD delayed ACK: ACK when two full segments are unacknowledged, else at the 200 ms fast
    /// tick; immediate (duplicate) ACK on out-of-order data; immediate ACK when a hole fills.
    BsdDelayed,
    /// Tahoe receiver (seed 002 §1.2): like `BsdDelayed` for in-order data, but out-of-order
    /// segments are *not* acknowledged immediately — at most one ACK per 200 ms fast tick while a
    /// hole exists.
    TahoeReceiver,
    /// Jacobson's LBL receiver (seed 002 footnote 4): ACK every packet until two receive windows
    /// of data have arrived, then `BsdDelayed`; back to immediate after the sender has been idle
    /// for more than an RTT.
    Lbl,
}

impl AckPolicy {
    pub fn parse(s: &str) -> Result<AckPolicy, String> {
        match s {
            "every" | "every_packet" | "every-packet" => Ok(AckPolicy::EveryPacket),
            "bsd" | "bsd_delayed" | "bsd-delayed" | "delayed" => Ok(AckPolicy::BsdDelayed),
            "tahoe" | "tahoe_receiver" | "tahoe-receiver" => Ok(AckPolicy::TahoeReceiver),
            "lbl" => Ok(AckPolicy::Lbl),
            _ => Err(format!(
                "unknown ack policy {s:?}; known: every_packet, bsd_delayed, tahoe_receiver, lbl"
            )),
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            AckPolicy::EveryPacket => "every_packet",
            AckPolicy::BsdDelayed => "bsd_delayed",
            AckPolicy::TahoeReceiver => "tahoe_receiver",
            AckPolicy::Lbl => "lbl",
        }
    }
}

/// The named composition chosen per flow.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantConfig {
    pub name: String,
    pub cc: CcKind,
    pub recovery: RecoveryKind,
}

/// Everything an endpoint needs to know. Build with [`EndpointConfig::for_variant`] and adjust.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointConfig {
    pub variant: VariantConfig,
    /// Payload bytes per segment without options (the MSS option we advertise). When timestamps
    /// are negotiated the payload shrinks by 12 bytes, as 4.4BSD's `tcp_mss` does.
    pub mss: u32,
    /// Send socket buffer: bounds unacknowledged + unsent bytes.
    pub send_buffer: u32,
    /// Count the send buffer as Linux does (`send_buffer_model = "linux"`,
    /// `endpoint/sndbuf.rs`): each queued segment costs its skb's truesize (payload + 832
    /// bytes), a blocked writer wakes only when 1/3 of the buffer is free, and every write runs
    /// `tcp_rate_check_app_limited`. Off: the buffer counts payload bytes and refills at once.
    pub send_buffer_linux: bool,
    /// Receive socket buffer: the advertised window is its free space.
    pub recv_buffer: u32,
    /// RFC 1323 timestamps (both sides must offer them).
    pub timestamps: bool,
    /// RFC 1323 window scaling (both sides must offer it).
    pub window_scaling: bool,
    /// Length of TIME_WAIT (seed 000 §2.2.2: short in simulation).
    pub time_wait: Nanos,
    pub ack_policy: AckPolicy,
    pub timer_model: TimerModel,
    /// Initial congestion window in segments.
    pub initial_window_segments: u32,
    /// Initial slow-start threshold in bytes (65535 as 4.4BSD).
    pub initial_ssthresh: u32,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Delayed-ACK timeout in the `Fine` timer model (the BSD model uses the 200 ms fast tick).
    pub delack_timeout: Nanos,
    /// For `BsdDelayed`/`TahoeReceiver`/`Lbl`: ACK once this many bytes are unacknowledged.
    /// `None` = 2 × t_maxseg (4.4BSD tcp_output: `adv >= 2 * t_maxseg`); t_maxseg is the payload
    /// per segment, except in `lite`, where it includes the option bytes (seed 001 §3.3).
    pub delack_bytes: Option<u32>,
    /// Linux's quick-ACK mode at the start of a connection (`tcp_incr_quickack` on the first
    /// data segment, `TCP_MAX_QUICKACKS` = 16): the first min(recv_buffer / (2·MSS), this) in-order
    /// data segments (at least 2) are acknowledged at once, not delayed. 0 = off (BSD).
    pub quickack: u32,
    /// Nagle's algorithm (4.4BSD default on): a sub-MSS segment waits until nothing is in flight.
    pub nagle: bool,
    /// Close our side automatically once the peer's FIN has been read (a bulk sink).
    pub close_on_peer_fin: bool,
    /// Slow-start restart after idle (4.4BSD tcp_output.c: nothing outstanding and idle for at
    /// least the RTO → cwnd back to the initial window; RFC 5681 §4.1 for the fine timer model).
    pub idle_restart: bool,
    /// Record the columnar trace.
    pub trace: bool,
    /// 4.4BSD-Lite behaviours and their fixes ([`crate::lite`]); `None` for every other variant.
    pub lite: Option<LiteFixes>,
    /// Planted faults ([`crate::faults`], the `reno-fault-*` variants); all off otherwise.
    pub faults: crate::faults::PlantedFaults,
    /// Offer ECN (RFC 3168) in the handshake; used when the peer agrees.
    pub ecn: bool,
    /// Offer SACK-permitted (RFC 2018) in the handshake (on for the SACK variants).
    pub sack: bool,
    /// Receiver: report duplicate segments with D-SACK blocks (RFC 2883).
    pub dsack: bool,
    /// ECN feedback per segment (seed 003 §3.3, fn. 14): the receiver sets ECE on an ACK exactly
    /// when the segment it acknowledges arrived CE-marked, and the sender gives each ACK's mark
    /// to the congestion control instead of RFC 3168's once-per-window halving and CWR.
    pub ecn_per_segment: bool,
    /// The receiver echoes ECN as DCTCP's state machine (RFC 8257 §3.2): ECE = CE of the last
    /// data segment, an immediate ACK when that changes ([`crate::ecn`]).
    pub ecn_dctcp_echo: bool,
    /// Send data as ECT(1), the L4S identifier (RFC 9331), instead of ECT(0) (TCP Prague).
    pub ecn_l4s: bool,
    /// Seed of the congestion control's own randomness (the scalable pacing factor); the host
    /// draws it from a per-connection RNG stream.
    pub pacing_seed: u64,
}
