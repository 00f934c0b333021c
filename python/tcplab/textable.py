"""Text tables, the one formatter behind every table tcplab prints: `tcplab run`'s summary,
`tcplab table`'s views (Markdown), `tcplab reproduce`'s paper-vs-ours table, the emulation's flow
table; and :class:`Columns` for tables printed row by row as results arrive (`tcplab bench`,
`tcplab trace`). (The HTML report writes HTML tables, in :mod:`tcplab.report`.)

Columns are as wide as their widest cell (or ``min_widths``); the first column is left-aligned,
the others right-aligned unless ``align`` says otherwise ("<" or ">" per column). Cells are
formatted by ``cell`` (default :func:`plain`: None as "-", floats with three decimals).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence


def plain(v: Any, nd: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, cell: Callable[[Any], str] = plain,
                 markdown: bool = False, align: Sequence[str] | None = None, min_widths: Sequence[int] | None = None,
                 indent: str = "", sep: str = "  ", header_align_left: bool = True) -> str:
    """The table as text, one line per row after the header and its rule.

    plain: columns joined by ``sep``, a rule of dashes under the header (one run per column);
    markdown (``| a | b |``, ``|---|---|``); ``header_align_left``: header cells all left-aligned
    (else aligned as their column). ``indent`` starts every line."""
    cells = [[str(h) for h in headers]] + [[c if isinstance(c, str) else cell(c) for c in r] for r in rows]
    n = len(headers)
    widths = [max(len(r[i]) for r in cells) for i in range(n)]
    if min_widths:
        widths = [max(w, m) for w, m in zip(widths, min_widths)]
    align = list(align) if align else ["<"] + [">"] * (n - 1)

    def line(r: list[str], header: bool) -> str:
        parts = [c.ljust(w) if a == "<" or (header and header_align_left) else c.rjust(w)
                 for c, w, a in zip(r, widths, align)]
        return indent + ("| " + " | ".join(parts) + " |" if markdown else sep.join(parts))

    out = [line(cells[0], True)]
    out.append(indent + ("|" + "|".join("-" * (w + 2) for w in widths) + "|" if markdown else sep.join("-" * w for w in widths)))
    out += [line(r, False) for r in cells[1:]]
    return "\n".join(out)


class Columns:
    """A table printed one row at a time, as results arrive (so widths are fixed up front).

    ``spec``: per column (header, width, format spec of its values, e.g. ``"7d"``, ``"6.1f"``, or
    ``""`` for text). Text columns are left-aligned, number columns right-aligned (as Python's
    ``format`` does); a value wider than its column widens that row only (never truncated)."""

    def __init__(self, spec: Sequence[tuple[str, int, str]], sep: str = " "):
        self.spec = list(spec)
        self.sep = sep

    def _join(self, cells: Sequence[str]) -> str:
        return self.sep.join(c.rjust(w) if f else c.ljust(w) for c, (_h, w, f) in zip(cells, self.spec))

    def header(self) -> str:
        return self._join([h for h, _w, _f in self.spec])

    def rule(self) -> str:
        return "-" * len(self.header())

    def row(self, *values: Any) -> str:
        if len(values) != len(self.spec):
            raise ValueError(f"{len(values)} values for {len(self.spec)} columns")
        return self._join([format(v, f) if f and v is not None else plain(v) for v, (_h, _w, f) in zip(values, self.spec)])
