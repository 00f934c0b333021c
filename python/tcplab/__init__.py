"""tcplab — a fast, faithful packet-level network simulator and laboratory for TCP congestion control.

Quick start::

    import tcplab
    run = tcplab.run("scenarios/examples/udp-dumbbell.toml", seed=3, overrides={"run.duration": "5s"})
    print(run.summary["links"][0]["utilization"])
    run.links          # polars DataFrame
    run.save("out/")   # summary.json, scenario.toml, trace_*.parquet

The names below are imported on first use (PEP 562): `python -m tcplab` (where the native
`tcplab` command hands the commands it does not take) and :mod:`tcplab._front` import no more
than they use.
"""

import importlib

__all__ = ["Run", "Scenario", "ScenarioError", "__version__", "load", "run", "schema", "validate"]

# Where each public name lives; `api`, `_core` and `tomltext` are the submodules `import tcplab`
# used to load (some callers reach them as attributes).
_EXPORTS = {"ScenarioError": "_core", "__version__": "_core", "schema": "_core",
            "Run": "api", "Scenario": "api", "load": "api", "run": "api", "validate": "api"}
_SUBMODULES = ("api", "_core", "tomltext")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))
