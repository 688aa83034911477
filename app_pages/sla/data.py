"""Memoised engine calls of the autoscaling-SLA page (hashable arguments only).

Times arrive here in seconds and rates per second (``inputs.Scenario``); curves come
back with their times also in ms for the charts (``engine.sla.ms_from_s``).
"""
from __future__ import annotations

import numpy as np

from engine import sla
from engine.presets import batch_profiles
from ui.budget import heavy, long_running
from ui.memo import memo, over_points

from .uploads import MAX_INTERVALS

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
SEED = 2017
SIM_POINTS = sla.SIM_POINTS     # contiguous replica counts simulated
SIM_MAX_N = sla.SIM_MAX_N       # simulation skipped beyond (too few requests per replica)


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
    """Requests/s one GPU serves within the mean-latency target (``gpu_service_rate``)."""
    return float(sla.gpu_service_rate(alpha_ms, tau0_ms, target_ms))


@memo(CACHE_SIZE)
def answers(s) -> dict:
    """Fewest replicas by eq 7, by M/M/n and for a steady state; λ/μ
    (``engine.sla.replica_answers``)."""
    return s.model.replica_answers(s.rt, s.percentile)


def curve_top(s) -> float:
    """The largest replica count on the curves, past every answer: a function of the
    scenario alone (not of the what-if n, which moves without redrawing the charts),
    so a share link redraws exactly the range its sender saw."""
    ans = answers(s)
    return sla.curve_top(ans["approx"], ans["mmn"], ans["stable"])


def sim_requests(n: float) -> int:
    """Requests simulated at n replicas (``engine.sla.sim_requests``)."""
    return sla.sim_requests(n)


def n_grid(s, top: float) -> np.ndarray:
    """Replica counts on the curves (``RandomDispatch.replica_grid``)."""
    return s.model.replica_grid(top)


@memo(CACHE_SIZE)
@long_running
def n_curves(s, top: float) -> dict:
    """Analytic curves against n (``RandomDispatch.replica_curves``)."""
    return s.model.replica_curves(s.rt, s.percentile, top)


def resolved_curve(n, miss) -> tuple:
    """(n, share late) at the resolved points only (``engine.sla.resolved_curve``)."""
    return sla.resolved_curve(n, miss)


def sim_grid(s, simulate: bool) -> tuple:
    """The replica counts simulated (``engine.sla.sim_grid``)."""
    return s.model.sim_grid(answers(s)["approx"], simulate)


def can_simulate(s, n: int, simulate: bool) -> bool:
    """Whether the what-if point n is simulated (``engine.sla.simulable``)."""
    return s.model.simulable(n, simulate)


# A result keeps its sorted response times (~3 MB per 200,000 requests): few
# entries, and they expire, so a busy server's memory stays bounded.
def arrivals_of(s):
    """The scenario's arrival process for the simulator at its mean rate λ (None:
    Poisson, the simulator's own, so Poisson runs are those of before)."""
    return None if s.arrivals.is_poisson else s.arrivals.process(s.lam)


@memo(48, ttl=3600)
@heavy
def sim_point(s, n: float, n_requests: int):
    """One random-retry simulation (``RandomDispatch.simulate``) under the scenario's
    arrivals, seeded by n."""
    return s.model.simulate(int(n), "random_retry", n_requests, seed=(SEED, int(n)),
                            arrivals=arrivals_of(s))


def _sim_at(s, n: float):
    return sim_point(s, float(n), sim_requests(n))


@memo(CACHE_SIZE)
def sim_sweep(s, ns: tuple, bar=None) -> dict | None:
    """Simulations at each n of ``ns`` (one memoised run per point, ``over_points``)
    summarised by ``engine.sla.sweep_summary`` (None if empty)."""
    runs = over_points(lambda n: _sim_at(s, n), [(n,) for n in ns], bar,
                       "Simulating random dispatch…")
    return sla.sweep_summary(ns, runs, s.rt, s.percentile)


def _sim_or_none(s, n: int, simulate: bool):
    return _sim_at(s, n) if can_simulate(s, n, simulate) else None


@memo(CACHE_SIZE)
def cdf_curves(s, n: int, simulate: bool) -> dict:
    """Response-time CDFs at n replicas (``RandomDispatch.cdf_curves``)."""
    return s.model.cdf_curves(s.rt, n, _sim_or_none(s, n, simulate))


@memo(CACHE_SIZE)
def at_replicas(s, n: int, simulate: bool) -> dict:
    """The what-if numbers at n replicas (``RandomDispatch.at_replicas``)."""
    return s.model.at_replicas(s.rt, n, _sim_or_none(s, n, simulate))


def synthetic_interval(hours: float, interval_s: float) -> float:
    """The interval (s) of a synthetic trace (``engine.sla.synthetic_interval_s``)."""
    return sla.synthetic_interval_s(hours, interval_s, MAX_INTERVALS)


@memo(CACHE_SIZE)
def synthetic_trace(mean_rate: float, hours: float, interval_s: float, amplitude: float,
                    spikes: int, seed: int) -> tuple:
    return tuple(sla.diurnal_trace(mean_rate, hours, interval_s, amplitude, spikes,
                                   seed=seed).tolist())


@memo(CACHE_SIZE)
def plan(s, p) -> sla.ReplicaPlan:
    """Autoscaled replicas over the trace of ``p`` (``inputs.PlanInputs``, eq 7), against
    static peak provisioning."""
    return s.model.plan(np.asarray(p.trace.rates), s.rt, s.percentile,
                        interval_s=p.trace.interval_s, provisioning_delay=p.provisioning_s,
                        headroom=p.headroom, cost_per_gpu_hour=p.usd_per_gpu_hour)
