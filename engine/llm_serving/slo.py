"""The largest request rate a server carries within a TTFT and TPOT target, found by
simulation: a sweep over load brackets it, bisection narrows it.

A run meets the target when at least ``percentile`` % of its requests have TTFT ≤
``ttft_ms`` and TPOT ≤ ``tpot_ms`` (DistServe's SLO attainment, stricter than the two
percentiles taken apart): ``ServingResult.goodput_fraction``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import PERCENTILE, TARGET_MS
from .result import ServingResult

__all__ = ["SloRate", "meets_target", "largest_rate_meeting"]


def meets_target(result: ServingResult, *, ttft_ms, tpot_ms, percentile) -> bool:
    """Whether ``percentile`` % of the run's requests meet both limits."""
    return result.goodput_fraction(ttft_ms=ttft_ms, tpot_ms=tpot_ms,
                                   percentile=percentile) > 0


@dataclass(frozen=True)
class SloRate:
    """The largest rate found meeting the target: it holds at ``rate_per_s`` (0: at no
    rate tried) and fails at ``fails_at_per_s`` (the capacity when it held at every rate
    of the sweep); ``simulations`` run to find it."""

    rate_per_s: float
    fails_at_per_s: float
    simulations: int


def largest_rate_meeting(simulate, *, capacity_per_s, ttft_ms, tpot_ms, percentile,
                         shares=(0.2, 0.4, 0.6, 0.75, 0.85, 0.95), refine=4,
                         results=None) -> SloRate:
    """Bracket the largest rate meeting the target with ``simulate(rate_per_s)`` (a
    ``ServingResult``) at ``shares`` of ``capacity_per_s`` (the last leading rate that
    meets it, the next that fails; ``results``: those runs, if already made), then halve
    the bracket ``refine`` times.  The target holds at a rate, not beyond: a simulated
    percentile is noisy, so the answer is as sure as the runs are long."""
    try:
        cap = float(np.asarray(capacity_per_s, dtype=float))
    except (TypeError, ValueError):
        cap = float("nan")
    if not cap > 0:
        raise ValueError(f"capacity_per_s must be a positive rate, got {capacity_per_s!r}")
    target = dict(ttft_ms=float(TARGET_MS.check(ttft_ms, "ttft_ms")),
                  tpot_ms=float(TARGET_MS.check(tpot_ms, "tpot_ms")),
                  percentile=float(PERCENTILE.check(percentile, "percentile")))
    rates = [cap * float(f) for f in shares]
    runs = list(results) if results is not None else [simulate(r) for r in rates]
    ok = [meets_target(r, **target) for r in runs]
    k = ok.index(False) if False in ok else len(ok)
    lo = rates[k - 1] if k else 0.0
    hi = rates[k] if k < len(ok) else cap
    for _ in range(int(refine)):
        mid = 0.5 * (lo + hi)
        if meets_target(simulate(mid), **target):
            lo = mid
        else:
            hi = mid
    return SloRate(lo, hi, len(rates) + int(refine))
