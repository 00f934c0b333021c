//! Two endpoints joined by a simulated pipe (delay, rate, random loss), for byte-stream
//! integrity checks over every variant.

use tcplab_tcp::config::EndpointConfig;
use tcplab_tcp::*;

// ------------------------------------------------------------------ integrity over a lossy pipe

pub(crate) struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

pub(crate) struct Outcome {
    pub(crate) a: Endpoint,
    pub(crate) b: Endpoint,
    pub(crate) end: Nanos,
}

/// Pipe parameters for [`run_link`].
#[derive(Clone, Copy)]
pub(crate) struct Link {
    pub(crate) delay: Nanos,
    pub(crate) rate: f64, // bytes/s
    pub(crate) loss_fwd: f64,
    pub(crate) loss_rev: f64,
}

/// Two endpoints joined by a FIFO pipe: 1 MB/s each way, 20 ms delay, random loss `loss`
/// (independently per segment, both directions, control segments included), no reordering.
/// Each host has its own BSD tick phase. `a` sends `bytes` and closes.
pub(crate) fn run_pair(a_cfg: EndpointConfig, b_cfg: EndpointConfig, bytes: u64, loss: f64, seed: u64, read_rate: Option<f64>) -> Outcome {
    let link = Link { delay: 20 * MS, rate: 1.0e6, loss_fwd: loss, loss_rev: loss };
    run_link(a_cfg, b_cfg, bytes, None, link, seed, read_rate)
}

/// General form: `close_at` = close an unlimited writer at that time (timed transfer).
pub(crate) fn run_link(a_cfg: EndpointConfig, b_cfg: EndpointConfig, bytes: u64, close_at: Option<Nanos>, link: Link, seed: u64, read_rate: Option<f64>) -> Outcome {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut a = Endpoint::new(a_cfg, 0xFFFF_F000);
    let mut b = Endpoint::new(b_cfg, 0x1234_5678);
    b.listen();
    b.set_read_rate(read_rate);
    a.connect(0);
    a.app_write(bytes);
    if close_at.is_none() {
        a.app_close();
    }
    let mut q: [std::collections::VecDeque<(Nanos, Segment)>; 2] = Default::default();
    let mut link_free = [0u64; 2];
    let mut slow = [137 * MS, 311 * MS];
    let mut fast = [37 * MS, 91 * MS];
    let mut now = 0;
    let limit = 3000 * SEC;
    let mut steps = 0u64;
    let mut closed_app = close_at.is_none();
    loop {
        if !closed_app && close_at.is_some_and(|c| now >= c) {
            a.app_close();
            closed_app = true;
        }
        // Transmit everything both sides have.
        for side in 0..2 {
            let ep = if side == 0 { &mut a } else { &mut b };
            let loss = if side == 0 { link.loss_fwd } else { link.loss_rev };
            while let Some(s) = ep.poll_transmit(now) {
                let tx = (s.wire_bytes() as f64 / link.rate * 1e9) as u64;
                link_free[side] = link_free[side].max(now) + tx;
                if !rng.chance(loss) {
                    q[side].push_back((link_free[side] + link.delay, s));
                }
            }
        }
        if a.is_closed() && b.is_closed() {
            break;
        }
        let mut next = u64::MAX;
        for side in 0..2 {
            if let Some(&(t, _)) = q[side].front() {
                next = next.min(t);
            }
            next = next.min(slow[side]).min(fast[side]);
        }
        for t in [a.next_timer(), b.next_timer()].into_iter().flatten() {
            next = next.min(t);
        }
        if let (false, Some(c)) = (closed_app, close_at) {
            next = next.min(c);
        }
        assert!(next >= now, "time went backwards");
        now = next;
        assert!(now < limit, "transfer did not terminate: a {:?} b {:?} acked {} rcvd {}", a.state(), b.state(), a.stats().bytes_acked, b.bytes_received());
        steps += 1;
        assert!(steps < 50_000_000);
        for side in 0..2 {
            let (src, dst) = if side == 0 { (&mut q[0], &mut b) } else { (&mut q[1], &mut a) };
            while let Some(&(t, s)) = src.front() {
                if t > now {
                    break;
                }
                src.pop_front();
                dst.on_segment(now, &s);
            }
        }
        for (side, ep) in [(0usize, &mut a), (1, &mut b)] {
            if slow[side] <= now {
                ep.on_slow_tick(now);
                slow[side] += 500 * MS;
            }
            if fast[side] <= now {
                ep.on_fast_tick(now);
                fast[side] += 200 * MS;
            }
            if ep.next_timer().is_some_and(|t| t <= now) {
                ep.on_timer(now);
            }
        }
    }
    Outcome { a, b, end: now }
}

pub(crate) fn check_integrity(o: &Outcome, bytes: u64, what: &str) {
    assert_eq!(o.b.bytes_received(), bytes, "{what}: receiver byte count");
    assert_eq!(o.b.stats().bytes_delivered_to_app, bytes, "{what}: delivered");
    assert_eq!(o.a.stats().bytes_acked, bytes, "{what}: acked");
    assert!(o.b.peer_closed(), "{what}: FIN seen");
    assert!(!o.a.stats().aborted, "{what}: sender aborted");
    assert!(o.a.is_closed() && o.b.is_closed(), "{what}");
    // Sequence accounting: every first-transmitted byte is counted once.
    assert_eq!(o.a.stats().bytes_sent, bytes, "{what}: bytes sent once");
}

