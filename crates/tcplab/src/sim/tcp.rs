//! Glue between the simulator and the sans-IO TCP endpoints of `tcplab-tcp`: start transfers,
//! carry segments as packets, drive fine timers and the BSD per-host coarse ticks, and open and
//! free the connections of traffic sources (`apps::traffic`) while the run goes on.
//!
//! Connection slots: the `[[tcp]]` flows occupy the first `sim.static_tcp` slots for the whole
//! run. Traffic connections take a free slot when they open and give it back when both endpoints
//! are CLOSED (TIME_WAIT included), folding their counters into their source's; so the slot table
//! grows with the peak number of connections alive, not with all that ever lived. A slot's
//! generation travels in every packet and timer event: a segment still in the network for a
//! connection that has gone is discarded on arrival (counted as `stale_segments`), as a segment
//! for a 4-tuple with no TCB would be answered by a RST that nobody listens to.
//!
//! BSD ticks: every host that owns an endpoint with the `bsd` timer model runs a 500 ms slow
//! timer and a 200 ms fast timer, each with a random phase drawn per host from the
//! "timer-phase" stream (seed 000 §6.2.6: hosts must not all tick together).
//!
//! Fine timers are lazy: an endpoint's deadline is scheduled only when it is earlier than the
//! one already pending; a pending event that finds the deadline moved later re-arms itself. An
//! RTO restarted on every ACK therefore costs no heap operation per ACK.

use rand::Rng;
use tcplab_tcp::opt64::Opt64;
use tcplab_tcp::{Endpoint, Segment, TimerModel};

use crate::apps::conversation::ConvApp;
use crate::apps::traffic::SourceKind;
use crate::engine::{SimTime, Timer};
use crate::net::packet::{Ecn, Packet, PacketKind};
use super::{Event, Simulation};

/// `repr(C)`, what every segment and timer of the connection reads first (generation, route,
/// timers, done test), then the two endpoints, then what only the start, the end and the
/// summary read (issue 28: one cache line of header, not four scattered ones).
#[repr(C)]
pub struct TcpConn {
    /// The application of a traffic connection (`None` for a `[[tcp]]` bulk transfer).
    pub app: Option<Box<TrafficConn>>,
    /// Bytes to transfer, or `None` for a timed transfer.
    pub bytes: Opt64,
    pub timers: [Timer; 2],
    /// The link each side's segments leave its host by, looked up at the first send: routes
    /// are static, and a host's node is otherwise cold memory at thousands of flows (issue 13).
    pub first_hop: [u32; 2],
    pub from: u32,
    pub to: u32,
    /// Slot generation (see the module documentation).
    pub gen: u16,
    pub bsd_ticks: bool,
    pub done: bool,
    /// [sender, receiver]
    pub ep: [Endpoint; 2],
    pub name: String,
    pub variant: String,
    pub start: SimTime,
    /// The sending time of a timed transfer (ns).
    pub duration: Opt64,
    /// When the connection started (ns).
    pub started_at: Opt64,
    /// Timed transfer: bytes acknowledged when the sending time ended (seed 000 §6.2.5 measures
    /// a timed transfer over its time, not over the drain that follows).
    pub acked_at_stop: Opt64,
    /// A traffic connection's application wake-up (keystrokes, sleeps, on/off periods).
    pub app_timer: Timer,
}

/// `TcpConn::first_hop` before the first send looked the link up.
pub const NO_HOP: u32 = u32::MAX;

/// The traffic side of a connection slot.
pub struct TrafficConn {
    pub source: u32,
    /// Conversation kind index (`ConvKind::index`), or 4 for a long-lived sender.
    pub kind: u8,
    pub app: ConvApp,
}

impl TcpConn {
    /// A `[[tcp]]` bulk transfer.
    #[allow(clippy::too_many_arguments)]
    pub fn bulk(name: String, variant: String, from: u32, to: u32, start: SimTime, bytes: Option<u64>, duration: Option<SimTime>, ep: [Endpoint; 2], bsd_ticks: bool) -> TcpConn {
        TcpConn {
            name,
            variant,
            from,
            to,
            first_hop: [NO_HOP; 2],
            start,
            bytes: bytes.into(),
            duration: duration.map(|d| d.0).into(),
            ep,
            timers: [Timer::default(), Timer::default()],
            bsd_ticks,
            done: false,
            started_at: Opt64::NONE,
            acked_at_stop: Opt64::NONE,
            gen: 0,
            app: None,
            app_timer: Timer::default(),
        }
    }
}

