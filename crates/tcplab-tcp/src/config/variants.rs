//! The variant registry: one table, [`VARIANTS`], of named compositions (Linux `tcp_cong.c`'s
//! list of algorithms by name, as data). Each row names the congestion control with its
//! parameters ([`CcKind`], whose parameter types live in the algorithms' own files), the loss
//! recovery ([`RecoveryKind`]), the retransmission timer, a one-line description and the settings
//! it changes beyond the defaults of [`super`]. [`EndpointConfig::for_variant`] looks names up
//! here, `tcplab variants` prints [`describe`], and an unknown name is answered with the list.
//!
//! Adding an algorithm: its file (under `cc/` or `recovery/`) with its parameter type, which
//! builds the controller; one line in [`CcKind`] or [`RecoveryKind`] (and its `match` arms there);
//! one row here.
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
//!   recovery seam is a pass-through ([`crate::recovery::VegasRecovery`]); `bsd` coarse timers as the
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
//! * `cubic` — [`crate::cc::CubicCc`], CUBIC as Linux 6.x `tcp_cubic.c` (RFC 9438, HyStart;
//!   HyStart++ of RFC 9406 with `params.hystart_plus_plus = 1`), RFC 6675 SACK recovery, `fine`
//!   timers with Linux's 200 ms minimum RTO, timestamps and window scaling on, no initial
//!   ssthresh. Parameters: see [`crate::cc::CubicParams::NAMES`].
//! * `dctcp` — [`crate::cc::DctcpCc`] (RFC 8257, Linux `tcp_dctcp.c`): α per window of data
//!   with g = 1/16, cwnd × (1 − α/2) once per window with ECE, halving on loss; ECN on with the
//!   receiver's DCTCP echo ([`crate::ecn`]), Linux's delayed ACKs (40 ms, quick-ACK at start), RFC 6675 SACK recovery, `fine`
//!   timers with a 200 ms minimum RTO, timestamps and window scaling. Parameters `g`
//!   (1/16, a power of two), `alpha_init` (1).
//! * `modern` — Linux 6.x's defaults as far as tcplab has them: CUBIC with HyStart,
//!   [`crate::recovery::RackRecovery::with_prr`] (RFC 8985 RACK finds the losses, RFC 6937 PRR
//!   sizes the window, SACK marks kept across an RTO, as Linux), D-SACK, timestamps, window
//!   scaling, IW 10, delayed ACKs with a 40 ms timer and quick-ACK mode for the first 16
//!   segments (Linux `TCP_MAX_QUICKACKS`), Linux's RTO ([`crate::rto::linux`]: every ACK an
//!   RTT sample, RTO = SRTT + max(200 ms, 4·mdev)), no initial ssthresh. TLP probes
//!   with the last segment only. Not: pacing (Linux paces only with fq or BBR), autotuned buffers
//!   (the `modern` *profile* sizes the buffers). `modern-reno` is the same host with Linux's
//!   Reno ([`crate::cc::LinuxRenoCc`], `tcp_congestion_control = reno`).
//! * `prague` — [`crate::cc::PragueCc`] (draft-briscoe-iccrg-prague-congestion-control): as
//!   `dctcp`, with data sent ECT(1) (`ecn_l4s`) and the additive increase scaled by
//!   (RTT/25 ms)² below 25 ms. Parameters `rtt_ref` (0.025 s), `g` (1/16).
//! * `bbr3` — [`crate::cc::Bbr3Cc`], BBR v3 as Google published it (loss and ECN bounds,
//!   PROBE_BW sub-states DOWN/CRUISE/REFILL/UP, PROBE_RTT every 5 s), over RACK-TLP
//!   ([`crate::recovery::RackRecovery`], no PRR: BBR sets cwnd itself), with `bbr`'s host setup.
//!   Parameters `probe_rtt_interval_ms` (5000), `probe_rtt_ms` (200), `loss_thresh` (0.02),
//!   `beta` (0.3).
//! * `lite`, `lite.0` … `lite.6` — 4.4BSD-Lite TCP with its performance bugs and the fixes of
//!   seed 001 Table 3, each also a `params` switch: see [`crate::lite`]. RenoCc with the extra
//!   MSS/8 term, Reno recovery with BSD's `t_dupacks > tcprexmtthresh` deflation test, `bsd`
//!   timers, timestamps, 4.4BSD delayed ACKs (`bsd_delayed`), header prediction.
//! * `reno-fault-no-fast-retransmit`, `reno-fault-double-ca`, `reno-fault-no-rto-backoff` —
//!   `reno` with one planted fault each, for testing `tcplab diagnose`: see [`crate::faults`].


