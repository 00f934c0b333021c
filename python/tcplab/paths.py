"""Where bundled scenarios live: $TCPLAB_SCENARIOS, ./scenarios, or the installed package's copy."""

from __future__ import annotations

import os
from pathlib import Path


def scenarios_roots() -> list[Path]:
    """Folders searched for a named experiment, first match wins: $TCPLAB_SCENARIOS, ./scenarios,
    then the scenarios installed with tcplab (tcplab.resources)."""
    from .resources import scenarios_dir
    env = os.environ.get("TCPLAB_SCENARIOS")
    if env:
        return [Path(env)]
    cwd = Path.cwd() / "scenarios"
    return ([cwd] if cwd.is_dir() else []) + [scenarios_dir()]


def scenarios_root() -> Path:
    return scenarios_roots()[0]


def find_experiment(name: str) -> Path:
    p = Path(name)
    if (p / "reproduce.toml").is_file():
        return p
    roots = scenarios_roots()
    for root in roots:
        if (root / name / "reproduce.toml").is_file():
            return root / name
    raise FileNotFoundError(f"no reproduction named {name!r}: expected {roots[-1] / name}/reproduce.toml "
                            f"(`tcplab reproduce --list` lists them)")
