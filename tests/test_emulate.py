"""Emulation (issue 16): real Linux TCP and tcplab's endpoint on the wire through tcplab's links
in real time. These tests need root and /dev/net/tun (CI runs as root on a machine with TUN);
elsewhere they skip with the emulator's own one-line reason — except the refusal test, which
simulates a machine without root or TUN through TCPLAB_EMULATE_PRETEND."""
from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import tcplab
from tcplab import emulate as emu

ROOT = Path(__file__).resolve().parents[1]
TCPLAB = [sys.executable, "-m", "tcplab.cli"]
REFUSAL = emu.refusal()
needs_emulation = pytest.mark.skipif(REFUSAL is not None, reason=f"emulation unavailable: {REFUSAL}")

PATH = """
name = "{name}"
[run]
duration = "{duration}"
{trace}
[[nodes]]
name = "h1"
kind = "host"
stack = "{s1}"
[[nodes]]
name = "r1"
kind = "router"
[[nodes]]
name = "r2"
kind = "router"
[[nodes]]
name = "h2"
kind = "host"
stack = "{s2}"
[[links]]
a = "h1"
b = "r1"
rate = "1Gbps"
delay = "10us"
queue = {{ limit = "1000pkts" }}
[[links]]
name = "bottleneck"
a = "r1"
b = "r2"
rate = "{rate}"
delay = "10ms"
queue = {{ limit = "{limit}" }}
[[links]]
a = "r2"
b = "h2"
rate = "1Gbps"
delay = "10us"
queue = {{ limit = "1000pkts" }}
"""


def scenario(tmp_path: Path, flows: str, rate="1.6Mbps", limit="100pkts", duration="4s", s1="linux", s2="linux",
             trace="", name="emu-test") -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(PATH.format(name=name, duration=duration, rate=rate, limit=limit, s1=s1, s2=s2, trace=trace) + flows)
    return p


def leftovers(pid: int | None = None) -> list[str]:
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    names = [n for n in ns if n.startswith("tcplab-emu-")]
    names += [l.split(":")[1].strip().split("@")[0] for l in links.splitlines() if l.split(":")[1].strip().startswith("tle")]
    if pid is not None:
        names = [n for n in names if n.startswith(f"tcplab-emu-{pid}-") or n.startswith(f"tle{pid}n")]
    return names


# ----------------------------------------------------------------------------- refusal

@pytest.mark.parametrize("pretend, words", [("no-root", "needs root"), ("no-tun", "/dev/net/tun")])
def test_refusal_is_one_line(tmp_path, pretend, words):
    sc = scenario(tmp_path, '[[tcp]]\nname = "t"\nfrom = "h1"\nto = "h2"\nvariant = "linux-reno"\nbytes = "100KB"\n')
    env = dict(os.environ, TCPLAB_EMULATE_PRETEND=pretend)
    p = subprocess.run(TCPLAB + ["emulate", str(sc), "--out", str(tmp_path / "out")], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=60)
    assert p.returncode == 2
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: tcplab emulate needs") and words in lines[0], p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()


def test_bad_emulation_scenarios_are_located_errors(tmp_path):
    # a Linux variant the kernel does not offer; a tcplab variant on a Linux sender
    sc = scenario(tmp_path, '[[tcp]]\nname = "t"\nfrom = "h1"\nto = "h2"\nvariant = "linux-vegas-nope"\nbytes = "100KB"\n')
    with pytest.raises(tcplab.ScenarioError) as e:
        emu.emulate(sc)
    assert e.value.field == "tcp[0].variant" and "linux-vegas-nope" in str(e.value)
    sc = scenario(tmp_path, '[[tcp]]\nname = "t"\nfrom = "h1"\nto = "h2"\nvariant = "reno"\nbytes = "100KB"\n', name="b2")
    with pytest.raises(tcplab.ScenarioError) as e:
        emu.emulate(sc)
    assert e.value.field == "tcp[0].variant" and "linux-" in str(e.value)


