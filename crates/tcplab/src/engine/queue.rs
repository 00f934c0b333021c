//! The event calendar: a binary heap keyed by `(time, seq)`.
//!
//! * FIFO ties: `seq` is a global insertion counter, so two events at the same instant fire in
//!   the order they were scheduled.
//! * Cancellation without scanning: a component that may reschedule keeps a [`Timer`] — a
//!   generation counter. Scheduling bumps the generation and stores it in the event; when the
//!   event pops with a stale generation it is skipped. Nothing is searched or removed.
//! * No allocation per event: events are small `Copy` values stored inline in the heap's vector,
//!   which only grows to the maximum number of pending events (components keep at most one or
//!   two pending events each, the htsim rule, so this stays small).

use super::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    /// `(time << 64) | seq`: one integer comparison orders by time, then by insertion.
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    fn time(&self) -> SimTime {
        SimTime((self.key >> 64) as u64)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (time, seq) is on top.
        other.key.cmp(&self.key)
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), next_seq: 0, now: SimTime::ZERO, popped: 0 }
    }

    /// Current simulated time (the time of the last popped event).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far (the engine's event count).
    pub fn events_popped(&self) -> u64 {
        self.popped
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `event` at absolute time `at`. Panics in debug builds if `at` is in the past.
    pub fn schedule(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { key: ((at.0 as u128) << 64) | seq as u128, event });
    }

    /// Time of the next pending event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time())
    }

    /// Pop the earliest event and advance the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        self.now = e.time();
        self.popped += 1;
        Some((self.now, e.event))
    }
}

/// A cancellable timer slot: the generation stored in a scheduled event must match the slot's
/// current generation when the event fires, otherwise the event was cancelled or superseded.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    generation: u32,
    armed_at: Option<SimTime>,
}

impl Timer {
    /// Arm (or re-arm) the timer; returns the generation to put in the event.
    pub fn arm(&mut self, at: SimTime) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        self.armed_at = Some(at);
        self.generation
    }
    /// Cancel: any event carrying an older generation will be ignored.
    pub fn cancel(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.armed_at = None;
    }
    pub fn armed_at(&self) -> Option<SimTime> {
        self.armed_at
    }
    /// True (and disarms) if an event with generation `generation` is the live one.
    pub fn fire(&mut self, generation: u32) -> bool {
        if self.armed_at.is_some() && generation == self.generation {
            self.armed_at = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new();
        for (t, v) in [(30u64, 'c'), (10, 'a'), (20, 'b'), (5, 'z')] {
            q.schedule(SimTime(t), v);
        }
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, v)| (t.0, v)).collect();
        assert_eq!(order, vec![(5, 'z'), (10, 'a'), (20, 'b'), (30, 'c')]);
        assert_eq!(q.events_popped(), 4);
        assert_eq!(q.now(), SimTime(30));
    }

    #[test]
    fn equal_times_keep_fifo_order() {
        let mut q = EventQueue::new();
        for i in 0..1000u32 {
            // interleave two times so the heap has to reorder
            q.schedule(SimTime(if i % 2 == 0 { 7 } else { 3 }), i);
        }
        let popped: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let at3: Vec<u32> = popped.iter().filter(|(t, _)| t.0 == 3).map(|&(_, v)| v).collect();
        let at7: Vec<u32> = popped.iter().filter(|(t, _)| t.0 == 7).map(|&(_, v)| v).collect();
        assert!(at3.windows(2).all(|w| w[0] < w[1]));
        assert!(at7.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(popped[..500].iter().all(|(t, _)| t.0 == 3), true);
    }

    #[test]
    fn cancelled_timer_events_are_skipped() {
        let mut q = EventQueue::new();
        let mut timer = Timer::default();
        let g1 = timer.arm(SimTime(10));
        q.schedule(SimTime(10), g1);
        let g2 = timer.arm(SimTime(20)); // supersedes g1
        q.schedule(SimTime(20), g2);
        let (_, e) = q.pop().unwrap();
        assert!(!timer.fire(e), "superseded generation must not fire");
        let (_, e) = q.pop().unwrap();
        assert!(timer.fire(e));
        assert!(!timer.fire(e), "a timer fires once");

        let g3 = timer.arm(SimTime(30));
        q.schedule(SimTime(30), g3);
        timer.cancel();
        let (_, e) = q.pop().unwrap();
        assert!(!timer.fire(e), "cancelled timer must not fire");
    }
}
