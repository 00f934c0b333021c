//! `cargo run --release -p tcplab --example idle_conns [N] [VARIANT]`: the memory of N idle
//! connections (default 10^5 newreno), printed, not asserted (issue 28: "idle flows cost ≤ 2 KB
//! each"). Each connection is a `TcpConn` with its two endpoints, configured as the benchmark
//! dumbbell's flows (1448-byte MSS, 1 MB buffers, window scaling), handshaken (SYN, SYN-ACK, ACK
//! exchanged directly between the endpoints) and then left idle. A counting allocator measures
//! the heap bytes live after building them; the inline size is `size_of::<TcpConn>()`.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tcplab::engine::SimTime;
use tcplab::sim::TcpConn;
use tcplab_tcp::{Endpoint, EndpointConfig};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn rss_kb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn config(variant: &str) -> EndpointConfig {
    let mut cfg = EndpointConfig::for_variant(variant).expect("variant");
    cfg.mss = 1448;
    cfg.send_buffer = 1 << 20;
    cfg.recv_buffer = 1 << 20;
    cfg.window_scaling = true;
    cfg
}

/// A connection slot as `build::tcp` makes one (alike flows share their two configurations),
/// after the three-way handshake.
fn idle_conn(cfg: &[Arc<EndpointConfig>; 2], i: u32) -> TcpConn {
    let mut ep = [Endpoint::new_shared(cfg[0].clone(), i as u64, 0), Endpoint::new_shared(cfg[1].clone(), i as u64, 0x8000_0000)];
    ep[1].listen();
    ep[0].connect(0);
    let mut now = 0;
    for _ in 0..4 {
        now += 1_000_000;
        for side in 0..2 {
            while let Some(seg) = ep[side].poll_transmit(now) {
                ep[1 - side].on_segment(now, &seg);
            }
        }
    }
    assert!(ep[0].is_established() && ep[1].is_established(), "handshake");
    TcpConn::bulk(format!("tcp{i}"), cfg[0].variant.name.clone(), 2 * i, 2 * i + 1, SimTime::ZERO, None, None, ep, false)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(100_000, |s| s.parse().expect("N"));
    let variant = args.get(2).map_or("newreno", |s| s.as_str());
    let cfg = config(variant);
    let mut rcfg = cfg.clone();
    rcfg.close_on_peer_fin = true;
    let cfg = [Arc::new(cfg), Arc::new(rcfg)];
    let (heap0, rss0) = (LIVE.load(Ordering::Relaxed), rss_kb());
    let mut conns: Vec<TcpConn> = Vec::with_capacity(n);
    for i in 0..n {
        conns.push(idle_conn(&cfg, i as u32));
    }
    let heap = LIVE.load(Ordering::Relaxed) - heap0;
    let rss = rss_kb().saturating_sub(rss0) * 1024;
    let inline = std::mem::size_of::<TcpConn>();
    println!("idle connections: {n} x {variant} (handshaken, idle)");
    println!("  size_of::<TcpConn>() = {inline} B (Endpoint {} B)", std::mem::size_of::<Endpoint>());
    println!("  heap live           = {:.0} B per connection (inline slot included)", heap as f64 / n as f64);
    println!("  RSS growth          = {:.0} B per connection", rss as f64 / n as f64);
    std::hint::black_box(&conns);
}
