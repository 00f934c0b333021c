"""The `tcplab` command line: help, run/--json/--seed/--set, schema, validate over every bundled
scenario. Every command runs as a subprocess, the way a user runs it."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "examples" / "udp-dumbbell.toml"
BAD = ROOT / "tests" / "bad_scenarios"

SUMMARY_KEYS = {"tcplab_version", "scenario", "seed", "sim_end_s", "wall_s", "events", "links"}
LINK_KEYS = {"name", "packets_forwarded", "bytes_forwarded", "drops", "drops_by_reason", "utilization",
             "queue_avg_pkts", "queue_max_pkts"}

POISSON = """\
name = "poisson"

[run]
duration = "5s"
seed = 1
monitor_interval = "100ms"
trace = { links = ["all"] }

[[nodes]]
name = "src"
kind = "host"

[[nodes]]
name = "gw"
kind = "router"

[[nodes]]
name = "dst"
kind = "host"

[[links]]
a = "src"
b = "gw"
rate = "100Mbps"
delay = "1ms"

[[links]]
name = "bottleneck"
a = "gw"
b = "dst"
rate = "2Mbps"
delay = "10ms"
queue = { limit = "20pkts" }

[[udp]]
name = "p"
from = "src"
to = "dst"
pattern = "poisson"
rate = "1.8Mbps"
packet_size = "500B"
size_dist = "exponential"
"""


def tcplab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "tcplab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tcplab.cli"]


def cli(*args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*tcplab_cmd(), *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def ok(p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


def clean_failure(p: subprocess.CompletedProcess) -> str:
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "Traceback" not in out and "panicked" not in out, out
    assert p.stderr.startswith("error: "), p.stderr
    return p.stderr


def without_wall(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "wall_s"}


@pytest.fixture
def poisson(tmp_path) -> Path:
    p = tmp_path / "poisson.toml"
    p.write_text(POISSON)
    return p


@pytest.fixture(scope="module")
def example_run(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("example") / "run"
    p = ok(cli("run", EXAMPLE, "--out", out))
    return out, p


# Help --------------------------------------------------------------------------------------------

def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from tcplab.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


SUBCOMMANDS = sorted(_subparsers())


def test_top_help_lists_every_subcommand():
    p = ok(cli("--help"))
    assert p.stdout.startswith("usage: tcplab")
    for name in SUBCOMMANDS:
        assert re.search(rf"^\s+{name}\s", p.stdout, re.M), f"{name} missing from tcplab --help:\n{p.stdout}"
    assert {"run", "validate", "schema"} <= set(SUBCOMMANDS)


def test_every_command_is_a_module_with_add_parser_and_run():
    """cli/<name>.py per command (issue 23): COMMANDS is the --help order, and each module
    registers exactly its own subcommand, dispatching to its own run()."""
    import importlib

    from tcplab.cli import COMMANDS
    subs = _subparsers()
    assert list(subs) == list(COMMANDS)
    for name in COMMANDS:
        mod = importlib.import_module(f"tcplab.cli.{name}")
        assert callable(mod.add_parser) and callable(mod.run), name
        assert subs[name].get_default("fn") is mod.run, name


def test_version():
    import tcplab

    p = ok(cli("--version"))
    assert tcplab.__version__ in p.stdout


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_subcommand_help(name):
    p = ok(cli(name, "--help"))
    assert p.stdout.startswith(f"usage: tcplab {name}")
    sub = _subparsers()[name]
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        shown = action.option_strings[-1] if action.option_strings else (action.metavar or action.dest)
        assert shown in p.stdout, f"{shown} not in `tcplab {name} --help`"


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_subcommand_help_is_complete(name):
    """Every subcommand has a description line and every argument says what it is."""
    sub = _subparsers()[name]
    undocumented = [a.option_strings[-1] if a.option_strings else a.dest for a in sub._actions
                    if not isinstance(a, argparse._HelpAction) and not a.help]
    assert not undocumented, f"`tcplab {name} --help`: no help text for {undocumented}"


def test_run_help_mentions_options():
    p = ok(cli("run", "--help"))
    for opt in ("--seed", "--set", "--out", "--json", "KEY=VALUE"):
        assert opt in p.stdout


def test_no_command_is_an_error():
    p = cli()
    assert p.returncode != 0 and "usage:" in p.stderr and "Traceback" not in p.stderr


# run -----------------------------------------------------------------------------------------------

def test_run_writes_summary(example_run):
    out, p = example_run
    s = json.loads((out / "summary.json").read_text())
    assert SUMMARY_KEYS <= s.keys(), SUMMARY_KEYS - s.keys()
    assert s["scenario"] == "udp-dumbbell" and s["seed"] == 1
    assert s["sim_end_s"] == pytest.approx(10.0)
    assert s["events"] > 0 and s["wall_s"] > 0  # a 10 s run with 66 link directions takes time
    assert len(s["links"]) == 66  # 33 links, two directions each
    for link in s["links"]:
        assert LINK_KEYS <= link.keys(), LINK_KEYS - link.keys()
        assert link["drops"] == sum(link["drops_by_reason"].values())
        assert 0.0 <= link["utilization"] <= 1.0 + 1e-9
        assert link["queue_max_pkts"] >= link["queue_avg_pkts"]
        if link["queue_max_pkts"] == 0:  # never held a packet: nothing to average
            assert link["queue_avg_pkts"] == 0, link
    bott = next(link for link in s["links"] if link["name"] == "left->right")
    assert bott["drops_by_reason"]["queue_overflow"] > 0  # 32 Mb/s offered into 30 Mb/s
    assert bott["queue_max_pkts"] == 100
    # Overloaded (32 into 30 Mb/s) the bottleneck's buffer stays nearly full most of the time.
    assert 50 < bott["queue_avg_pkts"] <= 100, bott["queue_avg_pkts"]
    # The readable table names the bottleneck and where the summary went.
    assert "left->right" in p.stdout and "summary.json" in p.stdout
    assert (out / "scenario.toml").exists()


def test_run_json_matches_file(example_run, tmp_path):
    out, _ = example_run
    p = ok(cli("run", EXAMPLE, "--json", "--out", tmp_path / "j"))
    printed = json.loads(p.stdout)  # stdout is the JSON and nothing else
    assert without_wall(printed) == without_wall(json.loads((tmp_path / "j" / "summary.json").read_text()))
    assert without_wall(printed) == without_wall(json.loads((out / "summary.json").read_text()))


def _strip_wall(text: str) -> str:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith('"wall_s"')]
    assert len(lines) == len(text.splitlines()) - 1
    return "\n".join(lines)


def test_same_seed_is_byte_identical(poisson, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    ok(cli("run", poisson, "--seed", "7", "--out", a))
    ok(cli("run", poisson, "--seed", "7", "--out", b))
    assert _strip_wall((a / "summary.json").read_text()) == _strip_wall((b / "summary.json").read_text())
    parquet = sorted(f.name for f in a.glob("*.parquet"))
    assert "trace_link.parquet" in parquet and "queue_intervals.parquet" in parquet
    assert parquet == sorted(f.name for f in b.glob("*.parquet"))
    for name in parquet:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_seed_changes_draws(poisson, tmp_path):
    runs = {}
    for seed in (1, 2):
        p = ok(cli("run", poisson, "--seed", str(seed), "--json", "--out", tmp_path / f"s{seed}"))
        runs[seed] = json.loads(p.stdout)
    assert runs[1]["seed"] == 1 and runs[2]["seed"] == 2
    first = {s: next(link for link in runs[s]["links"] if link["name"] == "gw->dst") for s in runs}
    assert first[1]["packets_arrived"] > 1000
    assert (first[1]["packets_arrived"], first[1]["bytes_forwarded"]) != (first[2]["packets_arrived"], first[2]["bytes_forwarded"])
    assert runs[1]["events"] != runs[2]["events"]


def test_seed_defaults_to_file(poisson, tmp_path):
    poisson.write_text(POISSON.replace("seed = 1", "seed = 5"))
    s = json.loads(ok(cli("run", poisson, "--json", "--out", tmp_path / "o")).stdout)
    assert s["seed"] == 5


def test_set_duration(poisson, tmp_path):
    s = json.loads(ok(cli("run", poisson, "--set", "run.duration=2s", "--json", "--out", tmp_path / "o")).stdout)
    assert s["sim_end_s"] == pytest.approx(2.0)
    # Several --set, including an indexed table field and a quoted value.
    s = json.loads(ok(cli("run", poisson, "--set", "run.duration=1s", "--set", 'links[1].queue.limit="5pkts"',
                          "--json", "--out", tmp_path / "o2")).stdout)
    assert s["sim_end_s"] == pytest.approx(1.0)
    bott = next(link for link in s["links"] if link["name"] == "gw->dst")
    assert bott["queue_max_pkts"] <= 5
    # The run directory keeps the scenario as run.
    assert tomllib.loads((tmp_path / "o2" / "scenario.toml").read_text())["run"]["duration"] == "1s"


@pytest.mark.parametrize("setting,says", [
    ("foo.bar=1", "foo"),
    ("run.durration=2s", "durration"),
    ("links[0].bogus=1", "bogus"),
    ("links[99].rate=1Mbps", "links[99]"),
    ("run.duration=2 parsecs", "run.duration"),
    ("run.duration=2", "run.duration"),
    ("run=3", "run"),
    ("nokeyvalue", "KEY=VALUE"),
    ("links[x].rate=1Mbps", "links[x]"),
    ("=5", "--set"),
], ids=["unknown-table", "misspelt-key", "unknown-link-key", "index-out-of-range", "bad-unit", "bare-number",
        "table-replaced", "no-equals", "bad-index", "empty-key"])
def test_set_bad_key(poisson, tmp_path, setting, says):
    n_lines = len(POISSON.splitlines())
    for args in (["validate", poisson, "--set", setting], ["run", poisson, "--set", setting, "--out", tmp_path / "o"]):
        err = clean_failure(cli(*args))
        assert says in err, err
        assert str(poisson) in err
        m = re.match(rf"error: {re.escape(str(poisson))}:(\d+):", err)
        if m:  # a line, when given, is a line of the user's file
            assert 1 <= int(m.group(1)) <= n_lines, err
    assert not (tmp_path / "o" / "summary.json").exists()


def test_set_keeps_line_numbers_of_the_file():
    """--set can add lines to the text it parses; errors elsewhere still name the file's own lines."""
    path = BAD / "delay_no_unit.toml"
    err = clean_failure(cli("validate", path, "--set", "run.monitor_interval=50ms", "--set", "run.stop_when_done=true"))
    assert err.startswith(f"error: {path}:30: links[1].delay:"), err


