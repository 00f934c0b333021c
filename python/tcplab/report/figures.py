"""A matplotlib figure as HTML: inline SVG made ready for the zoom script (time-dependent
elements tagged, long paths rounded, adjacent paths merged), or a base64 PNG when it would be too big."""

from __future__ import annotations

import base64
import io
import itertools
import json
import re

from .page import _e


LONG_PATH_CHARS = 4000  # SVG paths longer than this get coordinates rounded to 0.1 pt
ZOOM_SVG_MAX_BYTES = 1_500_000  # per graph; larger graphs are embedded as PNG (no zoom)
# matplotlib writes one ~105-byte SVG element per marker, so a graph with more markers than this
# cannot fit ZOOM_SVG_MAX_BYTES: it goes to PNG without drawing the SVG first (issue 13).
ZOOM_MAX_MARKERS = ZOOM_SVG_MAX_BYTES // 105


def figure_to_data_uri(fig, dpi: int = 110) -> str:
    import matplotlib

    from .. import plots

    buf = io.BytesIO()
    with matplotlib.rc_context(plots._RC):
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "tcplab"})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")

_zoom_ids = itertools.count()


def _zoomable_svg(fig, uid: str) -> tuple[str, dict] | None:
    """``fig`` as inline SVG ready for the zoom script, with its axes description; None if
    the figure has no axes or the SVG would be larger than ZOOM_SVG_MAX_BYTES.

    Tags (gids; the figure is the report's own copy) each axes ``zaxN`` and every artist
    whose x position is in data (time) coordinates ``zxN`` (``zxN-<its gid>`` when it had
    one), then prefixes every SVG id
    with ``uid`` so several graphs can live in one HTML document. Annotations anchored at a
    data point (the flow names on the sequence plot) are tagged ``zhN`` and hidden while
    zoomed, since their point offset cannot be mapped exactly."""
    import matplotlib
    from matplotlib.axis import Axis
    from matplotlib.text import Annotation

    from .. import plots

    axes = [ax for ax in fig.axes if ax.get_visible()]
    if not axes:
        return None
    if _marker_count(fig) > ZOOM_MAX_MARKERS:
        return None
    n = 0
    for i, ax in enumerate(axes):
        ax.set_gid(f"zax{i}")
        skip = {id(ax.patch), id(ax.legend_), id(ax.title), id(getattr(ax, "_left_title", None)),
                id(getattr(ax, "_right_title", None))} | {id(sp) for sp in ax.spines.values()}
        for art in ax.get_children():
            if id(art) in skip or isinstance(art, Axis):
                continue
            if isinstance(art, Annotation) and art.xycoords == "data":
                art.set_gid(f"zh{n}")  # a label offset from a data point: hidden while zoomed
                n += 1
                continue
            xdata = False
            for getter in ("get_transform", "get_offset_transform"):
                try:
                    xdata = xdata or bool(getattr(art, getter)().contains_branch_seperately(ax.transData)[0])
                except Exception:
                    pass
            if xdata:  # keep the plot's own gid readable after the tag (zx3-retx-lines)
                orig = re.sub(r"[^A-Za-z0-9_.:-]+", "_", str(art.get_gid() or ""))
                art.set_gid(f"zx{n}-{orig}" if orig else f"zx{n}")
                n += 1
    buf = io.BytesIO()
    with matplotlib.rc_context(plots._RC):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    if buf.tell() > ZOOM_SVG_MAX_BYTES:
        return None
    svg = buf.getvalue().decode("utf-8")
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, count=1, flags=re.S)
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{uid}-{m.group(1)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{uid}-{m.group(1)})", svg)
    svg = re.sub(r'xlink:href="#([^"]+)"', lambda m: f'xlink:href="#{uid}-{m.group(1)}"', svg)
    svg = re.sub(r'<svg ([^>]*?)width="[^"]*" height="[^"]*"', r'<svg class="graph zsvg" \1', svg, count=1)
    svg = re.sub(r">\n\s*<", "><", svg)  # the indentation between elements
    svg = _merge_adjacent_paths(svg)
    # Long paths (a long run's series, merged marks): coordinates to 0.1 pt (matplotlib writes 6
    # decimals) on one line, under half the bytes; a tenth of a point (0.14 px of an 800 px graph)
    # stays under a pixel at 4x zoom. Short paths keep matplotlib's precision.
    svg = re.sub(r'\bd="([^"]{%d,})"' % LONG_PATH_CHARS,
                 lambda m: 'd="' + _implicit_lineto(re.sub(r"(\.\d)\d+", r"\1", m.group(1)).split()) + '"', svg)
    W, H = (float(v) * 72.0 for v in fig.get_size_inches())
    meta = {"uid": uid, "w": W, "h": H, "axes": []}
    for i, ax in enumerate(axes):
        pos = ax.get_position()
        t0, t1 = (float(v) for v in ax.get_xlim())
        meta["axes"].append({"g": f"zax{i}", "x0": round(pos.x0 * W, 4), "x1": round(pos.x1 * W, 4),
                             "y0": round((1 - pos.y1) * H, 4), "y1": round((1 - pos.y0) * H, 4), "t0": t0, "t1": t1})
    return svg, meta


