//! RACK loss detection, RFC 8985 (Cheng, Cardwell, Dukkipati, Jha 2021) §6, as a recovery
//! plug-in over the SACK scoreboard; Linux 6.x `net/ipv4/tcp_recovery.c` and `tcp_enter_loss`
//! (tcp_input.c) for what the RFC leaves open. Variants: [`RackRecovery::default`] (window =
//! ssthresh on entering, as RFC 6675) and [`RackRecovery::with_prr`] (RFC 6937 PRR-SSRB sets the
//! window during fast recovery, as Linux runs RACK for *which* segments are lost and PRR for *how
//! much* is sent).
//!
//! * Every transmission records the segment's send time (`xmit_ts`) and whether it was a
//!   retransmission. Each ACK (cumulative or SACK) that newly delivers segments updates
//!   `RACK.xmit_ts / end_seq / rtt` from the most recently *sent* of them (§6.1 step 2; a
//!   retransmission delivered in less than min_RTT is ignored as possibly spurious), and
//!   `RACK.min_RTT` (non-retransmitted samples only, Karn).
//! * Reordering (§6.1 step 3): a never-retransmitted segment delivered below the highest
//!   delivered sequence (`RACK.fack`) sets `reordering_seen`.
//! * Reordering window (§6.2 `RACK_update_reo_wnd`): 0 while no reordering was seen and either
//!   recovery runs or ≥ DupThresh segments are SACKed; else min(reo_wnd_mult · min_RTT/4, SRTT).
//!   D-SACK adaptation: a round with a D-SACK raises `reo_wnd_mult` by one, 16 D-SACK-free
//!   recoveries reset it.
//! * Loss (§6.2 `RACK_detect_loss`): a segment not delivered, sent before RACK.xmit_ts, is lost
//!   once `xmit_ts + RACK.rtt + reo_wnd ≤ now`; otherwise the reorder timer (§6.3) is armed for
//!   the largest remaining time and detection runs again when it fires. Lost retransmissions
//!   are detected the same way (the point of RACK: no RTO needed).
//! * The first segment marked lost starts fast recovery: ssthresh from the CC, RecoveryPoint =
//!   snd_max; the first retransmission goes whatever the window says (Linux forces it). While in
//!   recovery this module decides what is sent: lost segments in sequence order, then new data,
//!   while pipe (un-SACKed, not lost, outstanding bytes; a retransmission counts once) + 1 MSS
//!   ≤ cwnd. The ACK covering RecoveryPoint ends it with cwnd = ssthresh.
//! * RTO (as Linux `tcp_enter_loss`): the scoreboard is kept; every outstanding un-SACKed
//!   segment is marked lost and retransmitted in order from cwnd = 1 MSS in slow start (the
//!   window grows on every ACK), so nothing the receiver holds is sent again; RACK keeps
//!   detecting lost retransmissions; the ACK covering snd_max at the timeout ends the episode.
//!
//! * TLP (§7), simplified: outside recovery, while data is outstanding and the reorder timer is
//!   not armed, the probe timeout PTO = 2·SRTT (RACK's own SRTT of its samples; 1 s before the
//!   first), + WCDelAckT = 200 ms when one segment is in flight, is re-armed on every ACK and
//!   every new transmission; when it fires, the last outstanding un-SACKed segment is sent
//!   again as the probe (its SACK or ACK lets RACK find the earlier tail losses). One probe per
//!   flight: no new PTO until an ACK arrives.
//!
//! Deliberate deviations: the TLP probe is always the last segment, never new data (§7.3
//! prefers a new segment); the PTO is not capped by the RTO (the endpoint's RTO fires anyway if
//! earlier); TLP loss detection (§7.4, a cwnd reduction when the probe repaired a loss) is not
//! done. Time-ordered loss detection walks the outstanding segments in
//! sequence order (O(window) per ACK that finds SACKed data) rather than Linux's time-sorted
//! list. Byte accounting throughout (Linux counts packets). A partially acknowledged segment
//! counts as delivered only when fully acknowledged. Spurious-retransmission undo (Eifel, DSACK
//! undo) is not done.

use std::collections::BTreeMap;

use super::scoreboard::Scoreboard;
use super::{LossRecovery, RecoveryCtx, RecoveryOutcome, SackSend, SendGate};
use crate::cc::LossEvent;
use crate::Nanos;

