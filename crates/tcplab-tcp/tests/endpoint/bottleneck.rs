//! One sender and one receiver across a bottleneck: a FIFO of `limit` packets draining at `rate`,
//! propagation `delay` each way, and optional step marking (CE on ECT packets when the queue,
//! counted at arrival, holds `mark_k` packets or more — DCTCP's switch, RFC 8257 §3.1). ACKs
//! return without queueing. Deterministic: no randomness at all.

use std::collections::VecDeque;
use tcplab_tcp::config::EndpointConfig;
use tcplab_tcp::*;

#[derive(Clone, Copy)]
pub(crate) struct Bottleneck {
    pub(crate) rate: f64, // bytes/s
    pub(crate) delay: Nanos,
    pub(crate) limit: usize,
    pub(crate) mark_k: Option<usize>,
}

#[derive(Default)]
pub(crate) struct Observed {
    /// First time the queue dropped a packet.
    pub(crate) first_drop: Option<Nanos>,
    pub(crate) drops: u64,
    pub(crate) marks: u64,
    pub(crate) data_packets: u64,
    /// First time the sender's ssthresh fell below its initial value, with (cwnd, ssthresh).
    pub(crate) ss_exit: Option<(Nanos, u32, u32)>,
    /// Largest queue seen (packets).
    pub(crate) max_queue: usize,
    /// (time, cwnd) after every event, sampled when it changes.
    pub(crate) cwnd: Vec<(Nanos, u32)>,
}

/// Run `until` ns of an unlimited transfer from `a_cfg` to `b_cfg`.
pub(crate) fn run_bottleneck(a_cfg: EndpointConfig, b_cfg: EndpointConfig, link: Bottleneck, until: Nanos) -> (Endpoint, Endpoint, Observed) {
    let initial_ssthresh = a_cfg.initial_ssthresh;
    let mut a = Endpoint::new(a_cfg, 0xFFFF_F000);
    let mut b = Endpoint::new(b_cfg, 0x1234_5678);
    b.listen();
    a.connect(0);
    a.app_write(u64::MAX);
    let mut obs = Observed::default();
    // Forward: departure times of queued packets (for the queue length) and the packets in
    // flight to the receiver; reverse: ACKs in flight.
    let mut queue: VecDeque<Nanos> = VecDeque::new();
    let mut fwd: VecDeque<(Nanos, Segment)> = VecDeque::new();
    let mut rev: VecDeque<(Nanos, Segment)> = VecDeque::new();
    let mut link_free = 0u64;
    let mut now = 0;
    loop {
        while queue.front().is_some_and(|&d| d <= now) {
            queue.pop_front();
        }
        while let Some(mut s) = a.poll_transmit(now) {
            if queue.len() >= link.limit {
                obs.drops += 1;
                obs.first_drop.get_or_insert(now);
                continue;
            }
            if s.len > 0 {
                obs.data_packets += 1;
            }
            if let Some(k) = link.mark_k {
                if s.ect && queue.len() >= k {
                    s.ce = true;
                    obs.marks += 1;
                }
            }
            let tx = (s.wire_bytes() as f64 / link.rate * 1e9) as u64;
            link_free = link_free.max(now) + tx;
            queue.push_back(link_free);
            obs.max_queue = obs.max_queue.max(queue.len());
            fwd.push_back((link_free + link.delay, s));
        }
        while let Some(s) = b.poll_transmit(now) {
            rev.push_back((now + link.delay, s));
        }
        if obs.cwnd.last().is_none_or(|&(_, c)| c != a.cwnd()) {
            obs.cwnd.push((now, a.cwnd()));
        }
        if obs.ss_exit.is_none() && a.ssthresh() < initial_ssthresh {
            obs.ss_exit = Some((now, a.cwnd(), a.ssthresh()));
        }
        let mut next = u64::MAX;
        for t in [fwd.front().map(|x| x.0), rev.front().map(|x| x.0), queue.front().copied(), a.next_timer(), b.next_timer()].into_iter().flatten() {
            next = next.min(t);
        }
        if next >= until {
            break;
        }
        now = next.max(now);
        while fwd.front().is_some_and(|x| x.0 <= now) {
            let (_, s) = fwd.pop_front().unwrap();
            b.on_segment(now, &s);
        }
        while rev.front().is_some_and(|x| x.0 <= now) {
            let (_, s) = rev.pop_front().unwrap();
            a.on_segment(now, &s);
        }
        for ep in [&mut a, &mut b] {
            if ep.next_timer().is_some_and(|t| t <= now) {
                ep.on_timer(now);
            }
        }
    }
    (a, b, obs)
}
