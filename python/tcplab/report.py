"""One self-contained HTML report per run (``tcplab report``) or per reproduction
(``tcplab reproduce``).

The file needs nothing but itself: graphs are inline SVG (or inline base64 PNGs), the
stylesheet and the small script are inline, the favicon is a data: URL. It opens from disk
with no server and makes no network request.

Time-axis zoom: every graph is embedded as the inline SVG matplotlib writes (text kept as
text), with a JSON description of its axes (pixel box and time range) on the <figure>.
Dragging across a graph zooms its time axis: the script maps every time-dependent element
(lines, hash marks, markers, labels anchored at a time -- tagged in Python from each
artist's transform) to the new range by rewriting its x coordinates, clips them to the
axes, and redraws the x ticks with new labels; "reset zoom" restores the original. A
plain click enlarges the graph, as it does for PNGs. A figure whose SVG would exceed
``ZOOM_SVG_MAX_BYTES`` (very long runs) falls back to a PNG without zoom.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import json
import math
import contextlib
import os
import tempfile
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import plots
from .rundir import RunData, as_run

__all__ = ["write_report", "write_comparison_report", "report_cli", "figure_to_data_uri"]

MAX_TCP_GRAPHS = 12  # per run; a run with more flows gets the first 12 and a note
MAX_LINK_GRAPHS = 6
LONG_PATH_CHARS = 4000  # SVG paths longer than this get coordinates rounded to 0.1 pt
ZOOM_SVG_MAX_BYTES = 1_500_000  # per graph; larger graphs are embedded as PNG (no zoom)
# matplotlib writes one ~105-byte SVG element per marker, so a graph with more markers than this
# cannot fit ZOOM_SVG_MAX_BYTES: it goes to PNG without drawing the SVG first (issue 13).
ZOOM_MAX_MARKERS = ZOOM_SVG_MAX_BYTES // 105

_CSS = """
:root { --fg:#111; --mute:#666; --rule:#ccc; --bg:#fff; --band:#f4f4f4; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       color: var(--fg); background: var(--bg); margin: 0 auto; padding: 1.2em 2em 4em; max-width: 1400px; }
h1 { font-size: 1.5em; margin: .2em 0 .1em; }
h2 { font-size: 1.2em; margin: 1.6em 0 .4em; padding-bottom: .2em; border-bottom: 1px solid var(--rule); }
h3 { font-size: 1.02em; margin: 1.2em 0 .3em; }
.meta { color: var(--mute); font-size: .9em; }
table { border-collapse: collapse; font-size: .86em; margin: .4em 0 1em; }
th, td { padding: .22em .6em; border-bottom: 1px solid #e4e4e4; text-align: right; white-space: nowrap; }
th { background: var(--band); font-weight: 600; position: sticky; top: 0; }
td.s, th.s { text-align: left; }
tr.miss td { background: #fff3f0; }
.tablewrap { overflow-x: auto; max-width: 100%; }
figure { margin: .6em 0 1.2em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; cursor: zoom-in; display: block; }
figure.zoomed img { max-width: none; width: 200%; cursor: zoom-out; }
figure.zoomed { overflow-x: auto; }
figcaption { color: var(--mute); font-size: .85em; margin-top: .2em; }
.side { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 1em; align-items: start; }
details { margin: .6em 0; }
summary { cursor: pointer; font-weight: 600; }
pre { background: var(--band); padding: .8em; overflow-x: auto; font-size: .82em; }
nav a { margin-right: 1em; }
.note { color: var(--mute); font-style: italic; }
figure.zfig .zwrap { border: 1px solid #eee; max-width: var(--w); }
figure.zfig svg.zsvg { display: block; width: 100%; height: auto; cursor: crosshair; touch-action: none;
                       user-select: none; -webkit-user-select: none; }
figure.zfig.zoomed .zwrap { max-width: none; width: 200%; }
.ztool { font-size: .8em; color: var(--mute); margin-bottom: .2em; display: flex; gap: .4em; align-items: center;
         flex-wrap: wrap; }
.ztool button { font: inherit; padding: .05em .5em; cursor: pointer; }
.ztool button[disabled] { cursor: default; }
.ztool .zrange { color: var(--fg); font-variant-numeric: tabular-nums; min-width: 11em; }
"""

_JS = r"""
document.addEventListener('click', function (ev) {
  var img = ev.target.closest ? ev.target.closest('figure img') : null;
  if (!img) return;
  img.parentNode.classList.toggle('zoomed');
});
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  function niceStep(span, n) {
    var raw = span / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / mag;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10) * mag;
  }
  function decimals(step) {
    for (var d = 0; d < 12; d++) {
      var s = step * Math.pow(10, d);
      if (Math.abs(s - Math.round(s)) < 1e-6 * Math.max(1, s)) return d;
    }
    return 12;
  }
  function label(v, d) { return v.toFixed(d).replace('-', '\u2212'); }
  function num(x) { return Math.round(x * 1000) / 1000; }

  function setup(fig) {
    var meta = JSON.parse(fig.getAttribute('data-zoom'));
    var svg = fig.querySelector('svg.zsvg'), uid = meta.uid;
    var first = meta.axes[0], T0 = first.t0, T1 = first.t1, cur = [T0, T1];
    var defs = svg.querySelector('defs') || svg.insertBefore(document.createElementNS(NS, 'defs'), svg.firstChild);
    var axes = meta.axes.map(function (m, i) {
      var g = svg.querySelector('#' + uid + '-' + m.g);
      var ax = {m: m, paths: [], uses: [], texts: [], groups: [], ticks: [], made: [], tpl: null,
                clip: uid + '-zclip' + i};
      if (!g) return ax;
      var cp = document.createElementNS(NS, 'clipPath'), rc = document.createElementNS(NS, 'rect');
      cp.setAttribute('id', ax.clip);
      rc.setAttribute('x', m.x0 - 0.5); rc.setAttribute('y', 0);
      rc.setAttribute('width', m.x1 - m.x0 + 1); rc.setAttribute('height', meta.h);
      cp.appendChild(rc); defs.appendChild(cp);
      g.querySelectorAll('[id^="' + uid + '-zx"]').forEach(function (z) {
        ax.groups.push(z);
        z.querySelectorAll('path').forEach(function (p) {
          if (p.closest('defs')) return;
          var tok = p.getAttribute('d').trim().split(/\s+/), xi = [], xs = [], k = 0;
          for (var j = 0; j < tok.length; j++) {
            if (/^[A-Za-z]$/.test(tok[j])) continue;
            if (k++ % 2 === 0) { xi.push(j); xs.push(parseFloat(tok[j])); }
          }
          ax.paths.push({el: p, tok: tok, xi: xi, xs: xs});
        });
        z.querySelectorAll('use').forEach(function (u) {
          if (u.closest('defs')) return;
          ax.uses.push({el: u, x: parseFloat(u.getAttribute('x') || '0')});
        });
        z.querySelectorAll('text').forEach(function (t) {
          var tr = t.getAttribute('transform') || '', x = parseFloat(t.getAttribute('x'));
          if (isNaN(x)) { var mm = /translate\(\s*([-\d.eE]+)/.exec(tr); x = mm ? parseFloat(mm[1]) : m.x0; }
          ax.texts.push({el: t, x: x, tr: tr});
        });
      });
      g.querySelectorAll('[id^="' + uid + '-xtick_"]').forEach(function (t) {
        var u = t.querySelector('use');
        ax.ticks.push({el: t, x: u ? parseFloat(u.getAttribute('x')) : NaN});
      });
      ax.hide = Array.prototype.slice.call(g.querySelectorAll('[id^="' + uid + '-zh"]'));
      if (ax.ticks.length) ax.tpl = ax.ticks[ax.ticks.length > 1 ? 1 : 0];
      return ax;
    });
    var ntarget = Math.max(4, Math.min(10, axes[0].ticks.length || 8));

    function render(a, b) {
      var full = (a === T0 && b === T1);
      cur = [a, b];
      axes.forEach(function (ax) {
        var m = ax.m, W = m.x1 - m.x0;
        var k = (m.t1 - m.t0) / (b - a), xa = m.x0 + (a - m.t0) / (m.t1 - m.t0) * W;
        var X = function (x) { return m.x0 + (x - xa) * k; };
        ax.paths.forEach(function (p) {
          var t = p.tok.slice();
          for (var j = 0; j < p.xi.length; j++) t[p.xi[j]] = full ? p.tok[p.xi[j]] : num(X(p.xs[j]));
          p.el.setAttribute('d', t.join(' '));
        });
        ax.uses.forEach(function (u) { u.el.setAttribute('x', full ? u.x : num(X(u.x))); });
        ax.texts.forEach(function (t) {
          var dx = full ? 0 : num(X(t.x) - t.x);
          t.el.setAttribute('transform', ('translate(' + dx + ' 0) ' + t.tr).trim());
        });
        ax.groups.forEach(function (g) {
          if (full) g.removeAttribute('clip-path'); else g.setAttribute('clip-path', 'url(#' + ax.clip + ')');
        });
        (ax.hide || []).forEach(function (e) { e.style.display = full ? '' : 'none'; });
        ax.made.forEach(function (e) { e.parentNode.removeChild(e); });
        ax.made = [];
        ax.ticks.forEach(function (t) { t.el.style.display = full ? '' : 'none'; });
        if (full || !ax.tpl || isNaN(ax.tpl.x)) return;
        var step = niceStep(b - a, ntarget), d = decimals(step);
        for (var i = Math.ceil(a / step - 1e-9); i * step <= b + step * 1e-9; i++) {
          var v = i * step, px = m.x0 + (v - a) / (b - a) * W;
          var c = ax.tpl.el.cloneNode(true);
          c.removeAttribute('id');
          c.style.display = '';
          c.querySelectorAll('defs').forEach(function (e) { e.parentNode.removeChild(e); });
          c.querySelectorAll('[id]').forEach(function (e) { e.removeAttribute('id'); });
          c.setAttribute('transform', 'translate(' + num(px - ax.tpl.x) + ' 0)');
          c.setAttribute('class', 'ztick');
          c.setAttribute('data-t', label(v, d));
          var txt = c.querySelector('text');
          if (txt) txt.textContent = label(v, d);
          ax.tpl.el.parentNode.insertBefore(c, ax.tpl.el);
          ax.made.push(c);
        }
      });
      fig.setAttribute('data-t0', String(a));
      fig.setAttribute('data-t1', String(b));
      var span = b - a, d2 = Math.min(6, Math.max(0, decimals(niceStep(span, 50))));
      fig.querySelector('.zrange').textContent = full ? 'whole run: ' + label(a, d2) + ' \u2013 ' + label(b, d2) + ' s'
        : 'showing ' + label(a, d2) + ' \u2013 ' + label(b, d2) + ' s';
      fig.querySelector('.zreset').disabled = full;
      fig.querySelector('.zout').disabled = full;
      fig.querySelector('.zleft').disabled = full || a <= T0;
      fig.querySelector('.zright').disabled = full || b >= T1;
    }
    function zoom(a, b) {
      var full = T1 - T0, span = Math.max(Math.min(b - a, full), full / 5000);
      if (span >= full * (1 - 1e-9)) return render(T0, T1);
      var mid = (a + b) / 2;
      a = mid - span / 2; b = mid + span / 2;
      if (a < T0) { b += T0 - a; a = T0; }
      if (b > T1) { a -= b - T1; b = T1; }
      render(a, b);
    }
    function svgX(ev) {
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      return pt.matrixTransform(svg.getScreenCTM().inverse()).x;
    }
    function tAt(x) {
      var m = first, f = Math.min(1, Math.max(0, (x - m.x0) / (m.x1 - m.x0)));
      return cur[0] + f * (cur[1] - cur[0]);
    }
    var sel = document.createElementNS(NS, 'rect'), start = null;
    var ytop = Math.min.apply(null, meta.axes.map(function (m) { return m.y0; }));
    var ybot = Math.max.apply(null, meta.axes.map(function (m) { return m.y1; }));
    sel.setAttribute('y', ytop); sel.setAttribute('height', ybot - ytop);
    sel.setAttribute('style', 'fill: rgba(31,95,168,.15); stroke: #1f5fa8; stroke-width: .6; pointer-events: none');
    sel.setAttribute('display', 'none');
    svg.appendChild(sel);
    function clampX(x) { return Math.min(first.x1, Math.max(first.x0, x)); }
    svg.addEventListener('pointerdown', function (ev) {
      if (ev.button !== 0) return;
      start = {x: clampX(svgX(ev)), cx: ev.clientX};
      try { svg.setPointerCapture(ev.pointerId); } catch (e) { /* synthetic events */ }
      ev.preventDefault();
    });
    svg.addEventListener('pointermove', function (ev) {
      if (!start) return;
      var x = clampX(svgX(ev));
      sel.setAttribute('x', Math.min(x, start.x)); sel.setAttribute('width', Math.abs(x - start.x));
      sel.setAttribute('display', Math.abs(ev.clientX - start.cx) >= 4 ? 'inline' : 'none');
    });
    function end(ev, cancel) {
      if (!start) return;
      var s = start; start = null;
      sel.setAttribute('display', 'none');
      if (cancel) return;
      if (Math.abs(ev.clientX - s.cx) < 4) { fig.classList.toggle('zoomed'); return; }
      var x = clampX(svgX(ev)), ta = tAt(Math.min(x, s.x)), tb = tAt(Math.max(x, s.x));
      if (tb > ta) zoom(ta, tb);
    }
    svg.addEventListener('pointerup', function (ev) { end(ev, false); });
    svg.addEventListener('pointercancel', function (ev) { end(ev, true); });
    fig.querySelector('.zreset').addEventListener('click', function () { render(T0, T1); });
    fig.querySelector('.zout').addEventListener('click', function () {
      var s = cur[1] - cur[0]; zoom(cur[0] - s / 2, cur[1] + s / 2);
    });
    fig.querySelector('.zleft').addEventListener('click', function () {
      var s = cur[1] - cur[0]; zoom(cur[0] - s / 2, cur[1] - s / 2);
    });
    fig.querySelector('.zright').addEventListener('click', function () {
      var s = cur[1] - cur[0]; zoom(cur[0] + s / 2, cur[1] + s / 2);
    });
    fig.zoomTo = zoom;
    render(T0, T1);
  }
  document.querySelectorAll('figure.zfig[data-zoom]').forEach(function (f) {
    try { setup(f); } catch (e) { f.classList.add('zbroken'); if (window.console) console.warn('zoom disabled', e); }
  });
})();
"""


# ----------------------------------------------------------------------------- helpers
def figure_to_data_uri(fig, dpi: int = 110) -> str:
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context(plots._RC):
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "tcplab"})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return "—" if math.isnan(v) else str(v)
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-3):
            return f"{v:.3g}"
        if abs(v) >= 100:
            return f"{v:,.1f}"
        return f"{v:.4g}" if abs(v) < 1 else f"{v:.3f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(", ", ": "))
    return str(v)


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, cls: str = "",
           row_class=None) -> str:
    if not rows:
        return '<p class="note">(none)</p>'
    if columns is None:
        columns = []
        for r in rows:
            for k in r:
                if k not in columns:
                    columns.append(k)
    text_cols = {c for c in columns if all(isinstance(r.get(c), str) or r.get(c) is None for r in rows)}
    out = [f'<div class="tablewrap"><table class="{_e(cls)}"><thead><tr>']
    out += [f'<th class="{"s" if c in text_cols else ""}">{_e(c)}</th>' for c in columns]
    out.append("</tr></thead><tbody>")
    for r in rows:
        rc = row_class(r) if row_class else ""
        out.append(f'<tr class="{_e(rc)}">' if rc else "<tr>")
        out += [f'<td class="{"s" if c in text_cols else ""}">{_e(_fmt(r.get(c)))}</td>' for c in columns]
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


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
                 lambda m: 'd="' + re.sub(r"\s+", " ", re.sub(r"(\.\d)\d+", r"\1", m.group(1))).strip() + '"', svg)
    W, H = (float(v) * 72.0 for v in fig.get_size_inches())
    meta = {"uid": uid, "w": W, "h": H, "axes": []}
    for i, ax in enumerate(axes):
        pos = ax.get_position()
        t0, t1 = (float(v) for v in ax.get_xlim())
        meta["axes"].append({"g": f"zax{i}", "x0": round(pos.x0 * W, 4), "x1": round(pos.x1 * W, 4),
                             "y0": round((1 - pos.y1) * H, 4), "y1": round((1 - pos.y0) * H, 4), "t0": t0, "t1": t1})
    return svg, meta


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


def _page(title: str, body: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<link rel=\"icon\" href=\"data:,\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><p class=\"meta\">written by tcplab {stamp}; click a graph to enlarge it, drag across it to zoom its time axis.</p>"
        f"{body}<script>{_JS}</script></body></html>\n"
    )


def _write(path: str | Path, text: str) -> Path:
    """Write atomically (temporary file, then rename), and only over a regular file: a device,
    FIFO, socket or directory at `path` is refused, never replaced."""
    from .rundir import check_output_file
    p = Path(path)
    check_output_file(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmpname = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        check_output_file(p)
        os.replace(tmpname, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmpname)
        raise
    return p


def _as_runs(x) -> list:
    if isinstance(x, (str, Path)) or hasattr(x, "summary"):
        return [as_run(x)]
    return [as_run(r) for r in x]


def _flow_variant_title(run, conn: str) -> str:
    try:
        f = run.flow(conn)
    except KeyError:
        return conn
    v = f.get("variant")
    return f"{conn} ({v})" if v else conn


# ----------------------------------------------------------------------------- sections
def _relevant_links(run) -> list[str]:
    """The bottleneck first, then every other link that dropped packets or was >50% busy."""
    out = []
    b = run.bottleneck
    if b:
        out.append(b)
    for lk in run.summary.get("links", []):
        if lk["name"] in out:
            continue
        if (lk.get("drops") or 0) > 0 or (lk.get("utilization") or 0) > 0.5:
            out.append(lk["name"])
    return out[:MAX_LINK_GRAPHS]


def _run_section(run, anchor: str, heading: str | None = None, graphs: bool = True) -> str:
    s = run.summary
    heading = heading or f"Run: {s.get('scenario', run.dir.name)}"
    meta = {k: s.get(k) for k in ("scenario", "seed", "tcplab_version", "sim_end_s", "wall_s", "events", "bottleneck")
            if k in s}
    meta["bottleneck"] = run.bottleneck
    meta["run directory"] = str(run.dir)
    parts = [f'<section id="{_e(anchor)}"><h2>{_e(heading)}</h2>',
             _table([meta], cls="meta")]
    links = run.links.to_dicts() if run.summary.get("links") else []
    flows = run.flows.to_dicts() if run.summary.get("flows") else []
    parts += ["<h3>Links</h3>", _table(links), "<h3>Flows</h3>", _table(flows)]
    from .diagnose.report_section import section_html  # issue 29: tcplab diagnose's findings
    parts.append(section_html(run))
    if graphs:
        parts.append(_graphs_html(run, anchor))
    scen = run.scenario_text if hasattr(run, "scenario_text") else None
    if scen:
        parts.append(f"<details><summary>scenario.toml</summary><pre>{_e(scen)}</pre></details>")
    parts.append("</section>")
    return "".join(parts)


class _Pending:
    """A graph built but not yet drawn: drawn with the report's others by `_draw_pending`."""

    def __init__(self, fig, caption: str, fig_id: str):
        self.args = (fig, caption, fig_id, True, f"zg{next(_zoom_ids)}")


def _draw_pending(parts: list) -> list[str]:
    """`parts` with every _Pending drawn into its HTML. Drawing (SVG/PNG, half the report's
    time) is split with one forked child when the machine has two cores or more: the figures
    are already built, so the child runs only matplotlib (no polars, whose thread pool does not
    survive a fork) and hands back HTML text. The output is the same as drawn in one process;
    if the child fails, its share is drawn here. TCPLAB_REPORT_JOBS=1 draws in one process."""
    pend = [i for i, p in enumerate(parts) if isinstance(p, _Pending)]
    out = list(parts)
    if not pend:
        return out
    parallel = (len(pend) >= 4 and hasattr(os, "fork") and (os.cpu_count() or 1) >= 2
                and os.environ.get("TCPLAB_REPORT_JOBS", "") != "1")
    theirs_idx = pend[1::2] if parallel else []
    mine_idx = pend[0::2] if parallel else pend
    pid = r = None
    if theirs_idx:
        import pickle
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            pid = r = None
            mine_idx = pend
            theirs_idx = []
        if pid == 0:  # the child: draw its share, send the HTML, leave without cleanup
            code = 1
            try:
                os.close(r)
                data = pickle.dumps([_figure_html(*parts[i].args) for i in theirs_idx])
                with os.fdopen(w, "wb") as f:
                    f.write(data)
                code = 0
            finally:
                os._exit(code)
        if pid is not None:
            os.close(w)
    for i in mine_idx:
        out[i] = _figure_html(*parts[i].args)
    if pid is not None:
        import pickle
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        drawn = None
        if status == 0 and data:
            try:
                drawn = pickle.loads(data)
            except Exception:
                drawn = None
        if drawn is None or len(drawn) != len(theirs_idx):
            drawn = [_figure_html(*parts[i].args) for i in theirs_idx]
        for i, h in zip(theirs_idx, drawn):
            out[i] = h
    return out


def _graphs_html(run, anchor: str) -> str:
    parts: list = []
    has_tcp = getattr(run, "has_tcp", True)
    has_link = getattr(run, "has_link", True)
    conns = run.conns
    if has_tcp and conns:
        parts.append("<h3>TCP trace graphs</h3>")
        for c in conns[:MAX_TCP_GRAPHS]:
            parts.append(_Pending(plots.tcp_graph(run, c), f"TCP trace graph of {_flow_variant_title(run, c)}: "
                                  "windows, sending rate (last 12 segments), bottleneck queue",
                                      f"{anchor}-tcp-{c}"))
        if len(conns) > MAX_TCP_GRAPHS:
            parts.append(f'<p class="note">{len(conns) - MAX_TCP_GRAPHS} more flows not drawn; '
                         f'use <code>tcplab plot {_e(run.dir)} --conn NAME</code>.</p>')
        vegas = [c for c in conns if run.cam(c).height > 0]
        if vegas:
            parts.append("<h3>Vegas congestion avoidance</h3>")
            for c in vegas[:MAX_TCP_GRAPHS]:
                parts.append(_Pending(plots.cam_graph(run, c), f"CAM graph of {c}", f"{anchor}-cam-{c}"))
        parts.append("<h3>Sequence numbers</h3>")
        parts.append(_Pending(plots.seq_graph(run, conns[:MAX_TCP_GRAPHS]),
                              "Sequence number versus time (sender above, receiver below)", f"{anchor}-seq"))
    # UDP sources belong on the throughput graph too (issue 14); a run with only UDP gets it alone.
    udp_names = [u["name"] for u in run.summary.get("udp") or []]
    tcp_names = conns[:MAX_TCP_GRAPHS] if has_tcp and conns else []
    if tcp_names or udp_names:
        parts.append("<h3>Throughput over time</h3>")
        what = ("Per-flow throughput (TCP from ACK progress, UDP from datagrams forwarded), with the "
                "bottleneck capacity" if udp_names else "Per-flow throughput from ACK progress, with the "
                "bottleneck capacity")
        parts.append(_Pending(plots.flows_graph(run, conns=tcp_names + udp_names), what,
                              f"{anchor}-flows"))
    if has_link:
        for lk in _relevant_links(run):
            parts.append(f"<h3>Link {_e(lk)}</h3>")
            parts.append(_Pending(plots.link_graph(run, lk), f"Output bandwidth of {lk} (100 ms thin, 300 ms "
                                  "thick), drops marked on the axis", f"{anchor}-link-{lk}"))
            parts.append(_Pending(plots.queue_graph(run, lk), f"Queue size at {lk}: min–max per 100 ms "
                                  "with the average", f"{anchor}-queue-{lk}"))
    return "".join(_draw_pending(parts))


# ----------------------------------------------------------------------------- public API
def write_report(run_dirs_or_run, path: str | Path, *, title: str | None = None) -> Path:
    """Write ONE self-contained HTML file for one run or several (a run directory, a RunData,
    or a list of either): per run the summary tables (links, flows) and every relevant
    graph -- the TCP trace graph of each flow (first 12), the CAM graph of each Vegas flow,
    the sequence plot, per-flow throughput, and bandwidth + queue graphs for the bottleneck
    and every link that dropped packets or was more than half busy. Returns the path."""
    runs = _as_runs(run_dirs_or_run)
    if not runs:
        raise ValueError("write_report: no runs given")
    if title is None:
        title = "tcplab report — " + ", ".join(str(r.summary.get("scenario", r.dir.name)) for r in runs[:4])
        if len(runs) > 4:
            title += f" and {len(runs) - 4} more"
    body = []
    if len(runs) > 1:
        body.append("<nav>" + "".join(f'<a href="#run{i}">{_e(r.summary.get("scenario", r.dir.name))} '
                                      f'(seed {_e(r.summary.get("seed"))})</a>' for i, r in enumerate(runs)) + "</nav>")
    for i, r in enumerate(runs):
        body.append(_run_section(r, f"run{i}"))
    return _write(path, _page(title, "".join(body)))


def _rows_to_dicts(rows) -> list[dict]:
    if rows is None:
        return []
    if hasattr(rows, "to_dicts"):  # polars
        return rows.to_dicts()
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # pandas
        return rows.to_dict(orient="records")
    out = []
    for r in rows:
        if isinstance(r, Mapping):
            out.append(dict(r))
        elif hasattr(r, "_asdict"):
            out.append(r._asdict())
        elif hasattr(r, "__dataclass_fields__"):
            import dataclasses

            out.append(dataclasses.asdict(r))
        else:
            vals = list(r)
            out.append(dict(zip(["variant", "metric", "paper", "ours"], vals)))
    return out


def _pick_conn(run, variant: str) -> str | None:
    for f in run.summary.get("flows", []):
        if str(f.get("variant", "")).lower() == str(variant).lower():
            return f["name"]
    return run.conns[0] if run.conns else None


def _spread_rows(rows: list[dict]) -> list[dict]:
    """Rows aggregated over several runs (reproduce with seeds/axes) shown as ours = mean ± std
    and a min .. max column; n and the 90 % interval kept; raw mean/std/min/max folded in."""
    out = []
    for r in rows:
        if r.get("n", 1) and r.get("n", 1) > 1 and "std" in r:
            d = {k: v for k, v in r.items() if k not in ("mean", "std", "min", "max", "ci90", "ours", "n", "seeds")}
            ours = _fmt(r.get("ours"))
            if r.get("std") is not None:
                ours += f" ± {_fmt(r['std'])}"
            d["ours"] = ours
            d["min .. max"] = f"{_fmt(r.get('min'))} .. {_fmt(r.get('max'))}"
            d["ci90 ±"] = r.get("ci90")
            d["n"] = r.get("n")
            out.append(d)
        else:
            out.append({k: v for k, v in r.items() if k not in ("mean", "std", "ci90", "n")} if r.get("n") == 1 else dict(r))
    return out


def write_comparison_report(out_dir: str | Path, comparison_rows, runs: Mapping[str, Any],
                            path: str | Path | None = None, *, title: str | None = None,
                            claims: Sequence[Mapping[str, Any]] | None = None) -> Path:
    """The ``tcplab reproduce`` report: the paper-vs-ours table (rows with at least
    variant, metric, paper, ours; extra keys such as unit or note become extra columns),
    then the TCP trace graphs of the variants side by side (Reno beside Vegas, as in thesis
    Figs 4.1 and 4.3), then each run's full section. ``runs`` maps a variant name to its run
    directory (or RunData). ``path`` defaults to OUT_DIR/report.html; a relative path is
    taken inside ``out_dir``. Rows aggregated over several runs show mean ± std and min .. max;
    ``claims`` (text, expr, held, values) get their own held/missed table. Returns the path."""
    out_dir = Path(out_dir)
    p = Path(path) if path is not None else Path("report.html")
    if not p.is_absolute():
        p = out_dir / p
    rows = _spread_rows(_rows_to_dicts(comparison_rows))
    loaded = {v: as_run(r) for v, r in runs.items()}
    title = title or "tcplab reproduction — paper vs ours"
    cols = ["variant", "metric", "paper", "ours"]
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)

    def miss(r):
        for k in ("ok", "pass", "within"):
            if k in r and r[k] is False:
                return "miss"
        return ""

    body = ["<h2>Paper vs ours</h2>", _table(rows, cols, cls="comparison", row_class=miss)]
    if claims:
        crow = [{"claim": c.get("text", ""), "result": "held" if c.get("held") else "missed",
                 "numbers": ", ".join(f"{k} = {_fmt(v)}" for k, v in (c.get("values") or {}).items()),
                 "expression": c.get("expr", "")} for c in claims]
        body += ["<h2>Claims</h2>", _table(crow, ["claim", "result", "numbers", "expression"], cls="claims",
                                           row_class=lambda r: "miss" if r["result"] == "missed" else "")]
    if loaded:
        body.append("<h2>TCP trace graphs side by side</h2><div class=\"side\">")
        for v, run in loaded.items():
            c = _pick_conn(run, v)
            if c is None or not getattr(run, "has_tcp", True):
                body.append(f"<div><h3>{_e(v)}</h3><p class=\"note\">no TCP trace</p></div>")
                continue
            body.append(f"<div><h3>{_e(v)}</h3>" + _figure_html(plots.tcp_graph(run, c),
                        f"{v}: TCP trace graph of {c}", f"side-{v}") + "</div>")
        body.append("</div>")
        body.append("<nav>" + "".join(f'<a href="#v{i}">{_e(v)}</a>' for i, v in enumerate(loaded)) + "</nav>")
        for i, (v, run) in enumerate(loaded.items()):
            body.append(_run_section(run, f"v{i}", heading=f"{v}: {run.summary.get('scenario', run.dir.name)}"))
    return _write(p, _page(title, "".join(body)))


def report_cli(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """What ``tcplab report RUN_DIR`` does: RUN_DIR/report.html unless ``out`` is given (a
    file, or a directory to put report.html in). Returns the path written."""
    run = RunData.load(run_dir)
    if out is None:
        target = run.dir / "report.html"
    else:
        target = Path(out)
        if target.is_dir() or (not target.suffix and not target.exists()):
            target = target / "report.html"
    return write_report(run, target)
