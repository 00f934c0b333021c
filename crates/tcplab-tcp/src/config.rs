//! Endpoint configuration and the variant registry.
//!
//! A *variant* is a named composition of the four seams — congestion control ([`CcKind`]), loss
//! recovery ([`RecoveryKind`]), retransmission timer ([`TimerModel`]) and receiver ACK policy
//! ([`AckPolicy`]) — with documented parameters. [`EndpointConfig::for_variant`] is the registry.
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
//! Per variant:
//! * `tahoe`   — RenoCc, TahoeRecovery (fast retransmit then slow start), `bsd` timers;
//! * `reno`    — RenoCc, RenoRecovery (4.3BSD-Reno fast recovery), `bsd` timers;
//! * `newreno` — RenoCc with ssthresh = max(FlightSize/2, 2·MSS) (RFC 5681 eq. 4),
//!   NewRenoRecovery (RFC 6582), `fine` timers: 1 ms granularity, min RTO 1 s and initial RTO
//!   1 s (RFC 6298 §2.1, §2.4; also ns-3's defaults). A 200 ms minimum (Linux) is a config
//!   change, but combined with a 200 ms delayed-ACK receiver it causes spurious timeouts.
//! * `sack` — RenoCc, [`crate::recovery::Sack1Recovery`] (ns-2 `Sack1`, Fall & Floyd 1996,
//!   seed 004 §2.3), `bsd` timers; SACK-permitted offered, receiver sends RFC 2018 blocks;
//! * `sack-rfc6675` — RenoCc with RFC 5681 halving, [`crate::recovery::Rfc6675Recovery`],
//!   `fine` timers as `newreno`; its receiver also sends D-SACK blocks (RFC 2883);
//! * `vegas` — [`crate::cc::VegasCc`] (seed 000 ch. 4, seed 002 §2/§6): its own loss handling
//!   (fine-grained retransmission on the first duplicate ACK, 3/4 decrease) inside the CC, so the
//!   recovery seam is a pass-through ([`crate::cc::VegasRecovery`]); `bsd` coarse timers as the
//!   fallback (seed 000 §4.5: "Vegas contains Reno's coarse-grained timeout code"); receiver ACKs
//!   every segment (the x-kernel receiver, as `reno`). Parameters `alpha`, `beta`, `gamma`
//!   (buffers; defaults 1, 3, 1 — seed 000 §4.3/§4.4) via [`EndpointConfig::set_param`].
//! * `vegas-star` — Vegas with the experimental slow start of seed 000 §4.4 / Fig 4.7 (Vegas*).
//! * `scalable-ecn` — [`crate::cc::ScalableCc`], Kelly's scalable TCP (seed 003 §3.3): real-valued
//!   cwnd, +a per unmarked ACK, ×(1−b) per marked ACK, b = base_b/RTT̄ with b-capping, paced
//!   sending with a clamped exponential factor, soft-start; ECN on with the receiver echoing each
//!   segment's mark on its own ACK (`ecn_per_segment`, fn. 14: no delayed ACKs); timestamps on;
//!   on loss NewReno recovery and `fine` timers as `newreno` ("falls back to traditional TCP").
//!   Parameters `a` (0.125), `base_b` (0.005), `ssgrace` (3), `b_cap` (0.1) — seed 003 §3.2,
//!   §3.3, §4.2.
//! * `lite`, `lite.0` … `lite.6` — 4.4BSD-Lite TCP with its performance bugs and the fixes of
//!   seed 001 Table 3, each also a `params` switch: see [`crate::lite`]. RenoCc with the extra
//!   MSS/8 term, Reno recovery with BSD's `t_dupacks > tcprexmtthresh` deflation test, `bsd`
//!   timers, timestamps, 4.4BSD delayed ACKs (`bsd_delayed`), header prediction.
//! * `reno-fault-no-fast-retransmit`, `reno-fault-double-ca`, `reno-fault-no-rto-backoff` —
//!   `reno` with one planted fault each, for testing `tcplab diagnose`: see [`crate::faults`].

use crate::lite::{self, LiteFixes, LITE_PARAMS};
use crate::{Nanos, MS, SEC};

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

