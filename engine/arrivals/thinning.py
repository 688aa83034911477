"""One replica's share of a stream of requests spread at random over ``replicas`` copies.

A load balancer that sends each request to one of R replicas at random, independently of
everything else, thins the stream: each replica sees every request with probability
p = 1/R.  Thinning a Poisson process of rate λ gives a Poisson process of rate pλ, and
thinning an MMPP-2 gives the MMPP-2 with both phase rates times p and the same switching
(the phase is untouched; arrivals in each phase are thinned Poisson): both exact, in
closed form.  A renewal process thins to a renewal process whose gap is the sum of G
original gaps, G geometric on {1, 2, …} with mean 1/p: its SCV is p·c² + 1 − p
(docs/models/planner.md), and it is sampled exactly in O(n): a sum of G gamma gaps is one
gamma gap of G times the shape; of G hyperexponential gaps, a binomial share comes from
each branch.  A replayed trace keeps the arrivals at the positions of a Bernoulli(p)
sequence (cumulative geometric steps).  Any other process is thinned by drawing its
whole stream and keeping each arrival with probability p (n/p draws).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from ..core.domains import ARRIVAL_RATE
from .checks import _count, _generator
from .mmpp import MMPP2
from .processes import DETERMINISTIC_SCV, Poisson, Renewal, _hyperexponential_branches
from .replay import Replay


def _fraction(fraction) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.integer,
                                                               np.floating)):
        raise ValueError(f"fraction must be a number in (0, 1], got {fraction!r}")
    p = float(fraction)
    if not 0.0 < p <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    return p


@dataclass(frozen=True)
class Thinned:
    """``process`` with each arrival kept with probability ``fraction``, independently
    (sampled: the parent's arrivals are drawn and filtered)."""

    process: object
    fraction: float

    def __post_init__(self):
        object.__setattr__(self, "fraction", _fraction(self.fraction))
        for attr in ("rate", "sample"):
            if not hasattr(self.process, attr):
                raise ValueError(f"process must be an arrival process with rate and sample(), "
                                 f"got {self.process!r}")

    @property
    def rate(self) -> float:
        """Mean arrivals per time unit: the parent's times ``fraction``."""
        return float(self.process.rate) * self.fraction

    @property
    def scv(self) -> float:
        """Gap SCV p·c² + 1 − p: exact when the parent is a renewal process."""
        return self.fraction * float(self.process.scv) + 1.0 - self.fraction

    @property
    def label(self) -> str:
        """Plain words: the parent's label and the share kept."""
        return f"{self.process.label}, 1 in {1.0 / self.fraction:.3g} at random"

    def sample(self, n, rng) -> np.ndarray:
        """``n`` sorted arrival times: the parent's, each kept with probability p (see
        the module docstring for how each kind of parent is drawn)."""
        n, rng = _count(n), _generator(rng)
        p, parent = self.fraction, self.process
        if isinstance(parent, Renewal):
            return np.cumsum(_geometric_sum_gaps(parent, rng.geometric(p, n), rng))
        if isinstance(parent, Replay):
            return parent.times_at(np.cumsum(rng.geometric(p, n)) - 1)
        m = max(16, math.ceil(n / p * 1.05 + 10.0 / p))
        while True:
            times = np.asarray(parent.sample(m, rng), dtype=float)
            kept = times[rng.random(m) < p]
            if kept.size >= n:
                return kept[:n].copy()
            m *= 2


def _geometric_sum_gaps(parent: Renewal, count: np.ndarray, rng) -> np.ndarray:
    """For each entry g of ``count``, the sum of g independent gaps of ``parent``."""
    mean, c = 1.0 / parent.rate, parent.scv
    g = count.astype(float)
    if c < DETERMINISTIC_SCV:
        return g * mean
    if c <= 1:                           # gamma (exponential: shape 1): shapes add up
        return rng.gamma(g / c, c * mean)
    q, f1, f2 = _hyperexponential_branches(c)
    fast = rng.binomial(count, q)        # how many of the g gaps take the fast branch
    return (rng.gamma(fast.astype(float), mean / f1)
            + rng.gamma((count - fast).astype(float), mean / f2))


def thinned(process, fraction):
    """One replica's arrivals when ``process`` is spread at random: each arrival kept
    with probability ``fraction`` (= 1/replicas).  Exact closed forms for ``Poisson``
    (rate × p) and ``MMPP2`` (both phase rates × p, same switching); any other process
    (with ``rate`` and ``sample(n, rng)``) becomes a ``Thinned`` that samples."""
    p = _fraction(fraction)
    if isinstance(process, Poisson):
        return Poisson(float(ARRIVAL_RATE.check(process.rate * p, "rate")))
    if isinstance(process, MMPP2):
        return MMPP2(process.rate_1 * p, process.rate_2 * p, process.switch_12,
                     process.switch_21, process.name)
    return Thinned(process, p)
