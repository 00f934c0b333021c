"""A run's trace rows as numpy columns: what the graphs draw, read without polars (issue 28).

:class:`Cols` holds a few named numpy arrays of one length -- numbers as float64 or int64, strings
as numpy unicode arrays -- with the handful of operations the graphs use (a column, the rows of a
mask, the rows whose string column takes some values). :func:`read_parquet` fills one from a
run directory's Parquet file through the Rust core (``tcplab._core.read_parquet_columns``, the
``parquet`` crate the native binary writes these files with), or returns None when the core
cannot read the file (a build without the reader, an encoding it does not know, a file that is
no Parquet): the caller then reads it with polars, which also words the error. A polars frame
becomes one with :meth:`Cols.from_polars` (in-memory runs).

Only ``numpy`` is imported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np


class Cols:
    """Named numpy columns of one length (``height``), in the order given."""

    __slots__ = ("_c", "height")

    def __init__(self, columns: dict[str, np.ndarray], height: int | None = None):
        self._c = dict(columns)
        if height is None:
            height = len(next(iter(self._c.values()))) if self._c else 0
        self.height = int(height)

    @property
    def columns(self) -> list[str]:
        return list(self._c)

    def __getitem__(self, name: str) -> np.ndarray:
        return self._c[name]

    def __contains__(self, name: str) -> bool:
        return name in self._c

    def __len__(self) -> int:
        return self.height

    def __repr__(self) -> str:
        return f"Cols({self.height} rows: {', '.join(self._c)})"

    def take(self, rows: np.ndarray) -> "Cols":
        """The rows selected by a boolean mask or an index array, in that order."""
        rows = np.asarray(rows)
        n = int(rows.sum()) if rows.dtype == bool else len(rows)
        return Cols({k: v[rows] for k, v in self._c.items()}, n)

    def where(self, column: str, values: str | Iterable[str], keep: Iterable[str] | None = None) -> "Cols":
        """The rows whose (string) ``column`` is ``values`` (one, or any of several); only the
        columns ``keep`` when given (the others are not copied)."""
        col = self._c[column]
        mask = col == values if isinstance(values, str) else np.isin(col, list(values))
        return (self if keep is None else self.select(*keep)).take(mask)

    def split(self, codes: np.ndarray, n: int) -> list["Cols"]:
        """The rows of each code 0..n-1 of ``codes`` (one per row), in their order: one pass for
        all the groups instead of a comparison and a copy each."""
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(n + 1))
        return [self.take(order[bounds[k]:bounds[k + 1]]) for k in range(n)]

    def select(self, *names: str) -> "Cols":
        return Cols({k: self._c[k] for k in names}, self.height)

    @classmethod
    def from_polars(cls, df: Any) -> "Cols":
        """A polars frame's columns: numbers as float64/int64 (nulls as NaN), strings as numpy
        unicode (nulls as "")."""
        out = {}
        for name in df.columns:
            s = df[name]
            if s.dtype.is_numeric() or s.dtype.is_float():
                has_null = s.null_count() > 0
                a = s.to_numpy()
                if has_null or a.dtype.kind == "f":
                    a = a.astype(float, copy=False)
                elif a.dtype.kind in "iub":
                    a = a.astype(np.int64, copy=False)
                out[name] = a
            elif str(s.dtype) in ("String", "Utf8", "Categorical", "Enum"):
                if not len(s):
                    out[name] = np.zeros(0, dtype="<U1")
                    continue
                import polars as pl
                # through the distinct strings (a trace's kinds, sides, names: a few): half the
                # time of numpy's conversion of a Python string per row
                s = s.cast(pl.String).fill_null("")
                distinct = s.unique(maintain_order=True).to_list()
                codes = s.cast(pl.Enum(distinct)).to_physical().to_numpy()
                out[name] = np.asarray(distinct, dtype=str)[codes]
            else:
                out[name] = s.to_numpy()
        return cls(out, df.height)

    def is_sorted(self, column: str = "t_s") -> bool:
        t = self._c[column]
        return len(t) < 2 or bool(np.all(t[1:] >= t[:-1]))

    def time_sorted(self, column: str = "t_s") -> "Cols":
        """In time order (a stable sort on ``column``); itself when already in order."""
        if self.is_sorted(column):
            return self
        return self.take(np.argsort(self._c[column], kind="stable"))


class ParquetRead:
    """What :func:`read_parquet` read: the columns, the file's row number of each row, every
    column name of the file and which requested columns held a null (a boolean mask per column)."""

    __slots__ = ("cols", "rows", "names", "nulls", "codes")

    def __init__(self, cols: Cols, rows: np.ndarray, names: list[str], nulls: dict[str, np.ndarray],
                 codes: dict[str, tuple[np.ndarray, list[str]]]):
        self.cols, self.rows, self.names, self.nulls, self.codes = cols, rows, names, nulls, codes


def read_parquet(path: str | Path, columns: list[str], where: tuple[str, str] | None = None,
                 strings: bool = True) -> ParquetRead | None:
    """``columns`` of the Parquet file ``path`` (those it has), only the rows whose string column
    ``where[0]`` equals ``where[1]`` when given; None when the core cannot read it (see the module).
    With ``strings=False`` a string column is left as its codes (``codes``), not made a numpy
    unicode column too (a tenth of a second on a 500,000-row trace)."""
    try:
        from ._core import read_parquet_columns
    except ImportError:  # a core built before the reader
        return None
    try:
        if where is None:
            names, rows, got = read_parquet_columns(str(path), list(columns))
        else:
            names, rows, got = read_parquet_columns(str(path), list(columns), where[0], where[1])
    except (ValueError, OSError):
        return None
    except BaseException as e:  # noqa: BLE001 - a panic in the core arrives as pyo3's PanicException
        if type(e).__name__ != "PanicException":
            raise
        return None
    out: dict[str, np.ndarray] = {}
    nulls: dict[str, np.ndarray] = {}
    by_code: dict[str, tuple[np.ndarray, list[str]]] = {}
    for name, kind, data, null_bytes, cats in got:
        if kind == "str":
            codes = np.frombuffer(data, dtype=np.uint32)
            by_code[name] = (codes, list(cats))
            # a column of nulls only has no strings: code 0 is ""
            a = np.asarray(cats or [""], dtype=str)[codes] if strings else codes
        else:
            a = np.frombuffer(data, dtype=np.float64 if kind == "f8" else np.int64)
        if null_bytes is not None:
            m = np.frombuffer(null_bytes, dtype=np.uint8).astype(bool)
            nulls[name] = m
            if kind == "str":
                by_code[name] = (np.where(m, len(cats), codes), list(cats))  # a null: no string's code
                a = np.where(m, "", a) if strings else by_code[name][0]
            else:
                a = a.astype(float)
                a[m] = np.nan
        out[name] = a
    rows_a = np.frombuffer(rows, dtype=np.uint64).astype(np.int64)
    return ParquetRead(Cols(out, len(rows_a)), rows_a, list(names), nulls, by_code)
