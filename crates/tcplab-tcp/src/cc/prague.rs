//! TCP Prague sender (draft-briscoe-iccrg-prague-congestion-control-03, Briscoe, De Schepper,
//! Albisser, Misund, Tilmans, Kühlewind, Ahmed 2023; the L4S team's Linux `tcp_prague.c` for
//! the constants). The L4S identifier is RFC 9331's ECT(1).
//!
//! # Rules
//!
//! * Data leaves as ECT(1) (`EndpointConfig::ecn_l4s`, RFC 9331 §4.1), retransmissions too.
//! * α as DCTCP (draft §2.3.1, [`crate::cc::dctcp::DctcpAlpha::prague`]): the marked fraction
//!   per round trip, EWMA gain g = 1/16, α₀ = 1, kept in 2^−20 units as Linux Prague (DCTCP's
//!   1024ths zero any α under 16/1024 and pin α far below a marked fraction under 25 %).
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
//! 3. A whole-packet window (Linux Prague keeps a fractional one). Paced as Linux paces every
//!    flow (`tcp_update_pacing_rate`): cwnd·mss/srtt × 2 in slow start, × 1.2 after, refreshed
//!    on every ACK; nothing is paced before the first RTT sample. (Unpaced, a window's worth of
//!    segments reaches the bottleneck at the access rate and a marker that reads arrivals, such
//!    as Kelly's virtual queue, marks the burst, not the standing load.)
//! 4. No RTT-dependent α gain (draft §2.3.5's optional scaling of g): g stays 1/16.

use crate::cc::dctcp::{dctcp_ssthresh, DctcpAlpha, PacketWindow};
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
    /// Bytes per second, from the last ACK's window and smoothed RTT.
    pacing: Option<u64>,
}

impl PragueCc {
    pub fn new(params: PragueParams) -> Self {
        PragueCc { params, alpha: DctcpAlpha::prague(params.shift_g), win: PacketWindow::default(), ai_credit: 0, pacing: None }
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
        self.on_ack_window(w, s, view);
        self.pacing = pacing_rate(w, view.fine_srtt);
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.pacing
    }

    fn ssthresh(&mut self, w: &CcWindow, _flight: u32, _snd_wnd: u32, ev: LossEvent) -> u32 {
        // An ECN reaction keeps the additive-increase credit (Linux Prague scales its
        // fractional window, it does not zero it): zeroed at every once-per-RTT reaction, an
        // increase of (R/R_ref)² < 1 packet per RTT never paid out and the window froze.
        if ev != LossEvent::Ecn {
            self.ai_credit = 0;
        }
        dctcp_ssthresh(w, &self.alpha, ev)
    }

    fn ect_on_retransmit(&self) -> bool {
        true
    }
}

/// Linux's `tcp_update_pacing_rate`: cwnd·mss/srtt, × 2 in slow start and × 1.2 after it.
pub fn pacing_rate(w: &CcWindow, srtt: Option<Nanos>) -> Option<u64> {
    let r = srtt.filter(|&r| r > 0)?;
    let ratio = if w.cwnd < w.ssthresh { 2.0 } else { 1.2 };
    Some(((w.cwnd as f64 * ratio) * 1e9 / r as f64).round().max(1.0) as u64)
}

impl PragueCc {
    fn on_ack_window(&mut self, w: &mut CcWindow, s: &AckSample, view: &SenderView<'_>) {
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

    #[test]
    fn paced_at_linux_ratios() {
        let mut w = CcWindow { cwnd: 100_000, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX };
        assert_eq!(pacing_rate(&w, None), None, "no RTT sample yet");
        assert_eq!(pacing_rate(&w, Some(10 * MS)), Some(20_000_000), "slow start: 2 x cwnd/srtt");
        w.ssthresh = 50_000;
        assert_eq!(pacing_rate(&w, Some(10 * MS)), Some(12_000_000), "after: 1.2 x");
    }
}
