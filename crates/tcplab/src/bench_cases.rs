//! The benchmark scenarios of `tcplab bench`, defined once (issue 28): built here as scenario
//! TOML text, run by the native `tcplab bench` (crates/tcplab-cli) and handed to Python through
//! `tcplab._core` (`python/tcplab/bench.py` wraps these builders; it keeps no copy of its own).
//!
//! The text is written as `tomli_w` (and `tcplab.tomltext`) writes a scenario built with the
//! Python `Scenario` API: arrays of inline tables, keys in the order the builders add them. So
//! the files written from it (benches/htsim-dumbbell/scenarios/) read back byte for byte.
//! Not a source of simulation results: only the inputs of the benchmark.

use std::fmt::Write;

/// The cases, in `tcplab bench --list` order: (name, one-line description).
pub const CASES: &[(&str, &str)] = &[
    ("udp-dumbbell-16", "16 CBR sources at 2 Mb/s through a 30 Mb/s, 20 ms bottleneck (100 packets), 30 s"),
    ("poisson-queue", "queue-heavy: Poisson arrivals, exponential sizes, rho = 0.95 into a 1000-packet buffer, 200 s"),
    ("tcp-dumbbell-16", "16 newreno flows over a 30 Mb/s, 50 ms bottleneck with a 128 KB DropTail queue, 60 s"),
    ("tcp-dumbbell-64", "64 newreno flows over the 30 Mb/s, 50 ms dumbbell, 60 s"),
    ("tcp-dumbbell-256", "256 newreno flows over the 30 Mb/s, 50 ms dumbbell, 60 s"),
    ("tcp-dumbbell-1024", "1,024 newreno flows over the 30 Mb/s, 50 ms dumbbell, 60 s"),
    ("tcp-dumbbell-4096", "4,096 newreno flows over the 30 Mb/s, 50 ms dumbbell, 60 s"),
    ("tcp-dumbbell-16384", "16,384 newreno flows over the 30 Mb/s, 50 ms dumbbell, 60 s"),
    ("tcp-dumbbell-64-10g", "64 newreno flows for 1 s over a 10 Gb/s, 5 ms bottleneck with a 1 MB queue, 10 Gb/s access links"),
    ("short-transfers-100000", "10^5 short newreno transfers of 10 KB over 1,000 host pairs through a 1 Gb/s, 10 ms bottleneck"),
    ("tcplib-backbone-1000", "tcplib conversations over a ring of 4 routers, 8 hosts each: about 1,000 conversations, 64 s"),
    ("brakmo-backbone", "Brakmo Fig 6.8 (scenarios/brakmo/backbone): 4 T3 routers, 3 bulk transfers, 16 tcplib LANs, 10 s"),
    ("cbr-p2p", "one 9 Mb/s CBR source over a 10 Mb/s point-to-point link (26-byte framing), 200 s"),
    ("cbr-lan-fifo", "one 9 Mb/s CBR source over a 10 Mb/s [[lan]] segment, access = fifo, 200 s"),
    ("cbr-lan-ethernet", "one 9 Mb/s CBR source over a 10 Mb/s [[lan]] segment, access = ethernet (CSMA/CD), 200 s"),
    ("tcp-dumbbell-16-traced", "tcp-dumbbell-16 with every TCP and link trace on: the cost of tracing"),
];

/// What `tcplab bench` runs without names (the scale cases take minutes: `make bench-scale`).
pub const DEFAULT_CASES: &[&str] = &["udp-dumbbell-16", "poisson-queue", "tcp-dumbbell-16", "tcp-dumbbell-64", "tcp-dumbbell-256", "tcp-dumbbell-16-traced"];

/// The four cases issue 28 compares with htsim (benches/htsim-dumbbell/).
pub const HTSIM_CASES: &[&str] = &["tcp-dumbbell-16", "tcp-dumbbell-256", "tcp-dumbbell-4096", "tcp-dumbbell-64-10g"];

/// Whether `name` is a case.
pub fn is_case(name: &str) -> bool {
    CASES.iter().any(|(n, _)| *n == name)
}

/// A case's scenario: its text, or a scenario file of the bundled scenarios folder (a path
/// relative to `tcplab/scenarios`, which the caller finds: the binary beside the package, Python
/// through `tcplab.resources`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Case {
    Text(String),
    Bundled(&'static str),
}

