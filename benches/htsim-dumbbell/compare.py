"""tcplab beside htsim on issue 28's four dumbbell cases, in one sitting, runs interleaved.

    .venv/bin/python benches/htsim-dumbbell/compare.py                   # tcplab only
    .venv/bin/python benches/htsim-dumbbell/compare.py --htsim BINARY     # and htsim beside it
    make bench-htsim HTSIM=BINARY                                         # the same

For each of `--runs` rounds (default 5), every case is run once as a whole `tcplab run FILE --out
DIR` process (the files in scenarios/, written by `tcplab.bench.scenario_file`) and, with
`--htsim`, once as the htsim program right after it; the table gives medians and the ratios
tcplab / htsim (ratios taken in one sitting hold better than absolute times on a shared machine).
`--callgrind` adds the instructions per event of both event loops (valgrind; slow).

The htsim side is a program the user builds against Broadcom/csg-htsim (README.md says how; its
code is not part of tcplab). It takes the flags in HTSIM_FLAGS and prints one JSON line on
standard error: {"events": N, "loop_s": S, ...}. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from tcplab.bench import HTSIM_CASES, callgrind_instructions, measure_process, run_child

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios"

#: The same dumbbell for the htsim program: flows, bottleneck and access rates, bottleneck delay and
#: queue, simulated seconds (access links 1 ms with 1000-packet queues, as in tcplab's file).
HTSIM_FLAGS = {
    "tcp-dumbbell-16": ["-flows", "16"],
    "tcp-dumbbell-256": ["-flows", "256"],
    "tcp-dumbbell-4096": ["-flows", "4096"],
    "tcp-dumbbell-64-10g": ["-flows", "64", "-bn_bps", "10e9", "-acc_bps", "10e9", "-bn_delay_ms", "5",
                            "-bn_queue_bytes", "1048576", "-end_s", "1"],
}
#: htsim's event loop, the function callgrind counts instructions in for htsim.
HTSIM_LOOP_SYMBOL = "EventList::doNextEvent*"


def htsim_once(binary: str, case: str) -> dict:
    wall, rss, err = run_child([binary] + HTSIM_FLAGS[case])
    line = [l for l in err.splitlines() if l.startswith("{")][-1]
    out = json.loads(line)
    return {"process_s": wall, "peak_rss_bytes": rss, "events": out["events"], "loop_s": out["loop_s"]}


def htsim_instructions(binary: str, case: str) -> int | None:
    vg = shutil.which("valgrind")
    if vg is None:
        return None
    with tempfile.TemporaryDirectory(prefix="htsim-callgrind-") as tmp:
        cg = Path(tmp) / "callgrind.out"
        run_child([vg, "--tool=callgrind", f"--callgrind-out-file={cg}", "--collect-atstart=no",
                   f"--toggle-collect={HTSIM_LOOP_SYMBOL}", binary] + HTSIM_FLAGS[case])
        m = re.search(r"^(?:summary|totals):\s*(\d+)", cg.read_text(), re.M)
        return int(m.group(1)) if m else None


def median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--htsim", help="the htsim dumbbell program (see README.md); without it, tcplab only")
    ap.add_argument("--runs", type=int, default=5, help="interleaved rounds; medians reported (default 5)")
    ap.add_argument("--case", action="append", choices=HTSIM_CASES, help="a case (default: all four)")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per event (slow)")
    ap.add_argument("--json", action="store_true", help="print the medians as JSON instead of the table")
    a = ap.parse_args(argv)
    cases = a.case or HTSIM_CASES
    ours: dict[str, list[dict]] = {c: [] for c in cases}
    theirs: dict[str, list[dict]] = {c: [] for c in cases}
    with tempfile.TemporaryDirectory(prefix="tcplab-vs-htsim-") as tmp:
        out = Path(tmp) / "out"
        for r in range(a.runs):
            for c in cases:
                ours[c].append(measure_process(SCENARIOS / f"{c}.toml", out))
                if a.htsim:
                    theirs[c].append(htsim_once(a.htsim, c))
            print(f"round {r + 1}/{a.runs} done", file=sys.stderr, flush=True)
        result = {}
        for c in cases:
            o = ours[c]
            row = {"case": c, "events": o[0]["events"], "core_s": median(o, "core_wall_s"),
                   "process_s": median(o, "process_s"), "peak_rss_bytes": median(o, "process_peak_rss_bytes")}
            row["ns_per_event"] = row["core_s"] / row["events"] * 1e9
            if a.callgrind:
                ir = callgrind_instructions(SCENARIOS / f"{c}.toml", out)
                row["instructions_per_event"] = ir / row["events"] if ir else None
            if a.htsim:
                t = theirs[c]
                h = {"events": t[0]["events"], "loop_s": median(t, "loop_s"), "process_s": median(t, "process_s"),
                     "peak_rss_bytes": median(t, "peak_rss_bytes")}
                h["ns_per_event"] = h["loop_s"] / h["events"] * 1e9
                if a.callgrind:
                    ir = htsim_instructions(a.htsim, c)
                    h["instructions_per_event"] = ir / h["events"] if ir else None
                row["htsim"] = h
                row["ratio_process"] = row["process_s"] / h["process_s"]
                row["ratio_ns_per_event"] = row["ns_per_event"] / h["ns_per_event"]
                row["ratio_rss"] = row["peak_rss_bytes"] / h["peak_rss_bytes"]
            result[c] = row
    if a.json:
        print(json.dumps({"runs": a.runs, "cases": result}, indent=1))
        return 0
    print(table(result, bool(a.htsim), a.callgrind))
    return 0


def table(result: dict, with_htsim: bool, with_ir: bool) -> str:
    """The medians as a Markdown table (RESULTS.md's)."""
    mb = 2 ** 20
    head = ["case", "tcplab events", "tcplab core s", "process s", "ns/event", "RSS MB"]
    if with_ir:
        head.append("instr/event")
    if with_htsim:
        head += ["htsim events", "htsim loop s", "process s", "ns/event", "RSS MB"]
        if with_ir:
            head.append("instr/event")
        head += ["process ratio", "ns/event ratio", "RSS ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c, r in result.items():
        cells = [c, f"{r['events']:,}", f"{r['core_s']:.3f}", f"{r['process_s']:.3f}", f"{r['ns_per_event']:.0f}",
                 f"{r['peak_rss_bytes'] / mb:.1f}"]
        if with_ir:
            cells.append(_ir(r.get("instructions_per_event")))
        if with_htsim:
            h = r["htsim"]
            cells += [f"{h['events']:,}", f"{h['loop_s']:.3f}", f"{h['process_s']:.3f}", f"{h['ns_per_event']:.0f}",
                      f"{h['peak_rss_bytes'] / mb:.1f}"]
            if with_ir:
                cells.append(_ir(h.get("instructions_per_event")))
            cells += [f"{r['ratio_process']:.2f}×", f"{r['ratio_ns_per_event']:.2f}×", f"{r['ratio_rss']:.1f}×"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ir(x) -> str:
    return "—" if x is None else f"{x:.0f}"


if __name__ == "__main__":
    sys.exit(main())
