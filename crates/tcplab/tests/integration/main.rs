//! tcplab's integration tests, in one test binary (issue 17: one binary links once, where 18
//! binaries each paid a thin-LTO link on every rebuild of the crate — the cost of `make mutants`
//! per mutant and of `make test`). One module per former `tests/*.rs` file; `common` holds the
//! shared helpers. Run one module with a filter: `cargo test --release -p tcplab --test
//! integration vegas::`.
//!
//! Kept as their own binaries, each needing a process of its own: `no_alloc.rs` (installs a
//! counting global allocator), `memory_estimate.rs` (asserts the process's own peak RSS, which
//! the other tests' threads would share). The golden digests (`golden.rs`, `make test-golden`,
//! `--test integration golden::`) had a binary of their own until 2026-11-29; it cost `make test`
//! one more thin-LTO link (~1 CPU-minute) and needs no process of its own: its switches are
//! environment variables read when it runs.

mod common;

mod bsd_ticks;
mod conservation;
mod dctcp_queue;
mod determinism;
mod fairness;
mod golden;
mod input_limits;
mod lan;
mod link_timing;
mod link_trace_tags;
mod mathis;
mod mm1k;
mod profiles;
mod red_ecn_sack;
mod routes;
mod tcp_integrity;
mod templates;
mod traffic;
mod udp_bursts;
mod vegas;
mod vegas_star;
mod engine_mutants;
