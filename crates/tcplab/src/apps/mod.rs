//! Applications: UDP-like sources (CBR, Poisson, exponential bursts, on/off), TCP bulk transfers
//! (driven by `tcpglue`), and traffic sources whose TCP connections come and go — tcplib
//! conversations, Ahn's dynamic senders, on/off senders over TCP.

pub mod conversation;
pub mod tcplib_tables;
pub mod traffic;
pub mod udp;
