"""Memoised engine calls of the autoscaling-SLA page (hashable arguments only).

Times arrive here in seconds and rates per second (``inputs.Scenario``); curves come
back with their times also in ms for the charts (``engine.sla.ms_from_s``).
"""
from __future__ import annotations

import numpy as np

from engine import sla
from engine.presets import batch_profiles
from ui.budget import heavy, long_running
from ui.memo import memo

from .uploads import MAX_INTERVALS

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
SEED = 2017
SIM_POINTS = 12                 # contiguous replica counts simulated
CURVE_POINTS = 160              # replica counts on the analytic curves at most
FIX_POINTS = 20                 # points of the retry-corrected curve
FIX_MAX_N = 400                 # the correction's chain grows with n: skipped beyond
FIX_MAX_C_MU = 50.0             # c·μ beyond this: tries decorrelate, correction = eq 7
SIM_MAX_N = 300                 # simulation skipped beyond (too few requests per replica)
CDF_POINTS = 240                # times on the response-time CDF


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
    """Fewest replicas by eq 7, by M/M/n (inf where none meets the SLA) and for a
    steady state; the offered load λ/μ."""
    return {"approx": float(sla.min_backends(s.lam, s.mu, s.rt, s.percentile, *s.delays,
                                             s.service)),
            "mmn": float(sla.erlang_c_min_servers(s.lam, s.mu, s.rt, s.percentile)),
            "stable": float(sla.stable_replicas(s.lam, s.mu)),
            "offered": float(sla.offered_load(s.lam, s.mu))}


def curve_top(s) -> float:
    """The largest replica count on the curves, past every answer: a function of the
    scenario alone (not of the what-if n, which moves without redrawing the charts),
    so a share link redraws exactly the range its sender saw."""
    ans = answers(s)
    known = np.array([ans["approx"], ans["mmn"], ans["stable"]], dtype=float)
    return float(known[np.isfinite(known)].max() * 1.25 + 10)


def _fix_useful(s) -> bool:
    """The retry correction differs from eq 7 only for c·μ not far above 1."""
    return 0.0 < sum(s.delays) * s.mu <= FIX_MAX_C_MU


def sim_requests(n: float) -> int:
    """Requests simulated at n replicas: enough for ~1000 per replica."""
    return int(max(100_000, 1000 * n))


def n_grid(lam: float, mu: float, top: float) -> np.ndarray:
    """Replica counts from the first stable one to ``top`` (at most CURVE_POINTS)."""
    lo = int(sla.stable_replicas(lam, mu))
    hi = max(int(top), lo + 5)
    if hi - lo + 1 <= CURVE_POINTS:
        return np.arange(lo, hi + 1, dtype=float)
    return np.unique(np.round(np.linspace(lo, hi, CURVE_POINTS)))


@memo(CACHE_SIZE)
@long_running
def n_curves(s, top: float) -> dict:
    """Analytic curves against n: P(R ≤ RT) (eq 7, eq 7 with the retry correction,
    M/M/n), the share of late requests 1 − P(R ≤ RT) (``miss_*``, nan below
    ``engine.sla.MISS_RESOLUTION``) and the p-th percentile wait in ms (eq 1 as
    printed, its quantile, M/M/n)."""
    n = n_grid(s.lam, s.mu, top)
    out = {"n": n,
           "within_eq7": np.asarray(sla.response_cdf(s.rt, s.lam, s.mu, n, *s.delays,
                                                     s.service), float),
           "within_mmn": np.asarray(sla.mmn_response_cdf(s.rt, s.lam, s.mu, n), float),
           "omega_printed_ms": sla.ms_from_s(sla.waiting_percentile(
               s.percentile, s.lam, s.mu, n, *s.delays, printed=True)),
           "omega_ms": sla.ms_from_s(sla.waiting_percentile(s.percentile, s.lam, s.mu, n,
                                                            *s.delays)),
           "omega_mmn_ms": sla.ms_from_s(sla.mmn_waiting_percentile(s.percentile, s.lam,
                                                                    s.mu, n)),
           "n_fix": None, "within_fix": None, "miss_fix": None}
    if n[-1] <= FIX_MAX_N and _fix_useful(s):
        n_fix = np.unique(n[np.round(np.linspace(0, n.size - 1, FIX_POINTS)).astype(int)])
        q = sla.retry_busy_probability(s.lam, s.mu, n_fix, *s.delays)
        out["n_fix"] = n_fix
        out["within_fix"] = np.asarray(sla.response_cdf(s.rt, s.lam, s.mu, n_fix, *s.delays,
                                                        s.service, p_retry_busy=q), float)
        out["miss_fix"] = sla.resolved_miss(out["within_fix"])
    out["miss_eq7"] = sla.resolved_miss(out["within_eq7"])
    out["miss_mmn"] = sla.resolved_miss(out["within_mmn"])
    return out


def resolved_curve(n, miss) -> tuple:
    """(n, share late) at the resolved points only: a hashable curve to pin as a
    baseline (no nan, which would defeat the memo's key comparison)."""
    keep = np.isfinite(np.asarray(miss, float))
    return (tuple(np.asarray(n, float)[keep].tolist()),
            tuple(np.asarray(miss, float)[keep].tolist()))


def sim_grid(s, simulate: bool) -> tuple:
    """SIM_POINTS contiguous replica counts from 4 below eq 7's answer (at least the
    first stable n); empty where simulation is off, eq 7 finds no answer or the
    counts would exceed SIM_MAX_N."""
    approx = answers(s)["approx"]
    if not (simulate and np.isfinite(approx)):
        return ()
    lo = max(int(sla.stable_replicas(s.lam, s.mu)), int(approx - 4))
    if lo + SIM_POINTS - 1 > SIM_MAX_N:
        return ()
    return tuple(float(k) for k in range(lo, lo + SIM_POINTS))


