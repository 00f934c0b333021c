//! `queue = { kind = ... }` tables: the discipline looked up in the registry
//! ([`crate::net::registry`]), the parameters the scenario set handed to its row, errors located
//! at the offending field.

use super::checks::{Ctx, DEFAULT_QUEUE_PKTS};
use crate::engine::{RngStreams, StreamRng};
use crate::net::droptail::DropTail;
use crate::net::queue::{QueueDisc, QueueLimit};
use crate::net::registry::{Discipline, ParamValue, Params, QueueSetup};
use crate::scenario::units::QueueSize;
use crate::scenario::{QueueCfg, ScenarioError};

/// Each random queue discipline draws from its own stream, named by its kind and the link
/// direction it serves (`"queue/red/r1->r2"`; direction names are unique), not by the position of
/// the link in the file: adding a marker on another link, or a link before this one, leaves this
/// queue's draws unchanged (issue 31 item 7).
fn queue_stream(rngs: &RngStreams, kind: &str, direction: &str) -> StreamRng {
    rngs.stream(&format!("queue/{kind}/{direction}"), 0)
}

/// Every discipline parameter the scenario set, by name (the registry rows list which they take).
fn set_params(q: &QueueCfg) -> Vec<(&'static str, ParamValue)> {
    use ParamValue::{Bool, Duration, Num, Size};
    let mut v: Vec<(&'static str, Option<ParamValue>)> = vec![
        ("count_in_service", q.count_in_service.then_some(Bool(true))),
        ("min_th", q.min_th.map(Num)),
        ("max_th", q.max_th.map(Num)),
        ("w_q", q.w_q.map(Num)),
        ("max_p", q.max_p.map(Num)),
        ("gentle", q.gentle.map(Bool)),
        ("wait", q.wait.map(Bool)),
        ("byte_mode", q.byte_mode.map(Bool)),
        ("mean_pktsize", q.mean_pktsize.map(|s| Size(s.0))),
        ("ecn", q.ecn.map(Bool)),
        ("target_delay", q.target_delay.map(|d| Duration(d.0))),
        ("interval", q.interval.map(|d| Duration(d.0))),
        ("theta", q.theta.map(Num)),
        ("phi", q.phi.map(Num)),
        ("packet_size", q.packet_size.map(|s| Size(s.0))),
        ("cap_pkts", q.cap_pkts.map(Num)),
        ("k_packets", q.k_packets.map(Num)),
        ("flows", q.flows.map(Num)),
        ("quantum", q.quantum.map(|s| Size(s.0))),
        ("memory_limit", q.memory_limit.map(|s| Size(s.0))),
        ("tupdate", q.tupdate.map(|d| Duration(d.0))),
        ("alpha", q.alpha.map(Num)),
        ("beta", q.beta.map(Num)),
        ("max_burst", q.max_burst.map(|d| Duration(d.0))),
        ("coupling", q.coupling.map(Num)),
        ("l_min_th", q.l_min_th.map(|d| Duration(d.0))),
        ("l_range", q.l_range.map(|d| Duration(d.0))),
        ("time_shift", q.time_shift.map(|d| Duration(d.0))),
    ];
    v.retain(|(_, x)| x.is_some());
    v.into_iter().map(|(k, x)| (k, x.unwrap())).collect()
}

/// `field` names the queue in an error (made only then).
pub(super) fn make_queue(ctx: &Ctx, field: impl Fn() -> String, q: Option<&QueueCfg>, rate_bps: u64, rngs: &RngStreams, direction: &str) -> Result<Box<dyn QueueDisc>, ScenarioError> {
    let Some(q) = q else { return Ok(Box::new(DropTail::new(QueueLimit::Packets(DEFAULT_QUEUE_PKTS), false))) };
    let disc = Discipline::lookup(&q.kind).map_err(|m| ctx.err(format!("{}.kind", field()), m))?;
    let limit = match q.limit.0 {
        QueueSize::Packets(n) => QueueLimit::Packets(n),
        QueueSize::Bytes(b) => QueueLimit::Bytes(b),
    };
    let setup = QueueSetup { limit, link_rate_bps: rate_bps, rng: queue_stream(rngs, &q.kind, direction) };
    let set = set_params(q);
    let made = disc.make(setup, &Params { set: &set }).map_err(|(k, m)| ctx.err(format!("{}.{k}", field()), m))?;
    Ok(if q.stats == Some(true) { crate::net::measured::Measured::wrap(made) } else { made })
}
