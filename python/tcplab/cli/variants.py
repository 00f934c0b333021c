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
    variants = enum_of("TcpCfg", "properties", "variant") or list(VARIANT_LINES)
    queues = enum_of("QueueCfg", "properties", "kind") or list(QUEUE_LINES)
    patterns = [p for p in enum_of("UdpPattern")] or [p for p in PATTERN_LINES if p not in ("tcplib", "ahn")]
    print("TCP variants ([[tcp]] variant = ...; README \"TCP variants\"):")
    for v in variants:
        print(f"  {v:<14} {VARIANT_LINES.get(v, '(see README)')}")
    print("\nqueue disciplines (queue = { kind = ... }):")
    for q in queues:
        print(f"  {q:<14} {QUEUE_LINES.get(q, '(see README)')}")
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


VARIANT_LINES = {
    "tahoe": "4.3BSD-Tahoe: slow start, linear increase, fast retransmit then slow start",
    "reno": "4.3BSD-Reno: Tahoe + fast recovery (window inflation, deflation to ssthresh); BSD timers",
    "newreno": "RFC 6582: Reno with partial ACKs in recovery; fine RFC 6298 timer",
    "sack": "ns-2 Sack1: Reno increase, SACK scoreboard and pipe (Fall & Floyd 1996)",
    "sack-rfc6675": "RFC 6675 SACK loss recovery (IsLost, SetPipe, NextSeg), D-SACK receiver; fine timer",
    "vegas": "Brakmo's Vegas: Expected/Actual/Diff per RTT, alpha=1, beta=3, fine per-segment timeouts",
    "vegas-star": "Vegas with Vegas* slow start (threshold from ACK spacing), seed 000 §4.4",
    "lite": "= lite.0",
    "lite.0": "4.4BSD-Lite as shipped, bugs included (header prediction, RTO, MSS/8 term, ...)",
    "lite.1": "Lite + header-prediction fix (seed 001 Table 3)",
    "lite.2": "Lite.1 + RTO fix",
    "lite.3": "Lite.2 + no timestamps",
    "lite.4": "Lite.3 + no MSS/8 term in linear increase",
    "lite.5": "Lite.4 + ACK every packet",
    "lite.6": "Lite.4 + big-ACK limit",
    "scalable-ecn": "Kelly's scalable TCP (seed 003): real cwnd, +a per unmarked ACK, ×(1−b) per mark, paced sends",
}


QUEUE_LINES = {
    "droptail": "first in, first out; drops arrivals when full (limit in packets or bytes); default 50 packets",
    "red": "Random Early Detection (Floyd & Jacobson 1993), ns-2 defaults; ecn = true marks instead of dropping",
    "ared": "Adaptive RED (Floyd, Gummadi, Shenker 2001): thresholds from target_delay, max_p adapted",
    "vq": "Kelly's virtual-queue ECN marker (seed 003 eq. 11): a virtual queue at theta·C marks with 1 − exp(−phi·b/s)",
}


PATTERN_LINES = {
    "cbr": "UDP constant bit rate: packet_size at rate",
    "poisson": "UDP Poisson arrivals: mean interval (or rate), sizes fixed or exponential",
    "bursts": "UDP exponential bursts at exponential intervals, back to back, paced at the sender's access link rate (seed 002 §5)",
    "onoff": "UDP on/off (ns-2 Exponential, Pareto with shape): rate while on",
    "tcplib": "[[traffic]] tcplib conversations (Telnet, FTP, SMTP, NNTP) over TCP, x-Sim's TRAFFIC",
    "ahn": "[[traffic]] Ahn's senders: sleep exp(sleep), send a tcplib FTP item, repeat",
}
