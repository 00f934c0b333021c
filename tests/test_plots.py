"""The graphs: they draw, in the requested format, and their structure matches the data.

Counts are taken from the figure objects (artists tagged with gids, see tcplab.plots) and
compared with the run's summary.json and trace rows -- never by eye.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import polars as pl
import pytest

from tcplab import plots
from tcplab.rundir import RunData, RunDirError

MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}


def _check_format(path, fmt):
    data = path.read_bytes()
    assert len(data) > 1000, f"{path} is nearly empty ({len(data)} bytes)"
    if fmt == "svg":
        head = data[:400]
        assert head.startswith(b"<?xml") and b"<svg" in data[:2000], f"{path} is not SVG"
        assert data.rstrip().endswith(b"</svg>")
    else:
        assert data.startswith(MAGIC[fmt]), f"{path} does not start with the {fmt} magic bytes"


def _runs(dirs):
    return [RunData.load(d) for d in dirs]


# ----------------------------------------------------------------------------- drawing
@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_every_kind_draws_without_warnings(plots_run_dirs, plots_synth_dirs, tmp_path, fmt):
    # Every run draws every kind it has as PNG; the SVG and PDF writers draw the same figures through
    # another backend, so they draw every kind once, on the synthetic runs (which hold every kind:
    # Reno's traces and links, Vegas' CAM, three flows sharing a bottleneck) -- a third of the cost.
    runs = plots_run_dirs if fmt == "png" else list(plots_synth_dirs.values())
    drawn: set[str] = set()
    for d in runs:
        run = RunData.load(d)
        kinds = (["tcp", "seq", "flows"] if run.has_tcp else []) + (["link", "queue"] if run.has_link else [])
        assert kinds, f"{d}: a run with neither TCP traces nor link traces"
        if any(run.cam(c).height for c in run.conns):
            kinds.append("cam")
        for kind in kinds:
            out = tmp_path / d.name / kind
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                paths = plots.plot_cli(d, kind=kind, fmt=fmt, out=out)
            assert paths, f"{kind}: nothing written"
            n_expected = len(run.conns) if kind == "tcp" else None
            if n_expected is not None:
                assert len(paths) == n_expected
            for p in paths:
                assert p.suffix == f".{fmt}"
                _check_format(p, fmt)
            drawn.add(kind)
    assert drawn == set(plots.PLOT_KINDS), f"kinds never drawn as {fmt}: {set(plots.PLOT_KINDS) - drawn}"


def test_plot_cli_single_file_and_window(plots_synth_dirs, tmp_path):
    d = plots_synth_dirs["reno"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (p,) = plots.plot_cli(d, conn="flow1", kind="tcp", t_from=0.5, t_to=3.0, out=tmp_path / "x.svg")
    assert p == tmp_path / "x.svg"
    _check_format(p, "svg")
    (p2,) = plots.plot_cli(d, kind="queue", fmt="pdf", out=tmp_path)
    assert p2.name == "queue_gw1-gw2.pdf"
    _check_format(p2, "pdf")
    default = plots.plot_cli(d, kind="link")
    assert default[0].parent == d / "plots" and default[0].stat().st_size > 0


def test_plot_cli_errors(plots_synth_dirs):
    d = plots_synth_dirs["reno"]
    with pytest.raises(ValueError, match="unknown plot kind"):
        plots.plot_cli(d, kind="pie")
    with pytest.raises(ValueError, match="format"):
        plots.plot_cli(d, fmt="jpg")
    with pytest.raises(KeyError, match="flow1"):
        plots.plot_cli(d, conn="nosuchflow")
    with pytest.raises(ValueError, match="CAM"):
        plots.plot_cli(d, kind="cam")


# ----------------------------------------------------------------------------- structure
def test_synthetic_runs_exercise_the_elements(plots_synth_dirs):
    """Guard: the synthetic Reno run has what the structural tests are meant to count."""
    run = RunData.load(plots_synth_dirs["reno"])
    f = run.flow("flow1")
    assert f["coarse_timeouts"] >= 1
    assert f["fast_retransmits"] >= 1
    assert f["retransmitted_segments"] >= 2
    assert run.link("gw1->gw2")["drops"] >= 1
    kinds = set(run.trace("flow1")["kind"].unique())
    assert {"send", "retransmit", "ack", "dupack", "slow_tick", "timeout", "fast_retransmit"} <= kinds


def test_timeout_circles_equal_coarse_timeouts(plots_run_dirs):
    for run in _runs(plots_run_dirs):
        for c in run.conns:
            fig = plots.tcp_graph(run, c)
            n = plots.count_gid(fig, "timeout-circles")
            assert n == run.flow(c)["coarse_timeouts"], f"{run.dir}:{c}"
            assert n == run.trace(c).filter(pl.col("kind") == "timeout").height


def test_retransmission_lines_equal_distinct_retransmitted_segments(plots_run_dirs):
    for run in _runs(plots_run_dirs):
        for c in run.conns:
            snd = run.trace(c)
            # One line per original segment holding retransmitted bytes: retransmissions can be cut
            # differently from the original sends (4.4BSD-Lite after a timeout sends t_maxseg −
            # 12 option bytes, then the 12-byte rest), so map each retransmitted seq to the first
            # send whose byte range holds it.
            first_send = (snd.filter(pl.col("kind") == "send").group_by("seq").agg(pl.col("t_s").min(), pl.col("len").first())
                          .sort("seq"))
            rx_all = (snd.filter(pl.col("kind") == "retransmit").group_by("seq").agg(pl.col("t_s").min().alias("rt"))
                      .sort("seq"))
            held = (rx_all.join_asof(first_send.rename({"seq": "orig"}), left_on="seq", right_on="orig", strategy="backward")
                    .filter(pl.col("seq") < pl.col("orig") + pl.col("len")))
            distinct = held["orig"].n_unique()
            fig = plots.tcp_graph(run, c)
            assert plots.count_gid(fig, "retx-lines") == distinct, f"{run.dir}:{c}"
            # the same lines run through every panel
            for panel in ("rate", "queue"):
                assert plots.count_gid(fig, f"retx-lines:{panel}") == distinct
            # each line sits at the first send of its segment, before any retransmission of it
            xs = np.sort(plots.find_gid(fig, "retx-lines")[0].get_segments(), axis=0)[:, 0, 0] if distinct else []
            assert (held["t_s"] < held["rt"]).all()
            orig_times = held.group_by("orig").agg(pl.col("t_s").first())["t_s"].to_numpy()
            assert sorted(np.round(xs, 9)) == sorted(np.round(orig_times, 9))


def test_kb_labels_end_at_transfer_size(plots_run_dirs):
    for run in _runs(plots_run_dirs):
        for c in run.conns:
            fig = plots.tcp_graph(run, c)
            labels = plots.find_gid(fig, "kb-label")
            assert labels, f"{run.dir}:{c}: no KB labels"
            values = [int(t.get_text()) for t in labels]
            times = [t.get_position()[0] for t in labels]
            assert values == sorted(values) and len(set(values)) == len(values)
            assert times == sorted(times)
            f = run.flow(c)
            if f.get("transfer_bytes") and f.get("completion_s") is not None:  # a finished byte transfer
                assert values[-1] == math.ceil(f["transfer_bytes"] / 1024), f"{run.dir}:{c}"
            snd = run.trace(c).filter(pl.col("kind").is_in(["send", "retransmit"]))
            top = (snd["seq"] + snd["len"].cast(pl.UInt64)).max()
            assert values[-1] == math.ceil(top / 1024)


def test_marks_match_trace_rows(plots_run_dirs):
    for run in _runs(plots_run_dirs):
        for c in run.conns:
            snd = run.trace(c)
            k = snd["kind"]
            fig = plots.tcp_graph(run, c)
            assert plots.count_gid(fig, "send-marks") == k.is_in(["send", "retransmit"]).sum()
            assert plots.count_gid(fig, "ack-marks") == k.is_in(["ack", "dupack"]).sum()
            assert plots.count_gid(fig, "tick-diamonds") == (k == "slow_tick").sum()
            for g in ("line-ssthresh", "line-sndwnd", "line-cwnd", "line-unacked", "rate-line"):
                assert plots.count_gid(fig, g) > 0, g


def test_time_window_restricts_elements(plots_synth_dirs):
    run = RunData.load(plots_synth_dirs["reno"])
    snd = run.trace("flow1")
    t_to = snd.filter(pl.col("kind") == "timeout")["t_s"].min() + 0.01  # includes the first timeout only
    t_from = 0.5
    fig = plots.tcp_graph(run, "flow1", t_from, t_to)
    assert plots.count_gid(fig, "timeout-circles") == 1
    ax = fig.axes[0]
    assert ax.get_xlim() == pytest.approx((t_from, t_to))
    inwin = snd.filter(pl.col("t_s").is_between(t_from, t_to))
    assert plots.count_gid(fig, "send-marks") == inwin["kind"].is_in(["send", "retransmit"]).sum()
    labels = [int(t.get_text()) for t in plots.find_gid(fig, "kb-label")]
    assert labels and labels[-1] < 1024


def test_cam_graph_structure(plots_synth_dirs):
    run = RunData.load(plots_synth_dirs["vegas"])
    cam = run.cam("flow1")
    assert cam.height > 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = plots.cam_graph(run, "flow1")
        tfig = plots.tcp_graph(run, "flow1")
    assert plots.count_gid(fig, "cam-decisions") == cam.height
    assert plots.count_gid(tfig, "cam-decisions") == cam.height  # CAM panel inside the trace graph
    assert len(tfig.axes) == 4
    (al,) = plots.find_gid(fig, "cam-alpha")
    (be,) = plots.find_gid(fig, "cam-beta")
    (ex,) = plots.find_gid(fig, "cam-expected")
    assert (np.asarray(al.get_ydata()) > np.asarray(be.get_ydata())).all()
    assert (np.asarray(ex.get_ydata()) >= np.asarray(al.get_ydata())).all()
    # the alpha line is Expected - alpha * MSS/BaseRTT: recover one buffer's worth and compare
    k = plots.cam_scale_KBps_per_buffer(run, "flow1", cam)
    assert np.allclose(np.asarray(ex.get_ydata()) - np.asarray(al.get_ydata()), cam["alpha"].to_numpy() * k)
    # Actual above the alpha line <=> "increase" decisions in linear mode
    lin = cam.with_columns(pl.Series("al", al.get_ydata())).filter(pl.col("decision").is_in([-1, 0, 1]))
    inc = lin.filter(pl.col("decision") == 1)
    assert (inc["actual_KBps"] > inc["al"] - 1e-9).all()


def test_link_graph_drop_marks(plots_run_dirs):
    for run in _runs(plots_run_dirs):
        link = run.bottleneck
        drops = run.link_events(link).filter(pl.col("event") == "drop").height
        fig = plots.link_graph(run, link)
        assert plots.count_gid(fig, "drop-marks") == drops == run.link(link)["drops"]
        thin = plots.find_gid(fig, "link-thin")[0]
        thick = plots.find_gid(fig, "link-thick")[0]
        # both averages carry the same bytes: integral of KB/s over time
        def integral(line, iv):
            return float(np.sum(np.asarray(line.get_ydata())[:-1]) * iv)
        assert integral(thin, 0.1) == pytest.approx(integral(thick, 0.3), rel=1e-6)
        # The graph counts bytes when transmission starts ("depart"); bytes_forwarded counts finished
        # transmissions, so they differ by the packet on the transmitter at the end of the run, if any.
        in_service = integral(thin, 0.1) * 1024 - run.link(link)["bytes_forwarded"]
        assert -1e-6 <= in_service <= 65536


def test_queue_graph_bars_and_average(plots_run_dirs):
    for run in _runs(plots_run_dirs):
        link = run.bottleneck
        fig = plots.queue_graph(run, link, interval=0.1)
        nbars = plots.count_gid(fig, "queue-bars")
        assert nbars == math.ceil(run.sim_end_s / 0.1 - 1e-9)
        avg = np.asarray(plots.find_gid(fig, "queue-avg")[0].get_ydata())
        assert len(avg) == nbars
        # time-weighted mean over the run equals the summary's queue_avg_pkts
        assert avg.mean() * nbars * 0.1 / run.sim_end_s == pytest.approx(run.link(link)["queue_avg_pkts"], rel=0.02, abs=0.02)
        segs = plots.find_gid(fig, "queue-bars")[0].get_segments()
        assert max(s[1][1] for s in segs) == pytest.approx(run.link(link)["queue_max_pkts"], abs=0.05)


def test_flows_graph_integrates_to_bytes_acked(plots_run_dirs):
    for run in _runs(plots_run_dirs):
        fig = plots.flows_graph(run, interval=0.1)
        for c in run.conns:
            (ln,) = plots.find_gid(fig, f"flow-tput:{c}")
            y = np.asarray(ln.get_ydata())[:-1]
            assert y.sum() * 0.1 * 1024 == pytest.approx(run.flow(c)["bytes_acked"], rel=1e-6)
        assert plots.find_gid(fig, "capacity")
        if len(run.conns) > 1:
            assert plots.find_gid(fig, "flow-total")


def test_seq_graph_marks_retransmissions(plots_run_dirs):
    for run in _runs(plots_run_dirs):
        if not run.has_tcp:
            continue
        fig = plots.seq_graph(run)
        for c in run.conns:
            k = run.trace(c)["kind"]
            assert plots.count_gid(fig, f"seq-retx:{c}") == (k == "retransmit").sum()
            assert plots.count_gid(fig, f"seq-data:{c}") == (k == "send").sum()
            rk = run.trace(c, side="rcv")["kind"]
            assert plots.count_gid(fig, f"seq-rcv:{c}") == (rk == "recv").sum()


def test_bottleneck_choice(plots_synth_dirs):
    multi = RunData.load(plots_synth_dirs["multi"])
    assert "bottleneck" not in multi.summary
    assert multi.bottleneck == max(multi.summary["links"], key=lambda l: l["utilization"])["name"] == "gw1->gw2"
    reno = RunData.load(plots_synth_dirs["reno"])
    assert reno.bottleneck == reno.summary["bottleneck"]


# ----------------------------------------------------------------------------- helpers and loader
def test_sending_rate_last_12_segments():
    t = np.arange(30) * 0.01  # a segment every 10 ms
    r = plots.sending_rate(t, np.full(30, 1000), 12)
    assert np.isnan(r[0])
    assert r[12:] == pytest.approx(100_000.0)  # 1000 B / 10 ms
    # a burst: 12 segments at once after a gap -> rate over the window that includes the gap
    t2 = np.r_[np.arange(12) * 0.1, 2.0 + np.arange(12) * 1e-4]
    r2 = plots.sending_rate(t2, np.full(24, 1000), 12)
    assert r2[-1] == pytest.approx(12_000 / (t2[-1] - t2[11]))


def test_queue_intervals_time_weighted():
    from tcplab.rundir import queue_intervals

    # queue 0 until 0.05, 4 until 0.15, then 2
    q = queue_intervals([0.05, 0.15], [4, 2], 0.1, 0.3)
    assert q["min_pkts"].to_list() == [0, 2, 2]
    assert q["max_pkts"].to_list() == [4, 4, 2]
    assert q["avg_pkts"].to_list() == pytest.approx([2.0, 3.0, 2.0])


def test_loader_frames_and_errors(plots_synth_dirs, tmp_path):
    run = RunData.load(plots_synth_dirs["reno"])
    assert run.flows.height == 1 and "coarse_timeouts" in run.flows.columns
    assert "drops_queue_overflow" in run.links.columns
    assert run.links.height == 2
    assert set(run.trace("flow1", side="rcv")["side"].unique()) == {"rcv"}
    assert run.queue().columns == ["t_s", "qlen_pkts"]
    assert run.cam("flow1").height == 0 and "decision" in run.cam().columns
    with pytest.raises(KeyError, match="flow1"):
        run.trace("nope")

    with pytest.raises(RunDirError, match="not a complete tcplab run directory"):
        RunData.load(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "summary.json").write_text(json.dumps({"flows": [{"name": "a"}], "links": []}))
    from tcplab.rundir import seal
    seal(broken)  # complete as far as the marker goes; the traces are simply absent
    r = RunData.load(broken)
    with pytest.raises(RunDirError, match="trace_tcp.parquet"):
        r.trace("a")
    with pytest.raises(RunDirError, match="trace_link.parquet"):
        r.link_events()
    (broken / "trace_tcp.parquet").write_text("not parquet")
    with pytest.raises(RunDirError, match="trace_tcp.parquet"):
        r.trace("a")


def test_send_window_is_min_of_send_buffer_and_advertised_window(plots_real_dirs):
    """000 §3.5 / 001 Fig 2: the send window line is min(send buffer, advertised window). The
    Brakmo runs send from a 50 KB buffer; Reno and Vegas advertise 65535 bytes, the Lite rows
    51200 (their 50 KB receive buffer, issue 31), on every variant's graph."""
    for name in ("brakmo-reno", "brakmo-vegas", "brakmo-lite.0"):
        run = RunData.load(plots_real_dirs[name])
        assert run.trace("transfer")["snd_wnd"].max() == (51200 if "lite" in name else 65535)
        assert run.flow("transfer")["send_buffer_bytes"] == 50 * 1024
        fig = plots.tcp_graph(run, "transfer")
        y = np.asarray(plots.find_gid(fig, "line-sndwnd")[0].get_ydata(), dtype=float)
        assert y.max() == 50.0, name


def test_plot_out_file_with_several_flows_writes_one_file_each_beside_it(plots_synth_dirs, tmp_path):
    """`tcplab plot --out x.png` on a run of three flows made a directory named x.png (issue 23):
    each graph goes beside it as x-<flow>.png, and the terminal says which files were written."""
    import subprocess
    import sys
    d = plots_synth_dirs["multi"]
    out = tmp_path / "x.png"
    p = subprocess.run([sys.executable, "-m", "tcplab.cli", "plot", str(d), "--out", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert not out.exists()
    written = [tmp_path / f"x-{c}.png" for c in RunData.load(d).conns]
    assert len(written) == 3
    assert p.stdout.split() == [str(w) for w in written]
    for w in written:
        _check_format(w, "png")
    assert "x-<name>.png" in p.stderr and "3 graphs" in p.stderr
