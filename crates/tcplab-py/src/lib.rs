//! `tcplab._core`: the Rust core seen from Python. Thin on purpose: it runs scenarios and hands
//! back the summary (a [`RunSummary`]: Python objects, JSON text or summary.json on demand) and
//! the trace columns (lists); the Python package writes files, draws plots and keeps the results
//! store.

use tcplab_plot::parquet_read;
mod plots;
mod pyser;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use tcplab::run::{estimate_memory_text_mode, prepare_with_limits, run_text_with_limits, Limits, RunResult, Traces, NATIVE_RUNTIME_BYTES, PYTHON_RUNTIME_BYTES};
use tcplab::scenario::ScenarioError;

create_exception!(_core, ScenarioErrorPy, PyValueError, "A scenario that cannot be run: names the file, line and field.");

fn to_py_err(e: ScenarioError) -> PyErr {
    let err = ScenarioErrorPy::new_err(e.to_string());
    Python::with_gil(|py| {
        let v = err.value(py);
        let _ = v.setattr("file", e.file.clone());
        let _ = v.setattr("line", e.line);
        let _ = v.setattr("field", e.field.clone());
        let _ = v.setattr("detail", e.message.clone());
    });
    err
}

/// An emulator error as Python sees it: scenario errors as ScenarioError, the rest RuntimeError.
fn emu_err(e: tcplab::emu::EmuError) -> PyErr {
    match e {
        tcplab::emu::EmuError::Scenario(e) => to_py_err(e),
        e => pyo3::exceptions::PyRuntimeError::new_err(e.to_string()),
    }
}

/// Check a scenario without running it (and its memory estimate against `max_memory` bytes if
/// given). Raises ScenarioError.
#[pyfunction]
#[pyo3(signature = (text, file, overrides=Vec::new(), max_memory=None))]
fn validate(text: &str, file: &str, overrides: Vec<String>, max_memory: Option<u64>) -> PyResult<String> {
    // `[[commands]]` belong to `tcplab emulate`: checked by the emulator's own rules, then the rest.
    let text = &tcplab::emu::check_commands(text, file, &overrides).map_err(emu_err)?;
    let (sim, text) = prepare_with_limits(text, file, None, &overrides, &Limits { max_memory, runtime_bytes: PYTHON_RUNTIME_BYTES, traces: Traces::Held }).map_err(to_py_err)?;
    let _ = sim;
    Ok(text)
}

/// The estimate of a run in this interpreter (traces held in memory), or with `native` of the
/// native CLI's run (no interpreter, traces streamed to disk).
fn estimate(text: &str, file: &str, overrides: &[String], native: bool) -> Result<tcplab::run::MemoryEstimate, ScenarioError> {
    let (runtime, traces) = if native { (NATIVE_RUNTIME_BYTES, Traces::Streamed) } else { (PYTHON_RUNTIME_BYTES, Traces::Held) };
    estimate_memory_text_mode(text, file, overrides, runtime, traces)
}

/// Estimated peak memory of `tcplab run` of the scenario in this interpreter (with `native`:
/// of the native CLI, `tcplab-native run`), in bytes (nothing is built).
#[pyfunction]
#[pyo3(signature = (text, file, overrides=Vec::new(), native=false))]
fn estimate_memory(text: &str, file: &str, overrides: Vec<String>, native: bool) -> PyResult<u64> {
    estimate(text, file, &overrides, native).map(|e| e.total).map_err(to_py_err)
}

/// The estimate's parts: [(field, bytes, what)], largest first.
#[pyfunction]
#[pyo3(signature = (text, file, overrides=Vec::new(), native=false))]
fn estimate_memory_parts(text: &str, file: &str, overrides: Vec<String>, native: bool) -> PyResult<Vec<(String, u64, String)>> {
    estimate(text, file, &overrides, native).map(|e| e.parts).map_err(to_py_err)
}

/// The scenario with its templates (count, defaults, topology) written out, after overrides.
#[pyfunction]
#[pyo3(signature = (text, file, overrides=Vec::new()))]
fn expand(text: &str, file: &str, overrides: Vec<String>) -> PyResult<String> {
    tcplab::scenario::expand_text(text, file, &overrides).map_err(to_py_err)
}

