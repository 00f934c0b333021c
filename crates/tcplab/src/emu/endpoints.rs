//! tcplab's sans-IO endpoints on the emulated wire: started at their flow's start time, their
//! segments serialized as real IPv4/TCP datagrams (payload: the known pattern) and put into the
//! network at the moment they are sent, datagrams for them parsed, checked and handed over.

use std::sync::atomic::Ordering;

use tcplab_tcp::Segment;

use super::linux::pattern_byte;
use super::plan::{EmuEndpoint, EmuFlow, End};
use crate::engine::SimTime;
use crate::net::packet::{Ecn, Packet, PacketKind};
use crate::sim::Simulation;
use crate::wire::{self, IpInfo, Payload, L4};

/// A flow is done when its sender has seen every byte acknowledged (a timed one: after its
/// sending time), or failed.
pub(super) fn flow_done(f: &EmuFlow) -> bool {
    let snd_done = match f.ends.0 {
        End::Linux => f.shared.done_at.load(Ordering::Relaxed) != 0 || f.shared.error.lock().unwrap().is_some(),
        End::Tcplab => f.eps[0].as_ref().is_some_and(|e| e.ep.stats().completion_time.get().is_some() || e.ep.is_closed() && e.started),
    };
    snd_done
}

/// Start a tcplab endpoint at its time, then send everything it has to send.
pub(super) fn start_and_poll(f: &mut EmuFlow, now: u64, sim: &mut Simulation, out: &mut Vec<u8>, payload: &mut Vec<u8>) {
    if now < f.start_ns {
        return;
    }
    let (bytes, duration) = (f.bytes, f.duration_ns);
    let start = f.start_ns;
    for (side, slot) in f.eps.iter_mut().enumerate() {
        let Some(e) = slot.as_mut() else { continue };
        if !e.started {
            e.started = true;
            if side == 0 {
                e.ep.connect(now);
                e.ep.app_write(bytes.unwrap_or(u64::MAX));
                if bytes.is_some() {
                    e.ep.app_close();
                }
            } else {
                e.ep.listen();
            }
        }
        if side == 0 && bytes.is_none() && duration.is_some_and(|d| now >= start + d) && !e.ep.close_requested() {
            e.ep.app_close();
        }
        if e.ep.next_timer().is_some_and(|t| t <= now) {
            e.ep.on_timer(now);
        }
        while let Some(seg) = e.ep.poll_transmit(now) {
            send_segment(sim, now, e, &seg, out, payload);
        }
    }
}

/// Serialize `seg` of endpoint `e` (payload from the pattern) and put it into the network.
pub(super) fn send_segment(sim: &mut Simulation, now: u64, e: &mut EmuEndpoint, seg: &Segment, out: &mut Vec<u8>, payload: &mut Vec<u8>) {
    let shift = e.scales.on_segment(0, seg);
    payload.clear();
    let off = seg.seq.wrapping_sub(e.iss.wrapping_add(1)) as u64;
    payload.extend((0..seg.len as u64).map(|i| pattern_byte(off + i)));
    out.clear();
    let ip = IpInfo { src: wire::node_ip(e.node), dst: wire::node_ip(e.peer), ttl: 64, ecn: Ecn::NotEct, id: 0 };
    wire::write_tcp(out, &ip, e.lport, e.rport, seg, shift, Payload::Bytes(payload));
    let ecn = Ecn::of_segment(seg.ect, seg.ect1);
    let p = Packet { src: e.node, dst: e.peer, size: out.len() as u32, ttl: 64, corrupted: false, ecn, created: now, kind: PacketKind::Raw };
    sim.send_raw(SimTime(now), p, out);
}

/// A datagram for a tcplab host: find the endpoint by ports, check its payload, hand it over.
pub(super) fn deliver_to_endpoint(flows: &mut [EmuFlow], now: u64, dgram: &[u8], node: u32) {
    let Ok(p) = wire::parse_ipv4(dgram) else { return };
    let L4::Tcp { sport, dport, mut seg, payload } = p.l4 else { return };
    for f in flows.iter_mut() {
        for e in f.eps.iter_mut().flatten() {
            if e.node != node || e.lport != dport || e.rport != sport || !e.started {
                continue;
            }
            if seg.flags.syn() {
                e.peer_iss = Some(seg.seq);
            }
            // Scale the window by the peer's shift (learnt from the SYNs, RFC 7323 §2.2).
            let shift = e.scales.on_segment(1, &seg);
            seg.wnd <<= shift;
            if let Some(iss) = e.peer_iss {
                let off = seg.seq.wrapping_sub(iss.wrapping_add(1)) as u64;
                if dgram[payload.clone()].iter().enumerate().any(|(i, &b)| b != pattern_byte(off + i as u64)) {
                    e.corrupt = true;
                }
            }
            e.ep.on_segment(now, &seg);
            return;
        }
    }
}