use super::{AckPolicy, EndpointConfig, TimerModel, VariantConfig};
use crate::cc::{Bbr3Params, BbrParams, CcKind, CongestionControl, CubicParams, DctcpParams, PragueParams, ScalableParams, VegasParams};
use crate::lite::{self, LITE_PARAMS};
use crate::recovery::{self, LossRecovery, RecoveryKind};
use crate::{MS, SEC};

/// One row of the registry.
#[derive(Clone, Copy, Debug)]
pub struct VariantEntry {
    /// The name a scenario gives (`[[tcp]] variant = ...`).
    pub name: &'static str,
    /// One line for `tcplab variants`.
    pub description: &'static str,
    pub cc: CcKind,
    pub recovery: RecoveryKind,
    pub timer: TimerModel,
    /// Settings beyond the defaults (ECN, timestamps, the Lite switches, ...).
    pub setup: fn(&mut EndpointConfig),
}

/// RFC 6298 with 1 ms granularity, min RTO 1 s and initial RTO 1 s (§2.1, §2.4; ns-3's defaults).
const FINE_1S: TimerModel = TimerModel::Fine { granularity: MS, min_rto: SEC, initial_rto: SEC };

fn defaults_only(_: &mut EndpointConfig) {}

/// Linux's timer (`crate::rto::linux`): every ACK an RTT sample, RTO = SRTT + max(200 ms
/// (`TCP_RTO_MIN`), 4·mdev of the round), 1 s initial RTO, 1 ms timestamp clock.
const FINE_LINUX: TimerModel = TimerModel::Linux { granularity: MS, min_rto: 200 * MS, initial_rto: SEC };

/// A Linux host's TCP options as the algorithm needs them: timestamps and window scaling on
/// (sysctls `tcp_timestamps`, `tcp_window_scaling` = 1), no initial ssthresh (slow start until
/// the first loss or HyStart exit). Buffers, IW and ACK policy stay the profile's.
fn linux_options(c: &mut EndpointConfig) {
    c.timestamps = true;
    c.window_scaling = true;
    c.initial_ssthresh = 1 << 30;
}

/// Seed 003 §3.3 / fn. 14 / fn. 18: ECN on with per-segment echo, every segment ACKed,
/// timestamps on (the paper measures the RTT with them).
fn scalable_ecn(c: &mut EndpointConfig) {
    c.ecn = true;
    c.ecn_per_segment = true;
    c.timestamps = true;
    c.ack_policy = AckPolicy::EveryPacket;
}

/// A Linux receiver's ACKs: every second full segment, a 40 ms delayed-ACK timer
/// (`TCP_DELACK_MIN`; Linux's adaptive `ato` stays there on short paths) and quick-ACK mode for
/// the first segments (`TCP_MAX_QUICKACKS` = 16). tcplab's default 200 ms timer equals Linux's
/// 200 ms minimum RTO, so a lone segment in flight (IW1, an odd tail, a window cut to one
/// segment) waited for the sender's RTO: the `modern/incast` anomaly (docs/modern-tcp.md).
fn linux_acks(c: &mut EndpointConfig) {
    c.ack_policy = AckPolicy::BsdDelayed;
    c.delack_timeout = 40 * MS;
    c.quickack = 16;
}

/// Linux's DCTCP host: ECN negotiated (`tcp_ecn` = 1 with `tcp_dctcp`), the receiver's DCTCP
/// echo, Linux's delayed and quick ACKs, on top of [`linux_options`].
fn dctcp_host(c: &mut EndpointConfig) {
    linux_options(c);
    linux_acks(c);
    c.ecn = true;
    c.ecn_dctcp_echo = true;
}

