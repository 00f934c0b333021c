"""`tcplab reproduce NAME --no-report` runs its runs in the native binary (issue 28;
crates/tcplab-cli/src/reproduce.rs), then hands the command line to the Python CLI, which takes
those runs instead of running them and writes the comparison. These tests hold that path to the
Python one: the same printed table, comparison.json, saved variant runs and results store; the
runs really done natively (one results.jsonl line per distinct run, the arguments handed over
unchanged); the same errors and exit status for bad input.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tcplab import _front

ROOT = Path(__file__).resolve().parents[1]
NATIVE = _front.native_binary()
SCENARIO = ROOT / "scenarios" / "brakmo" / "single-transfer" / "scenario.toml"

# Two variants over two axis points and two seeds (8 runs, 2 of them saved with their files),
# with a derived metric and a claim: what the Python step computes from the native runs.
SPEC = """\
title = "native reproduce test"
scenario = "scenario.toml"
flow = "transfer"
seeds = [1, 2]
metrics = ["throughput_KBps", "coarse_timeouts", "drops"]
axes = { "links[0].queue.limit" = ["8pkts", "12pkts"] }

[derived]
drops = "sum('links.*.drops')"

[[variants]]
name = "reno"
set = { "tcp[0].variant" = "reno", "tcp[0].bytes" = "200KB" }
paper = { throughput_KBps = 123.0 }
source = "test"

[[variants]]
name = "vegas"
set = { "tcp[0].variant" = "vegas", "tcp[0].bytes" = "200KB" }
paper = { throughput_KBps = 169.0 }

