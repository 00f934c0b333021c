"""The TOML text of a scenario built in Python: byte for byte the text ``tomli_w.dumps`` gives
(tomli-w 1.x, default options), about twice as fast (issue 13: writing the 4,096-flow
benchmark dumbbell takes 0.25 s of CPU in ``tomli_w``, 0.11-0.12 s here; it was a third of what
``tcplab.run()`` spent around the core). Its layout rules are tomli-w's: in each table, plain values first, then
sub-tables; a non-empty list of tables is written inline when every table fits an indented
line of 100 characters, else as ``[[name]]`` tables; lists are written one item per line.

What this writer does not handle itself (dates, times, decimals, keys that are not strings)
goes to ``tomli_w`` unchanged, so the two never differ. ``tests/test_tomltext.py`` compares them
on every scenario in the repository and on generated data.

Measured again for issue 23 (2026-11-27, loaded 2-core machine, best of 7): the 4,096-flow
dumbbell (1.9 MB of TOML) takes 0.20-0.22 s here and 0.41-0.43 s in ``tomli_w`` 1.x, the same
text; so this writer stays."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
# Characters a TOML basic string must escape: control characters but tab, DEL, quote, backslash.
_ESCAPED = re.compile(r'[\x00-\x08\x0a-\x1f\x7f"\\]')
_COMPACT = {"\b": "\\b", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_INDENT = "    "
_MAX_LINE = 100


class _Unsupported(Exception):
    """A value this writer leaves to tomli_w."""


def dumps(data: Mapping[str, Any]) -> str:
    """``tomli_w.dumps(data)``, the same text."""
    out: list[str] = []
    try:
        _table(data, {}, "", False, out)
    except _Unsupported:
        import tomli_w
        return tomli_w.dumps(data)
    return "".join(out)


def _escape(m: re.Match) -> str:
    c = m.group(0)
    return _COMPACT.get(c) or "\\u" + hex(ord(c))[2:].rjust(4, "0")


def _string(s: str) -> str:
    if _ESCAPED.search(s) is None:
        return '"' + s + '"'
    return '"' + _ESCAPED.sub(_escape, s) + '"'


_KEYS: dict[str, str] = {}  # key -> as written (a scenario repeats a few dozen keys)


def _key(k: Any) -> str:
    got = _KEYS.get(k) if type(k) is str else None
    if got is not None:
        return got
    if type(k) is not str:
        raise _Unsupported
    got = k if _BARE_KEY.match(k) else _string(k)
    if len(_KEYS) < 4096:
        _KEYS[k] = got
    return got


def _literal(v: Any, cache: dict[int, str], nest: int = 0) -> str:
    t = type(v)
    if t is str:
        return _string(v)
    if t is bool:
        return "true" if v else "false"
    if t is int or t is float:
        return str(v)
    if t is list or t is tuple:
        return _array(v, cache, nest)
    if t is dict or isinstance(v, Mapping):
        return _inline_table(v, cache)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)) and not _is_datetime(v):
        return str(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return _array(v, cache, nest)
    raise _Unsupported


def _is_datetime(v: Any) -> bool:
    import datetime
    return isinstance(v, (datetime.date, datetime.time))


def _inline_table(v: Mapping, cache: dict[int, str]) -> str:
    # tomli-w renders each table inline at most once (keyed by identity): a table met again is
    # written as it was the first time.
    got = cache.get(id(v))
    if got is not None:
        return got
    text = "{ " + ", ".join(_key(k) + " = " + _literal(x, cache) for k, x in v.items()) + " }" if v else "{}"
    cache[id(v)] = text
    return text


def _array(v: list | tuple, cache: dict[int, str], nest: int) -> str:
    if not v:
        return "[]"
    pad = _INDENT * (1 + nest)
    return "[\n" + ",\n".join(pad + _literal(x, cache, nest + 1) for x in v) + ",\n" + _INDENT * nest + "]"


def _is_table(v: Any) -> bool:
    return type(v) is dict or isinstance(v, Mapping)


def _fits_inline(t: Mapping, cache: dict[int, str]) -> bool:
    """tomli-w's test: the table written inline, indented and with a comma, fits 100 characters
    on one line. Rendering stops as soon as it cannot fit (the text is the same either way)."""
    got = cache.get(id(t))
    if got is not None:
        return len(_INDENT) + len(got) + 1 <= _MAX_LINE and "\n" not in got
    if not t:
        return True
    room = _MAX_LINE - len(_INDENT) - 1 - len("{  }")
    used = -2  # the first item has no ", " before it
    parts = []
    for k, x in t.items():
        part = _key(k) + " = " + _literal(x, cache)
        used += 2 + len(part)
        if used > room or "\n" in part:
            return False
        parts.append(part)
    cache[id(t)] = "{ " + ", ".join(parts) + " }"  # as _inline_table writes it, for the list written next
    return True


def _table(table: Mapping, cache: dict[int, str], name: str, in_array: bool, out: list[str]) -> None:
    written = False
    literals: list[tuple[Any, Any]] = []
    tables: list[tuple[Any, Any, bool]] = []
    for k, v in table.items():
        if _is_table(v):
            tables.append((k, v, False))
        elif (type(v) is list or type(v) is tuple or isinstance(v, (list, tuple))) and v and all(_is_table(t) for t in v) \
                and not all(_fits_inline(t, cache) for t in v):
            tables.extend((k, t, True) for t in v)
        else:
            literals.append((k, v))
    if in_array or name and (literals or not tables):
        written = True
        out.append(f"[[{name}]]\n" if in_array else f"[{name}]\n")
    if literals:
        written = True
        for k, v in literals:
            out.append(_key(k) + " = " + _literal(v, cache) + "\n")
    for k, v, sub_in_array in tables:
        if written:
            out.append("\n")
        else:
            written = True
        part = _key(k)
        _table(v, cache, f"{name}.{part}" if name else part, sub_in_array, out)
