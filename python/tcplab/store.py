"""The results store of sweeps and reproductions: an embedded DuckDB database, DIR/results.duckdb,
written only by the parent process (one transaction per batch of finished runs).

Tables (columns beyond the fixed ones are added as new fields appear in summary.json):

* ``runs`` — one row per run: ``hash`` (primary key: sha256 of the scenario text after
  overrides, the seed and the code version), ``sweep``, ``session`` (the invocation that ran
  it), ``grp`` (reproduce: the variant), ``point`` (index of the parameter point), ``seed``,
  ``params`` (JSON of the axis values), one column per axis key named exactly as the key
  (``"tcp[0].variant"``), ``scenario`` (name), ``code_version``, ``status`` (``ok`` or
  ``failed``), ``error``, ``wall_s`` (host seconds for the run, files included), ``finished_at``
  (unix time), ``run_dir``, ``summary`` (summary.json text), and every top-level scalar of
  summary.json (``sim_end_s``, ``events``, ``bottleneck``, ``packets.created``, ...).
* one table per list section of summary.json whose elements have a ``name``: ``flows``,
  ``links``, ``udp`` (and ``traffic`` once it exists): ``hash``, ``idx`` and the element's
  fields, nested dicts flattened with dots (``drops_by_reason.queue_overflow``), lists as JSON.
* ``link_buckets`` — ``hash, link, bucket, t_from_s, t_to_s, utilization`` when the sweep asks
  for utilization per time bucket (seed 000 Fig 2.5).
* ``meta`` — ``sweep, info`` (JSON: title, file, distinguished flow, axes, seeds).
* The bufferbloat figures of every queue that keeps them (the ``aqm`` block of a link in
  summary.json; issue 27), in long form for SQL:

  - ``aqm`` — ``hash, link, class, departed, sojourn_p50_s, sojourn_p95_s, sojourn_p99_s, drops,
    marks``: one row per link with ``class = 'all'``, and one per class of a multi-queue
    discipline (DualPI2's, or ``stats = true``'s, ``l4s`` and ``classic``);
  - ``aqm_causes`` — ``hash, link, class, kind ('drop' or 'mark'), cause, count``;
  - ``aqm_flow_queues`` — ``hash, link, queue, flows (comma-separated names), avg_pkts, avg_bytes,
    max_pkts, max_bytes, departed``: FQ-CoDel's per-flow occupancy.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any, Iterable

FIXED_RUN_COLUMNS = {
    "hash": "VARCHAR PRIMARY KEY", "sweep": "VARCHAR", "session": "VARCHAR", "grp": "VARCHAR", "point": "INTEGER",
    "seed": "BIGINT", "params": "VARCHAR", "scenario": "VARCHAR", "code_version": "VARCHAR", "status": "VARCHAR",
    "error": "VARCHAR", "wall_s": "DOUBLE", "finished_at": "DOUBLE", "run_dir": "VARCHAR", "summary": "VARCHAR",
}
#: summary.json top-level keys stored in fixed columns or not at all (host-dependent).
_SKIP_TOP = {"seed", "wall_s", "scenario"}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sqltype(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "BOOLEAN"
    if isinstance(v, int):
        return "BIGINT"
    if isinstance(v, float):
        return "DOUBLE"
    return "VARCHAR"


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        elif isinstance(v, list):
            out[key] = json.dumps(v)
        else:
            out[key] = v
    return out


def sections(summary: dict) -> dict[str, list[dict]]:
    """The list sections of a summary whose elements are dicts with a "name"."""
    return {k: v for k, v in summary.items()
            if isinstance(v, list) and v and all(isinstance(e, dict) and "name" in e for e in v)}


def _table_name(section: str) -> str:
    name = re.sub(r"\W", "_", section)
    return name if name not in ("runs", "meta", "link_buckets") + AQM_TABLES else f"section_{name}"


AQM_TABLES = ("aqm", "aqm_causes", "aqm_flow_queues")
#: The most values a batch inserts as lists (Store._insert, ≈ 0.5 s at most); larger ones go through polars.
_LISTS_MAX = 200_000
_AQM_DDL = {
    "aqm": "hash VARCHAR, link VARCHAR, class VARCHAR, departed BIGINT, sojourn_p50_s DOUBLE, sojourn_p95_s DOUBLE, "
           "sojourn_p99_s DOUBLE, drops BIGINT, marks BIGINT",
    "aqm_causes": "hash VARCHAR, link VARCHAR, class VARCHAR, kind VARCHAR, cause VARCHAR, count BIGINT",
    "aqm_flow_queues": "hash VARCHAR, link VARCHAR, queue INTEGER, flows VARCHAR, avg_pkts DOUBLE, avg_bytes DOUBLE, "
                       "max_pkts BIGINT, max_bytes BIGINT, departed BIGINT",
}


def aqm_rows(run_hash: str, summary: dict) -> dict[str, list[tuple]]:
    """The rows of the three AQM tables for one run's summary."""
    out: dict[str, list[tuple]] = {t: [] for t in AQM_TABLES}
    for link in summary.get("links") or []:
        a = link.get("aqm")
        if not isinstance(a, dict):
            continue
        name = link.get("name")
        for cls, c in [("all", a)] + sorted((a.get("classes") or {}).items()):
            drops, marks = c.get("drops_by_cause") or {}, c.get("marks_by_cause") or {}
            out["aqm"].append((run_hash, name, cls, c.get("departed"), c.get("sojourn_p50_s"), c.get("sojourn_p95_s"),
                               c.get("sojourn_p99_s"), sum(drops.values()), sum(marks.values())))
            out["aqm_causes"] += [(run_hash, name, cls, "drop", k, v) for k, v in sorted(drops.items())]
            out["aqm_causes"] += [(run_hash, name, cls, "mark", k, v) for k, v in sorted(marks.items())]
        for f in a.get("flow_queues") or []:
            out["aqm_flow_queues"].append((run_hash, name, f["queue"], ",".join(f["flows"]), f["avg_pkts"], f["avg_bytes"],
                                           f["max_pkts"], f["max_bytes"], f["departed"]))
    return out


