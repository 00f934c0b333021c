//! Delivery-rate estimation, draft-cheng-iccrg-delivery-rate-estimation-02 (Linux
//! net/ipv4/tcp_rate.c): every transmitted segment is stamped with the connection's `delivered`,
//! `delivered_time` and `first_sent_time`; when it is acknowledged the rate sample is
//! `(delivered − P.delivered) / max(send interval, ACK interval)` over the most recently sent of
//! the segments this ACK delivers (draft §3.3; "max" so ACK compression cannot inflate it).
//!
//! Bytes, not packets. SACKed segments count as delivered when a SACK block first reports them
//! ([`DeliveryRate::on_sacked`], as Linux `tcp_rate_skb_delivered`), cumulatively ACKed ones on
//! the ACK. (Counting SACKed data only when the cumulative ACK covered it inflated the sample
//! that ended each recovery: the bytes received during the whole episode landed on a
//! retransmission stamped one round earlier — BBR's bandwidth estimate reached 2–3× the
//! bottleneck after a few recoveries.) Deliberate deviations:
//! * samples are taken on ACKs that advance snd_una and, for BBR v1, on duplicate ACKs that
//!   newly SACK data (`CongestionControl::on_sack_ack`, as Linux on every ACK); otherwise a
//!   SACK-only ACK adds its deliveries to the next sample, whose segment is the most recently
//!   sent of all delivered since the last (BBR v3);
//! * a sample whose interval is shorter than the minimum RTT is discarded, as Linux does
//!   (`interval_us < tcp_min_rtt(tp)`); the minimum RTT is the caller's;
//! * app-limited marking (draft §3.4) happens when the endpoint reports that it had less than
//!   a segment to send with room in the window (`CongestionControl::on_app_limited`).

use std::collections::VecDeque;

use crate::Nanos;

/// Per-segment state stamped at transmission (draft §3.2 "P.delivered", ...).
#[derive(Clone, Copy, Debug)]
struct SentRecord {
    seq: u64,
    end: u64,
    delivered: u64,
    delivered_time: Nanos,
    first_sent_time: Nanos,
    sent_time: Nanos,
    app_limited: bool,
    /// `C.lost` and `C.delivered_ce` when sent, and the bytes in flight just after it left
    /// (BBR v3's `tx.lost`, `tx.delivered_ce`, `tx.in_flight`).
    lost: u64,
    delivered_ce: u64,
    tx_in_flight: u64,
    /// Already counted as delivered by a SACK.
    sacked: bool,
    /// Some of its bytes were sent more than once (Linux `TCPCB_EVER_RETRANS`, part of
    /// `TCPCB_RETRANS`): its SACK gives no RTT (Karn).
    retransmitted: bool,
}

/// One rate sample (draft §3.3 "rs").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over the interval.
    pub delivered: u64,
    /// The interval, ns (max of send and ACK intervals).
    pub interval: Nanos,
    /// `C.delivered` when the sampled segment was sent (BBR's round counting).
    pub prior_delivered: u64,
    /// The sampled segment was sent while the sender was application-limited.
    pub app_limited: bool,
    /// Bytes in flight before this ACK.
    pub prior_in_flight: u64,
    /// Bytes marked lost (retransmitted) since the sampled segment was sent (BBR v3 `rs.lost`).
    pub lost: u64,
    /// Bytes in flight when the sampled segment was sent, itself included (`rs.tx_in_flight`).
    pub tx_in_flight: u64,
    /// Bytes delivered with an ECN echo over the interval (`rs.delivered_ce`).
    pub delivered_ce: u64,
}

impl RateSample {
    /// Delivery rate in bytes per second (0 for an empty interval).
    pub fn rate(&self) -> u64 {
        if self.interval == 0 {
            return 0;
        }
        ((self.delivered as u128 * 1_000_000_000u128) / self.interval as u128) as u64
    }
}

