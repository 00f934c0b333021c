//! `cargo run --release --example aqm_cost -- [--packets N] [--only NAME]`: each registered queue
//! discipline's own cost per packet (issue 27), outside the simulator: built from the registry
//! with its defaults and a 1000-packet limit on a 100 Mbit/s link, it is offered N packets
//! (1500 B, 16 flows, a quarter ECT(1), a quarter ECT(0)) at 1.1 times the rate it is served (one
//! dequeue per 120 µs of simulated time, eleven arrivals per ten slots), its inner drops
//! and marks collected as the simulator would. Prints ns per offered packet (median of 5) beside
//! DropTail's. `benches/aqm_cost.py` also counts instructions per packet under callgrind.

use std::time::Instant;

use tcplab::engine::{RngStreams, SimTime};
use tcplab::net::packet::Ecn;
use tcplab::net::queue::{Arrival, QueueDisc, QueueLimit};
use tcplab::net::registry::{Discipline, Params, QueueSetup, DISCIPLINES};

fn build(d: &Discipline) -> Box<dyn QueueDisc> {
    let setup = QueueSetup { limit: QueueLimit::Packets(1000), link_rate_bps: 100_000_000, rng: RngStreams::new(1).stream("bench", 0) };
    d.make(setup, &Params { set: &[] }).expect("defaults build")
}

/// Offer `n` packets; returns a checksum so the work is not optimised away.
fn drive(q: &mut dyn QueueDisc, n: u32) -> u64 {
    let mut sum = 0u64;
    let mut id = 0u32;
    let mut slot = 0u64;
    while id < n {
        let now = SimTime(slot * 120_000);
        let arrivals = if slot % 10 == 0 { 2 } else { 1 };
        for _ in 0..arrivals {
            let ecn = match id % 4 {
                0 => Ecn::Ect1,
                1 => Ecn::Ect0,
                _ => Ecn::NotEct,
            };
            let a = Arrival { id, bytes: 1500, link_busy: true, busy_bytes: 1500, ecn, flow: (id % 16) as u64 * 0x9e37_79b9 };
            sum += q.enqueue(now, a).is_ok() as u64;
            while let Some((d, _, _)) = q.pop_inner_drop() {
                sum += d as u64;
            }
            id += 1;
        }
        if let Some((d, b)) = q.dequeue(now) {
            sum += d as u64 + b as u64 + q.dequeue_mark() as u64;
        }
        while let Some((d, _, _)) = q.pop_inner_drop() {
            sum += d as u64;
        }
        slot += 1;
    }
    sum
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let n: u32 = arg("--packets").map_or(1_000_000, |s| s.parse().expect("--packets N"));
    let only = arg("--only");
    let mut base = None;
    println!("{:<10} {:>12} {:>10}", "discipline", "ns/packet", "x droptail");
    for d in DISCIPLINES.iter().filter(|d| only.as_deref().is_none_or(|o| o == d.name)) {
        let mut times = Vec::new();
        let mut check = 0;
        for _ in 0..if only.is_some() { 1 } else { 5 } {
            let mut q = build(d);
            let t0 = Instant::now();
            check = drive(q.as_mut(), n);
            times.push(t0.elapsed().as_nanos() as f64 / n.max(1) as f64);
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let ns = times[times.len() / 2];
        let b = *base.get_or_insert(ns);
        println!("{:<10} {:>12.1} {:>10.2}   (checksum {check})", d.name, ns, ns / b);
    }
}
