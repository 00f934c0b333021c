//! TCP Prague sender (draft-briscoe-iccrg-prague-congestion-control-03, Briscoe, De Schepper,
//! Albisser, Misund, Tilmans, Kühlewind, Ahmed 2023; the L4S team's Linux `tcp_prague.c` for
//! the constants). The L4S identifier is RFC 9331's ECT(1).
//!
//! # Rules
//!
//! * Data leaves as ECT(1) (`EndpointConfig::ecn_l4s`, RFC 9331 §4.1), retransmissions too.
//! * α as DCTCP (draft §2.3.1, [`crate::cc::dctcp::DctcpAlpha`]): the marked fraction per round
//!   trip, EWMA gain g = 1/16, α₀ = 1.
//! * On ECE, at most once per round trip: `cwnd ← cwnd·(1 − α/2)` (draft §2.3.2), ssthresh =
//!   the new cwnd; the first mark thereby also ends slow start. On loss: halve (draft §2.3.4,
//!   "as Reno").
//! * Reduced RTT dependence (draft §2.3.5; Linux `prague_rate_scaled_ai_ack_increase`): in
//!   congestion avoidance the additive increase per round trip is `(R/R_ref)²` packets for a
//!   smoothed RTT R below the reference `R_ref` = 25 ms (1 packet at or above it), so the rate
//!   `cwnd/R` grows by `1/R_ref²` packets/s² whatever R is. Kept as a fixed-point credit:
//!   `+acked·scale` per ACK, `+1` packet per `cwnd` credits.
//!
//! # Deliberate deviations
//!
//! 1. No classic-ECN-AQM fallback (draft §2.3.6: detecting a classic RFC 3168 bottleneck and
//!    behaving as Reno there): not built.
//! 2. Feedback is DCTCP's echo state machine ([`crate::ecn`]), not AccECN (draft §2.2 requires
//!    AccECN; Linux Prague also accepts DCTCP-style feedback).
//! 3. No pacing and a whole-packet window (Linux Prague paces and keeps a fractional window).
//! 4. No RTT-dependent α gain (draft §2.3.5's optional scaling of g): g stays 1/16.

use crate::cc::dctcp::{dctcp_ssthresh, DctcpAlpha, PacketWindow, ALPHA_ONE};
use crate::cc::{AckSample, CcWindow, CongestionControl, LossEvent, SenderView};
use crate::trace::CamTrace;
use crate::{Nanos, MS};

/// Fixed-point unit of the additive-increase credit.
const SCALE_ONE: u64 = 1 << 16;

/// Prague's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PragueParams {
    /// Reference RTT R_ref (ns; draft / Linux `prague_rtt_target` 25 ms).
    pub rtt_ref: Nanos,
    /// g = 2^−shift_g.
    pub shift_g: u32,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams::DEFAULT
    }
}

impl PragueParams {
    pub const DEFAULT: PragueParams = PragueParams { rtt_ref: 25 * MS, shift_g: 4 };
    pub const NAMES: &'static [&'static str] = &["rtt_ref", "g"];

    pub fn set(&mut self, variant: &str, key: &str, value: f64) -> Result<(), String> {
        match key {
            "rtt_ref" if !(value.is_finite() && value > 0.0 && value <= 10.0) => return Err(format!("rtt_ref is seconds in (0, 10], got {value}")),
            "rtt_ref" => self.rtt_ref = (value * 1e9).round() as Nanos,
            "g" => {
                let mut d = crate::cc::DctcpParams::DEFAULT;
                d.set(variant, "g", value)?;
                self.shift_g = d.shift_g;
            }
            _ => return Err(format!("variant {variant:?} has no parameter {key:?}; known: {}", Self::NAMES.join(", "))),
        }
        Ok(())
    }

    pub fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(PragueCc::new(*self))
    }
}

#[derive(Clone, Debug)]
pub struct PragueCc {
    pub params: PragueParams,
    pub alpha: DctcpAlpha,
    win: PacketWindow,
    /// Additive-increase credit in packets × `SCALE_ONE`.
    ai_credit: u64,
}

impl PragueCc {
    pub fn new(params: PragueParams) -> Self {
        PragueCc { params, alpha: DctcpAlpha::new(params.shift_g, ALPHA_ONE), win: PacketWindow::default(), ai_credit: 0 }
    }

    /// Increase per round trip, in packets × `SCALE_ONE`: `min(1, (R/R_ref)²)`.
    pub fn ai_scale(&self, srtt: Option<Nanos>) -> u64 {
        let Some(r) = srtt else { return SCALE_ONE };
        if r >= self.params.rtt_ref {
            return SCALE_ONE;
        }
        let (r, t) = (r as u128, self.params.rtt_ref as u128);
        ((r * r * SCALE_ONE as u128 + t * t / 2) / (t * t)).max(1) as u64
    }
}

impl CongestionControl for PragueCc {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn on_ack_event(&mut self, _now: Nanos, bytes_acked: u32, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.alpha.on_ack(bytes_acked, ece, snd_una, snd_nxt);
    }

    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        self.win.sync(w);
        let mss = w.mss.max(1);
        let acked = s.bytes_acked.div_ceil(mss).max(1);
        let left = self.win.slow_start(w, acked);
        if left == 0 {
            return;
        }
        let cwnd = w.cwnd / mss;
        self.ai_credit += left as u64 * self.ai_scale(view.fine_srtt);
        let per = cwnd.max(1) as u64 * SCALE_ONE;
        if self.ai_credit >= per {
            let add = self.ai_credit / per;
            self.ai_credit -= add * per;
            self.win.write(w, cwnd + add as u32);
        }
    }

    fn ssthresh(&mut self, w: &CcWindow, _flight: u32, _snd_wnd: u32, ev: LossEvent) -> u32 {
        self.ai_credit = 0;
        dctcp_ssthresh(w, self.alpha.alpha, ev)
    }

    fn ect_on_retransmit(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additive_increase_scales_with_rtt_squared_below_the_reference() {
        let p = PragueCc::new(PragueParams::DEFAULT);
        assert_eq!(p.ai_scale(None), SCALE_ONE);
        assert_eq!(p.ai_scale(Some(25 * MS)), SCALE_ONE);
        assert_eq!(p.ai_scale(Some(100 * MS)), SCALE_ONE, "Reno's increase above R_ref");
        assert_eq!(p.ai_scale(Some(12_500_000)), SCALE_ONE / 4);
        assert_eq!(p.ai_scale(Some(2_500_000)), (SCALE_ONE + 50) / 100);
        let mut q = PragueParams::DEFAULT;
        q.set("prague", "rtt_ref", 0.010).unwrap();
        assert_eq!(q.rtt_ref, 10 * MS);
        assert!(q.set("prague", "rtt_ref", 0.0).is_err());
    }
}
