"""`tcplab expand`: print a scenario with its templates written out."""

from __future__ import annotations


def add_parser(sub) -> None:
    ex = sub.add_parser("expand", help="print a scenario with its templates written out",
                        description="Print the scenario as it runs: `count` entries, [defaults.*] and [topology] written out as "
                                    "plain [[nodes]], [[links]], [[tcp]], ... entries (after --set overrides).")
    ex.add_argument("scenario", help="scenario TOML file")
    ex.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a field first (repeatable)")
    ex.set_defaults(fn=run)


def run(a) -> int:
    from ..api import expand
    print(expand(a.scenario, a.set), end="")
    return 0
