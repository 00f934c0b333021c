"""`tcplab variants`: the TCP variants, queue disciplines, traffic patterns and profiles a scenario can name."""

from __future__ import annotations


def add_parser(sub) -> None:
    va = sub.add_parser("variants", help="list TCP variants (tcplab's and the kernel's linux-*), queue disciplines, traffic patterns and profiles",
                        description="List the TCP variants, queue disciplines, traffic patterns and profiles a scenario can name, one line "
                                    "each, and the Linux congestion controls this kernel offers for `tcplab emulate` "
                                    "(from /proc/sys/net/ipv4/tcp_available_congestion_control).")
    va.set_defaults(fn=run)


def run(a) -> int:
    import json as _json
    from .._core import schema
    defs = _json.loads(schema()).get("definitions", {})

    def enum_of(*path):
        node = defs
        for k in path:
            node = node.get(k, {})
        return node.get("enum") or []
    from .._core import tcp_variants
    registry = {name: what for name, what, _parts, _params in tcp_variants()}  # tcplab-tcp's variant table
    variants = enum_of("TcpCfg", "properties", "variant") or list(registry)
    from .._core import queue_disciplines
    disciplines = {name: (what, params) for name, what, params in queue_disciplines()}  # the core's queue registry
    patterns = [p for p in enum_of("UdpPattern")] or [p for p in PATTERN_LINES if p not in ("tcplib", "ahn")]
    print("TCP variants ([[tcp]] variant = ...; README \"TCP variants\"):")
    for v in variants:
        print(f"  {v:<14} {registry.get(v, '(see docs/variants.md)')}")
    print("\nqueue disciplines (queue = { kind = ..., limit = ... }; docs/queues.md):")
    for q, (what, params) in disciplines.items():
        print(f"  {q:<14} {what}" + (f" [params: {params}]" if params else ""))
    print("\ntraffic patterns ([[udp]] pattern = ...; [[traffic]] kind = ...):")
    for p_ in list(patterns) + ["tcplib", "ahn", "onoff (traffic)"]:
        key = p_.split(" ")[0]
        line = PATTERN_LINES.get(key, "(see README)")
        if p_ == "onoff (traffic)":
            line = "[[traffic]] on/off senders over TCP"
        print(f"  {p_:<14} {line}")
    print("\nprofiles (run.profile, or profile = ... on [[tcp]] and [[traffic]]):")
    print("  bsd-1994       the seeds' hosts (default): 50 KB buffers, no window scaling, BSD 500/200 ms ticks, IW 1")
    print("  modern         window scaling, buffers 2 x the path's BDP, RFC 6298 timer with 200 ms min RTO, IW 10, delayed ACKs")
    from ..emulate import linux_variants
    lv = linux_variants()
    print("\nLinux variants (tcplab emulate, stack = \"linux\" senders; from /proc/sys/net/ipv4/tcp_available_congestion_control):")
    for v in lv:
        print(f"  {v:<14} the kernel's {v[len('linux-'):]}")
    if not lv:
        print("  (none: this kernel lists no congestion control)")
    return 0


PATTERN_LINES = {
    "cbr": "UDP constant bit rate: packet_size at rate",
    "poisson": "UDP Poisson arrivals: mean interval (or rate), sizes fixed or exponential",
    "bursts": "UDP exponential bursts at exponential intervals, back to back, paced at the sender's access link rate (seed 002 §5)",
    "onoff": "UDP on/off (ns-2 Exponential, Pareto with shape): rate while on",
    "tcplib": "[[traffic]] tcplib conversations (Telnet, FTP, SMTP, NNTP) over TCP, x-Sim's TRAFFIC",
    "ahn": "[[traffic]] Ahn's senders: sleep exp(sleep), send a tcplib FTP item, repeat",
}
