"""RunData's numpy-column accessors: what the graphs read (issue 28), apart from
:mod:`tcplab.rundir` (whose RunData inherits them).

The graphs read the same rows as RunData's polars accessors, as numpy columns
(:class:`tcplab.cols.Cols`) read through the core, so a plot imports no polars and runs no query.
Each falls back to the polars accessor -- in-memory runs, names the summary does not list, a file
the core cannot read (polars then words the error) -- and converts its frame.
"""

from __future__ import annotations

from pathlib import Path



class _Rundir:
    """tcplab.rundir's names, looked up when used (rundir imports this module as it starts)."""

    def __getattr__(self, name: str):
        from . import rundir
        return getattr(rundir, name)


_rd = _Rundir()

# The columns the graphs draw (RunData.trace_cols, link_cols): what they read of a trace file, and check.
_TCP_GRAPH_COLS = ["conn", "side", "t_s", "kind", "snd_una", "cwnd", "ssthresh", "snd_wnd", "unacked", "srtt_s", "seq", "len"]
_LINK_GRAPH_COLS = ["t_s", "event", "bytes", "qlen_pkts"]
_TCP_GRAPH = tuple(_TCP_GRAPH_COLS[1:])


class ColumnAccess:
    """The ``*_cols`` accessors of :class:`tcplab.rundir.RunData`."""

    def _read_cols(self, fname: str, what: str, required: list[str], columns: list[str],
                   where: tuple[str, str] | None = None, check: bool = True, raw: bool = False,
                   strings: bool = True):
        """Rows of a trace file as :class:`~tcplab.cols.Cols`, checked as :func:`_read_parquet`
        checks them (tcplab.rundir._read_parquet); None when the core cannot read the file or the run is in memory.
        ``strings=False``: string columns as their codes (see :func:`tcplab.cols.read_parquet`)."""
        if self._in_memory:
            return None
        from .cols import read_parquet
        path = _rd._need(self.dir / fname, what)
        got = read_parquet(path, columns, where, strings=strings)
        if got is None:
            return None
        missing = [c for c in required if c not in got.names]
        if missing:
            raise _rd.RunDirError(f"{path}: missing column(s) {missing} ({what})")
        if check:
            _check_cols(got, path, _rd._numeric_columns(got.names, what))
        return got if raw else got.cols

    def trace_cols(self, conn: str | None = None, side: str | None = "snd", columns: tuple[str, ...] | None = None):
        """:meth:`trace` as numpy columns (see above): the columns the graphs draw, or at least
        ``columns`` when given (then a narrower read of every flow, see :meth:`every_flow_cols`, serves)."""
        memo = self.__dict__.setdefault("_cols_memo", {})
        key = ("tcp", conn, side, columns)
        if key in memo:
            return memo[key]
        out = None
        frames = self.__dict__.get("_trace_memo", {})
        if (conn, side) in frames:  # the frame is read already (the report's diagnosis): converted
            from .cols import Cols
            f = frames[(conn, side)]
            out = Cols.from_polars(f.drop("conn") if "conn" in f.columns else f)
        elif self._tcp is None and not self._in_memory and conn is not None and conn in self.conns:
            # One flow's rows read alone, unless every flow's were read in one pass (every_flow_cols).
            rows = None
            groups = memo.get(("tcp-all", _TCP_GRAPH))
            if groups is None and columns is not None:
                groups = next((g for k, g in memo.items() if isinstance(k, tuple) and k[0] == "tcp-all"
                               and g is not None and set(columns) <= set(k[1])), None)
            if groups is not None:
                rows = groups.get(conn, groups[None])
            else:
                if ("tcp-rows", conn) not in memo:
                    memo[("tcp-rows", conn)] = self._read_cols("trace_tcp.parquet", "TCP trace", _rd._TCP_COLS,
                                                               list(_TCP_GRAPH), ("conn", conn))
                rows = memo[("tcp-rows", conn)]
            if rows is not None:
                out = (rows if side is None else rows.where("side", side)).time_sorted()
        if out is None:
            from .cols import Cols
            out = Cols.from_polars(self.trace(conn, side))
        memo[key] = out
        return out

    def every_flow_cols(self, columns: tuple[str, ...] | None = None) -> None:
        """Read every flow's rows of the TCP trace in one pass for :meth:`trace_cols` (a graph of
        every flow, a report: one pass over the file, not one a flow): the columns the graphs
        draw, or only ``columns`` (then only ``trace_cols(..., columns=...)`` uses them)."""
        import numpy as np
        want = _TCP_GRAPH if columns is None else tuple(dict.fromkeys(("side", "t_s") + tuple(columns)))
        memo = self.__dict__.setdefault("_cols_memo", {})
        if ("tcp-all", want) in memo or ("tcp-all", _TCP_GRAPH) in memo:
            return
        frames = self.__dict__.get("_trace_memo", {})
        if all((c, "snd") in frames and (c, "rcv") in frames for c in self.conns):
            return  # every flow's frames are read already (see trace_cols)
        if self._tcp is None and not self._in_memory and self.has_tcp and len(self.conns) > 1:
            got = self._read_cols("trace_tcp.parquet", "TCP trace", _rd._TCP_COLS, ["conn", *want], raw=True)
            if got is None:
                memo[("tcp-all", want)] = None
                return
            codes, names = got.codes["conn"]
            cols = got.cols.select(*[c for c in got.cols.columns if c != "conn"])
            groups = cols.split(codes, len(names) + 1)  # the last: rows without a connection
            memo[("tcp-all", want)] = {**dict(zip(names, groups)), None: cols.take(np.zeros(0, dtype=np.int64))}

    def flow_rows(self) -> list[dict]:
        """``flows.to_dicts()`` (RunData.flows: one row per flow) without polars (see :func:`frame_rows`)."""
        got = frame_rows(self.summary["flows"])
        return got if got is not None else self.flows.to_dicts()

    def link_rows(self) -> list[dict]:
        """``links.to_dicts()`` (RunData.links: one row per link direction) without polars."""
        rows = self._link_rows()
        got = frame_rows(rows, fill_zero=sorted({k for r in rows for k in r if k.startswith("drops_")}))
        return got if got is not None else self.links.to_dicts()

    def link_cols(self, link: str | None = None, flow: str | None = None):
        """:meth:`link_events` of ``link`` as numpy columns (see above); with ``flow`` instead, the
        rows of every link whose packet belongs to that flow (none when the trace predates the
        ``flow`` column)."""
        from .cols import Cols
        memo = self.__dict__.setdefault("_cols_memo", {})
        key = ("link", link, flow)
        if key in memo:
            return memo[key]
        out = None
        if self._link is None and not self._in_memory:
            if flow is not None:
                out = self._read_cols("trace_link.parquet", "link trace", _rd._LINK_COLS, _LINK_GRAPH_COLS + ["link", "flow"],
                                      ("flow", flow))
            elif link is not None and link in self.link_names:
                out = self._read_cols("trace_link.parquet", "link trace", _rd._LINK_COLS, _LINK_GRAPH_COLS, ("link", link))
            if out is not None:
                out = out.time_sorted()
        if out is None:
            if flow is not None:
                import polars as pl
                ev = self.link_events()
                ev = ev.filter(pl.col("flow") == flow) if "flow" in ev.columns else ev.clear()
                out = Cols.from_polars(ev)
            else:
                out = Cols.from_polars(self.link_events(link))
        memo[key] = out
        return out

    def cam_cols(self, conn: str | None = None):
        """:meth:`cam` as numpy columns (see above)."""
        import numpy as np
        from .cols import Cols
        memo = self.__dict__.setdefault("_cols_memo", {})
        key = ("cam", conn)
        if key in memo:
            return memo[key]
        out = None
        p = self.dir / "trace_cam.parquet"
        if self._cam is None and not self._in_memory and conn is not None:
            if not p.is_file():
                out = Cols({c: np.zeros(0, dtype="<U1" if c == "conn" else float) for c in _rd._CAM_COLS if c != "conn"}, 0)
            else:
                out = self._read_cols("trace_cam.parquet", "Vegas CAM trace", _rd._CAM_COLS,
                                      [c for c in _rd._CAM_COLS if c != "conn"], ("conn", conn))
                if out is not None:
                    out = out.take(np.argsort(out["t_s"], kind="stable"))
        if out is None:
            out = Cols.from_polars(self.cam(conn))
        memo[key] = out
        return out

    def _interval_cols(self, link: str, columns: list[str]):
        """Rows of ``link`` in queue_intervals.parquet as numpy columns, unchecked (as
        :meth:`_queue_from_monitor` reads them); None without the file, or when the core cannot read it."""
        p = self.dir / "queue_intervals.parquet"
        if self._intervals is not None or self._in_memory or not p.is_file():
            return None
        from .cols import read_parquet
        got = read_parquet(p, columns, ("link", link))
        if got is None or not set(columns) <= set(got.names) | {"link"}:
            return None
        return got

    def queue_cols(self, link: str | None = None, interval: float | None = None):
        """:meth:`queue` as numpy columns (see above)."""
        from .cols import Cols
        link = link or self.bottleneck
        memo = self.__dict__.setdefault("_cols_memo", {})
        key = ("queue", link, interval)
        if key in memo:
            return memo[key]
        out = None
        if interval is not None:
            got = self._interval_cols(link, ["t_s", "min_pkts", "max_pkts", "avg_pkts"])
            if got is not None and not got.nulls:
                c = got.cols
                if c.height >= 2:
                    q = _rd._monitor_queue(c["t_s"], c["min_pkts"], c["max_pkts"], c["avg_pkts"], interval, self.sim_end_s)
                    out = None if q is None else Cols(q)
        if out is None and self._link is None and not self._in_memory and link in self.link_names \
                and (interval is None or self._interval_cols(link, ["t_s"]) is not None or
                     not (self.dir / "queue_intervals.parquet").is_file()):
            ev = self.link_cols(link)
            if interval is None:
                out = ev.select("t_s", "qlen_pkts")
            else:
                t = ev["t_s"]
                out = Cols(_rd._queue_interval_arrays(t, ev["qlen_pkts"], interval,
                                                  max(self.sim_end_s, float(t.max()) if len(t) else 0.0)))
        if out is None:
            out = Cols.from_polars(self.queue(link, interval))
        memo[key] = out
        return out

    def aqm_cols(self, link: str | None = None):
        """:meth:`aqm_average` as numpy columns (see above)."""
        import numpy as np
        from .cols import Cols
        link = link or self.bottleneck
        p = self.dir / "queue_intervals.parquet"
        if self._intervals is None and not self._in_memory and not p.is_file():
            return Cols({"t_s": np.zeros(0), "aqm_avg_pkts": np.zeros(0)}, 0)
        got = self._interval_cols(link, ["t_s", "aqm_avg_pkts"])
        if got is not None:
            if "aqm_avg_pkts" not in got.cols:
                return Cols({"t_s": np.zeros(0), "aqm_avg_pkts": np.zeros(0)}, 0)
            keep = ~got.nulls.get("aqm_avg_pkts", np.zeros(got.cols.height, dtype=bool))
            return got.cols.select("t_s", "aqm_avg_pkts").take(keep)
        return Cols.from_polars(self.aqm_average(link))


