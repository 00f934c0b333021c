//! The built-in bulk sender and sink of Linux flows: threads of the emulator process that
//! enter a host's namespace (`setns`), so their sockets are that host's real Linux TCP. The
//! sender writes a known byte pattern ([`pattern_byte`]); the sink checks every byte.
//! TCP_INFO is sampled every 10 ms while the sender runs (cwnd, RTT, retransmissions).

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::sys;

/// Byte `k` of every emulated bulk stream (k from 0); period 251, so a shifted or repeated
/// segment does not match.
#[inline]
pub fn pattern_byte(k: u64) -> u8 {
    (k % 251) as u8 ^ 0x5a
}

/// One TCP_INFO sample.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub t_ns: u64,
    pub cwnd_segments: u32,
    pub mss: u32,
    pub rtt_us: u32,
    pub total_retrans: u32,
    pub bytes_acked: u64,
    /// `tcpi_pacing_rate` (bytes/s), `tcpi_unacked` (segments in flight) and `tcpi_ca_state`:
    /// the kernel's pacing (BBR's gain phases show in it), flight and recovery state.
    pub pacing_rate: u64,
    pub unacked: u32,
    pub ca_state: u8,
    /// `tcpi_delivery_rate_app_limited` (the last rate sample was app-limited) and
    /// `tcpi_sndbuf_limited` (µs the sender was limited by its send buffer, cumulative).
    pub app_limited: bool,
    pub sndbuf_limited_us: u64,
    /// BBR's pacing and cwnd gains (×256; `TCP_CC_INFO`), 0 for other congestion controls.
    pub bbr_pacing_gain: u32,
    pub bbr_cwnd_gain: u32,
}

/// What the threads of one flow report.
#[derive(Default, Debug)]
pub struct FlowShared {
    /// Emulation time (ns) the sender saw its last byte acknowledged; 0 = not yet.
    pub done_at: AtomicU64,
    /// Bytes the sink read, and whether every one matched the pattern.
    pub sink_bytes: AtomicU64,
    pub sink_corrupt: AtomicBool,
    /// Emulation time (ns) the sink read end-of-stream; 0 = not yet.
    pub sink_eof_at: AtomicU64,
    pub connected_at: AtomicU64,
    pub samples: Mutex<Vec<Sample>>,
    pub last_info: Mutex<Option<sys::TcpInfo>>,
    pub error: Mutex<Option<String>>,
}

pub struct SenderSpec {
    pub ns: String,
    pub cc: String,
    pub dst: [u8; 4],
    pub port: u16,
    /// Local port (bound before connecting, so the tcplab endpoint or capture knows the 4-tuple).
    pub src_port: u16,
    pub bytes: Option<u64>,
    pub duration_ns: Option<u64>,
    pub start_ns: u64,
    pub mss: Option<u32>,
    pub send_buffer: Option<u32>,
}

fn now_ns(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

fn fail(shared: &FlowShared, msg: String) {
    shared.error.lock().unwrap().get_or_insert(msg);
}

/// Listen in namespace `ns` on `ip:port`; returns once listening (errors through `shared`).
pub fn spawn_sink(ns: String, ip: [u8; 4], port: u16, recv_buffer: Option<u32>, t0: Instant, stop: Arc<AtomicBool>, shared: Arc<FlowShared>) -> std::thread::JoinHandle<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let r = sink(&ns, ip, port, recv_buffer, t0, &stop, &shared, &tx);
        if let Err(e) = r {
            fail(&shared, format!("sink in {ns}: {e}"));
        }
        let _ = tx.send(());
    });
    let _ = rx.recv_timeout(Duration::from_secs(5));
    h
}

fn last_err() -> String {
    std::io::Error::last_os_error().to_string()
}

#[allow(clippy::too_many_arguments)]
fn sink(ns: &str, ip: [u8; 4], port: u16, recv_buffer: Option<u32>, t0: Instant, stop: &AtomicBool, shared: &FlowShared, ready: &std::sync::mpsc::Sender<()>) -> Result<(), String> {
    sys::enter_namespace(ns)?;
    let lfd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if lfd < 0 {
        return Err(last_err());
    }
    sys::set_int_opt(lfd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1);
    if let Some(b) = recv_buffer {
        sys::set_int_opt(lfd, libc::SOL_SOCKET, libc::SO_RCVBUF, b as i32);
    }
    let addr = sys::sockaddr(ip, port);
    if unsafe { libc::bind(lfd, &addr as *const _ as *const libc::sockaddr, std::mem::size_of_val(&addr) as _) } < 0 {
        let e = last_err();
        sys::close(lfd);
        return Err(format!("bind port {port}: {e}"));
    }
    unsafe { libc::listen(lfd, 4) };
    let _ = ready.send(());
    let fd = loop {
        if stop.load(Ordering::Relaxed) {
            sys::close(lfd);
            return Ok(());
        }
        if !poll_one(lfd, libc::POLLIN, 20) {
            continue;
        }
        let fd = unsafe { libc::accept4(lfd, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC) };
        if fd >= 0 {
            break fd;
        }
    };
    sys::close(lfd);
    let mut buf = vec![0u8; 1 << 16];
    let mut at: u64 = 0;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if !poll_one(fd, libc::POLLIN, 20) {
            continue;
        }
        let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut _, buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted || e.kind() == std::io::ErrorKind::WouldBlock {
                continue;
            }
            break;
        }
        if n == 0 {
            shared.sink_eof_at.store(now_ns(t0).max(1), Ordering::SeqCst);
            break;
        }
        for (i, &b) in buf[..n as usize].iter().enumerate() {
            if b != pattern_byte(at + i as u64) {
                shared.sink_corrupt.store(true, Ordering::SeqCst);
            }
        }
        at += n as u64;
        shared.sink_bytes.store(at, Ordering::SeqCst);
    }
    sys::close(fd);
    Ok(())
}

