"""Trace replay: the measured arrival times themselves, optionally time-scaled to
another mean rate."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import ARRIVAL_RATE
from .checks import _count, _gap_scv, _mean_rate, _scalar, _times


@dataclass(frozen=True, eq=False)
class Replay:
    """Replay of a trace: ``arrival_times`` (sorted, non-negative, at least 2, a
    positive span; stored as a read-only float64 copy) in the trace's time unit;
    ``name``: words for ``label``.

    ``rate`` = (n − 1)/span, the mean rate between the first and last arrival; ``scv``
    the SCV of the trace's gaps (population variance / mean²).  ``sample(n, rng)`` is
    deterministic (``rng`` is ignored): the first n times shifted so the first is at 0;
    beyond the trace's end the trace repeats, each copy shifted by the span plus one
    mean gap (a period of n_trace / rate), so the mean rate stays ``rate``.  Two replays
    of the same times and name are equal and hash alike (a cache key).
    """

    arrival_times: np.ndarray
    name: str = ""

    def __post_init__(self):
        object.__setattr__(self, "arrival_times",
                           _times(self.arrival_times, non_negative=True))
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {type(self.name).__name__}")

    def __eq__(self, other) -> bool:
        return (type(other) is Replay and self.name == other.name
                and np.array_equal(self.arrival_times, other.arrival_times))

    def __hash__(self) -> int:
        return hash((self.name, (self.arrival_times + 0.0).tobytes()))   # -0.0 as 0.0

    @property
    def rate(self) -> float:
        """Mean arrivals per time unit: (n − 1)/(last − first)."""
        return _mean_rate(self.arrival_times)

    @property
    def scv(self) -> float:
        """Squared coefficient of variation of the trace's gaps."""
        return _gap_scv(self.arrival_times)

    @property
    def span(self) -> float:
        """Time from the first to the last arrival."""
        return float(self.arrival_times[-1] - self.arrival_times[0])

    @property
    def label(self) -> str:
        return f"replay of {self.name}" if self.name else "replay of a trace"

    def scaled(self, rate) -> "Replay":
        """The replay at mean rate ``rate`` (> 0): every time multiplied by
        old rate / ``rate``, so the trace keeps its shape (SCV, IDC at scaled windows)."""
        new = _scalar(ARRIVAL_RATE, rate, "rate")
        times = self.arrival_times * (self.rate / new)
        try:
            return Replay(times, self.name)
        except ValueError:
            raise ValueError(f"rate {new:g} scales the trace's times beyond what floats hold "
                             f"(rate now {self.rate:g})") from None

    def sample(self, n, rng=None) -> np.ndarray:
        """The first ``n`` arrival times, the first at 0, cycling the trace if ``n`` is
        larger than it (deterministic; ``rng`` ignored)."""
        return self.times_at(np.arange(_count(n)))

    def times_at(self, index) -> np.ndarray:
        """The arrival times of positions ``index`` (whole numbers >= 0) of ``sample``'s
        endless sequence: the trace from 0, copy k shifted by k periods (span plus one
        mean gap)."""
        index = np.asarray(index)
        if index.size and (index.dtype.kind not in "iu" or index.min() < 0):
            raise ValueError("index must hold whole numbers >= 0")
        t = self.arrival_times - self.arrival_times[0]
        size = t.size
        period = self.span + self.span / (size - 1)
        copy, i = np.divmod(index, size)
        return t[i] + copy * period
