"""Emulation (`tcplab emulate`): real Linux TCP in network namespaces and tcplab's own endpoint
on real IPv4/TCP headers, through tcplab's links, queues and routers in real time (issue 16,
seed 002 §4's hitbox done today). The work is in the Rust core (`crates/tcplab/src/emu/`);
this module turns its result into an ordinary run directory."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from . import _core
from .api import PathLike, Run, Scenario, _check_replaceable, _overrides


PACKETS_FILE = "emulation_packets.parquet"
PACKET_RECORD = [("link", "<u2"), ("held", "<u2"), ("size", "<u4"), ("arrival_ns", "<u8"), ("due_ns", "<u8"), ("released_ns", "<u8")]


def packet_records(data: bytes):
    """The emulator's record of every datagram it released to a host, as a polars DataFrame:
    `link` (index of the delivering link: `emulation.links[].index`), `held` (1 when the
    machine took the CPU from the emulator between the datagram's due time and its release),
    `size` (bytes), and
    nanoseconds since the run's start: `arrival_ns` (read from its sender's TAP, or sent by a
    tcplab endpoint), `due_ns` (when the simulated path delivered it), `released_ns` (written
    to its host). Saved in the run directory as emulation_packets.parquet."""
    import numpy as np
    import polars as pl
    a = np.frombuffer(data, dtype=np.dtype(PACKET_RECORD))
    return pl.DataFrame({name: a[name] for name, _ in PACKET_RECORD})


class EmulationRefused(RuntimeError):
    """Emulation cannot run here (no root, no /dev/net/tun, no iproute2): one line says why."""


def refusal() -> str | None:
    """Why emulation cannot run on this machine (None if it can). The environment variable
    TCPLAB_EMULATE_PRETEND=no-root|no-tun makes it answer as such a machine would."""
    return _core.emulate_refusal()


def linux_variants() -> list[str]:
    """The kernel's congestion controls as tcplab variants, from
    /proc/sys/net/ipv4/tcp_available_congestion_control ("linux-reno", "linux-cubic", ...)."""
    return list(_core.linux_variants())


def cleanup(all: bool = False) -> list[str]:
    """Remove the namespaces and TAP devices emulators left behind (a kill -9): those of
    processes that are gone, or every one with `all`. Returns what was removed."""
    return list(_core.emulate_cleanup(all))


def emulate(scenario: PathLike | Scenario, seed: int | None = None,
            overrides: Mapping[str, Any] | Iterable[str] | None = None, out: PathLike | None = None,
            progress: Callable[[float, float], None] | None = None) -> Run:
    """Run a scenario in emulation and return the Run (saved to `out` if given). Raises
    ScenarioError for a bad scenario, EmulationRefused when the machine cannot emulate."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    if out is not None:
        _check_replaceable(Path(out))

    def cb(t: float, end: float) -> bool:
        if progress is not None:
            progress(t, end)
        return True
    try:
        res = _core.emulate(sc.to_toml(), sc.source, seed, _overrides(overrides), cb)
    except RuntimeError as e:
        if type(e).__name__ == "ScenarioError":
            raise
        raise EmulationRefused(str(e).splitlines()[0] if str(e) else "emulation failed") from None
    r = Run(res["summary_json"], res["scenario_text"], res["traces"])
    r.emulation_packets = packet_records(res["packet_records"])
    # what each user command printed: {name: (stdout bytes, stderr bytes)}
    r.command_outputs = dict(res["command_outputs"])
    if out is not None:
        r.save(out)
        if r.emulation_packets.height or r.command_outputs:
            from .rundir import seal
            if r.emulation_packets.height:
                r.emulation_packets.write_parquet(Path(out) / PACKETS_FILE, statistics=False)
            for name, (stdout, stderr) in r.command_outputs.items():
                (Path(out) / f"command-{name}.stdout").write_bytes(stdout)
                (Path(out) / f"command-{name}.stderr").write_bytes(stderr)
            seal(out)
    if res["interrupted"]:
        raise KeyboardInterrupt(f"emulation interrupted; cleaned up{' and saved ' + str(out) if out else ''}")
    return r


def print_emulation(summary: dict, file=None) -> None:
    """The emulation's flows and accuracy figures as a few lines of text."""
    import sys
    f = file or sys.stdout
    from .textable import format_table
    rows = []
    for fl in summary.get("flows", []):
        comp = fl.get("completion_s")
        rows.append([fl["name"], fl["variant"], "/".join(fl.get("stack", ["sim", "sim"])), f"{fl['bytes_acked'] / 1024:.1f}",
                     f"{fl['throughput_KBps']:.2f}", "-" if comp is None else f"{comp:.3f}",
                     fl.get("retransmitted_segments", 0), str(fl.get("payload_intact", ""))])
    print(format_table(["flow", "variant", "stack", "KB acked", "KB/s", "time s", "retx segs", "intact"], rows,
                       align=["<", "<", "<", ">", ">", ">", ">", ">"], sep=" "), file=f)
    for c in summary.get("commands", []):
        print(f"command {c['name']:<12} on {c['host']:<8} exit {c['exit_code']!s:>4}  {' '.join(c['run'])}"
              + (f"  ({c['error']})" if c.get("error") else ""), file=f)
    em = summary.get("emulation", {})
    print(f"release lateness p50 {em.get('release_lateness_p50_ms', 0):.3f} ms, p99 {em.get('release_lateness_p99_ms', 0):.3f} ms, "
          f"max {em.get('release_lateness_max_ms', 0):.3f} ms, {em.get('released_over_1ms_late', 0)} over 1 ms late, "
          f"over {em.get('datagrams_released', 0)} datagrams; released early: {em.get('released_early', 0)}; "
          f"the machine woke the emulator p99 {em.get('wakeup_lateness_p99_ms', 0):.3f} ms late and held it "
          f"(preempted, or woke it over 0.05 ms late) before {em.get('released_while_held', 0)} releases; "
          f"a write to a host took p50 {em.get('host_write_p50_ms', 0):.3f} ms, p99 {em.get('host_write_p99_ms', 0):.3f} ms "
          f"(the host's own processing, not lateness)", file=f)
    aff = em.get("cpu_affinity")
    print("CPUs: " + (f"the emulator's loop alone on CPU {aff['emulator_cpu']}, the hosts on {aff['host_cpus']}"
                      + (" with their receive path steered there (rps_cpus)" if aff.get("host_receive_steered") else "")
                      if aff else "not pinned") + " (TCPLAB_EMU_PIN = on, threads or off)", file=f)
    for l in em.get("links", []):
        line = (f"  {l['name']:<24} configured {l['rate_bps'] / 1e6:9.4f} Mbit/s, achieved {l['achieved_rate_bps'] / 1e6:9.4f} Mbit/s "
                f"({100 * l['achieved_over_configured']:.2f} %)")
        if "release_lateness_p99_ms" in l:
            line += (f"; delivered {l['datagrams_released']}, lateness p50 {l['release_lateness_p50_ms']:.3f} p99 "
                     f"{l['release_lateness_p99_ms']:.3f} max {l['release_lateness_max_ms']:.3f} ms, {l['released_over_1ms_late']} over 1 ms"
                     + ("  FELL BEHIND" if l.get("fell_behind") else ""))
        print(line, file=f)
    if em.get("released_early"):
        print(f"NOT FAITHFUL: {em['released_early']} datagrams were released before their due time", file=f)
    if em.get("fell_behind"):
        print(f"NOT FAITHFUL: release lateness p99 above the {em.get('lateness_target_ms', 0.1)} ms target "
              "(FELL BEHIND): this run's timing does not hold", file=f)
