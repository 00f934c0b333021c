"""Synthetic run directories for the plot/report tests.

``make_synthetic_run(dir, ...)`` runs a tiny, deterministic, pure-Python packet
simulation (a few hundred lines, nothing like the Rust core) and writes a run
directory in exactly the format the core writes (summary.json, trace_tcp.parquet,
trace_link.parquet, trace_cam.parquet for Vegas flows, scenario.toml).

The model is the thesis' Figure 4.2 setting shrunk to its essentials: each flow's
sender feeds an access link into router gw1, which forwards over the bottleneck
``gw1->gw2`` (default 200 KB/s, 10-packet DropTail queue); the receiver ACKs every
second segment (immediately when out of order) and ACKs return over a fixed delay.
The Reno sender is BSD-like: slow start, congestion avoidance, fast retransmit
after 3 dup ACKs with fast recovery (window inflation), and a coarse 500 ms
retransmit timer whose ticks are recorded while data is outstanding. With a 64 KB
send window the initial slow start overruns the queue and loses several segments
in one window, which costs Reno a coarse timeout; later losses in congestion
avoidance are patched by fast retransmit -- the shape of thesis Fig. 4.1.

A crude Vegas (Expected/Actual once per RTT, alpha=1, beta=3, slow start every
other RTT, leave slow start at gamma=1) can be selected with ``variant="vegas"``;
it writes CAM rows. It is a test-data generator, not a reference implementation.
"""

from __future__ import annotations

import heapq
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

KB = 1024
TICK_S = 0.5
FAST_TICK_S = 0.2
HDR = 40

TCP_SCHEMA = pa.schema(
    [
        ("conn", pa.string()),
        ("side", pa.string()),
        ("t_s", pa.float64()),
        ("kind", pa.string()),
        ("snd_una", pa.uint64()),
        ("snd_nxt", pa.uint64()),
        ("cwnd", pa.uint64()),
        ("ssthresh", pa.uint64()),
        ("snd_wnd", pa.uint64()),
        ("unacked", pa.uint64()),
        ("srtt_s", pa.float64()),
        ("rto_s", pa.float64()),
        ("seq", pa.uint64()),
        ("len", pa.uint32()),
    ]
)
LINK_SCHEMA = pa.schema(
    [
        ("link", pa.string()),
        ("t_s", pa.float64()),
        ("event", pa.string()),
        ("bytes", pa.uint32()),
        ("qlen_pkts", pa.uint32()),
        ("reason", pa.string()),
    ]
)
CAM_SCHEMA = pa.schema(
    [
        ("conn", pa.string()),
        ("t_s", pa.float64()),
        ("expected_KBps", pa.float64()),
        ("actual_KBps", pa.float64()),
        ("diff_buffers", pa.float64()),
        ("alpha", pa.float64()),
        ("beta", pa.float64()),
        ("decision", pa.int8()),
    ]
)


class _Sim:
    def __init__(self):
        self.q: list = []
        self.n = 0
        self.now = 0.0

    def at(self, t, fn, *args):
        self.n += 1
        heapq.heappush(self.q, (t, self.n, fn, args))

    def run(self, until):
        while self.q:
            t, _, fn, args = heapq.heappop(self.q)
            if t > until:
                break
            self.now = t
            fn(*args)
        return self.now


@dataclass
class _Pkt:
    flow: int
    seq: int
    len: int
    wire: int


