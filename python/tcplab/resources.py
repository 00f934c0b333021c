"""Files that ship inside the tcplab package (issue 30).

The bundled scenarios — examples, seed reproductions (reproduce.toml, scenario files, their
generators and plot scripts) and sweep files — live in the package folder ``tcplab/scenarios``;
the repository's top-level ``scenarios/`` is a symbolic link to it, so a checkout, an editable
install and an installed wheel read the same files.
"""

from __future__ import annotations

from pathlib import Path


def scenarios_dir() -> Path:
    """The bundled scenarios folder of this installation (inside the package: read, never write)."""
    return Path(__file__).resolve().parent / "scenarios"
