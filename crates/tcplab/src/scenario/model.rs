//! The scenario file format (TOML). Every struct denies unknown keys; every quantity carries its
//! unit (see `units`). `tcplab schema` prints the JSON Schema generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::units::{Duration, QueueLimitQ, Rate, Size};

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name of the scenario (defaults to the file name).
    #[serde(default)]
    pub name: Option<String>,
    /// Free text: what the scenario reproduces and where its parameters come from.
    #[serde(default)]
    pub description: Option<String>,
    pub run: RunCfg,
    pub nodes: Vec<NodeCfg>,
    pub links: Vec<LinkCfg>,
    /// UDP-like traffic sources.
    #[serde(default)]
    pub udp: Vec<UdpCfg>,
    /// TCP connections (bulk transfers).
    #[serde(default)]
    pub tcp: Vec<TcpCfg>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCfg {
    /// Simulated time to run; the run also ends early once every TCP transfer has finished and
    /// no UDP source is active, if `stop_when_done` is true.
    pub duration: Duration,
    /// Seed of the run's random streams (overridden by `--seed`).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Interval of the queue min/max/average monitor (seed 000 Fig 2.7). Default 100ms.
    #[serde(default)]
    pub monitor_interval: Option<Duration>,
    /// End the run as soon as all TCP transfers have completed (default true).
    #[serde(default = "default_true")]
    pub stop_when_done: bool,
    #[serde(default)]
    pub trace: TraceCfg,
}

