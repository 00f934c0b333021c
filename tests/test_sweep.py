"""Sweeps, the results store, `tcplab table`, the analysis helpers and reproduce.toml's
seeds/axes/derived/claims (issue 9)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tcplab.analysis import describe, dominant_periods, jain_index, paired_ratios, student_t_quantile
from tcplab.bench import stored_rows
from tcplab.store import Store
from tcplab.sweep import run_sweep
from tcplab.sweep.spec import load_sweep

from scenario_fixtures import fixture_text

ROOT = Path(__file__).resolve().parent.parent
BRAKMO = ROOT / "scenarios" / "brakmo" / "single-transfer" / "scenario-p2p.toml"
TCPLAB = [sys.executable, "-m", "tcplab.cli"]


def write_sweep(tmp: Path, seeds: str = "[1, 2, 3]", extra: str = "", axes: str | None = None, name: str = "s.toml") -> Path:
    p = tmp / name
    axes = axes if axes is not None else '"tcp[0].variant" = ["reno", "vegas"]'
    p.write_text(f'title = "t"\nscenario = "{BRAKMO}"\nseeds = {seeds}\nbuckets = "1s"\n{extra}\n[axes]\n{axes}\n')
    return p


def write_interruptible_sweep(tmp: Path) -> tuple[Path, Path]:
    """200 quick runs (Reno and Vegas × 100 seeds) followed by 100 long ones, and the same sweep
    without the long tail. The tests that interrupt a sweep wait for some quick runs to finish; the
    tail (~1 s a run) keeps the runner busy until the signal comes however slowly the test's own
    process is scheduled (with 200 quick runs alone, a loaded machine once let the sweep finish
    before the test saw it start). The rerun completes the quick set, whose runs have the same
    hashes in both files (same resolved scenario and seed)."""
    zipped = '"tcp[0].variant" = [{v}]\n"tcp[0].bytes" = [{b}]\n"run.duration" = [{d}]\n'
    # one file name (the sweep's name, stored with each run) in two folders
    (tmp / "with_tail").mkdir()
    (tmp / "quick").mkdir()
    with_tail = write_sweep(tmp / "with_tail", seeds="{ from = 1, count = 100 }", extra='mode = "zip"',
                            axes=zipped.format(v='"reno", "vegas", "reno"', b='"1MB", "1MB", "100MB"',
                                               d='"60s", "60s", "1200s"'))
    quick = write_sweep(tmp / "quick", seeds="{ from = 1, count = 100 }", extra='mode = "zip"',
                        axes=zipped.format(v='"reno", "vegas"', b='"1MB", "1MB"', d='"60s", "60s"'))
    return with_tail, quick


# Analysis helpers ---------------------------------------------------------------------------------

def test_jain_index_known_inputs():
    assert jain_index([5.0] * 16) == pytest.approx(1.0)
    for n in (2, 4, 16):
        for k in range(1, n + 1):
            assert jain_index([3.0] * k + [0.0] * (n - k)) == pytest.approx(k / n)
    assert jain_index([1.0, 3.0]) == pytest.approx(16 / 20)
    assert math.isnan(jain_index([]))
    with pytest.raises(ValueError):
        jain_index([1.0, -1.0])


def test_periodogram_finds_a_planted_200ms_period():
    rng = np.random.default_rng(7)
    dt = 0.01                       # 10 ms samples, 60 s
    t = np.arange(0, 60, dt)
    queue = rng.poisson(3.0, t.size).astype(float)
    queue[(np.round(t / dt).astype(int) % 20) == 0] += 12    # a burst every 200 ms
    peaks = dominant_periods(queue, dt, top=3)
    assert peaks, "no line found"
    assert peaks[0]["period_s"] == pytest.approx(0.2, rel=0.01)
    noise = rng.normal(0, 1, t.size)
    assert all(p["period_s"] != pytest.approx(0.2, rel=0.05) for p in dominant_periods(noise, dt, min_ratio=50))


def test_student_t_and_describe():
    assert student_t_quantile(0.95, 1) == pytest.approx(6.313752, rel=1e-5)
    assert student_t_quantile(0.95, 2) == pytest.approx(2.919986, rel=1e-5)
    assert student_t_quantile(0.95, 9) == pytest.approx(1.833113, rel=1e-5)
    assert student_t_quantile(0.95, 1e6) == pytest.approx(1.644854, rel=1e-4)
    d = describe([1.0, 2.0, 3.0, None])
    assert d["n"] == 3 and d["mean"] == 2.0 and d["std"] == 1.0
    assert d["ci"] == pytest.approx(2.919986 / math.sqrt(3), rel=1e-5)
    r = paired_ratios({1: 2.0, 2: 4.0, 3: 1.0}, {1: 1.0, 2: 2.0})
    assert r["ratios"] == {1: 2.0, 2: 2.0} and r["unpaired"] == [3] and r["mean"] == 2.0


# The runner and the store -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_sweeps(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    sw = write_sweep(tmp)
    outs = {}
    for label, kw in (("jobs1", dict(jobs=1)), ("jobs2", dict(jobs=2))):
        outs[label] = tmp / label
        res = run_sweep(sw, outs[label], quiet=True, **kw)
        assert res == {**res, "total": 6, "ran": 6, "failed": 0}
    return sw, outs


def test_jobs_1_and_2_store_identical_results(small_sweeps):
    _, outs = small_sweeps
    a, b = stored_rows(outs["jobs1"]), stored_rows(outs["jobs2"])
    assert len(a["summaries"]) == 6 and a["tables"]["flows"]
    assert a == b


def test_ray_backend_stores_identical_results(small_sweeps, tmp_path):
    ray = pytest.importorskip("ray")
    sw, outs = small_sweeps
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        res = run_sweep(sw, tmp_path / "ray", backend="ray", jobs=2, quiet=True)
    finally:
        ray.shutdown()
    assert res["ran"] == 6 and res["failed"] == 0
    assert stored_rows(tmp_path / "ray") == stored_rows(outs["jobs1"])


def test_rerun_skips_stored_runs_and_store_content(small_sweeps):
    sw, outs = small_sweeps
    res = run_sweep(sw, outs["jobs1"], jobs=1, quiet=True)
    assert res["skipped"] == 6 and res["ran"] == 0
    with Store(outs["jobs1"] / "results.duckdb", read_only=True) as st:
        runs = st.frame("runs")
        assert runs.height == 6 and runs["hash"].n_unique() == 6
        assert sorted(runs["tcp[0].variant"].to_list()) == ["reno"] * 3 + ["vegas"] * 3
        assert set(runs["status"]) == {"ok"} and runs["code_version"].null_count() == 0
        for r in runs.iter_rows(named=True):
            saved = json.loads((Path(r["run_dir"]) / "summary.json").read_text())
            assert saved == json.loads(r["summary"])            # the files beside the DB match its rows
            assert (Path(r["run_dir"]) / "trace_tcp.parquet").is_file()
        links = st.frame("links")
        assert links.height == 6 * 6 and "drops_by_reason.queue_overflow" in links.columns
        buckets = st.frame("link_buckets")
        # a packet counts in the bucket where its transmission starts: at most one packet (1474 B at 200 KB/s = 0.7 % of 1 s) over
        assert buckets.height > 0 and buckets["utilization"].max() <= 1.0 + 1474 / 204800


def test_table_numbers_equal_a_direct_computation(small_sweeps):
    from tcplab.table import averages, individual, render, utilization
    _, outs = small_sweeps
    with Store(outs["jobs1"] / "results.duckdb", read_only=True) as st:
        direct = {v: (n, m, s, lo, hi) for v, n, m, s, lo, hi in st.con.execute(
            'SELECT r."tcp[0].variant", count(*), avg(f.throughput_KBps), stddev_samp(f.throughput_KBps), '
            'min(f.throughput_KBps), max(f.throughput_KBps) FROM runs r JOIN flows f USING (hash) GROUP BY 1').fetchall()}
        util = dict(st.con.execute('SELECT r."tcp[0].variant", avg(b.utilization) FROM runs r JOIN link_buckets b USING (hash) '
                                   'WHERE b.bucket = 0 GROUP BY 1').fetchall())
        resent = dict(st.con.execute('SELECT r."tcp[0].variant", avg(f.retransmitted_bytes / 1024.0) FROM runs r JOIN flows f '
                                     'USING (hash) GROUP BY 1').fetchall())
    av = averages(outs["jobs1"], by=["variant"], metrics=["throughput_KBps", "KB_resent"])
    for r in av.iter_rows(named=True):
        n, m, s, lo, hi = direct[r["tcp[0].variant"]]
        if r["metric"] == "throughput_KBps":
            assert (r["n"], r["min"], r["max"]) == (n, lo, hi)
            assert r["mean"] == pytest.approx(m, rel=1e-12) and r["std"] == pytest.approx(s, rel=1e-9, abs=1e-12)
            assert r["ci90"] == pytest.approx(2.919986 * s / math.sqrt(3), rel=1e-5, abs=1e-12)
        else:
            assert r["mean"] == pytest.approx(resent[r["tcp[0].variant"]], rel=1e-12)
    u = utilization(outs["jobs1"], by=["variant"])
    for r in u.filter(u["bucket"] == 0).iter_rows(named=True):
        assert r["utilization"] == pytest.approx(util[r["tcp[0].variant"]], rel=1e-12)
    ind = individual(outs["jobs1"], by=["variant"], metrics=["throughput_KBps"])
    assert ind.height == 6
    text = render(outs["jobs1"], by=["variant"])
    assert "Fig 2.4" in text and "Fig 2.5" in text and "Fig 2.6" in text and "| reno" in text
    csv = render(outs["jobs1"], by=["variant"], fmt="csv", views=["averages"])
    assert csv.startswith("# averages\n") and "throughput_KBps" in csv


def test_table_cli_and_plot(small_sweeps, tmp_path):
    _, outs = small_sweeps
    p = subprocess.run(TCPLAB + ["table", str(outs["jobs2"]), "--by", "variant", "--metrics", "throughput_KBps"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "throughput_KBps" in p.stdout and "vegas" in p.stdout
    png = tmp_path / "p.png"
    p = subprocess.run(TCPLAB + ["table", str(outs["jobs2"]), "--plot", "variant", "--out", str(png)],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode != 0 and "no number" in p.stderr      # a categorical axis cannot be an x axis
    p = subprocess.run(TCPLAB + ["table", str(outs["jobs2"]), "--by", "nosuch"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "--by nosuch" in p.stderr and "Traceback" not in p.stderr


def test_sigkill_mid_sweep_then_resume(tmp_path):
    """kill -9 the runner (and its workers) mid-sweep; the rerun completes the set, stores no
    duplicate or broken row, and does not run again what the killed session had committed."""
    with_tail, sw = write_interruptible_sweep(tmp_path)
    quick = {t.hash for t in load_sweep(sw).tasks}
    out = tmp_path / "out"
    proc = subprocess.Popen(TCPLAB + ["sweep", str(with_tail), "--out", str(out), "--jobs", "2"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    log = out / "executed.log"
    progress = out / "progress.json"     # the parent's account of what it has committed
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if progress.exists() and json.loads(progress.read_text())["committed"] >= 20:
            break
        if proc.poll() is not None:
            pytest.fail("the sweep finished before it could be killed")
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first_log = log.read_text().splitlines()
    assert len(first_log) < 200, "killed too late to test anything"
    with Store(out / "results.duckdb") as st:
        committed = st.stored_hashes()
        first_session = {s for (s,) in st.con.execute("SELECT DISTINCT session FROM runs").fetchall()}
    assert committed <= quick, "a long run of the tail finished before the kill"
    assert 0 < len(committed) < 200 and len(first_session) == 1

    p = subprocess.run(TCPLAB + ["sweep", str(sw), "--out", str(out), "--jobs", "2"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"{len(committed)} already stored" in p.stdout
    with Store(out / "results.duckdb", read_only=True) as st:
        runs = st.frame("runs")
        second = set(runs["session"]) - first_session
        assert runs.height == 200 and runs["hash"].n_unique() == 200
        assert set(runs["status"]) == {"ok"}
        flows = st.frame("flows")
        assert flows.height == 200 and flows["hash"].n_unique() == 200
        for r in runs.iter_rows(named=True):
            s = json.loads(r["summary"])            # every stored summary is whole
            assert s["flows"][0]["bytes_acked"] == 1024 * 1024
            assert json.loads((Path(r["run_dir"]) / "summary.json").read_text()) == s
    rerun = [l.split() for l in log.read_text().splitlines()[len(first_log):]]
    assert {l[1] for l in rerun} == second
    rerun_hashes = [l[0] for l in rerun]
    assert not set(rerun_hashes) & committed, "a committed run was executed again"
    assert len(rerun_hashes) == 200 - len(committed)
    assert not list((out / "runs").glob(".tmp-*"))
    # the same numbers as an uninterrupted sweep
    clean = tmp_path / "clean"
    run_sweep(sw, clean, jobs=2, quiet=True)
    assert stored_rows(clean) == stored_rows(out)


BAD = [
    ('[axes]\n"tcp[0].varient" = ["reno"]\n', 'axes."tcp[0].varient"', "unknown field"),
    ('[axes]\n"tcp[0].variant" = []\n', 'axes."tcp[0].variant"', "empty axis"),
    ('[axes]\n"links[1].queue.limit" = ["10pkts", "ten"]\n', 'axes."links[1].queue.limit"', "queue limit"),
    ('seeds = []\n', "seeds", "empty seed list"),
    ('seeds = { from = 1 }\n', "seeds", "count"),
    ('seeds = ["a"]\n', "seeds", "integers"),
    ('seeds = [1, 1]\n', "seeds", "twice"),
    ('mode = "zip"\n[axes]\n"tcp[0].variant" = ["reno", "vegas"]\n"links[1].queue.limit" = ["10pkts"]\n', "mode", "equal length"),
    ('colour = 1\n', "colour", "unknown key"),
]


@pytest.mark.parametrize("body,field,msg", BAD, ids=[b[1] + "-" + b[2] for b in BAD])
def test_bad_sweep_files_fail_before_any_run(tmp_path, body, field, msg):
    text = f'scenario = "{BRAKMO}"\n' + body
    sw = tmp_path / "bad.toml"
    sw.write_text(text)
    out = tmp_path / "out"
    p = subprocess.run(TCPLAB + ["sweep", str(sw), "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert f"{sw}:" in p.stderr and field in p.stderr and msg in p.stderr, p.stderr
    key = field.split(".", 1)[-1].strip('"') if "." in field else field
    line = next(i for i, l in enumerate(text.splitlines(), 1) if key in l)
    assert f"{sw}:{line}: " in p.stderr, p.stderr
    assert not (out / "executed.log").exists() and not (out / "results.duckdb").exists()


def test_failed_run_is_recorded_and_sweep_goes_on(tmp_path):
    """A run that fails inside the core is stored with its error; the others complete."""
    from tcplab.sweep import Task, code_version, execute_tasks
    good = write_sweep(tmp_path, seeds="[1]")
    from tcplab.sweep import load_sweep
    tasks = load_sweep(good).tasks
    bad = Task(hash="f" * 24, seed=1, params={"tcp[0].variant": "broken"}, overrides=["tcp[0].variant=\"nosuch\""],
               scenario_text=tasks[0].scenario_text, scenario_file=tasks[0].scenario_file, version=code_version())
    res = execute_tasks([bad] + tasks, tmp_path / "out", jobs=1, quiet=True)
    assert res["ran"] == 3 and res["failed"] == 1
    with Store(tmp_path / "out" / "results.duckdb", read_only=True) as st:
        rows = dict(st.con.execute("SELECT hash, status FROM runs").fetchall())
        err = st.con.execute("SELECT error FROM runs WHERE hash = ?", ["f" * 24]).fetchone()[0]
    assert rows["f" * 24] == "failed" and list(rows.values()).count("ok") == 2
    assert "nosuch" in err


# reproduce.toml: seeds, axes, derived metrics, claims -------------------------------------------------

# The shared a-r-b path (tests/fixtures/path.toml: 1 Mb/s bottleneck, 8 packets), two Reno flows.
TINY = fixture_text(
    "path.toml",
    {"name": "tiny", "run.seed": 1, "run.trace": {"tcp": True}, "links[1].name": "bottleneck"},
    """
