"""Fidelity: every seed number beside ours, held or missed, and for a miss its measured cause.

Issue 31. Per reproduction folder (``scenarios/<group>/<experiment>/``):

* ``reproduce.toml`` — the paper's numbers (``[[variants]] paper``) and claims, as before.
* ``measured.json`` — the last full reproduction, recorded by ``tcplab fidelity --record`` from
  ``runs/reproduce/<experiment>/comparison.json`` (variant, metric, paper, ours, n, min, max and
  the claims with held/missed; the date, seeds and code version it came from). Committed, so the
  fidelity page regenerates in a second without rerunning anything.
* the ``[fidelity]`` table of ``reproduce.toml`` — why a miss misses, written by hand, each with
  its evidence::

      [fidelity]
      tolerance = 0.10              # |ours - paper| <= tolerance * |paper| is "held" (default 0.10)
      metric_tolerance = { jain = 0.01 }   # per metric (an index near 1 needs a tighter one)

      [[fidelity.miss]]
      variant = "reno"              # optional; default every variant
      metric = "utilization_loss_1pct"   # or: claim = "a piece of the claim's text"
      status = "unreachable"        # optional: the paper's level cannot be reached on this setup
      cause = "one line: the measured cause"
      evidence = "evidence.md#mathis-bound"   # a file in the folder, '#' = its heading's anchor

Status of a number: ``held`` (within the tolerance; a paper 0 needs ours 0), ``missed``, or what
``[fidelity]`` says (``unreachable``: the evidence shows no faithful model can reach it); a
list-valued number (timeout times) is ``see text``. A claim is held or missed as
``tcplab reproduce`` evaluated it. Never a tuned parameter: a cause is a measurement.

``tcplab fidelity`` writes FIDELITY.md at the repository root (``make fidelity``);
``--record`` first copies each ``runs/reproduce/*/comparison.json`` into its ``measured.json``
(``make fidelity-full`` reruns every reproduction before). :func:`annotate` gives
``tcplab reproduce``'s rows and claims their status and cause, :func:`report_section` the
report's badges and evidence sections.
"""

from __future__ import annotations

import html
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any, Iterable

DEFAULT_TOLERANCE = 0.10
#: What FIDELITY.md says of a miss that has no measured cause yet.
UNEXPLAINED = "unexplained: no measured cause yet"
_MISS_KEYS = {"variant", "metric", "claim", "status", "cause", "evidence"}
_STATUSES = {"held", "missed", "unreachable"}


class FidelityError(ValueError):
    pass


def load_causes(folder: Path) -> dict[str, Any]:
    """The ``[fidelity]`` table of a reproduction's reproduce.toml, checked (empty when there is none)."""
    path = folder / "reproduce.toml"
    try:
        spec = tomllib.loads(path.read_text()).get("fidelity")
    except tomllib.TOMLDecodeError as e:
        raise FidelityError(f"{path}: {e}") from None
    if spec is None:
        return {"tolerance": DEFAULT_TOLERANCE, "metric_tolerance": {}, "miss": []}
    path = f"{path}: [fidelity]"
    for k in spec:
        if k not in {"tolerance", "metric_tolerance", "miss"}:
            raise FidelityError(f"{path}: unknown key {k!r}; expected tolerance, metric_tolerance, miss")
    tol = spec.get("tolerance", DEFAULT_TOLERANCE)
    if not isinstance(tol, (int, float)) or not 0 <= tol < 1:
        raise FidelityError(f"{path}: tolerance: expected a fraction in [0, 1), got {tol!r}")
    per_metric = spec.get("metric_tolerance", {})
    if not isinstance(per_metric, dict) or not all(isinstance(v, (int, float)) and 0 <= v < 1 for v in per_metric.values()):
        raise FidelityError(f"{path}: metric_tolerance: expected {{ METRIC = fraction in [0, 1) }}")
    misses = spec.get("miss", [])
    for i, m in enumerate(misses):
        where = f"{path} miss[{i}]"
        bad = set(m) - _MISS_KEYS
        if bad:
            raise FidelityError(f"{where}: unknown key {sorted(bad)[0]!r}; expected one of {', '.join(sorted(_MISS_KEYS))}")
        if ("metric" in m) == ("claim" in m):
            raise FidelityError(f"{where}: give exactly one of metric, claim")
        if not m.get("cause"):
            raise FidelityError(f"{where}: cause: missing (one line saying what the evidence measured)")
        if m.get("status", "missed") not in _STATUSES:
            raise FidelityError(f"{where}: status: expected one of {', '.join(sorted(_STATUSES))}, got {m['status']!r}")
        ev = m.get("evidence")
        if ev is not None and not (folder / ev.split("#")[0]).is_file():
            raise FidelityError(f"{where}: evidence: no file {folder / ev.split('#')[0]}")
    return {"tolerance": float(tol), "metric_tolerance": per_metric, "miss": misses}


