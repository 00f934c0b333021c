//! Applications that run over one TCP connection and react to what arrives: x-Sim's TRAFFIC
//! conversations built from tcplib (seed 000 §2.2.3), Ahn et al.'s sleep-then-send senders
//! (seed 002 §5) and ns-2-style on/off senders (`Application/Traffic/Exponential`, `Pareto`).
//!
//! An application is sans-IO like the endpoint: [`ConvApp::step`] looks at the two endpoints
//! (side 0 = originator at the traffic source's `from` host, side 1 = responder), writes bytes and
//! closes streams, and returns the next time it wants to be woken. It never sees packets.
//!
//! Conversation scripts (tcplab's reading of tcplib and seed 000; the thesis gives the parameters
//! but not the exchange itself, so these choices are ours and written here):
//! * **SMTP**: the originator sends one message of tcplib's SMTP item size, then closes.
//! * **NNTP**: the originator sends tcplib's number of articles, back to back, each of tcplib's
//!   NNTP item size, then closes.
//! * **FTP**: for each of tcplib's items: originator → control segment (tcplib control size),
//!   responder → control segment, originator → the item (tcplib FTP item size); each step starts
//!   when the previous one has arrived in full. One TCP connection carries control and data
//!   ("each of these conversations runs on top of its own TCP connection", 000 §2.2.3).
//! * **Telnet**: the originator sends packets of tcplib's packet size at tcplib's interarrival
//!   times until tcplib's session duration is over, then closes; the responder echoes every byte
//!   the moment it arrives ("Telnet connections send one byte and get one or more bytes back",
//!   000 §5.2.3). Echo delay = time from a keystroke's write to the arrival of its last echoed byte.
//! Bulk data (items, messages, articles, keystrokes) flows from the originator to the responder,
//! so a traffic source from A to B loads the A→B direction; `two_way` adds a mirrored source.

use std::collections::VecDeque;

use rand::Rng;
use rand_distr::{Distribution, Exp1};
use tcplab_tcp::Endpoint;

use super::tcplib_tables::{ConvKind, Tcplib};
use crate::engine::{SimTime, StreamRng};

/// Everything drawn when a conversation is created: identical for a given seed, source and
/// conversation number whatever the TCP variant, queue or topology (000 §6.2.3).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvPlan {
    pub kind: ConvKind,
    pub start: SimTime,
    /// FTP: (control request, control reply, item) bytes per item. SMTP/NNTP: (0, 0, bytes).
    pub items: Vec<(u64, u64, u64)>,
    /// Telnet session duration.
    pub telnet_duration: SimTime,
}

impl ConvPlan {
    /// Draw conversation `kind`'s parameters from its own stream.
    pub fn draw(kind: ConvKind, start: SimTime, rng: &mut StreamRng) -> ConvPlan {
        let t = Tcplib::get();
        let count = |x: f64| (x.round() as u64).max(1);
        let bytes = |x: f64| (x.round() as u64).max(1);
        let mut items = Vec::new();
        let mut telnet_duration = SimTime::ZERO;
        match kind {
            ConvKind::Smtp => items.push((0, 0, bytes(t.smtp_itemsize.sample(rng)))),
            ConvKind::Nntp => {
                for _ in 0..count(t.nntp_nitems.sample(rng)) {
                    items.push((0, 0, bytes(t.nntp_itemsize.sample(rng))));
                }
            }
            ConvKind::Ftp => {
                for _ in 0..count(t.ftp_nitems.sample(rng)) {
                    let req = bytes(t.ftp_ctlsize.sample(rng));
                    let rep = bytes(t.ftp_ctlsize.sample(rng));
                    items.push((req, rep, bytes(t.ftp_itemsize.sample(rng))));
                }
            }
            ConvKind::Telnet => {
                telnet_duration = SimTime((t.telnet_duration_ms.sample(rng) * 1e6).round() as u64);
            }
        }
        ConvPlan { kind, start, items, telnet_duration }
    }

    /// Bytes the originator sends in the script (Telnet: not known in advance).
    pub fn originator_bytes(&self) -> u64 {
        self.items.iter().map(|&(a, _, c)| a + c).sum()
    }
    pub fn responder_bytes(&self) -> u64 {
        self.items.iter().map(|&(_, b, _)| b).sum()
    }
}

