//! DCTCP sender (RFC 8257, Bensley, Thaler, Balasubramanian, Eggert, Judd 2017; Alizadeh et al.,
//! SIGCOMM 2010), with Linux 6.x `net/ipv4/tcp_dctcp.c` where the RFC leaves a choice. The
//! receiver's echo (RFC 8257 §3.2) lives in [`crate::ecn`].
//!
//! # Rules
//!
//! * α, the estimated fraction of marked bytes (RFC 8257 §3.3): every ACK that advances snd_una
//!   adds its newly acknowledged bytes to `bytes_acked`, and to `bytes_marked` if it carries ECE.
//!   When snd_una reaches `window_end` (one window of data), `α ← (1 − g)·α + g·M` with
//!   `M = bytes_marked / bytes_acked`, `g = 1/16` (`shift_g` 4); then the counters restart and
//!   `window_end = snd_nxt`. α is kept as Linux keeps it: an integer of 1024ths, `α −= α >> 4`,
//!   `α += (marked << 6) / acked` (the `<< (10 − shift_g)`), capped at 1024; initially 1024
//!   (Linux `dctcp_alpha_on_init`, RFC 8257 §3.3 "initialized to 1").
//! * Reaction to ECE: once per window of data (the endpoint's RFC 3168 rule, as Linux's CWR
//!   state), `cwnd ← max(cwnd − cwnd·α/2, 2)` packets (Linux `dctcp_ssthresh`:
//!   `cwnd − (cwnd·α >> 11)`), ssthresh = the new cwnd.
//! * Loss (fast retransmit or timeout): `ssthresh = max(cwnd/2, 2)` (Linux
//!   `dctcp_react_to_loss`, RFC 8257 §3.4 "as RFC 5681").
//! * Window growth as Linux's Reno (`tcp_reno_cong_avoid`), counted in packets: slow start
//!   `+acked` up to ssthresh, then `+1` per cwnd packets acknowledged.
//!
//! # Deliberate deviations
//!
//! 1. α counts cumulatively acknowledged *bytes* (RFC 8257 §3.3), not Linux's delivered
//!    packets (which also counts SACKed ones).
//! 2. The ECE reduction cuts cwnd at once (RFC 8257 §3.3 step 4); Linux's CWR state walks cwnd
//!    down with PRR over the next RTT.
//! 3. The sender keeps ECT on retransmissions (Linux for `TCP_CONG_NEEDS_ECN`), so a step
//!    marker marks them rather than dropping them; pure ACKs are not ECT.

use crate::cc::{AckSample, CcWindow, CongestionControl, LossEvent, SenderView};
use crate::trace::CamTrace;
use crate::Nanos;

/// Linux `DCTCP_MAX_ALPHA`.
pub const ALPHA_ONE: u32 = 1024;
/// Linux `PRAGUE_ALPHA_BITS`.
pub const PRAGUE_ALPHA_BITS: u32 = 20;

/// DCTCP's parameters (Linux module parameters `dctcp_shift_g`, `dctcp_alpha_on_init`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DctcpParams {
    /// g = 2^−shift_g (4 → 1/16).
    pub shift_g: u32,
    /// α at start, in 1024ths.
    pub alpha_on_init: u32,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams::DEFAULT
    }
}

impl DctcpParams {
    pub const DEFAULT: DctcpParams = DctcpParams { shift_g: 4, alpha_on_init: ALPHA_ONE };
    pub const NAMES: &'static [&'static str] = &["g", "alpha_init"];

    pub fn set(&mut self, variant: &str, key: &str, value: f64) -> Result<(), String> {
        match key {
            "g" => {
                // g must be a power of two 1/2 … 1/1024 (Linux shifts by dctcp_shift_g).
                let shift = (-value.log2()).round();
                if !(value > 0.0 && value < 1.0) || (2f64.powf(-shift) - value).abs() > 1e-12 || shift > 10.0 {
                    return Err(format!("g must be a power of two from 1/2 to 1/1024 (Linux shifts by it), got {value}"));
                }
                self.shift_g = shift as u32;
            }
            "alpha_init" if !(0.0..=1.0).contains(&value) => return Err(format!("alpha_init must be in [0, 1], got {value}")),
            "alpha_init" => self.alpha_on_init = (value * ALPHA_ONE as f64).round() as u32,
            _ => return Err(format!("variant {variant:?} has no parameter {key:?}; known: {}", Self::NAMES.join(", "))),
        }
        Ok(())
    }

    pub fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(DctcpCc::new(*self))
    }
}

