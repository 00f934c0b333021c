//! The event loop, with software prefetch of what the next events will touch (issue 28).
//!
//! At thousands of flows the working set (a connection's endpoints, its access links) is far
//! larger than the cache, and an event's first touch of its flow's memory is a miss: ~1 per
//! event on the 4,096-flow dumbbell, all compulsory once the hot fields are packed. They cannot
//! be removed, only overlapped: before dispatching an event the loop looks at the next ones
//! ([`EventQueue::upcoming`], a hint that is exact within the current time and usually right
//! beyond it) and prefetches their lines, so their misses run while this event computes.
//! Two stages: the event after next gets the lines its own fields name (a link's hot lines, a
//! timer's connection); the next one, whose link line is by then on its way, is followed one
//! step further — an arrival to the packet on the wire and from it to the endpoint it is for,
//! or the link a router forwards it by. A prefetch never changes a result (it reads nothing
//! the simulation sees; the golden digests are run with it on), and a wrong hint costs a few
//! wasted loads.
//!
//! Off by default: measured on the project's 2-core machine under other builds (load 6-9,
//! 2026-11-29), distance 2 added 97 instructions per event at 4,096 flows (538 -> 635; distance
//! 1: 610) and no wall-clock or CPU-time gain could be told from the noise (paired medians
//! 0.96-1.03). `TCPLAB_PREFETCH=1|2` turns it on (read when the simulation is built), for
//! measuring on a quiet machine; `Simulation::prefetch` sets it from code.

use super::{Event, Simulation};
use crate::engine::SimTime;
use crate::net::packet::PacketKind;

/// The link lines a transmission end or an enqueue reads: line 0 (transmitter, pipe head) and
/// the monitor's two (`Link`'s layout); an arrival at the far end reads line 0 only.
const LINK_LINES: usize = 3;
/// A connection's lines prefetched: its header, and the first lines of the endpoint (which
/// holds what every segment and timer reads first: `tcplab_tcp`'s `endpoint::layout`). The
/// whole endpoint (14 lines) cost ~140 instructions per event at 4,096 flows.
const CONN_LINES: usize = 2;
const ENDPOINT_LINES: usize = 4;

/// The forced distance from `TCPLAB_PREFETCH`, if set to 0, 1 or 2.
pub(crate) fn forced_distance() -> Option<u8> {
    std::env::var("TCPLAB_PREFETCH").ok().and_then(|v| v.trim().parse::<u8>().ok()).map(|d| d.min(2))
}

