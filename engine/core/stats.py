"""Statistics of simulated sample paths, shared by every simulator.

Batch-means confidence intervals (consecutive jobs in ``N_GROUPS`` groups, merged
while neighbouring group means stay correlated) and exact percentiles by one
in-place sort.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats

N_GROUPS = 160            # initial batch means for the confidence intervals
MIN_GROUPS = 10           # never merge below this many
MAX_LAG1 = 0.1            # merge batch means while their lag-1 correlation exceeds this
PERCENTILES = (50.0, 95.0, 99.0)


def ci95_half_width(group_sums: np.ndarray, counted: int) -> tuple[float, bool]:
    """95% CI half-width of a mean from batch means, and whether it is trustworthy.

    Starts from ``N_GROUPS`` equal-count groups of consecutive jobs and merges
    neighbours while the lag-1 autocorrelation of the group means exceeds 0.1
    (the groups are then too short to be independent), down to 10 groups.  The
    flag is False when even 10 groups stay correlated: the run is too short for
    its load (typical near saturation) and the interval is too narrow.
    """
    counts = np.diff(np.arange(N_GROUPS + 1) * counted // N_GROUPS).astype(float)
    sums = np.asarray(group_sums, dtype=float)
    while True:
        if np.any(counts == 0):
            return float("inf"), False
        means = sums / counts
        k = means.size
        dev = means - means.mean()
        denom = np.dot(dev, dev)
        lag1 = np.dot(dev[1:], dev[:-1]) / denom if denom > 0 else 0.0
        if lag1 <= MAX_LAG1 or k // 2 < MIN_GROUPS:
            break
        sums = sums.reshape(-1, 2).sum(axis=1)          # N_GROUPS = 10·2^m halves evenly
        counts = counts.reshape(-1, 2).sum(axis=1)
    half = _t975(k - 1) * means.std(ddof=1) / np.sqrt(k)
    return float(half), bool(lag1 <= MAX_LAG1)


def t975(dof: int) -> float:
    """Student-t 97.5 % quantile with ``dof`` ≥ 1 degrees of freedom (cached);
    ``ValueError`` naming ``dof`` otherwise."""
    if isinstance(dof, bool) or not isinstance(dof, (int, np.integer)) or dof < 1:
        raise ValueError(f"dof must be a whole number of degrees of freedom >= 1, got {dof!r}")
    return _t975(int(dof))


@lru_cache(maxsize=None)
def _t975(dof: int) -> float:
    """Student-t 97.5 % quantile (a scipy call costs ~0.1 ms; simulators ask for a few
    degrees of freedom only)."""
    return float(stats.t.ppf(0.975, dof))


def percentiles(values: np.ndarray, q=PERCENTILES) -> np.ndarray:
    """np.percentile's default (linear) percentiles; sorts ``values`` in place.

    One in-place sort, then the order statistics by index: on simulated latencies
    (many ties at light load) numpy's sort is several times faster than selecting the
    six order statistics of p50/p95/p99 by partitioning (``python -m benchmarks planner``
    spends its time here).
    """
    n = values.size
    pos = np.asarray(q) / 100.0 * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    values.sort()
    v_lo = values[lo].astype(float)
    v_hi = values[hi].astype(float)
    return v_lo + (pos - lo) * (v_hi - v_lo)
