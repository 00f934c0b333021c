"""`tcplab bench`: fixed scenarios, timed in the Rust core (parsing and Python excluded), median of
N runs, each case in its own process. Prints events, core wall, events/s, ns per event, ns per
packet-hop (packets forwarded summed over links), the whole `tcplab.run()` wall, peak RSS and RSS
per flow, and the sizes of the hot structs; `--json` for machines. Figures, not pass/fail."""

from __future__ import annotations

import os
import statistics
from typing import Callable

from . import _core
from .api import Scenario, run


# The cases are defined once, in Rust (crates/tcplab/src/bench_cases.rs, issue 28): the native
# `tcplab bench` runs them and these builders read their text through `tcplab._core`.

def _scenario(text: str) -> Scenario:
    return Scenario.from_toml(text, source="<bench>")


def udp_dumbbell(n: int = 16, duration: str = "30s") -> Scenario:
    """n CBR sources at 2 Mb/s (1000-byte packets) through a 30 Mb/s, 20 ms bottleneck (100 packets)."""
    return _scenario(_core.bench_udp_dumbbell(n, duration))


def poisson_queue(duration: str = "200s") -> Scenario:
    """Queue-heavy: Poisson arrivals, exponential sizes, rho = 0.95 into a 1000-packet buffer."""
    return _scenario(_core.bench_poisson_queue(duration))


def tcp_dumbbell(n: int, variant: str = "newreno", duration: str = "60s", traced: bool = False, *,
                 rate: str = "30Mbps", delay: str = "50ms", queue: str = "128KB", access_rate: str = "100Mbps",
                 name: str | None = None) -> Scenario:
    """n long-lived TCP flows (fine timers) over a 30 Mb/s, 50 ms bottleneck with a 128 KB DropTail queue
    (`rate`, `delay`, `queue`; access links `access_rate`, 1 ms, 1000 packets)."""
    return _scenario(_core.bench_tcp_dumbbell(n, variant, duration, traced, rate, delay, queue, access_rate, name))


def tcp_dumbbell_10g(n: int = 64) -> Scenario:
    """n newreno flows for 1 s over a 10 Gb/s, 5 ms bottleneck with a 1 MB queue, 10 Gb/s access links."""
    return tcp_dumbbell(n, duration="1s", rate="10Gbps", delay="5ms", queue="1MB", access_rate="10Gbps",
                        name=f"bench-tcp-dumbbell-{n}-10g")


def short_transfers(n: int = 100_000, hosts: int = 1000, size: str = "10KB") -> Scenario:
    """n short newreno transfers of `size` (n/hosts per host pair, starts spread over 10 s) through a
    1 Gb/s, 10 ms bottleneck: the set-up and per-connection cost at 10^5 flows."""
    return _scenario(_core.bench_short_transfers(n, hosts, size))


def tcplib_backbone(routers: int = 4, hosts_per_router: int = 8, duration: str = "64s") -> Scenario:
    """tcplib conversations over a ring of `routers` 10 Mb/s routers, hosts_per_router hosts each;
    one source per host to a host two routers on, 2 s mean interarrival: about 1,000 conversations."""
    return _scenario(_core.bench_tcplib_backbone(routers, hosts_per_router, duration))


def shared_medium_cbr(access: str | None, duration: str = "200s") -> Scenario:
    """One 9 Mb/s CBR source (1000-byte packets) over a 10 Mb/s segment: a `[[lan]]` with
    `access` ("fifo" or "ethernet"), or (None) a point-to-point link with the same 26-byte
    framing, for the engine's cost per packet on a shared medium against a link (issue 25)."""
    return _scenario(_core.bench_shared_medium_cbr(access, duration))


def case_scenario(name: str) -> Scenario:
    """Benchmark case `name` (one of CASES) as a Scenario; KeyError for an unknown name."""
    found = _core.bench_case(name)
    if found is None:
        raise KeyError(name)
    kind, value = found
    if kind == "bundled":
        from .resources import scenarios_dir
        return Scenario.load(scenarios_dir() / value)
    return Scenario.from_toml(value, source=f"<bench {name}>")


