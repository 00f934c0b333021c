"""Metric names, derived per-run metrics and claims: the small languages of reproduce.toml and
`tcplab table --metrics`.

Metric names (resolved against one run's summary.json):

* a plain name: a field of the distinguished flow (``throughput_KBps``), else a top-level scalar
  of summary.json (``sim_end_s``, ``events``), else a derived metric of the reproduction;
* a dotted path ``<section>.<element name>.<field>``: ``<section>`` is a list of dicts that
  have a ``"name"`` (``flows``, ``links``, ``udp``, ``traffic``, ...), ``<element name>`` the
  element whose ``name`` equals it (it may itself contain dots or ``->``: the field is the text
  after the last dot), e.g. ``links.Gateway1->Gateway2.drops``; a dict section descends by key
  (``packets.dropped``). ``<section>.*.<field>`` is the list over every element (for the
  aggregate functions of derived metrics).

Derived per-run metrics (``[derived] name = "expression"``) and claims (``[[claims]] expr``) are
expressions parsed with Python's :mod:`ast` and evaluated by a whitelist: numbers, strings (as
function arguments), ``+ - * /``, comparisons, ``and``/``or``/``not`` and the functions below.
Nothing else (no names, attributes, subscripts or other calls) is accepted.

Per run (derived): ``value(path)``, ``jain(path)`` (Jain's fairness index, seed 000 §5.3.1),
``sum(path)``, ``mean(path)``, ``min(path)``, ``max(path)``, ``count(path)`` where ``path`` is a
metric name, usually with ``*``.

Across runs (claims): ``mean(variant, metric)``, ``std``, ``min``, ``max``, ``median``, ``n``;
``ratio(a, b, metric)`` = mean(a) / mean(b); ``all_runs(a, b, metric, op)``: true when op
(``"<"``, ``"<="``, ``">"``, ``">="``, ``"=="``, ``"!="``) holds between a's and b's values on
every paired run (same axis point and seed).
"""

from __future__ import annotations

import ast
import math
import operator
import statistics
from typing import Any, Callable, Mapping


class MetricError(ValueError):
    pass


def _jain(values):
    from .analysis import jain_index  # lazy: tcplab.analysis is only needed for statistics
    return jain_index(values)


def resolve(summary: Mapping[str, Any], path: str, flow: str | None = None,
            derived: Mapping[str, Any] | None = None) -> Any:
    """The value of metric `path` in one run's summary (a list for `*` paths). Raises
    MetricError naming what was not found."""
    if derived and path in derived:
        return derived[path]
    if "." not in path:
        flows = summary.get("flows") or []
        f = next((x for x in flows if x.get("name") == flow), None) if flow else (flows[0] if flows else None)
        if f is not None and path in f:
            return f[path]
        if path in summary and not isinstance(summary[path], (list, dict)):
            return summary[path]
        where = f"flow {f['name']!r}" if f is not None else "any flow"
        raise MetricError(f"unknown metric {path!r}: not a field of {where}, a top-level summary scalar or a derived metric")
    section, rest = path.split(".", 1)
    if section not in summary:
        raise MetricError(f"unknown metric {path!r}: summary.json has no section {section!r}")
    sec = summary[section]
    if isinstance(sec, dict):
        return resolve(sec, rest) if "." in rest else _field(sec, rest, path)
    if isinstance(sec, list):
        if "." not in rest:
            raise MetricError(f"metric {path!r}: expected {section}.<name>.<field>")
        name, fld = rest.rsplit(".", 1)
        if name == "*":
            return [_field(e, fld, path) for e in sec if isinstance(e, dict)]
        for e in sec:
            if isinstance(e, dict) and e.get("name") == name:
                return _field(e, fld, path)
        # A field nested in dicts: links.<name>.aqm.classes.l4s.sojourn_p99_s
        for e in sec:
            if isinstance(e, dict) and isinstance(e.get("name"), str) and rest.startswith(e["name"] + "."):
                keys = rest[len(e["name"]) + 1:].split(".")
                if keys[0] in e and isinstance(e[keys[0]], dict):
                    v = e
                    for i, k in enumerate(keys):
                        if not isinstance(v, dict) or k not in v:
                            raise MetricError(f"unknown metric {path!r}: no field {'.'.join(keys[:i + 1])!r} in {section} {e['name']!r}")
                        v = v[k]
                    return v
        names = ", ".join(str(e.get("name")) for e in sec if isinstance(e, dict))
        raise MetricError(f"unknown metric {path!r}: no {section} element named {name!r} (have: {names or 'none'})")
    raise MetricError(f"unknown metric {path!r}: {section!r} is a scalar")


