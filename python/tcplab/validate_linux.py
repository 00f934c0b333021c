"""`tcplab validate-linux`: tcplab's TCP beside the kernel's, case by case (issue 26).

Each case is one dumbbell — sender host, two routers, receiver host; 1 Gbit/s access links of
10 µs; the bottleneck at `rate` with one-way delay RTT/2 − 20 µs and a DropTail buffer of
`buffer` × BDP packets (1500-byte packets) — run twice over the identical link and queue code:

* `sim`: tcplab's own endpoint on Linux's defaults (`reno` → `modern-reno`: Linux's Reno;
  `cubic` → `modern`: SACK + RACK-TLP + PRR; `bbr` → `bbr`: RACK-TLP, BBR sets cwnd itself), tuned
  as the kernel runs: IW10, no initial ssthresh (16 MiB), window scaling, 16 MiB buffers, Linux's
  RTO (an RTT sample per ACK, RTO = SRTT + max(200 ms, 4·mdev), the variants' `linux` timer),
  Linux's receiver ACKs (every second segment, 40 ms delayed-ACK timer, quick-ACK for the first
  16 segments and for every segment while `tcp_grow_window` opens the window: about 950
  segments with a 16 MiB buffer), MSS 1448 (1500-byte packets, no timestamps);
* `linux`: the kernel's TCP (`linux-<cc>`) through `tcplab emulate` (namespaces, real time),
  with per-namespace settings written in every case's `kernel_settings` (timestamps off so the MSS
  is the simulator's, 16 MiB socket buffers, no metrics cache, GSO limited to one segment on the
  TAP device so nothing leaves in bursts a 1500-byte wire would not carry). They run as the
  emulator's `setup` commands: to completion after the namespaces are made and before its sinks
  listen, so the listening socket, and every connection it accepts, starts with `tcp_rmem[1]` =
  16 MiB = `tcp_rmem[2]` (autotuning, `tcp_rcv_space_adjust`, has nothing left to grow; the
  receive window still opens from its initial value by `tcp_grow_window`). Before 2026-11-29 they
  ran at 0 s, after the sinks listened: the receivers had the default 128 KiB buffer and
  autotuned it.

Per case: aggregate throughput, retransmitted segments, RTT p50/p95 and queueing delay p95
(RTT − the path's propagation RTT) from smoothed-RTT samples every 10 ms (the kernel's TCP_INFO
`tcpi_rtt`, the simulator's `srtt` trace), and the distance between the two cwnd-over-time
curves of the first flow (mean |sim − linux| over a 10 ms grid ÷ mean linux cwnd). Verdict per
case against the issue's targets: throughput error ≤ 5 %, p95 queueing-delay error ≤ 10 %,
retransmissions within ±20 % or ±3. A variant this build lacks is "skipped: variant not in this
build"; a variant the kernel lacks "skipped: kernel has no ...".
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, asdict
from pathlib import Path
from typing import Any, Callable

import numpy as np

ACCESS_DELAY_S = 10e-6
PACKET_BYTES = 1500
MSS = 1448
BUFFER_BYTES = "16MB"
SAMPLE_S = 0.010
SIM_VARIANT = {"reno": "modern-reno", "cubic": "modern", "bbr": "bbr"}
TARGETS = {"throughput_err": 0.05, "qdelay_p95_err": 0.10, "retrans_rel": 0.20, "retrans_abs": 3}

# Inside each Linux namespace, before any socket is made (the emulator's `setup` [[commands]]).
KERNEL_SETTINGS = [
    "sysctl -qw net.ipv4.tcp_timestamps=0",
    "sysctl -qw net.ipv4.tcp_no_metrics_save=1",
    "sysctl -qw net.ipv4.tcp_sack=1",
    "sysctl -qw net.ipv4.tcp_ecn=0",
    "sysctl -qw net.ipv4.tcp_slow_start_after_idle=0",
    "sysctl -qw 'net.ipv4.tcp_rmem=4096 16777216 16777216'",
    "sysctl -qw 'net.ipv4.tcp_wmem=4096 16777216 16777216'",
    "for d in /sys/class/net/tle*; do ip link set dev ${d##*/} gso_max_segs 1 gso_max_size 1500; done",
]
FLOW_START_S = 0.3


@dataclass(frozen=True)
class Case:
    cc: str
    rate_mbps: int
    rtt_ms: int
    buffer_bdp: float
    flows: int
    duration_s: float

    @property
    def name(self) -> str:
        return f"{self.cc}-{self.rate_mbps}M-{self.rtt_ms}ms-{self.buffer_bdp:g}bdp-{self.flows}f"

    @property
    def bdp_packets(self) -> float:
        return self.rate_mbps * 1e6 * self.rtt_ms / 1e3 / 8 / PACKET_BYTES

    @property
    def buffer_packets(self) -> int:
        return max(2, round(self.buffer_bdp * self.bdp_packets))

    @property
    def propagation_rtt_s(self) -> float:
        return self.rtt_ms / 1e3


def full_matrix() -> list[Case]:
    """24 cases: per CC, 8 cells covering both rates × the three RTTs, every buffer size and both
    flow counts (a covering subset of the 3 × 2 × 3 × 3 × 2 grid)."""
    cells = [(10, 10, 1.0, 1), (10, 50, 0.5, 1), (10, 200, 2.0, 1), (10, 50, 2.0, 4),
             (100, 10, 2.0, 1), (100, 50, 1.0, 1), (100, 200, 0.5, 1), (100, 10, 0.5, 4)]
    out = []
    for cc in ("reno", "cubic", "bbr"):
        for rate, rtt, buf, n in cells:
            out.append(Case(cc, rate, rtt, buf, n, 20.0 if rtt >= 200 else 10.0))
    return out


def quick_matrix() -> list[Case]:
    """Three short cases (one per CC) for CI."""
    return [Case("reno", 10, 10, 1.0, 1, 3.0), Case("cubic", 10, 20, 2.0, 1, 3.0), Case("bbr", 10, 50, 1.0, 1, 4.0)]


def scenario_text(c: Case, stack: str) -> str:
    one_way = c.rtt_ms / 2e3 - 2 * ACCESS_DELAY_S
    lines = [f'name = "vl-{c.name}-{stack}"', "[run]", f'duration = "{c.duration_s + FLOW_START_S + 2:g}s"',
             "seed = 1", "[run.trace]", "tcp = true"]
    host_stack = "linux" if stack == "linux" else "sim"
    for name, kind in (("h1", "host"), ("r1", "router"), ("r2", "router"), ("h2", "host")):
        lines += ["[[nodes]]", f'name = "{name}"', f'kind = "{kind}"'] + ([f'stack = "{host_stack}"'] if kind == "host" else [])
    access = 'rate = "1Gbps"\ndelay = "10us"\nqueue = { limit = "10000pkts" }'
    lines += ["[[links]]", 'a = "h1"', 'b = "r1"', access]
    lines += ["[[links]]", 'name = "bottleneck"', 'a = "r1"', 'b = "r2"', f'rate = "{c.rate_mbps}Mbps"',
              f'delay = "{one_way * 1e6:.0f}us"', f'queue = {{ limit = "{c.buffer_packets}pkts" }}']
    lines += ["[[links]]", 'a = "r2"', 'b = "h2"', access]
    for i in range(c.flows):
        lines += ["[[tcp]]", f'name = "f{i}"', 'from = "h1"', 'to = "h2"', f'start = "{FLOW_START_S:g}s"',
                  f'duration = "{c.duration_s:g}s"']
        if stack == "linux":
            lines += [f'variant = "linux-{c.cc}"', f'mss = "{MSS}B"']
        else:
            lines += [f'variant = "{SIM_VARIANT[c.cc]}"', f'mss = "{MSS}B"', "initial_window = 10", f'initial_ssthresh = "{BUFFER_BYTES}"', "window_scaling = true",
                      f'send_buffer = "{BUFFER_BYTES}"', 'send_buffer_model = "linux"', f'recv_buffer = "{BUFFER_BYTES}"', 'min_rto = "200ms"',
                      "timestamps = false"]
    if stack == "linux":
        script = "; ".join(KERNEL_SETTINGS)
        for host in ("h1", "h2"):
            lines += ["[[commands]]", f'name = "settings-{host}"', f'host = "{host}"', "setup = true",
                      f"run = {json.dumps(['sh', '-c', script])}"]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- measurements

def _grid(t0: float, t1: float) -> np.ndarray:
    return np.arange(t0, t1, SAMPLE_S)


def _step_at(t: np.ndarray, v: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The step function (t, v) read at every grid time (NaN before its first point)."""
    if len(t) == 0:
        return np.full(len(grid), np.nan)
    i = np.searchsorted(t, grid, side="right") - 1
    out = np.where(i >= 0, v[np.clip(i, 0, None)], np.nan)
    return out.astype(float)


