"""The Python API over the Rust core: scenarios built or loaded, runs, results as DataFrames."""

from __future__ import annotations

import copy
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import polars as pl
import tomli_w

from . import _core

PathLike = str | os.PathLike


def _toml_literal(value: Any) -> str:
    """A Python value as a TOML literal, for `--set`-style overrides."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_literal(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as a TOML value")


class Scenario:
    """A scenario, loaded from TOML or built in Python.

    >>> sc = Scenario(name="two-hosts", run={"duration": "10s"})
    >>> sc.add_node("a", "host").add_node("b", "host")
    >>> sc.add_link("a", "b", rate="10Mbps", delay="5ms", queue={"limit": "20pkts"})
    >>> sc.add_udp("u", "a", "b", pattern="cbr", rate="1Mbps", packet_size="1KB")
    """

    def __init__(self, name: str | None = None, run: Mapping[str, Any] | None = None, *, data: Mapping[str, Any] | None = None,
                 source: str = "<python>") -> None:
        self.data: dict[str, Any] = copy.deepcopy(dict(data)) if data is not None else {}
        if name is not None:
            self.data["name"] = name
        if run is not None:
            self.data["run"] = dict(run)
        self.data.setdefault("nodes", [])
        self.data.setdefault("links", [])
        self.source = source
        self._text: str | None = None

    @classmethod
    def load(cls, path: PathLike) -> "Scenario":
        p = Path(path)
        if p.is_dir():
            raise ValueError(f"{p}: is a directory, expected a scenario TOML file")
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{p}: not a TOML text file (invalid UTF-8 at byte {e.start})") from None
        return cls.from_toml(text, source=str(p))

    @classmethod
    def from_toml(cls, text: str, source: str = "<string>") -> "Scenario":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
        sc = cls(data=data, source=source)
        sc._text = text  # keep the original so errors point at its lines
        return sc

    # Builders --------------------------------------------------------------
    def add_node(self, name: str, kind: str = "host", **kw: Any) -> "Scenario":
        self._text = None
        self.data["nodes"].append({"name": name, "kind": kind, **kw})
        return self

    def add_link(self, a: str, b: str, *, rate: str, delay: str, **kw: Any) -> "Scenario":
        self._text = None
        self.data["links"].append({"a": a, "b": b, "rate": rate, "delay": delay, **kw})
        return self

    def add_udp(self, name: str, src: str, dst: str, **kw: Any) -> "Scenario":
        self._text = None
        self.data.setdefault("udp", []).append({"name": name, "from": src, "to": dst, **kw})
        return self

    def add_tcp(self, name: str, src: str, dst: str, *, variant: str, **kw: Any) -> "Scenario":
        self._text = None
        self.data.setdefault("tcp", []).append({"name": name, "from": src, "to": dst, "variant": variant, **kw})
        return self

    def to_toml(self) -> str:
        return self._text if self._text is not None else tomli_w.dumps(self.data)

    @property
    def name(self) -> str:
        return self.data.get("name") or Path(self.source).stem

    def validate(self, overrides: Mapping[str, Any] | Iterable[str] | None = None) -> None:
        _core.validate(self.to_toml(), self.source, _overrides(overrides))


def load(path: PathLike) -> Scenario:
    return Scenario.load(path)


def _overrides(overrides: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={_toml_literal(v)}" for k, v in overrides.items()]
    return [str(o) for o in overrides]


def validate(scenario: PathLike | Scenario, overrides: Mapping[str, Any] | Iterable[str] | None = None) -> None:
    """Check a scenario without running it; raises ScenarioError."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    sc.validate(overrides)


class Run:
    """A finished run: the summary and the traces, in memory."""

    def __init__(self, summary_json: str, scenario_text: str, traces: dict[str, dict[str, list]]):
        self.summary_json = summary_json
        self.summary: dict[str, Any] = json.loads(summary_json)
        self.scenario_text = scenario_text
        self._traces = traces
        self._data = None

    @property
    def data(self):
        """The run as a :class:`tcplab.rundir.RunData` (the same view a run directory gives)."""
        if self._data is None:
            from .rundir import RunData
            self._data = RunData.from_tables(self.summary, {k: self.table(k) for k in ("tcp", "link", "cam", "queue_intervals")},
                                             scenario_text=self.scenario_text)
        return self._data

    @property
    def flows(self) -> pl.DataFrame:
        return self.data.flows

    @property
    def links(self) -> pl.DataFrame:
        return self.data.links

    def table(self, name: str) -> pl.DataFrame:
        """Raw trace table: "tcp", "cam", "link" or "queue_intervals"."""
        return pl.DataFrame(self._traces[name])

    def trace(self, conn: str, side: str = "snd") -> pl.DataFrame:
        """TCP trace rows of one connection ("snd" or "rcv" side, None for both)."""
        return self.data.trace(conn, side=side)

    def queue(self, link: str | None = None, interval: float | None = None) -> pl.DataFrame:
        """Queue length of a traced link (default: the bottleneck): the step function, or
        min/max/average per `interval` seconds. The monitor's own per-interval series (every
        link, traced or not) is `run.table("queue_intervals")`."""
        return self.data.queue(link, interval)

    def save(self, out_dir: PathLike) -> Path:
        """Write summary.json, scenario.toml and the trace Parquet files."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(self.summary_json + "\n")
        (out / "scenario.toml").write_text(self.scenario_text)
        for name, fname in (("tcp", "trace_tcp.parquet"), ("cam", "trace_cam.parquet"), ("link", "trace_link.parquet"),
                            ("queue_intervals", "queue_intervals.parquet")):
            df = self.table(name)
            path = out / fname
            if df.height:
                df.write_parquet(path, statistics=False)
            elif path.exists():
                path.unlink()
        return out


def run(scenario: PathLike | Scenario, seed: int | None = None, overrides: Mapping[str, Any] | Iterable[str] | None = None,
        out: PathLike | None = None, progress: Callable[[float, float], None] | None = None) -> Run:
    """Run a scenario (a path or a Scenario) and return the Run; with `out`, also save it there.

    `progress(sim_time_s, end_s)` is called a few hundred times during the run. Ctrl-C stops
    the run with KeyboardInterrupt."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    res = _core.run(sc.to_toml(), sc.source, seed, _overrides(overrides), progress)
    r = Run(res["summary_json"], res["scenario_text"], res["traces"])
    if out is not None:
        r.save(out)
    return r
