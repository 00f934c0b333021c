//! Applications: UDP-like sources (CBR, Poisson, exponential bursts) and TCP bulk transfers.

pub mod udp;
