"""The summary handed from the core to Python (issue 13): the dicts `Run.summary` gives, built in
Rust without a JSON text, are exactly `json.loads` of the summary.json text (same keys in the same
order, same values of the same types); summary.json written by the core, streamed, is that text
and a newline; a Run made from a JSON text (emulation, older callers) works as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tcplab
from tcplab.api import Run
from tcplab.rundir import verify

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "scenarios"

# Scenarios covering every part of the summary: TCP flows and shared bottlenecks, UDP sources,
# tcplib traffic (mix, per-type maps), RED/ECN marks, a measurement window (window_* fields), and
# optional fields both set and absent.
CASES = [
    ("examples/vegas-late-starter.toml", {}),
    ("examples/udp-dumbbell.toml", {"run.duration": "2s"}),
    ("brakmo/single-transfer/scenario.toml", {}),
    ("ahn/table1/scenario.toml", {"run.duration": "20s"}),
    ("kelly/rtt-fairness/scalable.toml", {"run.duration": "35s", "run.measure": {"from": "30s", "to": "35s"}}),
    ("lite/table4/scenario.toml", {"run.duration": "5s"}),
]


def strictly_equal(a, b, path="summary") -> None:
    """a == b with the same types everywhere (1 and 1.0 differ) and dict keys in the same order."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys differ"
        for k in a:
            strictly_equal(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: lengths {len(a)} and {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            strictly_equal(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


@pytest.mark.parametrize("file,overrides", CASES, ids=[c[0] for c in CASES])
def test_summary_objects_are_the_parsed_json(file, overrides, tmp_path):
    r = tcplab.run(SCEN / file, seed=2, overrides=overrides, out=tmp_path / "run")
    text = r.summary_json
    assert len(text) > 1000
    strictly_equal(r.summary, json.loads(text))
    # summary.json as written by the core is that text and a newline; the marker matches it.
    assert (tmp_path / "run" / "summary.json").read_text() == text + "\n"
    verify(tmp_path / "run")


def test_summary_parts_present():
    """The cases above exercise what they claim (so the comparison covers those fields)."""
    r = tcplab.run(SCEN / "kelly/rtt-fairness/scalable.toml", seed=2,
                   overrides={"run.duration": "35s", "run.measure": {"from": "30s", "to": "35s"}})
    assert any("window_utilization" in lk for lk in r.summary["links"])
    assert any(f.get("window_goodput_bps") is not None for f in r.summary["flows"])
    r = tcplab.run(SCEN / "ahn/table1/scenario.toml", seed=2, overrides={"run.duration": "20s"})
    assert r.summary["traffic"] and isinstance(r.summary["traffic"][0]["started_by_type"], dict)


def test_summary_is_made_once_and_can_be_replaced():
    r = tcplab.run(SCEN / "examples/udp-dumbbell.toml", seed=1, overrides={"run.duration": "1s"})
    assert r.summary is r.summary
    r.summary = {"x": 1}
    assert r.summary == {"x": 1}


def test_run_from_json_text_saves_it(tmp_path):
    r0 = tcplab.run(SCEN / "examples/udp-dumbbell.toml", seed=1, overrides={"run.duration": "1s"})
    r = Run(r0.summary_json, r0.scenario_text, r0._traces)
    strictly_equal(r.summary, r0.summary)
    r.save(tmp_path / "run")
    assert (tmp_path / "run" / "summary.json").read_text() == r0.summary_json + "\n"
    with pytest.raises(ValueError):
        Run(None, "", {})


def test_summary_write_error_is_an_oserror(tmp_path):
    r = tcplab.run(SCEN / "examples/udp-dumbbell.toml", seed=1, overrides={"run.duration": "1s"})
    with pytest.raises(OSError):
        r._core_summary.write_json(tmp_path / "no-such-dir" / "summary.json")
