"""The page around the graphs: cell formatting, HTML tables, the page with its stylesheet and
zoom script (package assets ``assets/report.css`` and ``assets/zoom.js``, read once) and the
atomic write."""

from __future__ import annotations

import html
import json
import math
import contextlib
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from functools import cache
from importlib.resources import files
from typing import Any, Mapping, Sequence


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return "—" if math.isnan(v) else str(v)
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-3):
            return f"{v:.3g}"
        if abs(v) >= 100:
            return f"{v:,.1f}"
        return f"{v:.4g}" if abs(v) < 1 else f"{v:.3f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(", ", ": "))
    return str(v)


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, cls: str = "",
           row_class=None) -> str:
    if not rows:
        return '<p class="note">(none)</p>'
    if columns is None:
        columns = []
        for r in rows:
            for k in r:
                if k not in columns:
                    columns.append(k)
    text_cols = {c for c in columns if all(isinstance(r.get(c), str) or r.get(c) is None for r in rows)}
    out = [f'<div class="tablewrap"><table class="{_e(cls)}"><thead><tr>']
    out += [f'<th class="{"s" if c in text_cols else ""}">{_e(c)}</th>' for c in columns]
    out.append("</tr></thead><tbody>")
    for r in rows:
        rc = row_class(r) if row_class else ""
        out.append(f'<tr class="{_e(rc)}">' if rc else "<tr>")
        out += [f'<td class="{"s" if c in text_cols else ""}">{_e(_fmt(r.get(c)))}</td>' for c in columns]
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


@cache
def asset(name: str) -> str:
    """The text of a file under report/assets/ (shipped in the wheel beside this module)."""
    return files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _page(title: str, body: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<link rel=\"icon\" href=\"data:,\">"
        f"<title>{_e(title)}</title><style>{asset('report.css')}</style></head><body>"
        f"<h1>{_e(title)}</h1><p class=\"meta\">written by tcplab {stamp}; click a graph to enlarge it, drag across it to zoom its time axis.</p>"
        f"{body}<script>{asset('zoom.js')}</script></body></html>\n"
    )


def _write(path: str | Path, text: str) -> Path:
    """Write atomically (temporary file, then rename), and only over a regular file: a device,
    FIFO, socket or directory at `path` is refused, never replaced. The file gets the mode any
    new file gets (0666 less the umask, 0644 typically), not mkstemp's private 0600."""
    from ..api import _umask
    from ..rundir import check_output_file
    p = Path(path)
    check_output_file(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmpname = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        check_output_file(p)
        os.replace(tmpname, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmpname)
        raise
    return p
