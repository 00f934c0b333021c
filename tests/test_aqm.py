"""Issue 27 end to end: PIE and DualPI2 on the wire (UDP sources sending ECT(1) reach DualPI2's L
queue), `stats = true` on any queue, FQ-CoDel's per-flow occupancy, the AQM tables of the DuckDB
store, and short versions of the modern/bufferbloat and modern/l4s reproductions."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import tcplab

ROOT = Path(__file__).resolve().parent.parent
UDP = ROOT / "python" / "tcplab" / "scenarios" / "examples" / "udp-dumbbell.toml"
SCEN = ROOT / "python" / "tcplab" / "scenarios" / "modern"


def run_udp(over, duration="3s"):
    return tcplab.run(UDP, overrides={"run.duration": duration, "links[0].queue.limit": "1000pkts", **over}).summary


def bottleneck(s):
    return next(l for l in s["links"] if l["from"] == "left" and l["to"] == "right")


def test_ect1_udp_goes_to_the_l_queue_of_dualpi2():
    s = run_udp({"links[0].queue.kind": "dualpi2", "udp[0].cycle.ecn": ["ect1", "ect0"] + ["not-ect"] * 14})
    a = bottleneck(s)["aqm"]
    l4s, classic = a["classes"]["l4s"], a["classes"]["classic"]
    # Only cbr0's packets are ECT(1) (cbr1's ECT(0) is classic): the L queue carries cbr0's
    # packets only, all of them (no L packet is dropped), some still on the way at the end.
    cbr0 = next(u for u in s["udp"] if u["name"] == "cbr0")
    assert 0 < cbr0["received_pkts"] <= l4s["departed"] <= cbr0["sent_pkts"] < cbr0["received_pkts"] + 10
    assert l4s["departed"] + classic["departed"] == a["departed"]
    # 32 Mb/s into 30 Mb/s: the classic queue is controlled by drops; the L flow is marked, never dropped.
    assert classic["drops_by_cause"].get("dualpi2", 0) > 0 and l4s["drops_by_cause"] == {}
    assert l4s["sojourn_p99_s"] < classic["sojourn_p99_s"]


def test_pie_holds_its_target_under_overload():
    s = run_udp({"links[0].queue.kind": "pie", "run.measure.from": "2s", "run.measure.to": "6s"}, "6s")
    l = bottleneck(s)
    assert l["aqm"]["drops_by_cause"]["pie"] > 0 and l["aqm"]["drops_by_cause"].get("overflow", 0) == 0
    assert 0.005 < l["window_queue_delay_mean_s"] < 0.030, l["window_queue_delay_mean_s"]


def test_stats_flag_gives_any_discipline_the_aqm_block():
    plain = bottleneck(run_udp({}))
    measured = bottleneck(run_udp({"links[0].queue.stats": True}))
    assert "aqm" not in plain
    a = measured["aqm"]
    assert measured["packets_forwarded"] <= a["departed"] <= measured["packets_forwarded"] + 1  # one may be in service
    assert measured["packets_forwarded"] == plain["packets_forwarded"] and measured["drops"] == plain["drops"]
    assert a["drops_by_cause"].get("overflow", 0) == plain["drops"]
    # 32 Mb/s into 30 Mb/s: the DropTail queue grows steadily (full, 1000 packets = 267 ms, after
    # ~4 s), so the median sojourn sits near the link monitor's mean and the p99 below 267 ms.
    mean = measured["queue_delay_mean_s"]
    assert abs(a["sojourn_p50_s"] - mean) < 0.2 * mean and a["sojourn_p99_s"] < 0.267, (a, mean)


def test_fq_codel_flow_queues_name_their_flows_and_store_tables(tmp_path):
    from tcplab.store import Store
    s1 = run_udp({"links[0].queue.kind": "fq_codel"})
    s2 = run_udp({"links[0].queue.kind": "dualpi2", "udp[0].cycle.ecn": ["ect1"] + ["not-ect"] * 15})
    fq = bottleneck(s1)["aqm"]["flow_queues"]
    names = sorted(n for q in fq for n in q["flows"])
    assert names == sorted(f"cbr{i}" for i in range(16))
    assert all(q["avg_pkts"] <= q["max_pkts"] and q["departed"] > 0 for q in fq)
    with Store(tmp_path / "results.duckdb") as st:
        items = []
        for h, s in (("h1", s1), ("h2", s2)):
            task = SimpleNamespace(hash=h, group="g", point=0, seed=1, params={}, version="v")
            items.append((task, {"status": "ok", "summary_json": json.dumps(s)}))
        st.commit(items, sweep="t")
        con = st.con
        rows = con.execute("SELECT hash, class, departed, drops FROM aqm WHERE link = 'left->right' ORDER BY hash, class").fetchall()
        a2 = bottleneck(s2)["aqm"]
        assert rows == [("h1", "all", bottleneck(s1)["aqm"]["departed"], sum(bottleneck(s1)["aqm"]["drops_by_cause"].values())),
                        ("h2", "all", a2["departed"], sum(a2["drops_by_cause"].values())),
                        ("h2", "classic", a2["classes"]["classic"]["departed"], sum(a2["classes"]["classic"]["drops_by_cause"].values())),
                        ("h2", "l4s", a2["classes"]["l4s"]["departed"], 0)]
        marks = con.execute("SELECT sum(count) FROM aqm_causes WHERE hash = 'h2' AND class = 'l4s' AND kind = 'mark'").fetchone()[0]
        assert marks == sum(a2["classes"]["l4s"]["marks_by_cause"].values()) > 0
        n, flows = con.execute("SELECT count(*), string_agg(flows, ',') FROM aqm_flow_queues WHERE hash = 'h1'").fetchone()
        assert n == len(fq) and sorted(flows.split(",")) == names
        # A retried run replaces its rows (both directions of the link run FQ-CoDel: two rows).
        before = con.execute("SELECT count(*) FROM aqm WHERE hash = 'h1'").fetchone()[0]
        st.commit(items[:1], sweep="t")
        assert con.execute("SELECT count(*) FROM aqm WHERE hash = 'h1'").fetchone()[0] == before == 2


def _short_copy(tmp_path, name, edits):
    folder = tmp_path / name
    shutil.copytree(SCEN / name, folder)
    for file, (old, new) in edits:
        p = folder / file
        text = p.read_text()
        assert old in text, (file, old)
        p.write_text(text.replace(old, new))
    return folder


def test_bufferbloat_reproduction_short(tmp_path):
    """6 simulated seconds, one seed: the table, the claims and the figure; FQ-CoDel's voice
    delay already far below DropTail's (the claims themselves are for the full run)."""
    from tcplab.reproduce import reproduce
    folder = _short_copy(tmp_path, "bufferbloat", [("scenario.toml", ('duration = "30s"', 'duration = "6s"'))])
    out = tmp_path / "out"
    assert reproduce(str(folder), out=out, seeds=1, report=False) == 0
    comp = json.loads((out / "comparison.json").read_text())
    get = {(r["variant"], r["metric"]): r["ours"] for r in comp["rows"]}
    assert get[("fq_codel", "voice_p99_ms")] < 20 < 200 < get[("droptail", "voice_p99_ms")]
    assert len(comp["claims"]) == 6 and (out / "bufferbloat.png").stat().st_size > 10_000


