"""Seed 004 (Zhang & Bian) reproductions: the claims the text makes, on short runs.

zhang/figure1 runs through `tcplab reproduce` (its reproduce.toml uses only per-variant keys);
zhang/table1 is written for the extended runner ([axes], [metrics]), so here its grid is run
through the API with the same overrides."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tcplab

ROOT = Path(__file__).resolve().parents[1]
TCPLAB = [sys.executable, "-m", "tcplab.cli"]


@pytest.fixture(scope="module")
def figure1(tmp_path_factory):
    out = tmp_path_factory.mktemp("zhang_figure1")
    p = subprocess.run(TCPLAB + ["reproduce", "zhang/figure1", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    rows = json.loads((out / "comparison.json").read_text())["rows"]
    return {(r["variant"], r["metric"]): r["ours"] for r in rows}, out


def test_figure1_four_drops_in_one_window(figure1):
    ours, out = figure1
    # The drop list dropped exactly its four packets in every run.
    for v in ("reno", "sack", "vegas"):
        s = json.loads((out / v / "summary.json").read_text())
        link = next(l for l in s["links"] if l["name"] == "R1->K1")
        assert link["drops_by_reason"]["scripted"] == 4, v
    # Seed 004 §3.1.2: Reno times out and slow-starts; SACK keeps going without a timeout and
    # delivers more; Vegas recovers with its fine-grained retransmissions.
    assert ours[("reno", "coarse_timeouts")] >= 1
    assert ours[("sack", "coarse_timeouts")] == 0
    assert ours[("sack", "throughput_KBps")] > ours[("reno", "throughput_KBps")]
    assert ours[("vegas", "coarse_timeouts")] == 0
    # README pins (Reno 2 timeouts, 25.1 KB/s; SACK 50.0 KB/s; Vegas 44.0 KB/s).
    pin(ours[("reno", "coarse_timeouts")], 2, "zhang figure1 reno timeouts")
    pin([round(ours[(v, "throughput_KBps")], 1) for v in ("reno", "sack", "vegas")], [25.1, 50.0, 44.0],
        "zhang figure1 throughput KB/s reno, sack, vegas")


def utilization(variant: str, loss: float, seed: int) -> float:
    r = tcplab.run(ROOT / "scenarios" / "zhang" / "table1" / "scenario.toml", seed=seed,
                   overrides={"tcp[0].variant": variant, "links[1].ab.loss": loss})
    return r.summary["flows"][0]["throughput_KBps"] * 1024 * 8 / 800_000


README_ROWS = "README.md, section Reproductions, table 'What tcplab measures today'"


def pin(got, want, what: str) -> None:
    assert got == want, (
        f"{what}: the README ({README_ROWS}) says {want}, the simulator now gives {got!r}. "
        f"If the change is intended, update that README row and this pin together.")


def test_table1_at_five_percent_loss_vegas_beats_sack_beats_reno():
    seeds = (1, 2, 3)
    per_seed = {v: [utilization(v, 0.05, s) for s in seeds] for v in ("reno", "sack", "vegas")}
    u = {v: sum(x) / len(x) for v, x in per_seed.items()}
    assert u["vegas"] > u["sack"] > u["reno"], u
    one = {v: utilization(v, 0.01, 1) for v in u}
    # 1 % loss costs less than 5 % for every variant.
    for v in u:
        assert one[v] > per_seed[v][0], v
    # README pins (seed 1), exact to the digits printed there.
    pin([round(per_seed[v][0], 3) for v in ("reno", "sack", "vegas")], [0.166, 0.201, 0.213], "zhang table1 5 % utilization, seed 1")
    pin([round(one[v], 3) for v in ("reno", "sack", "vegas")], [0.403, 0.470, 0.439], "zhang table1 1 % utilization, seed 1")


def test_sack_ticks_and_red_average_are_drawn(figure1, tmp_path):
    from tcplab import plots
    from tcplab.rundir import RunData

    _, out = figure1
    fig = plots.seq_graph(RunData.load(out / "sack"), t_from=3.0, t_to=4.5)
    assert plots.count_gid(fig, "seq-sack:transfer") >= 1
    fig = plots.seq_graph(RunData.load(out / "reno"), t_from=3.0, t_to=4.5)
    assert plots.count_gid(fig, "seq-sack:transfer") == 0, "no SACK, no ticks"
    r = tcplab.run(ROOT / "scenarios" / "zhang" / "table4" / "scenario.toml",
                   overrides={"run.duration": "10s", "run.trace.links": ["R1->R2"]}, out=tmp_path / "red")
    rd = RunData.load(tmp_path / "red")
    avg = rd.aqm_average("R1->R2")
    assert avg.height >= 90 and float(avg["aqm_avg_pkts"].max()) > 0
    assert r.summary["links"][4]["queue_discipline"] == "red"
    fig = plots.queue_graph(rd, "R1->R2")
    assert plots.count_gid(fig, "queue-red-avg") >= 1


def test_adaptive_red_with_ecn_marks_instead_of_dropping():
    # Reno against Vegas through Adaptive RED (ns-2.35 defaults, 5 ms target) with ECN on both:
    # congestion is signalled by marks only, so nothing is dropped or retransmitted.
    r = tcplab.run(ROOT / "scenarios" / "zhang" / "table4" / "scenario.toml",
                   overrides={"links[2].queue": {"kind": "ared", "limit": "40pkts", "ecn": True},
                              "tcp[0].ecn": True, "tcp[1].ecn": True, "run.duration": "30s"})
    link = next(l for l in r.summary["links"] if l["name"] == "R1->R2")
    assert link["queue_discipline"] == "ared"
    assert link["ecn_marks"] > 20 and link["drops"] == 0
    for f in r.summary["flows"]:
        assert f["ecn"] and f["ecn_reactions"] > 0, f["name"]
        assert f["retransmitted_segments"] == 0, f["name"]


def _reproduce(name: str, out: Path) -> dict:
    p = subprocess.run(TCPLAB + ["reproduce", f"zhang/{name}", "--out", str(out), "--no-report"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return json.loads((out / "comparison.json").read_text())


def test_table1_rows_are_variants_with_a_metric_per_loss_rate(tmp_path):
    # [points]: one row per variant, utilization_loss_1pct / _5pct each from its own runs.
    d = _reproduce("table1", tmp_path)
    rows = {(r["variant"], r["metric"]): r for r in d["rows"]}
    assert {v for v, _ in rows} == {"reno", "sack", "vegas"}
    for v in ("reno", "sack", "vegas"):
        lo, hi = rows[(v, "utilization_loss_1pct")], rows[(v, "utilization_loss_5pct")]
        assert lo["n"] == hi["n"] == 1 and 0 < hi["ours"] < lo["ours"] < 1, v
        # the point's own run: utilization is the point's throughput on the 0.8 Mb/s link
        tp = rows[(v, "throughput_KBps_loss_5pct")]["ours"]
        assert abs(hi["ours"] - tp * 1024 * 8 / 800_000) < 1e-9
    assert rows[("reno", "utilization_loss_1pct")]["paper"] == 0.894
    assert d["claims"][0]["held"]


def test_droptail_buffer_sweep_vegas_wins_small_buffers_loses_large(tmp_path):
    # Seed 004 §3.3.2.1: Vegas ahead with small DropTail buffers, Reno/SACK far ahead with large
    # ones, the ratio crossing 1 in between (the seed: about 8 and 10 packets).
    d = _reproduce("droptail-buffers", tmp_path)
    ours = {(r["variant"], r["metric"]): r["ours"] for r in d["rows"]}
    for pair in ("reno/vegas", "sack/vegas"):
        assert ours[(pair, "ack_ratio_buffer2")] < 1 < ours[(pair, "ack_ratio_buffer40")], pair
    held = {c["text"].split(" (")[0]: c["held"] for c in d["claims"]}
    assert held["The ratio crosses 1 near 8 packets for Reno-Vegas"]
    assert held["Large buffers: Reno and SACK take much more than Vegas"]


def test_ns2_timer_fires_on_its_deadline_not_on_a_tick():
    # zhang/figure1 runs ns-2's agent timer: its Reno timeouts fall off the 500 ms BSD grid, and
    # the same run with BSD timers times out only on (host phase + k · 500 ms) ticks.
    r = tcplab.run(ROOT / "scenarios" / "zhang" / "figure1" / "scenario.toml", seed=1,
                   overrides={"tcp[0].variant": "reno"})
    f = r.summary["flows"][0]
    assert f["coarse_timeouts"] >= 1
    bsd = tcplab.run(ROOT / "scenarios" / "zhang" / "figure1" / "scenario.toml", seed=1,
                     overrides={"tcp[0].variant": "reno", "tcp[0].timer": "bsd"})
    assert bsd.summary["flows"][0]["coarse_timeout_times_s"] != f["coarse_timeout_times_s"]
