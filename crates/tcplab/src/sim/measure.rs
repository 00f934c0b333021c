//! The cold parts of a [`Simulation`] kept out of the event loop's file: the measurement
//! window's edges (`[run] measure`) and the names of link-trace rows' flows.

use super::{Event, MeasureWindow, Simulation};
use crate::engine::SimTime;
use crate::net::monitor::PacketTag;

impl Simulation {
    /// Ask for a measurement window [from, to) (before the run starts).
    pub fn set_measure(&mut self, from: SimTime, to: SimTime) {
        self.measure = Some(MeasureWindow { from, to, links: vec![[None; 2]; self.links.len()], acked: vec![[None; 2]; self.static_tcp] });
        self.events.schedule(from, Event::Measure(false));
        if to < self.end {
            self.events.schedule(to, Event::Measure(true));
        }
    }

    /// The run ended inside the window: close it now.
    pub(super) fn finish_measure(&mut self, now: SimTime) {
        if self.measure.as_ref().is_some_and(|m| m.links.first().is_none_or(|l| l[0].is_some())) {
            self.measure_edge(now, true);
        }
    }

    /// Snapshot every link's counters and every flow's acknowledged bytes at a window edge.
    pub fn measure_edge(&mut self, now: SimTime, end: bool) {
        let Some(mut m) = self.measure.take() else { return };
        let k = end as usize;
        for (i, l) in self.links.iter_mut().enumerate() {
            if m.links[i][k].is_none() {
                m.links[i][k] = Some(l.monitor.counters(now));
            }
        }
        for (i, c) in self.tcp[..self.static_tcp].iter().enumerate() {
            if m.acked[i][k].is_none() {
                m.acked[i][k] = Some(c.ep[0].stats().bytes_acked);
            }
        }
        self.measure = Some(m);
    }

    /// The name of a link trace row's flow index ([`PacketTag::flow`]): the `[[tcp]]` flows,
    /// then the `[[udp]]` sources, then the traffic sources (whose connections share the
    /// source's name); "" when unknown.
    pub fn trace_flow_name(&self, flow: u32) -> &str {
        let f = flow as usize;
        let (nt, nu) = (self.static_tcp, self.udp.len());
        if f < nt {
            &self.tcp[f].name
        } else if f < nt + nu {
            &self.udp[f - nt].name
        } else if f - nt - nu < self.traffic.len() && flow != PacketTag::NO_FLOW {
            &self.traffic[f - nt - nu].name
        } else {
            ""
        }
    }
}