/// Per-host list of (conn, side) driven by BSD ticks, and whether each host ticks at all (it
/// does if a `[[tcp]]` flow or a traffic source with BSD timers has an endpoint there).
pub fn tick_hosts(sim: &Simulation) -> (Vec<Vec<(u32, u8)>>, Vec<bool>) {
    let mut v = vec![Vec::new(); sim.nodes.len()];
    let mut ticking = vec![false; sim.nodes.len()];
    for (i, c) in sim.tcp.iter().enumerate() {
        if c.bsd_ticks {
            v[c.from as usize].push((i as u32, 0));
            v[c.to as usize].push((i as u32, 1));
            ticking[c.from as usize] = true;
            ticking[c.to as usize] = true;
        }
    }
    for t in &sim.traffic {
        if t.bsd_ticks {
            ticking[t.from as usize] = true;
            ticking[t.to as usize] = true;
        }
    }
    (v, ticking)
}

pub fn is_bsd(m: &TimerModel) -> bool {
    matches!(m, TimerModel::Bsd)
}

/// BSD's tick periods: `tcp_slowtimo` every 500 ms, `tcp_fasttimo` every 200 ms.
const SLOW_TICK_NS: u64 = 500_000_000;
const FAST_TICK_NS: u64 = 200_000_000;

impl Simulation {
    pub(crate) fn schedule_tcp(&mut self) {
        for i in 0..self.tcp.len() {
            let s = self.tcp[i].start;
            if s < self.end {
                self.events.schedule(s, Event::TcpStart(i as u32));
            }
        }
        self.tcp_active = self.tcp.iter().filter(|c| c.start < self.end).count();
        for i in 0..self.traffic.len() {
            let src = &mut self.traffic[i];
            let first = match src.kind {
                SourceKind::Tcplib { .. } => src.first_arrival(),
                _ => Some(src.start).filter(|&t| t < src.stop),
            };
            if let Some(t) = first.filter(|&t| t < self.end) {
                self.events.schedule(t, Event::ConvArrival(i as u32));
            }
        }
        let (hosts, ticking) = tick_hosts(self);
        self.tick_phase = vec![[0; 2]; hosts.len()];
        self.tick_pending = vec![[false; 2]; hosts.len()];
        for (h, &on) in ticking.iter().enumerate() {
            if !on {
                continue;
            }
            let mut rng = self.rngs.stream("timer-phase", h as u64);
            let slow = rng.gen_range(0..SLOW_TICK_NS);
            let fast = rng.gen_range(0..FAST_TICK_NS);
            self.tick_phase[h] = [slow, fast];
            // A host with only traffic sources has no connection yet: its ticks start with the
            // first one (`resume_ticks`), on the same phase.
            if !hosts[h].is_empty() {
                self.events.schedule(SimTime(slow), Event::Tick { host: h as u32, slow: true });
                self.events.schedule(SimTime(fast), Event::Tick { host: h as u32, slow: false });
                self.tick_pending[h] = [true, true];
            }
        }
        self.tick_hosts = hosts;
    }

    /// A connection at host `h` needs ticks again: schedule the ones that stopped, at the host's
    /// next tick instants after `now` (phase + k·period, as if they had never stopped). Skipped
    /// ticks would have found the host's list empty and done nothing; only the event count differs
    /// (issue 13: a host with no connection needing a tick schedules none).
    fn resume_ticks(&mut self, now: SimTime, h: usize) {
        for (k, period) in [SLOW_TICK_NS, FAST_TICK_NS].into_iter().enumerate() {
            if self.tick_pending[h][k] {
                continue;
            }
            let phase = self.tick_phase[h][k];
            let next = if now.0 < phase { phase } else { phase + ((now.0 - phase) / period + 1) * period };
            self.events.schedule(SimTime(next), Event::Tick { host: h as u32, slow: k == 0 });
            self.tick_pending[h][k] = true;
        }
    }

