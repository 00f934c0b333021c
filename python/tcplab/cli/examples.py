"""`tcplab examples`: list the bundled examples and reproductions; copy one to edit (issue 30)."""

from __future__ import annotations

from pathlib import Path


def add_parser(sub) -> None:
    ex = sub.add_parser("examples", help="list the bundled examples and reproductions; copy one to edit",
                        description="List the bundled examples, reproductions and sweep files, one line each; "
                                    "`tcplab examples copy NAME [DIR]` writes one into DIR to change and run.")
    exs = ex.add_subparsers(dest="examples_command", metavar="ACTION",
                            help="copy NAME [DIR]: write a copy to edit (without ACTION: list them)")
    cp = exs.add_parser("copy", help="copy a bundled example or reproduction into DIR",
                        description="Copy a bundled example (NAME.toml) or a reproduction/scenario folder into DIR.")
    cp.add_argument("name", help="an example (dumbbell-64) or reproduction (brakmo/single-transfer); see `tcplab examples`")
    cp.add_argument("dir", nargs="?", default=".", type=Path, help="destination folder (default: the current directory)")
    cp.add_argument("--force", action="store_true", help="replace files that exist")
    ex.set_defaults(fn=run)


def run(a) -> int:
    from ..examples import copy, list_text
    if getattr(a, "examples_command", None) == "copy":
        for p in copy(a.name, a.dir, force=a.force):
            print(p)
        return 0
    print(list_text(), end="")
    return 0
