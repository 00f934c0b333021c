"""`tcplab diagnose` (issue 29): the rules on synthetic flows with known answers, the Lite study
rediscovered on brakmo/single-transfer, the planted faults named, no false alarms on seeded clean
scenarios (and on a Linux capture from the emulator when root can make one), the pcap reader's
inference agreeing with the exact trace, the CLI and the Python API.

The full evaluation (table4 seeds, 100 clean scenarios) is `make diagnose-eval`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tcplab
from tcplab import diagnose
from tcplab.diagnose import evaluate
from tcplab.diagnose.model import FlowView
from tcplab.diagnose.rules import (big_ack_burst, ca_growth, idle_limits, rto_backoff, rwnd_sws, slow_start_restart,
                                   timeout_with_dupacks)

ROOT = Path(__file__).resolve().parents[1]
# The point-to-point reading of the thesis path: the times pinned below (and in the README's
# rediscovery table) were measured on it; the main reading now runs on Ethernet LANs (issue 25),
# which moves each event by tens of milliseconds.
BRAKMO = ROOT / "scenarios" / "brakmo" / "single-transfer" / "scenario-p2p.toml"
MSS = 1000


def _rules(fs, severe=True):
    return sorted({f.rule for f in fs if not severe or f.severity != "info"})


def _at(fs, rule):
    return [round(f.t_start, 2) for f in fs if f.rule == rule]


# ------------------------------------------------------------------ synthetic flows, exact answers
def _flow(**kw) -> FlowView:
    base = dict(name="f", source="rundir", inferred=False, mss=MSS, timer="bsd")
    base.update(kw)
    return FlowView(**base)


def _state(rows):
    """rows: (t, kind, cwnd, ssthresh, rto)."""
    a = np.array([(r[0], r[2], r[3], r[4]) for r in rows], dtype=float)
    return dict(st_t=a[:, 0], st_kind=np.array([r[1] for r in rows]), st_cwnd=a[:, 1], st_ssthresh=a[:, 2],
                st_snd_wnd=np.full(len(rows), 64000.0), st_unacked=np.zeros(len(rows)),
                st_srtt=np.full(len(rows), 0.1), st_rto=a[:, 3])


def test_ca_growth_counts_excess_over_eq3_only():
    # cwnd 10 MSS above ssthresh, 20 ACKs: Reno adds MSS²/cwnd each; the faulty sender twice that.
    def run(factor):
        rows, cw, t = [(0.0, "send", 10 * MSS, 5 * MSS, 1.0)], 10.0 * MSS, 0.0
        for i in range(20):
            t += 0.01
            cw += factor * MSS * MSS / cw
            rows.append((t, "ack", cw, 5 * MSS, 1.0))
        v = _flow(ack_t=np.array([r[0] for r in rows[1:]]), ack_no=np.arange(1, 21) * MSS,
                  ack_new=np.full(20, MSS), ack_dup=np.zeros(20, bool), **_state(rows))
        return ca_growth.check(v)
    assert run(1.0) == []
    fs = run(2.0)
    assert len(fs) == 1 and fs[0].rule == "ca-growth-too-fast" and fs[0].count == 20
    # Twice eq. 3 with SMSS = MSS: against the rule's bound, SMSS + 40 option bytes, 2·(1000/1040)² = 1.85.
    assert "1.8× as fast" in fs[0].summary


def test_ca_growth_reports_each_ca_period_between_reductions_on_its_own():
    # Doubled growth for 8 ACKs, a reduction (ssthresh changes, cwnd halves), doubled growth for 5
    # ACKs, a cwnd cut, then 2 fast ACKs only (too few): two findings, each counting its own ACKs.
    rows, cw, ss, t = [(0.0, "send", 10 * MSS, 5 * MSS, 1.0)], 10.0 * MSS, 5 * MSS, 0.0

    def grow(n):
        nonlocal cw, t
        for _ in range(n):
            t += 0.01
            cw += 2.0 * MSS * MSS / cw
            rows.append((t, "ack", cw, ss, 1.0))
    grow(8)
    t += 0.01
    cw, ss = cw / 2, cw / 2
    rows.append((t, "ack", cw, ss, 1.0))
    grow(5)
    t += 0.01
    cw = cw * 0.9
    rows.append((t, "ack", cw, ss, 1.0))
    grow(2)
    n = len(rows) - 1
    v = _flow(ack_t=np.array([r[0] for r in rows[1:]]), ack_no=np.arange(1, n + 1) * MSS,
              ack_new=np.full(n, MSS), ack_dup=np.zeros(n, bool), **_state(rows))
    fs = ca_growth.check(v)
    assert [(f.count, round(f.t_start, 2), round(f.t_end, 2)) for f in fs] == [(8, 0.01, 0.08), (5, 0.1, 0.14)]


def test_timeout_after_three_dupacks_without_fast_retransmit():
    sends = np.array([0.0, 0.0, 0.0, 0.0, 0.0])
    v = _flow(send_t=sends, send_seq=np.arange(5) * MSS, send_len=np.full(5, MSS), send_retx=np.zeros(5, bool),
              ack_t=np.array([0.1, 0.11, 0.12, 0.13]), ack_no=np.array([MSS, MSS, MSS, MSS]),
              ack_new=np.array([MSS, 0, 0, 0]), ack_dup=np.array([False, True, True, True]),
              timeout_t=np.array([1.5]), timeout_una=np.array([MSS]))
    fs = timeout_with_dupacks.check(v)
    assert [(f.rule, f.t_start, f.t_end) for f in fs] == [("timeout-despite-dupacks", 0.13, 1.5)]
    assert fs[0].cost_s == pytest.approx(1.37)
    # The same with a fast retransmit of that byte in between: no finding.
    v.fastrtx_t, v.fastrtx_una = np.array([0.13]), np.array([MSS])
    assert timeout_with_dupacks.check(v) == []
    # Two dup ACKs only: no finding.
    v.fastrtx_t, v.fastrtx_una = np.zeros(0), np.zeros(0, dtype=np.int64)
    v.ack_dup[3] = False
    assert timeout_with_dupacks.check(v) == []


def test_rto_backoff_exact_and_inferred():
    rows = [(0.0, "send", MSS, 64000, 1.0), (1.0, "timeout", MSS, 2 * MSS, 2.0), (3.0, "timeout", MSS, 2 * MSS, 4.0)]
    v = _flow(timeout_t=np.array([1.0, 3.0]), timeout_una=np.array([0, 0]), **_state(rows))
    assert rto_backoff.check(v) == []
    rows = [(0.0, "send", MSS, 64000, 1.0), (1.0, "timeout", MSS, 2 * MSS, 1.0), (2.0, "timeout", MSS, 2 * MSS, 1.0)]
    v = _flow(timeout_t=np.array([1.0, 2.0]), timeout_una=np.array([0, 0]), **_state(rows))
    fs = rto_backoff.check(v)
    assert len(fs) == 1 and fs[0].count == 2 and fs[0].severity == "bug"
    # From a capture: three timeouts of one byte 1 s apart, no ACK between: no backoff.
    w = _flow(source="pcap", inferred=True, timeout_t=np.array([1.0, 2.0, 3.0]), timeout_una=np.array([0, 0, 0]))
    fs = rto_backoff.check(w)
    assert len(fs) == 1 and fs[0].inferred
    w.timeout_t = np.array([1.0, 3.0, 7.0])
    assert rto_backoff.check(w) == []


def test_big_ack_burst_threshold_is_four_segments():
    # A dup ACK for byte 0 (the hole), then the ACK for 6 segments that fills it.
    def flow(n_sent, dup=True):
        return _flow(send_t=np.full(n_sent, 1.0), send_seq=np.arange(n_sent) * MSS + 10 * MSS,
                     send_len=np.full(n_sent, MSS), send_retx=np.zeros(n_sent, bool),
                     ack_t=np.array([0.5, 0.6, 1.0, 2.0]), ack_no=np.array([0, 0, 6 * MSS, 7 * MSS]),
                     ack_new=np.array([0, 0, 6 * MSS, MSS]), ack_dup=np.array([False, dup, False, False]))
    assert big_ack_burst.check(flow(3)) == []
    fs = big_ack_burst.check(flow(4))
    assert len(fs) == 1 and "4 segments" in fs[0].summary
    # The same burst after a stretch ACK of in-order data (no dup ACK, nothing retransmitted): §3.5's
    # causes are loss and reordering, so no finding.
    assert big_ack_burst.check(flow(4, dup=False)) == []


def test_slow_start_restart_after_idle():
    # 10 segments at t=0, all acknowledged by 0.2 s, then 8 at once after 3 s idle.
    t = np.concatenate([np.zeros(10), np.full(8, 3.2)])
    seq = np.arange(18) * MSS
    v = _flow(initial_window=1, send_t=t, send_seq=seq, send_len=np.full(18, MSS), send_retx=np.zeros(18, bool),
              ack_t=np.array([0.2]), ack_no=np.array([10 * MSS]), ack_new=np.array([10 * MSS]), ack_dup=np.zeros(1, bool))
    fs = slow_start_restart.check(v)
    assert len(fs) == 1 and "8 segments" in fs[0].summary
    v.send_t = np.concatenate([np.zeros(10), np.full(1, 3.2), np.full(7, 3.5)])
    assert slow_start_restart.check(v) == []


def test_silly_window_sends_and_zero_window_time():
    # Full segments, then three 100-byte segments mid-transfer, then a full one and the short tail.
    lens = [MSS] * 4 + [100] * 3 + [MSS, 300]
    seq = np.concatenate([[0], np.cumsum(lens)[:-1]])
    rows = [(0.0, "send", 8 * MSS, 64000, 1.0), (0.5, "ack", 8 * MSS, 64000, 1.0), (1.5, "ack", 8 * MSS, 64000, 1.0)]
    st = _state(rows)
    st["st_snd_wnd"] = np.array([64000.0, 0.0, 64000.0])
    v = _flow(send_t=np.linspace(0, 2, len(lens)), send_seq=seq, send_len=np.array(lens), send_retx=np.zeros(len(lens), bool), **st)
    fs = {f.severity: f for f in rwnd_sws.check(v)}
    assert fs["warning"].count == 3 and fs["warning"].segments == [4 * MSS, 4 * MSS + 100, 4 * MSS + 200]
    assert fs["info"].cost_s == pytest.approx(1.0)          # zero window from 0.5 s to 1.5 s


def test_sender_stall_with_open_window_and_data():
    # cwnd 8 MSS, 2 MSS unacked, window open, 1 MB to send: nothing sent from 0.1 s to 2.0 s.
    rows = [(0.0, "send", 8 * MSS, 64000, 1.0), (0.1, "send", 8 * MSS, 64000, 1.0), (0.5, "ack", 8 * MSS, 64000, 1.0),
            (2.0, "send", 8 * MSS, 64000, 1.0)]
    st = _state(rows)
    st["st_unacked"] = np.array([MSS, 2.0 * MSS, 2.0 * MSS, 3.0 * MSS])
    v = _flow(total_bytes=1_000_000, send_buffer=50_000, send_t=np.array([0.0, 0.1, 2.0]), send_seq=np.arange(3) * MSS,
              send_len=np.full(3, MSS), send_retx=np.zeros(3, bool), ack_t=np.array([0.5]), ack_no=np.array([MSS]),
              ack_new=np.array([MSS]), ack_dup=np.zeros(1, bool), rtt_samples=np.array([0.1]), **st)
    fs = [f for f in idle_limits.check(v) if f.severity == "warning"]
    assert [(f.t_start, f.t_end) for f in fs] == [(0.1, 2.0)]
    v.total_bytes = 2 * MSS + 500          # after 0.1 s only a sub-MSS tail is left: Nagle holds it, no stall
    assert [f for f in idle_limits.check(v) if f.severity == "warning"] == []


# ------------------------------------------------------------------ the Lite study, rediscovered
@pytest.fixture(scope="module")
def lite_runs(tmp_path_factory):
    """brakmo/single-transfer with the reproduction's rcv50KB sensitivity row, seed 5: the row
    where Lite.0's header-prediction bug fires (scenario.toml), for lite.0 ... lite.4, reno."""
    d = tmp_path_factory.mktemp("lite")
    out = {}
    for v in ["lite.0", "lite.1", "lite.2", "lite.3", "lite.4", "reno", "vegas"]:
        out[v] = d / v
        tcplab.run(str(BRAKMO), seed=5, overrides={"tcp[0].variant": v, "tcp[0].recv_buffer": "50KB",
                                                   "run.trace.pcap": ["Host1a->Gateway1", "Gateway1->Host1a"]},
                   out=out[v])
    return out


