//! Congestion-control seam.
//!
//! Modelled on Linux `tcp_congestion_ops` and quinn-proto's `Controller`: a small trait whose
//! methods take typed inputs and have default no-op bodies. The endpoint owns the window
//! ([`CcWindow`]) and hands it in; the new ssthresh is *returned* by [`CongestionControl::ssthresh`]
//! and set by whoever handles the loss event (recovery or the timer), never set behind its back.
//!
//! Hooks for Vegas (next issue): [`CongestionControl::on_send`] sees every transmission with its
//! time, [`SenderView::send_log`] exposes per-segment send times and retransmit counts, and
//! [`CongestionControl::on_dupack`] / [`CongestionControl::on_ack_check`] may answer
//! [`CcVerdict::RetransmitOldest`] ("Vegas retransmits on the first duplicate ACK if the segment's
//! fine-grained timer expired, and checks the first/second non-duplicate ACK after a
//! retransmission"). A CC that wants CAM rows writes them to the [`CamTrace`] it is given when
//! tracing is on.

pub mod cubic;
pub mod dctcp;
pub mod prague;
pub mod bbr;
mod kind;
mod linux_reno;
mod reno;
pub mod scalable;
pub mod vegas;
pub use cubic::{CubicCc, CubicParams};
pub use dctcp::{DctcpCc, DctcpParams};
pub use prague::{PragueCc, PragueParams};
pub use kind::{build, CcKind};
pub use bbr::{Bbr3Cc, Bbr3Params, BbrCc, BbrParams};
pub use linux_reno::LinuxRenoCc;
pub use reno::RenoCc;
pub use scalable::{ScalableCc, ScalableParams};
pub use vegas::{VegasCc, VegasParams};

use crate::sendlog::SendLog;
use crate::trace::CamTrace;
use crate::Nanos;

/// The congestion state the endpoint owns and a CC adjusts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcWindow {
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Effective payload bytes per segment (after options).
    pub mss: u32,
    /// Largest window the sender could use (4.4BSD: TCP_MAXWIN << snd_scale).
    pub max_cwnd: u32,
}

impl CcWindow {
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        // 4.4BSD tcp_input: the linear increase applies only when cw > snd_ssthresh.
        self.cwnd <= self.ssthresh
    }
}

/// One cumulative ACK that advanced snd_una (outside or at the end of loss recovery).
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    pub now: Nanos,
    /// Bytes newly acknowledged by this ACK (data bytes; SYN/FIN not counted).
    pub bytes_acked: u32,
    /// RTT sample taken on this ACK, if any (fine-grained ns; in the `bsd` timer model it is
    /// ticks × 500 ms). Karn's rule already applied.
    pub rtt: Option<Nanos>,
    /// Fine-grained RTT of the segment acknowledged, from the send log, if it was not
    /// retransmitted (Vegas uses this regardless of timer model).
    pub fine_rtt: Option<Nanos>,
    pub in_slow_start: bool,
    /// snd_una after this ACK (relative 64-bit).
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Bytes in flight after this ACK (snd_nxt − snd_una).
    pub flight: u32,
    /// ECN echo flag on the ACK; always false when ECN was not negotiated (RFC 3168 §6.1.1).
    pub ece: bool,
}

/// Why a new ssthresh is being asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossEvent {
    FastRetransmit,
    Timeout,
    /// A retransmission decided by the CC itself (Vegas).
    CcRetransmit,
    /// An ECN echo (RFC 3168 §6.1.2).
    Ecn,
}

/// What a CC may ask the endpoint to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcVerdict {
    Continue,
    /// Retransmit the segment at snd_una now (bypassing the window).
    RetransmitOldest,
}

/// Read-only view of the sender for CC decisions.
#[derive(Clone, Copy, Debug)]
pub struct SenderView<'a> {
    pub now: Nanos,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub snd_wnd: u32,
    pub mss: u32,
    /// Current duplicate-ACK count.
    pub dupacks: u32,
    /// Fine-grained smoothed RTT kept from the send log regardless of the timer model.
    pub fine_srtt: Option<Nanos>,
    pub in_recovery: bool,
    pub send_log: &'a SendLog,
}

