"""The L4S figure from a `tcplab reproduce modern/l4s --out OUT` output: the Prague/other goodput
ratio per RTT (log-log, 1 = equal rates) and Prague's queueing delay p99 per RTT (log, the 1 ms
line), one line per variant (mean over the seeds, min..max whiskers). Usage: python plot.py OUT
(writes OUT/l4s.png)."""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

RTTS = (5, 10, 20, 50, 100)
COLORS = {"dualpi2": "#7d3c98", "vq-mixed": "#b03a2e", "vq-prague": "#28b463"}


def main(out: Path) -> Path:
    out = Path(out)
    comp = json.loads((out / "comparison.json").read_text())
    rows = {(r["variant"], r["metric"]): r for r in comp["rows"]}
    variants = list(dict.fromkeys(r["variant"] for r in comp["rows"]))
    label = {r["variant"]: r.get("label", r["variant"]) for r in comp["rows"]}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    panels = (("ratio", "goodput ratio, Prague / other flow", 1.0), ("l4s_p99_ms", "Prague's queueing delay p99 (ms)", 1.0),
              ("utilization", "bottleneck utilization", None))
    for ax, (metric, ylabel, line) in zip(axes, panels):
        for v in variants:
            got = [rows.get((v, f"{metric}_rtt{r}")) for r in RTTS]
            ys = [g["ours"] if g else None for g in got]
            lo = [y - g.get("min", y) if g and y is not None else 0 for g, y in zip(got, ys)]
            hi = [g.get("max", y) - y if g and y is not None else 0 for g, y in zip(got, ys)]
            ax.errorbar(RTTS, ys, yerr=[lo, hi], marker="o", capsize=3, color=COLORS.get(v), label=label[v])
        if line is not None:
            ax.axhline(line, color="k", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xticks(RTTS, [str(r) for r in RTTS])
        ax.minorticks_off()
        ax.set_xlabel("base round-trip time (ms)")
        ax.set_ylabel(ylabel)
        if metric != "utilization":
            ax.set_yscale("log")
    axes[0].legend(fontsize=8)
    axes[1].set_title("1 ms dashed", fontsize=9)
    fig.suptitle(comp["title"], fontsize=10)
    fig.tight_layout()
    path = out / "l4s.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
