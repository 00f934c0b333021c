"""Issue 28's interactive figures: one `tcplab plot` and one `tcplab report` timed as whole processes.

    .venv/bin/python benches/interactive/measure.py [--runs 5] [--run-dir DIR]

The run is the bench dumbbell with 6 flows for 60 s with every trace on (`tcp_dumbbell(6,
traced=True)` in python/tcplab/bench.py: TCP trace of both sides, every link traced), saved to a
temporary directory unless --run-dir names one. Printed: the median, min and max wall time and the
median peak RSS of `tcplab plot RUN --kind K --conn tcp0` per kind, of `tcplab report RUN`, and the
report's size; then where an import goes (`python -X importtime`, the biggest packages).
Targets (issue 28): a plot ≤ 0.3 s, the report ≤ 3 s and ≤ 1 MB. Figures, not pass/fail.

CPU is the child's user + system time (wait4; with its own children, e.g. the report's drawing
child). --baseline DIR also times the same commands with DIR (a copy of another revision's
python/ directory, with its _core module) first on PYTHONPATH, each command's runs interleaved
with this tree's, so before and after come from one sitting.
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


def child(cmd: list[str], env: dict | None) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS bytes) of one run of ``cmd``, its output discarded."""
    import os
    import time
    from tcplab.bench import GNU_TIME
    rss_file = None
    if os.access(GNU_TIME, os.X_OK):  # the child's own peak RSS, not this Python's (see run_child)
        rss_file = tempfile.NamedTemporaryFile(prefix="tcplab-rss-", suffix=".txt")
        cmd = [GNU_TIME, "-f", "%M", "-o", rss_file.name] + cmd
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read() if p.stderr else b""
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {err.decode(errors='replace').strip()[-300:]}")
    rss = usage.ru_maxrss * 1024
    if rss_file is not None:
        text = Path(rss_file.name).read_text().split()
        rss = int(text[-1]) * 1024 if text and text[-1].isdigit() else rss
        rss_file.close()
    return wall, usage.ru_utime + usage.ru_stime, rss


def timed(cmd: list[str], runs: int, envs: dict) -> dict:
    """Per tree (envs: label -> environment), the runs' walls, CPUs and RSS, interleaved."""
    got: dict = {k: ([], [], []) for k in envs}
    for _ in range(runs):
        for k, env in envs.items():
            for acc, v in zip(got[k], child(cmd, env)):
                acc.append(v)
    return got


def row(label: str, walls: list[float], cpus: list[float], rss: list[int]) -> str:
    return (f"{label:44} {statistics.median(walls):9.3f} {min(walls):7.3f} {max(walls):7.3f} "
            f"{statistics.median(cpus):8.3f} {statistics.median(rss) / 2**20:7.0f}")


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
    ap.add_argument("--baseline", type=Path, help="a python/ directory of another revision to time beside this one")
    a = ap.parse_args(argv)
    import os
    envs: dict = {"": None}
    if a.baseline:
        base = dict(os.environ, PYTHONPATH=str(a.baseline.resolve()))
        envs = {"before ": base, "": None}
    with tempfile.TemporaryDirectory(prefix="tcplab-interactive-") as tmp:
        run_dir = a.run_dir or make_run(Path(tmp))
        tcplab = tcplab_command()
        print(f"run directory: {run_dir}")
        print(f"{'command':44} {'median s':>9} {'min s':>7} {'max s':>7} {'CPU s':>8} {'RSS MB':>7}")
        for args in PLOTS:
            out = Path(tmp) / f"plot-{args[1]}.png"
            got = timed(tcplab + ["plot", str(run_dir), *args, "--out", str(out)], a.runs, envs)
            for k, v in got.items():
                print(row(k + "plot " + " ".join(args), *v), flush=True)
        htmls = {k: Path(tmp) / f"report{i}.html" for i, k in enumerate(envs)}
        got = {k: ([], [], []) for k in envs}
        for _ in range(a.runs):
            for k, env in envs.items():
                for acc, v in zip(got[k], child(tcplab + ["report", str(run_dir), "--out", str(htmls[k])], env)):
                    acc.append(v)
        for k in envs:
            print(row(k + "report", *got[k]))
        for k in envs:
            print(f"{k}report size: {htmls[k].stat().st_size:,} bytes", flush=True)
        print("imports of one plot (ms, own time per top-level package): "
              + ", ".join(f"{k} {v:.0f}" for k, v in import_breakdown(run_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
