"""Issue 28's interactive figures: one `tcplab plot` and one `tcplab report` timed as whole processes.

    .venv/bin/python benches/interactive/measure.py [--runs 5] [--run-dir DIR]

The run is the bench dumbbell with 6 flows for 60 s with every trace on (`tcp_dumbbell(6,
traced=True)` in python/tcplab/bench.py: TCP trace of both sides, every link traced), saved to a
temporary directory unless --run-dir names one. Printed: the median, min and max wall time and the
median peak RSS of `tcplab plot RUN --kind K --conn tcp0` per kind, of `tcplab report RUN`, and the
report's size; then where an import goes (`python -X importtime`, the biggest packages).
Targets (issue 28): a plot ≤ 0.3 s, the report ≤ 3 s and ≤ 1 MB. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tcplab.bench import run_child, tcp_dumbbell, tcplab_command

PLOTS = [["--kind", "tcp", "--conn", "tcp0"], ["--kind", "seq", "--conn", "tcp0"], ["--kind", "queue"],
         ["--kind", "link"], ["--kind", "flows"]]


def make_run(directory: Path) -> Path:
    from tcplab.api import run
    out = directory / "run6"
    run(tcp_dumbbell(6, traced=True)).save(out)
    return out


def timed(cmd: list[str], runs: int) -> tuple[list[float], float]:
    walls, rss = [], []
    for _ in range(runs):
        w, r, _ = run_child(cmd)
        walls.append(w)
        rss.append(r)
    return walls, statistics.median(rss)


def import_breakdown(run_dir: Path) -> list[tuple[str, float]]:
    """Cumulative import time (ms) per top-level package of one `tcplab plot --kind tcp`."""
    cmd = [sys.executable, "-X", "importtime", "-m", "tcplab.cli", "plot", str(run_dir), "--kind", "tcp",
           "--conn", "tcp0", "--out", str(run_dir / "plots" / "importtime.png")]
    err = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    own: dict[str, float] = {}
    for line in err.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        top = name.strip().split(".")[0]
        own[top] = own.get(top, 0.0) + int(self_us) / 1000
    return sorted(own.items(), key=lambda kv: -kv[1])[:8]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per command; median reported (default 5)")
    ap.add_argument("--run-dir", type=Path, help="an existing run directory (default: make the 6-flow run)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tcplab-interactive-") as tmp:
        run_dir = a.run_dir or make_run(Path(tmp))
        tcplab = tcplab_command()
        print(f"run directory: {run_dir}")
        print(f"{'command':44} {'median s':>9} {'min s':>7} {'max s':>7} {'RSS MB':>7}")
        for args in PLOTS:
            out = Path(tmp) / f"plot-{args[1]}.png"
            walls, rss = timed(tcplab + ["plot", str(run_dir), *args, "--out", str(out)], a.runs)
            print(f"{'plot ' + ' '.join(args):44} {statistics.median(walls):9.3f} {min(walls):7.3f} {max(walls):7.3f} "
                  f"{rss / 2**20:7.0f}", flush=True)
        html = Path(tmp) / "report.html"
        walls, rss = timed(tcplab + ["report", str(run_dir), "--out", str(html)], a.runs)
        print(f"{'report':44} {statistics.median(walls):9.3f} {min(walls):7.3f} {max(walls):7.3f} {rss / 2**20:7.0f}")
        print(f"report size: {html.stat().st_size:,} bytes")
        print("imports of one plot (ms, own time per top-level package): "
              + ", ".join(f"{k} {v:.0f}" for k, v in import_breakdown(run_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
