"""`tcplab reproduce EXPERIMENT`: run every variant of a seed reproduction and set ours beside the paper.

An experiment folder holds `scenario.toml` and `reproduce.toml`::

    title = "..."
    scenario = "scenario.toml"
    figure = "plot.py"                      # optional: main(OUT) of that file draws the figure
    flow = "transfer"                       # the flow whose plain-named metrics are compared
    seeds = [1, 2, 3]                       # or { from = 1, count = 19 }; default: the scenario's run.seed
    metrics = ["throughput_KBps", "jain"]   # reported for every variant (default: STANDARD_METRICS)
    axes = { "links[1].queue.limit" = ["10pkts", "15pkts", "20pkts"] }   # every variant runs the full grid

    [points]                                # or: named points, reported one by one
    loss_1pct = { "links[1].ab.loss" = 0.01 }
    loss_5pct = { "links[1].ab.loss" = 0.05 }
    # a variant may add its own overrides per point: point_set = { loss_1pct = { KEY = value } }
    # a variant whose scenario holds an axis' item elsewhere (another reading of the network):
    # axis_at = { "links[1].queue.limit" = "links[3].queue.limit" }

    [derived]                               # per-run metrics computed from summary.json
    jain = "jain('flows.*.throughput_KBps')"

    [[variants]]
    name = "reno"
    label = "Reno"                          # optional, for printing
    scenario = "other.toml"                 # optional: this variant's own scenario file
    set = { "tcp[0].variant" = "reno" }     # overrides applied to the scenario
    paper = { throughput_KBps = 123.0 }     # published numbers
    source = "seed 000 §4.1, Fig 4.1"

    [[claims]]
    text = "Vegas ≥ 1.3× Reno throughput"
    expr = "mean('vegas', 'throughput_KBps') >= 1.3 * mean('reno', 'throughput_KBps')"

Every variant runs over the grid axes × seeds (paired: the same seeds and axis points for every
variant) through the sweep runner (`--jobs`, `--backend ray`), with the runs kept in
OUT/results.duckdb so a rerun only runs what is missing. A variant's numbers are aggregated over
all its runs; with named ``[points]`` (exclusive with ``axes``) every variant runs at every point,
and a metric ``M_<point>`` (``utilization_loss_5pct``) is M over that point's runs only — each
metric in ``metrics`` is reported once per point. comparison.json rows: comparison.json rows carry variant, metric, paper, ours (the mean when there are
several runs), source, n, mean, std, ci90 (half-width of the 90 % Student-t interval) and, with
several runs, seeds, min and max. The first run of each variant (first seed, first axis point)
is saved as OUT/<variant>/ for the report's graphs.

Metric names and the expression language of `[derived]` and `[[claims]]` are described in
:mod:`tcplab.metrics`: a plain flow field of `flow`, a dotted path
``<section>.<element name>.<field>`` into summary.json (``links.Gateway1->Gateway2.drops``,
``flows.t3.throughput_KBps``, ``traffic.<name>.<field>``), a top-level scalar, or a derived
metric. Derived metrics use ``value/jain/sum/mean/min/max/count('<path>')`` (``*`` selects
every element of a section); claims use ``mean/std/min/max/median/n(variant, metric)``,
``ratio(a, b, metric)`` and ``all_runs(a, b, metric, op)``. Each claim is printed and stored in
comparison.json as held or missed with the numbers it used.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from .paths import find_experiment

#: Metrics always reported for each variant, published or not (unless `metrics` says otherwise).
STANDARD_METRICS = ["throughput_KBps", "completion_s", "retransmitted_segments", "retransmitted_bytes",
                    "coarse_timeouts", "coarse_timeout_times_s", "fast_retransmits"]

_TOP_KEYS = {"title", "description", "note", "scenario", "flow", "seeds", "metrics", "axes", "points", "derived",
             "variants", "claims", "mode", "fidelity", "figure",   # fidelity: causes of misses (tcplab.fidelity)
             "analysis"}   # a Python file in the folder: per-run metrics from each run's traces (_Analysis)
_VARIANT_KEYS = {"name", "label", "scenario", "set", "point_set", "paper", "source", "note", "emulate",
                 "axis_at"}   # {AXIS = PATH}: this variant's scenario holds the axis' item at PATH


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, list):  # a list-valued field, e.g. coarse_timeout_times_s
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, float):
        if v != 0 and abs(v) < 1e-3:  # a loss rate of 2e-4 must not print as 0.000
            return f"{v:.2e}"
        return f"{v:.1f}" if abs(v) >= 10 else (f"{v:.3f}" if abs(v) < 1 else f"{v:.2f}")
    return str(v)


class Spec:
    """A parsed, checked reproduce.toml."""

    def __init__(self, folder: Path):
        from .metrics import CLAIM_ARITY, DERIVED_ARITY, ExprError, check_calls, claim_references, derived_funcs, \
            claim_funcs, parse
        from .sweep import SweepError, _seed_list, check_axes, locate
        self.folder = folder
        self.path = folder / "reproduce.toml"
        file = str(self.path)
        self.text = text = self.path.read_text()
        try:
            spec = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SweepError(file, None, "toml", str(e)) from None
        for k in spec:
            if k not in _TOP_KEYS:
                raise SweepError(file, locate(text, k), k, f"unknown key; expected one of {', '.join(sorted(_TOP_KEYS))}")
        self.spec = spec
        self.title = spec.get("title", folder.name)
        self.scenario = folder / spec.get("scenario", "scenario.toml")
        self.flow = spec.get("flow")
        self.analysis = _Analysis(folder, spec["analysis"], file, text) if "analysis" in spec else None
        self.seeds = _seed_list(spec.get("seeds"), file, text)
        self.mode = spec.get("mode", "grid")
        self.axes = check_axes(spec.get("axes"), file, text, self.mode)
        self.points = self._named_points(spec.get("points"), file, text)
        metrics = spec.get("metrics", STANDARD_METRICS)
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            raise SweepError(file, locate(text, "metrics"), "metrics", "expected a list of metric names")
        # With named points each metric is reported per point (M_<point>), not pooled.
        self.metrics = [f"{m}_{p}" for m in metrics for p in self.points] if self.points else metrics
        self.derived = {}
        for name, expr in (spec.get("derived") or {}).items():
            try:
                tree = parse(expr)
                check_calls(tree, derived_funcs({}, None, {}), DERIVED_ARITY)
            except ExprError as e:
                raise SweepError(file, locate(text, name, "derived"), f"derived.{name}", str(e)) from None
            self.derived[name] = tree
        if not isinstance(spec.get("variants"), list) or not spec["variants"]:
            raise SweepError(file, locate(text, "variants"), "variants", "at least one [[variants]] entry is needed")
        self.variants = []
        for i, v in enumerate(spec["variants"]):
            if "name" not in v:
                raise SweepError(file, None, f"variants[{i}].name", "missing")
            for k in v:
                if k not in _VARIANT_KEYS:
                    raise SweepError(file, locate(text, k), f"variants[{v['name']}].{k}",
                                     f"unknown key; expected one of {', '.join(sorted(_VARIANT_KEYS))}")
            overlap = set(v.get("set", {})) & (set(self.axes) | {k for p in self.points.values() for k in p})
            if overlap:
                raise SweepError(file, locate(text, sorted(overlap)[0]), f"variants[{v['name']}].set",
                                 f"{sorted(overlap)[0]!r} is also an axis")
            at = v.get("axis_at")
            if at is not None and (not isinstance(at, dict) or not all(isinstance(x, str) for x in at.values())
                                   or any(k not in self.axes for k in at)):
                raise SweepError(file, locate(text, "axis_at"), f"variants[{v['name']}].axis_at",
                                 f"expected {{ AXIS = \"PATH\" }} with AXIS one of {', '.join(self.axes) or '(no axes)'}")
            ps = v.get("point_set")
            if ps is not None:
                if not self.points:
                    raise SweepError(file, locate(text, "point_set"), f"variants[{v['name']}].point_set",
                                     "point_set needs a [points] table")
                bad = [k for k in (ps if isinstance(ps, dict) else {}) if k not in self.points]
                if not isinstance(ps, dict) or bad or not all(isinstance(x, dict) for x in ps.values()):
                    raise SweepError(file, locate(text, "point_set"), f"variants[{v['name']}].point_set",
                                     f"expected {{ POINT = {{ KEY = value }} }} with POINT one of {', '.join(self.points)}"
                                     + (f"; unknown point {bad[0]!r}" if bad else ""))
            self.variants.append(v)
        names = [v["name"] for v in self.variants]
        if len(set(names)) != len(names):
            raise SweepError(file, None, "variants", "two variants have the same name")
        self.claims = []
        for i, c in enumerate(spec.get("claims", [])):
            label = f"claims[{i}]" + (f" ({c.get('text')!r})" if c.get("text") else "")
            if "expr" not in c:
                raise SweepError(file, locate(text, "text") if c.get("text") else None, label, "missing expr")
            line = _line_of(text, c["expr"])
            try:
                tree = parse(c["expr"])
                check_calls(tree, claim_funcs(lambda a, b: [], {}), CLAIM_ARITY)
            except ExprError as e:
                raise SweepError(file, line, label, str(e)) from None
            for fn, args in claim_references(tree):
                nv = {"ratio": 2, "all_runs": 2}.get(fn, 1)
                for a in args[:nv]:
                    if not isinstance(a, str):
                        raise SweepError(file, line, label, f"{fn}(): variant names must be quoted strings")
                    if a not in names:
                        raise SweepError(file, line, label, f"unknown variant {a!r} (variants: {', '.join(names)})")
                m = args[nv] if len(args) > nv else None
                if not isinstance(m, str):
                    raise SweepError(file, line, label, f"{fn}(): the metric must be a quoted string")
            self.claims.append({"text": c.get("text", c["expr"]), "expr": c["expr"], "tree": tree, "label": label, "line": line})

    def _named_points(self, points: Any, file: str, text: str) -> dict[str, dict[str, Any]]:
        from .sweep import SweepError, locate
        if points is None:
            return {}
        if self.axes:
            raise SweepError(file, locate(text, "points"), "points", "use either [points] or axes, not both")
        if not isinstance(points, dict) or not points:
            raise SweepError(file, locate(text, "points"), "points", "expected a table of NAME = { KEY = value, ... }")
        for name, ov in points.items():
            if not isinstance(ov, dict) or not ov:
                raise SweepError(file, locate(text, name, "points"), f"points.{name}",
                                 "expected an inline table of overrides, e.g. { \"links[1].ab.loss\" = 0.01 }")
            if not name.replace("_", "").isalnum():
                raise SweepError(file, locate(text, name, "points"), f"points.{name}",
                                 "a point name may hold letters, digits and '_' only (it becomes a metric suffix)")
        return points

    def split_point(self, metric: str) -> tuple[str, int | None]:
        """`utilization_loss_5pct` -> ("utilization", index of point loss_5pct); (metric, None) otherwise."""
        for i, p in enumerate(self.points):
            if metric.endswith("_" + p) and len(metric) > len(p) + 1:
                return metric[: -len(p) - 1], i
        return metric, None

    def variant_metrics(self, v: dict) -> list[str]:
        paper = v.get("paper", {})
        return list(paper) + [m for m in self.metrics if m not in paper]


def _draw_figure(script: Path, out: Path) -> Path:
    """`figure = "plot.py"`: the reproduction's own figure, `main(OUT)` of that file."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"tcplab_figure_{script.parent.name}", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.main(out)


