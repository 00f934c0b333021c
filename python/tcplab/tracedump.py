"""`tcplab trace RUN_DIR --conn NAME --from T --to T`: a TCP trace in "excruciating detail"
(seed 000 §2.3) as text, one line per record, CAM decisions interleaved."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

import polars as pl

from .textable import Columns


def dump(run_dir: Path, conn: str, t_from: float | None, t_to: float | None, side: str = "both", out: TextIO = sys.stdout,
         fmt: str = "text") -> None:
    from .rundir import RunData
    rd = RunData.load(run_dir)  # checks the completion marker and every file's hash
    path = Path(run_dir) / "trace_tcp.parquet"
    if not rd.has_tcp:
        raise FileNotFoundError(f"{path}: no TCP trace in this run (set run.trace.tcp = true in the scenario)")
    df = rd.tcp_all()
    conns = sorted(df["conn"].unique().to_list())
    if conn not in conns:
        raise ValueError(f"{path}: no connection named {conn} (connections: {', '.join(conns)})")
    df = df.filter(pl.col("conn") == conn)
    if side != "both":
        df = df.filter(pl.col("side") == side)
    if t_from is not None:
        df = df.filter(pl.col("t_s") >= t_from)
    if t_to is not None:
        df = df.filter(pl.col("t_s") <= t_to)
    if fmt == "csv":
        # The same rows as the text dump, every trace_tcp column, for spreadsheets and pandas.
        out.write(df.write_csv())
        return
    cam_path = Path(run_dir) / "trace_cam.parquet"
    cam = rd.cam(conn) if cam_path.exists() else None
    if cam is not None:
        if t_from is not None:
            cam = cam.filter(pl.col("t_s") >= t_from)
        if t_to is not None:
            cam = cam.filter(pl.col("t_s") <= t_to)
    table = Columns([("time s", 12, ".6f"), ("side", 4, ""), ("event", 16, ""), ("seq", 9, "d"), ("len", 5, "d"),
                     ("snd_una", 9, "d"), ("snd_nxt", 9, "d"), ("cwnd", 7, "d"), ("ssthresh", 8, "d"), ("snd_wnd", 7, "d"),
                     ("unacked", 7, "d"), ("srtt ms", 8, ".1f"), ("rto ms", 8, ".1f")])
    print(table.header(), file=out)
    print(table.rule(), file=out)
    lines = []
    for r in df.iter_rows(named=True):
        lines.append((r["t_s"], 0, table.row(r["t_s"], r["side"], r["kind"], r["seq"], r["len"], r["snd_una"], r["snd_nxt"],
                                            r["cwnd"], r["ssthresh"], r["snd_wnd"], r["unacked"], r["srtt_s"] * 1e3,
                                            r["rto_s"] * 1e3)))
    names = {-1: "decrease", 0: "hold", 1: "increase", 2: "ss-grow", 3: "leave-ss"}
    if cam is not None:
        for r in cam.iter_rows(named=True):
            lines.append((r["t_s"], 1, f"{r['t_s']:12.6f} {'snd':4} {'cam':16} expected {r['expected_KBps']:.1f} KB/s, actual "
                         f"{r['actual_KBps']:.1f} KB/s, diff {r['diff_buffers']:.2f} buffers (alpha {r['alpha']:g}, beta "
                         f"{r['beta']:g}) -> {names.get(r['decision'], r['decision'])}"))
    lines.sort(key=lambda x: (x[0], x[1]))
    for _, _, text in lines:
        print(text, file=out)
    print(f"({len(lines)} records)", file=out)