def can_simulate(s, n: int, simulate: bool) -> bool:
    """Whether the what-if point n is simulated (on, stable and small enough)."""
    return bool(simulate and sla.utilisation(s.lam, s.mu, n) < 1.0 and n <= SIM_MAX_N)


# A result keeps its sorted response times (~3 MB per 200,000 requests): few
# entries, and they expire, so a busy server's memory stays bounded.
def arrivals_of(s):
    """The scenario's arrival process for the simulator at its mean rate λ (None:
    Poisson, the simulator's own, so Poisson runs are those of before)."""
    return None if s.arrivals.is_poisson else s.arrivals.process(s.lam)


@memo(48, ttl=3600)
@heavy
def sim_point(s, n: float, n_requests: int):
    """One random-retry simulation (``engine.sla.simulate_dispatch``) under the scenario's
    arrivals, seeded by n."""
    return sla.simulate_dispatch("random_retry", s.lam, s.service, int(n), *s.delays,
                                 n_requests=n_requests, seed=(SEED, int(n)),
                                 arrivals=arrivals_of(s))


@memo(CACHE_SIZE)
def sim_sweep(s, ns: tuple, bar=None) -> dict | None:
    """Simulations at each n of ``ns`` (None if empty), one cached run per point; the
    progress bar moves between points.  Returns the n grid, fractions within RT,
    simulated p-th percentile waits (ms) and the fewest simulated replicas meeting
    the SLA."""
    if not ns:
        return None
    results = []
    for i, n in enumerate(ns):
        results.append(sim_point(s, n, sim_requests(n)))
        if bar is not None:
            bar.progress((i + 1) / len(ns), f"Simulating random dispatch at n = {int(n)}…")
    within = np.array([r.fraction_within(s.rt) for r in results])
    return {"n": np.asarray(ns), "within": within, "miss": sla.resolved_miss(within),
            "omega_ms": sla.ms_from_s([r.waiting_percentile(s.percentile) for r in results]),
            "fewest": sla.fewest_meeting(ns, within, s.percentile),
            "all_meet": bool(within[0] >= s.percentile / 100.0)}


@memo(CACHE_SIZE)
def cdf_curves(s, n: int, simulate: bool) -> dict:
    """Response-time CDFs at n replicas (t in s and ms): eq 7, corrected eq 7, M/M/n,
    and the simulated fraction within t where simulated."""
    hi = 3.0 * s.rt
    if sla.utilisation(s.lam, s.mu, n) < 1.0:
        hi = max(hi, float(sla.mmn_response_percentile(99.9, s.lam, s.mu, n)) * 1.2)
    t = np.linspace(0.0, hi, CDF_POINTS)
    q = (sla.retry_busy_probability(s.lam, s.mu, n, *s.delays)
         if n <= FIX_MAX_N and _fix_useful(s) else None)
    run = sim_point(s, float(n), sim_requests(n)) if can_simulate(s, n, simulate) else None
    return {"t": t, "t_ms": sla.ms_from_s(t),
            "eq7": np.asarray(sla.response_cdf(t, s.lam, s.mu, n, *s.delays, s.service), float),
            "fix": None if q is None else np.asarray(sla.response_cdf(
                t, s.lam, s.mu, n, *s.delays, s.service, p_retry_busy=q), float),
            "mmn": np.asarray(sla.mmn_response_cdf(t, s.lam, s.mu, n), float),
            "sim": None if run is None else run.fraction_within(t)}


@memo(CACHE_SIZE)
def at_replicas(s, n: int, simulate: bool) -> dict:
    """The what-if numbers at n replicas: utilisation, P(R ≤ RT) by eq 7 and simulated."""
    run = sim_point(s, float(n), sim_requests(n)) if can_simulate(s, n, simulate) else None
    rho = float(sla.utilisation(s.lam, s.mu, n))
    within = float(sla.response_cdf(s.rt, s.lam, s.mu, n, *s.delays, s.service))
    return {"stable": rho < 1.0, "utilisation": rho, "capacity": float(n * s.mu),
            "within_eq7": within, "miss_eq7": float(sla.resolved_miss(within)),
            "within_sim": None if run is None else float(run.fraction_within(s.rt)),
            "miss_sim": None if run is None else float(1.0 - run.fraction_within(s.rt))}


def synthetic_interval(hours: float, interval_s: float) -> float:
    """The interval (s) of a synthetic trace: as asked, raised to keep MAX_INTERVALS."""
    return max(float(interval_s), hours * sla.S_PER_HOUR / MAX_INTERVALS)


@memo(CACHE_SIZE)
def synthetic_trace(mean_rate: float, hours: float, interval_s: float, amplitude: float,
                    spikes: int, seed: int) -> tuple:
    return tuple(sla.diurnal_trace(mean_rate, hours, interval_s, amplitude, spikes,
                                   seed=seed).tolist())


@memo(CACHE_SIZE)
def plan(s, p) -> sla.ReplicaPlan:
    """Autoscaled replicas over the trace of ``p`` (``inputs.PlanInputs``, eq 7), against
    static peak provisioning."""
    return sla.plan_replicas(np.asarray(p.trace.rates), s.mu, s.rt, s.percentile, *s.delays,
                             s.service, interval_s=p.trace.interval_s,
                             provisioning_delay=p.provisioning_s, headroom=p.headroom,
                             cost_per_gpu_hour=p.usd_per_gpu_hour)
