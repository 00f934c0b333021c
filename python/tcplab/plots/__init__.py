"""The graphs that make a trace readable (seed 000 §2.3, §3.5, §4.3; 001 §2.2; 002; 004).

The package: :mod:`.style` (palette, rc, saving, gid helpers) and :mod:`.series` (the data, no
drawing) underneath; :mod:`.draw` (marks and panels several graphs share) on them;
:mod:`.tcp` (per-connection graphs) and :mod:`.links` (per-link and whole-run graphs) on top;
:mod:`.files` is ``tcplab plot`` (which graphs, which files).

Every function takes a run (a :class:`tcplab.rundir.RunData`, a run directory path, or any
object with the same accessors), returns a :class:`matplotlib.figure.Figure`, and also
saves it when ``path`` is given (format from the suffix: .png, .svg, .pdf).

Figures are built with ``matplotlib.figure.Figure`` directly (no pyplot, Agg canvas), so
they hold no global state, never open windows and are safe to make in worker processes.

The distinctive elements carry a gid so tests (and users) can find them in the figure:

==========================  =======================================================
gid                         what (tcp_graph, windows panel unless said otherwise)
==========================  =======================================================
``send-marks``              hash marks at the top, one per segment sent (incl. retransmits)
``ack-marks``               hash marks on the x-axis, one per ACK received (incl. dup ACKs)
``tick-diamonds``           diamonds at the top, one per coarse (500 ms) timer tick
``timeout-circles``         circles at the top, one per coarse timeout
``retx-lines``              full-height vertical lines at the original send time of every
                            segment that is later retransmitted (``retx-lines:<panel>`` on
                            the other panels)
``kb-label``                Text artists: the KB count along the top; the last is the total
``line-ssthresh`` ...       the window lines: line-ssthresh, line-sndwnd, line-cwnd, line-unacked
``rate-line``               sending rate over the last 12 segments (middle panel)
``queue-line``              bottleneck queue length (bottom panel)
``cam-expected`` ...        CAM panel: cam-expected, cam-actual, cam-alpha, cam-beta,
                            cam-decisions (one tick per decision)
``seq-data:<conn>`` ...     seq_graph: seq-data, seq-ack, seq-retx, seq-rcv, seq-rcvack
``link-thin``/``link-thick`` link_graph averages; ``drop-marks`` one mark per drop;
                            ``capacity``
``queue-bars``/``queue-avg`` queue_graph min–max bars and averages
``flow-tput:<conn>``        flows_graph per-flow throughput; ``flow-udp:<source>`` a UDP source's; ``flow-total``; ``capacity``
==========================  =======================================================

:func:`count_gid` counts the elements an artist with a gid draws (points of a Line2D,
segments of a LineCollection, 1 per Text).
"""

from .files import plot_cli
from .links import flow_throughput, flows_graph, link_bandwidth, link_graph, queue_graph, udp_throughput
from .series import (cam_scale_KBps_per_buffer, decimate_points, decimate_step, kb_marks, retransmitted_originals,
                     send_window, sending_rate)
from .style import _RC, PLOT_KINDS, count_gid, find_gid, save_figure
from .tcp import cam_graph, seq_graph, tcp_graph

__all__ = [
    "tcp_graph", "cam_graph", "seq_graph", "link_graph", "queue_graph", "flows_graph",
    "plot_cli", "count_gid", "find_gid", "save_figure", "PLOT_KINDS",
]
