"""The look of every graph: Brakmo's palette (black, grays, dashes), the matplotlib rc, making and
saving figures, and the gid helpers (:func:`find_gid`, :func:`count_gid`) tests count elements with."""

from __future__ import annotations

from pathlib import Path

from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..rundir import check_output_file


PLOT_KINDS = ("tcp", "cam", "seq", "link", "queue", "flows")
# zlib level of the PNGs `tcplab plot` writes: 3 makes files within 10 % of the default 6's on these
# line graphs in a fifth less time (issue 28: a plot at interactive speed). The report keeps the
# default for its embedded PNGs, where bytes count (its size limit is 1 MB).
PNG_COMPRESS_LEVEL = 3
LEGEND_MAX_FLOWS = 12  # the flows graph labels its lines up to this many flows

# Brakmo's palette: black, two grays, dashes. Kept in one place.
C_BLACK = "#000000"
C_DARK = "#555555"
C_MID = "#8c8c8c"
C_LIGHT = "#b4b4b4"
C_FILL = "#dcdcdc"
# several flows on one plot need more than grays; muted, print-friendly
FLOW_COLORS = ["#000000", "#1f5fa8", "#b2392f", "#2e7d32", "#7b4fa0", "#b8860b", "#00838f", "#6d4c41"]
FLOW_STYLES = ["-", "--", "-.", ":"]

_RC = {
    "font.size": 8, "axes.titlesize": 9, "axes.labelsize": 8, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "legend.fontsize": 6.5, "axes.linewidth": 0.6,
    "xtick.major.width": 0.6, "ytick.major.width": 0.6, "svg.fonttype": "none",
    "svg.hashsalt": "tcplab", "pdf.compression": 6,
}


# ----------------------------------------------------------------------------- helpers
def _figure(w: float, h: float) -> Figure:
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(w, h), dpi=100)
    return fig


def _style_axes(ax) -> None:
    ax.tick_params(direction="out", length=3, width=0.6, labelsize=7)
    ax.grid(False)
    for s in ax.spines.values():
        s.set_linewidth(0.6)


def save_figure(fig: Figure, path: str | Path, fmt: str | None = None, dpi: int = 120) -> Path:
    """Save ``fig`` to ``path``; format from ``fmt`` or the suffix (png, svg, pdf)."""
    import matplotlib

    p = Path(path)
    fmt = (fmt or p.suffix.lstrip(".") or "png").lower()
    if fmt not in ("png", "svg", "pdf"):
        raise ValueError(f"unsupported plot format {fmt!r} (png, svg or pdf)")
    check_output_file(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    meta = {"png": {"Software": "tcplab"}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    extra = {"pil_kwargs": {"compress_level": PNG_COMPRESS_LEVEL}} if fmt == "png" else {}
    with matplotlib.rc_context(_RC):
        fig.savefig(p, format=fmt, dpi=dpi, metadata=meta, **extra)
    return p


def _finish(fig: Figure, path) -> Figure:
    if path is not None:
        save_figure(fig, path)
    return fig


def find_gid(fig: Figure, gid: str) -> list:
    """All artists in ``fig`` (any axes, any depth) whose gid equals ``gid``."""
    return [a for a in fig.findobj(lambda a: a.get_gid() == gid)]


def count_gid(fig: Figure, gid: str) -> int:
    """Number of drawn elements with ``gid``: points of lines, segments or offsets of
    collections, one per Text."""
    n = 0
    for a in find_gid(fig, gid):
        if isinstance(a, Line2D):
            n += len(a.get_xdata())
        elif isinstance(a, LineCollection):
            n += len(a.get_segments())
        elif hasattr(a, "get_offsets"):
            n += len(a.get_offsets())
        else:
            n += 1
    return n
