//! The benchmark scenarios of `tcplab bench`, as scenario TOML text: the same scenarios
//! `python/tcplab/bench.py` builds with the `Scenario` API (its `CASES`), so the native `tcplab
//! bench` runs what the Python one runs. `tests/test_native_cli.py` parses both texts and
//! compares them case by case (`tcplab-native __bench-case NAME`); a case added to one list and
//! not the other fails there.

use std::fmt::Write;
use std::path::PathBuf;

/// The case names, in the order of `tcplab.bench.CASES`.
pub const CASES: &[&str] = &[
    "udp-dumbbell-16",
    "poisson-queue",
    "tcp-dumbbell-16",
    "tcp-dumbbell-64",
    "tcp-dumbbell-256",
    "tcp-dumbbell-1024",
    "tcp-dumbbell-4096",
    "tcp-dumbbell-16384",
    "tcp-dumbbell-64-10g",
    "short-transfers-100000",
    "tcplib-backbone-1000",
    "brakmo-backbone",
    "cbr-p2p",
    "cbr-lan-fifo",
    "cbr-lan-ethernet",
    "tcp-dumbbell-16-traced",
];

/// What `tcplab bench` runs without names (`tcplab.bench.DEFAULT_CASES`).
pub const DEFAULT_CASES: &[&str] = &["udp-dumbbell-16", "poisson-queue", "tcp-dumbbell-16", "tcp-dumbbell-64", "tcp-dumbbell-256", "tcp-dumbbell-16-traced"];

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
        self.nodes.push(format!("{{ name = \"{name}\", kind = \"{kind}\" }}"));
    }
    fn link(&mut self, a: &str, b: &str, rate: &str, delay: &str, queue: Option<&str>) {
        let q = queue.map(|l| format!(", queue = {{ limit = \"{l}\" }}")).unwrap_or_default();
        self.links.push(format!("{{ a = \"{a}\", b = \"{b}\", rate = \"{rate}\", delay = \"{delay}\"{q} }}"));
    }
    /// `name`, `[run]`'s lines, and any further tables (`[[lan]]`) after the arrays.
    fn finish(self, name: &str, run: &str, tail: &str) -> String {
        let mut s = format!("name = \"{name}\"\n");
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

/// n CBR sources at 2 Mb/s through a 30 Mb/s, 20 ms bottleneck (`bench.udp_dumbbell`).
fn udp_dumbbell(n: usize) -> String {
    let mut t = Text::default();
    t.node("left", "router");
    t.node("right", "router");
    t.link("left", "right", "30Mbps", "20ms", Some("100pkts"));
    for i in 0..n {
        t.node(&format!("s{i}"), "host");
        t.node(&format!("d{i}"), "host");
        t.link(&format!("s{i}"), "left", "100Mbps", "1ms", None);
        t.link("right", &format!("d{i}"), "100Mbps", "1ms", None);
        t.udp.push(format!(
            "{{ name = \"cbr{i}\", from = \"s{i}\", to = \"d{i}\", pattern = \"cbr\", rate = \"2Mbps\", packet_size = \"1000B\", start = \"{i}ms\" }}"
        ));
    }
    t.finish(&format!("bench-udp-dumbbell-{n}"), "duration = \"30s\"\nstop_when_done = false\n", "")
}

/// Poisson arrivals, rho = 0.95, into a 1000-packet buffer (`bench.poisson_queue`).
fn poisson_queue() -> String {
    let mut t = Text::default();
    t.node("a", "host");
    t.node("b", "host");
    t.links.push("{ a = \"a\", b = \"b\", rate = \"10Mbps\", delay = \"1ms\", queue = { limit = \"1000pkts\", count_in_service = true } }".into());
    t.udp.push(
        "{ name = \"poisson\", from = \"a\", to = \"b\", pattern = \"poisson\", packet_size = \"1000B\", size_dist = \"exponential\", interval = \"842us\" }"
            .into(),
    );
    t.finish("bench-poisson-queue", "duration = \"200s\"\n", "")
}

/// The dumbbell of `bench.tcp_dumbbell`: n long-lived newreno flows.
struct Dumbbell<'a> {
    n: usize,
    duration: &'a str,
    traced: bool,
    rate: &'a str,
    delay: &'a str,
    queue: &'a str,
    access_rate: &'a str,
    name: String,
}

impl Dumbbell<'_> {
    fn standard(n: usize, traced: bool) -> Dumbbell<'static> {
        let name = format!("bench-tcp-dumbbell-{n}{}", if traced { "-traced" } else { "" });
        Dumbbell { n, duration: "60s", traced, rate: "30Mbps", delay: "50ms", queue: "128KB", access_rate: "100Mbps", name }
    }

    fn text(&self) -> String {
        let mut t = Text::default();
        t.node("left", "router");
        t.node("right", "router");
        t.link("left", "right", self.rate, self.delay, Some(self.queue));
        let d = self.duration;
        for i in 0..self.n {
            t.node(&format!("s{i}"), "host");
            t.node(&format!("d{i}"), "host");
            t.link(&format!("s{i}"), "left", self.access_rate, "1ms", Some("1000pkts"));
            t.link("right", &format!("d{i}"), self.access_rate, "1ms", Some("1000pkts"));
            t.tcp.push(format!(
                "{{ name = \"tcp{i}\", from = \"s{i}\", to = \"d{i}\", variant = \"newreno\", duration = \"{d}\", start = \"{}ms\", mss = \"1448B\", send_buffer = \"1MB\", recv_buffer = \"1MB\", window_scaling = true }}",
                (i * 7) % 100
            ));
        }
        let trace = if self.traced { "trace = { tcp = true, links = [\"all\"] }\n" } else { "" };
        t.finish(&self.name, &format!("duration = \"{d}\"\nstop_when_done = false\n{trace}"), "")
    }
}

