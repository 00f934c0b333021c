"""Seed 003 (Kelly, scalable TCP over a virtual-queue marker): short versions of the kelly/*
reproductions and their claims, the per-interval link statistics, determinism and located
errors. The full reproductions run under `make reproductions`."""

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import tcplab

ROOT = Path(__file__).resolve().parents[1]
KELLY = ROOT / "scenarios" / "kelly"
TCPLAB = [sys.executable, "-m", "tcplab.cli"]

# Short runs: starts over 10 s as in the paper, statistics from 15 s to 40 s instead of 25..85 s.
SHORT = {"run.duration": "40s", "run.measure.from": "15s", "run.measure.to": "40s"}


def bottleneck(summary, name="R1->R2"):
    return next(l for l in summary["links"] if l["name"] == name)


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


@pytest.fixture(scope="module")
def table1_short():
    return {n: tcplab.run(KELLY / "table1" / f"flows-{n}.toml", overrides=SHORT).summary for n in (1, 16)}


def test_table1_short_no_drops_and_rising_marks(table1_short):
    # Seed 003 §4.2 Table 1: no drops; marking rate and utilization grow with N.
    s1, s16 = table1_short[1], table1_short[16]
    for s in (s1, s16):
        assert sum(l["drops"] for l in s["links"]) == 0
        assert all(f["retransmitted_segments"] == 0 for f in s["flows"])
    b1, b16 = bottleneck(s1), bottleneck(s16)
    assert b1["window_marking_rate"] < b16["window_marking_rate"]
    assert b1["window_utilization"] < b16["window_utilization"]
    # Table 1 at N = 16: utilization 0.749, marking 0.134, fairness 0.9986 (15 % / 25 % / 0.98 bars).
    assert abs(b16["window_utilization"] / 0.749 - 1) < 0.15, b16["window_utilization"]
    assert abs(b16["window_marking_rate"] / 0.134 - 1) < 0.25, b16["window_marking_rate"]
    goodputs = [f["window_goodput_bps"] for f in s16["flows"]]
    assert len(goodputs) == 32 and jain(goodputs) >= 0.98
    # Mean queueing delay below five 1052-byte serialization times at 30 Mbit/s (§4.2).
    assert b16["window_queue_delay_mean_s"] < 5 * 1052 * 8 / 30e6


def test_table1_short_goodput_on_the_response_curve(table1_short):
    # Eq. 17 with b = base_b/T: x = s·a/base_b·(1 − p)/p, s = 8000 bit, a/base_b = 25.
    for n, s in table1_short.items():
        p = bottleneck(s)["window_marking_rate"]
        x = 8000 * 25 * (1 - p) / p
        g = sum(f["window_goodput_bps"] for f in s["flows"]) / len(s["flows"])
        assert 0.8 < g / x < 1.2, (n, g, x)


def test_window_statistics_agree_with_the_interval_columns(tmp_path):
    r = tcplab.run(KELLY / "table1" / "flows-4.toml", overrides=SHORT, out=tmp_path / "r")
    iv = pl.read_parquet(tmp_path / "r" / "queue_intervals.parquet").filter(pl.col("link") == "R1->R2")
    for col in ("bytes_in", "ect_in", "ce_marks", "delay_n", "delay_sum_s", "delay_sumsq_s2"):
        assert col in iv.columns
    w = iv.filter((pl.col("t_s") >= 15.0) & (pl.col("t_s") < 40.0))
    assert w.height == 25, "1 s intervals (Figs 5-7)"
    b = bottleneck(r.summary)
    marks, ect = int(w["ce_marks"].sum()), int(w["ect_in"].sum())
    assert marks / ect == pytest.approx(b["window_marking_rate"], rel=1e-9)
    n, s = int(w["delay_n"].sum()), float(w["delay_sum_s"].sum())
    assert s / n == pytest.approx(b["window_queue_delay_mean_s"], rel=1e-9)
    # Work forwarded per interval = utilization: the intervals' bytes over the window.
    assert float(w["bytes_out"].sum()) * 8 / 30e6 / 25 == pytest.approx(b["window_utilization"], abs=2e-3)
    # Work arriving equals work forwarded when nothing is dropped or left queued.
    assert b["window_work_arrival"] == pytest.approx(b["window_utilization"], abs=2e-3)


def test_rtt_fairness_short_claims():
    # Seed 003 §4.4, Figs 8-9: ECN-TCP over ARED favours short RTTs by > 10x over 16 vs 256 ms;
    # scalable-ecn over the VQ stays within 2x. 30 s of statistics instead of 60.
    over = {"run.duration": "60s", "run.measure.from": "30s", "run.measure.to": "60s"}
    bias = {}
    for name in ("ecn-tcp", "scalable"):
        s = tcplab.run(KELLY / "rtt-fairness" / f"{name}.toml", overrides=over).summary
        g = {f["name"]: f["window_goodput_bps"] for f in s["flows"]}
        grp = lambda k: sum(g[f"{d}{i}"] for d in "fb" for i in range(5 * k + 1, 5 * k + 6))
        bias[name] = grp(0) / grp(4)
        if name == "scalable":
            assert sum(l["window_drops"] for l in s["links"]) == 0
    assert bias["ecn-tcp"] > 10, bias
    assert 0.5 < bias["scalable"] < 2, bias


def test_a_window_after_the_end_of_the_run_is_empty():
    s = tcplab.run(KELLY / "table1" / "flows-1.toml", overrides={"run.duration": "3s"}).summary
    assert all("window_utilization" not in l for l in s["links"])
    assert all("window_goodput_bps" not in f for f in s["flows"])


def test_determinism_same_seed_same_bytes(tmp_path):
    over = {"run.duration": "12s", "run.measure.from": "5s", "run.measure.to": "12s"}
    a = tcplab.run(KELLY / "table1" / "flows-4.toml", seed=3, overrides=over).summary
    b = tcplab.run(KELLY / "table1" / "flows-4.toml", seed=3, overrides=over).summary
    c = tcplab.run(KELLY / "table1" / "flows-4.toml", seed=4, overrides=over).summary
    for s in (a, b, c):
        s.pop("wall_s")
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(c), "the seed drives the marker and the pacing timers"


@pytest.mark.parametrize("override, field, words", [
    ({"links[0].queue.min_th": 5}, "links[0].queue.min_th", "RED parameter"),
    ({"links[0].queue.theta": 1.5}, "links[0].queue.theta", "(0, 1]"),
    ({"links[1].queue.phi": 0.1}, "links[1].queue.phi", "virtual-queue parameter"),
    ({"tcp[0].params.base_b": 0}, "tcp[0].params.base_b", "> 0"),
    ({"tcp[0].params.alpha": 1}, "tcp[0].params.alpha", "a, base_b, ssgrace, b_cap"),
    ({"run.measure.to": "20s"}, "run.measure.to", "must end after it starts"),
])
def test_bad_kelly_input_is_located(tmp_path, override, field, words):
    args = TCPLAB + ["validate", str(KELLY / "table1" / "flows-1.toml")]
    for k, v in override.items():
        args += ["--set", f"{k}={json.dumps(v) if not isinstance(v, str) else v}"]
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2, p.stdout + p.stderr
    assert field in p.stderr and words in p.stderr, p.stderr
    assert "Traceback" not in p.stderr
