"""`tcplab fidelity`: write FIDELITY.md, every seed claim beside the paper's (issue 31).

The command lives with its logic in :mod:`tcplab.fidelity`."""

from __future__ import annotations


def add_parser(sub) -> None:
    from ..fidelity import add_parser as add
    add(sub)


def run(a) -> int:
    from ..fidelity import run as go
    return go(a)
