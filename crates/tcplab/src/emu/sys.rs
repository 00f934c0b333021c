//! The operating-system side of emulation (Linux only): TAP devices, network namespaces made
//! with iproute2's `ip netns`, threads entered into a namespace with `setns(2)`, TCP_INFO, the
//! monotonic clock, signals. Everything tcplab creates carries its prefix and its process id
//! ([`NS_PREFIX`], [`TAP_PREFIX`]) so `tcplab emulate --cleanup` can find what a kill -9 left.

use std::ffi::CString;
use std::os::fd::RawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

/// Namespaces are named `tcplab-emu-<pid>-<node>`.
pub const NS_PREFIX: &str = "tcplab-emu-";
/// TAP devices are named `tle<pid>n<node index>` (at most 15 characters, IFNAMSIZ - 1).
pub const TAP_PREFIX: &str = "tle";

/// Why emulation cannot run here, or None. `TCPLAB_EMULATE_PRETEND=no-root|no-tun` makes the
/// check answer as on a machine without root or without /dev/net/tun (for tests).
pub fn refusal() -> Option<String> {
    let pretend = std::env::var("TCPLAB_EMULATE_PRETEND").unwrap_or_default();
    let euid = unsafe { libc::geteuid() };
    if pretend == "no-root" || euid != 0 {
        return Some("tcplab emulate needs root: it creates network namespaces and TAP devices (run it as root or with sudo)".into());
    }
    let tun = std::fs::OpenOptions::new().read(true).write(true).open("/dev/net/tun");
    if pretend == "no-tun" || tun.is_err() {
        let why = tun.err().map_or("pretended by TCPLAB_EMULATE_PRETEND".to_string(), |e| e.to_string());
        return Some(format!("tcplab emulate needs /dev/net/tun (the kernel's TUN/TAP driver), which cannot be opened here: {why}"));
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("tcplab emulate needs the `ip` command of iproute2".into());
    }
    None
}

/// Run `ip` with `args`; an error names the command and what it printed.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

/// Congestion controls this kernel offers (`/proc/sys/net/ipv4/tcp_available_congestion_control`).
pub fn available_congestion_controls() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

fn pid_alive(pid: i32) -> bool {
    unsafe { libc::kill(pid, 0) == 0 || *libc::__errno_location() == libc::EPERM }
}

/// The pid in a name `<prefix><pid><sep>...`.
fn name_pid(name: &str, prefix: &str) -> Option<i32> {
    let rest = name.strip_prefix(prefix)?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// Remove the namespaces (and the processes inside them) and TAP devices tcplab emulators
/// left behind: those of processes no longer alive, or every one with `all`. Returns what was
/// removed.
pub fn cleanup_leftovers(all: bool) -> Result<Vec<String>, String> {
    let mut removed = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/var/run/netns") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(pid) = name_pid(&name, NS_PREFIX) else { continue };
            if !all && pid_alive(pid) {
                continue;
            }
            kill_namespace_processes(&name);
            ip(&["netns", "del", &name])?;
            removed.push(format!("namespace {name}"));
        }
    }
    if let Ok(dir) = std::fs::read_dir("/sys/class/net") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(pid) = name_pid(&name, TAP_PREFIX) else { continue };
            if !name[TAP_PREFIX.len()..].contains('n') || (!all && pid_alive(pid)) {
                continue;
            }
            ip(&["link", "del", &name])?;
            removed.push(format!("TAP device {name}"));
        }
    }
    Ok(removed)
}

/// SIGKILL every process inside namespace `ns` (a user command an emulator started there).
pub fn kill_namespace_processes(ns: &str) {
    if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if let Ok(p) = pid.parse::<i32>() {
                if p != std::process::id() as i32 {
                    unsafe { libc::kill(p, libc::SIGKILL) };
                }
            }
        }
    }
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TAP: libc::c_short = 0x0002;
const IFF_NO_PI: libc::c_short = 0x1000;