def test_lite0_names_the_lite1_to_lite4_bugs_at_the_papers_times(lite_runs):
    fs = diagnose.diagnose(lite_runs["lite.0"])
    assert {"no-window-reduction", "rto-too-large", "ack-frequency", "ca-growth-too-fast"} <= set(_rules(fs))
    # Seed 001 §3.1: fast retransmit "right before the 8 second mark", the >20 KB ACK after it.
    assert 8.21 in _at(fs, "no-window-reduction")
    burst = [f for f in fs if f.rule == "big-ack-burst" and 8.0 < f.t_start < 8.6]
    assert burst and "22.2 KB" in burst[0].summary
    # §3.2: timeouts at 3.5, 10.5, 14.5 s in Fig 3; ours 3.73, 10.73, 14.73 (scenario.toml).
    assert _at(fs, "rto-too-large") == [3.73, 10.73, 14.73]
    first = [f for f in fs if f.rule == "rto-too-large"][0]
    assert "1.73s between the last segment sent and the timeout" in first.evidence[2]   # the paper: 1.7 s


def test_each_fix_removes_its_finding(lite_runs):
    got = {v: set(_rules(diagnose.diagnose(d))) for v, d in lite_runs.items()}
    assert "no-window-reduction" not in got["lite.1"]
    assert "rto-too-large" in got["lite.1"]
    for v in ("lite.2", "lite.3", "lite.4"):
        assert not {"no-window-reduction", "rto-too-large"} & got[v], v
    assert "ack-frequency" in got["lite.2"]
    assert not {"ack-frequency"} & (got["lite.3"] | got["lite.4"])
    assert "ca-growth-too-fast" in got["lite.3"]
    assert not {"ca-growth-too-fast", "paired-reductions"} & got["lite.4"]
    for v in ("reno", "vegas"):
        assert not {"no-window-reduction", "ack-frequency", "ca-growth-too-fast", "paired-reductions"} & got[v], v


