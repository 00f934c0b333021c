"""`tcplab fidelity`: write FIDELITY.md, every seed claim beside the paper's (issue 31; the logic is
:mod:`tcplab.fidelity`)."""

from __future__ import annotations

from pathlib import Path


def add_parser(sub) -> None:
    p = sub.add_parser("fidelity", help="write FIDELITY.md: every seed claim, ours beside the paper's, held or missed, with its cause",
                       description="Write FIDELITY.md from each reproduction's reproduce.toml, measured.json and fidelity.toml.")
    p.add_argument("--repo", type=Path, default=None, help="repository root holding scenarios/ (default: the current directory)")
    p.add_argument("--out", type=Path, default=None, help="output file (default: REPO/FIDELITY.md)")
    p.add_argument("--record", action="store_true",
                   help="first copy every runs/reproduce/*/comparison.json into its reproduction's measured.json")
    p.add_argument("--runs", type=Path, default=Path("runs") / "reproduce", help="where `tcplab reproduce` wrote (default: runs/reproduce)")
    p.add_argument("--check", action="store_true", help="exit 1 if the file differs from what would be written")
    p.set_defaults(fn=run)


def run(a) -> int:
    from ..fidelity import run as write_fidelity
    return write_fidelity(a)