def _case(name: str) -> Callable[[], Scenario]:
    make = lambda: case_scenario(name)  # noqa: E731
    make.__name__ = name
    return make


#: The case descriptions (`tcplab bench --list`), from the Rust definition.
DESCRIPTIONS: dict[str, str] = dict(_core.bench_cases())
#: Each case's scenario builder, in the Rust definition's order.
CASES: dict[str, Callable[[], Scenario]] = {name: _case(name) for name in DESCRIPTIONS}
_default, _htsim = _core.bench_case_lists()
#: What `tcplab bench` runs without names (the scale cases take minutes: `make bench-scale`).
DEFAULT_CASES: list[str] = list(_default)
#: The four cases issue 28 compares with htsim (benches/htsim-dumbbell/).
HTSIM_CASES: list[str] = list(_htsim)


def _current_rss() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def measure(name: str, repeat: int = 3) -> dict:
    """Run one case `repeat` times in this process: core wall (median, timed in Rust), the whole
    `tcplab.run()` call (median), events, packet-hops, peak RSS and the RSS added per flow."""
    import resource
    import time

    sc = CASES[name]()
    rss_before = _current_rss()
    walls, api_walls, summ = [], [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        r = run(sc)
        summ = r.summary  # made on first use: the time to hand it to Python is part of the call
        api_walls.append(time.perf_counter() - t0)
        walls.append(summ["wall_s"])
        del r
    wall = statistics.median(walls)
    hops = sum(link["packets_forwarded"] for link in summ["links"])
    ev = summ["events"]
    flows = len(summ["flows"]) + len(summ["udp"]) + sum(t["conversations_started"] for t in summ["traffic"])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "case": name, "flows": flows, "sim_s": summ["sim_end_s"], "events": ev, "packet_hops": hops,
        "core_wall_s": wall, "run_wall_s": statistics.median(api_walls),
        "events_per_s": ev / wall, "wall_per_sim_s": wall / max(summ["sim_end_s"], 1e-9), "ns_per_event": wall / ev * 1e9, "ns_per_packet_hop": wall / max(1, hops) * 1e9,
        "peak_rss_bytes": peak, "rss_per_flow_bytes": (peak - rss_before) / max(1, flows),
    }


def scenario_text(name: str) -> str:
    """Case `name` as a scenario file's text: written as tomli_w writes a scenario (tcplab.tomltext;
    the Rust text is the same scenario, key for key), so the files written before the cases moved
    to Rust (benches/htsim-dumbbell/scenarios/) stay byte for byte what this writes."""
    from . import tomltext
    data = CASES[name]().data
    # the key order of a Scenario built in Python: name and run (the constructor's), nodes, links, the rest
    first = [k for k in ("name", "run", "nodes", "links") if k in data]
    return tomltext.dumps({**{k: data[k] for k in first}, **{k: v for k, v in data.items() if k not in first}})


def scenario_file(name: str, directory) -> "Path":
    """Case `name` written as a scenario file in `directory` (what `tcplab run` reads)."""
    from pathlib import Path
    p = Path(directory) / f"{name}.toml"
    p.write_text(scenario_text(name))
    return p


def tcplab_command() -> list[str]:
    """The `tcplab` command of this installation (the native command beside this interpreter, else
    on the PATH, else `python -m tcplab.cli`): a process run goes through whatever path that command takes."""
    import shutil
    import sys
    from pathlib import Path
    script = Path(sys.executable).with_name("tcplab")
    if script.is_file():
        return [str(script)]
    found = shutil.which("tcplab")
    return [found] if found else [sys.executable, "-m", "tcplab.cli"]


#: GNU time, when installed: a child forked straight from Python is charged with Python's own
#: resident size before its exec (Linux keeps the larger of the two in ru_maxrss), so a small
#: program (htsim's 4 MB) would read as Python's 11 MB; forked from GNU time (~2 MB) it reads true.
GNU_TIME = "/usr/bin/time"


