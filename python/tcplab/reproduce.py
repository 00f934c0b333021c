"""`tcplab reproduce EXPERIMENT`: run every variant of a seed reproduction and set ours beside the paper.

An experiment folder holds `scenario.toml` and `reproduce.toml`::

    title = "..."
    scenario = "scenario.toml"
    flow = "transfer"                       # the flow whose metrics are compared
    [[variants]]
    name = "reno"
    set = { "tcp[0].variant" = "reno" }     # overrides applied to the scenario
    paper = { throughput_KBps = 123.0 }     # published numbers (metric names = summary.json flow fields)
    source = "seed 000 §4.1, Fig 4.1"
"""

from __future__ import annotations

import json
import sys
import time
import tomllib
from pathlib import Path

from .api import run
from .paths import find_experiment

#: Metrics always reported for each variant, published or not.
STANDARD_METRICS = ["throughput_KBps", "completion_s", "retransmitted_segments", "retransmitted_bytes",
                    "coarse_timeouts", "coarse_timeout_times_s", "fast_retransmits"]


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, list):  # e.g. coarse_timeout_times_s
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, float):
        return f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"
    return str(v)


def reproduce(experiment: str, out: Path | None = None, seed: int | None = None, report: bool = True,
              seeds: int = 1) -> int:
    """Run every variant; with `seeds` > 1 also run seeds base+1 .. base+seeds-1 of each (the base
    seed's run is the one saved and drawn) and report each metric's min and max over them
    (seed 000 §6.2.2: look at the extremes, not just one run)."""
    if seeds < 1:
        raise ValueError(f"--seeds must be at least 1, got {seeds}")
    folder = find_experiment(experiment)
    spec = tomllib.loads((folder / "reproduce.toml").read_text())
    scenario = folder / spec.get("scenario", "scenario.toml")
    flow_name = spec.get("flow")
    out = Path(out) if out else Path("runs") / "reproduce" / experiment.replace("/", "_")
    out.mkdir(parents=True, exist_ok=True)
    print(f"{spec.get('title', experiment)}\n  scenario {scenario}\n  output   {out}\n", flush=True)

    def pick_flow(summary: dict, name: str) -> dict:
        flows = summary["flows"]
        flow = next((f for f in flows if f["name"] == flow_name), flows[0] if flows else None)
        if flow is None:
            raise ValueError(f"{scenario}: variant {name} has no TCP flow to compare")
        return flow

    rows, runs = [], {}
    for v in spec["variants"]:
        name = v["name"]
        t0 = time.perf_counter()
        print(f"  running {name:<12}", end="", flush=True)
        r = run(scenario, seed=seed, overrides=v.get("set", {}), out=out / name)
        runs[name] = out / name
        flow = pick_flow(r.summary, name)
        base = r.summary["seed"]
        others = [pick_flow(run(scenario, seed=base + k, overrides=v.get("set", {})).summary, name) for k in range(1, seeds)]
        print(f" done in {time.perf_counter() - t0:.2f} s" + (f" ({seeds} seeds from {base})" if seeds > 1 else ""), flush=True)
        paper = v.get("paper", {})
        for metric in list(paper) + [m for m in STANDARD_METRICS if m not in paper]:
            if metric not in flow:
                raise ValueError(f"{folder}/reproduce.toml: variants[{name}].paper.{metric}: not a summary.json flow field")
            row = {"variant": name, "metric": metric, "paper": paper.get(metric), "ours": flow[metric],
                   "source": v.get("source", "") if metric in paper else ""}
            if seeds > 1 and isinstance(flow[metric], list):
                # A list (timeout times): every seed's list, no min/max.
                row.update({"seeds": seeds, "per_seed": [f[metric] for f in [flow] + others]})
            elif seeds > 1:
                values = [f[metric] for f in [flow] + others if f[metric] is not None]
                row.update({"seeds": seeds, "min": min(values) if values else None, "max": max(values) if values else None})
            rows.append(row)
    comparison = {"experiment": experiment, "title": spec.get("title", ""), "rows": rows}
    (out / "comparison.json").write_text(json.dumps(comparison, indent=2) + "\n")

    print()
    w = max([len("variant")] + [len(r["variant"]) for r in rows])
    spread = seeds > 1
    print(f"  {'variant':<{w}}  {'metric':<24} {'paper':>10} {'ours':>10}" + (f" {'min .. max over ' + str(seeds) + ' seeds':>26}" if spread else ""))
    print(f"  {'-' * w}  {'-' * 24} {'-' * 10} {'-' * 10}" + (f" {'-' * 26}" if spread else ""))
    for r in rows:
        if spread and "per_seed" in r:
            extra = "  per seed: " + "; ".join(_fmt(x) for x in r["per_seed"])
        else:
            extra = f" {_fmt(r['min']) + ' .. ' + _fmt(r['max']):>26}" if spread else ""
        print(f"  {r['variant']:<{w}}  {r['metric']:<24} {_fmt(r['paper']):>10} {_fmt(r['ours']):>10}{extra}")
    print(f"\nwrote {out / 'comparison.json'}")
    if report:
        from .report import write_comparison_report
        path = write_comparison_report(out, rows, runs, title=spec.get("title"))  # OUT/report.html
        print(f"wrote {path}")
    sys.stdout.flush()
    return 0
