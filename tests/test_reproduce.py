"""`tcplab reproduce`: comparison.json's contract, and the seeds' qualitative claims on our runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TCPLAB = [sys.executable, "-m", "tcplab.cli"]


def reproduce(tmp_path: Path, experiment: str, *extra: str) -> dict:
    out = tmp_path / experiment.replace("/", "_")
    p = subprocess.run(TCPLAB + ["reproduce", experiment, "--out", str(out), *extra], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "paper" in p.stdout and "ours" in p.stdout
    comp = json.loads((out / "comparison.json").read_text())
    comp["_out"] = out
    return comp


def metric(comp: dict, variant: str, name: str):
    (row,) = [r for r in comp["rows"] if r["variant"] == variant and r["metric"] == name]
    return row


@pytest.fixture(scope="module")
def brakmo(tmp_path_factory):
    return reproduce(tmp_path_factory.mktemp("rep"), "brakmo/single-transfer", "--seeds", "3", "--no-report")


@pytest.fixture(scope="module")
def ahn(tmp_path_factory):
    return reproduce(tmp_path_factory.mktemp("rep"), "ahn/figure1", "--no-report")


def test_comparison_rows_are_summary_fields(brakmo):
    out = brakmo["_out"]
    variants = {r["variant"] for r in brakmo["rows"]}
    assert {"reno", "vegas"} <= variants
    for v in variants:
        flow = json.loads((out / v / "summary.json").read_text())["flows"][0]
        for r in (r for r in brakmo["rows"] if r["variant"] == v):
            assert set(r) >= {"variant", "metric", "paper", "ours"}
            assert r["metric"] in flow, r["metric"]
            # the saved run is the first seed's; with several seeds ours is the mean over them
            if isinstance(r["ours"], list):  # coarse_timeout_times_s: one list per run, not averaged
                assert r["per_seed"][0] == r["ours"] == flow[r["metric"]] and len(r["per_seed"]) == r["n"] == 3
            elif r["ours"] is not None:
                assert r["min"] <= flow[r["metric"]] <= r["max"]
                assert r["min"] <= r["ours"] <= r["max"] and r["seeds"] == 3 and r["n"] == 3
                assert r["ours"] == r["mean"]
    assert metric(brakmo, "reno", "throughput_KBps")["paper"] == 123.0
    assert metric(brakmo, "vegas", "throughput_KBps")["paper"] == 169.0


def test_brakmo_claims(brakmo):
    """000 §4.1 / Fig 4.1: Reno loses in its first slow start, pays a coarse timeout, and fast
    retransmit patches later single drops; Fig 4.3: Vegas has no losses and is faster."""
    assert metric(brakmo, "reno", "coarse_timeouts")["min"] >= 1
    assert metric(brakmo, "reno", "fast_retransmits")["min"] >= 1
    assert metric(brakmo, "reno", "retransmitted_segments")["min"] >= 1
    assert metric(brakmo, "vegas", "retransmitted_bytes")["max"] == 0
    assert metric(brakmo, "vegas", "coarse_timeouts")["max"] == 0
    assert metric(brakmo, "vegas", "throughput_KBps")["min"] > metric(brakmo, "reno", "throughput_KBps")["max"]


def test_brakmo_lite_claims(brakmo):
    """001 §3: what holds on our path over seeds 1-3, and the measured shape of the misses the
    scenario header explains."""
    tp = lambda v, k: metric(brakmo, v, "throughput_KBps")[k]
    assert [metric(brakmo, f"lite.{n}", "throughput_KBps")["paper"] for n in range(4)] == [70.0, 99.0, 102.8, 117.0]
    assert metric(brakmo, "lite.0", "coarse_timeout_times_s")["paper"] == [3.5, 10.5, 14.5]
    # §3.2: the RTO fix makes the same losses cost less: Lite.2 beats Lite.1 on every seed.
    assert tp("lite.2", "min") > tp("lite.1", "max")
    # §3.1: the header-prediction bug costs throughput and timeouts once inflated cwnd can reach
    # the peer's window (the Lite rows' 50 KB receive buffer, issue 31); with the 64 KB variant it
    # never fires.
    assert tp("lite.0", "max") < tp("lite.1", "min")
    assert metric(brakmo, "lite.0", "coarse_timeouts")["min"] >= 2
    assert metric(brakmo, "lite.0-rcv64KB", "throughput_KBps")["ours"] == metric(brakmo, "lite.1-rcv64KB", "throughput_KBps")["ours"]
    out = brakmo["_out"]
    flow = lambda v: json.loads((out / v / "summary.json").read_text())["flows"][0]
    assert flow("lite.0")["header_predicted_acks"] > 0
    assert flow("lite.0-rcv64KB")["header_predicted_acks"] == 0
    assert flow("reno")["header_predicted_acks"] == 0
    # Every timeout time lies inside the transfer.
    for v in ("lite.0", "lite.3"):
        r = metric(brakmo, v, "coarse_timeout_times_s")  # the saved (first) run's list
        assert len(r["ours"]) == flow(v)["coarse_timeouts"]
        assert all(0 < t < flow(v)["completion_s"] for t in r["ours"])


def test_ahn_figure1_claims(ahn):
    """002 Fig 1: R-R one early timeout then fast recoveries; R-T only coarse timeouts (a Tahoe
    receiver does not send the duplicate ACKs fast retransmit needs); V-R no drop at all."""
    assert metric(ahn, "R-R", "coarse_timeouts")["ours"] >= 1
    assert metric(ahn, "R-R", "fast_retransmits")["ours"] >= 1
    assert metric(ahn, "R-T", "fast_retransmits")["ours"] == 0
    assert metric(ahn, "R-T", "coarse_timeouts")["ours"] >= 2
    for m in ("retransmitted_segments", "coarse_timeouts", "fast_retransmits"):
        assert metric(ahn, "V-R", m)["ours"] == 0, m
    assert metric(ahn, "V-R", "throughput_KBps")["ours"] > metric(ahn, "R-R", "throughput_KBps")["ours"]
    # The stock 4.4BSD-Lite sender (NetBSD-1.0 in the paper) loses more than the x-kernel Reno
    # here (the scenario header explains why): more timeouts on both receivers.
    assert metric(ahn, "R-R lite", "coarse_timeouts")["ours"] > metric(ahn, "R-R", "coarse_timeouts")["ours"]
    assert metric(ahn, "R-T lite", "coarse_timeouts")["ours"] > metric(ahn, "R-T", "coarse_timeouts")["ours"]


# README pins. README.md's "What tcplab measures today (seed 1 ...)" table prints these numbers;
# the simulator is deterministic, so each is pinned exactly as the README prints it (rounded to its
# digits). A failing pin means the simulator's result moved: if the change is intended, update the
# README row and the pin here together, in the same commit.
README_ROWS = "docs/results.md, table 'What tcplab measures today'"


def pin(got, want, what: str, digits: int | None = None) -> None:
    shown = round(got, digits) if digits is not None else got
    assert shown == want, (
        f"{what}: the README ({README_ROWS}) says {want}, the simulator now gives {got!r}. "
        f"If the change is intended, update that README row and this pin together.")


def saved_flow(comp: dict, variant: str) -> dict:
    """The first seed's run (seed 1), as saved under the output directory."""
    return json.loads((comp["_out"] / variant / "summary.json").read_text())["flows"][0]