def _sim_series(run, flow: str, t0: float, t1: float) -> dict[str, np.ndarray]:
    tr = run.trace(flow)
    t = tr["t_s"].to_numpy().astype(float)
    grid = _grid(t0, t1)
    srtt = tr["srtt_s"].to_numpy().astype(float)
    srtt = np.where(srtt > 0, srtt, np.nan)
    return {"t": grid, "cwnd": _step_at(t, tr["cwnd"].to_numpy().astype(float), grid), "rtt": _step_at(t, srtt, grid),
            "acked": _step_at(t, tr["snd_una"].to_numpy().astype(float), grid),
            "retx": _step_at(t, np.cumsum((tr["kind"] == "retransmit").to_numpy()).astype(float), grid)}


def _linux_series(flow: dict, t0: float, t1: float) -> dict[str, np.ndarray]:
    s = flow.get("tcp_info_samples") or {}
    t = np.asarray(s.get("t_s", []), dtype=float)
    grid = _grid(t0, t1)
    return {"t": grid, "cwnd": _step_at(t, np.asarray(s.get("cwnd_bytes", []), dtype=float), grid),
            "rtt": _step_at(t, np.asarray(s.get("rtt_s", []), dtype=float), grid),
            "acked": _step_at(t, np.asarray(s.get("bytes_acked", []), dtype=float), grid),
            "retx": _step_at(t, np.asarray(s.get("total_retrans", []), dtype=float), grid)}


