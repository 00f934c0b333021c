//! The table `tcplab bench` prints row by row: `tcplab.textable.Columns` with bench.py's column
//! spec (header, width, format), formatted as Python's `format(value, spec)` does.

/// (header, width, decimals; None for the text and integer columns).
const SPEC: [(&str, usize, Option<usize>); 15] = [
    ("case", 24, None),
    ("flows", 7, None),
    ("sim s", 6, Some(1)),
    ("core s", 7, Some(3)),
    ("run() s", 7, Some(3)),
    ("events", 10, None),
    ("M ev/s", 7, Some(2)),
    ("ns/event", 8, Some(0)),
    ("ns/pkt-hop", 10, Some(0)),
    ("peak RSS MB", 11, Some(0)),
    ("RSS/flow KB", 11, Some(1)),
    ("ms/sim s", 8, Some(2)),
    ("process s", 9, Some(3)),
    ("proc RSS MB", 11, Some(0)),
    ("instr/event", 11, Some(0)),
];

pub struct Table;

impl Table {
    pub fn new() -> Table {
        Table
    }

    fn join(cells: &[String]) -> String {
        let parts: Vec<String> =
            cells.iter().zip(SPEC).enumerate().map(|(i, (c, (_, w, _)))| if i == 0 { format!("{c:<w$}") } else { format!("{c:>w$}") }).collect();
        parts.join(" ")
    }

    pub fn header(&self) -> String {
        Table::join(&SPEC.map(|(h, _, _)| h.to_string()))
    }

    /// The case name and the other columns' values (None prints as "-").
    pub fn row(&self, case: &str, values: &[Option<f64>]) -> String {
        let mut cells = vec![case.to_string()];
        cells.extend(values.iter().zip(&SPEC[1..]).map(|(v, (_, _, nd))| match (v, nd) {
            (None, _) => "-".to_string(),
            (Some(v), Some(nd)) => format!("{v:.nd$}"),
            (Some(v), None) => format!("{}", *v as i64),
        }));
        Table::join(&cells)
    }
}
