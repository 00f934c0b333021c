"""Load a finished run directory (the contract the Rust core and the CLI write).

    DIR/summary.json         run summary: links[], flows[], optional "bottleneck"
    DIR/trace_tcp.parquet    one row per TCP trace record (both sides)
    DIR/trace_cam.parquet    Vegas congestion-avoidance decisions (optional)
    DIR/trace_link.parquet   link arrive/depart/drop events, each naming its packet (flow, kind
                             data/ack/ctl/udp, seq); runs of older versions lack those columns
    DIR/scenario.toml        the scenario as run
    DIR/COMPLETE.json        the completion marker: every file above with its size and SHA-256,
                             written last (see ``seal``); readers refuse a directory without it

A run directory is written into a temporary directory beside its target and renamed into place
as the last step (``tcplab.api.Run.save``), so it is either complete and from one run, or absent.

``RunData.load(dir)`` reads summary.json eagerly and each parquet file on first use, so
a missing trace only fails the call that needs it, with an error naming the file.
Everything returned is a polars DataFrame (``.to_pandas()`` works), except what the graphs read:
``trace_cols``, ``link_cols``, ``cam_cols``, ``queue_cols`` and ``aqm_cols`` give the same rows as
numpy columns (:class:`tcplab.cols.Cols`) read through the Rust core, so that a plot imports no
polars (issue 28); polars is imported by the accessors that make a frame.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .rundir_cols import ColumnAccess

if TYPE_CHECKING:  # polars is imported where a frame is made: the graphs read numpy columns (issue 28)
    import polars as pl

__all__ = ["RunData", "RunDirError", "as_run", "KB", "MARKER", "seal", "verify"]

MARKER = "COMPLETE.json"

KB = 1024  # the seeds' KB (000 README: "KB" of data is 1024 bytes)

_TCP_COLS = [
    "conn", "side", "t_s", "kind", "snd_una", "snd_nxt", "cwnd", "ssthresh", "snd_wnd",
    "unacked", "srtt_s", "rto_s", "seq", "len",
]
_LINK_COLS = ["link", "t_s", "event", "bytes", "qlen_pkts", "reason"]
_CAM_COLS = ["conn", "t_s", "expected_KBps", "actual_KBps", "diff_buffers", "alpha", "beta", "decision"]


def _cam_schema() -> dict:
    import polars as pl
    return {"conn": pl.String, "t_s": pl.Float64, "expected_KBps": pl.Float64, "actual_KBps": pl.Float64,
            "diff_buffers": pl.Float64, "alpha": pl.Float64, "beta": pl.Float64, "decision": pl.Int8}


class RunDirError(FileNotFoundError):
    """A run directory is missing a file, or a file lacks what the contract promises."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def seal(dir: str | Path, names: list[str] | None = None) -> Path:
    """Write the completion marker of a run directory: each file (default: every regular file
    in it but the marker) with its size and SHA-256, flushed to disk before the marker."""
    d = Path(dir)
    if names is None:
        names = sorted(p.name for p in d.iterdir() if p.is_file() and p.name != MARKER)
    files = []
    for name in names:
        p = d / name
        with open(p, "rb") as f:
            os.fsync(f.fileno())
        files.append({"name": name, "bytes": p.stat().st_size, "sha256": _sha256(p)})
    from . import __version__
    marker = d / MARKER
    with open(marker, "w") as f:
        f.write(json.dumps({"tcplab_version": __version__, "files": files}, indent=1) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return marker


def verify(dir: str | Path) -> dict[str, Any]:
    """Check a run directory against its completion marker; returns the marker. Raises
    RunDirError naming the directory or the file that does not match."""
    d = Path(dir)
    m = d / MARKER
    if not m.is_file():
        raise RunDirError(f"{d}: not a complete tcplab run directory (no {MARKER}: the run that wrote it did not "
                          f"finish, or an older tcplab wrote it); run it again")
    try:
        marker = json.loads(m.read_text())
        files = marker["files"]
        entries = [(str(f["name"]), int(f["bytes"]), str(f["sha256"])) for f in files]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise RunDirError(f"{m}: unreadable completion marker ({e})") from None
    for name, size, digest in entries:
        p = d / name
        if "/" in name or name.startswith(".") or not p.is_file():
            raise RunDirError(f"{p}: listed in {MARKER} but missing; the run directory is incomplete")
        if p.stat().st_size != size or _sha256(p) != digest:
            raise RunDirError(f"{p}: changed since the run wrote it (size or SHA-256 differs from {MARKER})")
    return marker


def check_output_file(path: str | Path) -> None:
    """An output file may be created or replace a regular file; anything else at the path (a
    device such as /dev/full, a FIFO, a socket, a directory) is refused, never replaced."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return
    import stat as _stat
    if not (_stat.S_ISREG(st.st_mode) or _stat.S_ISLNK(st.st_mode) and p.is_file()):
        raise ValueError(f"{p}: exists and is not a regular file; refusing to replace it")


def _check_values(df: pl.DataFrame, path: Path, nonneg: list[str], rows: pl.Series | None = None) -> pl.DataFrame:
    """Trace columns must be finite and non-negative: a NaN time or a negative window is no
    measurement, and would be drawn as one. `rows`: the file's row number of each row of `df`
    (when `df` holds some of the file's rows), for the message."""
    import polars as pl
    cols = [c for c in nonneg if c in df.columns and df.height > 0 and df[c].dtype.is_numeric()]
    if not cols:
        return df

    def bad_of(c: str) -> pl.Expr:
        e = pl.col(c).is_null() | (pl.col(c) < 0)
        if df[c].dtype.is_float():
            e = e | pl.col(c).is_nan() | pl.col(c).is_infinite()
        return e.any().alias(c)
    # One pass over all the columns (a query per column and test cost 0.2 s on a 10^6-row trace);
    # the row is looked up only when a column has a bad value.
    flags = df.select([bad_of(c) for c in cols]).row(0)
    for c, flagged in zip(cols, flags):
        if not flagged:
            continue
        col = df[c]
        bad = col.is_nan() if col.dtype.is_float() else pl.Series([False] * df.height)
        if col.dtype.is_float():
            bad = bad | col.is_infinite()
        bad = bad | col.is_null() | (col < 0)
        if bad.any():
            i = int(bad.arg_max())
            row = i if rows is None else int(rows[i])
            raise RunDirError(f"{path}: column {c} row {row} holds {col[i]!r}; trace values must be finite and non-negative")
    return df


# Trace files a complete run directory lacks when the run did not record them: say how to.
_TRACE_SWITCH = {
    "trace_tcp.parquet": "the run had TCP tracing off: run it again with run.trace.tcp = true "
                         "(or --set run.trace.tcp=true)",
    "trace_link.parquet": "the run traced no link: run it again with run.trace.links = [\"a->b\"] or [\"all\"] "
                          "(or --set 'run.trace.links=[\"all\"]')",
    "trace_cam.parquet": "the run had TCP tracing off: run it again with run.trace.tcp = true",
}


def _need(path: Path, what: str) -> Path:
    if not path.is_file():
        if path.name in _TRACE_SWITCH and (path.parent / "summary.json").is_file() and (path.parent / "COMPLETE.json").is_file():
            raise RunDirError(f"{path.parent}: no {what} ({path.name}); {_TRACE_SWITCH[path.name]}")
        raise RunDirError(f"{path}: no such file ({what}); is {path.parent} a tcplab run directory?")
    return path


def _read_parquet(path: Path, what: str, required: list[str]) -> pl.DataFrame:
    import polars as pl
    _need(path, what)
    try:
        df = pl.read_parquet(path)
    except Exception as e:  # corrupt / not parquet
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RunDirError(f"{path}: cannot read {what}: {msg}") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise RunDirError(f"{path}: missing column(s) {missing} ({what})")
    return _check_values(df, path, _numeric_columns(df.columns, what))


def _numeric_columns(columns: list[str], what: str) -> list[str]:
    """The columns whose values must be finite and non-negative."""
    return [c for c in columns if c not in ("conn", "side", "kind", "link", "event", "reason", "decision", "diff_buffers", "flow")
            and not (c == "seq" and what == "link trace")]  # a SYN sits at offset -1


_ROW = "__tcplab_row"


def _read_parquet_rows(path: Path, what: str, required: list[str], column: str, value: str) -> pl.DataFrame:
    """The rows of a trace file whose `column` is `value` (one connection, one link direction),
    checked as :func:`_read_parquet` checks a whole file. A plot of one flow reads its rows
    alone: 0.01-0.03 s of CPU instead of 0.3 s to read and check a 1.7-million-row link trace
    (issue 13)."""
    import polars as pl
    _need(path, what)
    try:
        lf = pl.scan_parquet(path, row_index_name=_ROW)
        names = lf.collect_schema().names()
        missing = [c for c in required if c not in names]
        df = None if missing else lf.filter(pl.col(column) == value).collect()
    except Exception as e:  # corrupt / not parquet
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RunDirError(f"{path}: cannot read {what}: {msg}") from None
    if missing:
        raise RunDirError(f"{path}: missing column(s) {missing} ({what})")
    rows = df[_ROW]
    df = df.drop(_ROW)
    return _check_values(df, path, _numeric_columns(df.columns, what), rows=rows)


class RunData(ColumnAccess):
    """A finished run, read from its directory. Build with :meth:`load`."""

    def __init__(self, dir: str | Path | None, summary: dict[str, Any], *, tables: dict[str, pl.DataFrame] | None = None,
                 scenario_text: str | None = None):
        self.dir = Path(dir) if dir is not None else Path(".")
        self.summary = summary
        self._in_memory = tables is not None
        tables = tables or {}
        self._tcp: pl.DataFrame | None = tables.get("tcp")
        self._link: pl.DataFrame | None = tables.get("link")
        self._cam: pl.DataFrame | None = tables.get("cam")
        self._intervals: pl.DataFrame | None = tables.get("queue_intervals")
        self._scenario_text = scenario_text

    # ------------------------------------------------------------------ construction
    @classmethod
    def load(cls, dir: str | Path) -> "RunData":
        d = Path(dir)
        if not d.is_dir():
            raise RunDirError(f"{d}: not a directory (expected a tcplab run directory)")
        verify(d)
        p = _need(d / "summary.json", "run summary")
        try:
            summary = json.loads(p.read_text())
        except json.JSONDecodeError as e:
            raise RunDirError(f"{p}: invalid JSON: {e}") from e
        for key in ("flows", "links"):
            if not isinstance(summary.get(key), list):
                raise RunDirError(f"{p}: key {key!r} missing or not a list")
        return cls(d, summary)

    @classmethod
    def from_tables(cls, summary: dict[str, Any], tables: dict[str, pl.DataFrame], scenario_text: str | None = None,
                    dir: str | Path | None = None) -> "RunData":
        """A run held in memory: ``tables`` maps "tcp", "link", "cam" to frames with the
        run-directory columns (a missing or empty one behaves like an absent file)."""
        t = {k: v for k, v in tables.items() if v is not None and v.height > 0}
        return cls(dir, summary, tables=t, scenario_text=scenario_text)

    @property
    def scenario_text(self) -> str | None:
        if self._scenario_text is not None:
            return self._scenario_text
        p = self.dir / "scenario.toml"
        return p.read_text(errors="replace") if p.is_file() else None

    def __repr__(self) -> str:
        return f"RunData({str(self.dir)!r}, scenario={self.summary.get('scenario')!r})"

    # ------------------------------------------------------------------ summary tables
    @property
    def flows(self) -> pl.DataFrame:
        import polars as pl
        return pl.DataFrame(self.summary["flows"], infer_schema_length=None) if self.summary["flows"] else pl.DataFrame()

    @property
    def traffic(self) -> pl.DataFrame:
        """One row per traffic source (tcplib, ahn, onoff): conversations, KB sent and retransmitted,
        Telnet echo delay (seed 000 Fig 2.4); the per-type counts and the mix as struct columns."""
        import polars as pl
        rows = self.summary.get("traffic") or []
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()

    def utilization(self, link: str | None = None, bucket_s: float = 1.0) -> pl.DataFrame:
        """Utilization of `link` (default the bottleneck) per time bucket of `bucket_s` seconds, from
        the monitor's per-interval bytes (seed 000 Fig 2.5): columns t_s, bytes, utilization."""
        import polars as pl
        link = self.resolve_link(link) if link else self.summary.get("bottleneck")
        lk = next((l for l in self.summary["links"] if l["name"] == link), None)
        if lk is None:
            raise KeyError(f"no link direction {link} in {self.dir / 'summary.json'}")
        if self._intervals is None and not self._in_memory and (self.dir / "queue_intervals.parquet").is_file():
            self._intervals = _read_parquet(self.dir / "queue_intervals.parquet", "queue intervals", ["link", "t_s"])
        iv = self._intervals if self._intervals is not None else pl.DataFrame()
        if not iv.is_empty():
            iv = iv.filter(pl.col("link") == link)
        if iv.is_empty() or "bytes_out" not in iv.columns:
            return pl.DataFrame({"t_s": [], "bytes": [], "utilization": []})
        df = (iv.with_columns((pl.col("t_s") / bucket_s).floor().alias("b"))
                .group_by("b").agg(pl.col("bytes_out").sum().alias("bytes")).sort("b"))
        return df.select((pl.col("b") * bucket_s).alias("t_s"), pl.col("bytes"),
                         (pl.col("bytes") * 8 / (lk["rate_bps"] * bucket_s)).alias("utilization"))

    def _link_rows(self) -> list[dict[str, Any]]:
        """The summary's links as rows: drop times left out, drops per reason as drops_<reason>."""
        rows = []
        for lk in self.summary["links"]:
            r = {k: v for k, v in lk.items() if k not in ("drops_by_reason", "drop_times_s")}
            for reason, n in (lk.get("drops_by_reason") or {}).items():
                r[f"drops_{reason}"] = n
            rows.append(r)
        return rows

    @property
    def links(self) -> pl.DataFrame:
        import polars as pl
        rows = self._link_rows()
        if not rows:
            return pl.DataFrame()
        df = pl.DataFrame(rows, infer_schema_length=None)
        drop_cols = sorted(c for c in df.columns if c.startswith("drops_"))
        if drop_cols:
            df = df.with_columns(pl.col(drop_cols).fill_null(0))
        return df

    @property
    def conns(self) -> list[str]:
        return [f["name"] for f in self.summary["flows"]]

    @property
    def link_names(self) -> list[str]:
        return [lk["name"] for lk in self.summary["links"]]

    def flow(self, conn: str) -> dict[str, Any]:
        for f in self.summary["flows"]:
            if f["name"] == conn:
                return f
        raise KeyError(f"no flow {conn!r} in {self.dir / 'summary.json'}; flows: {self.conns}")

    def resolve_link(self, name: str) -> str:
        """A link direction "a->b" from either spelling: the direction itself, or a link's
        `name` in the scenario (its a->b direction). Outputs always use the "a->b" spelling."""
        if name in self.link_names:
            return name
        text = self.scenario_text
        if text:
            import tomllib
            try:
                links = tomllib.loads(text).get("links") or []
            except (tomllib.TOMLDecodeError, ValueError):
                links = []
            for lk in links:
                if isinstance(lk, dict) and lk.get("name") == name and f"{lk.get('a')}->{lk.get('b')}" in self.link_names:
                    return f"{lk['a']}->{lk['b']}"
        shown = self.link_names[:12]
        more = f", ... ({len(self.link_names) - 12} more)" if len(self.link_names) > 12 else ""
        raise KeyError(f"no link {name} in {self.dir}; give a link direction ({', '.join(shown)}{more}) "
                       f"or the name of a link in the scenario")

    def link(self, name: str) -> dict[str, Any]:
        name = self.resolve_link(name)
        for lk in self.summary["links"]:
            if lk["name"] == name:
                return lk
        raise KeyError(f"no link {name} in {self.dir / 'summary.json'}")

    @property
    def bottleneck(self) -> str | None:
        """summary["bottleneck"] if present, else the link with the highest utilization."""
        b = self.summary.get("bottleneck")
        if b:
            return b
        links = self.summary["links"]
        if not links:
            return None
        return max(links, key=lambda lk: lk.get("utilization") or 0.0)["name"]

    @property
    def sim_end_s(self) -> float:
        end = self.summary.get("sim_end_s")
        if end is None:
            end = self.tcp_all()["t_s"].max() if self.has_tcp else 0.0
        return float(end or 0.0)

    # ------------------------------------------------------------------ traces
    @property
    def has_tcp(self) -> bool:
        return self._tcp is not None or (not self._in_memory and (self.dir / "trace_tcp.parquet").is_file())

    @property
    def has_link(self) -> bool:
        return self._link is not None or (not self._in_memory and (self.dir / "trace_link.parquet").is_file())

    def _missing(self, what: str, fname: str):
        raise RunDirError(f"in-memory run has no {what} ({fname} would hold it)")

    def tcp_all(self) -> pl.DataFrame:
        if self._tcp is None:
            if self._in_memory:
                self._missing("TCP trace", "trace_tcp.parquet")
            self._tcp = _read_parquet(self.dir / "trace_tcp.parquet", "TCP trace", _TCP_COLS)
        return self._tcp

    def trace(self, conn: str | None = None, side: str | None = "snd") -> pl.DataFrame:
        """TCP trace rows of ``conn`` (all conns if None) on ``side`` ("snd", "rcv", None=both),
        in time order."""
        import polars as pl
        # Each graph of a report asks again for the same rows: filtered and sorted once (issue 13).
        memo = self.__dict__.setdefault("_trace_memo", {})
        if (conn, side) in memo:
            return memo[(conn, side)]
        if self._tcp is None and not self._in_memory and conn is not None and conn in self.conns:
            # One connection's rows, read alone (the whole table is read when it is needed).
            rows = self.__dict__.setdefault("_tcp_rows", {})
            if conn not in rows:
                rows[conn] = _read_parquet_rows(self.dir / "trace_tcp.parquet", "TCP trace", _TCP_COLS, "conn", conn)
            df = rows[conn]
        else:
            df = self.tcp_all()
        if conn is not None:
            if conn not in self.conns and df.filter(pl.col("conn") == conn).height == 0:
                raise KeyError(f"no connection {conn!r} in {self.dir}; flows: {self.conns}")
            df = df.filter(pl.col("conn") == conn)
        if side is not None:
            df = df.filter(pl.col("side") == side)
        memo[(conn, side)] = df = _time_sorted(df)
        return df

    def cam(self, conn: str | None = None) -> pl.DataFrame:
        """Vegas CAM rows (empty frame with the contract's columns if the file is absent)."""
        import polars as pl
        if self._cam is None:
            p = self.dir / "trace_cam.parquet"
            if p.is_file() and not self._in_memory:
                self._cam = _read_parquet(p, "Vegas CAM trace", _CAM_COLS)
            else:
                self._cam = pl.DataFrame(schema=_cam_schema())
        df = self._cam
        if conn is not None:
            df = df.filter(pl.col("conn") == conn)
        return df.sort("t_s", maintain_order=True)

    def link_events(self, link: str | None = None) -> pl.DataFrame:
        import polars as pl
        memo = self.__dict__.setdefault("_link_memo", {})
        if link in memo:
            return memo[link]
        if self._link is None and not self._in_memory and link is not None and link in self.link_names:
            # One link direction's rows, read alone (the whole table is read when it is needed).
            memo[link] = df = _time_sorted(_read_parquet_rows(self.dir / "trace_link.parquet", "link trace", _LINK_COLS,
                                                              "link", link))
            return df
        if self._link is None:
            if self._in_memory:
                self._missing("link trace", "trace_link.parquet")
            self._link = _read_parquet(self.dir / "trace_link.parquet", "link trace", _LINK_COLS)
        df = self._link
        key = link
        if link is not None:
            if link not in self.link_names and df.filter(pl.col("link") == link).height == 0:
                link = self.resolve_link(link)
            df = df.filter(pl.col("link") == link)
        memo[key] = df = _time_sorted(df)
        return df

    def aqm_average(self, link: str | None = None) -> pl.DataFrame:
        """An active queue manager's own average (RED's ``avg``) of ``link`` at the end of each
        monitor interval: columns t_s (interval start), aqm_avg_pkts. Empty for DropTail links
        or when the run directory has no queue_intervals.parquet."""
        import polars as pl
        link = link or self.bottleneck
        if self._intervals is None:
            p = self.dir / "queue_intervals.parquet"
            self._intervals = pl.read_parquet(p) if (p.is_file() and not self._in_memory) else pl.DataFrame()
        df = self._intervals
        if df.height == 0 or "aqm_avg_pkts" not in df.columns:
            return pl.DataFrame(schema={"t_s": pl.Float64, "aqm_avg_pkts": pl.Float64})
        return df.filter((pl.col("link") == link) & pl.col("aqm_avg_pkts").is_not_null()).select("t_s", "aqm_avg_pkts")

    def queue(self, link: str | None = None, interval: float | None = None) -> pl.DataFrame:
        """Queue length of ``link`` (default: the bottleneck).

        interval=None: the step function, columns t_s, qlen_pkts (length after each event).
        interval=x: per-interval statistics t_s (interval start), min_pkts, max_pkts,
        avg_pkts (time-weighted), for intervals covering [0, sim_end)."""
        link = link or self.bottleneck
        # The report draws the bottleneck's queue under every flow's graph: computed once.
        memo = self.__dict__.setdefault("_queue_memo", {})
        if (link, interval) in memo:
            return memo[(link, interval)]
        out = self._queue_from_monitor(link, interval) if interval is not None else None
        if out is not None:
            memo[(link, interval)] = out
            return out
        ev = self.link_events(link).select("t_s", "qlen_pkts")
        if interval is None:
            out = ev
        else:
            out = queue_intervals(ev["t_s"].to_numpy(), ev["qlen_pkts"].to_numpy(), interval,
                                  max(self.sim_end_s, float(ev["t_s"].max() or 0.0)))
        memo[(link, interval)] = out
        return out


    def _queue_from_monitor(self, link: str, interval: float) -> pl.DataFrame | None:
        """:meth:`queue` per ``interval`` from the link monitor's own interval series
        (queue_intervals.parquet: min, max and time-weighted average per monitor interval, the same
        statistics of the same step function) instead of the per-packet trace, which a 60 s run
        holds by the million (issue 28: a plot at interactive speed). Only when the answer is the
        same: ``interval`` a whole number of monitor intervals, the series complete from 0 and the
        run's end on an ``interval`` boundary; else None (the caller computes it from the trace)."""
        import polars as pl
        iv = self._intervals
        if iv is None and not self._in_memory:
            p = self.dir / "queue_intervals.parquet"
            try:
                iv = pl.read_parquet(p) if p.is_file() else None
            except Exception:  # unreadable: the trace path reports what it finds
                return None
            if iv is not None and {"link", "t_s"} <= set(iv.columns):
                self._intervals = iv
        need = {"link", "t_s", "min_pkts", "max_pkts", "avg_pkts"}
        if iv is None or iv.height == 0 or not need <= set(iv.columns):
            return None
        m = iv.filter(pl.col("link") == link)
        if m.height < 2 or m.select([pl.col(c).is_null().any() for c in need - {"link"}]).row(0) != (False,) * 4:
            return None
        got = _monitor_queue(m["t_s"].to_numpy(), m["min_pkts"].to_numpy(), m["max_pkts"].to_numpy(),
                             m["avg_pkts"].to_numpy(), interval, self.sim_end_s)
        return None if got is None else pl.DataFrame(got)

def _monitor_queue(t, mn, mx, av, interval: float, end: float) -> dict | None:
    """Queue statistics per ``interval`` from the link monitor's interval series (see
    :meth:`RunData._queue_from_monitor`); None unless the answer is the same as from the trace."""
    import math

    import numpy as np
    t = np.asarray(t, dtype=float)
    if len(t) < 2:
        return None
    step = float(t[1] - t[0])
    if not step > 0 or not np.allclose(t, np.arange(len(t)) * step, rtol=0, atol=1e-9 * max(1.0, t[-1])):
        return None
    k = round(interval / step)
    if k < 1 or abs(k * step - interval) > 1e-9 * interval or not end > 0:
        return None
    nb = max(1, math.ceil(end / interval - 1e-9))
    if abs(nb * interval - end) > 1e-9 * max(1.0, end) or len(t) != nb * k:
        return None
    shape = (nb, k)
    return {"t_s": np.arange(nb + 1)[:-1] * interval,
            "min_pkts": np.asarray(mn, dtype=float).reshape(shape).min(axis=1),
            "max_pkts": np.asarray(mx, dtype=float).reshape(shape).max(axis=1),
            "avg_pkts": np.asarray(av, dtype=float).reshape(shape).mean(axis=1)}


def _time_sorted(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` in time order (a stable sort on t_s); a frame already in order, as the core writes
    each connection's and each link's rows, is returned as it is without sorting."""
    if df.height < 2 or df["t_s"].is_sorted():
        return df
    return df.sort("t_s", maintain_order=True)


def queue_intervals(t, q, interval: float, end: float) -> pl.DataFrame:
    """Min/max/time-weighted-average of a step function (value q[i] from t[i] on, 0 before
    t[0]) over consecutive intervals [k*interval, (k+1)*interval) up to ``end``."""
    import polars as pl
    return pl.DataFrame(_queue_interval_arrays(t, q, interval, end))


def _queue_interval_arrays(t, q, interval: float, end: float) -> dict:
    """:func:`queue_intervals` as numpy columns."""
    import numpy as np

    if interval <= 0:
        raise ValueError("interval must be > 0")
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    nb = max(1, int(np.ceil(end / interval - 1e-9)))
    edges = np.arange(nb + 1) * interval
    # value in force at each bin start
    idx = np.searchsorted(t, edges[:-1], side="right") - 1
    start_val = np.where(idx >= 0, q[np.clip(idx, 0, None)] if len(q) else 0.0, 0.0)
    mn = start_val.copy()
    mx = start_val.copy()
    b = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, nb - 1)
    inside = t < edges[-1]
    if inside.any():
        np.minimum.at(mn, b[inside], q[inside])
        np.maximum.at(mx, b[inside], q[inside])
    # time-weighted average: integrate the step function
    bt = np.concatenate([t, edges])
    bv_idx = np.searchsorted(t, bt, side="right") - 1
    order = np.argsort(bt, kind="stable")
    bt = bt[order]
    vals = np.where(bv_idx[order] >= 0, q[np.clip(bv_idx[order], 0, None)] if len(q) else 0.0, 0.0)
    seg_dt = np.diff(bt)
    seg_area = vals[:-1] * seg_dt
    seg_bin = np.clip(np.searchsorted(edges, bt[:-1], side="right") - 1, 0, nb - 1)
    seg_area = np.where(bt[:-1] < edges[-1], seg_area, 0.0)
    area = np.zeros(nb)
    np.add.at(area, seg_bin, seg_area)
    return {"t_s": edges[:-1], "min_pkts": mn, "max_pkts": mx, "avg_pkts": area / interval}


def as_run(run: Any) -> Any:
    """A RunData from a path; anything else with the RunData attributes passes through."""
    if isinstance(run, (str, Path)):
        return RunData.load(run)
    if isinstance(run, RunData):
        return run
    if hasattr(run, "summary") and hasattr(run, "table") and not hasattr(run, "tcp_all"):
        # tcplab.api.Run (in memory): its raw tables have the run-directory columns
        tables = {}
        for name in ("tcp", "link", "cam"):
            try:
                tables[name] = run.table(name)
            except Exception:  # noqa: BLE001 - a table the core did not record
                tables[name] = None
        return RunData.from_tables(run.summary, tables, getattr(run, "scenario_text", None),
                                   getattr(run, "dir", None))
    if hasattr(run, "run_dir") and not hasattr(run, "tcp_all"):
        return RunData.load(run.run_dir)
    if hasattr(run, "dir") and not hasattr(run, "tcp_all"):
        return RunData.load(run.dir)
    return run
