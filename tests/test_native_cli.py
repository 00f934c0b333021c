"""The native run path (crates/tcplab-cli, issue 28) and the Python CLI are one CLI.

The `tcplab` command is the native binary (`.venv/bin/tcplab` is a link to it; the wheel's
`bin/tcplab` a copy): it takes `run`, `validate` and `bench`, and `python -m tcplab` is the Python
path it hands every other command line to. These tests hold the two alike:
the same flags (so the definitions cannot drift apart), the same summary.json and printed table,
trace Parquet files that `tcplab.rundir` reads to the same tables, the same COMPLETE.json layout,
the same error messages, and argparse answering whatever the native binary does not take.
`make setup` builds the binary; its absence is a failure, not a skip.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tcplab import _front
from tcplab.cli import build_parser
from tcplab.rundir import RunData, verify

ROOT = Path(__file__).resolve().parents[1]
VEGAS = ROOT / "scenarios" / "examples" / "vegas-late-starter.toml"
NATIVE = _front.native_binary()


def native(*args, **kw) -> subprocess.CompletedProcess:
    assert NATIVE, "python/tcplab/_bin/tcplab-native is missing: `make setup` builds it"
    env = dict(os.environ, TCPLAB_PYTHON=sys.executable)
    return subprocess.run([NATIVE, *map(str, args)], capture_output=True, text=True, timeout=120, env=env, **kw)


def python_cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tcplab.cli", *map(str, args)], capture_output=True, text=True, timeout=120, **kw)


def argparse_flags(command: str) -> set[tuple]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    flags = set()
    for a in sub.choices[command]._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        name = next((o for o in a.option_strings if o.startswith("--")), a.dest)
        flags.add((command, name, a.nargs != 0, isinstance(a, argparse._AppendAction)))
    return flags


def test_same_flags_as_the_python_cli():
    p = native("__flags")
    assert p.returncode == 0, p.stderr
    rows = {tuple(json.loads(line)) for line in p.stdout.splitlines()}
    for command in _front.NATIVE_COMMANDS:
        ours = {r for r in rows if r[0] == command}
        assert ours == argparse_flags(command), command
    assert {r[0] for r in rows} == set(_front.NATIVE_COMMANDS)


def without_wall(s: dict) -> dict:
    return {k: v for k, v in s.items() if k != "wall_s"}


def table_without_wall(text: str) -> str:
    return re.sub(r"in [0-9.]+ s wall, (\d+) events \([0-9.a-z]+ M events/s\)", r"\1 events", text)


def test_native_and_python_write_the_same_run(tmp_path):
    args = [VEGAS, "--seed", "3", "--set", "run.duration=8s"]
    a = native("run", *args, "--out", tmp_path / "native")
    b = python_cli("run", *args, "--out", tmp_path / "python")
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    assert a.stderr == b.stderr == ""
    assert table_without_wall(a.stdout).replace(str(tmp_path / "native"), "OUT") == \
        table_without_wall(b.stdout).replace(str(tmp_path / "python"), "OUT")
    na, py = tmp_path / "native", tmp_path / "python"
    sa, sb = json.loads((na / "summary.json").read_text()), json.loads((py / "summary.json").read_text())
    assert without_wall(sa) == without_wall(sb)
    # summary.json is the same text but for wall_s; scenario.toml is the same bytes
    wall = re.compile(r'"wall_s": [^,]+,')
    assert wall.sub("", (na / "summary.json").read_text()) == wall.sub("", (py / "summary.json").read_text())
    assert (na / "scenario.toml").read_bytes() == (py / "scenario.toml").read_bytes()
    # the same files, sealed alike (COMPLETE.json's layout: names in the same order)
    ma, mb = verify(na), verify(py)
    assert [f["name"] for f in ma["files"]] == [f["name"] for f in mb["files"]]
    assert {"trace_tcp.parquet", "trace_cam.parquet", "trace_link.parquet", "queue_intervals.parquet"} <= {f["name"] for f in ma["files"]}
    assert re.sub(r'"(bytes|sha256)": [^\n]+', "", (na / "COMPLETE.json").read_text()) == \
        re.sub(r'"(bytes|sha256)": [^\n]+', "", (py / "COMPLETE.json").read_text())
    # the trace tables read back equal: same columns and types; rows in the same order within
    # a connection (side) / link direction (the native path streams them slice by slice)
    ra, rb = RunData.load(na), RunData.load(py)
    for name, key in (("trace_tcp", ["conn", "side"]), ("trace_cam", ["conn"]), ("trace_link", ["link"]),
                      ("queue_intervals", ["link"])):
        fa, fb = pl.read_parquet(na / f"{name}.parquet"), pl.read_parquet(py / f"{name}.parquet")
        assert fa.columns == fb.columns, name
        assert fa.height == fb.height > 0, name
        for c in fa.columns:
            assert fa[c].dtype == fb[c].dtype or fb[c].dtype == pl.Null, (name, c)
        assert fa.sort(key, maintain_order=True).equals(fb.sort(key, maintain_order=True)), name
        # each table fits in one row group here: the native writer groups rows as Python does
        assert fa.equals(fb), name
    # zstd, as polars writes; the native files together no larger than polars' (they were 1.7x
    # with Snappy and a dictionary on every float column)
    import pyarrow.parquet as pq
    for name in ("trace_tcp", "trace_link"):
        md = pq.ParquetFile(na / f"{name}.parquet").metadata
        assert {md.row_group(0).column(i).compression for i in range(md.num_columns)} == {"ZSTD"}, name
    size = lambda d: sum(f.stat().st_size for f in d.glob("*.parquet"))  # noqa: E731
    assert size(na) <= size(py), (size(na), size(py))
    conn = sa["flows"][0]["name"]
    assert ra.trace(conn).equals(rb.trace(conn))
    assert ra.queue().equals(rb.queue())
    assert ra.flows.equals(rb.flows)


def test_native_and_python_draw_the_same_numbers(tmp_path):
    """The native binary links the parquet crate, which turns on num-traits' "std": rand_distr's
    exp/ln then come from std instead of libm unless the core asks for std itself. tcplib's
    samplers hit those rarely, so a whole tcplib run is needed to see a difference (this one
    differed before the core pinned the feature)."""
    sc = ROOT / "scenarios" / "brakmo" / "synchronicity" / "three-sources.toml"
    a, b = native("run", sc, "--json", "--out", tmp_path / "a"), python_cli("run", sc, "--json", "--out", tmp_path / "b")
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    assert without_wall(json.loads(a.stdout)) == without_wall(json.loads(b.stdout))


def test_json_output_is_the_summary(tmp_path):
    a = native("run", VEGAS, "--set", "run.duration=2s", "--json", "--out", tmp_path / "a")
    assert a.returncode == 0, a.stderr
    assert a.stdout == (tmp_path / "a" / "summary.json").read_text()


@pytest.mark.parametrize("case", ["missing", "directory", "bad-field", "bad-set", "memory", "not-a-run-dir", "bad-utf8"])
def test_same_errors(case, tmp_path):
    out = tmp_path / "out"
    args: list = ["run", VEGAS, "--out", out]
    if case == "missing":
        args = ["run", tmp_path / "nope.toml"]
    elif case == "directory":
        args = ["run", tmp_path]
    elif case == "bad-field":
        bad = tmp_path / "bad.toml"
        bad.write_text(VEGAS.read_text().replace('duration = "', 'duration = "x', 1))
        args = ["run", bad, "--out", out]
    elif case == "bad-set":
        args += ["--set", "links[0].rate=fast"]
    elif case == "memory":
        args += ["--max-memory", "1MB"]
    elif case == "not-a-run-dir":
        out.mkdir()
        (out / "precious.txt").write_text("keep")
    elif case == "bad-utf8":
        bad = tmp_path / "bad.toml"
        bad.write_bytes(b"name = 'x'\n\xff\n")
        args = ["run", bad, "--out", out]
    a, b = native(*args), python_cli(*args)
    assert a.returncode == b.returncode == 2, (a.stderr, b.stderr)
    if case == "memory":  # the native process's estimate is its own (no interpreter, streamed traces)
        assert a.stderr.startswith(f"error: {VEGAS}:") and "more than --max-memory 1 MB" in a.stderr
        assert "to make it cheaper" in a.stderr and "raise --max-memory" in a.stderr
    else:
        assert a.stderr == b.stderr and a.stderr.strip()
    assert a.stdout == b.stdout == ""
    if case == "not-a-run-dir":
        assert (out / "precious.txt").read_text() == "keep"
    else:
        assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left behind


def test_validate_alike(tmp_path):
    a, b = native("validate", VEGAS), python_cli("validate", VEGAS)
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout == f"{VEGAS}: ok\n"
    a, b = native("validate", VEGAS, "--set", "run.duration=-1s"), python_cli("validate", VEGAS, "--set", "run.duration=-1s")
    assert a.returncode == b.returncode == 2 and a.stderr == b.stderr and "run.duration" in a.stderr


@pytest.mark.parametrize("args", [["run", "--help"], ["run", "x.toml", "--seed", "010"], ["run", "x.toml", "--max-mem", "4GB"],
                                  ["run", "x.toml", "--timeout", "0"], ["validate"], ["schema"]])
def test_argparse_answers_what_native_does_not_take(args):
    a, b = native(*args), python_cli(*args)
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def test_rerun_replaces_the_run_directory(tmp_path):
    out = tmp_path / "r"
    for seed in (1, 2):
        p = native("run", VEGAS, "--set", "run.duration=1s", "--seed", seed, "--out", out)
        assert p.returncode == 0, p.stderr
        assert json.loads((out / "summary.json").read_text())["seed"] == seed
        verify(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


COMMAND = Path(sys.executable).parent / "tcplab"


def command_env(**extra) -> dict:
    """The environment of a user's shell: no TCPLAB_PYTHON (the command finds the interpreter)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TCPLAB_PYTHON", "TCPLAB_NATIVE", "TCPLAB_NO_HANDBACK")}
    return env | extra


