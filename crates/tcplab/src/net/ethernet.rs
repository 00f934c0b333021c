//! A shared medium: 10 Mbit/s Ethernet (IEEE 802.3 CSMA/CD; R. M. Metcalfe and D. R. Boggs,
//! "Ethernet: Distributed Packet Switching for Local Computer Networks", CACM 19(7), 1976) and
//! the ideal FIFO-arbitrated medium that x-Sim calls Ethernet "without collisions" (seed 000
//! §2.2.1). Both are the access disciplines of the multiple-access link: a segment with a rate,
//! one propagation delay, a per-frame byte overhead, padding to a minimum size and an MTU.
//!
//! Ethernet as modelled (802.3 §4.2, 10BASE5 values; the bit-time constants scale with the rate):
//! - carrier sense, 1-persistent: a station with a frame waits until it has sensed the medium
//!   idle for the interframe gap (96 bit times, 9.6 µs) and then transmits at once; a station
//!   that senses carrier defers and is woken when the carrier it saw ends;
//! - collision detection: two transmissions collide when neither could sense the other, i.e.
//!   they start less than one propagation delay apart; each sender notices when the other's
//!   signal reaches it, sends a 32-bit jam and stops;
//! - truncated binary exponential backoff: after the n-th collision of a frame, wait k slots of
//!   512 bit times (51.2 µs), k uniform in [0, 2^min(n,10) − 1]; after 16 attempts the frame is
//!   dropped and counted ("excessive collisions"). The draws come from the LAN's own RNG stream
//!   (`lan-backoff/<name>`), so they are the same for any change elsewhere in the scenario;
//! - frames: the packet (IP datagram) padded to `min_packet` (46 B) plus `overhead` (26 B:
//!   8 B preamble/SFD, 14 B header, 4 B FCS): 64–1518 B frames plus preamble on the wire.
//!
//! Deliberate deviations:
//! - propagation: one delay between every pair of stations (`delay`), or per-station positions
//!   along the segment (`positions`: a pair is as far apart as their positions differ); a
//!   station sees another's carrier start and end exactly that long after it happened. Signals
//!   do not attenuate, and a carrier is sensed the instant its first bit arrives;
//! - the interframe gap is checked when the station's wait ends: a carrier that appeared in its
//!   first two thirds restarts the wait, one that appeared in its last third is ignored (802.3's
//!   two-part deferral) and collides;
//! - a station holds one frame at a time; frames for different next hops wait in per-next-hop
//!   output queues (one link direction each, see `sim::lan`) and take turns in the order their
//!   heads became ready, where a real interface has a single queue;
//! - a collided frame is lost for everyone (no receiver takes the part it heard).
//!
//! With `[[lan]] trace = true` the medium records each transmission (station, start, end,
//! collided): the medium is busy while any is under way, in collision while two overlap.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rand::Rng;

use crate::engine::{SimTime, StreamRng};

/// How stations share the medium.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// CSMA/CD with truncated binary exponential backoff.
    Ethernet,
    /// Ideal arbitration: frames take the medium in the order they became ready, one at a time,
    /// separated by the gap; nothing ever collides.
    Fifo,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Ethernet => "ethernet",
            Access::Fifo => "fifo",
        }
    }
}

/// 802.3 constants in bit times.
pub const SLOT_BITS: u64 = 512;
pub const JAM_BITS: u64 = 32;
pub const GAP_BITS: u64 = 96;
/// Attempts per frame before it is dropped, and the exponent cap of the backoff range.
pub const ATTEMPT_LIMIT: u32 = 16;
pub const BACKOFF_LIMIT: u32 = 10;

#[derive(Clone, Debug, PartialEq)]
pub struct MediumParams {
    pub access: Access,
    pub rate_bps: u64,
    /// One-way propagation delay between any two stations; with `positions`, the largest one
    /// (the segment's span).
    pub delay: SimTime,
    /// Each station's place on the segment, as the time a signal takes to reach it from one
    /// end (`[[lan]] positions`); empty: every pair is `delay` apart.
    pub positions: Vec<SimTime>,
    /// Bytes added to every (padded) packet on the wire.
    pub overhead_bytes: u32,
    /// Packets shorter than this are padded to it.
    pub min_packet_bytes: u32,
    /// Idle time the medium must show between frames.
    pub gap: SimTime,
}

