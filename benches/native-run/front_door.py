"""The `tcplab` command as the native binary against the console script it replaced (issue 28):
whole-process wall time, CPU time and peak RSS of `tcplab run` and `tcplab validate` on the 16-flow
dumbbell (benches/htsim-dumbbell/scenarios/tcp-dumbbell-16.toml), and of `tcplab --version` (a
command that goes to Python either way), runs interleaved, medians printed; with --callgrind also
the instructions of `run` and `validate` (valgrind's callgrind), the figure a shared machine does
not disturb.

The old front door is rebuilt here as pip wrote it: a script run by the venv's interpreter that
imports `re`, `sys` and the package (`tcplab._front`, whose `__init__` imports nothing eagerly)
and `execve`s the binary for `run`, `validate` and `bench` (commit 0481401's `_front.main`).

    .venv/bin/python benches/native-run/front_door.py [--reps 7] [--callgrind]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "benches" / "htsim-dumbbell" / "scenarios" / "tcp-dumbbell-16.toml"
COMMAND = Path(sys.executable).parent / "tcplab"
GNU_TIME = "/usr/bin/time"

OLD_SCRIPT = '''#!{python}
# -*- coding: utf-8 -*-
import re
import sys
import os
import tcplab
def main():
    argv = sys.argv[1:]
    if argv and argv[0] in ("run", "validate", "bench") and os.environ.get("TCPLAB_NATIVE", "1") != "0":
        exe = {native!r}
        env = dict(os.environ, TCPLAB_PYTHON=sys.executable)
        sys.stdout.flush()
        sys.stderr.flush()
        if os.environ.get("FRONT_DOOR_STOP_AT_EXEC") == "1":
            os._exit(0)
        os.execve(exe, [exe, *argv], env)
    from tcplab.cli import main as cli_main
    return cli_main()
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
'''


def measure(cmd: list[str], tmp: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS bytes) of one process: wall and CPU (user + system, of GNU time
    and its child) from this process's clock and rusage, the child's peak RSS from GNU time."""
    import resource
    import time
    stats = tmp / "time.txt"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([GNU_TIME, "-f", "%M", "-o", str(stats), *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{cmd}: exit {p.returncode}: {p.stderr[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, int(stats.read_text().split()[-1]) * 1024


def instructions(cmd: list[str], tmp: Path, env: dict | None = None) -> int:
    """Instructions executed by the process (callgrind). An exec'd program's counts replace its
    parent's (callgrind writes no counts at an exec), so the old front door is counted in two
    parts: its script up to the exec (FRONT_DOOR_STOP_AT_EXEC=1 exits there) plus the binary."""
    out = tmp / "cg.out"
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"callgrind {cmd}: exit {p.returncode}: {p.stderr[-400:]}")
    m = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(errors="replace"), re.M)
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--callgrind", action="store_true")
    a = ap.parse_args()
    native = os.path.realpath(COMMAND)
    if open(native, "rb").read(4) != b"\x7fELF":
        raise SystemExit(f"{COMMAND} is not the native binary: run `make setup`")
    with tempfile.TemporaryDirectory(prefix="tcplab-front-door-") as tmp:
        tmp = Path(tmp)
        old = tmp / "tcplab-console-script"
        old.write_text(OLD_SCRIPT.format(python=sys.executable, native=native))
        old.chmod(0o755)
        jobs = {
            "run": ["run", str(SCENARIO), "--out", str(tmp / "out")],
            "validate": ["validate", str(SCENARIO)],
            "--version": ["--version"],
        }
        doors = {"console script (old)": str(old), "native command": str(COMMAND)}
        res: dict[tuple[str, str], list] = {}
        for rep in range(a.reps):
            for job, args in jobs.items():
                order = list(doors.items()) if rep % 2 == 0 else list(doors.items())[::-1]
                for door, exe in order:
                    res.setdefault((job, door), []).append(measure([exe, *args], tmp))
        core = json.loads((tmp / "out" / "summary.json").read_text())
        print(f"scenario: {SCENARIO.relative_to(ROOT)} ({core['events']} events); medians of {a.reps}, interleaved")
        print("| command | front door | process wall ms | process CPU ms | peak RSS MB |" + (" instructions (M) |" if a.callgrind else ""))
        print("|---|---|---|---|---|" + ("---|" if a.callgrind else ""))
        for job, args in jobs.items():
            for door, exe in doors.items():
                rows = res[(job, door)]
                wall, cpu, rss = (statistics.median(r[i] for r in rows) for i in range(3))
                line = f"| tcplab {job} | {door} | {wall * 1e3:.1f} | {cpu * 1e3:.1f} | {rss / 2**20:.1f} |"
                if a.callgrind and job != "--version":
                    ir = instructions([native, *args], tmp)
                    if exe != str(COMMAND):
                        ir += instructions([exe, *args], tmp, env=dict(os.environ, FRONT_DOOR_STOP_AT_EXEC="1"))
                    line += f" {ir / 1e6:.1f} |"
                elif a.callgrind:
                    line += " |"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