/// The connection-wide counters and the in-flight records.
#[derive(Clone, Debug, Default)]
pub struct DeliveryRate {
    /// C.delivered: data bytes delivered so far.
    pub delivered: u64,
    /// C.delivered_time: when `delivered` last grew.
    pub delivered_time: Nanos,
    /// C.first_sent_time: send time of the most recently delivered segment.
    first_sent_time: Nanos,
    /// C.app_limited: 0, or the `delivered` value that ends the app-limited phase.
    app_limited: u64,
    /// Sent, not yet cumulatively acknowledged, in sequence order.
    inflight: VecDeque<SentRecord>,
    snd_una: u64,
    snd_max: u64,
    /// C.lost: bytes the sender has retransmitted (each retransmission = a segment deemed lost;
    /// BBR v3 only, through [`DeliveryRate::on_lost`]).
    pub lost: u64,
    /// C.delivered_ce: bytes delivered by ACKs that carried an ECN echo ([`DeliveryRate::on_ce`]).
    pub delivered_ce: u64,
    /// The most recently sent record SACKed since the last sample (it competes for the next one).
    sacked_newest: Option<SentRecord>,
    /// Of the never-retransmitted records newly SACKed at one time, the highest in sequence
    /// order: (that time, its seq, its send time) — Linux `tcp_sacktag_one`'s `last_sackt`
    /// (the SACK blocks are walked in sequence order), for [`DeliveryRate::take_sack_rtt`].
    last_sackt: Option<(Nanos, u64, Nanos)>,
    /// The endpoint's last report of the data in flight as Linux counts it, with `snd_max` then
    /// ([`DeliveryRate::set_pipe`]); and its report at the start of the ACK being processed.
    pipe: Option<(u64, u64)>,
    prior_pipe: Option<(u64, u64)>,
    /// The reported `prior_in_flight` of the last ACK ([`DeliveryRate::reported_prior`]).
    last_prior: Option<u64>,
}