def test_readme_pins_brakmo(brakmo):
    # The table prints the point-to-point reading (the *-p2p rows, issue 25); the Ethernet
    # reading, now the main one, is pinned below it.
    f = lambda v: saved_flow(brakmo, v + "-p2p")
    pin(f("reno")["throughput_KBps"], 121.6, "brakmo reno throughput KB/s, seed 1", 1)
    pin(f("reno")["coarse_timeouts"], 1, "brakmo reno coarse timeouts, seed 1")
    pin(f("reno")["largest_timeout_gap_s"], 1.58, "brakmo reno silence before the timeout (s), seed 1", 2)
    pin(f("reno")["fast_retransmits"], 4, "brakmo reno fast retransmits, seed 1")
    # "166.5 KB/s (every seed)": seeds 1-3 here.
    tp = metric(brakmo, "vegas-p2p", "throughput_KBps")
    pin((round(tp["min"], 1), round(tp["max"], 1)), (166.5, 166.5), "brakmo vegas throughput KB/s, every seed")
    pin((f("vegas")["retransmitted_segments"], f("vegas")["coarse_timeouts"]), (0, 0), "brakmo vegas retransmissions, timeouts")
    pin(f("lite.0")["throughput_KBps"], 86.7, "brakmo lite.0 throughput KB/s (50 KB buffers), seed 1", 1)
    pin([round(t, 1) for t in f("lite.0")["coarse_timeout_times_s"]], [3.0, 9.5], "brakmo lite.0 timeout times (s), seed 1")
    pin(f("lite.1")["throughput_KBps"], 103.6, "brakmo lite.1 throughput KB/s, seed 1", 1)
    pin(f("lite.2")["throughput_KBps"], 108.0, "brakmo lite.2 throughput KB/s, seed 1", 1)
    pin(f("lite.3")["throughput_KBps"], 77.4, "brakmo lite.3 throughput KB/s, seed 1", 1)
    pin([round(t, 1) for t in f("lite.3")["coarse_timeout_times_s"]], [3.0, 7.0, 11.5], "brakmo lite.3 timeout times (s), seed 1")
    pin(f("lite.0-rcv64KB")["throughput_KBps"], 103.6, "brakmo lite.0 with a 64 KB receive buffer, KB/s, seed 1", 1)
    pin([round(t, 1) for t in f("lite.0-rcv64KB")["coarse_timeout_times_s"]], [3.0], "brakmo lite.0-rcv64KB timeout times (s)")
    # Ethernet LANs (the main rows, docs/results.md note under the table).
    g = lambda v: saved_flow(brakmo, v)
    pin(g("reno")["throughput_KBps"], 121.5, "brakmo reno on Ethernet LANs, KB/s, seed 1", 1)
    pin(g("lite.0")["throughput_KBps"], 72.1, "brakmo lite.0 on Ethernet LANs, KB/s, seed 1", 1)
    pin([round(t, 1) for t in g("lite.0")["coarse_timeout_times_s"]], [3.0, 9.5, 14.0], "brakmo lite.0 on Ethernet LANs, timeout times (s), seed 1")
    pin(g("lite.3")["throughput_KBps"], 77.4, "brakmo lite.3 on Ethernet LANs, KB/s, seed 1", 1)


