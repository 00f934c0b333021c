"""The HTML reports: self-contained, complete, and clean when opened in a real browser.

The browser test drives Debian's system Chromium through Playwright's Python package
(``executable_path``; Playwright's own browser downloads are never used). The browser is
found as $TCPLAB_CHROMIUM, else the first of chromium / chromium-browser / google-chrome /
google-chrome-stable on PATH. If Chromium or Playwright is missing the test FAILS (CI must
install them: ``apt-get install -y chromium`` and ``pip install playwright``); set
TCPLAB_ALLOW_NO_BROWSER=1 to turn that into a skip on a machine without them.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import warnings
from pathlib import Path

import pytest

from tcplab import report
from tcplab.rundir import RunData

_NET_RE = re.compile(r"""(?:src|href|action|poster)\s*=\s*["']?\s*(?:https?:|//|ftp:|ws:)|url\(\s*["']?\s*(?:https?:|//)|@import""",
                     re.I)


def _chromium() -> str | None:
    p = os.environ.get("TCPLAB_CHROMIUM")
    if p:
        return p
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _graph_count(text: str) -> int:
    """Graphs in a report: inline SVGs (time-axis zoom) plus PNG <img> fallbacks."""
    return text.count("<img ") + text.count('<svg class="graph zsvg"')


def _expected_images(run: RunData) -> int:
    n = 0
    if run.has_tcp and run.conns:
        conns = run.conns[: report.MAX_TCP_GRAPHS]
        n += len(conns)  # tcp graphs
        # cam graphs: the first MAX_TCP_GRAPHS Vegas flows of the run (not only of the drawn ones)
        n += min(report.MAX_TCP_GRAPHS, sum(1 for c in run.conns if run.cam(c).height > 0))
        n += 1  # seq graph
    if (run.has_tcp and run.conns) or run.summary.get("udp"):
        n += 1  # flows graph: TCP flows and UDP sources
    if run.has_link:
        n += 2 * len(report._relevant_links(run))
    return n


def _check_self_contained(text: str):
    assert not _NET_RE.search(text), f"network reference in report: {_NET_RE.search(text).group(0)!r}"
    assert "<script src" not in text.lower() and "<link rel=\"stylesheet\"" not in text.lower()


def test_write_report_contents(plots_run_dirs, tmp_path):
    for d in plots_run_dirs:
        run = RunData.load(d)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            p = report.write_report(d, tmp_path / f"{d.name}.html")
        text = p.read_text()
        _check_self_contained(text)
        assert _graph_count(text) == _expected_images(run), d
        assert text.count('src="data:image/png;base64,') == text.count("<img ")
        assert text.count('<figure id=') == _expected_images(run)
        for c in run.conns:
            assert f">{c}<" in text  # flow table row
        for lk in run.link_names:
            assert f">{lk.replace('>', '&gt;')}<" in text
        assert "<h3>Links</h3>" in text and "<h3>Flows</h3>" in text


def test_write_report_several_runs_and_report_cli(plots_synth_dirs, tmp_path):
    dirs = [plots_synth_dirs["reno"], plots_synth_dirs["vegas"]]
    p = report.write_report(dirs, tmp_path / "both.html")
    text = p.read_text()
    assert 'id="run0"' in text and 'id="run1"' in text
    assert _graph_count(text) == sum(_expected_images(RunData.load(d)) for d in dirs)
    default = report.report_cli(plots_synth_dirs["reno"])
    assert default == plots_synth_dirs["reno"] / "report.html" and default.stat().st_size > 10_000
    into_dir = report.report_cli(plots_synth_dirs["reno"], tmp_path / "outdir")
    assert into_dir == tmp_path / "outdir" / "report.html" and into_dir.is_file()


def _comparison(plots_synth_dirs, tmp_path) -> Path:
    rows = [
        {"variant": "reno", "metric": "throughput_KBps", "paper": 123.0, "ours": 96.0, "note": "Fig 4.1"},
        {"variant": "vegas", "metric": "throughput_KBps", "paper": 169.0, "ours": 165.2, "note": "Fig 4.3"},
        {"variant": "reno", "metric": "coarse_timeouts", "paper": 1, "ours": 2, "ok": False},
    ]
    runs = {"reno": plots_synth_dirs["reno"], "vegas": plots_synth_dirs["vegas"]}
    return report.write_comparison_report(tmp_path, rows, runs)


def test_comparison_report(plots_synth_dirs, tmp_path):
    p = _comparison(plots_synth_dirs, tmp_path)
    assert p == tmp_path / "report.html"
    text = p.read_text()
    _check_self_contained(text)
    table = text[text.index('class="comparison"'):text.index("</table>", text.index('class="comparison"'))]
    assert table.count("<tr") == 4  # header + 3 rows
    for col in ("variant", "metric", "paper", "ours", "note"):
        assert f">{col}</th>" in table
    assert 'class="miss"' in table
    side = text[text.index('<div class="side">'):]
    assert 'id="side-reno"' in side and 'id="side-vegas"' in side
    assert text.index('id="side-reno"') < text.index('id="side-vegas"')  # Reno beside (left of) Vegas


