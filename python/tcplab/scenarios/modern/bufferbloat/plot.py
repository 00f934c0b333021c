"""The bufferbloat figure from a `tcplab reproduce modern/bufferbloat --out OUT` output: the
voice flow's one-way delay CDF per discipline (log time axis), bulk upload throughput bars (mean
over the seeds, min..max whiskers), and the short downloads' completion-time CDF — each from the
first seed's run directory OUT/<variant>/summary.json. Usage: python plot.py OUT (writes
OUT/bufferbloat.png)."""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

COLORS = {"droptail": "#b03a2e", "codel": "#2e86c1", "fq_codel": "#28b463", "pie": "#d68910", "dualpi2": "#7d3c98"}


def main(out: Path) -> Path:
    out = Path(out)
    comp = json.loads((out / "comparison.json").read_text())
    rows = {(r["variant"], r["metric"]): r for r in comp["rows"]}
    variants = list(dict.fromkeys(r["variant"] for r in comp["rows"]))
    label = {r["variant"]: r.get("label", r["variant"]) for r in comp["rows"]}
    fig, (ax_v, ax_b, ax_w) = plt.subplots(1, 3, figsize=(15, 4.4))
    for v in variants:
        s = json.loads((out / v / "summary.json").read_text())
        voice = next(u for u in s["udp"] if u["name"] == "voice")
        cdf = [x * 1000 for x in voice["delay"]["cdf_s"]]
        ax_v.step(cdf, [(i + 1) / len(cdf) for i in range(len(cdf))], where="post", color=COLORS.get(v), label=label[v])
        web = sorted(f["completion_s"] for f in s["flows"] if f["name"].startswith("web") and f["completion_s"] is not None)
        ax_w.step(web, [(i + 1) / len(web) for i in range(len(web))], where="post", color=COLORS.get(v), label=label[v])
    ax_v.set_xscale("log")
    ax_v.set_xticks([10, 20, 50, 100, 200, 500], ["10", "20", "50", "100", "200", "500"])
    ax_v.minorticks_off()
    ax_v.set_xlabel("voice one-way delay (ms, log)")
    ax_v.set_ylabel("fraction of packets")
    ax_v.set_title("voice (64 kbit/s UDP, upstream)", fontsize=10)
    ax_v.legend(fontsize=8, loc="lower right")
    means = [rows[(v, "bulk_Mbps")]["ours"] for v in variants]
    lo = [m - rows[(v, "bulk_Mbps")].get("min", m) for v, m in zip(variants, means)]
    hi = [rows[(v, "bulk_Mbps")].get("max", m) - m for v, m in zip(variants, means)]
    ax_b.bar([label[v].split(" (")[0] for v in variants], means, yerr=[lo, hi], capsize=3, color=[COLORS.get(v) for v in variants])
    ax_b.axhline(20, color="k", lw=0.8, ls="--")
    ax_b.set_ylabel("bulk upload throughput (Mbit/s, 4 CUBIC flows)")
    ax_b.set_title("throughput (line rate 20 Mbit/s dashed)", fontsize=10)
    ax_b.tick_params(axis="x", labelsize=8)
    ax_w.set_xscale("log")
    ax_w.set_xticks([0.1, 0.2, 0.5, 1, 2, 5], ["0.1", "0.2", "0.5", "1", "2", "5"])
    ax_w.minorticks_off()
    ax_w.set_xlabel("short download completion time (s, log)")
    ax_w.set_ylabel("fraction of transfers")
    ax_w.set_title("web-like downloads (SURGE sizes)", fontsize=10)
    fig.suptitle(comp["title"], fontsize=10)
    fig.tight_layout()
    path = out / "bufferbloat.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