def test_pcap_inference_agrees_with_the_trace(lite_runs):
    exact = diagnose.diagnose(lite_runs["lite.0"])
    pc = diagnose.diagnose(lite_runs["lite.0"] / "pcap_Host1a-Gateway1.pcap")
    assert pc and all(f.inferred for f in pc)
    views = diagnose.load_flows(lite_runs["lite.0"] / "pcap_Host1a-Gateway1.pcap")
    assert len(views) == 1 and views[0].name == "10.0.0.1:10000>10.0.0.4:5001"
    # The three timeouts and the two recoveries without a reduction, found on the wire too.
    assert _at(pc, "rto-too-large") == _at(exact, "rto-too-large")
    assert set(_at(exact, "no-window-reduction")) <= set(_at(pc, "no-window-reduction"))
    assert _at(pc, "timeout-despite-dupacks") == _at(exact, "timeout-despite-dupacks")
    assert "ack-frequency" in _rules(pc)


def test_run_directory_read_through_the_core_equals_the_polars_read(lite_runs, monkeypatch):
    # issue 28: the report's diagnosis reads the trace with the core's Parquet reader (no polars);
    # the polars read (a run in memory, a file the core cannot read) gives the same views
    from tcplab.diagnose import rundir_reader
    from tcplab.rundir import RunData

    def views(d):
        return [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in vars(fv).items()}
                for fv in rundir_reader.read_rundir(RunData.load(d))]

    core = {v: views(d) for v, d in lite_runs.items() if v in ("lite.0", "vegas")}
    monkeypatch.setattr(rundir_reader, "_every_flow", lambda rd, conns: None)
    for v, got in core.items():
        assert got == views(lite_runs[v]) and got[0]["send_t"], v


