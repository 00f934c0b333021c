"""`tcplab bench`: the benchmark scenarios' figures."""

from __future__ import annotations


from .args import positive_int


def add_parser(sub) -> None:
    b = sub.add_parser("bench", help="run the benchmark scenarios and print events/s, ns per event and per packet-hop, peak RSS and RSS per flow",
                       description="Run fixed benchmark scenarios (defined in crates/tcplab/src/bench_cases.rs), each in its own process, timed inside the Rust core; print the median over --repeat runs of events, core wall, events/s, ns per event, ns per packet-hop, the whole tcplab.run() wall, peak RSS and RSS per flow, and the hot structs' sizes. Figures, not pass/fail.")
    b.add_argument("case", nargs="*", help="benchmark names (default: the quick ones, up to 256 flows); see --list")
    b.add_argument("--repeat", type=positive_int, default=3, help="runs per case; the median is reported (default 3)")
    b.add_argument("--list", action="store_true", help="list the cases")
    b.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    b.add_argument("--no-process", action="store_true",
                   help="skip the whole-process runs (`tcplab run FILE --out DIR`, timed with their peak RSS)")
    b.add_argument("--callgrind", action="store_true",
                   help="also run each case once under valgrind's callgrind and print the core loop's instructions per event (slow)")
    b.add_argument("--sweep", action="store_true", help="instead: time a sweep of the Brakmo scenario with --jobs 1 and --jobs 2 and print both and their ratio")
    b.add_argument("--runs", type=positive_int, default=1000, help="runs in the --sweep benchmark (default 1000)")
    b.add_argument("--ray", action="store_true", help="with --sweep: also run it on a local Ray instance and compare the stored rows")
    b.set_defaults(fn=run)


def run(a) -> int:
    if a.sweep:
        from ..bench import bench_sweep
        return bench_sweep(runs=a.runs, ray=a.ray)
    from ..bench import bench
    return bench(a.case, repeat=a.repeat, list_only=a.list, as_json=a.json, process=not a.no_process,
                 callgrind=a.callgrind)
