//! UDP-like traffic sources. Each source draws from its own RNG stream ("traffic", index), so
//! its pattern is the same whatever else changes in the scenario (seed 000 §6.2.3).
//!
//! * CBR: packets of `packet_size` every size·8/rate.
//! * Poisson: exponential interarrivals (mean `interval`, or size·8/rate); sizes fixed or
//!   exponential with mean `packet_size` (at least 1 byte, rounded to whole bytes).
//! * Bursts (Ahn et al., seed 002 §5, "8 KB bursts of UDP"): burst sizes exponential with mean
//!   `burst_size`, sent back to back as packets of at most `packet_size` — paced at the rate of
//!   the sender's access link, each packet as the previous one has been serialized, so the
//!   burst leaves the host as it would have from its queue, without filling it (issue 14: a
//!   burst dumped at once into a 50-packet host queue lost most of itself there); bursts start
//!   at exponential intervals with mean `burst_interval`.
//! * On/off (ns-2 `Application/Traffic/Exponential`, and `Pareto` with a shape): packets of
//!   `packet_size` at `rate` during on periods, none during off periods; period lengths
//!   exponential (or Pareto) with means `on` and `off`. As in ns-2, a source starts in an on
//!   period and a packet is sent at the start of each on period.

use rand::Rng;
use rand_distr::{Distribution, Exp1};

use crate::engine::{SimTime, StreamRng};
use crate::net::NodeId;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    Cbr { interval: SimTime },
    Poisson { mean_interval_ns: f64, exp_sizes: bool },
    Bursts { mean_burst_bytes: f64, mean_interval_ns: f64 },
    OnOff { interval: SimTime, mean_on_ns: f64, mean_off_ns: f64, pareto_shape: Option<f64> },
}

pub struct UdpSource {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub pattern: Pattern,
    pub packet_size: u32,
    pub start: SimTime,
    pub stop: SimTime,
    pub rng: StreamRng,
    /// On/off: end of the current on period.
    pub on_until: SimTime,
    pub seq: u64,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub rcvd_pkts: u64,
    pub rcvd_bytes: u64,
    pub delay_sum_ns: u128,
    /// Bursts: packets of the current burst not yet sent (the simulator paces them at the
    /// access link's rate).
    pub burst_queue: std::collections::VecDeque<u32>,
    /// The codepoint its packets leave with (`ecn = "ect1"`: an L4S source).
    pub ecn: crate::net::packet::Ecn,
    /// One-way delays of the packets received, when `delay_percentiles` is set.
    pub delays: Option<Box<crate::net::aqm_stats::AqmStats>>,
}

fn exp(rng: &mut StreamRng, mean: f64) -> f64 {
    let e: f64 = Exp1.sample(rng);
    e * mean
}

impl UdpSource {
    /// Time of the first emission.
    pub fn first_fire(&mut self) -> SimTime {
        match self.pattern {
            Pattern::Cbr { .. } => self.start,
            Pattern::Poisson { mean_interval_ns, .. } => self.start + SimTime(exp(&mut self.rng, mean_interval_ns).round() as u64),
            Pattern::Bursts { mean_interval_ns, .. } => self.start + SimTime(exp(&mut self.rng, mean_interval_ns).round() as u64),
            Pattern::OnOff { mean_on_ns, pareto_shape, .. } => {
                self.on_until = self.start + self.period(mean_on_ns, pareto_shape);
                self.start
            }
        }
    }

    fn period(&mut self, mean_ns: f64, shape: Option<f64>) -> SimTime {
        let x = match shape {
            None => exp(&mut self.rng, mean_ns),
            Some(a) => crate::apps::conversation::pareto(&mut self.rng, mean_ns, a),
        };
        SimTime(x.round() as u64)
    }

    /// Emit the packets due at `now` into `out` (sizes in bytes) and return the next fire time.
    pub fn fire(&mut self, now: SimTime, out: &mut Vec<u32>) -> Option<SimTime> {
        out.clear();
        match self.pattern {
            Pattern::Cbr { interval } => {
                out.push(self.packet_size);
                Some(now + interval)
            }
            Pattern::Poisson { mean_interval_ns, exp_sizes } => {
                let size = if exp_sizes {
                    (exp(&mut self.rng, self.packet_size as f64).round() as u32).max(1)
                } else {
                    self.packet_size
                };
                out.push(size);
                Some(now + SimTime(exp(&mut self.rng, mean_interval_ns).round() as u64))
            }
            Pattern::Bursts { mean_burst_bytes, mean_interval_ns } => {
                let mut burst = (exp(&mut self.rng, mean_burst_bytes).round() as u64).max(1);
                while burst > 0 {
                    let s = burst.min(self.packet_size as u64) as u32;
                    out.push(s);
                    burst -= s as u64;
                }
                Some(now + SimTime(exp(&mut self.rng, mean_interval_ns).round() as u64))
            }
            Pattern::OnOff { interval, mean_on_ns, mean_off_ns, pareto_shape } => {
                out.push(self.packet_size);
                let mut next = now + interval;
                // Off periods (possibly several short on periods without a packet) until the
                // next packet falls inside an on period.
                while next >= self.on_until {
                    let on_start = self.on_until + self.period(mean_off_ns, pareto_shape);
                    self.on_until = on_start + self.period(mean_on_ns, pareto_shape);
                    next = next.max(on_start);
                    if next < self.on_until {
                        break;
                    }
                }
                Some(next)
            }
        }
        .filter(|&t| t < self.stop)
    }

    pub fn uniform(&mut self) -> f64 {
        self.rng.gen()
    }
}