/// RFC 8257 §3.3's estimator: α per window of data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DctcpAlpha {
    pub shift_g: u32,
    /// α is in units of 2^−bits: 1024ths (10) as Linux DCTCP, 2^−20 as Linux Prague.
    pub bits: u32,
    pub alpha: u32,
    /// Prague's EWMA state α·2^(bits + shift_g) (Linux `upscaled_alpha`): g bits finer than α,
    /// so a small marked fraction is not lost to rounding (with DCTCP's 10-bit rule any α under
    /// 16/1024 is zeroed each window, pinning α at (marked << 6)/acked, a sixteenth of the
    /// fraction, for every marked fraction under 25 %).
    upscaled: u64,
    pub bytes_acked: u64,
    pub bytes_marked: u64,
    /// The window ends when snd_una reaches this (relative offset).
    pub window_end: u64,
    /// Windows completed (α updates).
    pub updates: u64,
}

impl DctcpAlpha {
    pub fn new(shift_g: u32, alpha: u32) -> Self {
        DctcpAlpha { shift_g, bits: 10, alpha, upscaled: 0, bytes_acked: 0, bytes_marked: 0, window_end: 0, updates: 0 }
    }

    /// Prague's estimator (Linux `tcp_prague.c` `prague_update_alpha`): α in 2^−20 units,
    /// `upscaled ← upscaled − upscaled >> g + (marked << 20) / acked`, α = upscaled >> g; α₀ = 1.
    pub fn prague(shift_g: u32) -> Self {
        let bits = PRAGUE_ALPHA_BITS;
        DctcpAlpha { shift_g, bits, alpha: 1 << bits, upscaled: 1u64 << (bits + shift_g), bytes_acked: 0, bytes_marked: 0, window_end: 0, updates: 0 }
    }

    /// One ACK advancing snd_una to `snd_una` by `bytes` (ECE if `ece`); returns true if a
    /// window ended and α was updated.
    pub fn on_ack(&mut self, bytes: u32, ece: bool, snd_una: u64, snd_nxt: u64) -> bool {
        self.bytes_acked += bytes as u64;
        if ece {
            self.bytes_marked += bytes as u64;
        }
        if snd_una < self.window_end {
            return false;
        }
        let mut updated = false;
        if self.bytes_acked > 0 && self.bits != 10 {
            let ratio = (self.bytes_marked << self.bits) / self.bytes_acked;
            self.upscaled = self.upscaled - (self.upscaled >> self.shift_g) + ratio;
            self.alpha = (self.upscaled >> self.shift_g).min(1 << self.bits) as u32;
            self.updates += 1;
            updated = true;
        } else if self.bytes_acked > 0 {
            let mut a = self.alpha;
            // Linux `alpha -= min_not_zero(alpha, alpha >> g)`: a tiny α decays to 0.
            let d = a >> self.shift_g;
            a -= if d == 0 { a } else { d };
            if self.bytes_marked > 0 {
                let m = ((self.bytes_marked << (10 - self.shift_g)) / self.bytes_acked) as u32;
                a = (a + m).min(ALPHA_ONE);
            }
            self.alpha = a;
            self.updates += 1;
            updated = true;
        }
        self.bytes_acked = 0;
        self.bytes_marked = 0;
        self.window_end = snd_nxt;
        updated
    }

    pub fn fraction(&self) -> f64 {
        self.alpha as f64 / (1u64 << self.bits) as f64
    }
}