def test_the_tcplab_command_is_the_native_binary(tmp_path):
    """`make setup` links .venv/bin/tcplab to the binary: a run is the native one (marked by the
    Parquet writer's name), with no interpreter started; TCPLAB_NATIVE=0 sends it to Python."""
    assert COMMAND.read_bytes()[:4] == b"\x7fELF", "the tcplab command is a native executable, not a Python script"
    assert COMMAND.resolve() == Path(NATIVE).resolve()
    p = subprocess.run([COMMAND, "run", VEGAS, "--set", "run.duration=1s", "--out", tmp_path / "r"], capture_output=True, text=True,
                       timeout=120, env=command_env())
    assert p.returncode == 0, p.stderr
    import pyarrow.parquet as pq
    assert pq.ParquetFile(tmp_path / "r" / "trace_tcp.parquet").metadata.created_by.startswith("tcplab ")
    q = subprocess.run([COMMAND, "run", VEGAS, "--set", "run.duration=1s", "--out", tmp_path / "p"], capture_output=True, text=True,
                       timeout=120, env=command_env(TCPLAB_NATIVE="0"))
    assert q.returncode == 0, q.stderr
    assert not pq.ParquetFile(tmp_path / "p" / "trace_tcp.parquet").metadata.created_by.startswith("tcplab ")


