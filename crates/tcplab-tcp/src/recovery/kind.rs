//! Which loss recovery a variant uses: one enum line per algorithm, each built from its own file.

use super::{LossRecovery, NewRenoRecovery, PrrRecovery, RackRecovery, RenoRecovery, Rfc6675Recovery, Sack1Recovery, TahoeRecovery, VegasRecovery};
use super::reno::DeflateTest;
use crate::lite::LiteFixes;

/// Loss-recovery algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryKind {
    /// Fast retransmit then slow start (go-back-N from snd_una with cwnd = 1 MSS).
    Tahoe,
    /// 4.3BSD-Reno fast retransmit + fast recovery with window inflation/deflation.
    Reno,
    /// RFC 6582 NewReno (partial ACKs, `recover`).
    NewReno,
    /// ns-2 Sack1: Fall & Floyd 1996 pipe and scoreboard.
    Sack1,
    /// RFC 6675 conservative SACK-based recovery.
    Rfc6675,
    /// RFC 6937 Proportional Rate Reduction (PRR-SSRB) over RFC 6675, see [`PrrRecovery`].
    Prr,
    /// RFC 8985 RACK-TLP loss detection, window = ssthresh in recovery, see [`RackRecovery`].
    Rack,
    /// RACK-TLP loss detection with PRR (RFC 6937) setting the window, as Linux.
    RackPrr,
    /// None of its own: the congestion control decides retransmissions and window cuts (Vegas),
    /// see [`VegasRecovery`].
    CcOwned,
}

impl RecoveryKind {
    /// The recovery module (a Lite variant's Reno: [`lite`]).
    pub fn build(&self) -> Box<dyn LossRecovery> {
        match self {
            RecoveryKind::Tahoe => Box::new(TahoeRecovery),
            RecoveryKind::Reno => Box::new(RenoRecovery::default()),
            RecoveryKind::NewReno => Box::new(NewRenoRecovery::default()),
            RecoveryKind::Sack1 => Box::new(Sack1Recovery::default()),
            RecoveryKind::Rfc6675 => Box::new(Rfc6675Recovery::default()),
            RecoveryKind::Prr => Box::new(PrrRecovery::default()),
            RecoveryKind::Rack => Box::new(RackRecovery::default()),
            RecoveryKind::RackPrr => Box::new(RackRecovery::with_prr()),
            RecoveryKind::CcOwned => Box::new(VegasRecovery),
        }
    }

    /// The name the variant table prints.
    pub fn name(&self) -> &'static str {
        match self {
            RecoveryKind::Tahoe => "tahoe",
            RecoveryKind::Reno => "reno",
            RecoveryKind::NewReno => "newreno",
            RecoveryKind::Sack1 => "sack1",
            RecoveryKind::Rfc6675 => "rfc6675",
            RecoveryKind::Prr => "prr",
            RecoveryKind::Rack => "rack",
            RecoveryKind::RackPrr => "rack-prr",
            RecoveryKind::CcOwned => "cc-owned",
        }
    }

    /// Whether the module may keep a timer of its own (RACK's reorder timer and TLP); the
    /// others keep `next_timer`'s `None` and their endpoints skip asking (issue 28).
    pub fn has_own_timer(&self) -> bool {
        !matches!(self, RecoveryKind::Tahoe | RecoveryKind::Reno | RecoveryKind::NewReno | RecoveryKind::Sack1 | RecoveryKind::Rfc6675 | RecoveryKind::Prr | RecoveryKind::CcOwned)
    }

    /// The SACK recoveries: the handshake offers SACK-permitted.
    pub fn uses_sack(&self) -> bool {
        matches!(self, RecoveryKind::Sack1 | RecoveryKind::Rfc6675 | RecoveryKind::Prr | RecoveryKind::Rack | RecoveryKind::RackPrr)
    }
}

/// The recovery module of a Lite variant: Reno with BSD's deflation test (seed 001 §3.6).
pub fn lite(fixes: &LiteFixes) -> Box<dyn LossRecovery> {
    let deflate_test = if fixes.dupack_ge { DeflateTest::DupacksAtLeast } else { DeflateTest::DupacksAbove };
    Box::new(RenoRecovery { in_recovery: false, deflate_test })
}

/// Build a recovery module (= [`RecoveryKind::build`]).
pub fn build(kind: RecoveryKind) -> Box<dyn LossRecovery> {
    kind.build()
}