/// What an application asks of the glue after a step.
#[derive(Clone, Copy, Debug, Default)]
pub struct Step {
    /// Bytes were written or a stream closed on side 0 / side 1: flush that endpoint.
    pub touched: [bool; 2],
    /// Wake the application at this time (keystroke, end of a sleep or on/off period).
    pub wake: Option<SimTime>,
}

/// On/off source parameters (ns-2 `Application/Traffic/Exponential` and `Pareto`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnOffParams {
    /// Bytes per application write while on, and the interval between writes.
    pub packet_size: u32,
    pub interval: SimTime,
    pub mean_on_ns: f64,
    pub mean_off_ns: f64,
    /// Pareto shape for on and off times (None: exponential).
    pub pareto_shape: Option<f64>,
}

fn exp_ns(rng: &mut StreamRng, mean_ns: f64) -> SimTime {
    let e: f64 = Exp1.sample(rng);
    SimTime((e * mean_ns).round() as u64)
}

/// Pareto with mean `mean` and shape `a` (> 1): scale = mean·(a−1)/a, as ns-2's Pareto app.
pub fn pareto(rng: &mut StreamRng, mean: f64, a: f64) -> f64 {
    let scale = mean * (a - 1.0) / a;
    let u: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    scale / u.powf(1.0 / a)
}

fn period(rng: &mut StreamRng, mean_ns: f64, shape: Option<f64>) -> SimTime {
    match shape {
        None => exp_ns(rng, mean_ns),
        Some(a) => SimTime(pareto(rng, mean_ns, a).round() as u64),
    }
}

#[derive(Debug)]
enum Script {
    /// SMTP/NNTP/FTP: a list of turns; `turn` is the index of the current one.
    Turns { turns: Vec<(u8, u64)>, turn: usize, written: bool },
    /// Telnet: keystrokes until `end`.
    Telnet { rng: StreamRng, next_key: SimTime, end: SimTime, closed: bool },
    /// Ahn's sender: sleep, then send an FTP item size, wait until it is acknowledged.
    Ahn { rng: StreamRng, mean_sleep_ns: f64, state: AhnState, stop: SimTime },
    /// On/off: write `packet_size` every `interval` while on.
    OnOff { rng: StreamRng, p: OnOffParams, on_until: SimTime, next: SimTime, stop: SimTime },
}

#[derive(Clone, Copy, Debug)]
enum AhnState {
    Sleeping(SimTime),
    Sending,
}

/// One application instance over one connection.
#[derive(Debug)]
pub struct ConvApp {
    script: Script,
    /// Cumulative bytes written by side 0 / side 1.
    pub written: [u64; 2],
    /// Telnet echo bookkeeping: (write time, cumulative originator bytes after the write).
    echo_pending: VecDeque<(SimTime, u64)>,
    pub echo_count: u64,
    pub echo_delay_sum_ns: u128,
    pub echo_under_1s: u64,
}

impl ConvApp {
    fn new(script: Script) -> ConvApp {
        ConvApp { script, written: [0, 0], echo_pending: VecDeque::new(), echo_count: 0, echo_delay_sum_ns: 0, echo_under_1s: 0 }
    }

    /// A tcplib conversation; `keys` is the conversation's keystroke stream (Telnet only).
    pub fn tcplib(plan: &ConvPlan, keys: StreamRng) -> ConvApp {
        match plan.kind {
            ConvKind::Telnet => ConvApp::new(Script::Telnet { rng: keys, next_key: plan.start, end: plan.start + plan.telnet_duration, closed: false }),
            _ => {
                let mut turns = Vec::new();
                for &(req, rep, item) in &plan.items {
                    if req > 0 {
                        turns.push((0, req));
                    }
                    if rep > 0 {
                        turns.push((1, rep));
                    }
                    turns.push((0, item));
                }
                ConvApp::new(Script::Turns { turns, turn: 0, written: false })
            }
        }
    }

    pub fn ahn(rng: StreamRng, mean_sleep_ns: f64, start: SimTime, stop: SimTime) -> ConvApp {
        let mut rng = rng;
        let first = start + exp_ns(&mut rng, mean_sleep_ns);
        ConvApp::new(Script::Ahn { rng, mean_sleep_ns, state: AhnState::Sleeping(first), stop })
    }

