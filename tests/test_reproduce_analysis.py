"""`analysis = "FILE.py"` in a reproduce.toml (issue 25, brakmo/synchronicity): per-run metrics
computed from every run's saved traces, usable in claims, and an HTML section in the report."""

from __future__ import annotations

import json

import pytest

from tcplab.reproduce import reproduce
from tcplab.sweep import SweepError

SCENARIO = """
name = "analysis-hook"
[run]
duration = "2s"
seed = 1
monitor_interval = "10ms"
[[nodes]]
name = "a"
kind = "host"
[[nodes]]
name = "b"
kind = "host"
[[links]]
a = "a"
b = "b"
rate = "1Mbps"
delay = "1ms"
[[udp]]
name = "u"
from = "a"
to = "b"
pattern = "cbr"
rate = "500kbps"
packet_size = "500B"
"""

ANALYSIS = """
from pathlib import Path
import polars as pl

def run_metrics(run_dir):
    iv = pl.read_parquet(Path(run_dir) / "queue_intervals.parquet")
    return {"intervals": float(iv.filter(pl.col("link") == "a->b").height)}

def report_html(out, run_dirs):
    return "<h2>From the analysis</h2><p>" + ", ".join(f"{k}: {len(v)} runs" for k, v in run_dirs.items()) + "</p>"
"""


def _experiment(tmp_path, analysis="analysis.py"):
    d = tmp_path / "exp"
    d.mkdir()
    (d / "scenario.toml").write_text(SCENARIO)
    (d / "analysis.py").write_text(ANALYSIS)
    (d / "reproduce.toml").write_text(f"""
title = "analysis hook"
seeds = {{ from = 1, count = 2 }}
analysis = "{analysis}"
metrics = ["intervals"]
[[variants]]
name = "cbr"
[[claims]]
text = "one interval per 10 ms of the 2 s run"
expr = "min('cbr', 'intervals') == 200 and max('cbr', 'intervals') == 200"
""")
    return d


def test_every_run_gets_the_analysis_metrics_and_the_report_its_section(tmp_path):
    d = _experiment(tmp_path)
    out = tmp_path / "out"
    assert reproduce(str(d), out=out) == 0
    comp = json.loads((out / "comparison.json").read_text())
    row = next(r for r in comp["rows"] if r["metric"] == "intervals")
    assert row["n"] == 2 and row["ours"] == 200
    assert comp["claims"][0]["held"]
    html = (out / "report.html").read_text()
    assert "<h2>From the analysis</h2><p>cbr: 2 runs</p>" in html
    assert html.index("From the analysis") < html.index("<h2>Claims</h2>")


def test_a_missing_analysis_file_is_located(tmp_path):
    d = _experiment(tmp_path, analysis="nope.py")
    with pytest.raises(SweepError, match="nope.py"):
        reproduce(str(d), out=tmp_path / "out")
