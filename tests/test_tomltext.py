"""tcplab's TOML writer for scenarios built in Python (`tcplab.tomltext`, issue 13) gives the text
tomli_w gives, byte for byte: on every scenario file in the repository (read and written again),
on the benchmark scenarios, and on generated tables with awkward keys, strings and nesting."""

from __future__ import annotations

import datetime
import tomllib
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplab import bench, tomltext

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "scenarios").rglob("*.toml"))


def test_every_repository_scenario_is_written_as_tomli_w_writes_it():
    assert len(FILES) > 30
    for f in FILES:
        data = tomllib.loads(f.read_text())
        assert tomltext.dumps(data) == tomli_w.dumps(data), f


def test_benchmark_scenarios():
    for sc in (bench.tcp_dumbbell(64), bench.tcp_dumbbell(4, traced=True), bench.udp_dumbbell(8), bench.tcplib_backbone(),
               bench.short_transfers(200, hosts=20), bench.poisson_queue()):
        text = tomltext.dumps(sc.data)
        assert text == tomli_w.dumps(sc.data)
        assert tomllib.loads(text) == sc.data


def test_values_it_leaves_to_tomli_w():
    data = {"a": 1, "when": datetime.date(2026, 11, 24), "t": {"at": datetime.time(5, 30)}}
    assert tomltext.dumps(data) == tomli_w.dumps(data)
    with pytest.raises(TypeError):
        tomltext.dumps({"a": object()})
    with pytest.raises(TypeError):
        tomltext.dumps({1: 2})
    shared = {"x": 1, "y": [1, 2]}
    data = {"a": [shared, shared], "b": shared, "c": {"d": [shared]}}
    assert tomltext.dumps(data) == tomli_w.dumps(data)


keys = st.one_of(st.sampled_from(["a", "b-c", "d_e", "", "x y", "é", 'q"', "a.b", "\\", "\t", "\x7f", "1"]), st.text(max_size=6))
scalars = st.one_of(st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=12), st.sampled_from(["\b\n\f\r\"\\\t\x00\x1f\x7f\u2028", "x" * 120]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                      st.dictionaries(keys, inner, max_size=4)), max_leaves=12)
tables = st.recursive(st.dictionaries(keys, values, max_size=4),
                      lambda inner: st.dictionaries(keys, st.one_of(values, inner, st.lists(inner, min_size=1, max_size=3)),
                                                    max_size=4), max_leaves=20)


# 200 generated documents: 400 took ~45 s of the suite on a loaded 2-core machine
@settings(max_examples=200, deadline=None)
@given(tables)
def test_generated_tables(data):
    try:
        expected = tomli_w.dumps(data)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            tomltext.dumps(data)
        return
    assert tomltext.dumps(data) == expected
