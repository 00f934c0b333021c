"""One self-contained HTML report per run (``tcplab report``) or per reproduction
(``tcplab reproduce``).

The file needs nothing but itself: graphs are inline SVG (or inline base64 PNGs), the
stylesheet and the small script are inline, the favicon is a data: URL. It opens from disk
with no server and makes no network request.

Graphs are drawn by tcplab-plot (``_core.report_graphs``, crates/tcplab-plot/src/zsvg.rs: no
matplotlib import); a graph it leaves to Python (UDP sources on the throughput graph, a run held
in memory) is drawn by matplotlib and made ready for the zoom in Python (:mod:`.figures`).

Time-axis zoom: every graph is embedded as inline SVG (text kept as text) in the structure
matplotlib's SVG has once tagged, with a JSON description of its axes (pixel box and time range)
on the <figure>.
Dragging across a graph zooms its time axis: the script maps every time-dependent element
(lines, hash marks, markers, labels anchored at a time -- tagged in Python from each
artist's transform) to the new range by rewriting its x coordinates, clips them to the
axes, and redraws the x ticks with new labels; "reset zoom" restores the original. A
plain click enlarges the graph, as it does for PNGs. A figure whose SVG would exceed
``ZOOM_SVG_MAX_BYTES`` (very long runs) falls back to a PNG without zoom.

The package: :mod:`.page` (cells, tables, the page, the write) with the stylesheet and script as
assets (``assets/report.css``, ``assets/zoom.js``); :mod:`.figures` (a figure as zoomable SVG or
PNG); :mod:`.sections` (one run's tables and graphs); :mod:`.documents` (the entry points).
"""

from .documents import report_cli, write_comparison_report, write_report
from .figures import ZOOM_SVG_MAX_BYTES, figure_to_data_uri
from .sections import MAX_LINK_GRAPHS, MAX_TCP_GRAPHS, _relevant_links

__all__ = ["write_report", "write_comparison_report", "report_cli", "figure_to_data_uri"]
