"""`tcplab new TEMPLATE [DIR]`: start a scenario from a template, one of the bundled examples
(`scenarios/examples/*.toml`: dumbbell-64, two-lan, udp-dumbbell, ...). The same copy as
`tcplab examples copy TEMPLATE`, limited to the single-file examples (issue 25: `tcplab new two-lan`)."""

from __future__ import annotations

from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("new", help="start a scenario from a template (two-lan, dumbbell-64, ...)",
                       description="Write the template TEMPLATE.toml (a bundled example) into DIR to edit and run; "
                                   "without TEMPLATE, list the templates.")
    p.add_argument("template", nargs="?", help="a template name, e.g. two-lan (the two-Ethernet network of "
                                                "Brakmo's thesis) or dumbbell-64")
    p.add_argument("dir", nargs="?", default=".", type=Path, help="destination folder (default: the current directory)")
    p.add_argument("--force", action="store_true", help="replace a file that exists")
    p.set_defaults(fn=run)


def run(a) -> int:
    from ..examples import catalogue, copy, describe
    templates = dict(catalogue()["examples"])
    if a.template is None:
        for name, path in templates.items():
            print(f"  {name:24} {describe(path)}")
        return 0
    if a.template not in templates:
        raise ValueError(f"unknown template {a.template!r}; templates: {', '.join(templates)}")
    for p in copy(a.template, a.dir, force=a.force):
        print(p)
    return 0
