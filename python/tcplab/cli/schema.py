"""`tcplab schema`: print the JSON Schema of the scenario format."""

from __future__ import annotations


def add_parser(sub) -> None:
    s = sub.add_parser("schema", help="print the JSON Schema of the scenario format (for editors)",
                       description="Print the JSON Schema of the scenario format to stdout, for editors' completion and checking.")
    s.set_defaults(fn=run)


def run(a) -> int:
    from .._core import schema
    print(schema())
    return 0
