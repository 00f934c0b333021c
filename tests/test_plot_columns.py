"""Issue 28: the graphs read a run's traces as numpy columns through the core
(``tcplab._core.read_parquet_columns``, :mod:`tcplab.cols`) instead of polars. What they read
must be what polars reads: every value, every null, the same rows of a filter, in every layout a
Parquet writer may choose (dictionary or plain strings, data pages v1 and v2, several pages and row
groups); a file the core cannot read is left to polars."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tcplab.cols import Cols, read_parquet
from tcplab.rundir import RunData

_FRAME = pl.DataFrame({
    "conn": ["a", "b", "a", None, "b", "a", "c", "a"] * 700,
    "t_s": [0.5, 1.0, 1.5, 2.0, float("nan"), 3.0, 3.5, 4.0] * 700,
    "kind": ["send", "ack", None, "send", "retransmit", "dupack", "send", "ack"] * 700,
    "seq": [1, None, 3, 4, 5, 6, 7, 2**40] * 700,
    "small": pl.Series([1, 2, 3, 4, 5, 6, 7, 8] * 700, dtype=pl.Int8),
    "flag": [True, False, True, True, False, None, True, False] * 700,
})


def _same(got, df: pl.DataFrame, where=None) -> None:
    want = df.with_row_index("__row")
    if where is not None:
        want = want.filter(pl.col(where[0]) == where[1])
    assert got is not None
    assert got.cols.height == want.height and got.rows.tolist() == want["__row"].to_list()
    for c in df.columns:
        if where is not None and c == where[0]:
            continue
        a, w = got.cols[c], want[c]
        null = got.nulls.get(c, np.zeros(len(a), dtype=bool))
        assert null.tolist() == w.is_null().to_list(), c
        if w.dtype == pl.String:
            assert a.tolist() == w.fill_null("").to_list(), c
        else:
            assert np.array_equal(a.astype(float), w.cast(pl.Float64).to_numpy(), equal_nan=True), c


@pytest.mark.parametrize("layout", ["polars", "plain-v1", "dict-v2", "plain-v2-pages"])
def test_columns_read_through_the_core_are_what_polars_reads(tmp_path, layout):
    p = tmp_path / "t.parquet"
    if layout == "polars":
        _FRAME.write_parquet(p, row_group_size=1000)
    else:
        pq.write_table(_FRAME.to_arrow(), p, use_dictionary=layout.startswith("dict"),
                       data_page_version="2.0" if "v2" in layout else "1.0", compression="zstd",
                       row_group_size=1500, data_page_size=512 if "pages" in layout else None)
    df = pl.read_parquet(p)
    _same(read_parquet(p, df.columns), df)
    for where in (("conn", "a"), ("kind", "send"), ("conn", "nosuch")):
        _same(read_parquet(p, df.columns, where), df, where)


def test_a_file_the_core_cannot_read_is_left_to_polars(tmp_path):
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"t_s": [1.0, 2.0], "conn": ["a", "b"]}), p, compression="gzip")
    assert read_parquet(p, ["t_s"]) is None  # a codec the core is not built with
    q = tmp_path / "junk.parquet"
    q.write_bytes(b"PAR1 not really")
    assert read_parquet(q, ["t_s"]) is None
    assert read_parquet(p.with_name("absent.parquet"), ["t_s"]) is None


def _same_run(d, every_flow: bool = False) -> None:
    fast, slow = RunData.load(d), RunData.load(d)
    if every_flow:
        fast.every_flow_cols()  # one pass over the file for every flow
    for c in fast.conns if fast.has_tcp else []:
        for side in ("snd", "rcv", None):
            got, want = fast.trace_cols(c, side), slow.trace(c, side)
            assert got.height == want.height, (d, c, side)
            for col in got.columns:
                w = want[col]
                if w.dtype == pl.String:
                    assert got[col].tolist() == w.to_list(), (d, c, side, col)
                else:
                    assert np.array_equal(got[col].astype(float), w.cast(pl.Float64).to_numpy()), (d, c, side, col)
        cam_got, cam_want = fast.cam_cols(c), slow.cam(c)
        assert cam_got.height == cam_want.height
        if cam_want.height:
            assert np.array_equal(cam_got["expected_KBps"], cam_want["expected_KBps"].to_numpy())
    for link in fast.link_names if fast.has_link else []:
        got, want = fast.link_cols(link), slow.link_events(link)
        assert got["t_s"].tolist() == want["t_s"].to_list() and got["event"].tolist() == want["event"].to_list()
        for interval in (None, 0.1, 0.15):
            q, w = fast.queue_cols(link, interval), slow.queue(link, interval=interval)
            for col in w.columns:
                assert np.allclose(q[col].astype(float), w[col].to_numpy().astype(float), rtol=1e-12, atol=1e-12)


def test_a_runs_columns_are_its_frames_rows(plots_real_dirs):
    """RunData's numpy columns (what the graphs draw) hold the rows of its polars accessors, in
    the same order, for every flow and side, link, Vegas CAM and the queue statistics."""
    for name in ("vegas-late-starter", "two-lan", "udp-dumbbell"):
        _same_run(plots_real_dirs[name])
        _same_run(plots_real_dirs[name], every_flow=True)


def test_the_native_writers_files_read_the_same(tmp_path):
    """`tcplab run` (the native binary) writes its Parquet with the Rust writer, not polars."""
    from tcplab._front import native_binary
    exe = native_binary()
    if exe is None:
        pytest.skip("no native binary (make setup builds it)")
    from pathlib import Path
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "examples" / "vegas-late-starter.toml"
    subprocess.run([exe, "run", str(scenario), "--out", str(tmp_path / "r")], check=True, capture_output=True)
    _same_run(tmp_path / "r")
    for f in ("trace_tcp", "trace_link", "queue_intervals"):
        p = tmp_path / "r" / f"{f}.parquet"
        if p.is_file():
            df = pl.read_parquet(p)
            _same(read_parquet(p, df.columns), df)


def test_cols_from_a_polars_frame():
    c = Cols.from_polars(_FRAME)
    assert c.height == _FRAME.height and c["conn"][3] == "" and np.isnan(c["seq"][1])
    assert c.where("kind", ["send", "ack"]).height == _FRAME.filter(pl.col("kind").is_in(["send", "ack"])).height


def test_a_plot_imports_no_polars(plots_real_dirs, tmp_path):
    d = plots_real_dirs["vegas-late-starter"]
    code = ("import sys; from tcplab.plots import plot_cli; "
            f"[plot_cli({str(d)!r}, kind=k, out={str(tmp_path)!r} + '/' + k + '.png') for k in ('tcp', 'seq', 'link', 'queue', 'flows')]; "
            "print('polars' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
