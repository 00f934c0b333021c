//! `tcplab plot` drawn by the binary (crates/tcplab-plot, issue 28): each native kind drawn from a
//! small traced run as SVG and PNG and the files checked (the SVG is well-formed XML with the
//! title, the axis labels and the legend; what it draws matches the run; the PNG is a PNG of the
//! figure's size that is not blank), and bad input (no run directory, no trace, an unknown
//! connection) ends with a clear error and exit status 2. A kind or format the binary does not
//! draw goes to the Python CLI (here an interpreter that cannot start, so it says so).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SCENARIO: &str = r#"
name = "plot-test"
[run]
duration = "4s"
seed = 1
monitor_interval = "100ms"
[run.trace]
tcp = true
links = ["all"]
[[nodes]]
name = "s"
kind = "host"
[[nodes]]
name = "r1"
kind = "router"
[[nodes]]
name = "r2"
kind = "router"
[[nodes]]
name = "d"
kind = "host"
[[links]]
a = "s"
b = "r1"
rate = "100Mbps"
delay = "1ms"
[[links]]
a = "r1"
b = "r2"
rate = "2Mbps"
delay = "10ms"
queue = { limit = "12pkts" }
[[links]]
a = "r2"
b = "d"
rate = "100Mbps"
delay = "1ms"
[[tcp]]
name = "a"
from = "s"
to = "d"
variant = "reno"
duration = "4s"
[[tcp]]
name = "b"
from = "s"
to = "d"
variant = "reno"
start = "0.5s"
duration = "3.5s"
"#;

fn native(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcplab-native"))
        .args(args)
        .env("TCPLAB_PYTHON", "/nonexistent/python3")
        .env_remove("TCPLAB_NATIVE")
        .env_remove("TCPLAB_NO_HANDBACK")
        .output()
        .unwrap()
}

/// A traced run of two Reno flows over a 12-packet bottleneck (drops and retransmissions), once
/// per test binary.
fn run_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("tcplab-native-plot-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let toml = base.join("s.toml");
        std::fs::write(&toml, SCENARIO).unwrap();
        let out = base.join("run");
        let p = native(&["run", toml.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(p.status.success(), "{p:?}");
        out
    })
    .clone()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Well-formed XML: every tag closed in order, one root.
fn check_xml(text: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = text;
    let mut roots = 0;
    while let Some(i) = rest.find('<') {
        let j = rest[i..].find('>').expect("an unclosed tag") + i;
        let tag = &rest[i + 1..j];
        rest = &rest[j + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "mismatched </{name}>");
        } else {
            let name = tag.split_whitespace().next().unwrap().trim_end_matches('/').to_string();
            if stack.is_empty() {
                roots += 1;
            }
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
    }
    assert!(stack.is_empty() && roots == 1, "unclosed {stack:?}, {roots} roots");
}

/// The texts of the SVG (entities decoded).
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text").skip(1).map(|t| {
        let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
        body.trim().replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&#8212;", "—")
    }).collect()
}

/// (width, height) of a PNG, after checking its signature; and whether any pixel row differs
/// from white (decoded crudely: the image is not blank when its compressed data is not tiny).
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

fn plot(kind: &str, extra: &[&str], fmt: &str) -> (PathBuf, String) {
    let dir = run_dir();
    let out = dir.parent().unwrap().join(format!("{kind}{}.{fmt}", extra.join("_").replace(['-', '/', '.'], "")));
    let mut args = vec!["plot", s(&dir), "--kind", kind, "--out", s(&out)];
    args.extend_from_slice(extra);
    let p = native(&args);
    assert!(p.status.success(), "{kind}: {p:?}");
    let printed = String::from_utf8(p.stdout).unwrap();
    assert_eq!(printed.trim(), s(&out), "prints the file written");
    let text = if fmt == "svg" { std::fs::read_to_string(&out).unwrap() } else { String::new() };
    (out, text)
}

