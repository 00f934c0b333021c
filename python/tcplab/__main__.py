"""`python -m tcplab`: the Python CLI (:mod:`tcplab.cli`), every command. The `tcplab` command
(the native binary, crates/tcplab-cli) runs this for the command lines it does not take itself."""

import sys

from .cli import main

sys.exit(main())
