"""The diagnosis section of `tcplab report` (one table of the non-informational findings)."""
from __future__ import annotations

import html


def section_html(run) -> str:
    """HTML for ``run`` (a RunData); empty when the run has no TCP trace or no directory."""
    d = getattr(run, "dir", None)
    if d is None or not getattr(run, "has_tcp", False):
        return ""
    try:
        from . import diagnose_views
        from ..rundir import RunData
        from .rundir_reader import read_rundir
        # The report's own RunData when it is one: its trace rows are read once for both.
        views = read_rundir(run if isinstance(run, RunData) and not run._in_memory else d)
        fs = [f for f in diagnose_views(views) if f.severity != "info"]
    except Exception as e:  # noqa: BLE001 - the report must not fail because of a diagnosis
        return f"<h3>Diagnosis</h3><p>not available: {html.escape(str(e))}</p>"
    if not fs:
        return "<h3>Diagnosis</h3><p>No findings (tcplab diagnose: every rule passed).</p>"
    rows = "".join(f"<tr><td>{html.escape(f.severity)}</td><td>{html.escape(f.rule)}</td><td>{html.escape(f.flow)}</td>"
                   f"<td>{f.t_start:.3f}</td><td>{html.escape(f.summary)}</td><td>{html.escape(f.cites)}</td></tr>"
                   for f in fs)
    return ("<h3>Diagnosis</h3><table class=\"diagnose\"><tr><th>severity</th><th>rule</th><th>flow</th>"
            f"<th>t (s)</th><th>finding</th><th>rule cites</th></tr>{rows}</table>")