fn poll_one(fd: RawFd, events: i16, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    unsafe { libc::poll(&mut p, 1, timeout_ms) > 0 }
}

pub fn spawn_sender(spec: SenderSpec, t0: Instant, stop: Arc<AtomicBool>, shared: Arc<FlowShared>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        if let Err(e) = sender(&spec, t0, &stop, &shared) {
            fail(&shared, format!("sender in {}: {e}", spec.ns));
        }
    })
}

fn sample(fd: RawFd, t0: Instant, shared: &FlowShared) -> Option<sys::TcpInfo> {
    let info = sys::tcp_info(fd)?;
    let bbr = sys::bbr_info(fd).filter(|b| b.pacing_gain > 0);
    shared.samples.lock().unwrap().push(Sample {
        t_ns: now_ns(t0),
        cwnd_segments: info.snd_cwnd,
        mss: info.snd_mss,
        rtt_us: info.rtt_us,
        total_retrans: info.total_retrans,
        bytes_acked: info.bytes_acked,
        pacing_rate: info.pacing_rate,
        unacked: info.unacked,
        ca_state: info.ca_state,
        app_limited: info.flags & 1 != 0,
        sndbuf_limited_us: info.sndbuf_limited,
        bbr_pacing_gain: bbr.map_or(0, |b| b.pacing_gain),
        bbr_cwnd_gain: bbr.map_or(0, |b| b.cwnd_gain),
    });
    *shared.last_info.lock().unwrap() = Some(info);
    Some(info)
}

fn sender(spec: &SenderSpec, t0: Instant, stop: &AtomicBool, shared: &FlowShared) -> Result<(), String> {
    sys::enter_namespace(&spec.ns)?;
    while now_ns(t0) < spec.start_ns {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_nanos((spec.start_ns - now_ns(t0)).min(5_000_000)));
    }
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(last_err());
    }
    let result = send_on(fd, spec, t0, stop, shared);
    sys::close(fd);
    result
}

fn send_on(fd: RawFd, spec: &SenderSpec, t0: Instant, stop: &AtomicBool, shared: &FlowShared) -> Result<(), String> {
    sys::set_congestion_control(fd, &spec.cc)?;
    if let Some(m) = spec.mss {
        sys::set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, m as i32);
    }
    if let Some(b) = spec.send_buffer {
        sys::set_int_opt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, b as i32);
    }
    sys::set_int_opt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1);
    let local = sys::sockaddr([0, 0, 0, 0], spec.src_port);
    if unsafe { libc::bind(fd, &local as *const _ as *const libc::sockaddr, std::mem::size_of_val(&local) as _) } < 0 {
        return Err(format!("bind port {}: {}", spec.src_port, last_err()));
    }
    let addr = sys::sockaddr(spec.dst, spec.port);
    // Non-blocking connect, so a stop request is seen even while SYNs are being retried.
    unsafe { libc::fcntl(fd, libc::F_SETFL, libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK) };
    if unsafe { libc::connect(fd, &addr as *const _ as *const libc::sockaddr, std::mem::size_of_val(&addr) as _) } < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(format!("connect: {e}"));
        }
        while !poll_one(fd, libc::POLLOUT, 20) {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
        }
        let mut err: i32 = 0;
        let mut len = 4 as libc::socklen_t;
        unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut err as *mut i32 as *mut _, &mut len) };
        if err != 0 {
            return Err(format!("connect: {}", std::io::Error::from_raw_os_error(err)));
        }
    }
    shared.connected_at.store(now_ns(t0).max(1), Ordering::SeqCst);
    let total = spec.bytes.unwrap_or(u64::MAX);
    let until = spec.duration_ns.map(|d| spec.start_ns + d);
    let mut chunk = vec![0u8; 1 << 16];
    let mut sent: u64 = 0;
    let mut next_sample = 0u64;
    while sent < total {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let now = now_ns(t0);
        if until.is_some_and(|u| now >= u) {
            break;
        }
        if now >= next_sample {
            sample(fd, t0, shared);
            next_sample = now + 10_000_000;
        }
        if !poll_one(fd, libc::POLLOUT, 5) {
            continue;
        }
        let n = (total - sent).min(chunk.len() as u64) as usize;
        for (i, b) in chunk[..n].iter_mut().enumerate() {
            *b = pattern_byte(sent + i as u64);
        }
        let w = unsafe { libc::write(fd, chunk.as_ptr() as *const _, n) };
        if w < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("write: {e}"));
        }
        sent += w as u64;
    }
    unsafe { libc::shutdown(fd, libc::SHUT_WR) };
    // Completion: every byte written is acknowledged (TCP_INFO polled every 200 µs).
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let now = now_ns(t0);
        let info = if now >= next_sample {
            next_sample = now + 10_000_000;
            sample(fd, t0, shared)
        } else {
            sys::tcp_info(fd)
        };
        let Some(info) = info else { break };
        if info.bytes_acked >= sent && info.unacked == 0 {
            shared.done_at.store(now.max(1), Ordering::SeqCst);
            sample(fd, t0, shared);
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    Ok(())
}
