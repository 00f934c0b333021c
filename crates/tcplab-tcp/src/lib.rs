//! # tcplab-tcp — a sans-IO TCP endpoint
//!
//! The endpoint never reads a clock: every input carries `now` (nanoseconds, [`Nanos`]), and the
//! host asks it for segments ([`Endpoint::poll_transmit`]) and for its next wake-up
//! ([`Endpoint::next_timer`]). The same code therefore runs inside the tcplab simulator, inside
//! the scripted tests of this crate (`tests/endpoint/`, smoltcp-style packet scripts) and, later,
//! in emulation.
//!
//! ## Seams (see `/work/shared/DESIGN.md`)
//!
//! * [`cc`] — congestion control: the [`cc::CongestionControl`] trait (cwnd growth per ACK,
//!   ssthresh *returned*, hooks for Vegas-style retransmit decisions); [`cc::RenoCc`] is the
//!   AIMD used by Tahoe, Reno and NewReno.
//! * [`recovery`] — loss recovery on duplicate / partial ACKs: [`recovery::TahoeRecovery`],
//!   [`recovery::RenoRecovery`] (4.3BSD-Reno), [`recovery::NewRenoRecovery`] (RFC 6582).
//! * [`rto`] — retransmission timer: [`rto::BsdRto`] (500 ms ticks, Jacobson's scaled-integer
//!   estimator exactly as seed 001 §3.2 and 4.4BSD `tcp_xmit_timer`) and [`rto::FineRto`]
//!   (RFC 6298).
//! * [`ack_policy`] — receiver ACK policies ([`AckPolicy`]).
//! * [`config`] — the endpoint's configuration; [`config::variants`] is the registry: one table
//!   of named compositions of the above with their parameters ([`EndpointConfig::for_variant`]).
//!   Each algorithm's parameter type lives in its own file and builds its controller
//!   ([`cc::CcKind`], [`recovery::RecoveryKind`] dispatch to them).
//! * `endpoint` — the state machine, one struct in rooms: `input` (segment arrival, ACKs),
//!   `data` (the receive side), `timers`, `output`.
//! * [`lite`] — 4.4BSD-Lite's performance bugs and the fixes Lite.1–Lite.6 of seed 001 as switches
//!   (the header-prediction test and the big-ACK limit the endpoint calls; the rest map onto the
//!   seams above).
//!
//! Sequence numbers are 32-bit on the wire and compared modulo 2³² ([`seq`]); internally the
//! endpoint unwraps them into 64-bit offsets of the connection's sequence space (0 = SYN,
//! 1 = first data byte), so traces grow monotonically past 2³².

pub mod ack_policy;
pub mod cc;
pub mod config;
pub mod ecn;
pub mod faults;
mod endpoint;
pub mod lite;
pub mod model;
pub mod opt64;
pub mod recovery;
pub mod rto;
pub mod sack;
pub mod sendlog;
mod segment;
pub mod seq;
mod stats;
#[doc(hidden)]
pub mod testing;
mod trace;

pub use config::{AckPolicy, CcKind, EndpointConfig, RecoveryKind, TimerModel, VariantConfig, VegasParams};
pub use endpoint::{Endpoint, TcpState};
pub use segment::{Flags, SackBlocks, Segment};
pub use stats::ConnStats;
pub use trace::{CamTrace, Trace, TraceKind};

/// Time in nanoseconds since an arbitrary origin chosen by the host.
pub type Nanos = u64;

/// One millisecond in [`Nanos`].
pub const MS: Nanos = 1_000_000;
/// One second in [`Nanos`].
pub const SEC: Nanos = 1_000_000_000;