/// Linux 6.x's defaults as far as tcplab has them: [`linux_options`], IW 10 (RFC 6928),
/// [`linux_acks`], D-SACK (`tcp_dsack` = 1).
fn linux_defaults(c: &mut EndpointConfig) {
    linux_options(c);
    linux_acks(c);
    c.initial_window_segments = 10;
    c.dsack = true;
}

/// TCP Prague's host: DCTCP's, with data sent as ECT(1) (L4S, RFC 9331).
fn prague_host(c: &mut EndpointConfig) {
    dctcp_host(c);
    c.ecn_l4s = true;
}

/// BBR as Linux runs it: IW10, window scaling, SACK (RACK-TLP recovery), Linux's ACKs, no slow start
/// after idle (Linux skips it for CCs with `cong_control`), Linux's default maximum socket
/// buffers (`tcp_wmem[2]` = 4 MiB, `tcp_rmem[2]` = 6 MiB) so the window never binds first.
fn bbr_linux(c: &mut EndpointConfig) {
    linux_acks(c);
    c.initial_window_segments = 10;
    c.window_scaling = true;
    c.idle_restart = false;
    c.send_buffer = 4 << 20;
    c.recv_buffer = 6 << 20;
}

/// Lite level N of seed 001 Table 3 ([`crate::lite::level`]).
fn lite_level<const N: u32>(c: &mut EndpointConfig) {
    let (fixes, timestamps, extra_eighth, ack_every_packet) = lite::level(N);
    c.lite = Some(fixes);
    c.timestamps = timestamps;
    c.variant.cc = CcKind::Reno { extra_eighth, halve_flight: false };
    c.ack_policy = if ack_every_packet { AckPolicy::EveryPacket } else { AckPolicy::BsdDelayed };
}

/// The planted fault its name selects ([`crate::faults`]).
fn planted_fault(c: &mut EndpointConfig) {
    c.faults = crate::faults::parse(&c.variant.name).unwrap_or_default();
}

const fn fault_row(name: &'static str, description: &'static str) -> VariantEntry {
    VariantEntry { name, description, cc: CcKind::BSD_RENO, recovery: RecoveryKind::Reno, timer: TimerModel::Bsd, setup: planted_fault }
}

const fn lite_row(name: &'static str, description: &'static str, setup: fn(&mut EndpointConfig)) -> VariantEntry {
    VariantEntry { name, description, cc: CcKind::BSD_RENO, recovery: RecoveryKind::Reno, timer: TimerModel::Bsd, setup }
}