/// Vegas thresholds, in buffers (segments) at the bottleneck (seed 000 §4.3, §4.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasParams {
    /// Below α extra buffers: +1 MSS over the next RTT (default 1).
    pub alpha: f64,
    /// Above β extra buffers: −1 MSS over the next RTT (default 3).
    pub beta: f64,
    /// Slow start ends when Diff exceeds γ buffers (default 1: "one router buffer").
    pub gamma: f64,
    /// Vegas* experimental slow start (seed 000 §4.4, Fig 4.7).
    pub star: bool,
    /// Actual's denominator (default true): false = the distinguished segment's RTT (seed 000 §4.3); true = the
    /// mean fine RTT over its round trip (seed 002 §2.1, "average, measured RTT"). Param
    /// `avg_rtt` (0/1).
    pub avg_rtt: bool,
}

// Parameters are validated finite by `EndpointConfig::set_param`, so equality is reflexive.
impl Eq for VegasParams {}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams { alpha: 1.0, beta: 3.0, gamma: 1.0, star: false, avg_rtt: true }
    }
}

/// Kelly's scalable TCP parameters (seed 003; defaults from §4.2 and §3.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalableParams {
    /// Increase per unmarked ACK, in segments (§4.2: 0.125).
    pub a: f64,
    /// b = base_b / RTT̄ (RTT̄ in seconds; §4.2: 0.005).
    pub base_b: f64,
    /// Soft-start grace: marks before steady-state control (§3.3: 3).
    pub ssgrace: u32,
    /// b-capping threshold (§3.2: "b_r is capped to be less than 0.1").
    pub b_cap: f64,
}

impl Eq for ScalableParams {}

impl Default for ScalableParams {
    fn default() -> Self {
        ScalableParams { a: 0.125, base_b: 0.005, ssgrace: 3, b_cap: 0.1 }
    }
}

/// Parameter names of `scalable-ecn`.
pub const SCALABLE_PARAMS: &[&str] = &["a", "base_b", "ssgrace", "b_cap"];

/// Congestion-control algorithm (the cwnd/ssthresh policy seam).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    /// Slow start + linear increase; ssthresh halving on loss.
    Reno {
        /// 4.4BSD-Lite's extra MSS/8 per ACK in congestion avoidance (seed 001 §3.3). Off for the
        /// seeds' Reno (seed 001 footnote 7); on in `lite` until `fix_extra_increase`.
        extra_eighth: bool,
        /// Compute ssthresh from FlightSize (RFC 5681) instead of min(cwnd, snd_wnd) (4.4BSD).
        halve_flight: bool,
    },
    /// TCP Vegas (and Vegas* when `star`), see [`crate::cc::VegasCc`].
    Vegas(VegasParams),
    /// Kelly's scalable TCP, see [`crate::cc::ScalableCc`].
    Scalable(ScalableParams),
}

/// Loss-recovery algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryKind {
    /// Fast retransmit then slow start (go-back-N from snd_una with cwnd = 1 MSS).
    Tahoe,
    /// 4.3BSD-Reno fast retransmit + fast recovery with window inflation/deflation.
    Reno,
    /// RFC 6582 NewReno (partial ACKs, `recover`).
    NewReno,
    /// ns-2 Sack1: Fall & Floyd 1996 pipe and scoreboard.
    Sack1,
    /// RFC 6675 conservative SACK-based recovery.
    Rfc6675,
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
    /// Seed of the congestion control's own randomness (the scalable pacing factor); the host
    /// draws it from a per-connection RNG stream.
    pub pacing_seed: u64,
}

/// Names accepted by [`EndpointConfig::for_variant`].
pub const KNOWN_VARIANTS: &[&str] = &[
    "tahoe", "reno", "newreno", "sack", "sack-rfc6675", "vegas", "vegas-star", "lite", "lite.0", "lite.1", "lite.2", "lite.3", "lite.4",
    "lite.5", "lite.6", "scalable-ecn", "reno-fault-no-fast-retransmit", "reno-fault-double-ca", "reno-fault-no-rto-backoff",
];

