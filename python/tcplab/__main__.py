"""`python -m tcplab`: the Python CLI (:mod:`tcplab.cli`), every command. The `tcplab` command
(the native binary, crates/tcplab-cli) runs this for the command lines it does not take itself."""

import sys

from .cli import main

#: Commands whose process ends without the interpreter's teardown once their output is flushed.
LEAN_EXIT = ("plot", "report")


def lean_exit(code: int) -> None:
    """End the process now with ``code``, skipping the interpreter's teardown: freeing every module
    of numpy, polars and matplotlib costs a plot a tenth of its time and writes nothing (issue 28).
    Only once stdout and stderr are flushed: the files a plot or report writes are closed before
    its command returns (``savefig`` to a path, the report's atomic write). A flush that fails (a
    closed pipe) leaves the ordinary exit to report it."""
    import os
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


code = main()
if len(sys.argv) > 1 and sys.argv[1] in LEAN_EXIT and isinstance(code, int):
    lean_exit(code)
sys.exit(code)