    pub(crate) fn tcp_start(&mut self, now: SimTime, c: u32) {
        let conn = &mut self.tcp[c as usize];
        conn.started_at = Opt64::some(now.0);
        conn.ep[1].listen();
        conn.ep[0].connect(now.0);
        match conn.bytes.get() {
            Some(b) => {
                conn.ep[0].app_write(b);
                conn.ep[0].app_close();
            }
            None => {
                conn.ep[0].app_write(u64::MAX);
                let d = SimTime(conn.duration.get().expect("a timed transfer has a duration"));
                self.events.schedule(now + d, Event::TcpStop(c));
            }
        }
        self.tcp_flush(now, c, 0);
    }

    /// End of a timed transfer: note what was acknowledged, close the stream (the FIN follows the
    /// data already in the send buffer) and count the flow as done.
    pub(crate) fn tcp_stop(&mut self, now: SimTime, c: u32) {
        let conn = &mut self.tcp[c as usize];
        conn.acked_at_stop = Opt64::some(conn.ep[0].stats().bytes_acked);
        conn.ep[0].app_close();
        self.tcp_flush(now, c, 0);
        self.mark_done(now, c);
    }

    fn mark_done(&mut self, now: SimTime, c: u32) {
        let conn = &mut self.tcp[c as usize];
        if conn.done {
            return;
        }
        conn.done = true;
        self.tcp_active -= 1;
        if self.tcp_active == 0 && self.udp.is_empty() {
            self.finished_at = Some(now);
        }
    }

    pub(crate) fn tcp_on_segment(&mut self, now: SimTime, c: u32, gen: u16, to_receiver: bool, seg: &Segment) {
        let side = if to_receiver { 1 } else { 0 };
        if self.tcp[c as usize].gen != gen {
            self.stale_segments += 1;
            return;
        }
        self.tcp[c as usize].ep[side].on_segment(now.0, seg);
        self.tcp_flush(now, c, side as u8);
        self.after_endpoint_event(now, c, side as u8);
    }

    /// After an endpoint changed: a bulk sender may be done; a traffic application may act.
    fn after_endpoint_event(&mut self, now: SimTime, c: u32, side: u8) {
        if self.tcp[c as usize].app.is_some() {
            self.step_app(now, c);
        } else if side == 0 {
            self.check_done(now, c);
        }
    }

    pub(crate) fn tcp_on_timer(&mut self, now: SimTime, c: u32, side: u8, gen: u32) {
        let conn = &mut self.tcp[c as usize];
        if !conn.timers[side as usize].fire(gen) {
            return;
        }
        match conn.ep[side as usize].next_timer() {
            Some(t) if t <= now.0 => conn.ep[side as usize].on_timer(now.0),
            _ => {}
        }
        self.tcp_flush(now, c, side);
        self.after_endpoint_event(now, c, side);
    }

    pub(crate) fn bsd_tick(&mut self, now: SimTime, host: u32, slow: bool) {
        // A tick may free connections (and so edit this list): walk a copy.
        let mut list = std::mem::take(&mut self.tick_scratch);
        list.clear();
        list.extend_from_slice(&self.tick_hosts[host as usize]);
        for &(c, side) in &list {
            let conn = &mut self.tcp[c as usize];
            if c as usize >= self.static_tcp && conn.app.is_none() {
                continue; // freed earlier in this tick
            }
            let ep = &mut conn.ep[side as usize];
            if slow {
                ep.on_slow_tick(now.0);
            } else {
                ep.on_fast_tick(now.0);
            }
            self.tcp_flush(now, c, side);
            self.after_endpoint_event(now, c, side);
        }
        self.tick_scratch = list;
        if self.tick_hosts[host as usize].is_empty() {
            // Nothing left to tick: stop until a connection opens here again (`resume_ticks`).
            self.tick_pending[host as usize][!slow as usize] = false;
            return;
        }
        let period = SimTime(if slow { SLOW_TICK_NS } else { FAST_TICK_NS });
        self.events.schedule(now + period, Event::Tick { host, slow });
    }

    fn check_done(&mut self, now: SimTime, c: u32) {
        let conn = &self.tcp[c as usize];
        if !conn.done && conn.bytes.is_some() && conn.ep[0].stats().completion_time.get().is_some() {
            self.mark_done(now, c);
        }
    }

