//! The `Simulation`: owns every piece of state of one run (no globals — many simulations can
//! run in one process) and dispatches events between the network and the applications.
//! This file holds the state, the event loop and the packet path; [`tcp`] (the glue to the
//! sans-IO endpoints of `tcplab-tcp`) adds the TCP and traffic-connection methods, [`lan`] the
//! shared media, and `measure` the cold measurement-window and trace-name methods.

pub mod lan;
mod measure;
pub mod tcp;
pub use lan::Lan;
pub use tcp::{fold_stats, is_bsd, tick_hosts, TcpConn, TrafficConn};

use std::collections::HashMap;

use crate::apps::traffic::TrafficSource;
use crate::apps::udp::UdpSource;
use crate::engine::{EventQueue, RngStreams, SimTime};
use crate::net::link::Link;
use crate::net::monitor::PacketTag;
use crate::net::node::{Node, NodeKind, NO_ROUTE};
use crate::net::packet::{DropReason, Ecn, Packet, PacketId, PacketKind, PacketPool};
use crate::net::queue::{Admit, Arrival};

/// Events are small `Copy` values; each component keeps at most a couple pending.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// Link `0` finished serializing its current packet.
    TxDone(u32),
    /// The head of link `0`'s propagation pipe reaches the far node.
    Arrive(u32),
    /// Node processing delay over: hand packet `pkt` to node `node`.
    Processed { node: u32, pkt: PacketId },
    /// A sending node's processing delay over (`processing_at = "send"`): packet `pkt` joins
    /// link `link`'s queue.
    SendProcessed { link: u32, pkt: PacketId },
    /// UDP source fires.
    Source(u32),
    /// A bursts source's next queued packet is due (bursts are paced at the access rate).
    BurstNext(u32),
    /// TCP connection `conn`, endpoint `side` (0 sender, 1 receiver), fine timer generation.
    TcpTimer { conn: u32, side: u8, gen: u32 },
    /// TCP connection starts (active open).
    TcpStart(u32),
    /// A timed transfer's sending time is over: the application closes.
    TcpStop(u32),
    /// BSD coarse timers of host `host`: slow (500 ms) or fast (200 ms) tick.
    Tick { host: u32, slow: bool },
    /// Traffic source `0` opens its next conversation (or its long-lived senders).
    ConvArrival(u32),
    /// A traffic connection's application wakes up (keystroke, end of a sleep, on/off period).
    AppWake { conn: u32, gen: u32 },
    /// A shared medium's timer for one of its stations (see [`lan`]).
    /// (16-bit indices keep `Event` at 12 bytes.)
    Lan { lan: u16, station: u16, gen: u32 },
    /// Edge of the measurement window (`run.measure`): false = start, true = end.
    Measure(bool),
    /// End of the run.
    Stop,
}

/// Counters at the edges of the measurement window (`run.measure`, seed 003 §4.2: "statistics
/// were collected for 60 seconds after a further 25 seconds").
#[derive(Clone, Debug, Default)]
pub struct MeasureWindow {
    pub from: SimTime,
    pub to: SimTime,
    /// Per link direction: counters at the start and at the end.
    pub links: Vec<[Option<crate::net::monitor::LinkCounters>; 2]>,
    /// Per `[[tcp]]` flow: bytes acknowledged at the start and at the end.
    pub acked: Vec<[Option<u64>; 2]>,
}

/// Network-wide packet accounting for the conservation invariant:
/// `created == delivered + dropped + in flight`, where in flight is, each from its own count,
/// the packets in the links' queues, on their transmitters, in their propagation pipes, and
/// in a node's processing delay (`in_processing`) — the pool's live count is not used, so a
/// packet that vanishes without a fate breaks the identity.
#[derive(Clone, Copy, Debug, Default)]
pub struct Conservation {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Packets waiting out a node's processing delay (a `Processed` event pending).
    pub in_processing: u64,
}