/// The JSON Schema of the scenario format.
/// Sizes in bytes of the structures a packet event touches (printed by `tcplab bench`).
#[pyfunction]
fn struct_sizes() -> Vec<(&'static str, usize)> {
    tcplab::run::hot_struct_sizes()
}

#[pyfunction]
fn schema() -> String {
    tcplab::scenario::json_schema()
}

fn trace_dict<'py>(py: Python<'py>, r: &mut RunResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    // TCP traces: one table, rows of all connections and both sides.
    let tcp = PyDict::new(py);
    // Names are made once as Python strings and shared by reference (one pointer per row, not a
    // string per row: a third of a TCP trace row's memory, issue 28).
    let (mut conn, mut side, mut kind): (Vec<Bound<'py, pyo3::types::PyString>>, Vec<Bound<'py, pyo3::types::PyString>>, Vec<Bound<'py, pyo3::types::PyString>>) =
        Default::default();
    let mut t = Vec::new();
    let side_names = [pyo3::types::PyString::new(py, "snd"), pyo3::types::PyString::new(py, "rcv")];
    let trace_kind_names: Vec<Bound<'py, pyo3::types::PyString>> =
        tcplab::tcp::TraceKind::ALL.iter().map(|k| pyo3::types::PyString::new(py, k.name())).collect();
    let (mut una, mut nxt, mut cwnd, mut ssth, mut wnd, mut unacked) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut srtt, mut rto, mut seq, mut len) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let cam = PyDict::new(py);
    let (mut c_conn, mut c_t, mut c_exp, mut c_act, mut c_diff, mut c_a, mut c_b, mut c_dec) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let n_static = r.sim.static_tcp;
    for c in r.sim.tcp[..n_static].iter_mut() {
        let conn_name = pyo3::types::PyString::new(py, &c.name);
        for (s, ep) in c.ep.iter_mut().enumerate() {
            let tr = ep.take_trace();
            for i in 0..tr.len() {
                conn.push(conn_name.clone());
                side.push(side_names[s].clone());
                t.push(tr.t[i] as f64 / 1e9);
                kind.push(trace_kind_names[tr.kind_at(i) as usize].clone());
                una.push(tr.snd_una[i]);
                nxt.push(tr.snd_nxt[i]);
                cwnd.push(tr.cwnd[i]);
                ssth.push(tr.ssthresh[i]);
                wnd.push(tr.snd_wnd[i]);
                unacked.push(tr.unacked[i]);
                srtt.push(tr.srtt[i] as f64 / 1e9);
                rto.push(tr.rto[i] as f64 / 1e9);
                seq.push(tr.seq[i]);
                len.push(tr.len[i]);
            }
            let cm = &tr.cam;
            for i in 0..cm.t.len() {
                c_conn.push(conn_name.clone());
                c_t.push(cm.t[i] as f64 / 1e9);
                c_exp.push(cm.expected_bps[i] / 1024.0);
                c_act.push(cm.actual_bps[i] / 1024.0);
                c_diff.push(cm.diff_buffers[i]);
                c_a.push(cm.alpha[i]);
                c_b.push(cm.beta[i]);
                c_dec.push(cm.decision[i]);
            }
        }
    }
    tcp.set_item("conn", conn)?;
    tcp.set_item("side", side)?;
    tcp.set_item("t_s", t)?;
    tcp.set_item("kind", kind)?;
    tcp.set_item("snd_una", una)?;
    tcp.set_item("snd_nxt", nxt)?;
    tcp.set_item("cwnd", cwnd)?;
    tcp.set_item("ssthresh", ssth)?;
    tcp.set_item("snd_wnd", wnd)?;
    tcp.set_item("unacked", unacked)?;
    tcp.set_item("srtt_s", srtt)?;
    tcp.set_item("rto_s", rto)?;
    tcp.set_item("seq", seq)?;
    tcp.set_item("len", len)?;
    out.set_item("tcp", tcp)?;
    cam.set_item("conn", c_conn)?;
    cam.set_item("t_s", c_t)?;
    cam.set_item("expected_KBps", c_exp)?;
    cam.set_item("actual_KBps", c_act)?;
    cam.set_item("diff_buffers", c_diff)?;
    cam.set_item("alpha", c_a)?;
    cam.set_item("beta", c_b)?;
    cam.set_item("decision", c_dec)?;
    out.set_item("cam", cam)?;

    // Link traces and queue interval series.
    let link = PyDict::new(py);
    let (mut l_name, mut l_t, mut l_ev, mut l_bytes, mut l_q, mut l_reason) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // Whose packet each row is (flow name, kind, sequence number), see tcplab::net::monitor::PacketTag.
    // Names are made once as Python strings and shared by reference (one pointer per row).
    let (mut l_flow, mut l_kind, mut l_seq): (Vec<Bound<'py, pyo3::types::PyString>>, Vec<Bound<'py, pyo3::types::PyString>>, Vec<i64>) = Default::default();
    let iv = PyDict::new(py);
    let (mut i_name, mut i_t, mut i_min, mut i_max, mut i_avg) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut i_bytes: Vec<u64> = Vec::new();
    let mut i_aqm: Vec<Option<f64>> = Vec::new();
    // Seed 003's per-interval link statistics (work arrival, marks, queueing delay).
    let (mut i_in, mut i_ect, mut i_ce, mut i_dn): (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>) = Default::default();
    let (mut i_dsum, mut i_dsq): (Vec<f64>, Vec<f64>) = Default::default();
    const EV: [&str; 3] = ["arrive", "depart", "drop"];
    let flow_names: Vec<Bound<'py, pyo3::types::PyString>> = {
        let sim = &r.sim;
        (0..(sim.static_tcp + sim.udp.len() + sim.traffic.len()) as u32).map(|f| pyo3::types::PyString::new(py, sim.trace_flow_name(f))).collect()
    };
    let no_flow = pyo3::types::PyString::new(py, "");
    let kind_names: Vec<Bound<'py, pyo3::types::PyString>> =
        tcplab::net::monitor::PacketTag::KIND_NAMES.iter().map(|k| pyo3::types::PyString::new(py, k)).collect();
    let py_str = |t: &str| pyo3::types::PyString::new(py, t);
    let ev_names: Vec<_> = EV.iter().map(|e| py_str(e)).collect();
    let reason_names: Vec<_> = std::iter::once("").chain(tcplab::net::DropReason::ALL.iter().map(|r| r.name())).map(py_str).collect();
    for l in r.sim.links.iter_mut() {
        if let Some(tr) = l.monitor.trace.take() {
            let link_name = py_str(&l.name);
            for i in 0..tr.t.len() {
                l_flow.push(flow_names.get(tr.flow[i] as usize).unwrap_or(&no_flow).clone());
                l_kind.push(kind_names[tr.kind[i] as usize].clone());
                l_seq.push(tr.seq[i]);
                l_name.push(link_name.clone());
                l_t.push(tr.t[i] as f64 / 1e9);
                l_ev.push(ev_names[tr.event[i] as usize].clone());
                l_bytes.push(tr.bytes[i]);
                l_q.push(tr.qlen[i]);
                l_reason.push(reason_names[tr.reason[i] as usize].clone());
            }
        }
        if l.monitor.arrived_pkts > 0 {
            for s in &l.monitor.intervals {
                i_name.push(l.name.clone());
                i_t.push(s.t_start_s);
                i_min.push(s.min_pkts);
                i_max.push(s.max_pkts);
                i_avg.push(s.avg_pkts);
                i_bytes.push(s.bytes_out);
                i_aqm.push(s.aqm_avg_pkts);
                i_in.push(s.bytes_in);
                i_ect.push(s.ect_in);
                i_ce.push(s.ce_marks);
                i_dn.push(s.delay_n);
                i_dsum.push(s.delay_sum_s);
                i_dsq.push(s.delay_sumsq_s2);
            }
        }
    }
    link.set_item("link", l_name)?;
    link.set_item("t_s", l_t)?;
    link.set_item("event", l_ev)?;
    link.set_item("bytes", l_bytes)?;
    link.set_item("qlen_pkts", l_q)?;
    link.set_item("reason", l_reason)?;
    link.set_item("flow", l_flow)?;
    link.set_item("kind", l_kind)?;
    link.set_item("seq", l_seq)?;
    out.set_item("link", link)?;
    iv.set_item("link", i_name)?;
    iv.set_item("t_s", i_t)?;
    iv.set_item("min_pkts", i_min)?;
    iv.set_item("max_pkts", i_max)?;
    iv.set_item("avg_pkts", i_avg)?;
    iv.set_item("bytes_out", i_bytes)?;
    iv.set_item("aqm_avg_pkts", i_aqm)?;
    iv.set_item("bytes_in", i_in)?;
    iv.set_item("ect_in", i_ect)?;
    iv.set_item("ce_marks", i_ce)?;
    iv.set_item("delay_n", i_dn)?;
    iv.set_item("delay_sum_s", i_dsum)?;
    iv.set_item("delay_sumsq_s2", i_dsq)?;
    out.set_item("queue_intervals", iv)?;
    // pcap captures of the link directions in `trace.pcap`: {"a->b": bytes}.
    let pcap = PyDict::new(py);
    for l in r.sim.links.iter_mut() {
        if let Some(cap) = l.monitor.pcap.take() {
            pcap.set_item(l.name.clone(), pyo3::types::PyBytes::new(py, &cap.pcap.bytes))?;
        }
    }
    out.set_item("pcap", pcap)?;
    Ok(out)
}

