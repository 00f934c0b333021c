//! Columnar per-connection trace (x-Sim's rule, seed 000 §6: tracing must not perturb the run).
//!
//! Columns are plain `Vec`s appended to during the run. When `EndpointConfig::trace` is false the
//! endpoint never touches them, so they stay empty and never allocate.

use crate::Nanos;

/// What a trace row records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TraceKind {
    Send = 0,
    Retransmit = 1,
    Ack = 2,
    DupAck = 3,
    SlowTick = 4,
    Timeout = 5,
    FastRetransmit = 6,
    RecoveryEnter = 7,
    RecoveryExit = 8,
    Recv = 9,
    AckSent = 10,
    /// Reserved for Vegas' congestion-avoidance decisions (details in [`CamTrace`]).
    Cam = 11,
    /// A SACK block received by the sender (`seq` = left edge, `len` = its length).
    Sack = 12,
    /// The sender reduced its window for an ECN echo.
    EcnReduce = 13,
}

impl TraceKind {
    pub const ALL: [TraceKind; 14] = [
        TraceKind::Send,
        TraceKind::Retransmit,
        TraceKind::Ack,
        TraceKind::DupAck,
        TraceKind::SlowTick,
        TraceKind::Timeout,
        TraceKind::FastRetransmit,
        TraceKind::RecoveryEnter,
        TraceKind::RecoveryExit,
        TraceKind::Recv,
        TraceKind::AckSent,
        TraceKind::Cam,
        TraceKind::Sack,
        TraceKind::EcnReduce,
    ];
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Send => "send",
            TraceKind::Retransmit => "retransmit",
            TraceKind::Ack => "ack",
            TraceKind::DupAck => "dupack",
            TraceKind::SlowTick => "slow_tick",
            TraceKind::Timeout => "timeout",
            TraceKind::FastRetransmit => "fast_retransmit",
            TraceKind::RecoveryEnter => "recovery_enter",
            TraceKind::RecoveryExit => "recovery_exit",
            TraceKind::Recv => "recv",
            TraceKind::AckSent => "ack_sent",
            TraceKind::Cam => "cam",
            TraceKind::Sack => "sack",
            TraceKind::EcnReduce => "ecn_reduce",
        }
    }
    pub fn from_u8(v: u8) -> Option<TraceKind> {
        TraceKind::ALL.get(v as usize).copied()
    }
}

/// Vegas congestion-avoidance-mechanism rows (filled by a CC that wants them; empty for Reno).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CamTrace {
    pub t: Vec<Nanos>,
    pub expected_bps: Vec<f64>,
    pub actual_bps: Vec<f64>,
    pub diff_buffers: Vec<f64>,
    pub alpha: Vec<f64>,
    pub beta: Vec<f64>,
    /// -1 decrease, 0 hold, +1 increase.
    pub decision: Vec<i8>,
}

impl CamTrace {
    #[allow(clippy::too_many_arguments)]
    pub fn push(&mut self, t: Nanos, expected_bps: f64, actual_bps: f64, diff_buffers: f64, alpha: f64, beta: f64, decision: i8) {
        self.t.push(t);
        self.expected_bps.push(expected_bps);
        self.actual_bps.push(actual_bps);
        self.diff_buffers.push(diff_buffers);
        self.alpha.push(alpha);
        self.beta.push(beta);
        self.decision.push(decision);
    }
    pub fn len(&self) -> usize {
        self.t.len()
    }
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
}

/// The connection trace. Sequence columns are byte offsets relative to the first data byte
/// (unwrapped, 64-bit); for rows recorded before the first data byte they are 0.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub t: Vec<Nanos>,
    /// [`TraceKind`] as u8.
    pub kind: Vec<u8>,
    pub snd_una: Vec<u64>,
    pub snd_nxt: Vec<u64>,
    pub cwnd: Vec<u32>,
    pub ssthresh: Vec<u32>,
    pub snd_wnd: Vec<u32>,
    pub unacked: Vec<u32>,
    /// Smoothed RTT in ns (0 if none yet).
    pub srtt: Vec<Nanos>,
    /// Current (backed-off) RTO in ns.
    pub rto: Vec<Nanos>,
    /// Segment sequence (relative, 64-bit) for segment events; 0 otherwise.
    pub seq: Vec<u64>,
    pub len: Vec<u32>,
    pub cam: CamTrace,
}

/// One row, as pushed by the endpoint.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    pub t: Nanos,
    pub kind: TraceKind,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub snd_wnd: u32,
    pub unacked: u32,
    pub srtt: Nanos,
    pub rto: Nanos,
    pub seq: u64,
    pub len: u32,
}

impl Trace {
    pub(crate) fn push(&mut self, r: Row) {
        self.t.push(r.t);
        self.kind.push(r.kind as u8);
        self.snd_una.push(r.snd_una);
        self.snd_nxt.push(r.snd_nxt);
        self.cwnd.push(r.cwnd);
        self.ssthresh.push(r.ssthresh);
        self.snd_wnd.push(r.snd_wnd);
        self.unacked.push(r.unacked);
        self.srtt.push(r.srtt);
        self.rto.push(r.rto);
        self.seq.push(r.seq);
        self.len.push(r.len);
    }
    pub fn len(&self) -> usize {
        self.t.len()
    }
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
    /// Kind of row `i`.
    pub fn kind_at(&self, i: usize) -> TraceKind {
        TraceKind::from_u8(self.kind[i]).expect("valid trace kind")
    }
    /// Indices of rows of a given kind (convenience for tests and dumps).
    pub fn rows_of(&self, k: TraceKind) -> impl Iterator<Item = usize> + '_ {
        self.kind.iter().enumerate().filter(move |(_, &x)| x == k as u8).map(|(i, _)| i)
    }
}
