"""The scenario fuzz target (issue 15): mutated scenario files through `tcplab run` (parse,
`--set` overrides, validation, memory estimate, a short run, the atomic save) in-process.

Invariant, for every input: exit 0 with a complete run directory (RunData.load accepts it), or
exit 2 with ONE line ``error: FILE...`` that locates the problem (``FILE:LINE:`` or a named field
or guard); never a panic (exit 3), a traceback (any exception out of ``cli.main``), a hang (the
wall time stays within the run's ``--timeout`` plus slack) or unbounded memory (``--max-memory``
and the process's resident size).

Inputs: a corpus of valid scenarios (built in below, the project's scenario files with their
[run] duration cut to 2 s, tests/bad_scenarios/) mutated by Hypothesis: values replaced by
edge values of every unit, lines deleted, duplicated, swapped or inserted, bytes inserted
(control characters, invalid UTF-8, lone CRs), truncation, deep nesting, and `--set` overrides.

    make fuzz FUZZ_SECONDS=600          # as long as asked; failures saved to runs/fuzz-failures/
    pytest tests/test_fuzz.py           # fixed-seed sample of 2,000 cases (part of `make test`)
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "python") not in sys.path:
    sys.path.append(str(ROOT / "python"))

from tcplab import cli  # noqa: E402
from tcplab.rundir import RunData  # noqa: E402

# ------------------------------------------------------------------------------------ corpus
_HOSTS = """
[[nodes]]
name = "h1"
kind = "host"

[[nodes]]
name = "r"
kind = "router"
processing_delay = { dist = "uniform", min = "0us", max = "20us" }

[[nodes]]
name = "h2"
kind = "host"

[[links]]
a = "h1"
b = "r"
rate = "10Mbps"
delay = "2ms"

[[links]]
name = "bottleneck"
a = "r"
b = "h2"
rate = "1Mbps"
delay = "20ms"
mtu = "1500B"
loss = 0.01
queue = { kind = "droptail", limit = "10pkts", count_in_service = false }
ba = { rate = "2Mbps" }
"""

BUILTIN = [
    f"""name = "tcp"
[run]
duration = "1s"
seed = 3
monitor_interval = "50ms"
trace = {{ tcp = true, links = ["r->h2"] }}
{_HOSTS}
[[tcp]]
name = "t"
from = "h1"
to = "h2"
variant = "newreno"
bytes = "40KB"
mss = "1KB"
min_rto = "200ms"
timer_granularity = "1ms"
""",
    f"""name = "vegas"
[run]
duration = "1s"
stop_when_done = false
trace = {{ tcp = true, links = ["all"] }}
{_HOSTS}
[[tcp]]
name = "v"
from = "h1"
to = "h2"
variant = "vegas"
duration = "500ms"
send_buffer = "16KB"
recv_buffer = "16KB"
ack_policy = "bsd-delayed"
params = {{ alpha = 1, beta = 3, gamma = 1 }}

[[tcp]]
name = "r"
from = "h2"
to = "h1"
variant = "reno"
bytes = "10KB"
start = "100ms"
timer = "bsd"
""",
    f"""name = "udp"
[run]
duration = "1s"
{_HOSTS}
[[udp]]
name = "cbr"
from = "h1"
to = "h2"
pattern = "cbr"
packet_size = "500B"
rate = "200kbps"

[[udp]]
name = "poisson"
from = "h2"
to = "h1"
pattern = "poisson"
packet_size = "1KB"
size_dist = "exponential"
interval = "20ms"
stop = "800ms"

[[udp]]
name = "bursts"
from = "h1"
to = "h2"
pattern = "bursts"
packet_size = "1KB"
burst_size = "4KB"
burst_interval = "100ms"

[[udp]]
name = "onoff"
from = "h1"
to = "h2"
pattern = "onoff"
packet_size = "500B"
rate = "100kbps"
on = "50ms"
off = "50ms"
shape = 1.5
""",
    f"""name = "traffic"
[run]
duration = "1s"
{_HOSTS}
[[traffic]]
name = "bg"
kind = "tcplib"
from = "h1"
to = "h2"
variant = "reno"
interarrival = "100ms"
two_way = true

