"""The state of a shared medium over time, from a LAN's medium trace (`[[lan]] trace = true`,
summary.json `lans[i].medium_trace`; docs/ethernet.md): consecutive intervals in which the
medium is idle, busy (one transmission on it) or in collision (two or more overlapping), as the
medium itself carries them (propagation not added), for graphs such as a busy/idle strip chart."""

from __future__ import annotations

from typing import Any, Mapping


def medium_states(lan: Mapping[str, Any], until: float | None = None):
    """A polars DataFrame (start_s, end_s, state) covering 0 .. `until` (default: the last
    transmission's end) with state "idle", "busy" or "collision"; `lan` is one entry of
    summary.json's `lans` with a `medium_trace`."""
    import polars as pl

    trace = lan.get("medium_trace")
    if trace is None:
        raise ValueError(f"lan {lan.get('name')!r} has no medium_trace: set trace = true in its [[lan]] table")
    # Sweep over the start (+1) and end (-1) of every transmission; ends before starts at a tie,
    # so back-to-back frames do not count as overlapping.
    edges = sorted([(e, -1) for e in trace["end_s"]] + [(s, +1) for s in trace["start_s"]])
    end = until if until is not None else (max(trace["end_s"]) if trace["end_s"] else 0.0)
    rows: list[tuple[float, float, str]] = []
    on, at = 0, 0.0

    def state(k: int) -> str:
        return "idle" if k == 0 else "busy" if k == 1 else "collision"

    for t, d in edges:
        t = min(t, end)
        if t > at:
            s = state(on)
            if rows and rows[-1][2] == s:
                rows[-1] = (rows[-1][0], t, s)
            else:
                rows.append((at, t, s))
            at = t
        on += d
    if end > at:
        rows.append((at, end, state(on)))
    return pl.DataFrame(rows, schema=["start_s", "end_s", "state"], orient="row")


def state_fractions(lan: Mapping[str, Any], until: float | None = None) -> dict[str, float]:
    """Fraction of 0 .. `until` the medium spent idle, busy and in collision."""
    import polars as pl

    df = medium_states(lan, until).with_columns((pl.col("end_s") - pl.col("start_s")).alias("d"))
    total = float(df["d"].sum()) or 1.0
    return {s: float(df.filter(pl.col("state") == s)["d"].sum()) / total for s in ("idle", "busy", "collision")}
