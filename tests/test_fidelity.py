"""tcplab fidelity (issue 31): held/missed per published number, causes with evidence, FIDELITY.md."""

import json
import shutil
from pathlib import Path

import pytest

from tcplab import fidelity
from tcplab.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_classify_relative_tolerance_zero_and_lists():
    assert fidelity.classify(100.0, 109.0) == "held"
    assert fidelity.classify(100.0, 111.0) == "missed"
    assert fidelity.classify(100.0, 89.0) == "missed"
    assert fidelity.classify(0, 0) == "held"
    assert fidelity.classify(0, 0.02) == "missed"          # "Vegas never retransmits" is not 2 % of nothing
    assert fidelity.classify([3.5, 10.5], [3.0]) == "see text"
    assert fidelity.classify(1.0, None) == "not run"
    assert fidelity.classify(0.972, 0.913, 0.01) == "missed"
    assert fidelity.classify(0.972, 0.913) == "held"        # why fairness declares its own tolerance


def _experiment(tmp_path: Path, fidelity_table: str, evidence: str | None = "evidence.md") -> Path:
    folder = tmp_path / "scenarios" / "demo" / "exp"
    folder.mkdir(parents=True)
    (folder / "reproduce.toml").write_text(
        'title = "Demo"\nscenario = "scenario.toml"\n'
        '[[variants]]\nname = "reno"\npaper = { throughput_KBps = 100.0, coarse_timeouts = 0 }\n'
        '[[variants]]\nname = "vegas"\npaper = { throughput_KBps = 50.0 }\n'
        '[[claims]]\ntext = "Vegas beats Reno"\nexpr = "mean(\'vegas\', \'throughput_KBps\') > mean(\'reno\', \'throughput_KBps\')"\n'
        + fidelity_table)
    if evidence:
        (folder / evidence).write_text("# Evidence\n\n## Sweep\n\n| a | b |\n")
    return folder


MISS = ('[fidelity]\n[[fidelity.miss]]\nvariant = "reno"\nmetric = "throughput_KBps"\nstatus = "unreachable"\n'
        'cause = "Mathis bound 0.58"\nevidence = "evidence.md#sweep"\n'
        '[[fidelity.miss]]\nclaim = "Vegas beats"\ncause = "buffer too small"\n')


def test_annotate_gives_badges_and_causes(tmp_path):
    folder = _experiment(tmp_path, MISS)
    rows = [{"variant": "reno", "metric": "throughput_KBps", "paper": 100.0, "ours": 40.0},
            {"variant": "reno", "metric": "coarse_timeouts", "paper": 0, "ours": 0},
            {"variant": "vegas", "metric": "throughput_KBps", "paper": 50.0, "ours": 20.0},
            {"variant": "vegas", "metric": "retransmitted_segments", "paper": None, "ours": 3}]
    claims = [{"text": "Vegas beats Reno", "held": False}]
    fidelity.annotate(folder, rows, claims)
    assert rows[0]["status"] == "unreachable" and rows[0]["cause"] == "Mathis bound 0.58"
    assert rows[0]["evidence"] == "evidence.md#sweep"
    assert rows[1]["status"] == "held" and "cause" not in rows[1]
    assert rows[2]["status"] == "missed" and "cause" not in rows[2]   # no cause written: stays a bare miss
    assert "status" not in rows[3]
    assert claims[0]["status"] == "missed" and claims[0]["cause"] == "buffer too small"


def test_a_held_number_never_takes_a_cause(tmp_path):
    folder = _experiment(tmp_path, MISS)
    rows = [{"variant": "reno", "metric": "throughput_KBps", "paper": 100.0, "ours": 95.0}]
    fidelity.annotate(folder, rows, [])
    assert rows[0]["status"] == "held" and "cause" not in rows[0]