/// Case `name`'s scenario; None for an unknown case.
pub fn case(name: &str) -> Option<Case> {
    let text = match name {
        "udp-dumbbell-16" => udp_dumbbell(16, "30s"),
        "poisson-queue" => poisson_queue("200s"),
        "tcp-dumbbell-16-traced" => Dumbbell::standard(16, true).text(),
        "tcp-dumbbell-64-10g" => Dumbbell::ten_gigabit(64).text(),
        "short-transfers-100000" => short_transfers(100_000, 1000, "10KB"),
        "tcplib-backbone-1000" => tcplib_backbone(4, 8, "64s"),
        "cbr-p2p" => shared_medium_cbr(None, "200s"),
        "cbr-lan-fifo" => shared_medium_cbr(Some("fifo"), "200s"),
        "cbr-lan-ethernet" => shared_medium_cbr(Some("ethernet"), "200s"),
        "brakmo-backbone" => return Some(Case::Bundled("brakmo/backbone/scenario.toml")),
        _ => match name.strip_prefix("tcp-dumbbell-").and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if is_case(name) => Dumbbell::standard(n, false).text(),
            _ => return None,
        },
    };
    Some(Case::Text(text))
}

/// A TOML basic string (the builders' names and values are plain; quotes and backslashes escaped).
fn q(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A scenario under construction: the arrays of tables as TOML inline-table lines.
#[derive(Default)]
struct Text {
    nodes: Vec<String>,
    links: Vec<String>,
    tcp: Vec<String>,
    udp: Vec<String>,
    traffic: Vec<String>,
}

impl Text {
    fn node(&mut self, name: &str, kind: &str) {
        self.nodes.push(format!("{{ name = {}, kind = \"{kind}\" }}", q(name)));
    }
    fn link(&mut self, a: &str, b: &str, rate: &str, delay: &str, queue: Option<&str>) {
        let qd = queue.map(|l| format!(", queue = {{ limit = {} }}", q(l))).unwrap_or_default();
        self.links.push(format!("{{ a = {}, b = {}, rate = {}, delay = {}{qd} }}", q(a), q(b), q(rate), q(delay)));
    }
    /// A dumbbell's frame: routers `left` and `right` joined by the bottleneck `(rate, delay,
    /// queue)`, and `pairs` host pairs `s{i}` → left, right → `d{i}` on access links `(rate, queue)`
    /// of 1 ms.
    fn dumbbell(&mut self, pairs: usize, bottleneck: (&str, &str, &str), access: (&str, Option<&str>)) {
        self.node("left", "router");
        self.node("right", "router");
        self.link("left", "right", bottleneck.0, bottleneck.1, Some(bottleneck.2));
        for i in 0..pairs {
            self.node(&format!("s{i}"), "host");
            self.node(&format!("d{i}"), "host");
            self.link(&format!("s{i}"), "left", access.0, "1ms", access.1);
            self.link("right", &format!("d{i}"), access.0, "1ms", access.1);
        }
    }
    /// `name`, `[run]`'s lines, and any further tables (`[[lan]]`) after the arrays.
    fn finish(self, name: &str, run: &str, tail: &str) -> String {
        let mut s = format!("name = {}\n", q(name));
        for (key, rows) in [("nodes", &self.nodes), ("links", &self.links), ("tcp", &self.tcp), ("udp", &self.udp), ("traffic", &self.traffic)] {
            if rows.is_empty() && key != "links" {
                continue;
            }
            s += &format!("{key} = [\n");
            for r in rows {
                let _ = writeln!(s, "    {r},");
            }
            s += "]\n";
        }
        s + "\n[run]\n" + run + tail
    }
}

/// n CBR sources at 2 Mb/s (1000-byte packets) through a 30 Mb/s, 20 ms bottleneck (100 packets).
pub fn udp_dumbbell(n: usize, duration: &str) -> String {
    let mut t = Text::default();
    t.dumbbell(n, ("30Mbps", "20ms", "100pkts"), ("100Mbps", None));
    for i in 0..n {
        t.udp.push(format!(
            "{{ name = \"cbr{i}\", from = \"s{i}\", to = \"d{i}\", pattern = \"cbr\", rate = \"2Mbps\", packet_size = \"1000B\", start = \"{i}ms\" }}"
        ));
    }
    t.finish(&format!("bench-udp-dumbbell-{n}"), &format!("duration = {}\nstop_when_done = false\n", q(duration)), "")
}

/// Queue-heavy: Poisson arrivals, exponential sizes, rho = 0.95 into a 1000-packet buffer.
pub fn poisson_queue(duration: &str) -> String {
    let mut t = Text::default();
    t.node("a", "host");
    t.node("b", "host");
    t.links.push("{ a = \"a\", b = \"b\", rate = \"10Mbps\", delay = \"1ms\", queue = { limit = \"1000pkts\", count_in_service = true } }".into());
    t.udp.push(
        "{ name = \"poisson\", from = \"a\", to = \"b\", pattern = \"poisson\", packet_size = \"1000B\", size_dist = \"exponential\", interval = \"842us\" }"
            .into(),
    );
    t.finish("bench-poisson-queue", &format!("duration = {}\n", q(duration)), "")
}

/// n long-lived TCP flows over a bottleneck (`rate`, `delay`, a DropTail `queue`) with access
/// links `access_rate`, 1 ms, 1000 packets; each flow starts at (7 i mod 100) ms.
#[derive(Debug, Clone)]
pub struct Dumbbell {
    pub n: usize,
    pub variant: String,
    pub duration: String,
    pub traced: bool,
    pub rate: String,
    pub delay: String,
    pub queue: String,
    pub access_rate: String,
    /// The scenario's name; None: `bench-tcp-dumbbell-N` (`-traced` when traced).
    pub name: Option<String>,
}

impl Dumbbell {
    /// The standard dumbbell: newreno, 60 s, 30 Mb/s, 50 ms, 128 KB, 100 Mb/s access links.
    pub fn standard(n: usize, traced: bool) -> Dumbbell {
        Dumbbell {
            n,
            variant: "newreno".into(),
            duration: "60s".into(),
            traced,
            rate: "30Mbps".into(),
            delay: "50ms".into(),
            queue: "128KB".into(),
            access_rate: "100Mbps".into(),
            name: None,
        }
    }

    /// n newreno flows for 1 s over a 10 Gb/s, 5 ms bottleneck with a 1 MB queue, 10 Gb/s access links.
    pub fn ten_gigabit(n: usize) -> Dumbbell {
        Dumbbell {
            duration: "1s".into(),
            rate: "10Gbps".into(),
            delay: "5ms".into(),
            queue: "1MB".into(),
            access_rate: "10Gbps".into(),
            name: Some(format!("bench-tcp-dumbbell-{n}-10g")),
            ..Dumbbell::standard(n, false)
        }
    }

    pub fn text(&self) -> String {
        let mut t = Text::default();
        t.dumbbell(self.n, (&self.rate, &self.delay, &self.queue), (&self.access_rate, Some("1000pkts")));
        let (d, v) = (q(&self.duration), q(&self.variant));
        for i in 0..self.n {
            t.tcp.push(format!(
                "{{ name = \"tcp{i}\", from = \"s{i}\", to = \"d{i}\", variant = {v}, duration = {d}, start = \"{}ms\", mss = \"1448B\", send_buffer = \"1MB\", recv_buffer = \"1MB\", window_scaling = true }}",
                (i * 7) % 100
            ));
        }
        let trace = if self.traced { "trace = { tcp = true, links = [\"all\"] }\n" } else { "" };
        let name = self.name.clone().unwrap_or_else(|| format!("bench-tcp-dumbbell-{}{}", self.n, if self.traced { "-traced" } else { "" }));
        t.finish(&name, &format!("duration = {d}\nstop_when_done = false\n{trace}"), "")
    }
}

/// n short newreno transfers of `size` (n/hosts per host pair, starts spread over 10 s) through
/// a 1 Gb/s, 10 ms bottleneck: the set-up and per-connection cost at 10^5 flows.
pub fn short_transfers(n: usize, hosts: usize, size: &str) -> String {
    let hosts = hosts.max(1);
    let mut t = Text::default();
    t.dumbbell(hosts, ("1Gbps", "10ms", "1000pkts"), ("1Gbps", Some("1000pkts")));
    let size = q(size);
    for i in 0..n {
        let h = i % hosts;
        let start_us = (i as u128 * 10_000_000 / n as u128) as u64;
        t.tcp.push(format!(
            "{{ name = \"t{i}\", from = \"s{h}\", to = \"d{h}\", variant = \"newreno\", bytes = {size}, start = \"{start_us}us\", mss = \"1448B\" }}"
        ));
    }
    t.finish(&format!("bench-short-transfers-{n}"), "duration = \"40s\"\nstop_when_done = true\n", "")
}

/// tcplib conversations over a ring of `routers` 10 Mb/s routers, `hosts` hosts each; one
/// source per host to a host two routers on, 2 s mean interarrival.
pub fn tcplib_backbone(routers: usize, hosts: usize, duration: &str) -> String {
    let routers = routers.max(1);
    let mut t = Text::default();
    for r in 0..routers {
        t.node(&format!("r{r}"), "router");
    }
    for r in 0..routers {
        t.link(&format!("r{r}"), &format!("r{}", (r + 1) % routers), "10Mbps", "5ms", Some("50pkts"));
    }
    for r in 0..routers {
        for h in 0..hosts {
            t.node(&format!("h{r}_{h}"), "host");
            t.link(&format!("h{r}_{h}"), &format!("r{r}"), "10Mbps", "1ms", Some("100pkts"));
        }
    }
    for r in 0..routers {
        for h in 0..hosts {
            t.traffic.push(format!(
                "{{ name = \"tcplib{r}_{h}\", kind = \"tcplib\", from = \"h{r}_{h}\", to = \"h{}_{h}\", variant = \"reno\", interarrival = \"2s\", start = \"{}ms\" }}",
                (r + 2) % routers,
                h * 10
            ));
        }
    }
    t.finish("bench-tcplib-backbone", &format!("duration = {}\nstop_when_done = false\n", q(duration)), "")
}

/// One 9 Mb/s CBR source (1000-byte packets) over a 10 Mb/s segment: a `[[lan]]` with `access`
/// ("fifo" or "ethernet"), or (None) a point-to-point link with the same 26-byte framing.
pub fn shared_medium_cbr(access: Option<&str>, duration: &str) -> String {
    let mut t = Text::default();
    t.node("a", "host");
    t.node("b", "host");
    let tail = match access {
        None => {
            t.links.push("{ a = \"a\", b = \"b\", rate = \"10Mbps\", delay = \"5us\", overhead = \"26B\" }".into());
            String::new()
        }
        Some(acc) => format!("\n[[lan]]\nname = \"seg\"\nnodes = [\"a\", \"b\"]\naccess = {}\n", q(acc)),
    };
    t.udp.push("{ name = \"cbr\", from = \"a\", to = \"b\", pattern = \"cbr\", rate = \"9Mbps\", packet_size = \"1000B\" }".into());
    t.finish(&format!("bench-cbr-{}", access.unwrap_or("p2p")), &format!("duration = {}\nstop_when_done = false\n", q(duration)), &tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_builds_and_parses() {
        for (name, what) in CASES {
            assert!(!what.is_empty(), "{name}");
            match case(name).unwrap_or_else(|| panic!("{name}")) {
                Case::Text(text) => {
                    // the small ones are built to the end: each is a scenario the core accepts
                    if !name.contains("16384") && !name.contains("100000") && !name.contains("4096") {
                        crate::run::prepare_with_limits(
                            &text,
                            name,
                            None,
                            &[],
                            &crate::run::Limits { max_memory: None, runtime_bytes: 0, traces: crate::run::Traces::Streamed },
                        )
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    }
                }
                Case::Bundled(path) => assert!(path.ends_with(".toml"), "{name}"),
            }
        }
        assert!(case("no-such-case").is_none() && case("tcp-dumbbell-17").is_none());
        for n in DEFAULT_CASES.iter().chain(HTSIM_CASES) {
            assert!(is_case(n), "{n}");
        }
    }

    #[test]
    fn the_parameters_reach_the_text() {
        let d = Dumbbell { variant: "cubic".into(), duration: "5s".into(), ..Dumbbell::standard(2, true) };
        let t = d.text();
        assert!(t.starts_with("name = \"bench-tcp-dumbbell-2-traced\"\n"), "{t}");
        assert_eq!(t.matches("variant = \"cubic\", duration = \"5s\"").count(), 2);
        assert!(t.contains("[run]\nduration = \"5s\"\nstop_when_done = false\ntrace = "));
        assert_eq!(short_transfers(4, 2, "1KB").matches("bytes = \"1KB\"").count(), 4);
        assert!(short_transfers(4, 2, "1KB").contains("name = \"t3\", from = \"s1\""));
        assert!(shared_medium_cbr(Some("fifo"), "3s").ends_with("[[lan]]\nname = \"seg\"\nnodes = [\"a\", \"b\"]\naccess = \"fifo\"\n"));
        assert_eq!(q("a\"b\\"), "\"a\\\"b\\\\\"");
    }
}
