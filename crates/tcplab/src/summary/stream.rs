//! summary.json written straight from the simulation: the bytes of [`super::Summary::to_json`] and a
//! newline, with one link direction's or one flow's entry in memory at a time. The native
//! `tcplab run` writes it this way: at 4,096 flows a [`super::Summary`] held beside the simulation was
//! 11 MB, the run's peak resident set (issue 28's memory target).

use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::Cx;
use crate::sim::Simulation;

/// The entries `0..n` of a summary list, built one at a time as they are written.
struct Lazy<F>(usize, F);

impl<T: Serialize, F: Fn(usize) -> T> Serialize for Lazy<F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((0..self.0).map(&self.1))
    }
}

/// The fields of [`super::Summary`], in its order, serialized as its derived `Serialize` writes them
/// (`skip_serializing_if` fields left out when empty).
struct Streamed<'a> {
    cx: Cx<'a>,
    wall_s: f64,
}

impl Serialize for Streamed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (cx, sim) = (&self.cx, self.cx.sim);
        // A first pass over the flows for what comes after them: throughputs and warnings.
        let mut throughput = Vec::with_capacity(cx.flows());
        let mut warnings = Vec::new();
        for ci in 0..cx.flows() {
            let f = cx.flow(ci);
            throughput.push(f.throughput_KBps);
            warnings.extend(cx.warning(ci, &f));
        }
        let lans = cx.lans();
        let shared = cx.shared_bottlenecks(&throughput);
        drop(throughput);
        let mut st = s.serialize_struct("Summary", 17)?;
        st.serialize_field("tcplab_version", crate::VERSION)?;
        st.serialize_field("scenario", &sim.name)?;
        st.serialize_field("seed", &sim.seed)?;
        st.serialize_field("sim_end_s", &sim.now().as_secs_f64())?;
        st.serialize_field("wall_s", &self.wall_s)?;
        st.serialize_field("events", &sim.events.events_popped())?;
        st.serialize_field("bottleneck", &cx.bottleneck())?;
        st.serialize_field("links", &Lazy(sim.links.len(), |li| cx.link(li)))?;
        if !lans.is_empty() {
            st.serialize_field("lans", &lans)?;
        }
        st.serialize_field("flows", &Lazy(cx.flows(), |ci| cx.flow(ci)))?;
        if !shared.is_empty() {
            st.serialize_field("shared_bottlenecks", &shared)?;
        }
        st.serialize_field("udp", &cx.udp())?;
        st.serialize_field("traffic", &cx.traffic())?;
        st.serialize_field("stale_segments", &sim.stale_segments)?;
        st.serialize_field("packets", &cx.packets())?;
        st.serialize_field("node_drops_by_reason", &cx.node_drops())?;
        st.serialize_field("warnings", &warnings)?;
        st.end()
    }
}

/// Write the summary.json of `sim` (run in `wall_s` seconds) to `w`: the same bytes as
/// `Summary::from_sim(sim, wall_s).write_json(w)`, without building the [`super::Summary`].
pub fn write_json_streamed(
    sim: &Simulation,
    wall_s: f64,
    w: impl std::io::Write,
) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 16, w);
    serde_json::to_writer_pretty(
        &mut w,
        &Streamed {
            cx: Cx::new(sim),
            wall_s,
        },
    )
    .map_err(std::io::Error::from)?;
    std::io::Write::write_all(&mut w, b"\n")?;
    std::io::Write::flush(&mut w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::run_text;

    /// The streamed summary.json is byte for byte `Summary::write_json`'s, over scenarios that fill
    /// every optional part: a measurement window, AQM figures with flow queues, shared media,
    /// UDP delay percentiles, tcplib traffic, warnings and shared bottlenecks.
    #[test]
    fn streamed_summary_is_the_summary() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        let cases = [
            ("examples/vegas-late-starter.toml", set(&[])),
            ("examples/dumbbell-64.toml", set(&["run.duration=\"2s\""])),
            ("examples/two-lan.toml", set(&["run.duration=\"2s\""])),
            (
                "examples/udp-dumbbell.toml",
                set(&["run.duration=\"2s\"", "links[0].queue.kind=\"fq_codel\""]),
            ),
            ("lite/table4/scenario.toml", set(&["run.duration=\"20s\""])),
            (
                "ahn/table1/scenario-udp.toml",
                set(&["run.duration=\"20s\""]),
            ),
            ("brakmo/single-transfer/scenario.toml", set(&[])),
            ("kelly/table1/flows-4.toml", set(&["run.duration=\"3s\"", "run.measure.from=\"1s\"", "run.measure.to=\"2s\""])),
        ];
        let mut seen = [false; 6];
        for (file, overrides) in &cases {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            let r =
                run_text(&text, file, Some(3), overrides).unwrap_or_else(|e| panic!("{file}: {e}"));
            let mut held = Vec::new();
            r.summary.write_json(&mut held).unwrap();
            let mut streamed = Vec::new();
            write_json_streamed(&r.sim, r.summary.wall_s, &mut streamed).unwrap();
            assert!(held.len() > 1000, "{file}: a real summary");
            assert!(
                held == streamed,
                "{file}: the streamed summary.json differs"
            );
            let s = &r.summary;
            seen[0] |= s.links.iter().any(|l| l.window_utilization.is_some());
            seen[1] |= s
                .links
                .iter()
                .any(|l| l.aqm.as_ref().is_some_and(|a| !a.flow_queues.is_empty()));
            seen[2] |= !s.lans.is_empty();
            seen[3] |= !s.traffic.is_empty();
            seen[4] |= !s.udp.is_empty();
            seen[5] |= !s.shared_bottlenecks.is_empty();
        }
        assert_eq!(
            seen, [true; 6],
            "window, flow queues, LAN, traffic, UDP, shared bottleneck: each covered"
        );
    }
}