def _implicit_lineto(tok: list[str]) -> str:
    """Path tokens joined by one space, without the ``L`` that repeats a moveto's or lineto's own
    command (SVG: coordinate pairs after M or L are implicit linetos): the same path, a sixth fewer
    bytes on a long series. The zoom script still reads every number as alternating x and y."""
    out: list[str] = []
    cmd = ""
    for i, t in enumerate(tok):
        if len(t) == 1 and t.isalpha():
            if t == "L" and cmd in ("M", "L") and i > 0 and not tok[i - 1].isalpha():
                cmd = "L"
                continue
            cmd = t
        out.append(t)
    return " ".join(out)


def _marker_count(fig) -> int:
    """Markers the figure's lines draw (each one an element in SVG)."""
    from matplotlib.lines import Line2D
    n = 0
    for ax in fig.axes:
        for ln in ax.get_lines():
            if isinstance(ln, Line2D) and ln.get_visible() and ln.get_marker() not in (None, "None", "none", "", " "):
                n += len(ln.get_xdata())
    return n


_PATH_EL = re.compile(r'<path d="([^"]*)"((?: clip-path="[^"]*")?) style="([^"]*)"/>')


def _merge_adjacent_paths(svg: str) -> str:
    """Adjacent <path> elements with the same clip and style (a LineCollection: one element per
    segment) become one element whose d lists every segment: the same drawing, the zoom script
    rewrites every x in a d the same way, and a 600-bar queue graph is a tenth of the bytes."""
    out, pos, run = [], 0, None  # run: [start, end, clip, style, [d...]]

    def flush():
        if run:
            out.append(f'<path d="{" ".join(run[4])}"{run[2]} style="{run[3]}"/>')

    for m in _PATH_EL.finditer(svg):
        if run and m.start() == run[1] and m.group(2) == run[2] and m.group(3) == run[3]:
            run[4].append(m.group(1))
            run[1] = m.end()
            continue
        if run:
            flush()
            pos = run[1]
        out.append(svg[pos:m.start()])
        run = [m.start(), m.end(), m.group(2), m.group(3), [m.group(1)]]
    if run:
        flush()
        pos = run[1]
    out.append(svg[pos:])
    return "".join(out)


_ZOOM_TOOLS = ('<div class="ztool"><button type="button" class="zreset" disabled>reset zoom</button>'
               '<button type="button" class="zout" title="zoom out">&minus;</button>'
               '<button type="button" class="zleft" title="earlier">&#9664;</button>'
               '<button type="button" class="zright" title="later">&#9654;</button>'
               '<span class="zrange"></span><span class="zhint">drag across the graph to zoom the time axis; '
               'click to enlarge</span></div>')


def _figure_html(fig, caption: str, fig_id: str = "", zoom: bool = True, uid: str | None = None) -> str:
    idattr = f' id="{_e(fig_id)}"' if fig_id else ""
    z = _zoomable_svg(fig, uid or f"zg{next(_zoom_ids)}") if zoom else None
    if z is not None:
        svg, meta = z
        t0, t1 = meta["axes"][0]["t0"], meta["axes"][0]["t1"]
        return (f'<figure{idattr} class="zfig" style="--w:{meta["w"] * 110 / 72:.0f}px" '
                f'data-zoom="{_e(json.dumps(meta, separators=(",", ":")))}" data-t0="{t0:g}" data-t1="{t1:g}">'
                f'{_ZOOM_TOOLS}<div class="zwrap" role="img" aria-label="{_e(caption)}">{svg}</div>'
                f"<figcaption>{_e(caption)}</figcaption></figure>")
    uri = figure_to_data_uri(fig)
    return (f'<figure{idattr}><img class="graph" alt="{_e(caption)}" src="{uri}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _native_html(answer: tuple, caption: str, fig_id: str = "") -> str:
    """A graph drawn by tcplab-plot (``_core.report_graphs``: ("svg", svg, data-zoom JSON) or
    ("png", bytes)) as the same <figure> ``_figure_html`` writes for a matplotlib figure."""
    idattr = f' id="{_e(fig_id)}"' if fig_id else ""
    if answer[0] == "svg":
        svg, meta_json = answer[1], answer[2]
        meta = json.loads(meta_json)
        t0, t1 = meta["axes"][0]["t0"], meta["axes"][0]["t1"]
        return (f'<figure{idattr} class="zfig" style="--w:{meta["w"] * 110 / 72:.0f}px" '
                f'data-zoom="{_e(meta_json)}" data-t0="{t0:g}" data-t1="{t1:g}">'
                f'{_ZOOM_TOOLS}<div class="zwrap" role="img" aria-label="{_e(caption)}">{svg}</div>'
                f"<figcaption>{_e(caption)}</figcaption></figure>")
    uri = "data:image/png;base64," + base64.b64encode(answer[1]).decode("ascii")
    return (f'<figure{idattr}><img class="graph" alt="{_e(caption)}" src="{uri}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")
