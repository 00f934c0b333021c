"""`tcplab plot`: draw graphs of a finished run."""

from __future__ import annotations

import sys
from pathlib import Path

from .args import check_window, parse_time


def add_parser(sub) -> None:
    pl_ = sub.add_parser("plot", help="draw graphs of a finished run",
                         description="Draw graphs of a finished run and print the paths of the files written.")
    pl_.add_argument("run_dir", type=Path, help="run directory written by `tcplab run --out`")
    pl_.add_argument("--conn", help="connection (flow) for tcp/cam/seq (default: every one); link for link/queue (default: the bottleneck)")
    pl_.add_argument("--kind", choices=["tcp", "cam", "seq", "link", "queue", "flows"], default="tcp",
                     help="graph: tcp (trace graph), cam (Vegas CAM), seq (sequence numbers), link, queue, flows (default tcp)")
    pl_.add_argument("--from", dest="t_from", type=parse_time, default=None, help="start time, seconds")
    pl_.add_argument("--to", dest="t_to", type=parse_time, default=None, help="end time, seconds")
    pl_.add_argument("--format", choices=["png", "svg", "pdf"], default="png", help="image format (default png)")
    pl_.add_argument("--out", type=Path, help="output file or directory (default: RUN_DIR/plots)")
    pl_.set_defaults(fn=run)


def single_threaded_blas() -> None:
    """Graphs use no linear algebra: numpy's OpenBLAS need not start a thread per core when numpy
    is imported (60 ms of a plot's 0.6 s here). Only when the user has not chosen."""
    import os
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def import_matplotlib_without_set_docstrings() -> None:
    """Import matplotlib's figure, artists and Agg canvas without writing the docstrings of their
    ``set()`` methods. matplotlib writes, for every Artist subclass as it is defined, a docstring
    listing all its properties (``matplotlib.artist.kwdoc``: inspects and reformats every setter's
    docstring), which is a fifth of matplotlib's import time and which a command that draws and
    exits never reads (issue 28). Only the docstrings change, not ``set()`` itself; ``kwdoc`` is
    restored once the classes exist. A no-op when matplotlib is already imported or lacks it."""
    import sys
    if "matplotlib.figure" in sys.modules:
        return
    import matplotlib.artist as artist
    kwdoc = getattr(artist, "kwdoc", None)
    if kwdoc is None:
        return
    artist.kwdoc = lambda _cls: ""
    try:
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.collections  # noqa: F401
        import matplotlib.figure  # noqa: F401
    finally:
        artist.kwdoc = kwdoc


def run(a) -> int:
    check_window(a)
    single_threaded_blas()
    import_matplotlib_without_set_docstrings()
    from ..plots import plot_cli
    paths = plot_cli(a.run_dir, conn=a.conn, kind=a.kind, t_from=a.t_from, t_to=a.t_to, fmt=a.format, out=a.out)
    if a.out is not None and a.out.suffix.lower() in (".png", ".svg", ".pdf") and len(paths) > 1:
        print(f"note: --out {a.out} names one file and {len(paths)} graphs were drawn: each is written beside it "
              f"as {a.out.stem}-<name>{a.out.suffix}", file=sys.stderr)
    for p in paths:
        print(p)
    return 0