def test_set_keeps_line_numbers_of_the_file_for_topology_errors():
    """Same for errors found while building the network (dangling endpoint on line 28)."""
    path = BAD / "link_dangling_endpoint.toml"
    err = clean_failure(cli("validate", path, "--set", "run.monitor_interval=50ms", "--set", "run.stop_when_done=true"))
    assert err.startswith(f"error: {path}:28: links[1].b:"), err


def test_set_value_error_names_the_override(poisson):
    err = clean_failure(cli("validate", poisson, "--set", "links[1].delay=20"))
    assert "links[1].delay" in err and "--set" in err, err


def test_run_missing_file(tmp_path):
    # Issue 14: one plain line, "tcplab: no such file: PATH" (not Python's "[Errno 2] ...").
    p = cli("run", tmp_path / "nope.toml", "--out", tmp_path / "o")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip() == f"tcplab: no such file: {tmp_path / 'nope.toml'}"


# schema / validate ----------------------------------------------------------------------------------

def test_schema_is_json_schema():
    p = ok(cli("schema"))
    schema = json.loads(p.stdout)
    props = schema["properties"]
    assert {"run", "nodes", "links", "lan", "udp", "tcp"} <= props.keys()
    # `links` may be left out by a scenario made of `[[lan]]` segments only (issue 25).
    assert set(schema.get("required", [])) >= {"run", "nodes"}
    assert schema.get("additionalProperties") is False  # unknown keys are errors
    assert "$schema" in schema
    # The Lite family and each of its switches are documented (seed 001 Table 3).
    tcp = json.dumps(schema)
    for word in ("lite.6", "fix_header_prediction", "fix_rto", "timestamps", "fix_extra_increase",
                 "ack_every_packet", "fix_big_ack", "fix_dupack_ge"):
        assert word in tcp, word


def _bundled_scenarios() -> list[Path]:
    out = []
    for f in sorted((ROOT / "scenarios").rglob("*.toml")):
        try:
            data = tomllib.loads(f.read_text())
        except tomllib.TOMLDecodeError:
            out.append(f)  # a broken bundled file must fail the test below
            continue
        if isinstance(data.get("run"), dict):
            out.append(f)
    return out


BUNDLED = _bundled_scenarios()


def test_there_are_bundled_scenarios():
    names = {p.relative_to(ROOT).as_posix() for p in BUNDLED}
    assert {"scenarios/examples/udp-dumbbell.toml", "scenarios/brakmo/single-transfer/scenario.toml"} <= names


@pytest.mark.parametrize("path", BUNDLED, ids=[p.relative_to(ROOT / "scenarios").as_posix() for p in BUNDLED])
def test_validate_bundled(path):
    p = ok(cli("validate", path))
    assert p.stdout.strip() == f"{path}: ok"
    assert p.stderr == ""
