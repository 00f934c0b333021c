"""`tcplab validate-linux`: tcplab's TCP beside the kernel's over identical links and queues."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .args import EPILOG


def add_parser(sub) -> None:
    p = sub.add_parser("validate-linux", help="run tcplab's TCP and the kernel's over identical paths and compare them",
                       description="A matrix of cases (reno, cubic, bbr × 10/100 Mbit/s × RTT 10/50/200 ms × buffer "
                                   "0.5/1/2 BDP × 1/4 flows; 24 cases, or 3 short ones with --quick), each run in the simulator "
                                   "with tcplab's endpoint and in the emulator with the kernel's TCP (needs root and "
                                   "/dev/net/tun). Per case: throughput, retransmissions, RTT p50/p95, the distance between "
                                   "the cwnd curves, a verdict against the targets (throughput ≤ 5 %, p95 queueing delay "
                                   "≤ 10 %, retransmissions ±20 % or ±3). Writes validate-linux.json, .txt and .html.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="three short cases (one per congestion control)")
    p.add_argument("--case", action="append", default=[], metavar="SUBSTRING",
                   help="run only the cases whose name contains SUBSTRING (repeatable; e.g. reno-10M-200ms)")
    p.add_argument("--linux-from", type=Path, metavar="JSON",
                   help="re-score the simulator against the kernel runs saved in an earlier validate-linux.json "
                        "instead of running the emulator (no root needed; cases it lacks are skipped)")
    p.add_argument("--kernel-runs", type=int, default=1, metavar="N",
                   help="run the kernel side N times per case and judge tcplab against the spread it shows: throughput and "
                        "queueing delay against the nearest run, retransmissions within the targets of the kernel's "
                        "[min, max] (default 1: one run, the plain targets)")
    p.add_argument("--out", type=Path, default=Path("runs/validate-linux"), help="output directory (default runs/validate-linux)")
    p.set_defaults(fn=run)


def run(a) -> int:
    from .. import validate_linux as vl
    from ..emulate import EmulationRefused
    cases = vl.quick_matrix() if a.quick else vl.full_matrix()
    if a.case:
        cases = [c for c in cases if any(s in c.name for s in a.case)]
        if not cases:
            print(f"error: --case {' '.join(a.case)} matches no case; cases: {', '.join(c.name for c in vl.full_matrix())}", file=sys.stderr)
            return 2
    if a.kernel_runs < 1:
        print(f"error: --kernel-runs must be at least 1, got {a.kernel_runs}", file=sys.stderr)
        return 2
    saved = None
    if a.linux_from is not None:
        try:
            saved = vl.load_saved(a.linux_from)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    try:
        result = vl.run_matrix(cases, a.out, progress=lambda name: print(f"case {name} ...", file=sys.stderr, flush=True),
                               saved=saved, kernel_runs=a.kernel_runs)
    except EmulationRefused as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(vl.text_table(result))
    print(f"wrote {a.out}/validate-linux.json, .txt, .html")
    return 0
