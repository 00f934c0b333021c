//! Retransmission-timer seam: the two models behind one enum the endpoint drives.
//!
//! * [`RetransmitTimer::Bsd`] — the RTO is a countdown of slow ticks (BSD `t_timer[TCPT_REXMT]`),
//!   decremented by [`RetransmitTimer::on_slow_tick`]; RTT is measured by counting slow ticks
//!   (`t_rtt`) for one timed segment at a time.
//! * [`RetransmitTimer::Fine`] — an absolute deadline in ns; RTT of one timed segment at a time
//!   measured in ns (RFC 6298 permits timing one segment per RTT). The estimator behind the
//!   deadline is RFC 6298's ([`FineRto`]) or ns-2's tick-counting one ([`Ns2Rto`]);
//! * [`TimerModel::Linux`] — a deadline as `Fine`, behind Linux's estimator ([`LinuxRto`]) fed
//!   by the endpoint on every ACK ([`RetransmitTimer::sample_linux`]) instead of one timed
//!   segment per RTT.
//!
//! Both apply Karn's rule: timing is cancelled when a retransmission happens, and the backed-off
//! RTO persists until a new sample arrives.

mod bsd;
pub mod fine;
pub mod linux;
pub mod ns2;
pub use bsd::BsdRto;
pub use fine::FineRto;
pub use linux::LinuxRto;
pub use ns2::Ns2Rto;

use crate::opt64::Opt64;
use crate::config::TimerModel;
use crate::Nanos;

/// Length of the BSD slow tick.
pub const SLOW_TICK: Nanos = 500 * crate::MS;
/// Length of the BSD fast tick.
pub const FAST_TICK: Nanos = 200 * crate::MS;

#[derive(Clone, Debug)]
pub enum RetransmitTimer {
    Bsd {
        est: BsdRto,
        /// t_timer[TCPT_REXMT]: ticks left, 0 = off.
        rexmt: i32,
        /// t_rtt: 0 = not timing, else ticks since the timed segment was sent, plus one.
        t_rtt: i32,
        /// t_rtseq (64-bit relative).
        rtseq: u64,
    },
    /// The deadline itself is not here: the owner keeps it (an [`Opt64`] passed to
    /// `running`/`restart`/`arm`/`stop`), so that an endpoint can lay it beside its other
    /// deadlines in one cache line (issue 28: a timer event that finds nothing due at a cold
    /// endpoint read the enum's tag and this deadline, 80 bytes apart, in two lines).
    Fine {
        est: DeadlineRto,
        timing: Timed,
    },
}

/// The segment being timed by a deadline timer: its offset and when it was sent (16 bytes,
/// not `Option<(u64, Nanos)>`'s 24: issue 28's idle flows).
#[derive(Clone, Copy, Debug)]
pub struct Timed {
    seq: u64,
    t0: Opt64,
}

impl Timed {
    const NONE: Timed = Timed { seq: 0, t0: Opt64::NONE };

    fn get(self) -> Option<(u64, Nanos)> {
        self.t0.get().map(|t0| (self.seq, t0))
    }
}

/// The estimator behind a deadline timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeadlineRto {
    Rfc6298(FineRto),
    Ns2(Ns2Rto),
    Linux(LinuxRto),
}

impl DeadlineRto {
    /// A sample of `r` ns; `sent_at` is the timed segment's send time (None: a timestamp echo).
    pub fn sample(&mut self, r: Nanos, sent_at: Option<Nanos>) {
        match self {
            DeadlineRto::Rfc6298(e) => e.sample(r),
            DeadlineRto::Ns2(e) => e.sample(r, sent_at),
            // Linux's estimator needs snd_una/snd_nxt: fed through `sample_linux` only.
            DeadlineRto::Linux(_) => {}
        }
    }
    pub fn rto(&self) -> Nanos {
        match self {
            DeadlineRto::Rfc6298(e) => e.rto(),
            DeadlineRto::Ns2(e) => e.rto(),
            DeadlineRto::Linux(e) => e.rto(),
        }
    }
    pub fn backoff(&mut self) -> bool {
        match self {
            DeadlineRto::Rfc6298(e) => e.backoff(),
            DeadlineRto::Ns2(e) => e.on_backoff(),
            DeadlineRto::Linux(e) => e.backoff(),
        }
    }
    pub fn srtt(&self) -> Option<Nanos> {
        match self {
            DeadlineRto::Rfc6298(e) => e.srtt,
            DeadlineRto::Ns2(e) => e.srtt(),
            DeadlineRto::Linux(e) => e.srtt,
        }
    }
    pub fn backoffs(&self) -> u32 {
        match self {
            DeadlineRto::Rfc6298(e) => e.backoffs,
            DeadlineRto::Ns2(e) => e.backoffs(),
            DeadlineRto::Linux(e) => e.backoffs,
        }
    }
}