impl MediumParams {
    /// Propagation delay between stations `a` and `b`.
    #[inline]
    pub fn prop(&self, a: u32, b: u32) -> SimTime {
        if self.positions.is_empty() {
            return self.delay;
        }
        let (pa, pb) = (self.positions[a as usize], self.positions[b as usize]);
        if pa > pb { pa - pb } else { pb - pa }
    }
    pub fn bit_times(&self, bits: u64) -> SimTime {
        crate::engine::time::transmission_time(bits, self.rate_bps)
    }
    pub fn slot(&self) -> SimTime {
        self.bit_times(SLOT_BITS)
    }
    pub fn jam(&self) -> SimTime {
        self.bit_times(JAM_BITS)
    }
    /// Time a packet of `size` bytes occupies the medium.
    pub fn frame_time(&self, size: u32) -> SimTime {
        let bytes = size.max(self.min_packet_bytes) as u64 + self.overhead_bytes as u64;
        self.bit_times(bytes * 8)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MediumCounters {
    /// Frames sent without collision.
    pub frames: u64,
    /// Collisions a sender detected (one per colliding attempt: two stations colliding count 2).
    pub collisions: u64,
    /// Backoff slots drawn, summed over all backoffs.
    pub backoff_slots: u64,
    /// Frames dropped after `ATTEMPT_LIMIT` attempts.
    pub excessive_collision_drops: u64,
    /// Attempts that found carrier and deferred.
    pub deferrals: u64,
    /// Time the medium carried frames that got through.
    pub frame_ns: u64,
    /// Time spent in transmissions that collided (frame parts and jams).
    pub collision_ns: u64,
}

/// One transmission as the medium carried it (the medium trace, `[[lan]] trace = true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub station: u32,
    pub start: SimTime,
    /// When its last bit (or, for a collided one, its jam's) left the station.
    pub end: SimTime,
    pub collided: bool,
}

/// At most this many spans are kept (the first ones); `Medium::trace_truncated` says if more came.
pub const TRACE_LIMIT: usize = 1 << 20;

/// What the medium asks of its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MediumOut {
    /// Call [`Medium::timer`] for `station` at `at` with `gen` (a newer timer replaces it).
    Timer { station: u32, at: SimTime, gen: u32 },
    /// `station`'s frame has been sent: its last bit left now.
    Sent { station: u32 },
    /// `station`'s frame was dropped after too many collisions.
    Dropped { station: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    /// Has a frame, waits for its timer (gap, backoff, FIFO turn) to try again.
    Waiting,
    /// Sensed carrier; woken when that carrier ends.
    Deferring,
    Sending,
    Jamming,
}

#[derive(Clone, Debug)]
struct Station {
    state: State,
    gen: u32,
    attempts: u32,
    frame: SimTime,
    /// When this station's own last transmission (frame or jam) ended.
    last_end: SimTime,
    /// Sending: when it notices a collision (`SimTime::MAX`: none yet).
    detect_at: SimTime,
    start: SimTime,
    /// FIFO access: the owner's token for the frame in hand (`sim::lan`: its link direction).
    owner: u32,
}

/// One transmission on the medium, kept until every station has seen it end.
#[derive(Clone, Copy, Debug)]
struct Tx {
    station: u32,
    start: SimTime,
    end: SimTime,
}

pub struct Medium {
    pub name: String,
    pub params: MediumParams,
    stations: Vec<Station>,
    txs: Vec<Tx>,
    /// FIFO access: when the medium may start its next frame (the last one's end plus the gap).
    /// Every frame takes the first free moment when it becomes ready, so its whole schedule is
    /// known then: one timer per frame, at its end, and no queue of waiting stations.
    free_at: SimTime,
    /// Stations in `State::Deferring` (a frame's end wakes them; none: nothing to scan).
    deferring: u32,
    rng: StreamRng,
    pub counters: MediumCounters,
    /// The medium trace when enabled (`Some`): every transmission, in the order they ended.
    pub trace: Option<Vec<Span>>,
    pub trace_truncated: bool,
    /// FIFO access: the last frame size's medium time (spares `frame_time`'s division; the
    /// value is the function's own, so results are unchanged).
    frame_memo: crate::net::tx_memo::TxMemo,
    /// Requests to the owner, drained after every call.
    pub out: Vec<MediumOut>,
}

impl Medium {
    pub fn new(name: String, params: MediumParams, stations: usize, rng: StreamRng) -> Medium {
        let st = Station { state: State::Idle, gen: 0, attempts: 0, frame: SimTime::ZERO, last_end: SimTime::ZERO, detect_at: SimTime::MAX, start: SimTime::ZERO, owner: 0 };
        Medium { name, params, stations: vec![st; stations], txs: Vec::new(), free_at: SimTime::ZERO, deferring: 0, rng, counters: MediumCounters::default(), trace: None, trace_truncated: false, frame_memo: Default::default(), out: Vec::new() }
    }

