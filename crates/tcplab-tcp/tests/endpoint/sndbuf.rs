//! Linux's send buffer (`send_buffer_linux`, endpoint/sndbuf.rs): segments cost payload + 832
//! bytes of skb truesize, a writer that filled the buffer writes again only when a third of it
//! is free (`__sk_stream_is_writeable`), and each write runs `tcp_rate_check_app_limited` — in
//! loss recovery too, with the recovery's pipe as the data in flight.

use std::sync::{Arc, Mutex};
use tcplab_tcp::cc::{AckSample, CcWindow, CongestionControl, SenderView};
use tcplab_tcp::config::{RecoveryKind, TimerModel};
use tcplab_tcp::*;
use crate::script::*;

/// A window that never binds; records every app-limited mark with its data in flight.
#[derive(Debug, Default)]
struct Marks(Arc<Mutex<Vec<u64>>>);

impl CongestionControl for Marks {
    fn name(&self) -> &'static str {
        "marks"
    }
    fn on_ack(&mut self, _w: &mut CcWindow, _s: &AckSample, _v: &SenderView<'_>, _cam: Option<&mut CamTrace>) {}
    fn on_app_limited(&mut self) {
        self.0.lock().unwrap().push(u64::MAX);
    }
    fn on_app_limited_in_flight(&mut self, in_flight: u64) {
        self.0.lock().unwrap().push(in_flight);
    }
}

/// A BBR-hooked sender with RACK-TLP, MSS 1000, a 40-segment window and a Linux send buffer of
/// exactly ten segments' truesize (10 × 1832 bytes), established at 100 ms; the bulk writer
/// has written.
fn linux_buffer(linux: bool) -> (Script, Arc<Mutex<Vec<u64>>>) {
    let mut c = cfg("bbr");
    c.variant.recovery = RecoveryKind::Rack;
    c.initial_window_segments = 40;
    c.initial_ssthresh = 1 << 30;
    c.send_buffer = 10 * (1000 + 832);
    c.send_buffer_linux = linux;
    c.timer_model = TimerModel::Fine { granularity: MS, min_rto: 200 * MS, initial_rto: SEC };
    let marks = Marks::default();
    let log = marks.0.clone();
    let (_, rec) = c.build_parts();
    let mut e = Endpoint::with_parts(c, C_ISS, Box::new(marks), rec);
    e.connect(0);
    drain(&mut e, 0);
    e.on_segment(100 * MS, &Segment { seq: S_ISS, ack: C_ISS + 1, flags: SYNACK, wnd: 1 << 20, mss: Some(1000), sack_ok: true, ..Default::default() });
    drain(&mut e, 100 * MS);
    let mut s = Script { e, now: 100 * MS };
    s.write(u64::MAX);
    (s, log)
}

fn sack_ack(k: u32, blocks: &[(u32, u32)]) -> Segment {
    let mut a = ack(k, 65535);
    for &(l, r) in blocks {
        a.sack.push(C_ISS + 1 + l, C_ISS + 1 + r);
    }
    a
}

fn segs(from: u32, to: u32) -> Vec<(u32, u32)> {
    (from..to).map(|k| (k * 1000, 1000)).collect()
}

#[test]
fn the_writer_refills_only_when_a_third_of_the_buffer_is_free() {
    let (mut s, marks) = linux_buffer(true);
    // A full buffer: ten segments of truesize 1832 reach the 18,320-byte buffer.
    assert_eq!(data(&drain(&mut s.e, s.now)), segs(0, 10));
    // 8 queued = 14,656 bytes > 2/3 of the buffer: the writer stays asleep, nothing new.
    s.e.on_segment(300 * MS, &ack(2000, 1 << 20));
    assert_eq!(data(&drain(&mut s.e, 300 * MS)), vec![]);
    // 6 queued = 10,992 ≤ 12,213: it wakes and fills the buffer again (four more segments).
    s.e.on_segment(301 * MS, &ack(4000, 1 << 20));
    assert_eq!(data(&drain(&mut s.e, 301 * MS)), segs(10, 14));
    // The first write (nothing sent) and the woken write (all sent, 6,000 in flight < cwnd).
    assert_eq!(*marks.lock().unwrap(), vec![0, 6000]);
}

#[test]
fn payload_accounting_refills_at_once_and_marks_nothing_here() {
    let (mut s, marks) = linux_buffer(false);
    // 18,320 payload bytes: 18 whole segments at once (the short tail waits for Nagle), where
    // Linux's accounting lets only 10 go.
    let first = data(&drain(&mut s.e, s.now));
    assert_eq!(&first[..18], &segs(0, 18)[..]);
    s.e.on_segment(300 * MS, &ack(2000, 1 << 20));
    assert_eq!(data(&drain(&mut s.e, 300 * MS)).iter().map(|d| d.1).sum::<u32>(), 2000);
    assert!(marks.lock().unwrap().iter().all(|&m| m == u64::MAX), "the Linux writer's mark is off");
}

#[test]
fn a_write_in_recovery_marks_app_limited_with_the_pipe() {
    let (mut s, marks) = linux_buffer(true);
    assert_eq!(data(&drain(&mut s.e, s.now)), segs(0, 10));
    // 4000 acknowledged, 5000..10000 SACKed, 4000..5000 missing: RACK marks it lost (five
    // SACKed segments sent with it, the reordering window 0), it is retransmitted at once;
    // then the writer, woken (6 queued), finds nothing unsent, the pipe (1000: the
    // retransmission) below cwnd and every lost segment resent: app-limited, in recovery,
    // counted with the pipe, not the 6000 unacknowledged. The five SACKed segments are one
    // merged skb (`tcp_shift_skb_data`): 6000 + 2 × 832 bytes queued, so the writer adds
    // ⌈(18,320 − 7,664) / 1,832⌉ = 6 segments (4 if each SACKed segment kept its overhead).
    s.e.on_segment(300 * MS, &sack_ack(4000, &[(5000, 10000)]));
    let out = data(&drain(&mut s.e, 300 * MS));
    assert!(s.e.in_recovery());
    assert_eq!(out[0], (4000, 1000), "the retransmission goes first");
    assert_eq!(&out[1..], &segs(10, 16)[..], "then the woken writer's data");
    assert_eq!(*marks.lock().unwrap(), vec![0, 1000]);
}