impl RetransmitTimer {
    pub fn new(model: TimerModel) -> RetransmitTimer {
        match model {
            TimerModel::Bsd => RetransmitTimer::Bsd { est: BsdRto::new(), rexmt: 0, t_rtt: 0, rtseq: 0 },
            TimerModel::Fine { granularity, min_rto, initial_rto } => RetransmitTimer::Fine {
                est: DeadlineRto::Rfc6298(FineRto::new(granularity, min_rto, initial_rto)),
                timing: Timed::NONE,
            },
            TimerModel::Linux { min_rto, initial_rto, .. } => RetransmitTimer::Fine {
                est: DeadlineRto::Linux(LinuxRto::new(min_rto, initial_rto)),
                timing: Timed::NONE,
            },
            TimerModel::Ns2 { tick, min_rto, initial_rto, max_rto } => RetransmitTimer::Fine {
                est: DeadlineRto::Ns2(Ns2Rto::new(tick, min_rto, initial_rto, max_rto)),
                timing: Timed::NONE,
            },
        }
    }

    /// The timer an endpoint configuration asks for: [`RetransmitTimer::new`] of its timer model,
    /// with seed 001 §3.2's rescaled BSD estimator when a `lite` variant has `fix_rto`.
    pub fn for_config(cfg: &crate::EndpointConfig) -> RetransmitTimer {
        let mut t = RetransmitTimer::new(cfg.timer_model);
        if let (RetransmitTimer::Bsd { est, .. }, Some(l)) = (&mut t, cfg.lite) {
            if l.rto {
                *est = BsdRto::rescaled();
            }
        }
        t
    }

    /// Linux's estimator: RTT samples come from [`RetransmitTimer::sample_linux`] on every ACK,
    /// not from a timed segment.
    pub fn is_linux(&self) -> bool {
        matches!(self, RetransmitTimer::Fine { est: DeadlineRto::Linux(_), .. })
    }

    /// Linux's per-ACK sample `r` (`tcp_ack_update_rtt`), with the sender's snd_una and snd_nxt
    /// after the ACK. No effect on the other models.
    pub fn sample_linux(&mut self, r: Nanos, snd_una: u64, snd_nxt: u64) {
        if let RetransmitTimer::Fine { est: DeadlineRto::Linux(e), .. } = self {
            e.sample(r, snd_una, snd_nxt);
        }
    }

    /// Linux's model: does a SACK block ending at `end` report data above what was sampled?
    pub fn linux_newly_sacked(&mut self, end: u64) -> bool {
        match self {
            RetransmitTimer::Fine { est: DeadlineRto::Linux(e), .. } => e.newly_sacked(end),
            _ => false,
        }
    }

    pub fn is_bsd(&self) -> bool {
        matches!(self, RetransmitTimer::Bsd { .. })
    }

    /// Is the timer running? `deadline` is the owner's deadline (the fine models'; the BSD
    /// model never sets it and counts `rexmt` down instead).
    pub fn running(&self, deadline: Opt64) -> bool {
        match self {
            RetransmitTimer::Bsd { rexmt, .. } => *rexmt != 0,
            RetransmitTimer::Fine { .. } => deadline.is_some(),
        }
    }

    /// (Re)start the timer with the current RTO.
    pub fn restart(&mut self, deadline: &mut Opt64, now: Nanos) {
        match self {
            RetransmitTimer::Bsd { est, rexmt, .. } => *rexmt = est.rxtcur,
            RetransmitTimer::Fine { est, .. } => *deadline = Opt64::some(now + est.rto()),
        }
    }

    /// Start the timer if it is not running.
    pub fn arm(&mut self, deadline: &mut Opt64, now: Nanos) {
        if !self.running(*deadline) {
            self.restart(deadline, now);
        }
    }

    pub fn stop(&mut self, deadline: &mut Opt64) {
        match self {
            RetransmitTimer::Bsd { rexmt, .. } => *rexmt = 0,
            RetransmitTimer::Fine { .. } => *deadline = Opt64::NONE,
        }
    }

    /// BSD slow tick (tcp_slowtimo): decrement the REXMT countdown, then advance t_rtt.
    /// Returns true if the timer expired on this tick. (In BSD the timer is processed first,
    /// and t_rtt is incremented after — an expiry clears t_rtt, so it is not incremented.)
    pub fn on_slow_tick(&mut self) -> bool {
        match self {
            RetransmitTimer::Bsd { rexmt, t_rtt, .. } => {
                let mut fired = false;
                if *rexmt != 0 {
                    *rexmt -= 1;
                    fired = *rexmt == 0;
                }
                if !fired && *t_rtt != 0 {
                    *t_rtt += 1;
                }
                fired
            }
            RetransmitTimer::Fine { .. } => false,
        }
    }

