"""Issue 28: the memory estimate tells the truth. A few small runs of `tcplab run`, each in a child
process whose peak RSS comes from getrusage (ru_maxrss, which does not depend on machine load),
must land within 2x of the estimate either way; a truly oversized run is refused before it
starts, with the estimate's breakdown and the cheaper option. The full matrix (1 to 4,096 flows,
1 s to 600 s, 1 Mbit/s to 10 Gbit/s, traced and untraced) is `benches/memory/matrix.py`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tcplab import _core
from tcplab.paths import scenarios_root

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches" / "memory"))
from matrix import dumbbell  # noqa: E402

TCPLAB = str(Path(sys.executable).parent / "tcplab")


# Linux records a process's pre-exec memory in its ru_maxrss: a child forked straight from pytest
# (hundreds of MB by the time this file runs in the whole suite) would report pytest's size. So a
# small Python launcher forks the run and reports its child's own peak (RUSAGE_CHILDREN).
_LAUNCHER = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.exit(r.returncode)\n")


def peak_rss_of_run(path: Path, out: Path) -> int:
    p = subprocess.run([sys.executable, "-c", _LAUNCHER, TCPLAB, "run", str(path), "--out", str(out), "--json",
                        "--max-memory", "1000GB"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return int(p.stdout.strip().splitlines()[-1]) * 1024


CASES = {
    "one flow, 1 Mbit/s, 60 s, traced": dumbbell(1, "1Mbps", "60s", True),
    "16 flows, 30 Mbit/s, 10 s, traced": dumbbell(16, "30Mbps", "10s", True),
    "16 flows, 30 Mbit/s, 10 s, untraced": dumbbell(16, "30Mbps", "10s", False),
    "256 flows, 30 Mbit/s, 2 s, untraced": dumbbell(256, "30Mbps", "2s", False),
    "brakmo/single-transfer": (scenarios_root() / "brakmo" / "single-transfer" / "scenario.toml").read_text(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_estimate_within_2x_of_measured_peak_rss(tmp_path, name):
    path = tmp_path / "s.toml"
    path.write_text(CASES[name])
    est = _core.estimate_memory(CASES[name], str(path))
    peak = peak_rss_of_run(path, tmp_path / "out")
    assert 0.5 <= est / peak <= 2.0, f"{name}: estimate {est / 2**20:.1f} MB, peak RSS {peak / 2**20:.1f} MB"


def test_traced_run_estimate_grows_with_what_the_flow_can_send():
    """A window-limited flow's trace does not grow with the link rate; the estimate neither."""
    slow = _core.estimate_memory(dumbbell(1, "1Gbps", "60s", True, big_windows=False), "a.toml")
    fast = _core.estimate_memory(dumbbell(1, "10Gbps", "60s", True, big_windows=False), "a.toml")
    assert fast < 1.2 * slow, (slow, fast)
    # Issue 28's example: one traced Reno flow for 600 s over 1 Gbit/s (the profile's windows)
    # was estimated at 77 GB; it holds a few GB.
    issue = _core.estimate_memory(dumbbell(1, "1Gbps", "600s", True, big_windows=False), "a.toml")
    assert issue < 8 << 30, issue


def test_oversized_run_is_refused_with_breakdown_and_cheaper_option(tmp_path):
    # 16 flows with 1 MB windows at 10 Gbit/s, every link and TCP traced for an hour: hundreds of GB.
    path = tmp_path / "huge.toml"
    path.write_text(dumbbell(16, "10Gbps", "3600s", True))
    est = _core.estimate_memory(path.read_text(), str(path))
    assert est > 100 << 30, est
    p = subprocess.run([TCPLAB, "run", str(path), "--out", str(tmp_path / "o"), "--max-memory", "64GB"],
                       capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert "more than --max-memory 64.0 GB" in err, err
    # The breakdown names the largest parts, the field of the largest (its line), and what helps.
    assert "run.trace.links" in err and "run.trace.tcp" in err and "link trace rows" in err, err
    assert "trace fewer link directions" in err, err
    assert not (tmp_path / "o").exists()
