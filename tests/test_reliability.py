"""Issue 15: runs that never lie. Each test reproduces one finding of the fuzzing campaign
(numbers as in the issue): a complete run directory or a one-line located error, nothing between.
"""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import polars as pl
import pytest

from tcplab import cli
from tcplab.api import Scenario
from tcplab import rundir
from tcplab.rundir import RunData, RunDirError

HERE = Path(__file__).resolve().parent

SMALL = """name = "small"
[run]
duration = "3s"
trace = {{ tcp = true, links = ["all"] }}
{run_extra}

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "b"
kind = "host"

[[links]]
a = "a"
b = "b"
rate = "2Mbps"
delay = "20ms"
queue = {{ limit = "20pkts" }}

[[tcp]]
name = "t"
from = "a"
to = "b"
variant = "{variant}"
bytes = "{bytes}"
{tcp_extra}
"""


def small(tmp_path: Path, name: str = "small.toml", *, run_extra: str = "", variant: str = "reno", bytes: str = "200KB",
          tcp_extra: str = "") -> Path:
    p = tmp_path / name
    p.write_text(SMALL.format(run_extra=run_extra, variant=variant, bytes=bytes, tcp_extra=tcp_extra))
    return p


def main(*args: str) -> tuple[int, str, str]:
    """`tcplab ARGS` in-process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main([str(a) for a in args])
        except SystemExit as e:  # argparse
            code = e.code
    return code, out.getvalue(), err.getvalue()


def tcplab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "tcplab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tcplab.cli"]


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------------------- finding 1 (CLI view)
def test_min_rto_above_the_largest_rto_is_a_located_error(tmp_path):
    p = small(tmp_path, variant="newreno", tcp_extra='min_rto = "61s"')
    for cmd in ("validate", "run"):
        code, _, err = main(cmd, p, *(["--out", tmp_path / "o"] if cmd == "run" else []))
        assert code == 2
        line = one_line_error(err)
        assert f"{p}:" in line and "tcp[0].min_rto" in line and "60s" in line
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------- finding 2
@pytest.mark.parametrize("deep", ["x = " + "[" * 500 + "]" * 500, "x = " + "{a = " * 400 + "1" + "}" * 400])
def test_deep_nesting_is_a_scenario_error_not_a_recursion_error(tmp_path, deep):
    sc = Scenario.from_toml(deep, source="deep.toml")  # used to raise RecursionError
    with pytest.raises(ValueError) as ei:
        sc.validate()
    assert "deep.toml" in str(ei.value)
    p = tmp_path / "deep.toml"
    p.write_text(deep + "\n")
    code, _, err = main("validate", p)
    assert code == 2
    assert f"{p}:1:" in one_line_error(err)


# ---------------------------------------------------------------------------- finding 5 (Python side)
def test_invalid_utf8_names_its_line(tmp_path):
    p = tmp_path / "latin1.toml"
    p.write_bytes(b'name = "x"\n[run]\nduration = "1s"\n# caf\xe9\n')
    code, _, err = main("validate", p)
    assert code == 2
    assert f"{p}:4:" in one_line_error(err)


# ---------------------------------------------------------------------------- finding 6
def test_out_under_a_file_or_onto_a_file_is_one_line(tmp_path):
    p = small(tmp_path)
    f = tmp_path / "plain"
    f.write_text("keep me\n")
    for out in (f / "sub", f):
        code, _, err = main("run", p, "--out", out)
        assert code == 2
        one_line_error(err)
    assert f.read_text() == "keep me\n"


def test_full_disk_leaves_nothing_that_looks_like_a_result(tmp_path, monkeypatch):
    p = small(tmp_path)
    out = tmp_path / "run"

    def full(self, path, *a, **k):
        Path(path).write_bytes(b"PAR1 trunc")  # what a full disk leaves: a partial file
        raise pl.exceptions.ComputeError("failed to write: No space left on device (os error 28)")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    code, _, err = main("run", p, "--out", out)
    assert code == 2
    assert "No space left" in one_line_error(err)
    assert not out.exists()
    assert not [q for q in tmp_path.iterdir() if q.name.startswith(".run")], list(tmp_path.iterdir())


def test_read_only_file_system_is_one_line(tmp_path, monkeypatch):
    import errno
    import tempfile

    def ro(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system", str(k.get("dir", tmp_path)))

    monkeypatch.setattr(tempfile, "mkdtemp", ro)
    code, _, err = main("run", small(tmp_path), "--out", tmp_path / "run")
    assert code == 2
    assert "Read-only file system" in one_line_error(err)
    assert not (tmp_path / "run").exists()


def test_trace_on_a_corrupt_parquet_file_is_one_line(tmp_path):
    p = small(tmp_path)
    out = tmp_path / "run"
    assert main("run", p, "--out", out)[0] == 0
    (out / "trace_tcp.parquet").write_bytes(b"\x00garbage" * 100)
    code, _, err = main("trace", out, "--conn", "t")
    assert code == 2
    assert "trace_tcp.parquet" in one_line_error(err)


# ---------------------------------------------------------------------------- finding 7
def test_run_directory_has_a_marker_with_hashes(tmp_path):
    out = tmp_path / "run"
    assert main("run", small(tmp_path), "--out", out)[0] == 0
    marker = json.loads((out / rundir.MARKER).read_text())
    files = {f["name"] for f in marker["files"]}
    assert {"summary.json", "scenario.toml", "trace_tcp.parquet", "trace_link.parquet", "queue_intervals.parquet"} <= files
    assert all(len(f["sha256"]) == 64 and f["bytes"] > 0 for f in marker["files"])
    RunData.load(out)


def test_readers_refuse_a_directory_without_the_marker(tmp_path):
    out = tmp_path / "run"
    assert main("run", small(tmp_path), "--out", out)[0] == 0
    (out / rundir.MARKER).unlink()
    with pytest.raises(RunDirError, match="not a complete tcplab run"):
        RunData.load(out)
    for args in (("report", out), ("plot", out), ("trace", out, "--conn", "t")):
        code, _, err = main(*args)
        assert code == 2, args
        assert "not a complete tcplab run" in one_line_error(err)
    assert not (out / "report.html").exists()


def test_a_crash_during_save_leaves_the_previous_run(tmp_path, monkeypatch):
    p = small(tmp_path)
    out = tmp_path / "run"
    assert main("run", p, "--out", out, "--seed", "1")[0] == 0
    before = {f.name: f.read_bytes() for f in out.iterdir()}
    calls = []

    def dies(self, path, *a, **k):
        calls.append(path)
        raise KeyboardInterrupt  # stands for kill -9 between two files

    monkeypatch.setattr(pl.DataFrame, "write_parquet", dies)
    assert main("run", p, "--out", out, "--seed", "2")[0] == 130
    assert calls
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before
    RunData.load(out)


def test_kill_9_at_any_moment_leaves_old_or_new_complete(tmp_path):
    p = small(tmp_path, bytes="3MB", run_extra='monitor_interval = "1ms"')
    p.write_text(p.read_text().replace('duration = "3s"', 'duration = "30s"'))
    out = tmp_path / "run"
    subprocess.run([*tcplab_cmd(), "run", str(p), "--out", str(out), "--seed", "1"], check=True, capture_output=True)
    t0 = time.monotonic()
    subprocess.run([*tcplab_cmd(), "run", str(p), "--out", str(tmp_path / "timing"), "--seed", "2"], check=True, capture_output=True)
    full = time.monotonic() - t0
    seeds = set()
    for k in range(8):
        proc = subprocess.Popen([*tcplab_cmd(), "run", str(p), "--out", str(out), "--seed", str(2 + k % 2)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(full * (0.3 + 0.7 * k / 8))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        rd = RunData.load(out)  # complete, whatever moment the kill hit
        seeds.add(rd.summary["seed"])
        marker = json.loads((out / rundir.MARKER).read_text())
        assert {f["name"] for f in marker["files"]} <= {q.name for q in out.iterdir()}
        assert rd.trace("t").height > 0
    assert seeds <= {1, 2, 3}


# ---------------------------------------------------------------------------- finding 8
def test_report_never_replaces_a_device_or_fifo(tmp_path):
    out = tmp_path / "run"
    assert main("run", small(tmp_path), "--out", out)[0] == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    targets = [fifo] + ([Path("/dev/full")] if os.path.exists("/dev/full") else [])
    for t in targets:
        mode = os.stat(t).st_mode
        code, _, err = main("report", out, "--out", t)
        assert code == 2
        assert "not a regular file" in one_line_error(err)
        assert os.stat(t).st_mode == mode
        assert not stat.S_ISREG(os.stat(t).st_mode)
    code, _, err = main("plot", out, "--out", fifo.with_suffix(".png").parent / "fifo")
    assert code == 2


def test_run_never_replaces_a_directory_tcplab_did_not_make(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious\n")
    code, _, err = main("run", small(tmp_path), "--out", out)
    assert code == 2
    assert "not a tcplab run directory" in one_line_error(err)
    assert (out / "thesis.tex").read_text() == "precious\n"


# ---------------------------------------------------------------------------- finding 10
def test_random_bytes_in_queue_intervals_are_refused(tmp_path):
    out = tmp_path / "run"
    assert main("run", small(tmp_path), "--out", out)[0] == 0
    q = out / "queue_intervals.parquet"
    data = bytearray(q.read_bytes())
    for i in range(len(data) // 3, len(data) // 3 + 40):
        data[i] ^= 0x5A
    q.write_bytes(bytes(data))
    with pytest.raises(RunDirError, match="queue_intervals.parquet"):
        RunData.load(out)
    code, _, err = main("report", out)
    assert code == 2 and "queue_intervals.parquet" in one_line_error(err)


@pytest.mark.parametrize("value", [float("nan"), -1.0])
def test_nan_or_negative_trace_values_are_refused(tmp_path, value):
    out = tmp_path / "run"
    assert main("run", small(tmp_path), "--out", out)[0] == 0
    p = out / "trace_tcp.parquet"
    df = pl.read_parquet(p)
    df = df.with_columns(pl.when(pl.int_range(pl.len()) == 5).then(value).otherwise(pl.col("t_s")).alias("t_s"))
    df.write_parquet(p)
    rundir.seal(out)  # a valid marker: the content itself is wrong
    rd = RunData.load(out)
    with pytest.raises(RunDirError, match="t_s"):
        rd.trace("t")
    code, _, err = main("plot", out)
    assert code == 2 and "t_s" in one_line_error(err)


# ---------------------------------------------------------------------------- resource guards
def test_timeout_stops_the_run_cleanly(tmp_path):
    p = small(tmp_path, bytes="1000GB")
    p.write_text(p.read_text().replace('duration = "3s"', 'duration = "100000s"').replace('rate = "2Mbps"', 'rate = "1Gbps"')
                 .replace("trace = { tcp = true, links = [\"all\"] }", ""))
    out = tmp_path / "run"
    t0 = time.monotonic()
    code, _, err = main("run", p, "--out", out, "--timeout", "1")
    wall = time.monotonic() - t0
    assert code == 2
    assert "--timeout 1 s" in one_line_error(err)
    assert wall < 10, wall
    assert not out.exists()


def test_max_memory_refuses_before_starting(tmp_path):
    p = small(tmp_path)
    for cmd in ("validate", "run"):
        code, _, err = main(cmd, p, "--max-memory", "1MB", *(["--out", tmp_path / "o"] if cmd == "run" else []))
        assert code == 2
        line = one_line_error(err)
        assert "--max-memory 1 MB" in line and f"{p}:" in line
    assert not (tmp_path / "o").exists()
    assert main("validate", p, "--max-memory", "1GB")[0] == 0
    code, _, err = main("validate", p, "--max-memory", "lots")
    assert code == 2