    pub fn timing(&self) -> bool {
        match self {
            RetransmitTimer::Bsd { t_rtt, .. } => *t_rtt != 0,
            RetransmitTimer::Fine { timing, .. } => timing.t0.is_some(),
        }
    }

    /// The segment a deadline timer is timing: its offset and send time (`None` in the BSD
    /// model, which keeps its own).
    pub fn timed(&self) -> Option<(u64, Nanos)> {
        match self {
            RetransmitTimer::Bsd { .. } => None,
            RetransmitTimer::Fine { timing, .. } => timing.get(),
        }
    }

    /// Start timing the segment beginning at `seq` (if nothing is being timed).
    pub fn start_timing(&mut self, now: Nanos, seq: u64) {
        match self {
            RetransmitTimer::Bsd { t_rtt, rtseq, .. } => {
                if *t_rtt == 0 {
                    *t_rtt = 1;
                    *rtseq = seq;
                }
            }
            // Linux's estimator samples every ACK (`sample_linux`); only the SYN (offset 0) is
            // timed here, as the handshake's ACK does not pass through the data path.
            RetransmitTimer::Fine { est: DeadlineRto::Linux(_), .. } if seq != 0 => {}
            RetransmitTimer::Fine { timing, .. } => {
                if timing.t0.is_none() {
                    *timing = Timed { seq, t0: Opt64::some(now) };
                }
            }
        }
    }

    /// Karn: forget the timed segment.
    pub fn cancel_timing(&mut self) {
        match self {
            RetransmitTimer::Bsd { t_rtt, .. } => *t_rtt = 0,
            RetransmitTimer::Fine { timing, .. } => *timing = Timed::NONE,
        }
    }

    /// An ACK for `ack` arrived: if it covers the timed segment, feed the estimator. Returns the
    /// sample in ns (ticks × 500 ms in the BSD model, origin 0).
    pub fn on_ack(&mut self, now: Nanos, ack: u64) -> Option<Nanos> {
        match self {
            RetransmitTimer::Bsd { est, t_rtt, rtseq, .. } => {
                // tcp_input: if (tp->t_rtt && SEQ_GT(ti->ti_ack, tp->t_rtseq)) tcp_xmit_timer(...)
                if *t_rtt != 0 && ack > *rtseq {
                    let r = *t_rtt;
                    est.sample(r);
                    *t_rtt = 0;
                    Some((r as u64 - 1) * SLOW_TICK)
                } else {
                    None
                }
            }
            RetransmitTimer::Fine { est, timing, .. } => match timing.get() {
                Some((seq, t0)) if ack > seq => {
                    let r = now.saturating_sub(t0);
                    if let DeadlineRto::Linux(e) = est {
                        e.sample(r, ack, ack);
                    }
                    est.sample(r, Some(t0));
                    *timing = Timed::NONE;
                    Some(r)
                }
                _ => None,
            },
        }
    }

    /// Feed an RTT measured another way (RFC 1323 timestamps). `bsd_ticks` is BSD's
    /// `tcp_now - ts_ecr + 1` for the BSD model.
    pub fn sample_external(&mut self, rtt: Nanos, bsd_ticks: i32) {
        match self {
            RetransmitTimer::Bsd { est, t_rtt, .. } => {
                est.sample(bsd_ticks.max(1));
                *t_rtt = 0;
            }
            RetransmitTimer::Fine { est, timing, .. } => {
                est.sample(rtt, None);
                *timing = Timed::NONE;
            }
        }
    }

    /// Back off after an expiry; false = give up.
    pub fn backoff(&mut self) -> bool {
        match self {
            RetransmitTimer::Bsd { est, t_rtt, .. } => {
                *t_rtt = 0;
                est.backoff()
            }
            RetransmitTimer::Fine { est, timing, .. } => {
                *timing = Timed::NONE;
                est.backoff()
            }
        }
    }

    /// Smoothed RTT in ns (0 if none).
    pub fn srtt_ns(&self) -> Nanos {
        match self {
            RetransmitTimer::Bsd { est, .. } => (est.srtt_ticks() * SLOW_TICK as f64) as u64,
            RetransmitTimer::Fine { est, .. } => est.srtt().unwrap_or(0),
        }
    }

    /// Current RTO in ns.
    pub fn rto_ns(&self) -> Nanos {
        match self {
            RetransmitTimer::Bsd { est, .. } => est.rxtcur.max(0) as u64 * SLOW_TICK,
            RetransmitTimer::Fine { est, .. } => est.rto(),
        }
    }

    /// Backoff count.
    pub fn backoffs(&self) -> u32 {
        match self {
            RetransmitTimer::Bsd { est, .. } => est.rxtshift,
            RetransmitTimer::Fine { est, .. } => est.backoffs(),
        }
    }
}
