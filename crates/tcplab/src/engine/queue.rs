//! The event calendar: a multi-level radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990, "Faster
//! algorithms for the shortest path problem", with the radix of a hierarchical timing wheel)
//! keyed by time, with FIFO order among equal times.
//!
//! * Order: a discrete-event simulation only ever schedules at or after the current time, so the
//!   times popped never decrease — the monotone case a radix heap is made for. Times are read in
//!   6-bit digits (`DIGIT_BITS`): an event whose time's highest digit differing from the last
//!   settled time `last` is digit `L` waits in bucket `(L, its digit L)`; settling empties the
//!   lowest non-empty bucket into lower levels around its minimum (a level-0 bucket holds one time
//!   and becomes the now-bucket whole). An event moves down at most one level per move, through
//!   contiguous vectors, so a delay under 2^24 ns passes through at most four levels (a binary
//!   radix heap's buckets took up to twenty, ~190 instructions per event on the 16-flow dumbbell;
//!   issue 28), and no move depends on the number of events pending (issue 13).
//! * Buckets stay valid when `last` moves: `last` only moves to the minimum of the lowest
//!   non-empty bucket, which shares every digit above that bucket's level with the old `last`,
//!   so any other event's highest differing digit (and its value) is unchanged.
//! * FIFO ties without a sequence number: all pending events of one time sit in the same bucket
//!   (the bucket is a function of the time and `last`, and a settle moves a whole bucket in
//!   order), so appending keeps them in scheduling order. The pop order is exactly that of a
//!   binary heap on `(time, insertion number)` (tested against one over 10⁶ random operations).
//! * Cancellation without scanning: a component that may reschedule keeps a [`Timer`] — a
//!   generation counter. Scheduling bumps the generation and stores it in the event; when the
//!   event pops with a stale generation it is skipped. Nothing is searched or removed.
//! * No allocation per event: events are small `Copy` values stored inline in the buckets'
//!   vectors, which keep their capacity, so after the first seconds of a run nothing grows.

use super::time::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: u64,
    event: E,
}

const DIGIT_BITS: u32 = 6;
const DIGITS: usize = 1 << DIGIT_BITS;
const LEVELS: usize = 64usize.div_ceil(DIGIT_BITS as usize);
/// `digits_occupied`'s length: the power of two above [`LEVELS`], so that a level masked to
/// it indexes without a bounds check.
const LEVEL_WORDS: usize = LEVELS.next_power_of_two();
/// The radix buckets, `(level, digit)` at `level * DIGITS + digit`.
const SLOTS: usize = LEVELS * DIGITS;

/// Bucket index `level * DIGITS + digit` of `time` relative to `last` (`time != last`).
#[inline]
fn slot_of(time: u64, last: u64) -> usize {
    // `& 63`: a no-op for `time != last`, and it bounds the slot for the compiler.
    let highest = 63 - ((time ^ last).leading_zeros() & 63);
    let level = highest / DIGIT_BITS;
    let digit = (time >> (level * DIGIT_BITS)) as usize & (DIGITS - 1);
    level as usize * DIGITS + digit
}

pub struct EventQueue<E> {
    /// Events at time `last`, in scheduling order, popped from `now_head` on.
    now_bucket: Vec<Entry<E>>,
    now_head: usize,
    /// A fixed-size array, so that a slot computed by [`slot_of`] indexes without a bounds
    /// check.
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit `L` set when some bucket of level `L` is non-empty.
    levels_occupied: u64,
    /// Per level, bit `d` set when bucket `(L, d)` is non-empty.
    digits_occupied: [u64; LEVEL_WORDS],
    len: usize,
    /// The smallest time pending (after `settle`), never more than any pending time.
    last: u64,
    now: SimTime,
    popped: u64,
    /// The largest bucket capacity grown to so far (at most [`GROWTH_HINT_CAP`]): a bucket
    /// that must grow goes at least this far at once (see [`EventQueue::grow`]).
    grown_to: usize,
    /// Emptied bucket buffers, handed to the next bucket that fills (see [`EventQueue::grow`]).
    spare: Vec<Vec<Entry<E>>>,
}