impl EndpointConfig {
    /// The variant registry. See the module documentation for the defaults.
    pub fn for_variant(name: &str) -> Result<EndpointConfig, String> {
        let bsd_cc = CcKind::Reno { extra_eighth: false, halve_flight: false };
        let lite_level = lite::parse_level(name);
        let faults = crate::faults::parse(name);
        let (cc, recovery, timer_model) = match name {
            _ if lite_level.is_some() || faults.is_some() => (bsd_cc, RecoveryKind::Reno, TimerModel::Bsd),
            "tahoe" => (bsd_cc, RecoveryKind::Tahoe, TimerModel::Bsd),
            "reno" => (bsd_cc, RecoveryKind::Reno, TimerModel::Bsd),
            "newreno" => (
                CcKind::Reno { extra_eighth: false, halve_flight: true },
                RecoveryKind::NewReno,
                TimerModel::Fine { granularity: MS, min_rto: SEC, initial_rto: SEC },
            ),
            // `recovery` is not consulted for Vegas: the CC owns loss handling and the endpoint
            // installs `cc::VegasRecovery` (see `cc::recovery_for`). Reno is named for display.
            // ns-2 Sack1 (seed 004 §2.3): Reno's window growth and halving, `bsd` timers like
            // `reno` so the two differ only in loss recovery; SACK offered in the handshake.
            "sack" => (bsd_cc, RecoveryKind::Sack1, TimerModel::Bsd),
            "sack-rfc6675" => (
                CcKind::Reno { extra_eighth: false, halve_flight: true },
                RecoveryKind::Rfc6675,
                TimerModel::Fine { granularity: MS, min_rto: SEC, initial_rto: SEC },
            ),
            "vegas" => (CcKind::Vegas(VegasParams::default()), RecoveryKind::Reno, TimerModel::Bsd),
            "vegas-star" => (CcKind::Vegas(VegasParams { star: true, ..Default::default() }), RecoveryKind::Reno, TimerModel::Bsd),
            // Seed 003 §3.3: loss falls back to traditional TCP — NewReno with RFC 6298 timers.
            "scalable-ecn" => (
                CcKind::Scalable(ScalableParams::default()),
                RecoveryKind::NewReno,
                TimerModel::Fine { granularity: MS, min_rto: SEC, initial_rto: SEC },
            ),
            _ => {
                return Err(format!(
                    "unknown TCP variant {name:?}; known variants: {}",
                    KNOWN_VARIANTS.join(", ")
                ))
            }
        };
        let sack = matches!(recovery, RecoveryKind::Sack1 | RecoveryKind::Rfc6675);
        // D-SACK (RFC 2883) from the modern variant's receiver; ns-2's Sack1 sink sends none.
        let dsack = recovery == RecoveryKind::Rfc6675;
        let mut cfg = EndpointConfig {
            variant: VariantConfig { name: name.to_string(), cc, recovery },
            mss: 1460,
            send_buffer: 50 * 1024,
            recv_buffer: 50 * 1024,
            timestamps: false,
            window_scaling: false,
            time_wait: SEC,
            ack_policy: AckPolicy::EveryPacket,
            timer_model,
            initial_window_segments: 1,
            initial_ssthresh: 65535,
            dupack_threshold: 3,
            delack_timeout: 200 * MS,
            delack_bytes: None,
            nagle: true,
            close_on_peer_fin: true,
            idle_restart: true,
            trace: false,
            ecn: false,
            sack,
            dsack,
            lite: None,
            faults: faults.unwrap_or_default(),
            ecn_per_segment: false,
            pacing_seed: 0,
        };
        if matches!(cc, CcKind::Scalable(_)) {
            // Seed 003 §3.3 / fn. 14 / fn. 18: ECN on with per-segment echo, every segment ACKed,
            // timestamps on (the paper measures the RTT with them).
            cfg.ecn = true;
            cfg.ecn_per_segment = true;
            cfg.timestamps = true;
            cfg.ack_policy = AckPolicy::EveryPacket;
        }
        if let Some(n) = lite_level {
            let (fixes, timestamps, extra_eighth, ack_every_packet) = lite::level(n);
            cfg.lite = Some(fixes);
            cfg.timestamps = timestamps;
            cfg.variant.cc = CcKind::Reno { extra_eighth, halve_flight: false };
            cfg.ack_policy = if ack_every_packet { AckPolicy::EveryPacket } else { AckPolicy::BsdDelayed };
        }
        Ok(cfg)
    }