fn check_png(kind: &str, extra: &[&str], size_in: (f64, f64)) {
    let (out, _) = plot(kind, extra, "png");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(png_size(&bytes), ((size_in.0 * 120.0) as u32, (size_in.1 * 120.0) as u32), "{kind}");
    // an all-white image of this size compresses to a few hundred bytes; lines and text do not
    assert!(bytes.len() > 8_000, "{kind}: {} bytes, blank?", bytes.len());
}

fn summary() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run_dir().join("summary.json")).unwrap()).unwrap()
}

/// Points of every `<polyline>` of this colour (rgb(r,g,b) as plotters writes it).
fn polyline_points(svg: &str, rgb: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline").skip(1).filter(|p| p[..p.find("/>").unwrap()].contains(rgb)).map(|p| {
        let a = p.find("points=\"").unwrap() + 8;
        let b = a + p[a..].find('"').unwrap();
        p[a..b].split_whitespace().map(|xy| {
            let (x, y) = xy.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        }).collect()
    }).collect()
}

#[test]
fn link_graph_svg_and_png() {
    let (_, svg) = plot("link", &[], "svg");
    check_xml(&svg);
    let t = texts(&svg);
    let sm = summary();
    let bn = sm["bottleneck"].as_str().unwrap().to_string();
    let lk = sm["links"].as_array().unwrap().iter().find(|l| l["name"] == bn.as_str()).unwrap();
    let drops = lk["drops"].as_u64().unwrap();
    assert!(drops > 0, "the test run drops packets");
    assert!(t.contains(&format!("Output bandwidth of {bn} (drops: {drops} marked on the axis)")), "{t:?}");
    for label in ["Time (seconds)", "Output KB/s", "100 ms average", "300 ms average", "capacity 244 KB/s"] {
        assert!(t.iter().any(|x| x == label), "{label} in {t:?}");
    }
    // the 300 ms average: black, 1.8 pt = 3 px wide; steps-post over 4 s / 0.3 s = 14 intervals
    let thick: Vec<_> = polyline_points(&svg, "stroke-width=\"3\"");
    assert!(!thick.is_empty(), "no thick line");
    let xs: Vec<f64> = thick.iter().flatten().map(|p| p.0).collect();
    let span = xs.iter().cloned().fold(f64::MIN, f64::max) - xs.iter().cloned().fold(f64::MAX, f64::min);
    assert!(span > 0.9 * 960.0 * 0.87, "the average spans the run: {span} px");
    check_png("link", &[], (8.0, 2.8));
}

#[test]
fn queue_flows_seq_tcp_graphs_draw() {
    let sm = summary();
    let bn = sm["bottleneck"].as_str().unwrap().to_string();
    let cases: [(&str, Vec<&str>, Vec<String>, (f64, f64)); 4] = [
        ("queue", vec![], vec![format!("Queue size at {bn} (100 ms intervals: min–max bars, average)"), "Queue (pkts)".into(), "limit 12".into(), "average".into()], (8.0, 2.8)),
        ("flows", vec![], vec!["Throughput of each flow (from ACK progress)".into(), "Throughput KB/s (100 ms)".into(), "a".into(), "b".into(), "total".into(), format!("{bn} capacity")], (8.0, 3.2)),
        ("seq", vec!["--conn", "a"], vec!["Sequence number versus time".into(), "Sequence (KB) sender".into(), "Sequence (KB) receiver".into(), "ACK".into(), "retransmit".into()], (8.0, 5.6)),
        ("tcp", vec!["--conn", "a"], vec!["Windows (KB)".into(), "Sending KB/s (last 12 segs)".into(), format!("Queue (pkts) {bn}"), "congestion window".into(), "later retransmitted".into(), "Time (seconds)".into()], (8.0, 6.6)),
    ];
    for (kind, extra, labels, size) in cases {
        let (_, svg) = plot(kind, &extra, "svg");
        check_xml(&svg);
        let t = texts(&svg);
        for l in &labels {
            assert!(t.iter().any(|x| x == l), "{kind}: {l:?} in {t:?}");
        }
        check_png(kind, &extra, size);
    }
    // the tcp graph's title names the variant and the throughput the summary gives
    let (_, svg) = plot("tcp", &["--conn", "a"], "svg");
    let a = sm["flows"].as_array().unwrap().iter().find(|f| f["name"] == "a").unwrap();
    let want = format!("a — TCP {} (throughput: {:.0} KB/s)", a["variant"].as_str().unwrap(), a["throughput_KBps"].as_f64().unwrap());
    assert!(texts(&svg).contains(&want), "{want} in {:?}", texts(&svg));
}

