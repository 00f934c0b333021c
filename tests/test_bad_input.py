"""Bad input: every malformed scenario gives a clear message naming the file, line and field, and a
non-zero exit, from both `tcplab validate` and `tcplab run`; nothing panics or prints a traceback.

The committed files are in tests/bad_scenarios/; binary and badly encoded files are written at run
time into tmp_path. Messages have the form ``FILE:LINE: FIELD: MESSAGE`` (LINE is left out when no
line holds the error, e.g. a required top-level table that is missing).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BAD = HERE / "bad_scenarios"


def tcplab_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "tcplab"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tcplab.cli"]


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*tcplab_cmd(), *args], capture_output=True, text=True, timeout=timeout)


# (file, field, line, what the message must also say). line None: no line can be named.
CASES: list[tuple[str, str, int | None, str]] = [
    # units
    ("delay_no_unit.toml", "links[1].delay", 30, 'expected a duration like "50ms", got "50"'),
    ("delay_unknown_unit.toml", "links[1].delay", 30, 'unknown unit "parsecs"'),
    ("delay_negative.toml", "links[0].delay", 24, "non-negative duration"),
    ("rate_bare_number.toml", "links[0].rate", 23, "bare number"),
    ("rate_lowercase_unit.toml", "links[1].rate", 29, 'ambiguous unit "MBps"'),
    ("rate_negative.toml", "links[1].rate", 29, "positive rate"),
    ("rate_zero.toml", "links[1].rate", 29, "positive rate"),
    ("size_bare_number.toml", "udp[0].packet_size", 39, "bare number"),
    ("queue_fractional_pkts.toml", "links[1].queue.limit", 31, "whole"),
    ("queue_limit_no_unit.toml", "links[1].queue.limit", 31, 'like "10pkts"'),
    ("run_duration_zero.toml", "run.duration", 5, "positive"),
    ("mtu_zero.toml", "links[0].mtu", 25, "positive"),
    # unknown keys
    ("unknown_top_key.toml", "author", 3, "unknown field `author`"),
    ("unknown_link_key.toml", "links[1].bandwidth", 31, "unknown field `bandwidth`"),
    ("unknown_run_key.toml", "run.length", 7, "unknown field `length`"),
    ("unknown_queue_key.toml", "links[1].queue.red_min", 31, "unknown field `red_min`"),
    # probabilities
    ("loss_above_one.toml", "links[1].loss", 31, "between 0 and 1, got 1.5"),
    ("corruption_negative.toml", "links[0].corruption", 25, "between 0 and 1"),
    # topology
    ("link_dangling_endpoint.toml", "links[1].b", 28, 'no node named "c"'),
    ("link_to_itself.toml", "links[1].b", 28, "two different nodes"),
    ("link_parallel.toml", "links[1]", 26, "parallel links"),
    ("udp_dangling_from.toml", "udp[0].from", 35, 'no node named "x"'),
    ("udp_dangling_to.toml", "udp[0].to", 36, 'no node named "bb"'),
    ("tcp_dangling_from.toml", "tcp[0].from", 35, 'no node named "nobody"'),
    ("tcp_dangling_to.toml", "tcp[0].to", 36, 'no node named "nowhere"'),
    ("disconnected_destination.toml", "udp[0].to", 40, 'no route from "a" to "island"'),
    ("host_does_not_forward.toml", "tcp[0].to", 36, "no route"),
    ("duplicate_node.toml", "nodes[3].name", 21, 'duplicate node name "r"'),
    ("trace_unknown_link.toml", "run.trace.links[0]", 7, "a->r, r->a, r->b, b->r"),
    # enumerations
    ("node_unknown_kind.toml", "nodes[1].kind", 14, "`switch`"),
    ("tcp_unknown_variant.toml", "tcp[0].variant", 37, '"cubicle"'),
    ("queue_unknown_kind.toml", "links[1].queue.kind", 31, '"wfq"'),
    ("queue_param_of_other_kind.toml", "links[1].queue.theta", 31, 'virtual-queue parameter (kind = "vq"); droptail takes limit, count_in_service'),
    ("udp_unknown_pattern.toml", "udp[0].pattern", 37, "`pareto`"),
    ("processing_delay_unknown_dist.toml", "nodes[1].processing_delay.dist", 15, "`gamma`"),
    ("tcp_unknown_ack_policy.toml", "tcp[0].ack_policy", 39, '"sometimes"'),
    ("tcp_unknown_timer.toml", "tcp[0].timer", 39, '"sundial"'),
    ("tcp_params_not_accepted.toml", "tcp[0].params.alpha", 39, 'takes no parameter "alpha"'),
    ("tcp_lite_param_not_a_switch.toml", "tcp[0].params.fix_rto", 39, "0 or 1, got 2"),
    ("tcp_lite_unknown_param.toml", "tcp[0].params.fix_everything", 39, "known: fix_header_prediction"),
    # missing / conflicting / wrongly typed fields
    ("missing_run_duration.toml", "run.duration", 4, "missing"),
    ("link_missing_rate.toml", "links[1].rate", 26, "missing"),
    ("missing_links.toml", "links", None, "missing"),
    ("only_comments.toml", "run", None, "missing"),
    ("run_not_a_table.toml", "run", 3, "expected a table"),
    ("links_not_an_array.toml", "links", 3, "expected an array"),
    ("tcp_bytes_and_duration.toml", "tcp[0].bytes", 38, "exactly one of `bytes`"),
    ("tcp_neither_bytes_nor_duration.toml", "tcp[0].bytes", 33, "exactly one of `bytes`"),
    ("udp_cbr_without_rate.toml", "udp[0].rate", 33, "needs `rate`"),
    ("udp_duplicate_flow_name.toml", "tcp[0].name", 42, 'duplicate flow name "u"'),
    # not a scenario at all
    ("invalid_syntax.toml", "", 30, "invalid TOML"),
    ("duplicate_key.toml", "", 31, "invalid TOML: duplicate key `delay`"),
    ("empty.toml", "", None, "empty scenario"),
]


def expected_prefix(path: Path, field: str, line: int | None) -> str:
    loc = f"{path}:{line}: " if line is not None else f"{path}: "
    return f"error: {loc}{field}: " if field else f"error: {loc}"


def check_failure(p: subprocess.CompletedProcess, prefix: str, says: str) -> None:
    out = p.stdout + p.stderr
    assert p.returncode != 0, f"exit 0 for a bad scenario; output:\n{out}"
    assert "panicked" not in out and "Traceback" not in out and "RUST_BACKTRACE" not in out, out
    first = p.stderr.strip().splitlines()[0] if p.stderr.strip() else ""
    assert first.startswith(prefix), f"expected stderr to start with {prefix!r}, got:\n{p.stderr}"
    assert says in p.stderr, f"expected {says!r} in the message, got:\n{p.stderr}"


def test_every_committed_file_has_a_case():
    files = {f.name for f in BAD.glob("*.toml")}
    listed = {c[0] for c in CASES}
    assert files == listed, f"unlisted: {sorted(files - listed)}; missing: {sorted(listed - files)}"
    assert len(CASES) >= 24


def line_names_field(lines: list[str], field: str, line: int) -> bool:
    """Does line `line` of `lines` write `field`'s key, or open the very table that holds it?

    A key line must assign the field's last key (`delay = ...`, or `limit = ...` inside an inline
    table). A table header must be a table on the field's path: `[run]` for `run.duration`, and
    for an array of tables the header of the indexed element (`links[1]` is the second
    `[[links]]`)."""
    text = lines[line - 1].strip()
    parts = field.split(".")
    if text.startswith("["):
        array = text.startswith("[[")
        header = text.strip("[]").strip()
        for k, part in enumerate(parts):
            m = re.fullmatch(r"([A-Za-z_]\w*)(?:\[(\d+)\])?", part)
            if not m:
                return False
            path = ".".join(re.sub(r"\[\d+\]", "", p) for p in parts[: k + 1])
            if path != header:
                continue
            if not array:
                return m.group(2) is None
            if m.group(2) is None:
                return False
            # the (index + 1)-th [[header]] of the file, counting up to this line
            n = sum(1 for x in lines[:line] if x.strip().startswith("[[") and x.strip().strip("[]").strip() == header)
            return n == int(m.group(2)) + 1
        return False
    last = re.sub(r"\[\d+\]$", "", parts[-1])
    return re.search(rf"(^|[\s{{,]){re.escape(last)}\s*=", text) is not None


def test_lines_point_at_the_field():
    """The committed line numbers are right: the named line writes the field's key (or opens its table)."""
    checked = 0
    for name, field, line, _ in CASES:
        if line is None or not field:
            continue
        lines = (BAD / name).read_text().splitlines()
        assert line_names_field(lines, field, line), (name, field, line, lines[line - 1])
        checked += 1
    assert checked >= 45


