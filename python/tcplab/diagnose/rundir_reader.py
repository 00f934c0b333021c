"""Read a tcplab run directory into :class:`FlowView`s (exact sender state).

The TCP trace (``trace_tcp.parquet``, README "Run directory") has one row per sender/receiver
event with the sender's cwnd, ssthresh, send window, unacked bytes, srtt and (backed-off) RTO
after it; ``summary.json`` names each flow's variant and send buffer, ``scenario.toml`` its
declared ACK policy and timer model.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import polars as pl

from .model import FlowView
from .rtt import rtt_samples

# The receiver ACK policy each variant declares when the scenario names none (README "TCP
# variants": every variant ACKs every segment except the Lite family, 4.4BSD delayed ACKs).
def _default_ack_policy(variant: str) -> str:
    if variant.startswith("lite"):
        return "every_packet" if variant == "lite.5" else "bsd_delayed"
    if variant in ("dctcp", "prague", "modern"):
        return "bsd_delayed"
    return "every_packet"


def _default_timer(variant: str) -> str:
    """The variant's timer model as the core's registry declares it (`tcplab variants`)."""
    from .. import _core
    for name, _description, parts, _params in _core.tcp_variants():
        if name == variant:
            return "fine" if "timer fine" in parts else "bsd"
    return "bsd"


def _scenario_flows(rd) -> dict[str, dict]:
    text = rd.scenario_text
    if not text:
        return {}
    try:
        sc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}
    return {t.get("name", ""): t for t in sc.get("tcp", []) if isinstance(t, dict)}


def read_rundir(path, flow: str | None = None) -> list[FlowView]:
    """The flows of a run directory, or of a RunData already loaded (the report's: its trace rows,
    read once, serve the diagnosis and the graphs)."""
    from ..rundir import RunData
    if isinstance(path, RunData):
        rd, path = path, path.dir
    else:
        rd = RunData.load(path)
    if not rd.has_tcp:
        caps = sorted(p.name for p in Path(path).glob("pcap_*.pcap"))
        hint = (f"; diagnose one of its captures instead: {', '.join(caps)}" if caps else
                "; run it again with run.trace.tcp = true")
        raise ValueError(f"{path}: the run has no TCP trace (trace_tcp.parquet){hint}")
    conns = rd.conns if flow is None else [flow]
    if flow is not None and flow not in rd.conns:
        raise ValueError(f"{path}: no flow {flow!r}; flows: {', '.join(rd.conns)}")
    declared = _scenario_flows(rd)
    views = []
    for conn in conns:
        views.append(_view(rd, conn, declared.get(conn, {})))
    return [v for v in views if v is not None]


def _view(rd, conn: str, decl: dict) -> FlowView | None:
    snd = rd.trace(conn, "snd")
    if snd.height == 0:
        return None
    info = rd.flow(conn)
    variant = str(info.get("variant", ""))
    kind = snd["kind"].to_numpy()
    t = snd["t_s"].to_numpy()
    seq = snd["seq"].to_numpy().astype(np.int64)
    ln = snd["len"].to_numpy().astype(np.int64)
    # The kind masks compared in polars (Rust), not on numpy's object array of Python strings:
    # those compares and np.isin were a third of the report's diagnosis reading (issue 28).
    ks = snd["kind"]

    def is_(*names: str) -> np.ndarray:
        return ks.is_in(list(names)).fill_null(False).to_numpy()
    is_retx = is_("retransmit")
    is_send = is_("send") | is_retx
    data = is_send & (ln > 0)
    is_ack = is_("ack")
    is_dup = is_("dupack")
    acks = is_ack | is_dup
    st = ~is_("recv", "ack_sent", "cam", "sack")
    is_to, is_fr = is_("timeout"), is_("fast_retransmit")
    mss = int(ln[data].max()) if data.any() else 1460
    v = FlowView(
        name=conn, source="rundir", inferred=False, mss=mss, variant=variant,
        ack_policy=str(decl.get("ack_policy") or _default_ack_policy(variant)).replace("-", "_"),
        timer=str(decl.get("timer") or _default_timer(variant)),
        send_buffer=info.get("send_buffer_bytes"),
        total_bytes=info.get("transfer_bytes") or None,
        send_t=t[data], send_seq=seq[data], send_len=ln[data], send_retx=is_retx[data],
        ack_t=t[acks], ack_no=seq[acks], ack_new=np.where(is_ack, ln, 0)[acks], ack_dup=is_dup[acks],
        timeout_t=t[is_to], timeout_una=seq[is_to],
        fastrtx_t=t[is_fr], fastrtx_una=seq[is_fr],
        st_t=t[st], st_kind=kind[st], st_cwnd=snd["cwnd"].to_numpy()[st].astype(float),
        st_ssthresh=snd["ssthresh"].to_numpy()[st].astype(float),
        st_snd_wnd=snd["snd_wnd"].to_numpy()[st].astype(float),
        st_unacked=snd["unacked"].to_numpy()[st].astype(float),
        st_srtt=snd["srtt_s"].to_numpy()[st], st_rto=snd["rto_s"].to_numpy()[st],
    )
    if variant.startswith("lite") and "timestamps" not in (decl.get("params") or {}):
        # Lite counts cwnd in t_maxseg, which keeps the 12 timestamp option bytes (lite.rs).
        v.notes.append("Lite: cwnd counts t_maxseg units including option bytes")
    # Data the receiver saw, and the ACKs it sent (the receiver's side of the same connection).
    rcv = rd.trace(conn, "rcv")
    if rcv.height:
        rk = rcv["kind"]
        m = (rk == "recv").fill_null(False).to_numpy()
        rt = rcv["t_s"].to_numpy()
        v.recv_t = rt[m]
        v.recv_seq = rcv["seq"].to_numpy()[m].astype(np.int64)
        v.recv_len = rcv["len"].to_numpy()[m].astype(np.int64)
        v.acksent_t = rt[(rk == "ack_sent").fill_null(False).to_numpy()]
    sk = snd.filter(pl.col("kind") == "sack")
    if sk.height:
        # D-SACK (RFC 2883): a block below the cumulative ACK of its segment.
        una = sk["snd_una"].to_numpy()
        v.dsack = sk["t_s"].to_numpy()[sk["seq"].to_numpy() < una]
    v.rtt_samples = rtt_samples(v)
    return v
