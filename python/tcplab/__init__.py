"""tcplab — a fast, faithful packet-level network simulator and laboratory for TCP congestion control.

Quick start::

    import tcplab
    run = tcplab.run("scenarios/examples/udp-dumbbell.toml", seed=3, overrides={"run.duration": "5s"})
    print(run.summary["links"][0]["utilization"])
    run.links          # polars DataFrame
    run.save("out/")   # summary.json, scenario.toml, trace_*.parquet
"""

from ._core import ScenarioError, __version__, schema
from .api import Run, Scenario, load, run, validate

__all__ = ["Run", "Scenario", "ScenarioError", "__version__", "load", "run", "schema", "validate"]