/// Limit of the shared growth hint, in entries (1.5 KB per bucket).
const GROWTH_HINT_CAP: usize = 64;
/// From this level up (a digit spans 16.7 ms at level 4) a bucket is reused too rarely to
/// keep its own buffer: an emptied one goes to the spare pool instead. Level 3 (a digit spans
/// 262 µs) keeps its buffers: a packet's transmission or propagation time usually files its
/// event there, and handing the buffer round through the pool cost ~6 instructions per event
/// (issue 28); its 64 buffers are a few KB.
const SPARE_LEVEL: usize = 4;

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            now_bucket: Vec::new(),
            now_head: 0,
            buckets: (0..SLOTS).map(|_| Vec::new()).collect(),
            levels_occupied: 0,
            digits_occupied: [0; LEVEL_WORDS],
            len: 0,
            last: 0,
            now: SimTime::ZERO,
            popped: 0,
            grown_to: 0,
            spare: Vec::new(),
        }
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
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// File `e` by its time (appended: see the FIFO note in the module header).
    #[inline(always)]
    fn put(&mut self, e: Entry<E>) {
        if e.time == self.last {
            self.now_bucket.push(e);
        } else {
            let slot = slot_of(e.time, self.last);
            let level = slot / DIGITS;
            self.levels_occupied |= 1 << level;
            self.digits_occupied[level] |= 1 << (slot % DIGITS);
            let bucket = &mut self.buckets[slot];
            if bucket.len() == bucket.capacity() {
                Self::grow(bucket, &mut self.spare, &mut self.grown_to);
            }
            bucket.push(e);
        }
    }

    /// Make room in a full bucket. There are many buckets (64 per level) and the high levels'
    /// are each used for the first time late in a run (a level-5 digit spans 1.07 s), so their
    /// buffers circulate: an emptied bucket of level [`SPARE_LEVEL`] or more gives its buffer to
    /// `spare`, and a bucket without one takes it from there. A buffer that must still grow goes at once to the largest capacity
    /// any needed (up to a cap). A steady-state run then allocates nothing here.
    #[cold]
    #[inline(never)]
    fn grow(bucket: &mut Vec<Entry<E>>, spare: &mut Vec<Vec<Entry<E>>>, grown_to: &mut usize) {
        if bucket.capacity() == 0 {
            if let Some(buffer) = spare.pop() {
                *bucket = buffer;
                if bucket.capacity() > 0 {
                    return;
                }
            }
        }
        let want = (bucket.capacity() * 2).max(*grown_to).max(4);
        bucket.reserve_exact(want - bucket.len());
        *grown_to = (*grown_to).max(bucket.capacity()).min(GROWTH_HINT_CAP);
    }

    /// Schedule `event` at absolute time `at`. Panics in debug builds if `at` is in the past.
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        if at.0 < self.last {
            // Only after a `peek` that settled on a later event: re-base on the new minimum.
            self.rebase(at.0);
        }
        self.len += 1;
        self.put(Entry { time: at.0, event });
    }

    /// Make `time` the base (rare, O(pending)). Pending events are re-filed in an order that
    /// keeps each time's events together and in scheduling order.
    #[cold]
    fn rebase(&mut self, time: u64) {
        let mut all: Vec<Entry<E>> = Vec::with_capacity(self.len);
        all.extend_from_slice(&self.now_bucket[self.now_head..]);
        self.now_bucket.clear();
        self.now_head = 0;
        for b in self.buckets.iter_mut() {
            all.append(b);
        }
        self.levels_occupied = 0;
        self.digits_occupied = [0; LEVEL_WORDS];
        self.last = time;
        for e in all {
            self.put(e);
        }
    }

    /// Bring the minimum into the now-bucket (false if empty).
    #[inline]
    fn settle(&mut self) -> bool {
        if self.now_head < self.now_bucket.len() {
            return true;
        }
        if self.levels_occupied == 0 {
            return false;
        }
        self.settle_slow();
        true
    }

    /// The now-bucket is used up: refill it from the lowest non-empty bucket.
    fn settle_slow(&mut self) {
        self.now_bucket.clear();
        self.now_head = 0;
        let level = self.levels_occupied.trailing_zeros() as usize & (LEVEL_WORDS - 1);
        let digit = self.digits_occupied[level].trailing_zeros() as usize & (DIGITS - 1);
        self.digits_occupied[level] &= !(1 << digit);
        if self.digits_occupied[level] == 0 {
            self.levels_occupied &= !(1 << level);
        }
        let slot = level * DIGITS + digit;
        let bucket = &mut self.buckets[slot];
        if bucket.len() == 1 {
            // A lone event, the usual case when events are sparse (82 % of settles on the
            // 16-flow dumbbell): moved as one value, not as a slice copy.
            let e = bucket[0];
            bucket.clear();
            if level >= SPARE_LEVEL {
                self.spare.push(std::mem::take(bucket));
            }
            self.now_bucket.push(e);
            self.last = e.time;
            return;
        }
        if level == 0 {
            // One time only (a level-0 bucket): copied whole into the now-bucket. (Not
            // swapped: a swap hands the buffers round, and one that lands where more is needed
            // grows — an allocation.)
            self.now_bucket.extend_from_slice(bucket);
            bucket.clear();
            self.last = self.now_bucket[0].time;
            return;
        }
        let mut spill = std::mem::take(&mut self.buckets[slot]);
        self.last = spill.iter().map(|e| e.time).min().expect("occupied bucket");
        for &e in &spill {
            self.put(e);
        }
        spill.clear();
        if level >= SPARE_LEVEL {
            self.spare.push(spill); // its capacity serves the next high bucket that fills
        } else {
            self.buckets[slot] = spill; // keep the capacity: this bucket is used again soon
        }
    }

    /// Time of the next pending event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if !self.settle() {
            return None;
        }
        Some(SimTime(self.last))
    }

    /// Pop the earliest event and advance the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if !self.settle() {
            return None;
        }
        Some(self.pop_peeked())
    }

    /// [`EventQueue::pop`] right after a [`EventQueue::peek_time`] that returned `Some` (and no
    /// schedule in between): the event loop's pop, without settling twice.
    #[inline]
    pub fn pop_peeked(&mut self) -> (SimTime, E) {
        debug_assert!(self.now_head < self.now_bucket.len(), "pop_peeked without a peek");
        let e = self.now_bucket[self.now_head];
        self.now_head += 1;
        self.len -= 1;
        self.now = SimTime(e.time);
        self.popped += 1;
        (self.now, e.event)
    }
}