fn default_seed() -> u64 {
    1
}
fn default_true() -> bool {
    true
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceCfg {
    /// Record the per-connection TCP trace (trace_tcp.parquet).
    #[serde(default)]
    pub tcp: bool,
    /// Link directions to trace ("gw1->gw2"), or ["all"].
    #[serde(default)]
    pub links: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub name: String,
    pub kind: NodeKind,
    /// Per-packet processing delay on arrival (seed 000 §2.2.2).
    #[serde(default)]
    pub processing_delay: Option<DelayCfg>,
}

/// A processing-delay distribution.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, tag = "dist", rename_all = "lowercase")]
pub enum DelayCfg {
    Fixed { value: Duration },
    Uniform { min: Duration, max: Duration },
    /// Normal, truncated at zero.
    Normal { mean: Duration, stddev: Duration },
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    /// Name of the link; its directions are reported as "<a>-><b>" and "<b>-><a>".
    #[serde(default)]
    pub name: Option<String>,
    /// Endpoint node names.
    pub a: String,
    pub b: String,
    pub rate: Rate,
    pub delay: Duration,
    /// Per-packet framing overhead added to every packet's transmission time (default 0B).
    #[serde(default)]
    pub overhead: Option<Size>,
    /// Largest packet the link carries (default 64KB: no limit in practice).
    #[serde(default)]
    pub mtu: Option<Size>,
    /// Probability that a packet is lost on the wire (after consuming its transmission time).
    #[serde(default)]
    pub loss: Option<f64>,
    /// Probability that a packet is corrupted: it consumes transmission time and is discarded by
    /// the receiving node (as hitbox does, seed 002 §4.1).
    #[serde(default)]
    pub corruption: Option<f64>,
    /// Output queue of both directions (default: droptail, 50pkts).
    #[serde(default)]
    pub queue: Option<QueueCfg>,
    /// Scripted drops (both directions; only data segments toward a receiver match).
    #[serde(default)]
    pub drop: Option<DropCfg>,
    /// Overrides for the a->b direction.
    #[serde(default)]
    pub ab: Option<DirectionOverride>,
    /// Overrides for the b->a direction.
    #[serde(default)]
    pub ba: Option<DirectionOverride>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirectionOverride {
    pub rate: Option<Rate>,
    pub delay: Option<Duration>,
    pub overhead: Option<Size>,
    pub mtu: Option<Size>,
    pub loss: Option<f64>,
    pub corruption: Option<f64>,
    pub queue: Option<QueueCfg>,
    pub drop: Option<DropCfg>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueCfg {
    /// Queue discipline: "droptail" (default), "red" (Floyd & Jacobson 1993, ns-2 defaults) or
    /// "ared" (Adaptive RED, Floyd/Gummadi/Shenker 2001).
    #[serde(default = "default_droptail")]
    pub kind: String,
    /// Limit in packets ("10pkts") or bytes ("128KB"). Default 50pkts (ns-2's default).
    pub limit: QueueLimitQ,
    /// Whether the packet being transmitted counts against the limit (default false; droptail).
    #[serde(default)]
    pub count_in_service: bool,
    /// RED: minimum threshold of the average queue, in packets (ns-2 `thresh_`, default 5; ared: automatic).
    #[serde(default)]
    pub min_th: Option<f64>,
    /// RED: maximum threshold, in packets (ns-2 `maxthresh_`, default 15; ared: 3·min_th).
    #[serde(default)]
    pub max_th: Option<f64>,
    /// RED: weight of the average (ns-2 `q_weight_`, default 0.002; ared: 1 − exp(−1/C)).
    #[serde(default)]
    pub w_q: Option<f64>,
    /// RED: drop probability at max_th (ns-2 1/`linterm_`, default 0.1; ared: its starting value).
    #[serde(default)]
    pub max_p: Option<f64>,
    /// RED: gentle mode between max_th and 2·max_th (ns-2 `gentle_`, default false; ared: true).
    #[serde(default)]
    pub gentle: Option<bool>,
    /// RED: ns-2's `wait_` spacing between drops (default true).
    #[serde(default)]
    pub wait: Option<bool>,
    /// RED: byte mode — average in bytes/mean_pktsize, drop probability scaled by size (default false).
    #[serde(default)]
    pub byte_mode: Option<bool>,
    /// RED: the typical packet size for byte mode and the idle-time decay (ns-2 `mean_pktsize_`, 500B).
    #[serde(default)]
    pub mean_pktsize: Option<Size>,
    /// RED: mark ECN-capable packets with CE instead of dropping them (ns-2 `setbit_`, default false).
    #[serde(default)]
    pub ecn: Option<bool>,
    /// ARED: target queueing delay (default 5ms, ns-2 `targetdelay_`).
    #[serde(default)]
    pub target_delay: Option<Duration>,
    /// ARED: adaptation interval (default 500ms, ns-2 `interval_`).
    #[serde(default)]
    pub interval: Option<Duration>,
}

/// A link's scripted drop list: `drop = { packets = [{ flow = "t", seq = 14000 }, ...] }`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropCfg {
    pub packets: Vec<DropPacketCfg>,
}

/// One scripted drop: the data segment of TCP flow `flow` whose first byte is at offset `seq`
/// (bytes from the first data byte, as in trace_tcp's `seq`), on its `occurrence`-th
/// transmission over this link (1 = the original transmission, the default).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropPacketCfg {
    pub flow: String,
    pub seq: u64,
    #[serde(default)]
    pub occurrence: Option<u32>,
}

fn default_droptail() -> String {
    "droptail".to_string()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UdpPattern {
    /// Constant bit rate: packets of `packet_size` at `rate`.
    Cbr,
    /// Poisson arrivals with mean `interval` (or mean `rate`), sizes fixed or exponential.
    Poisson,
    /// Exponentially sized bursts (mean `burst_size`) at exponential intervals (mean
    /// `burst_interval`), sent back to back in packets of `packet_size` (seed 002 §5).
    Bursts,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SizeDist {
    Fixed,
    Exponential,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UdpCfg {
    pub name: String,
    pub from: String,
    pub to: String,
    pub pattern: UdpPattern,
    /// Packet size (the mean if `size_dist = "exponential"`), on the wire.
    pub packet_size: Size,
    #[serde(default)]
    pub size_dist: Option<SizeDist>,
    /// CBR rate, or the mean rate of a Poisson source (alternative to `interval`).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Mean packet interarrival time of a Poisson source.
    #[serde(default)]
    pub interval: Option<Duration>,
    #[serde(default)]
    pub burst_size: Option<Size>,
    #[serde(default)]
    pub burst_interval: Option<Duration>,
    #[serde(default)]
    pub start: Option<Duration>,
    #[serde(default)]
    pub stop: Option<Duration>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpCfg {
    pub name: String,
    /// Sending host.
    pub from: String,
    /// Receiving host.
    pub to: String,
    /// Named variant: tahoe, reno, newreno, sack, sack-rfc6675, vegas, vegas-star.
    pub variant: String,
    /// Transfer this many bytes (e.g. "1MB") ...
    #[serde(default)]
    pub bytes: Option<Size>,
    /// ... or send for this long (seed 000 §6.2.5: timed vs byte transfers).
    #[serde(default)]
    pub duration: Option<Duration>,
    #[serde(default)]
    pub start: Option<Duration>,
    /// Maximum segment size: payload bytes per segment.
    #[serde(default)]
    pub mss: Option<Size>,
    #[serde(default)]
    pub send_buffer: Option<Size>,
    #[serde(default)]
    pub recv_buffer: Option<Size>,
    /// Receiver ACK policy: "every", "bsd-delayed", "tahoe", "lbl" (default: the variant's).
    #[serde(default)]
    pub ack_policy: Option<String>,
    /// Retransmission timer model: "bsd" or "fine" (default: the variant's).
    #[serde(default)]
    pub timer: Option<String>,
    /// Fine timer: clock granularity and minimum RTO.
    #[serde(default)]
    pub timer_granularity: Option<Duration>,
    #[serde(default)]
    pub min_rto: Option<Duration>,
    #[serde(default)]
    pub timestamps: Option<bool>,
    #[serde(default)]
    pub window_scaling: Option<bool>,
    #[serde(default)]
    pub initial_ssthresh: Option<Size>,
    #[serde(default)]
    pub initial_window: Option<u32>,
    #[serde(default)]
    pub time_wait: Option<Duration>,
    /// Receiving application's read rate (default: reads instantly).
    #[serde(default)]
    pub read_rate: Option<Rate>,
    /// Explicit Congestion Notification (RFC 3168), negotiated in the handshake (default false).
    #[serde(default)]
    pub ecn: Option<bool>,
    /// Variant parameters, e.g. { alpha = 1, beta = 3, gamma = 1 } for Vegas.
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
}
