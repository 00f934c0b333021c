//! `queue = { kind = ... }` tables: validated and turned into a link direction's queue discipline.

use super::checks::{Ctx, DEFAULT_QUEUE_PKTS};
use crate::engine::{RngStreams, StreamRng};
use crate::net::queue::{DropTail, QueueDisc, QueueLimit};
use crate::net::red::{AredParams, Red, RedParams};
use crate::net::vq::{VirtualQueue, VqParams};
use crate::scenario::units::QueueSize;
use crate::scenario::{QueueCfg, ScenarioError};

/// Each random queue discipline draws from its own stream, named by its kind and the link
/// direction it serves (`"queue/red/r1->r2"`; direction names are unique), not by the position of
/// the link in the file: adding a marker on another link, or a link before this one, leaves this
/// queue's draws unchanged (issue 31 item 7).
fn queue_stream(rngs: &RngStreams, kind: &str, direction: &str) -> StreamRng {
    rngs.stream(&format!("queue/{kind}/{direction}"), 0)
}

pub(super) fn make_queue(ctx: &Ctx, field: String, q: Option<&QueueCfg>, rate_bps: u64, rngs: &RngStreams, direction: &str) -> Result<Box<dyn QueueDisc>, ScenarioError> {
    let Some(q) = q else { return Ok(Box::new(DropTail::new(QueueLimit::Packets(DEFAULT_QUEUE_PKTS), false))) };
    let rng = queue_stream(rngs, &q.kind, direction);
    let limit = match q.limit.0 {
        QueueSize::Packets(n) => QueueLimit::Packets(n),
        QueueSize::Bytes(b) => QueueLimit::Bytes(b),
    };
    let red_fields: [(&str, bool); 11] = [
        ("min_th", q.min_th.is_some()),
        ("max_th", q.max_th.is_some()),
        ("w_q", q.w_q.is_some()),
        ("max_p", q.max_p.is_some()),
        ("gentle", q.gentle.is_some()),
        ("wait", q.wait.is_some()),
        ("byte_mode", q.byte_mode.is_some()),
        ("mean_pktsize", q.mean_pktsize.is_some()),
        ("ecn", q.ecn.is_some()),
        ("target_delay", q.target_delay.is_some()),
        ("interval", q.interval.is_some()),
    ];
    let vq_fields: [(&str, bool); 4] = [
        ("theta", q.theta.is_some()),
        ("phi", q.phi.is_some()),
        ("packet_size", q.packet_size.is_some()),
        ("cap_pkts", q.cap_pkts.is_some()),
    ];
    if q.kind != "vq" {
        if let Some((k, _)) = vq_fields.iter().find(|f| f.1) {
            return Err(ctx.err(format!("{field}.{k}"), format!("{k} is a virtual-queue parameter (kind = \"vq\")")));
        }
    }
    match q.kind.as_str() {
        "vq" => {
            if let Some((k, _)) = red_fields.iter().find(|f| f.1) {
                return Err(ctx.err(format!("{field}.{k}"), format!("{k} is a RED parameter; vq takes limit, theta, phi, packet_size, cap_pkts")));
            }
            if q.count_in_service {
                return Err(ctx.err(format!("{field}.count_in_service"), "the virtual-queue marker's FIFO counts waiting packets only; count_in_service applies to droptail"));
            }
            let packet_size = match q.packet_size {
                Some(s) if s.0 == 0 || s.0 > u32::MAX as u64 => return Err(ctx.err(format!("{field}.packet_size"), "must be a positive size")),
                Some(s) => s.0 as u32,
                None => 1000,
            };
            let p = VqParams {
                theta: q.theta.unwrap_or(0.9),
                phi: q.phi.unwrap_or(0.125),
                packet_size,
                cap_pkts: q.cap_pkts.unwrap_or(30.0),
                limit,
                link_rate_bps: rate_bps,
            };
            p.validate().map_err(|(k, m)| ctx.err(format!("{field}.{k}"), m))?;
            Ok(Box::new(VirtualQueue::new(p, rng)))
        }
        "droptail" => {
            if let Some((k, _)) = red_fields.iter().find(|f| f.1) {
                return Err(ctx.err(format!("{field}.{k}"), format!("{k} is a RED parameter; droptail takes limit and count_in_service (use kind = \"red\")")));
            }
            Ok(Box::new(DropTail::new(limit, q.count_in_service)))
        }
        "red" | "ared" => {
            if q.count_in_service {
                return Err(ctx.err(format!("{field}.count_in_service"), "RED counts waiting packets only (as ns-2); count_in_service applies to droptail"));
            }
            let ared = q.kind == "ared";
            if !ared {
                for (k, set) in &red_fields[9..] {
                    if *set {
                        return Err(ctx.err(format!("{field}.{k}"), format!("{k} is an Adaptive RED parameter (kind = \"ared\")")));
                    }
                }
            }
            let mean = match q.mean_pktsize {
                Some(s) if s.0 == 0 || s.0 > u32::MAX as u64 => return Err(ctx.err(format!("{field}.mean_pktsize"), "must be a positive size")),
                Some(s) => s.0 as u32,
                None => 500,
            };
            let mut p = if ared {
                let mut a = AredParams::default();
                if let Some(d) = q.target_delay {
                    if d.0 .0 == 0 {
                        return Err(ctx.err(format!("{field}.target_delay"), "must be positive"));
                    }
                    a.target_delay = d.0;
                }
                if let Some(d) = q.interval {
                    if d.0 .0 == 0 {
                        return Err(ctx.err(format!("{field}.interval"), "must be positive"));
                    }
                    a.interval = d.0;
                }
                RedParams::ared(limit, rate_bps, mean, a)
            } else {
                let mut p = RedParams::ns2(limit, rate_bps);
                p.mean_pktsize = mean;
                p
            };
            if let Some(v) = q.min_th {
                p.min_th = v;
                if ared && q.max_th.is_none() {
                    p.max_th = 3.0 * v;
                }
            }
            if let Some(v) = q.max_th {
                p.max_th = v;
            }
            if let Some(v) = q.w_q {
                p.w_q = v;
            }
            if let Some(v) = q.max_p {
                p.max_p = v;
            }
            if let Some(v) = q.gentle {
                p.gentle = v;
            }
            if let Some(v) = q.wait {
                p.wait = v;
            }
            if let Some(v) = q.byte_mode {
                p.byte_mode = v;
            }
            if let Some(v) = q.ecn {
                p.ecn = v;
            }
            p.validate().map_err(|(k, m)| ctx.err(format!("{field}.{k}"), m))?;
            Ok(Box::new(Red::new(p, rng)))
        }
        other => Err(ctx.err(format!("{field}.kind"), format!("unknown queue discipline {other:?}; known: droptail, red, ared, vq"))),
    }
}

