"""Exact mean latency of the greedy batching server under MMPP-2 (two-phase MAP) arrivals.

``mean_latency_mmpp2(arrivals, alpha_ms, tau0_ms, b_max)``: the batch-start chain of Inoue's
model (docs/models/batching.md, "Bursty arrivals: MMPP-2") extended with the arrival
phase.  The state at a batch start is (jobs waiting n ≥ 1, arrival phase i); the batch
takes b = min(n, b_max) jobs for the deterministic time τ[b] = αb + τ0, and the number
of arrivals during it with the phase at its end come from the counting matrices
P(k, τ) of the arrival process (uniformization for τ0 and α, then the semigroup
P(·, s + t) = P(·, s) ⊛ P(·, t)).  A batch that leaves the queue empty is followed by
an idle time, at the end of which the phase has the law (−D0)⁻¹D1.  The chain is
truncated at N levels where its stationary tail is below 1e-12, and E[W] follows from
renewal reward: E[area under the number in system over a cycle] / E[jobs per cycle].

Scalars only (one chain per call): ``alpha_ms``, ``tau0_ms``, ``b_max`` single values
(the keywords of before, ``alpha=`` and ``tau0=``, still work, with a
``DeprecationWarning``).
The counting matrices are in ``map_counts``, the chain and its solves in ``mmpp_chain``;
this module chooses the truncation and checks it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .formulas import below_capacity, capacity
from .map_counts import _map_matrices, _phase_law
from .mmpp_chain import _MAX_DENSE_STATES, _build, _means, _solve, _tail
from ..core.domains import ALPHA, TAU0, check_b_max
from ..core.renamed import renamed_attribute, renamed_keywords

_TAIL_TOL = 1e-12          # stationary mass allowed in the top quarter of the levels
_MEAN_TOL = 1e-9           # relative change of E[W] when the truncation is raised
_MAX_BAND_ENTRIES = 30_000_000   # memory cap of the banded system (floats)
_MAX_BAND_WORK = 4e9             # flops of one banded LU (about a second)
_MIN_LEVELS = 32


@dataclass(frozen=True)
class Mmpp2Batching:
    """Stationary means of the greedy batching server under MMPP-2 arrivals.

    Times in ms, the unit of α and τ0 (the arrival rates are per ms).  Unstable loads
    give ``inf`` means, E[B] = b_max, utilization 1, throughput = capacity.  The names
    without a unit still read the fields, with a ``DeprecationWarning``.
    """

    mean_latency_ms: float       # E[W], arrival to the end of the job's batch
    mean_wait_ms: float          # E[W] − E[Ĥ], before the job's batch starts
    mean_processing_ms: float    # E[Ĥ], the time of a random job's batch
    mean_batch_size: float       # E[B] over batches
    utilization: float           # fraction of time the server is busy
    throughput_per_ms: float     # jobs served (= arrival_rate_per_ms when stable)
    arrival_rate_per_ms: float   # λ = φ D1 1, φ the stationary phase law
    stable: bool
    n_levels: int                # truncation: queue levels 1..N at batch starts
    tail_mass: float             # stationary mass in the top quarter of the levels kept
                                 # (or leaving them per batch, if larger)
    truncation_change: float     # |ΔE[W]|/E[W] between the last two truncations (inf:
                                 # only one was possible)
    converged: bool              # tail_mass < 1e-12 and truncation_change < 1e-9

    mean_latency = renamed_attribute("mean_latency_ms")
    mean_wait = renamed_attribute("mean_wait_ms")
    mean_processing = renamed_attribute("mean_processing_ms")
    throughput = renamed_attribute("throughput_per_ms")
    arrival_rate = renamed_attribute("arrival_rate_per_ms")


def _next_levels(by_level: np.ndarray) -> int:
    """A larger truncation: where the tail, extrapolated geometrically from the levels
    at 1/2 and 3/4 of the current one, falls to 1e-13 (then 4/3 of that), within
    1.25 to 4 times the current one."""
    n = by_level.size
    tail = np.cumsum(by_level[::-1])[::-1]
    k1, k2 = n // 2, (3 * n) // 4
    guess = 2 * n
    if k2 > k1 and 0.0 < tail[k2] < tail[k1]:
        slope = np.log(tail[k2] / tail[k1]) / (k2 - k1)
        reach = k2 + np.log(1e-13 / tail[k2]) / slope
        guess = int(np.ceil(reach * 4.0 / 3.0))
    return int(min(max(guess, np.ceil(1.25 * n)), 4 * n))


def _truncated(d0, d1, alpha, tau0, b_max, n_levels, guess=None):
    """(renewal-reward means, tail mass) of the chain cut at ``n_levels``; ``guess``: the
    level law of another truncation (where a banded solve pins π)."""
    lam = float(_phase_law(d0, d1) @ d1.sum(axis=1))
    mode = round(min(_poisson_level(lam, alpha, tau0, b_max)[0], 1e9))
    chain = _build(d0, d1, alpha, tau0, b_max, n_levels, mode)
    result = _means(chain, _solve(chain, guess), d0, d1, alpha, tau0)
    return result, _tail(result[5], result[6])


def _poisson_level(lam, alpha, tau0, b_max) -> tuple[float, float]:
    """(mean, standard deviation) of the level at batch starts of the Poisson chain at
    the same mean rate: E[B] ≈ (λτ0 + 1)/(1 − ρ) with variance E[B]/(1 − ρ²), or with a
    cap b_max plus a full batch's arrivals, whichever mean is smaller."""
    rho = lam * alpha
    mean, sd = np.inf, np.inf
    if rho < 1.0:
        mean = (lam * tau0 + 1.0) / (1.0 - rho)
        sd = np.sqrt(mean / (1.0 - rho * rho))
    if b_max is not None:
        arrivals = lam * (alpha * b_max + tau0)
        if b_max + arrivals < mean:
            mean, sd = b_max + arrivals, np.sqrt(arrivals + 1.0)
    return float(mean), float(sd)