[[traffic]]
name = "ahn"
kind = "ahn"
from = "h1"
to = "h2"
variant = "vegas"
senders = 3
sleep = "200ms"

[[traffic]]
name = "oo"
kind = "onoff"
from = "h2"
to = "h1"
variant = "newreno"
senders = 2
packet_size = "500B"
rate = "100kbps"
on = "100ms"
off = "100ms"
tcp = {{ mss = "512B", timer = "fine" }}
""",
]


def _short(text: str) -> str:
    """The [run] table's duration cut to 2 s (fuzzing wants many short runs)."""
    m = re.search(r"^\[run\][^\[]*?^duration\s*=\s*\"[^\"]*\"", text, flags=re.M | re.S)
    if not m:
        return text
    seg = m.group(0)
    return text[: m.start()] + re.sub(r'duration\s*=\s*"[^"]*"$', 'duration = "2s"', seg) + text[m.end():]


def corpus() -> list[str]:
    out = list(BUILTIN)
    for p in sorted((ROOT / "scenarios").rglob("*.toml")):
        if p.name != "reproduce.toml":
            out.append(_short(p.read_text()))
    bad = ROOT / "tests" / "bad_scenarios"
    if bad.is_dir():
        out += [p.read_text(errors="replace") for p in sorted(bad.glob("*.toml"))]
    return out


CORPUS = corpus()
# Valid inputs are drawn four times out of five, so that mutations explore near valid scenarios
# and many cases reach the run and the save.
VALID = CORPUS[: len(BUILTIN) + sum(1 for p in (ROOT / "scenarios").rglob("*.toml") if p.name != "reproduce.toml")]
BAD = CORPUS[len(VALID):] or VALID

# ------------------------------------------------------------------------------- mutations
VALUES = [
    # durations
    '"0s"', '"1ns"', '"1us"', '"10ms"', '"61s"', '"100000s"', '"1e9s"', '"-1s"', '"1.5min"', '"999999999999min"', '"50"',
    # sizes
    '"0B"', '"1B"', '"40B"', '"64KB"', '"5GB"', '"1.4KB"', '"-3KB"', f'"{"9" * 40}GB"', '"10pkts"', '"0pkts"', '"4294967296pkts"',
    # rates
    '"1bps"', '"0.5bps"', '"1Gbps"', '"10000Gbps"', f'"{"1" * 40}bps"', '"200KB/s"', '"0Mbps"',
    # numbers, booleans, strings, structures
    "0", "1", "-1", "3", "1000000", "4294967296", "18446744073709551616", "1.5", "nan", "inf", "-inf", "1e308",
    "true", "false", '""', '"->"', '"a->b"', '"h1"', '"h2"', '"r"', '"reno"', '"vegas-star"', '"tahoe"', '"all"',
    '"bogus"', "[]", '["all"]', "{}", '{ limit = "1pkts" }', '{ dist = "normal", mean = "1ms", stddev = "5ms" }',
]
KEYS = ["duration", "delay", "rate", "mss", "mtu", "overhead", "loss", "corruption", "limit", "bytes", "min_rto",
        "timer_granularity", "monitor_interval", "burst_interval", "interval", "packet_size", "senders", "name", "a", "b",
        "from", "to", "variant", "initial_window", "send_buffer", "recv_buffer", "seed", "start", "stop", "on", "off"]
