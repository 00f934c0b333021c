"""The `tcplab` command line. One command; subcommands for running, checking, tracing, plotting,
reporting, reproducing the seeds' experiments and benchmarking."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import __version__

EPILOG = """\
units in scenario files: sizes B/KB/MB/GB with KB = 1024 bytes; bit rates bps/kbps/Mbps/Gbps (also
kbit/s, Mbit/s) with k = 1000; byte rates B/s, KB/s, MB/s (KB = 1024); durations ns/us/ms/s/min;
queue limits "10pkts" or a size. See README.md for the format.
"""


def _fmt(v, nd=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def _table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    out = []
    for j, r in enumerate(cells):
        out.append("  ".join(c.rjust(w) if j and i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


FLOW_ROWS = 10  # flows printed to a terminal before "... N more" (--all prints every one)


def print_summary(s: dict, file=None, show_all: bool = False) -> None:
    file = file or sys.stdout
    print(f"tcplab {s['tcplab_version']}  scenario {s['scenario']}  seed {s['seed']}", file=file)
    rate = s["events"] / s["wall_s"] / 1e6 if s["wall_s"] > 0 else float("nan")
    print(f"simulated {s['sim_end_s']:.3f} s in {s['wall_s']:.3f} s wall, {s['events']} events ({rate:.2f} M events/s)\n", file=file)
    links = [l for l in s["links"] if l["packets_arrived"] > 0]
    hidden_links = 0
    if len(links) > FLOW_ROWS and not show_all:
        # The busiest directions first (the bottleneck leads), then the rest as a count.
        links = sorted(links, key=lambda l: -l["utilization"])
        hidden_links, links = len(links) - FLOW_ROWS, links[:FLOW_ROWS]
    if links:
        print(_table(
            ["link", "rate Mbit/s", "pkts fwd", "MB fwd", "drops", "util", "queue avg", "queue max"],
            [[l["name"], l["rate_bps"] / 1e6, l["packets_forwarded"], l["bytes_forwarded"] / 1048576, l["drops"],
              l["utilization"], l["queue_avg_pkts"], l["queue_max_pkts"]] for l in links]), file=file)
        if hidden_links:
            print(f"... {hidden_links} more link directions, less busy (--all prints every one)", file=file)
        print(file=file)
    flows = s.get("flows") or []
    if flows:
        shown = flows if show_all or len(flows) <= FLOW_ROWS else flows[:FLOW_ROWS]
        print(_table(
            ["flow", "variant", "KB acked", "KB/s", "Mbit/s", "time s", "segs", "retx segs", "retx KB", "timeouts", "fast rtx",
             "max cwnd KB", "RTT ms mean", "RTT ms max"],
            [[f["name"], f["variant"], f["bytes_acked"] / 1024, f["throughput_KBps"], f["throughput_KBps"] * 8192 / 1e6,
              f["completion_s"], f["segments_sent"],
              f["retransmitted_segments"], f["retransmitted_bytes"] / 1024, f["coarse_timeouts"], f["fast_retransmits"],
              f["max_cwnd_bytes"] / 1024,
              f["mean_rtt_s"] * 1e3 if f.get("mean_rtt_s") is not None else None,
              f["max_rtt_s"] * 1e3 if f.get("max_rtt_s") is not None else None] for f in shown]), file=file)
        if len(shown) < len(flows):
            print(f"... {len(flows) - len(shown)} more flows (--all prints every one; summary.json has them all)", file=file)
        if len(flows) > 1:
            rates = [f["throughput_KBps"] or 0.0 for f in flows]
            total = sum(rates)
            jain = total * total / (len(rates) * sum(r * r for r in rates)) if any(rates) else float("nan")
            print(f"all {len(flows)} flows: {total:.1f} KB/s ({total * 8192 / 1e6:.2f} Mbit/s) summed over the flows, "
                  f"{total / len(flows):.1f} KB/s mean, min {min(rates):.1f}, max {max(rates):.1f}; "
                  f"Jain's index {jain:.3f}; retransmitted {sum(f['retransmitted_bytes'] for f in flows) / 1024:.1f} KB; "
                  f"timeouts {sum(f['coarse_timeouts'] for f in flows)}, fast retransmits {sum(f['fast_retransmits'] for f in flows)}",
                  file=file)
        # Per shared bottleneck (summary.json "shared_bottlenecks"): the flows whose data crosses it.
        shared = s.get("shared_bottlenecks") or []
        for b in shared if show_all else shared[:FLOW_ROWS]:
            j = b["jain_index"]
            names = ", ".join(b["flows"][:4]) + (f", ... ({len(b['flows']) - 4} more)" if len(b["flows"]) > 4 else "")
            print(f"bottleneck {b['link']}: {len(b['flows'])} flows ({names}), {b['throughput_KBps']:.1f} KB/s "
                  f"({b['throughput_KBps'] * 8192 / 1e6:.2f} Mbit/s), Jain's index {'n/a' if j is None else f'{j:.3f}'}",
                  file=file)
        if len(shared) > FLOW_ROWS and not show_all:
            print(f"... {len(shared) - FLOW_ROWS} more shared bottlenecks (--all prints every one)", file=file)
        print("(KB = 1024 bytes; Mbit = 10^6 bits)", file=file)
        print(file=file)
    warnings = s.get("warnings") or []
    for w in warnings[:FLOW_ROWS] if not show_all else warnings:
        print(f"warning: {w}", file=file)
    if len(warnings) > FLOW_ROWS and not show_all:
        print(f"warning: ... and {len(warnings) - FLOW_ROWS} more flows like these (summary.json \"warnings\")", file=file)
    if warnings:
        print(file=file)
    if s.get("traffic"):
        # The background as a whole (seed 000 Fig 2.4): conversations, KB sent/retransmitted, Telnet echoes.
        print(_table(
            ["traffic", "kind", "variant", "started", "done", "alive", "KB sent", "retx KB", "retx %", "KB/s",
             "timeouts", "echo ms", "echo <1s"],
            [[t["name"], t["kind"], t["variant"], t["conversations_started"], t["conversations_completed"],
              t["connections_alive_at_end"], t["sent_KB"], t["retransmitted_KB"], t["retransmitted_pct"],
              t["throughput_KBps"], t["coarse_timeouts"],
              t["telnet_echo_delay_mean_s"] * 1e3 if t["telnet_echo_delay_mean_s"] is not None else None,
              t["telnet_echo_under_1s"]] for t in s["traffic"]]), file=file)
        print(file=file)
    if s.get("udp"):
        print(_table(
            ["udp source", "sent pkts", "recv pkts", "loss %", "mean delay ms"],
            [[u["name"], u["sent_pkts"], u["received_pkts"],
              100.0 * (1 - u["received_pkts"] / u["sent_pkts"]) if u["sent_pkts"] else 0.0,
              u["mean_delay_s"] * 1e3 if u["mean_delay_s"] is not None else None] for u in s["udp"]]), file=file)
        print(file=file)


class Progress:
    """A one-line progress meter on stderr for runs that take more than a second (TTY only)."""

    def __init__(self) -> None:
        import time
        self.t0 = time.monotonic()
        self.shown = False
        self.enabled = sys.stderr.isatty()

    def __call__(self, t: float, end: float) -> None:
        import time
        if not self.enabled or time.monotonic() - self.t0 < 1.0:
            return
        self.shown = True
        print(f"\r  simulated {t:10.3f} s of {end:.3f} s ({100 * t / end:5.1f} %)", end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.shown:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr, flush=True)


def parse_memory(text: str) -> int:
    """--max-memory: a size with its unit (KB = 1024 bytes, as in scenario files)."""
    import re
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(B|KB|MB|GB|TB)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected a size like \"4GB\" or \"512MB\", got {text!r}")
    return int(float(m.group(1)) * 1024 ** ["B", "KB", "MB", "GB", "TB"].index(m.group(2)))


def parse_seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return v


def parse_seed(text: str) -> int:
    """--seed: a whole number from 0 to 2^64 - 1 (the core's seed is an unsigned 64-bit integer)."""
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 18446744073709551615, got {text!r}") from None
    if not 0 <= v < 2 ** 64:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 18446744073709551615, got {text!r}")
    return v


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= 1_000_000_000:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return v


def parse_time(text: str) -> float:
    """--from/--to: seconds of simulated time, a number >= 0 (a trailing "s" is accepted)."""
    t = text.strip()
    t = t[:-1] if t.endswith("s") and not t.endswith("ms") else t
    try:
        v = float(t)
    except ValueError:
        v = -1.0
    if not 0 <= v < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a time in seconds >= 0, e.g. 2.5, got {text!r}")
    return v


def _check_window(a) -> None:
    if a.t_from is not None and a.t_to is not None and a.t_from >= a.t_to:
        raise ValueError(f"--from {a.t_from:g} s is not before --to {a.t_to:g} s")


def _max_memory(a) -> int | None:
    from .api import default_max_memory
    return a.max_memory if a.max_memory is not None else default_max_memory()


def cmd_run(a) -> int:
    from .api import run
    out = a.out or Path("runs") / Path(a.scenario).stem
    meter = Progress()
    try:
        r = run(a.scenario, seed=a.seed, overrides=a.set, out=out, progress=meter, timeout=a.timeout,
                max_memory=_max_memory(a))
    finally:
        meter.done()
    if a.json:
        print(r.summary_json)
    else:
        print_summary(r.summary, show_all=a.all)
        print(f"wrote {out}/summary.json")
    return 0


def cmd_emulate(a) -> int:
    from . import emulate as emu
    if a.cleanup:
        removed = emu.cleanup(all=False)
        for r in removed:
            print(f"removed {r}")
        print(f"cleanup: {len(removed)} left-overs removed" if removed else "cleanup: nothing left behind")
        return 0
    if a.scenario is None:
        raise ValueError("tcplab emulate: give a SCENARIO (or --cleanup)")
    out = a.out or Path("runs") / (Path(a.scenario).stem + "-emulated")
    meter = Progress()
    try:
        r = emu.emulate(a.scenario, seed=a.seed, overrides=a.set, out=out, progress=meter)
    except emu.EmulationRefused as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        meter.done()
    if a.json:
        print(r.summary_json)
    else:
        emu.print_emulation(r.summary)
        print(f"wrote {out}/summary.json")
    return 0


def cmd_validate(a) -> int:
    from .api import validate
    validate(a.scenario, a.set, max_memory=_max_memory(a))
    print(f"{a.scenario}: ok")
    return 0


def cmd_schema(a) -> int:
    from ._core import schema
    print(schema())
    return 0


def cmd_expand(a) -> int:
    from .api import expand
    print(expand(a.scenario, a.set), end="")
    return 0


# One line per entry of `tcplab variants`; names the core knows but this table does not are
# listed with "(see README)", so a new variant never goes missing here.
VARIANT_LINES = {
    "tahoe": "4.3BSD-Tahoe: slow start, linear increase, fast retransmit then slow start",
    "reno": "4.3BSD-Reno: Tahoe + fast recovery (window inflation, deflation to ssthresh); BSD timers",
    "newreno": "RFC 6582: Reno with partial ACKs in recovery; fine RFC 6298 timer",
    "sack": "ns-2 Sack1: Reno increase, SACK scoreboard and pipe (Fall & Floyd 1996)",
    "sack-rfc6675": "RFC 6675 SACK loss recovery (IsLost, SetPipe, NextSeg), D-SACK receiver; fine timer",
    "vegas": "Brakmo's Vegas: Expected/Actual/Diff per RTT, alpha=1, beta=3, fine per-segment timeouts",
    "vegas-star": "Vegas with Vegas* slow start (threshold from ACK spacing), seed 000 §4.4",
    "lite": "= lite.0",
    "lite.0": "4.4BSD-Lite as shipped, bugs included (header prediction, RTO, MSS/8 term, ...)",
    "lite.1": "Lite + header-prediction fix (seed 001 Table 3)",
    "lite.2": "Lite.1 + RTO fix",
    "lite.3": "Lite.2 + no timestamps",
    "lite.4": "Lite.3 + no MSS/8 term in linear increase",
    "lite.5": "Lite.4 + ACK every packet",
    "lite.6": "Lite.4 + big-ACK limit",
    "scalable-ecn": "Kelly's scalable TCP (seed 003): real cwnd, +a per unmarked ACK, ×(1−b) per mark, paced sends",
    "reno-fault-no-fast-retransmit": "planted fault (tests of tcplab diagnose): reno ignoring the third dup ACK",
    "reno-fault-double-ca": "planted fault (tests of tcplab diagnose): reno with twice the congestion-avoidance increase",
    "reno-fault-no-rto-backoff": "planted fault (tests of tcplab diagnose): reno never backing off its RTO",
}
QUEUE_LINES = {
    "droptail": "first in, first out; drops arrivals when full (limit in packets or bytes); default 50 packets",
    "red": "Random Early Detection (Floyd & Jacobson 1993), ns-2 defaults; ecn = true marks instead of dropping",
    "ared": "Adaptive RED (Floyd, Gummadi, Shenker 2001): thresholds from target_delay, max_p adapted",
    "vq": "Kelly's virtual-queue ECN marker (seed 003 eq. 11): a virtual queue at theta·C marks with 1 − exp(−phi·b/s)",
}
PATTERN_LINES = {
    "cbr": "UDP constant bit rate: packet_size at rate",
    "poisson": "UDP Poisson arrivals: mean interval (or rate), sizes fixed or exponential",
    "bursts": "UDP exponential bursts at exponential intervals, back to back, paced at the sender's access link rate (seed 002 §5)",
    "onoff": "UDP on/off (ns-2 Exponential, Pareto with shape): rate while on",
    "tcplib": "[[traffic]] tcplib conversations (Telnet, FTP, SMTP, NNTP) over TCP, x-Sim's TRAFFIC",
    "ahn": "[[traffic]] Ahn's senders: sleep exp(sleep), send a tcplib FTP item, repeat",
}


def cmd_variants(a) -> int:
    import json as _json
    from ._core import schema
    defs = _json.loads(schema()).get("definitions", {})

    def enum_of(*path):
        node = defs
        for k in path:
            node = node.get(k, {})
        return node.get("enum") or []
    variants = enum_of("TcpCfg", "properties", "variant") or list(VARIANT_LINES)
    queues = enum_of("QueueCfg", "properties", "kind") or list(QUEUE_LINES)
    patterns = [p for p in enum_of("UdpPattern")] or [p for p in PATTERN_LINES if p not in ("tcplib", "ahn")]
    print("TCP variants ([[tcp]] variant = ...; README \"TCP variants\"):")
    for v in variants:
        print(f"  {v:<14} {VARIANT_LINES.get(v, '(see README)')}")
    print("\nqueue disciplines (queue = { kind = ... }):")
    for q in queues:
        print(f"  {q:<14} {QUEUE_LINES.get(q, '(see README)')}")
    print("\ntraffic patterns ([[udp]] pattern = ...; [[traffic]] kind = ...):")
    for p_ in list(patterns) + ["tcplib", "ahn", "onoff (traffic)"]:
        key = p_.split(" ")[0]
        line = PATTERN_LINES.get(key, "(see README)")
        if p_ == "onoff (traffic)":
            line = "[[traffic]] on/off senders over TCP"
        print(f"  {p_:<14} {line}")
    print("\nprofiles (run.profile, or profile = ... on [[tcp]] and [[traffic]]):")
    print("  bsd-1994       the seeds' hosts (default): 50 KB buffers, no window scaling, BSD 500/200 ms ticks, IW 1")
    print("  modern         window scaling, buffers 2 x the path's BDP, RFC 6298 timer with 200 ms min RTO, IW 10, delayed ACKs")
    from .emulate import linux_variants
    lv = linux_variants()
    print("\nLinux variants (tcplab emulate, stack = \"linux\" senders; from /proc/sys/net/ipv4/tcp_available_congestion_control):")
    for v in lv:
        print(f"  {v:<14} the kernel's {v[len('linux-'):]}")
    if not lv:
        print("  (none: this kernel lists no congestion control)")
    return 0


def cmd_trace(a) -> int:
    _check_window(a)
    from .tracedump import dump
    dump(a.run_dir, a.conn, a.t_from, a.t_to, side=a.side, out=sys.stdout, fmt=a.format)
    return 0


def cmd_export(a) -> int:
    from .rundir import RunData
    rd = RunData.load(a.run_dir)  # checks the completion marker and every file's hash
    out = a.out or Path(str(a.run_dir).rstrip("/") + "-csv")
    if out.resolve() == Path(a.run_dir).resolve():
        raise ValueError(f"--out {out}: write the CSV files beside the run directory, not into it")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in (("flows", rd.flows), ("links", rd.links), ("udp", _frame(rd.summary.get("udp"))),
                     ("traffic", _frame(rd.summary.get("traffic")))):
        if df.height:
            written.append(_write_csv(df, out / f"{name}.csv"))
    for pq in sorted(Path(a.run_dir).glob("*.parquet")):
        import polars as pl
        written.append(_write_csv(pl.read_parquet(pq), out / (pq.stem + ".csv")))
    for w in written:
        print(w)
    return 0


def _frame(rows):
    import polars as pl
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def _write_csv(df, path: Path) -> Path:
    import polars as pl
    # Nested columns (struct/list: drops by reason, per-type counts) are written as JSON text.
    df = df.with_columns([pl.col(c).map_elements(lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v),
                                                  return_dtype=pl.Utf8)
                          for c, t in df.schema.items() if isinstance(t, (pl.Struct, pl.List))])
    df.write_csv(path)
    return path


