"""`tcplab examples`, `tcplab reproduce --list` and `tcplab --version` (issue 30), in the
development install; tests/test_wheel.py runs the same from an installed wheel."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TCPLAB = [str(Path(sys.executable).parent / "tcplab")]


def cli(*args, cwd=None):
    return subprocess.run(TCPLAB + [str(a) for a in args], capture_output=True, text=True, cwd=cwd)


def test_scenarios_have_one_home():
    from tcplab.resources import scenarios_dir
    assert (ROOT / "scenarios").is_symlink() and (ROOT / "scenarios").resolve() == scenarios_dir()
    assert scenarios_dir() == (ROOT / "python" / "tcplab" / "scenarios").resolve()


def test_reproduce_list_names_every_bundled_reproduction(tmp_path):
    p = cli("reproduce", "--list", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    names = [l.split()[0] for l in p.stdout.splitlines()]
    want = sorted(f.parent.relative_to(ROOT / "scenarios").as_posix() for f in (ROOT / "scenarios").rglob("reproduce.toml"))
    assert names == want
    assert all(len(l.split(None, 1)) == 2 for l in p.stdout.splitlines()), "every line has a description"
    missing = cli("reproduce", cwd=tmp_path)
    assert missing.returncode == 2 and "name a reproduction" in missing.stderr and "brakmo/single-transfer" in missing.stderr


def test_examples_lists_one_line_each(tmp_path):
    p = cli("examples", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    for name in ("dumbbell-64", "udp-dumbbell", "brakmo/single-transfer", "kelly/table1", "brakmo/sensitivity/buffers"):
        assert re.search(rf"^  {re.escape(name)}\s+\S", p.stdout, re.M), name


def test_copy_example_then_refuse_to_overwrite(tmp_path):
    p = cli("examples", "copy", "dumbbell-64", ".", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    copied = tmp_path / "dumbbell-64.toml"
    assert copied.read_text() == (ROOT / "scenarios" / "examples" / "dumbbell-64.toml").read_text()
    copied.write_text(copied.read_text() + "# mine\n")
    again = cli("examples", "copy", "dumbbell-64", ".", cwd=tmp_path)
    assert again.returncode == 2 and "exists" in again.stderr and "--force" in again.stderr
    assert copied.read_text().endswith("# mine\n"), "an existing file is never replaced without --force"
    assert cli("examples", "copy", "dumbbell-64", ".", "--force", cwd=tmp_path).returncode == 0
    assert not copied.read_text().endswith("# mine\n")


def test_copy_reproduction_brings_a_scenario_from_a_sibling_folder(tmp_path):
    """zhang/droptail-buffers takes ../table2/scenario.toml: the copy carries it and points at it."""
    p = cli("examples", "copy", "zhang/droptail-buffers", "mine", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    folder = tmp_path / "mine" / "droptail-buffers"
    spec = tomllib.loads((folder / "reproduce.toml").read_text())
    assert spec["scenario"] == "scenario.toml"
    assert (folder / "scenario.toml").read_text() == (ROOT / "scenarios" / "zhang" / "table2" / "scenario.toml").read_text()
    from tcplab.reproduce import Spec
    assert Spec(folder).scenario.is_file()
    v = cli("validate", folder / "scenario.toml", cwd=tmp_path)
    assert v.returncode == 0, v.stderr


def test_copy_unknown_name_is_one_line(tmp_path):
    p = cli("examples", "copy", "no/such", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "tcplab examples" in p.stderr
    assert not any(tmp_path.iterdir())


def test_version_is_the_stores_code_version():
    from tcplab import __version__
    from tcplab.sweep import code_version
    p = cli("--version")
    assert p.returncode == 0, p.stderr
    first, second = p.stdout.splitlines()
    assert first == f"tcplab {code_version()}" and code_version().startswith(__version__ + "+")
    rev = shutil.which("git") and subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    if rev:
        # The core records the commit it was built from (a build older than HEAD says so too).
        assert re.fullmatch(r"source revision [0-9a-f]{40} \(built from .*\)", second), second


def test_new_two_lan_writes_the_thesis_network_that_runs_on_ethernets(tmp_path):
    # Issue 25: `tcplab new two-lan` starts a scenario from the two-Ethernet template.
    listing = cli("new", cwd=tmp_path)
    assert listing.returncode == 0 and re.search(r"^  two-lan\s+\S", listing.stdout, re.M), listing.stdout
    p = cli("new", "two-lan", ".", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    written = tmp_path / "two-lan.toml"
    assert written.read_text() == (ROOT / "scenarios" / "examples" / "two-lan.toml").read_text()
    assert len(tomllib.loads(written.read_text())["lan"]) == 2
    import tcplab
    s = tcplab.run(written, seed=1).summary
    assert [l["access"] for l in s["lans"]] == ["ethernet", "ethernet"] and all(l["frames"] > 0 for l in s["lans"])
    assert cli("new", "no-such-template", cwd=tmp_path).returncode != 0