def _flow_metrics(series: list[dict[str, np.ndarray]], c: Case) -> dict[str, Any]:
    # Bytes acknowledged over the measured window (both stacks' own counters on the same grid:
    # the kernel keeps its socket open past the flow's duration).
    acked, span = 0.0, 0.0
    for s in series:
        a = s["acked"]
        ok = np.flatnonzero(~np.isnan(a))
        if ok.size >= 2:
            acked += a[ok[-1]] - a[ok[0]]
            span = max(span, s["t"][ok[-1]] - s["t"][ok[0]])
    retx = int(sum(float(np.nanmax(s["retx"], initial=0)) for s in series))
    rtts = np.concatenate([s["rtt"][~np.isnan(s["rtt"])] for s in series]) if series else np.array([])
    p50 = float(np.percentile(rtts, 50)) if rtts.size else None
    p95 = float(np.percentile(rtts, 95)) if rtts.size else None
    return {"throughput_Mbps": acked * 8 / span / 1e6 if span > 0 else 0.0, "retransmitted_segments": int(retx),
            "rtt_p50_ms": p50 * 1e3 if p50 is not None else None, "rtt_p95_ms": p95 * 1e3 if p95 is not None else None,
            "qdelay_p95_ms": max(0.0, p95 - c.propagation_rtt_s) * 1e3 if p95 is not None else None}


