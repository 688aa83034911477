"""The ``arrivals=`` argument every simulator takes, read in one place.

``arrivals`` is either a sorted array of arrival times (a trace to replay, in the
simulator's time unit) or an arrival process: any object with a ``rate`` (mean
arrivals per time unit) and ``sample(n, rng)`` returning n sorted arrival times
(``engine.arrivals``: Poisson, Renewal, MMPP2, Replay).  A process draws from a child
stream of the simulator's generator (``rng.spawn``), so one seed gives every process
the same service times or token counts (common random numbers), and the same
process and seed the same path.

>>> import numpy as np
>>> arrival_times([0.5, 1.0, 1.0, 3.0], 10, np.random.default_rng(0))
array([0.5, 1. , 1. , 3. ])
>>> float(arrival_rate([0.5, 1.0, 1.0, 3.0]))      # 3 gaps over 2.5
1.2
"""
from __future__ import annotations

import numpy as np


def is_arrival_process(arrivals) -> bool:
    """Whether ``arrivals`` is an arrival process (has ``rate`` and a callable
    ``sample``) rather than an array of times."""
    return callable(getattr(arrivals, "sample", None)) and hasattr(arrivals, "rate")


def _checked_times(times, what: str) -> np.ndarray:
    try:
        t = np.array(times, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"arrivals must be a sorted array of times or an arrival process "
                         f"(rate and sample(n, rng)), got {type(times).__name__}") from None
    if t.ndim != 1 or t.size < 1:
        raise ValueError(f"arrivals: {what} must be a non-empty 1-d array of times")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError(f"arrivals: {what} must be finite times >= 0")
    if np.any(np.diff(t) < 0):
        raise ValueError(f"arrivals: {what} must be sorted in time")
    return t


def check_arrival_times(times) -> np.ndarray:
    """``times`` as a new float array, or ``ValueError`` naming ``arrivals`` unless it is
    a non-empty 1-d array of finite, sorted times ≥ 0."""
    return _checked_times(times, "the times")


def arrival_rate(arrivals) -> float:
    """Mean arrival rate (per time unit) of ``arrivals``: a process's ``rate`` (positive
    and finite, else ``ValueError`` naming ``arrivals``), or a trace's (k − 1)/(t_k − t_1)
    (``inf`` for one arrival or a zero span)."""
    if is_arrival_process(arrivals):
        try:
            rate = float(arrivals.rate)
        except (TypeError, ValueError):
            rate = float("nan")
        if not 0.0 < rate < np.inf:
            raise ValueError(f"arrivals.rate must be a positive finite rate, got "
                             f"{arrivals.rate!r}")
        return rate
    t = check_arrival_times(arrivals)
    span = t[-1] - t[0]
    return float((t.size - 1) / span) if span > 0 else float("inf")


def arrival_times(arrivals, n, rng: np.random.Generator) -> np.ndarray:
    """The arrival times a simulator serves: a trace's own times (all of them; ``n`` is
    ignored), or ``n`` times drawn from a process with a child of ``rng`` (checked:
    n finite sorted times ≥ 0; else ``ValueError`` naming ``arrivals``)."""
    if not is_arrival_process(arrivals):
        return check_arrival_times(arrivals)
    arrival_rate(arrivals)                     # a usable rate, or ValueError
    n = int(n)
    times = _checked_times(arrivals.sample(n, rng.spawn(1)[0]), "sample(n, rng)")
    if times.size != n:
        raise ValueError(f"arrivals: sample(n, rng) returned {times.size} times for n = {n}")
    return times