[[claims]]
text = "Vegas at least as fast as Reno"
expr = "mean('vegas', 'throughput_KBps') >= mean('reno', 'throughput_KBps')"
"""


def experiment(tmp_path: Path) -> Path:
    d = tmp_path / "exp"
    d.mkdir()
    (d / "scenario.toml").write_text(SCENARIO.read_text())
    (d / "reproduce.toml").write_text(SPEC)
    return d


def native(*args, env=None, **kw) -> subprocess.CompletedProcess:
    assert NATIVE, "python/tcplab/_bin/tcplab-native is missing: `make setup` builds it"
    env = dict(os.environ, TCPLAB_PYTHON=sys.executable) | (env or {})
    return subprocess.run([NATIVE, *map(str, args)], capture_output=True, text=True, timeout=120, env=env, **kw)


def python_cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tcplab.cli", *map(str, args)], capture_output=True, text=True, timeout=120, **kw)


def stdout_alike(text: str, out: Path) -> str:
    return re.sub(r"already stored, in [0-9.]+ s", "already stored, in T s", text.replace(str(out), "OUT"))


def without_wall(path: Path) -> str:
    return re.sub(r'"wall_s": [^,]+,', "", path.read_text())


def test_native_runs_then_the_same_comparison(tmp_path):
    exp = experiment(tmp_path)
    env = dict(os.environ, TCPLAB_PYTHON=sys.executable)
    proc = subprocess.Popen([NATIVE, "reproduce", exp, "--no-report", "--out", tmp_path / "native", "--jobs", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = proc.communicate(timeout=120)
    a = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    b = python_cli("reproduce", exp, "--no-report", "--out", tmp_path / "python", "--jobs", "1")
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    na, py = tmp_path / "native", tmp_path / "python"
    assert stdout_alike(a.stdout, na) == stdout_alike(b.stdout, py)
    assert "8 run(s) executed, 0 already stored" in a.stdout
    # comparison.json: the same bytes (the folder is the experiment's, not OUT)
    assert (na / "comparison.json").read_bytes() == (py / "comparison.json").read_bytes()
    # the saved first run of each variant, and every run under its hash
    for v in ("reno", "vegas"):
        assert without_wall(na / v / "summary.json") == without_wall(py / v / "summary.json")
        assert (na / v / "scenario.toml").read_bytes() == (py / v / "scenario.toml").read_bytes()
        assert sorted(p.name for p in (na / v).iterdir()) == sorted(p.name for p in (py / v).iterdir())
    assert sorted(p.name for p in (na / "runs").iterdir()) == sorted(p.name for p in (py / "runs").iterdir())
    # the store: the same runs, each with the same summary but for the wall time
    import duckdb
    rows = {}
    for d in (na, py):
        con = duckdb.connect(str(d / "results.duckdb"), read_only=True)
        rows[d] = {h: (st, g, pt, sd, None if s is None else re.sub(r'"wall_s": [^,]+,', "", s), rd is None)
                   for h, st, g, pt, sd, s, rd in con.execute("SELECT hash, status, grp, point, seed, summary, run_dir FROM runs").fetchall()}
        con.close()
    assert rows[na] == rows[py] and len(rows[na]) == 8
    # executed.log: every run, once, all taken by the process the binary became (pid kept by
    # the exec), none run by a worker of the Python step; no staging folder left beside OUT
    log = [l.split() for l in (na / "executed.log").read_text().splitlines()]
    assert len(log) == 8 and {l[2] for l in log} == {str(proc.pid)}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tcplab-prerun-")]


def test_the_runs_are_native_and_the_arguments_handed_over(tmp_path):
    """An interpreter stand-in sees the staging folder the binary filled: one line per distinct
    run (resolved scenario and seed), saved folders for the two first runs, and the command line
    as it was typed."""
    exp = experiment(tmp_path)
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho "args: $*"\ncp "$TCPLAB_REPRODUCE_PRERUN/results.jsonl" "$(dirname "$0")/results.jsonl"\n'
                    'ls "$TCPLAB_REPRODUCE_PRERUN"\n')
    fake.chmod(0o755)
    p = native("reproduce", exp, "--no-report", "--out", tmp_path / "o", "--seeds", "3", env={"TCPLAB_PYTHON": str(fake)})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == f"args: -m tcplab reproduce {exp} --no-report --out {tmp_path / 'o'} --seeds 3"
    results = [json.loads(l) for l in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(results) == 2 * 2 * 3   # variants × axis points × seeds 1..3
    assert sorted(r["seed"] for r in results) == [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]
    saved = [r for r in results if r["dir"]]
    assert len(saved) == 2 and sorted(lines[1:]) == sorted([r["dir"] for r in saved] + ["results.jsonl"])
    assert all(json.loads(r["summary_json"])["flows"][0]["name"] == "transfer" for r in results)


def fake_python(tmp_path: Path) -> Path:
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho "args: $*"\necho "prerun: $TCPLAB_REPRODUCE_PRERUN"\n')
    fake.chmod(0o755)
    return fake


@pytest.mark.parametrize("args", [[], ["--jobs", "1"], ["--backend", "ray", "--no-report"], ["--list"], ["--jobs", "2", "--no-rep"]])
def test_what_goes_to_python_as_a_whole(args, tmp_path):
    """A rerun into an OUT with a results store (the store knows which runs it holds), a report,
    Ray, --list and an abbreviated flag: the command line goes to Python with no run done here."""
    exp = experiment(tmp_path)
    out = tmp_path / "o"
    if not args:
        out.mkdir()
        (out / "results.duckdb").write_bytes(b"")
        args = ["--no-report"]
    p = native("reproduce", exp, *args, "--out", out, env={"TCPLAB_PYTHON": str(fake_python(tmp_path))})
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"args: -m tcplab reproduce {exp} {' '.join(args)} --out {out}\nprerun: \n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tcplab-prerun-")]


def test_an_error_the_python_step_finds_after_the_runs(tmp_path):
    """A claim naming no variant: the binary does not read claims, runs the runs, and the
    Python step reports the file's error as the Python path does; no OUT, no staging left."""
    exp = experiment(tmp_path)
    (exp / "reproduce.toml").write_text(SPEC.replace("mean('vegas', 'throughput_KBps') >=", "mean('cubic', 'throughput_KBps') >="))
    a = native("reproduce", exp, "--no-report", "--out", tmp_path / "a")
    b = python_cli("reproduce", exp, "--no-report", "--out", tmp_path / "a")
    assert a.returncode == b.returncode == 2
    assert (a.stdout, a.stderr) == (b.stdout, b.stderr) and "unknown variant 'cubic'" in a.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["exp"]


def test_no_python_to_hand_over_to(tmp_path):
    """The runs done, an interpreter that cannot start: the error names it, exit 2, and the
    staging folder does not stay behind."""
    exp = experiment(tmp_path)
    p = native("reproduce", exp, "--no-report", "--out", tmp_path / "o", env={"TCPLAB_PYTHON": str(tmp_path / "nope")})
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith(f"error: cannot start the Python CLI ({tmp_path / 'nope'}): "), p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["exp"]


@pytest.mark.parametrize("args", [["reproduce", "no/such-study", "--no-report"], ["reproduce", "brakmo/single-transfer", "--no-report", "--seeds", "0"],
                                  ["reproduce", "brakmo/single-transfer", "--no-report", "--jobs", "x"],
                                  ["reproduce", "brakmo/single-transfer", "--no-report", "--bogus"],
                                  ["reproduce", "--no-report"]])
def test_same_errors(args, tmp_path):
    a, b = native(*args, "--out", tmp_path / "a"), python_cli(*args, "--out", tmp_path / "a")
    assert a.returncode == b.returncode == 2, (a.stderr, b.stderr)
    assert (a.stdout, a.stderr) == (b.stdout, b.stderr) and a.stderr.strip()
    assert not (tmp_path / "a").exists()


