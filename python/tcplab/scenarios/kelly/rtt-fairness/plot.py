"""Draw seed 003 Figs 8-9 from a `tcplab reproduce kelly/rtt-fairness --out OUT` output:
normalised goodput per RTT group (mean over the runs, min..max bars) for ECN-TCP over adaptive
RED beside scalable-ecn over the VQ marker. Usage: python plot.py OUT  (writes OUT/rtt-fairness.png)."""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

GROUPS = (16, 32, 64, 128, 256)


def main(out: Path) -> Path:
    rows = json.loads((out / "comparison.json").read_text())["rows"]
    get = {(r["variant"], r["metric"]): r for r in rows}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (v, title) in zip(axes, (("ecn-tcp", "Fig 8: ECN-TCP over adaptive RED"), ("scalable", "Fig 9: scalable-ecn over VQ"))):
        means = [get[(v, f"norm_{g}")]["ours"] for g in GROUPS]
        lo = [m - get[(v, f"norm_{g}")].get("min", m) for g, m in zip(GROUPS, means)]
        hi = [get[(v, f"norm_{g}")].get("max", m) - m for g, m in zip(GROUPS, means)]
        ax.bar([str(g) for g in GROUPS], means, yerr=[lo, hi], color="#4a7ab5", capsize=3)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("round-trip time (ms)")
    axes[0].set_ylabel("normalised goodput (group mean / overall mean)")
    fig.tight_layout()
    path = out / "rtt-fairness.png"
    fig.savefig(path, dpi=110)
    return path


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
