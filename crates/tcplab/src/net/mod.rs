//! The network layer: header-only packets in a pool, point-to-point links with their own
//! rate/delay/overhead/MTU/loss/corruption per direction, output queues behind a queue-discipline
//! trait, nodes with processing delay, static shortest-path routing, and per-link monitors.

pub mod aqm_book;
pub mod aqm_stats;
pub mod capture;
pub mod codel;
pub mod discipline;
pub mod droptail;
pub mod dualpi2;
pub mod fifo;
pub mod ethernet;
pub mod fq_codel;
pub mod link;
pub mod measured;
pub mod monitor;
pub mod node;
pub mod packet;
pub mod pie;
pub mod queue;
pub mod red;
pub mod registry;
pub mod routing;
pub mod step;
pub mod tx_memo;
pub mod vq;

pub use link::{Link, LinkId, LinkParams};
pub use monitor::{LinkMonitor, IntervalStats};
pub use node::{Node, NodeId, NodeKind, ProcessingDelay};
pub use packet::{DropReason, Packet, PacketId, PacketKind, PacketPool};
pub use droptail::DropTail;
pub use queue::{Admit, QueueDisc, QueueLimit};
pub use red::{Red, RedParams};
