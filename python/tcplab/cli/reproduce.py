"""`tcplab reproduce`: reproduce a seed experiment and compare with the paper."""

from __future__ import annotations

import sys
from pathlib import Path

from .args import add_runner_args, parse_seed, positive_int


def add_parser(sub) -> None:
    rp = sub.add_parser("reproduce", help="reproduce a seed experiment, e.g. brakmo/single-transfer",
                        description="Run every variant of a reproduction (scenarios/<experiment>/reproduce.toml), write OUT/comparison.json and a paper-vs-ours report.")
    rp.add_argument("experiment", nargs="?", help="a bundled reproduction (brakmo/single-transfer; --list) or a folder with reproduce.toml")
    rp.add_argument("--list", action="store_true", help="list the bundled reproductions, one line each")
    rp.add_argument("--out", type=Path, help="output directory (default: runs/reproduce/<experiment>)")
    rp.add_argument("--seed", type=parse_seed, help="seed of the random streams (default: the scenario's run.seed)")
    rp.add_argument("--seeds", type=positive_int, default=None, metavar="N",
                    help="run seeds SEED .. SEED+N-1 of every variant (replacing the file's seed list) and report mean, std, min and max")
    rp.add_argument("--no-report", action="store_true", help="skip the HTML report")
    add_runner_args(rp)
    rp.set_defaults(fn=run)


def run(a) -> int:
    from ..reproduce import reproduce
    if a.list or not a.experiment:  # `--list`, or no experiment named: the bundled reproductions
        from ..examples import reproductions_text
        if not a.list:
            print("error: name a reproduction (or a folder with reproduce.toml); the bundled ones:", file=sys.stderr)
        print(reproductions_text(), end="", file=sys.stdout if a.list else sys.stderr)
        return 0 if a.list else 2
    return reproduce(a.experiment, out=a.out, seed=a.seed, report=not a.no_report, seeds=a.seeds, jobs=a.jobs,
                     backend=a.backend, ray_address=a.ray_address)
