"""The medium trace of a `[[lan]]` (`trace = true`) turned into idle/busy/collision intervals
(tcplab.lan), checked against the run's own counters."""

from __future__ import annotations

import pytest

from tcplab.api import Scenario, run
from tcplab.lan import medium_states, state_fractions


def _segment(trace: bool) -> Scenario:
    sc = Scenario(name="lan-trace", run={"duration": "300ms", "stop_when_done": False, "seed": 5})
    for i in range(1, 5):
        sc.add_node(f"h{i}", "host")
    sc.add_lan("seg", [f"h{i}" for i in range(1, 5)], trace=trace)
    for i in range(1, 4):
        sc.add_udp(f"u{i}", f"h{i}", "h4", pattern="cbr", rate="4Mbps", packet_size="200B")
    return sc


def test_states_tile_the_run_and_match_the_counters():
    s = run(_segment(True)).summary
    lan = s["lans"][0]
    assert lan["collisions"] > 10
    df = medium_states(lan, until=s["sim_end_s"])
    # The intervals tile 0 .. end without gaps, and neighbours differ in state.
    assert df["start_s"][0] == 0.0 and df["end_s"][-1] == pytest.approx(s["sim_end_s"])
    assert (df["start_s"][1:].to_numpy() == df["end_s"][:-1].to_numpy()).all()
    assert (df["state"][1:].to_numpy() != df["state"][:-1].to_numpy()).all()
    f = state_fractions(lan, until=s["sim_end_s"])
    assert sum(f.values()) == pytest.approx(1.0)
    assert f["collision"] > 0
    # Frames that got through never overlap, so the medium is busy at least their time (the
    # summary's utilization) and at most that plus the collided transmissions' time.
    assert lan["utilization"] - 1e-9 <= f["busy"] + f["collision"] <= lan["utilization"] + lan["collision_time"] + 1e-9


def test_without_trace_it_says_how_to_get_one():
    lan = run(_segment(False)).summary["lans"][0]
    assert "medium_trace" not in lan
    with pytest.raises(ValueError, match="trace = true"):
        medium_states(lan)


def test_medium_is_another_name_of_lan():
    lan = _segment(False)
    text = lan.to_toml()
    assert "lan" in text
    medium = Scenario.from_toml(text.replace("lan = [", "medium = [").replace("[[lan]]", "[[medium]]"))
    assert "medium" in medium.data and "lan" not in medium.data
    a, b = run(lan).summary, run(medium).summary
    assert a["lans"] == b["lans"] and a["lans"][0]["collisions"] > 10
    # The builder adds to the table the scenario already uses, by either method name.
    medium.add_node("h5", "host").add_node("h6", "host").add_medium("seg2", ["h5", "h6"])
    assert [m["name"] for m in medium.data["medium"]] == ["seg", "seg2"] and "lan" not in medium.data
