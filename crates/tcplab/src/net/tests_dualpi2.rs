//! RFC 9332's behaviours of [`super::DualPi2`]: classification, the L queue's step/ramp, the
//! coupling law measured, the time-shifted FIFO.

use super::*;
use crate::engine::RngStreams;

fn arr(id: u32, ecn: Ecn) -> Arrival {
    Arrival { id, bytes: 1000, link_busy: true, busy_bytes: 1000, ecn, flow: 0 }
}

fn dq(p: DualPi2Params) -> DualPi2 {
    DualPi2::new(p, QueueLimit::Packets(100_000), RngStreams::new(3).stream("t", 0))
}

/// §4.1: ECT(1) and CE go to the L queue, Not-ECT and ECT(0) to the classic queue.
#[test]
fn ect1_and_ce_are_classified_l4s() {
    let mut q = dq(DualPi2Params::RFC9332);
    for (i, e) in [Ecn::Ect1, Ecn::Ce, Ecn::NotEct, Ecn::Ect0, Ecn::Ect1].into_iter().enumerate() {
        q.enqueue(SimTime::ZERO, arr(i as u32, e)).unwrap();
    }
    assert_eq!(q.lens(), (3, 2));
    // With equal waits the L queue goes first: 0, 1, 4, then the classic 2, 3.
    let order: Vec<u32> = (0..5).map(|_| q.dequeue(SimTime::ZERO).unwrap().0).collect();
    assert_eq!(order, vec![0, 1, 4, 2, 3]);
    assert!(q.dequeue(SimTime::ZERO).is_none());
}

/// The L queue's native AQM with `l_range = 0` is a step at `l_min_th`: every L packet that
/// waited at least 1 ms (with another behind it) is marked, none below, whatever p' is (0 here:
/// no classic traffic).
#[test]
fn l_queue_step_marking() {
    let p = DualPi2Params { l_min_th: SimTime::from_millis(1), l_range: SimTime::ZERO, ..DualPi2Params::RFC9332 };
    let mut q = dq(p);
    // 20 L packets at t = 0, served one per 100 µs: waits 0, 0.1, ..., 1.9 ms.
    for i in 0..20 {
        q.enqueue(SimTime::ZERO, arr(i, Ecn::Ect1)).unwrap();
    }
    let mut marked = Vec::new();
    for i in 0..20u64 {
        q.dequeue(SimTime::from_micros(100 * i)).unwrap();
        if q.dequeue_mark() {
            marked.push(i);
        }
    }
    // Waits ≥ 1 ms: packets 10..18 (the 20th leaves alone, Th_len = 1 packet).
    assert_eq!(marked, (10..19).collect::<Vec<u64>>());
    assert_eq!(q.base_prob, 0.0);
    // The ramp (default 800 µs + 400 µs): half-way marks about half.
    let p = DualPi2Params::RFC9332;
    assert_eq!((p.native_l(SimTime::from_micros(799)), p.native_l(SimTime::from_micros(1000)), p.native_l(SimTime::from_micros(1200))), (0.0, 0.5, 1.0));
}

/// The coupling law (§2.4), measured: classic packets offered at the link rate and L packets at
/// a tenth of it, open loop, one 1000 B packet served per ms. The PI controller settles where
/// the classic drops take away the excess (p_C ≈ 0.1); over the last 40 s the fraction of
/// classic packets dropped and of L packets marked obey p_C = (p_L/2)² (within 10 %), and the L
/// packets wait less than a millisecond while the classic queue sits near its 15 ms target.
#[test]
fn coupling_law_measured() {
    let mut q = dq(DualPi2Params::RFC9332);
    let (mut id, mut l_sent, mut l_marked) = (0u32, 0u64, 0u64);
    let mut is_l = std::collections::HashSet::new();
    let (mut c_arrived, mut c_dropped) = (0u64, 0u64);
    let (mut l_delay_max, mut c_delay, mut c_n) = (SimTime::ZERO, 0.0, 0u64);
    for ms in 0..60_000u64 {
        let now = SimTime::from_millis(ms);
        let measuring = ms >= 20_000;
        q.enqueue(now, arr(id, Ecn::NotEct)).unwrap();
        c_arrived += measuring as u64;
        id += 1;
        if ms % 10 == 0 {
            q.enqueue(now, arr(id, Ecn::Ect1)).unwrap();
            is_l.insert(id);
            id += 1;
        }
        if let Some((pid, _)) = q.dequeue(now) {
            let mark = q.dequeue_mark();
            let d = q.last_sojourn().unwrap();
            if is_l.remove(&pid) {
                if measuring {
                    l_sent += 1;
                    l_marked += mark as u64;
                    l_delay_max = l_delay_max.max(d);
                }
            } else if measuring {
                c_delay += d.as_secs_f64();
                c_n += 1;
            }
        }
        while let Some(_) = q.pop_inner_drop() {
            c_dropped += measuring as u64;
        }
    }
    let p_l = l_marked as f64 / l_sent as f64;
    let p_c = c_dropped as f64 / c_arrived as f64;
    let law = (p_l / 2.0).powi(2);
    assert!((p_c - 0.1).abs() < 0.02, "classic drop fraction {p_c}");
    assert!((p_c / law - 1.0).abs() < 0.1, "p_C {p_c} vs (p_L/2)² {law} (p_L {p_l})");
    assert!(l_delay_max < SimTime::from_millis(1), "L wait {l_delay_max}");
    let cd = c_delay / c_n as f64;
    assert!((0.010..0.020).contains(&cd), "classic mean sojourn {cd}");
    assert_eq!(q.class_stats[1].drops.get("dualpi2").copied().unwrap_or(0), q.book.stats.drops["dualpi2"]);
}

/// Time-shifted FIFO: with both queues backlogged the classic head is served only once it has
/// waited `time_shift` (30 ms) longer than the L head.
#[test]
fn time_shifted_fifo() {
    let p = DualPi2Params { alpha: 1e-12, beta: 1e-12, ..DualPi2Params::RFC9332 }; // no drops
    let mut q = dq(p);
    let mut id = 0u32;
    for _ in 0..100 {
        q.enqueue(SimTime::ZERO, arr(id, Ecn::NotEct)).unwrap();
        id += 1;
    }
    let mut served = Vec::new();
    for ms in 0..100u64 {
        let now = SimTime::from_millis(ms);
        q.enqueue(now, arr(id, Ecn::Ect1)).unwrap(); // two L packets per ms: the L queue never empties
        id += 1;
        q.enqueue(now, arr(id, Ecn::Ect1)).unwrap();
        id += 1;
        let (lw, cw) = (head_wait(&q.lq, now), head_wait(&q.cq, now));
        let (pid, _) = q.dequeue(now).unwrap();
        let classic = pid < 100;
        assert_eq!(classic, lw + SimTime::from_millis(30) < cw, "at {ms} ms: L head waited {lw}, classic {cw}");
        served.push((ms, classic));
    }
    // The classic head (stamped 0) has waited ms; the L head (packet ms of the L stream, stamped
    // ⌊ms/2⌋) ⌈ms/2⌉: L goes first until ⌈ms/2⌉ + 30 < ms, i.e. the classic queue is first served at 62 ms.
    let first_classic = served.iter().find(|(_, c)| *c).unwrap().0;
    assert_eq!(first_classic, 62);
    assert!(served[62..].iter().filter(|(_, c)| *c).count() > 10);
    assert!(q.lens().1 < 100, "classic packets were served");
}
