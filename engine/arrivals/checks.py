"""Validation shared by the arrival processes and trace statistics (private helpers):
one parameter, a count, a generator, a list of arrival times.  Each raises
``ValueError`` naming the argument."""
from __future__ import annotations

import numpy as np

from ..core.domains import N_ARRIVALS, Domain


def _scalar(domain: Domain, value, name: str) -> float:
    """``value`` as a Python float inside ``domain``; one number only."""
    arr = domain.check(value, name)
    if arr.ndim:
        raise ValueError(f"{name} must be a single number, got an array of shape {arr.shape}")
    return float(arr)


def _count(n, name: str = "n") -> int:
    """A number of arrivals as a Python int (0 allowed)."""
    return int(_scalar(N_ARRIVALS, n, name))


def _generator(rng) -> np.random.Generator:
    """``rng`` itself: randomness is passed in explicitly, as a numpy ``Generator``."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator (np.random.default_rng(seed)), "
                         f"got {type(rng).__name__}")
    return rng


def _times(arrival_times, name: str = "arrival_times", *,
           non_negative: bool = False) -> np.ndarray:
    """Arrival times as a read-only float64 copy: one-dimensional, finite, sorted
    (ties allowed), at least 2 of them and a positive span."""
    try:
        t = np.array(arrival_times, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers (times), got "
                         f"{type(arrival_times).__name__}") from None
    if t.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {t.shape}")
    if t.size < 2:
        raise ValueError(f"{name} must hold at least 2 times, got {t.size}")
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{name} must be finite numbers, got NaN or inf")
    if non_negative and t[0] < 0:
        raise ValueError(f"{name} must be non-negative, got {t[0]:g}")
    if np.any(np.diff(t) < 0):
        i = int(np.flatnonzero(np.diff(t) < 0)[0])
        raise ValueError(f"{name} must be sorted (non-decreasing): time {i + 1} ({t[i + 1]:g}) "
                         f"is before time {i} ({t[i]:g})")
    span = t[-1] - t[0]
    if not (span > 0 and np.isfinite(span)):
        raise ValueError(f"{name} must span a positive, finite time (first {t[0]:g}, "
                         f"last {t[-1]:g})")
    t.setflags(write=False)
    return t


def _mean_rate(t: np.ndarray) -> float:
    """(n − 1)/span: arrivals per time unit between the first and the last."""
    return float((t.size - 1) / (t[-1] - t[0]))


def _gap_scv(t: np.ndarray) -> float:
    """Squared coefficient of variation of the gaps (population variance / mean²)."""
    ratio = np.diff(t) / ((t[-1] - t[0]) / (t.size - 1))      # gap / mean gap
    return float(np.mean((ratio - 1.0) ** 2))