/// A run's summary, kept in Rust until Python asks for it: as Python objects (`to_python`, equal
/// to `json.loads(to_json())`), as the summary.json text (`to_json`), or written to a file
/// (`write_json`, the same text and a newline, streamed). A 4,096-flow run's summary is 20 MB of
/// JSON; handing it over as text cost a text in Rust, one in Python and a parse (issue 13).
#[pyclass(frozen, module = "tcplab._core")]
struct RunSummary {
    inner: tcplab::summary::Summary,
}

#[pymethods]
impl RunSummary {
    /// The summary as dicts, lists, str, int, float, bool and None.
    fn to_python<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pyser::to_python(py, &self.inner)
    }

    /// The summary.json text (without the final newline).
    fn to_json(&self, py: Python<'_>) -> String {
        py.allow_threads(|| self.inner.to_json())
    }

    /// Write summary.json at `path` (created or truncated). Raises OSError.
    fn write_json(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.allow_threads(|| std::fs::File::create(&path).and_then(|f| self.inner.write_json(f)))
            .map_err(|e| pyo3::exceptions::PyOSError::new_err((e.raw_os_error().unwrap_or(0), e.to_string(), path.display().to_string())))
    }
}

/// Run a scenario. Returns {"summary": RunSummary, "scenario_text": str, "traces": {...}}.
/// The simulation runs with the GIL released; between slices of simulated time it checks for
/// Ctrl-C (raising KeyboardInterrupt) and calls `progress(sim_time_s, end_s)` if given.
#[pyfunction]
#[pyo3(signature = (text, file, seed=None, overrides=Vec::new(), progress=None, max_memory=None))]
fn run<'py>(
    py: Python<'py>,
    text: String,
    file: String,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
    max_memory: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut interrupted: Option<PyErr> = None;
    let limits = Limits { max_memory, runtime_bytes: PYTHON_RUNTIME_BYTES, traces: Traces::Held };
    let result = py.allow_threads(|| {
        run_text_with_limits(&text, &file, seed, &overrides, &limits, |sim| {
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    interrupted = Some(e);
                    return false;
                }
                if let Some(cb) = &progress {
                    if let Err(e) = cb.call1(py, (sim.now().as_secs_f64(), sim.end.as_secs_f64())) {
                        interrupted = Some(e);
                        return false;
                    }
                }
                true
            })
        })
    });
    let Some(mut r) = result.map_err(to_py_err)? else {
        return Err(interrupted.unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("run abandoned")));
    };
    let out = PyDict::new(py);
    out.set_item("scenario_text", r.text.clone())?;
    out.set_item("traces", trace_dict(py, &mut r)?)?;
    let RunResult { sim, summary, .. } = r;
    drop(sim); // before Python turns the summary into objects
    out.set_item("summary", Bound::new(py, RunSummary { inner: summary })?)?;
    Ok(out)
}

