"""What the fidelity evidence scripts share (issue 31's scripts beside the reproductions:
`scenarios/**/*evidence.py`, `seed_spread.py`, `brakmo/single-transfer/lite_order.py`): their
reproduction's reproduce.toml, one flow or link of a run's summary, and writing the markdown they
generate to `--out` or to stdout. Each script kept its own copy of these before."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any, Iterable


def load_spec(folder: Path) -> dict[str, Any]:
    """The reproduce.toml in `folder`, parsed."""
    return tomllib.loads((Path(folder) / "reproduce.toml").read_text())


def variants_by_name(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The reproduction's `[[variants]]` rows by their `name`."""
    return {v["name"]: v for v in spec["variants"]}


def flow(summary: dict[str, Any], name: str) -> dict[str, Any]:
    """Flow `name` of a run's summary (its `flows` a list of rows, or a dict of them by name)."""
    flows = summary["flows"]
    if isinstance(flows, dict):
        return flows[name]
    return next(f for f in flows if f["name"] == name)


def link(summary: dict[str, Any], src: str, dst: str) -> dict[str, Any]:
    """The `src -> dst` direction of a link in a run's summary."""
    return next(x for x in summary["links"] if x["from"] == src and x["to"] == dst)


def write_markdown(lines: Iterable[str], out: Path | None) -> None:
    """The generated lines, one per line, to the file `out` or (without one) to stdout."""
    text = "\n".join(lines) + "\n"
    if out:
        out.write_text(text)
    else:
        sys.stdout.write(text)
