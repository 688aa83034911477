"""The batching server under arrivals other than Poisson: which result answers where, the
exact MMPP-2 curve, the operating point under the traffic and the "Poisson vs this
traffic" comparison.  Times in ms, rates per ms.

Poisson arrivals have the exact means of ``means`` (Inoue 2021, eqs 15, 31, 38); MMPP-2
arrivals the exact means of the batch-start chain with the arrival phase
(``mmpp.mean_latency_mmpp2``) where its truncation converged; any other process (a bursty
renewal process, a replayed trace) only the simulator's (``sim``).  The functions here
take those results, already computed (a page memoises each), and say which one answers:
none re-derives a number.

>>> import math
>>> lam = largest_rate_below([1.0, 2.0, 3.0], [10.0, 20.0, math.inf], 15.0)
>>> lam
1.5
"""
from __future__ import annotations

from dataclasses import dataclass, replace
import math
from typing import Callable

import numpy as np

from .answers import busy_split, cost_per_million, largest_rate_below
from .formulas import capacity, efficiency_from_batch_size
from ..core.domains import ALPHA, CURVE_MAX_FRACTION as MAX_FRACTION, LAM

__all__ = ["LOADS", "MMPP_FRACTIONS", "EXACT", "SIMULATED", "loads_of_capacity", "mmpp2_curve",
           "largest_rate_below", "mean_under", "operating_point_under", "comparison_loads",
           "TrafficComparison", "traffic_comparison"]

LOADS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)       # ρ = λα of the comparison chart
MMPP_FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)  # of capacity
EXACT, SIMULATED = "exact", "simulated"


def loads_of_capacity(alpha_ms, tau0_ms, b_max=None, fractions=MMPP_FRACTIONS) -> np.ndarray:
    """The loads λ = f·capacity (per ms) at the ``fractions`` f of capacity (the exact
    MMPP-2 curve's, a simulated sweep's): capacity b/(αb + τ0) at b = b_max, 1/α without
    a limit (eqs 26-27)."""
    f = MAX_FRACTION.check(fractions, "fractions")
    return f * float(capacity(alpha_ms, tau0_ms, b_max))


def mmpp2_curve(lam_per_ms, solve: Callable, progress: Callable[[float], None] | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(λ per ms, exact E[W] ms) under MMPP-2 at the loads ``lam_per_ms``: ``solve(λ)``
    gives the ``Mmpp2Batching`` of the batch-start chain at λ (``mean_latency_mmpp2``,
    docs/models/batching.md "MMPP-2 arrivals"; a page passes its memoised call).

    NaN from the first load whose truncated chain does not converge (stationary tail
    above 1e-12 at the largest truncation): a burstier load only needs more levels, so
    the higher loads are not solved.  ``progress(fraction)`` after each load.
    """
    lam = np.atleast_1d(LAM.check(lam_per_ms, "lam_per_ms"))
    out = np.full(lam.size, np.nan)
    for i, x in enumerate(lam):
        r = solve(float(x))
        if progress is not None:
            progress((i + 1) / lam.size)
        if not r.converged:
            break
        out[i] = r.mean_latency_ms
    return lam, out


def mean_under(poisson_mean_ms=None, exact=None, run=None) -> tuple[float, str]:
    """(mean latency ms, "exact" or "simulated") at one load: the Poisson E[W] (eq 15)
    when given, else the converged MMPP-2 chain's ``exact``, else the simulation ``run``
    (a ``BatchingSimResult``; None: unstable, inf)."""
    if poisson_mean_ms is not None:
        return float(poisson_mean_ms), EXACT
    if exact is not None and exact.converged:
        return float(exact.mean_latency_ms), EXACT
    return (math.inf if run is None else float(run.mean_latency_ms)), SIMULATED


def operating_point_under(here, alpha_ms, tau0_ms, exact=None, run=None, beta_j=None,
                          c0_j=None, gpu_usd_per_hour=0.0, usd_per_kwh=0.0):
    """``here`` (the Poisson ``OperatingPoint``) with the means under other arrivals: the
    converged MMPP-2 chain's ``exact`` means, else the simulation ``run``'s; then η =
    1/(β + c0/E[B]) (eq 19), J per request 1/η, the cost per million
    (``cost_per_million``) and the busy split (``busy_split``) follow from them.
    Neither given (Poisson) or an unstable ``here``: ``here`` itself."""
    if not here.stable or (exact is None and run is None):
        return here
    src = exact if exact is not None and exact.converged else run
    if src is None:
        return here
    size = float(src.mean_batch_size)
    eta = joules = None
    if beta_j is not None and c0_j is not None:
        eta = float(efficiency_from_batch_size(size, beta_j, c0_j))
        joules = 1.0 / eta
    work, overhead = busy_split(src.utilization, size, alpha_ms, tau0_ms)
    return replace(here, mean_latency_ms=float(src.mean_latency_ms),
                   mean_wait_ms=float(src.mean_wait_ms), mean_batch_size=size,
                   utilization=float(src.utilization), energy_efficiency_per_j=eta,
                   joules_per_request=joules,
                   usd_per_million=float(cost_per_million(here.lam_per_ms, joules or 0.0,
                                                          gpu_usd_per_hour, usd_per_kwh)),
                   work_share=work, overhead_share=overhead)


def comparison_loads(alpha_ms, loads=LOADS) -> np.ndarray:
    """The comparison chart's loads λ = ρ/α (per ms) at the normalised loads ``loads``."""
    alpha = float(ALPHA.check(alpha_ms, "alpha_ms"))
    return MAX_FRACTION.check(loads, "loads") / alpha


@dataclass(frozen=True)
class TrafficComparison:
    """"Poisson vs this traffic" at one load: per process (the first is Poisson) its mean
    latency (ms) and how it was found, its simulated p99 (ms) and the ratio to Poisson's
    p99 (NaN where either is infinite); and the simulated p99 at each ``rho``."""

    mean_latency_ms: tuple
    how: tuple
    p99_ms: tuple
    p99_vs_poisson: tuple
    rho: np.ndarray
    lam_per_ms: np.ndarray
    p99_over_loads_ms: tuple          # one array over ``rho`` per process


def traffic_comparison(means: list, runs_here: list, runs_over_loads: list, alpha_ms,
                       loads=LOADS) -> TrafficComparison:
    """Collect the comparison: ``means`` [(mean ms, how)] per process (``mean_under``),
    ``runs_here`` the simulation at the page's load per process, ``runs_over_loads`` per
    process the runs at each of ``comparison_loads(alpha_ms, loads)`` (None: unstable,
    p99 inf).  The ratio is p99/p99 of the first process (Poisson)."""
    lam = comparison_loads(alpha_ms, loads)
    p99 = tuple(math.inf if r is None else float(r.p99_ms) for r in runs_here)
    base = p99[0] if p99 else math.nan
    ratio = tuple(x / base if math.isfinite(x) and math.isfinite(base) and base > 0
                  else math.nan for x in p99)
    over = tuple(np.array([math.inf if r is None else float(r.p99_ms) for r in row])
                 for row in runs_over_loads)
    return TrafficComparison(tuple(float(m) for m, _ in means), tuple(h for _, h in means),
                             p99, ratio, np.asarray(loads, dtype=float), lam, over)

