"""`tcplab table DIR`: x-Sim's database views of a results store (seed 000 §2.3.1), as Markdown,
CSV or polars DataFrames.

* :func:`averages` (Fig 2.4): per group (e.g. per variant), the mean of each metric for the
  distinguished flow and for the background (every other TCP flow and every `[[traffic]]` source,
  summed per run), with the
  sample standard deviation, the half-width of the 90 % Student-t confidence interval (seed 002
  Fig 8), min, max and the number of runs.
* :func:`utilization` (Fig 2.5): the bottleneck's utilization per time bucket, averaged over the
  runs of each group (the sweep must set ``buckets``; the link must be traced).
* :func:`individual` (Fig 2.6): each run's values, to catch the spurious result an average hides.

Metrics are names understood by :mod:`tcplab.metrics` (flow fields of the distinguished flow,
dotted summary paths) plus x-Sim's columns ``KB_sent``, ``KB_resent`` and ``pct_resent``.
Groups default to every axis of the sweep (and the variant name for reproductions).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import polars as pl

from .analysis import describe

DEFAULT_METRICS = ["throughput_KBps", "KB_sent", "KB_resent", "pct_resent", "coarse_timeouts", "largest_timeout_gap_s"]

# x-Sim's derived flow columns: (value for one flow, value for a set of background flows)
_XSIM: dict[str, tuple[Callable[[dict], Any], Callable[[list[dict]], Any]]] = {
    "KB_sent": (lambda f: f["bytes_acked"] / 1024, lambda fs: sum(f["bytes_acked"] for f in fs) / 1024),
    "KB_resent": (lambda f: f["retransmitted_bytes"] / 1024, lambda fs: sum(f["retransmitted_bytes"] for f in fs) / 1024),
    "pct_resent": (lambda f: 100.0 * f["retransmitted_bytes"] / f["bytes_acked"] if f["bytes_acked"] else None,
                   lambda fs: (100.0 * sum(f["retransmitted_bytes"] for f in fs) / sum(f["bytes_acked"] for f in fs))
                   if sum(f["bytes_acked"] for f in fs) else None),
}


def _open(run_dir: str | Path):
    from .store import Store
    p = Path(run_dir)
    db = p if p.suffix == ".duckdb" else p / "results.duckdb"
    return Store(db, read_only=True)


def _flow_name(meta: dict, summary: dict, flow: str | None) -> str | None:
    if flow:
        return flow
    for info in meta.values():
        if info.get("flow"):
            return info["flow"]
    flows = summary.get("flows") or []
    return flows[0]["name"] if flows else None


def _traffic_as_flows(summary: dict) -> list[dict]:
    """Background traffic sources (tcplib, ahn, onoff) in the flow fields the x-Sim views sum:
    data sent (first transmissions) for bytes_acked, their retransmissions, throughput, timeouts."""
    return [{"name": t["name"], "bytes_acked": round(t["sent_KB"] * 1024), "retransmitted_bytes": round(t["retransmitted_KB"] * 1024),
             "throughput_KBps": t["throughput_KBps"], "coarse_timeouts": t["coarse_timeouts"],
             "fast_retransmits": t["fast_retransmits"], "retransmitted_segments": t["retransmitted_segments"]}
            for t in summary.get("traffic") or []]


def _value(summary: dict, metric: str, flow: str | None, part: str):
    """(value) of `metric` for the distinguished flow (part "flow") or the background: every other
    TCP flow plus the `traffic` sources, summed per run."""
    from .metrics import MetricError, resolve
    flows = summary.get("flows") or []
    dist = next((f for f in flows if f["name"] == flow), None)
    others = [f for f in flows if f["name"] != flow] + _traffic_as_flows(summary)
    if metric in _XSIM:
        one, many = _XSIM[metric]
        if part == "flow":
            return one(dist) if dist else None
        return many(others) if others else None
    if part == "background":
        if "." in metric or not others or not any(metric in f for f in others):
            return None
        vals = [f[metric] for f in others if isinstance(f.get(metric), (int, float)) and not isinstance(f.get(metric), bool)]
        if not vals and any(metric in f for f in others):
            return None
        return sum(vals) if vals else None
    try:
        v = resolve(summary, metric, flow)
    except MetricError:
        if "." not in metric and dist is None:
            return None
        raise
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _groups(store, by: list[str] | None) -> tuple[pl.DataFrame, list[str]]:
    """The ok runs with their group columns; `by` entries may be a full axis key or its last
    component ("variant" for "tcp[0].variant")."""
    runs = store.frame("runs", "WHERE status = 'ok'")
    if runs.is_empty():
        raise ValueError(f"{store.path}: no finished runs stored")
    meta = store.meta()
    axes = []
    for info in meta.values():
        for a in info.get("axes", []):
            if a not in axes and a in runs.columns:
                axes.append(a)
    have_grp = runs["grp"].drop_nulls().len() > 0
    if by is None:
        cols = (["grp"] if have_grp else []) + axes
    else:
        cols = []
        for b in by:
            cands = [c for c in (["grp"] if have_grp else []) + axes
                     if c == b or re.split(r"[.\]]", c)[-1] == b or (b == "variant" and c == "grp")]
            if b in runs.columns and b not in cands:
                cands = [b]
            if not cands:
                raise ValueError(f"--by {b}: not an axis of the stored runs (axes: {', '.join(axes) or 'none'}"
                                 f"{', variant' if have_grp else ''})")
            cols.append(cands[0])
    return runs, cols


def _label(row: dict, cols: list[str]) -> str:
    return " ".join(str(row[c]) for c in cols) if cols else "all"


def individual(run_dir: str | Path, by: list[str] | None = None, metrics: list[str] | None = None,
               flow: str | None = None) -> pl.DataFrame:
    """One row per run: the group columns, seed, and each metric of the distinguished flow."""
    metrics = metrics or DEFAULT_METRICS
    with _open(run_dir) as store:
        runs, cols = _groups(store, by)
        meta = store.meta()
    recs = []
    for r in runs.iter_rows(named=True):
        s = json.loads(r["summary"])
        fl = _flow_name(meta, s, flow)
        rec = {c: r[c] for c in cols}
        rec.update({"seed": r["seed"], "hash": r["hash"]})
        for m in metrics:
            rec[m] = _value(s, m, fl, "flow")
            if m in _XSIM or ("." not in m and m in (s.get("flows") or [{}])[0]):
                rec[f"{m} (background)"] = _value(s, m, fl, "background")
        recs.append(rec)
    recs.sort(key=lambda r: tuple(_natural(r[c]) for c in cols) + (r["seed"],))
    df = pl.DataFrame(recs, infer_schema_length=None)
    empty_bg = [c for c in df.columns if c.endswith(" (background)") and df[c].null_count() == df.height]
    df = df.drop(empty_bg)
    return df


def _natural(v) -> tuple:
    """Sort key putting "5KB" before "10KB" (leading number first, then the text)."""
    m = re.match(r"\s*(-?[0-9.]+)", str(v)) if v is not None else None
    try:
        return (0, float(m.group(1)), str(v)) if m else (1, 0.0, str(v))
    except ValueError:
        return (1, 0.0, str(v))


def averages(run_dir: str | Path, by: list[str] | None = None, metrics: list[str] | None = None,
             flow: str | None = None, confidence: float = 0.90) -> pl.DataFrame:
    """Long table: group columns, metric, part ("flow" or "background"), n, mean, std, ci90,
    min, max — one row per (group, metric, part)."""
    metrics = metrics or DEFAULT_METRICS
    ind = individual(run_dir, by, metrics, flow)
    with _open(run_dir) as store:
        _, cols = _groups(store, by)
    out = []
    groups = ind.select(cols).unique(maintain_order=True).rows(named=True) if cols else [{}]
    for g in groups:
        sub = ind
        for c in cols:
            sub = sub.filter(pl.col(c) == g[c])
        for m in metrics:
            for part, col in (("flow", m), ("background", f"{m} (background)")):
                if col not in sub.columns:
                    continue
                vals = sub[col].to_list()
                if all(v is None for v in vals):
                    continue
                d = describe(vals, confidence)
                out.append({**g, "metric": m, "part": part, "n": d["n"], "mean": d["mean"], "std": d["std"],
                            "ci90": d["ci"], "min": d["min"], "max": d["max"]})
    return pl.DataFrame(out, infer_schema_length=None)


def utilization(run_dir: str | Path, by: list[str] | None = None, link: str | None = None) -> pl.DataFrame:
    """Mean utilization per group and time bucket of `link` (default: the runs' bottleneck)."""
    with _open(run_dir) as store:
        runs, cols = _groups(store, by)
        b = store.frame("link_buckets")
    if b.is_empty():
        return pl.DataFrame()
    if link is None:
        bn = runs["bottleneck"].drop_nulls() if "bottleneck" in runs.columns else pl.Series([])
        link = bn[0] if bn.len() and bn[0] in set(b["link"].to_list()) else b["link"][0]
    b = b.filter(pl.col("link") == link).join(runs.select(["hash"] + cols), on="hash")
    keys = cols + ["bucket"]
    agg = b.group_by(keys).agg(pl.col("t_from_s").first(), pl.col("t_to_s").max(), pl.col("utilization").mean().alias("utilization"),
                               pl.col("utilization").len().alias("n"))
    rows = sorted(agg.iter_rows(named=True), key=lambda r: tuple(_natural(r[c]) for c in cols) + (r["bucket"],))
    return pl.DataFrame(rows, schema=agg.schema).with_columns(pl.lit(link).alias("link"))


# Printing -----------------------------------------------------------------------------------------

def _f(v, nd=2) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.{nd}f}" if abs(v) < 1e6 else f"{v:.4g}"
    return str(v)


