"""Print the mutation score of cargo-mutants runs (`make mutants`).

Usage: python tests/mutation_score.py DIR [DIR ...] — each DIR is a cargo-mutants `--output`
directory (holding mutants.out/outcomes.json). Score = caught / viable, where viable mutants are
the caught, missed and timed-out ones (a timeout counts as caught by cargo-mutants' own rule,
shown apart here); unviable mutants (did not build) are left out. Survivors are listed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def score(out: Path) -> tuple[int, int, int, int, list[str]]:
    d = json.loads((out / "mutants.out" / "outcomes.json").read_text())
    missed = [o["scenario"]["Mutant"]["name"] for o in d["outcomes"]
              if isinstance(o["scenario"], dict) and o["summary"] == "MissedMutant"]
    return d["caught"], d["missed"], d["timeout"], d["unviable"], missed


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    total_c = total_v = 0
    for arg in argv:
        out = Path(arg)
        if not (out / "mutants.out" / "outcomes.json").exists():
            print(f"{out}: no mutants.out/outcomes.json (the run did not start?)", file=sys.stderr)
            return 1
        caught, missed, timeout, unviable, survivors = score(out)
        viable = caught + missed + timeout
        total_c += caught + timeout
        total_v += viable
        pct = 100.0 * (caught + timeout) / viable if viable else float("nan")
        print(f"{out}: {caught + timeout} of {viable} viable mutants caught ({pct:.1f} %; "
              f"{caught} by a failing test, {timeout} by a timeout), {missed} missed, {unviable} unviable")
        for name in survivors:
            print(f"  missed: {name}")
    if len(argv) > 1 and total_v:
        print(f"all: {total_c} of {total_v} viable mutants caught ({100.0 * total_c / total_v:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
