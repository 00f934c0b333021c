"""pcap output of simulated runs (issue 14's pcap bullet): `trace = { pcap = [...] }` writes a
classic pcap per traced link direction that Debian's tshark reads without a complaint, and
whose TCP analysis counts the retransmissions and duplicate ACKs the summary counts."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import tcplab

ROOT = Path(__file__).resolve().parents[1]
BRAKMO = ROOT / "scenarios" / "brakmo" / "single-transfer" / "scenario-p2p.toml"
TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(
    TSHARK is None,
    reason="tshark not installed (`make test` installs Debian's tshark when run as root with apt-get)")

# tshark's own notice when run as root; anything else on stderr is a complaint about the file.
ROOT_NOTICE = "Running as user"


def tshark(path: Path, *args: str) -> tuple[str, list[str]]:
    p = subprocess.run([TSHARK, "-r", str(path), *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    complaints = [line for line in p.stderr.splitlines() if line.strip() and ROOT_NOTICE not in line]
    return p.stdout, complaints


def count(path: Path, display_filter: str) -> int:
    out, complaints = tshark(path, "-Y", display_filter)
    assert complaints == []
    return len([line for line in out.splitlines() if line.strip()])


def run_with_pcap(tmp_path: Path, variant: str, extra: dict | None = None) -> tuple[dict, Path]:
    overrides = {"tcp[0].variant": variant,
                 "run.trace.pcap": ["Host1a->Gateway1", "Gateway1->Host1a", "bottleneck"]}
    overrides.update(extra or {})
    run = tcplab.run(str(BRAKMO), overrides=overrides)
    out = run.save(tmp_path / variant)
    return json.loads((out / "summary.json").read_text())["flows"][0], out


def test_pcap_files_are_written_per_direction(tmp_path):
    flow, out = run_with_pcap(tmp_path, "reno")
    names = sorted(p.name for p in out.glob("pcap_*.pcap"))
    # a link's name traces both of its directions
    assert names == ["pcap_Gateway1-Gateway2.pcap", "pcap_Gateway1-Host1a.pcap",
                     "pcap_Gateway2-Gateway1.pcap", "pcap_Host1a-Gateway1.pcap"]
    data = (out / "pcap_Host1a-Gateway1.pcap").read_bytes()
    assert data[:4] == bytes.fromhex("4d3cb2a1")  # nanosecond pcap, little endian
    # every data segment sent crosses the sender's access link once: SYN + segments + FIN
    records, off = 0, 24
    while off < len(data):
        caplen = int.from_bytes(data[off + 8:off + 12], "little")
        off += 16 + caplen
        records += 1
    assert off == len(data)
    assert records == flow["segments_sent"] + 2
    # the run directory stays valid and loadable
    from tcplab.rundir import RunData
    RunData.load(out)


@needs_tshark
@pytest.mark.parametrize("variant", ["reno", "sack"])
def test_tshark_reads_it_and_counts_what_the_summary_counts(tmp_path, variant):
    flow, out = run_with_pcap(tmp_path, variant)
    assert flow["retransmitted_segments"] > 0 and flow["dup_acks_received"] > 0, "the path must lose packets"
    data_dir = out / "pcap_Host1a-Gateway1.pcap"   # every segment the sender sends
    ack_dir = out / "pcap_Gateway1-Host1a.pcap"    # every ACK that reaches it
    for f in out.glob("pcap_*.pcap"):
        text, complaints = tshark(f, "-z", "expert,warn")  # every packet, then expert warnings and errors
        assert complaints == [], f"tshark complained about {f.name}: {complaints}"
        assert "Malformed" not in text and "checksum" not in text.lower()
    assert count(data_dir, "tcp.analysis.retransmission || tcp.analysis.fast_retransmission") == flow["retransmitted_segments"]
    assert count(ack_dir, "tcp.analysis.duplicate_ack") == flow["dup_acks_received"]
    # the capture's timestamps are the link's: the first data segment leaves when the trace says
    times, _ = tshark(data_dir, "-Y", "tcp.len > 0", "-T", "fields", "-e", "frame.time_relative")
    first = float(times.split()[0])
    # after the SYN/SYN-ACK exchange: one round trip of 2 x (50 ms + 10 us) plus transmission times
    assert 0.1002 < first < 0.1015, first


@needs_tshark
def test_options_ecn_and_checksums_decode(tmp_path):
    """Window scaling, timestamps, SACK blocks and the ECN field as tshark decodes them, with
    checksum validation switched on over complete datagrams (headers-only records are
    validated through the zero-payload rule of `wire.rs`)."""
    extra = {"tcp[0].window_scaling": True, "tcp[0].timestamps": True, "tcp[0].recv_buffer": "256KB",
             "tcp[0].ecn": True, "links[1].queue": {"kind": "red", "limit": "10pkts", "min_th": 2, "max_th": 6, "ecn": True}}
    flow, out = run_with_pcap(tmp_path, "sack", extra)
    f = out / "pcap_Host1a-Gateway1.pcap"
    fields, complaints = tshark(f, "-Y", "tcp.flags.syn == 1", "-T", "fields", "-e", "tcp.options.wscale.shift",
                                "-e", "tcp.options.timestamp.tsval", "-e", "tcp.options.sack_perm", "-e", "tcp.flags.ece")
    assert complaints == []
    shift, tsval, sack_perm, ece = fields.strip().split("\t")[:4]
    assert int(shift) >= 2 and tsval != "" and ece in ("1", "True")
    summary = json.loads((out / "summary.json").read_text())
    marks = next(l for l in summary["links"] if l["name"] == "Gateway1->Gateway2")["ecn_marks"]
    assert marks > 0, "RED must mark on this path"
    bottleneck = out / "pcap_Gateway1-Gateway2.pcap"
    assert count(bottleneck, "ip.dsfield.ecn == 2") > 0  # ECT(0) data
    assert count(bottleneck, "ip.dsfield.ecn == 3") == marks  # CE, as the queue marked them
    assert count(out / "pcap_Gateway1-Host1a.pcap", "tcp.flags.ece == 1 && tcp.flags.syn == 0") == flow["ecn_ece_received"]
    if flow["sack_acks_received"] > 0:
        assert count(out / "pcap_Gateway1-Host1a.pcap", "tcp.options.sack_le") == flow["sack_acks_received"]
    # window field scaled back by tshark equals the endpoint's window (256 KB buffer > 64 KB)
    wins, _ = tshark(out / "pcap_Gateway1-Host1a.pcap", "-Y", "tcp.flags.syn == 0", "-T", "fields", "-e", "tcp.window_size", "-c", "3")
    assert max(int(w) for w in wins.split()) > 65535


def test_bad_pcap_link_is_a_located_error(tmp_path):
    text = BRAKMO.read_text().replace('links = ["Gateway1->Gateway2"]', 'links = ["Gateway1->Gateway2"]\npcap = ["Gateway9->Gateway2"]')
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(str(bad))
    assert e.value.field == "run.trace.pcap[0]"
    assert "Gateway9->Gateway2" in str(e.value) and e.value.line is not None
