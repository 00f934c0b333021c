//! tcplab's graphs drawn without Python (issue 28: one `tcplab plot` at interactive speed; on the
//! project's machine importing matplotlib alone costs ~1 s). The native `tcplab` binary
//! (crates/tcplab-cli) and the Python extension (`tcplab._core`) call [`plot`]; each graph is
//! built as python/tcplab/plots/ builds it with matplotlib — same series, axes, units, titles and
//! legends — as a [`figure::Figure`], then drawn by plotters to SVG or PNG (and for `tcplab
//! report` to its zoomable SVG, [`zsvg`]). PDF, UDP sources in the flows graph and a link named by
//! its scenario name are not drawn here: [`plot`] answers [`PlotError::NotNative`] and the caller
//! hands the command to the Python version.

pub mod figure;
pub mod kinds;
pub mod parquet_read;
pub mod run;
pub mod series;
pub mod zsvg;

use std::path::{Path, PathBuf};

pub use figure::Figure;
pub use run::Run;

#[derive(Debug)]
pub enum PlotError {
    /// Bad input or an unwritable output: the message, printed after "error: ".
    Error(String),
    /// Not drawn here: the Python version draws it (why, for a debugging note).
    NotNative(String),
}

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlotError::Error(m) => write!(f, "{m}"),
            PlotError::NotNative(m) => write!(f, "not drawn natively: {m}"),
        }
    }
}

pub const KINDS: [&str; 6] = ["tcp", "cam", "seq", "link", "queue", "flows"];

/// What `tcplab plot` was asked (python/tcplab/plots/files.py `plot_cli`'s arguments).
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub run_dir: PathBuf,
    pub conn: Option<String>,
    pub kind: String,
    pub t_from: Option<f64>,
    pub t_to: Option<f64>,
    pub format: String,
    pub out: Option<PathBuf>,
}

fn safe(name: &str) -> String {
    let s = name.replace("->", "-");
    let mut out = String::new();
    let mut dash = false;
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() || "_.-".contains(ch) {
            out.push(ch);
            dash = false;
        } else if !dash {
            out.push('-');
            dash = true;
        }
    }
    let t = out.trim_matches('-');
    if t.is_empty() { "x".into() } else { t.to_string() }
}

/// The figures of a request, with the name each file is called by (a flow, a link, "all").
pub fn figures(run: &Run, req: &Request) -> Result<Vec<(String, Figure)>, PlotError> {
    let (t0, t1) = (req.t_from, req.t_to);
    match req.kind.as_str() {
        "tcp" => {
            let names = match &req.conn {
                Some(c) => {
                    run.flow(c)?;
                    vec![c.clone()]
                }
                None => run.conns(),
            };
            names.into_iter().map(|c| kinds::tcp::tcp_graph(run, &c, t0, t1).map(|f| (c, f))).collect()
        }
        "seq" => {
            let conns = match &req.conn {
                Some(c) => vec![c.clone()],
                None => run.conns(),
            };
            let name = req.conn.clone().unwrap_or_else(|| "all".into());
            Ok(vec![(name, kinds::seq::seq_graph(run, &conns, t0, t1)?)])
        }
        "link" | "queue" => {
            let link = match &req.conn {
                Some(l) if run.link_names().contains(l) => l.clone(),
                Some(l) => return Err(PlotError::NotNative(format!("link {l} is not a link direction of the summary"))),
                None => run.bottleneck().ok_or_else(|| PlotError::Error(format!("run {} has no links", run.dir.display())))?,
            };
            let f = if req.kind == "link" { kinds::link::link_graph(run, &link, t0, t1)? } else { kinds::link::queue_graph(run, &link, 0.1, t0, t1)? };
            Ok(vec![(link, f)])
        }
        "flows" => Ok(vec![("all".into(), kinds::flows::flows_graph(run, t0, t1)?)]),
        "cam" => {
            let names = match &req.conn {
                Some(c) => vec![c.clone()],
                None => {
                    let mut v = Vec::new();
                    for c in run.conns() {
                        if kinds::cam::cam_rows(run, &c)?.len > 0 {
                            v.push(c);
                        }
                    }
                    if v.is_empty() {
                        return Err(PlotError::Error(format!("run {} has no Vegas CAM trace (trace_cam.parquet absent or empty)", run.dir.display())));
                    }
                    v
                }
            };
            names.into_iter().map(|c| kinds::cam::cam_graph(run, &c, t0, t1).map(|f| (c, f))).collect()
        }
        k => Err(PlotError::Error(format!("unknown plot kind '{k}'; choose from {}", KINDS.join(", ")))),
    }
}

/// An output file may be created or replace a regular file (`check_output_file`).
fn check_output_file(p: &Path) -> Result<(), PlotError> {
    match std::fs::symlink_metadata(p) {
        Err(_) => Ok(()),
        Ok(m) if m.is_file() || (m.file_type().is_symlink() && p.is_file()) => Ok(()),
        Ok(_) => Err(PlotError::Error(format!("{}: exists and is not a regular file; refusing to replace it", p.display()))),
    }
}

/// One figure written to `path` in `fmt` (png or svg).
pub fn save(fig: &Figure, path: &Path, fmt: &str) -> Result<(), PlotError> {
    check_output_file(path)?;
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).map_err(|e| PlotError::Error(format!("{}: {e}", d.display())))?;
    }
    let bytes = match fmt {
        "svg" => figure::to_svg(fig).map_err(PlotError::Error)?.into_bytes(),
        "png" => figure::to_png(fig).map_err(PlotError::Error)?,
        f => return Err(PlotError::NotNative(format!("format {f}"))),
    };
    std::fs::write(path, bytes).map_err(|e| PlotError::Error(format!("{}: {e}", path.display())))
}