def frame_rows(rows: list[dict], fill_zero: list[str] = ()) -> list[dict] | None:
    """``pl.DataFrame(rows, infer_schema_length=None)`` (with ``fill_zero``'s nulls filled with 0)
    ``.to_dicts()`` for the summary's plain rows, without importing polars (issue 28: a report
    of a small run should not pay polars' import for two tables): every column of any row, in
    order of first appearance, missing values None, and a column's types made one as polars
    makes them (ints among floats become floats, also inside lists of numbers). None for
    anything else (a dict, a list of other values, mixed kinds): the caller asks polars."""
    if not rows:
        return []
    names = list(dict.fromkeys(k for r in rows for k in r))
    as_float = set()
    for k in names:
        types = {type(v) for r in rows if (v := r.get(k)) is not None}
        if types <= {int} or types in ({bool}, {str}):
            continue
        if types == {int, float} or types == {float}:
            as_float.add(k)
            continue
        if types == {list}:
            inner = {type(x) for r in rows if (v := r.get(k)) is not None for x in v}
            if inner <= {int}:
                continue
            if inner <= {int, float}:
                as_float.add(k)
                continue
        return None
    out = []
    for r in rows:
        d = {}
        for k in names:
            v = r.get(k)
            if v is None and k in fill_zero:
                v = 0
            if k in as_float and v is not None:
                v = [float(x) for x in v] if isinstance(v, list) else float(v)
            d[k] = v
        out.append(d)
    return out


def _check_cols(got, path: Path, nonneg: list[str]) -> None:
    """:func:`_check_values` on numpy columns (a :class:`tcplab.cols.ParquetRead`): the same
    columns, the same message naming the file's row."""
    import numpy as np
    for c in nonneg:
        if c not in got.cols:
            continue
        a = got.cols[c]
        if not len(a) or a.dtype.kind not in "fi":
            continue
        null = got.nulls.get(c)
        if null is not None and null.all():
            continue  # a column of nulls only has no numeric type in polars: not checked there either
        bad = a < 0
        if a.dtype.kind == "f":
            bad |= ~np.isfinite(a)
        if null is not None:
            bad |= null
        if bad.any():
            i = int(np.argmax(bad))
            v = None if null is not None and null[i] else a[i].item()
            raise _rd.RunDirError(f"{path}: column {c} row {int(got.rows[i])} holds {v!r}; trace values must be finite and non-negative")