    /// Send everything the endpoint has to send, then make sure its timer is scheduled.
    fn tcp_flush(&mut self, now: SimTime, c: u32, side: u8) {
        loop {
            let conn = &mut self.tcp[c as usize];
            let Some(seg) = conn.ep[side as usize].poll_transmit(now.0) else { break };
            let (src, dst) = if side == 0 { (conn.from, conn.to) } else { (conn.to, conn.from) };
            let p = Packet {
                src,
                dst,
                size: seg.wire_bytes(),
                ttl: 64,
                corrupted: false,
                ecn: Ecn::of_segment(seg.ect, seg.ect1),
                created: now.0,
                kind: PacketKind::Tcp {
                    conn: c,
                    gen: conn.gen,
                    to_receiver: side == 0,
                    seg,
                },
            };
            let hop = match conn.first_hop[side as usize] {
                NO_HOP => {
                    let l = self.nodes[src as usize].route(dst);
                    self.tcp[c as usize].first_hop[side as usize] = l;
                    l
                }
                l => l,
            };
            self.send_packet_via(now, p, hop);
        }
        let conn = &mut self.tcp[c as usize];
        if let Some(t) = conn.ep[side as usize].next_timer() {
            let t = SimTime(t.max(now.0));
            let timer = &mut conn.timers[side as usize];
            let earlier = match timer.armed_at() {
                None => true,
                Some(a) => t < a,
            };
            if earlier {
                let gen = timer.arm(t);
                self.events.schedule(t, Event::TcpTimer { conn: c, side, gen });
            }
        }
    }

    // ---------------------------------------------------------------- traffic connections

    /// A traffic source's arrival: a tcplib conversation opens (and the next is scheduled), or the
    /// long-lived senders of an Ahn/on-off source open.
    pub(crate) fn conv_arrival(&mut self, now: SimTime, s: u32) {
        let si = s as usize;
        match self.traffic[si].kind {
            SourceKind::Tcplib { .. } => {
                let rngs = self.rngs;
                let (_, plan, keys, next) = self.traffic[si].next_conversation(&rngs, now);
                let kind = plan.kind.index() as u8;
                let app = ConvApp::tcplib(&plan, keys);
                self.open_conn(now, s, kind, app);
                if let Some(t) = next.filter(|&t| t < self.end) {
                    self.events.schedule(t, Event::ConvArrival(s));
                }
            }
            _ => {
                let rngs = self.rngs;
                for i in 0..self.traffic[si].senders() {
                    let app = self.traffic[si].sender_app(&rngs, i);
                    self.open_conn(now, s, 4, app);
                }
            }
        }
    }

    /// Open one connection of source `s` in a free slot and let its application start.
    fn open_conn(&mut self, now: SimTime, s: u32, kind: u8, app: ConvApp) {
        // A pacing CC's randomness (scalable-ecn) per connection, from a stream of its own.
        let conv = self.traffic[s as usize].next_conv as u64;
        let pacing_seed: u64 = self.rngs.stream("pacing-traffic", ((s as u64) << 32) ^ conv).gen();
        let src = &mut self.traffic[s as usize];
        if (kind as usize) < 4 {
            src.stats.started[kind as usize] += 1;
        }
        src.stats.alive += 1;
        src.stats.peak_alive = src.stats.peak_alive.max(src.stats.alive);
        // Initial sequence numbers from the connection count keep runs deterministic.
        let n = src.next_conv.wrapping_mul(0x9E37_79B9) as u32;
        let mut cfg = src.cfg.clone();
        cfg[0].pacing_seed = pacing_seed;
        cfg[1].pacing_seed = pacing_seed;
        let [c0, c1] = cfg;
        let mut ep = [Endpoint::new(c0, n), Endpoint::new(c1, n ^ 0x8000_0000)];
        ep[1].listen();
        ep[0].connect(now.0);
        let (from, to, bsd) = (src.from, src.to, src.bsd_ticks);
        let traffic = Box::new(TrafficConn { source: s, kind, app });
        let c = match self.free_conns.pop() {
            Some(c) => {
                let conn = &mut self.tcp[c as usize];
                conn.gen = conn.gen.wrapping_add(1);
                conn.from = from;
                conn.to = to;
                conn.first_hop = [NO_HOP; 2];
                conn.start = now;
                conn.started_at = Opt64::some(now.0);
                conn.ep = ep;
                conn.bsd_ticks = bsd;
                conn.done = false;
                conn.app = Some(traffic);
                c
            }
            None => {
                let mut conn = TcpConn::bulk(String::new(), String::new(), from, to, now, None, None, ep, bsd);
                conn.started_at = Opt64::some(now.0);
                conn.app = Some(traffic);
                self.tcp.push(conn);
                (self.tcp.len() - 1) as u32
            }
        };
        if bsd {
            self.tick_hosts[from as usize].push((c, 0));
            self.tick_hosts[to as usize].push((c, 1));
            self.resume_ticks(now, from as usize);
            self.resume_ticks(now, to as usize);
        }
        self.step_app(now, c);
        self.tcp_flush(now, c, 0);
    }

