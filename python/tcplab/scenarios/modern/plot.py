"""Reproduce `scenarios/modern/` with plots (issue 26): runs every modern scenario with the TCP
trace on and draws, per scenario, each flow's cwnd and throughput over time, coloured by variant.
BBR v1's unfairness to CUBIC in a deep buffer shows in `bbr-cubic-deep.png` (BBR's flows hold
most of the link while CUBIC's windows collapse after each loss), `bbr3-cubic-deep.png` is the
same path with BBR v3. Usage: python plot.py OUT  (writes OUT/<scenario>/ and OUT/<scenario>.png;
prints the per-variant throughput shares)."""

import json
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
RUNS = [
    ("dumbbell-deep", "dumbbell-deep.toml", []),
    ("dumbbell-shallow", "dumbbell-shallow.toml", []),
    ("bbr-cubic-deep", "bbr-cubic-deep.toml", []),
    ("bbr3-cubic-deep", "bbr-cubic-deep.toml", ['tcp[0].cycle.variant=["bbr3", "cubic"]']),
    ("incast", "incast.toml", []),
]
COLOURS = {"cubic": "#4a7ab5", "newreno": "#999999", "bbr": "#c0392b", "bbr3": "#e67e22", "dctcp": "#27ae60", "modern": "#4a7ab5"}


def run(out: Path, name: str, toml: str, sets: list[str]) -> Path:
    d = out / name
    cmd = [str(Path(sys.executable).parent / "tcplab"), "run", str(HERE / toml), "--out", str(d), "--set", "run.trace.tcp=true"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return d


def draw(d: Path, title: str) -> tuple[Path, dict[str, float]]:
    summary = json.loads((d / "summary.json").read_text())
    variant = {f["name"]: f["variant"] for f in summary["flows"]}
    t = pq.read_table(d / "trace_tcp.parquet", columns=["conn", "side", "t_s", "cwnd", "snd_una"]).to_pandas()
    t = t[t.side == "snd"]
    end = t.t_s.max()
    bin_s = max(end / 80, 1e-4)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    seen = set()
    for conn, g in t.groupby("conn"):
        v = variant.get(conn, "?")
        label = v if v not in seen else None
        seen.add(v)
        c = COLOURS.get(v, None)
        a1.step(g.t_s, g.cwnd / 1460, where="post", color=c, lw=0.7, label=label)
        b = (g.t_s // bin_s).astype(int)
        acked = g.groupby(b).snd_una.max().diff().fillna(0)
        a2.plot(acked.index * bin_s, acked.values * 8 / bin_s / 1e6, color=c, lw=0.9)
    a1.set_ylabel("cwnd (segments)")
    a2.set_ylabel("throughput (Mbit/s)")
    a2.set_xlabel("time (s)")
    a1.legend(fontsize=8)
    a1.set_title(title, fontsize=10)
    fig.tight_layout()
    path = d.parent / f"{d.name}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    shares: dict[str, float] = {}
    for f in summary["flows"]:
        shares[f["variant"]] = shares.get(f["variant"], 0.0) + f["throughput_KBps"] * 8 / 1000
    return path, shares


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, toml, sets in RUNS:
        path, shares = draw(run(out, name, toml, sets), f"modern/{name}")
        print(path, ", ".join(f"{v} {mbps:.1f} Mbit/s" for v, mbps in shares.items()))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
