"""`tcplab validate`: check a scenario (and its memory estimate) without running it."""

from __future__ import annotations

import argparse

from .args import EPILOG, max_memory, parse_memory


def add_parser(sub) -> None:
    v = sub.add_parser("validate", help="check a scenario without running it",
                       description="Parse a scenario and check it against its topology without running it; print FILE: ok, "
                                   "or FILE:LINE: FIELD: what was expected, and exit non-zero.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("scenario", help="scenario TOML file")
    v.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a field before checking")
    v.add_argument("--max-memory", type=parse_memory, metavar="SIZE",
                   help='also check the estimated memory of a run against SIZE, e.g. "4GB" (default: 80%% of physical memory)')
    v.set_defaults(fn=run)


def run(a) -> int:
    from ..api import validate
    validate(a.scenario, a.set, max_memory=max_memory(a))
    print(f"{a.scenario}: ok")
    return 0