def run_child(cmd: list[str], cwd=None) -> tuple[float, int, str]:
    """Run `cmd` with its standard output discarded: (wall seconds, peak RSS bytes of the child, its
    standard error); a non-zero exit raises RuntimeError with the error's last line. The peak RSS
    is the child's own when GNU time is installed, else at least this Python's (an upper bound)."""
    import subprocess
    import tempfile
    import time
    with tempfile.NamedTemporaryFile(prefix="tcplab-rss-", suffix=".txt") as rss_file:
        timed = os.access(GNU_TIME, os.X_OK)
        full = ([GNU_TIME, "-f", "%M", "-o", rss_file.name] if timed else []) + list(cmd)
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
        err_bytes = p.stderr.read() if p.stderr else b""
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stderr.close()
        err = err_bytes.decode(errors="replace")
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {err.strip().splitlines()[-1] if err.strip() else ''}")
        rss = usage.ru_maxrss * 1024
        if timed:
            text = open(rss_file.name).read().split()
            rss = int(text[-1]) * 1024 if text and text[-1].isdigit() else rss
    return wall, rss, err


def measure_process(path, out_dir) -> dict:
    """One `tcplab run PATH --out OUT_DIR` as a user runs it: the whole process's wall time and
    peak RSS, and the core's wall time and events from the summary.json it wrote."""
    import json
    import shutil
    from pathlib import Path
    out = Path(out_dir)
    shutil.rmtree(out, ignore_errors=True)
    wall, rss, _ = run_child(tcplab_command() + ["run", str(path), "--out", str(out)])
    summ = json.loads((out / "summary.json").read_text())
    return {"process_s": wall, "process_peak_rss_bytes": rss, "core_wall_s": summ["wall_s"], "events": summ["events"]}


#: The core's event loop, the function callgrind counts instructions in.
CORE_LOOP_SYMBOL = "*Simulation::run_with_progress*"


def callgrind_instructions(path, out_dir) -> int | None:
    """Instructions executed inside the core's event loop (callgrind, collecting only within
    CORE_LOOP_SYMBOL) for one `tcplab run`; None when valgrind is not installed. Slow (~50x)."""
    import re
    import shutil
    import tempfile
    from pathlib import Path
    vg = shutil.which("valgrind")
    if vg is None:
        return None
    with tempfile.TemporaryDirectory(prefix="tcplab-callgrind-") as tmp:
        cg = Path(tmp) / "callgrind.out"
        shutil.rmtree(out_dir, ignore_errors=True)
        # --trace-children: a `tcplab` that execs the native binary (`python -m tcplab.cli` for
        # bench, or an older console script) would otherwise run it uninstrumented
        run_child([vg, "--tool=callgrind", "--trace-children=yes", f"--callgrind-out-file={cg}", "--collect-atstart=no",
                   f"--toggle-collect={CORE_LOOP_SYMBOL}"] + tcplab_command() + ["run", str(path), "--out", str(out_dir)])
        m = re.search(r"^(?:summary|totals):\s*(\d+)", cg.read_text(), re.M)
        if not m or int(m.group(1)) == 0:
            # callgrind never entered the loop: its symbol is gone (inlined or stripped)
            raise RuntimeError(f"callgrind counted no instructions inside {CORE_LOOP_SYMBOL}: the core loop's symbol is "
                               f"missing from {' '.join(tcplab_command())} (inlined or stripped), so instructions per event "
                               "cannot be measured")
        return int(m.group(1))