# ------------------------------------------------------------------ planted faults
@pytest.mark.parametrize("variant,rule", [("reno-fault-no-fast-retransmit", "timeout-despite-dupacks"),
                                          ("reno-fault-double-ca", "ca-growth-too-fast"),
                                          ("reno-fault-no-rto-backoff", "rto-no-backoff")])
def test_planted_faults_are_named(tmp_path, variant, rule):
    d = tcplab.run(str(BRAKMO), seed=1, overrides={"tcp[0].variant": variant}, out=tmp_path / variant)
    assert rule in _rules(diagnose.diagnose(tmp_path / variant))


def test_plain_reno_has_none_of_the_planted_faults(tmp_path):
    tcplab.run(str(BRAKMO), seed=1, overrides={"tcp[0].variant": "reno"}, out=tmp_path / "reno")
    got = set(_rules(diagnose.diagnose(tmp_path / "reno")))
    assert not {"timeout-despite-dupacks", "ca-growth-too-fast", "rto-no-backoff"} & got


# ------------------------------------------------------------------ false alarms
def test_no_false_alarms_on_seeded_clean_scenarios(tmp_path):
    # The 100 seeded scenarios (newreno and vegas, 1-2 flows, lossless paths): ~10 s.
    res = evaluate.false_alarms(tmp_path, 100, seed=29)
    assert res["clean"] == 100, res       # the paths really had no loss
    assert res["findings"] == []
    assert res["info"] > 0                # the informational rules did run


