"""The findings model and the per-flow view every rule reads.

A :class:`FlowView` is one TCP sender as the rules see it, whatever the input: a tcplab run
directory (exact sender state from ``trace_tcp.parquet``), a pcap written by tcplab, or a foreign
capture. From a pcap the sender's congestion window, ssthresh and timers are not on the wire: the
reader infers what it can (retransmissions, timeouts, duplicate ACKs, the flight size) and sets
``inferred = True``; every finding drawn from such a view is marked inferred.

A :class:`Finding` says what rule fired, where (times, segments), why (the evidence, citing the
rule's RFC or seed section) and, where it can be estimated, what it cost.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

# Severities: "info" findings describe (ACK ratio, window-limited time); "warning" findings are
# departures from the cited specification that cost or risk throughput; "bug" findings are
# behaviours the cited specification forbids outright.
SEVERITIES = ("info", "warning", "bug")


@dataclass
class Finding:
    rule: str                       # rule id, e.g. "no-window-reduction"
    flow: str
    severity: str                   # one of SEVERITIES
    t_start: float                  # seconds (the event, or the first of a series)
    t_end: float
    summary: str                    # one line: what happened
    cites: str                      # the specification or seed section the rule checks
    evidence: list[str] = field(default_factory=list)   # the trace facts, one per line
    segments: list[int] = field(default_factory=list)   # byte offsets (from the first data byte)
    cost_bytes: float | None = None  # estimated bytes not sent / resent because of it
    cost_s: float | None = None      # estimated seconds lost
    inferred: bool = False           # sender state inferred from a capture
    count: int = 1                   # events folded into this finding
    graph: str | None = None         # file name of its zoomed trace graph (HTML page)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        when = f"{self.t_start:.3f}s" if self.t_end - self.t_start < 1e-9 else f"{self.t_start:.3f}-{self.t_end:.3f}s"
        tag = " (inferred)" if self.inferred else ""
        n = f" x{self.count}" if self.count > 1 else ""
        return f"[{self.severity}] {self.rule}{n} at {when}{tag}: {self.summary}"


@dataclass
class FlowView:
    """One sender's events. Arrays are numpy, time-ordered, seconds; sequence numbers are byte
    offsets from the first data byte (as tcplab's traces and ``tcplab trace`` use)."""
    name: str
    source: str                      # "rundir" | "pcap"
    inferred: bool                   # True: sender state below is inferred from the wire
    mss: int
    variant: str | None = None
    ack_policy: str | None = None    # the receiver policy the scenario declared ("every_packet", ...)
    timer: str | None = None         # "bsd", "fine", "ns2", or None (unknown)
    send_buffer: int | None = None
    total_bytes: int | None = None   # bytes the application wrote (None: unknown)
    initial_window: int = 1          # segments
    # Data segments sent: time, seq, len, retransmission flag.
    send_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    send_seq: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    send_len: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    send_retx: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # ACKs received: time, cumulative ack, newly acked bytes, dup flag.
    ack_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    ack_no: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ack_new: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ack_dup: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    ack_wnd: np.ndarray | None = None   # advertised window on each ACK (pcap), bytes
    dsack: np.ndarray = field(default_factory=lambda: np.zeros(0))  # times of D-SACK blocks
    sack: bool = False               # the receiver sent SACK blocks (the flight is not the pipe then)
    # Loss reactions: coarse timeouts and fast retransmits (time, snd_una).
    timeout_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    timeout_una: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    fastrtx_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fastrtx_una: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # Sender state after each state row (exact from a run directory; None from a pcap).
    st_t: np.ndarray | None = None
    st_kind: np.ndarray | None = None
    st_cwnd: np.ndarray | None = None
    st_ssthresh: np.ndarray | None = None
    st_snd_wnd: np.ndarray | None = None
    st_unacked: np.ndarray | None = None
    st_srtt: np.ndarray | None = None
    st_rto: np.ndarray | None = None
    # Receiver: data arrivals (time, seq, len) when the input shows them.
    recv_t: np.ndarray | None = None
    recv_seq: np.ndarray | None = None
    recv_len: np.ndarray | None = None
    # ACKs the receiver sent: time (to measure its ACK ratio).
    acksent_t: np.ndarray | None = None
    rtt_samples: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (fine) RTTs, s
    notes: list[str] = field(default_factory=list)

    @property
    def has_state(self) -> bool:
        return self.st_t is not None and len(self.st_t) > 0

    def rtt(self) -> float:
        """A typical RTT (median of the samples), or 0.2 s when nothing was measured."""
        if len(self.rtt_samples):
            return float(np.median(self.rtt_samples))
        if self.has_state:
            s = self.st_srtt[self.st_srtt > 0]
            if len(s):
                return float(np.median(s))
        return 0.2

    def min_rtt(self) -> float:
        return float(self.rtt_samples.min()) if len(self.rtt_samples) else self.rtt()

    def state_at(self, t: float, col: str, before: bool = True) -> float | None:
        """Sender state column ``col`` (cwnd, ssthresh, ...) as it stood at ``t`` (the last row at
        or before t; strictly before with ``before``)."""
        if not self.has_state:
            return None
        arr = getattr(self, "st_" + col)
        i = np.searchsorted(self.st_t, t, side="left" if before else "right") - 1
        return None if i < 0 else float(arr[i])

    def first_send_time(self, seq: int) -> float | None:
        m = (self.send_seq == seq) & ~self.send_retx
        if not m.any():
            m = self.send_seq == seq
        return float(self.send_t[m][0]) if m.any() else None

    def last_send_before(self, t: float) -> float | None:
        i = np.searchsorted(self.send_t, t, side="left") - 1
        return None if i < 0 else float(self.send_t[i])