def test_line_check_rejects_wrong_lines():
    """The check above can fail: a neighbouring line, another table's header, or the wrong
    element of an array of tables is refused."""
    lines = (BAD / "link_parallel.toml").read_text().splitlines()
    headers = [i + 1 for i, x in enumerate(lines) if x.strip() == "[[links]]"]
    assert len(headers) >= 2 and headers[1] == 26
    assert line_names_field(lines, "links[1]", headers[1])
    assert not line_names_field(lines, "links[1]", headers[0])
    assert not line_names_field(lines, "links[1]", headers[1] + 1)
    nodes = next(i + 1 for i, x in enumerate(lines) if x.strip() == "[[nodes]]")
    assert not line_names_field(lines, "links[1]", nodes)
    d = (BAD / "delay_no_unit.toml").read_text().splitlines()
    assert line_names_field(d, "links[1].delay", 30)
    assert not line_names_field(d, "links[1].delay", 29)
    assert not line_names_field(d, "links[1].rate", 30)


@pytest.mark.parametrize("name,field,line,says", CASES, ids=[c[0].removesuffix(".toml") for c in CASES])
def test_bad_scenario(name, field, line, says, tmp_path):
    path = BAD / name
    prefix = expected_prefix(path, field, line)
    check_failure(cli("validate", str(path)), prefix, says)
    out = tmp_path / "out"
    check_failure(cli("run", str(path), "--out", str(out)), prefix, says)
    assert not (out / "summary.json").exists()