@pytest.mark.parametrize("table, message", [
    ('[fidelity]\nbogus = 1\n', "unknown key 'bogus'"),
    ('[fidelity]\ntolerance = 2\n', "tolerance"),
    ('[fidelity]\n[[fidelity.miss]]\nmetric = "x"\n', "cause: missing"),
    ('[fidelity]\n[[fidelity.miss]]\nmetric = "x"\nclaim = "y"\ncause = "c"\n', "exactly one of metric, claim"),
    ('[fidelity]\n[[fidelity.miss]]\nmetric = "x"\ncause = "c"\nstatus = "fine"\n', "status"),
    ('[fidelity]\n[[fidelity.miss]]\nmetric = "x"\ncause = "c"\nevidence = "nowhere.md#a"\n', "no file"),
])
def test_bad_fidelity_tables_name_the_file_and_field(tmp_path, table, message):
    folder = _experiment(tmp_path, table)
    with pytest.raises(fidelity.FidelityError) as e:
        fidelity.load_causes(folder)
    assert "reproduce.toml" in str(e.value) and message in str(e.value)


def test_fidelity_page_from_measured_json(tmp_path):
    folder = _experiment(tmp_path, MISS)
    (folder / "measured.json").write_text(json.dumps({
        "recorded": "2026-11-27", "seeds": [1, 2, 3, 4, 5],
        "rows": [{"variant": "reno", "metric": "throughput_KBps", "paper": 100.0, "ours": 40.0, "n": 5, "min": 30.0, "max": 50.0},
                 {"variant": "reno", "metric": "coarse_timeouts", "paper": 0, "ours": 0, "n": 5}],
        "claims": [{"text": "Vegas beats Reno", "held": False}]}))
    text = fidelity.build(tmp_path)
    assert "| reno | throughput_KBps | 100.0 | 40.0 (30.0–50.0) | ⛔ unreachable | Mathis bound 0.58 " \
           "([evidence](scenarios/demo/exp/evidence.md#sweep)) |" in text
    assert "| reno | coarse_timeouts | 0 | 0 | ✅ held |" in text
    assert "| vegas | throughput_KBps | 50.0 | - | not run |" in text
    assert "| Vegas beats Reno | ❌ missed | buffer too small |" in text
    assert "seeds 1–5" in text


def test_report_section_links_causes_to_evidence(tmp_path):
    folder = _experiment(tmp_path, MISS)
    rows = [{"variant": "reno", "metric": "throughput_KBps", "paper": 100.0, "ours": 40.0}]
    fidelity.annotate(folder, rows, [])
    html = fidelity.report_section(folder, rows, [])
    anchor = fidelity._anchor("evidence.md#sweep")
    assert f'href="#{anchor}"' in html and f'id="{anchor}"' in html
    assert "unreachable" in html and "| a | b |" in html       # the evidence file's text is in the report


def test_cli_writes_and_checks_the_page(tmp_path, capsys):
    _experiment(tmp_path, MISS)
    out = tmp_path / "F.md"
    assert main(["fidelity", "--repo", str(tmp_path), "--out", str(out)]) == 0
    assert out.read_text().startswith("# Fidelity")
    assert main(["fidelity", "--repo", str(tmp_path), "--out", str(out), "--check"]) == 0
    out.write_text("stale\n")
    assert main(["fidelity", "--repo", str(tmp_path), "--out", str(out), "--check"]) == 1


def test_the_committed_fidelity_page_is_up_to_date():
    """FIDELITY.md is generated: after editing a reproduce.toml or measured.json, run `make fidelity`."""
    assert (ROOT / "FIDELITY.md").read_text() == fidelity.build(ROOT)


def test_every_bundled_fidelity_table_loads():
    for _, folder in fidelity.experiments(ROOT / "scenarios"):
        fidelity.load_causes(folder)


def test_report_on_a_reproduction_output_shows_badges(tmp_path):
    src = ROOT / "scenarios" / "zhang" / "table1"
    comp = {"experiment": "zhang/table1", "title": "Zhang Table 1", "folder": str(src),
            "rows": [{"variant": "reno", "metric": "utilization_loss_1pct", "paper": 0.894, "ours": 0.403, "n": 1}],
            "claims": []}
    (tmp_path / "comparison.json").write_text(json.dumps(comp))
    assert main(["report", str(tmp_path)]) == 0
    html = (tmp_path / "report.html").read_text()
    assert "unreachable" in html and "Evidence: evidence.md#analytic-bounds" in html
