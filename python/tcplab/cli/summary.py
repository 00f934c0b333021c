"""The summary of a run as `tcplab run` prints it: links, flows, the aggregate and Jain's index,
shared bottlenecks, warnings, background traffic and UDP sources."""

from __future__ import annotations

import sys

from .._core import jain_index
from ..textable import format_table
from .args import FLOW_ROWS


def print_summary(s: dict, file=None, show_all: bool = False) -> None:
    file = file or sys.stdout
    print(f"tcplab {s['tcplab_version']}  scenario {s['scenario']}  seed {s['seed']}", file=file)
    rate = s["events"] / s["wall_s"] / 1e6 if s["wall_s"] > 0 else float("nan")
    print(f"simulated {s['sim_end_s']:.3f} s in {s['wall_s']:.3f} s wall, {s['events']} events ({rate:.2f} M events/s)\n", file=file)
    links = [l for l in s["links"] if l["packets_arrived"] > 0]
    hidden_links = 0
    if len(links) > FLOW_ROWS and not show_all:
        # The busiest directions first (the bottleneck leads), then the rest as a count.
        links = sorted(links, key=lambda l: -l["utilization"])
        hidden_links, links = len(links) - FLOW_ROWS, links[:FLOW_ROWS]
    if links:
        print(format_table(
            ["link", "rate Mbit/s", "pkts fwd", "MB fwd", "drops", "util", "queue avg", "queue max"],
            [[l["name"], l["rate_bps"] / 1e6, l["packets_forwarded"], l["bytes_forwarded"] / 1048576, l["drops"],
              l["utilization"], l["queue_avg_pkts"], l["queue_max_pkts"]] for l in links]), file=file)
        if hidden_links:
            print(f"... {hidden_links} more link directions, less busy (--all prints every one)", file=file)
        print(file=file)
    flows = s.get("flows") or []
    if flows:
        shown = flows if show_all or len(flows) <= FLOW_ROWS else flows[:FLOW_ROWS]
        print(format_table(
            ["flow", "variant", "KB acked", "KB/s", "Mbit/s", "time s", "segs", "retx segs", "retx KB", "timeouts", "fast rtx",
             "max cwnd KB", "RTT ms mean", "RTT ms max"],
            [[f["name"], f["variant"], f["bytes_acked"] / 1024, f["throughput_KBps"], f["throughput_KBps"] * 8192 / 1e6,
              f["completion_s"], f["segments_sent"],
              f["retransmitted_segments"], f["retransmitted_bytes"] / 1024, f["coarse_timeouts"], f["fast_retransmits"],
              f["max_cwnd_bytes"] / 1024,
              f["mean_rtt_s"] * 1e3 if f.get("mean_rtt_s") is not None else None,
              f["max_rtt_s"] * 1e3 if f.get("max_rtt_s") is not None else None] for f in shown]), file=file)
        if len(shown) < len(flows):
            print(f"... {len(flows) - len(shown)} more flows (--all prints every one; summary.json has them all)", file=file)
        if len(flows) > 1:
            rates = [f["throughput_KBps"] or 0.0 for f in flows]
            total = sum(rates)
            jain = jain_index(rates)
            jain = float("nan") if jain is None else jain
            print(f"all {len(flows)} flows: {total:.1f} KB/s ({total * 8192 / 1e6:.2f} Mbit/s) summed over the flows, "
                  f"{total / len(flows):.1f} KB/s mean, min {min(rates):.1f}, max {max(rates):.1f}; "
                  f"Jain's index {jain:.3f}; retransmitted {sum(f['retransmitted_bytes'] for f in flows) / 1024:.1f} KB; "
                  f"timeouts {sum(f['coarse_timeouts'] for f in flows)}, fast retransmits {sum(f['fast_retransmits'] for f in flows)}",
                  file=file)
        # Per shared bottleneck (summary.json "shared_bottlenecks"): the flows whose data crosses it.
        shared = s.get("shared_bottlenecks") or []
        for b in shared if show_all else shared[:FLOW_ROWS]:
            j = b["jain_index"]
            names = ", ".join(b["flows"][:4]) + (f", ... ({len(b['flows']) - 4} more)" if len(b["flows"]) > 4 else "")
            print(f"bottleneck {b['link']}: {len(b['flows'])} flows ({names}), {b['throughput_KBps']:.1f} KB/s "
                  f"({b['throughput_KBps'] * 8192 / 1e6:.2f} Mbit/s), Jain's index {'n/a' if j is None else f'{j:.3f}'}",
                  file=file)
        if len(shared) > FLOW_ROWS and not show_all:
            print(f"... {len(shared) - FLOW_ROWS} more shared bottlenecks (--all prints every one)", file=file)
        print("(KB = 1024 bytes; Mbit = 10^6 bits)", file=file)
        print(file=file)
    warnings = s.get("warnings") or []
    for w in warnings[:FLOW_ROWS] if not show_all else warnings:
        print(f"warning: {w}", file=file)
    if len(warnings) > FLOW_ROWS and not show_all:
        print(f"warning: ... and {len(warnings) - FLOW_ROWS} more flows like these (summary.json \"warnings\")", file=file)
    if warnings:
        print(file=file)
    if s.get("traffic"):
        # The background as a whole (seed 000 Fig 2.4): conversations, KB sent/retransmitted, Telnet echoes.
        print(format_table(
            ["traffic", "kind", "variant", "started", "done", "alive", "KB sent", "retx KB", "retx %", "KB/s",
             "timeouts", "echo ms", "echo <1s"],
            [[t["name"], t["kind"], t["variant"], t["conversations_started"], t["conversations_completed"],
              t["connections_alive_at_end"], t["sent_KB"], t["retransmitted_KB"], t["retransmitted_pct"],
              t["throughput_KBps"], t["coarse_timeouts"],
              t["telnet_echo_delay_mean_s"] * 1e3 if t["telnet_echo_delay_mean_s"] is not None else None,
              t["telnet_echo_under_1s"]] for t in s["traffic"]]), file=file)
        print(file=file)
    if s.get("udp"):
        print(format_table(
            ["udp source", "sent pkts", "recv pkts", "loss %", "mean delay ms"],
            [[u["name"], u["sent_pkts"], u["received_pkts"],
              100.0 * (1 - u["received_pkts"] / u["sent_pkts"]) if u["sent_pkts"] else 0.0,
              u["mean_delay_s"] * 1e3 if u["mean_delay_s"] is not None else None] for u in s["udp"]]), file=file)
        print(file=file)