def measure_processes(name: str, repeat: int = 3, callgrind: bool = False) -> dict:
    """Case `name` run `repeat` times as a whole `tcplab run` process (medians), and with
    `callgrind` the core's instructions per event."""
    import json
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory(prefix="tcplab-bench-") as tmp:
        path = scenario_file(name, tmp)
        runs = [measure_process(path, Path(tmp) / "out") for _ in range(max(1, repeat))]
        res = {k: statistics.median(r[k] for r in runs) for k in ("process_s", "process_peak_rss_bytes", "core_wall_s")}
        res["events"] = runs[0]["events"]
        res["instructions_per_event"] = None
        if callgrind:
            ir = callgrind_instructions(path, Path(tmp) / "out")
            if ir:
                ev = json.loads((Path(tmp) / "out" / "summary.json").read_text())["events"]
                res["instructions_per_event"] = ir / ev
    return res


def bench(cases: list[str] | None = None, repeat: int = 3, list_only: bool = False, as_json: bool = False,
          process: bool = True, callgrind: bool = False) -> int:
    """Each case in its own process (so its peak RSS is its own); a table, or JSON with `as_json`.
    With `process`, each case is also run `repeat` times as a whole `tcplab run FILE --out DIR`
    (process_s, process_peak_rss_bytes: what a user waits for and pays); with `callgrind`, once
    more under callgrind for the core loop's instructions per event."""
    import json
    import subprocess
    import sys

    if list_only:
        for name, what in DESCRIPTIONS.items():
            print(f"{name:24} {what}".rstrip())
        return 0
    names = cases or DEFAULT_CASES
    unknown = [c for c in names if c not in CASES]
    if unknown:
        raise ValueError(f"unknown benchmark {', '.join(unknown)}; known: {', '.join(CASES)}")
    from .textable import Columns
    table = Columns([("case", 24, ""), ("flows", 7, "d"), ("sim s", 6, ".1f"), ("core s", 7, ".3f"), ("run() s", 7, ".3f"),
                     ("events", 10, "d"), ("M ev/s", 7, ".2f"), ("ns/event", 8, ".0f"), ("ns/pkt-hop", 10, ".0f"),
                     ("peak RSS MB", 11, ".0f"), ("RSS/flow KB", 11, ".1f"), ("ms/sim s", 8, ".2f"), ("process s", 9, ".3f"),
                     ("proc RSS MB", 11, ".0f"), ("instr/event", 11, ".0f")])
    sizes = dict(_core.struct_sizes())
    if not as_json:
        print("hot structs (bytes): " + ", ".join(f"{k} {v}" for k, v in sizes.items()))
        print(table.header(), flush=True)
    results = []
    for name in names:
        code = f"import json; from tcplab.bench import measure; print(json.dumps(measure({name!r}, {int(repeat)})))"
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{name}: failed: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}", file=sys.stderr)
            return 1
        m = json.loads(p.stdout.strip().splitlines()[-1])
        m.update({"process_s": None, "process_peak_rss_bytes": None, "process_core_wall_s": None,
                  "instructions_per_event": None})
        if process or callgrind:
            pm = measure_processes(name, repeat if process else 1, callgrind)
            if process:
                m.update(process_s=pm["process_s"], process_peak_rss_bytes=pm["process_peak_rss_bytes"],
                         process_core_wall_s=pm["core_wall_s"])
            m["instructions_per_event"] = pm["instructions_per_event"]
        results.append(m)
        if not as_json:
            print(table.row(name, m['flows'], m['sim_s'], m['core_wall_s'], m['run_wall_s'], m['events'],
                            m['events_per_s'] / 1e6, m['ns_per_event'], m['ns_per_packet_hop'],
                            m['peak_rss_bytes'] / 2**20, m['rss_per_flow_bytes'] / 1024, m['wall_per_sim_s'] * 1e3,
                            _scaled(m['process_s']), _scaled(m['process_peak_rss_bytes'], 2**20),
                            _scaled(m['instructions_per_event'])), flush=True)
    if as_json:
        print(json.dumps({"struct_sizes_bytes": sizes, "repeat": repeat, "cases": results}, indent=1))
    return 0


def _scaled(x, scale: float = 1.0) -> float | None:
    return None if x is None else x / scale


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