class _Link:
    def __init__(self, sim, name, rate_Bps, delay_s, cap_pkts, rows, deliver):
        self.sim, self.name, self.rate, self.delay, self.cap = sim, name, rate_Bps, delay_s, cap_pkts
        self.rows, self.deliver = rows, deliver
        self.queue: list[_Pkt] = []
        self.busy = False
        self.busy_time = 0.0
        self.pk_fwd = self.by_fwd = 0
        self.drops = 0
        self.q_area = 0.0
        self.q_last_t = 0.0
        self.q_max = 0

    def _log(self, ev, pkt, reason=""):
        self.rows.append((self.name, self.sim.now, ev, pkt.wire, len(self.queue), reason))

    def _q_account(self):
        self.q_area += len(self.queue) * (self.sim.now - self.q_last_t)
        self.q_last_t = self.sim.now

    def arrive(self, pkt):
        self._q_account()
        if not self.busy:
            self._log("arrive", pkt)
            self._start(pkt)
        elif len(self.queue) >= self.cap:
            self.drops += 1
            self._log("drop", pkt, "queue_overflow")
        else:
            self.queue.append(pkt)
            self.q_max = max(self.q_max, len(self.queue))
            self._log("arrive", pkt)

    def _start(self, pkt):
        self.busy = True
        tx = pkt.wire / self.rate
        self.busy_time += tx
        self.sim.at(self.sim.now + tx, self._depart, pkt)

    def _depart(self, pkt):
        self._q_account()
        self.pk_fwd += 1
        self.by_fwd += pkt.wire
        self.busy = False
        nxt = self.queue.pop(0) if self.queue else None
        self._log("depart", pkt)
        self.sim.at(self.sim.now + self.delay, self.deliver, pkt)
        if nxt is not None:
            self._start(nxt)


@dataclass
class _Flow:
    idx: int
    name: str
    variant: str
    transfer: int | None
    mss: int
    wnd: int
    start_s: float
    tick_phase: float
    ack_delay_s: float
    rows: list
    cam_rows: list
    # sender state
    snd_una: int = 0
    snd_nxt: int = 0
    snd_max: int = 0
    cwnd: int = 0
    ssthresh: int = 65535
    dupacks: int = 0
    recovery: bool = False
    rexmt_ticks: int = 0  # 0 = timer off
    rto_s: float = 3.0
    backoff: int = 1
    srtt: float = 0.0
    rttvar: float = 0.0
    timing: tuple | None = None  # (seq, t_sent)
    done_t: float | None = None
    sent_segments: int = 0
    retx_segments: int = 0
    retx_bytes: int = 0
    timeouts: int = 0
    fast_retx: int = 0
    max_cwnd: int = 0
    last_send_t: float = 0.0
    largest_gap: float = 0.0
    # Vegas
    base_rtt: float = math.inf
    vmark: tuple | None = None  # (seq_end, t_sent, cwnd_at_send)
    v_ss: bool = True
    v_grow: bool = True
    # receiver
    rcv_nxt: int = 0
    ooo: dict = field(default_factory=dict)
    unacked_segs: int = 0
    delack_pending: bool = False


def _outstanding(f: _Flow):
    return f.snd_max > f.snd_una


