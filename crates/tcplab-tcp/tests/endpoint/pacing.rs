//! Rate pacing (endpoint/pacing.rs, Linux internal pacing): a CC that sets a rate makes data
//! segments leave at exact release times; the first 10 go as a burst; a held segment arms a
//! wake-up at its release time. Uses the helpers of `script.rs`.

use tcplab_tcp::cc::{AckSample, CcWindow, CongestionControl, SenderView};
use tcplab_tcp::*;
use crate::script::*;

/// Reno's window (never the limit here: cwnd is set huge) with a fixed pacing rate.
#[derive(Debug)]
struct FixedRate(u64);

impl CongestionControl for FixedRate {
    fn name(&self) -> &'static str {
        "fixed-rate"
    }
    fn on_ack(&mut self, _w: &mut CcWindow, _s: &AckSample, _v: &SenderView<'_>, _cam: Option<&mut CamTrace>) {}
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.0)
    }
}

/// A sender whose CC paces at `rate` bytes/s with a 40-segment initial window (never the limit).
fn paced_sender(rate: u64) -> Script {
    let mut c = cfg("newreno");
    c.initial_window_segments = 40;
    c.nagle = false; // the short tail segment below is paced, not held by Nagle
    let (_, rec) = c.build_parts();
    let mut e = Endpoint::with_parts(c, C_ISS, Box::new(FixedRate(rate)), rec);
    e.connect(0);
    assert_eq!(drain(&mut e, 0).len(), 1);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 65535, mss: Some(1000), ..Default::default() });
    drain(&mut e, 100 * MS);
    Script { e, now: 100 * MS }
}

#[test]
fn segments_leave_at_exact_paced_times() {
    // 1 MB/s: a 1000-byte segment occupies 1 ms of the release clock.
    let mut s = paced_sender(1_000_000);
    // Linux: the first 10 data segments do not advance the clock; the 10th does, by 1 ms.
    let burst: Vec<(u32, u32)> = (0..10).map(|k| (k * 1000, 1000)).collect();
    s.write(20_000).expect_send(&burst);
    s.check(|e| assert_eq!(e.pacing_next_release(), Some(101 * MS)));
    s.check(|e| assert_eq!(e.next_timer().filter(|t| *t < 200 * MS), Some(101 * MS), "wake-up armed at the release time"));
    // One nanosecond early: nothing; at the release time exactly one segment, then the next.
    s.at_ns(101 * MS - 1).expect_nothing();
    for k in 10..20u32 {
        s.timer_at(101 + (k as u64 - 10)).expect_send(&[(k * 1000, 1000)]);
    }
    s.check(|e| assert_eq!(e.pacing_next_release(), Some(111 * MS)));
}

#[test]
fn the_clock_runs_from_now_after_an_idle_gap_and_scales_with_length() {
    // 2 MB/s: 1000 bytes = 500 µs, 200 bytes = 100 µs.
    let mut s = paced_sender(2_000_000);
    s.write(10_000).expect_send(&(0..10).map(|k| (k * 1000, 1000)).collect::<Vec<_>>());
    s.check(|e| assert_eq!(e.pacing_next_release(), Some(100 * MS + 500_000)));
    // The application is silent until 150 ms: the clock restarts from now (max(next, now)).
    s.at(150).write(1200).expect_send(&[(10_000, 1000)]);
    s.check(|e| assert_eq!(e.pacing_next_release(), Some(150 * MS + 500_000)));
    s.at_ns(150 * MS + 499_999).expect_nothing();
    s.at_ns(150 * MS + 500_000).expect_send(&[(11_000, 200)]);
    s.check(|e| assert_eq!(e.pacing_next_release(), Some(150 * MS + 600_000)));
}

#[test]
fn window_based_ccs_are_never_paced() {
    // newreno sets no rate: its initial window leaves at once and no pacing clock exists.
    let mut c = cfg("newreno");
    c.initial_window_segments = 20;
    let mut s = Script::sender(c, 65535);
    s.write(20_000).expect_send(&(0..20).map(|k| (k * 1000, 1000)).collect::<Vec<_>>());
    s.check(|e| assert_eq!(e.pacing_next_release(), None));
}
