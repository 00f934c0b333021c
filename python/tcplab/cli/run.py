"""`tcplab run`: run a scenario, print its summary table, write the run directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from .args import EPILOG, FLOW_ROWS, max_memory, parse_memory, parse_seconds, parse_seed


def add_parser(sub) -> None:
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
    r.set_defaults(fn=run)


def run(a) -> int:
    from ..api import run as run_scenario
    from ..progress import SimProgress
    from .summary import print_summary
    out = a.out or Path("runs") / Path(a.scenario).stem
    meter = SimProgress()
    try:
        r = run_scenario(a.scenario, seed=a.seed, overrides=a.set, out=out, progress=meter, timeout=a.timeout,
                max_memory=max_memory(a))
    finally:
        meter.done()
    if a.json:
        print(r.summary_json)
    else:
        print_summary(r.summary, show_all=a.all)
        print(f"wrote {out}/summary.json")
    return 0
