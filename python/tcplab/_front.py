"""The `tcplab` console script: the front door that sends `tcplab run`, `validate` and `bench` to
the native binary (``tcplab/_bin/tcplab-native``, crates/tcplab-cli) before anything heavy is
imported, and every other command to the Python CLI (:mod:`tcplab.cli`).

The native binary parses, runs and writes the run directory with no interpreter and no polars in
the process (issue 28); it hands a command line it does not take itself (``--help``, a flag value
it does not accept, an abbreviated flag) back to ``python -m tcplab.cli``, so argparse stays the
one definition of the CLI and prints every usage message. ``TCPLAB_NATIVE=0`` keeps a run on the
Python path. docs/architecture.md says why the front door is this small module.

Only ``os`` and ``sys`` are imported here (and the package's ``__init__``, which imports nothing
until an attribute is asked for).
"""

import os
import sys

#: The commands the native binary takes.
NATIVE_COMMANDS = ("run", "validate", "bench")


def native_binary() -> str | None:
    """The native binary shipped in the package (built by `make setup` / `make wheel`), or None."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "tcplab-native")
    return path if os.access(path, os.X_OK) else None


def main() -> int:
    argv = sys.argv[1:]
    if argv and argv[0] in NATIVE_COMMANDS and os.environ.get("TCPLAB_NATIVE", "1") != "0":
        exe = native_binary()
        if exe is not None:
            env = dict(os.environ, TCPLAB_PYTHON=sys.executable)
            sys.stdout.flush()
            sys.stderr.flush()
            os.execve(exe, [exe, *argv], env)
    from .cli import main as cli_main
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