@pytest.mark.parametrize("name,field,line,says", CASES, ids=[c[0].removesuffix(".toml") for c in CASES])
def test_bad_scenario_python(name, field, line, says):
    """The same files through the Python API: ScenarioError carrying the field, never a panic."""
    import tcplab

    with pytest.raises(tcplab.ScenarioError) as ei:
        tcplab.validate(BAD / name)
    assert getattr(ei.value, "field", None) == field
    assert says in str(ei.value)


# Written at run time: binary junk and bad encodings are not committed.
def _random_bytes(path: Path) -> None:
    path.write_bytes(random.Random(20240601).randbytes(4096))


def _random_printable(path: Path) -> None:
    rng = random.Random(7)
    path.write_text("".join(rng.choice("abc=[]{}\"'#.,-+0123456789 \n\t") for _ in range(3000)))


def _nul_in_text(path: Path) -> None:
    path.write_bytes(b'name = "x"\n\x00\x00\x00[run]\nduration = "1s"\n')


def _control_chars(path: Path) -> None:
    path.write_bytes(b'name = "x"\x01\x02\n')


def _latin1(path: Path) -> None:
    path.write_bytes('name = "café"\n[run]\nduration = "1s"\n'.encode("latin-1"))


def _utf16(path: Path) -> None:
    path.write_bytes('name = "x"\n[run]\nduration = "1s"\n'.encode("utf-16"))


def _gzip(path: Path) -> None:
    import gzip

    path.write_bytes(gzip.compress((BAD.parent.parent / "scenarios" / "examples" / "udp-dumbbell.toml").read_bytes()))


RUNTIME = [
    ("random_bytes", _random_bytes, "not a TOML text file"),
    ("random_printable", _random_printable, "invalid TOML"),
    ("nul_in_text", _nul_in_text, "not a TOML text file"),
    ("control_chars", _control_chars, "not a TOML text file"),
    ("latin1", _latin1, "invalid UTF-8"),
    ("utf16", _utf16, "not a TOML text file"),
    ("gzip", _gzip, "not a TOML text file"),
]


@pytest.mark.parametrize("kind,write,says", RUNTIME, ids=[r[0] for r in RUNTIME])
def test_binary_and_encoding_junk(kind, write, says, tmp_path):
    path = tmp_path / f"{kind}.toml"
    write(path)
    for args in (["validate", str(path)], ["run", str(path), "--out", str(tmp_path / "out")]):
        p = cli(*args)
        out = p.stdout + p.stderr
        assert p.returncode != 0, out
        assert "panicked" not in out and "Traceback" not in out, out
        assert p.stderr.startswith(f"error: {path}"), p.stderr
        assert says in p.stderr, p.stderr


def test_missing_file_and_directory(tmp_path):
    for target in (tmp_path / "no-such-file.toml", tmp_path):
        for args in (["validate", str(target)], ["run", str(target), "--out", str(tmp_path / "o")]):
            p = cli(*args)
            out = p.stdout + p.stderr
            assert p.returncode != 0, out
            assert "Traceback" not in out and "panicked" not in out, out
            assert str(target) in p.stderr, p.stderr


def test_emulation_commands_are_checked_by_validate(tmp_path):
    """`[[commands]]` (read only by `tcplab emulate`) are checked by `tcplab validate` with the
    emulator's own rules, located at their line; `tcplab run` refuses them (issue 24)."""
    text = (HERE.parent / "scenarios" / "emulation" / "iperf3" / "scenario.toml").read_text()
    assert 'host = "Host1b"' in text
    lines = text.splitlines()
    line = next(i for i, l in enumerate(lines, 1) if l.strip() == 'host = "Host1b"')
    bad = tmp_path / "bad_command_host.toml"
    bad.write_text(text.replace('host = "Host1b"', 'host = "Nobody"', 1))
    check_failure(cli("validate", str(bad)), expected_prefix(bad, "commands[0].host", line), 'is not a host with stack = "linux"')
    check_failure(cli("run", str(bad), "--out", str(tmp_path / "out")), f"error: {bad}:",
                  "[[commands]] runs programs on emulated Linux hosts, which only `tcplab emulate` can do")
