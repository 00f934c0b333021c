"""`tcplab trace`: print one connection's TCP trace as text over a time window."""

from __future__ import annotations

import sys
from pathlib import Path

from .args import check_window, parse_time


def add_parser(sub) -> None:
    t = sub.add_parser("trace", help="print a TCP trace as text over a time window",
                       description="Print one connection's TCP trace (RUN_DIR/trace_tcp.parquet; run with run.trace.tcp = true) as text.")
    t.add_argument("run_dir", type=Path, help="run directory written by `tcplab run --out`")
    t.add_argument("--conn", required=True, help="connection (flow) name")
    t.add_argument("--side", choices=["snd", "rcv", "both"], default="both", help="sender, receiver or both (default both)")
    t.add_argument("--from", dest="t_from", type=parse_time, default=None, help="start time, seconds")
    t.add_argument("--to", dest="t_to", type=parse_time, default=None, help="end time, seconds")
    t.add_argument("--format", choices=["text", "csv"], default="text",
                   help="text: one aligned line per record with Vegas CAM decisions (default); csv: every trace_tcp column")
    t.set_defaults(fn=run)


def run(a) -> int:
    check_window(a)
    from ..tracedump import dump
    dump(a.run_dir, a.conn, a.t_from, a.t_to, side=a.side, out=sys.stdout, fmt=a.format)
    return 0
