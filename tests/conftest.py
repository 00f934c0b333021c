"""Shared pytest setup.

Plot/report fixtures (prefix ``plots_``): by default they build synthetic run directories
with tests/synthrun.py. Point them at real runs with

    TCPLAB_PLOT_RUNS=/path/run1:/path/run2 pytest tests/test_plots.py tests/test_report.py

(``os.pathsep``-separated run directories); every structural test then runs on each.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent
_TESTS = Path(__file__).resolve().parent

if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))
try:  # an installed/developed tcplab wins; otherwise use the source tree
    import tcplab.rundir  # noqa: F401
except ImportError:
    sys.path.insert(0, str(_ROOT / "python"))


# `make test` runs the suite in two passes: every test not marked `serial` on two worker processes
# (pytest-xdist), then the `serial` ones alone. Serial: the emulator's real-time runs (their links
# keep time against the wall clock; a second worker's simulation beside them would be load they
# need not share), the wheel build (it runs cargo in the repository's target/), and tests that time
# a signal's effect in seconds.
SERIAL_FILES = {"test_emulate.py", "test_validate_linux.py", "test_wheel.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)


def _plot_runs_from_env() -> list[Path] | None:
    v = os.environ.get("TCPLAB_PLOT_RUNS")
    if not v:
        return None
    return [Path(p) for p in v.split(os.pathsep) if p]


@pytest.fixture(scope="session")
def plots_synth_dirs(tmp_path_factory) -> dict[str, Path]:
    """Synthetic run directories: a Reno 1 MB transfer (slow-start losses, a coarse
    timeout, fast retransmits), a Vegas 1 MB transfer (CAM trace), and three timed Reno
    flows sharing the bottleneck (no "bottleneck" key: chosen by utilization)."""
    from synthrun import make_synthetic_run

    base = tmp_path_factory.mktemp("plots_runs")
    return {
        "reno": make_synthetic_run(base / "reno"),
        "vegas": make_synthetic_run(base / "vegas", variant="vegas"),
        "multi": make_synthetic_run(base / "multi", flows=3, transfer_bytes=None, duration_s=12.0,
                                    bottleneck_key=False, with_cam_file=False, seed=3),
    }


def _real_scenarios() -> list[tuple[str, Path, dict]]:
    """Every bundled example scenario, and each row of the Brakmo reproduction."""
    import tomllib

    cases = [(p.stem, p, {}) for p in sorted((_ROOT / "scenarios" / "examples").glob("*.toml"))]
    brakmo = _ROOT / "scenarios" / "brakmo" / "single-transfer"
    spec = tomllib.loads((brakmo / "reproduce.toml").read_text())
    for v in spec["variants"]:
        # The point-to-point readings (`-p2p`) draw the same graphs from the same kinds of trace as
        # their LAN rows; drawing them too doubled the plot tests' time (every kind of every run).
        if v["name"].endswith("-p2p"):
            continue
        cases.append((f"brakmo-{v['name']}", brakmo / v.get("scenario", "scenario.toml"), v.get("set", {})))
    return cases


@pytest.fixture(scope="session")
def plots_real_dirs(tmp_path_factory) -> dict[str, Path]:
    """Real runs of every example scenario and of the Brakmo reproduction rows."""
    import tcplab

    base = tmp_path_factory.mktemp("real_runs")
    out = {}
    for name, path, overrides in _real_scenarios():
        tcplab.run(path, overrides=overrides, out=base / name)
        out[name] = base / name
    return out


@pytest.fixture(scope="session")
def plots_run_dirs(plots_synth_dirs, plots_real_dirs) -> list[Path]:
    """The run directories every plot/report test runs on: synthetic and real runs
    (env TCPLAB_PLOT_RUNS overrides)."""
    return _plot_runs_from_env() or list(plots_synth_dirs.values()) + list(plots_real_dirs.values())


@pytest.fixture(scope="session")
def plots_artifacts_dir() -> Path:
    """Where screenshots and sample outputs go: $TCPLAB_TEST_ARTIFACTS or target/test-artifacts."""
    d = Path(os.environ.get("TCPLAB_TEST_ARTIFACTS", _ROOT / "target" / "test-artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d
