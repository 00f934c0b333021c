"""`python -m tcplab.cli`: the same as the `tcplab` command."""

import sys

from . import main

sys.exit(main())