HEADERS = ["[run]", "[[nodes]]", "[[links]]", "[[tcp]]", "[[udp]]", "[[traffic]]", "[run.trace]", "[links]", "[[run]]"]
JUNK = [b"\x00", b"\x01", b"\x7f", b"\xff\xfe", b"\xe9", b"\r", b"\r\n", b"\t", b'"', b"[", b"]]", b"=", b"#", b"\\u0000",
        b"\xef\xbb\xbf", b"'''", b'"""']


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@st.composite
def mutation(draw, data: bytes) -> bytes:
    op = draw(st.sampled_from(["value", "value", "value", "delete", "duplicate", "swap", "insert", "header", "junk",
                               "truncate", "nest", "key"]))
    lines = _lines(data)
    n = len(lines)
    i = draw(st.integers(0, max(n - 1, 0)))
    if op == "value":
        cand = [k for k, l in enumerate(lines) if b"=" in l]
        if not cand:
            return data
        k = draw(st.sampled_from(cand))
        key = lines[k].split(b"=", 1)[0]
        lines[k] = key + b"= " + draw(st.sampled_from(VALUES)).encode()
    elif op == "delete" and n > 1:
        del lines[i]
    elif op == "duplicate":
        lines.insert(i, lines[i])
    elif op == "swap" and n > 1:
        j = draw(st.integers(0, n - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "insert":
        lines.insert(i, f"{draw(st.sampled_from(KEYS))} = {draw(st.sampled_from(VALUES))}".encode())
    elif op == "header":
        lines.insert(i, draw(st.sampled_from(HEADERS)).encode())
    elif op == "junk":
        pos = draw(st.integers(0, len(data)))
        return data[:pos] + draw(st.sampled_from(JUNK)) + data[pos:]
    elif op == "truncate":
        return data[: draw(st.integers(0, len(data)))]
    elif op == "nest":
        depth = draw(st.sampled_from([5, 100, 300, 600]))
        inner = draw(st.sampled_from(["[", "{a = "]))
        close = "]" if inner == "[" else "}"
        lines.insert(i, f"x = {inner * depth}1{close * depth}".encode())
    elif op == "key":
        cand = [k for k, l in enumerate(lines) if b"=" in l]
        if cand:
            k = draw(st.sampled_from(cand))
            lines[k] = draw(st.sampled_from(KEYS)).encode() + b" =" + lines[k].split(b"=", 1)[1]
    return b"\n".join(lines)


@st.composite
def scenario_case(draw) -> tuple[bytes, list[str]]:
    pool = draw(st.sampled_from(["valid", "valid", "valid", "valid", "bad"]))
    data = draw(st.sampled_from(VALID if pool == "valid" else BAD)).encode()
    for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):
        data = draw(mutation(data))
    sets = []
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        key = draw(st.sampled_from(["run.duration", "run.seed", "links[0].rate", "links[1].delay", "tcp[0].variant",
                                    "tcp[0].mss", "udp[0].rate", "nodes[0].name", "links[5].delay", "run..x", "x[", "noequals"]))
        value = draw(st.sampled_from(VALUES + ["20ms", "1Mbps", "vegas"]))
        sets.append(key if key == "noequals" else f"{key}={value}")
    return data, sets


# ------------------------------------------------------------------------------- the check
@dataclass
class Limits:
    timeout_s: float = 0.3
    max_memory: str = "1GB"
    slack_s: float = 10.0  # parse + save + Python overhead on top of --timeout


LOCATED = re.compile(r"^error: (?P<file>[^:]+\.toml)(:(?P<line>\d+))?: (?P<rest>.+)$")


class InvariantViolation(AssertionError):
    pass


def check_case(data: bytes, sets: list[str], work: Path, limits: Limits, failures: Path | None = None) -> str:
    """Run one case; returns "ok", "error" or "limit". Raises InvariantViolation (after saving the
    input under `failures`) when the invariant does not hold."""
    src = work / "case.toml"
    src.write_bytes(data)
    out = work / "out"
    if out.exists():
        shutil.rmtree(out)
    args = ["run", str(src), "--out", str(out), "--timeout", str(limits.timeout_s), "--max-memory", limits.max_memory]
    for s in sets:
        args += ["--set", s]
    so, se = io.StringIO(), io.StringIO()
    t0 = time.monotonic()
    try:
        with redirect_stdout(so), redirect_stderr(se):
            code = cli.main(args)
    except BaseException as e:  # noqa: BLE001 - any escape is the failure we look for
        _fail(data, sets, failures, f"exception out of cli.main: {type(e).__name__}: {e}")
    wall = time.monotonic() - t0
    err = se.getvalue()
    if wall > limits.timeout_s + limits.slack_s:
        _fail(data, sets, failures, f"took {wall:.1f} s with --timeout {limits.timeout_s}")
    if "Traceback" in err or "panicked" in err:
        _fail(data, sets, failures, f"traceback or panic on stderr: {err[:2000]}")
    if code == 0:
        try:
            rd = RunData.load(out)
        except Exception as e:  # noqa: BLE001
            _fail(data, sets, failures, f"exit 0 but the run directory is not complete: {e}")
        if not isinstance(rd.summary.get("flows"), list):
            _fail(data, sets, failures, "exit 0 but summary.json has no flows")
        return "ok"
    if code != 2:
        _fail(data, sets, failures, f"exit {code}: {err[:2000]}")
    lines = err.strip().splitlines()
    if len(lines) != 1:
        _fail(data, sets, failures, f"exit 2 with {len(lines)} lines on stderr: {err[:2000]}")
    m = LOCATED.match(lines[0])
    if not m or m.group("file") != str(src):
        _fail(data, sets, failures, f"exit 2 without a located message: {lines[0]}")
    if out.exists():
        _fail(data, sets, failures, f"exit 2 but {out} was written: {lines[0]}")
    rest = m.group("rest")
    located = m.group("line") is not None or re.match(r"[A-Za-z_][\w.\[\]-]*: ", rest) or "--timeout" in rest \
        or "--max-memory" in rest or "--set" in rest or "required field" in rest or "empty scenario" in rest
    if not located:
        _fail(data, sets, failures, f"exit 2 with neither line nor field: {lines[0]}")
    return "limit" if ("--timeout" in rest or "--max-memory" in rest) else "error"


def _fail(data: bytes, sets: list[str], failures: Path | None, why: str):
    if failures is not None:
        failures.mkdir(parents=True, exist_ok=True)
        h = hashlib.sha256(data + repr(sets).encode()).hexdigest()[:12]
        (failures / f"{h}.toml").write_bytes(data)
        (failures / f"{h}.txt").write_text(f"--set {sets}\n{why}\n")
    raise InvariantViolation(why)


def run_sample(n: int, *, derandomize: bool = True, limits: Limits | None = None, failures: Path | None = None,
               stats: dict | None = None, deadline: float | None = None) -> dict:
    """Run `n` Hypothesis cases (fixed seed when `derandomize`); returns outcome counts."""
    limits = limits or Limits()
    stats = stats if stats is not None else {}
    work = Path(tempfile.mkdtemp(prefix="tcplab-fuzz-"))

    @settings(max_examples=n, derandomize=derandomize, deadline=None, database=None, print_blob=True,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
    @given(scenario_case())
    def prop(case):
        if deadline is not None and time.monotonic() > deadline:
            return
        data, sets = case
        outcome = check_case(data, sets, work, limits, failures)
        stats[outcome] = stats.get(outcome, 0) + 1

    try:
        prop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return stats


def main(argv: list[str] | None = None) -> int:
    import argparse
    import resource

    p = argparse.ArgumentParser(description="Fuzz tcplab's scenario front end and runs (see the module docstring).")
    p.add_argument("--seconds", type=float, default=600.0, help="stop after this long (default 600)")
    p.add_argument("--timeout", type=float, default=2.0, help="--timeout of each run, seconds (default 2)")
    p.add_argument("--max-memory", default="1GB", help="--max-memory of each run (default 1GB)")
    p.add_argument("--failures", type=Path, default=ROOT / "runs" / "fuzz-failures", help="where failing inputs go")
    a = p.parse_args(argv)
    # Unbounded memory fails loudly: the process may not grow past 8 GB of address space (polars
    # and rayon reserve far more address space than they touch, so the cap is generous).
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = 8 << 30
    if hard == resource.RLIM_INFINITY or hard > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    limits = Limits(timeout_s=a.timeout, max_memory=a.max_memory)
    stats: dict = {}
    t0 = time.monotonic()
    deadline = t0 + a.seconds
    batches = 0
    while time.monotonic() < deadline:
        run_sample(500, derandomize=False, limits=limits, failures=a.failures, stats=stats, deadline=deadline)
        batches += 1
        total = sum(stats.values())
        print(f"{time.monotonic() - t0:7.0f} s  {total} cases  {stats}", flush=True)
    print(f"fuzz: {sum(stats.values())} cases in {time.monotonic() - t0:.0f} s, no invariant violation; outcomes {stats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
