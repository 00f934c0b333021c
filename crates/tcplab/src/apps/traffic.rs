//! Traffic sources that open TCP connections during the run: x-Sim's TRAFFIC protocol over
//! tcplib (seed 000 §2.2.3), Ahn et al.'s dynamic senders (seed 002 §5) and on/off senders.
//!
//! Reproducibility (000 §6.2.3): a source draws from three kinds of stream of its own, named after
//! the source, so that "the time a conversation starts, the type of the conversation and the
//! parameters for that type" are the same whatever the TCP variant, queue or topology:
//! * `traffic:<name>` index 0 — the per-seed application mix, then the conversation start times;
//! * `traffic:<name>/conv` index k — conversation k's type and parameters ([`ConvPlan`]);
//! * `traffic:<name>/keys` index k — conversation k's Telnet keystrokes (sizes and gaps), drawn as
//!   the session's clock advances, which does not depend on the network either.
//! Ahn and on/off senders use `traffic:<name>/sender` index i for sender i.
//!
//! Offered load (README "Offered load"): `offered_load = L` on a bottleneck of rate C sets the mean
//! conversation interarrival to `E[bytes on the wire per conversation] / (L · C)`. The expectation
//! is computed exactly from the tcplib tables under their sampling rule and the conversation
//! scripts (every data byte plus 40 bytes of TCP/IP header per MSS-sized segment; Telnet: every
//! keystroke and its echo in their own segments, E[duration]/E[gap] keystrokes per session). ACKs,
//! handshakes and retransmissions are not counted: the target is the offered *data* load.

use rand_distr::{Distribution, Exp1};
use tcplab_tcp::EndpointConfig;

use super::conversation::{ConvApp, ConvPlan, OnOffParams};
use super::tcplib_tables::{AppMix, ConvKind, Tcplib};
use crate::engine::{RngStreams, SimTime, StreamRng};
use crate::net::NodeId;

/// TCP/IP header bytes per segment counted by the offered-load calibration (RFC 791 + 793).
pub const HEADER_BYTES: f64 = 40.0;

#[derive(Clone, Debug)]
pub enum SourceKind {
    Tcplib { mean_interarrival_ns: f64, mix: AppMix },
    Ahn { senders: u32, mean_sleep_ns: f64 },
    OnOff { senders: u32, params: OnOffParams },
}

/// Counters over every connection a source has opened (closed ones are folded in when freed,
/// live ones when the summary is written).
#[derive(Clone, Debug, Default)]
pub struct TrafficStats {
    pub started: [u64; 4],
    pub completed: [u64; 4],
    pub aborted: u64,
    pub peak_alive: u64,
    pub alive: u64,
    /// Application bytes written by originators / responders.
    pub app_bytes: [u64; 2],
    /// Data bytes sent for the first time, retransmitted, both directions.
    pub bytes_sent: u64,
    pub retransmitted_bytes: u64,
    pub retransmitted_segments: u64,
    pub segments_sent: u64,
    pub coarse_timeouts: u64,
    pub fast_retransmits: u64,
    pub idle_restarts: u64,
    /// In-order data bytes received by originators (0) / responders (1).
    pub bytes_received: [u64; 2],
    pub echo_count: u64,
    pub echo_delay_sum_ns: u128,
    pub echo_under_1s: u64,
}

pub struct TrafficSource {
    pub name: String,
    pub kind: SourceKind,
    pub from: NodeId,
    pub to: NodeId,
    pub variant: String,
    /// Originator (side 0) and responder (side 1) endpoint configurations.
    pub cfg: [EndpointConfig; 2],
    pub bsd_ticks: bool,
    pub start: SimTime,
    pub stop: SimTime,
    /// Stream names (see the module documentation).
    pub stream: String,
    pub arrivals: StreamRng,
    /// Conversations created so far (the next one's number).
    pub next_conv: u64,
    pub stats: TrafficStats,
    /// Every conversation opened: (start, kind, planned originator bytes, planned responder
    /// bytes, Telnet duration). What "the same traffic pattern" means (000 §6.2.3), kept so
    /// tests and users can compare runs; 40 bytes per conversation.
    pub schedule: Vec<ScheduleEntry>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleEntry {
    pub start: SimTime,
    pub kind: ConvKind,
    pub originator_bytes: u64,
    pub responder_bytes: u64,
    pub telnet_duration: SimTime,
}

fn exp_ns(rng: &mut StreamRng, mean_ns: f64) -> SimTime {
    let e: f64 = Exp1.sample(rng);
    SimTime((e * mean_ns).round() as u64)
}

impl TrafficSource {
    /// `kind` for tcplib sources carries the mix only if `mix_configured`; otherwise tcplib's is
    /// drawn. With `offered` = (load, bottleneck bytes/s) the interarrival is calibrated to it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        rngs: &RngStreams,
        name: String,
        kind: SourceKind,
        mix_configured: bool,
        offered: Option<(f64, f64)>,
        from: NodeId,
        to: NodeId,
        variant: String,
        cfg: [EndpointConfig; 2],
        bsd_ticks: bool,
        start: SimTime,
        stop: SimTime,
    ) -> TrafficSource {
        let stream = format!("traffic:{name}");
        let mut arrivals = rngs.stream(&stream, 0);
        let kind = match kind {
            SourceKind::Tcplib { mean_interarrival_ns, mix } => {
                let mix = if mix_configured { mix } else { AppMix::draw(&mut arrivals) };
                let mean_interarrival_ns = match offered {
                    Some((load, bytes_per_s)) => expected_conversation_bytes(&mix, cfg[0].mss) / (load * bytes_per_s) * 1e9,
                    None => mean_interarrival_ns,
                };
                SourceKind::Tcplib { mean_interarrival_ns, mix }
            }
            k => k,
        };
        TrafficSource { name, kind, from, to, variant, cfg, bsd_ticks, start, stop, stream, arrivals, next_conv: 0, stats: TrafficStats::default(), schedule: Vec::new() }
    }