[[tcp]]
name = "t1"
from = "a"
to = "b"
variant = "reno"
bytes = "200KB"
[[tcp]]
name = "t2"
from = "a"
to = "b"
variant = "reno"
bytes = "200KB"
start = "300ms"
""",
)

REPRO = """
title = "tiny"
flow = "t1"
seeds = [1, 2]
metrics = ["throughput_KBps", "jain", "links.r->b.drops", "sim_end_s"]
axes = { "links[1].queue.limit" = ["6pkts", "12pkts"] }
[derived]
jain = "jain('flows.*.throughput_KBps')"
[[variants]]
name = "reno"
label = "Reno"
set = { "tcp[0].variant" = "reno", "tcp[1].variant" = "reno" }
paper = { jain = 0.9 }
source = "made up"
[[variants]]
name = "vegas"
set = { "tcp[0].variant" = "vegas", "tcp[1].variant" = "vegas" }
[[claims]]
text = "Vegas drops fewer packets"
expr = "mean('vegas', 'links.r->b.drops') < mean('reno', 'links.r->b.drops')"
[[claims]]
text = "an impossible claim"
expr = "ratio('vegas', 'reno', 'throughput_KBps') > 100"
[[claims]]
text = "paired"
expr = "all_runs('vegas', 'reno', 'jain', '>=') or not all_runs('vegas', 'reno', 'jain', '>=')"
"""


def make_experiment(tmp: Path, repro: str = REPRO) -> Path:
    d = tmp / "exp"
    d.mkdir(exist_ok=True)
    (d / "scenario.toml").write_text(TINY)
    (d / "reproduce.toml").write_text(repro)
    return d


def test_reproduce_with_seeds_axes_derived_and_claims(tmp_path):
    exp = make_experiment(tmp_path)
    out = tmp_path / "out"
    p = subprocess.run(TCPLAB + ["reproduce", str(exp), "--out", str(out), "--jobs", "2"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "held    Vegas drops fewer packets" in p.stdout and "MISSED  an impossible claim" in p.stdout
    comp = json.loads((out / "comparison.json").read_text())
    with Store(out / "results.duckdb", read_only=True) as st:
        summaries = {(g, pt, s): json.loads(j) for g, pt, s, j in
                     st.con.execute("SELECT grp, point, seed, summary FROM runs").fetchall()}
    assert len(summaries) == 8
    for r in comp["rows"]:
        runs = [s for (g, _, _), s in summaries.items() if g == r["variant"]]
        if r["metric"] == "jain":
            vals = [jain_index(f["throughput_KBps"] for f in s["flows"]) for s in runs]
        elif r["metric"] == "links.r->b.drops":
            vals = [next(l for l in s["links"] if l["name"] == "r->b")["drops"] for s in runs]
        elif r["metric"] == "sim_end_s":
            vals = [s["sim_end_s"] for s in runs]
        else:
            vals = [s["flows"][0][r["metric"]] for s in runs]
        assert r["n"] == 4 and r["seeds"] == 2
        assert r["ours"] == pytest.approx(sum(vals) / 4) and r["mean"] == r["ours"]
        assert (r["min"], r["max"]) == (min(vals), max(vals))
        assert r["std"] == pytest.approx(describe(vals)["std"], abs=1e-12)
    assert next(r for r in comp["rows"] if r["variant"] == "reno" and r["metric"] == "jain")["paper"] == 0.9
    claims = {c["text"]: c for c in comp["claims"]}
    assert claims["Vegas drops fewer packets"]["held"] is True
    assert claims["an impossible claim"]["held"] is False
    assert "ratio('vegas', 'reno', 'throughput_KBps')" in claims["an impossible claim"]["values"]
    assert claims["paired"]["held"] is True and "runs" in claims["paired"]["values"]["all_runs('vegas', 'reno', 'jain', '>=')"]
    # the first run of each variant (first axis point, first seed) is saved for the report
    first = json.loads((out / "reno" / "summary.json").read_text())
    assert first["seed"] == 1 and (out / "reno" / "trace_tcp.parquet").is_file()
    html = (out / "report.html").read_text()
    assert "Claims" in html and "an impossible claim" in html and "±" in html
    # rerun: everything is already stored
    p = subprocess.run(TCPLAB + ["reproduce", str(exp), "--out", str(out), "--no-report"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0 and "0 run(s) executed, 8 already stored" in p.stdout


@pytest.mark.parametrize("claim,msg", [
    ("mean('vegas', 'throughput_KBps') >", "syntax error"),
    ("__import__('os').system('true')", "not allowed"),
    ("mean('vegas', 'throughput_KBps').real > 1", "not allowed"),
    ("mean(vegas, 'throughput_KBps') > 1", "unknown name 'vegas'"),
    ("avg('vegas', 'throughput_KBps') > 1", "unknown function 'avg'"),
    ("mean('cubic', 'throughput_KBps') > 1", "unknown variant 'cubic'"),
    ("mean('vegas') > 1", "takes 2 arguments"),
    ("mean('vegas', 'no_such_metric') > 1", "unknown metric 'no_such_metric'"),
    ("mean('vegas', 'links.nowhere.drops') > 1", "no links element named 'nowhere'"),
])
def test_claim_errors_name_the_file_and_claim(tmp_path, claim, msg):
    repro = REPRO.split("[[claims]]")[0] + f'[[claims]]\ntext = "bad one"\nexpr = "{claim}"\n'
    exp = make_experiment(tmp_path, repro)
    p = subprocess.run(TCPLAB + ["reproduce", str(exp), "--out", str(tmp_path / "o"), "--no-report", "--seeds", "1"],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert str(exp / "reproduce.toml") in p.stderr and "claims[0] ('bad one')" in p.stderr and msg in p.stderr, p.stderr
    line = next(i for i, l in enumerate(repro.splitlines(), 1) if l.startswith("expr ="))
    assert f"reproduce.toml:{line}:" in p.stderr


def test_unknown_reported_metric_is_an_error(tmp_path):
    repro = REPRO.replace('"sim_end_s"]', '"sim_end_s", "flows.t9.throughput_KBps"]')
    exp = make_experiment(tmp_path, repro)
    p = subprocess.run(TCPLAB + ["reproduce", str(exp), "--out", str(tmp_path / "o"), "--no-report", "--seeds", "1"],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2 and "no flows element named 't9'" in p.stderr and "reproduce.toml" in p.stderr, p.stderr


def test_paired_ratios_from_the_store(small_sweeps):
    from tcplab.table import individual, paired_ratios
    _, outs = small_sweeps
    df, summ = paired_ratios(outs["jobs1"], "vegas", "reno")
    ind = individual(outs["jobs1"], by=["variant"], metrics=["throughput_KBps"])
    tp = {(r["tcp[0].variant"], r["seed"]): r["throughput_KBps"] for r in ind.iter_rows(named=True)}
    assert df["seed"].to_list() == [1, 2, 3]
    for r in df.iter_rows(named=True):
        assert r["ratio"] == tp[("vegas", r["seed"])] / tp[("reno", r["seed"])]
    assert summ["n"] == 3 and summ["mean"] == pytest.approx(sum(df["ratio"]) / 3)
    p = subprocess.run(TCPLAB + ["table", str(outs["jobs1"]), "--ratio", "vegas/reno"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0 and "on 3 paired runs" in p.stdout, p.stderr


def test_ctrl_c_stops_cleanly_and_keeps_finished_runs(tmp_path):
    """SIGINT to the runner's process group (Ctrl-C in a terminal): exit status 130, no traceback,
    the runs that reached the parent are committed, and a rerun completes the set."""
    with_tail, sw = write_interruptible_sweep(tmp_path)
    quick = {t.hash for t in load_sweep(sw).tasks}
    out = tmp_path / "out"
    # PYTHONFAULTHANDLER: should the runner not end, SIGABRT makes it print every thread's stack
    proc = subprocess.Popen(TCPLAB + ["sweep", str(with_tail), "--out", str(out), "--jobs", "2"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, PYTHONFAULTHANDLER="1"))
    log = out / "executed.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and len(log.read_text().splitlines()) >= 40:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        # the runner, or a process of its group still holding the stderr pipe
        ps = subprocess.run(["ps", "-o", "pid,ppid,stat,etime,args", "-g", str(proc.pid)], capture_output=True, text=True).stdout
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGABRT)
            proc.wait(timeout=30)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"the sweep did not end within 60 s of SIGINT; its processes:\n{ps}\nits stderr (stacks):\n{err[-6000:]}")
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    executed = {l.split()[0] for l in log.read_text().splitlines()}
    with Store(out / "results.duckdb", read_only=True) as st:
        committed = st.stored_hashes()
    # only runs still on their way to the parent at the signal may be lost (a few per worker)
    assert committed <= executed and len(committed) >= 30
    assert committed <= quick, "a long run of the tail finished before the signal"
    p = subprocess.run(TCPLAB + ["sweep", str(sw), "--out", str(out), "--jobs", "2"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0 and f"{len(committed)} already stored" in p.stdout, p.stderr
    with Store(out / "results.duckdb", read_only=True) as st:
        assert st.frame("runs")["hash"].n_unique() == 200 == st.frame("runs").height


@pytest.mark.parametrize("extra,field,msg", [
    ('axes = { "run.duration" = ["1s"] }\n[points]\na = { "run.duration" = "2s" }\n', "points", "either [points] or axes"),
    ('[points]\n"a-b" = { "run.duration" = "2s" }\n', "points.a-b", "letters, digits and '_'"),
])
def test_named_points_errors(tmp_path, extra, field, msg):
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "scenario.toml").write_text((ROOT / "scenarios" / "brakmo" / "single-transfer" / "scenario-p2p.toml").read_text())
    (exp / "reproduce.toml").write_text('scenario = "scenario.toml"\n' + extra + '\n[[variants]]\nname = "reno"\n')
    p = subprocess.run(TCPLAB + ["reproduce", str(exp), "--out", str(tmp_path / "o"), "--no-report"],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode != 0 and field in p.stderr and msg in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_point_set_adds_a_variants_own_overrides_per_point(tmp_path):
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "scenario.toml").write_text((ROOT / "scenarios" / "brakmo" / "single-transfer" / "scenario-p2p.toml").read_text())
    (exp / "reproduce.toml").write_text('''scenario = "scenario.toml"
metrics = ["throughput_KBps"]
[points]
small = { "links[1].queue.limit" = "5pkts" }
large = { "links[1].queue.limit" = "20pkts" }
[[variants]]
name = "reno"
set = { "tcp[0].variant" = "reno" }
[[variants]]
name = "reno-short"
set = { "tcp[0].variant" = "reno" }
point_set = { large = { "tcp[0].bytes" = "100KB" } }
''')
    p = subprocess.run(TCPLAB + ["reproduce", str(exp), "--out", str(tmp_path / "o"), "--no-report"],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = {(r["variant"], r["metric"]): r["ours"] for r in json.loads((tmp_path / "o" / "comparison.json").read_text())["rows"]}
    assert rows[("reno", "throughput_KBps_small")] == rows[("reno-short", "throughput_KBps_small")]
    assert rows[("reno", "throughput_KBps_large")] != rows[("reno-short", "throughput_KBps_large")]