/// Linux's Reno growth in packets (`tcp_slow_start`, `tcp_cong_avoid_ai(cwnd)`), shared by
/// DCTCP and Prague.
#[derive(Clone, Copy, Debug, Default)]
pub struct PacketWindow {
    /// Credits towards the next +1 (Linux `snd_cwnd_cnt`).
    pub cnt: u32,
    written: u32,
}

impl PacketWindow {
    /// Adopt a window set outside (recovery, timer, ECN reduction).
    pub fn sync(&mut self, w: &CcWindow) {
        if w.cwnd != self.written {
            self.cnt = 0;
            self.written = w.cwnd;
        }
    }
    /// Slow start by `acked` packets up to ssthresh; returns what is left for avoidance.
    pub fn slow_start(&mut self, w: &mut CcWindow, acked: u32) -> u32 {
        let mss = w.mss.max(1);
        let cwnd = w.cwnd / mss;
        let ssthresh = w.ssthresh / mss;
        if cwnd >= ssthresh {
            return acked;
        }
        let new = (cwnd + acked).min(ssthresh);
        self.write(w, new);
        acked - (new - cwnd)
    }
    /// +1 packet per `per` packets acknowledged.
    pub fn avoid(&mut self, w: &mut CcWindow, per: u32, acked: u32) {
        let mss = w.mss.max(1);
        let mut cwnd = w.cwnd / mss;
        let per = per.max(1);
        if self.cnt >= per {
            self.cnt = 0;
            cwnd += 1;
        }
        self.cnt += acked;
        if self.cnt >= per {
            let d = self.cnt / per;
            self.cnt -= d * per;
            cwnd += d;
        }
        self.write(w, cwnd);
    }
    pub fn write(&mut self, w: &mut CcWindow, pkts: u32) {
        w.cwnd = ((pkts as u64 * w.mss as u64).min(w.max_cwnd as u64) as u32).max(w.mss);
        self.written = w.cwnd;
    }
}

#[derive(Clone, Debug)]
pub struct DctcpCc {
    pub params: DctcpParams,
    pub alpha: DctcpAlpha,
    win: PacketWindow,
}

impl DctcpCc {
    pub fn new(params: DctcpParams) -> Self {
        DctcpCc { params, alpha: DctcpAlpha::new(params.shift_g, params.alpha_on_init), win: PacketWindow::default() }
    }
}

/// `max(cwnd − cwnd·α/2, 2)` packets, in bytes, for α in 2^−bits units (Linux
/// `dctcp_ssthresh`: `cwnd − (cwnd·α >> 11)` for 1024ths).
pub fn alpha_reduction(w: &CcWindow, alpha: u32, bits: u32) -> u32 {
    let mss = w.mss.max(1);
    let cwnd = w.cwnd / mss;
    (cwnd - ((cwnd as u64 * alpha as u64) >> (bits + 1)) as u32).max(2) * mss
}

/// The new ssthresh of a DCTCP-style sender (DCTCP, Prague): [`alpha_reduction`] for an ECN
/// echo, half the window in whole packets (at least 2) for a loss.
pub fn dctcp_ssthresh(w: &CcWindow, alpha: &DctcpAlpha, ev: LossEvent) -> u32 {
    match ev {
        LossEvent::Ecn => alpha_reduction(w, alpha.alpha, alpha.bits),
        _ => (w.cwnd / w.mss.max(1) / 2).max(2) * w.mss.max(1),
    }
}

impl CongestionControl for DctcpCc {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn on_ack_event(&mut self, _now: Nanos, bytes_acked: u32, ece: bool, snd_una: u64, snd_nxt: u64) {
        self.alpha.on_ack(bytes_acked, ece, snd_una, snd_nxt);
    }

    fn on_ack(&mut self, w: &mut CcWindow, s: &AckSample, _view: &SenderView<'_>, _cam: Option<&mut CamTrace>) {
        self.win.sync(w);
        let acked = s.bytes_acked.div_ceil(w.mss.max(1)).max(1);
        let left = self.win.slow_start(w, acked);
        if left > 0 {
            let per = w.cwnd / w.mss.max(1);
            self.win.avoid(w, per, left);
        }
    }