def cmd_plot(a) -> int:
    _check_window(a)
    from .plots import plot_cli
    paths = plot_cli(a.run_dir, conn=a.conn, kind=a.kind, t_from=a.t_from, t_to=a.t_to, fmt=a.format, out=a.out)
    for p in paths:
        print(p)
    return 0


def cmd_report(a) -> int:
    from .report import report_cli
    print(report_cli(a.run_dir, out=a.out))
    return 0


def cmd_reproduce(a) -> int:
    from .reproduce import reproduce
    return reproduce(a.experiment, out=a.out, seed=a.seed, report=not a.no_report, seeds=a.seeds, jobs=a.jobs,
                     backend=a.backend, ray_address=a.ray_address)


def cmd_sweep(a) -> int:
    from .sweep import run_sweep
    if a.commit_every < 0:
        raise ValueError(f"--commit-every must be >= 0 seconds, got {a.commit_every}")
    res = run_sweep(a.sweep, a.out, jobs=a.jobs, backend=a.backend, ray_address=a.ray_address, retry_failed=a.retry_failed,
                    commit_every=a.commit_every)
    print(f"{res['total']} runs: {res['skipped']} already stored, {res['ran']} ran, {res['failed']} failed; "
          f"results in {a.out / 'results.duckdb'}")
    return 1 if res["failed"] else 0