@pytest.mark.parametrize("args", [["--version"], ["run", "--help"], ["schema"], ["bench", "--list"], [], ["nosuch"]])
def test_the_command_finds_python_beside_it(args):
    """Without TCPLAB_PYTHON the command runs `python -m tcplab` with the interpreter beside it
    (the venv's): the same output and exit status as the Python CLI."""
    a = subprocess.run([COMMAND, *args], capture_output=True, text=True, timeout=120, env=command_env())
    b = python_cli(*args)
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
    c = subprocess.run([sys.executable, "-m", "tcplab", *args], capture_output=True, text=True, timeout=120)
    assert (c.returncode, c.stdout, c.stderr) == (b.returncode, b.stdout, b.stderr)


def test_the_command_finds_python_in_the_prefix(tmp_path):
    """A prefix with no interpreter beside the command (a --user or system install): the
    command runs PREFIX/bin/python3.X for the prefix's lib/python3.X/site-packages/tcplab."""
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib" / "python3.11" / "site-packages" / "tcplab").mkdir(parents=True)
    (prefix / "bin" / "tcplab").symlink_to(NATIVE)
    # an interpreter stand-in that reports how it was started
    fake = prefix / "bin" / "python3.11"
    fake.write_text("#!/bin/sh\necho \"started: $0 $*\"\n")
    fake.chmod(0o755)
    p = subprocess.run([prefix / "bin" / "tcplab", "report", "x"], capture_output=True, text=True, timeout=60, env=command_env())
    assert p.returncode == 0 and p.stdout == f"started: {fake} -m tcplab report x\n", (p.stdout, p.stderr)
    # TCPLAB_PYTHON first
    p = subprocess.run([prefix / "bin" / "tcplab", "report"], capture_output=True, text=True, timeout=60,
                       env=command_env(TCPLAB_PYTHON=str(fake)))
    assert p.stdout == f"started: {fake} -m tcplab report\n"


