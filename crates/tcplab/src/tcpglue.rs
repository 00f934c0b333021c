//! Glue between the simulator and the sans-IO TCP endpoints of `tcplab-tcp`: start transfers,
//! carry segments as packets, drive fine timers and the BSD per-host coarse ticks.
//!
//! BSD ticks: every host that owns an endpoint with the `bsd` timer model runs a 500 ms slow
//! timer and a 200 ms fast timer, each with a random phase drawn per host from the
//! "timer-phase" stream (seed 000 §6.2.6: hosts must not all tick together).
//!
//! Fine timers are lazy: an endpoint's deadline is scheduled only when it is earlier than the
//! one already pending; a pending event that finds the deadline moved later re-arms itself. An
//! RTO restarted on every ACK therefore costs no heap operation per ACK.

use rand::Rng;
use tcplab_tcp::{Endpoint, Segment, TimerModel};

use crate::engine::{SimTime, Timer};
use crate::net::packet::{Ecn, Packet, PacketKind};
use crate::sim::{Event, Simulation};

pub struct TcpConn {
    pub name: String,
    pub variant: String,
    pub from: u32,
    pub to: u32,
    pub start: SimTime,
    /// Bytes to transfer, or `None` for a timed transfer.
    pub bytes: Option<u64>,
    pub duration: Option<SimTime>,
    /// [sender, receiver]
    pub ep: [Endpoint; 2],
    pub timers: [Timer; 2],
    pub bsd_ticks: bool,
    pub done: bool,
    pub started_at: Option<SimTime>,
    /// Timed transfer: bytes acknowledged when the sending time ended (seed 000 §6.2.5 measures
    /// a timed transfer over its time, not over the drain that follows).
    pub acked_at_stop: Option<u64>,
}

/// Per-host list of (conn, side) driven by BSD ticks.
pub fn tick_hosts(sim: &Simulation) -> Vec<Vec<(u32, u8)>> {
    let mut v = vec![Vec::new(); sim.nodes.len()];
    for (i, c) in sim.tcp.iter().enumerate() {
        if c.bsd_ticks {
            v[c.from as usize].push((i as u32, 0));
            v[c.to as usize].push((i as u32, 1));
        }
    }
    v
}

pub fn is_bsd(m: &TimerModel) -> bool {
    matches!(m, TimerModel::Bsd)
}

pub(crate) fn schedule_initial(sim: &mut Simulation) {
    for i in 0..sim.tcp.len() {
        let s = sim.tcp[i].start;
        if s < sim.end {
            sim.events.schedule(s, Event::TcpStart(i as u32));
        }
    }
    sim.tcp_active = sim.tcp.iter().filter(|c| c.start < sim.end).count();
    let hosts = tick_hosts(sim);
    for (h, eps) in hosts.iter().enumerate() {
        if eps.is_empty() {
            continue;
        }
        let mut rng = sim.rngs.stream("timer-phase", h as u64);
        let slow = SimTime(rng.gen_range(0..500_000_000u64));
        let fast = SimTime(rng.gen_range(0..200_000_000u64));
        sim.events.schedule(slow, Event::Tick { host: h as u32, slow: true });
        sim.events.schedule(fast, Event::Tick { host: h as u32, slow: false });
    }
    sim.tick_hosts = hosts;
}

pub(crate) fn start(sim: &mut Simulation, now: SimTime, c: u32) {
    let conn = &mut sim.tcp[c as usize];
    conn.started_at = Some(now);
    conn.ep[1].listen();
    conn.ep[0].connect(now.0);
    match conn.bytes {
        Some(b) => {
            conn.ep[0].app_write(b);
            conn.ep[0].app_close();
        }
        None => {
            conn.ep[0].app_write(u64::MAX);
            let d = conn.duration.expect("a timed transfer has a duration");
            sim.events.schedule(now + d, Event::TcpStop(c));
        }
    }
    flush(sim, now, c, 0);
}