def _field(d: Mapping[str, Any], fld: str, path: str) -> Any:
    if fld not in d:
        raise MetricError(f"unknown metric {path!r}: no field {fld!r} (have: {', '.join(sorted(d))})")
    return d[fld]


# The expression language ------------------------------------------------------------------------

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Eq: operator.eq, ast.NotEq: operator.ne}
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


class ExprError(ValueError):
    pass


def parse(expr: str) -> ast.Expression:
    """Parse and check an expression against the whitelist (function names are checked when it
    is evaluated against its function table, see :func:`check`)."""
    if not isinstance(expr, str) or not expr.strip():
        raise ExprError("empty expression")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        raise ExprError(f"syntax error at column {e.offset}: {e.msg}") from None
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd,
                               ast.Not, ast.Compare, ast.Call, ast.Constant, ast.Load, ast.Name)) \
            or type(node) in _BIN or type(node) in _CMP
        if not ok:
            raise ExprError(f"not allowed in an expression: {type(node).__name__} ({ast.unparse(node) if hasattr(node, 'lineno') else ''})")
        if isinstance(node, ast.Name) and not _is_func_name(tree, node):
            raise ExprError(f"unknown name {node.id!r}: write metric and variant names as quoted strings")
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name) or node.keywords):
            raise ExprError(f"not allowed: {ast.unparse(node)} (only plain calls like mean('variant', 'metric'))")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str)) or \
                isinstance(node, ast.Constant) and isinstance(node.value, bool):
            raise ExprError(f"constant {node.value!r} not allowed")
    return tree


def _is_func_name(tree, name: ast.Name) -> bool:
    return any(isinstance(n, ast.Call) and n.func is name for n in ast.walk(tree))


def evaluate(tree: ast.Expression, funcs: Mapping[str, Callable]) -> Any:
    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            _num(a, n.left), _num(b, n.right)
            if isinstance(n.op, ast.Div) and b == 0:
                raise ExprError(f"division by zero in {ast.unparse(n)}")
            return _BIN[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            if isinstance(n.op, ast.Not):
                return not v
            _num(v, n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BoolOp):
            vals = [ev(v) for v in n.values]
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.Compare):
            left = ev(n.left)
            for op, right_n in zip(n.ops, n.comparators):
                right = ev(right_n)
                _num(left, n.left), _num(right, right_n)
                if not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(n, ast.Call):
            f = funcs.get(n.func.id)
            if f is None:
                raise ExprError(f"unknown function {n.func.id!r}; expected one of {', '.join(sorted(funcs))}")
            args = [ev(a) for a in n.args]
            return f(*args)
        raise ExprError(f"not allowed: {ast.unparse(n)}")

    return ev(tree)


def _num(v, node) -> None:
    if v is None or isinstance(v, str) or isinstance(v, list):
        raise ExprError(f"{ast.unparse(node)} is not a number ({v!r})")


