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