/// `tcplab plot` (python/tcplab/plots/files.py `plot_cli`): the files written. Nothing is
/// written unless every figure of the request can be drawn here.
pub fn plot(req: &Request) -> Result<Vec<PathBuf>, PlotError> {
    let kind = req.kind.to_lowercase();
    if !KINDS.contains(&kind.as_str()) {
        return Err(PlotError::Error(format!("unknown plot kind '{kind}'; choose from {}", KINDS.join(", "))));
    }
    let mut fmt = req.format.to_lowercase().trim_start_matches('.').to_string();
    let suffix = req.out.as_ref().and_then(|o| o.extension()).map(|e| e.to_string_lossy().to_lowercase());
    let as_file = matches!(suffix.as_deref(), Some("png" | "svg" | "pdf"));
    if as_file {
        fmt = suffix.clone().unwrap();
    }
    if fmt == "pdf" {
        return Err(PlotError::NotNative("pdf".into()));
    }
    if fmt != "png" && fmt != "svg" {
        return Err(PlotError::Error(format!("unsupported plot format '{fmt}' (png, svg or pdf)")));
    }
    let run = Run::load(&req.run_dir)?;
    let req = Request { kind: kind.clone(), ..req.clone() };
    let figs = figures(&run, &req)?;
    let outp = req.out.clone().unwrap_or_else(|| req.run_dir.join("plots"));
    let mut written = Vec::new();
    let n = figs.len();
    for (name, fig) in figs {
        let target = if !as_file {
            outp.join(format!("{kind}_{}.{fmt}", safe(&name)))
        } else if n == 1 {
            outp.clone()
        } else {
            let stem = outp.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let ext = outp.extension().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            outp.with_file_name(format!("{stem}-{}.{ext}", safe(&name)))
        };
        save(&fig, &target, &fmt)?;
        written.push(target);
    }
    Ok(written)
}

/// A report graph as drawn here (python/tcplab/report/figures.py).
pub enum Drawn {
    /// The zoomable SVG and its `data-zoom` JSON (crate::zsvg).
    Svg(String, String),
    /// A PNG (a graph whose SVG would be too big to zoom).
    Png(Vec<u8>),
}

/// One graph of `tcplab report` (python/tcplab/report/sections.py `_graphs_html`) over the whole
/// run: `kind` tcp (names: the flow), seq (the flows drawn), flows (every flow of the run, in
/// order: anything else is the Python version's), link or queue (the link). As zoomable SVG with
/// ids prefixed by `uid`, or as PNG when the SVG would have more than `max_markers` markers or
/// `max_svg_bytes` bytes. [`PlotError::NotNative`] for what only the Python version draws.
pub fn report_graph(run: &Run, kind: &str, names: &[String], uid: &str, max_svg_bytes: usize, max_markers: usize) -> Result<Drawn, PlotError> {
    let one = || names.first().cloned().ok_or_else(|| PlotError::Error(format!("a {kind} graph names its flow or link")));
    let fig = match kind {
        "tcp" => kinds::tcp::tcp_graph(run, &one()?, None, None)?,
        "seq" => kinds::seq::seq_graph(run, names, None, None)?,
        "flows" => {
            if names != run.conns().as_slice() {
                return Err(PlotError::NotNative("a flows graph of some of the run's flows".into()));
            }
            kinds::flows::flows_graph(run, None, None)?
        }
        "link" | "queue" => {
            let link = one()?;
            if !run.link_names().contains(&link) {
                return Err(PlotError::NotNative(format!("link {link} is not a link direction of the summary")));
            }
            if kind == "link" { kinds::link::link_graph(run, &link, None, None)? } else { kinds::link::queue_graph(run, &link, 0.1, None, None)? }
        }
        "cam" => kinds::cam::cam_graph(run, &one()?, None, None)?,
        k => return Err(PlotError::Error(format!("unknown plot kind '{k}'; choose from {}", KINDS.join(", ")))),
    };
    if zsvg::marker_count(&fig) <= max_markers {
        let (svg, meta) = zsvg::to_zoom_svg(&fig, uid);
        if svg.len() <= max_svg_bytes {
            return Ok(Drawn::Svg(svg, meta.json(uid)));
        }
    }
    figure::to_png(&fig).map(Drawn::Png).map_err(PlotError::Error)
}

/// One figure of a request (`tcplab plot`'s kinds and flags, without writing it) as PNG or SVG bytes.
pub fn plot_bytes(req: &Request) -> Result<Vec<u8>, PlotError> {
    let fmt = req.format.to_lowercase();
    if fmt != "png" && fmt != "svg" {
        return Err(PlotError::NotNative(format!("format {fmt}")));
    }
    let run = Run::load(&req.run_dir)?;
    let req = Request { kind: req.kind.to_lowercase(), ..req.clone() };
    let figs = figures(&run, &req)?;
    let Some((_, fig)) = figs.first() else { return Err(PlotError::Error("nothing to draw".into())) };
    if fmt == "svg" { figure::to_svg(fig).map(String::into_bytes).map_err(PlotError::Error) } else { figure::to_png(fig).map_err(PlotError::Error) }
}