/// Run a scenario in emulation (`tcplab emulate`). Returns {"summary_json", "scenario_text",
/// "traces", "interrupted"}. Raises ScenarioError for a bad scenario and RuntimeError with a
/// one-line reason when emulation is refused (no root, no /dev/net/tun) or the system fails.
#[pyfunction]
#[pyo3(signature = (text, file, seed=None, overrides=Vec::new(), progress=None))]
fn emulate<'py>(
    py: Python<'py>,
    text: String,
    file: String,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    use tcplab::emu::EmuOptions;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let opts = EmuOptions { seed, overrides };
    // The emulator calls its progress closure from its real-time loop: it must never wait for
    // the GIL there (another Python thread may hold it for the 5 ms switch interval, and the
    // callback's own Python time would stall the network). The closure only stores the times;
    // a thread of normal priority, started before the loop takes its real-time priority, takes
    // the GIL and calls the Python callback every 100 ms. A callback that raises stops the run.
    let (now_bits, end_bits) = (AtomicU64::new(f64::NAN.to_bits()), AtomicU64::new(0));
    let (raised, done) = (AtomicBool::new(false), AtomicBool::new(false));
    let result = py.allow_threads(|| {
        std::thread::scope(|s| {
            if let Some(cb) = &progress {
                s.spawn(|| {
                    let mut last = std::time::Instant::now();
                    while !done.load(Ordering::Acquire) {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        let now = f64::from_bits(now_bits.load(Ordering::Relaxed));
                        if last.elapsed().as_millis() < 100 || now.is_nan() || done.load(Ordering::Acquire) {
                            continue;
                        }
                        last = std::time::Instant::now();
                        let end = f64::from_bits(end_bits.load(Ordering::Relaxed));
                        if Python::with_gil(|py| cb.call1(py, (now, end)).is_err()) {
                            raised.store(true, Ordering::Release);
                            return;
                        }
                    }
                });
            }
            let r = tcplab::emu::emulate(&text, &file, &opts, |now, end| {
                now_bits.store(now.to_bits(), Ordering::Relaxed);
                end_bits.store(end.to_bits(), Ordering::Relaxed);
                !raised.load(Ordering::Acquire)
            });
            done.store(true, Ordering::Release);
            r
        })
    });
    let r = match result {
        Ok(r) => r,
        Err(e) => return Err(emu_err(e)),
    };
    let summary = tcplab::summary::Summary::from_sim(&r.sim, 0.0);
    let packet_records = r.packet_records;
    let command_outputs = r.command_outputs;
    let mut rr = RunResult { sim: r.sim, summary, text: r.text.clone() };
    let out = PyDict::new(py);
    out.set_item("summary_json", r.summary_json)?;
    out.set_item("scenario_text", r.text)?;
    out.set_item("traces", trace_dict(py, &mut rr)?)?;
    out.set_item("interrupted", r.interrupted)?;
    out.set_item("packet_records", pyo3::types::PyBytes::new(py, &packet_records))?;
    let outputs = PyDict::new(py);
    for (name, stdout, stderr) in &command_outputs {
        outputs.set_item(name, (pyo3::types::PyBytes::new(py, stdout), pyo3::types::PyBytes::new(py, stderr)))?;
    }
    out.set_item("command_outputs", outputs)?;
    Ok(out)
}