/// The registry, in the order `tcplab variants` and the scenario schema list it.
pub const VARIANTS: &[VariantEntry] = &[
    VariantEntry { name: "tahoe", description: "4.3BSD-Tahoe: slow start, linear increase, fast retransmit then slow start", cc: CcKind::BSD_RENO, recovery: RecoveryKind::Tahoe, timer: TimerModel::Bsd, setup: defaults_only },
    VariantEntry { name: "reno", description: "4.3BSD-Reno: Tahoe + fast recovery (window inflation, deflation to ssthresh); BSD timers", cc: CcKind::BSD_RENO, recovery: RecoveryKind::Reno, timer: TimerModel::Bsd, setup: defaults_only },
    VariantEntry { name: "newreno", description: "RFC 6582: Reno with partial ACKs in recovery; fine RFC 6298 timer", cc: CcKind::RFC5681_RENO, recovery: RecoveryKind::NewReno, timer: FINE_1S, setup: defaults_only },
    // ns-2 Sack1 (seed 004 §2.3): Reno's window growth and halving, `bsd` timers like `reno` so
    // the two differ only in loss recovery; SACK offered in the handshake.
    VariantEntry { name: "sack", description: "ns-2 Sack1: Reno increase, SACK scoreboard and pipe (Fall & Floyd 1996)", cc: CcKind::BSD_RENO, recovery: RecoveryKind::Sack1, timer: TimerModel::Bsd, setup: defaults_only },
    VariantEntry { name: "sack-rfc6675", description: "RFC 6675 SACK loss recovery (IsLost, SetPipe, NextSeg), D-SACK receiver; fine timer", cc: CcKind::RFC5681_RENO, recovery: RecoveryKind::Rfc6675, timer: FINE_1S, setup: defaults_only },
    VariantEntry { name: "vegas", description: "Brakmo's Vegas: Expected/Actual/Diff per RTT, alpha=1, beta=3, fine per-segment timeouts", cc: CcKind::Vegas(VegasParams::DEFAULT), recovery: RecoveryKind::CcOwned, timer: TimerModel::Bsd, setup: defaults_only },
    VariantEntry { name: "vegas-star", description: "Vegas with Vegas* slow start (threshold from ACK spacing), seed 000 §4.4", cc: CcKind::Vegas(VegasParams::STAR), recovery: RecoveryKind::CcOwned, timer: TimerModel::Bsd, setup: defaults_only },
    lite_row("lite", "= lite.0", lite_level::<0>),
    lite_row("lite.0", "4.4BSD-Lite as shipped, bugs included (header prediction, RTO, MSS/8 term, ...)", lite_level::<0>),
    lite_row("lite.1", "Lite + header-prediction fix (seed 001 Table 3)", lite_level::<1>),
    lite_row("lite.2", "Lite.1 + RTO fix", lite_level::<2>),
    lite_row("lite.3", "Lite.2 + no timestamps", lite_level::<3>),
    lite_row("lite.4", "Lite.3 + no MSS/8 term in linear increase", lite_level::<4>),
    lite_row("lite.5", "Lite.4 + ACK every packet", lite_level::<5>),
    lite_row("lite.6", "Lite.4 + big-ACK limit", lite_level::<6>),
    // Seed 003 §3.3: loss falls back to traditional TCP — NewReno with RFC 6298 timers.
    VariantEntry { name: "scalable-ecn", description: "Kelly's scalable TCP (seed 003): real cwnd, +a per unmarked ACK, ×(1−b) per mark, paced sends", cc: CcKind::Scalable(ScalableParams::DEFAULT), recovery: RecoveryKind::NewReno, timer: FINE_1S, setup: scalable_ecn },
    // Linux 6.x: CUBIC with HyStart, SACK recovery (RFC 6675), 200 ms minimum RTO.
    VariantEntry { name: "cubic", description: "CUBIC (RFC 9438) as Linux tcp_cubic.c: HyStart, fast convergence, TCP-friendly region; SACK recovery", cc: CcKind::Cubic(CubicParams::DEFAULT), recovery: RecoveryKind::Rfc6675, timer: FINE_LINUX, setup: linux_options },
    // Linux tcp_dctcp.c over RFC 6675 SACK recovery; the receiver runs RFC 8257 §3.2's echo.
    VariantEntry { name: "dctcp", description: "DCTCP (RFC 8257): alpha per window (g = 1/16), cwnd × (1 − alpha/2) per window with ECE; DCTCP receiver echo", cc: CcKind::Dctcp(DctcpParams::DEFAULT), recovery: RecoveryKind::Rfc6675, timer: FINE_LINUX, setup: dctcp_host },
    // Linux 6.x defaults: CUBIC + HyStart, SACK with PRR, timestamps, window scaling, IW10.
    VariantEntry { name: "modern", description: "Linux 6.x defaults: CUBIC with HyStart, SACK + RACK-TLP (RFC 8985) + PRR (RFC 6937), timestamps, window scaling, IW10, delayed ACKs", cc: CcKind::Cubic(CubicParams::DEFAULT), recovery: RecoveryKind::RackPrr, timer: FINE_LINUX, setup: linux_defaults },
    // Linux 6.x defaults with net.ipv4.tcp_congestion_control = reno (validate-linux's reno rows).
    VariantEntry { name: "modern-reno", description: "Linux 6.x defaults with Reno (tcp_cong.c reno: packet counting, cwnd/2): SACK + RACK-TLP + PRR, timestamps, window scaling, IW10, Linux delayed/quick ACKs", cc: CcKind::LinuxReno, recovery: RecoveryKind::RackPrr, timer: FINE_LINUX, setup: linux_defaults },
    VariantEntry { name: "prague", description: "TCP Prague (L4S draft): ECT(1), DCTCP alpha, RTT-independent additive increase (R_ref 25 ms); no classic fallback", cc: CcKind::Prague(PragueParams::DEFAULT), recovery: RecoveryKind::Rfc6675, timer: FINE_LINUX, setup: prague_host },
    VariantEntry { name: "bbr", description: "BBR v1 as Linux tcp_bbr.c: bw/min-RTT model, STARTUP/DRAIN/PROBE_BW/PROBE_RTT, paced; RACK-TLP recovery", cc: CcKind::Bbr(BbrParams::DEFAULT), recovery: RecoveryKind::Rack, timer: FINE_LINUX, setup: bbr_linux },
    // Google's BBR v3 runs over Linux's RACK-TLP; PRR is off (BBR owns cwnd, Linux skips PRR for CCs with cong_control).
    VariantEntry { name: "bbr3", description: "BBR v3 (Google's v3): loss/ECN bounds inflight_hi/inflight_lo, PROBE_BW DOWN/CRUISE/REFILL/UP, PROBE_RTT every 5 s; RACK-TLP recovery", cc: CcKind::Bbr3(Bbr3Params::DEFAULT), recovery: RecoveryKind::Rack, timer: FINE_LINUX, setup: bbr_linux },
    fault_row("reno-fault-no-fast-retransmit", "planted fault (tests of tcplab diagnose): reno ignoring the third dup ACK"),
    fault_row("reno-fault-double-ca", "planted fault (tests of tcplab diagnose): reno with twice the congestion-avoidance increase"),
    fault_row("reno-fault-no-rto-backoff", "planted fault (tests of tcplab diagnose): reno never backing off its RTO"),
];

