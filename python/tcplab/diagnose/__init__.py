"""`tcplab diagnose`: find TCP performance bugs in traces automatically (issue 29).

The Lite study of seed 001 (Brakmo & Peterson, "Performance Problems in BSD4.4 TCP") found six
problems by reading trace graphs by hand; this package checks a trace against one rule per
problem class, each citing its RFC or seed section (``rules/``), and reports findings with times,
segments, evidence and estimated cost. Inputs: tcplab run directories (exact sender state), pcaps
written by tcplab, foreign pcaps (sender state inferred and marked so).

Python API::

    from tcplab import diagnose
    findings = diagnose.diagnose("runs/demo/lite.0")        # list[Finding]
    df = diagnose.findings_frame("runs/demo/lite.0")        # polars DataFrame, one row per finding
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import SEVERITIES, Finding, FlowView

__all__ = ["diagnose", "findings_frame", "load_flows", "Finding", "FlowView", "SEVERITIES"]


def __getattr__(name: str):
    # The model (and numpy) is imported on first use: `tcplab --help` and every command builds
    # the diagnose parser through this package, and none of them needs numpy for that.
    if name in ("SEVERITIES", "Finding", "FlowView"):
        from . import model
        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_flows(source: str | Path, flow: str | None = None) -> list[FlowView]:
    """The flows of a run directory or a pcap file as :class:`FlowView`s."""
    p = Path(source)
    if p.is_dir():
        from .rundir_reader import read_rundir
        return read_rundir(p, flow)
    if p.is_file():
        from .pcap_reader import read_pcap
        return read_pcap(p, flow)
    raise FileNotFoundError(f"no such run directory or pcap: {source}")


def diagnose_views(views: list[FlowView]) -> list[Finding]:
    from .rules import all_rules
    out: list[Finding] = []
    for v in views:
        for rule in all_rules():
            out.extend(rule.check(v))
    out.sort(key=lambda f: (f.flow, f.t_start, f.rule))
    return out


def diagnose(source: str | Path, flow: str | None = None) -> list[Finding]:
    return diagnose_views(load_flows(source, flow))


def findings_frame(source: str | Path | list[Finding], flow: str | None = None):
    """Findings as a polars DataFrame (one row per finding; evidence and segments as lists)."""
    import polars as pl
    fs = source if isinstance(source, list) else diagnose(source, flow)
    cols = ["rule", "flow", "severity", "t_start", "t_end", "summary", "cites", "evidence", "segments",
            "cost_bytes", "cost_s", "inferred", "count", "graph"]
    schema = {"rule": pl.Utf8, "flow": pl.Utf8, "severity": pl.Utf8, "t_start": pl.Float64, "t_end": pl.Float64,
              "summary": pl.Utf8, "cites": pl.Utf8, "evidence": pl.List(pl.Utf8), "segments": pl.List(pl.Int64),
              "cost_bytes": pl.Float64, "cost_s": pl.Float64, "inferred": pl.Boolean, "count": pl.Int64,
              "graph": pl.Utf8}
    return pl.DataFrame([{c: getattr(f, c) for c in cols} for f in fs], schema=schema)