/// The congestion-control trait. All methods default to no-ops except `ssthresh`, which defaults
/// to 4.4BSD's halving.
pub trait CongestionControl: std::fmt::Debug + Send {
    fn name(&self) -> &'static str;

    /// A cumulative ACK advanced snd_una and recovery allows growth. Adjust `w.cwnd`.
    fn on_ack(&mut self, _w: &mut CcWindow, _s: &AckSample, _view: &SenderView<'_>, _cam: Option<&mut CamTrace>) {}

    /// An ACK advanced snd_una while loss recovery withheld window growth (`on_ack` is not
    /// called). A CC that keeps a model on every ACK (BBR's delivery rate, rounds, min RTT)
    /// updates it here; it may set cwnd as Linux's `cong_control` does in recovery.
    fn on_ack_in_recovery(&mut self, _w: &mut CcWindow, _s: &AckSample, _view: &SenderView<'_>) {}

    /// A duplicate ACK (snd_una unchanged), after its SACK blocks and loss marks and before
    /// `on_recovery_pipe`, in or out of recovery: Linux runs `cong_control` on every ACK, with a
    /// rate sample from the most recently sent segment it newly SACKed (`tcp_rate_gen`). A CC
    /// that keeps its model on every ACK (BBR v1) takes it here; `s.bytes_acked` is 0.
    fn on_sack_ack(&mut self, _w: &mut CcWindow, _s: &AckSample, _view: &SenderView<'_>) {}

    /// In a pipe-governed loss recovery (RFC 6675), after every ACK: the pipe now and the bytes
    /// this ACK delivered (cumulatively or, for a duplicate ACK, one segment SACKed). BBR sizes
    /// cwnd from it (packet conservation, as Linux from `tcp_packets_in_flight`).
    fn on_recovery_pipe(&mut self, _w: &mut CcWindow, _pipe: u64, _delivered: u64) {}

    /// Loss detection on the ACK being processed newly marked `bytes` lost (RACK-TLP's
    /// `RACK_detect_loss`, before the CC's `on_ack*` hooks of the same ACK): Linux's
    /// `rs->losses`, which BBR v1 takes off cwnd (`bbr_set_cwnd_to_recover_or_restore`).
    fn on_marked_lost(&mut self, _bytes: u64) {}

    /// An ACK's SACK block newly reports `[start, end)` (data offsets, above the cumulative ACK)
    /// received, at `now`; repeated blocks arrive again on later ACKs. BBR's delivery-rate
    /// estimator counts SACKed data as delivered here (Linux `tcp_rate_skb_delivered`).
    fn on_sacked(&mut self, _now: Nanos, _start: u64, _end: u64) {}

    /// The sender had less than a segment of new data to send while the window had room
    /// (delivery-rate estimation's app-limited mark, draft-cheng-iccrg-delivery-rate-estimation §3.4).
    fn on_app_limited(&mut self) {}

    /// As [`CongestionControl::on_app_limited`], with the data in flight Linux counts for the
    /// mark (`tcp_packets_in_flight`: in recovery the pipe, not everything unacknowledged).
    fn on_app_limited_in_flight(&mut self, _in_flight: u64) {
        self.on_app_limited()
    }

    /// The data in flight as Linux's `tcp_packets_in_flight` counts it (bytes out − SACKed −
    /// marked lost + retransmitted), from a recovery that keeps a scoreboard at all times
    /// (RACK-TLP): with `prior`, at the start of an ACK (before its SACK blocks and loss marks,
    /// Linux `prior_in_flight`); else after them, before the CC's ACK hooks. BBR's DRAIN exit,
    /// PROBE_RTT test, gain-cycle advance and app-limited mark use it.
    fn on_in_flight(&mut self, _in_flight: u64, _prior: bool) {}

    /// The new ssthresh after a loss event (returned, not set).
    /// Default: 4.4BSD `win = min(snd_wnd, cwnd) / 2 / mss; if win < 2 { win = 2 }; win * mss`.
    fn ssthresh(&mut self, w: &CcWindow, _flight: u32, snd_wnd: u32, _ev: LossEvent) -> u32 {
        bsd_halve(w.cwnd.min(snd_wnd), w.mss)
    }

    /// A duplicate ACK arrived (before recovery sees it).
    fn on_dupack(&mut self, _w: &mut CcWindow, _view: &SenderView<'_>) -> CcVerdict {
        CcVerdict::Continue
    }

    /// A non-duplicate ACK arrived (before the window grows); Vegas checks here whether the
    /// segment after a retransmission needs retransmitting too.
    fn on_ack_check(&mut self, _w: &mut CcWindow, _view: &SenderView<'_>) -> CcVerdict {
        CcVerdict::Continue
    }

    /// A segment left: `seq`/`len` relative, `retransmit` if it had been sent before.
    fn on_send(&mut self, _now: Nanos, _seq: u64, _len: u32, _retransmit: bool) {}

    /// The retransmission timer expired (after the endpoint set cwnd = 1 MSS and ssthresh).
    fn on_timeout(&mut self, _w: &mut CcWindow) {}

    /// The connection is established (Linux `tcp_init_transfer` → the CC's `init`, after the
    /// SYN-ACK's RTT sample): `handshake_rtt` is the SYN's (or SYN-ACK's) RTT, none when it was
    /// retransmitted (Karn).
    fn on_established(&mut self, _now: Nanos, _w: &CcWindow, _handshake_rtt: Option<Nanos>) {}

    /// Loss recovery entered / exited (informational).
    fn on_recovery(&mut self, _w: &mut CcWindow, _entered: bool) {}

    /// A CC-owned deadline (Vegas*: scheduled window increases). The endpoint includes it in
    /// [`crate::Endpoint::next_timer`] and calls [`CongestionControl::on_timer`] when it is due.
    fn next_timer(&self) -> Option<Nanos> {
        None
    }

    /// The CC's deadline passed; it may open the window (the endpoint then sends as usual).
    fn on_timer(&mut self, _now: Nanos, _w: &mut CcWindow) {}

    /// Pacing (Kelly's scalable TCP): the earliest time the next segment may leave through the
    /// window; `None` = not paced. The endpoint holds window-governed sends until then (forced
    /// retransmissions and window probes go at once); the CC arms [`CongestionControl::next_timer`]
    /// for it.
    fn pacing_release(&self) -> Option<Nanos> {
        None
    }

    /// Every ACK that advances snd_una, whatever recovery and ECN do with it, before the ECN
    /// reaction and the window update (Linux `in_ack_event`): `bytes_acked` newly acknowledged,
    /// `ece` its echo (negotiated ECN only), `snd_una`/`snd_nxt` relative after the ACK. DCTCP's
    /// α estimator (RFC 8257 §3.3) counts here.
    fn on_ack_event(&mut self, _now: Nanos, _bytes_acked: u32, _ece: bool, _snd_una: u64, _snd_nxt: u64) {}

    /// Keep ECT on retransmitted data (Linux `TCP_CONG_NEEDS_ECN`: DCTCP, Prague); RFC 3168
    /// §6.1.5 otherwise sends retransmissions Not-ECT.
    fn ect_on_retransmit(&self) -> bool {
        false
    }

    /// Rate pacing as Linux's internal/fq pacing (`sk_pacing_rate`): the rate in payload bytes per
    /// second at which the endpoint releases data segments; `None` = not rate-paced (every
    /// window-based CC). The endpoint, not the CC, keeps the release clock and its timer
    /// (`endpoint/pacing.rs`).
    fn pacing_rate(&self) -> Option<u64> {
        None
    }

    /// A real-valued window in segments, for CCs that keep one (traces, tests).
    fn real_cwnd(&self) -> Option<f64> {
        None
    }

    /// The controller as `Any`, for tests and diagnostics that read an algorithm's state (BBR's
    /// estimates); `None` for CCs that do not offer it.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// 4.4BSD's ssthresh computation on loss: half the window in whole segments, at least two.
#[inline]
pub fn bsd_halve(window: u32, mss: u32) -> u32 {
    let mss = mss.max(1);
    let win = (window / 2 / mss).max(2);
    win * mss
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_while_cwnd_at_most_ssthresh() {
        // 4.4BSD tcp_input: the linear increase applies only when cw > snd_ssthresh.
        let w = |cwnd| CcWindow { cwnd, ssthresh: 8000, mss: 1000, max_cwnd: 65535 };
        assert!(w(7999).in_slow_start());
        assert!(w(8000).in_slow_start());
        assert!(!w(8001).in_slow_start());
    }

    #[test]
    fn vegas_coarse_timeout_ssthresh_is_bsd_halving() {
        // Vegas keeps Reno's coarse timeout (000 §4.5): ssthresh = min(cwnd, snd_wnd)/2 in whole
        // segments, at least two — the trait's default, which Vegas does not override.
        let mut v = VegasCc::new(VegasParams::default());
        let w = |cwnd| CcWindow { cwnd, ssthresh: 65535, mss: 1000, max_cwnd: 65535 };
        assert_eq!(v.ssthresh(&w(10_000), 10_000, 65535, LossEvent::Timeout), 5000);
        assert_eq!(v.ssthresh(&w(10_999), 10_999, 65535, LossEvent::Timeout), 5000);
        assert_eq!(v.ssthresh(&w(10_000), 10_000, 6000, LossEvent::Timeout), 3000, "peer window bounds it");
        assert_eq!(v.ssthresh(&w(3000), 3000, 65535, LossEvent::Timeout), 2000, "never below two segments");
    }

    #[test]
    fn kinds_build_their_controllers() {
        assert!(CcKind::Vegas(VegasParams::default()).owns_loss_recovery(), "Vegas insists on its recovery");
        assert!(!CcKind::Reno { extra_eighth: false, halve_flight: false }.owns_loss_recovery());
        assert!(!CcKind::Scalable(ScalableParams::default()).owns_loss_recovery());
        assert_eq!(build(CcKind::Vegas(VegasParams { star: true, ..Default::default() }), 1).name(), "vegas-star");
        assert_eq!(build(CcKind::Reno { extra_eighth: false, halve_flight: false }, 1).name(), "reno");
    }

    /// The endpoint skips the modern hooks for `!uses_modern_hooks()` kinds (issue 28): those
    /// must be exactly the classic window CCs, whose hooks are the trait's no-ops, and every
    /// newer algorithm must keep them.
    #[test]
    fn only_classic_window_ccs_skip_the_modern_hooks() {
        let classic = [CcKind::BSD_RENO, CcKind::RFC5681_RENO, CcKind::LinuxReno, CcKind::Vegas(VegasParams::default()), CcKind::Scalable(ScalableParams::default())];
        for kind in classic {
            assert!(!kind.uses_modern_hooks(), "{}", kind.name());
            let cc = build(kind, 1);
            assert_eq!(cc.pacing_rate(), None, "{}", kind.name());
            assert!(!cc.ect_on_retransmit(), "{}", kind.name());
        }
        let modern = [CcKind::Cubic(CubicParams::default()), CcKind::Dctcp(DctcpParams::default()), CcKind::Prague(PragueParams::default()), CcKind::Bbr(BbrParams::default())];
        for kind in modern {
            assert!(kind.uses_modern_hooks(), "{}", kind.name());
        }
        use crate::recovery::RecoveryKind as R;
        for kind in [R::Tahoe, R::Reno, R::NewReno, R::Sack1, R::Rfc6675, R::Prr, R::CcOwned] {
            assert!(!kind.has_own_timer(), "{}", kind.name());
            assert_eq!(kind.build().next_timer(), None, "{}", kind.name());
        }
        assert!(R::Rack.has_own_timer() && R::RackPrr.has_own_timer());
    }

    /// The endpoint skips the per-segment hooks (`on_send`, `on_ack_check`, `on_dupack`,
    /// `pacing_release`, `ect_on_retransmit`) of Reno's two CCs, and the sending hooks
    /// (`governs_sending`, `next_send`, `on_transmit`) of Tahoe's, Reno's, NewReno's, Lite's and
    /// Vegas' recovery (issue 28): those must keep the trait's defaults, in recovery as out of it.
    #[test]
    fn classic_parts_keep_the_per_segment_defaults() {
        use crate::recovery::{RecoveryCtx, RecoveryKind as R, SackSend, SendGate};
        let log = crate::sendlog::SendLog::default();
        let view = SenderView { now: 5, snd_una: 0, snd_nxt: 10_000, snd_max: 10_000, snd_wnd: 65535, mss: 1000, dupacks: 3, fine_srtt: Some(1), in_recovery: false, send_log: &log };
        for kind in [CcKind::BSD_RENO, CcKind::RFC5681_RENO, CcKind::LinuxReno] {
            let mut cc = build(kind, 1);
            let mut w = CcWindow { cwnd: 10_000, ssthresh: 5000, mss: 1000, max_cwnd: 65535 };
            assert_eq!(cc.on_dupack(&mut w, &view), CcVerdict::Continue, "{}", kind.name());
            assert_eq!(cc.on_ack_check(&mut w, &view), CcVerdict::Continue, "{}", kind.name());
            cc.on_send(5, 0, 1000, true);
            assert_eq!((w.cwnd, w.ssthresh), (10_000, 5000), "{}", kind.name());
            assert_eq!(cc.pacing_release(), None, "{}", kind.name());
            assert!(!cc.ect_on_retransmit(), "{}", kind.name());
        }
        let gate = SendGate { snd_una: 1, snd_nxt: 10_001, snd_max: 10_001, cwnd: 10_000, mss: 1000, snd_wnd: 65535, send_limit: 100_000 };
        let parts = [R::Tahoe.build(), R::Reno.build(), R::NewReno.build(), R::CcOwned.build(), crate::recovery::lite(&crate::lite::LiteFixes::default())];
        for mut rec in parts {
            let mut cc = build(CcKind::RFC5681_RENO, 1);
            let mut w = CcWindow { cwnd: 10_000, ssthresh: 65535, mss: 1000, max_cwnd: 65535 };
            for dupacks in 1..=5 {
                let mut ctx = RecoveryCtx { now: 5, w: &mut w, cc: &mut *cc, snd_una: 1, snd_nxt: 10_001, snd_max: 10_001, snd_wnd: 65535, dupacks, dupack_threshold: 3, sack: &[] };
                rec.on_dupack(&mut ctx);
                rec.on_transmit_at(5, 1, 1000, true);
                assert!(!rec.governs_sending(), "{} after {dupacks} duplicate ACKs", rec.name());
                assert_eq!(rec.next_send(&gate), SackSend::Blocked, "{}", rec.name());
            }
        }
    }

    #[test]
    fn window_based_ccs_keep_no_real_window_pacing_or_timer() {
        // The trait's defaults: not paced, no CC deadline, no real-valued window. Reno and
        // plain Vegas rely on them (the endpoint would otherwise hold sends or arm timers).
        let reno = RenoCc { extra_eighth: false, halve_flight: false };
        let vegas = VegasCc::new(VegasParams::default());
        for cc in [&reno as &dyn CongestionControl, &vegas] {
            assert_eq!(cc.pacing_release(), None, "{}", cc.name());
            assert_eq!(cc.pacing_rate(), None, "{}", cc.name());
            assert_eq!(cc.next_timer(), None, "{}", cc.name());
            assert_eq!(cc.real_cwnd(), None, "{}", cc.name());
        }
    }
}
