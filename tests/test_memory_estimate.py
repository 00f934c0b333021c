"""Issue 28: the memory estimate tells the truth. A few small runs of `tcplab run`, each in a child
process whose peak RSS comes from getrusage (ru_maxrss, which does not depend on machine load),
must land within 2x of the estimate either way, on both run paths: the Python CLI (traces held
in memory until the run directory is written) and the native CLI (traces streamed to disk in
bounded buffers; `_core.estimate_memory(..., native=True)`). A truly oversized run is refused
before it starts, with the estimate's breakdown and the cheaper option. The full matrix (1 to
4,096 flows, 1 s to 600 s, 1 Mbit/s to 10 Gbit/s, traced and untraced) is
`benches/memory/matrix.py`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tcplab import _core
from tcplab.paths import scenarios_root

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches" / "memory"))
from matrix import dumbbell  # noqa: E402

from tcplab import _front  # noqa: E402
from tcplab.api import default_max_memory  # noqa: E402

PYTHON_CLI = [sys.executable, "-m", "tcplab.cli"]
NATIVE_CLI = [str(_front.native_binary())]


# Linux records a process's pre-exec memory in its ru_maxrss: a child forked straight from pytest
# (hundreds of MB by the time this file runs in the whole suite) would report pytest's size. So a
# small Python launcher forks the run and reports its child's own peak (RUSAGE_CHILDREN).
_LAUNCHER = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.exit(r.returncode)\n")


def peak_rss_of_run(path: Path, out: Path, cli: list[str] = PYTHON_CLI, max_memory: str | None = "1000GB") -> int:
    limit = ["--max-memory", max_memory] if max_memory else []
    p = subprocess.run([sys.executable, "-c", _LAUNCHER, *cli, "run", str(path), "--out", str(out), "--json", *limit],
                       capture_output=True, text=True)
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


@pytest.mark.parametrize("name", list(CASES))
def test_native_estimate_within_2x_of_measured_peak_rss(tmp_path, name):
    path = tmp_path / "s.toml"
    path.write_text(CASES[name])
    est = _core.estimate_memory(CASES[name], str(path), native=True)
    peak = peak_rss_of_run(path, tmp_path / "out", NATIVE_CLI)
    assert 0.5 <= est / peak <= 2.0, f"{name}: estimate {est / 2**20:.1f} MB, peak RSS {peak / 2**20:.1f} MB"


def test_issue_600s_traced_gigabit_flow_runs_under_the_default_limit(tmp_path):
    """Issue 28's refused ordinary run: one traced Reno flow, 600 s over 1 Gbit/s. The native run
    streams its 14 million trace rows to disk and runs under the default --max-memory (80 % of
    RAM) in tens of MB, its estimate within 2x of the peak."""
    text = dumbbell(1, "1Gbps", "600s", True, big_windows=False)
    path = tmp_path / "s.toml"
    path.write_text(text)
    est = _core.estimate_memory(text, str(path), native=True)
    assert est < 256 << 20, est
    peak = peak_rss_of_run(path, tmp_path / "out", NATIVE_CLI, max_memory=None)
    assert 0.5 <= est / peak <= 2.0, (est, peak)
    assert default_max_memory() is None or peak < default_max_memory()
    import pyarrow.parquet as pq
    assert pq.ParquetFile(tmp_path / "out" / "trace_tcp.parquet").metadata.num_rows > 3_000_000
    assert pq.ParquetFile(tmp_path / "out" / "trace_link.parquet").metadata.num_rows > 10_000_000


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
    p = subprocess.run([*PYTHON_CLI, "run", str(path), "--out", str(tmp_path / "o"), "--max-memory", "64GB"],
                       capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert "more than --max-memory 64.0 GB" in err, err
    # The breakdown names the largest parts, the field of the largest (its line), and what helps.
    assert "run.trace.links" in err and "run.trace.tcp" in err and "link trace rows" in err, err
    assert "trace fewer link directions" in err, err
    assert "`tcplab run` command, which streams traces to disk" in err, err
    assert not (tmp_path / "o").exists()
    # The native run streams those traces: under 1 GB (mostly the monitors' interval series).
    assert _core.estimate_memory(path.read_text(), str(path), native=True) < 1 << 30


def test_native_refuses_what_it_holds(tmp_path):
    """The native run holds pcap captures in memory (not streamed): every link captured at
    10 Gbit/s for an hour is refused, naming run.trace.pcap and what helps."""
    path = tmp_path / "huge.toml"
    path.write_text(dumbbell(16, "10Gbps", "3600s", False).replace("[[nodes]]", '[run.trace]\npcap = ["all"]\n[[nodes]]', 1))
    p = subprocess.run([*NATIVE_CLI, "run", str(path), "--out", str(tmp_path / "o"), "--max-memory", "64GB"],
                       capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert err.startswith(f"error: {path}:") and "more than --max-memory 64.0 GB" in err, err
    assert "run.trace.pcap" in err and "capture fewer link directions" in err, err
    assert not (tmp_path / "o").exists()