/// A cancellable timer slot: the generation stored in a scheduled event must match the slot's
/// current generation when the event fires, otherwise the event was cancelled or superseded.
/// 16 bytes: "not armed" is `u64::MAX` rather than an `Option` (24 bytes; three per connection).
#[derive(Clone, Copy, Debug)]
pub struct Timer {
    armed_at: u64,
    generation: u32,
}

impl Default for Timer {
    fn default() -> Self {
        Timer { armed_at: NOT_ARMED, generation: 0 }
    }
}

/// `Timer::armed_at` of a disarmed timer. (`SimTime::MAX` is never a firing time: the run ends
/// before it.)
const NOT_ARMED: u64 = u64::MAX;

impl Timer {
    /// Arm (or re-arm) the timer; returns the generation to put in the event.
    pub fn arm(&mut self, at: SimTime) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        // The end of time is never reached (the run stops before): one ns earlier keeps the
        // timer armed and every comparison with a real time as it was.
        self.armed_at = at.0.min(NOT_ARMED - 1);
        self.generation
    }
    /// Cancel: any event carrying an older generation will be ignored.
    pub fn cancel(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.armed_at = NOT_ARMED;
    }
    #[inline]
    pub fn armed_at(&self) -> Option<SimTime> {
        (self.armed_at != NOT_ARMED).then_some(SimTime(self.armed_at))
    }
    /// True (and disarms) if an event with generation `generation` is the live one.
    #[inline]
    pub fn fire(&mut self, generation: u32) -> bool {
        if self.armed_at != NOT_ARMED && generation == self.generation {
            self.armed_at = NOT_ARMED;
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

    /// The timer's "not armed" sentinel (issue 28: 16 bytes, not 24): `armed_at` reports the
    /// time armed, a fired or cancelled timer none, and a timer armed at the end of time stays
    /// armed (one ns earlier) and fires.
    #[test]
    fn timer_reports_its_deadline() {
        let mut t = Timer::default();
        assert_eq!(t.armed_at(), None);
        assert!(!t.fire(0), "a timer never armed does not fire");
        let g = t.arm(SimTime(0));
        assert_eq!(t.armed_at(), Some(SimTime(0)));
        assert!(t.fire(g));
        assert_eq!(t.armed_at(), None);
        let g = t.arm(SimTime(123_456_789));
        assert_eq!(t.armed_at(), Some(SimTime(123_456_789)));
        let g2 = t.arm(SimTime::MAX);
        assert_eq!(t.armed_at(), Some(SimTime(u64::MAX - 1)));
        assert!(!t.fire(g), "superseded");
        assert!(t.fire(g2));
        t.arm(SimTime(5));
        t.cancel();
        assert_eq!(t.armed_at(), None);
        assert_eq!(std::mem::size_of::<Timer>(), 16);
    }

    /// The radix heap against `std`'s binary heap on `(time, seq)`: 10⁶ random operations
    /// (schedules at or after now with many equal times, pops, peeks), the same pops in the
    /// same order.
    #[test]
    fn differential_against_a_binary_heap() {
        use rand::{Rng, SeedableRng};
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = rand_pcg::Pcg64::seed_from_u64(13);
        let mut q: EventQueue<u64> = EventQueue::new();
        let mut reference: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
        let mut now = 0u64;
        let mut pops = 0;
        for op in 0..1_000_000u64 {
            let r = rng.gen_range(0..100);
            if r < 52 {
                // Mostly near the present, sometimes far ahead, often exactly now (ties).
                let dt = match rng.gen_range(0..4) {
                    0 => 0,
                    1 => rng.gen_range(0..1_000),
                    2 => rng.gen_range(0..10_000_000),
                    _ => rng.gen_range(0..u32::MAX as u64) << rng.gen_range(0..20),
                };
                q.schedule(SimTime(now + dt), op);
                // The value is the insertion number: ties must come out in that order.
                reference.push(Reverse((now + dt, op)));
            } else if r < 60 {
                assert_eq!(q.peek_time().map(|t| t.0), reference.peek().map(|Reverse((t, _))| *t));
            } else {
                let got = q.pop();
                let want = reference.pop();
                match (got, want) {
                    (Some((t, v)), Some(Reverse((wt, wv)))) => {
                        assert_eq!((t.0, v), (wt, wv), "op {op}");
                        now = t.0;
                        pops += 1;
                    }
                    (None, None) => {}
                    (g, w) => panic!("op {op}: radix heap {:?}, binary heap {:?}", g.map(|x| x.0), w),
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        assert!(pops > 300_000);
        // Drain: identical to the end, including which event (by insertion) comes out.
        let mut order = Vec::new();
        while let Some((t, v)) = q.pop() {
            order.push((t.0, v));
        }
        assert_eq!(order.len(), reference.len());
        assert!(order.windows(2).all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)));
    }

    /// A peek that settles on a later event, then a schedule before it (the re-base path).
    #[test]
    fn schedule_before_a_peeked_event() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(100), 'b');
        assert_eq!(q.peek_time(), Some(SimTime(100)));
        q.schedule(SimTime(50), 'a');
        q.schedule(SimTime(100), 'c');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, v)| (t.0, v)).collect();
        assert_eq!(order, vec![(50, 'a'), (100, 'b'), (100, 'c')]);
    }
}