/// Bytes in a size as scenario files write it ("1.4KB"; KB = 1024 B). Raises ValueError.
#[pyfunction]
fn parse_size(text: &str) -> PyResult<u64> {
    tcplab::front_api::parse_size(text).map_err(PyValueError::new_err)
}

/// Bits per second in a rate as scenario files write it ("1.6Mbps", "200KB/s"). Raises ValueError.
#[pyfunction]
fn parse_rate(text: &str) -> PyResult<f64> {
    tcplab::front_api::parse_rate(text).map_err(PyValueError::new_err)
}

/// Seconds in a duration as scenario files write it ("50ms", "2min"). Raises ValueError.
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<f64> {
    tcplab::front_api::parse_duration(text).map(|t| t.as_secs_f64()).map_err(PyValueError::new_err)
}

/// Line of the item at `path` (e.g. "links[2].delay") in TOML text, or of its deepest existing
/// part; None when nothing of it is there.
#[pyfunction]
fn locate(text: &str, path: &str) -> Option<usize> {
    tcplab::front_api::locate(text, path)
}

/// Line of the literal `key` in TOML text: under the table `section` when given, else anywhere.
#[pyfunction]
#[pyo3(signature = (text, key, section=None))]
fn locate_key(text: &str, key: &str, section: Option<&str>) -> Option<usize> {
    tcplab::front_api::locate_key(text, key, section)
}

/// Jain's fairness index of non-negative shares; None when there are none or all are zero.
/// Raises ValueError for a negative share.
#[pyfunction]
fn jain_index(values: Vec<f64>) -> PyResult<Option<f64>> {
    tcplab::front_api::jain_index(&values).map_err(PyValueError::new_err)
}