const N_VARIANTS: usize = VARIANTS.len();
const NAMES: [&str; N_VARIANTS] = {
    let mut names = [""; N_VARIANTS];
    let mut i = 0;
    while i < N_VARIANTS {
        names[i] = VARIANTS[i].name;
        i += 1;
    }
    names
};

/// Names accepted by [`EndpointConfig::for_variant`] (the `name` column of [`VARIANTS`]).
pub const KNOWN_VARIANTS: &[&str] = &NAMES;

impl VariantEntry {
    /// The registry row of a name.
    pub fn lookup(name: &str) -> Result<&'static VariantEntry, String> {
        VARIANTS
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| format!("unknown TCP variant {name:?}; known variants: {}", KNOWN_VARIANTS.join(", ")))
    }

    /// The `params` keys a flow of this variant accepts.
    pub fn param_names(&self) -> &'static [&'static str] {
        if self.name.starts_with("lite") {
            LITE_PARAMS
        } else {
            self.cc.param_names()
        }
    }

    /// The parts it composes, e.g. `cc reno, recovery newreno, timer fine`.
    pub fn parts(&self) -> String {
        let timer = match self.timer {
            TimerModel::Bsd => "bsd",
            TimerModel::Fine { .. } => "fine",
            TimerModel::Linux { .. } => "linux",
            TimerModel::Ns2 { .. } => "ns2",
        };
        format!("cc {}, recovery {}, timer {timer}", self.cc.name(), self.recovery.name())
    }
}

/// One line per variant: name, description, parts, parameters (what `tcplab variants` prints).
pub fn describe() -> Vec<[String; 4]> {
    VARIANTS
        .iter()
        .map(|e| [e.name.to_string(), e.description.to_string(), e.parts(), e.param_names().join(", ")])
        .collect()
}

impl EndpointConfig {
    /// The registry row `name` on top of the defaults of [`super`].
    pub fn for_variant(name: &str) -> Result<EndpointConfig, String> {
        let e = VariantEntry::lookup(name)?;
        let mut cfg = EndpointConfig {
            variant: VariantConfig { name: name.to_string(), cc: e.cc, recovery: e.recovery },
            mss: 1460,
            send_buffer: 50 * 1024,
            send_buffer_linux: false,
            recv_buffer: 50 * 1024,
            timestamps: false,
            window_scaling: false,
            time_wait: SEC,
            ack_policy: AckPolicy::EveryPacket,
            timer_model: e.timer,
            initial_window_segments: 1,
            initial_ssthresh: 65535,
            dupack_threshold: 3,
            delack_timeout: 200 * MS,
            delack_bytes: None,
            quickack: 0,
            nagle: true,
            close_on_peer_fin: true,
            idle_restart: true,
            trace: false,
            ecn: false,
            sack: e.recovery.uses_sack(),
            // D-SACK (RFC 2883) from the modern variant's receiver; ns-2's Sack1 sink sends none.
            dsack: e.recovery == RecoveryKind::Rfc6675,
            lite: None,
            faults: Default::default(),
            ecn_per_segment: false,
            ecn_dctcp_echo: false,
            ecn_l4s: false,
            pacing_seed: 0,
        };
        (e.setup)(&mut cfg);
        Ok(cfg)
    }

