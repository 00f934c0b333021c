//! The discrete-event engine: simulated time, the event calendar and seeded RNG streams.
//!
//! x-Sim (seed 000 §2.1) keeps an event calendar ordered by time; tcplab orders by
//! `(time, insertion sequence)` so that events scheduled for the same instant run in the
//! order they were scheduled (FIFO ties), which makes runs deterministic.

pub mod queue;
pub mod rng;
pub mod time;

pub use queue::{EventQueue, Timer};
pub use rng::{RngStreams, StreamRng};
pub use time::SimTime;
