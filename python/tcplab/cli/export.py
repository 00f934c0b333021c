"""`tcplab export`: write a run's tables and traces as CSV files."""

from __future__ import annotations

import json
from pathlib import Path


def add_parser(sub) -> None:
    xp = sub.add_parser("export", help="write a run's tables and traces as CSV files",
                        description="Write the summary tables (flows, links, udp, traffic) and every trace Parquet file of a "
                                    "finished run as CSV files into OUT (default: RUN_DIR-csv beside the run directory).")
    xp.add_argument("run_dir", type=Path, help="run directory written by `tcplab run --out`")
    xp.add_argument("--format", choices=["csv"], default="csv", help="file format (csv; the run directory itself holds Parquet)")
    xp.add_argument("--out", type=Path, help="output directory (default: RUN_DIR-csv)")
    xp.set_defaults(fn=run)


def run(a) -> int:
    from ..rundir import RunData
    rd = RunData.load(a.run_dir)  # checks the completion marker and every file's hash
    out = a.out or Path(str(a.run_dir).rstrip("/") + "-csv")
    if out.resolve() == Path(a.run_dir).resolve():
        raise ValueError(f"--out {out}: write the CSV files beside the run directory, not into it")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in (("flows", rd.flows), ("links", rd.links), ("udp", _frame(rd.summary.get("udp"))),
                     ("traffic", _frame(rd.summary.get("traffic")))):
        if df.height:
            written.append(_write_csv(df, out / f"{name}.csv"))
    for pq in sorted(Path(a.run_dir).glob("*.parquet")):
        import polars as pl
        written.append(_write_csv(pl.read_parquet(pq), out / (pq.stem + ".csv")))
    for w in written:
        print(w)
    return 0


def _frame(rows):
    import polars as pl
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def _write_csv(df, path: Path) -> Path:
    import polars as pl
    # Nested columns (struct/list: drops by reason, per-type counts) are written as JSON text.
    df = df.with_columns([pl.col(c).map_elements(lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v),
                                                  return_dtype=pl.Utf8)
                          for c, t in df.schema.items() if isinstance(t, (pl.Struct, pl.List))])
    df.write_csv(path)
    return path
