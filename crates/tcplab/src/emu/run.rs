//! The emulator's real-time loop: one [`Simulation`] stepped to the monotonic clock, datagrams
//! read from the Linux hosts' TAP devices put into it at the moment they were read, datagrams it
//! delivers written to their host (or handed to a tcplab endpoint) once due.
//!
//! Time (issue 24): every frame is stamped with the clock read right after its `read` returned,
//! and the simulation is first advanced to that stamp, so a frame can only be stamped late
//! (by the time it waited in the TAP queue), never early. The first version stamped every frame
//! read in a loop iteration with the time taken at the iteration's top; frames the kernel
//! queued during that iteration (the ACKs and new segments a write to a TAP makes the
//! namespace's TCP send at once, in the writer's context) were stamped before they existed, and
//! a stall of the iteration (a vCPU descheduled, RT throttling, a higher-priority task) moved
//! their release that much earlier: 5.1 ms under a 5 ms stall, measured.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rand::Rng;

use super::accuracy::{Accuracy, Held};
use super::commands;
use super::endpoints::{deliver_to_endpoint, flow_done, start_and_poll};
use super::plan::{plan, EmuFlow, End, Plan};
use super::report::finish_summary;
use super::steplog::Step;
use super::{linux, sys, EmuError, EmuOptions, EmuResult, ETH_HEADER, GATEWAY_MAC, SPIN_NS};
use crate::engine::{RngStreams, SimTime};
use crate::net::packet::{Packet, PacketKind};
use crate::scenario::load_text;
use crate::sim::Simulation;
use crate::summary::Summary;
use crate::wire;

/// Frames read from one TAP before the loop turns to the others and to due releases.
const READ_BATCH: usize = 64;

fn host_mac(node: u32) -> [u8; 6] {
    let b = node.to_be_bytes();
    [0x02, 0x74, 0x6c, b[1], b[2], b[3]]
}

/// Gives the thread back the CPUs it had.
struct RestoreAffinity(Vec<usize>);

impl Drop for RestoreAffinity {
    fn drop(&mut self) {
        sys::set_affinity(&self.0);
    }
}