def test_readme_pins_ahn(ahn):
    f = lambda v: saved_flow(ahn, v)
    pin((f("R-R")["coarse_timeouts"], f("R-R")["fast_retransmits"]), (1, 5), "ahn R-R timeouts / fast recoveries")
    pin(f("R-R")["largest_timeout_gap_s"], 1.85, "ahn R-R timeout length (s)", 2)
    pin(f("R-T")["coarse_timeouts"], 3, "ahn R-T timeouts")
    pin((f("V-R")["retransmitted_segments"], round(f("V-R")["completion_s"], 1), round(f("V-R")["throughput_KBps"], 1)),
        (0, 24.7, 83.0), "ahn V-R drops, seconds for 2 MB, KB/s")
    pin((f("R-R lite")["coarse_timeouts"], f("R-R lite")["fast_retransmits"]), (5, 23), "ahn R-R lite timeouts / fast recoveries")
    pin((f("R-T lite")["coarse_timeouts"], f("R-T lite")["fast_retransmits"]), (7, 6), "ahn R-T lite timeouts, fast retransmits")


def test_report_lands_in_the_output_directory(tmp_path, monkeypatch):
    """A relative --out puts report.html directly in it (not OUT/OUT/report.html). Two rows of
    brakmo/single-transfer (its whole sixteen rows cost a minute here and test nothing more)."""
    exp = tmp_path / "exp"
    exp.mkdir()
    src = ROOT / "scenarios" / "brakmo" / "single-transfer"
    (exp / "scenario.toml").write_text((src / "scenario.toml").read_text())
    (exp / "reproduce.toml").write_text(
        'title = "two rows of brakmo/single-transfer"\nscenario = "scenario.toml"\nflow = "transfer"\n'
        '[[variants]]\nname = "reno"\nset = { "tcp[0].variant" = "reno" }\npaper = { throughput_KBps = 123.0 }\n'
        '[[variants]]\nname = "vegas"\nset = { "tcp[0].variant" = "vegas" }\npaper = { throughput_KBps = 169.0 }\n')
    monkeypatch.chdir(tmp_path)
    p = subprocess.run(TCPLAB + ["reproduce", str(exp), "--out", "rel/out"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "rel" / "out" / "report.html").is_file()
    assert (tmp_path / "rel" / "out" / "comparison.json").is_file()
    assert "wrote rel/out/report.html" in p.stdout


def test_unknown_experiment_is_a_clean_error(tmp_path):
    p = subprocess.run(TCPLAB + ["reproduce", "no/such", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2
    assert "no reproduction named 'no/such'" in p.stderr
    assert "Traceback" not in p.stderr


def test_table_numbers_keep_small_values_visible():
    """A loss rate of 2e-4 printed as 0.000 reads as "no loss"; small values keep their digits."""
    from tcplab.reproduce import _fmt

    assert _fmt(2.1e-4) == "2.10e-04"
    assert _fmt(0.0) == "0.000"
    assert _fmt(0.0123) == "0.012"
    assert _fmt(1.5) == "1.50"
    assert _fmt(166.54) == "166.5"
    assert _fmt([1e-4, 2.0]) == "[1.00e-04, 2.00]"


def test_axis_at_places_an_axis_item_where_a_variants_scenario_holds_it(tmp_path):
    """brakmo/table5.3's bottleneck is links[0] on the LANs and links[3] in the point-to-point
    reading: `axis_at` sweeps the same item in both; without it the p2p row would change a host link."""
    src = ROOT / "scenarios" / "brakmo" / "table5.3"
    for f in ("scenario.toml", "scenario-p2p.toml"):
        (tmp_path / f).write_text((src / f).read_text())
    spec = '''title = "axis_at"
flow = "small"
axes = { "links[0].queue.limit" = ["12pkts", "20pkts"] }
metrics = ["links.Gateway1->Gateway2.queue_limit_pkts", "links.Host1a->Gateway1.queue_limit_pkts"]

[[variants]]
name = "lan"

[[variants]]
name = "p2p"
scenario = "scenario-p2p.toml"
axis_at = { "links[0].queue.limit" = "links[3].queue.limit" }
'''
    (tmp_path / "reproduce.toml").write_text(spec)
    comp = reproduce(tmp_path, str(tmp_path), "--no-report", "--jobs", "1")
    # The mean of 12 and 20 in both readings (the files say 15), the p2p host link untouched.
    assert metric(comp, "lan", "links.Gateway1->Gateway2.queue_limit_pkts")["ours"] == 16
    assert metric(comp, "p2p", "links.Gateway1->Gateway2.queue_limit_pkts")["ours"] == 16
    assert metric(comp, "p2p", "links.Host1a->Gateway1.queue_limit_pkts")["ours"] not in (12, 16, 20)
    (tmp_path / "reproduce.toml").write_text(spec.replace('axis_at = { "links[0]', 'axis_at = { "links[9]'))
    p = subprocess.run(TCPLAB + ["reproduce", str(tmp_path), "--out", str(tmp_path / "o")], cwd=ROOT,
                       capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert "axis_at" in p.stderr and "links[0].queue.limit" in p.stderr and "Traceback" not in p.stderr