/// Recoveries without D-SACK before the reordering window multiplier resets (RFC 8985 §6.2).
const REO_WND_PERSIST: u32 = 16;
/// TLP's worst-case delayed-ACK timer (RFC 8985 §7.2 WCDelAckT).
const WC_DEL_ACK_T: Nanos = 200_000_000;
/// The PTO before any RTT sample (RFC 8985 §7.2).
const PTO_NO_SRTT: Nanos = 1_000_000_000;

#[derive(Clone, Copy, Debug)]
struct SentSeg {
    end: u64,
    xmit_ts: Nanos,
    retransmitted: bool,
    lost: bool,
    /// SACKed (delivered) already: its delivery was taken into account.
    sacked: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Episode {
    #[default]
    Open,
    /// Fast recovery started by RACK marking a segment lost.
    Fast,
    /// After a retransmission timeout (Linux CA_Loss).
    Rto,
}

/// PRR (RFC 6937) state for [`RackRecovery::with_prr`].
#[derive(Clone, Copy, Debug, Default)]
struct Prr {
    delivered: u64,
    out: u64,
    recover_fs: u64,
}

#[derive(Clone, Debug, Default)]
pub struct RackRecovery {
    use_prr: bool,
    episode: Episode,
    recovery_point: u64,
    /// Outstanding segments by start offset.
    segs: BTreeMap<u64, SentSeg>,
    pub sb: Scoreboard,
    /// RACK.xmit_ts, RACK.end_seq, RACK.rtt of the most recently sent delivered segment.
    rack_xmit_ts: Option<Nanos>,
    rack_end_seq: u64,
    rack_rtt: Nanos,
    /// RACK.fack: the highest end sequence delivered.
    fack: u64,
    pub min_rtt: Option<Nanos>,
    srtt: Option<Nanos>,
    pub reordering_seen: bool,
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    dsack_round: Option<u64>,
    /// The reorder timer (absolute deadline).
    reo_deadline: Option<Nanos>,
    /// Send the next retransmission whatever the window (the first one of fast recovery).
    force_one: bool,
    prr: Prr,
    dupthresh: u32,
    /// TLP's probe timeout (absolute).
    pto_deadline: Option<Nanos>,
    /// A probe was sent and no ACK has arrived since.
    probe_out: bool,
}

impl RackRecovery {
    /// RACK for loss detection, PRR for the window during fast recovery.
    pub fn with_prr() -> Self {
        RackRecovery { use_prr: true, ..Default::default() }
    }

    /// The reordering window now (RFC 8985 §6.2); public for tests.
    pub fn reo_wnd(&self) -> Nanos {
        let Some(min_rtt) = self.min_rtt else { return 0 };
        if !self.reordering_seen {
            if self.episode != Episode::Open {
                return 0;
            }
            let sacked_segs = self.segs.values().filter(|s| s.sacked).count();
            if sacked_segs >= self.dupthresh.max(1) as usize {
                return 0;
            }
        }
        let w = self.reo_wnd_mult.max(1) as u64 * min_rtt / 4;
        w.min(self.srtt.unwrap_or(w))
    }

    /// Outstanding bytes neither SACKed nor marked lost (a retransmitted segment counts once).
    fn pipe(&self) -> u64 {
        self.segs.iter().filter(|(_, s)| !s.sacked && !s.lost).map(|(a, s)| s.end - a).sum()
    }

    fn first_lost(&self) -> Option<(u64, u64)> {
        self.segs.iter().find(|(_, s)| s.lost && !s.sacked).map(|(a, s)| (*a, s.end))
    }

    /// RFC 8985 §7.2: (re)arm the probe timeout from `now`, or disarm it.
    fn arm_pto(&mut self, now: Nanos) {
        let outstanding = self.segs.values().filter(|s| !s.sacked).count();
        if self.episode != Episode::Open || self.reo_deadline.is_some() || self.probe_out || outstanding == 0 {
            self.pto_deadline = None;
            return;
        }
        let mut pto = self.srtt.map_or(PTO_NO_SRTT, |s| 2 * s);
        if outstanding == 1 {
            pto += WC_DEL_ACK_T;
        }
        self.pto_deadline = Some(now + pto);
    }

    /// One newly delivered segment (§6.1 steps 2–3).
    fn on_delivered_seg(&mut self, now: Nanos, s: &SentSeg) {
        let rtt = now.saturating_sub(s.xmit_ts);
        if s.retransmitted && self.min_rtt.is_some_and(|m| rtt < m) {
            return; // possibly the original's ACK: no sample
        }
        if !s.retransmitted {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.srtt = Some(self.srtt.map_or(rtt, |v| v - v / 8 + rtt / 8));
            if s.end < self.fack {
                self.reordering_seen = true;
            }
        }
        self.fack = self.fack.max(s.end);
        let newer = match self.rack_xmit_ts {
            None => true,
            Some(t) => s.xmit_ts > t || (s.xmit_ts == t && s.end > self.rack_end_seq),
        };
        if newer {
            self.rack_xmit_ts = Some(s.xmit_ts);
            self.rack_end_seq = s.end;
            self.rack_rtt = rtt;
        }
    }

