#!/usr/bin/env python3
"""ns-3 counterpart of tcplab's `tcp_dumbbell` benchmark (python/tcplab/bench.py).

Run it with a Python that has the ns-3 wheel (kept out of tcplab's own venv):

    python3.11 -m venv /tmp/venv-ns3 && /tmp/venv-ns3/bin/pip install ns3==3.44.post0
    /tmp/venv-ns3/bin/python benches/ns3/dumbbell.py 16

This script only imports the `ns3` package; no ns-3 code lives in this repository.

Scenario (as tcplab's `tcp_dumbbell(N)`):
  * s_i --(100 Mb/s, 1 ms, 1000-packet DropTail)-- left --(30 Mb/s, 50 ms, 128 KB = 131072-byte
    DropTail)-- right --(100 Mb/s, 1 ms, 1000-packet DropTail)-- d_i, for i < N; the same queue
    limits in both directions of each link;
  * N long-lived TcpNewReno flows s_i -> d_i (BulkSend -> PacketSink), flow i starting at
    (i*7 % 100) ms, running to 60 s of simulated time;
  * MSS 1448 B, 1 MB send/receive buffers, window scaling on, timestamps off, SACK off,
    initial window 1 segment, initial ssthresh 65535 B, receiver ACKs every segment
    (DelAckCount 1), min RTO 1 s, initial RTO 1 s (also for the SYN), timer granularity 1 ms,
    no limited transmit, classic (RFC 6582-style) recovery instead of ns-3's default PRR,
    Nagle on — tcplab's `newreno` defaults (crates/tcplab-tcp/src/config.rs).

Queueing choice: the traffic-control layer is taken out of the path (the queue discs that
Ipv4AddressHelper installs by default are uninstalled), so each link direction has exactly one
queue, the PointToPointNetDevice's DropTailQueue: 131072 bytes on the bottleneck, 1000 packets
on the access links. The packet being transmitted is not in that queue (as in tcplab, whose
queues default to count_in_service = false). Unavoidable: ns-3 counts the 2-byte PPP header in
the queue's bytes and in the transmission time (tcplab: IP bytes, no framing overhead), and the
device stops accepting packets once another MTU (1500 B) would not fit, so a 1490-byte packet is
refused when more than 129572 bytes are queued (tcplab: when it would exceed 131072); those
refusals are drops in ns-3's traffic-control layer, counted here with the queue's own drops.

Timing: the wall time of Simulator.Run() alone, and of the whole script including
`from ns import ns` (the ns-3/cppyy import dominates start-up). tcplab's numbers for the same
case are computed afterwards in a separate process (tcplab's venv, see --tcplab-python) so the
two simulators never share the process or run concurrently.
"""

from __future__ import annotations

import time

T_PROCESS0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

BOTTLENECK_RATE_BPS = 30_000_000
PPP_HEADER = 2
REPO = Path(__file__).resolve().parents[2]

TCPLAB_SNIPPET = r"""
import json, sys
sys.path.insert(0, sys.argv[3])
import tcplab
from tcplab import bench
r = tcplab.run(bench.tcp_dumbbell(int(sys.argv[1]), duration=sys.argv[2]))
s = r.summary
bn = next(l for l in s["links"] if l["name"] == s["bottleneck"])
print(json.dumps({
    "wall_s": s["wall_s"], "events": s["events"],
    "bytes_acked": sum(f["bytes_acked"] for f in s["flows"]),
    "bytes_delivered": sum(f.get("bytes_delivered", 0) for f in s["flows"]),
    "bottleneck_ip_bytes": bn["bytes_forwarded"], "bottleneck_packets": bn["packets_forwarded"],
    "bottleneck_drops": bn["drops"],
}))
"""


