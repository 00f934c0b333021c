"""Sweeps: many runs of one scenario over a grid of parameters and seeds, run in parallel (a local
process pool or Ray) and kept in a results store (:mod:`tcplab.store`).

A sweep file (TOML)::

    title = "Brakmo: throughput vs router buffers"   # optional
    scenario = "../single-transfer/scenario.toml"    # base scenario, relative to this file
    flow = "transfer"          # optional: the distinguished flow of `tcplab table` (default: the first)
    seeds = { from = 1, count = 20 }                 # or seeds = [1, 2, 3]; default: the scenario's run.seed
    mode = "grid"              # "grid" (every combination, the default) or "zip" (axes advance together)
    buckets = "5s"             # optional: bottleneck utilization per time bucket (needs the link traced)
    save = "all"               # per-run files: "all" (summary, scenario, traces), "summary", "none"

    [set]                      # overrides applied to every run (`--set` keys)
    "run.trace.tcp" = false

    [axes]                     # any `--set` key: a list of values
    "tcp[0].variant" = ["reno", "vegas"]
    "links[1].queue.limit" = ["10pkts", "15pkts", "20pkts"]

The design is paired: every parameter point runs the same seeds, so every variant sees the same
traffic (seed 000 §2.3.1, "the twenty traffic patterns were the same for each TCP
implementation"). Every point is checked with the Rust scenario validator before any run starts;
errors name the sweep file, line and field.

A run's identity is its content hash: sha256 of the scenario text after overrides, the seed and
the code version (tcplab version + a digest of the compiled core). Re-running a sweep skips runs
whose hash is already stored. Workers write the per-run directory under a temporary name and
rename it when complete; only the parent process writes the database, committing finished runs’
rows in one transaction (every 0.2 s by default, `--commit-every`) after their files are in
place — so a kill -9 at any moment keeps every committed run, leaves nothing half-written that a
rerun would trust, and costs at most the runs finished since the last commit.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import sys
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable



def _toml_literal(value: Any) -> str:
    from .api import _toml_literal as lit   # lazy: keeps `tcplab --help` free of polars
    return lit(value)


class SweepError(ValueError):
    """A sweep file that cannot be run; names the file, line and field."""

    def __init__(self, file: str, line: int | None, field: str, message: str):
        self.file, self.line, self.field, self.detail = file, line, field, message
        loc = f"{file}:{line}" if line else file
        super().__init__(f"{loc}: {field}: {message}")


def locate(text: str, key: str, section: str | None = None) -> int | None:
    """1-based line of `key` in TOML text (under `[section]` or inside `section = {...}` when
    given): the first line where the key, bare or quoted, is assigned; None when not found."""
    lines = text.splitlines()
    esc = re.escape(key)
    pat = re.compile(rf'(^|[{{,\s])("{esc}"|\'{esc}\'|{esc})\s*=')
    in_section = section is None
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if section is not None:
            if re.match(rf'^\[\s*"?{re.escape(section)}"?\s*\]', s):
                in_section = True
                continue
            if s.startswith("[") and not s.startswith("[["):
                if in_section and not re.match(rf'^\[\s*"?{re.escape(section)}"?\s*\]', s):
                    in_section = False
            if re.match(rf'^"?{re.escape(section)}"?\s*=', s) and pat.search(line.split("=", 1)[1]):
                return i
        if in_section and pat.search(line):
            return i
    # fall back: anywhere
    for i, line in enumerate(lines, 1):
        if pat.search(line):
            return i
    return None


def code_version() -> str:
    """tcplab's version, source revision and a digest of the compiled core, so a rebuilt core
    never reuses stored results (the string `tcplab --version` prints: tcplab.buildinfo)."""
    from .buildinfo import code_version as _code_version
    return _code_version()


def run_hash(scenario_text: str, seed: int, version: str) -> str:
    payload = json.dumps({"scenario": scenario_text, "seed": seed, "code": version}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


@dataclass
class Task:
    """One run: a parameter point and a seed. `overrides` are `--set` strings; `params` the axis
    values (for the store's columns)."""
    hash: str
    seed: int
    params: dict[str, Any]
    overrides: list[str]
    scenario_text: str
    scenario_file: str
    point: int = 0
    group: str = ""                 # free label (reproduce: the variant name)
    save: str = "all"
    buckets_s: float | None = None
    run_dir: str | None = None      # where the worker writes the run directory
    log: str | None = None          # executed-runs log (one line per executed run)
    session: str = ""
    version: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _seed_list(raw: Any, file: str, text: str) -> list[int] | None:
    if raw is None:
        return None
    line = locate(text, "seeds")
    if isinstance(raw, list):
        if not raw:
            raise SweepError(file, line, "seeds", "empty seed list")
        bad = [s for s in raw if isinstance(s, bool) or not isinstance(s, int) or s < 0]
        if bad:
            raise SweepError(file, line, "seeds", f"seeds must be non-negative integers, got {bad[0]!r}")
        if len(set(raw)) != len(raw):
            raise SweepError(file, line, "seeds", "a seed is listed twice")
        return list(raw)
    if isinstance(raw, dict):
        unknown = set(raw) - {"from", "count"}
        if unknown or "count" not in raw:
            raise SweepError(file, line, "seeds", 'expected seeds = [1, 2, 3] or seeds = { from = 1, count = 20 }')
        start, count = raw.get("from", 1), raw["count"]
        for k, v in (("from", start), ("count", count)):
            if isinstance(v, bool) or not isinstance(v, int) or v < (1 if k == "count" else 0):
                raise SweepError(file, line, f"seeds.{k}", f"expected a {'positive' if k == 'count' else 'non-negative'} integer, got {v!r}")
        return list(range(start, start + count))
    raise SweepError(file, line, "seeds", f"expected a list of integers or {{ from, count }}, got {raw!r}")


def _duration_s(v: Any, file: str, text: str, name: str) -> float:
    m = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s|min)\s*", str(v))
    if not m:
        raise SweepError(file, locate(text, name), name, f'expected a duration like "5s", got {v!r}')
    x = float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "min": 60.0}[m.group(2)]
    if x <= 0:
        raise SweepError(file, locate(text, name), name, "must be positive")
    return x


