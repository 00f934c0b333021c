//! The scenario file format (TOML). Every struct denies unknown keys; every quantity carries its
//! unit (see `units`). `tcplab schema` prints the JSON Schema generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::units::{Duration, Position, QueueLimitQ, Rate, Size};

/// Declares a struct holding the TCP options shared by `[[tcp]]` flows (`TcpCfg`) and a
/// `[[traffic]]` source's `tcp` table (`ConnOptions`): the one place those keys, their docs and
/// their serde/schemars attributes are written. The struct's own fields go in `head` (before the
/// options) and `between` (after `time_wait`, before `ecn`), which keeps every key in the order
/// that the "unknown field ..., expected one of ..." messages list. (`#[serde(flatten)]` would
/// share them too, but it disables `deny_unknown_fields` and that list.) Each struct also gets
/// `conn_options()`, its shared options as a `ConnOptions`.
macro_rules! with_tcp_options {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            head { $($head:tt)* }
            between { $($between:tt)* }
        }
    ) => {
        with_tcp_options! { @emit [$(#[$attr])*] $name [$($head)*] [$($between)*]
            [
                /// Maximum segment size: payload bytes per segment.
                #[serde(default)]
                pub mss: Option<Size>,
                #[serde(default)]
                pub send_buffer: Option<Size>,
                /// How the send buffer is counted: "payload" (default: payload bytes, refilled at once) or
                /// "linux" (skb truesize, a writer woken at 1/3 free, Linux's app-limited check per write).
                #[serde(default)]
                pub send_buffer_model: Option<String>,
                #[serde(default)]
                pub recv_buffer: Option<Size>,
                /// Receiver ACK policy: "every", "bsd-delayed", "tahoe", "lbl" (default: the variant's).
                #[serde(default)]
                #[schemars(schema_with = "ack_policy_schema")]
                pub ack_policy: Option<String>,
                /// Retransmission timer model: "bsd", "fine" (RFC 6298) or "ns2" (ns-2 2002 agents) (default: the variant's).
                #[serde(default)]
                #[schemars(schema_with = "timer_schema")]
                pub timer: Option<String>,
                /// Fine and ns2 timers only: the clock granularity RTTs are measured in (fine: default 1ms;
                /// ns2: tcpTick_, default 100ms).
                #[serde(default)]
                pub timer_granularity: Option<Duration>,
                /// Fine and ns2 timers only: the smallest RTO (default 1s: RFC 6298 §2.4, ns-2's minrto_ of 2002).
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
            ]
            [
                /// Explicit Congestion Notification (RFC 3168), negotiated in the handshake (default false).
                #[serde(default)]
                pub ecn: Option<bool>,
                /// Variant parameters. Vegas: alpha, beta, gamma (buffers), avg_rtt (0/1), e.g.
                /// { alpha = 1, beta = 3, gamma = 1 }. Lite family, switches 0/1 that override the level's
                /// (seed 001 §3): fix_header_prediction (§3.1, Lite.1), fix_rto (§3.2, Lite.2), timestamps
                /// (§3.3; 0 from Lite.3), fix_extra_increase (drop the MSS/8 term, §3.3, Lite.4),
                /// ack_every_packet (§3.4, Lite.5), fix_big_ack (§3.5, Lite.6), fix_dupack_ge (§3.6, no level).
                #[serde(default)]
                pub params: BTreeMap<String, f64>,
            ]
        }
    };
    (
        @emit [$($attr:tt)*] $name:ident [$($head:tt)*] [$($between:tt)*]
        [$( $(#[$a1:meta])* pub $f1:ident: $t1:ty, )*]
        [$( $(#[$a2:meta])* pub $f2:ident: $t2:ty, )*]
    ) => {
        $($attr)*
        pub struct $name {
            $($head)*
            $( $(#[$a1])* pub $f1: $t1, )*
            $($between)*
            $( $(#[$a2])* pub $f2: $t2, )*
        }

        impl $name {
            /// This entry's shared TCP options (the keys of a `[[traffic]]` source's `tcp` table).
            pub fn conn_options(&self) -> ConnOptions {
                ConnOptions { $( $f1: self.$f1.clone(), )* $( $f2: self.$f2.clone(), )* }
            }
        }
    };
}

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
    /// Point-to-point links (a scenario made only of `[[lan]]` segments may have none).
    #[serde(default)]
    pub links: Vec<LinkCfg>,
    /// Shared media (Ethernet segments, multiple-access links): `docs/ethernet.md`. The table
    /// may also be written `[[medium]]` (issue 25 names both); one file uses one of the two names.
    #[serde(default, alias = "medium")]
    pub lan: Vec<LanCfg>,
    /// UDP-like traffic sources.
    #[serde(default)]
    pub udp: Vec<UdpCfg>,
    /// TCP connections (bulk transfers).
    #[serde(default)]
    pub tcp: Vec<TcpCfg>,
    /// Application traffic over TCP connections that come and go: tcplib conversations (seed 000
    /// §2.2.3), Ahn's sleep-then-send senders (seed 002 §5), on/off senders.
    #[serde(default)]
    pub traffic: Vec<TrafficCfg>,
    /// Explicit routes, each replacing one entry of the shortest-path table: at node `at`,
    /// packets for `to` leave by the link to `via`.
    #[serde(default)]
    pub routes: Vec<RouteCfg>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteCfg {
    /// The node whose forwarding entry is set.
    pub at: String,
    /// The destination node the entry is for.
    pub to: String,
    /// The neighbour of `at` the packets go to (a link `at`–`via` must exist).
    pub via: String,
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
    /// Link directions whose queue is recorded per `monitor_interval` ("a->b", a link's name, or
    /// "all"). By default: the traced links and the slowest direction on each flow's path (the
    /// bottleneck); other links keep only their run totals.
    #[serde(default)]
    pub monitor_links: Vec<String>,
    /// End the run as soon as all TCP transfers have completed (default true).
    #[serde(default = "default_true")]
    pub stop_when_done: bool,
    #[serde(default)]
    pub trace: TraceCfg,
    /// A measurement window: summary.json's `window_*` fields (links and flows) count only
    /// what happened from `from` to `to` (seed 003 §4.2: 60 s of statistics after 25 s).
    #[serde(default)]
    pub measure: Option<MeasureCfg>,
    /// TCP defaults of every `[[tcp]]` flow and `[[traffic]]` source that names no profile of its
    /// own: "bsd-1994" (the seeds' hosts, the default) or "modern" (README "Profiles").
    #[serde(default)]
    #[schemars(schema_with = "profile_schema")]
    pub profile: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeasureCfg {
    pub from: Duration,
    pub to: Duration,
}

/// The TCP profiles (README "Profiles").
pub const PROFILES: &[&str] = &["bsd-1994", "modern"];
/// The queue disciplines of `queue.kind` (the registry, `net::registry`).
pub const QUEUE_KINDS: &[&str] = crate::net::registry::KNOWN_DISCIPLINES;
/// Receiver ACK policies (`ack_policy`).
pub const ACK_POLICIES: &[&str] = &["every", "bsd-delayed", "tahoe", "lbl"];
/// Retransmission timer models (`timer`).
pub const TIMERS: &[&str] = &["bsd", "fine", "ns2"];

fn enum_schema(names: &[&str], description: &str) -> schemars::schema::Schema {
    use schemars::schema::{InstanceType, Metadata, SchemaObject};
    schemars::schema::Schema::Object(SchemaObject {
        instance_type: Some(InstanceType::String.into()),
        enum_values: Some(names.iter().map(|n| serde_json::Value::String(n.to_string())).collect()),
        metadata: Some(Box::new(Metadata { description: Some(description.to_string()), ..Default::default() })),
        ..Default::default()
    })
}
fn variant_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
    enum_schema(tcplab_tcp::config::KNOWN_VARIANTS, "Named TCP variant (README \"TCP variants\"; `tcplab variants` lists them).")
}
fn profile_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
    enum_schema(PROFILES, "TCP profile: \"bsd-1994\" (the seeds' defaults) or \"modern\" (window scaling, buffers sized to the path, fine timers with 200 ms min RTO, IW 10, delayed ACKs).")
}
fn queue_kind_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
    enum_schema(QUEUE_KINDS, "Queue discipline (default droptail); `tcplab variants` lists them with their parameters.")
}
fn ack_policy_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
    enum_schema(ACK_POLICIES, "Receiver ACK policy (default: the variant's).")
}
fn timer_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
    enum_schema(TIMERS, "Retransmission timer model: bsd (500/200 ms ticks), fine (RFC 6298; timer_granularity, min_rto) or ns2 (ns-2's 2002 agent timer: 100 ms tcpTick_, minrto_ 1 s). Default: the variant's.")
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
    /// Link directions ("r1->r2", a link's name for both directions, or "all") to capture as a
    /// classic pcap file each (`pcap_<from>-<to>.pcap` in the run directory): synthesized IPv4 +
    /// TCP/UDP headers, timestamped when a packet starts transmission on the link.
    #[serde(default)]
    pub pcap: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

/// What runs a host's protocol stack in emulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeStack {
    Sim,
    Linux,
    Tcplab,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub name: String,
    pub kind: NodeKind,
    /// Emulation (`tcplab emulate`): "linux" makes the host a network namespace running real
    /// Linux TCP behind a TAP device; "tcplab" runs tcplab's endpoint on real IPv4/TCP headers;
    /// "sim" (default) simulates it. `tcplab run` simulates every host.
    #[serde(default)]
    pub stack: Option<NodeStack>,
    /// Per-packet processing delay (seed 000 §2.2.2: "periods of time during which the node does
    /// no other processing"); one packet at a time per node. Where it falls: `processing_at`.
    #[serde(default)]
    pub processing_delay: Option<DelayCfg>,
    /// Where `processing_delay` falls in a packet's path: "arrival" (default: a packet arriving
    /// at the node waits it out before the node forwards or delivers it) or "send" (a packet the
    /// node sends, its own or forwarded, waits it out before it joins the output link's queue;
    /// packets delivered to the node are not delayed) — seed 000 §6.2.6: "a delay [...] is
    /// introduced before a packet is sent by the node". Needs `processing_delay`.
    #[serde(default)]
    pub processing_at: Option<ProcessingAt>,
}

/// Where a node's processing delay falls (`nodes[].processing_at`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProcessingAt {
    #[default]
    Arrival,
    Send,
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

/// The queue and the per-direction overrides are boxed: most links write neither, and inline
/// they made a link 1.7 KB (27 MB for a 4,096-flow dumbbell's 8,193 links; boxed, 0.2 KB).
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
    pub queue: Option<Box<QueueCfg>>,
    /// Scripted drops (both directions; only data segments toward a receiver match).
    #[serde(default)]
    pub drop: Option<DropCfg>,
    /// Overrides for the a->b direction.
    #[serde(default)]
    pub ab: Option<Box<DirectionOverride>>,
    /// Overrides for the b->a direction.
    #[serde(default)]
    pub ba: Option<Box<DirectionOverride>>,
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
    pub queue: Option<Box<QueueCfg>>,
    pub drop: Option<DropCfg>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueCfg {
    /// Queue discipline: "droptail" (default), "red" (Floyd & Jacobson 1993, ns-2 defaults) or
    /// "ared" (Adaptive RED, Floyd/Gummadi/Shenker 2001).
    #[serde(default = "default_droptail")]
    #[schemars(schema_with = "queue_kind_schema")]
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
    /// RED, CoDel: mark ECN-capable packets with CE instead of dropping them (ns-2 `setbit_`, default false).
    #[serde(default)]
    pub ecn: Option<bool>,
    /// ARED: target queueing delay (default 5ms, ns-2 `targetdelay_`); CoDel/FQ-CoDel: target sojourn (default 5ms, RFC 8289).
    #[serde(default)]
    pub target_delay: Option<Duration>,
    /// ARED: adaptation interval (default 500ms, ns-2 `interval_`); CoDel/FQ-CoDel: the interval (default 100ms, RFC 8289).
    #[serde(default)]
    pub interval: Option<Duration>,
    /// VQ (Kelly's virtual-queue marker, seed 003 §3.1): virtual capacity as a fraction of the link rate (default 0.9, §4).
    #[serde(default)]
    pub theta: Option<f64>,
    /// VQ: marking gain φ in 1 − exp(−φ·b/s) (default 0.125, §4).
    #[serde(default)]
    pub phi: Option<f64>,
    /// VQ: the predominant packet size s (default 1000B).
    #[serde(default)]
    pub packet_size: Option<Size>,
    /// VQ: cap of the virtual queue in packets of `packet_size` (default 30, §3.1).
    #[serde(default)]
    pub cap_pkts: Option<f64>,
    /// STEP (DCTCP's marker): CE-mark ECT arrivals finding at least this many packets waiting (default 20).
    #[serde(default)]
    pub k_packets: Option<f64>,
    /// FQ-CoDel: number of flow queues (default 1024, RFC 8290 §4.1.1).
    #[serde(default)]
    pub flows: Option<f64>,
    /// FQ-CoDel: DRR++ quantum (default 1514B, RFC 8290 §5.1).
    #[serde(default)]
    pub quantum: Option<Size>,
    /// FQ-CoDel: memory limit over all flow queues (default 32MB, RFC 8290 §5.1).
    #[serde(default)]
    pub memory_limit: Option<Size>,
    /// PIE/DualPI2: the controller's update period (default 15ms, RFC 8033 §4.2 / RFC 9332 A.1).
    #[serde(default)]
    pub tupdate: Option<Duration>,
    /// PIE/DualPI2: integral gain in Hz (PIE 0.125, DualPI2 0.15).
    #[serde(default)]
    pub alpha: Option<f64>,
    /// PIE/DualPI2: proportional gain in Hz (PIE 1.25, DualPI2 3).
    #[serde(default)]
    pub beta: Option<f64>,
    /// PIE: burst allowance (default 150ms, RFC 8033 §4.4).
    #[serde(default)]
    pub max_burst: Option<Duration>,
    /// DualPI2: coupling factor k, p_L = k·p' (default 2, RFC 9332 §2.4).
    #[serde(default)]
    pub coupling: Option<f64>,
    /// DualPI2: the L queue's marking ramp starts at this sojourn (default 800us).
    #[serde(default)]
    pub l_min_th: Option<Duration>,
    /// DualPI2: width of the L ramp (default 400us; 0 = a step at l_min_th).
    #[serde(default)]
    pub l_range: Option<Duration>,
    /// DualPI2: the time-shifted FIFO's shift (default 2 x target_delay = 30ms).
    #[serde(default)]
    pub time_shift: Option<Duration>,
    /// Any discipline: report sojourn percentiles and drops/marks by cause (the `aqm` block of
    /// summary.json) even for one that does not keep them itself (droptail, red, ared, vq).
    #[serde(default)]
    pub stats: Option<bool>,
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

/// A start time: fixed, or drawn at build time from the stream `traffic:start/<section>` index
/// = the entry's index, so it depends on the seed only (not on the TCP variant).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum StartCfg {
    At(Duration),
    Random(StartDist),
}

#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, tag = "dist", rename_all = "lowercase")]
pub enum StartDist {
    /// Uniform between min and max (inclusive), to the nanosecond.
    Uniform { min: Duration, max: Duration },
}

impl<'de> Deserialize<'de> for StartCfg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = StartCfg;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a time like \"2s\" or { dist = \"uniform\", min = \"0s\", max = \"1s\" }")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<StartCfg, E> {
                Duration::deserialize(serde::de::value::StrDeserializer::<E>::new(s)).map(StartCfg::At)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<StartCfg, E> {
                Err(E::custom(format!("expected a duration like \"50ms\", got {v} (a bare number: write the unit, in quotes)")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<StartCfg, E> {
                self.visit_i64(v as i64)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<StartCfg, E> {
                Err(E::custom(format!("expected a duration like \"50ms\", got {v} (a bare number: write the unit, in quotes)")))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<StartCfg, A::Error> {
                StartDist::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(StartCfg::Random)
            }
        }
        d.deserialize_any(V)
    }
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
    /// ns-2 `Application/Traffic/Exponential` (or `Pareto` with `shape`): packets of
    /// `packet_size` at `rate` during on periods (mean `on`), silent during off periods (mean `off`).
    Onoff,
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
    /// First packet: a time ("2s") or `{ dist = "uniform", min = "0s", max = "1s" }` (per seed).
    #[serde(default)]
    pub start: Option<StartCfg>,
    #[serde(default)]
    pub stop: Option<Duration>,
    /// On/off sources: mean on and off period lengths.
    #[serde(default)]
    pub on: Option<Duration>,
    #[serde(default)]
    pub off: Option<Duration>,
    /// On/off sources: Pareto shape (> 1) for on and off periods; exponential when absent.
    #[serde(default)]
    pub shape: Option<f64>,
    /// The packets' ECN codepoint: "not-ect" (default), "ect0", or "ect1" (L4S, RFC 9331).
    #[serde(default)]
    pub ecn: Option<UdpEcn>,
    /// Report one-way delay percentiles and a 1 %-step CDF in summary.json (`udp[].delay`).
    #[serde(default)]
    pub delay_percentiles: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UdpEcn {
    NotEct,
    Ect0,
    Ect1,
}

with_tcp_options! {
    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct TcpCfg {
        head {
            pub name: String,
            /// Sending host.
            pub from: String,
            /// Receiving host.
            pub to: String,
            /// Named variant: tahoe, reno, newreno, sack, sack-rfc6675, vegas, vegas-star, or the
            /// 4.4BSD-Lite family: lite (= lite.0, the stock 4.4BSD-Lite TCP with its bugs), lite.1 ...
            /// lite.6 (the cumulative fixes of seed 001 Table 3).
            #[schemars(schema_with = "variant_schema")]
            pub variant: String,
            /// TCP defaults this flow starts from (before its own keys): "bsd-1994" or "modern"
            /// (default: run.profile, else "bsd-1994").
            #[serde(default)]
            #[schemars(schema_with = "profile_schema")]
            pub profile: Option<String>,
            /// Transfer this many bytes (e.g. "1MB") ...
            #[serde(default)]
            pub bytes: Option<Size>,
            /// ... or send for this long (seed 000 §6.2.5: timed vs byte transfers).
            #[serde(default)]
            pub duration: Option<Duration>,
            /// When the connection opens: a time ("2s") or a random time drawn per seed from the
            /// traffic streams (`{ dist = "uniform", min = "0s", max = "1s" }`).
            #[serde(default)]
            pub start: Option<StartCfg>,
        }
        between {
            /// Receiving application's read rate (default: reads instantly).
            #[serde(default)]
            pub read_rate: Option<Rate>,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TrafficKind {
    /// x-Sim's TRAFFIC: conversations (Telnet, FTP, SMTP, NNTP) drawn from tcplib, starting at
    /// exponential interarrivals, each on its own TCP connection (seed 000 §2.2.3).
    Tcplib,
    /// Ahn et al.'s dynamic senders (seed 002 §5): each of `senders` long-lived connections sleeps
    /// an exponential time (mean `sleep`), sends a tcplib FTP item size, waits for its ACK, repeats.
    Ahn,
    /// ns-2 on/off application over TCP: each of `senders` connections writes `packet_size` at
    /// `rate` while on (mean `on`), nothing while off (mean `off`); Pareto periods with `shape`.
    Onoff,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficCfg {
    pub name: String,
    pub kind: TrafficKind,
    /// Originating host: bulk data (items, messages, keystrokes) flows from here to `to`.
    pub from: String,
    pub to: String,
    /// TCP variant of every connection of this source.
    #[schemars(schema_with = "variant_schema")]
    pub variant: String,
    /// TCP defaults every connection starts from, before the `tcp` table's keys: "bsd-1994" or
    /// "modern" (default: run.profile, else "bsd-1994"), as for `[[tcp]]` flows.
    #[serde(default)]
    #[schemars(schema_with = "profile_schema")]
    pub profile: Option<String>,
    /// tcplib: mean time between conversation starts (exponential) ...
    #[serde(default)]
    pub interarrival: Option<Duration>,
    /// ... or the offered load as a fraction of `bottleneck`'s rate, converted to an
    /// interarrival from tcplib's mean bytes per conversation (README: "Offered load").
    #[serde(default)]
    pub offered_load: Option<f64>,
    /// Link direction ("a->b") whose rate `offered_load` refers to (default: the slowest link
    /// direction on the path from `from` to `to`).
    #[serde(default)]
    pub bottleneck: Option<String>,
    /// tcplib: conversation mix, e.g. { smtp = 0.8, telnet = 0.2 } (weights, normalised). Default:
    /// tcplib's application breakdown, drawn per seed as tcplib's brkdn_dist does.
    #[serde(default)]
    pub mix: Option<BTreeMap<String, f64>>,
    /// Also run a mirrored source from `to` to `from` (two-way traffic, seed 000 §5.2.3).
    #[serde(default)]
    pub two_way: bool,
    /// First conversation no earlier than this (default 0s) ...
    #[serde(default)]
    pub start: Option<Duration>,
    /// ... and no new conversation (or on period, or exchange) from this time on (default: never).
    #[serde(default)]
    pub stop: Option<Duration>,
    /// ahn, onoff: number of long-lived sender connections (default 1).
    #[serde(default)]
    pub senders: Option<u32>,
    /// ahn: mean sleep between exchanges.
    #[serde(default)]
    pub sleep: Option<Duration>,
    /// onoff: bytes per application write, sending rate while on, mean on/off periods, Pareto shape.
    #[serde(default)]
    pub packet_size: Option<Size>,
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub on: Option<Duration>,
    #[serde(default)]
    pub off: Option<Duration>,
    #[serde(default)]
    pub shape: Option<f64>,
    /// TCP options of the connections (the `[[tcp]]` keys mss, send_buffer, recv_buffer,
    /// ack_policy, timer, timer_granularity, min_rto, timestamps, window_scaling,
    /// initial_ssthresh, initial_window, time_wait, params).
    #[serde(default)]
    pub tcp: Option<ConnOptions>,
}

with_tcp_options! {
    /// TCP options shared by `[[tcp]]` flows and `[[traffic]]` connections.
    #[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ConnOptions {
        head {}
        between {}
    }
}

/// How the stations of a `[[lan]]` share it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LanAccess {
    /// CSMA/CD: carrier sense, collisions, binary exponential backoff (IEEE 802.3).
    Ethernet,
    /// Ideal FIFO arbitration, no collisions (x-Sim's Ethernet "without collisions").
    Fifo,
}

/// A shared medium every listed node attaches to (seed 000 §2.2.1: x-Sim's Ethernet and its
/// generalisation, the multiple-access link). Defaults are 10 Mbit/s Ethernet.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LanCfg {
    /// Name of the segment (its backoff draws come from the stream named after it).
    pub name: String,
    /// The hosts and routers attached (at least two). A host may be on one segment only and
    /// then has no point-to-point link.
    pub nodes: Vec<String>,
    /// "ethernet" (default) or "fifo".
    #[serde(default)]
    pub access: Option<LanAccess>,
    /// Default 10Mbps.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Propagation delay between any two stations (default 5us, about 1 km of coax).
    #[serde(default)]
    pub delay: Option<Duration>,
    /// Instead of `delay`: each node's place along the segment, in the order of `nodes`
    /// (`"2000m"`, `"1.5km"` at 0.77 c, or a signal time such as `"10us"`); a pair of
    /// stations is as far apart as their positions differ.
    #[serde(default)]
    pub positions: Option<Vec<Position>>,
    /// Bytes added to every frame: preamble 8 + header 14 + FCS 4 (default 26B).
    #[serde(default)]
    pub overhead: Option<Size>,
    /// Shorter packets are padded to this (default 46B: a 64-byte minimum frame).
    #[serde(default)]
    pub min_packet: Option<Size>,
    /// Largest packet carried (default 1500B: a 1518-byte maximum frame).
    #[serde(default)]
    pub mtu: Option<Size>,
    /// Idle time between frames (default 96 bit times: 9.6us at 10Mbps).
    #[serde(default)]
    pub gap: Option<Duration>,
    /// Probability that a frame that got through is lost anyway, or corrupted.
    #[serde(default)]
    pub loss: Option<f64>,
    #[serde(default)]
    pub corruption: Option<f64>,
    /// Each station's output queue toward each next hop on the segment (default: droptail, 50pkts).
    #[serde(default)]
    pub queue: Option<QueueCfg>,
    /// Record every transmission on the medium (station, start, end, collided) for graphs of its
    /// busy, idle and collision periods: summary.json `lans[i].medium_trace` (default false).
    #[serde(default)]
    pub trace: bool,
}
