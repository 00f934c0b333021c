"""Running tasks into a results store: one run in a worker (:func:`execute`), the commits
in batches with Ctrl-C held off while one is written (:func:`execute_tasks`), and a sweep
file end to end (:func:`run_sweep`)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

from ..progress import RunsProgress
from .backends import _run_local, _run_ray
from .spec import Task, load_sweep


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


#: The native binary's exit status for a command line it hands back to the Python CLI, when
#: TCPLAB_NO_HANDBACK=1 asks it not to exec Python (crates/tcplab-cli/src/launch.rs).
HANDBACK_STATUS = 64


class NativeRunFailed(Exception):
    """A run the native binary refused or failed (its error message, as `tcplab run` prints it)."""


def _run_native(task: dict, target: Path) -> str | None:
    """Run a task whose files are saved through the native binary (`tcplab run`'s path): it
    streams the traces to Parquet itself, so the worker never imports polars or turns trace
    columns into Python lists. Its summary (JSON text); None when the binary is absent, switched
    off (TCPLAB_NATIVE=0) or hands the command line back (exit HANDBACK_STATUS: the in-process
    path runs it). A run that fails there raises NativeRunFailed with the binary's error: it is
    not run a second time. Same summary but wall_s, same files (tests/test_native_cli.py)."""
    import subprocess
    from .._front import native_binary
    exe = native_binary()
    if exe is None or os.environ.get("TCPLAB_NATIVE", "1") == "0":
        return None
    tmp = target.parent / f".tmp-{target.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    # the scenario's text under its file's name (a scenario without `name` is named by its stem)
    src_dir = target.parent / f".tmp-src-{target.name}-{os.getpid()}"
    src_dir.mkdir(exist_ok=True)
    text_file = src_dir / (Path(task["scenario_file"]).stem + ".toml")
    text_file.write_text(task["scenario_text"])
    try:
        # no memory limit: the in-process path runs without one
        args = [exe, "run", str(text_file), "--out", str(tmp), "--json", "--max-memory", "1000000TB"]
        if task.get("seed") is not None:
            args += ["--seed", str(task["seed"])]
        for o in task.get("overrides") or []:
            args += ["--set", o]
        p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           env=dict(os.environ, TCPLAB_NO_HANDBACK="1"))
        if p.returncode == HANDBACK_STATUS:
            shutil.rmtree(tmp, ignore_errors=True)
            return None
        if p.returncode == 130:
            raise KeyboardInterrupt
        if p.returncode != 0 or not (tmp / "COMPLETE.json").is_file():
            shutil.rmtree(tmp, ignore_errors=True)
            err = p.stderr.strip()
            err = err.removeprefix("error: ") if err else f"exit status {p.returncode}"
            # the scenario file the binary read is a temporary copy: name the task's own file
            raise NativeRunFailed(err.replace(str(text_file), task["scenario_file"]))
        if target.exists():   # a leftover of an attempt that was never committed
            shutil.rmtree(target)
        os.replace(tmp, target)
        return p.stdout.rstrip("\n")
    finally:
        shutil.rmtree(src_dir, ignore_errors=True)


def execute(task: dict) -> dict:
    """Run one task (in a worker process, a Ray task or in-process). Writes the run directory
    under a temporary name and renames it into place when complete. Never raises for a failing
    run: the error is returned."""
    from ..api import Scenario, run
    t0 = time.perf_counter()
    result = {"hash": task["hash"], "status": "ok", "error": None, "summary_json": None, "buckets": [], "run_dir": None}
    try:
        target = task.get("run_dir")
        if target and task.get("save", "all") == "all" and not task.get("buckets_s"):
            summary_json = _run_native(task, Path(target))
            if summary_json is not None:
                result["summary_json"] = summary_json
                result["run_dir"] = str(target)
                return _finished(task, result, t0)
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
    except NativeRunFailed as e:  # the binary's message, as `tcplab run` prints it
        result["status"] = "failed"
        result["error"] = str(e)
    except BaseException as e:  # the sweep goes on; the error is stored with the run
        result["status"] = "failed"
        result["error"] = f"{type(e).__name__}: {e}"
    return _finished(task, result, t0)


def _take_ready(task: Task, ready: dict) -> dict:
    """A run the native `tcplab reproduce` ran (tcplab.reproduce._prerun_results): its saved
    folder moved into place and the run logged, as `execute` ends one."""
    result = {k: ready[k] for k in ("hash", "status", "error", "summary_json", "buckets", "run_dir")}
    if ready.get("dir") is not None:
        target = Path(task.run_dir)
        if target.exists():   # a leftover of an attempt that was never committed
            shutil.rmtree(target)
        shutil.move(str(ready["dir"]), str(target))
        result["run_dir"] = str(target)
    _finished(task.to_dict(), result, time.perf_counter())
    result["wall_s"] = ready["wall_s"]
    return result


def _finished(task: dict, result: dict, t0: float) -> dict:
    result["wall_s"] = time.perf_counter() - t0
    if task.get("log"):
        line = f"{task['hash']} {task.get('session', '')} {os.getpid()} {time.time():.6f} {result['status']}\n"
        fd = os.open(task["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    return result

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
                  quiet: bool = False, store=None, commit_every: float = 0.2, ready: dict | None = None,
                  interrupted: bool = False) -> dict:
    """Run the tasks not already in OUT's store. Finished runs are committed in one transaction
    per `commit_every` seconds (0: every batch as it arrives) and when the sweep ends or is
    interrupted; a kill -9 loses at most the runs finished in the last window, which a rerun
    runs again. `ready`: {hash: result} of tasks already run elsewhere (the native `tcplab
    reproduce`), stored as if run here; `interrupted`: those were run until a Ctrl-C, so they are
    stored and KeyboardInterrupt raised, as when this sweep is interrupted. Returns counts
    {total, skipped, ran, failed, session}."""
    from ..store import Store
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
        prog = RunsProgress(len(todo), len(tasks) - len(todo), quiet=quiet)
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
            done = [t for t in todo if ready and t.hash in ready]
            if done:
                on_results([_take_ready(t, ready[t.hash]) for t in done])
            if interrupted:
                raise KeyboardInterrupt   # the finally below stores the runs taken
            rest = [t for t in todo if not (ready and t.hash in ready)]
            if not rest:
                pass
            elif backend == "ray":
                _run_ray(execute, [t.to_dict() for t in rest], jobs, ray_address, on_results)
            elif backend == "local":
                _run_local(execute, [t.to_dict() for t in rest], jobs, on_results)
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
    from ..store import Store
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