def test_l4s_reproduction_short(tmp_path):
    from tcplab.reproduce import reproduce
    folder = _short_copy(tmp_path, "l4s", [("reproduce.toml", ('"run.duration" = "30s", "run.measure.from" = "10s", "run.measure.to" = "30s"',
                                                                '"run.duration" = "4s", "run.measure.from" = "2s", "run.measure.to" = "4s"'))])
    text = (folder / "reproduce.toml").read_text().replace('"30s", "run.measure.from" = "10s", "run.measure.to" = "30s"',
                                                           '"4s", "run.measure.from" = "2s", "run.measure.to" = "4s"')
    (folder / "reproduce.toml").write_text(text)
    out = tmp_path / "out"
    assert reproduce(str(folder), out=out, seeds=1, report=False) == 0
    comp = json.loads((out / "comparison.json").read_text())
    get = {(r["variant"], r["metric"]): r["ours"] for r in comp["rows"]}
    # Four seconds: the L queue's p99 counts the whole run, and Prague's first second (slow start,
    # α from 1) puts it at 1.0 ms in a 2 s run, 0.24 ms in 3 s, 0.12 ms in 4 s (0.12 at 30 s);
    # CUBIC's standing queue in the single VQ FIFO is still building (250 ms at 30 s).
    assert get[("dualpi2", "l4s_p99_ms_rtt20")] < 1 < 10 < get[("vq-mixed", "l4s_p99_ms_rtt20")]
    assert (out / "l4s.png").stat().st_size > 10_000