/// Removes the commands' output directory (after their outputs were read).
struct RemoveDir(std::path::PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The emulation's clock: monotonic ns since its start.
#[derive(Clone, Copy)]
struct Clock(Instant);

impl Clock {
    #[inline]
    fn now(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

struct Host {
    node: u32,
    ns: String,
    fd: RawFd,
}

/// Everything the emulator made, removed on drop (normal end, error, or signal).
struct Made {
    hosts: Vec<Host>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for Made {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        for h in &self.hosts {
            if h.fd >= 0 {
                sys::close(h.fd);
            }
            sys::kill_namespace_processes(&h.ns);
            let _ = sys::ip(&["netns", "del", &h.ns]);
        }
    }
}

/// The commands' hosts and arguments, checked against the plan before anything is made (`text`:
/// the scenario as given, commands included, so errors name their lines).
fn check_commands_against(plan: &Plan, cfgs: &[commands::CommandCfg], text: &str, file: &str) -> Result<(), EmuError> {
    let name = |n: u32| plan.sim.nodes[n as usize].name.clone();
    let linux: HashMap<String, (String, [u8; 4])> = plan.linux_hosts.iter().map(|&n| (name(n), (String::new(), wire::node_ip(n)))).collect();
    let all: HashMap<String, [u8; 4]> = (0..plan.sim.nodes.len() as u32).map(|n| (name(n), wire::node_ip(n))).collect();
    commands::resolve(cfgs, text, file, &linux, &all, std::path::Path::new("."))?;
    Ok(())
}

/// What `tcplab validate` checks of an emulation scenario's `[[commands]]` (they are read only by
/// the emulator): they parse and name Linux hosts with valid arguments. Returns the scenario text
/// with the commands commented out (every other line keeps its number), for the simulator's checks.
pub fn check_commands(text: &str, file: &str, overrides: &[String]) -> Result<String, EmuError> {
    let (text_run, cfgs) = commands::split(text, file)?;
    if !cfgs.is_empty() {
        let (sc, new_text, _) = load_text(&text_run, file, overrides)?;
        check_commands_against(&plan(&sc, &new_text, file, None)?, &cfgs, text, file)?;
    }
    Ok(text_run)
}

/// Run scenario `text` in emulation. `progress(now_s, end_s)` is called about every 100 ms of
/// wall time; returning false stops the run as Ctrl-C does. It runs inside the real-time loop:
/// it must return at once (no locks another thread may hold, no interpreter lock: the Python
/// binding only stores the times there and calls Python from a thread of its own).
pub fn emulate(text: &str, file: &str, opts: &EmuOptions, mut progress: impl FnMut(f64, f64) -> bool) -> Result<EmuResult, EmuError> {
    let (text_run, command_cfgs) = commands::split(text, file)?;
    let (sc, new_text, _) = load_text(&text_run, file, &opts.overrides)?;
    // The scenario as given (its commands included) unless overrides changed it.
    let new_text = if opts.overrides.is_empty() { text.to_string() } else { new_text };
    let plan = plan(&sc, &new_text, file, opts.seed)?;
    check_commands_against(&plan, &command_cfgs, text, file)?;
    if let Some(why) = sys::refusal() {
        return Err(EmuError::Refused(why));
    }
    let Plan { mut sim, mut flows, emulated_hosts, linux_hosts } = plan;
    // Every thread and process made from here on (namespace commands, senders, sinks) starts
    // on the hosts' CPUs; the loop moves to its own CPU once they are made.
    let cpus_before = sys::affinity();
    let cpu_plan = sys::CpuPlan::choose(&cpus_before, std::env::var("TCPLAB_EMU_PIN").ok().as_deref()).map_err(EmuError::Refused)?;
    let _restore = RestoreAffinity(cpus_before.clone());
    if let Some(p) = &cpu_plan {
        sys::set_affinity(&p.host_cpus);
    }
    let _ = sys::cleanup_leftovers(false);
    let stop = Arc::new(AtomicBool::new(false));
    let mut made = Made { hosts: Vec::new(), stop: stop.clone(), threads: Vec::new() };
    let pid = std::process::id();
    for &node in &linux_hosts {
        let ns = format!("{}{pid}-{}", sys::NS_PREFIX, sim.nodes[node as usize].name.chars().filter(|c| c.is_ascii_alphanumeric()).take(20).collect::<String>());
        let ns = format!("{ns}-{node}");
        let tap = format!("{}{pid}n{node}", sys::TAP_PREFIX);
        sys::ip(&["netns", "add", &ns]).map_err(EmuError::System)?;
        made.hosts.push(Host { node, ns: ns.clone(), fd: -1 });
        let fd = sys::open_tap(&tap).map_err(EmuError::System)?;
        made.hosts.last_mut().unwrap().fd = fd;
        let ipa = wire::node_ip(node);
        let addr = format!("{}.{}.{}.{}/8", ipa[0], ipa[1], ipa[2], ipa[3]);
        let m = host_mac(node);
        let mac = format!("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5]);
        let cmds: Vec<Vec<&str>> = vec![
            vec!["link", "set", &tap, "netns", &ns],
            vec!["-n", &ns, "link", "set", "lo", "up"],
            vec!["-n", &ns, "link", "set", &tap, "address", &mac, "arp", "off", "mtu", "1500"],
            vec!["-n", &ns, "addr", "add", &addr, "dev", &tap],
            vec!["-n", &ns, "link", "set", &tap, "up"],
        ];
        for c in cmds {
            sys::ip(&c).map_err(EmuError::System)?;
        }
        if let Some(p) = cpu_plan.as_ref().filter(|p| p.rps) {
            sys::set_rps(&ns, &tap, &p.host_cpus).map_err(EmuError::System)?;
        }
        // No IPv6 chatter (router solicitations) on the emulated wire.
        let _ = std::process::Command::new("ip").args(["netns", "exec", &ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]).output();
    }
    let host_of: HashMap<u32, usize> = made.hosts.iter().enumerate().map(|(i, h)| (h.node, i)).collect();
    let node_name = |n: u32| sim.nodes[n as usize].name.clone();
    let linux_ns: HashMap<String, (String, [u8; 4])> = made.hosts.iter().map(|h| (node_name(h.node), (h.ns.clone(), wire::node_ip(h.node)))).collect();
    let all_ips: HashMap<String, [u8; 4]> = (0..sim.nodes.len() as u32).map(|n| (node_name(n), wire::node_ip(n))).collect();
    let cmd_dir = std::env::temp_dir().join(format!("{}{pid}-commands", sys::NS_PREFIX));
    if !command_cfgs.is_empty() {
        std::fs::create_dir_all(&cmd_dir).map_err(|e| EmuError::System(format!("{}: {e}", cmd_dir.display())))?;
    }
    let _cmd_dir_guard = RemoveDir(cmd_dir.clone());
    let cmds = commands::resolve(&command_cfgs, text, file, &linux_ns, &all_ips, &cmd_dir)?;
    sys::precise_timers();
    let guard = sys::SignalGuard::install();

    // Setup commands (sysctls) before any socket is made: a listening socket takes the
    // namespace's `tcp_rmem[1]` when it is made.
    for c in cmds.iter().filter(|c| c.setup) {
        commands::run_setup(c)?;
    }
    // Sinks listen before the clock starts; senders wait for their start time.
    let t0 = Instant::now();
    for f in &mut flows {
        if f.ends.1 == End::Linux {
            let h = &made.hosts[host_of[&f.to]];
            let t = linux::spawn_sink(h.ns.clone(), wire::node_ip(f.to), f.port_rcv, None, t0, stop.clone(), f.shared.clone());
            made.threads.push(t);
        }
    }
    let t0 = Instant::now();
    for f in &mut flows {
        if f.ends.0 == End::Linux {
            let h = &made.hosts[host_of[&f.from]];
            let spec = linux::SenderSpec {
                ns: h.ns.clone(),
                cc: f.variant.trim_start_matches("linux-").to_string(),
                dst: wire::node_ip(f.to),
                port: f.port_rcv,
                src_port: crate::trace::pcap::tcp_sender_port(f.idx as u32),
                bytes: f.bytes,
                duration_ns: f.duration_ns,
                start_ns: f.start_ns,
                mss: f.mss,
                send_buffer: None,
            };
            made.threads.push(linux::spawn_sender(spec, t0, stop.clone(), f.shared.clone()));
        }
    }
    // User commands: threads of normal priority start them at their times.
    for c in cmds.iter().filter(|c| !c.setup) {
        made.threads.push(commands::spawn(c, t0, stop.clone()));
    }
    // BSD coarse ticks of tcplab hosts, phased as the simulator phases them (seed 000 §6.2.6).
    let rngs = RngStreams::new(opts.seed.unwrap_or(sc.run.seed));
    let mut ticks: Vec<(u32, u64, u64)> = Vec::new(); // (node, next slow, next fast)
    for &n in &emulated_hosts {
        if flows.iter().any(|f| f.eps.iter().flatten().any(|e| e.node == n && e.bsd_ticks)) {
            let mut rng = rngs.stream("timer-phase", n as u64);
            let slow = rng.gen_range(0..500_000_000u64);
            let fast = rng.gen_range(0..200_000_000u64);
            ticks.push((n, slow, fast));
        }
    }

    // After the sender and sink threads started (they must not inherit it).
    let realtime = sys::realtime_priority();
    let pinned = cpu_plan.as_ref().is_some_and(|p| sys::set_affinity(&[p.emulator_cpu]));
    let end_ns = sim.end.0;
    let stop_when_done = sim.stop_when_done;
    // As the simulator: UDP and traffic sources run to the end (an early end at a wall-clock
    // moment would make the background's packets differ between runs of one seed).
    let background = !sim.udp.is_empty() || !sc.traffic.is_empty();
    // The emulator decides when the run ends; the simulation must keep moving packets after
    // its own simulated flows are done.
    sim.stop_when_done = false;
    let fds: Vec<RawFd> = made.hosts.iter().map(|h| h.fd).collect();
    let clock = Clock(t0);
    let mut acc = Accuracy::new(&sim);
    let mut frame = vec![0u8; 65536 + ETH_HEADER];
    let mut out = Vec::with_capacity(65536 + ETH_HEADER);
    let mut last_progress = 0u64;
    let mut interrupted = false;
    let mut payload = Vec::with_capacity(65536);
    let mut pre = Held::new();
    acc.steps.start();
    loop {
        let now = clock.now();
        pre.sample(now);
        if guard.stopped() {
            interrupted = true;
            break;
        }
        if now >= end_ns {
            break;
        }
        if now - last_progress >= 100_000_000 {
            last_progress = now;
            let go = progress(now as f64 / 1e9, end_ns as f64 / 1e9);
            acc.steps.step(Step::Progress, now, clock.now() - now, 0);
            if !go {
                interrupted = true;
                break;
            }
        }
        // 1. The network up to now, and what it delivered by now to the hosts.
        advance(&mut sim, &mut acc, now, clock);
        release(&mut sim, &mut flows, &made.hosts, &host_of, &mut acc, &mut pre, clock, &mut out);
        // 2. Frames from the Linux hosts, each entering the network at the moment it was read
        //    (the network first advanced to that moment, and what fell due meanwhile released).
        loop {
            let mut any = false;
            for h in made.hosts.iter() {
                for _ in 0..READ_BATCH {
                    let r0 = clock.now();
                    let Some(n) = sys::read_frame(h.fd, &mut frame) else { break };
                    let t = clock.now();
                    acc.steps.step(Step::Read, r0, t - r0, h.node as u64);
                    any = true;
                    if n <= ETH_HEADER || frame[12..14] != [0x08, 0x00] {
                        continue; // not IPv4 (ARP is off; IPv6 is disabled)
                    }
                    advance(&mut sim, &mut acc, t, clock);
                    inject(&mut sim, t, h.node, &frame[ETH_HEADER..n], &mut acc);
                    acc.sample_links(&sim, t);
                }
            }
            let t = clock.now();
            advance(&mut sim, &mut acc, t, clock);
            release(&mut sim, &mut flows, &made.hosts, &host_of, &mut acc, &mut pre, clock, &mut out);
            if !any {
                break;
            }
        }
        // 3. tcplab endpoints: ticks, timers, start times, segments to send, at the time now.
        let now = clock.now();
        advance(&mut sim, &mut acc, now, clock);
        // What fell due since the frames were read goes out now: left in `raw_out`, it would
        // wait for the next wake-up, which is timed by the events still pending, not by it
        // (datagrams released 2-5 ms late when a step of the loop straddled a due time).
        release(&mut sim, &mut flows, &made.hosts, &host_of, &mut acc, &mut pre, clock, &mut out);
        for t in ticks.iter_mut() {
            while t.1 <= now {
                for f in flows.iter_mut() {
                    for e in f.eps.iter_mut().flatten().filter(|e| e.node == t.0 && e.bsd_ticks) {
                        e.ep.on_slow_tick(now);
                    }
                }
                t.1 += 500_000_000;
            }
            while t.2 <= now {
                for f in flows.iter_mut() {
                    for e in f.eps.iter_mut().flatten().filter(|e| e.node == t.0 && e.bsd_ticks) {
                        e.ep.on_fast_tick(now);
                    }
                }
                t.2 += 200_000_000;
            }
        }
        for f in flows.iter_mut() {
            start_and_poll(f, now, &mut sim, &mut out, &mut payload);
        }
        // Links that started transmitting what was just sent did so at `now`.
        acc.sample_links(&sim, now);
        if commands::all_waited_exited(&cmds) {
            break;
        }
        if stop_when_done && !background && flows.iter().all(flow_done) && sim.tcp_active == 0 && cmds.iter().all(|c| !c.wait) {
            break;
        }
        // 4. Sleep until the next due event or a frame.
        let mut next = sim.events.peek_time().map_or(end_ns, |t| t.0).min(end_ns);
        for f in &flows {
            for e in f.eps.iter().flatten() {
                if let Some(t) = e.ep.next_timer() {
                    next = next.min(t);
                }
            }
            if !f.eps.iter().flatten().all(|e| e.started) {
                next = next.min(f.start_ns);
            }
        }
        for t in &ticks {
            next = next.min(t.1).min(t.2);
        }
        if !sim.raw_out.is_empty() {
            acc.slept_with_datagrams_due += 1;
        }
        let waited_from = clock.now();
        if next > waited_from + SPIN_NS + 10_000 {
            // Wake SPIN_NS early and spin the rest: ppoll's own wake-up takes a few µs.
            let wait = (next - waited_from - SPIN_NS).min(5_000_000);
            if !sys::wait_readable(&fds, wait) {
                // Timed out: how late the machine woke us against the time asked for.
                let woke = clock.now();
                let late = woke.saturating_sub(waited_from + wait);
                acc.wake_late_ns.push(late);
                acc.steps.step(Step::Sleep, waited_from, late, wait);
                pre.woke(woke, late);
            }
        } else if next > waited_from {
            while clock.now() < next {
                std::hint::spin_loop();
            }
        }
    }
    let wall_end = t0.elapsed().as_nanos() as u64;
    acc.steps.write();
    acc.steps.finish();
    let now = SimTime(wall_end.min(end_ns));
    if !sim.run_until(now) {
        // advance the monitors to the end of the emulated time
    }
    for l in &mut sim.links {
        l.monitor.finish(now);
    }
    made.stop.store(true, Ordering::SeqCst);
    for t in made.threads.drain(..) {
        let _ = t.join();
    }
    sys::normal_priority();
    drop(guard);
    let summary = Summary::from_sim(&sim, wall_end as f64 / 1e9);
    let summary_json = finish_summary(&summary, &sim, &flows, &cmds, &acc, interrupted, wall_end, (realtime, cpu_plan.as_ref().filter(|_| pinned)))?;
    let command_outputs = cmds.iter().map(|c| (c.name.clone(), std::fs::read(&c.stdout).unwrap_or_default(), std::fs::read(&c.stderr).unwrap_or_default())).collect();
    drop(made);
    let packet_records = super::accuracy::records_bytes(&acc.records);
    Ok(EmuResult { sim, summary_json, text: new_text, interrupted, packet_records, command_outputs })
}

/// A write to a TAP slower than this is sampled for a hold (most take a few µs).
const SLOW_WRITE_NS: u64 = 20_000;

/// Advance the network to wall time `t` (every event due by then) and note the links' state.
fn advance(sim: &mut Simulation, acc: &mut Accuracy, t: u64, clock: Clock) {
    let before = clock.now();
    sim.run_until(SimTime(t));
    acc.sample_links(sim, t);
    acc.steps.step(Step::Advance, before, clock.now() - before, 0);
}

/// Hand every datagram the network delivered to its host: written to the host's TAP, or given
/// to a tcplab endpoint. Each is recorded with its release time, read after the write.
#[allow(clippy::too_many_arguments)]
fn release(sim: &mut Simulation, flows: &mut [EmuFlow], hosts: &[Host], host_of: &HashMap<u32, usize>, acc: &mut Accuracy, pre: &mut Held, clock: Clock, out: &mut Vec<u8>) {
    if sim.raw_out.is_empty() {
        return;
    }
    pre.sample(clock.now());
    let mut deliveries = std::mem::take(&mut sim.raw_out);
    for d in deliveries.iter_mut() {
        wire::rewrite_ttl_ecn(&mut d.bytes, d.packet.ttl, d.packet.ecn);
        let released = if let Some(&hi) = host_of.get(&d.node) {
            out.clear();
            out.extend_from_slice(&host_mac(d.node));
            out.extend_from_slice(&GATEWAY_MAC);
            out.extend_from_slice(&[0x08, 0x00]);
            out.extend_from_slice(&d.bytes);
            // Released when the write begins: the host has the frame from then on. The
            // write returns only after the kernel ran the host's receive path (and what that
            // sent) in it (`tun_get_user` hands the frame to `netif_receive_skb` in the
            // writer's context): that time is the host's processing, not lateness of this
            // datagram; a datagram after it in this batch waits for it and counts it.
            let before = clock.now();
            sys::write_frame(hosts[hi].fd, out);
            let t = clock.now();
            acc.host_write(t - before);
            acc.steps.step(Step::Write, before, t - before, d.node as u64);
            if t - before > SLOW_WRITE_NS {
                // Whether the machine held the thread meanwhile counts for the datagrams
                // after this one.
                pre.sample(t);
            }
            before
        } else {
            let t = clock.now();
            deliver_to_endpoint(flows, t, &d.bytes, d.node);
            t
        };
        acc.released(sim, d.packet.src, d.node, d.packet.size, d.packet.created, d.at.0, released, pre.since(d.at.0));
    }
    // Keep the vector's capacity for the next deliveries (no allocation per release).
    deliveries.clear();
    if sim.raw_out.is_empty() {
        sim.raw_out = deliveries;
    }
}

/// Put a datagram read from host `node`'s TAP into the network.
pub(super) fn inject(sim: &mut Simulation, now: u64, node: u32, dgram: &[u8], acc: &mut Accuracy) {
    let Ok(p) = wire::parse_ipv4(dgram) else {
        acc.bad_frames += 1;
        return;
    };
    let Some(dst) = wire::ip_node(p.ip.dst).filter(|&d| (d as usize) < sim.nodes.len() && d != node) else {
        acc.foreign_frames += 1;
        return;
    };
    acc.frames_in += 1;
    let pkt = Packet { src: node, dst, size: p.total_len as u32, ttl: p.ip.ttl, corrupted: false, ecn: p.ip.ecn, created: now, kind: PacketKind::Raw };
    sim.send_raw(SimTime(now), pkt, &dgram[..p.total_len]);
}