def _first_levels(lam, alpha, tau0, b_max) -> int:
    """A first truncation: 4/3 of the Poisson chain's mean level plus ten standard
    deviations (its top quarter then holds next to nothing)."""
    mean, sd = _poisson_level(lam, alpha, tau0, b_max)
    return int(max(_MIN_LEVELS, min(np.ceil(4.0 / 3.0 * (mean + 10.0 * sd) + 16.0), 1e9)))


def _level_cap(d1, alpha, tau0, b_max) -> int:
    """Most levels a solve may use: a dense chain of 1,500 levels, or with a cap b_max
    well below that a banded one within the memory and work bounds."""
    dense = _MAX_DENSE_STATES // 2
    if b_max is None or b_max >= dense // 2:
        return dense
    r = float(d1.sum(axis=1).max())
    x = r * (alpha * b_max + tau0)
    ku = 2.0 * (x + 15.0 * np.sqrt(x) + 40.0) + 1.0          # jumps up, in states
    kl = 2.0 * b_max + 1.0                                    # jumps down
    by_memory = _MAX_BAND_ENTRIES / (2.0 * kl + ku + 1.0)
    by_work = _MAX_BAND_WORK / (kl * (kl + ku))
    return int(max(dense, min(by_memory, by_work) / 2.0))


# ------------------------------------------------------------------ public API

