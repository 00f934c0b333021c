//! Integration tests of tcplab-tcp: the endpoint driven through its public API with scripted
//! segment exchanges at exact times (smoltcp style, see `script`), two endpoints over a lossy
//! pipe (`link`), and the tests written from mutation-run survivors.

mod bbr;
mod bbr3;
mod bottleneck;
mod cubic;
mod dctcp;
mod prague;
mod prr;
mod rack;
mod lite;
mod linux_rto;
mod link;
mod mutants;
mod pacing;
mod sack_ecn;
mod sndbuf;
mod scalable;
mod script;
mod scripted;
