//! BBR v3 over the fixed-rate path of `link.rs` and the finite FIFO of `bottleneck.rs`.

use tcplab_tcp::cc::bbr::v3::{Bbr3Cc, Mode3, Phase};
use tcplab_tcp::*;
use crate::bottleneck::*;
use crate::link::*;
use crate::script::*;

const RATE: f64 = 1_250_000.0; // 10 Mbit/s
const DELAY: Nanos = 20 * MS;

fn v3_of(e: &Endpoint) -> &Bbr3Cc {
    e.congestion_control().as_any().and_then(|a| a.downcast_ref::<Bbr3Cc>()).expect("bbr3")
}

fn run(secs: u64) -> Outcome {
    let link = Link { delay: DELAY, rate: RATE, loss_fwd: 0.0, loss_rev: 0.0 };
    let bytes = (RATE * 1000.0 / 1040.0) as u64 * secs / 1000 * 1000;
    run_link(cfg("bbr3"), cfg("bbr3"), bytes, None, link, 7, None)
}

#[test]
fn explore() {
    let o = run(13);
    let b = v3_of(&o.a);
    for t in &b.transitions { println!("{:.3} {:?}", t.0 as f64 / 1e9, t.1); }
    println!("bw {} min {:?} hi {} lo {} stamps {:?} retx {}", b.bw(), b.min_rtt, b.inflight_hi, b.inflight_lo, b.probe_rtt_min_stamps, o.a.stats().retransmitted_segments);
    for limit in [25usize, 50, 100] {
        let link = Bottleneck { rate: RATE, delay: DELAY, limit, mark_k: None };
        for v in ["bbr", "bbr3"] {
            let (a, _b, obs) = run_bottleneck(cfg(v), cfg(v), link, 30 * SEC);
            let st = a.stats();
            println!("{v} limit {limit}: acked {} retx {} drops {} data {} loss {:.2}%", st.bytes_acked, st.retransmitted_segments, obs.drops, obs.data_packets, 100.0 * obs.drops as f64 / obs.data_packets as f64);
            if v == "bbr3" { let b = v3_of(&a); println!("  cuts {:?}", &b.hi_cuts[..b.hi_cuts.len().min(6)]); println!("  hi {} lo {} trans {}", b.inflight_hi, b.inflight_lo, b.transitions.len()); }
        }
    }
}

#[test]
fn explore2() {
    use tcplab_tcp::recovery::RecoveryKind;
    let link = Bottleneck { rate: RATE, delay: DELAY, limit: 25, mark_k: None };
    for (v, rec) in [("bbr3", RecoveryKind::Rack), ("bbr3", RecoveryKind::Rfc6675), ("bbr", RecoveryKind::Rack)] {
        let mut c = cfg(v);
        c.variant.recovery = rec;
        for until in [1u64, 2, 4, 8] {
            let (a, _b, obs) = run_bottleneck(c.clone(), cfg(v), link, until * SEC);
            let st = a.stats();
            print!("{v} {rec:?} t={until}: acked {} retx {} drops {} sent {} cwnd {} ", st.bytes_acked, st.retransmitted_segments, obs.drops, obs.data_packets + obs.drops, a.cwnd());
            if v == "bbr3" { let b = v3_of(&a); println!("bw {} maxbw {} hi {} lo {} mode {:?} rate {:?} min {:?}", b.bw(), b.max_bw(), b.inflight_hi, b.inflight_lo, b.mode, b.pacing_rate_now(), b.min_rtt); } else { println!(); }
        }
        if v == "bbr3" { let (a, _b, _obs) = run_bottleneck(c.clone(), cfg(v), link, 8 * SEC); for t in &v3_of(&a).transitions { print!("{:.3} {:?}, ", t.0 as f64 / 1e9, t.1); } println!(); }
    }
}