pub struct Simulation {
    pub name: String,
    pub seed: u64,
    pub events: EventQueue<Event>,
    pub pool: PacketPool,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// Shared media (`[[lan]]`); their stations' link directions carry `Link::lan`.
    pub lans: Vec<Lan>,
    pub udp: Vec<UdpSource>,
    pub tcp: Vec<TcpConn>,
    /// The first `static_tcp` slots of `tcp` are the scenario's `[[tcp]]` flows.
    pub static_tcp: usize,
    pub traffic: Vec<TrafficSource>,
    /// Traffic connection slots free for reuse.
    pub(crate) free_conns: Vec<u32>,
    /// Segments that arrived for a connection that no longer exists.
    pub stale_segments: u64,
    pub rngs: RngStreams,
    pub end: SimTime,
    pub stop_when_done: bool,
    /// Some node delays the packets it sends (`Node::delay_on_send`); when false, sending
    /// reads no node state.
    send_delay: bool,
    /// Some node spends a processing delay on the packets it receives
    /// (`Node::delay_on_arrival`); when false, an arrival reads no node state (a host's node is
    /// cold memory at thousands of flows; issue 28).
    arrive_delay: bool,
    pub conservation: Conservation,
    pub node_drops: [u64; DropReason::COUNT],
    /// Scratch buffer for UDP bursts (reused: no allocation per event).
    scratch: Vec<u32>,
    pub(crate) link_index: HashMap<String, u32>,
    pub finished_at: Option<SimTime>,
    pub tcp_active: usize,
    pub(crate) tick_hosts: Vec<Vec<(u32, u8)>>,
    pub(crate) tick_scratch: Vec<(u32, u8)>,
    /// Per host, the BSD [slow, fast] tick phase (ns) and whether that tick is scheduled: a host
    /// whose tick list is empty schedules none until a connection there needs one again.
    pub(crate) tick_phase: Vec<[u64; 2]>,
    pub(crate) tick_pending: Vec<[bool; 2]>,
    /// The measurement window, if the scenario asks for one.
    pub measure: Option<MeasureWindow>,
    ended: bool,
    /// Real datagrams (emulation) that reached their destination node, for the emulator to
    /// write out; always empty in a simulation.
    pub raw_out: Vec<RawDelivery>,
}

/// A real datagram delivered to node `node` at `at` (see [`PacketKind::Raw`]).
#[derive(Clone, Debug)]
pub struct RawDelivery {
    pub at: SimTime,
    pub node: u32,
    /// The packet as it arrived (TTL after the routers, ECN after the queues).
    pub packet: Packet,
    pub bytes: Vec<u8>,
}

/// Events between progress calls within a dense slice of simulated time (a few ms of wall time).
pub const PROGRESS_EVENTS: u64 = 1 << 18;

