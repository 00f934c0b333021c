"""tcplib background traffic through the Python front: the summary's traffic section, the
DataFrames, utilization per time bucket (seed 000 Fig 2.5), the CLI table, and the traffic
schedule staying put when only the distinguished flow's variant changes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import tcplab

ROOT = Path(__file__).resolve().parent.parent
T54 = ROOT / "scenarios" / "brakmo" / "table5.4" / "scenario.toml"
SHORT = {"run.duration": "40s", "run.stop_when_done": False, "tcp[0].start": "10s"}


@pytest.fixture(scope="module")
def runs():
    return {v: tcplab.run(T54, seed=3, overrides={**SHORT, "tcp[0].variant": v}) for v in ("reno", "vegas")}


def test_traffic_section_and_frames(runs):
    r = runs["reno"]
    (t,) = r.summary["traffic"]
    assert t["name"] == "background" and t["kind"] == "tcplib" and t["variant"] == "reno"
    assert t["conversations_started"] > 50
    assert t["conversations_completed"] + t["conversations_aborted"] + t["connections_alive_at_end"] == t["conversations_started"]
    assert sum(t["started_by_type"].values()) == t["conversations_started"]
    assert abs(sum(t["mix"].values()) - 1) < 1e-9
    # Telnet is part of tcplib's mix and every echo is timed.
    assert t["telnet_echoes"] > 0 and 0 < t["telnet_echo_under_1s"] <= 1
    df = r.traffic
    assert isinstance(df, pl.DataFrame) and df.height == 1 and df["sent_KB"][0] == pytest.approx(t["sent_KB"])
    # The flows table lists only the [[tcp]] flows, not the hundreds of conversations.
    assert [f["name"] for f in r.summary["flows"]] == ["transfer"]


def test_utilization_per_bucket_adds_up(runs, tmp_path):
    r = runs["reno"]
    r.save(tmp_path / "run")
    from tcplab.rundir import RunData
    rd = RunData.load(tmp_path / "run")
    u = rd.utilization("Gateway1->Gateway2", bucket_s=1.0)
    lk = rd.link("Gateway1->Gateway2")
    assert u.height == pytest.approx(r.summary["sim_end_s"], abs=1.01)
    assert int(u["bytes"].sum()) == lk["bytes_forwarded"]
    # Bytes count in the bucket where their transmission ends: at most one packet over 100 %.
    assert u["utilization"].max() <= 1.0 + 1474 * 8 / lk["rate_bps"]
    # The same from the in-memory run.
    assert r.data.utilization("Gateway1->Gateway2")["bytes"].to_list() == u["bytes"].to_list()


def test_same_traffic_whatever_the_distinguished_variant(runs):
    a, b = runs["reno"].summary["traffic"][0], runs["vegas"].summary["traffic"][0]
    # The schedule (mix, conversation count by type) is the seed's, not the variant's ...
    assert a["mix"] == b["mix"] and a["mean_interarrival_s"] == b["mean_interarrival_s"]
    assert a["started_by_type"] == b["started_by_type"]
    # ... while the transfer itself differs.
    assert runs["reno"].summary["flows"][0]["retransmitted_bytes"] != runs["vegas"].summary["flows"][0]["retransmitted_bytes"]


def test_cli_prints_the_background_table(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tcplab.cli", "run", str(T54), "--out", str(tmp_path / "r"),
                          "--set", "run.duration=30s", "--set", "run.stop_when_done=false", "--set", "tcp[0].start=5s"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "traffic" in out.stdout and "background" in out.stdout and "echo ms" in out.stdout
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["traffic"][0]["sent_KB"] > 0


def test_bad_traffic_field_is_located(tmp_path):
    text = T54.read_text().replace('kind = "tcplib"', 'kind = "tcplib"\nsleep = "1s"')
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(p)
    assert e.value.field == "traffic[0].sleep"
    assert e.value.line == text.splitlines().index('sleep = "1s"') + 1


def test_table54_reproduction_short(tmp_path):
    """`tcplab reproduce brakmo/table5.4` on 2 seeds × 3 buffers: every variant runs the same
    paired grid, the background columns are there, the claims are evaluated."""
    out = subprocess.run([sys.executable, "-m", "tcplab.cli", "reproduce", "brakmo/table5.4", "--seeds", "2",
                          "--out", str(tmp_path / "t54"), "--no-report", "--jobs", "2"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    comp = json.loads((tmp_path / "t54" / "comparison.json").read_text())
    rows = {(r["variant"], r["metric"]): r for r in comp["rows"]}
    variants = {r["variant"] for r in comp["rows"]}
    # the Ethernet-LAN main reading and the point-to-point reading beside it (issue 25)
    main = {"reno", "vegas13", "vegas24", "reno-2way", "vegas13-2way"}
    assert variants == main | {f"{v}-p2p" for v in main}
    for v in variants:
        assert rows[(v, "throughput_KBps")]["n"] == 6
        assert rows[(v, "traffic.background.throughput_KBps")]["mean"] > 10
    # Vegas beats Reno on the distinguished transfer even on this small sample.
    assert rows[("vegas13", "throughput_KBps")]["mean"] > rows[("reno", "throughput_KBps")]["mean"]
    assert rows[("vegas13", "retransmitted_KB")]["mean"] < rows[("reno", "retransmitted_KB")]["mean"]
    assert len(comp["claims"]) == 6 and all("held" in c for c in comp["claims"])
    # x-Sim's Fig 2.4 view counts the tcplib sources as the background.
    from tcplab.table import averages
    df = averages(tmp_path / "t54")
    bg = df.filter((pl.col("metric") == "KB_sent") & (pl.col("part") == "background"))
    assert bg.height == 10 and bg["mean"].min() > 100, bg   # both readings
