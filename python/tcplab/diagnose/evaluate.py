"""The evaluation of issue 29: rediscovery of the Lite study, false alarms on clean runs, and
the planted faults. ``python -m tcplab.diagnose.evaluate [--clean N] [--table4-seeds N] [--out DIR]``
(``make diagnose-eval``; ``make diagnose-clean100`` for the full 100 clean scenarios).

Rediscovery runs every variant (lite.0 … lite.6, reno, vegas) on
* ``brakmo/single-transfer`` as the scenario stands (seed 1, 64 KB receive buffer), and with the
  reproduction's own sensitivity row ``rcv50KB`` (seed 5), the one where Lite.0's header
  prediction bug fires at all (scenarios/brakmo/single-transfer/scenario.toml explains why);
* ``lite/table4`` (20 s transfer over tcplib background of the same TCP), seeds 1..N;
and counts the non-informational findings per rule and variant (the distinguished flow only).
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

VARIANTS = ["lite.0", "lite.1", "lite.2", "lite.3", "lite.4", "lite.5", "lite.6", "reno", "vegas"]
# Rule -> (the level whose fix removes it, the paper's statement).
LITE_RULES = {
    "no-window-reduction": ("lite.1", "§3.1: header prediction skipped the deflation after fast recovery (Lite.0, Fig 3 ~8 s)"),
    "rto-too-large": ("lite.2", "§3.2: RTO 3 ticks where 2 suffice; timeouts at 3.5/10.5/14.5 s, 1.7 and 2.5 s after the last send"),
    "ack-frequency": ("lite.3", "§3.3: with timestamps Lite ACKs every third packet"),
    "ca-growth-too-fast": ("lite.4", "§3.3-3.4: the extra MSS/8 grows cwnd faster than 1 MSS/RTT"),
    "paired-reductions": ("lite.4", "§3.3, Fig 7: losses paired around 4 and 6 s, window decreased twice"),
    "big-ack-burst": ("lite.6", "§3.5: Lite (and previous BSD versions) send x bytes at once for an ACK of x"),
}
OTHER_RULES = ["timeout-despite-dupacks", "spurious-retransmission", "rto-no-backoff", "sender-limits",
               "rwnd-sws", "no-slow-start-restart"]
LEVEL = {v: (int(v[5]) if v.startswith("lite.") else None) for v in VARIANTS}
ROOT = Path(__file__).resolve().parents[3]


def _fixed(rule: str, variant: str) -> bool:
    """Does `variant` carry the fix that removes `rule` (seed 001 Table 3; Lite.6 = Lite.4 + big ACK)?"""
    fix = LITE_RULES[rule][0]
    n, lvl = LEVEL.get(variant), int(fix[5])
    if n is None:
        return False
    if lvl == 6:
        return n == 6
    return n >= lvl if n != 5 or lvl <= 4 else n >= lvl


def _run(scenario: str, seed: int, sets: dict, out: Path):
    import tcplab
    tcplab.run(str(ROOT / "scenarios" / scenario / "scenario.toml"), seed=seed, overrides=sets, out=out)
    return out


def rediscovery(work: Path, table4_seeds: int) -> dict:
    from . import diagnose
    counts: dict[tuple[str, str], int] = {}
    by_case: dict[tuple[str, str, str], int] = {}
    times: dict[str, list] = {}
    cases = [("brakmo/single-transfer", 1, {}), ("brakmo/single-transfer", 5, {"tcp[0].recv_buffer": "50KB"})]
    cases += [("lite/table4", s, {"run.trace.tcp": True}) for s in range(1, table4_seeds + 1)]
    for scen, seed, extra in cases:
        for v in VARIANTS:
            sets = {"tcp[0].variant": v, **extra}
            if scen == "lite/table4":
                sets["traffic[0].variant"] = v
            d = _run(scen, seed, sets, work / f"{scen.replace('/', '_')}-s{seed}-{v}")
            for f in diagnose(d, "transfer"):
                if f.severity == "info":
                    continue
                counts[(f.rule, v)] = counts.get((f.rule, v), 0) + 1
                group = "table4" if scen == "lite/table4" else ("rcv50" if extra else "single")
                by_case[(f.rule, v, group)] = by_case.get((f.rule, v, group), 0) + 1
                if v == "lite.0" and extra.get("tcp[0].recv_buffer"):
                    times.setdefault(f.rule, []).append(round(f.t_start, 2))
    return {"counts": counts, "by_case": by_case, "times": times, "runs": len(cases) * len(VARIANTS)}


def check_rediscovery(res: dict) -> list[str]:
    """The issue's claims; returns the ones that failed."""
    c = res["counts"]
    bad = []
    for rule in ("no-window-reduction", "rto-too-large", "ack-frequency", "ca-growth-too-fast"):
        if c.get((rule, "lite.0"), 0) == 0:
            bad.append(f"lite.0 does not report {rule}")
    for rule in LITE_RULES:
        for v in VARIANTS:
            if LEVEL[v] is not None and _fixed(rule, v) and c.get((rule, v), 0):
                bad.append(f"{v} still reports {rule}, which its fix removes")
    for v in ("reno", "vegas"):
        for rule in ("no-window-reduction", "ack-frequency", "ca-growth-too-fast", "paired-reductions"):
            if c.get((rule, v), 0):
                bad.append(f"{v} reports the Lite-specific {rule}")
    return bad


