"""The public entry points: a report of runs, a reproduction's paper-vs-ours report, and ``tcplab report``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ..rundir import RunData, as_run
from .page import _e, _fmt, _page, _table, _write
from .sections import _Native, _as_runs, _mpl, _draw_native, _draw_pending, _native_dir, _run_section


def write_report(run_dirs_or_run, path: str | Path, *, title: str | None = None) -> Path:
    """Write ONE self-contained HTML file for one run or several (a run directory, a RunData,
    or a list of either): per run the summary tables (links, flows) and every relevant
    graph -- the TCP trace graph of each flow (first 12), the CAM graph of each Vegas flow,
    the sequence plot, per-flow throughput, and bandwidth + queue graphs for the bottleneck
    and every link that dropped packets or was more than half busy. Returns the path."""
    runs = _as_runs(run_dirs_or_run)
    if not runs:
        raise ValueError("write_report: no runs given")
    if title is None:
        title = "tcplab report — " + ", ".join(str(r.summary.get("scenario", r.dir.name)) for r in runs[:4])
        if len(runs) > 4:
            title += f" and {len(runs) - 4} more"
    body = []
    if len(runs) > 1:
        body.append("<nav>" + "".join(f'<a href="#run{i}">{_e(r.summary.get("scenario", r.dir.name))} '
                                      f'(seed {_e(r.summary.get("seed"))})</a>' for i, r in enumerate(runs)) + "</nav>")
    for i, r in enumerate(runs):
        body.append(_run_section(r, f"run{i}"))
    return _write(path, _page(title, "".join(body)))


def _rows_to_dicts(rows) -> list[dict]:
    if rows is None:
        return []
    if hasattr(rows, "to_dicts"):  # polars
        return rows.to_dicts()
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # pandas
        return rows.to_dict(orient="records")
    out = []
    for r in rows:
        if isinstance(r, Mapping):
            out.append(dict(r))
        elif hasattr(r, "_asdict"):
            out.append(r._asdict())
        elif hasattr(r, "__dataclass_fields__"):
            import dataclasses

            out.append(dataclasses.asdict(r))
        else:
            vals = list(r)
            out.append(dict(zip(["variant", "metric", "paper", "ours"], vals)))
    return out


def _pick_conn(run, variant: str) -> str | None:
    for f in run.summary.get("flows", []):
        if str(f.get("variant", "")).lower() == str(variant).lower():
            return f["name"]
    return run.conns[0] if run.conns else None


def _spread_rows(rows: list[dict]) -> list[dict]:
    """Rows aggregated over several runs (reproduce with seeds/axes) shown as ours = mean ± std
    and a min .. max column; n and the 90 % interval kept; raw mean/std/min/max folded in."""
    out = []
    for r in rows:
        if r.get("n", 1) and r.get("n", 1) > 1 and "std" in r:
            d = {k: v for k, v in r.items() if k not in ("mean", "std", "min", "max", "ci90", "ours", "n", "seeds")}
            ours = _fmt(r.get("ours"))
            if r.get("std") is not None:
                ours += f" ± {_fmt(r['std'])}"
            d["ours"] = ours
            d["min .. max"] = f"{_fmt(r.get('min'))} .. {_fmt(r.get('max'))}"
            d["ci90 ±"] = r.get("ci90")
            d["n"] = r.get("n")
            out.append(d)
        else:
            out.append({k: v for k, v in r.items() if k not in ("mean", "std", "ci90", "n")} if r.get("n") == 1 else dict(r))
    return out


def write_comparison_report(out_dir: str | Path, comparison_rows, runs: Mapping[str, Any],
                            path: str | Path | None = None, *, title: str | None = None,
                            claims: Sequence[Mapping[str, Any]] | None = None, folder: str | Path | None = None) -> Path:
    """The ``tcplab reproduce`` report: the paper-vs-ours table (rows with at least
    variant, metric, paper, ours; extra keys such as unit or note become extra columns),
    then the TCP trace graphs of the variants side by side (Reno beside Vegas, as in thesis
    Figs 4.1 and 4.3), then each run's full section. ``runs`` maps a variant name to its run
    directory (or RunData). ``path`` defaults to OUT_DIR/report.html; a relative path is
    taken inside ``out_dir``. Rows aggregated over several runs show mean ± std and min .. max;
    ``claims`` (text, expr, held, values) get their own held/missed table. Returns the path."""
    out_dir = Path(out_dir)
    p = Path(path) if path is not None else Path("report.html")
    if not p.is_absolute():
        p = out_dir / p
    rows = _spread_rows(_rows_to_dicts(comparison_rows))
    loaded = {v: as_run(r) for v, r in runs.items()}
    title = title or "tcplab reproduction — paper vs ours"
    cols = ["variant", "metric", "paper", "ours"]
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)

    def miss(r):
        for k in ("ok", "pass", "within"):
            if k in r and r[k] is False:
                return "miss"
        return ""

    body = ["<h2>Paper vs ours</h2>", _table(rows, cols, cls="comparison", row_class=miss)]
    from ..fidelity import report_section
    body.append(report_section(folder, rows, claims or []))   # badges, causes linked to their evidence
    if claims:
        crow = [{"claim": c.get("text", ""), "result": "held" if c.get("held") else "missed",
                 "numbers": ", ".join(f"{k} = {_fmt(v)}" for k, v in (c.get("values") or {}).items()),
                 "expression": c.get("expr", "")} for c in claims]
        body += ["<h2>Claims</h2>", _table(crow, ["claim", "result", "numbers", "expression"], cls="claims",
                                           row_class=lambda r: "miss" if r["result"] == "missed" else "")]
    if loaded:
        body.append("<h2>TCP trace graphs side by side</h2><div class=\"side\">")
        for v, run in loaded.items():
            c = _pick_conn(run, v)
            if c is None or not getattr(run, "has_tcp", True):
                body.append(f"<div><h3>{_e(v)}</h3><p class=\"note\">no TCP trace</p></div>")
                continue
            g = _Native("tcp", [c], _mpl("tcp_graph", run, c), f"{v}: TCP trace graph of {c}",
                        f"side-{v}")
            body.append(f"<div><h3>{_e(v)}</h3>" + "".join(_draw_pending(_draw_native([g], _native_dir(run))))
                        + "</div>")
        body.append("</div>")
        body.append("<nav>" + "".join(f'<a href="#v{i}">{_e(v)}</a>' for i, v in enumerate(loaded)) + "</nav>")
        for i, (v, run) in enumerate(loaded.items()):
            body.append(_run_section(run, f"v{i}", heading=f"{v}: {run.summary.get('scenario', run.dir.name)}"))
    return _write(p, _page(title, "".join(body)))


def report_cli(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """What ``tcplab report RUN_DIR`` does: RUN_DIR/report.html unless ``out`` is given (a
    file, or a directory to put report.html in). Returns the path written."""
    if (Path(run_dir) / "comparison.json").is_file():   # a reproduction's output: its paper-vs-ours report
        from ..fidelity import comparison_report
        return comparison_report(Path(run_dir), out)
    run = RunData.load(run_dir)
    if out is None:
        target = run.dir / "report.html"
    else:
        target = Path(out)
        if target.is_dir() or (not target.suffix and not target.exists()):
            target = target / "report.html"
    return write_report(run, target)
