//! Traces written beside a run's summary that need more than the network layer knows: pcap
//! captures of link directions with synthesized headers ([`pcap`]).

pub mod pcap;
