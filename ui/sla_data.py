"""Cached engine calls of the autoscaling-SLA page (hashable arguments only).

Times arrive here in seconds and rates per second (the page converts its ms
inputs).  A service law is passed as (kind, mean_s, sigma) and built inside.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import streamlit as st

from engine import sla
from engine.presets import batch_profiles
from ui.budget import heavy, long_running
from ui.memo import memo

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
SEED = 2017
SIM_POINTS = 12                 # contiguous replica counts simulated
CURVE_POINTS = 160              # replica counts on the analytic curves at most
FIX_POINTS = 20                 # points of the retry-corrected curve
FIX_MAX_N = 400                 # the correction's chain grows with n: skipped beyond
FIX_MAX_C_MU = 50.0             # c·μ beyond this: tries decorrelate, correction = eq 7
SIM_MAX_N = 300                 # simulation skipped beyond (too few requests per replica)


@dataclass(frozen=True)
class Scenario:
    """Everything the replica answers depend on (seconds, per second)."""

    lam: float
    mu: float
    law: str
    sigma: float
    d1: float
    d2: float
    delta: float
    percentile: float
    rt: float

    @functools.cached_property
    def service(self):
        # built once per scenario: a frozen scipy law costs ~0.5 ms to construct
        return sla.service_law(self.law, 1.0 / self.mu, self.sigma)

    @property
    def delays(self) -> tuple:
        return self.d1, self.d2, self.delta


@memo(CACHE_SIZE)
def gpu_table() -> dict:
    """{preset id: (name, α ms, τ0 ms)} of the GPU batching presets."""
    out = {}
    for pid, prof in batch_profiles().items():
        fit = prof.fit()
        out[pid] = (prof.name, float(fit.alpha_ms), float(fit.tau0_ms))
    return out


@memo(CACHE_SIZE)
def gpu_mu(alpha_ms: float, tau0_ms: float, target_ms: float) -> float:
    return float(sla.gpu_service_rate(alpha_ms, tau0_ms, target_ms))


@memo(CACHE_SIZE)
def answers(s: Scenario) -> dict:
    """Fewest replicas by eq 7 and by M/M/n (inf where none meets the SLA)."""
    return {"approx": float(sla.min_backends(s.lam, s.mu, s.rt, s.percentile, *s.delays,
                                             s.service)),
            "mmn": float(sla.erlang_c_min_servers(s.lam, s.mu, s.rt, s.percentile))}


def _fix_useful(s: Scenario) -> bool:
    """The retry correction differs from eq 7 only for c·μ not far above 1."""
    return 0.0 < sum(s.delays) * s.mu <= FIX_MAX_C_MU


def sim_requests(n: float) -> int:
    """Requests simulated at n replicas: enough for ~1000 per replica."""
    return int(max(100_000, 1000 * n))


def n_grid(lam: float, mu: float, top: float) -> np.ndarray:
    """Replica counts from the first stable one to ``top`` (at most CURVE_POINTS)."""
    lo = int(np.floor(lam / mu)) + 1
    hi = max(int(top), lo + 5)
    if hi - lo + 1 <= CURVE_POINTS:
        return np.arange(lo, hi + 1, dtype=float)
    return np.unique(np.round(np.linspace(lo, hi, CURVE_POINTS)))


@memo(CACHE_SIZE)
@long_running
def n_curves(s: Scenario, top: float) -> dict:
    """Analytic curves against n: P(R ≤ RT) (eq 7, eq 7 with the retry correction,
    M/M/n) and the p-th percentile wait (eq 1 as printed, its quantile, M/M/n)."""
    n = n_grid(s.lam, s.mu, top)
    out = {"n": n,
           "within_eq7": np.asarray(sla.response_cdf(s.rt, s.lam, s.mu, n, *s.delays,
                                                     s.service), float),
           "within_mmn": np.asarray(sla.mmn_response_cdf(s.rt, s.lam, s.mu, n), float),
           "omega_printed": np.asarray(sla.waiting_percentile(
               s.percentile, s.lam, s.mu, n, *s.delays, printed=True), float),
           "omega": np.asarray(sla.waiting_percentile(s.percentile, s.lam, s.mu, n, *s.delays),
                               float),
           "omega_mmn": np.asarray(sla.mmn_waiting_percentile(s.percentile, s.lam, s.mu, n),
                                   float),
           "n_fix": None, "within_fix": None}
    if n[-1] <= FIX_MAX_N and _fix_useful(s):
        n_fix = np.unique(n[np.round(np.linspace(0, n.size - 1, FIX_POINTS)).astype(int)])
        q = sla.retry_busy_probability(s.lam, s.mu, n_fix, *s.delays)
        out["n_fix"] = n_fix
        out["within_fix"] = np.asarray(sla.response_cdf(s.rt, s.lam, s.mu, n_fix, *s.delays,
                                                        s.service, p_retry_busy=q), float)
    return out


def sim_grid(lam: float, mu: float, start: float) -> tuple:
    """SIM_POINTS contiguous replica counts from ``start`` (at least the first stable n);
    empty where they would exceed SIM_MAX_N."""
    lo = max(int(np.floor(lam / mu)) + 1, int(start))
    if lo + SIM_POINTS - 1 > SIM_MAX_N:
        return ()
    return tuple(float(k) for k in range(lo, lo + SIM_POINTS))


# A result keeps its sorted response times (~3 MB per 200,000 requests): few
# entries, and they expire, so a busy server's memory stays bounded.
@memo(48, ttl=3600)
@heavy
def sim_point(s: Scenario, n: float, n_requests: int):
    """One random-retry simulation (``engine.sla.simulate_dispatch``), seeded by n."""
    return sla.simulate_dispatch("random_retry", s.lam, s.service, int(n), *s.delays,
                                 n_requests=n_requests, seed=(SEED, int(n)))


@memo(CACHE_SIZE)
def sim_sweep(s: Scenario, ns: tuple, bar=None) -> dict:
    """Simulations at each n, one cached run per point; the progress bar moves
    between points.  Returns the n grid, fractions within RT, simulated p-th
    percentile waits and the fewest simulated replicas meeting the SLA."""
    results = []
    for i, n in enumerate(ns):
        results.append(sim_point(s, n, sim_requests(n)))
        if bar is not None:
            bar.progress((i + 1) / len(ns), f"Simulating random dispatch at n = {int(n)}…")
    within = np.array([r.fraction_within(s.rt) for r in results])
    return {"n": np.asarray(ns), "within": within,
            "omega": np.array([r.waiting_percentile(s.percentile) for r in results]),
            "fewest": sla.fewest_meeting(ns, within, s.percentile),
            "all_meet": bool(within[0] >= s.percentile / 100.0)}


@memo(CACHE_SIZE)
def cdf_curves(s: Scenario, n: int) -> dict:
    """Response-time CDFs at n replicas (t in s): eq 7, corrected eq 7, M/M/n."""
    hi = max(3.0 * s.rt, float(sla.mmn_response_percentile(99.9, s.lam, s.mu, n)) * 1.2) \
        if s.lam < n * s.mu else 3.0 * s.rt
    t = np.linspace(0.0, hi, 240)
    q = (sla.retry_busy_probability(s.lam, s.mu, n, *s.delays)
         if n <= FIX_MAX_N and _fix_useful(s) else None)
    return {"t": t,
            "eq7": np.asarray(sla.response_cdf(t, s.lam, s.mu, n, *s.delays, s.service), float),
            "fix": None if q is None else np.asarray(sla.response_cdf(
                t, s.lam, s.mu, n, *s.delays, s.service, p_retry_busy=q), float),
            "mmn": np.asarray(sla.mmn_response_cdf(t, s.lam, s.mu, n), float)}


@memo(CACHE_SIZE)
def synthetic_trace(mean_rate: float, hours: float, interval_s: float, amplitude: float,
                    spikes: int, seed: int) -> tuple:
    return tuple(sla.diurnal_trace(mean_rate, hours, interval_s, amplitude, spikes,
                                   seed=seed).tolist())


@memo(CACHE_SIZE)
def plan(s: Scenario, rates: tuple, interval_s: float, provisioning_s: float,
         headroom: float, usd_per_gpu_hour: float) -> sla.ReplicaPlan:
    """Autoscaled replicas over the trace (eq 7), against static peak provisioning."""
    return sla.plan_replicas(np.asarray(rates), s.mu, s.rt, s.percentile, *s.delays,
                             s.service, interval_s=interval_s,
                             provisioning_delay=provisioning_s, headroom=headroom,
                             cost_per_gpu_hour=usd_per_gpu_hour)
