"""Simulated sample paths as records, and the one summary every simulator's latencies get.

Each simulator returns its sample path as a frozen records dataclass (per job: arrival,
start, finish, ...; Ciw's ``DataRecord`` idea) and a summary is computed from records by
the functions here: ``summary_of`` (mean, p50/p90/p95/p99, 95 % half-width of the mean by
batch means over consecutive values), after the warm-up ``warmup_count`` leaves out.
``drawn_arrivals`` is the arrival preamble simulators share: Poisson at a rate, a
replayed trace, or a process's sample.

>>> s = summary_of([1.0, 2.0, 3.0, 4.0])
>>> s.mean, s.p50, s.count
(2.5, 2.5, 4)
>>> warmup_count(1000, None), warmup_count(5, 100)
(100, 4)
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from .domains import SUMMARY_PERCENTILE
from .arrival_input import arrival_times, check_arrival_times, is_arrival_process
from .stats import N_GROUPS, ci95_half_width, percentiles, t975

__all__ = ["QUANTILES", "LatencySummary", "mean_ci95", "summary_of", "warmup_count", "drawn_arrivals"]

QUANTILES = (50.0, 90.0, 95.0, 99.0)


@dataclass(frozen=True)
class LatencySummary:
    """Mean, percentiles and the 95 % half-width of the mean of one latency (ms), over
    ``count`` requests (all NaN when ``count`` is 0: no request had this latency)."""

    mean: float
    p50: float
    p90: float
    p95: float
    p99: float
    ci95: float
    count: int

    def percentile(self, q: float) -> float:
        """One of the stored percentiles (50, 90, 95, 99)."""
        got = {50.0: self.p50, 90.0: self.p90, 95.0: self.p95, 99.0: self.p99}
        try:
            q = float(q)
        except (TypeError, ValueError):
            q = math.nan
        return got[SUMMARY_PERCENTILE.check(q)]

    def as_dict(self) -> dict:
        return {"mean": self.mean, "p50": self.p50, "p90": self.p90, "p95": self.p95,
                "p99": self.p99, "ci95": self.ci95, "count": self.count}


def mean_ci95(values: np.ndarray) -> float:
    """Half-width of the 95 % interval of the mean: batch means over ``N_GROUPS``
    groups of consecutive values, or the plain t interval for short samples."""
    n = values.size
    if n < 2:
        return math.inf
    if n < 2 * N_GROUPS:
        return float(t975(n - 1) * values.std(ddof=1) / math.sqrt(n))
    edges = np.arange(N_GROUPS + 1) * n // N_GROUPS
    sums = np.add.reduceat(values, edges[:-1])
    return ci95_half_width(sums, n)[0]


def summary_of(values) -> LatencySummary:
    """``LatencySummary`` of the finite ``values`` (in the order served: the confidence
    interval groups neighbours)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return LatencySummary(*(math.nan,) * 6, count=0)
    mean = float(v.mean())
    ci = mean_ci95(v)
    p = percentiles(v.copy(), QUANTILES)
    return LatencySummary(mean, *(float(x) for x in p), ci95=ci, count=int(v.size))


def warmup_count(n: int, warmup, *, keep: int = 1) -> int:
    """Jobs left out at the start of a run of ``n``: ``warmup`` (checked by the caller's
    domain), or n // 10 when None, never more than n − ``keep`` (so at least ``keep``
    are counted)."""
    w = int(n) // 10 if warmup is None else int(warmup)
    return max(0, min(w, int(n) - int(keep)))


def drawn_arrivals(rate, n: int, rng: np.random.Generator, arrivals=None) -> np.ndarray:
    """The arrival times of one run (the preamble simulators share): ``n`` Poisson times
    at ``rate`` (per time unit) when ``arrivals`` is None, else a replayed trace's own
    times or ``n`` times drawn from an arrival process (``arrival_input.arrival_times``)."""
    if arrivals is None:
        return np.cumsum(rng.standard_exponential(int(n)) / float(rate))
    if is_arrival_process(arrivals):
        return arrival_times(arrivals, n, rng)
    return check_arrival_times(arrivals)
