//! Event handling must not allocate per event on the hot path: after a warm-up, a steady-state
//! run performs only the rare amortized growth of result vectors (monitor intervals), far fewer
//! allocations than events. And an idle connection stays under 2 KB (issue 28).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
struct Counting;

thread_local! {
    /// Allocations (and reallocations) made by this thread: per thread, as `LIVE`, so a test
    /// running beside another (the idle-connection test takes no turn) is not counted in it.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
    /// Heap bytes allocated minus freed by this thread (requested sizes, not the allocator's
    /// rounding): per thread, so the other tests running beside one are not counted in it.
    static LIVE: Cell<i64> = const { Cell::new(0) };
}

fn count_alloc() {
    let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
}

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

fn live_add(n: i64) {
    let _ = LIVE.try_with(|l| l.set(l.get() + n));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count_alloc();
        live_add(l.size() as i64);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        live_add(-(l.size() as i64));
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count_alloc();
        live_add(n as i64 - l.size() as i64);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static A: Counting = Counting;

use tcplab::engine::SimTime;

/// The tests that count allocations take turns as well (the counters are per thread; this only
/// keeps two large runs from sharing the machine's memory at once).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn steady_state_allocations(text: &str) -> (u64, u64) {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (mut sim, _) = tcplab::run::prepare(text, "t.toml", Some(1), &[]).unwrap();
    sim.run_until(SimTime::from_millis(20_000));
    let (a0, e0) = (allocs(), sim.events.events_popped());
    sim.run_until(SimTime::from_millis(40_000));
    let (a1, e1) = (allocs(), sim.events.events_popped());
    (a1 - a0, e1 - e0)
}

fn dumbbell(flows: &str) -> String {
    format!(
        r#"
[run]
duration = "40s"
stop_when_done = false
monitor_interval = "10s"

[[nodes]]
name = "l"
kind = "router"
[[nodes]]
name = "r"
kind = "router"
[[nodes]]
name = "s"
kind = "host"
[[nodes]]
name = "d"
kind = "host"

[[links]]
a = "l"
b = "r"
rate = "10Mbps"
delay = "20ms"
queue = {{ limit = "50pkts" }}
[[links]]
a = "s"
b = "l"
rate = "100Mbps"
delay = "1ms"
[[links]]
a = "r"
b = "d"
rate = "100Mbps"
delay = "1ms"

{flows}
"#
    )
}

#[test]
fn udp_hot_path_does_not_allocate() {
    let text = dumbbell(
        r#"[[udp]]
name = "p"
from = "s"
to = "d"
pattern = "poisson"
interval = "700us"
packet_size = "1000B"
size_dist = "exponential"

[[udp]]
name = "b"
from = "s"
to = "d"
pattern = "bursts"
burst_size = "8KB"
burst_interval = "20ms"
packet_size = "1KB"
"#,
    );
    let (allocs, events) = steady_state_allocations(&text);
    eprintln!("udp: {allocs} allocations in {events} events");
    assert!(events > 100_000);
    assert!(allocs * 10_000 < events, "{allocs} allocations in {events} events");
}

#[test]
fn tcp_hot_path_does_not_allocate() {
    let text = dumbbell(
        r#"[[tcp]]
name = "t"
from = "s"
to = "d"
variant = "newreno"
duration = "40s"
"#,
    );
    let (allocs, events) = steady_state_allocations(&text);
    eprintln!("tcp: {allocs} allocations in {events} events");
    assert!(events > 50_000);
    assert!(allocs * 1_000 < events, "{allocs} allocations in {events} events");
}

