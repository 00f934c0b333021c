"""RunData reads one connection's or one link direction's trace rows alone when that is all it
is asked for (issue 13: a plot of one flow no longer reads and checks the whole link trace). The
rows are the ones the whole table gives, and a bad value is still refused, named by its row in
the file."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import tcplab
from tcplab import rundir
from tcplab.rundir import RunData, RunDirError

ROOT = Path(__file__).resolve().parent.parent
LATE = ROOT / "scenarios" / "examples" / "vegas-late-starter.toml"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("partial") / "run"
    tcplab.run(LATE, seed=1, overrides={"run.duration": "8s", "run.trace.tcp": True, "run.trace.links": ["all"]}, out=out)
    return out


def test_rows_read_alone_equal_the_whole_table(run_dir):
    whole = RunData.load(run_dir)
    whole.tcp_all()  # the whole TCP trace is read: trace() filters it
    whole.link_events()  # the same for the link trace
    assert whole._tcp is not None and whole._link is not None
    assert len(whole.conns) >= 2 and len(whole.link_names) >= 4
    rows = 0
    for conn in whole.conns:
        for side in ("snd", "rcv", None):
            part = RunData.load(run_dir)
            got = part.trace(conn, side)
            assert part._tcp is None  # read alone, not through the whole table
            assert got.equals(whole.trace(conn, side)), (conn, side)
            rows += got.height
    assert rows > 1000
    for link in whole.link_names:
        part = RunData.load(run_dir)
        got = part.link_events(link)
        assert part._link is None
        assert got.equals(whole.link_events(link)), link
        rows += got.height
        assert part.queue(link).equals(whole.queue(link))
    # A name that is not a direction ("a-b" spellings, link names) still resolves as before.
    part = RunData.load(run_dir)
    assert part.link_events(part.bottleneck).height > 0


def test_a_bad_value_is_refused_with_its_row_in_the_file(run_dir, tmp_path):
    out = tmp_path / "bad"
    import shutil
    shutil.copytree(run_dir, out)
    p = out / "trace_tcp.parquet"
    df = pl.read_parquet(p)
    conn = df["conn"][df.height - 1]  # a row near the end, of the last connection
    row = df.height - 3
    assert df["conn"][row] == conn
    df = df.with_columns(pl.when(pl.int_range(pl.len()) == row).then(-1.0).otherwise(pl.col("srtt_s")).alias("srtt_s"))
    df.write_parquet(p)
    rundir.seal(out)
    with pytest.raises(RunDirError, match=rf"column srtt_s row {row} holds -1\.0"):
        RunData.load(out).trace(conn, None)
    # Another connection's rows are fine and read as before.
    other = next(c for c in RunData.load(out).conns if c != conn)
    assert RunData.load(out).trace(other).height > 0
    # The whole table names the same row.
    with pytest.raises(RunDirError, match=rf"column srtt_s row {row} holds -1\.0"):
        RunData.load(out).tcp_all()


def test_an_unreadable_or_incomplete_file_is_refused(run_dir, tmp_path):
    import shutil
    out = tmp_path / "broken"
    shutil.copytree(run_dir, out)
    (out / "trace_link.parquet").write_text("not parquet")
    rundir.seal(out)
    r = RunData.load(out)
    with pytest.raises(RunDirError, match="trace_link.parquet: cannot read link trace"):
        r.link_events(r.bottleneck)
    pl.read_parquet(run_dir / "trace_tcp.parquet").drop("cwnd").write_parquet(out / "trace_tcp.parquet")
    rundir.seal(out)
    r = RunData.load(out)
    with pytest.raises(RunDirError, match=r"missing column\(s\) \['cwnd'\]"):
        r.trace(r.conns[0])
