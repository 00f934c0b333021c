"""Read TCP senders from a pcap: one written by tcplab (``pcap_<a>-<b>.pcap``, LINKTYPE_RAW IPv4,
nanosecond stamps; the reverse direction's file beside it is read too) or any capture (Ethernet,
Linux cooked, raw IP; pcap or pcapng) — parsed with dpkt.

What the wire shows is kept exact: data segments (first sends and retransmissions), ACKs,
duplicate ACKs (RFC 5681 §2: no data, same window, same ACK, data outstanding), advertised
windows, D-SACK blocks. What it does not show is inferred and the view is marked ``inferred``:
a retransmission of the lowest unacknowledged byte after three duplicate ACKs is a fast
retransmit, any other one a timeout; there is no cwnd, ssthresh or RTO.
"""
from __future__ import annotations

import socket
import struct
import sys
from pathlib import Path

import numpy as np

from .model import FlowView
from .rtt import rtt_samples


def _packets(path: Path):
    import dpkt
    with open(path, "rb") as fh:
        try:
            rd = dpkt.pcap.Reader(fh)
        except ValueError:
            fh.seek(0)
            try:
                rd = dpkt.pcapng.Reader(fh)
            except ValueError as e:
                raise ValueError(f"{path}: not a pcap or pcapng file ({e})") from None
        link = rd.datalink()
        for ts, buf in _records(rd, path):
            try:
                if link == dpkt.pcap.DLT_EN10MB:
                    ip = dpkt.ethernet.Ethernet(buf).data
                elif link == dpkt.pcap.DLT_LINUX_SLL:
                    ip = dpkt.sll.SLL(buf).data
                elif link in (dpkt.pcap.DLT_RAW, 101, 228):
                    ip = dpkt.ip.IP(buf) if buf and buf[0] >> 4 == 4 else dpkt.ip6.IP6(buf)
                elif link == dpkt.pcap.DLT_NULL:
                    ip = dpkt.loopback.Loopback(buf).data
                else:
                    raise ValueError(f"{path}: unsupported link type {link}")
            except (dpkt.UnpackError, IndexError, struct.error):
                continue
            tcp = getattr(ip, "data", None)
            if not isinstance(tcp, dpkt.tcp.TCP):
                continue
            fam = socket.AF_INET if isinstance(ip, dpkt.ip.IP) else socket.AF_INET6
            # The payload length from the IP header: tcplab's pcaps store headers only.
            if isinstance(ip, dpkt.ip.IP):
                plen = ip.len - ip.hl * 4 - tcp.off * 4
            else:
                plen = ip.plen - tcp.off * 4
            yield (float(ts), socket.inet_ntop(fam, ip.src), tcp.sport, socket.inet_ntop(fam, ip.dst), tcp.dport,
                   tcp.seq, tcp.ack, tcp.flags, tcp.win, max(plen, 0), tcp.opts)


def _records(rd, path: Path):
    """The reader's records; a capture cut short (a killed tcpdump) ends at its last whole record."""
    import dpkt
    it = iter(rd)
    while True:
        try:
            yield next(it)
        except StopIteration:
            return
        except (dpkt.NeedData, dpkt.UnpackError, struct.error, ValueError):
            print(f"tcplab diagnose: {path}: truncated capture, read up to its last whole record", file=sys.stderr)
            return


def _companion(path: Path) -> Path | None:
    """tcplab writes one file per link direction: pcap_A-B.pcap and pcap_B-A.pcap."""
    n = path.name
    if n.startswith("pcap_") and n.endswith(".pcap") and n.count("-") == 1:
        a, b = n[5:-5].split("-")
        p = path.with_name(f"pcap_{b}-{a}.pcap")
        return p if p.is_file() else None
    return None


def _sack_blocks(opts: bytes) -> list[tuple[int, int]]:
    import dpkt
    out = []
    try:
        for kind, data in dpkt.tcp.parse_opts(opts):
            if kind == 5:
                out += [struct.unpack("!II", data[i:i + 8]) for i in range(0, len(data) - 7, 8)]
    except (dpkt.UnpackError, struct.error):
        pass
    return out


def _wscale(opts: bytes) -> int:
    import dpkt
    try:
        for kind, data in dpkt.tcp.parse_opts(opts):
            if kind == 3 and data:
                return min(data[0], 14)
    except (dpkt.UnpackError, struct.error):
        pass
    return 0


