"""`tcplab emulate`: run a scenario in real time with real Linux TCP / tcplab endpoints on the wire."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .args import EPILOG


def add_parser(sub) -> None:
    em = sub.add_parser("emulate", help="run a scenario in real time with real Linux TCP / tcplab endpoints on the wire",
                        description="Emulation (needs root and /dev/net/tun): hosts with stack = \"linux\" become network "
                                    "namespaces joined by TAP devices to tcplab's own links, queues and routers running in real "
                                    "time; their flows are real Linux sockets (variant = \"linux-cubic\", ...). Hosts with "
                                    "stack = \"tcplab\" run tcplab's endpoint on real IPv4/TCP headers. Writes an ordinary run "
                                    "directory whose summary.json has an `emulation` section with the accuracy figures.",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    em.add_argument("scenario", nargs="?", help="scenario TOML file")
    em.add_argument("--seed", type=int, help="seed of the random streams (default: run.seed in the file, else 1)")
    em.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a field (repeatable), as for run")
    em.add_argument("--out", type=Path, help="output directory (default: runs/<scenario name>-emulated)")
    em.add_argument("--json", action="store_true", help="print summary JSON to stdout instead of the table")
    em.add_argument("--cleanup", action="store_true",
                    help="remove the namespaces and TAP devices a killed emulator left behind (names start with tcplab-emu- / tle) and exit")
    em.set_defaults(fn=run)


def run(a) -> int:
    from .. import emulate as emu
    from ..progress import SimProgress
    if a.cleanup:
        removed = emu.cleanup(all=False)
        for r in removed:
            print(f"removed {r}")
        print(f"cleanup: {len(removed)} left-overs removed" if removed else "cleanup: nothing left behind")
        return 0
    if a.scenario is None:
        raise ValueError("tcplab emulate: give a SCENARIO (or --cleanup)")
    out = a.out or Path("runs") / (Path(a.scenario).stem + "-emulated")
    meter = SimProgress()
    try:
        r = emu.emulate(a.scenario, seed=a.seed, overrides=a.set, out=out, progress=meter)
    except emu.EmulationRefused as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        meter.done()
    if a.json:
        print(r.summary_json)
    else:
        emu.print_emulation(r.summary)
        print(f"wrote {out}/summary.json")
    return 0
