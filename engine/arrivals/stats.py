"""What a list of arrival times looks like: mean rate, gap SCV, index of dispersion of
counts (IDC) and peak-to-mean rate per window, and the rate over time for drawing."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import COUNT_WINDOW
from .checks import _gap_scv, _mean_rate, _times

DEFAULT_GAPS = (1.0, 10.0, 100.0, 1000.0)   # default windows, in mean gaps
MIN_WINDOWS = 10                             # whole windows a default window must fit
MAX_BINS = 1_000_000                         # bins of rate_over_time (a drawing)


@dataclass(frozen=True)
class ArrivalStats:
    """Summary of arrival times (``describe``).

    ``n``: arrivals; ``mean_rate``: (n − 1)/span per time unit; ``scv``: squared
    coefficient of variation of the gaps (population variance / mean²); ``windows``:
    window lengths (time units); ``idc``: the index of dispersion of counts per window,
    sample variance (n − 1 denominator) / mean of the counts in consecutive whole
    windows from the first arrival (1 for Poisson, larger when bursty); ``peak_to_mean``:
    the largest window count / the mean count, per window.
    """

    n: int
    mean_rate: float
    scv: float
    windows: np.ndarray
    idc: np.ndarray
    peak_to_mean: np.ndarray


@dataclass(frozen=True)
class RateOverTime:
    """Arrival rate per bin (``rate_over_time``): ``edges`` (k + 1 bin edges, time
    units, from the first arrival), ``rate`` (k arrivals per time unit), ``window``."""

    edges: np.ndarray
    rate: np.ndarray
    window: float


def _frozen(values) -> np.ndarray:
    arr = np.array(values, dtype=float)
    arr.setflags(write=False)
    return arr


def _window_counts(t: np.ndarray, window: float) -> tuple[float, float, float]:
    """(mean, sample variance, max) of the counts in the k = ⌊span/window⌋ consecutive
    whole windows from t[0]: O(n) from the non-empty windows alone."""
    k = np.floor((t[-1] - t[0]) / window)
    idx = np.floor((t - t[0]) / window)
    idx = idx[idx < k]
    change = np.flatnonzero(np.diff(idx)) + 1
    counts = np.diff(np.concatenate(([0], change, [idx.size]))).astype(float)
    mean = counts.sum() / k
    var = max(0.0, (np.sum(counts ** 2) - k * mean ** 2) / (k - 1))
    return mean, var, float(counts.max())


def _default_windows(t: np.ndarray) -> np.ndarray:
    """1, 10, 100, 1000 mean gaps, those the trace holds 10 times or more (else span/10)."""
    span = t[-1] - t[0]
    gap = span / (t.size - 1)
    w = np.array([m * gap for m in DEFAULT_GAPS if MIN_WINDOWS * m * gap <= span * (1 + 1e-9)])
    return w if w.size else np.array([span / MIN_WINDOWS])


def _checked_windows(t: np.ndarray, windows, name: str = "windows") -> np.ndarray:
    w = np.ravel(COUNT_WINDOW.check(windows, name))
    if w.size == 0:
        raise ValueError(f"{name} must hold at least one window length")
    span = t[-1] - t[0]
    with np.errstate(over="ignore"):
        fits = span / w
    if not np.all(np.isfinite(fits)):
        raise ValueError(f"{name} must be long enough to fit a finite number of times into "
                         f"the trace's span {span:g}, got {w.min():g}")
    if np.any(np.floor(fits) < 2):
        raise ValueError(f"{name} must fit at least twice into the trace's span {span:g}, "
                         f"got {w.max():g}")
    return w


def _idc_peak(t: np.ndarray, windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    stats = [_window_counts(t, w) for w in windows]
    return (np.array([v / m for m, v, _ in stats]), np.array([p / m for m, _, p in stats]))


def describe(arrival_times, windows=None) -> ArrivalStats:
    """Mean rate, gap SCV, IDC and peak-to-mean rate of sorted ``arrival_times``.

    ``windows``: window lengths in the times' unit, each fitting twice or more into the
    span; default 1, 10, 100 and 1000 mean gaps, those that fit 10 times or more (a
    trace of fewer than 11 arrivals: span/10).  Windows start at the first arrival;
    arrivals after the last whole window are not counted.

    >>> s = describe([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], windows=[1.0])
    >>> s.mean_rate, s.scv, s.idc.tolist(), s.peak_to_mean.tolist()
    (1.0, 0.0, [0.0], [1.0])
    """
    t = _times(arrival_times)
    w = _default_windows(t) if windows is None else _checked_windows(t, windows)
    idc, peak = _idc_peak(t, w)
    return ArrivalStats(n=int(t.size), mean_rate=_mean_rate(t), scv=_gap_scv(t),
                        windows=_frozen(w), idc=_frozen(idc), peak_to_mean=_frozen(peak))


def rate_over_time(arrival_times, window=None) -> RateOverTime:
    """Arrivals per time unit in consecutive bins of length ``window`` from the first
    arrival (default span/100; at most 1,000,000 bins), for drawing a trace's rate over
    time; arrivals after the last whole bin are left out."""
    t = _times(arrival_times)
    span = t[-1] - t[0]
    if window is None:
        w = span / 100.0
    else:
        w = np.ravel(COUNT_WINDOW.check(window, "window"))
        if w.size != 1:
            raise ValueError(f"window must be a single number, got {w.size}")
        w = float(w[0])
    k = np.floor(span / w)
    if not 1 <= k <= MAX_BINS:
        raise ValueError(f"window must fit into the trace's span {span:g} between 1 and "
                         f"{MAX_BINS:,} times, got {w:g} ({k:g} times)")
    k = int(k)
    idx = np.floor((t - t[0]) / w)
    counts = np.bincount(idx[idx < k].astype(np.int64), minlength=k)
    return RateOverTime(edges=_frozen(t[0] + w * np.arange(k + 1)), rate=_frozen(counts / w),
                        window=w)