def make_synthetic_run(
    dir,
    *,
    flows: int | list[str] = 1,
    variant: str | list[str] = "reno",
    transfer_bytes: int | None = 1024 * 1024,
    duration_s: float = 30.0,
    mss: int = 1400,
    send_window: int = 64 * 1024,
    rate_KBps: float = 200.0,
    queue_pkts: int = 10,
    delay_s: float = 0.045,
    access_rate_KBps: float = 1250.0,
    seed: int = 1,
    bottleneck_key: bool = True,
    with_cam_file: bool = True,
    scenario_name: str = "synthetic",
) -> Path:
    """Write a synthetic run directory at ``dir`` and return its path.

    ``flows`` is a count or a list of flow names; ``variant`` one name or one per flow
    ("reno" or "vegas"). ``transfer_bytes=None`` makes timed transfers of ``duration_s``.
    Flows start 0.25 s apart. Deterministic for given arguments (``seed`` shifts the
    timer phases and start offsets only)."""
    out = Path(dir)
    out.mkdir(parents=True, exist_ok=True)
    names = [f"flow{i + 1}" for i in range(flows)] if isinstance(flows, int) else list(flows)
    variants = [variant] * len(names) if isinstance(variant, str) else list(variant)
    assert len(variants) == len(names)

    sim = _Sim()
    tcp_rows: list = []
    cam_rows: list = []
    link_rows: list = []
    fl: list[_Flow] = []
    for i, (nm, var) in enumerate(zip(names, variants)):
        fl.append(
            _Flow(
                idx=i, name=nm, variant=var, transfer=transfer_bytes, mss=mss, wnd=send_window,
                start_s=0.05 + 0.25 * i + 0.001 * (seed % 7), tick_phase=((seed * 0.137 + i * 0.211) % 1.0) * TICK_S,
                ack_delay_s=delay_s + 0.005 * i, rows=tcp_rows, cam_rows=cam_rows, cwnd=mss,
            )
        )

    def rec(f: _Flow, kind, seq=0, ln=0):
        tcp_rows.append(
            (f.name, "snd", sim.now, kind, f.snd_una, f.snd_nxt, f.cwnd, f.ssthresh, f.wnd,
             f.snd_max - f.snd_una, f.srtt, f.rto_s * f.backoff, seq, ln)
        )

    def rrec(f: _Flow, kind, seq, ln):
        tcp_rows.append((f.name, "rcv", sim.now, kind, 0, 0, 0, 0, 0, 0, 0.0, 0.0, seq, ln))

    def rto_ticks(f):
        return max(2, math.ceil(f.rto_s * f.backoff / TICK_S) + 1)

    # --- topology -----------------------------------------------------------------
    def to_receiver(pkt):
        receive(fl[pkt.flow], pkt)

    bott = _Link(sim, "gw1->gw2", rate_KBps * KB, delay_s, queue_pkts, link_rows, to_receiver)
    access = _Link(sim, "host->gw1", access_rate_KBps * KB, 0.001, 1000, link_rows, bott.arrive)

    # --- sender -------------------------------------------------------------------
    def limit(f):
        return f.transfer if f.transfer is not None else 1 << 62

    def send_seg(f: _Flow, seq):
        ln = min(f.mss, limit(f) - seq)
        if ln <= 0:
            return False
        retx = seq < f.snd_max
        f.snd_nxt = seq + ln
        f.snd_max = max(f.snd_max, f.snd_nxt)
        f.sent_segments += 1
        if retx:
            f.retx_segments += 1
            f.retx_bytes += ln
        if f.sent_segments > 1:
            f.largest_gap = max(f.largest_gap, sim.now - f.last_send_t)
        f.last_send_t = sim.now
        rec(f, "retransmit" if retx else "send", seq, ln)
        if not retx and f.timing is None:
            f.timing = (seq, sim.now)
        if f.variant == "vegas" and f.vmark is None and not retx:
            f.vmark = (seq + ln, sim.now, f.cwnd)
        if f.rexmt_ticks == 0:
            f.rexmt_ticks = rto_ticks(f)
        access.arrive(_Pkt(f.idx, seq, ln, ln + HDR))
        return True

    def output(f: _Flow):
        if f.done_t is not None:
            return
        while True:
            ln = min(f.mss, limit(f) - f.snd_nxt)
            if ln <= 0:
                break
            if f.snd_nxt + ln - f.snd_una > min(f.cwnd, f.wnd):
                break
            send_seg(f, f.snd_nxt)

    def on_ack(f: _Flow, ackno):
        if f.done_t is not None:
            return
        if ackno > f.snd_una:
            if f.timing is not None and ackno > f.timing[0]:
                sample = sim.now - f.timing[1]
                if f.srtt == 0.0:
                    f.srtt, f.rttvar = sample, sample / 2
                else:
                    f.rttvar += 0.25 * (abs(sample - f.srtt) - f.rttvar)
                    f.srtt += 0.125 * (sample - f.srtt)
                f.rto_s = min(64.0, max(1.0, f.srtt + 4 * f.rttvar))
                f.backoff = 1
                f.base_rtt = min(f.base_rtt, sample)
                f.timing = None
            f.snd_una = ackno
            if f.snd_nxt < f.snd_una:
                f.snd_nxt = f.snd_una
            if f.recovery:
                f.recovery = False
                f.cwnd = f.ssthresh
                f.dupacks = 0
                rec(f, "ack")
                rec(f, "recovery_exit")
            else:
                f.dupacks = 0
                if f.variant == "vegas":
                    vegas_ack(f, ackno)
                elif f.cwnd < f.ssthresh:
                    f.cwnd += f.mss
                else:
                    f.cwnd += max(1, f.mss * f.mss // f.cwnd)
                f.cwnd = min(f.cwnd, 4 * f.wnd)
                rec(f, "ack")
            f.rexmt_ticks = rto_ticks(f) if _outstanding(f) else 0
            if f.snd_una >= limit(f):
                f.done_t = sim.now
                f.rexmt_ticks = 0
                return
        elif ackno == f.snd_una and _outstanding(f):
            f.dupacks += 1
            rec(f, "dupack")
            if f.dupacks == 3:
                f.ssthresh = max(2, min(f.cwnd, f.wnd) // 2 // f.mss) * f.mss
                f.fast_retx += 1
                rec(f, "fast_retransmit", f.snd_una, 0)
                f.rexmt_ticks = 0
                f.timing = None
                nxt = f.snd_nxt
                f.cwnd = f.mss
                send_seg(f, f.snd_una)
                f.snd_nxt = max(nxt, f.snd_nxt)
                f.cwnd = f.ssthresh + 3 * f.mss
                f.recovery = True
                rec(f, "recovery_enter")
            elif f.dupacks > 3:
                f.cwnd += f.mss
        f.max_cwnd = max(f.max_cwnd, f.cwnd)
        output(f)

    def vegas_ack(f: _Flow, ackno):
        if f.v_ss and f.v_grow and f.cwnd < f.ssthresh:
            f.cwnd += f.mss
        if f.vmark is None or ackno < f.vmark[0] or not math.isfinite(f.base_rtt):
            return
        _, t_sent, cw = f.vmark
        rtt = max(sim.now - t_sent, 1e-6)
        expected = cw / f.base_rtt / KB
        actual = cw / rtt / KB
        diff = (expected - actual) * f.base_rtt * KB / f.mss
        if f.v_ss:
            if diff > 1.0:
                f.v_ss = False
                f.ssthresh = f.cwnd
                decision = 3
            else:
                decision = 2 if f.v_grow else 0
                f.v_grow = not f.v_grow
        elif diff < 1.0:
            f.cwnd += f.mss
            decision = 1
        elif diff > 3.0:
            f.cwnd = max(2 * f.mss, f.cwnd - f.mss)
            decision = -1
        else:
            decision = 0
        cam_rows.append((f.name, sim.now, expected, actual, diff, 1.0, 3.0, decision))
        f.vmark = None

    def slow_tick(f: _Flow):
        if f.done_t is None:
            sim.at(sim.now + TICK_S, slow_tick, f)
        else:
            return
        if not _outstanding(f):
            return
        rec(f, "slow_tick")
        if f.rexmt_ticks > 0:
            f.rexmt_ticks -= 1
            if f.rexmt_ticks == 0:
                f.timeouts += 1
                f.ssthresh = max(2, min(f.cwnd, f.wnd) // 2 // f.mss) * f.mss
                f.cwnd = f.mss
                f.snd_nxt = f.snd_una
                f.dupacks = 0
                f.recovery = False
                f.timing = None
                f.vmark = None
                f.backoff = min(64, f.backoff * 2)
                rec(f, "timeout", f.snd_una, 0)
                output(f)

    # --- receiver -----------------------------------------------------------------
    def send_ack(f: _Flow):
        f.unacked_segs = 0
        ackno = f.rcv_nxt
        rrec(f, "ack_sent", ackno, 0)
        sim.at(sim.now + f.ack_delay_s, on_ack, f, ackno)

    def fast_tick(f: _Flow):
        f.delack_pending = False
        if f.unacked_segs > 0:
            send_ack(f)

    def receive(f: _Flow, pkt: _Pkt):
        rrec(f, "recv", pkt.seq, pkt.len)
        if pkt.seq == f.rcv_nxt:
            f.rcv_nxt += pkt.len
            filled = False
            while f.rcv_nxt in f.ooo:
                f.rcv_nxt += f.ooo.pop(f.rcv_nxt)
                filled = True
            f.unacked_segs += 1
            if filled or f.unacked_segs >= 2 or f.ooo:
                send_ack(f)
            elif not f.delack_pending:
                f.delack_pending = True
                nxt = (math.floor(sim.now / FAST_TICK_S) + 1) * FAST_TICK_S
                sim.at(nxt, fast_tick, f)
        else:
            if pkt.seq > f.rcv_nxt:
                f.ooo[pkt.seq] = pkt.len
            send_ack(f)

    for f in fl:
        sim.at(f.start_s, output, f)
        sim.at(f.start_s + f.tick_phase + 1e-9, slow_tick, f)

    end = sim.run(duration_s if transfer_bytes is None else 600.0)
    if transfer_bytes is None:
        end = duration_s
    else:
        end = max((f.done_t or end) for f in fl)

    # --- write files ----------------------------------------------------------------
    cols = list(zip(*tcp_rows))
    pq.write_table(pa.Table.from_arrays([pa.array(c, type=t.type) for c, t in zip(cols, TCP_SCHEMA)], schema=TCP_SCHEMA),
                   out / "trace_tcp.parquet")
    lcols = list(zip(*link_rows))
    pq.write_table(pa.Table.from_arrays([pa.array(c, type=t.type) for c, t in zip(lcols, LINK_SCHEMA)], schema=LINK_SCHEMA),
                   out / "trace_link.parquet")
    if with_cam_file:
        ccols = list(zip(*cam_rows)) if cam_rows else [[] for _ in CAM_SCHEMA]
        pq.write_table(pa.Table.from_arrays([pa.array(c, type=t.type) for c, t in zip(ccols, CAM_SCHEMA)], schema=CAM_SCHEMA),
                       out / "trace_cam.parquet")

    links = []
    for lk in (access, bott):
        links.append({
            "name": lk.name, "packets_forwarded": lk.pk_fwd, "bytes_forwarded": lk.by_fwd, "drops": lk.drops,
            "drops_by_reason": {"queue_overflow": lk.drops} if lk.drops else {},
            "utilization": min(1.0, lk.busy_time / end), "queue_avg_pkts": lk.q_area / end,
            "queue_max_pkts": lk.q_max, "rate_bps": lk.rate * 8, "queue_limit_pkts": lk.cap,
        })
    flows_out = []
    for f in fl:
        dur = (f.done_t if f.done_t is not None else end) - f.start_s
        flows_out.append({
            "name": f.name, "variant": f.variant, "bytes_acked": f.snd_una,
            "throughput_KBps": f.snd_una / KB / dur if dur > 0 else 0.0,
            "completion_s": f.done_t, "segments_sent": f.sent_segments,
            "retransmitted_segments": f.retx_segments, "retransmitted_bytes": f.retx_bytes,
            "coarse_timeouts": f.timeouts, "largest_timeout_gap_s": f.largest_gap,
            "fast_retransmits": f.fast_retx, "max_cwnd_bytes": f.max_cwnd,
            "transfer_bytes": transfer_bytes, "mss": f.mss,
        })
    summary = {
        "tcplab_version": "0.0.0-synthetic", "scenario": scenario_name, "seed": seed, "sim_end_s": end,
        "wall_s": 0.0, "events": sim.n, "links": links, "flows": flows_out,
    }
    if bottleneck_key:
        summary["bottleneck"] = bott.name
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "scenario.toml").write_text(
        f'name = "{scenario_name}"\nseed = {seed}\n# synthetic run written by tests/synthrun.py\n'
        f'[links."gw1->gw2"]\nrate = "{rate_KBps}KB/s"\nqueue_pkts = {queue_pkts}\n'
    )
    # The completion marker every reader checks (tcplab.rundir.seal), written last as the core's
    # writer does.
    from tcplab.rundir import seal
    seal(out)
    return out


if __name__ == "__main__":  # pragma: no cover - manual use
    import sys

    p = make_synthetic_run(sys.argv[1] if len(sys.argv) > 1 else "/tmp/synth")
    print(json.dumps(json.loads((p / "summary.json").read_text())["flows"], indent=1))