/// n short newreno transfers of 10 KB over 1000 host pairs (`bench.short_transfers`).
fn short_transfers(n: usize) -> String {
    let hosts = 1000;
    let mut t = Text::default();
    t.node("left", "router");
    t.node("right", "router");
    t.link("left", "right", "1Gbps", "10ms", Some("1000pkts"));
    for h in 0..hosts {
        t.node(&format!("s{h}"), "host");
        t.node(&format!("d{h}"), "host");
        t.link(&format!("s{h}"), "left", "1Gbps", "1ms", Some("1000pkts"));
        t.link("right", &format!("d{h}"), "1Gbps", "1ms", Some("1000pkts"));
    }
    for i in 0..n {
        let h = i % hosts;
        let start_us = i * 10_000_000 / n;
        t.tcp.push(format!(
            "{{ name = \"t{i}\", from = \"s{h}\", to = \"d{h}\", variant = \"newreno\", bytes = \"10KB\", start = \"{start_us}us\", mss = \"1448B\" }}"
        ));
    }
    t.finish(&format!("bench-short-transfers-{n}"), "duration = \"40s\"\nstop_when_done = true\n", "")
}

/// tcplib conversations over a ring of 4 routers, 8 hosts each (`bench.tcplib_backbone`).
fn tcplib_backbone() -> String {
    let (routers, hosts) = (4, 8);
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
    t.finish("bench-tcplib-backbone", "duration = \"64s\"\nstop_when_done = false\n", "")
}

/// One 9 Mb/s CBR source over a 10 Mb/s segment: a LAN with `access`, or a link (`bench.shared_medium_cbr`).
fn shared_medium_cbr(access: Option<&str>) -> String {
    let mut t = Text::default();
    t.node("a", "host");
    t.node("b", "host");
    let tail = match access {
        None => {
            t.links.push("{ a = \"a\", b = \"b\", rate = \"10Mbps\", delay = \"5us\", overhead = \"26B\" }".into());
            String::new()
        }
        Some(acc) => format!("\n[[lan]]\nname = \"seg\"\nnodes = [\"a\", \"b\"]\naccess = \"{acc}\"\n"),
    };
    t.udp.push("{ name = \"cbr\", from = \"a\", to = \"b\", pattern = \"cbr\", rate = \"9Mbps\", packet_size = \"1000B\" }".into());
    t.finish(&format!("bench-cbr-{}", access.unwrap_or("p2p")), "duration = \"200s\"\nstop_when_done = false\n", &tail)
}

/// The bundled scenarios folder: `tcplab/scenarios` beside this binary's `tcplab/_bin`.
pub fn scenarios_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.join("scenarios");
    dir.is_dir().then_some(dir)
}

/// Case `name`'s scenario: (its TOML text, the file name errors name); None for an unknown case.
pub fn case(name: &str) -> Option<Result<(String, String), String>> {
    let text = match name {
        "udp-dumbbell-16" => udp_dumbbell(16),
        "poisson-queue" => poisson_queue(),
        "tcp-dumbbell-16-traced" => Dumbbell::standard(16, true).text(),
        "tcp-dumbbell-64-10g" => Dumbbell {
            n: 64,
            duration: "1s",
            traced: false,
            rate: "10Gbps",
            delay: "5ms",
            queue: "1MB",
            access_rate: "10Gbps",
            name: "bench-tcp-dumbbell-64-10g".into(),
        }
        .text(),
        "short-transfers-100000" => short_transfers(100_000),
        "tcplib-backbone-1000" => tcplib_backbone(),
        "cbr-p2p" => shared_medium_cbr(None),
        "cbr-lan-fifo" => shared_medium_cbr(Some("fifo")),
        "cbr-lan-ethernet" => shared_medium_cbr(Some("ethernet")),
        "brakmo-backbone" => {
            let Some(dir) = scenarios_dir() else { return Some(Err("cannot find the bundled scenarios folder beside tcplab-native".into())) };
            let path = dir.join("brakmo").join("backbone").join("scenario.toml");
            return Some(std::fs::read_to_string(&path).map(|t| (t, path.display().to_string())).map_err(|e| format!("{}: {e}", path.display())));
        }
        _ => match name.strip_prefix("tcp-dumbbell-").and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if CASES.contains(&name) => Dumbbell::standard(n, false).text(),
            _ => return None,
        },
    };
    Some(Ok((text, format!("<bench {name}>"))))
}