    /// Time of the first conversation (tcplib) — the first arrival gap after `start`.
    pub fn first_arrival(&mut self) -> Option<SimTime> {
        match self.kind {
            SourceKind::Tcplib { mean_interarrival_ns, .. } => {
                let t = self.start + exp_ns(&mut self.arrivals, mean_interarrival_ns);
                (t < self.stop).then_some(t)
            }
            _ => None,
        }
    }

    /// The next tcplib conversation starting at `now`: its plan, its keystroke stream, and the
    /// time of the one after it.
    pub fn next_conversation(&mut self, rngs: &RngStreams, now: SimTime) -> (u64, ConvPlan, StreamRng, Option<SimTime>) {
        let SourceKind::Tcplib { mean_interarrival_ns, mix } = &self.kind else { unreachable!("tcplib only") };
        let k = self.next_conv;
        self.next_conv += 1;
        let plan = plan_for(rngs, &self.stream, mix, k, now);
        self.schedule.push(ScheduleEntry {
            start: now,
            kind: plan.kind,
            originator_bytes: plan.originator_bytes(),
            responder_bytes: plan.responder_bytes(),
            telnet_duration: plan.telnet_duration,
        });
        let keys = rngs.stream(&format!("{}/keys", self.stream), k);
        let next = now + exp_ns(&mut self.arrivals, *mean_interarrival_ns);
        (k, plan, keys, (next < self.stop).then_some(next))
    }

    /// Long-lived sender `i` (Ahn, on/off).
    pub fn sender_app(&self, rngs: &RngStreams, i: u32) -> ConvApp {
        let rng = rngs.stream(&format!("{}/sender", self.stream), i as u64);
        match self.kind {
            SourceKind::Ahn { mean_sleep_ns, .. } => ConvApp::ahn(rng, mean_sleep_ns, self.start, self.stop),
            SourceKind::OnOff { params, .. } => ConvApp::on_off(rng, params, self.start, self.stop),
            SourceKind::Tcplib { .. } => unreachable!("tcplib sources open conversations"),
        }
    }

    pub fn senders(&self) -> u32 {
        match self.kind {
            SourceKind::Ahn { senders, .. } | SourceKind::OnOff { senders, .. } => senders,
            SourceKind::Tcplib { .. } => 0,
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            SourceKind::Tcplib { .. } => "tcplib",
            SourceKind::Ahn { .. } => "ahn",
            SourceKind::OnOff { .. } => "onoff",
        }
    }
}

/// Conversation `k` of the source whose streams are named `stream` (a pure function of the seed,
/// the source and `k`: what the reproducibility test compares across variants).
pub fn plan_for(rngs: &RngStreams, stream: &str, mix: &AppMix, k: u64, start: SimTime) -> ConvPlan {
    let mut rng = rngs.stream(&format!("{stream}/conv"), k);
    let kind = mix.pick(&mut rng);
    ConvPlan::draw(kind, start, &mut rng)
}

/// Expected bytes on the wire (data + 40-byte headers per segment) of one conversation of
/// `kind` with payload `mss` per segment, under tcplib's sampling rule.
pub fn expected_wire_bytes(kind: ConvKind, mss: u32) -> f64 {
    let t = Tcplib::get();
    let mss = mss.max(1) as f64;
    // A transfer of b bytes takes ceil(b/mss) segments; E[ceil] ≈ E[b]/mss + 1/2 for sizes that
    // are not small multiples of the MSS; exact for b ≤ mss (one segment).
    let transfer = |mean_bytes: f64| mean_bytes + HEADER_BYTES * (mean_bytes / mss + 0.5).max(1.0);
    match kind {
        ConvKind::Smtp => transfer(t.smtp_itemsize.mean()),
        ConvKind::Nntp => nntp_expected(mss),
        ConvKind::Ftp => {
            let per_item = 2.0 * (t.ftp_ctlsize.mean() + HEADER_BYTES) + transfer(t.ftp_itemsize.mean());
            expected_count(&t.ftp_nitems) * per_item
        }
        ConvKind::Telnet => {
            // Keystrokes per session ≈ E[duration] / E[gap]; each and its echo one segment each.
            let keys = t.telnet_duration_ms.mean() / t.telnet_interarrival_ms.mean();
            keys * 2.0 * (t.telnet_pktsize.mean() + HEADER_BYTES)
        }
    }
}

fn nntp_expected(mss: f64) -> f64 {
    // Articles go back to back in one stream: segments ≈ total/mss + 1/2.
    let t = Tcplib::get();
    let total = expected_count(&t.nntp_nitems) * t.nntp_itemsize.mean();
    total + HEADER_BYTES * (total / mss + 0.5).max(1.0)
}

/// E[max(1, round(X))] for a count table (what `ConvPlan::draw` does with a draw).
fn expected_count(c: &super::tcplib_tables::EmpiricalCdf) -> f64 {
    // Rounding a uniform draw within a bin: the mean of the bin is a fine approximation except
    // for the atom; counts are ≥ 1 in every tcplib count table.
    c.mean().max(1.0)
}

/// Mean wire bytes per conversation of a mix.
pub fn expected_conversation_bytes(mix: &AppMix, mss: u32) -> f64 {
    ConvKind::ALL.iter().map(|&k| mix.0[k.index()] * expected_wire_bytes(k, mss)).sum()
}