impl Simulation {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        name: String,
        seed: u64,
        nodes: Vec<Node>,
        links: Vec<Link>,
        udp: Vec<UdpSource>,
        tcp: Vec<TcpConn>,
        traffic: Vec<TrafficSource>,
        end: SimTime,
        stop_when_done: bool,
    ) -> Simulation {
        let link_index = links.iter().enumerate().map(|(i, l)| (l.name.clone(), i as u32)).collect();
        let send_delay = nodes.iter().any(|n| n.delay_on_send);
        let arrive_delay = nodes.iter().any(|n| n.delay_on_arrival);
        let mut sim = Simulation {
            name,
            seed,
            events: EventQueue::new(),
            pool: PacketPool::default(),
            nodes,
            links,
            lans: Vec::new(),
            udp,
            static_tcp: tcp.len(),
            tcp,
            traffic,
            free_conns: Vec::new(),
            stale_segments: 0,
            rngs: RngStreams::new(seed),
            end,
            stop_when_done,
            send_delay,
            arrive_delay,
            conservation: Conservation::default(),
            node_drops: [0; DropReason::COUNT],
            scratch: Vec::with_capacity(64),
            link_index,
            finished_at: None,
            tcp_active: 0,
            tick_hosts: Vec::new(),
            tick_scratch: Vec::new(),
            tick_phase: Vec::new(),
            tick_pending: Vec::new(),
            measure: None,
            ended: false,
            raw_out: Vec::new(),
        };
        for i in 0..sim.udp.len() {
            let t = sim.udp[i].first_fire();
            if t < sim.udp[i].stop && t < end {
                sim.events.schedule(t, Event::Source(i as u32));
            }
        }
        sim.schedule_tcp();
        sim.events.schedule(end, Event::Stop);
        sim
    }

    pub fn link_id(&self, name: &str) -> Option<u32> {
        self.link_index.get(name).copied()
    }

    /// Run to the end time (or until all transfers are done if `stop_when_done`), then close
    /// the monitors' books.
    pub fn run(&mut self) {
        self.run_until(SimTime::MAX);
        let now = self.now();
        self.finish_measure(now);
        for l in &mut self.links {
            l.monitor.finish(now);
        }
    }

    /// Run like [`Simulation::run`], calling `progress` between slices of simulated time
    /// (1/200 of the run). `progress` returns false to abandon the run (e.g. on Ctrl-C); the
    /// return value tells whether the run completed.
    pub fn run_with_progress(&mut self, mut progress: impl FnMut(&Simulation) -> bool) -> bool {
        self.run_with_progress_mut(|sim| progress(sim))
    }

    /// [`Simulation::run_with_progress`] with the simulation lent mutably between slices, so
    /// that a caller can take the trace rows recorded so far (the native CLI streams them to
    /// disk, issue 28).
    ///
    /// Never inlined: `tcplab bench --callgrind` counts the instructions executed inside this
    /// function, found by its symbol name (`*Simulation::run_with_progress*`); inlined into its
    /// caller (as a link-time inlining change once did) it has no symbol and nothing is counted.
    #[inline(never)]
    pub fn run_with_progress_mut(&mut self, mut progress: impl FnMut(&mut Simulation) -> bool) -> bool {
        let slice = (self.end.0 / 200).max(1_000_000);
        // The slice boundary advances on its own: the clock only moves to event times, and a
        // quiet stretch longer than a slice must not stall the loop.
        let mut t = self.now();
        loop {
            t = SimTime(t.0.saturating_add(slice));
            // A dense slice (millions of events) also reports back every PROGRESS_EVENTS events,
            // so a wall-clock limit or Ctrl-C is seen within milliseconds, however dense the run.
            loop {
                match self.run_until_bounded(t, PROGRESS_EVENTS) {
                    Some(true) => {
                        let now = self.now();
                        self.finish_measure(now);
                        for l in &mut self.links {
                            l.monitor.finish(now);
                        }
                        return true;
                    }
                    Some(false) => break,
                    None => {
                        if !progress(self) {
                            return false;
                        }
                    }
                }
            }
            if !progress(self) {
                return false;
            }
        }
    }

    /// Process every event up to and including time `t` (or until the run ends). Returns true
    /// once the run has ended. Lets a caller step a simulation and look at it between steps.
    pub fn run_until(&mut self, t: SimTime) -> bool {
        self.run_until_bounded(t, u64::MAX).expect("unbounded")
    }

    /// Like [`Simulation::run_until`], stopping after `max_events` events: `Some(ended)` when
    /// `t` (or the end) was reached, `None` when the budget ran out first.
    pub fn run_until_bounded(&mut self, t: SimTime, max_events: u64) -> Option<bool> {
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

    pub fn now(&self) -> SimTime {
        self.events.now()
    }

    // ---------------------------------------------------------------- packets

    /// A host injects a new packet into the network.
    pub fn send_packet(&mut self, now: SimTime, p: Packet) {
        self.conservation.created += 1;
        let src = p.src;
        let id = self.pool.alloc(p);
        self.forward(now, src, id);
    }

    /// A host injects a new packet whose first link, `hop` (`NO_ROUTE`: none), the caller
    /// already knows: as [`Simulation::send_packet`] without reading the host's routing.
    pub fn send_packet_via(&mut self, now: SimTime, p: Packet, hop: u32) {
        self.conservation.created += 1;
        let id = self.pool.alloc(p);
        if self.send_delay {
            // Out of line, so that the common case stays small enough to inline.
            let src = self.pool.get(id).src;
            self.send_placed(now, src, hop, id);
            return;
        }
        self.out_by(now, hop, id);
    }

    /// An emulated host injects a real datagram ([`PacketKind::Raw`]; its bytes ride beside
    /// the packet in the pool).
    pub fn send_raw(&mut self, now: SimTime, p: Packet, bytes: &[u8]) {
        self.conservation.created += 1;
        let src = p.src;
        let id = self.pool.alloc_raw(p, bytes);
        self.forward(now, src, id);
    }

    fn drop_at_node(&mut self, id: PacketId, reason: DropReason) {
        self.node_drops[reason.index()] += 1;
        self.conservation.dropped += 1;
        self.pool.free(id);
    }

    /// Route packet `id` out of `node` (which is not its destination).
    #[inline(always)]
    fn forward(&mut self, now: SimTime, node: u32, id: PacketId) {
        let dst = self.pool.get(id).dst;
        let link = self.nodes[node as usize].route(dst);
        if self.send_delay {
            self.send_placed(now, node, link, id);
            return;
        }
        self.out_by(now, link, id);
    }

    /// `node` sends packet `id` by `link` in a simulation where some node delays what it sends
    /// (`processing_at = "send"`): after that node's delay if it is one of them, at once
    /// otherwise. Kept out of the per-packet path of every other simulation (one flag there).
    #[cold]
    #[inline(never)]
    fn send_placed(&mut self, now: SimTime, node: u32, link: u32, id: PacketId) {
        if link != NO_ROUTE && self.nodes[node as usize].delay_on_send {
            self.delay_send(now, node, link, id);
        } else {
            self.out_by(now, link, id);
        }
    }

    /// `node` sends packet `id` by `link` after its processing delay (`processing_at = "send"`,
    /// seed 000 §6.2.6: "introduced before a packet is sent by the node"); as on arrival, the
    /// node handles one packet at a time (§2.2.2: "the node does no other processing").
    #[cold]
    fn delay_send(&mut self, now: SimTime, node: u32, link: u32, id: PacketId) {
        let n = &mut self.nodes[node as usize];
        let done = now.max(n.busy_until) + n.processing.sample(&mut n.rng);
        n.busy_until = done;
        self.conservation.in_processing += 1;
        self.events.schedule(done, Event::SendProcessed { link, pkt: id });
    }

    /// Packet `id` leaves by `link`, or is dropped for want of a route (`NO_ROUTE`).
    #[inline]
    fn out_by(&mut self, now: SimTime, link: u32, id: PacketId) {
        if link == NO_ROUTE {
            self.drop_at_node(id, DropReason::NoRoute);
            return;
        }
        self.link_enqueue(now, link, id);
    }

    fn link_enqueue(&mut self, now: SimTime, l: u32, id: PacketId) {
        let (size, ecn) = { let p = self.pool.get(id); (p.size, p.ecn) };
        let ect = ecn.capable();
        let link = &mut self.links[l as usize];
        let tag = if link.monitor.traced() { packet_tag(&self.pool, &self.tcp, self.static_tcp, self.udp.len(), id) } else { PacketTag::NONE };
        link.monitor.on_arrive(size);
        link.monitor.on_arrive_ecn(now, size, ect);
        // Trace rows carry the queue length after the event: an arrival is recorded once the
        // queue has taken (or refused) the packet.
        if size > link.mtu_bytes {
            link.monitor.trace(now, 0, size, None, tag);
            link.monitor.on_drop(now, size, DropReason::Mtu, tag);
            self.conservation.dropped += 1;
            self.pool.free(id);
            return;
        }
        if link.scripted && !link.script.is_empty() && link.script.hit(self.pool.get(id)) {
            link.monitor.trace(now, 0, size, None, tag);
            link.monitor.on_drop(now, size, DropReason::Scripted, tag);
            self.conservation.dropped += 1;
            self.pool.free(id);
            return;
        }
        // The monitor's queue length mirrors a non-AQM queue's (every enqueue and dequeue
        // reports it), so an idle link is recognised without touching the queue.
        debug_assert!(link.aqm || link.monitor.queue_len() as usize == link.queue.len_pkts());
        if !link.aqm && link.busy.is_none() && link.monitor.queue_len() == 0 {
            // Straight onto the wire.
            link.monitor.on_depart();
            link.monitor.on_no_wait();
            link.busy = Some((id, size));
            link.monitor.on_queue_change(now, 0, true);
            link.monitor.trace(now, 0, size, None, tag);
            link.monitor.trace(now, 1, size, None, tag);
            match lan::tx_end(link, now, size) {
                Some(end) => self.events.schedule(end, Event::TxDone(l)),
                None => self.lan_ready(now, l, size),
            }
            self.capture(now, l, id);
            return;
        }
        let a = Arrival { id, bytes: size, link_busy: link.busy.is_some(), busy_bytes: link.busy.map_or(0, |b| b.1), ecn, flow: if link.aqm { self.pool.get(id).flow_key() } else { 0 } };
        let verdict = link.queue.enqueue(now, a);
        // Only AQM queues keep an average or a sojourn of their own (`QueueDisc` docs): a
        // DropTail link skips those virtual calls.
        if link.aqm {
            if let Some(avg) = link.queue.average_pkts() {
                link.monitor.on_aqm_avg(now, avg);
            }
        }
        match verdict {
            Ok(admit) => {
                if admit == Admit::QueuedMarkCe && ect {
                    link.monitor.on_mark();
                    self.pool.get_mut(id).ecn = Ecn::Ce;
                }
                let link = &mut self.links[l as usize];
                if !link.aqm || link.queue.last_sojourn().is_none() {
                    link.monitor.on_enqueued(now);
                }
                if link.aqm {
                    self.settle_inner_drops(now, l);
                }
                let link = &mut self.links[l as usize];
                // A non-AQM queue grew by exactly this packet (its length is mirrored).
                let q = if link.aqm { link.queue.len_pkts() as u32 } else { link.monitor.queue_len() + 1 };
                debug_assert_eq!(q as usize, link.queue.len_pkts());
                link.monitor.on_queue_change(now, q, link.busy.is_some());
                link.monitor.trace(now, 0, size, None, tag);
                if link.busy.is_none() {
                    // An AQM queue saw the arrival at an idle link: it leaves at once.
                    self.start_next(now, l);
                }
            }
            Err(reason) => {
                link.monitor.trace(now, 0, size, None, tag);
                link.monitor.on_drop(now, size, reason, tag);
                self.conservation.dropped += 1;
                self.pool.free(id);
            }
        }
    }

    /// The link-trace tag of packet `id` if link `l` is traced (the trace is off by default:
    /// then nothing is looked up).
    #[inline]
    pub(crate) fn tag_if_traced(&self, l: u32, id: PacketId) -> PacketTag {
        if self.links[l as usize].monitor.traced() {
            packet_tag(&self.pool, &self.tcp, self.static_tcp, self.udp.len(), id)
        } else {
            PacketTag::NONE
        }
    }

    /// Record packet `id`, starting transmission on link `l`, in the link's pcap capture if any.
    #[inline]
    fn capture(&mut self, now: SimTime, l: u32, id: PacketId) {
        if let Some(cap) = self.links[l as usize].monitor.pcap.as_deref_mut() {
            let p = self.pool.get(id);
            match p.kind {
                PacketKind::Raw => cap.record_raw(now, p, self.pool.raw(id)),
                _ => cap.record(now, p),
            }
        }
    }

    /// Free and count the packets an AQM dropped from inside its buffer, CE-mark a departing
    /// packet it marked on dequeue.
    fn settle_inner_drops(&mut self, now: SimTime, l: u32) {
        let link = &mut self.links[l as usize];
        while let Some((id, size, reason)) = link.queue.pop_inner_drop() {
            let tag = if link.monitor.traced() { packet_tag(&self.pool, &self.tcp, self.static_tcp, self.udp.len(), id) } else { PacketTag::NONE };
            link.monitor.on_drop(now, size, reason, tag);
            self.conservation.dropped += 1;
            self.pool.free(id);
        }
    }

    /// Begin transmitting the next queued packet of idle link `l`, if any.
    pub(crate) fn start_next(&mut self, now: SimTime, l: u32) {
        let link = &mut self.links[l as usize];
        // A non-AQM queue's length is mirrored by the monitor (see `link_enqueue`): when it is
        // 0 the queue is empty, and its memory (cold at thousands of flows) is not visited.
        debug_assert!(link.aqm || link.monitor.queue_len() as usize == link.queue.len_pkts());
        let next = if !link.aqm && link.monitor.queue_len() == 0 { None } else { link.queue.dequeue(now) };
        if link.aqm {
            self.settle_inner_drops(now, l);
            if let Some((id, _)) = next {
                let link = &mut self.links[l as usize];
                if link.queue.dequeue_mark() && self.pool.get(id).ecn.capable() {
                    self.pool.get_mut(id).ecn = Ecn::Ce;
                    link.monitor.on_mark();
                }
            }
        }
        let link = &mut self.links[l as usize];
        if let Some((next, nsize)) = next {
            let tag = if link.monitor.traced() { packet_tag(&self.pool, &self.tcp, self.static_tcp, self.udp.len(), next) } else { PacketTag::NONE };
            link.busy = Some((next, nsize));
            link.monitor.on_depart();
            match if link.aqm { link.queue.last_sojourn() } else { None } {
                Some(d) => link.monitor.on_delay_of(now, d),
                None => link.monitor.on_delay(now, true),
            }
            let q = if link.aqm { link.queue.len_pkts() as u32 } else { link.monitor.queue_len() - 1 };
            debug_assert_eq!(q as usize, link.queue.len_pkts());
            link.monitor.on_queue_change(now, q, true);
            link.monitor.trace(now, 1, nsize, None, tag);
            match lan::tx_end(link, now, nsize) {
                Some(end) => self.events.schedule(end, Event::TxDone(l)),
                None => self.lan_ready(now, l, nsize),
            }
            self.capture(now, l, next);
        } else {
            link.monitor.on_queue_change(now, 0, false);
        }
    }

    /// Inlined into the event loop (which is entered once per slice of the run, so a handler
    /// inlined there pays no call per event; issue 28).
    #[inline(always)]
    pub(crate) fn tx_done(&mut self, now: SimTime, l: u32) {
        let link = &mut self.links[l as usize];
        let (id, size) = link.busy.take().expect("TxDone with idle link");
        link.monitor.on_forwarded(now, size);
        // Loss and corruption are decided when the last bit leaves.
        let (lost, corrupt) = link.draw_loss();
        if lost {
            let tag = if link.monitor.traced() { packet_tag(&self.pool, &self.tcp, self.static_tcp, self.udp.len(), id) } else { PacketTag::NONE };
            link.monitor.on_drop(now, size, DropReason::LinkLoss, tag);
            self.conservation.dropped += 1;
            self.pool.free(id);
        } else {
            if corrupt {
                self.pool.get_mut(id).corrupted = true;
            }
            let at = now + link.delay;
            if link.pipe_push(at, id) {
                self.events.schedule(at, Event::Arrive(l));
            }
        }
        // Next packet. An empty DropTail-like queue (its length mirrored by the monitor, see
        // `link_enqueue`) has none: the link goes idle, as `start_next` would record it, without
        // the call (most transmission ends on the 16-flow dumbbell's access links; issue 28).
        let link = &mut self.links[l as usize];
        if !link.aqm && link.monitor.queue_len() == 0 {
            link.monitor.on_queue_change(now, 0, false);
        } else {
            self.start_next(now, l);
        }
    }

    #[inline(always)]
    fn arrive(&mut self, now: SimTime, l: u32) {
        let link = &mut self.links[l as usize];
        let (id, next) = link.pipe_pop();
        if let Some(next_at) = next {
            self.events.schedule(next_at, Event::Arrive(l));
        }
        let to = link.to;
        if self.pool.get(id).corrupted {
            let size = self.pool.get(id).size;
            let tag = self.tag_if_traced(l, id);
            let link = &mut self.links[l as usize];
            link.monitor.on_drop(now, size, DropReason::Corruption, tag);
            self.conservation.dropped += 1;
            self.pool.free(id);
            return;
        }
        if !self.arrive_delay || !self.nodes[to as usize].delay_on_arrival {
            self.at_node(now, to, id);
            return;
        }
        let node = &mut self.nodes[to as usize];
        let done = now.max(node.busy_until) + node.processing.sample(&mut node.rng);
        node.busy_until = done;
        self.conservation.in_processing += 1;
        self.events.schedule(done, Event::Processed { node: to, pkt: id });
    }

    /// Packet `id` is at node `node` (after any processing delay). Inlined into the event loop
    /// as [`Simulation::tx_done`] is.
    #[inline(always)]
    fn at_node(&mut self, now: SimTime, node: u32, id: PacketId) {
        // Only a delivered packet is copied out of the pool (a transit hop reads two fields).
        let (dst, ttl) = { let p = self.pool.get(id); (p.dst, p.ttl) };
        if dst == node {
            self.conservation.delivered += 1;
            let p = self.pool.get(id);
            if let PacketKind::Tcp { conn, gen, to_receiver, seg } = p.kind {
                // The common case, without copying the whole packet: the segment, with the CE
                // codepoint handed up by the IP layer (RFC 3168 §6.1.3), as `deliver` does.
                let seg = tcplab_tcp::Segment { ce: p.ecn == Ecn::Ce, ..seg };
                self.pool.free(id);
                self.tcp_on_segment(now, conn, gen, to_receiver, &seg);
                return;
            }
            let p = *p;
            if let PacketKind::Raw = p.kind {
                // A real datagram (emulation): the emulator writes it out (`crate::emu`).
                let bytes = self.pool.take_raw(id);
                self.pool.free(id);
                self.raw_out.push(RawDelivery { at: now, node, packet: p, bytes });
                return;
            }
            self.pool.free(id);
            self.deliver(now, p);
            return;
        }
        if self.nodes[node as usize].kind == NodeKind::Host {
            // Hosts do not forward transit traffic (routes never lead through one).
            self.drop_at_node(id, DropReason::NoRoute);
            return;
        }
        if ttl <= 1 {
            self.drop_at_node(id, DropReason::Ttl);
            return;
        }
        self.pool.get_mut(id).ttl = ttl - 1;
        self.forward(now, node, id);
    }

    fn deliver(&mut self, now: SimTime, p: Packet) {
        match p.kind {
            PacketKind::Udp { source, .. } => {
                let s = &mut self.udp[source as usize];
                s.rcvd_pkts += 1;
                s.rcvd_bytes += p.size as u64;
                s.delay_sum_ns += (now.0 - p.created) as u128;
                if let Some(d) = s.delays.as_deref_mut() {
                    d.on_departure(SimTime(now.0 - p.created));
                }
            }
            PacketKind::Tcp { conn, gen, to_receiver, mut seg } => {
                // The IP layer hands the CE codepoint up with the segment (RFC 3168 §6.1.3).
                seg.ce = p.ecn == Ecn::Ce;
                self.tcp_on_segment(now, conn, gen, to_receiver, &seg);
            }
            PacketKind::Raw => {}
        }
    }

    fn source_fire(&mut self, now: SimTime, s: u32) {
        let mut sizes = std::mem::take(&mut self.scratch);
        let next = self.udp[s as usize].fire(now, &mut sizes);
        if matches!(self.udp[s as usize].pattern, crate::apps::udp::Pattern::Bursts { .. }) {
            // A burst leaves at the access link's rate, one packet as the previous one has been
            // serialized, so the host's own interface queue never holds it (README "Profiles",
            // bursts); a burst drawn while one is still going joins its tail.
            let src = &mut self.udp[s as usize];
            let idle = src.burst_queue.is_empty();
            src.burst_queue.extend(sizes.iter().copied());
            if idle {
                self.burst_next(now, s);
            }
        } else {
            for &size in &sizes {
                self.send_udp(now, s, size);
            }
        }
        self.scratch = sizes;
        if let Some(t) = next {
            if t < self.end {
                self.events.schedule(t, Event::Source(s));
            }
        }
    }

    #[inline(always)]
    fn send_udp(&mut self, now: SimTime, s: u32, size: u32) {
        let src = &mut self.udp[s as usize];
        let (from, to) = (src.from, src.to);
        let (seq, ecn) = (src.seq, src.ecn);
        src.seq += 1;
        src.sent_pkts += 1;
        src.sent_bytes += size as u64;
        let p = Packet { src: from, dst: to, size, ttl: 64, corrupted: false, ecn, created: now.0, kind: PacketKind::Udp { source: s, seq } };
        self.send_packet(now, p);
    }

    /// Send the next packet of a bursts source's current burst and schedule the one after it
    /// when this one has been serialized on the first link of the path.
    fn burst_next(&mut self, now: SimTime, s: u32) {
        let Some(size) = self.udp[s as usize].burst_queue.pop_front() else { return };
        self.send_udp(now, s, size);
        if self.udp[s as usize].burst_queue.is_empty() {
            return;
        }
        let (from, to) = (self.udp[s as usize].from, self.udp[s as usize].to);
        let l = self.nodes[from as usize].route(to);
        let gap = if l == NO_ROUTE { SimTime::ZERO } else { self.links[l as usize].tx_time(size) };
        if now + gap < self.end {
            self.events.schedule(now + gap, Event::BurstNext(s));
        }
    }

    /// Packets still inside the network (queues, wires, processing).
    pub fn in_flight(&self) -> u64 {
        self.pool.live() as u64
    }
}

