"""Curves of the LLM batching model over batch sizes and loads (Figs 3, 5, 6).

E[L_b] and μ[b] over batch sizes, and the fixed-batching curves (exact, eq 25
as printed) beside the dynamic-batching bound over a grid of arrival rates.
Seconds, tokens, requests per second.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import LAM_PER_S, LLM_BATCH
from .batch_times import check_dist, expected_max_tokens, throughput
from .bounds import dynamic_wait_bound
from .fixed import fixed_batch_sojourn, fixed_batch_wait_eq25


@dataclass(frozen=True, eq=False)
class BatchSizeCurve:
    """E[L_b] and μ[b] for b = 1 … b_top."""

    b: np.ndarray                    # batch sizes
    expected_max_tokens: np.ndarray  # E[L_b], tokens (eq 23)
    throughput_per_s: np.ndarray     # μ[b], requests/s (eq 24)
    b_throughput_opt: int            # argmax μ[b] for b ≤ b_top
    mean_tokens: float               # E[N], tokens

    @property
    def peak_throughput_per_s(self) -> float:
        """μ at the throughput-optimal batch size, requests/s."""
        return float(self.throughput_per_s[self.b_throughput_opt - 1])


def batch_size_curve(dist, k, b_top: int = 512) -> BatchSizeCurve:
    """E[L_b] (eq 23) and μ[b] (eq 24) for every batch size up to ``b_top`` (Fig 3)."""
    b = np.arange(1, int(LLM_BATCH.check(b_top, "b_top")) + 1)
    mu = throughput(b, check_dist(dist), k)
    return BatchSizeCurve(b, expected_max_tokens(dist, b), mu, int(b[np.argmax(mu)]),
                          float(dist.mean()))


def load_grid(lam_max, points: int) -> np.ndarray:
    """``points`` equally spaced arrival rates up to ``lam_max`` (requests/s), from
    ``lam_max/points`` (no zero load)."""
    lam_max = float(LAM_PER_S.check(lam_max, "lam_max"))
    if points < 1:
        raise ValueError(f"points must be a positive integer, got {points!r}")
    return np.linspace(lam_max / points, lam_max, int(points))


@dataclass(frozen=True, eq=False)
class FixedCurves:
    """Fixed batching (batch size b) and the dynamic bound over arrival rates, s."""

    lam_per_s: np.ndarray
    sojourn_s: np.ndarray            # exact M/D^b/1 mean wait + H(b, E[L_b]) (inf: unstable)
    eq25_s: np.ndarray               # eq 25 as printed: E[Q_d]/λ, not the wait
    dynamic_bound_s: np.ndarray      # Inoue's φ with eq 20 (inf: unbounded law)


def fixed_curves(lam, b, dist, k) -> FixedCurves:
    """Fixed batching's exact sojourn and eq 25, and the dynamic-batching bound φ
    (eq 20), at each arrival rate of ``lam`` (requests/s)."""
    lam = np.atleast_1d(LAM_PER_S.check(lam)).astype(float)
    return FixedCurves(lam, np.atleast_1d(fixed_batch_sojourn(lam, b, dist, k)),
                       np.atleast_1d(fixed_batch_wait_eq25(lam, b, dist, k)),
                       np.atleast_1d(dynamic_wait_bound(lam, dist, k)))


@dataclass(frozen=True, eq=False)
class ChainCurve:
    """An exact dynamic-batching chain over loads, s (NaN: not solved)."""

    lam_per_s: np.ndarray            # loads solved for the chart
    sojourn_s: np.ndarray            # exact mean latency there
    coarse_s: np.ndarray             # the same on the comparison loads


def chain_curve(lam, coarse, solutions) -> ChainCurve:
    """The mean sojourn (s) of ``solutions`` (a ``DynamicSolution`` or None per load
    of ``lam``, requests/s), NaN from the first one not converged (or None) on: the
    queue only grows with the load; ``coarse_s`` picks the loads of ``coarse``."""
    lam = np.asarray(lam, float)
    solutions = list(solutions)
    if len(solutions) != lam.size:
        raise ValueError(f"solutions must hold one entry per load ({lam.size}), got "
                         f"{len(solutions)}")
    out = np.full(lam.size, np.nan)
    for n, sol in enumerate(solutions):
        if sol is None or not sol.converged:
            break
        out[n] = sol.mean_sojourn_s
    at = {float(x): v for x, v in zip(lam, out)}
    return ChainCurve(lam, out, np.array([at.get(float(x), np.nan)
                                          for x in np.asarray(coarse, float)]))


def sim_jobs(lam, order, limits: dict, sim_load: float) -> list:
    """(strategy, load index) of every strategy of ``order`` at each load of ``lam``
    (requests/s) below ``sim_load`` of its stability limit: what a sweep simulates."""
    lam = np.asarray(lam, float)
    return [(s, i) for s in order for i in range(lam.size) if lam[i] < sim_load * limits[s]]


@dataclass(frozen=True, eq=False)
class StrategySims:
    """Simulated strategies over loads: strategy → value per load (s; NaN: not run)."""

    lam_per_s: np.ndarray
    mean_s: dict                     # mean sojourn
    ci95_s: dict                     # its 95 % confidence half-width
    p99_s: dict                      # 99th percentile of the sojourn


def strategy_sims(lam, order, jobs, runs) -> StrategySims:
    """The runs (``LLMSimResult``, one per job of ``sim_jobs``) placed by strategy and
    load; loads not simulated are NaN."""
    lam = np.asarray(lam, float)
    jobs, runs = list(jobs), list(runs)
    if len(jobs) != len(runs):
        raise ValueError(f"runs must hold one result per job ({len(jobs)}), got {len(runs)}")
    mean, ci, p99 = ({s: np.full(lam.size, np.nan) for s in order} for _ in range(3))
    for (s, i), r in zip(jobs, runs):
        mean[s][i], ci[s][i], p99[s][i] = r.mean_sojourn_s, r.ci95_sojourn_s, r.p99_sojourn_s
    return StrategySims(lam, mean, ci, p99)
