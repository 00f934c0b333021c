"""The fuzz target's fixed-seed sample (issue 15): 2,000 mutated scenario files through
`tcplab run`, each ending in a complete run directory or a one-line located error
(tests/fuzz_scenarios.py states the invariant; `make fuzz` runs it for as long as asked)."""

from __future__ import annotations

import time

import fuzz_scenarios as fz


def test_fuzz_sample_of_2000_cases_keeps_the_invariant():
    t0 = time.monotonic()
    stats = fz.run_sample(2000, derandomize=True)
    wall = time.monotonic() - t0
    print(f"fuzz sample: {sum(stats.values())} cases in {wall:.1f} s: {stats}")
    assert sum(stats.values()) == 2000
    # The sample reaches every outcome: completed runs, located errors, and the guards.
    assert stats.get("ok", 0) >= 100 and stats.get("error", 0) >= 500, stats


def test_the_check_catches_a_violation(tmp_path, monkeypatch):
    """The invariant check itself can fail: a run that exits 0 without a complete directory."""
    from tcplab import api
    import pytest

    monkeypatch.setattr(api.Run, "save", lambda self, out: out)
    with pytest.raises(fz.InvariantViolation, match="not complete"):
        fz.check_case(fz.BUILTIN[0].encode(), [], tmp_path, fz.Limits())