def test_the_command_finds_python_beside_its_own_file(tmp_path):
    """Started under a name the PATH does not resolve (argv[0] "tcplab"), the command still finds
    the python3 beside its own file (the wheel's copy in a venv's bin/)."""
    import shutil
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    shutil.copy(NATIVE, bin_dir / "tcplab")
    fake = bin_dir / "python3"
    fake.write_text("#!/bin/sh\necho \"started: $0 $*\"\n")
    fake.chmod(0o755)
    p = subprocess.run(["tcplab", "report", "r"], executable=bin_dir / "tcplab", capture_output=True, text=True, timeout=60,
                       env=command_env(PATH="/usr/bin:/bin"))
    assert p.returncode == 0 and p.stdout == f"started: {fake} -m tcplab report r\n", (p.stdout, p.stderr)


def test_an_old_console_script_still_works(tmp_path):
    """A venv set up before the command became the binary keeps pip's script calling
    tcplab._front:main: it execs the native command (a run is the native one)."""
    code = "import sys; from tcplab._front import main; sys.exit(main())"
    p = subprocess.run([sys.executable, "-c", code, "run", VEGAS, "--set", "run.duration=1s", "--out", tmp_path / "r"],
                       capture_output=True, text=True, timeout=120, env=command_env())
    assert p.returncode == 0, p.stderr
    import pyarrow.parquet as pq
    assert pq.ParquetFile(tmp_path / "r" / "trace_tcp.parquet").metadata.created_by.startswith("tcplab ")
    a = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True, timeout=120, env=command_env())
    assert (a.returncode, a.stdout) == (0, python_cli("--version").stdout)


def test_handback_status_when_asked_not_to_exec_python():
    """TCPLAB_NO_HANDBACK=1 (the sweep runner's): a command line for Python ends with status 64."""
    for args in (["run", "x.toml", "--seed", "010"], ["report", "x"], ["plot", "x", "--format", "pdf"], ["run", "--help"]):
        p = subprocess.run([NATIVE, *args], capture_output=True, text=True, timeout=60, env=command_env(TCPLAB_NO_HANDBACK="1"))
        assert p.returncode == 64 and p.stdout == "" and "TCPLAB_NO_HANDBACK" in p.stderr, args


# ----------------------------------------------------------------------------- tcplab bench
def test_bench_cases_are_defined_once():
    """The cases are defined in Rust (crates/tcplab/src/bench_cases.rs): the native bench and
    python/tcplab/bench.py (through tcplab._core) run the same text; bench.py builds none itself."""
    from tcplab import bench
    from tcplab.resources import scenarios_dir
    assert list(bench.CASES) == [n for n, _ in bench._core.bench_cases()] and len(bench.CASES) >= 16
    assert set(bench.DEFAULT_CASES) | set(bench.HTSIM_CASES) <= set(bench.CASES)
    import tomllib
    for name, make in bench.CASES.items():
        p = native("__bench-case", name)
        assert p.returncode == 0, (name, p.stderr)
        sc = make()
        assert p.stdout == sc.to_toml() or sc.source.endswith("scenario.toml"), name   # the very text
        if len(p.stdout) < 2_000_000:
            assert tomllib.loads(p.stdout) == tomllib.loads(bench.scenario_text(name)), name
    assert bench.CASES["brakmo-backbone"]().to_toml() == (scenarios_dir() / "brakmo" / "backbone" / "scenario.toml").read_text()
    assert native("__bench-case", "no-such-case").returncode != 0
    source = Path(bench.__file__).read_text()
    assert "add_node" not in source and "add_tcp" not in source and "Scenario(" not in source
    # the builders' parameters reach the text
    sc = bench.tcp_dumbbell(3, variant="cubic", duration="2s", traced=True).data
    assert [f["variant"] for f in sc["tcp"]] == ["cubic"] * 3 and sc["run"]["duration"] == "2s" and sc["run"]["trace"]["tcp"]
    assert len(bench.short_transfers(10, hosts=4).data["tcp"]) == 10


BENCH_RUN_FIGURES = ("case", "flows", "sim_s", "events", "packet_hops")  # the same on any machine


def bench_json(p: subprocess.CompletedProcess) -> dict:
    assert p.returncode == 0 and p.stderr == "", p.stderr
    return json.loads(p.stdout)


