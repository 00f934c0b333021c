"""What several commands share: argument types, the runner options, the units epilog."""

from __future__ import annotations

import argparse

EPILOG = """\
units in scenario files: sizes B/KB/MB/GB with KB = 1024 bytes; bit rates bps/kbps/Mbps/Gbps (also
kbit/s, Mbit/s) with k = 1000; byte rates B/s, KB/s, MB/s (KB = 1024); durations ns/us/ms/s/min;
queue limits "10pkts" or a size. See README.md for the format.
"""

FLOW_ROWS = 10  # flows printed to a terminal before "... N more" (--all prints every one)


def parse_memory(text: str) -> int:
    """--max-memory: a size with its unit, as in scenario files (KB = 1024 bytes; also TB)."""
    from ..units import parse_size
    t = text.strip()
    try:
        if t.endswith("TB"):  # scenario sizes stop at GB; a memory limit may be larger
            return parse_size(t[:-2] + "GB") * 1024
        return parse_size(t)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"expected a size like \"4GB\" or \"512MB\", got {text!r} ({e})") from None


def parse_seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return v


def parse_seed(text: str) -> int:
    """--seed: a whole number from 0 to 2^64 - 1 (the core's seed is an unsigned 64-bit integer)."""
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 18446744073709551615, got {text!r}") from None
    if not 0 <= v < 2 ** 64:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 18446744073709551615, got {text!r}")
    return v


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= 1_000_000_000:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return v


def parse_time(text: str) -> float:
    """--from/--to: seconds of simulated time >= 0: a bare number, or a duration with its unit
    as in scenario files ("2.5s", "500ms")."""
    try:
        v = float(text)
    except ValueError:
        from ..units import parse_duration_s
        try:
            v = parse_duration_s(text)
        except ValueError:
            v = -1.0
    if not 0 <= v < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a time in seconds >= 0, e.g. 2.5, got {text!r}")
    return v


def check_window(a) -> None:
    if a.t_from is not None and a.t_to is not None and a.t_from >= a.t_to:
        raise ValueError(f"--from {a.t_from:g} s is not before --to {a.t_to:g} s")


def max_memory(a) -> int | None:
    from ..api import default_max_memory
    return a.max_memory if a.max_memory is not None else default_max_memory()


def add_runner_args(p) -> None:
    """--jobs, --backend, --ray-address: how a sweep or reproduction runs its runs."""
    p.add_argument("--jobs", "-j", type=positive_int, default=None, metavar="N",
                   help="parallel runs (default: the number of CPU cores; 1 runs in this process)")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local: a process pool on this machine (default); ray: Ray tasks on a local instance or --ray-address")
    p.add_argument("--ray-address", metavar="ADDR", help='Ray cluster to join, e.g. "auto" or "ray://head:10001" (default: start a local instance with --jobs CPUs)')