def _line_of(text: str, needle: str) -> int | None:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    return None


class _Analysis:
    """`analysis = "spectrum.py"`: a module in the experiment folder with
    `run_metrics(run_dir: Path) -> dict[str, float]`, computed from every run's saved files
    (every run is then saved with its traces) and usable like `[derived]` metrics, and optionally
    `report_html(out: Path, run_dirs: dict[str, list[Path]]) -> str`, an HTML section (figures)
    added to the report; `run_dirs` maps each variant to its runs' directories."""

    def __init__(self, folder: Path, name: Any, file: str, text: str):
        import importlib.util
        from .sweep import SweepError, locate
        path = folder / str(name)
        if not isinstance(name, str) or not path.is_file():
            raise SweepError(file, locate(text, "analysis"), "analysis", f"no such file {path}")
        spec = importlib.util.spec_from_file_location(f"tcplab_analysis_{folder.name}", path)
        self.module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.module)
        if not callable(getattr(self.module, "run_metrics", None)):
            raise SweepError(file, locate(text, "analysis"), "analysis", f"{path} defines no run_metrics(run_dir)")


def _run_dir(task, run_dirs: dict, out: Path) -> Path:
    """The saved directory of `task`'s run; one stored earlier without its files is run again
    (deterministic) into OUT/runs-analysis/<hash>."""
    src = run_dirs.get(task.hash)
    if src and (Path(src) / "summary.json").is_file() and (Path(src) / "scenario.toml").is_file() \
            and any(Path(src).glob("*.parquet")):
        return Path(src)
    dest = out / "runs-analysis" / task.hash
    if not (dest / "summary.json").is_file():
        from .api import Scenario, run
        run(Scenario.from_toml(task.scenario_text, source=task.scenario_file), seed=task.seed,
            overrides=task.overrides, out=dest)
    return dest


