"""Whole-process wall time and peak RSS of `tcplab run` on the 16/256/4096-flow dumbbells
(`tcplab.bench.tcp_dumbbell(N)`: newreno, 30 Mbit/s, 60 s, untraced), the Python run path
(`TCPLAB_NATIVE=0 tcplab run`: interpreter, polars, traces held) against the native one (the
`tcplab` command is the binary), runs interleaved, medians printed. Peak RSS comes from
GNU time (a small C parent, so a child's pre-exec size does not inflate it).

    .venv/bin/python benches/native-run/bench.py [--reps 5] [--flows 16 256 4096] [--traced]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tcplab.bench import tcp_dumbbell

TCPLAB = str(Path(sys.executable).parent / "tcplab")
GNU_TIME = "/usr/bin/time"


def measure(scenario: Path, out: Path, native: bool) -> tuple[float, int, float, float]:
    """(process wall s, peak RSS bytes, core wall s from summary.json, process CPU s) of one
    `tcplab run`. CPU time (user + system) is the figure a loaded machine disturbs least."""
    stats = out.parent / "time.txt"
    env = dict(os.environ, TCPLAB_NATIVE="1" if native else "0")
    p = subprocess.run([GNU_TIME, "-f", "%e %M %U %S", "-o", str(stats), TCPLAB, "run", str(scenario), "--out", str(out)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"{scenario}: exit {p.returncode}: {p.stderr[-400:]}")
    wall, kb, user, system = stats.read_text().split()[-4:]
    core = json.loads((out / "summary.json").read_text())["wall_s"]
    return float(wall), int(kb) * 1024, core, float(user) + float(system)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--flows", type=int, nargs="+", default=[16, 256, 4096])
    ap.add_argument("--traced", action="store_true", help="trace TCP and every link")
    a = ap.parse_args()
    if not os.access(GNU_TIME, os.X_OK):
        raise SystemExit("needs GNU time (/usr/bin/time) for the peak RSS")
    results: dict[tuple[int, bool], list[tuple[float, int, float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="tcplab-native-bench-") as tmp:
        tmp = Path(tmp)
        paths = {}
        for n in a.flows:
            paths[n] = tmp / f"dumbbell-{n}.toml"
            paths[n].write_text(tcp_dumbbell(n, traced=a.traced).to_toml())
        for rep in range(a.reps):
            for n in a.flows:
                for native in ((False, True) if rep % 2 == 0 else (True, False)):
                    results.setdefault((n, native), []).append(measure(paths[n], tmp / "out", native))
    print(f"| flows | path | process wall s | process CPU s | core wall s | peak RSS MB |  (medians of {a.reps}, interleaved)")
    print("|---:|---|---:|---:|---:|---:|")
    for n in a.flows:
        for native in (False, True):
            rows = results[(n, native)]
            wall = statistics.median(r[0] for r in rows)
            rss = statistics.median(r[1] for r in rows) / 2**20
            core = statistics.median(r[2] for r in rows)
            cpu = statistics.median(r[3] for r in rows)
            print(f"| {n} | {'native' if native else 'Python'} | {wall:.3f} | {cpu:.2f} | {core:.3f} | {rss:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