    pub fn n_stations(&self) -> usize {
        self.stations.len()
    }

    /// Whether `station` has no frame in hand (it may be given one with [`Medium::ready`]).
    pub fn is_idle(&self, station: u32) -> bool {
        self.stations[station as usize].state == State::Idle
    }

    /// `station` has a frame of `size` bytes to send.
    pub fn ready(&mut self, now: SimTime, station: u32, size: u32) {
        if self.params.access == Access::Fifo {
            let end = self.fifo_reserve(now, station, size, 0);
            self.set_timer(station, end);
            return;
        }
        let frame = self.params.frame_time(size);
        let s = &mut self.stations[station as usize];
        debug_assert_eq!(s.state, State::Idle, "a station holds one frame at a time");
        s.frame = frame;
        s.attempts = 0;
        s.state = State::Waiting;
        self.attempt(now, station);
    }

    /// FIFO access: `station`'s frame of `size` bytes takes the medium at its first free moment.
    /// Returns when its last bit leaves; the owner then calls [`Medium::fifo_sent`], which hands
    /// back `owner` (no timer request is made: `sim::lan` schedules the frame's end itself).
    #[inline]
    pub fn fifo_reserve(&mut self, now: SimTime, station: u32, size: u32, owner: u32) -> SimTime {
        debug_assert_eq!(self.params.access, Access::Fifo);
        let frame = self.frame_time_memo(size);
        let start = now.max(self.free_at);
        let end = start + frame;
        self.free_at = end + self.params.gap;
        let s = &mut self.stations[station as usize];
        debug_assert!(matches!(s.state, State::Idle | State::Waiting), "a station holds one frame at a time");
        s.frame = frame;
        s.start = start;
        s.owner = owner;
        s.state = State::Sending;
        end
    }

    /// [`MediumParams::frame_time`] through the medium's one-entry memo (the FIFO per-frame path).
    #[inline]
    fn frame_time_memo(&mut self, size: u32) -> SimTime {
        let params = &self.params;
        SimTime(self.frame_memo.time(size, |b| params.frame_time(b).0))
    }

    /// FIFO access: [`Medium::fifo_reserve`] if `station` is idle (`None`: it has a frame in hand).
    #[inline]
    pub fn fifo_try_reserve(&mut self, now: SimTime, station: u32, size: u32, owner: u32) -> Option<SimTime> {
        let frame = self.frame_time_memo(size);
        let s = &mut self.stations[station as usize];
        if s.state != State::Idle {
            return None;
        }
        let start = now.max(self.free_at);
        let end = start + frame;
        self.free_at = end + self.params.gap;
        s.frame = frame;
        s.start = start;
        s.owner = owner;
        s.state = State::Sending;
        Some(end)
    }

    /// FIFO access: `station` has a frame that will take the medium when its owner calls
    /// [`Medium::fifo_reserve`]; meanwhile the station is not idle.
    #[inline]
    pub fn fifo_hold(&mut self, station: u32) {
        self.stations[station as usize].state = State::Waiting;
    }

    /// FIFO access: the frame [`Medium::fifo_reserve`] scheduled for `station` has been sent.
    #[inline]
    pub fn fifo_sent(&mut self, now: SimTime, station: u32) -> u32 {
        let s = &mut self.stations[station as usize];
        s.state = State::Idle;
        s.last_end = now;
        let owner = s.owner;
        self.counters.frames += 1;
        self.counters.frame_ns += s.frame.0;
        if self.trace.is_some() {
            self.record(station, now, false);
        }
        owner
    }

    /// A timer set through [`MediumOut::Timer`] fired.
    pub fn timer(&mut self, now: SimTime, station: u32, gen: u32) {
        let s = &self.stations[station as usize];
        if s.gen != gen {
            return;
        }
        match (s.state, self.params.access) {
            (State::Waiting | State::Deferring, Access::Ethernet) => self.attempt(now, station),
            (State::Sending, Access::Fifo) => {
                self.fifo_sent(now, station);
                self.out.push(MediumOut::Sent { station });
            }
            (State::Sending, _) if s.detect_at <= now => self.start_jam(now, station),
            (State::Sending, _) => self.sent(now, station),
            (State::Jamming, _) => self.jam_over(now, station),
            // FIFO stations never wait, defer or jam.
            (State::Idle | State::Deferring | State::Waiting, Access::Fifo) | (State::Idle, Access::Ethernet) => {}
        }
    }