class Store:
    def __init__(self, path: str | Path, read_only: bool = False):
        import duckdb
        self.path = Path(path)
        if read_only and not self.path.exists():
            raise FileNotFoundError(f"{self.path}: no results database (run `tcplab sweep ... --out {self.path.parent}` first)")
        try:
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as e:
            raise ValueError(f"{self.path}: cannot open the results database ({e}); is another sweep writing it?") from None
        self.read_only = read_only
        self._stored: set[str] | None = None
        self._types: dict[str, dict[str, str]] = {}
        if not read_only:
            cols = ", ".join(f"{_q(k)} {t}" for k, t in FIXED_RUN_COLUMNS.items())
            self.con.execute(f"CREATE TABLE IF NOT EXISTS runs ({cols})")
            self.con.execute("CREATE TABLE IF NOT EXISTS meta (sweep VARCHAR PRIMARY KEY, info VARCHAR)")
            self.con.execute("CREATE TABLE IF NOT EXISTS link_buckets (hash VARCHAR, link VARCHAR, bucket INTEGER, "
                             "t_from_s DOUBLE, t_to_s DOUBLE, utilization DOUBLE)")
            for t, cols in _AQM_DDL.items():
                self.con.execute(f"CREATE TABLE IF NOT EXISTS {t} ({cols})")
        self._load_types()

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _load_types(self) -> None:
        self._types = {}
        for table, col, typ in self.con.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'main'").fetchall():
            self._types.setdefault(table, {})[col] = typ

    def tables(self) -> list[str]:
        return sorted(self._types)

    def _ensure(self, table: str, rows: Iterable[dict]) -> None:
        """Create `table` / add columns for fields not seen before; widen BIGINT to DOUBLE when a
        float arrives. Runs outside the data transaction (DDL)."""
        have = self._types.get(table)
        created = have is None
        if created:
            have = {"hash": "VARCHAR", "idx": "INTEGER"}
        # The columns after these rows (new ones in the order first seen, BIGINT widened to
        # DOUBLE when a float arrives), then one statement per change -- or, for a table that
        # holds no rows yet (a new store's first commit adds a few hundred summary columns), one
        # CREATE with them all.
        want = dict(have)
        for row in rows:
            for k, v in row.items():
                t = _sqltype(v)
                if t is None:
                    continue
                cur = want.get(k)
                if cur is None or (cur == "BIGINT" and t == "DOUBLE"):
                    want[k] = t
        if want == have and not created:
            return
        empty = created or (len(want) - len(have) > 1 and not self.con.execute(f"SELECT 1 FROM {_q(table)} LIMIT 1").fetchall())
        if empty:
            fixed = FIXED_RUN_COLUMNS if table == "runs" else {}   # keeps the runs' PRIMARY KEY
            cols = ", ".join(f"{_q(k)} {fixed.get(k, t)}" for k, t in want.items())
            self.con.execute(f"CREATE OR REPLACE TABLE {_q(table)} ({cols})")
        else:
            for k, t in want.items():
                if k not in have:
                    self.con.execute(f"ALTER TABLE {_q(table)} ADD COLUMN {_q(k)} {t}")
                elif have[k] != t:
                    self.con.execute(f"ALTER TABLE {_q(table)} ALTER COLUMN {_q(k)} TYPE DOUBLE")
        self._types[table] = want

    def stored_hashes(self, include_failed: bool = True) -> set[str]:
        q = "SELECT hash FROM runs" + ("" if include_failed else " WHERE status = 'ok'")
        return {h for (h,) in self.con.execute(q).fetchall()}

    def set_meta(self, sweep: str, info: dict) -> None:
        self.con.execute("DELETE FROM meta WHERE sweep = ?", [sweep])
        self.con.execute("INSERT INTO meta VALUES (?, ?)", [sweep, json.dumps(info)])

    def meta(self) -> dict[str, dict]:
        return {s: json.loads(i) for s, i in self.con.execute("SELECT sweep, info FROM meta").fetchall()}

    def commit(self, items: list[tuple[Any, dict]], sweep: str = "", session: str = "") -> None:
        """Store finished runs (task, result) in one transaction."""
        now = time.time()
        runs_rows: list[dict] = []
        sec_rows: dict[str, list[dict]] = {}
        bucket_rows: list[tuple] = []
        aqm: dict[str, list[tuple]] = {t: [] for t in AQM_TABLES}
        for task, res in items:
            summary = json.loads(res["summary_json"]) if res.get("summary_json") else {}
            row = {"hash": task.hash, "sweep": sweep, "session": session, "grp": task.group or None, "point": task.point,
                   "seed": task.seed, "params": json.dumps(task.params, sort_keys=True),
                   "scenario": summary.get("scenario"), "code_version": task.version or None,
                   "status": res["status"], "error": res.get("error"), "wall_s": res.get("wall_s"),
                   "finished_at": now, "run_dir": res.get("run_dir"), "summary": res.get("summary_json")}
            for k, v in task.params.items():
                row[k if k not in FIXED_RUN_COLUMNS else f"param.{k}"] = v if not isinstance(v, (list, dict)) else json.dumps(v)
            for k, v in summary.items():
                if k in _SKIP_TOP or (isinstance(v, list) and k in sections(summary)):
                    continue
                if isinstance(v, dict):
                    row.update(_flatten(v, k + "."))
                elif isinstance(v, list):
                    row[k] = json.dumps(v)
                else:
                    row[k] = v
            runs_rows.append(row)
            for sec, elems in sections(summary).items():
                t = _table_name(sec)
                for i, e in enumerate(elems):
                    sec_rows.setdefault(t, []).append({"hash": task.hash, "idx": i, **_flatten(e)})
            for t, rows in aqm_rows(task.hash, summary).items():
                aqm[t] += rows
            for b in res.get("buckets") or []:
                bucket_rows.append((task.hash, b["link"], b["bucket"], b["t_from_s"], b["t_to_s"], b["utilization"]))
        self._ensure("runs", runs_rows)
        for t, rows in sec_rows.items():
            self._ensure(t, rows)
        if self._stored is None:
            self._stored = self.stored_hashes()
        replace = [r["hash"] for r in runs_rows if r["hash"] in self._stored]   # a failed run retried
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            for h in replace:
                for t in self._types:
                    if t != "meta":
                        con.execute(f"DELETE FROM {_q(t)} WHERE hash = ?", [h])
            self._insert("runs", runs_rows)
            for t, rows in sec_rows.items():
                self._insert(t, rows)
            if bucket_rows:
                con.executemany("INSERT INTO link_buckets VALUES (?, ?, ?, ?, ?, ?)", bucket_rows)
            for t, rows in aqm.items():
                if rows:
                    con.executemany(f"INSERT INTO {t} VALUES ({', '.join('?' * len(rows[0]))})", rows)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self._stored.update(r["hash"] for r in runs_rows)

    def _insert(self, table: str, rows: list[dict]) -> None:
        """Insert through a polars frame, which DuckDB reads as Arrow (one statement however many
        rows; far cheaper than executemany), columns cast to the table's types. (Not through
        pyarrow.array: it imports pandas, 0.3-0.5 s of a short reproduction.) A small batch (a
        reproduction's runs) while polars is not loaded goes in as one statement with a list
        parameter per column, each cast to a list of its column's type and unnested (≈ 2-4 µs a
        value): importing polars would be most of a short reproduction's Python step (0.3-0.9 s;
        `tcplab reproduce --no-report` runs its runs natively)."""
        import sys
        cols = [c for c in self._types[table] if any(c in r for r in rows)]
        if "polars" not in sys.modules and len(rows) * len(cols) <= _LISTS_MAX:
            types = [self._types[table][c] for c in cols]
            params = [[float(v) if t == "DOUBLE" and v is not None else v for v in (r.get(c) for r in rows)] for c, t in zip(cols, types)]
            sel = ", ".join(f"unnest(CAST(${i + 1} AS {t}[]))" for i, t in enumerate(types))
            self.con.execute(f"INSERT INTO {_q(table)} ({', '.join(_q(c) for c in cols)}) SELECT {sel}", params)
            return
        import polars as pl
        arrays = []
        for i, c in enumerate(cols):
            vals = [r.get(c) for r in rows]
            typ = {"BIGINT": pl.Int64, "DOUBLE": pl.Float64, "BOOLEAN": pl.Boolean, "INTEGER": pl.Int32}.get(self._types[table][c], pl.String)
            arrays.append(pl.Series(f"c{i}", [float(v) if typ == pl.Float64 and v is not None else v for v in vals], dtype=typ, strict=True))
        batch = pl.DataFrame(arrays)
        self.con.register("_tcplab_batch", batch)
        try:
            self.con.execute(f"INSERT INTO {_q(table)} ({', '.join(_q(c) for c in cols)}) SELECT * FROM _tcplab_batch")
        finally:
            self.con.unregister("_tcplab_batch")

    # Reading ---------------------------------------------------------------------------------
    def frame(self, table: str, where: str = ""):
        """A table as a polars DataFrame (empty when the table does not exist)."""
        import polars as pl
        if table not in self._types:
            return pl.DataFrame()
        return pl.from_arrow(self.con.sql(f"SELECT * FROM {_q(table)} {where}").to_arrow_table())

    def summaries(self, status: str | None = "ok") -> dict[str, dict]:
        q = "SELECT hash, summary FROM runs" + (" WHERE status = ?" if status else "")
        rows = self.con.execute(q, [status] if status else []).fetchall()
        return {h: json.loads(s) for h, s in rows if s}
