//! The glue between a shared medium ([`crate::net::ethernet`]) and the link directions of its
//! stations. Each station has one link direction (queue + pipe) per other station on the
//! segment, so routing stays the point-to-point routing; the head frames of a station's
//! directions take turns at the medium in the order they became ready (`pending`), one frame in
//! the medium's hands at a time. A frame that gets through ends like any link transmission
//! (`tx_done`: loss, corruption, then the segment's propagation delay); one dropped after 16
//! collisions counts as a link loss on its direction and in the LAN's counters. A FIFO segment
//! of two stations (one direction each) skips the turn queues and the medium's events: its
//! frames end as their direction's own `TxDone` ([`solo_frame_end`], same times and order).

use std::collections::VecDeque;

use super::{Event, Simulation};
use crate::engine::SimTime;
use crate::net::ethernet::{Medium, MediumCounters, MediumOut};
use crate::net::link::{Link, NO_LAN, SOLO_LAN};
use crate::net::packet::DropReason;

pub struct Lan {
    pub medium: Medium,
    /// Node of each station.
    pub station_nodes: Vec<u32>,
    /// Per station, its link directions whose head frame waits for the medium, oldest first;
    /// the front one's frame is the medium's while the station is not idle there (under FIFO
    /// access the frame in hand is not in here: the medium keeps its direction).
    pub pending: Vec<VecDeque<u32>>,
    /// The medium's requests being handled, swapped with `medium.out` (no allocation per call).
    pub scratch: Vec<MediumOut>,
    /// FIFO access (`medium.params.access`), kept here: its frames bypass the request buffer.
    pub fifo: bool,
    /// FIFO access: how many directions wait in `pending` (all stations together).
    pub fifo_waiting: u32,
    /// FIFO access on a two-station segment without a medium trace: each station has one link
    /// direction, so a station has a frame in hand exactly when that direction is transmitting,
    /// and the medium needs no station state. A frame then takes the medium's first free moment
    /// when it becomes ready and its end is the direction's own `TxDone`, as on a point-to-point
    /// link (same times and event order as the general FIFO path, which ends frames by
    /// `Event::Lan` and hands them to `tx_done` at once). The medium's state is then a
    /// [`crate::net::ethernet::SoloFifo`] its two directions hold (`Link::solo`), not `medium`: [`Lan::counters`]
    /// works its frame counters out from them.
    pub solo: bool,
}

impl Lan {
    /// The medium's counters as of now: frames sent (ended) and their medium time. A `solo`
    /// segment counts nothing per frame but the medium time it reserves: its frames sent are
    /// those its two directions have finished, and the frames still on it (their directions
    /// are transmitting) come off the medium time here.
    pub fn counters(&self, lan: u32, links: &[Link]) -> MediumCounters {
        let mut c = self.medium.counters;
        if self.solo {
            let mut on_medium = 0;
            for link in links.iter().filter(|k| k.on_lan().is_some_and(|(x, _)| x == lan)) {
                c.frame_ns = link.solo.frame_ns();
                c.frames += link.monitor.forwarded_pkts;
                if let Some((_, size)) = link.busy {
                    on_medium += self.medium.params.frame_time(size).0;
                }
            }
            c.frame_ns -= on_medium;
        }
        c
    }
}

/// When the packet of `size` bytes that `link` starts sending now has left: after its
/// transmission time on a point-to-point link, at its frame's end on a `solo` segment
/// ([`solo_frame_end`]); `None`: the LAN's general path ([`Simulation::lan_ready`]) decides.
/// One `TxDone` scheduling for both (the per-packet path). The kind of direction is read from
/// `Link::lan` by one signed compare: -1 ([`NO_LAN`]) point-to-point, below it a `solo`
/// segment ([`SOLO_LAN`] set), above it any other LAN.
#[inline(always)]
pub(crate) fn tx_end(link: &mut Link, now: SimTime, size: u32) -> Option<SimTime> {
    let kind = link.lan as i32;
    if kind == NO_LAN as i32 {
        return Some(now + link.tx_time_memo(size));
    }
    if kind < NO_LAN as i32 {
        return Some(solo_frame_end(link, now, size));
    }
    None
}

/// A frame of `size` bytes has become ready on `link`, a direction of a `solo` segment
/// ([`SOLO_LAN`] set in `Link::lan`): it takes the medium at once, and this returns its end,
/// which the caller schedules as the direction's `TxDone` (as a point-to-point link does).
/// Small and inlined into the per-packet path: the direction holds the medium (`Link::solo`),
/// so there is no LAN to look up.
#[inline(always)]
pub(crate) fn solo_frame_end(link: &mut Link, now: SimTime, size: u32) -> SimTime {
    debug_assert!(link.lan != NO_LAN && link.lan & SOLO_LAN != 0);
    let m = &*link.solo;
    // The direction's own memo holds its frames' medium time (a LAN direction has no other use
    // for it: its transmitter time is the medium's).
    let frame = SimTime(link.tx_memo.time(size, |b| m.params.frame_time(b).0));
    m.reserve(now, frame)
}