def read_pcap(path: str | Path, flow: str | None = None) -> list[FlowView]:
    path = Path(path)
    pkts = list(_packets(path))
    comp = _companion(path)
    if comp is not None:
        pkts += list(_packets(comp))
    pkts.sort(key=lambda p: p[0])
    conns: dict[tuple, list] = {}
    for p in pkts:
        a, b = (p[1], p[2]), (p[3], p[4])
        conns.setdefault(tuple(sorted([a, b])), []).append(p)
    views = []
    for key, ps in conns.items():
        v = _view(ps)
        if v is not None and (flow is None or v.name == flow):
            views.append(v)
    if flow is not None and not views:
        raise ValueError(f"{path}: no TCP flow {flow!r} with data")
    return views


def _view(ps) -> FlowView | None:
    sent: dict[tuple, int] = {}
    for p in ps:
        sent[(p[1], p[2])] = sent.get((p[1], p[2]), 0) + p[9]
    src = max(sent, key=sent.get)
    if sent[src] == 0:
        return None
    fwd = [p for p in ps if (p[1], p[2]) == src]
    rev = [p for p in ps if (p[1], p[2]) != src]
    syn = [p for p in fwd if p[7] & 0x02]
    isn = (syn[0][5] + 1) if syn else min(p[5] for p in fwd if p[9] > 0)
    rsyn = [p for p in rev if p[7] & 0x02]
    wscale = _wscale(rsyn[0][10]) if rsyn and syn and _wscale(syn[0][10]) else 0
    rel = lambda s: (s - isn) % (1 << 32)  # noqa: E731 - relative sequence, one wrap at most
    data = [p for p in fwd if p[9] > 0]
    mss = max(p[9] for p in data)
    send_t, send_seq, send_len, send_retx = [], [], [], []
    top = 0
    for p in data:
        s = rel(p[5])
        send_t.append(p[0]); send_seq.append(s); send_len.append(p[9]); send_retx.append(s < top)
        top = max(top, s + p[9])
    ack_t, ack_no, ack_new, ack_dup, ack_wnd, dsack = [], [], [], [], [], []
    una, last_wnd, sack_seen = 0, None, False
    si = 0
    hi = 0   # highest byte sent by the time of the ACK
    for p in rev:
        if not p[7] & 0x10 or (p[7] & 0x02):
            continue
        while si < len(send_t) and send_t[si] <= p[0]:
            hi = max(hi, send_seq[si] + send_len[si])
            si += 1
        a = rel(p[6])
        if a > (1 << 31):
            continue
        wnd = p[8] << wscale
        dup = p[9] == 0 and a == una and wnd == last_wnd and hi > una
        ack_t.append(p[0]); ack_no.append(a); ack_new.append(max(a - una, 0)); ack_dup.append(dup); ack_wnd.append(wnd)
        for l, r in _sack_blocks(p[10]):
            sack_seen = True
            if rel(r) <= a:
                dsack.append(p[0])
        una = max(una, a)
        last_wnd = wnd
    v = FlowView(name=f"{src[0]}:{src[1]}>{ps[0][3] if (ps[0][1], ps[0][2]) == src else ps[0][1]}:"
                      f"{ps[0][4] if (ps[0][1], ps[0][2]) == src else ps[0][2]}",
                 source="pcap", inferred=True, mss=mss, timer=None,
                 send_t=np.array(send_t), send_seq=np.array(send_seq, dtype=np.int64),
                 send_len=np.array(send_len, dtype=np.int64), send_retx=np.array(send_retx, dtype=bool),
                 ack_t=np.array(ack_t), ack_no=np.array(ack_no, dtype=np.int64),
                 ack_new=np.array(ack_new, dtype=np.int64), ack_dup=np.array(ack_dup, dtype=bool),
                 ack_wnd=np.array(ack_wnd, dtype=np.int64), dsack=np.array(dsack), sack=sack_seen)
    v.ack_policy = None
    _infer_reactions(v)
    v.rtt_samples = rtt_samples(v)
    v.notes.append("sender state inferred from the capture: no cwnd, ssthresh or RTO; "
                   "retransmissions after 3 dup ACKs taken as fast retransmits, others as timeouts")
    return v