/// Open a TAP device named `name` (Ethernet frames, no packet-information header), non-blocking.
/// It is not persistent: it disappears when the descriptor closes (also on kill -9).
pub fn open_tap(name: &str) -> Result<RawFd, String> {
    let path = CString::new("/dev/net/tun").unwrap();
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!("/dev/net/tun: {}", std::io::Error::last_os_error()));
    }
    #[repr(C)]
    struct IfReq {
        name: [u8; 16],
        flags: libc::c_short,
        pad: [u8; 22],
    }
    let mut req = IfReq { name: [0; 16], flags: IFF_TAP | IFF_NO_PI, pad: [0; 22] };
    req.name[..name.len().min(15)].copy_from_slice(&name.as_bytes()[..name.len().min(15)]);
    if unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req) } < 0 {
        let e = std::io::Error::last_os_error();
        unsafe { libc::close(fd) };
        return Err(format!("TUNSETIFF {name}: {e}"));
    }
    Ok(fd)
}

pub fn close(fd: RawFd) {
    unsafe { libc::close(fd) };
}

/// Read one frame; None when nothing is waiting.
pub fn read_frame(fd: RawFd, buf: &mut [u8]) -> Option<usize> {
    let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut _, buf.len()) };
    (n > 0).then_some(n as usize)
}

pub fn write_frame(fd: RawFd, frame: &[u8]) -> bool {
    unsafe { libc::write(fd, frame.as_ptr() as *const _, frame.len()) == frame.len() as isize }
}

/// Wait until one of `fds` (at most 64) is readable or `timeout_ns` passed (ppoll: nanosecond
/// timeout). Returns false when it timed out.
pub fn wait_readable(fds: &[RawFd], timeout_ns: u64) -> bool {
    let mut p = [libc::pollfd { fd: -1, events: libc::POLLIN, revents: 0 }; 64];
    let n = fds.len().min(64);
    for (slot, &fd) in p.iter_mut().zip(fds) {
        slot.fd = fd;
    }
    let ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as _, tv_nsec: (timeout_ns % 1_000_000_000) as _ };
    unsafe { libc::ppoll(p.as_mut_ptr(), n as _, &ts, std::ptr::null()) != 0 }
}

/// Ask for precise wake-ups (the default timer slack of 50 µs would make every sleep late).
pub fn precise_timers() {
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Run this thread at a real-time priority (SCHED_FIFO 10) so other work on a busy machine does
/// not delay packet releases; the kernel's RT throttling keeps 5 % of each core for others.
/// Returns whether it took effect. The thread sleeps whenever nothing is due.
pub fn realtime_priority() -> bool {
    let p = libc::sched_param { sched_priority: 10 };
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &p) == 0 }
}

/// This thread's involuntary context switches so far (the machine took the CPU from it).
pub fn involuntary_switches() -> i64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    u.ru_nivcsw as i64
}

/// The calling thread's time spent runnable but waiting for a CPU (`run_delay`, the second field
/// of /proc/thread-self/schedstat, ns). It also grows while a wake-up waits behind another task,
/// e.g. after a frame made ppoll return — a hold no late timer and no involuntary switch shows.
/// The file is the thread's that opened it; None where the kernel has no schedstat.
pub struct RunDelay(Option<std::fs::File>);

impl RunDelay {
    pub fn open() -> RunDelay {
        RunDelay(std::fs::File::open("/proc/thread-self/schedstat").ok())
    }

    pub fn read(&mut self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let f = self.0.as_ref()?;
        let mut buf = [0u8; 96];
        let n = f.read_at(&mut buf, 0).ok()?;
        std::str::from_utf8(&buf[..n]).ok()?.split_ascii_whitespace().nth(1)?.parse().ok()
    }
}

/// The CPUs this thread may run on (`sched_getaffinity`), at most 1024.
pub fn affinity() -> Vec<usize> {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Vec::new();
    }
    (0..1024usize.min(libc::CPU_SETSIZE as usize)).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

/// Let this thread (and the threads and processes it creates from now on) run only on `cpus`
/// (`sched_setaffinity`). Returns whether it took effect.
pub fn set_affinity(cpus: &[usize]) -> bool {
    if cpus.is_empty() {
        return false;
    }
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
}