def run_ns3(n: int, duration_s: float) -> dict:
    t_import0 = time.perf_counter()
    from ns import ns  # the ns3 wheel (cppyy bindings)
    t_import = time.perf_counter() - t_import0

    t_setup0 = time.perf_counter()
    cfg = ns.Config.SetDefault
    cfg("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    cfg("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
    cfg("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    cfg("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 20))
    cfg("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 20))
    cfg("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(1))
    cfg("ns3::TcpSocket::InitialSlowStartThreshold", ns.UintegerValue(65535))
    cfg("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    cfg("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(False))  # Nagle on, as tcplab
    cfg("ns3::TcpSocket::ConnTimeout", ns.StringValue("1s"))  # SYN RTO = tcplab's initial RTO
    cfg("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    cfg("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    cfg("ns3::TcpSocketBase::Sack", ns.BooleanValue(False))
    cfg("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    cfg("ns3::TcpSocketBase::MinRto", ns.StringValue("1s"))
    cfg("ns3::TcpSocketBase::ClockGranularity", ns.StringValue("1ms"))
    cfg("ns3::RttEstimator::InitialEstimation", ns.StringValue("1s"))

    routers = ns.NodeContainer()
    routers.Create(2)
    senders = ns.NodeContainer()
    senders.Create(n)
    receivers = ns.NodeContainer()
    receivers.Create(n)
    stack = ns.InternetStackHelper()
    stack.Install(routers)
    stack.Install(senders)
    stack.Install(receivers)

    p2p = ns.PointToPointHelper()
    # Bottleneck: 30 Mb/s, 50 ms, 131072-byte DropTail in each direction. The helper's queue
    # factory reads the DropTailQueue default at creation time.
    cfg("ns3::DropTailQueue<Packet>::MaxSize", ns.StringValue("131072B"))
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("30Mbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("50ms"))
    bottleneck = p2p.Install(routers.Get(0), routers.Get(1))
    # Access links: 100 Mb/s, 1 ms, 1000 packets.
    cfg("ns3::DropTailQueue<Packet>::MaxSize", ns.StringValue("1000p"))
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("100Mbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("1ms"))

    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    tch = ns.TrafficControlHelper()

    def assign(devs):
        ifs = addr.Assign(devs)
        tch.Uninstall(devs)  # traffic-control layer off: the device queue is the only queue
        addr.NewNetwork()
        return ifs

    assign(bottleneck)
    sink_addrs = []
    for i in range(n):
        assign(p2p.Install(senders.Get(i), routers.Get(0)))
        ifs = assign(p2p.Install(routers.Get(1), receivers.Get(i)))
        sink_addrs.append(ifs.GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    # With no queue disc, a full device queue is seen by the traffic-control layer (the device
    # stops its tx queue once another MTU-sized packet would not fit) and the packet is dropped
    # there ("TcDrop"), not by the DropTailQueue. Count those drops on the left router with a
    # few lines of C++ glue (so no Python runs inside Simulator::Run()). The left router's other
    # devices (ACKs towards the senders, 1000 packets) do not overflow, so this is the bottleneck.
    import cppyy
    if not hasattr(cppyy.gbl, "tcplab_bench_tc_drops"):
        cppyy.cppdef("""
            unsigned long tcplab_bench_tc_drops = 0;
            void tcplab_bench_count_drop(ns3::Ptr<const ns3::Packet>) { ++tcplab_bench_tc_drops; }
            void tcplab_bench_connect_drops(ns3::Ptr<ns3::Node> node) {
                bool ok = node->GetObject<ns3::TrafficControlLayer>()->TraceConnectWithoutContext(
                    "TcDrop", ns3::MakeCallback(&tcplab_bench_count_drop));
                if (!ok) throw std::runtime_error("no TcDrop trace source");
            }
        """)
    cppyy.gbl.tcplab_bench_connect_drops(routers.Get(0))

    port = 9
    stop = ns.Seconds(duration_s)
    sinks = []
    for i in range(n):
        sink_helper = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                          ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink_app = sink_helper.Install(receivers.Get(i))
        sink_app.Start(ns.Seconds(0))
        sinks.append(sink_app.Get(0))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(sink_addrs[i], port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
        app = bulk.Install(senders.Get(i))
        app.Start(ns.MilliSeconds((i * 7) % 100))
        app.Stop(stop)
    ns.Simulator.Stop(stop)
    t_setup = time.perf_counter() - t_setup0

    t_run0 = time.perf_counter()
    ns.Simulator.Run()
    t_run = time.perf_counter() - t_run0

    delivered = sum(int(ns.DynamicCast[ns.PacketSink](a).GetTotalRx()) for a in sinks)
    dev = ns.DynamicCast[ns.PointToPointNetDevice](bottleneck.Get(0))
    q = dev.GetQueue()
    rx_b, rx_p = int(q.GetTotalReceivedBytes()), int(q.GetTotalReceivedPackets())
    drop_b, drop_p = int(q.GetTotalDroppedBytes()), int(q.GetTotalDroppedPackets())
    out_b, out_p = rx_b - drop_b - int(q.GetNBytes()), rx_p - drop_p - int(q.GetNPackets())
    max_size = str(q.GetMaxSize())
    ns.Simulator.Destroy()
    return {
        "import_s": t_import, "setup_s": t_setup, "run_s": t_run, "delivered_bytes": delivered,
        "bottleneck_queue_max": max_size, "bottleneck_packets": out_p,
        "bottleneck_ip_bytes": out_b - PPP_HEADER * out_p,
        "bottleneck_drops": drop_p + int(cppyy.gbl.tcplab_bench_tc_drops),
    }


def run_tcplab(n: int, duration_s: float, python: str) -> dict | None:
    dur = f"{duration_s:g}s"
    try:
        res = subprocess.run([python, "-c", TCPLAB_SNIPPET, str(n), dur, str(REPO / "python")],
                             capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"tcplab run failed with {python}: {getattr(e, 'stderr', '') or e}", file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="number of flows (16, 64, 256)")
    ap.add_argument("--duration", type=float, default=60.0, help="simulated seconds (default 60)")
    default_py = REPO / ".venv" / "bin" / "python"
    ap.add_argument("--tcplab-python", default=str(default_py) if default_py.exists() else None,
                    help="Python with tcplab installed, for the comparison (default: the repo's .venv)")
    ap.add_argument("--no-tcplab", action="store_true", help="skip the tcplab comparison run")
    ap.add_argument("--json", action="store_true", help="also print one JSON line with all figures")
    args = ap.parse_args()

    r = run_ns3(args.n, args.duration)
    process_s = time.perf_counter() - T_PROCESS0
    cap = BOTTLENECK_RATE_BPS / 8 * args.duration
    print(f"ns-3 tcp-dumbbell-{args.n}: {args.duration:g} s simulated, bottleneck queue {r['bottleneck_queue_max']}")
    print(f"  import {r['import_s']:.2f} s, setup {r['setup_s']:.2f} s, Simulator::Run() {r['run_s']:.2f} s, "
          f"process (incl. import) {process_s:.2f} s")
    print(f"  delivered (sum of PacketSink totals) {r['delivered_bytes']} B = {r['delivered_bytes'] / 1e6:.1f} MB")
    print(f"  bottleneck: {r['bottleneck_packets']} packets, {r['bottleneck_ip_bytes']} IP bytes, "
          f"utilization {r['bottleneck_ip_bytes'] / cap:.3f} (IP bytes; "
          f"{(r['bottleneck_ip_bytes'] + PPP_HEADER * r['bottleneck_packets']) / cap:.3f} with PPP), "
          f"{r['bottleneck_drops']} drops")
    t = None
    if not args.no_tcplab and args.tcplab_python:
        t = run_tcplab(args.n, args.duration, args.tcplab_python)
        if t:
            print(f"tcplab tcp-dumbbell-{args.n} (one run, core wall time {t['wall_s']:.3f} s):")
            print(f"  delivered (sum of bytes_acked) {t['bytes_acked']} B = {t['bytes_acked'] / 1e6:.1f} MB "
                  f"(bytes_delivered {t['bytes_delivered'] / 1e6:.1f} MB)")
            print(f"  bottleneck: {t['bottleneck_packets']} packets, {t['bottleneck_ip_bytes']} IP bytes, "
                  f"utilization {t['bottleneck_ip_bytes'] / cap:.3f}, {t['bottleneck_drops']} drops")
            print(f"  delivered ratio tcplab/ns-3 {t['bytes_acked'] / max(1, r['delivered_bytes']):.3f}")
    if args.json:
        print(json.dumps({"n": args.n, "duration_s": args.duration, "ns3": {**r, "process_s": process_s},
                          "tcplab": t}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
