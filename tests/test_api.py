"""The Python API: `import tcplab`, tcplab.run on a path or a Scenario built in Python, results as
polars DataFrames, ScenarioError with the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import tcplab

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "examples" / "udp-dumbbell.toml"
BRAKMO = ROOT / "scenarios" / "brakmo" / "single-transfer" / "scenario.toml"

TWO_HOSTS = """\
name = "two-hosts"

[run]
duration = "3s"
seed = 4

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "gw"
kind = "router"

[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "gw"
rate = "10Mbps"
delay = "2ms"

[[links]]
name = "bottleneck"
a = "gw"
b = "b"
rate = "1Mbps"
delay = "20ms"
queue = { limit = "8pkts", count_in_service = true }

[[udp]]
name = "poisson"
from = "a"
to = "b"
pattern = "poisson"
rate = "900kbps"
packet_size = "600B"
size_dist = "exponential"

[[udp]]
name = "cbr"
from = "b"
to = "a"
pattern = "cbr"
rate = "200kbps"
packet_size = "1000B"
start = "100ms"
"""


def two_hosts_in_python() -> tcplab.Scenario:
    sc = tcplab.Scenario(name="two-hosts", run={"duration": "3s", "seed": 4})
    sc.add_node("a", "host").add_node("gw", "router").add_node("b", "host")
    sc.add_link("a", "gw", rate="10Mbps", delay="2ms")
    sc.add_link("gw", "b", rate="1Mbps", delay="20ms", name="bottleneck", queue={"limit": "8pkts", "count_in_service": True})
    sc.add_udp("poisson", "a", "b", pattern="poisson", rate="900kbps", packet_size="600B", size_dist="exponential")
    sc.add_udp("cbr", "b", "a", pattern="cbr", rate="200kbps", packet_size="1000B", start="100ms")
    return sc


def tcplab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "tcplab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tcplab.cli"]


def without_wall(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "wall_s"}


def test_import_surface():
    for name in ("run", "load", "validate", "schema", "Scenario", "Run", "ScenarioError", "__version__"):
        assert hasattr(tcplab, name), name
    assert issubclass(tcplab.ScenarioError, Exception)
    assert json.loads(tcplab.schema())["properties"]["run"]


def test_run_equals_cli(tmp_path):
    r = tcplab.run(EXAMPLE, seed=3, overrides={"run.duration": "2s"})
    assert isinstance(r, tcplab.Run)
    assert r.summary["seed"] == 3 and r.summary["sim_end_s"] == pytest.approx(2.0)
    p = subprocess.run([*tcplab_cmd(), "run", str(EXAMPLE), "--seed", "3", "--set", "run.duration=2s", "--json",
                        "--out", str(tmp_path / "cli")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert without_wall(r.summary) == without_wall(json.loads(p.stdout))
    # summary_json is the text of that same summary
    assert without_wall(json.loads(r.summary_json)) == without_wall(r.summary)


def test_run_accepts_override_strings_and_str_path():
    a = tcplab.run(str(EXAMPLE), seed=2, overrides=["run.duration=1s"])
    b = tcplab.run(EXAMPLE, seed=2, overrides={"run.duration": "1s"})
    assert without_wall(a.summary) == without_wall(b.summary)
    assert a.summary["sim_end_s"] == pytest.approx(1.0)


def test_python_built_scenario_equals_toml(tmp_path):
    path = tmp_path / "two-hosts.toml"
    path.write_text(TWO_HOSTS)
    from_file = tcplab.run(path)
    built = two_hosts_in_python()
    from_python = tcplab.run(built)
    assert from_file.summary["events"] > 1000
    assert without_wall(from_python.summary) == without_wall(from_file.summary)
    # and the same through a Scenario loaded from the file
    loaded = tcplab.load(path)
    assert without_wall(tcplab.run(loaded).summary) == without_wall(from_file.summary)
    # the generated TOML round-trips through the CLI too
    gen = tmp_path / "generated.toml"
    gen.write_text(built.to_toml())
    p = subprocess.run([*tcplab_cmd(), "run", str(gen), "--json", "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert without_wall(json.loads(p.stdout)) == without_wall(from_file.summary)


def test_python_seed_and_overrides_apply_to_built_scenario():
    sc = two_hosts_in_python()
    base = tcplab.run(sc)
    other_seed = tcplab.run(sc, seed=99)
    shorter = tcplab.run(sc, overrides={"run.duration": "1s"})
    assert base.summary["seed"] == 4 and other_seed.summary["seed"] == 99
    assert base.summary["events"] != other_seed.summary["events"]
    assert shorter.summary["sim_end_s"] == pytest.approx(1.0)
    assert without_wall(tcplab.run(sc).summary) == without_wall(base.summary)  # deterministic


def test_links_and_flows_are_dataframes():
    r = tcplab.run(two_hosts_in_python())
    assert isinstance(r.links, pl.DataFrame)
    assert r.links.height == 4
    assert {"name", "packets_forwarded", "bytes_forwarded", "drops", "utilization", "queue_avg_pkts",
            "queue_max_pkts"} <= set(r.links.columns)
    assert set(r.links["name"]) == {"a->gw", "gw->a", "gw->b", "b->gw"}
    assert r.links.filter(pl.col("name") == "gw->b")["packets_forwarded"][0] > 0
    assert isinstance(r.flows, pl.DataFrame)  # no TCP here: an empty frame, not None
    assert r.flows.height == 0


def test_flows_dataframe_for_tcp():
    r = tcplab.run(BRAKMO, overrides={"tcp[0].bytes": "200KB"})
    assert isinstance(r.flows, pl.DataFrame)
    assert r.flows.height == 1
    row = r.flows.row(0, named=True)
    assert row["name"] == "transfer" and row["variant"] == "reno"
    assert row["bytes_acked"] >= 200 * 1024
    assert isinstance(r.table("tcp"), pl.DataFrame) and r.trace("transfer").height > 0


def test_save_writes_what_the_cli_writes(tmp_path):
    r = tcplab.run(EXAMPLE, overrides={"run.duration": "1s"})
    out = r.save(tmp_path / "saved")
    assert without_wall(json.loads((out / "summary.json").read_text())) == without_wall(r.summary)
    assert (out / "scenario.toml").read_text() == r.scenario_text
    assert (out / "trace_link.parquet").exists()


def test_scenario_error_for_python_built_scenario():
    sc = two_hosts_in_python()
    sc.add_link("b", "nowhere", rate="1Mbps", delay="1ms")
    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.run(sc)
    e = ei.value
    assert e.field == "links[2].b"
    assert "nowhere" in str(e) and "links[2].b" in str(e)
    with pytest.raises(tcplab.ScenarioError):
        sc.validate()


@pytest.mark.parametrize("mutate,field", [
    (lambda sc: sc.add_link("a", "b", rate=1000000, delay="1ms"), "links[2].rate"),
    (lambda sc: sc.add_link("a", "b", rate="1Mbps", delay="1 fortnight"), "links[2].delay"),
    (lambda sc: sc.add_link("a", "b", rate="1Mbps", delay="1ms", colour="red"), "links[2].colour"),
    (lambda sc: sc.add_node("a", "host"), "nodes[3].name"),
    (lambda sc: sc.add_node("z", "switch"), "nodes[3].kind"),
    (lambda sc: sc.add_udp("u2", "a", "ghost", pattern="cbr", rate="1Mbps", packet_size="1KB"), "udp[2].to"),
    (lambda sc: sc.add_tcp("t", "a", "b", variant="cubicle", bytes="1MB"), "tcp[0].variant"),
    (lambda sc: sc.add_tcp("t", "a", "b", variant="reno"), "tcp[0].bytes"),
    (lambda sc: sc.data["run"].pop("duration"), "run.duration"),
    (lambda sc: sc.data["links"][1].update(loss=1.5), "links[1].loss"),
], ids=["bare-rate", "bad-unit", "unknown-key", "duplicate-node", "unknown-kind", "dangling-udp", "unknown-variant",
        "tcp-no-size", "missing-duration", "loss-1.5"])
def test_scenario_error_carries_field(mutate, field):
    sc = two_hosts_in_python()
    mutate(sc)
    with pytest.raises(tcplab.ScenarioError) as ei:
        sc.validate()
    assert ei.value.field == field, str(ei.value)
    assert field in str(ei.value)
    assert isinstance(ei.value, ValueError)  # callers catching ValueError see it too


def test_scenario_error_from_file_has_file_and_line():
    bad = ROOT / "tests" / "bad_scenarios" / "delay_no_unit.toml"
    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.run(bad)
    e = ei.value
    assert e.field == "links[1].delay"
    assert e.file == str(bad) and e.line == 30
    assert str(e).startswith(f"{bad}:30: links[1].delay: ")


def test_progress_callback_and_abandon():
    """progress(sim_s, end_s) is called with increasing times; an exception in it stops the run."""
    path = ROOT / "scenarios" / "examples" / "udp-dumbbell.toml"
    seen = []
    tcplab.run(path, progress=lambda t, end: seen.append((t, end)))
    assert len(seen) > 50
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    assert all(end == pytest.approx(10.0) for _, end in seen)

    class Stop(Exception):
        pass

    calls = []

    def stop_at_2s(t, end):
        calls.append(t)
        if t >= 2.0:
            raise Stop()

    with pytest.raises(Stop):
        tcplab.run(path, progress=stop_at_2s)
    # The run stopped at the raise: the callback was never called again (a run that went on
    # to its 10 s end would call it ~200 more times, with times past 2 s).
    assert calls[-1] >= 2.0 and all(t < 2.0 for t in calls[:-1]), calls[-5:]
    assert calls[-1] < 2.5 and len(calls) < len(seen) / 2, (calls[-1], len(calls), len(seen))


def test_loaded_scenario_is_parsed_in_python_only_when_used(tmp_path):
    """Issue 13: running a loaded file hands its text to the core without parsing it in Python;
    `data` is parsed on first use, and building on a loaded scenario keeps what the file had."""
    path = tmp_path / "two-hosts.toml"
    path.write_text(TWO_HOSTS)
    loaded = tcplab.load(path)
    assert loaded._data is None and loaded.to_toml() == TWO_HOSTS
    tcplab.run(loaded)
    assert loaded._data is None
    nodes = [n["name"] for n in loaded.data["nodes"]]
    assert len(nodes) >= 2
    loaded.add_node("extra", "host")
    assert [n["name"] for n in loaded.data["nodes"]] == nodes + ["extra"]
    assert "extra" in loaded.to_toml() and all(f'"{n}"' in loaded.to_toml() for n in nodes)
