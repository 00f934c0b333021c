"""Issue 27 disciplines end to end: a CoDel bottleneck under unresponsive overload keeps its
sojourn near target where DropTail's 100 packets sit full, and summary.json carries the
bufferbloat figures only for the disciplines that keep them."""
from __future__ import annotations

from pathlib import Path

import tcplab

ROOT = Path(__file__).resolve().parent.parent
UDP = ROOT / "python" / "tcplab" / "scenarios" / "examples" / "udp-dumbbell.toml"


def bottleneck(over, duration="5s"):
    s = tcplab.run(UDP, overrides={"run.duration": duration, **over}).summary
    return next(l for l in s["links"] if l["from"] == "left" and l["to"] == "right")


def test_codel_drains_the_standing_queue_under_overload():
    # 32 Mb/s of CBR into 30 Mb/s with 1000 packets of buffer: DropTail sits full (266 ms at
    # 30 Mb/s). CoDel's drop rate rises as √count (count + 1 per drop), so it needs ~200·√540 ms
    # to reach the 6 % of arrivals the overload needs: measured over 10–15 s it holds the queue
    # well below DropTail's, dropping only from the head (no overflow).
    over = {"links[0].queue.limit": "1000pkts", "run.measure.from": "10s", "run.measure.to": "15s"}
    tail = bottleneck(over, "15s")
    codel = bottleneck({**over, "links[0].queue.kind": "codel"}, "15s")
    assert "aqm" not in tail, "DropTail's summary is unchanged"
    a = codel["aqm"]
    assert a["drops_by_cause"].get("overflow", 0) == 0 and a["drops_by_cause"]["codel"] == codel["drops"] > 1000, a
    assert tail["window_queue_delay_mean_s"] > 0.25
    assert codel["window_queue_delay_mean_s"] < tail["window_queue_delay_mean_s"] / 3
    assert a["sojourn_p50_s"] <= a["sojourn_p95_s"] <= a["sojourn_p99_s"] < 0.25
    assert codel["packets_forwarded"] <= a["departed"] <= codel["packets_forwarded"] + 1  # one may be in service


def test_step_marker_is_droptail_for_non_ect_traffic():
    tail = bottleneck({})
    step = bottleneck({"links[0].queue.kind": "step", "links[0].queue.k_packets": 5})
    assert step["drops"] == tail["drops"] and step["packets_forwarded"] == tail["packets_forwarded"]
    assert step["aqm"]["marks_by_cause"] == {} and step["ecn_marks"] == 0


def test_fq_codel_runs_end_to_end_and_conserves_packets():
    l = bottleneck({"links[0].queue.kind": "fq_codel", "links[0].queue.limit": "1000pkts"}, "15s")
    a = l["aqm"]
    assert sum(a["drops_by_cause"].values()) == l["drops"] > 0
    assert l["packets_forwarded"] <= a["departed"] <= l["packets_forwarded"] + 1
    # 16 equal CBR flows, one queue each (with 1024 queues a collision is unlikely but allowed):
    # each flow's queue is controlled by its own CoDel, so no overflow at 1000 packets.
    assert a["drops_by_cause"].get("fattest", 0) == 0


def test_prague_sends_ect1_dctcp_ect0_and_the_step_marker_sets_ce(tmp_path):
    """The codepoints on the wire (RFC 3168 §5, RFC 9331): TCP Prague's data leaves ECT(1), DCTCP's
    ECT(0), and a step-marked bottleneck (K = 5 packets) turns some of both into CE; read from the
    bottleneck's pcap, so the simulator's Packet codepoint is what Wireshark would see."""
    import dpkt

    from scenario_fixtures import fixture_text

    flows = "".join(f'\n[[tcp]]\nname = "{v}"\nfrom = "a"\nto = "b"\nvariant = "{v}"\nbytes = "300KB"\n'
                    for v in ("prague", "dctcp"))
    text = fixture_text("path.toml", {"links[1].rate": "2Mbps", "links[1].queue": {"kind": "step", "k_packets": 5, "limit": "100pkts"},
                                      "run.trace": {"pcap": ["r->b"]}}, flows)
    path = tmp_path / "codepoints.toml"
    path.write_text(text)
    out = tmp_path / "run"
    tcplab.run(path, seed=1, out=out)
    seen = {}   # (sender port, codepoint) -> data packets
    with open(out / "pcap_r-b.pcap", "rb") as f:
        for _ts, buf in dpkt.pcap.Reader(f):
            ip = dpkt.ip.IP(buf) if (buf[0] >> 4) == 4 else dpkt.ethernet.Ethernet(buf).data
            tcp = ip.data
            # headers only are captured: the payload length comes from the IP header
            if isinstance(tcp, dpkt.tcp.TCP) and ip.len - 4 * ip.hl - 4 * tcp.off > 0:
                key = (tcp.sport, ip.tos & 0b11)
                seen[key] = seen.get(key, 0) + 1
    ports = sorted({p for p, _ in seen})
    assert len(ports) == 2, seen
    prague, dctcp = ports     # connection 0 (prague) has the lower sender port
    assert seen.get((prague, 0b01), 0) > 100 and seen.get((prague, 0b10), 0) == 0, seen
    assert seen.get((dctcp, 0b10), 0) > 100 and seen.get((dctcp, 0b01), 0) == 0, seen
    assert seen.get((prague, 0b11), 0) + seen.get((dctcp, 0b11), 0) > 0, f"the step marker marked nothing: {seen}"
    assert all(cp != 0b00 for (_p, cp) in seen), f"no Not-ECT data from ECN senders: {seen}"