    fn record(&mut self, station: u32, end: SimTime, collided: bool) {
        if let Some(t) = &mut self.trace {
            if t.len() < TRACE_LIMIT {
                t.push(Span { station, start: self.stations[station as usize].start, end, collided });
            } else {
                self.trace_truncated = true;
            }
        }
    }

    fn set_timer(&mut self, station: u32, at: SimTime) {
        let s = &mut self.stations[station as usize];
        s.gen = s.gen.wrapping_add(1);
        self.out.push(MediumOut::Timer { station, at, gen: s.gen });
    }

    /// Carrier sense and the interframe gap, then transmit (Ethernet access).
    fn attempt(&mut self, now: SimTime, station: u32) {
        if self.stations[station as usize].state == State::Deferring {
            self.deferring -= 1; // every way out of here sets its next state
        }
        let span = self.params.delay;
        let gap = self.params.gap;
        // Forget transmissions every station has seen end more than a gap ago (a station whose
        // gap ends now still needs the end it counted from).
        self.txs.retain(|t| t.end + span + gap >= now);
        // When did this station last see the medium go quiet (its own frames included)?
        let mut last_end = self.stations[station as usize].last_end;
        for t in &self.txs {
            let tau = self.params.prop(t.station, station);
            if t.station != station && t.start + tau <= now && t.end + tau <= now {
                last_end = last_end.max(t.end + tau);
            }
        }
        // 802.3 §4.2.3.2.1: carrier that appears in the last third of the interframe gap does
        // not stop a station whose gap ends now (it transmits, and the two collide).
        let committed = last_end > SimTime::ZERO && now <= last_end + gap;
        let ignore_from = last_end + SimTime(gap.0 * 2 / 3);
        let mut busy_until: Option<SimTime> = None;
        for t in &self.txs {
            let tau = self.params.prop(t.station, station);
            let (seen_start, seen_end) = (t.start + tau, t.end + tau);
            if t.station == station || seen_start > now || seen_end <= now || (committed && seen_start >= ignore_from) {
                continue;
            }
            busy_until = Some(busy_until.map_or(seen_end, |b| b.max(seen_end)));
        }
        if let Some(b) = busy_until {
            self.counters.deferrals += 1;
            self.stations[station as usize].state = State::Deferring;
            self.deferring += 1;
            self.set_timer(station, b + gap);
        } else if last_end + gap > now && last_end > SimTime::ZERO {
            self.stations[station as usize].state = State::Waiting;
            self.set_timer(station, last_end + gap);
        } else {
            self.transmit(now, station);
        }
    }

    fn transmit(&mut self, now: SimTime, station: u32) {
        let end = now + self.stations[station as usize].frame;
        let mut detect = SimTime::MAX;
        {
            // Every transmission still on the medium here (unheard yet, or heard in the ignored
            // last third of the gap) collides with ours.
            for i in 0..self.txs.len() {
                let t = self.txs[i];
                let tau = self.params.prop(t.station, station);
                if t.station == station || t.end + tau <= now {
                    continue;
                }
                detect = detect.min(now.max(t.start + tau));
                let other = &mut self.stations[t.station as usize];
                let theirs = now + tau;
                if other.state == State::Sending && other.detect_at > theirs && t.end > theirs {
                    other.detect_at = theirs;
                    self.set_timer(t.station, theirs);
                }
            }
        }
        let s = &mut self.stations[station as usize];
        s.state = State::Sending;
        s.start = now;
        s.detect_at = detect;
        self.txs.push(Tx { station, start: now, end });
        self.set_timer(station, end.min(detect));
    }

    /// The transmission of `station` ends at `end` (shortened by a collision): update its record.
    fn set_end(&mut self, station: u32, end: SimTime) {
        if let Some(t) = self.txs.iter_mut().rev().find(|t| t.station == station) {
            t.end = end;
        }
    }

    fn start_jam(&mut self, now: SimTime, station: u32) {
        self.counters.collisions += 1;
        let end = now + self.params.jam();
        let s = &mut self.stations[station as usize];
        s.state = State::Jamming;
        self.counters.collision_ns += (end - s.start).0;
        self.set_end(station, end);
        self.record(station, end, true);
        self.set_timer(station, end);
    }

