"""The emulator's throughput ceiling (issue 24): one Linux cubic flow through one emulated link
(h1 -- 10 Gbit/s, 10 us -- r -- RATE, 5 ms -- h2, both hosts real Linux stacks in namespaces),
the rate rising until the release lateness p99 exceeds 0.1 ms or the link misses its rate by
more than 1 % (the emulator's counters). Prints one line per rate and the ceiling: the highest
rate that met both. Needs root and /dev/net/tun. `make emulation-bench`; figures in
benches/README.md.

    python benches/emulation_ceiling.py [--seconds 3] [--rates 50,100,200,400,700,1000]   (Mbit/s)
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tcplab import emulate as emu

SCENARIO = """
name = "ceiling-{mbps}"
[run]
duration = "{duration}s"
[[nodes]]
name = "h1"
kind = "host"
stack = "linux"
[[nodes]]
name = "r"
kind = "router"
[[nodes]]
name = "h2"
kind = "host"
stack = "linux"
[[links]]
a = "h1"
b = "r"
rate = "10Gbps"
delay = "10us"
queue = {{ limit = "10000pkts" }}
[[links]]
a = "r"
b = "h2"
rate = "{mbps}Mbps"
delay = "5ms"
queue = {{ limit = "{queue}pkts" }}
[[tcp]]
name = "bulk"
from = "h1"
to = "h2"
variant = "linux-cubic"
duration = "{seconds}s"
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rates", default="50,100,200,400,700,1000,1500")
    a = ap.parse_args()
    why = emu.refusal()
    if why:
        print(f"skipped: {why}")
        return 0
    ceiling = None
    print(f"{'rate Mbit/s':>11} {'achieved %':>10} {'lateness p50 ms':>15} {'p99 ms':>8} {'max ms':>8} {'held':>6} {'wake p99 ms':>11}  verdict")
    for mbps in [float(x) for x in a.rates.split(",")]:
        # queue: twice the bandwidth-delay product of the 10 ms round trip, in 1500-byte packets
        queue = max(100, int(2 * mbps * 1e6 * 0.010 / 8 / 1500))
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "ceiling.toml"
            p.write_text(SCENARIO.format(mbps=mbps, duration=a.seconds + 1, seconds=a.seconds, queue=queue))
            s = emu.emulate(p).summary
        em = s["emulation"]
        link = next(l for l in em["links"] if l["name"] == "r->h2")
        ratio = link["achieved_over_configured"]
        ok = em["release_lateness_p99_ms"] <= 0.1 and abs(ratio - 1) <= 0.01 and em["released_early"] == 0
        print(f"{mbps:>11.0f} {100 * ratio:>10.2f} {em['release_lateness_p50_ms']:>15.3f} {em['release_lateness_p99_ms']:>8.3f} "
              f"{em['release_lateness_max_ms']:>8.3f} {em['released_while_held']:>6} {em['wakeup_lateness_p99_ms']:>11.3f}  "
              f"{'ok' if ok else 'MISSED'}", flush=True)
        if not ok:
            break
        ceiling = mbps
    print(f"ceiling: {ceiling:.0f} Mbit/s" if ceiling else "ceiling: below the first rate tried")
    return 0


if __name__ == "__main__":
    sys.exit(main())
