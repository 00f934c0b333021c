//! Hosts and routers. A node forwards by a static next-hop table and may delay each arriving
//! packet by a processing time drawn from a distribution (seed 000 §2.2.2).

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

pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Outgoing link per destination node (`NO_ROUTE` if unreachable or self).
    pub next_link: Vec<u32>,
    pub processing: ProcessingDelay,
    pub rng: StreamRng,
}
