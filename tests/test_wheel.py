"""The wheel is complete (issue 30): built with maturin, installed into a fresh virtual environment
outside the repository, and used from an empty directory with PYTHONPATH unset and the repository
unreachable from the working directory — the seed reproduction, an example copied and run, and a
scenario run through the API, each writing its results in that directory.

"No file of the repository is read" is checked three ways: an audit hook installed in the fresh
environment (a ``.pth`` file, so it is active in every Python process there: ``python -m tcplab``
that the native ``tcplab`` command starts, the sweep runner's worker processes, ``python -c``) refuses any open, listing or
scan of a path under the repository and logs it; no output file, stdout or stderr names a path
under the repository; and ``tcplab.__file__`` and the bundled scenarios are inside the venv.

Speed: the wheel is built in the repository's target/ with the environment `make setup` uses, so
after `make setup` only the wheel is packed (no compile when the Rust sources are unchanged). The
fresh venv gets tcplab with ``--no-deps``; its third-party dependencies (the wheel's
Requires-Dist, less Ray, which only ``--backend ray`` imports) are installed once with pip into a
cache folder outside the repository (``$XDG_CACHE_HOME/tcplab/wheel-test-deps/<key>``, keyed by
that list and the Python version) and put on the venv's path by a ``.pth`` file. Marked ``slow``;
it runs in `make test`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# Installed in the fresh venv as a module plus a .pth line that imports it at start-up.
AUDIT_MODULE = r'''
import os, sys
_ROOT = os.path.realpath(os.environ.get("TCPLAB_TEST_FORBIDDEN_ROOT", "/nonexistent")) + os.sep
_LOG = os.environ.get("TCPLAB_TEST_AUDIT_LOG")
_EVENTS = {"open", "os.listdir", "os.scandir", "os.chdir", "glob.glob", "os.walk", "shutil.copyfile"}

def _hook(event, args):
    if event not in _EVENTS or not args:
        return
    path = args[0]
    if isinstance(path, int) or path is None:
        return
    try:
        p = os.path.realpath(os.fsdecode(path)) + os.sep
    except Exception:
        return
    if p.startswith(_ROOT):
        if _LOG:
            with open(_LOG, "a") as f:  # the log is outside the repository: no recursion
                f.write(f"{event} {os.fsdecode(path)} (pid {os.getpid()})\n")
        raise RuntimeError(f"the installed tcplab read a repository file: {event} {path!r}")

if os.environ.get("TCPLAB_TEST_FORBIDDEN_ROOT"):
    sys.addaudithook(_hook)
'''


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def _ok(p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert p.returncode == 0, f"{p.args} exited {p.returncode}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}"
    return p


def _requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    reqs = [l.split(":", 1)[1].strip() for l in lines if l.startswith("Requires-Dist:")]
    reqs = [r for r in reqs if "extra ==" not in r]            # not the test extras
    return sorted(r for r in reqs if not re.match(r"ray\b", r))  # Ray: only `--backend ray`


def _deps_dir(reqs: list[str]) -> Path:
    """The third-party dependencies, installed once per requirement list into a cache folder."""
    key = hashlib.sha256(json.dumps([sys.version_info[:2], reqs]).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tcplab" / "wheel-test-deps"
    target = cache / key
    if not (target / ".complete").is_file():
        tmp = cache / f".{key}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        _ok(_run([sys.executable, "-m", "pip", "install", "--quiet", "--target", tmp, *reqs]))
        (tmp / ".complete").write_text("\n".join(reqs) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
    assert ROOT not in target.parents
    return target


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    assert ROOT not in base.resolve().parents, "the test's temporary folder must be outside the repository"
    dev_bin = Path(sys.executable).parent
    # Build as `make setup` does (same interpreter, same environment) so target/ is shared.
    build_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CARGO_TARGET_DIR")}
    build_env |= {"VIRTUAL_ENV": str(dev_bin.parent), "PATH": f"{dev_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    maturin = shutil.which("maturin", path=str(dev_bin)) or "maturin"
    _ok(_run([maturin, "build", "--release", "--out", base / "dist"], cwd=ROOT, env=build_env))
    (wheel,) = (base / "dist").glob("tcplab-*.whl")

    venv = base / "venv"
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", venv]))
    py = venv / "bin" / "python"
    _ok(_run([sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-deps", wheel]))
    site = Path(_ok(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])).stdout.strip())
    (site / "_tcplab_test_deps.pth").write_text(f"{_deps_dir(_requirements(wheel))}\n")
    (site / "_tcplab_test_audit.py").write_text(AUDIT_MODULE)
    (site / "_tcplab_test_audit.pth").write_text("import _tcplab_test_audit\n")

    work = base / "work"
    work.mkdir()
    log = base / "audit.log"
    env = {"PATH": f"{venv / 'bin'}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", str(base)),
           "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "TCPLAB_REPORT_JOBS": "1",
           "TCPLAB_TEST_FORBIDDEN_ROOT": str(ROOT), "TCPLAB_TEST_AUDIT_LOG": str(log)}
    return {"wheel": wheel, "venv": venv, "py": py, "site": site, "work": work, "env": env, "log": log}


def _in_work(inst, *args) -> subprocess.CompletedProcess:
    p = _run(args, cwd=inst["work"], env=inst["env"])
    assert str(ROOT) not in p.stdout + p.stderr, f"{args}: output names a repository path:\n{p.stdout}\n{p.stderr}"
    return _ok(p)


def test_wheel_holds_every_bundled_file(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    bundled = ROOT / "python" / "tcplab" / "scenarios"
    want = {f"tcplab/scenarios/{p.relative_to(bundled).as_posix()}" for p in bundled.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}
    assert want and not want - names, f"missing from the wheel: {sorted(want - names)[:10]}"
    assert {"tcplab/scenarios/brakmo/single-transfer/reproduce.toml", "tcplab/scenarios/examples/dumbbell-64.toml",
            "tcplab/scenarios/kelly/dynamics/plot.py", "tcplab/scenarios/brakmo/fairness/make_scenarios.py"} <= names
    assert any(re.fullmatch(r"tcplab/_core\.abi3\.so", n) for n in names), "an abi3 extension module"
    assert (ROOT / "scenarios").resolve() == bundled.resolve(), "the repository's scenarios/ is the package folder"


def test_installed_tcplab_reproduces_copies_and_runs_from_an_empty_directory(installed):
    inst, work = installed, installed["work"]
    bundled_before = sorted(p.relative_to(inst["site"]) for p in (inst["site"] / "tcplab").rglob("*"))

    version = _in_work(inst, "tcplab", "--version").stdout
    m = re.match(r"tcplab (\S+)\nsource revision (\S+) \(", version)
    assert m, version
    code_version, revision = m.groups()
    head = _run(["git", "rev-parse", "HEAD"], cwd=ROOT).stdout.strip() if shutil.which("git") else ""
    assert revision == (head or "unknown"), "the wheel records the commit it was built from"

    listed = _in_work(inst, "tcplab", "reproduce", "--list").stdout
    assert re.search(r"^brakmo/single-transfer\s+Brakmo", listed, re.M)

    _in_work(inst, "tcplab", "reproduce", "brakmo/single-transfer")
    out = work / "runs" / "reproduce" / "brakmo_single-transfer"
    rows = json.loads((out / "comparison.json").read_text())
    assert (out / "report.html").stat().st_size > 10_000
    assert any(r.get("variant") == "vegas" and r.get("metric") == "throughput_KBps" for r in
               (rows["rows"] if isinstance(rows, dict) else rows))
    stored = _in_work(inst, inst["py"], "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
                      "print(sorted({r[0] for r in c.execute('SELECT code_version FROM runs').fetchall()}))",
                      out / "results.duckdb").stdout
    assert stored.strip() == repr([code_version]), "the store records the string `tcplab --version` prints"

    assert "dumbbell-64" in _in_work(inst, "tcplab", "examples").stdout
    _in_work(inst, "tcplab", "examples", "copy", "dumbbell-64", ".")
    assert (work / "dumbbell-64.toml").is_file()
    _in_work(inst, "tcplab", "run", "dumbbell-64.toml")
    summary = json.loads((work / "runs" / "dumbbell-64" / "summary.json").read_text())
    assert len(summary["flows"]) == 64

    api = _in_work(inst, inst["py"], "-c", """