    pub fn on_off(rng: StreamRng, p: OnOffParams, start: SimTime, stop: SimTime) -> ConvApp {
        let mut rng = rng;
        let on_until = start + period(&mut rng, p.mean_on_ns, p.pareto_shape);
        ConvApp::new(Script::OnOff { rng, p, on_until, next: start, stop })
    }

    /// Advance the application at `now`.
    pub fn step(&mut self, now: SimTime, ep: &mut [Endpoint; 2]) -> Step {
        let mut st = Step::default();
        // Telnet echo delays at the originator.
        let got0 = ep[0].bytes_received();
        while let Some(&(t, cum)) = self.echo_pending.front() {
            if got0 < cum {
                break;
            }
            self.echo_pending.pop_front();
            let d = now.0 - t.0;
            self.echo_count += 1;
            self.echo_delay_sum_ns += d as u128;
            self.echo_under_1s += (d < 1_000_000_000) as u64;
        }
        match &mut self.script {
            Script::Turns { turns, turn, written } => loop {
                if *turn >= turns.len() {
                    if !ep[0].close_requested() {
                        ep[0].app_close();
                        st.touched[0] = true;
                    }
                    break;
                }
                let (side, bytes) = turns[*turn];
                let s = side as usize;
                if !*written {
                    ep[s].app_write(bytes);
                    self.written[s] += bytes;
                    *written = true;
                    st.touched[s] = true;
                }
                if ep[1 - s].bytes_received() >= self.written[s] {
                    *turn += 1;
                    *written = false;
                } else {
                    break;
                }
            },
            Script::Telnet { rng, next_key, end, closed } => {
                let t = Tcplib::get();
                while !*closed && *next_key <= now {
                    if *next_key >= *end {
                        ep[0].app_close();
                        st.touched[0] = true;
                        *closed = true;
                        break;
                    }
                    let size = (t.telnet_pktsize.sample(rng).round() as u64).max(1);
                    ep[0].app_write(size);
                    self.written[0] += size;
                    self.echo_pending.push_back((*next_key, self.written[0]));
                    st.touched[0] = true;
                    let gap = SimTime((t.telnet_interarrival_ms.sample(rng) * 1e6).round().max(1.0) as u64);
                    *next_key = (*next_key + gap).min(*end);
                }
                // The responder echoes everything that has arrived.
                let got1 = ep[1].bytes_received();
                if got1 > self.written[1] {
                    ep[1].app_write(got1 - self.written[1]);
                    self.written[1] = got1;
                    st.touched[1] = true;
                }
                if !*closed {
                    st.wake = Some(*next_key);
                }
            }
            Script::Ahn { rng, mean_sleep_ns, state, stop } => loop {
                match *state {
                    AhnState::Sleeping(until) if until <= now => {
                        if until >= *stop {
                            break;
                        }
                        let bytes = (Tcplib::get().ftp_itemsize.sample(rng).round() as u64).max(1);
                        ep[0].app_write(bytes);
                        self.written[0] += bytes;
                        st.touched[0] = true;
                        *state = AhnState::Sending;
                    }
                    AhnState::Sleeping(until) => {
                        st.wake = Some(until);
                        break;
                    }
                    AhnState::Sending if ep[0].stats().bytes_acked >= self.written[0] => {
                        *state = AhnState::Sleeping(now + exp_ns(rng, *mean_sleep_ns));
                    }
                    AhnState::Sending => break,
                }
            },
            Script::OnOff { rng, p, on_until, next, stop } => {
                while *next <= now && *next < *stop {
                    if *next >= *on_until {
                        // Off period, then a new on period.
                        let off = period(rng, p.mean_off_ns, p.pareto_shape);
                        *next = *next + off;
                        *on_until = *next + period(rng, p.mean_on_ns, p.pareto_shape);
                        continue;
                    }
                    ep[0].app_write(p.packet_size as u64);
                    self.written[0] += p.packet_size as u64;
                    st.touched[0] = true;
                    *next = *next + p.interval;
                }
                if *next < *stop {
                    st.wake = Some(*next);
                }
            }
        }
        // The responder closes once the originator has closed and it has nothing left to say.
        if ep[1].peer_closed() && !ep[1].close_requested() {
            let pending = matches!(&self.script, Script::Turns { turns, turn, .. } if *turn < turns.len());
            if !pending {
                ep[1].app_close();
                st.touched[1] = true;
            }
        }
        st
    }
}
