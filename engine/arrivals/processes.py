"""Renewal arrival processes: Poisson, and independent inter-arrival times of a given
squared coefficient of variation (SCV).

Every process starts as if an arrival had happened at time 0 (not returned): the gaps
between the returned times are independent copies of the inter-arrival law, and the
first time is the first gap (> 0).  Times are in any one unit; ``rate`` is per that
unit.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from ..core.domains import ARRIVAL_RATE, ARRIVAL_SCV, COUNT_WINDOW
from .checks import _count, _generator, _scalar


@dataclass(frozen=True)
class Poisson:
    """A Poisson process of ``rate`` arrivals per time unit: exponential gaps, SCV 1,
    index of dispersion of counts 1 at every window."""

    rate: float

    def __post_init__(self):
        object.__setattr__(self, "rate", _scalar(ARRIVAL_RATE, self.rate, "rate"))

    @property
    def scv(self) -> float:
        """Squared coefficient of variation of the gaps: 1."""
        return 1.0

    @property
    def label(self) -> str:
        return "Poisson"

    def idc(self, window) -> np.ndarray:
        """Index of dispersion of counts Var N(w)/E N(w) over windows of length ``window``:
        1 (a Poisson count's variance equals its mean)."""
        return np.ones_like(COUNT_WINDOW.check(window))[()]

    def sample(self, n, rng) -> np.ndarray:
        """``n`` sorted arrival times (float64): cumulative sums of Exp(rate) gaps."""
        n, rng = _count(n), _generator(rng)
        return np.cumsum(rng.exponential(1.0 / self.rate, n))


def _hyperexponential_branches(scv: float) -> tuple[float, float, float]:
    """(p, f1, f2) of the balanced-means two-phase hyperexponential of SCV ``scv`` > 1
    and mean 1: with probability p a gap is Exp(rate f1), else Exp(rate f2), where
    p = (1 + √((scv − 1)/(scv + 1)))/2, f1 = 2p, f2 = 2(1 − p) (each branch carries half
    the mean: p/f1 = (1 − p)/f2 = 1/2; Whitt 1982, "Approximating a point process by a
    renewal process", balanced means).  1 − p is computed without cancellation."""
    root = math.sqrt((scv - 1.0) / (scv + 1.0))
    q = (1.0 / (scv + 1.0)) / (1.0 + root)          # 1 − p = (1 − root)/2
    return 1.0 - q, 2.0 * (1.0 - q), 2.0 * q


DETERMINISTIC_SCV = 1e-12     # gaps with a smaller SCV are taken as deterministic


@dataclass(frozen=True)
class Renewal:
    """A renewal process: independent gaps of mean 1/``rate`` and SCV ``scv``.

    The gap law (say which): ``scv`` = 0 deterministic (every gap 1/rate; so is an SCV
    below ``DETERMINISTIC_SCV``, where a gamma law's shape 1/scv overflows); 0 < ``scv`` < 1
    gamma with shape 1/scv and scale scv/rate (Erlang-k when 1/scv = k is whole);
    ``scv`` = 1 exponential (a Poisson process); ``scv`` > 1 the balanced-means
    two-phase hyperexponential: with probability p = (1 + √((scv−1)/(scv+1)))/2 a gap is
    Exp(2p·rate), else Exp(2(1−p)·rate).  Each has mean 1/rate and SCV ``scv`` exactly.
    """

    rate: float
    scv: float

    def __post_init__(self):
        object.__setattr__(self, "rate", _scalar(ARRIVAL_RATE, self.rate, "rate"))
        object.__setattr__(self, "scv", _scalar(ARRIVAL_SCV, self.scv, "scv"))

    @property
    def gap_law(self) -> str:
        """Which law the gaps follow, in words."""
        c = self.scv
        if c < DETERMINISTIC_SCV:
            return "deterministic"
        if c < 1:
            k = 1.0 / c
            return f"Erlang-{round(k)}" if abs(k - round(k)) < 1e-9 else f"gamma (shape {k:.3g})"
        if c == 1:
            return "exponential"
        return "two-phase hyperexponential (balanced means)"

    @property
    def label(self) -> str:
        c, law = self.scv, self.gap_law
        if c == 1:
            return "Poisson (renewal, SCV 1)"
        kind = "bursty" if c > 1 else "regular"
        return f"{kind} renewal (SCV {c:.3g}, {law})"

    def sample(self, n, rng) -> np.ndarray:
        """``n`` sorted arrival times (float64): cumulative sums of independent gaps of
        the law ``gap_law`` says."""
        n, rng = _count(n), _generator(rng)
        mean, c = 1.0 / self.rate, self.scv
        if c < DETERMINISTIC_SCV:
            gaps = np.full(n, mean)
        elif c < 1:
            gaps = rng.gamma(1.0 / c, c * mean, n)
        elif c == 1:
            gaps = rng.exponential(mean, n)
        else:
            p, f1, f2 = _hyperexponential_branches(c)
            fast = rng.random(n) < p
            gaps = rng.exponential(1.0, n) * np.where(fast, mean / f1, mean / f2)
        return np.cumsum(gaps)
