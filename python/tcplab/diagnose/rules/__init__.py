"""The diagnosis rules, one module each. Every module defines ``RULE``: its id, what it checks,
the specification or seed section it cites, which Lite fix (if any) removes what it finds, and
``check(view) -> list[Finding]``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..model import Finding, FlowView


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    cites: str
    check: Callable[[FlowView], list[Finding]]
    lite_fix: str | None = None      # the Lite level whose fix removes it (seed 001 Table 3)


def all_rules() -> list[Rule]:
    from . import (ack_frequency, big_ack_burst, ca_growth, idle_limits, no_window_reduction, paired_reductions,
                   rto_backoff, rto_too_large, rwnd_sws, slow_start_restart, spurious_retx, timeout_with_dupacks)
    return [m.RULE for m in (no_window_reduction, rto_too_large, ack_frequency, paired_reductions, ca_growth,
                             big_ack_burst, spurious_retx, timeout_with_dupacks, rto_backoff, idle_limits,
                             rwnd_sws, slow_start_restart)]


def finding(rule: Rule, v: FlowView, severity: str, t0: float, t1: float, summary: str, **kw) -> Finding:
    return Finding(rule=rule.id, flow=v.name, severity=severity, t_start=float(t0), t_end=float(t1),
                   summary=summary, cites=rule.cites, inferred=v.inferred, **kw)
