"""`tcplab report`: write one self-contained HTML report of a run."""

from __future__ import annotations

from pathlib import Path


def add_parser(sub) -> None:
    rep = sub.add_parser("report", help="write one self-contained HTML report of a run",
                         description="Write one self-contained HTML report (summary tables and graphs) of a finished run.")
    rep.add_argument("run_dir", type=Path, help="run directory written by `tcplab run --out`")
    rep.add_argument("--out", type=Path, help="HTML file (default: RUN_DIR/report.html)")
    rep.set_defaults(fn=run)


def run(a) -> int:
    from .plot import single_threaded_blas
    single_threaded_blas()
    # matplotlib is imported (leanly) only when a graph is left to it: tcplab-plot draws the rest
    from ..report import report_cli
    print(report_cli(a.run_dir, out=a.out))
    return 0
