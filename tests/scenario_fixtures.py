"""The shared scenario fixtures in ``tests/fixtures/`` (issue 23): the Rust tests read the same
files (``common::fixture`` in crates/tcplab/tests/integration/common.rs), so a topology is
written once. A test takes a fixture, changes it with ``--set``-style overrides and appends its
own sources."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from tcplab.api import expand

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_text(name: str, overrides: Mapping[str, object] | None = None, extra: str = "") -> str:
    """The fixture's text with ``overrides`` applied by the core (as ``tcplab run --set``) and
    ``extra`` (TOML tables: sources, more nodes) appended."""
    return expand(FIXTURES / name, overrides) + "\n" + extra