/// Issue 13: the same at 4,096 flows (one host pair each, as `tcplab bench`'s tcp-dumbbell-4096):
/// the event set, the per-flow state and the monitors do not allocate per event.
#[test]
fn tcp_hot_path_does_not_allocate_at_4096_flows() {
    let n = 4096;
    let mut t = String::from(
        "[run]\nduration = \"40s\"\nstop_when_done = false\nmonitor_interval = \"10s\"\n\n\
         [[nodes]]\nname = \"l\"\nkind = \"router\"\n[[nodes]]\nname = \"r\"\nkind = \"router\"\n\n\
         [[links]]\na = \"l\"\nb = \"r\"\nrate = \"30Mbps\"\ndelay = \"50ms\"\nqueue = { limit = \"128KB\" }\n",
    );
    for i in 0..n {
        t += &format!(
            "[[nodes]]\nname = \"s{i}\"\nkind = \"host\"\n[[nodes]]\nname = \"d{i}\"\nkind = \"host\"\n\
             [[links]]\na = \"s{i}\"\nb = \"l\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\nqueue = {{ limit = \"1000pkts\" }}\n\
             [[links]]\na = \"r\"\nb = \"d{i}\"\nrate = \"100Mbps\"\ndelay = \"1ms\"\nqueue = {{ limit = \"1000pkts\" }}\n\
             [[tcp]]\nname = \"t{i}\"\nfrom = \"s{i}\"\nto = \"d{i}\"\nvariant = \"newreno\"\nduration = \"40s\"\n\
             start = \"{}ms\"\nmss = \"1448B\"\nsend_buffer = \"1MB\"\nrecv_buffer = \"1MB\"\nwindow_scaling = true\n",
            (i * 7) % 100
        );
    }
    let (allocs, events) = steady_state_allocations(&t);
    eprintln!("tcp x {n}: {allocs} allocations in {events} events");
    assert!(events > 500_000);
    assert!(allocs * 1_000 < events, "{allocs} allocations in {events} events");
}

/// Issue 28: "idle flows cost ≤ 2 KB each". 10⁴ connections built as `build::tcp` builds the
/// benchmark dumbbell's (newreno, 1448-byte MSS, 1 MB buffers, window scaling; alike flows share
/// their two configurations), handshaken directly between their endpoints and left idle: the
/// heap they hold, their slots in the connection vector included, is at most 2,048 bytes each
/// (`examples/idle_conns.rs` prints the same for 10⁵, with the RSS).
#[test]
fn an_idle_connection_takes_at_most_2_kb() {
    use std::sync::Arc;
    use tcplab::sim::TcpConn;
    use tcplab_tcp::{Endpoint, EndpointConfig};
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cfg = EndpointConfig::for_variant("newreno").unwrap();
    (cfg.mss, cfg.send_buffer, cfg.recv_buffer, cfg.window_scaling) = (1448, 1 << 20, 1 << 20, true);
    let mut rcfg = cfg.clone();
    rcfg.close_on_peer_fin = true;
    let cfg = [Arc::new(cfg), Arc::new(rcfg)];
    let n = 10_000u32;
    let before = LIVE.with(Cell::get);
    let mut conns: Vec<TcpConn> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut ep = [Endpoint::new_shared(cfg[0].clone(), i as u64, 0), Endpoint::new_shared(cfg[1].clone(), i as u64, 0x8000_0000)];
        ep[1].listen();
        ep[0].connect(0);
        for now in [1_000_000, 2_000_000, 3_000_000] {
            for side in 0..2 {
                while let Some(seg) = ep[side].poll_transmit(now) {
                    ep[1 - side].on_segment(now, &seg);
                }
            }
        }
        assert!(ep[0].is_established() && ep[1].is_established(), "handshake of connection {i}");
        conns.push(TcpConn::bulk(format!("tcp{i}"), "newreno".into(), 2 * i, 2 * i + 1, SimTime::ZERO, None, None, ep, false));
    }
    let per_conn = (LIVE.with(Cell::get) - before) as f64 / n as f64;
    eprintln!("idle connection: {per_conn:.0} B (size_of TcpConn {} B)", std::mem::size_of::<TcpConn>());
    assert!(per_conn >= std::mem::size_of::<TcpConn>() as f64, "the slots are counted");
    assert!(per_conn <= 2048.0, "{per_conn:.0} B per idle connection");
    std::hint::black_box(&conns);
}
