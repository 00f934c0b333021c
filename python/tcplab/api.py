"""The Python API over the Rust core: scenarios built or loaded, runs, results as DataFrames."""

from __future__ import annotations

import copy
import errno
import json
import os
import shutil
import tempfile
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

if TYPE_CHECKING:  # polars is imported where a DataFrame is made (keeps `import tcplab` quick)
    import polars as pl

from . import _core, tomltext

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
        self._data: dict[str, Any] | None = copy.deepcopy(dict(data)) if data is not None else {}
        if name is not None:
            self._data["name"] = name
        if run is not None:
            self._data["run"] = dict(run)
        self._data.setdefault("nodes", [])
        self._data.setdefault("links", [])
        self.source = source
        self._text: str | None = None

    @property
    def data(self) -> dict[str, Any]:
        """The scenario as Python data. A scenario loaded from TOML is parsed here, on first use:
        running it needs only its text (the core parses that), and Python's TOML parser takes
        seconds on a file of 10^4 flows (issue 13)."""
        if self._data is None:
            try:
                data = tomllib.loads(self._text or "")
            except (tomllib.TOMLDecodeError, RecursionError):
                # The Rust parser reports the error with its line when the scenario is used; a
                # deeply nested value exhausts Python's recursion limit but not the core's.
                data = {}
            data.setdefault("nodes", [])
            data.setdefault("links", [])
            self._data = data
        return self._data

    @data.setter
    def data(self, value: dict[str, Any]) -> None:
        self._data = value

    @classmethod
    def load(cls, path: PathLike) -> "Scenario":
        p = Path(path)
        if p.is_dir():
            raise ValueError(f"{p}: is a directory, expected a scenario TOML file")
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw[:e.start].count(b"\n") + 1
            raise ValueError(f"{p}:{line}: not a TOML text file (invalid UTF-8 at byte {e.start})") from None
        return cls.from_toml(text, source=str(p))

    @classmethod
    def from_toml(cls, text: str, source: str = "<string>") -> "Scenario":
        sc = cls(source=source)
        sc._data = None  # parsed from the text when `data` is first used
        sc._text = text  # keep the original so errors point at its lines
        return sc

    # Builders --------------------------------------------------------------
    def add_node(self, name: str, kind: str = "host", **kw: Any) -> "Scenario":
        data = self.data  # parse a loaded text before forgetting it
        self._text = None
        data["nodes"].append({"name": name, "kind": kind, **kw})
        return self

    def add_link(self, a: str, b: str, *, rate: str, delay: str, **kw: Any) -> "Scenario":
        data = self.data  # parse a loaded text before forgetting it
        self._text = None
        data["links"].append({"a": a, "b": b, "rate": rate, "delay": delay, **kw})
        return self

    def add_lan(self, name: str, nodes: list[str], **kw: Any) -> "Scenario":
        """A shared medium (`[[lan]]`, docs/ethernet.md): 10 Mbit/s Ethernet unless `kw` says otherwise.

        `[[medium]]` is another name of the table: a scenario loaded with `[[medium]]` tables
        gets the new one among them (one file uses one of the two names)."""
        data = self.data  # parse a loaded text before forgetting it
        self._text = None
        key = "medium" if "medium" in data and "lan" not in data else "lan"
        data.setdefault(key, []).append({"name": name, "nodes": list(nodes), **kw})
        return self

    add_medium = add_lan

    def add_udp(self, name: str, src: str, dst: str, **kw: Any) -> "Scenario":
        data = self.data  # parse a loaded text before forgetting it
        self._text = None
        data.setdefault("udp", []).append({"name": name, "from": src, "to": dst, **kw})
        return self

    def add_tcp(self, name: str, src: str, dst: str, *, variant: str, **kw: Any) -> "Scenario":
        data = self.data  # parse a loaded text before forgetting it
        self._text = None
        data.setdefault("tcp", []).append({"name": name, "from": src, "to": dst, "variant": variant, **kw})
        return self

    def add_route(self, at: str, to: str, via: str) -> "Scenario":
        """Explicit route: at node `at`, packets for `to` leave by the link to `via`."""
        data = self.data  # parse a loaded text before forgetting it
        self._text = None
        data.setdefault("routes", []).append({"at": at, "to": to, "via": via})
        return self

    def to_toml(self) -> str:
        # tomli_w's text, written by tcplab's own faster writer (tomltext: same bytes).
        return self._text if self._text is not None else tomltext.dumps(self.data)

    @property
    def name(self) -> str:
        return self.data.get("name") or Path(self.source).stem

    def validate(self, overrides: Mapping[str, Any] | Iterable[str] | None = None, max_memory: int | None = None) -> None:
        _core.validate(self.to_toml(), self.source, _overrides(overrides), max_memory)


