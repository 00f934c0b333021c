"""What the Python front takes from the core instead of keeping its own copy (issue 23): the
unit parsers of scenario files, the TOML key → line locator, Jain's fairness index, and the one
text-table formatter and progress meter the commands share."""

from __future__ import annotations

import argparse
import io
import math

import pytest

from tcplab import _core, analysis, units
from tcplab.cli.args import parse_memory, parse_time
from tcplab.progress import RunsProgress
from tcplab.sweep import SweepError, load_sweep, locate
from tcplab.textable import format_table


def test_units_are_the_scenario_files_units():
    assert units.parse_size("1.4KB") == 1434 and units.parse_size("4GB") == 4 << 30
    assert units.parse_rate_bps("200KB/s") == 1_638_400 and units.parse_rate_bps("1.6Mbps") == 1.6e6
    assert units.parse_duration_s("250us") == pytest.approx(250e-6) and units.parse_duration_s("2min") == 120.0
    for bad, says in (("5", "unit is required"), ("5mb", "lowercase b")):
        with pytest.raises(ValueError, match=says):
            (units.parse_duration_s if bad == "5" else units.parse_size)(bad)


def test_command_line_sizes_and_times_use_the_core_units():
    assert parse_memory("512MB") == 512 << 20 and parse_memory("2TB") == 2 << 40 and parse_memory("1.5 GB") == 3 << 29
    with pytest.raises(argparse.ArgumentTypeError):
        parse_memory("4gb-ish")
    # --from/--to: bare seconds as before, and now any duration unit of the scenario format.
    assert parse_time("2.5") == 2.5 and parse_time("2.5s") == 2.5 and parse_time("500ms") == 0.5
    for bad in ("-1", "nan", "inf", "5 parsecs"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_time(bad)


def test_jain_index_is_the_cores():
    assert _core.jain_index([3.0, 3.0]) == 1.0 and _core.jain_index([2.0, 0.0, 0.0, 0.0]) == 0.25
    assert _core.jain_index([]) is None and _core.jain_index([0.0, 0.0]) is None
    assert analysis.jain_index([1, 1, 2]) == pytest.approx(16 / 18) and math.isnan(analysis.jain_index([]))
    with pytest.raises(ValueError):
        analysis.jain_index([1.0, -1.0])


SWEEP = '''title = "t"
scenario = "base.toml"
seeds = [1, 2]

[set]
"run.duration" = "1s"

[axes]
"tcp[0].variant" = ["reno", "vegas"]
"links[1].queue.limit" = [1, 2]
'''


def test_locate_reads_exact_positions():
    assert locate(SWEEP, "tcp[0].variant", "axes") == 9
    assert locate(SWEEP, "run.duration", "set") == 6
    assert locate(SWEEP, "seeds") == 3
    assert locate(SWEEP, "run.duration", "axes") == 6   # not in [axes]: the first place anywhere
    assert locate(SWEEP, "nowhere") is None
    # A key written inline, with a dotted name the old regex could confuse with a path.
    assert locate('a = 1\nset = { "x.y" = 2 }\n', "x.y", "set") == 2
    assert _core.locate("[run]\nduration = \"1s\"\n[[links]]\na = 1\n[[links]]\nb = 2\n", "links[1].b") == 6


def test_sweep_buckets_take_every_duration_unit(tmp_path):
    """`buckets` accepted only ms, s and min; it now reads any duration of the scenario format."""
    base = tmp_path / "base.toml"
    base.write_text(open(__file__.replace("test_core_helpers.py", "../scenarios/brakmo/single-transfer/scenario.toml")).read())
    sw = tmp_path / "s.toml"
    sw.write_text(f'scenario = "{base}"\nbuckets = "500000us"\n')
    assert load_sweep(sw).buckets_s == 0.5
    sw.write_text(f'scenario = "{base}"\n\nbuckets = "5"\n')
    with pytest.raises(SweepError) as e:
        load_sweep(sw)
    assert e.value.line == 3 and e.value.field == "buckets" and "unit is required" in str(e.value)


def test_one_table_formatter_for_plain_and_markdown():
    rows = [["a", 1.5, None], ["bb", 10, 2.25]]
    assert format_table(["name", "x", "y"], rows) == (
        "name  x      y    \n"
        "----  -----  -----\n"
        "a     1.500      -\n"
        "bb       10  2.250")
    assert format_table(["n", "v"], [["a", 1.0]], markdown=True, cell=lambda v: f"{v:.1f}") == (
        "| n | v   |\n"
        "|---|-----|\n"
        "| a | 1.0 |")


def test_sweep_progress_off_a_terminal_prints_a_line_every_tenth():
    out = io.StringIO()
    p = RunsProgress(20, stream=out)
    for i in range(20):
        p.update(ok=i != 3)
    p.close()
    lines = out.getvalue().splitlines()
    # At the first run (5 %), then at 10 %, 20 %, ... 100 %, as the meter before tqdm did.
    assert len(lines) == 11 and "\r" not in out.getvalue()
    assert lines[0].startswith("1/20 runs, 0 failed |") and lines[-1].startswith("20/20 runs, 1 failed |")
