"""Draw seed 003 Figs 5-7 from a `tcplab reproduce kelly/dynamics --out OUT` output: for each
run (rtt-256ms = Fig 5, rtt-16ms = Fig 6, heterogeneous = Fig 7) the work arrival, work
forwarded and marking rate per 1 s interval (top) and the queue's minimum, maximum and average
per 1 s (bottom), from OUT/<variant>/queue_intervals.parquet of the bottleneck R1->R2.
Usage: python plot.py OUT  (writes OUT/dynamics.png)."""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl

RUNS = (("rtt-256ms", "Fig 5: RTT 256 ms"), ("rtt-16ms", "Fig 6: RTT 16 ms"), ("heterogeneous", "Fig 7: RTTs 4-512 ms"))
CAPACITY_BPS = 30e6


def main(out: Path) -> Path:
    fig, axes = plt.subplots(2, 3, figsize=(15, 6), sharex=True)
    for col, (name, title) in enumerate(RUNS):
        iv = pl.read_parquet(out / name / "queue_intervals.parquet").filter(pl.col("link") == "R1->R2").sort("t_s")
        dt = iv["t_s"].diff().drop_nulls().median() or 1.0
        t = iv["t_s"].to_numpy()
        top, bottom = axes[0][col], axes[1][col]
        top.plot(t, iv["bytes_in"].to_numpy() * 8 / CAPACITY_BPS / dt, lw=0.8, label="work arrival")
        top.plot(t, iv["bytes_out"].to_numpy() * 8 / CAPACITY_BPS / dt, lw=0.8, label="work forwarded")
        ect = iv["ect_in"].to_numpy()
        marks = iv["ce_marks"].to_numpy()
        top.plot(t, [m / e if e else 0.0 for m, e in zip(marks, ect)], lw=0.8, label="marking rate")
        top.set_ylim(0, 1.05)
        top.set_title(title, fontsize=10)
        bottom.plot(t, iv["max_pkts"].to_numpy(), lw=0.6, color="#c44", label="max")
        bottom.plot(t, iv["avg_pkts"].to_numpy(), lw=0.8, color="k", label="average")
        bottom.plot(t, iv["min_pkts"].to_numpy(), lw=0.6, color="#4a4", label="min")
        bottom.set_xlabel("time (s)")
    axes[0][0].set_ylabel("fraction of capacity / marks")
    axes[1][0].set_ylabel("queue (packets)")
    axes[0][0].legend(fontsize=8, loc="lower right")
    axes[1][0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path = out / "dynamics.png"
    fig.savefig(path, dpi=100)
    return path


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