    pub(crate) fn on_app_wake(&mut self, now: SimTime, c: u32, gen: u32) {
        if !self.tcp[c as usize].app_timer.fire(gen) {
            return;
        }
        self.step_app(now, c);
    }

    /// Let a traffic connection's application act, flush what it wrote, arm its wake-up, and free
    /// the slot once both endpoints are closed.
    fn step_app(&mut self, now: SimTime, c: u32) {
        let conn = &mut self.tcp[c as usize];
        let Some(tc) = conn.app.as_mut() else { return };
        let st = tc.app.step(now, &mut conn.ep);
        if let Some(w) = st.wake {
            let w = w.max(now);
            if conn.app_timer.armed_at() != Some(w) {
                let gen = conn.app_timer.arm(w);
                self.events.schedule(w, Event::AppWake { conn: c, gen });
            }
        }
        for side in 0..2u8 {
            if st.touched[side as usize] {
                self.tcp_flush(now, c, side);
            }
        }
        let conn = &self.tcp[c as usize];
        if conn.ep[0].is_closed() && conn.ep[1].is_closed() {
            self.free_conn(c);
        }
    }
}

/// Fold a closed (or, at the end of the run, live) traffic connection's counters into its source.
pub fn fold_stats(stats: &mut crate::apps::traffic::TrafficStats, conn: &TcpConn) {
    let Some(tc) = conn.app.as_ref() else { return };
    for (side, ep) in conn.ep.iter().enumerate() {
        let s = ep.stats();
        stats.bytes_sent += s.bytes_sent;
        stats.retransmitted_bytes += s.retransmitted_bytes;
        stats.retransmitted_segments += s.retransmitted_segments;
        stats.segments_sent += s.segments_sent;
        stats.coarse_timeouts += s.coarse_timeouts;
        stats.fast_retransmits += s.fast_retransmits;
        stats.idle_restarts += s.idle_restarts;
        stats.bytes_received[side] += ep.bytes_received();
        stats.app_bytes[side] += tc.app.written[side];
    }
    stats.echo_count += tc.app.echo_count;
    stats.echo_delay_sum_ns += tc.app.echo_delay_sum_ns;
    stats.echo_under_1s += tc.app.echo_under_1s;
}

impl Simulation {
    fn free_conn(&mut self, c: u32) {
        let conn = &mut self.tcp[c as usize];
        let Some(tc) = conn.app.as_ref() else { return };
        let src = &mut self.traffic[tc.source as usize].stats;
        fold_stats(src, conn);
        src.alive -= 1;
        // Completed = every byte written reached the other side. A connection can still end in a RST
        // after that: x-Sim's short TIME_WAIT (1 s, seed 000 §2.2.2) may be over before a lost
        // final ACK's FIN retransmission arrives, as it would be in a real stack with a short 2MSL.
        let delivered = conn.ep[1].bytes_received() >= tc.app.written[0] && conn.ep[0].bytes_received() >= tc.app.written[1];
        if !delivered {
            src.aborted += 1;
        } else if (tc.kind as usize) < 4 {
            src.completed[tc.kind as usize] += 1;
        }
        conn.app = None;
        conn.done = true;
        conn.timers[0].cancel();
        conn.timers[1].cancel();
        conn.app_timer.cancel();
        // Release the endpoints' heap state now (the slot keeps two empty endpoints).
        let cfg = conn.ep[0].config().clone();
        conn.ep = [Endpoint::new(cfg.clone(), 0), Endpoint::new(cfg, 0)];
        conn.gen = conn.gen.wrapping_add(1);
        if conn.bsd_ticks {
            let (from, to) = (conn.from as usize, conn.to as usize);
            for (h, side) in [(from, 0u8), (to, 1u8)] {
                if let Some(p) = self.tick_hosts[h].iter().position(|&e| e == (c, side)) {
                    self.tick_hosts[h].swap_remove(p);
                }
            }
        }
        self.free_conns.push(c);
    }
}
