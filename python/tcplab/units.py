"""Quantities with units as scenario files write them, parsed by the core's own parsers
(crates/tcplab/src/scenario/units.rs) so the command line, sweep files and scenarios agree:
sizes B/KB/MB/GB (KB = 1024 bytes), bit rates bps/kbps/Mbps/Gbps (k = 1000) and byte rates
B/s/KB/s/MB/s, durations ns/us/ms/s/min. Each raises ValueError with the core's message."""

from __future__ import annotations

from . import _core


def parse_size(text: str) -> int:
    """Bytes in "1.4KB", "4GB", ... (the unit is required)."""
    return _core.parse_size(text)


def parse_rate_bps(text: str) -> float:
    """Bits per second in "1.6Mbps", "800kbit/s", "200KB/s", ..."""
    return _core.parse_rate(text)


def parse_duration_s(text: str) -> float:
    """Seconds in "50ms", "5s", "2min", ... (the unit is required)."""
    return _core.parse_duration(text)
