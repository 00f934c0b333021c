"""Where bundled scenarios live: $TCPLAB_SCENARIOS, ./scenarios, or the checkout's scenarios/."""

from __future__ import annotations

import os
from pathlib import Path


def scenarios_root() -> Path:
    env = os.environ.get("TCPLAB_SCENARIOS")
    if env:
        return Path(env)
    cwd = Path.cwd() / "scenarios"
    if cwd.is_dir():
        return cwd
    return Path(__file__).resolve().parents[2] / "scenarios"


def find_experiment(name: str) -> Path:
    p = Path(name)
    if (p / "reproduce.toml").is_file():
        return p
    q = scenarios_root() / name
    if (q / "reproduce.toml").is_file():
        return q
    raise FileNotFoundError(f"no reproduction named {name!r}: expected {q}/reproduce.toml")
