"""Sampling-error tolerances shared by the arrival tests: batch means over one long
sample (the spread of a statistic across consecutive blocks of it)."""
from __future__ import annotations

import numpy as np

BATCHES = 20
Z = 5.0          # a fixed-seed test fails only beyond 5 standard errors


def gaps_of(times: np.ndarray) -> np.ndarray:
    """The gaps of ``times``, the first one from 0 included."""
    return np.diff(np.concatenate(([0.0], times)))


def scv_of(gaps: np.ndarray) -> float:
    return float(gaps.var() / gaps.mean() ** 2)


def window_idc(times: np.ndarray, window: float) -> float:
    """Sample variance / mean of the counts in consecutive whole windows from the first
    time (an independent counter of describe's: np.histogram)."""
    k = int((times[-1] - times[0]) // window)
    counts, _ = np.histogram(times, bins=times[0] + window * np.arange(k + 1))
    return float(counts.var(ddof=1) / counts.mean())


def batch_se(stat, values: np.ndarray, batches: int = BATCHES) -> float:
    """Standard error of ``stat(values)``: the standard deviation of ``stat`` over
    ``batches`` consecutive blocks of ``values``, divided by √batches."""
    per_block = [stat(b) for b in np.array_split(values, batches)]
    return float(np.std(per_block, ddof=1) / np.sqrt(batches))