def _tolerance(causes: dict, metric: str) -> float:
    """The tolerance of a metric: its own, or its base name's (``jain_x25ms`` -> ``jain``), or the default."""
    per = causes.get("metric_tolerance", {})
    for name, tol in per.items():
        if metric == name or metric.startswith(name + "_"):
            return float(tol)
    return causes["tolerance"]


def classify(paper: Any, ours: Any, tolerance: float = DEFAULT_TOLERANCE) -> str:
    """``held``/``missed`` for a published number beside ours; ``see text`` for lists, ``-`` without one."""
    if paper is None:
        return "-"
    if isinstance(paper, list) or isinstance(ours, list):
        return "see text"
    if ours is None:
        return "not run"
    if paper == 0:
        return "held" if ours == 0 else "missed"
    return "held" if abs(ours - paper) <= tolerance * abs(paper) else "missed"


def _cause_for(causes: dict, *, variant: str | None = None, metric: str | None = None,
               claim: str | None = None) -> dict | None:
    for m in causes["miss"]:
        if metric is not None and m.get("metric") == metric and m.get("variant", variant) == variant:
            return m
        if claim is not None and m.get("claim") and m["claim"] in claim:
            return m
    return None


def annotate(folder: Path, rows: list[dict], claims: list[dict]) -> None:
    """Give each row with a paper number its ``status`` (and ``cause``/``evidence`` when
    reproduce.toml's [fidelity] has one), and each claim its cause; in place."""
    causes = load_causes(Path(folder))
    for r in rows:
        if r.get("paper") is None:
            continue
        st = classify(r["paper"], r.get("ours"), _tolerance(causes, r["metric"]))
        m = _cause_for(causes, variant=r["variant"], metric=r["metric"])
        if m is not None and st != "held":
            st = m.get("status", st)
            r["cause"] = m["cause"]
            if m.get("evidence"):
                r["evidence"] = m["evidence"]
        r["status"] = st
    for c in claims:
        m = _cause_for(causes, claim=c.get("text", ""))
        c["status"] = "held" if c.get("held") else (m.get("status", "missed") if m else "missed")
        if m is not None and not c.get("held"):
            c["cause"] = m["cause"]
            if m.get("evidence"):
                c["evidence"] = m["evidence"]


# ---------------------------------------------------------------------------------------------
# measured.json: the committed record of the last full reproduction


def record(comparison: dict, experiment_folder: Path) -> dict:
    """The compact record of a comparison.json (written as ``measured.json`` by ``--record``)."""
    from .sweep import code_version
    rows = [{k: r.get(k) for k in ("variant", "metric", "paper", "ours", "n", "min", "max")}
            for r in comparison["rows"] if r.get("paper") is not None]
    claims = [{"text": c["text"], "held": bool(c["held"]),
               "values": {k: v for k, v in (c.get("values") or {}).items()}} for c in comparison.get("claims", [])]
    import datetime
    return {"experiment": comparison.get("experiment"), "title": comparison.get("title"),
            "seeds": comparison.get("seeds"), "recorded": datetime.date.today().isoformat(),
            "code_version": code_version(), "rows": rows, "claims": claims}


def experiments(root: Path) -> list[tuple[str, Path]]:
    """Every reproduction under ``root`` (scenarios/) as (name, folder), sorted."""
    return sorted((str(p.parent.relative_to(root)), p.parent) for p in root.glob("*/*/reproduce.toml"))


def record_all(root: Path, runs: Path) -> list[str]:
    """Copy every ``runs/<experiment with _>/comparison.json`` into its ``measured.json``."""
    done = []
    for name, folder in experiments(root):
        comp = runs / name.replace("/", "_") / "comparison.json"
        if comp.is_file():
            data = record(json.loads(comp.read_text()), folder)
            (folder / "measured.json").write_text(json.dumps(data, indent=1) + "\n")
            done.append(name)
    return done


# ---------------------------------------------------------------------------------------------
# FIDELITY.md


def _num(v: Any) -> str:
    from .reproduce import _fmt
    return _fmt(v)


def _paper_rows(folder: Path) -> tuple[list[dict], list[str]]:
    spec = tomllib.loads((folder / "reproduce.toml").read_text())
    rows = [{"variant": v["name"], "metric": m, "paper": p, "source": v.get("source", "")}
            for v in spec["variants"] for m, p in (v.get("paper") or {}).items()]
    return rows, [c.get("text", c["expr"]) for c in spec.get("claims", [])]


