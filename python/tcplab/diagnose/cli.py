"""The `tcplab diagnose` command: ``add_parser(sub)`` registers it, ``run(args)`` runs it.

Exit status 0 whenever the input could be read (findings are not errors); a file that cannot be
read is the usual error (exit 2, one line) of the tcplab command line.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def add_parser(sub) -> None:
    d = sub.add_parser("diagnose", help="find TCP performance bugs in a run directory or a pcap (Lite-study rules)",
                       description="Check every TCP sender of RUN_DIR or PCAP against the diagnosis rules "
                                   "(docs/diagnose.md) and print the findings per flow.")
    d.add_argument("source", metavar="RUN_DIR|PCAP", help="a tcplab run directory (with run.trace.tcp) or a pcap/pcapng capture")
    d.add_argument("--flow", help="only this flow (a run's flow name; a pcap's 'ip:port>ip:port')")
    d.add_argument("--json", action="store_true", help="print the findings as JSON")
    d.add_argument("--html", metavar="FILE", help="also write an HTML page with a zoomed trace graph per finding "
                                                   "(default for a run directory: RUN_DIR-diagnose.html)")
    d.add_argument("--no-html", action="store_true", help="write no HTML page")
    d.add_argument("--all", action="store_true", help="also print informational findings")
    d.set_defaults(fn=run)


def run(a) -> int:
    from . import diagnose_views, load_flows
    src = Path(a.source)
    views = load_flows(src, a.flow)
    if not views:
        print(f"{src}: no TCP flow carrying data" + (f" named {a.flow!r}" if a.flow else ""))
        return 0
    findings = diagnose_views(views)
    page = None
    if not a.no_html:
        page = Path(a.html) if a.html else (src.parent / f"{src.name}-diagnose.html")
        runobj = None
        if src.is_dir():
            from ..rundir import RunData
            runobj = RunData.load(src)
        else:
            from .pcap_reader import as_run
            runobj = as_run(views)
        from .html_page import write_page
        write_page(findings, views, str(src), page, run=runobj)
    if a.json:
        json.dump({"source": str(src), "html": str(page) if page else None,
                   "flows": [{"name": v.name, "inferred": v.inferred, "variant": v.variant, "notes": v.notes}
                             for v in views],
                   "findings": [f.as_dict() for f in findings]}, sys.stdout, indent=1)
        print()
        return 0
    for v in views:
        fs = [f for f in findings if f.flow == v.name and (a.all or f.severity != "info")]
        hidden = sum(1 for f in findings if f.flow == v.name and f.severity == "info" and not a.all)
        tag = " (sender state inferred from the capture)" if v.inferred else ""
        print(f"flow {v.name}{' (' + v.variant + ')' if v.variant else ''}{tag}: "
              f"{len(fs)} findings" + (f", {hidden} informational (--all)" if hidden else ""))
        for f in fs:
            print("  " + f.line())
            print(f"      rule: {f.cites}")
            for e in f.evidence[:3]:
                print(f"      {e}")
            cost = [x for x in (f"{f.cost_bytes/1024:.1f} KB" if f.cost_bytes else "", f"{f.cost_s:.2f} s" if f.cost_s else "") if x]
            if cost:
                print(f"      cost: {', '.join(cost)}")
            if f.graph and page:
                print(f"      graph: {page.parent / f.graph}")
    if page:
        print(f"page: {page}")
    return 0
