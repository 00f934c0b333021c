//! The trace files of a run, streamed to Parquet as the run goes (issue 28): between slices of
//! simulated time the rows the endpoints and link monitors recorded are taken out of the
//! simulation into bounded column buffers, and each buffer is written to its file as a row group
//! once it holds [`ROW_GROUP_ROWS`] rows. The run therefore holds at most a slice's rows in the
//! simulation and a row group's per table here, never a whole run's records.
//!
//! Columns, names and types are those `tcplab.api.Run.save` writes with polars (integers as
//! Int64, times in seconds as Float64, names as strings), so `python/tcplab/rundir.py` reads
//! these files unchanged, compressed with zstd as polars does. Within each row group rows are
//! grouped by connection and side (trace_tcp), connection (trace_cam) or link, in time order
//! within each, as the Python path writes a whole run: a run whose table fits in one row group
//! gets the Python path's row order exactly; a longer one repeats the groups once per row group.
//! A reader selects by `conn`/`link` and keeps time order within each.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use tcplab::sim::Simulation;

use crate::Failure;

/// zstd's level for the trace files: polars' default, so both paths write files of one size.
const PARQUET_ZSTD_LEVEL: i32 = 3;

/// zstd's level for a table that never filled a row group (its whole file is written at the end
/// of the run). The parquet crate compresses each page through a streaming zstd encoder that
/// does not know the page's size, so the context is sized for the level's whole window: 3.7 MB
/// at level 3 (2 MB window), which was 3.66 MB of a 16-flow run's 4.65 MB heap peak when
/// queue_intervals.parquet was written. Level 1's window is 512 KB (context ~0.9 MB); a small
/// table compresses to within a few per cent of level 3's size. Still zstd, so polars and
/// duckdb read it as before; the level depends only on the row count, so files stay
/// deterministic.
const PARQUET_ZSTD_LEVEL_SMALL: i32 = 1;

/// Rows per row group: the bound on each table's buffer (~64 K rows, a few MB).
pub const ROW_GROUP_ROWS: usize = tcplab::run::STREAM_ROW_GROUP_ROWS as usize;

#[derive(Clone, Copy)]
enum Kind {
    Str,
    F64,
    I64,
    OptF64,
}

enum Column {
    Str(Vec<ByteArray>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    /// Values of the rows that have one, and per row 1 (a value) or 0 (null).
    OptF64(Vec<f64>, Vec<i16>),
}

/// One Parquet file written a row group at a time; created when its first rows are written (a
/// table without rows has no file, as in the Python path).
struct Table {
    file_name: &'static str,
    path: PathBuf,
    schema: Arc<parquet::schema::types::Type>,
    columns: Vec<Column>,
    rows: usize,
    /// Each buffered row's group key (see `end_row`).
    keys: Vec<u32>,
    writer: Option<SerializedFileWriter<File>>,
}

impl Table {
    fn new(dir: &Path, file_name: &'static str, spec: &[(&str, Kind)]) -> Table {
        let fields: String = spec
            .iter()
            .map(|(name, k)| match k {
                Kind::Str => format!("REQUIRED BYTE_ARRAY {name} (UTF8);"),
                Kind::F64 => format!("REQUIRED DOUBLE {name};"),
                Kind::I64 => format!("REQUIRED INT64 {name};"),
                Kind::OptF64 => format!("OPTIONAL DOUBLE {name};"),
            })
            .collect();
        let schema = Arc::new(parse_message_type(&format!("message schema {{ {fields} }}")).expect("trace schema parses"));
        let columns = spec
            .iter()
            .map(|(_, k)| match k {
                Kind::Str => Column::Str(Vec::new()),
                Kind::F64 => Column::F64(Vec::new()),
                Kind::I64 => Column::I64(Vec::new()),
                Kind::OptF64 => Column::OptF64(Vec::new(), Vec::new()),
            })
            .collect();
        Table { file_name, path: dir.join(file_name), schema, columns, rows: 0, keys: Vec::new(), writer: None }
    }

    fn str(&mut self, i: usize, v: &ByteArray) {
        if let Column::Str(c) = &mut self.columns[i] {
            c.push(v.clone()); // a shared buffer: one reference per row
        }
    }
    fn f64(&mut self, i: usize, v: f64) {
        if let Column::F64(c) = &mut self.columns[i] {
            c.push(v);
        }
    }
    fn i64(&mut self, i: usize, v: i64) {
        if let Column::I64(c) = &mut self.columns[i] {
            c.push(v);
        }
    }
    fn opt_f64(&mut self, i: usize, v: Option<f64>) {
        if let Column::OptF64(c, d) = &mut self.columns[i] {
            d.push(v.is_some() as i16);
            c.extend(v);
        }
    }
    /// A row of group `key` (a connection's side, a link direction) is complete: write a row
    /// group when the buffer is full. Within a row group rows are written grouped by key (stable:
    /// time order within a group), as the Python path writes a whole run; a run that fits in one
    /// row group gets the Python path's row order, and its files compress as well (zstd finds
    /// the long runs of one connection's names and times).
    fn end_row(&mut self, key: u32) -> Result<(), parquet::errors::ParquetError> {
        self.keys.push(key);
        self.rows += 1;
        if self.rows >= ROW_GROUP_ROWS {
            self.write_group()?;
        }
        Ok(())
    }