/// How the emulator places itself and the hosts on the CPUs (issue 26): the real-time loop
/// alone on one CPU, the hosts' threads and processes (the Linux senders, sinks and commands)
/// on the others, and the hosts' receive path steered there too (`rps`: the TAP's
/// `rps_cpus`, so the kernel's TCP runs what a write to a TAP hands it on a host CPU, in its
/// NET_RX softirq, not inside the emulator's write on the emulator's CPU). `TCPLAB_EMU_PIN`:
/// `on` (default: both), `threads` (affinity only), `off` (neither).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuPlan {
    pub emulator_cpu: usize,
    pub host_cpus: Vec<usize>,
    pub rps: bool,
}

impl CpuPlan {
    /// The plan for a thread allowed on `cpus`, with the setting `pin` (TCPLAB_EMU_PIN's
    /// value); None with one CPU or when switched off. The emulator takes the highest CPU.
    pub fn choose(cpus: &[usize], pin: Option<&str>) -> Result<Option<CpuPlan>, String> {
        let rps = match pin.unwrap_or("on") {
            "on" | "" => true,
            "threads" => false,
            "off" => return Ok(None),
            other => return Err(format!("TCPLAB_EMU_PIN must be on, threads or off, got {other:?}")),
        };
        let Some((&emulator_cpu, rest)) = cpus.split_last() else { return Ok(None) };
        if rest.is_empty() {
            return Ok(None);
        }
        Ok(Some(CpuPlan { emulator_cpu, host_cpus: rest.to_vec(), rps }))
    }
}

/// Steer what TAP `dev` (inside namespace `ns`) receives to `cpus` (its single queue's
/// `rps_cpus`, written inside the namespace: the device's sysfs is that namespace's).
pub fn set_rps(ns: &str, dev: &str, cpus: &[usize]) -> Result<(), String> {
    let script = format!("echo {} > /sys/class/net/{dev}/queues/rx-0/rps_cpus", cpu_mask_hex(cpus));
    let out = Command::new("ip").args(["netns", "exec", ns, "sh", "-c", &script]).output().map_err(|e| format!("rps_cpus of {dev}: {e}"))?;
    if !out.status.success() {
        return Err(format!("rps_cpus of {dev}: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

/// The CPU mask `cpus` as the hexadecimal text of /sys/class/net/DEV/queues/rx-N/rps_cpus.
pub fn cpu_mask_hex(cpus: &[usize]) -> String {
    let n = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut words = vec![0u32; n];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    words.iter().rev().map(|w| format!("{w:08x}")).collect::<Vec<_>>().join(",")
}

/// Back to ordinary scheduling.
pub fn normal_priority() {
    let p = libc::sched_param { sched_priority: 0 };
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_OTHER, &p) };
}

/// Enter network namespace `ns` (this thread only).
pub fn enter_namespace(ns: &str) -> Result<(), String> {
    let path = CString::new(format!("/var/run/netns/{ns}")).unwrap();
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!("namespace {ns}: {}", std::io::Error::last_os_error()));
    }
    let r = unsafe { libc::setns(fd, libc::CLONE_NEWNET) };
    unsafe { libc::close(fd) };
    if r < 0 {
        return Err(format!("setns {ns}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

// ------------------------------------------------------------------ signals

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// SIGINT and SIGTERM set a flag the emulator's loop checks (it then cleans up); the previous
/// handlers come back when the guard drops.
pub struct SignalGuard {
    old: [libc::sigaction; 2],
}

impl SignalGuard {
    pub fn install() -> SignalGuard {
        STOP.store(false, Ordering::SeqCst);
        let mut old: [libc::sigaction; 2] = unsafe { std::mem::zeroed() };
        for (i, sig) in [libc::SIGINT, libc::SIGTERM].into_iter().enumerate() {
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, &mut old[i]);
            }
        }
        SignalGuard { old }
    }
    pub fn stopped(&self) -> bool {
        STOP.load(Ordering::Relaxed)
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        for (i, sig) in [libc::SIGINT, libc::SIGTERM].into_iter().enumerate() {
            unsafe { libc::sigaction(sig, &self.old[i], std::ptr::null_mut()) };
        }
    }
}

/// Which signal stopped the run, for the message.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

// ------------------------------------------------------------------ TCP_INFO

/// `struct tcp_info` of linux/tcp.h up to `tcpi_bytes_retrans` (kernel 4.19+ layout; the
/// kernel fills what it has and reports the length).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub flags: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt_us: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
}

pub fn tcp_info(fd: RawFd) -> Option<TcpInfo> {
    let mut info = TcpInfo::default();
    let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut info as *mut _ as *mut _, &mut len) };
    (r == 0).then_some(info)
}

