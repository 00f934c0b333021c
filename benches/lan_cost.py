"""A collision-free shared medium's cost per packet beside a point-to-point link's (issue 25):
the three cases of `tcplab bench cbr-p2p cbr-lan-fifo cbr-lan-ethernet` (one 9 Mbit/s CBR source,
1000-byte packets, over a 10 Mbit/s link with 26 bytes of framing, a two-station FIFO `[[lan]]`,
and the same segment with CSMA/CD), written out for 20 simulated seconds (22,500 packets, 67,501
events each) and run by the Rust example `run` under callgrind, counting the instructions of the
event loop only (`--toggle-collect='*run_until_bounded*'`): the figure does not depend on the
machine's load. Usage: python benches/lan_cost.py [--out benches/lan-cost.md]."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / "target" / "release" / "examples" / "run"
PACKETS = 22_500
CASES = [("cbr-p2p", None), ("cbr-lan-fifo", "fifo"), ("cbr-lan-ethernet", "ethernet")]


def instructions(scenario: Path) -> int:
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        "--toggle-collect=*run_until_bounded*", str(BIN), str(scenario)],
                       capture_output=True, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", p.stderr).group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT / "python"))
    from tcplab.bench import shared_medium_cbr
    subprocess.run(["cargo", "build", "--release", "-p", "tcplab", "--example", "run"], cwd=ROOT, check=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="lan-cost-") as tmp:
        for name, access in CASES:
            path = Path(tmp) / f"{name}.toml"
            path.write_text(shared_medium_cbr(access, "20s").to_toml())
            rows.append((name, instructions(path) / PACKETS))
    base = rows[0][1]
    text = ["| case | instructions per packet | × point-to-point |", "|---|---:|---:|"]
    text += [f"| {name} | {ir:,.0f} | {ir / base:.2f} |" for name, ir in rows]
    print("\n".join(text))
    if a.out:
        a.out.write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