def check_calls(tree: ast.Expression, funcs: Mapping[str, Callable], arity: Mapping[str, tuple[int, int]]) -> list[ast.Call]:
    """Every call names a known function with an allowed number of arguments; returns the calls."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    for c in calls:
        if c.func.id not in funcs:
            raise ExprError(f"unknown function {c.func.id!r}; expected one of {', '.join(sorted(funcs))}")
        lo, hi = arity[c.func.id]
        if not lo <= len(c.args) <= hi:
            raise ExprError(f"{c.func.id}() takes {lo if lo == hi else f'{lo} to {hi}'} arguments, got {len(c.args)}: {ast.unparse(c)}")
    return calls


# Derived per-run metrics -------------------------------------------------------------------------

def _values(v) -> list[float]:
    vals = v if isinstance(v, list) else [v]
    return [float(x) for x in vals if x is not None]


DERIVED_ARITY = {"value": (1, 1), "jain": (1, 1), "sum": (1, 1), "mean": (1, 1), "min": (1, 1), "max": (1, 1), "count": (1, 1)}


def derived_funcs(summary: Mapping[str, Any], flow: str | None, done: Mapping[str, Any]) -> dict[str, Callable]:
    def get(path):
        if not isinstance(path, str):
            raise ExprError(f"expected a quoted metric path, got {path!r}")
        try:
            return resolve(summary, path, flow, done)
        except MetricError as e:
            raise ExprError(str(e)) from None

    return {
        "value": get,
        "jain": lambda p: _jain(_values(get(p))),
        "sum": lambda p: math.fsum(_values(get(p))),
        "mean": lambda p: statistics.fmean(_values(get(p))) if _values(get(p)) else None,
        "min": lambda p: min(_values(get(p)), default=None),
        "max": lambda p: max(_values(get(p)), default=None),
        "count": lambda p: len(_values(get(p))),
    }


def compute_derived(derived: Mapping[str, ast.Expression], summary: Mapping[str, Any], flow: str | None) -> dict[str, Any]:
    """Derived metrics of one run, in the order given (a later one may use an earlier one)."""
    done: dict[str, Any] = {}
    for name, tree in derived.items():
        done[name] = evaluate(tree, derived_funcs(summary, flow, done))
    return done


# Claims over variants -----------------------------------------------------------------------------

CLAIM_ARITY = {"mean": (2, 2), "std": (2, 2), "min": (2, 2), "max": (2, 2), "median": (2, 2), "n": (2, 2),
               "ratio": (3, 3), "all_runs": (4, 4)}


def claim_funcs(values: Callable[[str, str], list[tuple[Any, Any]]], record: dict) -> dict[str, Callable]:
    """`values(variant, metric)` returns [(pairing key, value)] of every run of the variant.
    `record` collects each call's value for the report."""

    def stat(kind):
        def f(variant, metric):
            from .analysis import describe  # numpy: loaded only when a table is summarised
            d = describe(v for _, v in values(variant, metric))
            v = {"mean": d["mean"], "std": d["std"], "min": d["min"], "max": d["max"], "median": d["median"], "n": d["n"]}[kind]
            if v is None:
                raise ExprError(f"{kind}({variant!r}, {metric!r}) is undefined (values: {[x for _, x in values(variant, metric)]})")
            record[f"{kind}({variant!r}, {metric!r})"] = v
            return v
        return f

    def ratio(a, b, metric):
        ma, mb = stat("mean")(a, metric), stat("mean")(b, metric)
        if mb == 0:
            raise ExprError(f"ratio({a!r}, {b!r}, {metric!r}): mean of {b!r} is 0")
        record[f"ratio({a!r}, {b!r}, {metric!r})"] = ma / mb
        return ma / mb

    def all_runs(a, b, metric, op):
        if op not in OPS:
            raise ExprError(f"all_runs: op must be one of {', '.join(OPS)}, got {op!r}")
        va, vb = dict(values(a, metric)), dict(values(b, metric))
        keys = sorted(set(va) & set(vb), key=str)
        if not keys:
            raise ExprError(f"all_runs({a!r}, {b!r}, ...): the variants have no paired runs (same axis point and seed)")
        held = [k for k in keys if va[k] is not None and vb[k] is not None and OPS[op](va[k], vb[k])]
        record[f"all_runs({a!r}, {b!r}, {metric!r}, {op!r})"] = f"{len(held)}/{len(keys)} runs"
        return len(held) == len(keys)

    return {"mean": stat("mean"), "std": stat("std"), "min": stat("min"), "max": stat("max"), "median": stat("median"),
            "n": stat("n"), "ratio": ratio, "all_runs": all_runs}


def claim_references(tree: ast.Expression) -> list[tuple[str, list[Any]]]:
    """(function, constant args) of every call, for checking variant names before any run."""
    out = []
    for c in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        out.append((c.func.id, [a.value if isinstance(a, ast.Constant) else None for a in c.args]))
    return out
