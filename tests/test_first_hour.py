"""Issue 14, a user's first hour: templates through every entry point, --set on the inline-table
form Scenario.to_toml() writes, CLI arguments validated (exit 2, no traceback), Ctrl-C honoured
within a second, `tcplab expand` / `tcplab variants`, the terminal summary of many flows."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scenarios" / "examples"


def tcplab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "tcplab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tcplab.cli"]


def cli(*args, timeout: float = 120, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([*tcplab_cmd(), *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=cwd)


def refused(p: subprocess.CompletedProcess) -> str:
    out = p.stdout + p.stderr
    assert p.returncode == 2, f"exit {p.returncode}: {out}"
    assert "Traceback" not in out, out
    return p.stderr


def test_set_on_a_scenario_built_in_python():
    import tcplab
    sc = tcplab.Scenario(name="two-hosts", run={"duration": "5s"})
    sc.add_node("a", "host").add_node("b", "host")
    sc.add_link("a", "b", rate="10Mbps", delay="5ms", queue={"limit": "20pkts"})
    sc.add_tcp("t", "a", "b", variant="newreno", bytes="1MB")
    assert "links = [" in sc.to_toml() or "[[links]]" in sc.to_toml()
    small = tcplab.run(sc, overrides={"links[0].queue.limit": "3pkts", "tcp[0].bytes": "300KB"})
    big = tcplab.run(sc)
    assert small.summary["flows"][0]["bytes_acked"] == 300 * 1024
    assert small.summary["links"][0]["queue_max_pkts"] <= 3 < big.summary["links"][0]["queue_max_pkts"]


@pytest.mark.parametrize("args", [
    ["run", "{ex}", "--seed", "-1"],
    ["run", "{ex}", "--seed", "18446744073709551616"],
    ["run", "{ex}", "--seed", "x"],
    ["run", "{ex}", "--timeout", "-3"],
    ["reproduce", "brakmo/single-transfer", "--jobs", "0"],
    ["reproduce", "brakmo/single-transfer", "--seeds", "-2"],
    ["bench", "--repeat", "0"],
    ["plot", "{ex}", "--from", "-1"],
    ["trace", "{ex}", "--conn", "x", "--to", "nan"],
])
def test_out_of_range_arguments_exit_2_without_traceback(args):
    ex = EXAMPLES / "udp-dumbbell.toml"
    err = refused(cli(*[a.replace("{ex}", str(ex)) for a in args]))
    assert "error" in err or "invalid" in err, err


def test_from_after_to_is_an_error(tmp_path):
    out = tmp_path / "r"
    assert cli("run", EXAMPLES / "udp-dumbbell.toml", "--out", out, "--set", "run.duration=1s").returncode == 0
    for cmd in (["plot", out, "--kind", "queue"], ["trace", out, "--conn", "cbr0"]):
        err = refused(cli(*cmd, "--from", "3", "--to", "1"))
        assert "--from 3 s is not before --to 1 s" in err, err


def test_missing_file_is_one_plain_line():
    p = cli("run", "nope.toml")
    assert refused(p).strip() == "tcplab: no such file: nope.toml"


def test_expand_writes_a_plain_scenario_that_runs_the_same(tmp_path):
    src = EXAMPLES / "dumbbell-64.toml"
    assert len(src.read_text().splitlines()) < 30
    p = cli("expand", src)
    assert p.returncode == 0, p.stderr
    plain = tomllib.loads(p.stdout)
    assert len(plain["tcp"]) == 64 and len(plain["nodes"]) == 130 and len(plain["links"]) == 129
    assert [t["variant"] for t in plain["tcp"][:5]] == ["reno", "newreno", "vegas", "sack", "reno"]
    assert not any(k in p.stdout for k in ("count", "{i}", "topology", "defaults"))
    f = tmp_path / "plain.toml"
    f.write_text(p.stdout)
    common = ["--set", "run.duration=2s", "--set", "run.trace.tcp=false", "--json"]
    a = json.loads(cli("run", src, "--out", tmp_path / "a", *common).stdout)
    b = json.loads(cli("run", f, "--out", tmp_path / "b", *common).stdout)
    for s in (a, b):
        s.pop("wall_s")
    assert a == b


def test_the_udp_dumbbell_example_is_a_template_with_the_same_summary(tmp_path):
    # The example was rewritten with templates (490 lines -> under 60); its expansion is the
    # written-out file it replaced, entry for entry.
    text = (EXAMPLES / "udp-dumbbell.toml").read_text()
    assert "count = 16" in text and len(text.splitlines()) < 60
    plain = tomllib.loads(cli("expand", EXAMPLES / "udp-dumbbell.toml").stdout)
    assert [n["name"] for n in plain["nodes"][:6]] == ["left", "right", "s0", "d0", "s1", "d1"]
    assert [(l["a"], l["b"]) for l in plain["links"][:4]] == [("left", "right"), ("s0", "left"), ("right", "d0"), ("s1", "left")]
    assert [u["start"] for u in plain["udp"][:3]] == ["0ms", "1ms", "2ms"]


def test_template_errors_name_the_template_line(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text((EXAMPLES / "dumbbell-64.toml").read_text().replace('to = "dst{i}"', 'to = "dst{i+1}"'))
    err = refused(cli("validate", f))
    assert f"{f}:21: tcp[63].to" in err and "(tcp[63] from the tcp template at line 17, i = 63)" in err, err
    f.write_text((EXAMPLES / "dumbbell-64.toml").read_text().replace("duration = \"15s\"", "duraton = \"15s\""))
    err = refused(cli("validate", f))
    assert "did you mean `duration`?" in err, err


def test_variants_lists_every_variant_queue_and_pattern():
    p = cli("variants")
    assert p.returncode == 0, p.stderr
    schema = json.loads(cli("schema").stdout)
    variants = schema["definitions"]["TcpCfg"]["properties"]["variant"]["enum"]
    assert {"reno", "vegas", "newreno", "sack", "lite.6"} <= set(variants)
    for name in [*variants, "droptail", "red", "ared", "cbr", "poisson", "bursts", "onoff", "tcplib", "modern"]:
        assert f"  {name} " in p.stdout, name
    assert "(see README)" not in p.stdout
    # The schema offers completions for the other string enums too.
    props = schema["definitions"]["TcpCfg"]["properties"]
    assert props["ack_policy"]["enum"] == ["every", "bsd-delayed", "tahoe", "lbl"]
    assert props["timer"]["enum"] == ["bsd", "fine", "ns2"]
    assert schema["definitions"]["QueueCfg"]["properties"]["kind"]["enum"][:3] == ["droptail", "red", "ared"]


def test_terminal_summary_prints_the_aggregate_and_first_rows(tmp_path):
    args = ["run", EXAMPLES / "dumbbell-64.toml", "--set", "run.duration=2s", "--set", "run.trace.tcp=false"]
    short = cli(*args, "--out", tmp_path / "a")
    assert short.returncode == 0, short.stderr
    assert "... 54 more flows (--all prints every one" in short.stdout
    assert "all 64 flows:" in short.stdout and "Jain's index" in short.stdout and "Mbit/s" in short.stdout
    assert "flow63" not in short.stdout
    full = cli(*args, "--out", tmp_path / "b", "--all")
    assert "flow63" in full.stdout and "more flows" not in full.stdout


@pytest.mark.serial  # a SIGINT's effect timed to a second: not beside another worker's load
def test_ctrl_c_stops_a_slow_run_within_a_second(tmp_path):
    # A run that would take minutes: SIGINT must end it within 1 s, exit 130, no traceback.
    proc = subprocess.Popen([*tcplab_cmd(), "run", str(EXAMPLES / "udp-dumbbell.toml"), "--out", str(tmp_path / "r"),
                             "--set", "run.duration=20000s", "--set", "run.monitor_interval=1s",
                             "--set", "run.trace.links=[]"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3.0)  # imports done, the run is under way
    assert proc.poll() is None, proc.communicate()
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    elapsed = time.monotonic() - t0
    assert elapsed < 1.0, elapsed
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and "interrupted" in err, err
    assert not (tmp_path / "r").exists()


def test_link_name_and_direction_are_both_accepted_and_outputs_use_one_spelling(tmp_path):
    out = tmp_path / "r"
    assert cli("run", EXAMPLES / "udp-dumbbell.toml", "--out", out, "--set", "run.duration=1s").returncode == 0
    by_name = cli("plot", out, "--kind", "queue", "--conn", "bottleneck")
    by_dir = cli("plot", out, "--kind", "queue", "--conn", "left->right")
    assert by_name.returncode == 0 and by_dir.returncode == 0, by_name.stderr + by_dir.stderr
    assert by_name.stdout == by_dir.stdout and by_name.stdout.strip().endswith("queue_left-right.png")
    err = refused(cli("plot", out, "--kind", "queue", "--conn", "hop2"))
    assert "no link hop2 in" in err and "'" not in err, err


def test_plot_without_tcp_trace_says_how_to_switch_it_on(tmp_path):
    out = tmp_path / "r"
    assert cli("run", EXAMPLES / "dumbbell-64.toml", "--out", out, "--set", "run.duration=1s",
               "--set", "run.trace.tcp=false").returncode == 0
    err = refused(cli("plot", out, "--kind", "tcp", "--conn", "flow1"))
    assert "TCP tracing off" in err and "run.trace.tcp = true" in err and "run directory?" not in err, err


def test_csv_beside_parquet(tmp_path):
    import polars as pl
    out = tmp_path / "r"
    assert cli("run", EXAMPLES / "dumbbell-64.toml", "--out", out, "--set", "run.duration=1s").returncode == 0
    p = cli("export", out, "--format", "csv", "--out", tmp_path / "csv")
    assert p.returncode == 0, p.stderr
    for name in ("flows", "links", "trace_tcp", "trace_link", "queue_intervals"):
        csv = pl.read_csv(tmp_path / "csv" / f"{name}.csv")
        assert csv.height > 0, name
    assert pl.read_csv(tmp_path / "csv" / "trace_tcp.csv").height == pl.read_parquet(out / "trace_tcp.parquet").height
    t = cli("trace", out, "--conn", "flow3", "--format", "csv")
    rows = pl.read_csv(t.stdout.encode())
    assert set(rows["conn"].to_list()) == {"flow3"} and rows.height > 10
    assert refused(cli("export", out, "--out", out)).count("not into it") == 1


def test_to_pandas_works_out_of_the_box():
    import tcplab
    r = tcplab.run(EXAMPLES / "udp-dumbbell.toml", overrides={"run.duration": "1s"})
    assert r.links.to_pandas().shape[0] == len(r.summary["links"])


def test_seq_graph_rescales_its_y_axis_to_the_time_window():
    import matplotlib
    matplotlib.use("Agg")
    import tcplab
    from tcplab import plots
    r = tcplab.run(EXAMPLES / "dumbbell-64.toml", overrides={"run.duration": "3s"})
    rd = r.data
    whole = plots.seq_graph(rd, ["flow5"])
    part = plots.seq_graph(rd, ["flow5"], 2.0, 2.2)
    lo_w, hi_w = whole.axes[0].get_ylim()
    lo_p, hi_p = part.axes[0].get_ylim()
    assert lo_w == 0 and 0 < lo_p < hi_p < hi_w, (lo_w, hi_w, lo_p, hi_p)


def test_link_trace_rows_name_the_packet_in_parquet_and_csv(tmp_path):
    """Whose packet was dropped: flow, kind and seq on every link trace row, in Parquet and CSV."""
    import polars as pl
    out = tmp_path / "r"
    assert cli("run", EXAMPLES / "udp-dumbbell.toml", "--out", out, "--set", "run.duration=2s").returncode == 0
    ev = pl.read_parquet(out / "trace_link.parquet")
    assert {"flow", "kind", "seq"} <= set(ev.columns)
    assert set(ev["kind"].unique().to_list()) == {"udp"}
    drops = ev.filter(pl.col("event") == "drop")
    assert drops.height > 0
    summary = json.loads((out / "summary.json").read_text())
    sent = {u["name"]: u["sent_pkts"] - u["received_pkts"] for u in summary["udp"]}
    # Only the bottleneck is traced and drops: each source's drop rows = its datagrams lost,
    # unless still queued or on the wire when the run ended (at most the queue and the pipe).
    by_flow = dict(drops.group_by("flow").len().iter_rows())
    assert set(by_flow) <= set(sent) and sum(by_flow.values()) > 0
    for name, n in by_flow.items():
        assert 0 <= sent[name] - n <= 100 + 100, (name, sent[name], n)
    # A source's datagram numbers arrive in order at the bottleneck.
    seqs = ev.filter((pl.col("flow") == "cbr3") & (pl.col("event") == "arrive"))["seq"].to_list()
    assert seqs == sorted(seqs) and seqs[0] == 0
    assert cli("export", out, "--out", tmp_path / "csv").returncode == 0
    csv = pl.read_csv(tmp_path / "csv" / "trace_link.csv")
    assert csv.columns == ev.columns and csv.height == ev.height
    assert csv.filter(pl.col("event") == "drop")["flow"].to_list() == drops["flow"].to_list()


def test_flows_graph_shows_udp_sources(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import numpy as np
    import polars as pl
    import tcplab
    from tcplab import plots
    r = tcplab.run(EXAMPLES / "udp-dumbbell.toml", overrides={"run.duration": "2s"}, out=tmp_path / "r")
    rd = r.data
    fig = plots.flows_graph(rd, interval=0.1)
    ev = rd.link_events("left->right")
    for u in r.summary["udp"]:
        (ln,) = plots.find_gid(fig, f"flow-udp:{u['name']}")
        y = np.asarray(ln.get_ydata())[:-1]
        left = ev.filter((pl.col("flow") == u["name"]) & (pl.col("event") == "depart"))["bytes"].sum()
        assert y.sum() * 0.1 * 1024 == pytest.approx(left, rel=1e-9)
        assert left > 0.9 * u["received_bytes"]
    assert plots.find_gid(fig, "flow-total")
    # 16 sources: a legend would cover the graph, so only the total and the capacity are named.
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["total", "left->right capacity"], labels
    assert "16 flows, not labelled" in fig._suptitle.get_text()
    # Without a link trace: the mean received rate, flat.
    r2 = tcplab.run(EXAMPLES / "udp-dumbbell.toml", overrides={"run.duration": "2s", "run.trace.links": []})
    fig2 = plots.flows_graph(r2.data, interval=0.1)
    u = r2.summary["udp"][0]
    (ln,) = plots.find_gid(fig2, f"flow-udp:{u['name']}")
    assert np.asarray(ln.get_ydata()) == pytest.approx(u["received_bytes"] / r2.summary["sim_end_s"] / 1024)


def test_report_throughput_graph_draws_udp_sources(tmp_path):
    """The HTML report's throughput graph carries the UDP sources as the `flows` plot does, also
    for a run that has no TCP flow at all."""
    import tcplab
    from tcplab.report import write_report
    r = tcplab.run(EXAMPLES / "udp-dumbbell.toml", overrides={"run.duration": "2s"}, out=tmp_path / "r")
    assert not r.summary.get("flows")
    html = write_report(tmp_path / "r", tmp_path / "report.html").read_text()
    assert "Throughput over time" in html and "UDP from datagrams forwarded" in html
    for u in r.summary["udp"]:
        assert re.search(rf'id="[^"]*flow-udp:{u["name"]}"', html), u["name"]


def test_summary_prints_jains_index_per_shared_bottleneck(tmp_path):
    """A parking lot with two bottlenecks: summary.json and the printed table give each its own
    Jain's index over the flows crossing it (the long flow in both)."""
    f = tmp_path / "lot.toml"
    f.write_text("""
[run]
duration = "5s"
stop_when_done = false
[topology]
kind = "parking-lot"
hops = 2
hop = { rate = "10Mbps", delay = "10ms", queue = { limit = "60pkts" } }
access = { rate = "100Mbps", delay = "1ms", queue = { limit = "1000pkts" } }
[defaults.tcp]
variant = "newreno"
duration = "5s"
send_buffer = "256KB"
recv_buffer = "256KB"
[[tcp]]
name = "long"
from = "src"
to = "dst"
[[tcp]]
count = 2
name = "c{i}"
from = "cross_src{i}"
to = "cross_dst{i}"
""")
    p = cli("run", f, "--out", tmp_path / "r")
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    groups = {b["link"]: b for b in s["shared_bottlenecks"]}
    assert {k: v["flows"] for k, v in groups.items()} == {"r0->r1": ["long", "c0"], "r1->r2": ["long", "c1"]}
    tput = {fl["name"]: fl["throughput_KBps"] for fl in s["flows"]}
    for link, b in groups.items():
        x = [tput[n] for n in b["flows"]]
        assert b["jain_index"] == pytest.approx(sum(x) ** 2 / (len(x) * sum(v * v for v in x)), rel=1e-12)
        assert f"bottleneck {link}: 2 flows (long, {b['flows'][1]}), " in p.stdout
        assert f"Jain's index {b['jain_index']:.3f}" in p.stdout