@renamed_keywords(alpha="alpha_ms", tau0="tau0_ms")
def mean_latency_mmpp2(arrivals, alpha_ms, tau0_ms, b_max=None) -> Mmpp2Batching:
    """Exact mean latency, wait, batch size, utilization and throughput under MMPP-2 arrivals.

    ``arrivals``: an MMPP-2 (any object with 2x2 ``D0`` and ``D1``: rates r1, r2 and
    switches s12, s21 give D0 = [[−r1 − s12, s12], [s21, −r2 − s21]], D1 = diag(r1, r2);
    any two-phase MAP works; rates per ms); ``alpha_ms``, ``tau0_ms``: batch time
    τ[b] = αb + τ0 in ms; ``b_max``: None (unlimited) or the largest batch.  Scalars only.

    The greedy server of Inoue (2021): when free with jobs waiting it starts all of
    them (at most b_max) as one batch.  Exact up to the truncation of the batch-start
    chain, which grows until the stationary mass in its top quarter is below 1e-12 and
    one more raise changes E[W] by less than 1e-9 (``converged``; near capacity the
    memory caps it and ``tail_mass`` says what was cut).  Stable iff λα < 1 (b_max = ∞)
    or λ < b_max/τ[b_max]; otherwise the means are ``inf``.  Derivation:
    docs/models/batching.md, "Bursty arrivals: MMPP-2".
    """
    d0, d1 = _map_matrices(arrivals)
    alpha = ALPHA.check(alpha_ms, "alpha_ms")
    tau0 = TAU0.check(tau0_ms, "tau0_ms")
    b = check_b_max(b_max)
    for name, v in (("alpha_ms", alpha), ("tau0_ms", tau0), ("b_max", b)):
        if np.ndim(v):
            raise ValueError(f"{name} must be a single value, got shape {np.shape(v)}")
    alpha, tau0 = float(alpha), float(tau0)
    cap_b = None if np.isinf(b) else int(b)
    if d1[0].sum() < d1[1].sum():                  # the busier phase first (state 0)
        swap = [1, 0]
        d0, d1 = d0[np.ix_(swap, swap)], d1[np.ix_(swap, swap)]
    lam = float(_phase_law(d0, d1) @ d1.sum(axis=1))
    if lam <= 0.0:
        raise ValueError("arrivals must have a positive mean rate")
    cap = float(capacity(alpha, tau0, b_max))
    if not bool(below_capacity(lam, alpha, tau0, b_max)):
        eb = float("inf") if cap_b is None else float(cap_b)
        inf = float("inf")
        return Mmpp2Batching(inf, inf, inf, eb, 1.0, cap, lam, False, 0, 0.0, 0.0, False)

    limit = _level_cap(d1, alpha, tau0, cap_b)
    n_levels = min(_first_levels(lam, alpha, tau0, cap_b), limit)
    result, tail = _truncated(d0, d1, alpha, tau0, cap_b, n_levels)
    change = float("inf")
    while not (tail < _TAIL_TOL and change < _MEAN_TOL) and n_levels < limit:
        if tail < _TAIL_TOL:            # the tail is cut: confirm with 4/5 of the levels
            check, _ = _truncated(d0, d1, alpha, tau0, cap_b, int(np.ceil(0.8 * n_levels)),
                                  result[5])
            change = abs(result[0] - check[0]) / result[0]
            if change < _MEAN_TOL:
                break
            grow = int(np.ceil(1.25 * n_levels))
        else:
            grow = _next_levels(result[5])
        previous = result
        n_levels = min(grow, limit)
        result, tail = _truncated(d0, d1, alpha, tau0, cap_b, n_levels, previous[5])
        change = abs(result[0] - previous[0]) / result[0]
    w, proc, eb, util, thr = result[:5]
    return Mmpp2Batching(
        mean_latency_ms=float(w), mean_wait_ms=float(max(w - proc, 0.0)),
        mean_processing_ms=float(proc),
        mean_batch_size=float(np.clip(eb, 1.0, np.inf if cap_b is None else cap_b)),
        utilization=float(np.clip(util, 0.0, 1.0)), throughput_per_ms=float(thr),
        arrival_rate_per_ms=lam,
        stable=True, n_levels=int(n_levels), tail_mass=float(tail),
        truncation_change=float(change),
        converged=bool(tail < _TAIL_TOL and change < _MEAN_TOL))