def test_bench_json_alike():
    """Same document (keys in the same order, the same run figures) on both paths; timings and
    RSS are each process's own."""
    args = ["bench", "cbr-p2p", "poisson-queue", "--repeat", "2", "--no-process", "--json"]
    a, b = bench_json(native(*args)), bench_json(python_cli(*args))
    assert list(a) == list(b) == ["struct_sizes_bytes", "repeat", "cases"]
    assert a["struct_sizes_bytes"] == b["struct_sizes_bytes"] and a["repeat"] == b["repeat"] == 2
    assert [list(c) for c in a["cases"]] == [list(c) for c in b["cases"]]
    for ca, cb in zip(a["cases"], b["cases"]):
        assert {k: ca[k] for k in BENCH_RUN_FIGURES} == {k: cb[k] for k in BENCH_RUN_FIGURES}
        assert {k: type(ca[k]) for k in ca} == {k: type(cb[k]) for k in cb}
        assert ca["process_s"] is None and ca["instructions_per_event"] is None
        assert ca["events"] > 600_000 and ca["core_wall_s"] > 0 and ca["peak_rss_bytes"] > 0
        assert ca["ns_per_event"] == pytest.approx(ca["core_wall_s"] / ca["events"] * 1e9)


def test_bench_table_alike_with_process_runs():
    """The printed table: the same header and columns; the whole-process columns filled in."""
    args = ["bench", "cbr-p2p", "--repeat", "1"]
    a, b = native(*args), python_cli(*args)
    assert a.returncode == b.returncode == 0 and a.stderr == b.stderr == "", (a.stderr, b.stderr)
    la, lb = a.stdout.splitlines(), b.stdout.splitlines()
    assert la[:2] == lb[:2] and len(la) == len(lb) == 3
    ra, rb = la[2].split(), lb[2].split()
    assert len(ra) == len(rb) == 15 and "-" not in ra[:14] and ra[14] == rb[14] == "-"  # no --callgrind
    # case, flows, sim s, events
    assert [ra[i] for i in (0, 1, 2, 5)] == [rb[i] for i in (0, 1, 2, 5)]
    # columns at the same places: every cell ends where the other path's does
    assert [m.end() for m in re.finditer(r"\S+", la[2])][:3] == [m.end() for m in re.finditer(r"\S+", lb[2])][:3]
    p = bench_json(native("bench", "cbr-p2p", "--repeat", "1", "--json"))["cases"][0]
    assert p["process_s"] > 0 and p["process_peak_rss_bytes"] > 0 and p["process_core_wall_s"] > 0


@pytest.mark.skipif(not __import__("shutil").which("valgrind"), reason="valgrind not installed")
def test_bench_callgrind_counts_the_core_loop_on_both_paths():
    """Instructions per event inside the core's event loop: found by name (the packaged binary
    keeps its symbols) and counted through the `tcplab` command the Python path starts."""
    args = ["bench", "cbr-p2p", "--repeat", "1", "--no-process", "--callgrind", "--json"]
    a, b = bench_json(native(*args))["cases"][0], bench_json(python_cli(*args))["cases"][0]
    assert a["instructions_per_event"] > 50 and b["instructions_per_event"] > 50
    assert a["instructions_per_event"] == pytest.approx(b["instructions_per_event"], rel=0.01)


@pytest.mark.skipif(not (__import__("shutil").which("valgrind") and __import__("shutil").which("strip")),
                    reason="valgrind or strip not installed")
