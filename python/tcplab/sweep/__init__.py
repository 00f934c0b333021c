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

The package: :mod:`.spec` reads and checks a sweep file into tasks; :mod:`.run` executes tasks
into the store (:func:`execute` is one run in a worker); :mod:`.backends` are where they
execute (a local pool or Ray).
"""

from .run import _deferred_sigint, execute, execute_tasks, run_sweep
from .spec import (Resolver, Sweep, SweepError, Task, _duration_s, _seed_list, _toml_literal, axis_points,
                   check_axes, code_version, load_sweep, locate, run_hash)

__all__ = ["SweepError", "Sweep", "Task", "Resolver", "load_sweep", "run_sweep", "execute", "execute_tasks",
           "axis_points", "check_axes", "code_version", "locate", "run_hash"]
