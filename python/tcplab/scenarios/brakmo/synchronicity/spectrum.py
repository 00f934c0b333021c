"""Fourier analysis of the router's maximum queue size (seed 000 §6.2.6, Figure 6.15), the
`analysis` of `tcplab reproduce brakmo/synchronicity`.

Per run: the bottleneck queue's maximum per 10 ms monitor interval (Router1->Router2,
queue_intervals.parquet) from 100 s to the end (after tcplib's warm-up), its periodogram by
Welch's method (10 s Hann-windowed segments, no overlap: 0.1 Hz bins, the 5 Hz bin exact; P. D.
Welch, IEEE Trans. Audio Electroacoust. 15(2), 1967), and the 5 Hz bin's height over the median
of the spectrum from 0.5 Hz to the 50 Hz Nyquist limit (`peak5_over_median`) and over the
median of its 4-6 Hz neighbourhood (`peak5_over_local`: the 1/f slope of queue spectra makes the
whole-band median low). The report draws a 5 s stretch of each variant's first run and each
variant's spectrum averaged over its runs."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import polars as pl

LINK = "Router1->Router2"
FROM_S = 100.0
SEGMENT_S = 10.0
PEAK_HZ = 5.0   # the BSD fast timer: 200 ms


def queue_max(run_dir: Path) -> tuple[np.ndarray, np.ndarray, float]:
    iv = pl.read_parquet(Path(run_dir) / "queue_intervals.parquet").filter(pl.col("link") == LINK).sort("t_s")
    t = iv["t_s"].to_numpy()
    dt = float(np.median(np.diff(t)))
    return t, iv["max_pkts"].to_numpy().astype(float), dt


def welch(x: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    seg = int(round(SEGMENT_S / dt))
    n = len(x) // seg
    if n < 1:
        raise ValueError(f"need at least {SEGMENT_S} s of queue samples after {FROM_S} s, got {len(x) * dt:.1f} s")
    w = np.hanning(seg)
    p = np.zeros(seg // 2 + 1)
    for i in range(n):
        s = x[i * seg:(i + 1) * seg]
        p += np.abs(np.fft.rfft((s - s.mean()) * w)) ** 2
    return np.fft.rfftfreq(seg, dt), p / n


def spectrum(run_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    t, x, dt = queue_max(run_dir)
    return welch(x[t >= FROM_S], dt)


def heights(f: np.ndarray, p: np.ndarray) -> dict[str, float]:
    at = int(np.argmin(np.abs(f - PEAK_HZ)))
    band = f >= 0.5
    local = (f >= PEAK_HZ - 1) & (f <= PEAK_HZ + 1) & (np.abs(f - PEAK_HZ) > 0.25)
    return {"peak5_over_median": float(p[at] / np.median(p[band])),
            "peak5_over_local": float(p[at] / np.median(p[local]))}


def run_metrics(run_dir: Path) -> dict[str, float]:
    t, x, _ = queue_max(run_dir)
    return heights(*spectrum(run_dir)) | {"queue_max_mean": float(x[t >= FROM_S].mean())}


def report_html(out: Path, run_dirs: dict[str, list[Path]]) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(run_dirs)
    fig, axes = plt.subplots(2, len(names), figsize=(5 * len(names), 6.5), squeeze=False)
    lines = []
    for col, name in enumerate(names):
        t, x, _ = queue_max(run_dirs[name][0])
        m = (t >= 200) & (t < 205)
        axes[0][col].step(t[m], x[m], lw=0.7, where="post")
        axes[0][col].set_title(f"{name}: max queue per 10 ms", fontsize=10)
        axes[0][col].set_xlabel("time (s)")
        specs = [spectrum(d) for d in run_dirs[name]]
        f = specs[0][0]
        p = np.mean([s[1] for s in specs], axis=0)
        h = heights(f, p)
        band = f >= 0.5
        axes[1][col].semilogy(f[band], p[band], lw=0.7)
        axes[1][col].axvline(PEAK_HZ, color="#c44", lw=0.5, ls="--")
        axes[1][col].set_title(f"spectrum, {len(specs)} runs: 5 Hz = {h['peak5_over_median']:.0f}x median", fontsize=10)
        axes[1][col].set_xlabel("frequency (Hz)")
        lines.append(f"<li>{name}: the 5 Hz bin of the averaged spectrum is {h['peak5_over_median']:.1f}× the "
                     f"spectrum's median (0.5–50 Hz) and {h['peak5_over_local']:.1f}× the median of 4–6 Hz "
                     f"({len(specs)} runs)</li>")
    axes[0][0].set_ylabel("packets")
    axes[1][0].set_ylabel("power")
    fig.tight_layout()
    fig.savefig(out / "spectrum.png", dpi=90)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    img = base64.b64encode(buf.getvalue()).decode()
    return ("<h2>Maximum queue size and its spectrum (Figure 6.15)</h2>"
            f"<p>Router {LINK}, the maximum queue per 10 ms from {FROM_S:.0f} s; Welch periodogram "
            f"({SEGMENT_S:.0f} s segments). Top: 200–205 s of each variant's first run.</p><ul>"
            + "".join(lines) + f'</ul><img alt="queue series and spectra" src="data:image/png;base64,{img}">')
