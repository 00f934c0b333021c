"""Progress on stderr, one meter for everything that takes a while: a run's simulated time
(`tcplab run`, `tcplab emulate`) and a sweep's runs (`tcplab sweep`, `tcplab reproduce`).

Both are tqdm bars. On a terminal the bar is redrawn in place; elsewhere (a log file, a pipe)
tqdm's redrawing would fill the log with carriage returns, so the same tqdm line is printed as a
line of its own every ~10 % instead (``every_pct``), or never (``quiet_off_tty``). tqdm is
imported on first use, so ``tcplab --help`` does not pay for it.
"""

from __future__ import annotations

import sys
import time


class Meter:
    """A progress meter of `total` units on `stream` (default stderr).

    ``delay``: seconds before the bar first shows (a quick run shows nothing). ``leave``: keep
    the finished bar on screen (else it is erased). ``every_pct``: off a terminal, print a line
    each time another ``every_pct`` % is done; None prints nothing off a terminal. ``postfix``:
    a callable giving text shown after the bar (e.g. "3 failed")."""

    def __init__(self, total: float, *, unit: str, stream=None, delay: float = 0.0, leave: bool = True,
                 every_pct: int | None = 10, quiet: bool = False, bar_format: str | None = None, postfix=None):
        self.stream = stream or sys.stderr
        self.total = total
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every_pct = every_pct
        self.postfix = postfix
        self.bar = None
        self.n = 0.0
        self.t0 = time.monotonic()
        self.last_pct = -1
        self.enabled = not quiet and (self.tty or every_pct is not None)
        self._kw = dict(total=total, unit=unit, file=self.stream, delay=delay, leave=leave, bar_format=bar_format,
                        dynamic_ncols=True)

    def _tqdm(self):
        if self.bar is None:
            from tqdm import tqdm
            self.bar = tqdm(**self._kw)
        return self.bar

    def update_to(self, n: float) -> None:
        """Set the count done to `n` (and redraw)."""
        self.n = n
        if not self.enabled:
            return
        if self.tty:
            bar = self._tqdm()
            if self.postfix:
                bar.set_postfix_str(self.postfix(), refresh=False)
            bar.update(n - bar.n)
            return
        pct = int(100 * n // self.total) if self.total else 100
        if pct // self.every_pct != self.last_pct // self.every_pct or n >= self.total:
            from tqdm import tqdm
            line = tqdm.format_meter(n, self.total, time.monotonic() - self.t0, unit=self._kw["unit"],
                                     bar_format=self._kw["bar_format"], ncols=100, ascii=True,
                                     postfix=self.postfix() if self.postfix else None)
            print(line, file=self.stream, flush=True)
            self.last_pct = pct

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class SimProgress:
    """`progress(sim_time_s, end_s)` for tcplab.run(): a bar of simulated seconds on a terminal,
    shown once a run has taken a second, erased when it ends; nothing off a terminal."""

    def __init__(self, stream=None) -> None:
        self.stream = stream
        self.meter: Meter | None = None

    def __call__(self, t: float, end: float) -> None:
        if self.meter is None:
            self.meter = Meter(end, unit="s", stream=self.stream, delay=1.0, leave=False, every_pct=None,
                               bar_format="  simulated {n:.3f} s of {total:.3f} s |{bar}| {percentage:5.1f} % "
                                          "[{elapsed}<{remaining}]")
        self.meter.update_to(t)

    def done(self) -> None:
        if self.meter is not None:
            self.meter.close()


class RunsProgress:
    """Done/total runs, failures and the time left, for a sweep: a redrawn bar on a terminal, a
    line every ~10 % otherwise."""

    def __init__(self, total: int, skipped: int = 0, stream=None, quiet: bool = False):
        self.total, self.skipped = total, skipped
        self.done = self.failed = 0
        self.meter = Meter(total, unit="run", stream=stream, quiet=quiet or not total, postfix=self._postfix,
                           bar_format="{n_fmt}/{total_fmt} runs{postfix} |{bar}| [{elapsed}<{remaining}]")

    def _postfix(self) -> str:
        return f"{self.failed} failed"

    def update(self, ok: bool) -> None:
        self.done += 1
        if not ok:
            self.failed += 1
        self.meter.update_to(self.done)

    def close(self) -> None:
        self.meter.close()
