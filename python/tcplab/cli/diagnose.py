"""`tcplab diagnose`: TCP performance bugs found in a run's traces or a pcap (issue 29; the logic
is :mod:`tcplab.diagnose`)."""

from __future__ import annotations


def add_parser(sub) -> None:
    from ..diagnose.cli import add_parser as add
    add(sub)
    sub.choices["diagnose"].set_defaults(fn=run)


def run(a) -> int:
    from ..diagnose.cli import run as diagnose
    return diagnose(a)
