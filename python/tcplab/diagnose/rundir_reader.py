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
    sides = _every_flow(rd, conns)
    views = []
    for conn in conns:
        snd, rcv, kinds = sides[conn] if sides is not None else _one_flow(rd, conn)
        views.append(_view(rd, conn, declared.get(conn, {}), snd, rcv, kinds))
    return [v for v in views if v is not None]


# The TCP trace columns the rules read (besides conn).
_COLS = ["side", "t_s", "kind", "seq", "len", "snd_una", "cwnd", "ssthresh", "snd_wnd", "unacked", "srtt_s", "rto_s"]


def _every_flow(rd, conns: list[str]) -> dict | None:
    """Per flow its sender's and receiver's rows as numpy columns (:class:`tcplab.cols.Cols`, in
    time order; ``kind`` as codes into the third, the kinds), read in one pass through the core without
    polars (issue 28: importing polars and its queries were most of the report's diagnosis);
    None for a run in memory or a file the core cannot read (then :func:`_one_flow` reads each
    flow with polars)."""
    from ..cols import Cols
    from ..rundir import _TCP_COLS
    got = rd._read_cols("trace_tcp.parquet", "TCP trace", _TCP_COLS, ["conn", *_COLS], raw=True, strings=False)
    if got is None:
        return None
    conn_codes, conn_names = got.codes["conn"]
    side_codes, side_names = got.codes["side"]
    kind_codes, kind_names = got.codes["kind"]
    kinds = np.asarray([*kind_names, ""], dtype=str)  # a null kind (code len(kind_names)) reads ""
    cols = {c: got.cols[c] for c in _COLS if c not in ("side", "kind")}
    cols["kind"] = kind_codes
    # One stable sort groups the rows by (flow, side) in file order.
    group = conn_codes.astype(np.int64) * (len(side_names) + 1) + side_codes
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange((len(conn_names) + 1) * (len(side_names) + 1) + 1))
    out = {}
    for conn in conns:
        pair = []
        for side in ("snd", "rcv"):
            if conn in conn_names and side in side_names:
                g = conn_names.index(conn) * (len(side_names) + 1) + side_names.index(side)
                rows = order[bounds[g]:bounds[g + 1]]
            else:
                rows = np.zeros(0, dtype=np.int64)
            pair.append(Cols({c: v[rows] for c, v in cols.items()}, len(rows)).time_sorted())
        out[conn] = (*pair, kinds)
    return out


def _one_flow(rd, conn: str):
    """A flow's sender's and receiver's rows (RunData.trace, polars) as numpy columns, and None
    (their kinds are strings)."""
    from ..cols import Cols
    return Cols.from_polars(rd.trace(conn, "snd")), Cols.from_polars(rd.trace(conn, "rcv")), None


def _kind_codes(rows, kinds) -> tuple[np.ndarray, np.ndarray]:
    """A side's kinds as (distinct strings, per row its index into them): ``kinds`` and the
    rows' codes when the kinds are codes already (:func:`_every_flow`)."""
    if kinds is not None:
        return kinds, rows["kind"]
    return np.unique(rows["kind"], return_inverse=True)


def _view(rd, conn: str, decl: dict, snd, rcv, kinds) -> FlowView | None:
    if snd.height == 0:
        return None
    info = rd.flow(conn)
    variant = str(info.get("variant", ""))
    t = snd["t_s"]
    seq = snd["seq"].astype(np.int64)
    ln = snd["len"].astype(np.int64)
    # The kinds as codes into their few distinct values: one compare per distinct kind, then a
    # lookup per row (numpy's string compares per row were a third of the reading).
    names, codes = _kind_codes(snd, kinds)
    kind = names[codes]

    def is_(*which: str) -> np.ndarray:
        return np.isin(names, which)[codes]
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
        st_t=t[st], st_kind=kind[st], st_cwnd=snd["cwnd"][st].astype(float),
        st_ssthresh=snd["ssthresh"][st].astype(float),
        st_snd_wnd=snd["snd_wnd"][st].astype(float),
        st_unacked=snd["unacked"][st].astype(float),
        st_srtt=snd["srtt_s"][st], st_rto=snd["rto_s"][st],
    )
    if variant.startswith("lite") and "timestamps" not in (decl.get("params") or {}):
        # Lite counts cwnd in t_maxseg, which keeps the 12 timestamp option bytes (lite.rs).
        v.notes.append("Lite: cwnd counts t_maxseg units including option bytes")
    # Data the receiver saw, and the ACKs it sent (the receiver's side of the same connection).
    if rcv.height:
        rnames, rcodes = _kind_codes(rcv, kinds)
        m = (rnames == "recv")[rcodes]
        rt = rcv["t_s"]
        v.recv_t = rt[m]
        v.recv_seq = rcv["seq"][m].astype(np.int64)
        v.recv_len = rcv["len"][m].astype(np.int64)
        v.acksent_t = rt[(rnames == "ack_sent")[rcodes]]
    sk = is_("sack")
    if sk.any():
        # D-SACK (RFC 2883): a block below the cumulative ACK of its segment.
        v.dsack = t[sk][snd["seq"][sk] < snd["snd_una"][sk]]
    v.rtt_samples = rtt_samples(v)
    return v