def _md(headers: list[str], rows: list[list]) -> str:
    from .textable import format_table
    return format_table(headers, rows, cell=_f, markdown=True)


def render(run_dir: str | Path, by: list[str] | None = None, metrics: list[str] | None = None, fmt: str = "markdown",
           views: list[str] | None = None, flow: str | None = None) -> str:
    views = views or ["averages", "utilization", "runs"]
    with _open(run_dir) as store:
        _, cols = _groups(store, by)
    parts = []
    if "averages" in views:
        av = averages(run_dir, by, metrics, flow)
        if fmt == "csv":
            parts.append("# averages\n" + av.write_csv())
        else:
            groups = av.select(cols).unique(maintain_order=True).rows(named=True) if cols else [{}]
            heads, keys = ["metric"], []
            for g in groups:
                for part in ("flow", "background"):
                    if av.filter(pl.col("part") == part).height:
                        heads.append(_label(g, cols) + ("" if part == "flow" else " traffic"))
                        keys.append((g, part))
            mets = list(dict.fromkeys(av["metric"].to_list()))
            rows = []
            for m in mets + ["count"]:
                row = [m]
                for g, part in keys:
                    sub = av.filter((pl.col("part") == part) & (pl.col("metric") == (m if m != "count" else mets[0])))
                    for c in cols:
                        sub = sub.filter(pl.col(c) == g[c])
                    row.append("" if sub.is_empty() else (sub["n"][0] if m == "count" else sub["mean"][0]))
                rows.append(row)
            parts.append("Averages per group (distinguished flow and background traffic; seed 000 Fig 2.4)\n\n" + _md(heads, rows))
            parts.append("Spread (std, 90 % confidence half-width, min, max)\n\n" + _md(
                cols + ["metric", "part", "n", "mean", "std", "ci90 ±", "min", "max"],
                [[r[c] if isinstance(r[c], str) else str(r[c]) for c in cols] + [r["metric"], r["part"], r["n"], r["mean"], r["std"],
                                                                                r["ci90"], r["min"], r["max"]]
                 for r in av.iter_rows(named=True)]))
    if "utilization" in views:
        u = utilization(run_dir, by)
        if u.is_empty():
            if fmt != "csv":
                parts.append("Utilization per time bucket: none stored (set `buckets` in the sweep file and trace the bottleneck)")
        elif fmt == "csv":
            parts.append("# utilization\n" + u.write_csv())
        else:
            groups = u.select(cols).unique(maintain_order=True).rows(named=True) if cols else [{}]
            buckets = u.select(["bucket", "t_from_s", "t_to_s"]).group_by("bucket").agg(pl.col("t_from_s").min(), pl.col("t_to_s").max()).sort("bucket")
            rows = []
            for bk in buckets.iter_rows(named=True):
                row = [f"{bk['t_from_s']:g}-{bk['t_to_s']:g} s"]
                for g in groups:
                    sub = u.filter(pl.col("bucket") == bk["bucket"])
                    for c in cols:
                        sub = sub.filter(pl.col(c) == g[c])
                    row.append(f"{100 * sub['utilization'][0]:.1f}%" if sub.height else "")
                rows.append(row)
            avg = ["average"]
            for g in groups:
                sub = u
                for c in cols:
                    sub = sub.filter(pl.col(c) == g[c])
                w = (sub["t_to_s"] - sub["t_from_s"])
                avg.append(f"{100 * float((sub['utilization'] * w).sum() / w.sum()):.1f}%")
            rows.append(avg)
            parts.append(f"Percent utilization of {u['link'][0]} per time bucket (seed 000 Fig 2.5)\n\n" +
                         _md(["time"] + [_label(g, cols) for g in groups], rows))
    if "runs" in views:
        ind = individual(run_dir, by, metrics, flow).drop("hash")
        if fmt == "csv":
            parts.append("# runs\n" + ind.write_csv())
        else:
            parts.append("Individual values per run (seed 000 Fig 2.6)\n\n" + _md(ind.columns, [list(r) for r in ind.rows()]))
    return "\n\n".join(parts) + "\n"