    /// The congestion control and loss recovery this configuration composes. A CC that owns loss
    /// handling (Vegas) gets the pass-through recovery whatever `variant.recovery` says; a Lite
    /// variant's Reno takes BSD's deflation test from its switches.
    pub fn build_parts(&self) -> (Box<dyn CongestionControl>, Box<dyn LossRecovery>) {
        self.build_parts_seeded(self.pacing_seed)
    }

    /// [`EndpointConfig::build_parts`] with the CC seeded by `pacing_seed` (a shared config).
    pub fn build_parts_seeded(&self, pacing_seed: u64) -> (Box<dyn CongestionControl>, Box<dyn LossRecovery>) {
        let cc = self.variant.cc.build(pacing_seed);
        let rec = if self.variant.cc.owns_loss_recovery() {
            RecoveryKind::CcOwned.build()
        } else if let Some(fixes) = self.lite.as_ref() {
            recovery::lite(fixes)
        } else {
            self.variant.recovery.build()
        };
        (cc, rec)
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

    /// Set a variant parameter (`tcp[i].params.KEY` in a scenario): the Lite family takes its
    /// switches ([`LITE_PARAMS`], 0 or 1); otherwise the congestion control's own parameter type
    /// checks and stores it (Vegas `alpha`, `beta`, `gamma`, `avg_rtt`; scalable `a`, `base_b`,
    /// `ssgrace`, `b_cap`); other variants take none.
    pub fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        if self.lite.is_some() {
            return self.set_lite_param(key, value);
        }
        let VariantConfig { name, cc, .. } = &mut self.variant;
        cc.set_param(name, key, value)
    }

    /// Cross-parameter checks, after all `set_param` calls (Vegas: α ≤ β).
    pub fn check_params(&self) -> Result<(), String> {
        self.variant.cc.check_params()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_the_list_of_names_and_every_row_builds() {
        assert_eq!(
            KNOWN_VARIANTS,
            ["tahoe", "reno", "newreno", "sack", "sack-rfc6675", "vegas", "vegas-star", "lite", "lite.0", "lite.1", "lite.2", "lite.3", "lite.4", "lite.5", "lite.6", "scalable-ecn", "cubic", "dctcp", "modern", "modern-reno", "prague", "bbr", "bbr3",
             "reno-fault-no-fast-retransmit", "reno-fault-double-ca", "reno-fault-no-rto-backoff"]
        );
        for e in VARIANTS {
            let c = EndpointConfig::for_variant(e.name).unwrap();
            let (cc, rec) = c.build_parts();
            assert_eq!(cc.name(), if e.name == "vegas-star" { "vegas-star" } else { e.cc.name().trim_end_matches("-star") }, "{}", e.name);
            assert_eq!(rec.name() == "vegas", e.cc.owns_loss_recovery(), "{}", e.name);
        }
        let err = EndpointConfig::for_variant("westwood").unwrap_err();
        assert!(err.contains("\"westwood\"") && err.contains("tahoe, reno, newreno") && err.contains("scalable-ecn"), "{err}");
    }

    #[test]
    fn describe_lists_parts_and_params() {
        let rows = describe();
        assert_eq!(rows.len(), VARIANTS.len());
        let vegas = rows.iter().find(|r| r[0] == "vegas").unwrap();
        assert_eq!(vegas[2], "cc vegas, recovery cc-owned, timer bsd");
        assert_eq!(vegas[3], "alpha, beta, gamma, avg_rtt");
        let newreno = rows.iter().find(|r| r[0] == "newreno").unwrap();
        assert_eq!((newreno[2].as_str(), newreno[3].as_str()), ("cc reno, recovery newreno, timer fine", ""));
        assert!(rows.iter().find(|r| r[0] == "lite.3").unwrap()[3].starts_with("fix_header_prediction, fix_rto"));
        assert!(rows.iter().all(|r| !r[1].is_empty()));
    }
}