impl DeliveryRate {
    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.snd_max.saturating_sub(self.snd_una)
    }

    /// The data in flight as Linux's `tcp_packets_in_flight` counts it (packets_out − sacked_out
    /// − lost_out + retrans_out), in bytes: the endpoint's last report ([`DeliveryRate::set_pipe`])
    /// plus what was sent above its `snd_max` since; without a report (a recovery that keeps no
    /// scoreboard), [`DeliveryRate::in_flight`].
    pub fn pipe(&self) -> u64 {
        self.pipe.map_or(self.in_flight(), |(p, at)| p + self.snd_max.saturating_sub(at))
    }

    /// The endpoint's scoreboard reports `pipe` bytes in flight now (after this ACK's SACK and
    /// loss marks), or, with `prior`, at the start of the ACK (Linux `prior_in_flight`).
    pub fn set_pipe(&mut self, pipe: u64, prior: bool) {
        let v = Some((pipe, self.snd_max));
        if prior {
            self.prior_pipe = v;
        } else {
            self.pipe = v;
        }
    }

    /// The last ACK's `prior_in_flight` as the endpoint reported it (None without a report).
    pub fn reported_prior(&self) -> Option<u64> {
        self.last_prior
    }

    /// The sender had nothing (or less than a segment) to send with room in the window (draft
    /// §3.4): the samples of segments sent from now until this much is delivered are app-limited
    /// (Linux counts `tcp_packets_in_flight`, [`DeliveryRate::pipe`]).
    pub fn mark_app_limited(&mut self) {
        self.app_limited = (self.delivered + self.pipe()).max(1);
    }

    /// As [`DeliveryRate::mark_app_limited`] with `in_flight` bytes counted as in flight
    /// (Linux `tp->app_limited = (tp->delivered + tcp_packets_in_flight(tp)) ?: 1`).
    pub fn mark_app_limited_with(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// One past the highest data byte sent.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }

    /// `bytes` were deemed lost (the sender retransmits them).
    pub fn on_lost(&mut self, bytes: u64) {
        self.lost += bytes;
    }

    /// `bytes` were delivered by an ACK with an ECN echo.
    pub fn on_ce(&mut self, bytes: u64) {
        self.delivered_ce += bytes;
    }

    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// A segment `[seq, seq+len)` (data offsets) left at `now` (draft §3.2 "on send").
    pub fn on_send(&mut self, now: Nanos, seq: u64, len: u32) {
        if len == 0 {
            return;
        }
        if self.in_flight() == 0 {
            // Nothing in flight: start a new sending phase (draft §3.2).
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let rec = SentRecord {
            seq,
            end: seq + len as u64,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            app_limited: self.app_limited != 0,
            lost: self.lost,
            delivered_ce: self.delivered_ce,
            tx_in_flight: self.snd_max.max(seq + len as u64).saturating_sub(self.snd_una),
            sacked: false,
            retransmitted: false,
        };
        self.snd_max = self.snd_max.max(rec.end);
        // A retransmission is re-stamped in place (Linux `tcp_rate_skb_sent` on every send).
        match self.inflight.binary_search_by(|r| r.seq.cmp(&seq)) {
            Ok(i) => self.inflight[i] = SentRecord { sacked: self.inflight[i].sacked, retransmitted: self.inflight[i].retransmitted, ..rec },
            Err(i) => self.inflight.insert(i, rec),
        }
    }

    /// `[seq, end)` was just sent again: every record holding any of it is marked retransmitted
    /// (Linux sets `TCPCB_EVER_RETRANS` on the skb it retransmits, and a resent range cut
    /// differently from the first transmission still covers the original's bytes). Call after
    /// [`DeliveryRate::on_send`] of the retransmission, which re-stamped or inserted its record.
    pub fn mark_retransmitted(&mut self, seq: u64, end: u64) {
        let mut i = self.inflight.partition_point(|r| r.seq < seq);
        // A record starting below `seq` may reach into the range.
        while i > 0 && self.inflight[i - 1].end > seq {
            i -= 1;
        }
        while i < self.inflight.len() && self.inflight[i].seq < end {
            if self.inflight[i].end > seq {
                self.inflight[i].retransmitted = true;
            }
            i += 1;
        }
    }

    /// A SACK block `[start, end)` (data offsets) arrived at `now`: the records wholly inside it
    /// are delivered now (Linux `tcp_rate_skb_delivered` on a SACKed skb), not when the
    /// cumulative ACK later covers them.
    pub fn on_sacked(&mut self, now: Nanos, start: u64, end: u64) {
        let first = self.inflight.partition_point(|r| r.seq < start);
        for i in first..self.inflight.len() {
            let r = &mut self.inflight[i];
            if r.end > end {
                break;
            }
            if r.sacked {
                continue;
            }
            r.sacked = true;
            let r = *r;
            self.delivered += r.end - r.seq;
            self.delivered_time = now;
            if !r.retransmitted && self.last_sackt.is_none_or(|(at, s, _)| at != now || r.seq > s) {
                self.last_sackt = Some((now, r.seq, r.sent_time));
            }
            if self.sacked_newest.is_none_or(|n| r.sent_time >= n.sent_time) {
                self.sacked_newest = Some(r);
                // Later sends measure their send interval from here (Linux `first_tx_mstamp`).
                self.first_sent_time = self.first_sent_time.max(r.sent_time);
            }
        }
    }

    /// The RTT a SACK at `now` measured (Linux `ca_rtt_us` = now − `last_sackt`, which
    /// `tcp_ack_update_rtt` hands BBR as `rs->rtt_us`, preferred to the cumulative ACK's): from
    /// the highest record newly SACKed at `now` that was never retransmitted; none when the ACK
    /// SACKed nothing new or only retransmitted data. Taken once.
    pub fn take_sack_rtt(&mut self, now: Nanos) -> Option<Nanos> {
        self.last_sackt.take().filter(|&(at, _, _)| at == now).map(|(_, _, sent)| now.saturating_sub(sent))
    }

    /// The cumulative ACK moved to `snd_una` at `now`, acknowledging `acked` new data bytes.
    /// Returns the rate sample, or `None` when no valid sample can be taken (draft §3.3).
    pub fn on_ack(&mut self, now: Nanos, snd_una: u64, acked: u64, min_rtt: Option<Nanos>) -> Option<RateSample> {
        self.last_prior = self.prior_pipe.take().map(|(p, at)| p + self.snd_max.saturating_sub(at));
        let prior_in_flight = self.last_prior.unwrap_or(self.in_flight());
        self.snd_una = self.snd_una.max(snd_una);
        let mut newly = acked;
        // The most recently *sent* record among those delivered since the last sample (by this
        // ACK, or SACKed since) carries the sample.
        let mut newest: Option<SentRecord> = self.sacked_newest.take();
        while self.inflight.front().is_some_and(|r| r.end <= snd_una) {
            let r = self.inflight.pop_front().unwrap();
            if r.sacked {
                // Counted when SACKed.
                newly = newly.saturating_sub(r.end - r.seq);
            }
            if newest.is_none_or(|n| r.sent_time >= n.sent_time) {
                newest = Some(r);
            }
        }
        self.delivered += newly;
        self.delivered_time = now;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let p = newest?;
        // Later samples measure their send interval from this segment's send time.
        self.first_sent_time = p.sent_time;
        let send_interval = p.sent_time.saturating_sub(p.first_sent_time);
        let ack_interval = now.saturating_sub(p.delivered_time);
        let interval = send_interval.max(ack_interval);
        if interval == 0 || min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        Some(RateSample {
            delivered: self.delivered - p.delivered,
            interval,
            prior_delivered: p.delivered,
            app_limited: p.app_limited,
            prior_in_flight,
            lost: self.lost - p.lost,
            tx_in_flight: p.tx_in_flight,
            delivered_ce: self.delivered_ce - p.delivered_ce,
        })
    }

    /// The records a timeout marks lost (not SACKed), in sequence order: their length,
    /// `tx.in_flight`, `tx.lost` and app-limited mark (BBR v3's `bbr_skb_marked_lost` reads these).
    pub fn unsacked(&self) -> impl Iterator<Item = (u64, u64, u64, bool)> + '_ {
        self.inflight.iter().filter(|r| !r.sacked).map(|r| (r.end - r.seq, r.tx_in_flight, r.lost, r.app_limited))
    }

    /// A retransmission timeout: the records stay (their retransmissions re-stamp them).
    pub fn on_timeout(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Nanos = 1_000_000;

    #[test]
    fn a_paced_stream_samples_the_sending_rate() {
        // One 1000-byte segment per ms, each acknowledged 50 ms after it left: 1 MB/s.
        let mut d = DeliveryRate::default();
        let mut last = None;
        for t in 0..150u64 {
            if t >= 50 {
                let k = t - 50;
                if let Some(s) = d.on_ack(t * MS, (k + 1) * 1000, 1000, Some(50 * MS)) {
                    last = Some(s);
                }
            }
            if t < 100 {
                d.on_send(t * MS, t * 1000, 1000);
            }
        }
        let s = last.expect("samples once the interval reaches min_rtt");
        // The last sample: the segment sent at 99 ms was stamped with delivered = 50 000 (the
        // ACK of segment 49 at 99 ms); its ACK at 149 ms makes 50 000 bytes over
        // max(99 − 49, 149 − 99) ms = 50 ms → 1 MB/s.
        assert_eq!(s.rate(), 1_000_000);
        assert_eq!(s.interval, 50 * MS);
        assert!(!s.app_limited);
    }

    #[test]
    fn the_ack_interval_bounds_a_compressed_ack_burst() {
        // Ten segments sent 1 ms apart, all ACKed at once 100 ms later: the send interval is 9 ms
        // but the delivery took 100 ms since the first send; the sample uses the longer interval.
        let mut d = DeliveryRate::default();
        for k in 0..10u64 {
            d.on_send(k * MS, k * 1000, 1000);
        }
        let s = d.on_ack(100 * MS, 10_000, 10_000, None).unwrap();
        assert_eq!((s.delivered, s.interval), (10_000, 100 * MS));
        assert_eq!(s.prior_in_flight, 10_000);
    }

    #[test]
    fn app_limited_marks_samples_until_the_marked_bytes_are_delivered() {
        let mut d = DeliveryRate::default();
        d.on_send(0, 0, 1000);
        d.mark_app_limited(); // 1000 in flight: app-limited until delivered > 1000
        d.on_send(MS, 1000, 1000);
        let s1 = d.on_ack(20 * MS, 1000, 1000, None).unwrap();
        assert!(!s1.app_limited, "sent before the mark");
        assert!(d.is_app_limited(), "delivered (1000) has not passed the mark (1000)");
        let s2 = d.on_ack(21 * MS, 2000, 1000, None).unwrap();
        assert!(s2.app_limited, "sent after the mark");
        assert!(!d.is_app_limited(), "the phase ends once the marked bytes are delivered");
    }

    #[test]
    fn sacked_data_is_delivered_when_sacked_so_the_sample_ending_a_recovery_is_not_inflated() {
        // 20 segments, 1 ms apart, from t = 0; segment 0 is lost. Segments 1..20 arrive and are
        // SACKed 50 ms after they left (t = 51..69 ms); the retransmission of 0 leaves at 70 ms
        // and its ACK at 120 ms covers everything.
        let mut d = DeliveryRate::default();
        for k in 0..20u64 {
            d.on_send(k * MS, k * 1000, 1000);
        }
        for k in 1..20u64 {
            d.on_sacked((50 + k) * MS, 1000, (k + 1) * 1000);
        }
        assert_eq!(d.delivered, 19_000, "SACKed bytes counted when SACKed, once");
        d.on_send(70 * MS, 0, 1000);
        let s = d.on_ack(120 * MS, 20_000, 20_000, Some(40 * MS)).unwrap();
        assert_eq!(d.delivered, 20_000, "the cumulative ACK adds only the retransmission");
        // The retransmission (sent last) carries the sample: 1000 bytes over 120 − 69 ms.
        assert_eq!((s.delivered, s.interval), (1000, 51 * MS));
        assert!(s.rate() < 1_000_000 / 19, "not the 20 000 bytes of the episode: {}", s.rate());
    }

    #[test]
    fn intervals_shorter_than_min_rtt_are_discarded() {
        let mut d = DeliveryRate::default();
        d.on_send(0, 0, 1000);
        assert_eq!(d.on_ack(5 * MS, 1000, 1000, Some(10 * MS)), None);
    }
}
