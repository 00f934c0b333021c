//! The endpoint's memory layout (issue 28): at thousands of flows an endpoint is cold when its
//! next segment arrives, so each cache line a segment touches is a miss; and an idle
//! connection (two endpoints and its slot) must stay under 2 KB. `cargo test --release -p tcplab
//! -p tcplab-tcp -p tcplab-cli --lib endpoint::layout -- --nocapture` prints every field's
//! offset and cache line; the assertions hold the sizes.

use super::Endpoint;
use std::mem::{offset_of, size_of};

macro_rules! offsets {
    ($($f:ident),* $(,)?) => {
        vec![$((stringify!($f), offset_of!(Endpoint, $f))),*]
    };
}

fn field_offsets() -> Vec<(&'static str, usize)> {
    let mut v = offsets!(
        cfg, cc, rec, tw_deadline, reader, pending_retx, rst_pending, ecn_ack_pending, trace, pacing, tcp_now,
        idle_ticks, state, ts_ok, rcv_scale, snd_scale, close_requested, force_probe, syn_pending, fin_rcvd, sack_ok,
        gate_open, sack_in_n, hooks, ts_recent, rcv_nxt, rcv_adv, app_read, read_last, peer_fin, hs_rtt, irs, eff_mss,
        reass, rto_deadline, ack, snd_una, snd_nxt, snd_max, snd_wl1, snd_wl2, app_written, wr, w, iss, snd_wnd, max_sndwnd, dupacks,
        fin_seq, ecn, timer, log, fine_srtt, last_send, sack_in, stats, hs_sent_at, sack_rcv,
    );
    v.sort_by_key(|&(_, o)| o);
    v
}

#[test]
fn print_layout() {
    println!("size_of::<Endpoint>() = {} B ({} cache lines)", size_of::<Endpoint>(), size_of::<Endpoint>().div_ceil(64));
    for (name, off) in field_offsets() {
        println!("  line {:2}  +{:4}  {}", off / 64, off, name);
    }
}

/// Two endpoints and their slot fit an idle connection's 2 KB (the slot is `tcplab`'s
/// `TcpConn`, which `tcplab`'s own test bounds with the heap counted).
#[test]
fn endpoint_fits_idle_budget() {
    let n = size_of::<Endpoint>();
    assert!(n <= 896, "Endpoint is {n} B; two of them and their slot must stay under 2 KB per idle flow");
    // The cold tail is last: the SACK receiver's pointer ends the struct (no padding after it).
    assert_eq!(offset_of!(Endpoint, sack_rcv) + size_of::<usize>(), n);
}