/// `struct tcp_bbr_info` (linux/inet_diag.h), read with `TCP_CC_INFO` while the socket runs
/// BBR: its bandwidth estimate (bytes/s), min RTT and the two gains (×256), which name its mode.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct BbrInfo {
    pub bw_lo: u32,
    pub bw_hi: u32,
    pub min_rtt_us: u32,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
}

/// Linux `TCP_CC_INFO` (linux/tcp.h).
const TCP_CC_INFO: i32 = 26;

pub fn bbr_info(fd: RawFd) -> Option<BbrInfo> {
    let mut info = BbrInfo::default();
    let mut len = std::mem::size_of::<BbrInfo>() as libc::socklen_t;
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, TCP_CC_INFO, &mut info as *mut _ as *mut _, &mut len) };
    (r == 0 && len as usize >= std::mem::size_of::<BbrInfo>()).then_some(info)
}

pub fn set_congestion_control(fd: RawFd, cc: &str) -> Result<(), String> {
    let r = unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_ptr() as *const _, cc.len() as _) };
    if r < 0 {
        return Err(format!("TCP_CONGESTION {cc}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

pub fn set_int_opt(fd: RawFd, level: i32, opt: i32, v: i32) {
    unsafe { libc::setsockopt(fd, level, opt, &v as *const i32 as *const _, 4) };
}

pub fn sockaddr(ip: [u8; 4], port: u16) -> libc::sockaddr_in {
    let mut a: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    a.sin_family = libc::AF_INET as _;
    a.sin_port = port.to_be();
    a.sin_addr.s_addr = u32::from_ne_bytes(ip);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_info_layout_matches_linux() {
        // Offsets from linux/tcp.h: rto at 8, total_retrans at 100, pacing_rate at 104,
        // bytes_acked at 120, bytes_retrans at 208 (the struct was 216 bytes up to there).
        let i = TcpInfo::default();
        let base = &i as *const _ as usize;
        assert_eq!(&i.rto as *const _ as usize - base, 8);
        assert_eq!(&i.total_retrans as *const _ as usize - base, 100);
        assert_eq!(&i.bytes_acked as *const _ as usize - base, 120);
        assert_eq!(&i.bytes_retrans as *const _ as usize - base, 208);
    }

    #[test]
    fn cpu_plan_puts_the_emulator_alone_on_the_last_cpu() {
        let p = CpuPlan::choose(&[0, 1], None).unwrap().unwrap();
        assert_eq!((p.emulator_cpu, p.host_cpus.clone(), p.rps), (1, vec![0], true));
        let p = CpuPlan::choose(&[0, 2, 5], Some("threads")).unwrap().unwrap();
        assert_eq!((p.emulator_cpu, p.host_cpus.clone(), p.rps), (5, vec![0, 2], false));
        assert_eq!(CpuPlan::choose(&[0, 1], Some("off")).unwrap(), None);
        assert_eq!(CpuPlan::choose(&[3], None).unwrap(), None);
        assert!(CpuPlan::choose(&[0, 1], Some("yes")).unwrap_err().contains("TCPLAB_EMU_PIN"));
    }

    #[test]
    fn rps_mask_is_sysfs_hex() {
        assert_eq!(cpu_mask_hex(&[0]), "00000001");
        assert_eq!(cpu_mask_hex(&[0, 1, 3]), "0000000b");
        assert_eq!(cpu_mask_hex(&[1, 33]), "00000002,00000002");
    }

    #[test]
    fn leftover_names_carry_the_pid() {
        assert_eq!(name_pid("tcplab-emu-1234-h1", NS_PREFIX), Some(1234));
        assert_eq!(name_pid("tle99n3", TAP_PREFIX), Some(99));
        assert_eq!(name_pid("other-ns", NS_PREFIX), None);
    }
}