    fn write_group(&mut self) -> Result<(), parquet::errors::ParquetError> {
        self.write_group_at(PARQUET_ZSTD_LEVEL)
    }

    /// Write the buffered rows as a row group; `level` is the zstd level if this creates the file.
    fn write_group_at(&mut self, level: i32) -> Result<(), parquet::errors::ParquetError> {
        if self.rows == 0 {
            return Ok(());
        }
        self.group_rows_by_key();
        if self.writer.is_none() {
            // zstd as polars writes it (its level 3; 1 for a small table), and no dictionary for the float columns
            // (times, rates: nearly all distinct, so a dictionary only adds bytes), as polars.
            let mut props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(level).expect("a valid zstd level")))
                .set_statistics_enabled(EnabledStatistics::None)
                .set_data_page_row_count_limit(ROW_GROUP_ROWS) // pages end at 1 MB, not 20 K rows
                .set_created_by(format!("tcplab {}", tcplab::VERSION));
            for (field, col) in self.schema.get_fields().iter().zip(&self.columns) {
                if matches!(col, Column::F64(_) | Column::OptF64(..)) {
                    props = props.set_column_dictionary_enabled(field.name().into(), false);
                }
            }
            let props = props.build();
            let file = File::create(&self.path)?;
            self.writer = Some(SerializedFileWriter::new(file, self.schema.clone(), Arc::new(props))?);
        }
        let mut group = self.writer.as_mut().unwrap().next_row_group()?;
        for col in &mut self.columns {
            let mut w = group.next_column()?.expect("one writer per column");
            match col {
                Column::Str(v) => w.typed::<ByteArrayType>().write_batch(v, None, None).map(|_| v.clear())?,
                Column::F64(v) => w.typed::<DoubleType>().write_batch(v, None, None).map(|_| v.clear())?,
                Column::I64(v) => w.typed::<Int64Type>().write_batch(v, None, None).map(|_| v.clear())?,
                Column::OptF64(v, d) => w.typed::<DoubleType>().write_batch(v, Some(d), None).map(|_| {
                    v.clear();
                    d.clear()
                })?,
            }
            w.close()?;
        }
        group.close()?;
        self.rows = 0;
        Ok(())
    }

    /// Reorder the buffered rows so each key's rows are together, keys ascending, in their
    /// recorded order within a key.
    fn group_rows_by_key(&mut self) {
        let keys = std::mem::take(&mut self.keys);
        if keys.windows(2).all(|w| w[0] <= w[1]) {
            return;
        }
        let mut order: Vec<u32> = (0..keys.len() as u32).collect();
        order.sort_by_key(|&i| keys[i as usize]); // stable
        fn permute<T: Clone>(v: &mut Vec<T>, order: &[u32]) {
            *v = order.iter().map(|&i| v[i as usize].clone()).collect();
        }
        for col in &mut self.columns {
            match col {
                Column::Str(v) => permute(v, &order),
                Column::F64(v) => permute(v, &order),
                Column::I64(v) => permute(v, &order),
                Column::OptF64(v, d) => {
                    // values are stored only for the rows that have one: spread, permute, pack
                    let mut it = v.iter();
                    let mut full: Vec<Option<f64>> = d.iter().map(|&x| if x == 1 { it.next().copied() } else { None }).collect();
                    permute(&mut full, &order);
                    *d = full.iter().map(|x| x.is_some() as i16).collect();
                    *v = full.into_iter().flatten().collect();
                }
            }
        }
    }

    /// Write what is left and the footer; the file's name if it has one.
    fn finish(&mut self) -> Result<Option<&'static str>, parquet::errors::ParquetError> {
        // a table that never filled a row group is written whole here: the small context
        self.write_group_at(PARQUET_ZSTD_LEVEL_SMALL)?;
        match self.writer.take() {
            Some(w) => {
                w.close()?;
                Ok(Some(self.file_name))
            }
            None => Ok(None),
        }
    }
}