    /// Take an ACK: scoreboard, newly delivered segments, D-SACK rounds. Returns the bytes
    /// newly delivered (cumulative advance plus newly SACKed).
    fn take_ack(&mut self, ctx: &RecoveryCtx<'_>, ack: u64) -> u64 {
        self.dupthresh = ctx.dupack_threshold;
        self.sb.update(ack, ctx.sack);
        let now = ctx.now;
        let mut delivered = 0;
        // Cumulatively acknowledged segments leave the table.
        let acked: Vec<u64> = self.segs.range(..ack).filter(|(_, s)| s.end <= ack).map(|(a, _)| *a).collect();
        for a in acked {
            let s = self.segs.remove(&a).expect("listed above");
            if !s.sacked {
                delivered += s.end - a;
                self.on_delivered_seg(now, &s);
            }
        }
        for &(a, b) in ctx.sack {
            let newly: Vec<u64> = self.segs.range(a..b).filter(|(_, s)| s.end <= b && !s.sacked).map(|(k, _)| *k).collect();
            for k in newly {
                let s = self.segs.get_mut(&k).expect("listed above");
                s.sacked = true;
                s.lost = false;
                let s = *s;
                delivered += s.end - k;
                self.on_delivered_seg(now, &s);
            }
        }
        // D-SACK (RFC 2883 §4): the first block below the ACK or inside the second.
        let dsack = ctx.sack.first().is_some_and(|&(a, b)| b <= ack || ctx.sack.get(1).is_some_and(|&(c, d)| c <= a && b <= d));
        if self.dsack_round.is_some_and(|r| ack >= r) {
            self.dsack_round = None;
        }
        if dsack && self.dsack_round.is_none() {
            self.dsack_round = Some(ctx.snd_max);
            self.reo_wnd_mult = self.reo_wnd_mult.max(1) + 1;
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
        delivered
    }

    /// RFC 8985 §6.2 `RACK_detect_loss` and §6.3 timer arming. Returns the bytes newly marked
    /// lost (0: none).
    fn detect_loss(&mut self, now: Nanos) -> u64 {
        self.reo_deadline = None;
        let Some(rack_ts) = self.rack_xmit_ts else { return 0 };
        let reo_wnd = self.reo_wnd();
        let (rack_end, rack_rtt) = (self.rack_end_seq, self.rack_rtt);
        let mut newly_lost = 0;
        let mut wait: Nanos = 0;
        for (&start, s) in self.segs.iter_mut() {
            if s.sacked || s.lost {
                continue;
            }
            let sent_before = s.xmit_ts < rack_ts || (s.xmit_ts == rack_ts && s.end < rack_end);
            if !sent_before {
                continue;
            }
            let due = s.xmit_ts + rack_rtt + reo_wnd;
            if due <= now {
                s.lost = true;
                newly_lost += s.end - start;
            } else {
                wait = wait.max(due - now);
            }
        }
        if wait > 0 {
            self.reo_deadline = Some(now + wait);
        }
        newly_lost
    }

    fn enter_fast_recovery(&mut self, ctx: &mut RecoveryCtx<'_>, snd_una: u64) -> RecoveryOutcome {
        self.episode = Episode::Fast;
        self.recovery_point = ctx.snd_max;
        ctx.w.ssthresh = ctx.new_ssthresh(LossEvent::FastRetransmit);
        ctx.w.cwnd = ctx.w.ssthresh;
        self.force_one = true;
        self.prr = Prr { delivered: 0, out: 0, recover_fs: ctx.snd_max - snd_una };
        ctx.cc.on_recovery(ctx.w, true);
        RecoveryOutcome { restart_timer: true, fast_retransmit: true, entered: true, ..Default::default() }
    }

    /// RFC 6937 §3.1 on one ACK of fast recovery: cwnd = pipe + sndcnt.
    fn prr_on_ack(&mut self, ctx: &mut RecoveryCtx<'_>, delivered: u64) {
        self.prr.delivered += delivered;
        let pipe = self.pipe() as i64;
        let ssthresh = ctx.w.ssthresh as i64;
        let sndcnt = if pipe > ssthresh {
            let fs = self.prr.recover_fs.max(1) as u128;
            (self.prr.delivered as u128 * ssthresh as u128).div_ceil(fs) as i64 - self.prr.out as i64
        } else {
            let limit = (self.prr.delivered as i64 - self.prr.out as i64).max(delivered as i64) + ctx.w.mss as i64;
            (ssthresh - pipe).min(limit)
        };
        ctx.w.cwnd = (pipe + sndcnt.max(0)).clamp(0, u32::MAX as i64) as u32;
    }

    /// One ACK (advancing or duplicate), then the probe timeout re-armed.
    fn process(&mut self, ctx: &mut RecoveryCtx<'_>, ack: u64) -> RecoveryOutcome {
        self.probe_out = false;
        let out = self.process_ack(ctx, ack);
        self.arm_pto(ctx.now);
        out
    }

    /// Delivery, episode end, loss detection, recovery entry.
    fn process_ack(&mut self, ctx: &mut RecoveryCtx<'_>, ack: u64) -> RecoveryOutcome {
        let delivered = self.take_ack(ctx, ack);
        let mut out = RecoveryOutcome::default();
        if self.episode != Episode::Open && ack >= self.recovery_point {
            let was = self.episode;
            self.episode = Episode::Open;
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
            for s in self.segs.values_mut() {
                s.lost = false;
            }
            if was == Episode::Fast {
                ctx.w.cwnd = ctx.w.ssthresh;
                ctx.cc.on_recovery(ctx.w, false);
                return RecoveryOutcome { exited: true, ..Default::default() };
            }
            out.exited = true;
        }
        let lost = if delivered > 0 { self.detect_loss(ctx.now) } else { 0 };
        if lost > 0 {
            ctx.cc.on_marked_lost(lost);
        }
        if lost > 0 && self.episode == Episode::Open {
            let o = self.enter_fast_recovery(ctx, ack);
            if self.use_prr {
                self.prr_on_ack(ctx, delivered);
            }
            return o;
        }
        match self.episode {
            Episode::Open => out.allow_growth = ack > ctx.snd_una,
            // Slow start after the RTO, as Linux's CA_Loss.
            Episode::Rto => out.allow_growth = ack > ctx.snd_una,
            Episode::Fast => {
                if self.use_prr {
                    self.prr_on_ack(ctx, delivered);
                }
            }
        }
        out
    }
}

impl LossRecovery for RackRecovery {
    fn name(&self) -> &'static str {
        if self.use_prr {
            "rack-prr"
        } else {
            "rack"
        }
    }
    fn on_dupack(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        let una = ctx.snd_una;
        let mut out = self.process(ctx, una);
        out.allow_growth = false;
        out
    }
    fn on_ack(&mut self, ctx: &mut RecoveryCtx<'_>, ack: u64) -> RecoveryOutcome {
        self.process(ctx, ack)
    }
    fn on_timeout(&mut self, ctx: &mut RecoveryCtx<'_>) {
        // Linux tcp_enter_loss: keep the SACKed marks, everything else outstanding is lost.
        self.episode = Episode::Rto;
        self.recovery_point = ctx.snd_max;
        self.reo_deadline = None;
        self.pto_deadline = None;
        self.force_one = false;
        for s in self.segs.values_mut() {
            if !s.sacked {
                s.lost = true;
            }
        }
    }
    fn in_recovery(&self) -> bool {
        self.episode != Episode::Open
    }
    fn governs_sending(&self) -> bool {
        self.episode != Episode::Open
    }
    fn next_send(&mut self, g: &SendGate) -> SackSend {
        let pipe = self.pipe();
        if !self.force_one && (g.cwnd as u64) < pipe + g.mss as u64 {
            return SackSend::Blocked;
        }
        if let Some((seq, end)) = self.first_lost() {
            return SackSend::Retransmit { seq, len: (end - seq).min(g.mss as u64) as u32 };
        }
        // After an RTO snd_nxt was pulled back to snd_una; everything below the highest
        // segment sent is SACKed or in flight again, so new data (or a FIN) goes from there.
        let tracked_end = self.segs.values().map(|s| s.end).max().unwrap_or(g.snd_una);
        SackSend::NewDataFrom(tracked_end.max(g.snd_nxt))
    }
    fn on_transmit_at(&mut self, now: Nanos, seq: u64, len: u32, retransmit: bool) {
        let end = seq + len as u64;
        if self.episode != Episode::Open {
            self.force_one = false;
            self.prr.out += len as u64;
        }
        // Replace whatever overlaps [seq, end) (a resend may cut the data differently).
        if let Some((&a, s)) = self.segs.range(..seq).next_back() {
            if s.end > seq {
                let mut head = *s;
                let tail_end = head.end;
                head.end = seq;
                self.segs.insert(a, head);
                if tail_end > end {
                    self.segs.insert(end, SentSeg { end: tail_end, ..head });
                }
            }
        }
        let inside: Vec<u64> = self.segs.range(seq..end).map(|(a, _)| *a).collect();
        for a in inside {
            let s = self.segs.remove(&a).expect("listed above");
            if s.end > end {
                self.segs.insert(end, s);
            }
        }
        self.segs.insert(seq, SentSeg { end, xmit_ts: now, retransmitted: retransmit, lost: false, sacked: false });
        if !retransmit {
            self.arm_pto(now);
        }
    }
    fn next_timer(&self) -> Option<Nanos> {
        match (self.reo_deadline, self.pto_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn on_timer(&mut self, ctx: &mut RecoveryCtx<'_>) -> RecoveryOutcome {
        let now = ctx.now;
        if self.reo_deadline.is_some_and(|d| d <= now) {
            // Marked from the timer: not an ACK's `rs->losses` (Linux counts `tp->lost` over
            // the ACK's processing only).
            let newly_lost = self.detect_loss(now) > 0;
            if newly_lost && self.episode == Episode::Open {
                self.pto_deadline = None;
                let una = ctx.snd_una;
                return self.enter_fast_recovery(ctx, una);
            }
            self.arm_pto(now);
            return RecoveryOutcome::default();
        }
        if self.pto_deadline.is_some_and(|d| d <= now) {
            // TLP (§7.3): probe with the last outstanding segment; one probe per flight.
            self.pto_deadline = None;
            let last = self.segs.iter().rev().find(|(_, s)| !s.sacked).map(|(a, _)| *a);
            if let (Some(seq), Episode::Open) = (last, self.episode) {
                self.probe_out = true;
                return RecoveryOutcome { retransmit: Some(seq), ..Default::default() };
            }
        }
        RecoveryOutcome::default()
    }
    fn pipe_bytes(&self) -> Option<i64> {
        self.in_recovery().then(|| self.pipe() as i64)
    }
    fn lost_unretransmitted(&self) -> bool {
        self.first_lost().is_some()
    }
    fn sacked_ranges(&self, snd_una: u64) -> (u64, u64) {
        (self.sb.sacked_above(snd_una), self.sb.blocks_above(snd_una) as u64)
    }
    fn pipe_now(&self, _g: &SendGate) -> Option<u64> {
        self.in_recovery().then(|| self.pipe())
    }
    fn linux_in_flight(&self) -> Option<u64> {
        Some(self.pipe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CcWindow, CongestionControl};
    use crate::MS;

    /// Records what loss detection reports to the CC.
    #[derive(Debug, Default)]
    struct Lost(Vec<u64>);
    impl CongestionControl for Lost {
        fn name(&self) -> &'static str {
            "lost"
        }
        fn on_marked_lost(&mut self, bytes: u64) {
            self.0.push(bytes);
        }
    }

    #[test]
    fn the_bytes_an_ack_marks_lost_are_reported_to_the_cc() {
        // Six 1000-byte segments sent 1 ms apart from 0; at 100 ms a duplicate ACK SACKs the
        // last three: RACK.rtt = 95 ms (segment 5, sent at 5 ms), three SACKed = DupThresh so
        // reo_wnd = 0, and segments 0–2 (sent at 0–2 ms, due by 97 ms) are lost: 3000 bytes,
        // reported once; the next ACK marks nothing new and reports nothing.
        let mut r = RackRecovery::default();
        for k in 0..6u64 {
            r.on_transmit_at(k * MS, k * 1000, 1000, false);
        }
        let mut w = CcWindow { cwnd: 10_000, ssthresh: u32::MAX, mss: 1000, max_cwnd: u32::MAX };
        let mut cc = Lost::default();
        let sack = [(3000u64, 6000u64)];
        for (i, now) in [100 * MS, 101 * MS].into_iter().enumerate() {
            let mut ctx = RecoveryCtx { now, w: &mut w, cc: &mut cc, snd_una: 0, snd_nxt: 6000, snd_max: 6000, snd_wnd: 65535, dupacks: 3 + i as u32, dupack_threshold: 3, sack: &sack };
            r.on_dupack(&mut ctx);
        }
        assert_eq!(cc.0, [3000]);
        assert!(r.in_recovery());
    }
}