/// End of a timed transfer: note what was acknowledged, close the stream (the FIN follows the
/// data already in the send buffer) and count the flow as done.
pub(crate) fn stop(sim: &mut Simulation, now: SimTime, c: u32) {
    let conn = &mut sim.tcp[c as usize];
    conn.acked_at_stop = Some(conn.ep[0].stats().bytes_acked);
    conn.ep[0].app_close();
    flush(sim, now, c, 0);
    mark_done(sim, now, c);
}

fn mark_done(sim: &mut Simulation, now: SimTime, c: u32) {
    let conn = &mut sim.tcp[c as usize];
    if conn.done {
        return;
    }
    conn.done = true;
    sim.tcp_active -= 1;
    if sim.tcp_active == 0 && sim.udp.is_empty() {
        sim.finished_at = Some(now);
    }
}

pub(crate) fn on_segment(sim: &mut Simulation, now: SimTime, c: u32, to_receiver: bool, seg: &Segment) {
    let side = if to_receiver { 1 } else { 0 };
    sim.tcp[c as usize].ep[side].on_segment(now.0, seg);
    flush(sim, now, c, side as u8);
    if side == 0 {
        check_done(sim, now, c);
    }
}

pub(crate) fn on_timer(sim: &mut Simulation, now: SimTime, c: u32, side: u8, gen: u32) {
    let conn = &mut sim.tcp[c as usize];
    if !conn.timers[side as usize].fire(gen) {
        return;
    }
    match conn.ep[side as usize].next_timer() {
        Some(t) if t <= now.0 => conn.ep[side as usize].on_timer(now.0),
        _ => {}
    }
    flush(sim, now, c, side);
    if side == 0 {
        check_done(sim, now, c);
    }
}

pub(crate) fn on_tick(sim: &mut Simulation, now: SimTime, host: u32, slow: bool) {
    let n = sim.tick_hosts[host as usize].len();
    for i in 0..n {
        let (c, side) = sim.tick_hosts[host as usize][i];
        let ep = &mut sim.tcp[c as usize].ep[side as usize];
        if slow {
            ep.on_slow_tick(now.0);
        } else {
            ep.on_fast_tick(now.0);
        }
        flush(sim, now, c, side);
        if side == 0 {
            check_done(sim, now, c);
        }
    }
    let period = if slow { SimTime::from_millis(500) } else { SimTime::from_millis(200) };
    sim.events.schedule(now + period, Event::Tick { host, slow });
}

fn check_done(sim: &mut Simulation, now: SimTime, c: u32) {
    let conn = &sim.tcp[c as usize];
    if !conn.done && conn.bytes.is_some() && conn.ep[0].stats().completion_time.is_some() {
        mark_done(sim, now, c);
    }
}

/// Send everything the endpoint has to send, then make sure its timer is scheduled.
fn flush(sim: &mut Simulation, now: SimTime, c: u32, side: u8) {
    loop {
        let conn = &mut sim.tcp[c as usize];
        let Some(seg) = conn.ep[side as usize].poll_transmit(now.0) else { break };
        let (src, dst) = if side == 0 { (conn.from, conn.to) } else { (conn.to, conn.from) };
        let p = Packet {
            src,
            dst,
            size: seg.wire_bytes(),
            ttl: 64,
            corrupted: false,
            ecn: if seg.ect { Ecn::Ect } else { Ecn::NotEct },
            created: now.0,
            kind: PacketKind::Tcp { conn: c, to_receiver: side == 0, seg },
        };
        sim.send_packet(now, p);
    }
    let conn = &mut sim.tcp[c as usize];
    if let Some(t) = conn.ep[side as usize].next_timer() {
        let t = SimTime(t.max(now.0));
        let timer = &mut conn.timers[side as usize];
        let earlier = match timer.armed_at() {
            None => true,
            Some(a) => t < a,
        };
        if earlier {
            let gen = timer.arm(t);
            sim.events.schedule(t, Event::TcpTimer { conn: c, side, gen });
        }
    }
}