/// The four trace tables of a run directory, and the names their rows point at.
pub struct TraceFiles {
    tcp: Table,
    cam: Table,
    link: Table,
    intervals: Table,
    conn_names: Vec<ByteArray>,
    link_names: Vec<ByteArray>,
    flow_names: Vec<ByteArray>,
    /// The static connections' traced endpoints (connection, side), in connection order: the only
    /// ones a drain visits (an untraced endpoint has no trace to take, and visiting all 8,192 of a
    /// 4,096-flow run's endpoints at every slice cost instructions for nothing).
    traced_eps: Vec<(u32, u8)>,
    /// The traced link directions (a monitor is traced or not from its construction on), in
    /// link order: the only ones a drain visits. Testing every direction's monitor at every
    /// slice touched one cold cache line per direction: at 4,096 flows (16,386 directions,
    /// 199 slices) 3.3 M data-cache misses, 1.5 per event of the run (issue 28).
    traced_links: Vec<u32>,
    words: Words,
}

/// Names every row repeats, made once.
struct Words {
    sides: [ByteArray; 2],
    tcp_kinds: Vec<ByteArray>,
    events: [ByteArray; 3],
    reasons: Vec<ByteArray>,
    packet_kinds: Vec<ByteArray>,
    empty: ByteArray,
}

fn b(s: &str) -> ByteArray {
    ByteArray::from(s)
}

impl TraceFiles {
    pub fn new(dir: &Path, sim: &Simulation) -> TraceFiles {
        use Kind::*;
        let tcp = Table::new(
            dir,
            "trace_tcp.parquet",
            &[("conn", Str), ("side", Str), ("t_s", F64), ("kind", Str), ("snd_una", I64), ("snd_nxt", I64), ("cwnd", I64), ("ssthresh", I64),
              ("snd_wnd", I64), ("unacked", I64), ("srtt_s", F64), ("rto_s", F64), ("seq", I64), ("len", I64)],
        );
        let cam = Table::new(
            dir,
            "trace_cam.parquet",
            &[("conn", Str), ("t_s", F64), ("expected_KBps", F64), ("actual_KBps", F64), ("diff_buffers", F64), ("alpha", F64), ("beta", F64), ("decision", I64)],
        );
        let link = Table::new(
            dir,
            "trace_link.parquet",
            &[("link", Str), ("t_s", F64), ("event", Str), ("bytes", I64), ("qlen_pkts", I64), ("reason", Str), ("flow", Str), ("kind", Str), ("seq", I64)],
        );
        let intervals = Table::new(
            dir,
            "queue_intervals.parquet",
            &[("link", Str), ("t_s", F64), ("min_pkts", I64), ("max_pkts", I64), ("avg_pkts", F64), ("bytes_out", I64), ("aqm_avg_pkts", OptF64),
              ("bytes_in", I64), ("ect_in", I64), ("ce_marks", I64), ("delay_n", I64), ("delay_sum_s", F64), ("delay_sumsq_s2", F64)],
        );
        let flows = (sim.static_tcp + sim.udp.len() + sim.traffic.len()) as u32;
        TraceFiles {
            tcp,
            cam,
            link,
            intervals,
            conn_names: sim.tcp[..sim.static_tcp].iter().map(|c| b(&c.name)).collect(),
            link_names: sim.links.iter().map(|l| b(&l.name)).collect(),
            flow_names: (0..flows).map(|f| b(sim.trace_flow_name(f))).collect(),
            traced_eps: sim.tcp[..sim.static_tcp]
                .iter()
                .enumerate()
                .flat_map(|(ci, c)| c.ep.iter().enumerate().filter(|(_, ep)| ep.config().trace).map(move |(s, _)| (ci as u32, s as u8)))
                .collect(),
            traced_links: sim.links.iter().enumerate().filter(|(_, l)| l.monitor.traced()).map(|(li, _)| li as u32).collect(),
            words: Words {
                sides: [b("snd"), b("rcv")],
                tcp_kinds: tcplab::tcp::TraceKind::ALL.iter().map(|k| b(k.name())).collect(),
                events: [b("arrive"), b("depart"), b("drop")],
                reasons: std::iter::once("").chain(tcplab::net::DropReason::ALL.iter().map(|r| r.name())).map(b).collect(),
                packet_kinds: tcplab::net::monitor::PacketTag::KIND_NAMES.iter().map(|k| b(k)).collect(),
                empty: b(""),
            },
        }
    }

    /// Move the rows recorded since the last call out of the simulation into the buffers,
    /// writing full row groups.
    pub fn drain(&mut self, sim: &mut Simulation) -> Result<(), Failure> {
        self.drain_inner(sim).map_err(|e| self.failure(e))
    }

