"""A sweep file read and checked: its keys, seeds, axes and every run it implies (a
:class:`Task` per parameter point and seed, named by its content hash). Nothing runs here;
errors name the sweep file, line and field."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _toml_literal(value: Any) -> str:
    from ..api import _toml_literal as lit   # lazy: keeps `tcplab --help` free of polars
    return lit(value)


class SweepError(ValueError):
    """A sweep file that cannot be run; names the file, line and field."""

    def __init__(self, file: str, line: int | None, field: str, message: str):
        self.file, self.line, self.field, self.detail = file, line, field, message
        loc = f"{file}:{line}" if line else file
        super().__init__(f"{loc}: {field}: {message}")


def locate(text: str, key: str, section: str | None = None) -> int | None:
    """1-based line of `key` in TOML text (under `[section]` or inside `section = {...}` when
    given, else anywhere): the core's locator on toml_edit's exact spans. The key is one
    literal key ("tcp[0].variant" is a key, not a path). None when not found."""
    from .. import _core
    return _core.locate_key(text, key, section)


def code_version() -> str:
    """tcplab's version, source revision and a digest of the compiled core, so a rebuilt core
    never reuses stored results (the string `tcplab --version` prints: tcplab.buildinfo)."""
    from ..buildinfo import code_version as _code_version
    return _code_version()


def run_hash(scenario_text: str, seed: int, version: str) -> str:
    payload = json.dumps({"scenario": scenario_text, "seed": seed, "code": version}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


@dataclass
class Task:
    """One run: a parameter point and a seed. `overrides` are `--set` strings; `params` the axis
    values (for the store's columns)."""
    hash: str
    seed: int
    params: dict[str, Any]
    overrides: list[str]
    scenario_text: str
    scenario_file: str
    point: int = 0
    group: str = ""                 # free label (reproduce: the variant name)
    save: str = "all"
    buckets_s: float | None = None
    run_dir: str | None = None      # where the worker writes the run directory
    log: str | None = None          # executed-runs log (one line per executed run)
    session: str = ""
    version: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _seed_list(raw: Any, file: str, text: str) -> list[int] | None:
    if raw is None:
        return None
    line = locate(text, "seeds")
    if isinstance(raw, list):
        if not raw:
            raise SweepError(file, line, "seeds", "empty seed list")
        bad = [s for s in raw if isinstance(s, bool) or not isinstance(s, int) or s < 0]
        if bad:
            raise SweepError(file, line, "seeds", f"seeds must be non-negative integers, got {bad[0]!r}")
        if len(set(raw)) != len(raw):
            raise SweepError(file, line, "seeds", "a seed is listed twice")
        return list(raw)
    if isinstance(raw, dict):
        unknown = set(raw) - {"from", "count"}
        if unknown or "count" not in raw:
            raise SweepError(file, line, "seeds", 'expected seeds = [1, 2, 3] or seeds = { from = 1, count = 20 }')
        start, count = raw.get("from", 1), raw["count"]
        for k, v in (("from", start), ("count", count)):
            if isinstance(v, bool) or not isinstance(v, int) or v < (1 if k == "count" else 0):
                raise SweepError(file, line, f"seeds.{k}", f"expected a {'positive' if k == 'count' else 'non-negative'} integer, got {v!r}")
        return list(range(start, start + count))
    raise SweepError(file, line, "seeds", f"expected a list of integers or {{ from, count }}, got {raw!r}")


def _duration_s(v: Any, file: str, text: str, name: str) -> float:
    from ..units import parse_duration_s
    try:
        x = parse_duration_s(str(v))
    except ValueError as e:
        raise SweepError(file, locate(text, name), name, str(e)) from None
    if x <= 0:
        raise SweepError(file, locate(text, name), name, "must be positive")
    return x


def axis_points(axes: dict[str, list], mode: str) -> list[dict[str, Any]]:
    keys = list(axes)
    if not keys:
        return [{}]
    if mode == "zip":
        return [dict(zip(keys, vals)) for vals in zip(*(axes[k] for k in keys))]
    return [dict(zip(keys, vals)) for vals in itertools.product(*(axes[k] for k in keys))]


def check_axes(axes: Any, file: str, text: str, mode: str, section: str = "axes") -> dict[str, list]:
    if axes is None:
        return {}
    if not isinstance(axes, dict):
        raise SweepError(file, locate(text, section), section, "expected a table of KEY = [values]")
    for k, vals in axes.items():
        if not isinstance(vals, list):
            raise SweepError(file, locate(text, k, section), f'{section}."{k}"', f"expected a list of values, got {vals!r}")
        if not vals:
            raise SweepError(file, locate(text, k, section), f'{section}."{k}"', "empty axis: give at least one value")
    if mode == "zip" and len({len(v) for v in axes.values()}) > 1:
        lens = ", ".join(f'"{k}" has {len(v)}' for k, v in axes.items())
        raise SweepError(file, locate(text, "mode"), "mode", f'"zip" needs axes of equal length ({lens})')
    return axes


class Resolver:
    """Validates (base + overrides) with the Rust core and computes the run hash, caching the
    resolved text per parameter point. Errors from an axis or `set` key are relocated to the
    sweep/reproduce file's line."""

    def __init__(self, scenario_path: Path, file: str, text: str, version: str):
        from ..api import Scenario
        self.sc = Scenario.load(scenario_path)
        self.file, self.text, self.version = file, text, version
        self.cache: dict[tuple, str] = {}

    def resolve(self, overrides: dict[str, Any], where: dict[str, str]) -> str:
        """`where` maps each override key to the section it came from (for error locations)."""
        from .. import _core
        key = tuple(sorted((k, _toml_literal(v)) for k, v in overrides.items()))
        if key in self.cache:
            return self.cache[key]
        try:
            resolved = _core.validate(self.sc.to_toml(), self.sc.source, [f"{k}={_toml_literal(v)}" for k, v in overrides.items()])
        except _core.ScenarioError as e:
            # Find the key that is wrong on its own, so the error names it; keys that are only
            # valid together (a variant and its parameters) are checked as a whole.
            for k, v in overrides.items():
                try:
                    _core.validate(self.sc.to_toml(), self.sc.source, [f"{k}={_toml_literal(v)}"])
                except _core.ScenarioError as e1:
                    if getattr(e1, "field", None) != getattr(e, "field", None):
                        continue
                    sec = where.get(k, "axes")
                    raise SweepError(self.file, locate(self.text, k, sec), f'{sec}."{k}"',
                                     f"{getattr(e1, 'detail', e1)} (value {_toml_literal(v)}; scenario {self.sc.source})") from None
            combo = ", ".join(f"{k}={_toml_literal(v)}" for k, v in overrides.items())
            raise SweepError(self.file, None, getattr(e, "field", "") or "axes", f"{getattr(e, 'detail', e)} (with {combo})") from None
        self.cache[key] = resolved
        return resolved


@dataclass
class Sweep:
    file: str
    title: str
    scenario: Path
    flow: str | None
    seeds: list[int]
    mode: str
    fixed: dict[str, Any]
    axes: dict[str, list]
    buckets_s: float | None
    save: str
    tasks: list[Task] = field(default_factory=list)

    @property
    def name(self) -> str:
        return Path(self.file).stem


def load_sweep(path: str | os.PathLike, version: str | None = None) -> Sweep:
    """Parse and check a sweep file and every run it implies (no run starts here)."""
    p = Path(path)
    file = str(p)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such sweep file")
    text = p.read_text()
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        raise SweepError(file, int(m.group(1)) if m else None, "toml", str(e)) from None
    known = {"title", "scenario", "flow", "seeds", "mode", "buckets", "save", "set", "axes"}
    for k in spec:
        if k not in known:
            raise SweepError(file, locate(text, k), k, f"unknown key; expected one of {', '.join(sorted(known))}")
    if "scenario" not in spec or not isinstance(spec["scenario"], str):
        raise SweepError(file, locate(text, "scenario"), "scenario", "missing: the base scenario file (relative to the sweep file)")
    scenario = (p.parent / spec["scenario"]).resolve() if not Path(spec["scenario"]).is_absolute() else Path(spec["scenario"])
    if not scenario.is_file():
        raise SweepError(file, locate(text, "scenario"), "scenario", f"{spec['scenario']}: no such file ({scenario})")
    mode = spec.get("mode", "grid")
    if mode not in ("grid", "zip"):
        raise SweepError(file, locate(text, "mode"), "mode", f'expected "grid" or "zip", got {mode!r}')
    save = spec.get("save", "all")
    if save not in ("all", "summary", "none"):
        raise SweepError(file, locate(text, "save"), "save", f'expected "all", "summary" or "none", got {save!r}')
    fixed = spec.get("set", {})
    if not isinstance(fixed, dict):
        raise SweepError(file, locate(text, "set"), "set", "expected a table of KEY = value")
    axes = check_axes(spec.get("axes"), file, text, mode)
    overlap = set(fixed) & set(axes)
    if overlap:
        k = sorted(overlap)[0]
        raise SweepError(file, locate(text, k, "axes"), f'axes."{k}"', "also given in [set]")
    seeds = _seed_list(spec.get("seeds"), file, text)
    buckets = _duration_s(spec["buckets"], file, text, "buckets") if "buckets" in spec else None
    sw = Sweep(file=file, title=spec.get("title", p.stem), scenario=scenario, flow=spec.get("flow"),
               seeds=seeds or [], mode=mode, fixed=fixed, axes=axes, buckets_s=buckets, save=save)
    version = version or code_version()
    res = Resolver(scenario, file, text, version)
    if not sw.seeds:
        base_seed = tomllib.loads(res.sc.to_toml()).get("run", {}).get("seed", 1)
        sw.seeds = [base_seed]
    where = {k: "set" for k in fixed} | {k: "axes" for k in axes}
    seen = set()
    for i, point in enumerate(axis_points(axes, mode)):
        ov = {**fixed, **point}
        resolved = res.resolve(ov, where)
        for s in sw.seeds:
            h = run_hash(resolved, s, version)
            if h in seen:
                continue
            seen.add(h)
            sw.tasks.append(Task(hash=h, seed=s, params=point, overrides=[f"{k}={_toml_literal(v)}" for k, v in ov.items()],
                                 scenario_text=res.sc.to_toml(), scenario_file=res.sc.source, point=i, save=save,
                                 buckets_s=buckets, version=version))
    return sw
