"""`tcplab bench`: fixed scenarios, timed in the Rust core (parsing and Python excluded), median of
N runs. Prints events/s, packet-hops/s (packets forwarded summed over links) and wall time per
simulated second. Figures, not pass/fail."""

from __future__ import annotations

import statistics
from typing import Callable

from .api import Scenario, run


def udp_dumbbell(n: int = 16, duration: str = "30s") -> Scenario:
    """n CBR sources at 2 Mb/s (1000-byte packets) through a 30 Mb/s, 20 ms bottleneck (100 packets)."""
    sc = Scenario(name=f"bench-udp-dumbbell-{n}", run={"duration": duration, "stop_when_done": False})
    sc.add_node("left", "router").add_node("right", "router")
    sc.add_link("left", "right", rate="30Mbps", delay="20ms", queue={"limit": "100pkts"})
    for i in range(n):
        sc.add_node(f"s{i}", "host").add_node(f"d{i}", "host")
        sc.add_link(f"s{i}", "left", rate="100Mbps", delay="1ms")
        sc.add_link("right", f"d{i}", rate="100Mbps", delay="1ms")
        sc.add_udp(f"cbr{i}", f"s{i}", f"d{i}", pattern="cbr", rate="2Mbps", packet_size="1000B", start=f"{i}ms")
    return sc


def poisson_queue(duration: str = "200s") -> Scenario:
    """Queue-heavy: Poisson arrivals, exponential sizes, rho = 0.95 into a 1000-packet buffer."""
    sc = Scenario(name="bench-poisson-queue", run={"duration": duration})
    sc.add_node("a", "host").add_node("b", "host")
    sc.add_link("a", "b", rate="10Mbps", delay="1ms", queue={"limit": "1000pkts", "count_in_service": True})
    sc.add_udp("poisson", "a", "b", pattern="poisson", packet_size="1000B", size_dist="exponential", interval="842us")
    return sc


def tcp_dumbbell(n: int, variant: str = "newreno", duration: str = "60s", traced: bool = False) -> Scenario:
    """n long-lived TCP flows (fine timers) over a 30 Mb/s, 50 ms bottleneck with a 128 KB DropTail queue."""
    run_cfg = {"duration": duration, "stop_when_done": False}
    if traced:
        run_cfg["trace"] = {"tcp": True, "links": ["all"]}
    sc = Scenario(name=f"bench-tcp-dumbbell-{n}{'-traced' if traced else ''}", run=run_cfg)
    sc.add_node("left", "router").add_node("right", "router")
    sc.add_link("left", "right", rate="30Mbps", delay="50ms", queue={"limit": "128KB"})
    for i in range(n):
        sc.add_node(f"s{i}", "host").add_node(f"d{i}", "host")
        sc.add_link(f"s{i}", "left", rate="100Mbps", delay="1ms", queue={"limit": "1000pkts"})
        sc.add_link("right", f"d{i}", rate="100Mbps", delay="1ms", queue={"limit": "1000pkts"})
        sc.add_tcp(f"tcp{i}", f"s{i}", f"d{i}", variant=variant, duration=duration, start=f"{(i * 7) % 100}ms",
                   mss="1448B", send_buffer="1MB", recv_buffer="1MB", window_scaling=True)
    return sc


CASES: dict[str, Callable[[], Scenario]] = {
    "udp-dumbbell-16": lambda: udp_dumbbell(16),
    "poisson-queue": poisson_queue,
    "tcp-dumbbell-16": lambda: tcp_dumbbell(16),
    "tcp-dumbbell-64": lambda: tcp_dumbbell(64),
    "tcp-dumbbell-256": lambda: tcp_dumbbell(256),
    # The cost of tracing (compare with tcp-dumbbell-16; with tracing off the trace code is skipped).
    "tcp-dumbbell-16-traced": lambda: tcp_dumbbell(16, traced=True),
}


def bench(cases: list[str] | None = None, repeat: int = 3, list_only: bool = False) -> int:
    if list_only:
        for name, fn in CASES.items():
            print(f"{name:24} {fn.__doc__ or ''}".rstrip())
        return 0
    names = cases or list(CASES)
    unknown = [c for c in names if c not in CASES]
    if unknown:
        raise ValueError(f"unknown benchmark {', '.join(unknown)}; known: {', '.join(CASES)}")
    print(f"{'case':24} {'sim s':>7} {'wall s':>8} {'events':>11} {'M events/s':>10} {'M pkt-hops/s':>12} {'wall s/sim s':>12} {'ns/pkt-hop':>10}")
    for name in names:
        sc = CASES[name]()
        walls, summ = [], None
        for _ in range(max(1, repeat)):
            r = run(sc)
            walls.append(r.summary["wall_s"])
            summ = r.summary
        wall = statistics.median(walls)
        hops = sum(link["packets_forwarded"] for link in summ["links"])
        ev = summ["events"]
        print(f"{name:24} {summ['sim_end_s']:7.1f} {wall:8.3f} {ev:11d} {ev / wall / 1e6:10.2f} {hops / wall / 1e6:12.2f} "
              f"{wall / summ['sim_end_s']:12.5f} {wall / hops * 1e9:10.1f}", flush=True)
    return 0