def cmd_table(a) -> int:
    from .table import plot_sweep, render
    metrics = [m for ms in (a.metrics or []) for m in ms.split(",") if m] or None
    by = [b for bs in (a.by or []) for b in bs.split(",") if b] or None
    if a.ratio:
        from .table import paired_ratios
        if a.ratio.count("/") != 1:
            raise ValueError(f"--ratio {a.ratio}: expected A/B, e.g. vegas/reno")
        num, den = a.ratio.split("/")
        metric = (metrics or ["throughput_KBps"])[0]
        df, summ = paired_ratios(a.dir, num, den, metric=metric, axis=(by or ["variant"])[0], flow=a.flow)
        print(df.write_csv() if a.format == "csv" else df)
        print(f"{metric} {num}/{den} on {summ['n']} paired runs: mean {summ['mean']:.3f}"
              + (f" ± {summ['ci']:.3f} (90 % CI), std {summ['std']:.3f}" if summ["std"] is not None else "")
              + f", min {summ['min']:.3f}, max {summ['max']:.3f}" + (f"; unpaired: {len(summ['unpaired'])}" if summ["unpaired"] else ""))
        return 0
    if a.plot:
        path = plot_sweep(a.dir, a.plot, metric=(metrics or ["throughput_KBps"])[0], by=by, path=a.out, flow=a.flow)
        print(path)
        return 0
    views = [v for vs in (a.view or []) for v in vs.split(",") if v] or None
    text = render(a.dir, by=by, metrics=metrics, fmt=a.format, views=views, flow=a.flow)
    if a.out:
        Path(a.out).write_text(text)
        print(f"wrote {a.out}")
    else:
        print(text, end="")
    return 0


