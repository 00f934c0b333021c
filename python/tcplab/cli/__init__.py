"""The `tcplab` command line. One command; subcommands for running, checking, tracing, plotting,
reporting, reproducing the seeds' experiments and benchmarking.

One module per subcommand in this package, each with ``add_parser(sub)`` (its arguments, ending
in ``set_defaults(fn=run)``) and ``run(args) -> int`` (what it does; heavy imports inside, so
``tcplab --help`` stays quick). :data:`COMMANDS` lists them in the order ``--help`` shows;
:func:`main` parses, dispatches and turns errors into one line and an exit status. Shared
argument types are in :mod:`.args`; the run summary printer in :mod:`.summary`.

Adding a command ``foo``: write ``cli/foo.py`` with ``add_parser`` and ``run`` (copy
``cli/schema.py``, the smallest), then add ``"foo"`` to :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .. import __version__
from ..buildinfo import VersionAction
from .args import EPILOG, parse_memory, parse_seconds, parse_seed, parse_time, positive_int

__all__ = ["main", "build_parser", "print_summary", "COMMANDS", "parse_memory", "parse_seconds", "parse_seed",
           "parse_time", "positive_int"]

#: The subcommands, in `tcplab --help` order: each a module of this package.
COMMANDS = ("run", "emulate", "validate", "expand", "variants", "schema", "trace", "export", "plot", "report",
            "reproduce", "fidelity", "examples", "new", "sweep", "table", "diagnose", "bench", "validate-linux")


def print_summary(s: dict, file=None, show_all: bool = False) -> None:
    """The run summary table of `tcplab run` (see :mod:`.summary`)."""
    from .summary import print_summary as p
    p(s, file=file, show_all=show_all)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``only`` (a name in :data:`COMMANDS`), the top level with that one
    command's sub-parser, which parses that command's lines and prints its help exactly as the
    whole parser does (a sub-parser's prog, usage and help do not depend on its siblings), without
    importing the other 18 command modules (issue 28: a plot at interactive speed)."""
    p = argparse.ArgumentParser(prog="tcplab", description="tcplab: packet-level network simulator and laboratory for TCP congestion control.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=VersionAction)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        if only is None or name == only:
            importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return p


def _one_line(e: BaseException) -> str:
    """An exception as one line: OS errors as "PATH: reason", others their first line."""
    if isinstance(e, OSError) and e.strerror and e.filename is not None:
        return f"{e.filename}: {e.strerror}"
    if isinstance(e, KeyError) and e.args:
        text = str(e.args[0])
    else:
        text = str(e)
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[0] if lines else type(e).__name__


def _located_errors() -> tuple[type[BaseException], ...]:
    """The errors that carry their location (scenario file, sweep file): imported only when an
    exception arrives, since the sweep package costs a plot a tenth of its start (issue 28)."""
    from .._core import ScenarioError
    from ..sweep.spec import SweepError
    return (ScenarioError, SweepError)


def _polars_error() -> type[BaseException]:
    try:
        import polars as pl
        return pl.exceptions.PolarsError
    except (ImportError, AttributeError):
        return OSError


#: Parsers built so far, by the command they were built for (None: every command). Each built once:
#: the fuzz target calls main() thousands of times.
_PARSERS: dict[str | None, argparse.ArgumentParser] = {}


def _parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """A line that starts with a command's name needs only that command's sub-parser (the top level
    takes no option after the command); any other line (``--help``, ``--version``, no or an unknown
    command) the whole parser, so its help and its errors list every command."""
    only = argv[0] if argv and argv[0] in COMMANDS else None
    if only not in _PARSERS:
        _PARSERS[only] = build_parser(only)
    return _PARSERS[only]


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    args = _parser_for(list(argv)).parse_args(argv)
    try:
        return args.fn(args) or 0
    except _located_errors() as e:  # evaluated only when an exception arrives here
        print("error: " + "; ".join(l.strip() for l in str(e).splitlines() if l.strip()), file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"tcplab: no such file: {e.filename}" if e.filename is not None else f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except OSError as e:  # NotADirectoryError, FileExistsError, read-only file system, full disk, ...
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except (ValueError, KeyError, OverflowError) as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except _polars_error() as e:  # a Parquet file polars cannot read or write
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BaseException as e:  # noqa: BLE001 - a Rust panic arrives as pyo3's PanicException
        if type(e).__name__ != "PanicException":
            raise
        print(f"error: internal error in the tcplab core (please report it with the scenario): {_one_line(e)}",
              file=sys.stderr)
        return 3