def _rel(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if b == 0:
        return 0.0 if a == 0 else math.inf
    return abs(a - b) / abs(b)


def cwnd_distance(a: np.ndarray, b: np.ndarray) -> float | None:
    """Mean |a − b| over the grid points both curves have, divided by the mean of b."""
    ok = ~np.isnan(a) & ~np.isnan(b)
    if not ok.any() or b[ok].mean() == 0:
        return None
    return float(np.abs(a[ok] - b[ok]).mean() / b[ok].mean())


def verdict(sim: dict, lin: dict) -> dict[str, Any]:
    """Errors of the simulator against the kernel and whether each target holds."""
    thr = _rel(sim["throughput_Mbps"], lin["throughput_Mbps"])
    q = None
    if sim["qdelay_p95_ms"] is not None and lin["qdelay_p95_ms"] is not None:
        # Relative to the kernel's p95 RTT when its queue is near empty (a ratio of two small
        # queueing delays says nothing): |Δ qdelay| / max(qdelay_linux, 10 % of its RTT p95).
        q = abs(sim["qdelay_p95_ms"] - lin["qdelay_p95_ms"]) / max(lin["qdelay_p95_ms"], 0.1 * lin["rtt_p95_ms"])
    dr = abs(sim["retransmitted_segments"] - lin["retransmitted_segments"])
    retx_ok = dr <= TARGETS["retrans_abs"] or dr <= TARGETS["retrans_rel"] * lin["retransmitted_segments"]
    checks = {"throughput": bool(thr is not None and thr <= TARGETS["throughput_err"]),
              "qdelay_p95": bool(q is not None and q <= TARGETS["qdelay_p95_err"]),
              "retransmissions": bool(retx_ok)}
    return {"throughput_err": thr, "qdelay_p95_err": q, "retrans_diff": int(dr), "checks": checks,
            "pass": all(checks.values())}


def verdict_over_runs(sim: dict, lins: list[dict]) -> dict[str, Any]:
    """The verdict against the kernel run several times (`--kernel-runs N`): the kernel does not
    repeat itself (a retransmission count can differ 10x between two runs of one case), so each
    metric is judged against the spread the kernel showed. Throughput and queueing delay: the
    smallest error against any of the runs. Retransmissions: within ±20 % or ±3 of some count in
    the kernel's range [min, max] (`retrans_diff` is the distance to that range). With one run
    this is exactly [`verdict`]."""
    if len(lins) == 1:
        return verdict(sim, lins[0])
    each = [verdict(sim, lin) for lin in lins]
    best = lambda k: min((v[k] for v in each if v[k] is not None), default=None)
    thr, q = best("throughput_err"), best("qdelay_p95_err")
    counts = [lin["retransmitted_segments"] for lin in lins]
    lo, hi = min(counts), max(counts)
    s = sim["retransmitted_segments"]
    dr = 0 if lo <= s <= hi else (lo - s if s < lo else s - hi)
    tol = lambda n: max(TARGETS["retrans_abs"], TARGETS["retrans_rel"] * n)
    retx_ok = (lo - tol(lo)) <= s <= (hi + tol(hi))
    checks = {"throughput": bool(thr is not None and thr <= TARGETS["throughput_err"]),
              "qdelay_p95": bool(q is not None and q <= TARGETS["qdelay_p95_err"]),
              "retransmissions": bool(retx_ok)}
    return {"throughput_err": thr, "qdelay_p95_err": q, "retrans_diff": int(dr), "checks": checks,
            "pass": all(checks.values()), "linux_retrans_range": [lo, hi]}


# ----------------------------------------------------------------------------- running

def _sim_variants() -> set[str]:
    from . import _core
    return {row[0] for row in _core.tcp_variants()}


# The emulator's accuracy figures kept per kernel run (summary.json's `emulation` section).
EMULATION_FIGURES = ("release_lateness_p50_ms", "release_lateness_p99_ms", "release_lateness_max_ms",
                     "release_lateness_p99_unheld_ms", "released_while_held", "datagrams_released",
                     "wakeup_lateness_p99_ms", "host_write_p50_ms", "host_write_p99_ms", "host_write_max_ms",
                     "released_early", "realtime_priority", "cpu_affinity", "slow_steps", "cpu_softirq_ms")


def run_case(c: Case, work: Path, sim_variants: set[str], linux_variants: set[str] | None,
             saved: dict[str, Any] | None = None, kernel_runs: int = 1) -> dict[str, Any]:
    """One case. `saved` (a case row of an earlier run's validate-linux.json, with its kernel
    samples) re-scores the simulator against that kernel run (or runs) instead of running the
    emulator; `linux_variants` is then not consulted. `kernel_runs` emulates the kernel that many
    times, judged by [`verdict_over_runs`]."""
    from .api import Scenario, run as sim_run
    row: dict[str, Any] = {"case": c.name, **asdict(c), "buffer_packets": c.buffer_packets,
                           "bdp_packets": round(c.bdp_packets, 1)}
    if SIM_VARIANT[c.cc] not in sim_variants:
        row["status"] = "skipped: variant not in this build"
        return row
    if saved is None and linux_variants is not None and f"linux-{c.cc}" not in linux_variants:
        row["status"] = f"skipped: kernel has no {c.cc}"
        return row
    t0, t1 = FLOW_START_S, FLOW_START_S + c.duration_s
    sim = sim_run(Scenario.from_toml(scenario_text(c, "sim"), f"<validate-linux {c.name} sim>"))
    sim_series = [_sim_series(sim, f"f{i}", t0, t1) for i in range(c.flows)]
    if saved is None:
        from . import emulate as emu
        runs, faithful, accuracy = [], True, []
        load_before = os.getloadavg()
        for _ in range(max(1, kernel_runs)):
            lin = emu.emulate(Scenario.from_toml(scenario_text(c, "linux"), f"<validate-linux {c.name} linux>"))
            runs.append({f["name"]: f.get("tcp_info_samples") or {} for f in lin.summary["flows"]})
            em = lin.summary.get("emulation") or {}
            faithful &= bool(em.get("faithful", False))
            accuracy.append({k: em.get(k) for k in EMULATION_FIGURES})
        row["emulation_faithful"] = faithful
        # Why a run was (not) faithful: its release lateness, what the machine held, how long
        # the kernel's own processing inside each write to a host took.
        row["emulation"] = accuracy
        # The machine's load average (1 min before; 1, 5, 15 min after) when the kernel side
        # ran: the emulation runs in real time and its figures carry the load.
        row["load_average"] = [round(x, 2) for x in (*load_before[:1], *os.getloadavg())]
        row["linux_source"] = "emulated"
    else:
        runs = [saved["linux_samples"], *saved.get("linux_samples_more", [])]
        row["emulation_faithful"] = bool(saved.get("emulation_faithful", False))
        if saved.get("emulation") is not None:
            row["emulation"] = saved["emulation"]
        row["load_average"] = saved.get("load_average")
        row["linux_source"] = f"saved: {saved.get('linux_source_path', 'earlier run')}"
    samples = runs[0]
    lin_series = [_linux_series({"tcp_info_samples": samples[f"f{i}"]}, t0, t1) for i in range(c.flows)]
    row["sim"] = _flow_metrics(sim_series, c)
    row["linux"] = _flow_metrics(lin_series, c)
    lins = [row["linux"]] + [_flow_metrics([_linux_series({"tcp_info_samples": r[f"f{i}"]}, t0, t1) for i in range(c.flows)], c)
                             for r in runs[1:]]
    if len(lins) > 1:
        row["linux_runs"] = lins
    row["cwnd_distance"] = cwnd_distance(sim_series[0]["cwnd"], lin_series[0]["cwnd"])
    row.update(verdict_over_runs(row["sim"], lins))
    row["kernel_settings"] = KERNEL_SETTINGS
    row["status"] = "pass" if row["pass"] else "miss"
    row["curves"] = {"t": sim_series[0]["t"].round(3).tolist(),
                     "sim_cwnd": np.nan_to_num(sim_series[0]["cwnd"], nan=0).tolist(),
                     "linux_cwnd": np.nan_to_num(lin_series[0]["cwnd"], nan=0).tolist()}
    # Every flow's TCP_INFO samples as the emulator took them, so a later run can re-score the
    # simulator against this kernel run (`--linux-from`).
    row["linux_samples"] = samples
    if len(runs) > 1:
        row["linux_samples_more"] = runs[1:]
    return row


def load_saved(path: Path) -> dict[str, dict[str, Any]]:
    """The kernel runs of an earlier validate-linux.json, by case name (cases run before the
    samples were saved, or skipped, are left out)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read a validate-linux.json: {e}") from None
    out = {}
    for r in data.get("cases", []) if isinstance(data, dict) else []:
        if isinstance(r, dict) and r.get("linux_samples"):
            src = r.get("linux_source", "emulated")
            out[r["case"]] = {**r, "linux_source_path": str(path) if src == "emulated" else src.removeprefix("saved: ")}
    return out


def run_matrix(cases: list[Case], out: Path, progress: Callable[[str], None] = lambda s: None,
               saved: dict[str, dict[str, Any]] | None = None, kernel_runs: int = 1) -> dict[str, Any]:
    """Run `cases`; with `saved` (from [`load_saved`]) the kernel side of each case is that
    earlier run's (a case it lacks is skipped) and the emulator is not needed."""
    sim_variants = _sim_variants()
    linux_variants = None
    if saved is None:
        from . import emulate as emu
        refusal = emu.refusal()
        if refusal is not None:
            raise emu.EmulationRefused(refusal)
        linux_variants = set(emu.linux_variants())
    rows = []
    with tempfile.TemporaryDirectory(prefix="tcplab-validate-linux-") as work:
        for c in cases:
            progress(c.name)
            if saved is not None and c.name not in saved:
                rows.append({"case": c.name, **asdict(c), "status": "skipped: no saved kernel run"})
                continue
            rows.append(run_case(c, Path(work), sim_variants, linux_variants, None if saved is None else saved[c.name], kernel_runs))
    ran = [r for r in rows if r["status"] in ("pass", "miss")]
    thr = [r["throughput_err"] for r in ran if r.get("throughput_err") is not None]
    held = {k: sum(bool(r["checks"][k]) for r in ran) for k in ("throughput", "qdelay_p95", "retransmissions")}
    result = {"targets": TARGETS, "kernel_settings": KERNEL_SETTINGS,
              "sim_settings": {"variants": SIM_VARIANT, "mss": MSS, "initial_window": 10, "initial_ssthresh": BUFFER_BYTES, "buffers": BUFFER_BYTES,
                               "send_buffer_model": "linux: skb truesize (payload + 832 B), writer woken at 1/3 free, tcp_rate_check_app_limited per write",
                               "min_rto": "200ms", "timer": "linux: RTT sampled per ACK, RTO = SRTT + max(200 ms, 4 mdev)", "ack_policy": "linux: every second segment, 40 ms delayed-ACK timer, quick-ACK for 16 and while tcp_grow_window opens the window (half the buffer -> buffer x 170/256)", "timestamps": False},
              "cases": rows,
              "overall": {"cases": len(rows), "ran": len(ran), "passed": sum(r["status"] == "pass" for r in rows),
                          "skipped": sum(r["status"].startswith("skipped") for r in rows),
                          "median_throughput_err": float(np.median(thr)) if thr else None,
                          "held_per_target": held, "misses": misses(rows),
                          "pass": bool(ran) and all(r["status"] == "pass" for r in ran)}}
    write_outputs(result, out)
    return result


# ----------------------------------------------------------------------------- outputs

COLUMNS = ["case", "status", "thr sim/linux Mbit/s", "thr err", "retx sim/linux", "RTT p50 sim/linux ms",
           "RTT p95 sim/linux ms", "qdelay p95 err", "cwnd dist"]


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def table_rows(result: dict[str, Any]) -> list[dict[str, str]]:
    out = []
    for r in result["cases"]:
        if "sim" not in r:
            out.append({"case": r["case"], "status": r["status"]})
            continue
        s, l = r["sim"], r["linux"]
        f = lambda a, b, d=1: f"{a:.{d}f} / {b:.{d}f}" if a is not None and b is not None else "—"
        out.append({"case": r["case"], "status": r["status"] + ("" if r["emulation_faithful"] else " (emulation not faithful)"),
                    "thr sim/linux Mbit/s": f(s["throughput_Mbps"], l["throughput_Mbps"], 2), "thr err": _pct(r["throughput_err"]),
                    "retx sim/linux": f"{s['retransmitted_segments']} / " + ("{}–{}".format(*r["linux_retrans_range"]) if r.get("linux_retrans_range") else f"{l['retransmitted_segments']}"),
                    "RTT p50 sim/linux ms": f(s["rtt_p50_ms"], l["rtt_p50_ms"]), "RTT p95 sim/linux ms": f(s["rtt_p95_ms"], l["rtt_p95_ms"]),
                    "qdelay p95 err": _pct(r["qdelay_p95_err"]), "cwnd dist": _pct(r["cwnd_distance"])})
    return out


def misses(rows: list[dict[str, Any]]) -> list[str]:
    """Every target a case misses, with its error: `case: metric error (target)`."""
    out = []
    for r in rows:
        if r.get("status") != "miss":
            continue
        c = r["checks"]
        if not c["throughput"]:
            out.append(f"{r['case']}: throughput error {_pct(r['throughput_err'])} (target ≤ 5 %)")
        if not c["qdelay_p95"]:
            out.append(f"{r['case']}: p95 queueing-delay error {_pct(r['qdelay_p95_err'])} (target ≤ 10 %)")
        if not c["retransmissions"]:
            s, l = r["sim"]["retransmitted_segments"], r["linux"]["retransmitted_segments"]
            if r.get("linux_retrans_range"):
                lo, hi = r["linux_retrans_range"]
                out.append(f"{r['case']}: retransmissions {s} vs the kernel's {lo}–{hi} over {len(r['linux_runs'])} runs (target ±20 % or ±3 of that range)")
            else:
                out.append(f"{r['case']}: retransmissions {s} vs {l} (target ±20 % or ±3)")
    return out


def text_table(result: dict[str, Any]) -> str:
    rows = table_rows(result)
    widths = {c: max(len(c), *(len(r.get(c, "")) for r in rows)) for c in COLUMNS}
    lines = ["  ".join(c.ljust(widths[c]) for c in COLUMNS)]
    lines += ["  ".join(r.get(c, "").ljust(widths[c]) for c in COLUMNS) for r in rows]
    o = result["overall"]
    if o.get("held_per_target"):
        h = o["held_per_target"]
        lines.append(f"targets held: throughput {h['throughput']}/{o['ran']}, p95 queueing delay {h['qdelay_p95']}/{o['ran']}, "
                     f"retransmissions {h['retransmissions']}/{o['ran']}")
    loads = [x for r in result["cases"] for x in (r.get("load_average") or [])[:2]]
    if loads:
        unfaithful = sum(1 for r in result["cases"] if "sim" in r and not r.get("emulation_faithful", True))
        lines.append(f"kernel side ran at load average {min(loads):.1f}–{max(loads):.1f} (1 min, before and after each case); "
                     f"{unfaithful} case(s) not faithful")
    for m in o.get("misses", []):
        lines.append(f"miss: {m}")
    lines.append(f"overall: {o['passed']}/{o['ran']} cases within every target ({o['skipped']} skipped); "
                 f"median throughput error {_pct(o['median_throughput_err'])}; {'PASS' if o['pass'] else 'MISS'}")
    return "\n".join(lines)


def write_outputs(result: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "validate-linux.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "validate-linux.txt").write_text(text_table(result) + "\n")
    write_html(result, out / "validate-linux.html")


def write_html(result: dict[str, Any], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from .report.figures import figure_to_data_uri
    from .report.page import _e, _page, _table, _write
    body = [f"<pre>{_e(text_table(result))}</pre>", _table(table_rows(result), COLUMNS),
            "<h2>Settings</h2>", f"<pre>{_e(json.dumps({'kernel': result['kernel_settings'], 'simulator': result['sim_settings']}, indent=1))}</pre>",
            "<h2>cwnd of the first flow: simulator and kernel</h2>"]
    for r in result["cases"]:
        if "curves" not in r:
            continue
        cv = r["curves"]
        fig, ax = plt.subplots(figsize=(7, 2.6))
        ax.plot(cv["t"], np.asarray(cv["sim_cwnd"]) / 1e3, label="tcplab (simulator)", lw=1)
        ax.plot(cv["t"], np.asarray(cv["linux_cwnd"]) / 1e3, label="Linux (emulator, TCP_INFO)", lw=1)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (KB)")
        ax.set_title(f"{r['case']}: {r['status']}, distance {_pct(r['cwnd_distance'])}", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        body.append(f'<p><img alt="{_e(r["case"])}" src="{figure_to_data_uri(fig)}"></p>')
        plt.close(fig)
    _write(path, _page("tcplab validate-linux: tcplab's TCP beside the kernel's", "".join(body)))
