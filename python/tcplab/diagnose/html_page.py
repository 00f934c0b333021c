"""The HTML page of a diagnosis: per finding its rule, citation, evidence, cost, and a zoomed
Brakmo trace graph around the event (drawn by ``tcplab.plots.tcp_graph``; a pcap's flows are
drawn from their inferred trace through the same function)."""
from __future__ import annotations

import html
from pathlib import Path

from .model import Finding, FlowView

_CSS = ("body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}"
        ".bug{color:#a00}.warning{color:#a60}.info{color:#555}"
        "section{border-top:1px solid #ccc;margin-top:1em}img{max-width:100%}"
        "td,th{padding:2px 8px;text-align:left;vertical-align:top}")


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _window(f: Finding, rtt: float) -> tuple[float, float]:
    pad = max(4 * rtt, 0.5)
    return max(0.0, f.t_start - pad), f.t_end + pad


def write_page(findings: list[Finding], views: list[FlowView], source: str, out: Path,
               run=None, max_graphs: int = 40) -> Path:
    """Write ``out`` (HTML) and its graphs beside it (``out.stem``-files/), and set each drawn
    finding's ``graph``. ``run``: a RunData (or in-memory run) to draw from; None draws no graphs."""
    out = Path(out)
    gdir = out.parent / (out.stem + "-graphs")
    rtts = {v.name: v.rtt() for v in views}
    drawn = 0
    if run is not None:
        from .. import plots
        import matplotlib.pyplot as plt
        gdir.mkdir(parents=True, exist_ok=True)
        for i, f in enumerate(findings):
            if f.severity == "info" or drawn >= max_graphs:
                continue
            t0, t1 = _window(f, rtts.get(f.flow, 0.2))
            name = f"{i:03d}-{f.rule}.png"
            try:
                fig = plots.tcp_graph(run, f.flow, t0, t1, path=gdir / name,
                                      title=f"{f.flow}: {f.rule} at {f.t_start:.2f}s")
                plt.close(fig)
            except Exception as e:  # noqa: BLE001 - a graph must never sink the diagnosis
                f.evidence.append(f"(graph not drawn: {e})")
                continue
            f.graph = f"{gdir.name}/{name}"
            drawn += 1
    rows = []
    for i, f in enumerate(findings):
        ev = "".join(f"<li>{_e(x)}</li>" for x in f.evidence)
        cost = ", ".join(x for x in (f"{f.cost_bytes/1024:.1f} KB" if f.cost_bytes else "",
                                      f"{f.cost_s:.2f} s" if f.cost_s else "") if x) or "—"
        img = f'<p><a href="{_e(f.graph)}"><img src="{_e(f.graph)}" alt="trace graph"></a></p>' if f.graph else ""
        rows.append(f'<section id="f{i}"><h3 class="{_e(f.severity)}">{_e(f.flow)}: {_e(f.rule)}'
                    f'{" (inferred)" if f.inferred else ""} — {f.t_start:.3f}–{f.t_end:.3f} s</h3>'
                    f"<p>{_e(f.summary)}</p><p>Rule: {_e(f.cites)}; cost: {_e(cost)}; segments: "
                    f"{_e(', '.join(map(str, f.segments)) or '—')}</p><ul>{ev}</ul>{img}</section>")
    index = "".join(f'<tr><td class="{_e(f.severity)}">{_e(f.severity)}</td><td><a href="#f{i}">{_e(f.rule)}</a></td>'
                    f"<td>{_e(f.flow)}</td><td>{f.t_start:.3f}</td><td>{_e(f.summary)}</td></tr>"
                    for i, f in enumerate(findings))
    notes = "".join(f"<li>{_e(v.name)}: {_e(n)}</li>" for v in views for n in v.notes)
    body = (f"<h1>tcplab diagnose: {_e(source)}</h1><p>{len(findings)} findings in {len(views)} flows.</p>"
            + (f"<ul>{notes}</ul>" if notes else "")
            + f"<table><tr><th>severity</th><th>rule</th><th>flow</th><th>t (s)</th><th>what</th></tr>{index}</table>"
            + "".join(rows))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>diagnose {_e(source)}</title>'
                   f"<style>{_CSS}</style></head><body>{body}</body></html>\n", encoding="utf-8")
    return out
