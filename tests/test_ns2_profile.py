"""Issue 31 item 4: the seed 004 scenarios use one ns-2 release's defaults, ns-2.1b8a (2001),
the release before ns-2.1b9 (13 April 2002) changed tcpTick_, rfc2988_ and useHeaders_
(docs/ns2-defaults.md cites its tcl/lib/ns-default.tcl line by line)."""

import tomllib
from pathlib import Path

import pytest

import tcplab

ROOT = Path(__file__).resolve().parent.parent
ZHANG = sorted((ROOT / "scenarios" / "zhang").glob("*/scenario.toml"))
PACKET = 1000          # Agent/TCP set packetSize_ 1000 (ns-default.tcl line 603)
TCPIP_HEADERS = 40     # tcplab's segments carry 40 bytes of IPv4 + TCP headers


def _size(text: str) -> int:
    assert text.endswith("B") and not text.endswith("KB"), text
    return int(text[:-1])


@pytest.mark.parametrize("path", ZHANG, ids=lambda p: p.parent.name)
def test_every_ns2_flow_takes_ns_2_1b8a_defaults(path):
    flows = [t for t in tomllib.loads(path.read_text())["tcp"] if t.get("timer") == "ns2"]
    assert flows, path
    for t in flows:
        # No useHeaders_ before ns-2.1b9: the 1000-byte packet on the wire holds the headers.
        assert _size(t["mss"]) + TCPIP_HEADERS == PACKET, t["name"]
        # windowInit_ 2 (line 589) after the SYN's ACK (syn_ true, delay_growth_ true: lines 592, 663).
        assert t["initial_window"] == 2, t["name"]
        # window_ 20 (line 587): twenty packets.
        assert _size(t["recv_buffer"]) == 20 * _size(t["mss"]), t["name"]


def test_packets_on_the_bottleneck_are_1000_bytes_and_utilization_counts_them():
    s = tcplab.run(ROOT / "scenarios" / "zhang" / "table1" / "scenario.toml", seed=1).summary
    link = next(l for l in s["links"] if l["from"] == "R1" and l["to"] == "K1")
    # Every data packet is 1000 B on the wire; the SYN is the only smaller one.
    data = link["packets_forwarded"] - 1
    assert abs(link["bytes_forwarded"] - PACKET * data) < 100
