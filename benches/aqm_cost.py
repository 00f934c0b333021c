"""Each queue discipline's cost per packet beside DropTail's (issue 27): the Rust example
`aqm_cost` (crates/tcplab/examples/aqm_cost.rs) times every registered discipline offered 10^6
packets at 1.1x its service rate (ns per packet, median of 5), then runs each under callgrind
twice (200,000 and 0 packets) for instructions per packet, the difference over 200,000 (setup
subtracted). Usage: python benches/aqm_cost.py [--out benches/aqm-cost.md]."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / "target" / "release" / "examples" / "aqm_cost"


def instructions(name: str, packets: int) -> int:
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(BIN), "--only", name,
                        "--packets", str(packets)], capture_output=True, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", p.stderr).group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-p", "tcplab", "--example", "aqm_cost"], cwd=ROOT, check=True)
    timed = subprocess.run([str(BIN)], capture_output=True, text=True, check=True).stdout.splitlines()[1:]
    rows = []
    for line in timed:
        name, ns, ratio = line.split()[:3]
        ir = None
        if shutil.which("valgrind"):
            n = 200_000
            ir = (instructions(name, n) - instructions(name, 0)) / n
        rows.append((name, float(ns), float(ratio), ir))
    base_ir = rows[0][3]
    text = ["| discipline | ns/packet | × DropTail | instructions/packet | × DropTail |", "|---|---|---|---|---|"]
    for name, ns, ratio, ir in rows:
        irs = f"{ir:.0f} | {ir / base_ir:.2f}" if ir is not None else "- | -"
        text.append(f"| {name} | {ns:.1f} | {ratio:.2f} | {irs} |")
    print("\n".join(text))
    if a.out:
        a.out.write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
