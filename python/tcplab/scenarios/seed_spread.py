"""Seed-spread evidence for a reproduction's misses (issue 31): is the paper's mean a sampling draw
away from ours, and what does the mechanism (timeouts, background load, LAN model) look like?

    python scenarios/seed_spread.py FOLDER --paper-runs N [--seeds S] [--out FOLDER/spread.md]

FOLDER is a reproduction (``scenarios/<group>/<experiment>``). Every variant with paper numbers is
run over the reproduction's own axes × seeds 1..S (default: its seed list), exactly as
``tcplab reproduce`` runs it, and per metric the table gives our mean, our per-run standard
deviation s, min and max, and the 95 % bound on the difference of our mean and another mean of the
same experiment over the paper's N runs: 1.96 · s · sqrt(1/n + 1/N) (s is the only estimate of the
paper's spread there is; the papers give no spread). A number with |ours − paper| within the bound
is a sampling difference, not a model difference ("within"). A number outside it is not explained
by sampling; the second table then gives what the runs measured about the mechanism: coarse
timeouts, the background's bottleneck throughput, the bottleneck's utilization, each on the
Ethernet (main) and point-to-point (``-p2p``) readings side by side.

``--sweep KEY=V1,V2,...`` (with ``--sweep-seeds M``, default 10) reruns each number that is not
*within* at every value of a parameter the paper does not pin (e.g. the background's offered load,
of which the papers give only a range): *bracketed* = the paper's mean lies between the lowest and
highest of the sweep's means, i.e. a value of that unstated parameter inside its plausible range
gives the paper's number; the sweep shows it, it does not pick a value.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

from tcplab import evidence

MECHANISM = ("coarse_timeouts", "traffic.background.throughput_KBps", "links.Gateway1->Gateway2.utilization")


def run_variant(sp, v: dict, seeds: list[int], metrics: list[str], extra: dict | None = None) -> dict[str, list[float]]:
    import tcplab
    from tcplab.metrics import ExprError, compute_derived, resolve
    from tcplab.sweep import axis_points
    scen = (sp.folder / v["scenario"]) if v.get("scenario") else sp.scenario
    out: dict[str, list[float]] = {m: [] for m in metrics}
    at = v.get("axis_at", {})   # a variant whose scenario holds an axis' item elsewhere (`*-p2p` rows)
    for point in axis_points(sp.axes, sp.mode):
        point = {at.get(k, k): x for k, x in point.items()}
        for seed in seeds:
            s = tcplab.run(scen, seed=seed, overrides={**v.get("set", {}), **point, **(extra or {})}).summary
            try:
                d = compute_derived(sp.derived, s, sp.flow)
            except ExprError:   # a transfer that sent nothing (starved at a heavy load): no ratio
                d = {k: None for k in sp.derived}
            for m in metrics:
                try:
                    out[m].append(float(resolve(s, m, sp.flow, d)))   # None -> TypeError: skipped
                except Exception:   # a metric the scenario does not have (no background on a row)
                    pass
    return out


def _stats(xs: list[float]) -> tuple[float, float, float, float]:
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0), min(xs), max(xs)


def main(argv=None) -> int:
    from tcplab.reproduce import Spec
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--paper-runs", type=int, required=True, help="how many runs the paper's means are over")
    ap.add_argument("--seeds", type=int, help="seeds 1..S (default: the reproduction's seed list)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--sweep", help="KEY=V1,V2,...: an unstated parameter's plausible values")
    ap.add_argument("--sweep-seeds", type=int, default=10)
    a = ap.parse_args(argv)
    sp = Spec(a.folder.resolve())
    seeds = list(range(1, a.seeds + 1)) if a.seeds else list(sp.seeds)
    rows, mech = [], {}
    for v in sp.variants:
        paper = v.get("paper") or {}
        if not paper:
            continue
        metrics = list(dict.fromkeys([*paper, *MECHANISM]))
        vals = run_variant(sp, v, seeds, metrics)
        mech[v["name"]] = {m: statistics.fmean(vals[m]) for m in MECHANISM if vals.get(m)}
        for m, p in paper.items():
            mean, sd, lo, hi = _stats(vals[m])
            n = len(vals[m])
            bound = 1.96 * sd * math.sqrt(1 / n + 1 / a.paper_runs)
            rows.append((v["name"], m, p, mean, sd, lo, hi, n, bound))
    sweep_rows, key, values = [], None, []
    if a.sweep:
        key, _, vs = a.sweep.partition("=")
        values = [float(x) if x.replace(".", "", 1).isdigit() else x for x in vs.split(",")]
        by_name = {v["name"]: v for v in sp.variants}
        bg = MECHANISM[1]
        cache: dict[tuple, dict] = {}   # (variant, value) -> every paper metric and the background
        for name, m, p, mean, sd, lo, hi, n, bound in rows:
            if abs(mean - p) <= bound:
                continue
            for x in values:
                if (name, x) not in cache:
                    cache[(name, x)] = run_variant(sp, by_name[name], list(range(1, a.sweep_seeds + 1)),
                                                   [*by_name[name]["paper"], bg], {key: x})
            runs = [cache[(name, x)] for x in values]
            means = [statistics.fmean(r[m]) for r in runs]
            bgs = [statistics.fmean(r[bg]) if r[bg] else float("nan") for r in runs]
            sweep_rows.append((name, m, p, means, bgs))
    rel = a.folder.resolve().relative_to(Path(__file__).resolve().parent)
    cmd = f"python scenarios/seed_spread.py scenarios/{rel} --paper-runs {a.paper_runs}" + (f" --seeds {a.seeds}" if a.seeds else "") \
        + (f" --sweep {a.sweep} --sweep-seeds {a.sweep_seeds}" if a.sweep else "")
    lines = [f"# {rel}: seed spread and mechanism", "", f"Generated by `{cmd}` (its docstring says what each "
             "table tests).", "", "## Sampling", "",
             f"Per number: the paper's mean (over {a.paper_runs} runs), ours over n runs (axes × seeds "
             f"{seeds[0]}–{seeds[-1]}) with per-run standard deviation s, min and max, and the 95 % bound "
             f"1.96·s·√(1/n + 1/{a.paper_runs}) on the difference of two such means. *within* = the paper's "
             "mean is a sampling draw away from ours; *in range* = the paper's mean lies between our "
             "lowest and highest run.", "",
             "| variant | metric | paper | ours (mean) | s | min | max | n | 95 % bound | ours − paper | within | in range |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, m, p, mean, sd, lo, hi, n, bound in rows:
        lines.append(f"| {name} | {m} | {p:g} | {mean:.2f} | {sd:.2f} | {lo:.2f} | {hi:.2f} | {n} | {bound:.2f} | "
                     f"{mean - p:+.2f} | {'yes' if abs(mean - p) <= bound else 'no'} | {'yes' if lo <= p <= hi else 'no'} |")
    lines += ["", "## Mechanism", "",
              "Means over the same runs: coarse timeouts of the measured transfer, the background's throughput "
              "(KB/s) and the bottleneck's utilization; a `-p2p` row is the point-to-point reading of the LANs "
              "(docs/ethernet.md), beside its Ethernet row.", "",
              "| variant | coarse timeouts | background KB/s | bottleneck utilization |", "|---|---|---|---|"]
    for name, d in mech.items():
        cells = [f"{d[m]:.2f}" if m in d else "–" for m in MECHANISM]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if a.sweep:
        cmd_note = f"--sweep {a.sweep} --sweep-seeds {a.sweep_seeds}"
        lines += ["", "## Unstated parameter", "",
                  f"Each number that is not *within*, mean over axes × seeds 1–{a.sweep_seeds} at each value of "
                  f"`{key}` (`{cmd_note}`). *bracketed* = the paper's mean lies between the lowest and highest "
                  "of these means. In brackets: the background's mean throughput in KB/s at that value (what the "
                  "papers' load range is stated in, as a share of the bottleneck).", "",
                  "| variant | metric | paper | " + " | ".join(f"{key} = {x}" for x in values) + " | bracketed |",
                  "|---|---|---|" + "---|" * len(values) + "---|"]
        for name, m, p, means, bgs in sweep_rows:
            lines.append(f"| {name} | {m} | {p:g} | " + " | ".join(f"{x:.2f} ({b:.0f})" for x, b in zip(means, bgs)) +
                         f" | {'yes' if min(means) <= p <= max(means) else 'no'} |")
    evidence.write_markdown(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