import json, pathlib, tcplab
from tcplab.resources import scenarios_dir
sc = tcplab.load(scenarios_dir() / "brakmo" / "single-transfer" / "scenario.toml")
run = tcplab.run(sc, seed=2, overrides={"tcp[0].variant": "vegas"}, out="api-run")
print(json.dumps({"file": tcplab.__file__, "scenarios": str(scenarios_dir()),
                  "bytes": run.summary["flows"][0]["bytes_acked"]}))
""").stdout
    got = json.loads(api.strip().splitlines()[-1])
    venv = inst["venv"].resolve()
    assert venv in Path(got["file"]).resolve().parents and venv in Path(got["scenarios"]).resolve().parents
    assert got["bytes"] == 1024 * 1024
    assert (work / "api-run" / "summary.json").is_file()

    assert not inst["log"].exists(), f"repository files were read:\n{inst['log'].read_text()}"
    for p in work.rglob("*"):
        if p.is_file() and p.suffix in {".json", ".toml", ".html", ".log", ".txt", ".csv"}:
            assert str(ROOT) not in p.read_text(errors="replace"), f"{p} names a repository path"
    bundled_after = sorted(p.relative_to(inst["site"]) for p in (inst["site"] / "tcplab").rglob("*")
                           if "__pycache__" not in p.parts)
    assert bundled_after == [p for p in bundled_before if "__pycache__" not in p.parts], "nothing written into site-packages"


def test_installed_tcplab_command_is_native_and_hands_plots_to_python(installed):
    """The wheel installs the native binary as bin/tcplab (a data script; no console script):
    `tcplab run` starts no Python at all (an interpreter named by TCPLAB_PYTHON that records
    being started and fails is never started), and `tcplab plot` goes to Python — that stand-in
    when named, else the venv's own python3 beside the command."""
    inst = installed
    names = set(zipfile.ZipFile(inst["wheel"]).namelist())
    assert any(re.fullmatch(r"tcplab-[^/]+\.data/scripts/tcplab", n) for n in names), "bin/tcplab as a data script"
    assert any(re.fullmatch(r"tcplab-[^/]+\.data/scripts/tcplab-plot", n) for n in names), "bin/tcplab-plot, which draws `tcplab plot`"
    assert not any(n.endswith("entry_points.txt") for n in names), "no console script"
    cmd = inst["venv"] / "bin" / "tcplab"
    assert cmd.read_bytes()[:4] == b"\x7fELF", "bin/tcplab is the native binary"
    work = inst["work"] / "native"
    work.mkdir()
    marker = work / "python-started.txt"
    fake = work / "fake-python"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
    fake.chmod(0o755)
    shutil.copy(inst["site"] / "tcplab" / "scenarios" / "examples" / "vegas-late-starter.toml", work / "v.toml")
    env = inst["env"] | {"TCPLAB_PYTHON": str(fake)}
    p = _run([cmd, "run", "v.toml", "--set", "run.duration=3s", "--out", "r"], cwd=work, env=env)
    assert p.returncode == 0, p.stderr
    assert not marker.exists(), f"tcplab run started Python: {marker.read_text()}"
    assert "wrote r/summary.json" in p.stdout and (work / "r" / "COMPLETE.json").is_file()
    import pyarrow.parquet as pq
    assert pq.ParquetFile(work / "r" / "trace_tcp.parquet").metadata.created_by.startswith("tcplab ")
    p = _run([cmd, "validate", "v.toml"], cwd=work, env=env)
    assert p.returncode == 0 and not marker.exists(), p.stderr
    # plot in png: the binary's own (no Python started)
    p = _run([cmd, "plot", "r", "--kind", "queue", "--out", "q.png"], cwd=work, env=env)
    assert p.returncode == 0 and not marker.exists() and (work / "q.png").stat().st_size > 1000, p.stderr
    # plot in pdf: Python's, through the stand-in when it is named ...
    p = _run([cmd, "plot", "r", "--kind", "queue", "--format", "pdf"], cwd=work, env=env)
    assert p.returncode == 1 and marker.read_text() == "-m tcplab plot r --kind queue --format pdf\n"
    # ... and through the venv's interpreter beside the command otherwise
    p = _in_work(inst, cmd, "plot", work / "r", "--kind", "queue", "--out", work / "q.pdf")
    assert (work / "q.pdf").stat().st_size > 1000, p.stdout
    assert not inst["log"].exists(), f"repository files were read:\n{inst['log'].read_text()}"