    fn failure(&self, e: parquet::errors::ParquetError) -> Failure {
        let msg = e.to_string();
        Failure::error(format!("cannot write a trace file: {}", msg.lines().next().unwrap_or("error")))
    }

    fn drain_inner(&mut self, sim: &mut Simulation) -> Result<(), parquet::errors::ParquetError> {
        for &(ci, s) in &self.traced_eps {
            let (ci, s) = (ci as usize, s as usize);
            {
                let tr = sim.tcp[ci].ep[s].take_trace();
                let conn = &self.conn_names[ci];
                for i in 0..tr.len() {
                    let t = &mut self.tcp;
                    t.str(0, conn);
                    t.str(1, &self.words.sides[s]);
                    t.f64(2, tr.t[i] as f64 / 1e9);
                    t.str(3, &self.words.tcp_kinds[tr.kind_at(i) as usize]);
                    t.i64(4, tr.snd_una[i] as i64);
                    t.i64(5, tr.snd_nxt[i] as i64);
                    t.i64(6, tr.cwnd[i] as i64);
                    t.i64(7, tr.ssthresh[i] as i64);
                    t.i64(8, tr.snd_wnd[i] as i64);
                    t.i64(9, tr.unacked[i] as i64);
                    t.f64(10, tr.srtt[i] as f64 / 1e9);
                    t.f64(11, tr.rto[i] as f64 / 1e9);
                    t.i64(12, tr.seq[i] as i64);
                    t.i64(13, tr.len[i] as i64);
                    t.end_row((2 * ci + s) as u32)?;
                }
                let cm = &tr.cam;
                for i in 0..cm.t.len() {
                    let t = &mut self.cam;
                    t.str(0, conn);
                    t.f64(1, cm.t[i] as f64 / 1e9);
                    t.f64(2, cm.expected_bps[i] / 1024.0);
                    t.f64(3, cm.actual_bps[i] / 1024.0);
                    t.f64(4, cm.diff_buffers[i]);
                    t.f64(5, cm.alpha[i]);
                    t.f64(6, cm.beta[i]);
                    t.i64(7, cm.decision[i] as i64);
                    t.end_row(ci as u32)?;
                }
            }
        }
        for &li in &self.traced_links {
            let li = li as usize;
            let Some(tr) = sim.links[li].monitor.trace.as_mut() else { continue };
            let tr = std::mem::take(tr); // the monitor keeps tracing into an empty one
            let name = &self.link_names[li];
            for i in 0..tr.t.len() {
                let t = &mut self.link;
                t.str(0, name);
                t.f64(1, tr.t[i] as f64 / 1e9);
                t.str(2, &self.words.events[tr.event[i] as usize]);
                t.i64(3, tr.bytes[i] as i64);
                t.i64(4, tr.qlen[i] as i64);
                t.str(5, &self.words.reasons[tr.reason[i] as usize]);
                t.str(6, self.flow_names.get(tr.flow[i] as usize).unwrap_or(&self.words.empty));
                t.str(7, &self.words.packet_kinds[tr.kind[i] as usize]);
                t.i64(8, tr.seq[i]);
                t.end_row(li as u32)?;
            }
        }
        Ok(())
    }

    /// After the run: the rest of the rows, the queue interval series, the files' footers. The
    /// names of the files written, in the order the Python path lists them.
    pub fn finish(&mut self, sim: &mut Simulation) -> Result<Vec<&'static str>, Failure> {
        self.drain(sim)?;
        self.finish_inner(sim).map_err(|e| self.failure(e))
    }

    fn finish_inner(&mut self, sim: &Simulation) -> Result<Vec<&'static str>, parquet::errors::ParquetError> {
        for (li, l) in sim.links.iter().enumerate() {
            if l.monitor.arrived_pkts == 0 {
                continue;
            }
            for s in &l.monitor.intervals {
                let t = &mut self.intervals;
                t.str(0, &self.link_names[li]);
                t.f64(1, s.t_start_s);
                t.i64(2, s.min_pkts as i64);
                t.i64(3, s.max_pkts as i64);
                t.f64(4, s.avg_pkts);
                t.i64(5, s.bytes_out as i64);
                t.opt_f64(6, s.aqm_avg_pkts);
                t.i64(7, s.bytes_in as i64);
                t.i64(8, s.ect_in as i64);
                t.i64(9, s.ce_marks as i64);
                t.i64(10, s.delay_n as i64);
                t.f64(11, s.delay_sum_s);
                t.f64(12, s.delay_sumsq_s2);
                t.end_row(li as u32)?;
            }
        }
        let mut names = Vec::new();
        for t in [&mut self.tcp, &mut self.cam, &mut self.link, &mut self.intervals] {
            names.extend(t.finish()?);
        }
        Ok(names)
    }
}