def cmd_bench(a) -> int:
    if a.sweep:
        from .bench import bench_sweep
        return bench_sweep(runs=a.runs, ray=a.ray)
    from .bench import bench
    return bench(a.case, repeat=a.repeat, list_only=a.list, as_json=a.json)


def _add_runner_args(p) -> None:
    p.add_argument("--jobs", "-j", type=positive_int, default=None, metavar="N",
                   help="parallel runs (default: the number of CPU cores; 1 runs in this process)")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local: a process pool on this machine (default); ray: Ray tasks on a local instance or --ray-address")
    p.add_argument("--ray-address", metavar="ADDR", help='Ray cluster to join, e.g. "auto" or "ray://head:10001" (default: start a local instance with --jobs CPUs)')


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tcplab", description="tcplab: packet-level network simulator and laboratory for TCP congestion control.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"tcplab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    r = sub.add_parser("run", help="run a scenario and write DIR/summary.json (+ traces)",
                       description="Run a scenario, print a summary table and write OUT/summary.json, OUT/scenario.toml and trace Parquet files.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("scenario", help="scenario TOML file")
    r.add_argument("--seed", type=parse_seed, help="seed of the random streams, 0 to 2^64-1 (default: run.seed in the file, else 1); "
                   "it changes the traffic, random start times, link loss draws and the hosts' BSD timer phases (README)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help='override a field, e.g. --set run.duration=20s --set "links[1].queue.limit=20pkts" (repeatable)')
    r.add_argument("--out", type=Path, help="output directory (default: runs/<scenario name>)")
    r.add_argument("--json", action="store_true", help="print summary JSON to stdout instead of the table")
    r.add_argument("--all", action="store_true", help=f"print every flow (default: the first {FLOW_ROWS} and the aggregate)")
    r.add_argument("--timeout", type=parse_seconds, metavar="SECONDS",
                   help="stop the run after this many seconds of wall-clock time (exit 2, nothing saved; default: none)")
    r.add_argument("--max-memory", type=parse_memory, metavar="SIZE",
                   help='refuse a run whose estimated memory exceeds SIZE before starting, and stop one whose resident memory '
                        'exceeds it, e.g. "4GB" (KB = 1024 B; default: 80%% of physical memory)')
    r.set_defaults(fn=cmd_run)

    em = sub.add_parser("emulate", help="run a scenario in real time with real Linux TCP / tcplab endpoints on the wire",
                        description="Emulation (needs root and /dev/net/tun): hosts with stack = \"linux\" become network "
                                    "namespaces joined by TAP devices to tcplab's own links, queues and routers running in real "
                                    "time; their flows are real Linux sockets (variant = \"linux-cubic\", ...). Hosts with "
                                    "stack = \"tcplab\" run tcplab's endpoint on real IPv4/TCP headers. Writes an ordinary run "
                                    "directory whose summary.json has an `emulation` section with the accuracy figures.",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    em.add_argument("scenario", nargs="?", help="scenario TOML file")
    em.add_argument("--seed", type=int, help="seed of the random streams (default: run.seed in the file, else 1)")
    em.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a field (repeatable), as for run")
    em.add_argument("--out", type=Path, help="output directory (default: runs/<scenario name>-emulated)")
    em.add_argument("--json", action="store_true", help="print summary JSON to stdout instead of the table")
    em.add_argument("--cleanup", action="store_true",
                    help="remove the namespaces and TAP devices a killed emulator left behind (names start with tcplab-emu- / tle) and exit")
    em.set_defaults(fn=cmd_emulate)

    v = sub.add_parser("validate", help="check a scenario without running it",
                       description="Parse a scenario and check it against its topology without running it; print FILE: ok, "
                                   "or FILE:LINE: FIELD: what was expected, and exit non-zero.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("scenario", help="scenario TOML file")
    v.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a field before checking")
    v.add_argument("--max-memory", type=parse_memory, metavar="SIZE",
                   help='also check the estimated memory of a run against SIZE, e.g. "4GB" (default: 80%% of physical memory)')
    v.set_defaults(fn=cmd_validate)

    ex = sub.add_parser("expand", help="print a scenario with its templates written out",
                        description="Print the scenario as it runs: `count` entries, [defaults.*] and [topology] written out as "
                                    "plain [[nodes]], [[links]], [[tcp]], ... entries (after --set overrides).")
    ex.add_argument("scenario", help="scenario TOML file")
    ex.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a field first (repeatable)")
    ex.set_defaults(fn=cmd_expand)

    va = sub.add_parser("variants", help="list TCP variants (tcplab's and the kernel's linux-*), queue disciplines, traffic patterns and profiles",
                        description="List the TCP variants, queue disciplines, traffic patterns and profiles a scenario can name, one line "
                                    "each, and the Linux congestion controls this kernel offers for `tcplab emulate` "
                                    "(from /proc/sys/net/ipv4/tcp_available_congestion_control).")
    va.set_defaults(fn=cmd_variants)

    s = sub.add_parser("schema", help="print the JSON Schema of the scenario format (for editors)",
                       description="Print the JSON Schema of the scenario format to stdout, for editors' completion and checking.")
    s.set_defaults(fn=cmd_schema)

    t = sub.add_parser("trace", help="print a TCP trace as text over a time window",
                       description="Print one connection's TCP trace (RUN_DIR/trace_tcp.parquet; run with run.trace.tcp = true) as text.")
    t.add_argument("run_dir", type=Path, help="run directory written by `tcplab run --out`")
    t.add_argument("--conn", required=True, help="connection (flow) name")
    t.add_argument("--side", choices=["snd", "rcv", "both"], default="both", help="sender, receiver or both (default both)")
    t.add_argument("--from", dest="t_from", type=parse_time, default=None, help="start time, seconds")
    t.add_argument("--to", dest="t_to", type=parse_time, default=None, help="end time, seconds")
    t.add_argument("--format", choices=["text", "csv"], default="text",
                   help="text: one aligned line per record with Vegas CAM decisions (default); csv: every trace_tcp column")
    t.set_defaults(fn=cmd_trace)

    xp = sub.add_parser("export", help="write a run's tables and traces as CSV files",
                        description="Write the summary tables (flows, links, udp, traffic) and every trace Parquet file of a "
                                    "finished run as CSV files into OUT (default: RUN_DIR-csv beside the run directory).")
    xp.add_argument("run_dir", type=Path, help="run directory written by `tcplab run --out`")
    xp.add_argument("--format", choices=["csv"], default="csv", help="file format (csv; the run directory itself holds Parquet)")
    xp.add_argument("--out", type=Path, help="output directory (default: RUN_DIR-csv)")
    xp.set_defaults(fn=cmd_export)

    pl_ = sub.add_parser("plot", help="draw graphs of a finished run",
                         description="Draw graphs of a finished run and print the paths of the files written.")
    pl_.add_argument("run_dir", type=Path, help="run directory written by `tcplab run --out`")
    pl_.add_argument("--conn", help="connection (flow) for tcp/cam/seq (default: every one); link for link/queue (default: the bottleneck)")
    pl_.add_argument("--kind", choices=["tcp", "cam", "seq", "link", "queue", "flows"], default="tcp",
                     help="graph: tcp (trace graph), cam (Vegas CAM), seq (sequence numbers), link, queue, flows (default tcp)")
    pl_.add_argument("--from", dest="t_from", type=parse_time, default=None, help="start time, seconds")
    pl_.add_argument("--to", dest="t_to", type=parse_time, default=None, help="end time, seconds")
    pl_.add_argument("--format", choices=["png", "svg", "pdf"], default="png", help="image format (default png)")
    pl_.add_argument("--out", type=Path, help="output file or directory (default: RUN_DIR/plots)")
    pl_.set_defaults(fn=cmd_plot)

    rep = sub.add_parser("report", help="write one self-contained HTML report of a run",
                         description="Write one self-contained HTML report (summary tables and graphs) of a finished run.")
    rep.add_argument("run_dir", type=Path, help="run directory written by `tcplab run --out`")
    rep.add_argument("--out", type=Path, help="HTML file (default: RUN_DIR/report.html)")
    rep.set_defaults(fn=cmd_report)

    rp = sub.add_parser("reproduce", help="reproduce a seed experiment, e.g. brakmo/single-transfer",
                        description="Run every variant of a reproduction (scenarios/<experiment>/reproduce.toml), write OUT/comparison.json and a paper-vs-ours report.")
    rp.add_argument("experiment", help="experiment folder under scenarios/, e.g. brakmo/single-transfer")
    rp.add_argument("--out", type=Path, help="output directory (default: runs/reproduce/<experiment>)")
    rp.add_argument("--seed", type=parse_seed, help="seed of the random streams (default: the scenario's run.seed)")
    rp.add_argument("--seeds", type=positive_int, default=None, metavar="N",
                    help="run seeds SEED .. SEED+N-1 of every variant (replacing the file's seed list) and report mean, std, min and max")
    rp.add_argument("--no-report", action="store_true", help="skip the HTML report")
    _add_runner_args(rp)
    rp.set_defaults(fn=cmd_reproduce)

    sw = sub.add_parser("sweep", help="run a sweep file (axes × seeds) into a results database",
                        description="Run every point of a sweep file (base scenario + axes + seeds; see README) in parallel and store "
                                    "one row per run in OUT/results.duckdb (per-run files in OUT/runs/<hash>/). Runs already stored "
                                    "with the same hash are skipped, so an interrupted sweep resumes where it stopped.")
    sw.add_argument("sweep", type=Path, help="sweep TOML file")
    sw.add_argument("--out", type=Path, required=True, help="output directory (results.duckdb, runs/, executed.log)")
    _add_runner_args(sw)
    sw.add_argument("--retry-failed", action="store_true", help="run again the runs stored as failed")
    sw.add_argument("--commit-every", type=parse_time, default=0.2, metavar="SECONDS",
                    help="store finished runs in one transaction at most this often (default 0.2 s; 0 = as each result arrives). "
                         "A kill -9 loses at most the runs finished since the last commit; they run again on resume")
    sw.set_defaults(fn=cmd_sweep)

    tb = sub.add_parser("table", help="x-Sim database views of a sweep: averages, utilization per bucket, runs",
                        description="Print the views of a results store (seed 000 §2.3.1): averages per group for the distinguished flow "
                                    "and the background with std, 90%% confidence interval, min and max (Fig 2.4); bottleneck "
                                    "utilization per time bucket (Fig 2.5); individual values per run (Fig 2.6).")
    tb.add_argument("dir", type=Path, help="sweep output directory (with results.duckdb)")
    tb.add_argument("--by", action="append", metavar="KEY", help="group by these axes (full key or its last part, e.g. variant, limit); default: every axis")
    tb.add_argument("--metrics", action="append", metavar="M[,M...]",
                    help="metrics: flow fields (throughput_KBps), x-Sim columns (KB_sent, KB_resent, pct_resent) or summary paths (links.<name>.utilization)")
    tb.add_argument("--view", action="append", metavar="V", help="averages, utilization, runs (default: all three)")
    tb.add_argument("--flow", help="the distinguished flow (default: the sweep's flow, else the first)")
    tb.add_argument("--format", choices=["markdown", "csv"], default="markdown", help="output format (default markdown)")
    tb.add_argument("--plot", metavar="AXIS", help="instead of tables, plot the first metric against this axis (PNG), one line per --by group")
    tb.add_argument("--ratio", metavar="A/B", help="instead of tables, per-run ratios of the first metric between two values of the "
                                                 "first --by axis (default variant) on paired runs (same seed and other axes), e.g. vegas/reno")
    tb.add_argument("--out", type=Path, help="write to this file instead of stdout (the PNG path with --plot)")
    tb.set_defaults(fn=cmd_table)

    from .diagnose.cli import add_parser as add_diagnose  # issue 29: all logic in tcplab.diagnose
    add_diagnose(sub)
    b = sub.add_parser("bench", help="run the benchmark scenarios and print events/s, ns per event and per packet-hop, peak RSS and RSS per flow",
                       description="Run fixed benchmark scenarios (built in python/tcplab/bench.py), each in its own process, timed inside the Rust core; print the median over --repeat runs of events, core wall, events/s, ns per event, ns per packet-hop, the whole tcplab.run() wall, peak RSS and RSS per flow, and the hot structs' sizes. Figures, not pass/fail.")
    b.add_argument("case", nargs="*", help="benchmark names (default: the quick ones, up to 256 flows); see --list")
    b.add_argument("--repeat", type=positive_int, default=3, help="runs per case; the median is reported (default 3)")
    b.add_argument("--list", action="store_true", help="list the cases")
    b.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    b.add_argument("--sweep", action="store_true", help="instead: time a sweep of the Brakmo scenario with --jobs 1 and --jobs 2 and print both and their ratio")
    b.add_argument("--runs", type=positive_int, default=1000, help="runs in the --sweep benchmark (default 1000)")
    b.add_argument("--ray", action="store_true", help="with --sweep: also run it on a local Ray instance and compare the stored rows")
    b.set_defaults(fn=cmd_bench)
    return p


def _one_line(e: BaseException) -> str:
    """An exception as one line: OS errors as "PATH: reason", others their first line."""
    if isinstance(e, OSError) and e.strerror and e.filename is not None:
        return f"{e.filename}: {e.strerror}"
    if isinstance(e, KeyError) and e.args:
        text = str(e.args[0])
    else:
        text = str(e)
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[0] if lines else type(e).__name__


def _polars_error() -> type[BaseException]:
    try:
        import polars as pl
        return pl.exceptions.PolarsError
    except (ImportError, AttributeError):
        return OSError


_PARSER: argparse.ArgumentParser | None = None


def main(argv: list[str] | None = None) -> int:
    global _PARSER
    if _PARSER is None:  # built once: the fuzz target calls main() thousands of times
        _PARSER = build_parser()
    args = _PARSER.parse_args(argv)
    from ._core import ScenarioError
    from .sweep import SweepError
    try:
        return args.fn(args) or 0
    except (ScenarioError, SweepError) as e:
        print("error: " + "; ".join(l.strip() for l in str(e).splitlines() if l.strip()), file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"tcplab: no such file: {e.filename}" if e.filename is not None else f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except OSError as e:  # NotADirectoryError, FileExistsError, read-only file system, full disk, ...
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except (ValueError, KeyError, OverflowError) as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except _polars_error() as e:  # a Parquet file polars cannot read or write
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BaseException as e:  # noqa: BLE001 - a Rust panic arrives as pyo3's PanicException
        if type(e).__name__ != "PanicException":
            raise
        print(f"error: internal error in the tcplab core (please report it with the scenario): {_one_line(e)}",
              file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