/// Remove namespaces and TAP devices that emulators left behind (of dead processes, or all).
#[pyfunction]
#[pyo3(signature = (all=false))]
fn emulate_cleanup(all: bool) -> PyResult<Vec<String>> {
    tcplab::emu::sys::cleanup_leftovers(all).map_err(pyo3::exceptions::PyRuntimeError::new_err)
}

/// Why emulation cannot run on this machine, or None.
#[pyfunction]
fn emulate_refusal() -> Option<String> {
    tcplab::emu::sys::refusal()
}

/// The kernel's congestion controls as tcplab variants ("linux-cubic", ...).
#[pyfunction]
fn linux_variants() -> Vec<String> {
    tcplab::emu::linux_variants()
}

/// tcplab's TCP variants, one row of the registry each (tcplab-tcp `config::variants`):
/// (name, one-line description, parts composed, parameter names).
#[pyfunction]
fn tcp_variants() -> Vec<(String, String, String, String)> {
    tcplab::tcp::config::variants::describe().into_iter().map(|[name, what, parts, params]| (name, what, parts, params)).collect()
}

/// tcplab's queue disciplines, one row of the registry each (`net::registry`):
/// (name, one-line description, parameter names besides `limit`).
#[pyfunction]
fn queue_disciplines() -> Vec<(String, String, String)> {
    tcplab::net::registry::describe().into_iter().map(|[name, what, params]| (name, what, params)).collect()
}

// The benchmark cases of `tcplab bench`, defined once in `tcplab::bench_cases` (issue 28):
// python/tcplab/bench.py builds its `Scenario`s from these texts.

/// The benchmark cases: [(name, one-line description)], in `tcplab bench --list` order.
#[pyfunction]
fn bench_cases() -> Vec<(&'static str, &'static str)> {
    tcplab::bench_cases::CASES.to_vec()
}

/// (the cases `tcplab bench` runs without names, the four cases compared with htsim).
#[pyfunction]
fn bench_case_lists() -> (Vec<&'static str>, Vec<&'static str>) {
    (tcplab::bench_cases::DEFAULT_CASES.to_vec(), tcplab::bench_cases::HTSIM_CASES.to_vec())
}

/// Case `name`'s scenario: ("text", TOML text) or ("bundled", path under tcplab/scenarios);
/// None for an unknown case.
#[pyfunction]
fn bench_case(name: &str) -> Option<(&'static str, String)> {
    use tcplab::bench_cases::Case;
    tcplab::bench_cases::case(name).map(|c| match c {
        Case::Text(t) => ("text", t),
        Case::Bundled(p) => ("bundled", p.to_string()),
    })
}

#[pyfunction]
#[pyo3(signature = (n, variant="newreno".to_string(), duration="60s".to_string(), traced=false, rate="30Mbps".to_string(),
                    delay="50ms".to_string(), queue="128KB".to_string(), access_rate="100Mbps".to_string(), name=None))]
#[allow(clippy::too_many_arguments)]
fn bench_tcp_dumbbell(n: usize, variant: String, duration: String, traced: bool, rate: String, delay: String, queue: String,
                      access_rate: String, name: Option<String>) -> String {
    tcplab::bench_cases::Dumbbell { n, variant, duration, traced, rate, delay, queue, access_rate, name }.text()
}

#[pyfunction]
fn bench_udp_dumbbell(n: usize, duration: &str) -> String {
    tcplab::bench_cases::udp_dumbbell(n, duration)
}

#[pyfunction]
fn bench_poisson_queue(duration: &str) -> String {
    tcplab::bench_cases::poisson_queue(duration)
}

#[pyfunction]
fn bench_short_transfers(n: usize, hosts: usize, size: &str) -> String {
    tcplab::bench_cases::short_transfers(n, hosts, size)
}

#[pyfunction]
fn bench_tcplib_backbone(routers: usize, hosts: usize, duration: &str) -> String {
    tcplab::bench_cases::tcplib_backbone(routers, hosts, duration)
}

#[pyfunction]
#[pyo3(signature = (access, duration))]
fn bench_shared_medium_cbr(access: Option<&str>, duration: &str) -> String {
    tcplab::bench_cases::shared_medium_cbr(access, duration)
}

