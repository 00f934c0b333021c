"""Where the native `tcplab` command is (issue 28).

The `tcplab` command is the native binary (crates/tcplab-cli): the wheel installs it as the data
script ``bin/tcplab``, `make setup` builds it into ``tcplab/_bin/tcplab-native`` and links
``.venv/bin/tcplab`` to it. It runs `tcplab run`, `validate` and `bench`, and `plot` in png and svg
(crates/tcplab-plot), with no interpreter and no polars in the process, and the runs of `tcplab
reproduce --no-report` (then the Python CLI with the runs done: crates/tcplab-cli/src/reproduce.rs), and hands every other command line (``--help``, a flag value it does
not accept, an abbreviated flag, any other command) to ``python -m tcplab``, so argparse stays the
one definition of the CLI and prints every usage message. ``TCPLAB_NATIVE=0`` sends every command
to Python. docs/architecture.md says why.

Only ``os``, ``sys`` and ``sysconfig`` are imported here.
"""

import os
import sys

#: The commands the native binary takes.
NATIVE_COMMANDS = ("run", "validate", "bench", "plot", "reproduce")


def _is_native(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF" and os.access(path, os.X_OK)
    except OSError:
        return False


def native_binary() -> str | None:
    """The native binary: the package's ``_bin/tcplab-native`` (built by `make setup`), else the
    installed ``tcplab`` command beside this interpreter or in its scripts folder (the wheel's);
    None when neither is there."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "tcplab-native")
    if os.access(path, os.X_OK):
        return path
    import sysconfig
    for folder in (os.path.dirname(sys.executable), sysconfig.get_path("scripts")):
        cand = os.path.join(folder, "tcplab")
        if _is_native(cand):
            return cand
    return None


def main() -> int:
    """The entry point of the console script `tcplab` was before it became the binary: a venv set
    up before that change still has the script (until `make setup` / a reinstall replaces it),
    which now execs the native command, or runs the Python CLI when the binary is absent."""
    exe = native_binary()
    if exe is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(exe, [exe, *sys.argv[1:]], dict(os.environ, TCPLAB_PYTHON=sys.executable))
    from .cli import main as cli_main
    return cli_main()