def test_report_from_in_memory_tables(plots_synth_dirs, tmp_path):
    """A run held in memory (tcplab.api.Run's shape: summary + table(name)) reports too."""
    import polars as pl

    d = plots_synth_dirs["vegas"]

    class FakeApiRun:
        summary = RunData.load(d).summary
        scenario_text = (d / "scenario.toml").read_text()

        def table(self, name):
            return pl.read_parquet(d / f"trace_{name}.parquet")

    p = report.write_report(FakeApiRun(), tmp_path / "mem.html")
    text = p.read_text()
    assert _graph_count(text) == _expected_images(RunData.load(d))
    assert "synthetic run written by tests/synthrun.py" in text


@pytest.mark.parametrize("which", ["run", "comparison"])
def test_report_opens_in_headless_chromium(plots_synth_dirs, plots_run_dirs, tmp_path, plots_artifacts_dir, which):
    exe = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if exe is None or sync_playwright is None:
        msg = ("headless Chromium test needs Debian's chromium (apt-get install -y chromium) and the "
               f"playwright Python package; found chromium={exe!r}, playwright={sync_playwright is not None}")
        if os.environ.get("TCPLAB_ALLOW_NO_BROWSER") == "1":
            pytest.skip(msg)
        pytest.fail(msg)

    if which == "run":
        # the synthetic runs and the first two real ones: every section a report has (a report of
        # every run dir is test_write_report_contents'; drawing it again here cost a minute)
        path = report.write_report(plots_run_dirs[:5], tmp_path / "report.html")
    else:
        path = _comparison(plots_synth_dirs, tmp_path)
    url = path.resolve().as_uri()

    console_errors, page_errors, requests, failed = [], [], [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: page_errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.goto(url, wait_until="load")
            page.wait_for_load_state("networkidle")
            shot = plots_artifacts_dir / f"report_{which}.png"
            page.screenshot(path=str(shot), full_page=False)
            n_img = page.evaluate("document.querySelectorAll('figure .graph').length")
            broken = page.evaluate("Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).length")
            # the inline script works: a click enlarges a graph, a second click restores it
            page.click("figure .graph")
            zoomed = page.evaluate("document.querySelectorAll('figure.zoomed').length")
            page.click("figure.zoomed .graph")
            unzoomed = page.evaluate("document.querySelectorAll('figure.zoomed').length")
        finally:
            browser.close()

    assert not page_errors, page_errors
    assert not console_errors, console_errors
    others = [u for u in requests if u != url and not u.startswith("data:")]
    assert not others, f"the report made network requests: {others[:5]}"
    assert not failed, failed
    assert n_img >= 2 and broken == 0
    assert (zoomed, unzoomed) == (1, 0)
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 20_000


def _launch(pw):
    exe = _chromium()
    return pw.chromium.launch(executable_path=exe, headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])