    /// A Lite switch (`params` key, 0 or 1; see [`crate::lite`]).
    fn set_lite_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        if value != 0.0 && value != 1.0 {
            return Err(format!("{key} is a switch: 0 or 1, got {value}"));
        }
        let on = value == 1.0;
        let Some(fixes) = self.lite.as_mut() else {
            return Err(format!("variant {:?} is not a lite variant", self.variant.name));
        };
        match key {
            "fix_header_prediction" => fixes.header_prediction = on,
            "fix_rto" => fixes.rto = on,
            "fix_big_ack" => fixes.big_ack = on,
            "fix_dupack_ge" => fixes.dupack_ge = on,
            "timestamps" => self.timestamps = on,
            "fix_extra_increase" => self.variant.cc = CcKind::Reno { extra_eighth: !on, halve_flight: false },
            "ack_every_packet" => self.ack_policy = if on { AckPolicy::EveryPacket } else { AckPolicy::BsdDelayed },
            _ => {
                return Err(format!(
                    "variant {:?} has no parameter {key:?}; known: {}",
                    self.variant.name,
                    LITE_PARAMS.join(", ")
                ))
            }
        }
        Ok(())
    }

    /// Set a variant parameter (`tcp[i].params.KEY` in a scenario). Vegas takes `alpha`, `beta`,
    /// `gamma` in buffers (finite, ≥ 0); the Lite family takes its switches ([`LITE_PARAMS`],
    /// 0 or 1); other variants take none.
    pub fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        if self.lite.is_some() {
            return self.set_lite_param(key, value);
        }
        match &mut self.variant.cc {
            CcKind::Scalable(p) => {
                let name = &self.variant.name;
                match key {
                    "a" | "base_b" if !(value.is_finite() && value > 0.0) => Err(format!("{key} must be a finite number > 0, got {value}")),
                    "a" => {
                        p.a = value;
                        Ok(())
                    }
                    "base_b" => {
                        p.base_b = value;
                        Ok(())
                    }
                    "b_cap" if !(value > 0.0 && value < 1.0) => Err(format!("b_cap must be in (0, 1), got {value}")),
                    "b_cap" => {
                        p.b_cap = value;
                        Ok(())
                    }
                    "ssgrace" if !(value >= 0.0 && value <= 30.0 && value.fract() == 0.0) => Err(format!("ssgrace is a whole number of marks from 0 to 30, got {value}")),
                    "ssgrace" => {
                        p.ssgrace = value as u32;
                        Ok(())
                    }
                    _ => Err(format!("variant {name:?} has no parameter {key:?}; known: {}", SCALABLE_PARAMS.join(", "))),
                }
            }
            CcKind::Vegas(p) => {
                if !value.is_finite() || value < 0.0 {
                    return Err(format!("{key} must be a finite number of buffers >= 0, got {value}"));
                }
                match key {
                    "alpha" => p.alpha = value,
                    "beta" => p.beta = value,
                    "gamma" => p.gamma = value,
                    "avg_rtt" if value == 0.0 || value == 1.0 => p.avg_rtt = value == 1.0,
                    "avg_rtt" => return Err(format!("avg_rtt is 0 or 1, got {value}")),
                    _ => {
                        return Err(format!(
                            "variant {:?} has no parameter {key:?}; known: alpha, beta, gamma, avg_rtt",
                            self.variant.name
                        ))
                    }
                }
                Ok(())
            }
            _ => Err(format!("variant {:?} takes no parameter {key:?}", self.variant.name)),
        }
    }

    /// Cross-parameter checks, after all `set_param` calls (Vegas: α ≤ β).
    pub fn check_params(&self) -> Result<(), String> {
        if let CcKind::Vegas(p) = &self.variant.cc {
            if p.alpha > p.beta {
                return Err(format!("alpha ({}) must not exceed beta ({})", p.alpha, p.beta));
            }
        }
        Ok(())
    }
}
