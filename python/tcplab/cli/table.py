"""`tcplab table`: the x-Sim database views of a sweep (averages, utilization per bucket, runs)."""

from __future__ import annotations

from pathlib import Path


def add_parser(sub) -> None:
    tb = sub.add_parser("table", help="x-Sim database views of a sweep: averages, utilization per bucket, runs",
                        description="Print the views of a results store (seed 000 §2.3.1): averages per group for the distinguished flow "
                                    "and the background with std, 90%% confidence interval, min and max (Fig 2.4); bottleneck "
                                    "utilization per time bucket (Fig 2.5); individual values per run (Fig 2.6).")
    tb.add_argument("dir", type=Path, help="sweep output directory (with results.duckdb)")
    tb.add_argument("--by", action="append", metavar="KEY", help="group by these axes (full key or its last part, e.g. variant, limit); default: every axis")
    tb.add_argument("--metrics", action="append", metavar="M[,M...]",
                    help="metrics: flow fields (throughput_KBps), x-Sim columns (KB_sent, KB_resent, pct_resent) or summary paths (links.<name>.utilization)")
    tb.add_argument("--view", action="append", metavar="V", help="averages, utilization, runs (default: all three)")
    tb.add_argument("--flow", help="the distinguished flow (default: the sweep's flow, else the first)")
    tb.add_argument("--format", choices=["markdown", "csv"], default="markdown", help="output format (default markdown)")
    tb.add_argument("--plot", metavar="AXIS", help="instead of tables, plot the first metric against this axis (PNG), one line per --by group")
    tb.add_argument("--ratio", metavar="A/B", help="instead of tables, per-run ratios of the first metric between two values of the "
                                                 "first --by axis (default variant) on paired runs (same seed and other axes), e.g. vegas/reno")
    tb.add_argument("--out", type=Path, help="write to this file instead of stdout (the PNG path with --plot)")
    tb.set_defaults(fn=run)


def run(a) -> int:
    from ..table import plot_sweep, render
    metrics = [m for ms in (a.metrics or []) for m in ms.split(",") if m] or None
    by = [b for bs in (a.by or []) for b in bs.split(",") if b] or None
    if a.ratio:
        from ..table import paired_ratios
        if a.ratio.count("/") != 1:
            raise ValueError(f"--ratio {a.ratio}: expected A/B, e.g. vegas/reno")
        num, den = a.ratio.split("/")
        metric = (metrics or ["throughput_KBps"])[0]
        df, summ = paired_ratios(a.dir, num, den, metric=metric, axis=(by or ["variant"])[0], flow=a.flow)
        print(df.write_csv() if a.format == "csv" else df)
        print(f"{metric} {num}/{den} on {summ['n']} paired runs: mean {summ['mean']:.3f}"
              + (f" ± {summ['ci']:.3f} (90 % CI), std {summ['std']:.3f}" if summ["std"] is not None else "")
              + f", min {summ['min']:.3f}, max {summ['max']:.3f}" + (f"; unpaired: {len(summ['unpaired'])}" if summ["unpaired"] else ""))
        return 0
    if a.plot:
        path = plot_sweep(a.dir, a.plot, metric=(metrics or ["throughput_KBps"])[0], by=by, path=a.out, flow=a.flow)
        print(path)
        return 0
    views = [v for vs in (a.view or []) for v in vs.split(",") if v] or None
    text = render(a.dir, by=by, metrics=metrics, fmt=a.format, views=views, flow=a.flow)
    if a.out:
        Path(a.out).write_text(text)
        print(f"wrote {a.out}")
    else:
        print(text, end="")
    return 0
