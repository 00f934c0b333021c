"""Emulation (issue 16): real Linux TCP and tcplab's endpoint on the wire through tcplab's links
in real time. These tests need root and /dev/net/tun (CI runs as root on a machine with TUN);
elsewhere they skip with the emulator's own one-line reason — except the refusal test, which
simulates a machine without root or TUN through TCPLAB_EMULATE_PRETEND."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
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


@needs_emulation
@pytest.mark.parametrize("rate, bps, limit", [("1.6Mbps", 1.6e6, "100pkts"), ("100Mbps", 100e6, "300pkts")])
def test_rate_and_delay_accuracy(tmp_path, rate, bps, limit):
    sc = scenario(tmp_path, '[[tcp]]\nname = "bulk"\nfrom = "h1"\nto = "h2"\nvariant = "linux-cubic"\nduration = "3s"\n',
                  rate=rate, limit=limit, duration="4s", trace='trace = { pcap = ["bottleneck"] }')
    r = emu.emulate(sc, out=tmp_path / "run")
    s = r.summary
    em = s["emulation"]
    link = next(l for l in em["links"] if l["name"] == "r1->r2")
    # Within 1 % when the emulator kept up (p99 release lateness under 0.1 ms); on a loaded
    # 2-core machine a 100 Mbit/s run can fall behind, and then the summary must say so
    # (`fell_behind`; an emulator stalled by RT throttling measured 1.0-2.1 % low at
    # 100 Mbit/s) and the error stays within 3 %.
    tol = 0.01 if not em["fell_behind"] else 0.03
    # the emulator's own counters: bytes over the wall-clock time the bottleneck was busy
    assert abs(link["achieved_over_configured"] - 1) < tol, (link, em)
    # the kernel's: the sender's acknowledged bytes (TCP_INFO) over the saturated middle of the
    # run, against the payload share of 1500-byte datagrams (1448 B with timestamps)
    flow = next(f for f in s["flows"] if f["name"] == "bulk")
    sm = flow["tcp_info_samples"]
    t, b, rx = sm["t_s"], sm["bytes_acked"], sm["total_retrans"]
    i = next(k for k in range(len(t)) if t[k] > 1.0)
    j = max(k for k in range(len(t)) if t[k] < 2.9)
    # payload the bottleneck carried: new bytes acknowledged plus the retransmitted segments
    goodput = (b[j] - b[i] + 1448 * (rx[j] - rx[i])) * 8 / (t[j] - t[i])
    assert abs(goodput / (bps * 1448 / 1500) - 1) < tol, (goodput, bps, em["fell_behind"])
    # delay: the kernel's smallest RTT sample is the SYN exchange's, within 1 ms (Linux takes
    # RTT samples from the 1 ms timestamp clock as well as its own microsecond one)
    assert abs(flow["min_rtt_s"] - syn_rtt(bps)) <= 1e-3, (flow["min_rtt_s"], syn_rtt(bps))
    assert flow["payload_intact"]
    assert em["release_lateness_p50_ms"] < 0.1
    assert em["fell_behind"] == (em["release_lateness_p99_ms"] > 0.1)
    # the capture: the bottleneck's pcap holds every datagram it carried, spaced by its rate
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
    assert leftovers(os.getpid()) == []


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
    simulator: completion within 5 %, bottleneck drops within 2 (issue 16)."""
    scen = ROOT / "scenarios" / "emulation" / "brakmo" / "scenario.toml"
    ov = {"tcp[0].variant": variant}
    sim = tcplab.run(str(scen), overrides=ov).summary
    em = emu.emulate(scen, overrides=ov).summary
    f_sim = next(f for f in sim["flows"] if f["name"] == "transfer")
    f_em = next(f for f in em["flows"] if f["name"] == "transfer")
    assert f_em["stack"] == ["tcplab", "tcplab"] and f_em["payload_intact"]
    assert abs(f_em["completion_s"] / f_sim["completion_s"] - 1) < 0.05, (f_em["completion_s"], f_sim["completion_s"])
    drops = lambda s: next(l for l in s["links"] if l["name"] == "Gateway1->Gateway2")["drops"]
    assert abs(drops(em) - drops(sim)) <= 2