def test_bench_callgrind_fails_loudly_without_the_core_loop_symbol(tmp_path):
    """A binary whose core-loop symbol is gone (here stripped; once, inlined by a link-time
    change) makes `bench --callgrind` an error naming the symbol, not a silent "-"."""
    stripped = tmp_path / "tcplab-native"
    subprocess.run(["strip", "-o", str(stripped), NATIVE], check=True)
    env = dict(os.environ, TCPLAB_PYTHON=sys.executable)
    p = subprocess.run([str(stripped), "bench", "cbr-p2p", "--repeat", "1", "--no-process", "--callgrind"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode != 0
    assert "callgrind counted no instructions inside *Simulation::run_with_progress*" in p.stderr, p.stderr


def test_bench_list_alike():
    """`tcplab bench --list` is printed by the binary, from the one definition, as Python prints it."""
    env = dict(os.environ, TCPLAB_NO_HANDBACK="1")
    for args in (["bench", "--list"], ["bench", "--list", "no-such-case", "--json"]):
        a = subprocess.run([NATIVE, *args], capture_output=True, text=True, timeout=60, env=env)
        b = python_cli(*args)
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr) == (0, a.stdout, "")
    assert len(a.stdout.splitlines()) >= 16 and a.stdout.startswith("udp-dumbbell-16          16 CBR")


@pytest.mark.parametrize("args", [["bench", "no-such-case"], ["bench", "--repeat", "0"], ["bench", "--help"]])
def test_bench_hands_back_what_it_does_not_take(args):
    a, b = native(*args), python_cli(*args)
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


# ----------------------------------------------------------------------------- sweeps and reproductions
def test_saved_sweep_runs_go_through_the_native_binary(tmp_path, monkeypatch):
    """A sweep/reproduce task that saves its files runs in tcplab-native (no polars in the
    worker); its summary and files are those of the in-process path, which TCPLAB_NATIVE=0
    (or a run the binary refuses) still takes."""
    import pyarrow.parquet as pq

    from tcplab.sweep.run import execute
    task = {"hash": "h", "scenario_text": VEGAS.read_text(), "scenario_file": str(VEGAS), "seed": 5,
            "overrides": ["run.duration=3s", 'tcp[0].variant="reno"'], "save": "all"}
    (tmp_path / "n").mkdir()
    (tmp_path / "p").mkdir()
    a = execute({**task, "run_dir": str(tmp_path / "n" / "r")})
    monkeypatch.setenv("TCPLAB_NATIVE", "0")
    b = execute({**task, "run_dir": str(tmp_path / "p" / "r")})
    assert a["status"] == b["status"] == "ok", (a["error"], b["error"])
    assert without_wall(json.loads(a["summary_json"])) == without_wall(json.loads(b["summary_json"]))
    na, py = tmp_path / "n" / "r", tmp_path / "p" / "r"
    assert pq.ParquetFile(na / "trace_tcp.parquet").metadata.created_by.startswith("tcplab ")
    assert not pq.ParquetFile(py / "trace_tcp.parquet").metadata.created_by.startswith("tcplab ")
    assert (na / "scenario.toml").read_bytes() == (py / "scenario.toml").read_bytes()
    assert sorted(p.name for p in na.iterdir()) == sorted(p.name for p in py.iterdir())
    for name in ("trace_tcp", "trace_link", "queue_intervals"):
        assert pl.read_parquet(na / f"{name}.parquet").equals(pl.read_parquet(py / f"{name}.parquet")), name
    assert sorted(p.name for p in (tmp_path / "n").iterdir()) == ["r"]   # no temporary left behind
    # a failing run fails once, in the binary, with its error kept (the in-process path is not tried)
    monkeypatch.delenv("TCPLAB_NATIVE")
    import tcplab.api
    monkeypatch.setattr(tcplab.api, "run", lambda *a, **k: pytest.fail("re-ran in-process"))
    bad = execute({**task, "overrides": ["links[0].rate=fast"], "run_dir": str(tmp_path / "n" / "bad")})
    assert bad["status"] == "failed" and "links[0].rate" in bad["error"], bad["error"]
    assert bad["error"].startswith(f"{VEGAS}:") and ".tmp-src" not in bad["error"], bad["error"]
    assert sorted(p.name for p in (tmp_path / "n").iterdir()) == ["r"]


def test_sweep_runs_a_handed_back_line_in_process(tmp_path, monkeypatch):
    """A task line the binary hands back (exit 64 under TCPLAB_NO_HANDBACK) runs in-process once."""
    from tcplab.sweep import run as sweep_run
    fake = tmp_path / "fake-native"
    fake.write_text("#!/bin/sh\necho handed back >&2\nexit 64\n")
    fake.chmod(0o755)
    import tcplab._front
    monkeypatch.setattr(tcplab._front, "native_binary", lambda: str(fake))
    task = {"hash": "h", "scenario_text": VEGAS.read_text(), "scenario_file": str(VEGAS), "seed": 5,
            "overrides": ["run.duration=1s"], "save": "all", "run_dir": str(tmp_path / "r")}
    a = sweep_run.execute(task)
    assert a["status"] == "ok", a["error"]
    import pyarrow.parquet as pq
    assert not pq.ParquetFile(tmp_path / "r" / "trace_tcp.parquet").metadata.created_by.startswith("tcplab ")
    fake.write_text("#!/bin/sh\necho 'error: broken' >&2\nexit 2\n")
    b = sweep_run.execute({**task, "run_dir": str(tmp_path / "s")})
    assert b["status"] == "failed" and b["error"] == "broken"