def axis_points(axes: dict[str, list], mode: str) -> list[dict[str, Any]]:
    keys = list(axes)
    if not keys:
        return [{}]
    if mode == "zip":
        return [dict(zip(keys, vals)) for vals in zip(*(axes[k] for k in keys))]
    return [dict(zip(keys, vals)) for vals in itertools.product(*(axes[k] for k in keys))]


def check_axes(axes: Any, file: str, text: str, mode: str, section: str = "axes") -> dict[str, list]:
    if axes is None:
        return {}
    if not isinstance(axes, dict):
        raise SweepError(file, locate(text, section), section, "expected a table of KEY = [values]")
    for k, vals in axes.items():
        if not isinstance(vals, list):
            raise SweepError(file, locate(text, k, section), f'{section}."{k}"', f"expected a list of values, got {vals!r}")
        if not vals:
            raise SweepError(file, locate(text, k, section), f'{section}."{k}"', "empty axis: give at least one value")
    if mode == "zip" and len({len(v) for v in axes.values()}) > 1:
        lens = ", ".join(f'"{k}" has {len(v)}' for k, v in axes.items())
        raise SweepError(file, locate(text, "mode"), "mode", f'"zip" needs axes of equal length ({lens})')
    return axes


class Resolver:
    """Validates (base + overrides) with the Rust core and computes the run hash, caching the
    resolved text per parameter point. Errors from an axis or `set` key are relocated to the
    sweep/reproduce file's line."""

    def __init__(self, scenario_path: Path, file: str, text: str, version: str):
        from .api import Scenario
        self.sc = Scenario.load(scenario_path)
        self.file, self.text, self.version = file, text, version
        self.cache: dict[tuple, str] = {}

    def resolve(self, overrides: dict[str, Any], where: dict[str, str]) -> str:
        """`where` maps each override key to the section it came from (for error locations)."""
        from . import _core
        key = tuple(sorted((k, _toml_literal(v)) for k, v in overrides.items()))
        if key in self.cache:
            return self.cache[key]
        try:
            resolved = _core.validate(self.sc.to_toml(), self.sc.source, [f"{k}={_toml_literal(v)}" for k, v in overrides.items()])
        except _core.ScenarioError as e:
            # Find the key that is wrong on its own, so the error names it; keys that are only
            # valid together (a variant and its parameters) are checked as a whole.
            for k, v in overrides.items():
                try:
                    _core.validate(self.sc.to_toml(), self.sc.source, [f"{k}={_toml_literal(v)}"])
                except _core.ScenarioError as e1:
                    if getattr(e1, "field", None) != getattr(e, "field", None):
                        continue
                    sec = where.get(k, "axes")
                    raise SweepError(self.file, locate(self.text, k, sec), f'{sec}."{k}"',
                                     f"{getattr(e1, 'detail', e1)} (value {_toml_literal(v)}; scenario {self.sc.source})") from None
            combo = ", ".join(f"{k}={_toml_literal(v)}" for k, v in overrides.items())
            raise SweepError(self.file, None, getattr(e, "field", "") or "axes", f"{getattr(e, 'detail', e)} (with {combo})") from None
        self.cache[key] = resolved
        return resolved