#[test]
fn a_time_window_and_the_default_output_directory() {
    let dir = run_dir();
    let p = native(&["plot", s(&dir), "--kind", "flows", "--format", "svg", "--from", "1", "--to", "2"]);
    assert!(p.status.success(), "{p:?}");
    let path = dir.join("plots").join("flows_all.svg");
    assert_eq!(String::from_utf8_lossy(&p.stdout).trim(), s(&path));
    let svg = std::fs::read_to_string(&path).unwrap();
    check_xml(&svg);
    // the x ticks span [1, 2]: labelled 1 and 2 and steps between, none outside
    let ticks: Vec<f64> = texts(&svg).iter().filter_map(|t| t.parse::<f64>().ok()).filter(|v| *v < 100.0).collect();
    assert!(ticks.contains(&1.0) && ticks.contains(&2.0) && ticks.iter().filter(|v| **v > 1.0 && **v < 2.0).count() >= 3, "{ticks:?}");
    assert!(ticks.iter().all(|v| *v == 0.0 || (1.0..=2.0).contains(v)), "{ticks:?}");
    // every flow's tcp graph when no --conn: one file per flow
    let p = native(&["plot", s(&dir), "--kind", "tcp", "--format", "svg"]);
    assert!(p.status.success(), "{p:?}");
    let lines: Vec<String> = String::from_utf8_lossy(&p.stdout).lines().map(String::from).collect();
    assert_eq!(lines, vec![s(&dir.join("plots/tcp_a.svg")).to_string(), s(&dir.join("plots/tcp_b.svg")).to_string()]);
}

fn fails(args: &[&str], expect: &str) {
    let p = native(args);
    let err = String::from_utf8_lossy(&p.stderr);
    assert_eq!(p.status.code(), Some(2), "{args:?}: {p:?}");
    assert!(err.contains(expect), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = run_dir();
    let base = dir.parent().unwrap();
    fails(&["plot", s(&base.join("nope")), "--kind", "link"], "nope: not a directory (expected a tcplab run directory)");
    fails(&["plot", s(&dir), "--kind", "tcp", "--conn", "zz"], "error: no flow 'zz' in");
    fails(&["plot", s(&dir), "--kind", "seq", "--from", "3", "--to", "2"], "error: --from 3 s is not before --to 2 s");
    // a run directory without its link trace: a copy, resealed by hand
    let copy = base.join("nolink");
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if e.path().is_file() && n != "trace_link.parquet" && n != "COMPLETE.json" {
            std::fs::copy(e.path(), copy.join(&n)).unwrap();
        }
    }
    let marker: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("COMPLETE.json")).unwrap()).unwrap();
    let files: Vec<_> = marker["files"].as_array().unwrap().iter().filter(|f| f["name"] != "trace_link.parquet").cloned().collect();
    std::fs::write(copy.join("COMPLETE.json"), serde_json::json!({"tcplab_version": marker["tcplab_version"], "files": files}).to_string()).unwrap();
    fails(&["plot", s(&copy), "--kind", "link"], "no link trace (trace_link.parquet); the run traced no link");
    // a changed trace: the marker's check
    std::fs::write(copy.join("trace_tcp.parquet"), b"not parquet").unwrap();
    fails(&["plot", s(&copy), "--kind", "seq"], "trace_tcp.parquet: changed since the run wrote it");
    // pdf is drawn by the Python CLI: handed over (which here cannot start)
    fails(&["plot", s(&dir), "--kind", "link", "--format", "pdf"], "cannot start the Python CLI");
}