def test_report_time_zoom_in_chromium(plots_synth_dirs, tmp_path, plots_artifacts_dir):
    """Dragging across a TCP trace graph zooms its time axis: the figure's data-t0/t1 and the
    x tick labels change to the selected range, tick labels sit where their time is, the
    data (a retransmission line) moves to its time in the new range, pan keeps the span,
    and "reset zoom" restores the original ticks and range."""
    from tcplab import plots

    exe = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if exe is None or sync_playwright is None:
        msg = f"zoom test needs chromium and playwright; found chromium={exe!r}"
        if os.environ.get("TCPLAB_ALLOW_NO_BROWSER") == "1":
            pytest.skip(msg)
        pytest.fail(msg)

    d = plots_synth_dirs["reno"]
    run = RunData.load(d)
    conn = run.conns[0]
    rt, _ = plots.retransmitted_originals(run.trace(conn, "snd"))
    assert len(rt), "the synthetic Reno run should retransmit"
    path = report.write_report(d, tmp_path / "zoom.html")
    url = path.resolve().as_uri()
    sel = f'figure[id="run0-tcp-{conn}"]'

    errors, requests = [], []
    with sync_playwright() as pw:
        browser = _launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url, wait_until="load")
            fig = page.locator(sel)
            fig.scroll_into_view_if_needed()
            meta = fig.evaluate("f => JSON.parse(f.dataset.zoom)")
            ax = meta["axes"][0]
            T0, T1 = float(fig.get_attribute("data-t0")), float(fig.get_attribute("data-t1"))
            assert (T0, T1) == (ax["t0"], ax["t1"])

            def ticks(visible_only=True):
                return fig.evaluate("""f => Array.from(f.querySelectorAll('[id*="-xtick_"], g.ztick'))
                    .filter(g => g.style.display !== 'none')
                    .map(g => { const t = g.querySelector('text'); if (!t) return null;
                                const r = t.getBoundingClientRect();
                                return [t.textContent, r.left + r.width / 2]; })
                    .filter(x => x)""")

            before = ticks()
            assert len(before) >= 3
            bb = fig.locator("svg.zsvg").bounding_box()
            sc = bb["width"] / meta["w"]

            def screen_x(frac):
                return bb["x"] + (ax["x0"] + frac * (ax["x1"] - ax["x0"])) * sc

            # zoom around the first retransmitted segment's original send time
            f_rt = (rt[0] - T0) / (T1 - T0)
            fa, fb = max(0.0, f_rt - 0.08), min(1.0, f_rt + 0.12)
            y = bb["y"] + (ax["y0"] + 30) * sc
            page.mouse.move(screen_x(fa), y)
            page.mouse.down()
            page.mouse.move(screen_x((fa + fb) / 2), y, steps=4)
            page.mouse.move(screen_x(fb), y, steps=4)
            page.mouse.up()
            a, b = float(fig.get_attribute("data-t0")), float(fig.get_attribute("data-t1"))
            span = T1 - T0
            assert a == pytest.approx(T0 + fa * span, abs=0.01 * span)
            assert b == pytest.approx(T0 + fb * span, abs=0.01 * span)
            assert "zoomed" not in (fig.get_attribute("class") or "")  # a drag zooms, it does not enlarge
            fig.screenshot(path=str(plots_artifacts_dir / "report_zoomed.png"))

            after = ticks()
            assert len(after) >= 3 and [t for t, _ in after] != [t for t, _ in before]
            values = [float(t.replace("\u2212", "-")) for t, _ in after]
            assert all(a - 1e-9 <= v <= b + 1e-9 for v in values), (values, a, b)
            # each label sits where its time is on the zoomed axis (screen position -> time)
            for v, (_, xs) in zip(values, after):
                t_at = a + ((xs - bb["x"]) / sc - ax["x0"]) / (ax["x1"] - ax["x0"]) * (b - a)
                assert t_at == pytest.approx(v, abs=0.01 * (b - a)), (v, t_at)
            # the data moved: the first retransmission line is drawn at its time in [a, b]
            x_line = fig.evaluate("""f => { const g = f.querySelector('[id*="-zx"][id$="-retx-lines"] path');
                                            return parseFloat(g.getAttribute('d').trim().split(/\\s+/)[1]); }""")
            want = ax["x0"] + (rt[0] - a) / (b - a) * (ax["x1"] - ax["x0"])
            assert x_line == pytest.approx(want, abs=0.05)
            assert "showing" in fig.locator(".zrange").inner_text()

            # pan right keeps the span; reset restores everything
            fig.locator(".zright").click()
            a2, b2 = float(fig.get_attribute("data-t0")), float(fig.get_attribute("data-t1"))
            assert a2 > a and b2 - a2 == pytest.approx(b - a, rel=1e-6)
            fig.locator(".zreset").click()
            assert (float(fig.get_attribute("data-t0")), float(fig.get_attribute("data-t1"))) == (T0, T1)
            assert ticks() == before
            assert fig.evaluate("f => f.querySelectorAll('g.ztick').length") == 0
            assert fig.locator(".zreset").is_disabled()
            x_back = fig.evaluate("""f => { const g = f.querySelector('[id*="-zx"][id$="-retx-lines"] path');
                                            return parseFloat(g.getAttribute('d').trim().split(/\\s+/)[1]); }""")
            assert x_back == pytest.approx(ax["x0"] + (rt[0] - T0) / span * (ax["x1"] - ax["x0"]), abs=0.05)
            # a plain click still enlarges
            page.mouse.click(screen_x(0.5), y)
            assert "zoomed" in (fig.get_attribute("class") or "")
        finally:
            browser.close()
    assert not errors, errors
    assert not [u for u in requests if u != url and not u.startswith("data:")]


def test_report_drawn_in_two_processes_equals_one(plots_synth_dirs, tmp_path, monkeypatch):
    """Issue 13: the report draws every other matplotlib graph in a forked child; the HTML must be
    the same as drawn in one process (the page's timestamp aside), and the child must really run."""
    d = plots_synth_dirs["multi"]
    calls = []
    real_fork = os.fork

    def counting_fork():
        calls.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counting_fork)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setenv("TCPLAB_REPORT_NATIVE", "0")  # the fork is matplotlib's: tcplab-plot draws in threads
    two = report.write_report(d, tmp_path / "two.html").read_text()
    assert calls == [1]
    monkeypatch.setenv("TCPLAB_REPORT_JOBS", "1")
    one = report.write_report(d, tmp_path / "one.html").read_text()
    assert calls == [1]  # no fork with TCPLAB_REPORT_JOBS=1

    def unstamp(t):
        # The zoom ids count graphs over the process; number them from the first one seen.
        t = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "", t)
        first = int(re.search(r"\bzg(\d+)", t).group(1))
        return re.sub(r"\bzg(\d+)", lambda m: f"zg{int(m.group(1)) - first}", t)

    assert _graph_count(two) == _expected_images(RunData.load(d)) >= 4
    assert unstamp(two) == unstamp(one)


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_report_file_honours_the_umask(plots_synth_dirs, tmp_path, umask):
    """report.html was written with mkstemp's 0600, unreadable by others on a shared machine
    (issue 23): it gets 0666 less the umask, as any new file."""
    old = os.umask(umask)
    try:
        p = report.report_cli(plots_synth_dirs["reno"], tmp_path / f"r{umask:o}.html")
    finally:
        os.umask(old)
    assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~umask
