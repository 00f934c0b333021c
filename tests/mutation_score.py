"""Print the mutation score of cargo-mutants runs (`make mutants`).

Usage: python tests/mutation_score.py [--by-file] [--only NAMES] [--time] DIR [DIR ...]

Each DIR is a cargo-mutants `--output` directory (holding mutants.out/outcomes.json). Score =
caught / viable, where viable mutants are the caught, missed and timed-out ones (a timeout
counts as caught by cargo-mutants' own rule, shown apart here); unviable mutants (did not build)
are left out. Survivors are listed.

A run over a sample (`make mutants MUTANTS_SHARD=k/n`: cargo-mutants' round-robin shard k of n,
every n-th mutant of the list) estimates the score of the whole set; the line then also gives
the binomial standard error of that estimate, sqrt(p(1-p)/n) over the n viable mutants (the
finite-population correction, sqrt(1 - n/N), is ignored: it only narrows it).

--by-file   also print the score per source file.
--only F    count only the mutants named in file F (one name a line, as in missed.txt), e.g. to
            re-score the survivors of an earlier run after new tests.
--time      print the wall time of the run and the mean time per mutant.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

CAUGHT, MISSED, TIMEOUT, UNVIABLE = "CaughtMutant", "MissedMutant", "Timeout", "Unviable"


def mutant_outcomes(out: Path) -> tuple[dict, list[tuple[str, str, str]]]:
    """(the whole document, [(name, file, summary)] of every mutant outcome)."""
    d = json.loads((out / "mutants.out" / "outcomes.json").read_text())
    rows = []
    for o in d["outcomes"]:
        sc = o["scenario"]
        if isinstance(sc, dict) and "Mutant" in sc:
            m = sc["Mutant"]
            rows.append((m["name"], m["file"], o["summary"]))
    return d, rows


def tally(rows) -> tuple[int, int, int, int]:
    n = defaultdict(int)
    for _, _, summary in rows:
        n[summary] += 1
    return n[CAUGHT], n[MISSED], n[TIMEOUT], n[UNVIABLE]


def fmt_score(caught: int, timeout: int, viable: int) -> str:
    if not viable:
        return "no viable mutants"
    p = (caught + timeout) / viable
    se = math.sqrt(p * (1 - p) / viable)
    return f"{caught + timeout} of {viable} viable caught = {100 * p:.1f} % (± {100 * se:.1f} % standard error as a sample)"


def main(argv: list[str]) -> int:
    by_file = "--by-file" in argv
    show_time = "--time" in argv
    only: set[str] | None = None
    args = []
    it = iter(argv)
    for a in it:
        if a == "--only":
            only = {line.strip() for line in Path(next(it)).read_text().splitlines() if line.strip()}
        elif a not in ("--by-file", "--time"):
            args.append(a)
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    total_c = total_v = 0
    for arg in args:
        out = Path(arg)
        if not (out / "mutants.out" / "outcomes.json").exists():
            print(f"{out}: no mutants.out/outcomes.json (the run did not start?)", file=sys.stderr)
            return 1
        doc, rows = mutant_outcomes(out)
        if only is not None:
            rows = [r for r in rows if r[0] in only]
        caught, missed, timeout, unviable = tally(rows)
        viable = caught + missed + timeout
        total_c += caught + timeout
        total_v += viable
        print(f"{out}: {len(rows)} mutants: {fmt_score(caught, timeout, viable)}; "
              f"{caught} by a failing test, {timeout} by a timeout, {missed} missed, {unviable} unviable")
        if show_time and doc.get("start_time") and doc.get("end_time"):
            t0 = datetime.fromisoformat(doc["start_time"])
            t1 = datetime.fromisoformat(doc["end_time"])
            secs = (t1 - t0).total_seconds()
            print(f"  wall time {secs / 60:.1f} min, {secs / max(len(rows), 1):.1f} s per mutant (baseline included)")
        if by_file:
            files = defaultdict(list)
            for r in rows:
                files[r[1]].append(r)
            for f in sorted(files):
                c, m, t, u = tally(files[f])
                v = c + m + t
                pct = f"{100 * (c + t) / v:5.1f} %" if v else "   — "
                print(f"  {f}: {c + t}/{v} {pct}" + (f" ({u} unviable)" if u else ""))
        for name, _, summary in rows:
            if summary == MISSED:
                print(f"  missed: {name}")
    if len(args) > 1 and total_v:
        print(f"all: {total_c} of {total_v} viable mutants caught ({100.0 * total_c / total_v:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