impl Simulation {
    /// Link direction `l` (on a LAN) has put a frame of `size` bytes on its transmitter: it waits
    /// for the medium.
    #[inline]
    pub(crate) fn lan_ready(&mut self, now: SimTime, l: u32, size: u32) {
        let packed = self.links[l as usize].lan;
        debug_assert!(packed != NO_LAN && packed & SOLO_LAN == 0);
        let (lan, station) = (packed >> 16, packed & 0xffff);
        let x = &mut self.lans[lan as usize];
        if x.fifo {
            // FIFO access: the frame's schedule is known now, so its end is its one event and
            // `pending` holds only the station's directions waiting behind the frame in hand.
            match x.medium.fifo_try_reserve(now, station, size, l) {
                Some(end) => self.events.schedule(end, Event::Lan { lan: lan as u16, station: station as u16, gen: 0 }),
                None => {
                    x.pending[station as usize].push_back(l);
                    x.fifo_waiting += 1;
                }
            }
            return;
        }
        x.pending[station as usize].push_back(l);
        self.lan_feed(now, lan, station);
        self.lan_drain(now, lan);
    }

    pub(crate) fn lan_timer(&mut self, now: SimTime, lan: u32, station: u32, gen: u32) {
        if self.lans[lan as usize].fifo {
            return self.lan_fifo_sent(now, lan, station);
        }
        let m = &mut self.lans[lan as usize].medium;
        m.timer(now, station, gen);
        // The usual outcome of a frame's end: only `Sent`. Handle it without the batch swap.
        if let [MediumOut::Sent { station: s }] = m.out[..] {
            m.out.clear();
            let l = self.lans[lan as usize].pending[s as usize].pop_front().expect("sent frame");
            self.tx_done(now, l);
            self.lan_feed(now, lan, s);
        }
        self.lan_drain(now, lan);
    }

    /// FIFO access: the station's frame has been sent. A direction of the station that was
    /// waiting goes next (before the one just sent, if that has another frame), and takes the
    /// medium after the sent frame's transmission end is handled, as the request-driven medium
    /// ordered it.
    fn lan_fifo_sent(&mut self, now: SimTime, lan: u32, station: u32) {
        let x = &mut self.lans[lan as usize];
        let l = x.medium.fifo_sent(now, station);
        let mut next = None;
        if x.fifo_waiting > 0 {
            next = x.pending[station as usize].pop_front();
            if next.is_some() {
                x.fifo_waiting -= 1;
                x.medium.fifo_hold(station);
            }
        }
        self.tx_done(now, l);
        if let Some(n) = next {
            let (_, size) = self.links[n as usize].busy.expect("a pending link direction is transmitting");
            let end = self.lans[lan as usize].medium.fifo_reserve(now, station, size, n);
            self.events.schedule(end, Event::Lan { lan: lan as u16, station: station as u16, gen: 0 });
        }
    }

    /// Hand the station's oldest waiting frame to the medium if the station has none in hand.
    fn lan_feed(&mut self, now: SimTime, lan: u32, station: u32) {
        let x = &mut self.lans[lan as usize];
        if !x.medium.is_idle(station) {
            return;
        }
        if let Some(&l) = x.pending[station as usize].front() {
            let (_, size) = self.links[l as usize].busy.expect("a pending link direction is transmitting");
            x.medium.ready(now, station, size);
        }
    }

    fn lan_drain(&mut self, now: SimTime, lan: u32) {
        // The usual request is one timer: schedule it without the batch machinery below.
        let out = &mut self.lans[lan as usize].medium.out;
        if let [MediumOut::Timer { station, at, gen }] = out[..] {
            out.clear();
            self.events.schedule(at, Event::Lan { lan: lan as u16, station: station as u16, gen });
            return;
        }
        loop {
            let x = &mut self.lans[lan as usize];
            if x.medium.out.is_empty() {
                return;
            }
            let mut outs = std::mem::take(&mut x.scratch);
            std::mem::swap(&mut outs, &mut x.medium.out);
            for &o in &outs {
                match o {
                    MediumOut::Timer { station, at, gen } => self.events.schedule(at, Event::Lan { lan: lan as u16, station: station as u16, gen }),
                    MediumOut::Sent { station } => {
                        let l = self.lans[lan as usize].pending[station as usize].pop_front().expect("sent frame");
                        self.tx_done(now, l);
                        self.lan_feed(now, lan, station);
                    }
                    MediumOut::Dropped { station } => {
                        let l = self.lans[lan as usize].pending[station as usize].pop_front().expect("dropped frame");
                        let (id, size) = self.links[l as usize].busy.take().expect("dropped frame");
                        let tag = self.tag_if_traced(l, id);
                        self.links[l as usize].monitor.on_drop(now, size, DropReason::LinkLoss, tag);
                        self.conservation.dropped += 1;
                        self.pool.free(id);
                        self.start_next(now, l);
                        self.lan_feed(now, lan, station);
                    }
                }
            }
            outs.clear();
            self.lans[lan as usize].scratch = outs;
        }
    }
}
