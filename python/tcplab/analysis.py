"""Analysis helpers for sweeps and reproductions.

* :func:`jain_index` — Jain's fairness index, seed 000 §5.3.1 (Jain, Chiu and Hawe 1984):
  f(x1..xn) = (Σx)² / (n Σx²); 1 when all shares are equal, k/n when k of n share equally and
  the rest get nothing.
* :func:`periodogram` / :func:`dominant_periods` — the power spectrum of an evenly sampled time
  series (e.g. the bottleneck's queue length per monitor interval) and the periods of its
  strongest lines. Seed 000 §6.2.6 uses Fourier analysis to find a 200 ms line: the BSD fast
  (delayed-ACK) timer firing in step on every host.
* :func:`student_t_quantile`, :func:`describe` — mean, sample standard deviation, min, max and
  the half-width of the Student-t confidence interval (90 % by default; seed 002 Fig 8 draws 90 %
  intervals), computed without SciPy.
* :func:`paired_ratios` — per-seed throughput ratios between two variants on paired runs (the
  same seeds, so the same traffic, for both; seed 000 §2.3.1).
"""

from __future__ import annotations

import math
import statistics
from typing import Iterable, Mapping, Sequence

# numpy is imported by the functions that need it: describe() and jain_index() do not, and a
# reproduction's comparison uses only those (issue 28: the Python step of `tcplab reproduce`).


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index of non-negative shares (throughputs), computed by the core (the
    summary's per-bottleneck index is the same function). NaN for an empty list or when every
    share is zero (the index is undefined there); ValueError for a negative share."""
    from . import _core
    j = _core.jain_index([float(v) for v in values])
    return float("nan") if j is None else j


# Student t ----------------------------------------------------------------------------------

def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t >= 0 else tail


def student_t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with df degrees of freedom (bisection on the CDF)."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("need 0 < p < 1 and df > 0")
    if p < 0.5:
        return -student_t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while student_t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return 0.5 * (lo + hi)


def describe(values: Iterable[float | None], confidence: float = 0.90) -> dict:
    """n, mean, std (sample, n-1), ci half-width (Student t at `confidence`, two-sided), min,
    max, median of the non-missing values; None where undefined (std and ci need n >= 2)."""
    x = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    n = len(x)
    if n == 0:
        return {"n": 0, "mean": None, "std": None, "ci": None, "min": None, "max": None, "median": None}
    mean = math.fsum(x) / n
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in x) / (n - 1)) if n > 1 else None
    ci = student_t_quantile(0.5 + confidence / 2.0, n - 1) * std / math.sqrt(n) if n > 1 else None
    return {"n": n, "mean": mean, "std": std, "ci": ci, "min": min(x), "max": max(x), "median": float(statistics.median(x))}


# Periodogram --------------------------------------------------------------------------------

def periodogram(values: Sequence[float], dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(frequencies in Hz, power) of an evenly sampled series (sample spacing `dt` seconds),
    mean removed, Hann-windowed; the zero frequency is left out."""
    import numpy as np
    x = np.asarray(values, dtype=float)
    if x.size < 4:
        raise ValueError("a periodogram needs at least 4 samples")
    if dt <= 0:
        raise ValueError("dt must be positive")
    x = (x - x.mean()) * np.hanning(x.size)
    power = np.abs(np.fft.rfft(x)) ** 2 / x.size
    freq = np.fft.rfftfreq(x.size, dt)
    return freq[1:], power[1:]


def dominant_periods(values: Sequence[float], dt: float, top: int = 3, min_ratio: float = 5.0) -> list[dict]:
    """The strongest spectral lines of a series: up to `top` local maxima of the periodogram whose
    power is at least `min_ratio` times the median power, strongest first, each as
    {"period_s", "frequency_hz", "power", "ratio_to_median"}. The peak frequency is refined by
    parabolic interpolation over the three bins around it."""
    import numpy as np
    freq, power = periodogram(values, dt)
    med = float(np.median(power)) or float(np.mean(power)) or 1.0
    peaks = []
    for i in range(len(power)):
        left = power[i - 1] if i > 0 else -np.inf
        right = power[i + 1] if i + 1 < len(power) else -np.inf
        if power[i] >= left and power[i] > right and power[i] >= min_ratio * med:
            f = freq[i]
            if 0 < i < len(power) - 1:
                a, b, c = power[i - 1], power[i], power[i + 1]
                denom = a - 2 * b + c
                if denom != 0:
                    f = freq[i] + 0.5 * (a - c) / denom * (freq[1] - freq[0])
            peaks.append({"period_s": 1.0 / f, "frequency_hz": float(f), "power": float(power[i]),
                          "ratio_to_median": float(power[i] / med)})
    peaks.sort(key=lambda p: -p["power"])
    return peaks[:top]


# Paired comparisons --------------------------------------------------------------------------

def paired_ratios(a: Mapping[int, float], b: Mapping[int, float]) -> dict:
    """Per-seed ratios a/b over the seeds both variants ran (paired design), with their summary
    (describe) and the seeds missing on either side."""
    common = sorted(set(a) & set(b))
    ratios = {s: (a[s] / b[s] if b[s] else None) for s in common}
    out = describe(ratios.values())
    out.update({"ratios": ratios, "unpaired": sorted(set(a) ^ set(b))})
    return out