    fn ssthresh(&mut self, w: &CcWindow, _flight: u32, _snd_wnd: u32, ev: LossEvent) -> u32 {
        dctcp_ssthresh(w, &self.alpha, ev)
    }

    fn ect_on_retransmit(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_update_is_linux_integer_ewma() {
        let mut a = DctcpAlpha::new(4, ALPHA_ONE);
        // Window 0: everything up to snd_nxt 10000 with no marks → α = 1024 − 64 = 960.
        assert!(a.on_ack(1000, false, 1000, 10_000));
        assert_eq!(a.alpha, 960);
        for k in 1..=8 {
            assert!(!a.on_ack(1000, k % 2 == 0, 1000 + k * 1000, 20_000));
        }
        // The ACK reaching window_end 10000: 9000 bytes acked, 4000 marked (k = 2, 4, 6, 8):
        // α = 960 − 60 + (4000 << 6)/9000 = 900 + 28.
        assert!(a.on_ack(1000, false, 10_000, 20_000));
        assert_eq!((a.alpha, a.window_end, a.updates), (928, 20_000, 2));
        let mut tiny = DctcpAlpha::new(4, 15);
        tiny.on_ack(1000, false, 1, 2);
        assert_eq!(tiny.alpha, 0, "min_not_zero: below 16 α decays to 0 at once");
    }

    /// A steady 5 % marked fraction: Prague's 20-bit α converges to it from α₀ = 1 and from a
    /// decayed α = 0, where DCTCP's 10-bit rule stays at (5 % << 6) = 3/1024 once α fell
    /// under 16/1024 (Linux DCTCP's own arithmetic, kept for DCTCP).
    #[test]
    fn prague_alpha_tracks_a_small_marked_fraction() {
        // ACKs of 1000 bytes, windows of 20 ACKs (snd_nxt runs 20 ACKs ahead), one of them
        // marked: every window's fraction is 5 %.
        let run = |a: &mut DctcpAlpha| {
            for k in 1..=4000u64 {
                a.on_ack(1000, k % 20 == 0, k * 1000, k * 1000 + 20_000);
            }
        };
        let mut p = DctcpAlpha::prague(4);
        run(&mut p);
        assert!((p.fraction() - 0.05).abs() < 0.02, "from 1: α = {}", p.fraction());
        let mut p0 = DctcpAlpha::prague(4);
        p0.upscaled = 0;
        p0.alpha = 0;
        run(&mut p0);
        assert!((p0.fraction() - 0.05).abs() < 0.02, "from 0: α = {}", p0.fraction());
        let mut d = DctcpAlpha::new(4, 0);
        run(&mut d);
        assert!(d.fraction() < 0.02, "DCTCP's 1024ths below 16 stay pinned: α = {}", d.fraction());
        let w = CcWindow { cwnd: 100_000, ssthresh: 1 << 30, mss: 1000, max_cwnd: u32::MAX };
        assert_eq!(alpha_reduction(&w, 1 << 19, PRAGUE_ALPHA_BITS), 75_000, "α = 1/2 in 2^-20 units");
    }

    #[test]
    fn reductions() {
        let w = CcWindow { cwnd: 100_000, ssthresh: 1 << 30, mss: 1000, max_cwnd: u32::MAX };
        assert_eq!(alpha_reduction(&w, 1024, 10), 50_000, "α = 1 halves");
        assert_eq!(alpha_reduction(&w, 0, 10), 100_000, "α = 0 keeps the window");
        assert_eq!(alpha_reduction(&w, 512, 10), 75_000, "α = 1/2 takes a quarter");
        let mut cc = DctcpCc::new(DctcpParams::DEFAULT);
        assert_eq!(cc.ssthresh(&w, 0, u32::MAX, LossEvent::FastRetransmit), 50_000, "loss halves whatever α is");
        let mut p = DctcpParams::DEFAULT;
        p.set("dctcp", "g", 0.125).unwrap();
        assert_eq!(p.shift_g, 3);
        assert!(p.set("dctcp", "g", 0.1).unwrap_err().contains("power of two"));
    }
}