/// The columns `columns` of the Parquet file `path` (a run directory's trace), only the rows whose
/// string column `filter_column` equals `filter_value` when both are given (issue 28: the graphs
/// read what they draw without polars). Returns (every column name of the file, the file row
/// numbers of the rows kept as int64 bytes, per requested column present: (name, kind, values
/// bytes, null bytes or None, the distinct strings for kind "str")), kind "f8" (float64), "i8"
/// (int64) or "str" (uint32 codes into the strings). Raises ValueError when the file cannot be read
/// this way (the caller reads it with polars then, which words the error).
#[pyfunction]
#[pyo3(signature = (path, columns, filter_column=None, filter_value=None))]
#[allow(clippy::type_complexity)]
fn read_parquet_columns<'py>(
    py: Python<'py>,
    path: &str,
    columns: Vec<String>,
    filter_column: Option<String>,
    filter_value: Option<String>,
) -> PyResult<(Vec<String>, Bound<'py, PyBytes>, Vec<(String, &'static str, Bound<'py, PyBytes>, Option<Bound<'py, PyBytes>>, Vec<String>)>)> {
    let filter = match (&filter_column, &filter_value) {
        (Some(c), Some(v)) => Some((c.as_str(), v.as_str())),
        _ => None,
    };
    // A file the `parquet` crate panics on is an error like any other: the caller reads it with polars.
    let table = py
        .allow_threads(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parquet_read::read(path, &columns, filter)))
                .unwrap_or_else(|_| Err("the Parquet reader failed on this file".to_string()))
        })
        .map_err(|e| PyValueError::new_err(format!("{path}: {e}")))?;
    fn bytes_of<'py, T: Copy>(py: Python<'py>, v: &[T]) -> Bound<'py, PyBytes> {
        // SAFETY: plain numbers (f64, i64, u32, u64) viewed as their bytes, read only.
        let b = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
        PyBytes::new(py, b)
    }
    let rows = bytes_of(py, &table.rows);
    let mut out = Vec::with_capacity(table.columns.len());
    for c in table.columns {
        let nulls = c.nulls.as_ref().map(|n| PyBytes::new(py, n));
        out.push(match c.values {
            parquet_read::Values::F64(v) => (c.name, "f8", bytes_of(py, &v), nulls, Vec::new()),
            parquet_read::Values::I64(v) => (c.name, "i8", bytes_of(py, &v), nulls, Vec::new()),
            parquet_read::Values::Str(v, cats) => (c.name, "str", bytes_of(py, &v), nulls, cats),
        });
    }
    Ok((table.names, rows, out))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", tcplab::VERSION)?;
    m.add("__source_revision__", env!("TCPLAB_SOURCE_REVISION"))?;
    m.add("ScenarioError", m.py().get_type::<ScenarioErrorPy>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_class::<RunSummary>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(expand, m)?)?;
    m.add_function(wrap_pyfunction!(struct_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory_parts, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_cleanup, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_refusal, m)?)?;
    m.add_function(wrap_pyfunction!(linux_variants, m)?)?;
    for f in [wrap_pyfunction!(parse_size, m)?, wrap_pyfunction!(parse_rate, m)?, wrap_pyfunction!(parse_duration, m)?] {
        m.add_function(f)?;
    }
    m.add_function(wrap_pyfunction!(locate, m)?)?;
    m.add_function(wrap_pyfunction!(read_parquet_columns, m)?)?;
    m.add_function(wrap_pyfunction!(locate_key, m)?)?;
    m.add_function(wrap_pyfunction!(jain_index, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_variants, m)?)?;
    m.add_function(wrap_pyfunction!(queue_disciplines, m)?)?;
    for f in [
        wrap_pyfunction!(bench_cases, m)?,
        wrap_pyfunction!(bench_case_lists, m)?,
        wrap_pyfunction!(bench_case, m)?,
        wrap_pyfunction!(bench_tcp_dumbbell, m)?,
        wrap_pyfunction!(bench_udp_dumbbell, m)?,
        wrap_pyfunction!(bench_poisson_queue, m)?,
        wrap_pyfunction!(bench_short_transfers, m)?,
        wrap_pyfunction!(bench_tcplib_backbone, m)?,
        wrap_pyfunction!(bench_shared_medium_cbr, m)?,
    ] {
        m.add_function(f)?;
    }
    plots::register(m)?;
    Ok(())
}