#: The staging folder of the runs the native `tcplab reproduce` ran before handing the command
#: line over (crates/tcplab-cli/src/reproduce.rs): results.jsonl and the saved runs' folders.
PRERUN_ENV = "TCPLAB_REPRODUCE_PRERUN"
#: In the staging folder when the native runs were interrupted: only the finished ones are there.
INTERRUPTED_MARK = "INTERRUPTED"


def _take_prerun() -> Path | None:
    """The native runs' staging folder, taken once (the variable is removed, so that no worker or
    nested command sees it); None without one."""
    import os
    d = os.environ.pop(PRERUN_ENV, None)
    p = Path(d) if d else None
    return p if p is not None and p.name.startswith(".tcplab-prerun-") and p.is_dir() else None


def _prerun_results(staging: Path, tasks: list, resolved_sha: dict[str, str]) -> dict[str, dict]:
    """{task hash: result} of the tasks the native binary ran, as `sweep.run.execute` returns
    one (plus "dir", the saved run's folder in `staging`): a task is matched by the SHA-256 of
    its resolved scenario and its seed (its hash but for the code version). A task saved with
    its files needs a saved run; anything unreadable is run here as usual."""
    by_key = {}
    try:
        for line in (staging / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            by_key[(r["scenario_sha256"], r["seed"])] = r
    except (OSError, ValueError, KeyError):
        return {}
    ready = {}
    for t in tasks:
        r = by_key.get((resolved_sha.get(t.hash), t.seed))
        if r is None or (t.save == "all" and not r.get("dir")):
            continue
        ready[t.hash] = {"hash": t.hash, "status": "ok", "error": None, "summary_json": r["summary_json"], "buckets": [],
                         "run_dir": None, "wall_s": r["wall_s"],
                         "dir": staging / r["dir"] if r.get("dir") and t.save == "all" else None}
    return ready


def reproduce(experiment: str, out: Path | None = None, seed: int | None = None, report: bool = True,
              seeds: int | None = None, jobs: int | None = None, backend: str = "local", ray_address: str | None = None) -> int:
    """Run every variant over axes × seeds through the sweep runner and compare with the paper.
    `seed`/`seeds` on the command line replace the file's seed list by seed .. seed+seeds-1
    (seed defaults to the file's first seed or the scenario's run.seed; seed 000 §6.2.2: look
    at the extremes, not just one run). Runs the native `tcplab reproduce` already ran
    (TCPLAB_REPRODUCE_PRERUN) are taken from its staging folder, which is removed at the end."""
    staging = _take_prerun()
    try:
        return _reproduce(experiment, out, seed, report, seeds, jobs, backend, ray_address, staging)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _reproduce(experiment: str, out: Path | None, seed: int | None, report: bool, seeds: int | None, jobs: int | None,
               backend: str, ray_address: str | None, prerun: Path | None) -> int:
    from .analysis import describe
    from .metrics import ExprError, MetricError, claim_funcs, compute_derived, evaluate, resolve
    from .store import Store
    from .sweep import Resolver, SweepError, Task, axis_points, code_version, execute_tasks, run_hash, locate
    from .api import _toml_literal

    if seeds is not None and seeds < 1:
        raise ValueError(f"--seeds must be at least 1, got {seeds}")
    folder = find_experiment(experiment)
    sp = Spec(folder)
    file = str(sp.path)
    out = Path(out) if out else Path("runs") / "reproduce" / experiment.replace("/", "_")
    out.mkdir(parents=True, exist_ok=True)
    own = sorted({v["scenario"] for v in sp.variants if v.get("scenario")})
    shown = ", ".join(str(folder / o) for o in own) if own and all(v.get("scenario") for v in sp.variants) else str(sp.scenario)
    print(f"{sp.title}\n  scenario {shown}\n  output   {out}\n", flush=True)

    version = code_version()
    points = list(sp.points.values()) if sp.points else axis_points(sp.axes, sp.mode)
    tasks_by_variant: dict[str, list[Task]] = {}
    resolvers: dict[Path, Resolver] = {}
    emulated: list[dict] = []   # variants with `emulate = true`: run in real time by `tcplab emulate`
    resolved_sha: dict[str, str] = {}   # with native runs to take: task hash -> SHA-256 of its resolved scenario
    for v in sp.variants:
        scen = (folder / v["scenario"]) if v.get("scenario") else sp.scenario
        if not scen.is_file():
            raise SweepError(file, locate(sp.text, "scenario"), f"variants[{v['name']}].scenario", f"no such file {scen}")
        if v.get("emulate"):
            emulated.append(v)
            continue
        res = resolvers.setdefault(scen, Resolver(scen, file, sp.text, version))
        base_seed = tomllib.loads(res.sc.to_toml()).get("run", {}).get("seed", 1)
        if seed is not None or seeds is not None:
            first = seed if seed is not None else (sp.seeds[0] if sp.seeds else base_seed)
            count = seeds if seeds is not None else (len(sp.seeds) if sp.seeds else 1)
            seed_list = list(range(first, first + count))
        else:
            seed_list = sp.seeds or [base_seed]
        fixed = v.get("set", {})
        tl = []
        point_names = list(sp.points) or [None] * len(points)
        for i, point in enumerate(points):
            own = v.get("point_set", {}).get(point_names[i], {})
            at = v.get("axis_at", {})
            placed = {at.get(k, k): x for k, x in point.items()}
            where = {k: "variants" for k in fixed} | {k: ("points" if sp.points else "axes") for k in placed} \
                | {k: "variants" for k in own}
            ov = {**fixed, **placed, **own}
            resolved = res.resolve(ov, where)
            sha = hashlib.sha256(resolved.encode()).hexdigest() if prerun else None
            for s in seed_list:
                if sha:
                    resolved_sha[run_hash(resolved, s, version)] = sha
                tl.append(Task(hash=run_hash(resolved, s, version), seed=s, params=point,
                               overrides=[f"{k}={_toml_literal(x)}" for k, x in ov.items()],
                               scenario_text=res.sc.to_toml(), scenario_file=res.sc.source, point=i, group=v["name"],
                               save="none", version=version))
        tl[0].save = "all"   # the run drawn in the report
        if sp.analysis:
            for t in tl:
                t.save = "all"   # the analysis reads every run's traces
        tasks_by_variant[v["name"]] = tl
    unique: dict[str, Task] = {}
    for tl in tasks_by_variant.values():
        for t in tl:
            if t.hash not in unique or t.save == "all":
                unique[t.hash] = t
    n_seeds = len({t.seed for tl in tasks_by_variant.values() for t in tl})
    print(f"  {len(sp.variants)} variant(s) × {len(points)} {'point' if sp.points else 'axis point'}(s) × {n_seeds} seed(s) = "
          f"{sum(len(t) for t in tasks_by_variant.values())} runs", flush=True)
    t0 = time.perf_counter()
    store = Store(out / "results.duckdb")
    try:
        ready = _prerun_results(prerun, list(unique.values()), resolved_sha) if prerun else None
        # the native runs were interrupted (Ctrl-C or SIGTERM): store the finished ones, then stop
        # as an interrupted sweep does (KeyboardInterrupt: "interrupted", exit 130)
        interrupted = prerun is not None and (prerun / INTERRUPTED_MARK).exists()
        counts = execute_tasks(list(unique.values()), out, jobs=jobs, backend=backend, ray_address=ray_address,
                               sweep_name=f"reproduce:{experiment}", store=store, ready=ready, interrupted=interrupted)
        summaries = store.summaries(status="ok")
        failed = dict(store.con.execute("SELECT hash, error FROM runs WHERE status = 'failed'").fetchall())
        run_dirs = dict(store.con.execute("SELECT hash, run_dir FROM runs").fetchall())
    finally:
        store.close()
    print(f"  {counts['ran']} run(s) executed, {counts['skipped']} already stored, in {time.perf_counter() - t0:.2f} s", flush=True)

    # The first run of each variant as OUT/<variant>/ (traces for the report).
    runs = {}
    for name, tl in tasks_by_variant.items():
        first = tl[0]
        if first.hash in failed:
            raise ValueError(f"{file}: variant {name}: run failed (seed {first.seed}): {failed[first.hash]}")
        dest = out / name
        src = run_dirs.get(first.hash)
        if dest.exists():
            shutil.rmtree(dest)
        if src and Path(src).is_dir():
            shutil.copytree(src, dest)
        else:   # stored earlier without its files: run it again into place (deterministic)
            from .api import Scenario, run
            run(Scenario.from_toml(first.scenario_text, source=first.scenario_file), seed=first.seed,
                overrides=first.overrides, out=dest)
        runs[name] = dest

    # Per-run values of every metric, derived metrics first.
    per_run: dict[str, list[tuple[tuple, dict, dict]]] = {}
    for name, tl in tasks_by_variant.items():
        lst = []
        for t in tl:
            if t.hash in failed:
                print(f"  warning: {name} seed {t.seed} point {t.params}: run failed: {failed[t.hash]}", file=sys.stderr)
                continue
            s = summaries[t.hash]
            try:
                d = compute_derived(sp.derived, s, sp.flow)
            except ExprError as e:
                raise ValueError(f"{file}: derived metric of variant {name}: {e}") from None
            if sp.analysis:
                d.update(sp.analysis.module.run_metrics(_run_dir(t, run_dirs, out)))
            lst.append(((t.point, t.seed), s, d))
        per_run[name] = lst

    # Emulated variants: one real-time run each (seed: the first), in this process, one after
    # another (parallel emulations would share the two cores and lose accuracy). They are not
    # stored in results.duckdb; their run directories are OUT/<variant>/.
    if emulated:
        from .emulate import EmulationRefused, emulate, refusal
        why = refusal()
        if why is not None:
            raise EmulationRefused(f"{file}: variants {', '.join(v['name'] for v in emulated)} need emulation: {why}")
        from .api import Scenario
        for v in emulated:
            scen = (folder / v["scenario"]) if v.get("scenario") else sp.scenario
            first = seed if seed is not None else (sp.seeds[0] if sp.seeds else None)
            ov = [f"{k}={_toml_literal(x)}" for k, x in v.get("set", {}).items()]
            print(f"  emulating {v['name']} in real time ...", flush=True)
            dest = out / v["name"]
            if dest.exists():
                shutil.rmtree(dest)
            r = emulate(Scenario.load(scen), seed=first, overrides=ov, out=dest)
            em = r.summary.get("emulation", {})
            print(f"    release lateness p50 {em.get('release_lateness_p50_ms', 0):.3f} ms, p99 "
                  f"{em.get('release_lateness_p99_ms', 0):.3f} ms{'  FELL BEHIND' if em.get('fell_behind') else ''}", flush=True)
            runs[v["name"]] = dest
            try:
                d = compute_derived(sp.derived, r.summary, sp.flow)
            except ExprError as e:
                raise ValueError(f"{file}: derived metric of variant {v['name']}: {e}") from None
            per_run[v["name"]] = [((0, first), r.summary, d)]

    def values(variant: str, metric: str) -> list[tuple[Any, Any]]:
        out_ = []
        metric, only = sp.split_point(metric)
        for key, s, d in per_run[variant]:
            if only is not None and key[0] != only:
                continue
            try:
                out_.append((key, resolve(s, metric, sp.flow, d)))
            except MetricError as e:
                raise MetricError(f"variant {variant}: {e}") from None
        return out_

    rows = []
    for v in sp.variants:
        name = v["name"]
        paper = v.get("paper", {})
        for metric in sp.variant_metrics(v):
            try:
                vals = [x for _, x in values(name, metric)]
            except MetricError as e:
                where = f"variants[{name}].paper.{metric}" if metric in paper else f"metrics ({metric})"
                raise SweepError(file, locate(sp.text, metric), where, str(e)) from None
            if any(isinstance(x, list) for x in vals):
                if "*" in metric:
                    raise SweepError(file, locate(sp.text, metric), metric, "a '*' path is a list; use it inside a [derived] function")
                # A list-valued summary field (coarse_timeout_times_s): shown per run, not averaged;
                # `ours` is the first run's (the saved run directory's) list.
                row = {"variant": name, "metric": metric, "paper": paper.get(metric), "ours": vals[0] if vals else None,
                       "source": v.get("source", "") if metric in paper else "", "n": len(vals), "per_seed": vals,
                       "mean": None, "std": None, "ci90": None}
                if v.get("label"):
                    row["label"] = v["label"]
                rows.append(row)
                continue
            d = describe(vals)
            multi = len(vals) > 1
            row = {"variant": name, "metric": metric, "paper": paper.get(metric),
                   "ours": (d["mean"] if multi else (vals[0] if vals else None)),
                   "source": v.get("source", "") if metric in paper else ""}
            if v.get("label"):
                row["label"] = v["label"]
            row.update({"n": d["n"], "mean": d["mean"], "std": d["std"], "ci90": d["ci"]})
            if multi:
                row.update({"seeds": n_seeds, "min": d["min"], "max": d["max"]})
            rows.append(row)

    claims = []
    for c in sp.claims:
        record: dict = {}
        try:
            held = bool(evaluate(c["tree"], claim_funcs(values, record)))
        except (ExprError, MetricError) as e:
            raise SweepError(file, c["line"], c["label"], str(e)) from None
        claims.append({"text": c["text"], "expr": c["expr"], "held": held, "values": record})

    from .fidelity import annotate
    annotate(folder, rows, claims)   # held/missed badge and, for a miss, its cause (fidelity.toml)
    comparison = {"experiment": experiment, "title": sp.title, "rows": rows, "claims": claims, "folder": str(folder),
                  "seeds": sorted({t.seed for tl in tasks_by_variant.values() for t in tl}),
                  "axes": sp.axes, "points": sp.points}
    (out / "comparison.json").write_text(json.dumps(comparison, indent=2) + "\n")

    print()
    from .textable import format_table
    label = {v["name"]: v.get("label", v["name"]) for v in sp.variants}
    spread = any(r["n"] > 1 for r in rows)
    heads = ["variant", "metric", "paper", "ours"] + (["± std", "min .. max", "n"] if spread else [])
    table = []
    for r in rows:
        line = [label[r["variant"]], r["metric"], _fmt(r["paper"]), _fmt(r["ours"])]
        if spread:
            line += [_fmt(r["std"]) if r["std"] is not None else "",
                     f"{_fmt(r.get('min'))} .. {_fmt(r.get('max'))}" if r["n"] > 1 else "", str(r["n"])]
        table.append(line)
    print(format_table(heads, table, align="<<>>>>>", min_widths=[7, 24, 10, 10, 9, 22, 4], indent="  ",
                       header_align_left=False))
    if claims:
        print("\n  claims")
        for c in claims:
            nums = ", ".join(f"{k} = {_fmt(v)}" for k, v in c["values"].items())
            print(f"  {'held  ' if c['held'] else 'MISSED'}  {c['text']}\n          {nums}")
    print(f"\nwrote {out / 'comparison.json'}")
    if sp.spec.get("figure"):
        print(f"wrote {_draw_figure(folder / sp.spec['figure'], out)}")
    if report:
        from .report import write_comparison_report
        path = write_comparison_report(out, rows, runs, title=sp.title, claims=claims, folder=folder)  # OUT/report.html
        extra = getattr(sp.analysis.module, "report_html", None) if sp.analysis else None
        if extra is not None:   # the analysis' figures, before the per-run sections
            dirs = {n: [_run_dir(t, run_dirs, out) for t in tl if t.hash not in failed] for n, tl in tasks_by_variant.items()}
            html = path.read_text()
            at = html.find("<h2>Claims</h2>")
            at = at if at >= 0 else html.rfind("</body>")
            path.write_text(html[:at] + extra(out, dirs) + html[at:])
        print(f"wrote {path}")
    sys.stdout.flush()
    return 0