def load(path: PathLike) -> Scenario:
    return Scenario.load(path)


def _overrides(overrides: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={_toml_literal(v)}" for k, v in overrides.items()]
    return [str(o) for o in overrides]


def validate(scenario: PathLike | Scenario, overrides: Mapping[str, Any] | Iterable[str] | None = None,
             max_memory: int | None = None) -> None:
    """Check a scenario without running it (and its memory estimate against `max_memory` bytes);
    raises ScenarioError."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    sc.validate(overrides, max_memory)


def expand(scenario: PathLike | Scenario, overrides: Mapping[str, Any] | Iterable[str] | None = None) -> str:
    """The scenario as it runs: templates (`count`, `[defaults.*]`, `[topology]`) written out
    as plain entries, after overrides (`tcplab expand`)."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    return _core.expand(sc.to_toml(), sc.source, _overrides(overrides))


def estimate_memory(scenario: PathLike | Scenario, overrides: Mapping[str, Any] | Iterable[str] | None = None) -> int:
    """Estimated memory of a run, in bytes, from the scenario alone (nothing is built)."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    return _core.estimate_memory(sc.to_toml(), sc.source, _overrides(overrides))


class RunLimitError(ValueError):
    """A run stopped by a resource guard (`timeout`, `max_memory`); nothing was saved."""


class OutputError(ValueError):
    """An output path tcplab refuses to write (a device, a directory it did not make, ...)."""


# Files a run directory may hold that tcplab wrote (the run's own, then report/plot output).
_RUN_FILES = {"summary.json", "scenario.toml", "trace_tcp.parquet", "trace_cam.parquet", "trace_link.parquet",
              "queue_intervals.parquet", "COMPLETE.json", "report.html", "plots"}


def _check_replaceable(out: Path) -> None:
    """`out` may be created, or replaced if it is a run directory tcplab made (it has the
    completion marker, or only files a run writes, or nothing at all)."""
    if not os.path.lexists(out):
        return
    if out.is_symlink() or not out.is_dir():
        raise OutputError(f"{out}: exists and is not a directory; refusing to replace it with a run directory")
    names = {p.name for p in out.iterdir()}
    names = {n for n in names if not (n.startswith("pcap_") and n.endswith(".pcap"))}
    if names and "COMPLETE.json" not in names and not names <= _RUN_FILES:
        raise OutputError(f"{out}: exists and is not a tcplab run directory ({len(names)} other entries); "
                          "refusing to replace it (choose another --out or remove it)")


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directory entries (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    r = fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE)
    if r == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL):
        return False
    raise OSError(err, os.strerror(err), str(b))


class Run:
    """A finished run: the summary and the traces, in memory."""

    def __init__(self, summary_json: str | None, scenario_text: str, traces: dict[str, dict[str, list]], *,
                 core_summary: Any = None):
        # A run from the core hands over its summary as `core_summary` (tcplab._core.RunSummary):
        # the dicts, the JSON text and summary.json are made from it only when asked for, so a
        # 4,096-flow run's 20 MB summary is neither a text in memory nor parsed (issue 13).
        if summary_json is None and core_summary is None:
            raise ValueError("Run: give summary_json or core_summary")
        self._summary_json = summary_json
        self._summary: dict[str, Any] | None = None
        self._core_summary = core_summary
        self.scenario_text = scenario_text
        self._traces = traces
        self._data = None

    @property
    def summary(self) -> dict[str, Any]:
        """summary.json's content as dicts and lists."""
        if self._summary is None:
            if self._core_summary is not None:
                self._summary = self._core_summary.to_python()
            else:
                self._summary = json.loads(self._summary_json)
        return self._summary

    @summary.setter
    def summary(self, value: dict[str, Any]) -> None:
        self._summary = value

    @property
    def summary_json(self) -> str:
        """summary.json's text (without its final newline)."""
        if self._summary_json is None:
            self._summary_json = self._core_summary.to_json()
        return self._summary_json

    def _write_summary(self, path: Path) -> None:
        if self._core_summary is not None:
            self._core_summary.write_json(path)  # streamed from the core, the same bytes
        else:
            path.write_text(self.summary_json + "\n")

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

    @property
    def traffic(self) -> pl.DataFrame:
        return self.data.traffic

    @property
    def pcaps(self) -> dict[str, bytes]:
        """The classic pcap file of every link direction in `run.trace.pcap`, by direction name."""
        return dict(self._traces.get("pcap") or {})

    def table(self, name: str) -> pl.DataFrame:
        """Raw trace table: "tcp", "cam", "link" or "queue_intervals"."""
        import polars as pl
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
        """Write the run directory: summary.json, scenario.toml, the trace Parquet files and the
        completion marker COMPLETE.json (files, sizes, SHA-256), all into a temporary directory
        beside `out_dir` that replaces it in one rename as the last step. Until then a previous
        run directory there stays as it was; a crash leaves at most a hidden `.NAME.tmp-*`."""
        import polars as pl

        from .rundir import seal
        out = Path(out_dir)
        _check_replaceable(out)
        parent = out.absolute().parent
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
        try:
            self._write_summary(tmp / "summary.json")
            (tmp / "scenario.toml").write_text(self.scenario_text)
            names = ["summary.json", "scenario.toml"]
            for name, fname in (("tcp", "trace_tcp.parquet"), ("cam", "trace_cam.parquet"), ("link", "trace_link.parquet"),
                                ("queue_intervals", "queue_intervals.parquet")):
                df = self.table(name)
                if df.height:
                    try:
                        df.write_parquet(tmp / fname, statistics=False)
                    except pl.exceptions.PolarsError as e:  # e.g. a full disk
                        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                        raise OSError(f"{out / fname}: cannot write: {msg}") from None
                    names.append(fname)
            for link, data in sorted(self.pcaps.items()):
                fname = pcap_file_name(link)
                (tmp / fname).write_bytes(data)
                names.append(fname)
            seal(tmp, names)
            os.chmod(tmp, 0o755 & ~_umask())
            if os.path.lexists(out):
                _check_replaceable(out)
                if not _exchange(tmp, out):
                    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
                    os.rename(out, old / out.name)
                    os.rename(tmp, out)
                    tmp = old
            else:
                os.rename(tmp, out)
                tmp = None
            _fsync_dir(parent)
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
        return out


def pcap_file_name(link: str) -> str:
    """`pcap_<from>-<to>.pcap` for link direction "<from>-><to>" (other characters than letters,
    digits, `.`, `_`, `-` become `_`)."""
    a, _, b = link.partition("->")
    clean = lambda s: "".join(c if c.isalnum() or c in "._-" else "_" for c in s)
    return f"pcap_{clean(a)}-{clean(b)}.pcap"


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def default_max_memory() -> int | None:
    """80 % of the machine's physical memory (None where it cannot be read)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 0.8)
    except (ValueError, OSError, AttributeError):
        return None


def fmt_bytes(b: int) -> str:
    mb = b / (1 << 20)
    return f"{mb / 1024:.1f} GB" if mb >= 1024 else f"{mb:.0f} MB"


def run(scenario: PathLike | Scenario, seed: int | None = None, overrides: Mapping[str, Any] | Iterable[str] | None = None,
        out: PathLike | None = None, progress: Callable[[float, float], None] | None = None,
        timeout: float | None = None, max_memory: int | None = None) -> Run:
    """Run a scenario (a path or a Scenario) and return the Run; with `out`, also save it there.

    `progress(sim_time_s, end_s)` is called a few hundred times during the run. Ctrl-C stops
    the run with KeyboardInterrupt. `timeout` (wall-clock seconds) and `max_memory` (bytes: the
    estimate is checked before the run starts, the process's resident memory during it) stop
    the run with RunLimitError; nothing is saved then."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    if out is not None:
        _check_replaceable(Path(out))
    guarded = progress
    if timeout is not None or max_memory is not None:
        deadline = time.monotonic() + timeout if timeout is not None else None

        def guarded(t: float, end: float) -> None:
            if deadline is not None and time.monotonic() > deadline:
                raise RunLimitError(f"{sc.source}: the run exceeded --timeout {timeout:g} s at simulated time {t:.3f} s of "
                                    f"{end:.3f} s; nothing was saved")
            if max_memory is not None:
                rss = _rss_bytes()
                if rss is not None and rss > max_memory:
                    raise RunLimitError(f"{sc.source}: the run exceeded --max-memory {fmt_bytes(max_memory)} (resident "
                                        f"{fmt_bytes(rss)}) at simulated time {t:.3f} s; nothing was saved")
            if progress is not None:
                progress(t, end)
    res = _core.run(sc.to_toml(), sc.source, seed, _overrides(overrides), guarded, max_memory)
    r = Run(None, res["scenario_text"], res["traces"], core_summary=res["summary"])
    if out is not None:
        r.save(out)
    return r