def _num(v) -> float:
    m = re.match(r"\s*(-?[0-9.]+)", str(v))
    if not m:
        raise ValueError(f"axis value {v!r} has no number to plot against")
    return float(m.group(1))


def plot_sweep(run_dir: str | Path, x: str, metric: str = "throughput_KBps", by: list[str] | None = None,
               path: str | Path | None = None, flow: str | None = None, title: str | None = None) -> Path:
    """Mean of `metric` against axis `x` (its leading number: "20pkts" -> 20), one line per group
    of `by`, with min..max bars (seed 000 §6.2.2: extremes, not just means)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with _open(run_dir) as store:
        _, xcol = _groups(store, [x])
    by = [b for b in (by or []) if b != x]
    av = averages(run_dir, xcol + ([] if not by else by), [metric], flow)
    av = av.filter(pl.col("part") == "flow")
    with _open(run_dir) as store:
        _, gcols = _groups(store, by) if by else (None, [])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    groups = av.select(gcols).unique(maintain_order=True).rows(named=True) if gcols else [{}]
    for g in groups:
        sub = av
        for c in gcols:
            sub = sub.filter(pl.col(c) == g[c])
        pts = sorted((_num(r[xcol[0]]), r["mean"], r["min"], r["max"]) for r in sub.iter_rows(named=True))
        xs = [p[0] for p in pts]
        ax.errorbar(xs, [p[1] for p in pts], yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                    marker="o", capsize=3, label=_label(g, gcols))
    ax.set_xlabel(xcol[0])
    ax.set_ylabel(metric + " (mean, min..max)")
    if title:
        ax.set_title(title)
    if gcols:
        ax.legend()
    ax.grid(alpha=0.3)
    out = Path(path) if path else Path(run_dir) / f"{metric}_vs_{re.sub(r'[^A-Za-z0-9]+', '_', xcol[0]).strip('_')}.png"
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def paired_ratios(run_dir: str | Path, a: str, b: str, metric: str = "throughput_KBps", axis: str = "variant",
                  flow: str | None = None) -> tuple[pl.DataFrame, dict]:
    """Per-run ratios a/b of `metric` between two values of `axis` (e.g. vegas/reno) on paired
    runs: the same seed and the same values of every other axis. Returns (one row per pair:
    the other axes, seed, a, b, ratio; the summary of the ratios from analysis.paired_ratios)."""
    from .analysis import paired_ratios as _paired
    with _open(run_dir) as store:
        _, cols = _groups(store, None)
        _, (ax,) = _groups(store, [axis])
    ind = individual(run_dir, None, [metric], flow)
    others = [c for c in cols if c != ax]
    key = lambda r: tuple(r[c] for c in others) + (r["seed"],)
    va = {key(r): r[metric] for r in ind.iter_rows(named=True) if str(r[ax]) == a}
    vb = {key(r): r[metric] for r in ind.iter_rows(named=True) if str(r[ax]) == b}
    if not va or not vb:
        raise ValueError(f"no runs with {ax} = {a if not va else b!r}")
    summary = _paired(va, vb)
    rows = [{**dict(zip(others + ["seed"], k)), a: va[k], b: vb[k], "ratio": summary["ratios"][k]}
            for k in sorted(summary["ratios"], key=lambda k: tuple(_natural(x) for x in k))]
    return pl.DataFrame(rows, infer_schema_length=None), summary
