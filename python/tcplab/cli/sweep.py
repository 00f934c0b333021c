"""`tcplab sweep`: run a sweep file (axes × seeds) into a results database."""

from __future__ import annotations

from pathlib import Path

from .args import add_runner_args, parse_time


def add_parser(sub) -> None:
    sw = sub.add_parser("sweep", help="run a sweep file (axes × seeds) into a results database",
                        description="Run every point of a sweep file (base scenario + axes + seeds; see README) in parallel and store "
                                    "one row per run in OUT/results.duckdb (per-run files in OUT/runs/<hash>/). Runs already stored "
                                    "with the same hash are skipped, so an interrupted sweep resumes where it stopped.")
    sw.add_argument("sweep", type=Path, help="sweep TOML file")
    sw.add_argument("--out", type=Path, required=True, help="output directory (results.duckdb, runs/, executed.log)")
    add_runner_args(sw)
    sw.add_argument("--retry-failed", action="store_true", help="run again the runs stored as failed")
    sw.add_argument("--commit-every", type=parse_time, default=0.2, metavar="SECONDS",
                    help="store finished runs in one transaction at most this often (default 0.2 s; 0 = as each result arrives). "
                         "A kill -9 loses at most the runs finished since the last commit; they run again on resume")
    sw.set_defaults(fn=run)


def run(a) -> int:
    from ..sweep import run_sweep
    if a.commit_every < 0:
        raise ValueError(f"--commit-every must be >= 0 seconds, got {a.commit_every}")
    res = run_sweep(a.sweep, a.out, jobs=a.jobs, backend=a.backend, ray_address=a.ray_address, retry_failed=a.retry_failed,
                    commit_every=a.commit_every)
    print(f"{res['total']} runs: {res['skipped']} already stored, {res['ran']} ran, {res['failed']} failed; "
          f"results in {a.out / 'results.duckdb'}")
    return 1 if res["failed"] else 0