@dataclass
class Sweep:
    file: str
    title: str
    scenario: Path
    flow: str | None
    seeds: list[int]
    mode: str
    fixed: dict[str, Any]
    axes: dict[str, list]
    buckets_s: float | None
    save: str
    tasks: list[Task] = field(default_factory=list)

    @property
    def name(self) -> str:
        return Path(self.file).stem


def load_sweep(path: str | os.PathLike, version: str | None = None) -> Sweep:
    """Parse and check a sweep file and every run it implies (no run starts here)."""
    p = Path(path)
    file = str(p)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such sweep file")
    text = p.read_text()
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        raise SweepError(file, int(m.group(1)) if m else None, "toml", str(e)) from None
    known = {"title", "scenario", "flow", "seeds", "mode", "buckets", "save", "set", "axes"}
    for k in spec:
        if k not in known:
            raise SweepError(file, locate(text, k), k, f"unknown key; expected one of {', '.join(sorted(known))}")
    if "scenario" not in spec or not isinstance(spec["scenario"], str):
        raise SweepError(file, locate(text, "scenario"), "scenario", "missing: the base scenario file (relative to the sweep file)")
    scenario = (p.parent / spec["scenario"]).resolve() if not Path(spec["scenario"]).is_absolute() else Path(spec["scenario"])
    if not scenario.is_file():
        raise SweepError(file, locate(text, "scenario"), "scenario", f"{spec['scenario']}: no such file ({scenario})")
    mode = spec.get("mode", "grid")
    if mode not in ("grid", "zip"):
        raise SweepError(file, locate(text, "mode"), "mode", f'expected "grid" or "zip", got {mode!r}')
    save = spec.get("save", "all")
    if save not in ("all", "summary", "none"):
        raise SweepError(file, locate(text, "save"), "save", f'expected "all", "summary" or "none", got {save!r}')
    fixed = spec.get("set", {})
    if not isinstance(fixed, dict):
        raise SweepError(file, locate(text, "set"), "set", "expected a table of KEY = value")
    axes = check_axes(spec.get("axes"), file, text, mode)
    overlap = set(fixed) & set(axes)
    if overlap:
        k = sorted(overlap)[0]
        raise SweepError(file, locate(text, k, "axes"), f'axes."{k}"', "also given in [set]")
    seeds = _seed_list(spec.get("seeds"), file, text)
    buckets = _duration_s(spec["buckets"], file, text, "buckets") if "buckets" in spec else None
    sw = Sweep(file=file, title=spec.get("title", p.stem), scenario=scenario, flow=spec.get("flow"),
               seeds=seeds or [], mode=mode, fixed=fixed, axes=axes, buckets_s=buckets, save=save)
    version = version or code_version()
    res = Resolver(scenario, file, text, version)
    if not sw.seeds:
        base_seed = tomllib.loads(res.sc.to_toml()).get("run", {}).get("seed", 1)
        sw.seeds = [base_seed]
    where = {k: "set" for k in fixed} | {k: "axes" for k in axes}
    seen = set()
    for i, point in enumerate(axis_points(axes, mode)):
        ov = {**fixed, **point}
        resolved = res.resolve(ov, where)
        for s in sw.seeds:
            h = run_hash(resolved, s, version)
            if h in seen:
                continue
            seen.add(h)
            sw.tasks.append(Task(hash=h, seed=s, params=point, overrides=[f"{k}={_toml_literal(v)}" for k, v in ov.items()],
                                 scenario_text=res.sc.to_toml(), scenario_file=res.sc.source, point=i, save=save,
                                 buckets_s=buckets, version=version))
    return sw