def test_a_bad_override_is_the_python_paths_located_error(tmp_path):
    exp = experiment(tmp_path)
    (exp / "reproduce.toml").write_text(SPEC.replace('"tcp[0].bytes" = "200KB" }\npaper = { throughput_KBps = 169.0 }',
                                                     '"tcp[0].bytes" = "lots" }\npaper = { throughput_KBps = 169.0 }'))
    a = native("reproduce", exp, "--no-report", "--out", tmp_path / "a")
    b = python_cli("reproduce", exp, "--no-report", "--out", tmp_path / "a")
    assert a.returncode == b.returncode == 2
    assert a.stderr == b.stderr and f"{exp / 'reproduce.toml'}:" in a.stderr and "tcp[0].bytes" in a.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tcplab-prerun-")]


def bundled() -> list[str]:
    from tcplab.fidelity import experiments
    return [name for name, _ in experiments(ROOT / "scenarios")]


def python_tasks(name: str, tmp_path: Path, monkeypatch, **kw) -> list[tuple]:
    """The Python step's task list for `name`: (resolved scenario SHA-256, seed, saved) per task,
    taken where it looks for the native runs (nothing is run)."""
    import tcplab.reproduce as rp
    staging = tmp_path / ".tcplab-prerun-x"
    staging.mkdir()
    monkeypatch.setenv("TCPLAB_REPRODUCE_PRERUN", str(staging))
    got = []

    class Stop(Exception):
        pass

    def capture(_staging, tasks, resolved_sha):
        got.extend((resolved_sha[t.hash], t.seed, t.save == "all") for t in tasks)
        raise Stop

    monkeypatch.setattr(rp, "_prerun_results", capture)
    with pytest.raises(Stop):
        rp.reproduce(name, out=tmp_path / "out", report=False, **kw)
    return sorted(got)


@pytest.mark.parametrize("name", bundled())
def test_the_native_task_list_is_the_python_steps(name, tmp_path, monkeypatch):
    """For every bundled reproduction the binary runs exactly the runs the Python step would
    (same resolved scenarios, seeds and saved runs), so none is run twice or left to Python."""
    monkeypatch.setenv("TCPLAB_SCENARIOS", str(ROOT / "scenarios"))
    p = native("__reproduce-tasks", name, env={"TCPLAB_SCENARIOS": str(ROOT / "scenarios")})
    assert p.returncode == 0, p.stderr
    assert p.stdout != "unsupported\n", f"{name}: the native reader leaves it to Python"
    ours = sorted((r["scenario_sha256"], r["seed"], r["save"]) for r in map(json.loads, p.stdout.splitlines()))
    assert ours == python_tasks(name, tmp_path, monkeypatch)


def test_seed_and_seeds_alike(tmp_path, monkeypatch):
    monkeypatch.setenv("TCPLAB_SCENARIOS", str(ROOT / "scenarios"))
    name = "brakmo/send-buffer-background"
    p = native("__reproduce-tasks", name, "--seed", "7", "--seeds", "2", env={"TCPLAB_SCENARIOS": str(ROOT / "scenarios")})
    ours = sorted((r["scenario_sha256"], r["seed"], r["save"]) for r in map(json.loads, p.stdout.splitlines()))
    assert {s for _, s, _ in ours} == {7, 8}
    assert ours == python_tasks(name, tmp_path, monkeypatch, seed=7, seeds=2)


def test_the_store_is_the_same_through_lists_and_polars(tmp_path, monkeypatch):
    """Store._insert without polars loaded (the Python step of a native reproduce: column lists,
    unnested) writes the tables polars' frames write: the same columns, types and values."""
    import tcplab.store as st
    from tcplab.sweep import Task
    items = []
    for i, variant in enumerate(["reno", "vegas", "lite.0"]):
        p = native("run", SCENARIO, "--json", "--seed", i + 1, "--set", f"tcp[0].variant=\"{variant}\"", "--set", "tcp[0].bytes=\"100KB\"",
                   "--out", tmp_path / f"r{i}")
        assert p.returncode == 0, p.stderr
        task = Task(hash=f"h{i}", seed=i + 1, params={"x": i, "y": [i]}, overrides=[], scenario_text="", scenario_file="s.toml",
                    point=i, group=variant)
        items.append((task, {"status": "ok", "error": None, "summary_json": p.stdout.strip(), "wall_s": 0.5, "run_dir": None}))
    items.append((Task(hash="h9", seed=9, params={"x": 9, "y": [9]}, overrides=[], scenario_text="", scenario_file="s.toml"),
                  {"status": "failed", "error": "boom", "summary_json": None, "wall_s": 0.1, "run_dir": None}))
    tables = {}
    for how in ("polars", "lists"):
        if how == "lists":
            monkeypatch.delitem(sys.modules, "polars", raising=False)
        else:
            monkeypatch.setattr(st, "_LISTS_MAX", -1)
        s = st.Store(tmp_path / f"{how}.duckdb")
        s.commit(items[:2], sweep="t", session="s")
        s.commit(items[2:], sweep="t", session="s")   # a second batch: new columns, widened types
        assert ("polars" in sys.modules) == (how == "polars")
        got = {}
        for t in s.tables():
            cols = s.con.execute(f"SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '{t}' "
                                 "ORDER BY ordinal_position").fetchall()
            keep = ", ".join(f'"{c}"' for c, _ in cols if c != "finished_at")
            got[t] = (cols, sorted(map(repr, s.con.execute(f'SELECT {keep} FROM "{t}"').fetchall())))
        s.close()
        tables[how] = got
        monkeypatch.undo()
    assert tables["lists"] == tables["polars"]
    assert len(tables["lists"]["runs"][1]) == 4 and len(tables["lists"]["links"][1]) > 0