/// A copy of the run directory with one byte of `file` changed (its size kept: only its
/// SHA-256 tells).
fn with_a_changed_byte(file: &str) -> PathBuf {
    let dir = run_dir();
    let copy = dir.parent().unwrap().join(format!("changed-{}", file.replace('.', "-")));
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
        }
    }
    let mut bytes = std::fs::read(copy.join(file)).unwrap();
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'7' { b'8' } else { b'7' }; // summary.json stays JSON (a digit, a space or a letter)
    std::fs::write(copy.join(file), bytes).unwrap();
    copy
}

#[test]
fn a_file_changed_at_its_size_is_refused_by_every_graph_that_reads_it() {
    // issue 28: a plot hashes only summary.json and the files it reads (not the whole run
    // directory), when it reads them; a change there is still refused
    let summary = with_a_changed_byte("summary.json");
    for kind in ["tcp", "seq", "link", "queue", "flows"] {
        fails(&["plot", s(&summary), "--kind", kind], "summary.json: changed since the run wrote it");
    }
    let tcp = with_a_changed_byte("trace_tcp.parquet");
    for kind in ["tcp", "seq", "flows"] {
        fails(&["plot", s(&tcp), "--kind", kind, "--conn", "a"], "trace_tcp.parquet: changed since the run wrote it");
    }
    let link = with_a_changed_byte("trace_link.parquet");
    fails(&["plot", s(&link), "--kind", "link"], "trace_link.parquet: changed since the run wrote it");
    // a file the graph does not read does not change it: the link graph of the changed TCP trace
    let p = native(&["plot", s(&tcp), "--kind", "link", "--out", s(&tcp.join("l.svg"))]);
    assert!(p.status.success(), "{p:?}");
}

/// The same network with both flows Vegas (a CAM trace), once per test binary.
fn vegas_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("tcplab-native-plot-vegas-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let toml = base.join("v.toml");
        std::fs::write(&toml, SCENARIO.replace(r#"variant = "reno""#, r#"variant = "vegas""#)).unwrap();
        let out = base.join("run");
        let p = native(&["run", toml.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(p.status.success(), "{p:?}");
        out
    })
    .clone()
}

#[test]
fn cam_graph_and_the_tcp_graphs_cam_panel_are_drawn_here() {
    let dir = vegas_dir();
    let base = dir.parent().unwrap();
    assert!(dir.join("trace_cam.parquet").is_file());
    // drawn by the binary: a hand-over would fail (TCPLAB_PYTHON cannot start)
    let out = base.join("cam.svg");
    let p = native(&["plot", s(&dir), "--kind", "cam", "--conn", "a", "--out", s(&out)]);
    assert!(p.status.success(), "{p:?}");
    let svg = std::fs::read_to_string(&out).unwrap();
    check_xml(&svg);
    let t = texts(&svg);
    for l in ["a — Vegas congestion avoidance (CAM)", "CAM KB/s", "Expected", "Actual", "α threshold", "β threshold", "Time (seconds)"] {
        assert!(t.iter().any(|x| x == l), "{l:?} in {t:?}");
    }
    // the TCP graph gains the CAM panel third, and is 1.3 in taller
    let png = base.join("tcp.png");
    let p = native(&["plot", s(&dir), "--kind", "tcp", "--conn", "a", "--out", s(&png)]);
    assert!(p.status.success(), "{p:?}");
    assert_eq!(png_size(&std::fs::read(&png).unwrap()), (960, ((6.6 + 1.3) * 120.0_f64).round() as u32));
    let tsvg = base.join("tcp.svg");
    assert!(native(&["plot", s(&dir), "--kind", "tcp", "--conn", "b", "--out", s(&tsvg)]).status.success());
    let t = texts(&std::fs::read_to_string(&tsvg).unwrap());
    assert!(t.iter().any(|x| x == "CAM KB/s") && t.iter().any(|x| x == "Windows (KB)"), "{t:?}");
    // every flow with CAM rows when no --conn; a run without Vegas flows says so
    let p = native(&["plot", s(&dir), "--kind", "cam", "--format", "svg", "--out", s(&base.join("all"))]);
    assert!(p.status.success(), "{p:?}");
    assert_eq!(String::from_utf8_lossy(&p.stdout).lines().count(), 2);
    fails(&["plot", s(&run_dir()), "--kind", "cam"], "has no Vegas CAM trace");
}