# Worker ----------------------------------------------------------------------------------------

def _link_buckets(run, width: float) -> list[dict]:
    """Utilization of each traced link per time bucket of `width` seconds, from the departures
    in the link trace (bytes sent × 8 / (rate × bucket length)); the last bucket is cut at the
    end of the run. A packet counts in the bucket where its transmission starts, so a bucket can
    read up to one packet's worth above 100 %."""
    tab = run._traces.get("link") or {}
    if not tab or not tab.get("t_s"):
        return []
    end = run.summary["sim_end_s"]
    rates = {l["name"]: l["rate_bps"] for l in run.summary["links"]}
    acc: dict[tuple[str, int], int] = {}
    for link, t, ev, b in zip(tab["link"], tab["t_s"], tab["event"], tab["bytes"]):
        if ev == "depart":
            k = (link, min(int(t // width), max(0, int((end - 1e-12) // width))))
            acc[k] = acc.get(k, 0) + b
    out = []
    nb = max(1, int(-(-end // width)))
    for link in sorted({k[0] for k in acc}):
        for i in range(nb):
            t0, t1 = i * width, min((i + 1) * width, end)
            if t1 <= t0:
                continue
            out.append({"link": link, "bucket": i, "t_from_s": t0, "t_to_s": t1,
                        "utilization": acc.get((link, i), 0) * 8.0 / (rates[link] * (t1 - t0))})
    return out


def execute(task: dict) -> dict:
    """Run one task (in a worker process, a Ray task or in-process). Writes the run directory
    under a temporary name and renames it into place when complete. Never raises for a failing
    run: the error is returned."""
    from .api import Scenario, run
    t0 = time.perf_counter()
    result = {"hash": task["hash"], "status": "ok", "error": None, "summary_json": None, "buckets": [], "run_dir": None}
    try:
        sc = Scenario.from_toml(task["scenario_text"], source=task["scenario_file"])
        r = run(sc, seed=task["seed"], overrides=task["overrides"])
        result["summary_json"] = r.summary_json
        if task.get("buckets_s"):
            result["buckets"] = _link_buckets(r, task["buckets_s"])
        target = task.get("run_dir")
        if target and task.get("save", "all") != "none":
            target = Path(target)
            tmp = target.parent / f".tmp-{target.name}-{os.getpid()}"
            if tmp.exists():
                shutil.rmtree(tmp)
            if task.get("save", "all") == "all":
                r.save(tmp)
            else:
                tmp.mkdir(parents=True)
                (tmp / "summary.json").write_text(r.summary_json + "\n")
                (tmp / "scenario.toml").write_text(r.scenario_text)
            if target.exists():   # a leftover of an attempt that was never committed
                shutil.rmtree(target)
            os.replace(tmp, target)
            result["run_dir"] = str(target)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the sweep goes on; the error is stored with the run
        result["status"] = "failed"
        result["error"] = f"{type(e).__name__}: {e}"
    result["wall_s"] = time.perf_counter() - t0
    if task.get("log"):
        line = f"{task['hash']} {task.get('session', '')} {os.getpid()} {time.time():.6f} {result['status']}\n"
        fd = os.open(task["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    return result


def _worker_init() -> None:
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops the pool


# Progress --------------------------------------------------------------------------------------

class SweepProgress:
    """done/total, failures and ETA on stderr: a redrawn line on a terminal, a line every ~10 %
    otherwise."""

    def __init__(self, total: int, skipped: int, stream=None, quiet: bool = False):
        self.total, self.skipped = total, skipped
        self.done = self.failed = 0
        self.t0 = time.monotonic()
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.quiet = quiet
        self.last_pct = -1
        self.last_draw = 0.0

    def _line(self) -> str:
        el = time.monotonic() - self.t0
        eta = el / self.done * (self.total - self.done) if self.done else float("nan")
        width = 30
        fill = int(width * self.done / self.total) if self.total else width
        eta_s = "--" if eta != eta else (f"{eta:.0f} s" if eta < 120 else f"{eta / 60:.1f} min")
        return (f"[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} runs, {self.failed} failed, "
                f"{el:.1f} s elapsed, ETA {eta_s}")

    def update(self, ok: bool) -> None:
        self.done += 1
        if not ok:
            self.failed += 1
        if self.quiet:
            return
        now = time.monotonic()
        if self.tty:
            if now - self.last_draw > 0.1 or self.done == self.total:
                print("\r" + self._line(), end="", file=self.stream, flush=True)
                self.last_draw = now
        else:
            pct = 100 * self.done // max(1, self.total)
            if pct // 10 != self.last_pct // 10 or self.done == self.total:
                print(self._line(), file=self.stream, flush=True)
                self.last_pct = pct

    def close(self) -> None:
        if self.tty and not self.quiet and self.total:
            print(file=self.stream, flush=True)


# Backends --------------------------------------------------------------------------------------

def _run_local(tasks: list[dict], jobs: int, on_results: Callable[[list[dict]], None]) -> None:
    import concurrent.futures as cf
    if jobs <= 1:
        # One run at a time in a thread of this process (the core releases the GIL), so the
        # parent commits finished runs while the next one runs, as with a pool.
        pool = cf.ThreadPoolExecutor(max_workers=1)
    else:
        import multiprocessing as mp
        # spawn: the Rust core's threads and fork do not mix
        pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"), initializer=_worker_init)
    import queue
    finished: queue.Queue = queue.Queue()        # done callbacks feed it: O(1) per run, unlike cf.wait over all
    try:
        for t in tasks:
            pool.submit(execute, t).add_done_callback(finished.put)
        left = len(tasks)
        while left:
            try:
                got = [finished.get(timeout=0.1)]
            except queue.Empty:
                got = []
            while True:
                try:
                    got.append(finished.get_nowait())
                except queue.Empty:
                    break
            left -= len(got)
            on_results([f.result() for f in got])   # also called empty: lets a due commit happen
    except BaseException:
        procs = list(getattr(pool, "_processes", {}).values())
        # Runs that finished before the interrupt are complete: hand them over to be stored.
        done = []
        while True:
            try:
                f = finished.get_nowait()
            except queue.Empty:
                break
            if not f.cancelled() and f.exception() is None:
                done.append(f.result())
        if done:
            on_results(done)
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.terminate()
        raise
    pool.shutdown(wait=True)


def _run_ray(tasks: list[dict], jobs: int, address: str | None, on_results: Callable[[list[dict]], None]) -> None:
    try:
        import ray
    except ImportError:
        raise ValueError("--backend ray needs the `ray` package (pip install ray)") from None
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        else:
            ray.init(num_cpus=max(1, jobs), include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        started = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(execute)
        pending = [remote.remote(t) for t in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1, timeout=0.1)
            more, pending = ray.wait(pending, num_returns=len(pending), timeout=0) if pending else ([], [])
            on_results(ray.get(done + more) if done or more else [])
    except BaseException:
        for ref in locals().get("pending", []):
            try:
                ray.cancel(ref, force=True)
            except Exception:
                pass
        raise
    finally:
        if started:
            ray.shutdown()


class _deferred_sigint:
    """Hold SIGINT (Ctrl-C) while a commit runs, then raise KeyboardInterrupt after it, so an
    interrupt never rolls back runs that had already finished. Only in the main thread."""

    def __enter__(self):
        import signal
        import threading
        self.hit = False
        self.old = None
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, *_):
        self.hit = True

    def __exit__(self, *exc):
        import signal
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
        if self.hit and exc[0] is None:
            raise KeyboardInterrupt
        return False


def execute_tasks(tasks: list[Task], out: Path, *, jobs: int | None = None, backend: str = "local",
                  ray_address: str | None = None, sweep_name: str = "", retry_failed: bool = False,
                  quiet: bool = False, store=None, commit_every: float = 0.2) -> dict:
    """Run the tasks not already in OUT's store. Finished runs are committed in one transaction
    per `commit_every` seconds (0: every batch as it arrives) and when the sweep ends or is
    interrupted; a kill -9 loses at most the runs finished in the last window, which a rerun
    runs again. Returns counts {total, skipped, ran, failed, session}."""
    from .store import Store
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "runs").mkdir(exist_ok=True)
    for leftover in (out / "runs").glob(".tmp-*"):   # half-written by a killed worker: never trusted
        shutil.rmtree(leftover, ignore_errors=True)
    own = store is None
    store = store or Store(out / "results.duckdb")
    session = uuid.uuid4().hex[:12]
    try:
        stored = store.stored_hashes(include_failed=not retry_failed)
        todo = [t for t in tasks if t.hash not in stored]
        by_hash = {t.hash: t for t in todo}
        for t in todo:
            t.session = session
            t.log = str(out / "executed.log")
            if t.run_dir is None:
                t.run_dir = str(out / "runs" / t.hash)
        jobs = jobs or os.cpu_count() or 1
        prog = SweepProgress(len(todo), len(tasks) - len(todo), quiet=quiet)
        if not quiet:
            print(f"{len(tasks)} runs: {len(tasks) - len(todo)} already stored, {len(todo)} to run "
                  f"({backend}, {jobs} job{'s' if jobs != 1 else ''})", file=sys.stderr, flush=True)

        waiting: list[dict] = []
        last_commit = [time.monotonic()]

        committed = [0]
        progress_file = out / "progress.json"

        def flush() -> None:
            if waiting:
                with _deferred_sigint():   # a Ctrl-C during the commit takes effect once it is done
                    store.commit([(by_hash[r["hash"]], r) for r in waiting], sweep=sweep_name, session=session)
                committed[0] += len(waiting)
                waiting.clear()
                # The database is locked while the sweep runs; this file lets another shell watch it.
                tmp = progress_file.with_suffix(".tmp")
                tmp.write_text(json.dumps({"session": session, "total": len(tasks), "skipped": len(tasks) - len(todo),
                                           "to_run": len(todo), "finished": prog.done, "failed": prog.failed,
                                           "committed": committed[0]}) + "\n")
                os.replace(tmp, progress_file)
            last_commit[0] = time.monotonic()

        def on_results(results: list[dict]) -> None:
            waiting.extend(results)
            for r in results:
                prog.update(r["status"] == "ok")
            if time.monotonic() - last_commit[0] >= commit_every:
                flush()

        try:
            if backend == "ray":
                _run_ray([t.to_dict() for t in todo], jobs, ray_address, on_results)
            elif backend == "local":
                _run_local([t.to_dict() for t in todo], jobs, on_results)
            else:
                raise ValueError(f"unknown backend {backend!r}; expected local or ray")
        finally:
            flush()   # finished runs are complete: store them even on Ctrl-C or an error
            prog.close()
        return {"total": len(tasks), "skipped": len(tasks) - len(todo), "ran": prog.done, "failed": prog.failed,
                "session": session}
    finally:
        if own:
            store.close()


def run_sweep(path: str | os.PathLike, out: str | os.PathLike, *, jobs: int | None = None, backend: str = "local",
              ray_address: str | None = None, retry_failed: bool = False, quiet: bool = False,
              commit_every: float = 0.2) -> dict:
    sw = load_sweep(path)
    out = Path(out)
    if not quiet:
        axes = ", ".join(f"{k} ({len(v)})" for k, v in sw.axes.items()) or "none"
        print(f"sweep {sw.title}\n  scenario {sw.scenario}\n  axes     {axes}; {len(sw.seeds)} seed(s); {sw.mode}\n  output   {out}",
              file=sys.stderr, flush=True)
    from .store import Store
    out.mkdir(parents=True, exist_ok=True)
    store = Store(out / "results.duckdb")
    try:
        store.set_meta(sw.name, {"title": sw.title, "file": str(Path(sw.file).resolve()), "flow": sw.flow,
                                 "axes": list(sw.axes), "seeds": sw.seeds, "mode": sw.mode})
        res = execute_tasks(sw.tasks, out, jobs=jobs, backend=backend, ray_address=ray_address, sweep_name=sw.name,
                            retry_failed=retry_failed, quiet=quiet, store=store, commit_every=commit_every)
    finally:
        store.close()
    return res
