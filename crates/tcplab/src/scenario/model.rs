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
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueCfg {
    /// Queue discipline; only "droptail" for now.
    #[serde(default = "default_droptail")]
    pub kind: String,
    /// Limit in packets ("10pkts") or bytes ("128KB"). Default 50pkts (ns-2's default).
    pub limit: QueueLimitQ,
    /// Whether the packet being transmitted counts against the limit (default false).
    #[serde(default)]
    pub count_in_service: bool,
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
    /// Named variant: tahoe, reno, newreno, vegas, vegas-star, or the 4.4BSD-Lite family: lite
    /// (= lite.0, the stock 4.4BSD-Lite TCP with its bugs), lite.1 ... lite.6 (the cumulative fixes
    /// of seed 001 Table 3).
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
    /// Variant parameters. Vegas: alpha, beta, gamma (buffers), avg_rtt (0/1), e.g.
    /// { alpha = 1, beta = 3, gamma = 1 }. Lite family, switches 0/1 that override the level's
    /// (seed 001 §3): fix_header_prediction (§3.1, Lite.1), fix_rto (§3.2, Lite.2), timestamps
    /// (§3.3; 0 from Lite.3), fix_extra_increase (drop the MSS/8 term, §3.3, Lite.4),
    /// ack_every_packet (§3.4, Lite.5), fix_big_ack (§3.5, Lite.6), fix_dupack_ge (§3.6, no level).
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
}