def _link(folder_rel: str, evidence: str | None) -> str:
    if not evidence:
        return ""
    return f" ([evidence]({folder_rel}/{evidence}))"


def _md(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def build(repo: Path) -> str:
    """FIDELITY.md's text from every reproduce.toml, measured.json and fidelity.toml."""
    root = repo / "scenarios"
    out = ["# Fidelity: every seed claim, ours beside the paper's", "",
           "Generated by `make fidelity` (`tcplab fidelity`) from each reproduction's `reproduce.toml` "
           "(the paper's numbers and claims), `measured.json` (our last full run, recorded by "
           "`tcplab fidelity --record`; `make fidelity-full` reruns every reproduction first) and "
           "the `[fidelity]` table of `reproduce.toml` (the measured cause of each miss, linked to its evidence). Do not edit by hand.", "",
           f"A number is *held* when ours is within the reproduction's tolerance of the paper's "
           f"(default ±{DEFAULT_TOLERANCE:.0%}; a published 0 needs ours 0); *unreachable* when the evidence "
           "shows the paper's level cannot be reached on the setup the paper describes; *see text* for "
           "lists (timeout times); *not run* when no measurement is recorded yet. Causes are measurements, "
           "never a parameter tuned to land on the number.", ""]
    totals: dict[str, int] = {}
    sections = []
    for name, folder in experiments(root):
        rel = folder.relative_to(repo).as_posix()
        causes = load_causes(folder)
        paper_rows, claim_texts = _paper_rows(folder)
        measured_path = folder / "measured.json"
        measured = json.loads(measured_path.read_text()) if measured_path.is_file() else None
        ours = {(r["variant"], r["metric"]): r for r in (measured or {}).get("rows", [])}
        mclaims = {c["text"]: c for c in (measured or {}).get("claims", [])}
        rows = []
        for r in paper_rows:
            m = ours.get((r["variant"], r["metric"]), {})
            rows.append({**r, "ours": m.get("ours"), "n": m.get("n"), "min": m.get("min"), "max": m.get("max")})
        claims = [{"text": t, "held": mclaims[t]["held"]} if t in mclaims else {"text": t, "held": None}
                  for t in claim_texts]
        annotate(folder, rows, [c for c in claims if c["held"] is not None])
        for c in claims:
            if c["held"] is None:
                c["status"] = "not run"
        sec = [f"## {name}", ""]
        spec_title = tomllib.loads((folder / "reproduce.toml").read_text()).get("title", name)
        when = (f"measured {measured['recorded']}, seeds {_seeds(measured.get('seeds'))}"
                if measured else "no measurement recorded yet (`make fidelity-full`)")
        sec += [f"{_md(spec_title)} — {when}; [reproduce.toml]({rel}/reproduce.toml)", ""]
        if rows:
            sec += ["| variant | metric | paper | ours | status | cause |", "|---|---|---|---|---|---|"]
            for r in rows:
                spread = f" ({_num(r['min'])}–{_num(r['max'])})" if r.get("min") is not None and r.get("n", 0) > 1 else ""
                st = r.get("status", classify(r["paper"], r.get("ours")))
                totals[st] = totals.get(st, 0) + 1
                cause = r.get("cause", UNEXPLAINED if st == "missed" else "")
                sec.append(f"| {_md(r['variant'])} | {_md(r['metric'])} | {_num(r['paper'])} | "
                           f"{_num(r.get('ours'))}{spread} | {_badge(st)} | "
                           f"{_md(cause)}{_link(rel, r.get('evidence'))} |")
            sec.append("")
        if claims:
            sec += ["| claim | status | cause |", "|---|---|---|"]
            for c in claims:
                st = c["status"]
                totals["claim " + st] = totals.get("claim " + st, 0) + 1
                cause = c.get("cause", UNEXPLAINED if st == "missed" else "")
                sec.append(f"| {_md(c['text'])} | {_badge(st)} | {_md(cause)}{_link(rel, c.get('evidence'))} |")
            sec.append("")
        sections.append("\n".join(sec))
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(totals.items()))
    out += [f"Totals — {summary}.", ""]
    return "\n".join(out) + "\n" + "\n".join(sections)


def _seeds(seeds: Any) -> str:
    if not seeds:
        return "-"
    if len(seeds) > 3 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


def _badge(status: str) -> str:
    return {"held": "✅ held", "missed": "❌ missed", "unreachable": "⛔ unreachable"}.get(status, status)


