"""brakmo/synchronicity's spectrum.py: the 5 Hz height of a periodic max-queue series against
one without a period (analytic inputs, fixed seeds)."""

from __future__ import annotations

import importlib.util

import numpy as np

from tcplab.resources import scenarios_dir


def _spectrum():
    path = scenarios_dir() / "brakmo" / "synchronicity" / "spectrum.py"
    spec = importlib.util.spec_from_file_location("sync_spectrum", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_spike_every_200ms_stands_out_and_noise_does_not():
    sp = _spectrum()
    rng = np.random.default_rng(7)
    n = 20_000                                   # 200 s of 10 ms samples
    noise = rng.poisson(1.0, n).astype(float)
    spikes = noise.copy()
    spikes[::20] += 10                           # every 200 ms
    h_spikes = sp.heights(*sp.welch(spikes, 0.01))
    h_noise = sp.heights(*sp.welch(noise, 0.01))
    assert h_spikes["peak5_over_median"] > 100 and h_spikes["peak5_over_local"] > 100
    # White noise: every bin of a 20-segment average is within a factor of 2 of the median.
    assert 0.5 < h_noise["peak5_over_median"] < 2 and 0.5 < h_noise["peak5_over_local"] < 2
