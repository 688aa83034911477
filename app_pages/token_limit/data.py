"""Memoised engine calls of the LLM token-limit page (hashable arguments only).

A token law travels as a ``ui.token_law_input.TokenLawChoice``: its key (family and
parameters, or an upload's digest and name) is hashed, its ``law`` computes.  An
arrival process travels as a ``ui.arrivals_input.ArrivalChoice`` (hashable); the exact
curves assume Poisson arrivals, the simulations run under the choice, and Kingman's
GI/G/1 approximation (``engine.core.two_moment``) stands beside them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import token_limit
from engine.fit import fit_token_latency, fit_token_latency_with_input
from engine.measured import read_vllm_bench
from engine.presets import token_latency_profiles
from ui.arrivals_input import POISSON
from ui.budget import heavy, long_running
from ui.memo import memo
from ui.uploads import decode_text

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
SEED = 2024
N_POINTS = 33               # n_max grid of the curves
N_SIM_POINTS = 7            # simulated limits per curve
AT_STREAM = 99              # seed stream of the simulations at one limit (answers, optima)
SIM_JOBS = 100_000
SIM_MAX_LOAD = 0.95         # no simulation without impatience closer to saturation
MAX_NO_LIMIT_TOKENS = token_limit.NO_LIMIT_MAX_TOKENS
A_S_BOUNDS = (1e-4, 1.0)       # a (s per output token) and c (s) the page accepts: the
C_S_BOUNDS = (0.0, 60.0)       # bounds of inputs.A_S and inputs.C_S_FIELD


@memo(CACHE_SIZE)
def n_max_grid(lo: int, hi: int) -> tuple:
    return tuple(float(x) for x in token_limit.limit_grid(lo, hi, N_POINTS))


@memo(CACHE_SIZE)
def sim_limits(lo: int, hi: int) -> tuple:
    return tuple(float(x) for x in token_limit.limit_grid(lo, hi, N_SIM_POINTS))


@memo(CACHE_SIZE)
def preset_table() -> dict:
    return {pid: (p.name, p.source, tuple(p.input_tokens), tuple(p.output_tokens),
                  tuple(p.latency_s)) for pid, p in token_latency_profiles().items()}


@memo(8)
def vllm_profile(digest: str, _data: bytes) -> dict:
    """a = mean TPOT and c = mean TTFT (s) of a ``vllm bench serve`` JSON (``_data``,
    keyed by its ``digest``): {"a_s", "c_s", "result", "digest"}; ``ValueError`` if it
    is not one or a and c lie outside the page's bounds."""
    result = read_vllm_bench(decode_text(_data))
    a, c = result.mean_tpot_ms / 1000.0, result.mean_ttft_ms / 1000.0
    for value, name, low, high in ((a, "mean TPOT", A_S_BOUNDS[0], A_S_BOUNDS[1]),
                                   (c, "mean TTFT", C_S_BOUNDS[0], C_S_BOUNDS[1])):
        if not low <= value <= high:
            raise ValueError(f"{name} = {value * 1000:.4g} ms lies outside "
                             f"{low * 1000:g}–{high * 1000:g} ms, the page's range")
    return {"a_s": a, "c_s": c, "result": result, "digest": digest}


@memo(CACHE_SIZE)
def latency_fit(output_tokens: tuple, latency_s: tuple):
    return fit_token_latency(output_tokens, latency_s)


@memo(CACHE_SIZE)
def latency_fit_with_input(output_tokens: tuple, input_tokens: tuple, latency_s: tuple):
    return fit_token_latency_with_input(output_tokens, input_tokens, latency_s)


@memo(CACHE_SIZE)
def law_summary(law) -> token_limit.TokenLawSummary:
    """Mean tokens (no limit, exact), a histogram and the CDF of the token law."""
    return token_limit.token_law_summary(law.law, no_limit_max_tokens=MAX_NO_LIMIT_TOKENS)


@memo(CACHE_SIZE)
@long_running
def curves(law, lam, a, c, patience, grid: tuple) -> token_limit.LimitCurves:
    return token_limit.limit_curves(lam, a, c, law.law, np.array(grid), patience)


@memo(256)
def point(law, lam, a, c, n_max, patience, method) -> token_limit.LimitPoint:
    return token_limit.limit_point(lam, a, c, law.law, n_max, patience, method)


@memo(CACHE_SIZE)
def best_v1(law, lam, a, c, theta) -> token_limit.OptimalLimit:
    return token_limit.optimal_limit(lam, a, c, law.law, theta)


@memo(CACHE_SIZE)
def best_v2(law, lam, a, c, theta, ell, patience, method, printed) -> token_limit.OptimalLimit:
    """The V2 search (coarse to fine): cached."""
    return token_limit.optimal_limit(lam, a, c, law.law, theta, ell, patience, method=method,
                                     printed_sign=printed)


@memo(CACHE_SIZE)
def paper(a, c) -> tuple:
    return token_limit.paper_comparison(a, c)