/// Prefetch the `N` cache lines from `r`'s line on into all cache levels (a fixed count, so
/// the loop unrolls: issue 28 counts instructions). No-op off x86_64.
#[inline(always)]
fn prefetch<const N: usize, T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let line = (r as *const T as usize) & !63;
        for i in 0..N {
            // SAFETY: a prefetch is a hint; it never faults and reads nothing the program sees,
            // whatever the address (here, a live object's lines).
            unsafe { _mm_prefetch::<_MM_HINT_T0>((line + 64 * i) as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

impl Simulation {
    /// The prefetch distance used: forced, else 0 (see the module documentation).
    pub fn prefetch_distance(&self) -> u8 {
        self.prefetch.unwrap_or(0)
    }

    /// Like [`Simulation::run_until`], stopping after `max_events` events: `Some(ended)` when
    /// `t` (or the end) was reached, `None` when the budget ran out first.
    pub fn run_until_bounded(&mut self, t: SimTime, max_events: u64) -> Option<bool> {
        match self.prefetch_distance() {
            0 => self.event_loop::<0>(t, max_events),
            1 => self.event_loop::<1>(t, max_events),
            _ => self.event_loop::<2>(t, max_events),
        }
    }

    /// The loop, once per prefetch distance `D` (so that distance 0 carries no test per event).
    #[inline(always)]
    fn event_loop<const D: u8>(&mut self, t: SimTime, max_events: u64) -> Option<bool> {
        if self.ended {
            return Some(true);
        }
        let mut budget = max_events;
        while let Some(at) = self.events.peek_time() {
            if at > t {
                return Some(false);
            }
            if budget == 0 {
                return None;
            }
            budget -= 1;
            let (now, ev) = self.events.pop_peeked();
            if D >= 1 {
                if let Some(&next) = self.events.upcoming(0) {
                    self.prefetch_deep::<D>(next);
                }
            }
            if D >= 2 {
                if let Some(&after) = self.events.upcoming(1) {
                    self.prefetch_shallow(after);
                }
            }
            match ev {
                Event::TxDone(l) => self.tx_done(now, l),
                Event::Arrive(l) => self.arrive(now, l),
                Event::Processed { node, pkt } => {
                    self.conservation.in_processing -= 1;
                    self.at_node(now, node, pkt)
                }
                Event::SendProcessed { link, pkt } => {
                    self.conservation.in_processing -= 1;
                    self.link_enqueue(now, link, pkt)
                }
                Event::Source(s) => self.source_fire(now, s),
                Event::BurstNext(s) => self.burst_next(now, s),
                Event::TcpTimer { conn, side, gen } => self.tcp_on_timer(now, conn, side, gen),
                Event::TcpStart(c) => self.tcp_start(now, c),
                Event::TcpStop(c) => self.tcp_stop(now, c),
                Event::Tick { host, slow } => self.bsd_tick(now, host, slow),
                Event::ConvArrival(s) => self.conv_arrival(now, s),
                Event::AppWake { conn, gen } => self.on_app_wake(now, conn, gen),
                Event::Lan { lan, station, gen } => self.lan_timer(now, lan as u32, station as u32, gen),
                Event::Measure(end) => self.measure_edge(now, end),
                Event::Stop => {
                    self.ended = true;
                    return Some(true);
                }
            }
            if self.stop_when_done && self.finished_at.is_some() {
                self.ended = true;
                return Some(true);
            }
        }
        self.ended = true;
        Some(true)
    }

    /// The lines event `ev` names by its own fields. Reads nothing but the event.
    #[inline(always)]
    fn prefetch_shallow(&self, ev: Event) {
        match ev {
            Event::TxDone(l) => {
                if let Some(link) = self.links.get(l as usize) {
                    prefetch::<LINK_LINES, _>(link);
                }
            }
            Event::Arrive(l) => {
                if let Some(link) = self.links.get(l as usize) {
                    prefetch::<1, _>(link);
                }
            }
            Event::TcpTimer { conn, side, .. } => self.prefetch_endpoint(conn, side as usize),
            _ => {}
        }
    }

    /// The next event: at distance 1 its own lines first; then, for an arrival (whose link's
    /// line 0 was prefetched one event ago at distance 2), one step further: the packet on the
    /// wire, then the endpoint it is delivered to, or the link its next hop leaves by.
    #[inline(always)]
    fn prefetch_deep<const D: u8>(&self, ev: Event) {
        if D == 1 {
            self.prefetch_shallow(ev);
        }
        let Event::Arrive(l) = ev else { return };
        let Some(link) = self.links.get(l as usize) else { return };
        let Some(p) = link.pipe_first().and_then(|id| self.pool.slot(id)) else { return };
        if p.dst == link.to {
            if let PacketKind::Tcp { conn, to_receiver, .. } = p.kind {
                self.prefetch_endpoint(conn, to_receiver as usize);
            }
        } else if let Some(next) = self.nodes.get(link.to as usize).and_then(|n| self.links.get(n.route(p.dst) as usize)) {
            prefetch::<LINK_LINES, _>(next);
        }
    }

    /// Connection `conn`'s header and the first lines of its endpoint `side`.
    #[inline(always)]
    fn prefetch_endpoint(&self, conn: u32, side: usize) {
        if let Some(c) = self.tcp.get(conn as usize) {
            prefetch::<CONN_LINES, _>(c);
            prefetch::<ENDPOINT_LINES, _>(&c.ep[side & 1]);
        }
    }
}
