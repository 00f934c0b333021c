"""Text tables, the one formatter behind every table tcplab prints: `tcplab run`'s summary,
`tcplab table`'s views (Markdown) and `tcplab reproduce`'s paper-vs-ours table. (The HTML report
has its own, in :mod:`tcplab.report.page`.)

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
