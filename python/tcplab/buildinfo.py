"""What this tcplab is: version, source revision and a digest of the compiled core (issue 30).

``code_version()`` is the one string that names a build: ``tcplab --version`` prints it and the
results store records it in ``runs.code_version`` (it is part of every run's content hash, so a
rebuilt core never reuses stored results). Form: ``<version>+g<revision>[.dirty].core<digest>``,
e.g. ``0.1.0+g10517a5.core3fa2b1c9d0e1`` — the first 7 hex digits of the git commit the core was
built from (``.dirty`` when tracked files had uncommitted changes; ``unknown`` outside a
checkout, see crates/tcplab-py/build.rs) and the first 12 of the SHA-256 of the compiled module.
"""

from __future__ import annotations

import argparse
import functools
import hashlib


def source_revision() -> str:
    """The full commit hash the core was built from (``-dirty`` suffix for an edited tree), or "unknown"."""
    from . import _core
    return getattr(_core, "__source_revision__", "unknown")


@functools.lru_cache(maxsize=1)
def core_digest() -> str:
    from . import _core
    h = hashlib.sha256()
    try:
        with open(_core.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, AttributeError):
        h.update(b"unknown")
    return h.hexdigest()[:12]


def code_version() -> str:
    from . import __version__
    rev = source_revision()
    if rev == "unknown":
        tag = "unknown"
    else:
        commit, dirty = rev.removesuffix("-dirty"), rev.endswith("-dirty")
        tag = "g" + commit[:7] + (".dirty" if dirty else "")
    return f"{__version__}+{tag}.core{core_digest()}"


def version_text() -> str:
    """`tcplab --version`: the code version, then the revision in full."""
    rev = source_revision()
    state = ("built from a tree with uncommitted changes" if rev.endswith("-dirty")
             else "source revision not recorded" if rev == "unknown" else "built from a clean tree")
    return f"tcplab {code_version()}\nsource revision {rev.removesuffix('-dirty')} ({state})"


class VersionAction(argparse.Action):
    """`--version`: print version_text() and exit (computed when asked, not when the parser is built)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the version, the source revision and the core's digest, and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit()
