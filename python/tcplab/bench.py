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


def bench_sweep(runs: int = 1000, ray: bool = False) -> int:
    """Time one sweep of the Brakmo single-transfer scenario as it is (its TCP and bottleneck
    traces on, every run's files saved: summary, scenario and trace Parquet), reno and vegas ×
    runs/2 seeds, with --jobs 1 and --jobs 2 into fresh stores; print both
    wall times and their ratio, and check both stores hold identical rows. With `ray`, also run it
    on a local Ray instance (2 CPUs) and compare."""
    import os
    import tempfile
    import time as _t
    from pathlib import Path

    from .paths import scenarios_root
    from .sweep import run_sweep

    scenario = (scenarios_root() / "brakmo" / "single-transfer" / "scenario.toml").resolve()
    half = max(1, runs // 2)
    with tempfile.TemporaryDirectory(prefix="tcplab-bench-sweep-") as tmp:
        sweep = Path(tmp) / "bench.toml"
        sweep.write_text(f'title = "bench: Brakmo single transfer, reno/vegas x {half} seeds"\n'
                         f'scenario = "{scenario}"\nseeds = {{ from = 1, count = {half} }}\n'
                         '[axes]\n"tcp[0].variant" = ["reno", "vegas"]\n')
        times, outs = {}, {}
        configs = [("--jobs 1", dict(jobs=1)), ("--jobs 2", dict(jobs=2))]
        if ray:
            configs.append(("--backend ray (2 CPUs)", dict(jobs=2, backend="ray")))
        for label, kw in configs:
            out = Path(tmp) / label.replace(" ", "_").replace("(", "").replace(")", "")
            t0 = _t.perf_counter()
            res = run_sweep(sweep, out, quiet=True, **kw)
            times[label] = _t.perf_counter() - t0
            outs[label] = out
            print(f"{label:24} {res['ran']} runs ({res['failed']} failed) in {times[label]:7.2f} s "
                  f"({1000 * times[label] / max(1, res['ran']):.1f} ms per run)", flush=True)
        base = times["--jobs 1"]
        print(f"speed-up --jobs 2 vs --jobs 1: {base / times['--jobs 2']:.2f}x (time ratio {times['--jobs 2'] / base:.2f}; "
              f"{os.cpu_count()} cores)")
        ref = stored_rows(outs["--jobs 1"])
        for label in list(outs)[1:]:
            same = stored_rows(outs[label]) == ref
            print(f"stored rows of {label} identical to --jobs 1: {'yes' if same else 'NO'}")
            if not same:
                return 1
    return 0


def stored_rows(out) -> dict:
    """The host-independent content of a results store, for comparing runs made differently:
    every table sorted by hash, without wall time, timestamps, session and run directory."""
    from .store import Store
    skip = {"wall_s", "finished_at", "session", "run_dir", "summary"}
    with Store(out / "results.duckdb", read_only=True) as st:
        tables = {}
        for t in st.tables():
            if t == "meta":
                continue
            df = st.frame(t)
            cols = [c for c in df.columns if c not in skip]
            df = df.select(cols)
            tables[t] = sorted(map(repr, df.rows()))
        summ = {h: {k: v for k, v in s.items() if k != "wall_s"} for h, s in st.summaries(status=None).items()}
    return {"tables": tables, "summaries": summ}