def arrivals_at(arrivals, lam) -> dict:
    """The simulator's ``arrivals`` keyword for the choice ``arrivals`` at ``lam``
    (requests/s): none for Poisson (the simulator's own arrivals, as before), else the
    process time-scaled to ``lam``."""
    return {} if arrivals.is_poisson else {"arrivals": arrivals.process(lam)}


@memo(512)
@heavy
def _sim_point(law, lam, a, c, n_max, patience, i, arrivals=POISSON):
    return token_limit.simulate_token_queue(lam, a, c, law.law, n_max, patience,
                                            n_jobs=SIM_JOBS, seed=[SEED, i],
                                            **arrivals_at(arrivals, lam))


@memo(CACHE_SIZE)
def approx_wait(law, lam, a, c, limits: tuple, scv_arrival: float) -> np.ndarray:
    """Kingman's GI/G/1 approximation of the mean wait (s, no one gives up) at the token
    ``limits``: arrivals of inter-arrival SCV ``scv_arrival`` at ``lam`` per s, service
    S = a·min(n, n_max) + c with E[S] and its SCV cs² = E[S²]/E[S]² − 1 from the clipped
    token moments (eqs 2-5).  Exact (eq 1, P-K) at ``scv_arrival`` = 1; inf where ρ ≥ 1."""
    e1, e2 = token_limit.clipped_token_moments(law.law, np.array(limits, dtype=float))
    es, es2 = token_limit.service_moments(a, c, np.asarray(e1), np.asarray(e2))
    cs2 = np.maximum(es2 / (es * es) - 1.0, 0.0)
    return np.asarray(token_limit.mean_wait_gg1(lam, es, scv_arrival, cs2), dtype=float)


@dataclass(frozen=True)
class TrafficPoint:
    """The chosen arrivals at one limit: Kingman's approximation of the mean wait (s), and
    simulations without impatience (None where the load is ``SIM_MAX_LOAD`` or more)
    and with patience τ (``engine.token_limit.TokenQueueSimResult``)."""

    approx_wait: float
    plain: token_limit.TokenQueueSimResult | None
    patient: token_limit.TokenQueueSimResult


@memo(256)
def traffic_at(law, lam, a, c, n_max, patience, arrivals) -> TrafficPoint:
    """``TrafficPoint`` of the arrival choice ``arrivals`` at the token limit ``n_max``."""
    load = float(token_limit.utilization(lam, a, c, law.law, n_max))
    plain = (_sim_point(law, lam, a, c, n_max, None, AT_STREAM, arrivals)
             if load < SIM_MAX_LOAD else None)
    return TrafficPoint(float(approx_wait(law, lam, a, c, (n_max,), arrivals.scv)[0]), plain,
                        _sim_point(law, lam, a, c, n_max, patience, AT_STREAM, arrivals))


@dataclass(frozen=True)
class SimSweep:
    """Simulated points over the limits: without impatience (where stable enough) and
    with patience τ; waits in seconds with their 95% CI half-widths."""

    plain_n: np.ndarray
    plain_wait: np.ndarray
    plain_ci: np.ndarray
    n: np.ndarray
    served_wait: np.ndarray
    served_ci: np.ndarray
    loss: np.ndarray
    loss_ci: np.ndarray


@memo(CACHE_SIZE)
def sim_sweep(law, lam, a, c, patience, limits: tuple, bar=None,
              arrivals=POISSON) -> SimSweep:
    """Simulated points at ``limits`` under ``arrivals`` (an ``ArrivalChoice``),
    without impatience (where the load is below ``SIM_MAX_LOAD``) and with patience τ;
    one cached run per point, so a progress bar moves between them."""
    loads = np.asarray(token_limit.utilization(lam, a, c, law.law, np.array(limits)))
    jobs = [(n, None, i) for i, (n, r) in enumerate(zip(limits, loads)) if r < SIM_MAX_LOAD]
    jobs += [(n, patience, i) for i, n in enumerate(limits)]
    out = {"plain": [], "patient": []}
    for j, (n, tau, i) in enumerate(jobs):
        r = (_sim_point(law, lam, a, c, n, tau, i) if arrivals.is_poisson
             else _sim_point(law, lam, a, c, n, tau, i, arrivals))
        out["plain" if tau is None else "patient"].append((n, r))
        if bar is not None:
            bar.progress((j + 1) / len(jobs), "Simulating…")
    plain, patient = out["plain"], out["patient"]
    return SimSweep(plain_n=np.array([n for n, _ in plain]),
                    plain_wait=np.array([r.mean_wait_all for _, r in plain]),
                    plain_ci=np.array([r.ci95_wait_all for _, r in plain]),
                    n=np.array([n for n, _ in patient]),
                    served_wait=np.array([r.mean_wait_served for _, r in patient]),
                    served_ci=np.array([r.ci95_wait_served for _, r in patient]),
                    loss=np.array([r.loss_fraction for _, r in patient]),
                    loss_ci=np.array([r.ci95_loss for _, r in patient]))
