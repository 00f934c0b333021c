//! Explicit Congestion Notification in TCP (RFC 3168 §6.1), the endpoint's ECN seam.
//!
//! * Negotiation (§6.1.1): the SYN carries ECE and CWR, a SYN-ACK that agrees carries ECE only;
//!   ECN is used when both sides enabled it (`EndpointConfig::ecn`).
//! * Sender: new data segments carry ECT (§6.1.2; retransmissions and pure ACKs do not, §6.1.5,
//!   §6.1.4). An ACK with ECE halves the window once per window of data, as ns-2's ECN-TCP
//!   (`TcpAgent::ecn`: react only if the ACK is beyond `recover_`, then `recover_ = maxseq_`,
//!   `slowdown(CLOSE_CWND_HALF | CLOSE_SSTHRESH_HALF)`, and set CWR on the next new packet):
//!   ssthresh from the congestion control's loss rule (4.4BSD halving of min(cwnd, snd_wnd),
//!   at least 2 segments), cwnd = ssthresh, no window growth on that ACK (§6.1.2: "SHOULD NOT
//!   increase the congestion window in response to" it). No reaction during loss recovery, and a
//!   loss reduction also counts as this window's reduction (the shared `recover_` of ns-2).
//! * Receiver: a CE-marked data segment sets ECE on every ACK until a segment with CWR arrives
//!   (§6.1.3); a CWR clears it before a CE on the same segment sets it again.
//!
//! * Per-segment feedback (seed 003 §3.3 and fn. 14, Kelly's scalable TCP; `per_segment`): the
//!   receiver, which ACKs every segment, sets ECE on an ACK exactly when the segment that
//!   triggered it was CE-marked; the sender neither halves nor sets CWR — each ACK's ECE is the
//!   congestion control's per-packet signal (`AckSample::ece`).
//!
//! * DCTCP echo (RFC 8257 §3.2, Linux `dctcp_ece_ack_update`; `dctcp_echo`): the receiver keeps
//!   one bit, the CE state of the last data segment; every ACK carries ECE = that state (CWR is
//!   ignored). When a data segment's CE differs from the state and an ACK is owed for data
//!   already received (a delayed ACK pending), that ACK leaves at once with the *old* state
//!   before the new segment is taken in (Figure 1: "send immediate ACK with ECE = 0/1"), so with
//!   delayed ACKs the sender still sees exactly which bytes were marked.
//!
//! * L4S (`l4s`, TCP Prague): data carries ECT(1) instead of ECT(0) (RFC 9331 §4.1).
//!
//! Deliberate deviations: the ECN nonce is not modelled; a CE on a pure ACK is
//! ignored (pure ACKs are never ECT).

use crate::{Flags, Segment};

#[derive(Clone, Copy, Debug, Default)]
pub struct EcnState {
    /// Negotiated in the handshake.
    pub ok: bool,
    /// Per-segment echo instead of RFC 3168's echo-until-CWR (seed 003).
    pub per_segment: bool,
    /// DCTCP's echo state machine (RFC 8257 §3.2) instead of RFC 3168's.
    pub dctcp_echo: bool,
    /// DCTCP receiver: CE of the last data segment (RFC 8257 `DCTCP.CE`).
    pub ce_state: bool,
    /// Sender: mark data ECT(1) (L4S, RFC 9331) instead of ECT(0).
    pub l4s: bool,
    /// Receiver: echo ECE until CWR.
    pub echo_ece: bool,
    /// Sender: put CWR on the next new data segment.
    pub cwr_pending: bool,
    /// Sender: no new reaction until an ACK covers this (64-bit offset; ns-2 `recover_`).
    pub recover: u64,
    pub ce_received: u64,
    pub ece_acks: u64,
    pub reactions: u64,
}

impl EcnState {
    /// Flags for our SYN (active open) or SYN-ACK.
    pub fn syn_flags(enabled: bool, synack: bool, ok: bool) -> Flags {
        match (enabled, synack) {
            (false, _) => Flags::NONE,
            (true, false) => Flags::ECE | Flags::CWR,
            (true, true) if ok => Flags::ECE,
            (true, true) => Flags::NONE,
        }
    }

    /// Adopt the peer's SYN (`seg` is a SYN or a SYN-ACK).
    pub fn on_syn(&mut self, enabled: bool, seg: &Segment) {
        let ece = seg.flags.contains(Flags::ECE);
        let cwr = seg.flags.contains(Flags::CWR);
        self.ok = enabled && if seg.flags.ack() { ece && !cwr } else { ece && cwr };
    }

    /// Receiver side of an arriving segment in a synchronized state. Returns true when DCTCP's
    /// state machine wants the ACK owed for earlier data sent now, with the old ECE, before
    /// this segment is taken in.
    pub fn on_segment(&mut self, seg: &Segment) -> bool {
        if !self.ok {
            return false;
        }
        if self.dctcp_echo {
            if seg.len == 0 {
                return false;
            }
            self.ce_received += seg.ce as u64;
            let changed = seg.ce != self.ce_state;
            return changed;
        }
        if self.per_segment {
            if seg.len > 0 {
                self.echo_ece = seg.ce;
                self.ce_received += seg.ce as u64;
            }
            return false;
        }
        if seg.flags.contains(Flags::CWR) {
            self.echo_ece = false;
        }
        if seg.ce && seg.len > 0 {
            self.ce_received += 1;
            self.echo_ece = true;
        }
        false
    }

    /// DCTCP receiver: adopt the arriving data segment's CE as the state (after any immediate
    /// ACK with the old one has been built).
    pub fn take_ce_state(&mut self, seg: &Segment) {
        if self.ok && self.dctcp_echo && seg.len > 0 {
            self.ce_state = seg.ce;
            self.echo_ece = seg.ce;
        }
    }

    /// Sender side: an ACK with ECE acknowledging up to `ack`. Returns true if the window must
    /// be reduced now.
    pub fn on_ece(&mut self, ack: u64, snd_max: u64, in_recovery: bool) -> bool {
        if !self.ok {
            return false;
        }
        self.ece_acks += 1;
        if self.per_segment {
            return false;
        }
        if in_recovery || ack <= self.recover {
            return false;
        }
        self.recover = snd_max;
        self.cwr_pending = true;
        self.reactions += 1;
        true
    }

    /// A loss reduction happened (fast retransmit or timeout): it stands for this window's
    /// congestion response.
    pub fn on_loss_reduction(&mut self, snd_max: u64) {
        self.recover = self.recover.max(snd_max);
    }

    /// Decorate an outgoing segment: ECE on everything the receiver sends while echoing; ECT
    /// and a pending CWR on new data.
    pub fn decorate(&mut self, seg: &mut Segment, new_data: bool) {
        if !self.ok {
            return;
        }
        if self.echo_ece {
            seg.flags |= Flags::ECE;
        }
        if new_data {
            seg.ect = true;
            seg.ect1 = self.l4s;
            if self.cwr_pending {
                seg.flags |= Flags::CWR;
                self.cwr_pending = false;
            }
        }
    }
}