def _infer_reactions(v: FlowView) -> None:
    """Classify each retransmission of the lowest unacknowledged byte: after a silence of at
    least max(200 ms, 1.5 RTT) with no ACK and no send it is a timeout; right after a duplicate
    ACK (within a quarter RTT), the first one for that byte is a fast retransmit; anything else
    (after a new ACK: go-back-N or a partial ACK's retransmission) continues a recovery."""
    rtt = float(np.median(rtt_samples(v))) if len(v.send_t) and len(v.ack_t) else 0.2
    quiet = max(0.2, 1.5 * rtt)
    fr_t, fr_u, to_t, to_u = [], [], [], []
    for t, s in zip(v.send_t[v.send_retx], v.send_seq[v.send_retx]):
        before = v.ack_t < t
        if not before.any():
            continue
        una = v.ack_no[before].max()
        if s != una:
            continue
        last_ack = float(v.ack_t[before].max())
        prev_send = v.send_t[v.send_t < t]
        last_send = float(prev_send.max()) if len(prev_send) else 0.0
        if t - max(last_ack, last_send) >= quiet:
            to_t.append(t); to_u.append(s)
            continue
        k = int(np.nonzero(before)[0][-1])
        if v.ack_dup[k] and t - last_ack <= max(0.002, rtt / 4) and not any(u == s for u in fr_u):
            fr_t.append(t); fr_u.append(s)
    v.fastrtx_t, v.fastrtx_una = np.array(fr_t), np.array(fr_u, dtype=np.int64)
    v.timeout_t, v.timeout_una = np.array(to_t), np.array(to_u, dtype=np.int64)


def as_run(views: list[FlowView]):
    """An in-memory run of the pcap's flows (inferred trace rows) so that the trace graph can
    draw them: unacked bytes and the advertised window; no cwnd (drawn as the flight)."""
    import polars as pl
    from ..rundir import RunData
    rows = []
    for v in views:
        for t, s, l, r in zip(v.send_t, v.send_seq, v.send_len, v.send_retx):
            rows.append((v.name, "snd", float(t), "retransmit" if r else "send", int(s), int(l)))
        for t, a, n, d in zip(v.ack_t, v.ack_no, v.ack_new, v.ack_dup):
            rows.append((v.name, "snd", float(t), "dupack" if d else "ack", int(a), int(n)))
        for t, u in zip(v.timeout_t, v.timeout_una):
            rows.append((v.name, "snd", float(t), "timeout", int(u), 0))
    rows.sort(key=lambda r: (r[0], r[2]))
    df = pl.DataFrame(rows, schema=["conn", "side", "t_s", "kind", "seq", "len"], orient="row")
    # Flight from the wire: highest byte sent minus highest ACK, step by step.
    una = top = 0
    flight, unas, nxts, wnds = [], [], [], []
    wnd_by = {v.name: (v.ack_t, v.ack_wnd) for v in views}
    for conn, _, t, kind, s, l in rows:
        if kind in ("send", "retransmit"):
            top = max(top, s + l)
        elif kind == "ack":
            una = max(una, s)
        at, aw = wnd_by[conn]
        i = np.searchsorted(at, t, side="right") - 1
        wnds.append(int(aw[i]) if i >= 0 and aw is not None else 0)
        flight.append(max(top - una, 0)); unas.append(una); nxts.append(top)
    df = df.with_columns(pl.Series("snd_una", unas, dtype=pl.Int64), pl.Series("snd_nxt", nxts, dtype=pl.Int64),
                         pl.Series("cwnd", flight, dtype=pl.Int64), pl.Series("ssthresh", [0] * len(rows), dtype=pl.Int64),
                         pl.Series("snd_wnd", wnds, dtype=pl.Int64), pl.Series("unacked", flight, dtype=pl.Int64),
                         pl.lit(0.0).alias("srtt_s"), pl.lit(0.0).alias("rto_s"))
    summary = {"flows": [{"name": v.name, "variant": "pcap", "send_buffer_bytes": None} for v in views],
               "links": [], "sim_end_s": float(max((v.send_t.max() for v in views if len(v.send_t)), default=0.0))}
    return RunData.from_tables(summary, {"tcp": df})
