//! Which congestion control a variant uses, with its parameters: one enum line per algorithm.
//! Each algorithm's parameter type lives in its own file and builds its controller (quinn-proto's
//! `ControllerFactory` shape); this enum only dispatches to it.

use super::cubic::CubicParams;
use super::dctcp::DctcpParams;
use super::prague::PragueParams;
use super::bbr::{Bbr3Params, BbrParams};
use super::linux_reno::LinuxRenoCc;
use super::reno::RenoCc;
use super::scalable::ScalableParams;
use super::vegas::VegasParams;
use super::CongestionControl;

/// Congestion-control algorithm (the cwnd/ssthresh policy seam) and its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    /// Slow start + linear increase; ssthresh halving on loss.
    Reno {
        /// 4.4BSD-Lite's extra MSS/8 per ACK in congestion avoidance (seed 001 §3.3). Off for the
        /// seeds' Reno (seed 001 footnote 7); on in `lite` until `fix_extra_increase`.
        extra_eighth: bool,
        /// Compute ssthresh from FlightSize (RFC 5681) instead of min(cwnd, snd_wnd) (4.4BSD).
        halve_flight: bool,
    },
    /// TCP Vegas (and Vegas* when `star`), see [`crate::cc::VegasCc`].
    Vegas(VegasParams),
    /// Reno as Linux `tcp_cong.c` (packet counting, cwnd/2), see [`crate::cc::LinuxRenoCc`].
    LinuxReno,
    /// Kelly's scalable TCP, see [`crate::cc::ScalableCc`].
    Scalable(ScalableParams),
    /// CUBIC as Linux `tcp_cubic.c`, see [`crate::cc::CubicCc`].
    Cubic(CubicParams),
    /// DCTCP (RFC 8257), see [`crate::cc::DctcpCc`].
    Dctcp(DctcpParams),
    /// TCP Prague (L4S), see [`crate::cc::PragueCc`].
    Prague(PragueParams),
    /// BBR v1 as Linux tcp_bbr.c, see [`crate::cc::BbrCc`].
    Bbr(BbrParams),
    /// BBR v3 (Google's published v3), see [`crate::cc::Bbr3Cc`].
    Bbr3(Bbr3Params),
}

impl CcKind {
    /// 4.4BSD's Reno window (no MSS/8 term, ssthresh from min(cwnd, snd_wnd)).
    pub const BSD_RENO: CcKind = CcKind::Reno { extra_eighth: false, halve_flight: false };
    /// Reno with RFC 5681's ssthresh = max(FlightSize/2, 2·MSS).
    pub const RFC5681_RENO: CcKind = CcKind::Reno { extra_eighth: false, halve_flight: true };

    /// The controller; `seed` feeds a CC's own randomness (the scalable pacing factor).
    pub fn build(&self, seed: u64) -> Box<dyn CongestionControl> {
        match *self {
            CcKind::Reno { extra_eighth, halve_flight } => Box::new(RenoCc { extra_eighth, halve_flight }),
            CcKind::LinuxReno => Box::new(LinuxRenoCc::default()),
            CcKind::Vegas(p) => p.build(),
            CcKind::Scalable(p) => p.build(seed),
            CcKind::Cubic(p) => p.build(),
            CcKind::Dctcp(p) => p.build(),
            CcKind::Prague(p) => p.build(),
            CcKind::Bbr(p) => p.build(seed),
            CcKind::Bbr3(p) => p.build(seed),
        }
    }

    /// The algorithm's name as the variant table prints it.
    pub fn name(&self) -> &'static str {
        match self {
            CcKind::Reno { .. } => "reno",
            CcKind::LinuxReno => "linux-reno",
            CcKind::Vegas(p) if p.star => "vegas-star",
            CcKind::Vegas(_) => "vegas",
            CcKind::Scalable(_) => "scalable",
            CcKind::Cubic(_) => "cubic",
            CcKind::Dctcp(_) => "dctcp",
            CcKind::Prague(_) => "prague",
            CcKind::Bbr(_) => "bbr",
            CcKind::Bbr3(_) => "bbr3",
        }
    }

    /// True if the CC decides retransmissions and window cuts itself (Vegas): the endpoint then
    /// pairs it with the pass-through [`crate::recovery::VegasRecovery`].
    pub fn owns_loss_recovery(&self) -> bool {
        matches!(self, CcKind::Vegas(_))
    }

    /// Whether the controller may override the hooks added for modern TCP (`pacing_rate`,
    /// `on_ack_event`, `on_app_limited`, `on_ack_in_recovery`, `on_recovery_pipe`). False only
    /// for the classic window CCs, which keep the no-op defaults: their endpoints skip the calls
    /// (issue 28). A new algorithm gets the hooks unless it is added here.
    pub fn uses_modern_hooks(&self) -> bool {
        !matches!(self, CcKind::Reno { .. } | CcKind::LinuxReno | CcKind::Vegas(_) | CcKind::Scalable(_))
    }

    /// The `params` keys this algorithm takes.
    pub fn param_names(&self) -> &'static [&'static str] {
        match self {
            CcKind::Reno { .. } | CcKind::LinuxReno => &[],
            CcKind::Vegas(_) => VegasParams::NAMES,
            CcKind::Scalable(_) => ScalableParams::NAMES,
            CcKind::Cubic(_) => CubicParams::NAMES,
            CcKind::Dctcp(_) => DctcpParams::NAMES,
            CcKind::Prague(_) => PragueParams::NAMES,
            CcKind::Bbr(_) => BbrParams::NAMES,
            CcKind::Bbr3(_) => Bbr3Params::NAMES,
        }
    }

    /// Set one `params` key; `variant` names the flow's variant in errors.
    pub fn set_param(&mut self, variant: &str, key: &str, value: f64) -> Result<(), String> {
        match self {
            CcKind::Reno { .. } | CcKind::LinuxReno => Err(format!("variant {variant:?} takes no parameter {key:?}")),
            CcKind::Vegas(p) => p.set(variant, key, value),
            CcKind::Scalable(p) => p.set(variant, key, value),
            CcKind::Cubic(p) => p.set(variant, key, value),
            CcKind::Dctcp(p) => p.set(variant, key, value),
            CcKind::Prague(p) => p.set(variant, key, value),
            CcKind::Bbr(p) => p.set(variant, key, value),
            CcKind::Bbr3(p) => p.set(variant, key, value),
        }
    }

    /// Cross-parameter checks after every `set_param`.
    pub fn check_params(&self) -> Result<(), String> {
        match self {
            CcKind::Vegas(p) => p.check(),
            CcKind::Bbr(p) => p.check(),
            CcKind::Bbr3(p) => p.check(),
            _ => Ok(()),
        }
    }
}

/// Build the CC named by a config (= [`CcKind::build`]).
pub fn build(kind: CcKind, seed: u64) -> Box<dyn CongestionControl> {
    kind.build(seed)
}