def table_markdown(res: dict) -> str:
    c = res["counts"]
    head = "| rule | " + " | ".join(VARIANTS) + " | paper |\n|---|" + "---|" * (len(VARIANTS) + 1) + "\n"
    rows = []
    for rule in list(LITE_RULES) + OTHER_RULES:
        cells = []
        for v in VARIANTS:
            n = c.get((rule, v), 0)
            mark = " ✓" if rule in LITE_RULES and _fixed(rule, v) and n == 0 else ""
            parts = "/".join(str(res["by_case"].get((rule, v, g), 0)) for g in ("single", "rcv50", "table4"))
            cells.append(f"{n} ({parts}){mark}" if n else f"0{mark}")
        paper = LITE_RULES[rule][1] if rule in LITE_RULES else "—"
        rows.append(f"| {rule} | " + " | ".join(cells) + f" | {paper} |")
    return head + "\n".join(rows) + "\n"


def clean_scenario(rng: random.Random, k: int):
    """A random clean scenario: newreno or vegas flows over one path whose queue never drops."""
    from tcplab import Scenario
    rate = rng.choice([1, 2, 5, 10, 20, 50])
    delay = rng.choice([1, 5, 10, 20, 40, 80])
    flows = rng.randint(1, 2)
    sc = Scenario(name=f"clean{k}", run={"duration": "120s", "stop_when_done": True, "trace": {"tcp": True}})
    sc.add_node("a", "host").add_node("r", "router").add_node("b", "host")
    sc.add_link("a", "r", rate="100Mbps", delay="10us", queue={"limit": "5000pkts"})
    sc.add_link("r", "b", rate=f"{rate}Mbps", delay=f"{delay}ms", queue={"limit": "5000pkts"})
    for i in range(flows):
        v = rng.choice(["newreno", "vegas"])
        kw = dict(variant=v, bytes=f"{rng.choice([50, 200, 500, 1000])}KB", start=f"{rng.uniform(0, 1):.3f}s")
        if rng.random() < 0.5:
            kw["ack_policy"] = rng.choice(["every", "bsd-delayed"])
        sc.add_tcp(f"f{i}", "a", "b", **kw)
    return sc


def false_alarms(work: Path, n: int, seed: int = 29) -> dict:
    import json
    import tcplab
    from . import diagnose
    rng = random.Random(seed)
    bad, runs, lossy = [], 0, 0
    info = 0
    for k in range(n):
        sc = clean_scenario(rng, k)
        d = work / f"clean{k}"
        tcplab.run(sc, seed=k + 1, out=d)
        s = json.loads((d / "summary.json").read_text())
        if any(l.get("drops") for l in s["links"]):
            lossy += 1
            continue
        runs += 1
        for f in diagnose(d):
            if f.severity == "info":
                info += 1
            else:
                bad.append(f"clean{k}: {f.line()}")
    return {"scenarios": n, "clean": runs, "with_drops": lossy, "findings": bad, "info": info}


def planted(work: Path) -> dict:
    from . import diagnose
    expect = {"reno-fault-no-fast-retransmit": "timeout-despite-dupacks",
              "reno-fault-double-ca": "ca-growth-too-fast",
              "reno-fault-no-rto-backoff": "rto-no-backoff"}
    out = {}
    for v, rule in expect.items():
        d = _run("brakmo/single-transfer", 1, {"tcp[0].variant": v}, work / f"planted-{v}")
        rules = sorted({f.rule for f in diagnose(d) if f.severity != "info"})
        out[v] = {"expected": rule, "found": rule in rules, "rules": rules}
    base = sorted({f.rule for f in diagnose(_run("brakmo/single-transfer", 1, {"tcp[0].variant": "reno"}, work / "planted-reno"))
                   if f.severity != "info"})
    out["reno (no fault)"] = {"expected": None, "found": not any(r in base for r in expect.values()), "rules": base}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tcplab.diagnose.evaluate")
    p.add_argument("--clean", type=int, default=100, help="random clean scenarios (default 100)")
    p.add_argument("--table4-seeds", type=int, default=3)
    p.add_argument("--skip-rediscovery", action="store_true")
    p.add_argument("--out", help="keep the runs here (default: a temporary directory)")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(a.out) if a.out else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        ok = True
        if not a.skip_rediscovery:
            t = time.time()
            res = rediscovery(work, a.table4_seeds)
            print(f"## Rediscovery ({res['runs']} runs, {time.time()-t:.0f} s): non-informational findings per rule and variant")
            print("(total (brakmo/single-transfer seed 1 / its rcv50KB row seed 5 / lite/table4 seeds 1-N); "
                  "✓ = the variant carries the fix that removes the rule's bug and reports none)\n")
            print(table_markdown(res))
            print("Lite.0 finding times (single-transfer, rcv50KB, seed 5):")
            for rule, ts in sorted(res["times"].items()):
                print(f"  {rule}: {ts}")
            bad = check_rediscovery(res)
            print("claims: " + ("all hold" if not bad else "FAILED: " + "; ".join(bad)))
            ok &= not bad
            t = time.time()
            pl = planted(work)
            print(f"\n## Planted faults ({time.time()-t:.0f} s)")
            for v, r in pl.items():
                print(f"  {v}: expected {r['expected']}: {'named' if r['found'] else 'MISSED'}; rules {r['rules']}")
                ok &= r["found"]
        if a.clean:
            t = time.time()
            fa = false_alarms(work, a.clean)
            print(f"\n## False alarms ({time.time()-t:.0f} s): {fa['scenarios']} random clean scenarios, {fa['clean']} without "
                  f"drops ({fa['with_drops']} had drops and are not counted): {len(fa['findings'])} non-informational "
                  f"findings, {fa['info']} informational")
            for line in fa["findings"][:20]:
                print("  " + line)
            ok &= not fa["findings"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