    fn jam_over(&mut self, now: SimTime, station: u32) {
        self.wake_deferrers(now, station);
        let s = &mut self.stations[station as usize];
        s.last_end = now;
        s.attempts += 1;
        if s.attempts >= ATTEMPT_LIMIT {
            s.state = State::Idle;
            self.counters.excessive_collision_drops += 1;
            self.out.push(MediumOut::Dropped { station });
            return;
        }
        let k = self.rng.gen_range(0..1u64 << s.attempts.min(BACKOFF_LIMIT));
        s.state = State::Waiting;
        self.counters.backoff_slots += k;
        let at = now + SimTime(k * self.params.slot().0);
        self.set_timer(station, at);
    }

    fn sent(&mut self, now: SimTime, station: u32) {
        let s = &mut self.stations[station as usize];
        s.state = State::Idle;
        s.last_end = now;
        self.counters.frames += 1;
        self.counters.frame_ns += s.frame.0;
        self.out.push(MediumOut::Sent { station });
        self.record(station, now, false);
        self.wake_deferrers(now, station);
    }

    /// `from`'s carrier ended at `now`: stations deferring look again once they have seen it
    /// end and a gap has passed.
    fn wake_deferrers(&mut self, now: SimTime, from: u32) {
        if self.deferring == 0 {
            return;
        }
        for i in 0..self.stations.len() {
            if self.stations[i].state == State::Deferring {
                let at = now + self.params.prop(from, i as u32) + self.params.gap;
                self.set_timer(i as u32, at);
            }
        }
    }
}

/// FIFO access on a segment of two stations without a medium trace (`sim::lan::Lan::solo`):
/// each station has one link direction, so the medium keeps no station state, and its whole
/// state is when it may start its next frame (the last one's end plus the gap) and the medium
/// time of the frames it has carried. The segment's two link directions each hold it
/// (`Link::solo`), so a frame reaches it without looking up the LAN. Atomics only so that a
/// `Link` stays `Send`: the simulation is single-threaded, and relaxed loads and stores are
/// plain moves (the add below is one instruction).
#[derive(Debug)]
pub struct SoloFifo {
    /// The last frame's end: the medium is free from `last_end + gap` (wrapping:
    /// before the first frame `last_end` is `-gap`, so the medium is free from 0). Kept without
    /// the gap so that a frame's end is stored as it is computed.
    last_end: AtomicU64,
    /// Medium time of the frames reserved so far, the one on the medium (if any) included.
    frame_ns: AtomicU64,
    gap: u64,
    /// The medium's parameters, for a frame size's medium time.
    pub params: MediumParams,
}

impl SoloFifo {
    pub fn new(params: MediumParams) -> SoloFifo {
        debug_assert_eq!(params.access, Access::Fifo);
        SoloFifo { last_end: AtomicU64::new(0u64.wrapping_sub(params.gap.0)), frame_ns: AtomicU64::new(0), gap: params.gap.0, params }
    }

    /// The medium a point-to-point direction, or one on any other LAN, holds in its
    /// `Link::solo`: never reserved (`Link::lan` keeps those directions off
    /// [`SoloFifo::reserve`]), one shared by all of them.
    pub fn unused() -> SoloFifo {
        SoloFifo::new(MediumParams {
            access: Access::Fifo,
            rate_bps: 1,
            delay: SimTime(0),
            positions: Vec::new(),
            overhead_bytes: 0,
            min_packet_bytes: 0,
            gap: SimTime(0),
        })
    }

    /// A frame of medium time `frame` takes the medium at its first free moment; returns its
    /// end. Its time is counted now (the owner takes off the frames still on the medium when it
    /// reads [`SoloFifo::frame_ns`]).
    #[inline(always)]
    pub fn reserve(&self, now: SimTime, frame: SimTime) -> SimTime {
        let free_at = SimTime(self.last_end.load(Relaxed).wrapping_add(self.gap));
        let end = now.max(free_at) + frame;
        self.last_end.store(end.0, Relaxed);
        self.frame_ns.store(self.frame_ns.load(Relaxed) + frame.0, Relaxed);
        end
    }

    /// Medium time of the frames reserved so far.
    pub fn frame_ns(&self) -> u64 {
        self.frame_ns.load(Relaxed)
    }
}

#[cfg(test)]
#[path = "tests_ethernet.rs"]
mod tests;
