//! # tcplab — a packet-level network simulator and laboratory for TCP congestion control
//!
//! Layers (DESIGN.md): [`engine`] (time, event calendar, RNG streams) → [`net`] (packets,
//! links, queues, nodes, routing, monitors) → [`apps`] (traffic sources) and TCP (the sans-IO
//! endpoints of the `tcplab-tcp` crate, glued in by `sim::tcp`) → [`summary`] and [`trace`]
//! (pcap files in `trace::pcap`, written through `net::capture`'s narrow encoder interface).
//! [`scenario`] parses and validates the TOML format; [`build`] turns it into a [`Simulation`].

pub mod apps;
pub mod bench_cases;
pub mod build;
pub mod emu;
pub mod engine;
pub mod front_api;
pub mod memory;
pub mod net;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod summary;
pub mod trace;
pub mod wire;

pub use sim::Simulation;
pub use tcplab_tcp as tcp;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
