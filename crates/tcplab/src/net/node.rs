//! Hosts and routers. A node forwards by a static next-hop table and may spend a processing time
//! on each arriving packet, drawn from a distribution (seed 000 §2.2.2). As in x-Sim, the node
//! is busy while it processes: "incoming packets cannot be processed during such a delay", so
//! packets are processed one at a time in arrival order (no reordering inside a node).

use rand::Rng;
use rand_distr::{Distribution, Normal};

use crate::engine::{SimTime, StreamRng};

pub type NodeId = u32;
pub const NO_ROUTE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProcessingDelay {
    None,
    Fixed(SimTime),
    Uniform(SimTime, SimTime),
    /// Normal(mean, stddev) in ns, truncated at zero.
    Normal(f64, f64),
}

impl ProcessingDelay {
    pub fn sample(&self, rng: &mut StreamRng) -> SimTime {
        match *self {
            ProcessingDelay::None => SimTime::ZERO,
            ProcessingDelay::Fixed(t) => t,
            ProcessingDelay::Uniform(a, b) => {
                if b.0 <= a.0 {
                    a
                } else {
                    SimTime(rng.gen_range(a.0..=b.0))
                }
            }
            ProcessingDelay::Normal(m, s) => {
                let d = Normal::new(m, s.max(0.0)).expect("valid normal");
                SimTime(d.sample(rng).max(0.0).round() as u64)
            }
        }
    }
}

impl Node {
    /// The link a packet for `dst` leaves by.
    #[inline]
    pub fn route(&self, dst: NodeId) -> u32 {
        match self.only_link {
            Some(l) => l,
            None => self.next_link.get(dst as usize).copied().unwrap_or(NO_ROUTE),
        }
    }
}

pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Outgoing link per destination node (`NO_ROUTE` if unreachable or self). Empty for a node
    /// with a single outgoing link (most hosts): everything leaves by `only_link`, and such a
    /// node needs no table at all (issue 13: no N×N table).
    pub next_link: Vec<u32>,
    pub only_link: Option<u32>,
    pub processing: ProcessingDelay,
    /// The processing delay falls before the node sends a packet (its own or forwarded), not
    /// on arrival (`processing_at = "send"`; false when there is no delay).
    pub delay_on_send: bool,
    /// The processing delay falls on arrival (there is one and it is not `delay_on_send`):
    /// decided once at build time, so that an arrival reads one flag.
    pub delay_on_arrival: bool,
    pub rng: StreamRng,
    /// End of the processing of the last packet accepted (the node is busy until then).
    pub busy_until: SimTime,
}