/// Whose packet `id` is, for a link trace row (see [`PacketTag`]).
fn packet_tag(pool: &PacketPool, tcp: &[TcpConn], static_tcp: usize, n_udp: usize, id: PacketId) -> PacketTag {
    match pool.get(id).kind {
        PacketKind::Udp { source, seq } => PacketTag { flow: (static_tcp + source as usize) as u32, kind: 4, seq: seq as i64 },
        PacketKind::Tcp { conn, gen, to_receiver, seg } => {
            let c = &tcp[conn as usize];
            let current = c.gen == gen;
            let flow = if (conn as usize) < static_tcp {
                conn
            } else {
                // A traffic connection: its source's name. A segment of a connection whose slot
                // has since been reused (generation changed) belongs to no known flow.
                match &c.app {
                    Some(app) if current => (static_tcp + n_udp) as u32 + app.source,
                    _ => PacketTag::NO_FLOW,
                }
            };
            // Offsets from the first data byte of the space the number lives in (as trace_tcp's
            // and drop scripts' `seq`): the segment's own side for seq, the peer's for ack.
            let (own, peer) = if to_receiver { (0, 1) } else { (1, 0) };
            let rel = |n: u32, side: usize| -> i64 {
                if current { n.wrapping_sub(c.ep[side].iss().wrapping_add(1)) as i32 as i64 } else { n as i64 }
            };
            let (kind, seq) = if seg.len > 0 {
                (1, rel(seg.seq, own))
            } else if seg.flags.syn() || seg.flags.fin() || seg.flags.rst() {
                (3, rel(seg.seq, own))
            } else {
                (2, rel(seg.ack, peer))
            };
            PacketTag { flow, kind, seq }
        }
        PacketKind::Raw => PacketTag { flow: PacketTag::NO_FLOW, kind: 5, seq: 0 },
    }
}
