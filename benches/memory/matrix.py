"""Memory estimate vs measured peak RSS (issue 28): every bundled scenario and a matrix of dumbbells
(1 to 4,096 flows, 1 s to 600 s, 1 Mbit/s to 10 Gbit/s, traced and untraced). Each run is
`tcplab run` in a child process; its peak RSS comes from wait4() (ru_maxrss). Prints one row per
case: estimate, peak, ratio estimate/peak. Figures, not pass/fail.

    .venv/bin/python benches/memory/matrix.py matrix [--quick] [--cmd python|native]
    .venv/bin/python benches/memory/matrix.py scenarios

`--cmd python` runs the Python CLI (`python -m tcplab.cli`: traces held in memory) against the
Python estimate; `--cmd native` the native binary (`tcplab/_bin/tcplab-native`: traces streamed
to disk) against `_core.estimate_memory(..., native=True)`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tcplab import _core
from tcplab.paths import scenarios_root


def dumbbell(n: int, rate: str, duration: str, traced: bool, variant: str = "reno", big_windows: bool = True) -> str:
    """n long-lived flows (1 MB buffers and window scaling, or the profile's defaults) over a
    `rate`, 10 ms bottleneck (1000 packets); access links at `rate` too, 1 ms."""
    lines = [f'name = "mem-{n}-{rate}-{duration}-{"traced" if traced else "plain"}"', "[run]",
             f'duration = "{duration}"', "stop_when_done = false"]
    if traced:
        lines += ["[run.trace]", "tcp = true", 'links = ["all"]']
    lines += ['[[nodes]]\nname = "left"\nkind = "router"', '[[nodes]]\nname = "right"\nkind = "router"',
              f'[[links]]\na = "left"\nb = "right"\nrate = "{rate}"\ndelay = "10ms"\nqueue = {{ limit = "1000pkts" }}']
    for i in range(n):
        lines += [f'[[nodes]]\nname = "s{i}"\nkind = "host"', f'[[nodes]]\nname = "d{i}"\nkind = "host"',
                  f'[[links]]\na = "s{i}"\nb = "left"\nrate = "{rate}"\ndelay = "1ms"',
                  f'[[links]]\na = "right"\nb = "d{i}"\nrate = "{rate}"\ndelay = "1ms"',
                  f'[[tcp]]\nname = "t{i}"\nfrom = "s{i}"\nto = "d{i}"\nvariant = "{variant}"\nduration = "{duration}"\n'
                  f'start = "{(i * 7) % 100}ms"\nmss = "1448B"' + ('\nsend_buffer = "1MB"\nrecv_buffer = "1MB"\nwindow_scaling = true' if big_windows else '')]
    return "\n".join(lines) + "\n"


# Linux counts the memory a child had before exec in its ru_maxrss, and a child of this process
# starts as big as this process (the native run's 6 MB would read as this interpreter's ~17 MB):
# where GNU time is installed (a small C program) the run is started through it.
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def measure(path: Path, out: Path, cmd: list[str], overrides: list[str] = ()) -> tuple[int, float, int]:
    """(peak RSS bytes, wall s, exit status) of `tcplab run path` in a child process."""
    sets = [a for o in overrides for a in ("--set", o)]
    peak_file = out.parent / "peak-rss.txt"
    via = [GNU_TIME, "-f", "%M", "-o", str(peak_file)] if GNU_TIME else []
    t0 = time.perf_counter()
    p = subprocess.Popen([*via, *cmd, "run", str(path), "--out", str(out), "--json", "--max-memory", "1000GB", *sets],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        print(f"{path}: exit {p.returncode}: {p.stderr.read().decode()[-300:]}", file=sys.stderr)
    peak_kb = int(peak_file.read_text().split()[-1]) if GNU_TIME else ru.ru_maxrss
    return peak_kb * 1024, wall, p.returncode


def row(name: str, text: str, path: Path, out: Path, cmd: list[str], overrides=(), native: bool = False) -> dict:
    parts = _core.estimate_memory_parts(text, str(path), list(overrides), native)
    est = _core.estimate_memory(text, str(path), list(overrides), native)
    peak, wall, code = measure(path, out, cmd, overrides)
    r = {"case": name, "estimate_bytes": est, "peak_rss_bytes": peak, "ratio": est / peak, "wall_s": wall, "exit": code}
    if parts:
        r["parts"] = parts
    print(f"{name:48} est {est / 2**20:9.1f} MB  peak {peak / 2**20:8.1f} MB  ratio {est / peak:6.2f}  {wall:6.1f} s"
          + ("" if code == 0 else f"  EXIT {code}"), flush=True)
    return r


# (flows, bottleneck rate, duration, 1 MB windows?): traced and untraced each. The 600 s traced
# 1 Gbit/s flow with the profile's default windows is issue 28's example of a refused ordinary run.
MATRIX_FULL = [(n, rate, dur, big, traced) for traced in (False, True)
               for (n, rate, dur, big) in [(1, "1Mbps", "600s", True), (1, "1Gbps", "600s", False), (1, "1Gbps", "10s", True),
                                           (1, "10Gbps", "10s", True), (16, "30Mbps", "60s", True), (16, "10Gbps", "1s", True),
                                           (256, "30Mbps", "30s", True), (256, "1Gbps", "2s", True), (4096, "30Mbps", "10s", True),
                                           (4096, "1Gbps", "1s", True)]]
MATRIX_QUICK = [(1, "1Mbps", "60s", True, t) for t in (False, True)] + [(16, "30Mbps", "10s", True, t) for t in (False, True)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["matrix", "scenarios"])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cmd", default="python", help="python (the venv's tcplab) or a path to the native binary")
    ap.add_argument("--only", help="substring filter on case names")
    ap.add_argument("--json", type=Path, help="write the rows here")
    a = ap.parse_args()
    from tcplab import _front
    native = a.cmd != "python"
    cmd = [sys.executable, "-m", "tcplab.cli"] if not native else [a.cmd if a.cmd != "native" else str(_front.native_binary())]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tcplab-mem-") as tmp:
        tmp = Path(tmp)
        if a.what == "matrix":
            for n, rate, dur, big, traced in (MATRIX_QUICK if a.quick else MATRIX_FULL):
                name = f"dumbbell n={n} {rate} {dur}{'' if big else ' default-windows'} {'traced' if traced else 'plain'}"
                if a.only and a.only not in name:
                    continue
                text = dumbbell(n, rate, dur, traced, big_windows=big)
                path = tmp / "s.toml"
                path.write_text(text)
                rows.append(row(name, text, path, tmp / "out", cmd, native=native))
        else:
            for path in sorted(scenarios_root().rglob("*.toml")):
                rel = str(path.relative_to(scenarios_root()))
                if a.only and a.only not in rel:
                    continue
                text = path.read_text()
                if "[[commands]]" in text or "emulation" in rel or "[[nodes]]" not in text and "[topology]" not in text:
                    continue  # emulation scenarios, sweep and reproduction specs
                rows.append(row(rel, text, path, tmp / "out", cmd, native=native))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    ratios = [r["ratio"] for r in rows if r["exit"] == 0]
    if ratios:
        print(f"ratio estimate/peak: min {min(ratios):.2f} max {max(ratios):.2f} over {len(ratios)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