def store_rows(out: Path) -> dict:
    """OUT/results.duckdb's runs: {hash: (status, group, point, seed, summary but wall_s)}."""
    import duckdb
    con = duckdb.connect(str(out / "results.duckdb"), read_only=True)
    try:
        return {h: (st, g, pt, sd, None if s is None else re.sub(r'"wall_s": [^,]+,', "", s))
                for h, st, g, pt, sd, s in con.execute("SELECT hash, status, grp, point, seed, summary FROM runs").fetchall()}
    finally:
        con.close()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_an_interrupted_native_reproduce_stores_its_finished_runs_and_resumes(sig, tmp_path):
    """Ctrl-C during the native runs: no run is started after it, the finished runs go to the
    Python step, which stores them and ends as the Python path's interrupted reproduce
    ("interrupted", exit 130); a rerun runs the rest, and the store is then an uninterrupted
    run's. Every run is saved (an `analysis`), one job: a run's folder in the staging folder is
    a finished run. The binary is stopped (SIGSTOP) while the finished runs are counted, so
    nothing finishes between the count and the Ctrl-C but the one run in flight. SIGTERM is
    taken as Ctrl-C (the rerun checked once, after SIGINT)."""
    import signal
    import time
    exp = experiment(tmp_path)
    (exp / "reproduce.toml").write_text(SPEC.replace("seeds = [1, 2]", 'seeds = [1, 2]\nanalysis = "none.py"'))
    (exp / "none.py").write_text("def run_metrics(run_dir):\n    return {}\n")
    total = 2 * 2 * 2
    env = dict(os.environ, TCPLAB_PYTHON=sys.executable)
    a = tmp_path / "a"
    proc = subprocess.Popen([NATIVE, "reproduce", exp, "--no-report", "--out", a, "--jobs", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    finished = None
    deadline = time.monotonic() + 60
    while finished is None and time.monotonic() < deadline and proc.poll() is None:
        for d in tmp_path.glob(".tcplab-prerun-a-*"):
            if (d / "run-0").is_dir():
                proc.send_signal(signal.SIGSTOP)
                finished = [p.name for p in d.iterdir() if p.name.startswith("run-")]
                all_done = (d / "results.jsonl").exists()
                proc.send_signal(getattr(signal, sig))
                proc.send_signal(signal.SIGCONT)
                break
        time.sleep(0.002)
    out, err = proc.communicate(timeout=120)
    assert finished, f"no finished run seen in the staging folder: {err}"
    assert proc.returncode == 130 and err.endswith("\ninterrupted\n"), err
    assert "run(s) executed" not in out   # stopped before the comparison, as the Python path is
    stored = store_rows(a)
    assert all(r[0] == "ok" for r in stored.values())
    if not all_done:   # the Ctrl-C came during the runs (always, but for a very slow test process)
        assert len(finished) <= len(stored) <= len(finished) + 1 < total, (finished, len(stored))
    assert len(list((a / "runs").iterdir())) == len(stored)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tcplab-prerun-")]
    if sig != "SIGINT":
        return

    again = native("reproduce", exp, "--no-report", "--out", a, "--jobs", "1")
    assert again.returncode == 0, again.stderr
    assert f"{total - len(stored)} run(s) executed, {len(stored)} already stored" in again.stdout
    b = tmp_path / "b"
    whole = native("reproduce", exp, "--no-report", "--out", b, "--jobs", "2")
    assert whole.returncode == 0, whole.stderr
    assert store_rows(a) == store_rows(b) and len(store_rows(b)) == total
    assert (a / "comparison.json").read_bytes() == (b / "comparison.json").read_bytes()