# A Linux CUBIC capture of the clean path below, recorded once by `tcplab emulate` (kernel
# 6.18, scenarios/emulation/brakmo/scenario.toml with nodes[0].stack=linux, nodes[3].stack=linux,
# tcp[0].variant=linux-cubic, links[1].rate=10Mbps, links[1].delay=20ms, every queue.limit=3000pkts,
# tcp[0].bytes=1MB, run.trace.pcap=["Host1a->Gateway1","Gateway1->Host1a"]), kept only because that
# run was faithful: no drop on any link, emulation.fell_behind false, 0 datagrams released over
# 1 ms late (p99 lateness 0.080 ms), 738 segments, no retransmission. This test used to record it
# live and skip when the machine fell behind real time, so the suite's skip count followed the
# machine's load (CI: "582 passed, 1 skipped" one run, "583 passed" the next).
LINUX_CLEAN = ROOT / "tests" / "fixtures" / "linux-cubic-clean" / "pcap_Host1a-Gateway1.pcap"


def test_no_false_alarms_on_a_clean_linux_capture():
    views = diagnose.load_flows(LINUX_CLEAN)
    assert len(views) == 1
    v = views[0]
    # The whole transfer was read (both directions: the ACKs come from the companion file).
    assert (int(v.send_len.sum()), int(v.send_retx.sum()), len(v.send_t), len(v.ack_t)) == (1 << 20, 0, 738, 451)
    fs = diagnose.diagnose_views(views)
    assert [f.line() for f in fs if f.severity != "info"] == []


# ------------------------------------------------------------------ CLI and API
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "tcplab.cli", "diagnose", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_cli_text_json_html_and_exit_status(lite_runs, tmp_path):
    page = tmp_path / "d.html"
    p = _cli(lite_runs["lite.0"], "--html", page)
    assert p.returncode == 0, p.stderr
    assert "no-window-reduction" in p.stdout and "RFC 5681 §3.2 step 6; seed 001 §3.1 (Lite.1)" in p.stdout
    html = page.read_text()
    graphs = list((tmp_path / "d-graphs").glob("*-no-window-reduction.png"))
    assert len(graphs) == 2 and graphs[0].name in html
    p = _cli(lite_runs["lite.4"], "--json", "--no-html", "--flow", "transfer")
    assert p.returncode == 0
    doc = json.loads(p.stdout)
    assert doc["flows"][0]["name"] == "transfer" and doc["html"] is None
    assert {f["rule"] for f in doc["findings"]} >= {"sender-limits"}
    # A clean run: findings are not errors, exit 0 all the same; a missing file is exit 2.
    assert _cli(lite_runs["vegas"], "--no-html").returncode == 0
    p = _cli(tmp_path / "nope")
    assert p.returncode == 2 and "nope" in p.stderr
    p = _cli(lite_runs["lite.0"], "--flow", "nosuch", "--no-html")
    assert p.returncode == 2 and "no flow 'nosuch'" in p.stderr


def test_bad_and_truncated_captures(lite_runs, tmp_path):
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"not a capture at all, just text\n" * 4)
    p = _cli(junk, "--no-html")
    assert p.returncode == 2 and "not a pcap or pcapng file" in p.stderr and "Traceback" not in p.stderr
    whole = (lite_runs["lite.0"] / "pcap_Host1a-Gateway1.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(whole[: len(whole) // 2 + 7])          # ends inside a record
    p = _cli(cut, "--no-html")
    assert p.returncode == 0 and "Traceback" not in p.stderr     # read up to where it was cut
    assert "10.0.0.1:10000>10.0.0.4:5001" in p.stdout


def test_api_dataframe(lite_runs):
    df = diagnose.findings_frame(lite_runs["lite.1"])
    assert df.columns[:3] == ["rule", "flow", "severity"]
    assert df.filter(df["rule"] == "rto-too-large").height == 1
    assert df["inferred"].sum() == 0
    assert diagnose.findings_frame([]).height == 0


def test_report_has_a_diagnosis_section(lite_runs, tmp_path):
    from tcplab.report import write_report
    out = write_report(lite_runs["lite.0"], tmp_path / "r.html")
    text = out.read_text()
    assert "<h3>Diagnosis</h3>" in text and "no-window-reduction" in text