def write(repo: Path, out: Path | None = None) -> Path:
    target = out or repo / "FIDELITY.md"
    target.write_text(build(repo))
    return target


# ---------------------------------------------------------------------------------------------
# The reproduction report's badges and evidence sections


def _anchor(evidence: str) -> str:
    return "ev-" + re.sub(r"[^a-z0-9]+", "-", evidence.lower()).strip("-")


def report_section(folder: Path | None, rows: Iterable[dict], claims: Iterable[dict]) -> str:
    """HTML: each published number with its held/missed badge and, for a miss, its cause linked
    to the evidence below (the evidence file's text, with the folder's plots it names)."""
    folder = Path(folder) if folder else None
    rows = [r for r in rows if r.get("status")]
    claims = [c for c in claims if c.get("status")]
    if not rows and not claims:
        return ""
    e = html.escape
    cells = []
    evidence: dict[str, str] = {}
    for r in rows:
        cause = ""
        if r.get("cause"):
            ev = r.get("evidence")
            cause = e(r["cause"]) + (f' <a href="#{_anchor(ev)}">evidence</a>' if ev else "")
            if ev:
                evidence[ev] = ""
        cells.append(f"<tr class=\"{'miss' if r['status'] not in ('held', 'see text') else ''}\"><td>{e(r['variant'])}</td>"
                     f"<td>{e(r['metric'])}</td><td>{e(_num(r.get('paper')))}</td><td>{e(_num(r.get('ours')))}</td>"
                     f"<td class=\"badge {e(r['status'].replace(' ', '-'))}\">{e(_badge(r['status']))}</td><td class=\"s\">{cause}</td></tr>")
    for c in claims:
        cause = ""
        if c.get("cause"):
            ev = c.get("evidence")
            cause = e(c["cause"]) + (f' <a href="#{_anchor(ev)}">evidence</a>' if ev else "")
            if ev:
                evidence[ev] = ""
        cells.append(f"<tr class=\"{'miss' if c['status'] != 'held' else ''}\"><td colspan=\"4\" class=\"s\">claim: {e(c['text'])}</td>"
                     f"<td class=\"badge\">{e(_badge(c['status']))}</td><td class=\"s\">{cause}</td></tr>")
    body = ["<h2>Fidelity</h2><div class=\"tablewrap\"><table class=\"fidelity\"><thead><tr><th>variant</th><th>metric</th>"
            "<th>paper</th><th>ours</th><th>status</th><th class=\"s\">cause</th></tr></thead><tbody>",
            *cells, "</tbody></table></div>"]
    for ev in evidence:
        file = ev.split("#")[0]
        text = (folder / file).read_text() if folder is not None and (folder / file).is_file() else f"({file} not found)"
        body.append(f'<h3 id="{_anchor(ev)}">Evidence: {e(ev)}</h3><pre class="evidence">{e(text)}</pre>')
    return "".join(body)


# ---------------------------------------------------------------------------------------------
# CLI (`tcplab fidelity`)


def run(a) -> int:
    repo = a.repo or Path.cwd()
    if not (repo / "scenarios").is_dir():
        print(f"error: {repo}: no scenarios/ folder here; run from the repository root or pass --repo", file=sys.stderr)
        return 2
    if a.record:
        for name in record_all(repo / "scenarios", a.runs):
            print(f"recorded {name}")
    target = a.out or repo / "FIDELITY.md"
    text = build(repo)
    if a.check:
        same = target.is_file() and target.read_text() == text
        print(f"{target}: {'up to date' if same else 'out of date (run make fidelity)'}")
        return 0 if same else 1
    target.write_text(text)
    print(f"wrote {target}")
    return 0


def comparison_report(out_dir: Path, out: Path | None = None) -> Path:
    """``tcplab report OUT`` on a reproduction's output: the paper-vs-ours report again, with the
    badges and causes of the current [fidelity] table."""
    from .paths import find_experiment
    from .report import write_comparison_report
    comp = json.loads((out_dir / "comparison.json").read_text())
    folder = Path(comp["folder"]) if comp.get("folder") and Path(comp["folder"]).is_dir() else None
    if folder is None:
        try:
            folder = find_experiment(comp.get("experiment", ""))
        except FileNotFoundError:
            folder = None
    rows, claims = comp.get("rows", []), comp.get("claims", [])
    if folder is not None:
        annotate(folder, rows, claims)
    runs = {r["variant"]: out_dir / r["variant"] for r in rows if (out_dir / r["variant"] / "summary.json").is_file()}
    target = Path(out) if out is not None else Path("report.html")
    return write_comparison_report(out_dir, rows, runs, target, title=comp.get("title"), claims=claims, folder=folder)
