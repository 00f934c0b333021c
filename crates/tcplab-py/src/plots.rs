//! The graphs drawn natively (crates/tcplab-plot) for the Python package: `tcplab report`'s
//! graphs as zoomable SVG or PNG (python/tcplab/report/sections.py), and one figure's bytes. What
//! tcplab-plot does not draw comes back as "python" and the package draws it with matplotlib.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tcplab_plot::{Drawn, PlotError, Request, Run};

/// What [`report_graphs`] answers for one graph.
enum Answer {
    Svg(String, String),
    Png(Vec<u8>),
    Python(String),
}

fn answer(r: Result<Drawn, PlotError>) -> Answer {
    match r {
        Ok(Drawn::Svg(s, m)) => Answer::Svg(s, m),
        Ok(Drawn::Png(b)) => Answer::Png(b),
        // an error is the Python version's too: it raises it, or draws what it can, as before
        Err(e) => Answer::Python(e.to_string()),
    }
}

/// The report's graphs of the run in `run_dir`: `graphs` is a list of (kind, names, uid) — kind
/// tcp, cam, seq, flows, link or queue; names the flow(s) or link; uid the prefix of the SVG's
/// ids. For each graph a tuple: ("svg", svg text, data-zoom JSON), ("png", bytes) when the SVG
/// would be over `max_svg_bytes` or `max_markers` markers, or ("python", why) for a graph left
/// to matplotlib. Drawn on `threads` threads without the GIL. The run directory is not verified
/// again: the caller has loaded it with `RunData.load`, which checks its completion marker.
#[pyfunction]
#[pyo3(signature = (run_dir, graphs, max_svg_bytes, max_markers, threads=2))]
fn report_graphs(py: Python<'_>, run_dir: PathBuf, graphs: Vec<(String, Vec<String>, String)>, max_svg_bytes: usize, max_markers: usize, threads: usize) -> PyResult<Vec<PyObject>> {
    let answers: Vec<Answer> = py.allow_threads(|| match Run::open(&run_dir).map(Run::shared) {
        Err(e) => graphs.iter().map(|_| Answer::Python(e.to_string())).collect(),
        Ok(run) => {
            let threads = threads.clamp(1, graphs.len().max(1));
            let mut slots: Vec<Option<Answer>> = graphs.iter().map(|_| None).collect();
            std::thread::scope(|s| {
                let run = &run;
                let graphs = &graphs;
                let handles: Vec<_> = (0..threads)
                    .map(|k| {
                        s.spawn(move || {
                            (k..graphs.len())
                                .step_by(threads)
                                .map(|i| {
                                    let (kind, names, uid) = &graphs[i];
                                    (i, answer(tcplab_plot::report_graph(run, kind, names, uid, max_svg_bytes, max_markers)))
                                })
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                for h in handles {
                    match h.join() {
                        Ok(v) => {
                            for (i, a) in v {
                                slots[i] = Some(a);
                            }
                        }
                        Err(_) => {} // a panic: those graphs are left to Python below
                    }
                }
            });
            slots.into_iter().map(|a| a.unwrap_or_else(|| Answer::Python("the native drawing failed".into()))).collect()
        }
    });
    Ok(answers
        .into_iter()
        .map(|a| match a {
            Answer::Svg(s, m) => ("svg", s, m).into_pyobject(py).map(|o| o.into_any().unbind()),
            Answer::Png(b) => ("png", PyBytes::new(py, &b)).into_pyobject(py).map(|o| o.into_any().unbind()),
            Answer::Python(w) => ("python", w).into_pyobject(py).map(|o| o.into_any().unbind()),
        })
        .collect::<Result<Vec<_>, _>>()?)
}

/// One figure of `tcplab plot RUN_DIR --kind KIND [--conn NAME]` as PNG or SVG bytes (the first
/// when the request draws several). Raises NotImplementedError for what only the Python version
/// draws (pdf, UDP sources in a throughput graph, ...) and ValueError for bad input.
#[pyfunction]
#[pyo3(signature = (run_dir, kind, name=None, format="svg", t_from=None, t_to=None))]
fn plot_bytes<'py>(py: Python<'py>, run_dir: PathBuf, kind: &str, name: Option<String>, format: &str, t_from: Option<f64>, t_to: Option<f64>) -> PyResult<Bound<'py, PyBytes>> {
    let req = Request { run_dir, conn: name, kind: kind.into(), t_from, t_to, format: format.into(), out: None };
    match py.allow_threads(|| tcplab_plot::plot_bytes(&req)) {
        Ok(b) => Ok(PyBytes::new(py, &b)),
        Err(PlotError::NotNative(w)) => Err(pyo3::exceptions::PyNotImplementedError::new_err(w)),
        Err(PlotError::Error(m)) => Err(PyValueError::new_err(m)),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(report_graphs, m)?)?;
    m.add_function(wrap_pyfunction!(plot_bytes, m)?)?;
    Ok(())
}
