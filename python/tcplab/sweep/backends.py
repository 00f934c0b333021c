"""Where runs execute: a local process pool (or one thread when --jobs 1) or Ray tasks. A backend
calls ``execute(task)`` for every task and hands finished results to ``on_results`` in batches
(also empty, so the caller can commit on time); it knows nothing of sweeps or the store."""

from __future__ import annotations

from typing import Callable


def _worker_init() -> None:
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops the pool

def _run_local(execute: Callable[[dict], dict], tasks: list[dict], jobs: int,
               on_results: Callable[[list[dict]], None]) -> None:
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
        # Reap them here, SIGKILL for one that outlives SIGTERM: the interpreter's exit joins
        # every child it started, and an interrupted sweep must end, not wait on a worker.
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
        raise
    pool.shutdown(wait=True)


def _run_ray(execute: Callable[[dict], dict], tasks: list[dict], jobs: int, address: str | None,
             on_results: Callable[[list[dict]], None]) -> None:
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
