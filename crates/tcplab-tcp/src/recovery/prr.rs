//! Proportional Rate Reduction, RFC 6937 (Mathis, Dukkipati, Cheng 2013), PRR-SSRB, on top of
//! RFC 6675 SACK recovery ([`Rfc6675Recovery`] decides *what* to send: IsLost, NextSeg); PRR
//! decides *how much*, whatever congestion control supplied ssthresh. Linux 6.x
//! `tcp_cwnd_reduction` (net/ipv4/tcp_input.c) for the details the RFC leaves open.
//!
//! * Entering recovery (RFC 6937 §3.1 "on entering"): `ssthresh` from the CC, `prr_delivered =
//!   prr_out = 0`, `RecoverFS = snd.nxt − snd.una` (HighData − HighACK at the first loss).
//! * On every ACK in recovery, the one that entered it included: `DeliveredData` = the advance
//!   of snd.una plus the change in SACKed bytes; `prr_delivered += DeliveredData`; with `pipe`
//!   as RFC 6675 `SetPipe`:
//!   - `pipe > ssthresh` (proportional part): `sndcnt = ⌈prr_delivered·ssthresh/RecoverFS⌉ −
//!     prr_out`;
//!   - else (slow-start reduction bound, SSRB): `sndcnt = min(ssthresh − pipe,
//!     max(prr_delivered − prr_out, DeliveredData) + MSS)`;
//!   - `sndcnt = max(sndcnt, 0)`, `cwnd = pipe + sndcnt`.
//! * Every transmission in recovery adds to `prr_out`; the fast retransmission on entering is
//!   sent whatever sndcnt says (Linux "force a fast retransmit upon entering fast recovery").
//! * Leaving recovery (the ACK covering RecoveryPoint): `cwnd = ssthresh` (RFC 6937 §3.1).
//! * A timeout ends the episode (as RFC 6675 §5.1).
//!
//! Deliberate deviation: byte accounting throughout (the RFC's form; Linux counts packets).

use super::rfc6675::Rfc6675Recovery;
use super::{LossRecovery, RecoveryCtx, RecoveryOutcome, SackSend, SendGate};

#[derive(Clone, Debug, Default)]
pub struct PrrRecovery {
    pub inner: Rfc6675Recovery,
    pub prr_delivered: u64,
    pub prr_out: u64,
    pub recover_fs: u64,
    /// The last `sndcnt` (bytes), for tests and traces.
    pub sndcnt: i64,
}

fn gate(ctx: &RecoveryCtx<'_>, snd_una: u64) -> SendGate {
    SendGate { snd_una, snd_nxt: ctx.snd_nxt, snd_max: ctx.snd_max, cwnd: ctx.w.cwnd, mss: ctx.w.mss, snd_wnd: ctx.snd_wnd, send_limit: u64::MAX }
}

impl PrrRecovery {
    fn sacked(&self) -> u64 {
        self.inner.sb.sacked_above(0)
    }

    /// RFC 6937 §3.1 on one ACK: `delivered` bytes; sets cwnd = pipe + sndcnt.
    fn on_delivered(&mut self, ctx: &mut RecoveryCtx<'_>, snd_una: u64, delivered: u64) {
        self.prr_delivered += delivered;
        let pipe = self.inner.pipe(&gate(ctx, snd_una)) as i64;
        let ssthresh = ctx.w.ssthresh as i64;
        let mss = ctx.w.mss as i64;
        let sndcnt = if pipe > ssthresh {
            let fs = self.recover_fs.max(1) as u128;
            let share = (self.prr_delivered as u128 * ssthresh as u128).div_ceil(fs) as i64;
            share - self.prr_out as i64
        } else {
            let limit = (self.prr_delivered as i64 - self.prr_out as i64).max(delivered as i64) + mss;
            (ssthresh - pipe).min(limit)
        };
        self.sndcnt = sndcnt.max(0);
        ctx.w.cwnd = (pipe + self.sndcnt).clamp(0, u32::MAX as i64) as u32;
    }
}

impl LossRecovery for PrrRecovery {
    fn name(&self) -> &'static str {
        "prr"
    }

    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        let before = self.sacked();
        let was = self.inner.in_recovery;
        let out = self.inner.on_dupack(ctx);
        let delivered = self.sacked().saturating_sub(before);
        if out.entered {
            self.prr_delivered = 0;
            self.prr_out = 0;
            self.recover_fs = ctx.snd_max - ctx.snd_una;
        }
        if was || out.entered {
            self.on_delivered(ctx, ctx.snd_una, delivered);
        }
        out
    }

    fn on_ack(&mut self, ctx: &mut RecoveryCtx<'_>, ack: u64) -> RecoveryOutcome {
        let before = self.sacked();
        let was = self.inner.in_recovery;
        let out = self.inner.on_ack(ctx, ack);
        if was && out.exited {
            ctx.w.cwnd = ctx.w.ssthresh;
        } else if was {
            let delivered = (ack - ctx.snd_una + self.sacked()).saturating_sub(before);
            self.on_delivered(ctx, ack, delivered);
        }
        out
    }

    fn on_timeout(&mut self, ctx: &mut RecoveryCtx<'_>) {
        self.inner.on_timeout(ctx);
        self.prr_delivered = 0;
        self.prr_out = 0;
    }

    fn in_recovery(&self) -> bool {
        self.inner.in_recovery()
    }
    fn governs_sending(&self) -> bool {
        self.inner.governs_sending()
    }
    fn next_send(&mut self, g: &SendGate) -> SackSend {
        self.inner.next_send(g)
    }
    fn on_transmit(&mut self, seq: u64, len: u32, retransmit: bool) {
        if self.inner.in_recovery {
            self.prr_out += len as u64;
        }
        self.inner.on_transmit(seq, len, retransmit);
    }
    fn pipe_bytes(&self) -> Option<i64> {
        self.inner.pipe_bytes()
    }
}
