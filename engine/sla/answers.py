"""The autoscaling page's answers: the fewest replicas by eq 7, by one central M/M/n queue
and for a steady state; the numbers at one replica count n; which counts the simulator
runs and what its runs say (the fewest simulated replicas meeting the SLA, found on a grid
or by doubling and bisection).  Times in s, rates per s.  docs/models/sla.md.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.domains import MU, N_BACKENDS, PERCENTILE, REPLICA_ANSWER, RESPONSE_TARGET
from ..core.units import ms_from_s
from .cdfs import resolved_miss, response_cdf, utilization
from .replicas import (erlang_c_min_servers, fewest_meeting, min_backends, offered_load,
                       stable_replicas)

SIM_POINTS = 12                 # contiguous replica counts simulated
SIM_MAX_N = 300                 # simulation skipped beyond (too few requests per replica)

__all__ = ["SIM_POINTS", "SIM_MAX_N", "replica_answers", "at_replicas", "sim_requests",
           "sim_grid", "simulable", "sweep_summary", "fewest_simulated", "late_curve"]


def replica_answers(lam, mu, rt, percentile, d1, d2, delta, service) -> dict:
    """{"approx": fewest n by eq 7 (``min_backends``), "mmn": fewest n of one central
    M/M/n queue (``erlang_c_min_servers``), both inf where none meets the SLA,
    "stable": ⌊λ/μ⌋ + 1 (``stable_replicas``), "offered": λ/μ (``offered_load``)}."""
    return {"approx": float(min_backends(lam, mu, rt, percentile, d1, d2, delta, service)),
            "mmn": float(erlang_c_min_servers(lam, mu, rt, percentile)),
            "stable": float(stable_replicas(lam, mu)),
            "offered": float(offered_load(lam, mu))}


def at_replicas(lam, mu, n, rt, d1, d2, delta, service, simulated=None) -> dict:
    """The numbers at n replicas: ρ = λ/(nμ) (eq 2, ``utilization``), whether ρ < 1
    (``stable``), the capacity nμ (requests/s), P(R ≤ RT) by eq 7 and its share late
    (nan below ``MISS_RESOLUTION``); given a ``simulated`` run (``DispatchSimResult``),
    its fraction within RT and share late (None without one)."""
    n = int(N_BACKENDS.check(n))
    rho = float(utilization(lam, mu, n))
    within = float(response_cdf(rt, lam, mu, n, d1, d2, delta, service))
    sim = None if simulated is None else float(simulated.fraction_within(rt))
    return {"stable": rho < 1.0, "utilization": rho, "capacity_per_s": float(n * MU.check(mu)),
            "within_eq7": within, "miss_eq7": float(resolved_miss(within)),
            "within_sim": sim, "miss_sim": None if sim is None else 1.0 - sim}


def sim_requests(n) -> int:
    """Requests simulated at n replicas: 1000 per replica, at least 100,000."""
    return int(max(100_000, 1000 * float(N_BACKENDS.check(n))))


def sim_grid(lam, mu, approx, simulate=True) -> tuple:
    """``SIM_POINTS`` contiguous replica counts from 4 below eq 7's answer ``approx``
    (at least ⌊λ/μ⌋ + 1); () where ``simulate`` is off, ``approx`` is inf or the counts
    would exceed ``SIM_MAX_N``."""
    approx = float(REPLICA_ANSWER.check(approx))
    if not (simulate and math.isfinite(approx)):
        return ()
    lo = max(int(stable_replicas(lam, mu)), int(approx - 4))
    if lo + SIM_POINTS - 1 > SIM_MAX_N:
        return ()
    return tuple(float(k) for k in range(lo, lo + SIM_POINTS))


def simulable(lam, mu, n, simulate=True) -> bool:
    """Whether n replicas are simulated: ``simulate`` on, ρ = λ/(nμ) < 1 (a steady
    state) and n ≤ ``SIM_MAX_N``."""
    return bool(simulate and utilization(lam, mu, n) < 1.0 and n <= SIM_MAX_N)


def sweep_summary(ns, results, rt, percentile) -> dict | None:
    """What simulations at the counts ``ns`` say (``results``: one ``DispatchSimResult``
    per n; None for an empty grid): the fraction within RT (``within``), the share late
    (``miss``, nan below ``MISS_RESOLUTION``), the p-th percentile wait in ms
    (``omega_ms``), the fewest n meeting the SLA (``fewest``, inf: none on the grid,
    ``fewest_meeting``) and whether the first n already meets it (``all_meet``)."""
    if len(ns) == 0:
        return None
    results = list(results)
    if len(results) != len(ns):
        raise ValueError("results must hold one simulation per n")
    rt = float(RESPONSE_TARGET.check(rt))
    pc = float(PERCENTILE.check(percentile))
    within = np.array([float(r.fraction_within(rt)) for r in results])
    return {"n": np.asarray(ns, float), "within": within, "miss": resolved_miss(within),
            "omega_ms": ms_from_s([r.waiting_percentile(pc) for r in results]),
            "fewest": fewest_meeting(ns, within, pc),
            "all_meet": bool(within[0] >= pc / 100.0)}


def fewest_simulated(within_at, lam, mu, approx, percentile, progress=None) -> dict:
    """Fewest replicas whose simulated fraction within RT, ``within_at(n)``, reaches
    p/100: ``SIM_POINTS`` counts from 4 below eq 7's answer ``approx`` (from ⌊λ/μ⌋ + 1
    when it is inf) first, then down while the first one meets it, else up in doubling
    steps and by bisection (the fraction grows with n), up to ``SIM_MAX_N``.
    ``progress(share done, n)`` is called after each new simulation.  Returns {"n": the
    fewest (inf: none up to ``SIM_MAX_N``), "points": ((n, share late), ...) sorted}."""
    p = float(PERCENTILE.check(percentile)) / 100.0
    low = int(stable_replicas(lam, mu))
    approx = float(REPLICA_ANSWER.check(approx))
    start = max(low, int(approx - 4)) if math.isfinite(approx) else low
    seen = {}

    def meets(n: int) -> bool:
        if n not in seen:
            seen[n] = float(within_at(n))
            if progress is not None:
                progress(min(1.0, len(seen) / (2 * SIM_POINTS)), n)
        return seen[n] >= p

    grid = [n for n in range(start, start + SIM_POINTS) if n <= SIM_MAX_N]
    ok = [n for n in grid if meets(n)]
    if ok:
        best = ok[0]
        while best - 1 >= low and meets(best - 1):
            best -= 1
    else:
        fail, step, best = (grid[-1] if grid else start - 1), SIM_POINTS, math.inf
        while fail < SIM_MAX_N:
            n = min(fail + step, SIM_MAX_N)
            if meets(n):
                while n - fail > 1:                 # bisection: fail misses, n meets
                    mid = (fail + n) // 2
                    fail, n = (fail, mid) if meets(mid) else (mid, n)
                best = n
                break
            fail, step = n, 2 * step
    points = tuple((float(n), 1.0 - w) for n, w in sorted(seen.items()))
    return {"n": float(best), "points": points}


def late_curve(points) -> tuple[np.ndarray, np.ndarray]:
    """(n, share late) arrays of ``fewest_simulated``'s points ((n, share late), ...)."""
    pts = np.array(points, dtype=float).reshape(-1, 2)
    return pts[:, 0], pts[:, 1]
