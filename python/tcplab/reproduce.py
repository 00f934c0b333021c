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
                    "coarse_timeouts", "fast_retransmits"]


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"
    return str(v)


def reproduce(experiment: str, out: Path | None = None, seed: int | None = None, report: bool = True) -> int:
    folder = find_experiment(experiment)
    spec = tomllib.loads((folder / "reproduce.toml").read_text())
    scenario = folder / spec.get("scenario", "scenario.toml")
    flow_name = spec.get("flow")
    out = Path(out) if out else Path("runs") / "reproduce" / experiment.replace("/", "_")
    out.mkdir(parents=True, exist_ok=True)
    print(f"{spec.get('title', experiment)}\n  scenario {scenario}\n  output   {out}\n", flush=True)
    rows, runs, notes = [], {}, {}
    for v in spec["variants"]:
        name = v["name"]
        t0 = time.perf_counter()
        print(f"  running {name:<12}", end="", flush=True)
        r = run(scenario, seed=seed, overrides=v.get("set", {}), out=out / name)
        runs[name] = out / name
        flows = r.summary["flows"]
        flow = next((f for f in flows if f["name"] == flow_name), flows[0] if flows else None)
        if flow is None:
            raise ValueError(f"{scenario}: variant {name} has no TCP flow to compare")
        print(f" done in {time.perf_counter() - t0:.2f} s", flush=True)
        paper = v.get("paper", {})
        for metric in list(paper) + [m for m in STANDARD_METRICS if m not in paper]:
            if metric not in flow:
                raise ValueError(f"{folder}/reproduce.toml: variants[{name}].paper.{metric}: not a summary.json flow field")
            rows.append({"variant": name, "metric": metric, "paper": paper.get(metric), "ours": flow[metric],
                         "source": v.get("source", "") if metric in paper else ""})
        notes[name] = v.get("note", "")
    comparison = {"experiment": experiment, "title": spec.get("title", ""), "rows": rows}
    (out / "comparison.json").write_text(json.dumps(comparison, indent=2) + "\n")

    print()
    w = max([len("variant")] + [len(r["variant"]) for r in rows])
    print(f"  {'variant':<{w}}  {'metric':<24} {'paper':>10} {'ours':>10}")
    print(f"  {'-' * w}  {'-' * 24} {'-' * 10} {'-' * 10}")
    for r in rows:
        print(f"  {r['variant']:<{w}}  {r['metric']:<24} {_fmt(r['paper']):>10} {_fmt(r['ours']):>10}")
    print(f"\nwrote {out / 'comparison.json'}")
    if report:
        from .report import write_comparison_report
        path = write_comparison_report(out, rows, runs, out / "report.html", title=spec.get("title"))
        print(f"wrote {path}")
    sys.stdout.flush()
    return 0