def test_variants_lists_the_kernels_congestion_controls():
    p = subprocess.run(TCPLAB + ["variants"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0
    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
        kernel = f.read().split()
    for cc in kernel:
        assert f"linux-{cc}" in p.stdout
    assert "vegas" in p.stdout


# ----------------------------------------------------------------------------- accuracy

def syn_rtt(rate_bps: float) -> float:
    """Round trip of a 60-byte Linux SYN and SYN-ACK over h1-r1-r2-h2 (1 Gbit/s access links
    with 10 us, the bottleneck with 10 ms): the smallest RTT the kernel can measure."""
    one_way = 2 * (60 * 8 / 1e9 + 10e-6) + 60 * 8 / rate_bps + 10e-3
    return 2 * one_way


def data_rtt(rate_bps: float) -> float:
    """Round trip of a 1500-byte data segment and a 52-byte ACK over the same path, unqueued."""
    path = lambda size: 2 * (size * 8 / 1e9 + 10e-6) + size * 8 / rate_bps + 10e-3
    return path(1500) + path(52)


def min_rtt_floor(rate_bps: float) -> float:
    """The least min_rtt Linux may report on this path without anything released early: its
    samples are the SYN exchange's (microseconds) and clean data ACKs' (at least data_rtt), or,
    for ACKs of retransmitted data, the timestamp option's whole milliseconds (tcp_rtt_tsopt_us:
    a difference of two 1 ms clocks, so up to 1 ms under the true round trip, at least 1 ms)."""
    return min(syn_rtt(rate_bps), math.ceil(round((data_rtt(rate_bps) - 1e-3) * 1e3, 9)) / 1e3)


def path_min(size: int, bottleneck_bps: float) -> float:
    """Least one-way time of a `size`-byte datagram over h1-r1-r2-h2 (either direction), in ns."""
    return 1e9 * (2 * (size * 8 / 1e9 + 10e-6) + size * 8 / bottleneck_bps + 10e-3)


#: A machine that woke the emulator later than this (p99) cannot be held to the 0.1 ms target.
WAKEUP_BUDGET_MS = 0.05


@needs_emulation
@pytest.mark.parametrize("rate, bps, limit", [("1.6Mbps", 1.6e6, "100pkts"), ("100Mbps", 100e6, "300pkts")])
def test_rate_and_delay_accuracy(tmp_path, rate, bps, limit):
    sc = scenario(tmp_path, '[[tcp]]\nname = "bulk"\nfrom = "h1"\nto = "h2"\nvariant = "linux-cubic"\nduration = "3s"\n',
                  rate=rate, limit=limit, duration="4s", trace='trace = { pcap = ["bottleneck"] }')
    r = emu.emulate(sc, out=tmp_path / "run")
    s = r.summary
    em = s["emulation"]
    print(f"\n{rate}: lateness p50 {em['release_lateness_p50_ms']:.3f} p99 {em['release_lateness_p99_ms']:.3f} "
          f"max {em['release_lateness_max_ms']:.3f} ms, {em['released_over_1ms_late']} over 1 ms of "
          f"{em['datagrams_released']} ({em['released_while_held']} held); wake-up p99 {em['wakeup_lateness_p99_ms']:.3f} max {em['wakeup_lateness_max_ms']:.3f} ms")

    # --- what must always hold, whatever the machine's load ---
    # 1. Nothing released early, by the emulator's own records of every datagram: released at
    #    or after its due time, and due no sooner after its arrival (stamped when read) than
    #    serialization and propagation over the whole path allow.
    pk = r.emulation_packets
    assert pk.height == em["datagrams_released"] > 100
    assert (pk["released_ns"] >= pk["due_ns"]).all()
    least = [path_min(n, bps) for n in pk["size"].to_list()]
    transit = (pk["due_ns"].cast(int) - pk["arrival_ns"].cast(int)).to_list()
    assert all(t >= m - 1 for t, m in zip(transit, least)), min(t - m for t, m in zip(transit, least))
    assert em["released_early"] == 0
    # ... and none waited in the emulator for a wake-up timed by other events (the loop once
    #     slept with datagrams that fell due during its last step: 2-5 ms late, 3 % of them)
    assert em["slept_with_datagrams_due"] == 0
    assert (tmp_path / "run" / emu.PACKETS_FILE).exists()
    # 2. The kernel's own measurement: no RTT below what the path allows.
    flow = next(f for f in s["flows"] if f["name"] == "bulk")
    assert flow["min_rtt_s"] >= min_rtt_floor(bps) - 1e-6, (flow["min_rtt_s"], min_rtt_floor(bps))
    assert flow["payload_intact"]
    # 3. Rate within 1 %: the emulator's counters (bytes over the wall-clock time the bottleneck
    #    was busy) ...
    link = next(l for l in em["links"] if l["name"] == "r1->r2")
    assert abs(link["achieved_over_configured"] - 1) < 0.01, (link, em)
    # ... and the kernel's: the sender's acknowledged bytes (TCP_INFO) over the saturated middle
    # of the run, against the payload share of 1500-byte datagrams (1448 B with timestamps)
    sm = flow["tcp_info_samples"]
    t, b, rx = sm["t_s"], sm["bytes_acked"], sm["total_retrans"]
    i = next(k for k in range(len(t)) if t[k] > 1.0)
    j = max(k for k in range(len(t)) if t[k] < 2.9)
    goodput = (b[j] - b[i] + 1448 * (rx[j] - rx[i])) * 8 / (t[j] - t[i])
    assert abs(goodput / (bps * 1448 / 1500) - 1) < 0.01, (goodput, bps)
    # 4. The capture: the bottleneck's pcap holds every datagram it carried, spaced by its rate
    pcap = (tmp_path / "run" / "pcap_r1-r2.pcap").read_bytes()
    times, sizes, off = [], [], 24
    while off < len(pcap):
        sec, ns, cap, orig = (int.from_bytes(pcap[off + k:off + k + 4], "little") for k in (0, 4, 8, 12))
        times.append(sec + ns / 1e9)
        sizes.append(orig)
        off += 16 + cap
    sl = next(l for l in s["links"] if l["name"] == "r1->r2")
    assert abs(len(times) - sl["packets_forwarded"]) <= 1  # one may be in service at the end
    busy = [(times[k + 1] - times[k], sizes[k]) for k in range(len(times) - 1) if 1.0 < times[k] < 2.9]
    back_to_back = [(dt, n) for dt, n in busy if dt < 1.5 * n * 8 / bps]
    rate_seen = sum(n for _, n in back_to_back) * 8 / sum(dt for dt, _ in back_to_back)
    assert abs(rate_seen / bps - 1) < 0.001  # the capture's timestamps are the link's (due) times
    # 5. The summary's verdict is its figures'
    behind = any(l.get("fell_behind", False) for l in em["links"]) or em["release_lateness_p99_ms"] > 0.1
    assert em["fell_behind"] == behind and em["faithful"] == (not behind)
    assert leftovers(os.getpid()) == []

    # --- lateness: only against what this machine allowed in this run ---
    wake = em["wakeup_lateness_p99_ms"]
    if wake > WAKEUP_BUDGET_MS:
        print(f"lateness not checked: the machine woke the emulator p99 {wake:.3f} ms late "
              f"(budget {WAKEUP_BUDGET_MS} ms): overloaded")
        return
    # releases the machine held up (it preempted the emulator, or woke it over 0.05 ms late,
    # between due time and release)
    # are its lateness, not the emulator's; the emulator's own must meet the target
    print(f"{em['released_while_held']} releases held by the machine; lateness p99 of the others "
          f"{em['release_lateness_p99_unheld_ms']:.3f} ms")
    if bps < 10e6:
        assert em["release_lateness_p99_unheld_ms"] <= 0.1 + wake, em
    else:
        # At 100 Mbit/s (a datagram every 0.12 ms) the emulator shares 2 cores with the kernel's
        # TCP and, on a virtual machine, with the host's other guests; delays it cannot see as
        # "held" reach its tail (quiet machine, 2026-11-29: wake-up p99 0.024 ms, unheld release
        # p99 0.85 ms; a CI run: 0.27 ms, verdict "not faithful" as it must be). The tail is
        # measured there (printed above, benches/emulation_ceiling.py), not asserted; the median
        # must meet the target, which a release path on a coarse timer would miss.
        assert em["release_lateness_p50_ms"] <= 0.1 + wake, em
    # the SYN exchange's RTT exceeds the path's by no more than its two releases' lateness and
    # the time they waited to be read (1 ms)
    first = pk.sort("arrival_ns").head(2)["released_ns"].cast(int) - pk.sort("arrival_ns").head(2)["due_ns"].cast(int)
    if not (pk.sort("arrival_ns").head(2)["held"] > 0).any():
        assert flow["min_rtt_s"] <= syn_rtt(bps) + first.sum() / 1e9 + 1e-3, (flow["min_rtt_s"], syn_rtt(bps), first.to_list())


# ----------------------------------------------------------------------------- tcplab endpoints on the wire

@needs_emulation
def test_tcplab_endpoints_talk_to_linux_with_byte_integrity(tmp_path):
    """1 MB from a tcplab endpoint of each variant to a Linux socket, and 1 MB back from Linux to
    a tcplab endpoint, concurrently; every byte checked against the pattern."""
    variants = ["tahoe", "reno", "newreno", "sack", "sack-rfc6675", "vegas", "vegas-star",
                "lite.0", "lite.1", "lite.2", "lite.3", "lite.4", "lite.5", "lite.6"]
    flows = "".join(f'[[tcp]]\nname = "t-{v}"\nfrom = "h1"\nto = "h2"\nvariant = "{v}"\nbytes = "1MB"\nsend_buffer = "64KB"\n'
                    for v in variants)
    flows += '[[tcp]]\nname = "back"\nfrom = "h2"\nto = "h1"\nvariant = "linux-reno"\nbytes = "1MB"\n'
    sc = scenario(tmp_path, flows, rate="100Mbps", limit="200pkts", duration="30s", s1="tcplab", s2="linux")
    r = emu.emulate(sc)
    by = {f["name"]: f for f in r.summary["flows"]}
    for name in [f"t-{v}" for v in variants] + ["back"]:
        f = by[name]
        assert f["completed"], f
        assert f["bytes_delivered"] == 1 << 20, f
        assert f["payload_intact"] is True, f
    assert by["back"]["stack"] == ["linux", "tcplab"]
    assert leftovers(os.getpid()) == []


# ----------------------------------------------------------------------------- background from the simulator

BACKGROUND = """
[[nodes]]
name = "bg1"
kind = "host"
[[nodes]]
name = "bg2"
kind = "host"
[[links]]
a = "bg1"
b = "r1"
rate = "1Gbps"
delay = "10us"
[[links]]
a = "r2"
b = "bg2"
rate = "1Gbps"
delay = "10us"
[[udp]]
name = "onoff"
from = "bg1"
to = "bg2"
pattern = "onoff"
rate = "4Mbps"
packet_size = "1000B"
on = "100ms"
off = "100ms"
[[traffic]]
name = "tcplib"
kind = "tcplib"
from = "bg1"
to = "bg2"
variant = "reno"
interarrival = "200ms"
"""


@needs_emulation
def test_simulated_background_shares_the_emulated_links(tmp_path):
    """The simulator's on/off UDP and tcplib sources on simulated hosts bg1 -> bg2 cross the same
    bottleneck as a real Linux flow h1 -> h2: its queue holds both, the real flow gets what the
    background leaves, and the background's own schedule is the seed's (UDP emissions do not
    depend on the real traffic: the same seed sends the same packets, another seed others)."""
    flows = '[[tcp]]\nname = "bulk"\nfrom = "h1"\nto = "h2"\nvariant = "linux-cubic"\nduration = "2.5s"\n' + BACKGROUND
    sc = scenario(tmp_path, flows, rate="10Mbps", limit="100pkts", duration="3s")
    runs = [emu.emulate(sc, seed=seed).summary for seed in (5, 5, 6)]
    for s in runs:
        udp = next(u for u in s["udp"] if u["name"] == "onoff")
        link = next(l for l in s["links"] if l["name"] == "r1->r2")
        bulk = next(f for f in s["flows"] if f["name"] == "bulk")
        assert udp["received_pkts"] > 50
        # the bottleneck carried the background's bytes and the real flow's
        assert link["bytes_forwarded"] >= udp["received_bytes"] + bulk["bytes_acked"]
        assert 0 < bulk["bytes_acked"] < 10e6 / 8 * 2.5
        assert s["emulation"]["released_early"] == 0
    sent = [next(u for u in s["udp"] if u["name"] == "onoff")["sent_pkts"] for s in runs]
    assert sent[0] == sent[1] != sent[2], sent
    tl = [next(t for t in s["traffic"] if t["name"] == "tcplib") for s in runs]
    print("tcplib background:", [(t["conversations_started"], t["sent_KB"]) for t in tl])
    assert tl[0]["conversations_started"] == tl[1]["conversations_started"]
    assert leftovers(os.getpid()) == []


# ----------------------------------------------------------------------------- user programs

CLIENT = ("import sys, time, urllib.request\n"
          "for k in range(50):\n"
          "    try:\n"
          "        body = urllib.request.urlopen(sys.argv[1], timeout=5).read(); break\n"
          "    except OSError:\n"
          "        time.sleep(0.2)\n"
          "print('got', len(body), 'bytes'); print('client done', file=sys.stderr)\n")


def commands(host_server="h2", host_client="h1") -> str:
    return (f'[[commands]]\nname = "server"\nhost = "{host_server}"\nwait = false\n'
            f'run = ["python3", "-m", "http.server", "8080", "--bind", "{{ip:{host_server}}}"]\n'
            f'[[commands]]\nname = "client"\nhost = "{host_client}"\nstart = "500ms"\n'
            f'run = ["python3", "-c", {json.dumps(CLIENT)}, "http://{{ip:{host_server}}}:8080/"]\n')


@needs_emulation
def test_user_commands_run_in_the_hosts_namespaces(tmp_path):
    """An HTTP server on h2 and a client on h1 (any programs: here Python's), through the emulated
    path; the run ends when the waited command (the client) exits, long before `duration`; their
    output is kept in the run directory."""
    sc = scenario(tmp_path, commands(), rate="10Mbps", duration="60s", trace='trace = { pcap = ["bottleneck"] }')
    out = tmp_path / "run"
    r = emu.emulate(sc, out=out)
    s = r.summary
    rows = {c["name"]: c for c in s["commands"]}
    assert rows["client"]["exit_code"] == 0, rows
    assert rows["client"]["run"][-1] == "http://10.0.0.4:8080/"  # {ip:h2}: node 3 -> 10.0.0.4
    got = (out / "command-client.stdout").read_text()
    n = int(got.split()[1])
    assert got.startswith("got ") and n > 100, got
    assert (out / "command-client.stderr").read_text() == "client done\n"
    assert "GET / HTTP" in (out / "command-server.stderr").read_text()  # the server's access log
    assert rows["server"]["exited_s"] is None or rows["server"]["exit_code"] != 0  # killed at the end
    assert s["emulation"]["wall_s"] < 30
    # the page crossed the bottleneck: at least its bytes, in datagrams the emulator released on time
    fwd = next(l for l in s["links"] if l["name"] == "r2->r1")
    assert fwd["bytes_forwarded"] >= n
    assert s["emulation"]["released_early"] == 0
    assert leftovers(os.getpid()) == []


def test_user_commands_are_checked_before_anything_is_made(tmp_path):
    sc = scenario(tmp_path, commands(host_client="r1"), s1="linux", s2="linux")
    with pytest.raises(tcplab.ScenarioError) as e:
        emu.emulate(sc)
    assert e.value.field == "commands[1].host" and "stack" in str(e.value)
    sc = scenario(tmp_path, commands().replace("{ip:h2}", "{ip:nowhere}"), name="c2")
    with pytest.raises(tcplab.ScenarioError) as e:
        emu.emulate(sc)
    assert e.value.field == "commands[0].run" and "nowhere" in str(e.value)


def _tcp_windows(recs, port_from: int):
    """(time, advertised window in bytes) of every segment from TCP port `port_from` in pcap
    records, the window scaled by the shift its SYN (or SYN-ACK) announced."""
    shift, out = 0, []
    for t, _, b in recs:
        ihl = (b[0] & 15) * 4
        if b[9] != 6 or int.from_bytes(b[ihl:ihl + 2], "big") != port_from:
            continue
        flags, win, doff = b[ihl + 13], int.from_bytes(b[ihl + 14:ihl + 16], "big"), (b[ihl + 12] >> 4) * 4
        if flags & 0x02:  # SYN: read its window-scale option (kind 3)
            opts, k = b[ihl + 20:ihl + doff], 0
            while k < len(opts) and opts[k] != 0:
                if opts[k] == 1:
                    k += 1
                    continue
                if opts[k] == 3:
                    shift = opts[k + 2]
                k += opts[k + 1]
            continue
        out.append((t, win << shift))
    return out


SETUP_RMEM = ('[[commands]]\nname = "rmem"\nhost = "h2"\nsetup = true\n'
              'run = ["sysctl", "-qw", "net.ipv4.tcp_rmem=4096 16777216 16777216"]\n')


@needs_emulation
def test_setup_commands_run_before_the_sinks_listen(tmp_path):
    """A `setup = true` command runs to completion in its namespace before the emulator's sink
    listens: the receiver's socket takes the tcp_rmem[1] it set (16 MiB), so its first ACKs
    already advertise a window of megabytes. Were it run at 0 s, after the sink listened (as a
    plain command is), the socket would keep the default 128 KiB buffer and its window would stay
    below 128 KiB until autotuning grew it, rounds later."""
    flow = '[[tcp]]\nname = "f"\nfrom = "h1"\nto = "h2"\nvariant = "linux-reno"\nduration = "1s"\n'
    sc = scenario(tmp_path, flow + SETUP_RMEM, rate="10Mbps", duration="1.5s", trace='trace = { pcap = ["r2->r1"] }')
    out = tmp_path / "run"
    s = emu.emulate(sc, out=out).summary
    row = next(c for c in s["commands"] if c["name"] == "rmem")
    assert row["setup"] is True and row["exit_code"] == 0 and row["wait"] is False, row
    recs = pcap_records((out / "pcap_r2-r1.pcap").read_bytes())
    sink_port = next(int.from_bytes(b[(b[0] & 15) * 4:(b[0] & 15) * 4 + 2], "big") for _, _, b in recs if b[9] == 6)
    wins = _tcp_windows(recs, sink_port)
    assert len(wins) > 20
    assert min(w for _, w in wins[:20]) > 1_000_000, wins[:20]
    assert leftovers(os.getpid()) == []


SHOW_CPUS = ('[[commands]]\nname = "cpus"\nhost = "h2"\nsetup = true\n'
             'run = ["sh", "-c", "cat /sys/class/net/tle*/queues/rx-0/rps_cpus; grep Cpus_allowed_list /proc/self/status"]\n')


@needs_emulation
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="CPU placement needs two CPUs")
@pytest.mark.parametrize("pin", [None, "threads", "off"])
def test_cpu_placement_is_applied_and_recorded(tmp_path, monkeypatch, pin):
    """The emulator's loop alone on the highest CPU, every thread and process of the hosts (a
    setup command here) on the others and, by default, what a host's TAP receives steered there
    too (its rps_cpus); `TCPLAB_EMU_PIN=threads` pins without steering, `off` neither. The
    summary says which (issue 26: with the hosts' receive path in the loop's writes and their
    pacing timers on its CPU, BBR's releases came late in bursts)."""
    if pin is None:
        monkeypatch.delenv("TCPLAB_EMU_PIN", raising=False)
    else:
        monkeypatch.setenv("TCPLAB_EMU_PIN", pin)
    flow = '[[tcp]]\nname = "f"\nfrom = "h1"\nto = "h2"\nvariant = "linux-reno"\nduration = "200ms"\n'
    out = tmp_path / "run"
    s = emu.emulate(scenario(tmp_path, flow + SHOW_CPUS, rate="10Mbps", duration="0.5s"), out=out).summary
    cpus = sorted(os.sched_getaffinity(0))
    rps, allowed = (out / "command-cpus.stdout").read_text().split("\n")[:2]
    got = s["emulation"]["cpu_affinity"]
    if pin == "off":
        assert got is None
        assert int(rps.replace(",", ""), 16) == 0
        return
    assert got == {"emulator_cpu": cpus[-1], "host_cpus": cpus[:-1], "host_receive_steered": pin is None}, got
    mask = sum(1 << c for c in cpus[:-1])
    assert int(rps.replace(",", ""), 16) == (mask if pin is None else 0), rps
    # The setup command ran on the hosts' CPUs only (a one-CPU list prints as "0").
    assert allowed.split(":")[1].strip() in {",".join(map(str, cpus[:-1])), f"{cpus[0]}-{cpus[-2]}"}, allowed
    assert os.sched_getaffinity(0) == set(cpus), "the caller's CPUs are given back"


@needs_emulation
def test_cpu_placement_setting_is_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("TCPLAB_EMU_PIN", "yes")
    flow = '[[tcp]]\nname = "f"\nfrom = "h1"\nto = "h2"\nvariant = "linux-reno"\nduration = "200ms"\n'
    with pytest.raises(Exception, match="TCPLAB_EMU_PIN must be on, threads or off"):
        emu.emulate(scenario(tmp_path, flow, rate="10Mbps", duration="0.5s"))


def test_setup_commands_are_checked(tmp_path):
    """A setup command runs before the clock starts: a `start` after 0 s is a located error,
    found before anything is made (no root needed)."""
    flow = '[[tcp]]\nname = "f"\nfrom = "h1"\nto = "h2"\nvariant = "linux-reno"\nduration = "1s"\n'
    sc = scenario(tmp_path, flow + SETUP_RMEM + 'start = "1s"\n')
    with pytest.raises(tcplab.ScenarioError) as e:
        emu.emulate(sc)
    assert e.value.field == "commands[0].start" and "before the emulation's clock starts" in str(e.value)


@needs_emulation
def test_a_failing_setup_command_stops_the_emulation(tmp_path):
    flow = '[[tcp]]\nname = "f"\nfrom = "h1"\nto = "h2"\nvariant = "linux-reno"\nduration = "1s"\n'
    bad = '[[commands]]\nname = "bad"\nhost = "h1"\nsetup = true\nrun = ["sh", "-c", "echo no such knob >&2; exit 3"]\n'
    sc = scenario(tmp_path, flow + bad)
    with pytest.raises(Exception) as e:
        emu.emulate(sc, out=tmp_path / "run")
    assert 'setup command "bad" on host h1: exited 3: no such knob' in str(e.value)
    assert leftovers(os.getpid()) == []


@needs_emulation
def test_progress_is_reported_off_the_emulators_loop(tmp_path):
    """The loop runs in real time on the calling thread: the Python callback must not run there
    (taking the GIL inside the loop would stall the network behind any Python thread holding it).
    It is called from a thread of its own with increasing times; one that raises stops the run."""
    import threading
    flow = '[[tcp]]\nname = "f"\nfrom = "h1"\nto = "h2"\nvariant = "linux-reno"\nduration = "1s"\n'
    sc = scenario(tmp_path, flow, duration="1.5s")
    calls = []
    emu.emulate(sc, progress=lambda t, end: calls.append((t, end, threading.get_ident())))
    assert calls and all(end == 1.5 for _, end, _ in calls), calls
    assert [t for t, _, _ in calls] == sorted(t for t, _, _ in calls)
    assert threading.get_ident() not in {i for _, _, i in calls}

    def stop(t, end):
        raise RuntimeError("stop")
    with pytest.raises(KeyboardInterrupt):
        emu.emulate(sc, progress=stop)
    assert leftovers(os.getpid()) == []


def pcap_records(data: bytes):
    """(time s, original length, captured bytes) of every record of a classic pcap file."""
    off, out = 24, []
    while off < len(data):
        sec, ns, cap, orig = (int.from_bytes(data[off + k:off + k + 4], "little") for k in (0, 4, 8, 12))
        out.append((sec + ns / 1e9, orig, data[off + 16:off + 16 + cap]))
        off += 16 + cap
    return out


@needs_emulation
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed (make test installs Debian's iperf3 as root)")
def test_iperf3_reproduction_agrees_with_the_links_and_the_capture(tmp_path):
    """scenarios/emulation/iperf3: iperf3's own report, the bottleneck's statistics and its
    capture count the same bytes within 2 %."""
    out = tmp_path / "run"
    r = emu.emulate(ROOT / "scenarios" / "emulation" / "iperf3" / "scenario.toml", out=out)
    s = r.summary
    rows = {c["name"]: c for c in s["commands"]}
    assert rows["client"]["exit_code"] == 0, (rows, (out / "command-client.stderr").read_text())
    report = json.loads((out / "command-client.stdout").read_text())
    sent = report["end"]["sum_sent"]["bytes"]
    received = report["end"]["sum_received"]["bytes"]
    assert received > 2_000_000  # 15 s at 200 KB/s
    # the capture: every datagram the bottleneck forwarded, its TCP payload towards port 5201
    recs = pcap_records((out / "pcap_Gateway1-Gateway2.pcap").read_bytes())
    link = next(l for l in s["links"] if l["name"] == "Gateway1->Gateway2")
    assert abs(len(recs) - link["packets_forwarded"]) <= 1
    assert abs(sum(n for _, n, _ in recs) - link["bytes_forwarded"]) <= 1514
    first: dict[int, int] = {}  # per connection (source port): first data byte's sequence number
    span: dict[int, int] = {}  # and how far its data reached (every byte counted once)
    for _, orig, b in recs:
        ihl = (b[0] & 15) * 4
        if b[9] != 6:
            continue
        sport, dport = int.from_bytes(b[ihl:ihl + 2], "big"), int.from_bytes(b[ihl + 2:ihl + 4], "big")
        seq = int.from_bytes(b[ihl + 4:ihl + 8], "big")
        payload = orig - ihl - (b[ihl + 12] >> 4) * 4
        if dport != 5201 or payload <= 0:
            continue
        first.setdefault(sport, seq)
        span[sport] = max(span.get(sport, 0), (seq - first[sport]) % 2**32 + payload)
    new_payload = sum(span.values())
    # what the server read (iperf3's sum_received; sum_sent counts what the client wrote into its
    # socket, the send buffer's unsent bytes included) against what crossed the bottleneck: the
    # data connection's bytes, the control connection's few hundred, those in flight at the end
    # (at most the 10-packet queue and the path's 20 KB: about 1 % of 15 s at 200 KB/s)
    print(f"iperf3 sent {sent} received {received}; capture {new_payload} new payload bytes")
    assert received <= sent
    assert abs(new_payload / received - 1) < 0.02, (new_payload, received)
    # the link's own counters: IP bytes over the run against the capture's (above) and iperf3's
    # throughput against the configured rate's payload share (1448 of 1500 bytes)
    bps = report["end"]["sum_received"]["bits_per_second"]
    assert bps <= 200 * 1024 * 8 * 1448 / 1500 * 1.02, bps
    assert s["emulation"]["released_early"] == 0
    assert leftovers(os.getpid()) == []


# ----------------------------------------------------------------------------- cleanup

@needs_emulation
def test_kill_9_then_cleanup_leaves_nothing(tmp_path):
    sc = scenario(tmp_path, '[[tcp]]\nname = "bulk"\nfrom = "h1"\nto = "h2"\nvariant = "linux-cubic"\nduration = "30s"\n',
                  duration="30s")
    p = subprocess.Popen(TCPLAB + ["emulate", str(sc), "--out", str(tmp_path / "out")], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len([n for n in leftovers(p.pid) if n.startswith("tcplab-emu-")]) < 2:
            time.sleep(0.1)
        time.sleep(1.0)  # mid-run: traffic flowing
        made = leftovers(p.pid)
        assert len([n for n in made if n.startswith("tcplab-emu-")]) == 2, made
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    assert [n for n in leftovers(p.pid) if n.startswith("tcplab-emu-")], "kill -9 leaves the namespaces behind"
    c = subprocess.run(TCPLAB + ["emulate", "--cleanup"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert c.returncode == 0, c.stderr
    assert "removed namespace tcplab-emu-" in c.stdout
    assert leftovers(p.pid) == []


@needs_emulation
def test_sigterm_cleans_up_and_saves(tmp_path):
    sc = scenario(tmp_path, '[[tcp]]\nname = "bulk"\nfrom = "h1"\nto = "h2"\nvariant = "linux-reno"\nduration = "30s"\n',
                  duration="30s")
    p = subprocess.Popen(TCPLAB + ["emulate", str(sc), "--out", str(tmp_path / "out")], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not leftovers(p.pid):
        time.sleep(0.1)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode != 0 and "Traceback" not in err
    assert leftovers(p.pid) == []
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert s["emulation"]["interrupted"] is True


# ----------------------------------------------------------------------------- differential check

@needs_emulation
@pytest.mark.parametrize("variant", ["vegas", "reno"])
def test_differential_emulated_vs_simulated(variant):
    """The same tcplab endpoint code over the emulator (real time, real headers) and in the
    simulator: when the emulated transfer took the simulator's recovery path (the same coarse
    timeouts, fast retransmits and retransmitted segments), completion within 5 % and bottleneck
    drops within 2 (issue 16). Real time can move an event across a 500 ms BSD tick and send
    recovery down another path (reno failed the 5 % in 2 of 17 runs on 2026-11-29,
    10.71 s against 8.42 s, both times with the machine otherwise idle); then the two runs are
    different experiments, and only what holds for any path is asserted, the divergence
    reported as a warning."""
    scen = ROOT / "scenarios" / "emulation" / "brakmo" / "scenario.toml"
    ov = {"tcp[0].variant": variant}
    sim = tcplab.run(str(scen), overrides=ov).summary
    em = emu.emulate(scen, overrides=ov).summary
    f_sim = next(f for f in sim["flows"] if f["name"] == "transfer")
    f_em = next(f for f in em["flows"] if f["name"] == "transfer")
    assert f_em["stack"] == ["tcplab", "tcplab"] and f_em["payload_intact"]
    assert f_em["completed"] and f_em["bytes_delivered"] == f_sim["bytes_delivered"]
    path = lambda f: (f["coarse_timeouts"], f["fast_retransmits"], f["retransmitted_segments"])
    if path(f_em) != path(f_sim):
        warnings.warn(f"{variant}: the emulated recovery path {path(f_em)} is not the simulator's "
                      f"{path(f_sim)} (completion {f_em['completion_s']:.3f} s vs {f_sim['completion_s']:.3f} s)")
        return
    assert abs(f_em["completion_s"] / f_sim["completion_s"] - 1) < 0.05, (f_em["completion_s"], f_sim["completion_s"])
    drops = lambda s: next(l for l in s["links"] if l["name"] == "Gateway1->Gateway2")["drops"]
    assert abs(drops(em) - drops(sim)) <= 2
