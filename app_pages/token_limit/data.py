"""Memoised engine calls of the LLM token-limit page (hashable arguments only).

A token law travels as a ``ui.token_law_input.TokenLawChoice``: its key (family and
parameters, or an upload's digest and name) is hashed, its ``law`` computes.  An
arrival process travels as a ``ui.arrivals_input.ArrivalChoice`` (hashable); the exact
curves assume Poisson arrivals, the simulations run under the choice, and Kingman's
GI/G/1 approximation (``engine.core.two_moment``) stands beside them.
"""
from __future__ import annotations

import numpy as np

from engine import token_limit
from engine.core.domains import PROFILE_A_S, PROFILE_C_S
from engine.fit import fit_token_latency, fit_token_latency_with_input
from engine.measured import read_vllm_bench
from engine.presets import token_latency_profiles
from ui.arrivals_input import POISSON
from ui.budget import heavy, long_running
from ui.memo import memo, over_points
from ui.uploads import decode_text

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
SEED = 2024
N_POINTS = 33               # n_max grid of the curves
N_SIM_POINTS = 7            # simulated limits per curve
AT_STREAM = 99              # seed stream of the simulations at one limit (answers, optima)
SIM_JOBS = 100_000
SIM_MAX_LOAD = token_limit.SIM_MAX_LOAD   # no simulation without impatience closer to saturation
MAX_NO_LIMIT_TOKENS = token_limit.NO_LIMIT_MAX_TOKENS
A_S_BOUNDS = (PROFILE_A_S.low, PROFILE_A_S.high)   # a (s per output token) and c (s) the page
C_S_BOUNDS = (PROFILE_C_S.low, PROFILE_C_S.high)   # takes: inputs.A_S and inputs.C_S_FIELD


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
    a, c = token_limit.profile_from_bench(result)
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


def queue(law, lam, a, c, patience=None) -> token_limit.TokenLimitQueue:
    """The queue of these inputs (``engine.token_limit.TokenLimitQueue``; ``law`` a
    ``TokenLawChoice``, whose key stands for its law in the memo keys below): every
    call below is one of its methods, memoised on (law, λ, a, c, ...)."""
    return token_limit.TokenLimitQueue(lam, a, c, law.law, patience)


@memo(CACHE_SIZE)
@long_running
def curves(law, lam, a, c, patience, grid: tuple) -> token_limit.LimitCurves:
    return queue(law, lam, a, c, patience).curves(np.array(grid))


@memo(256)
def point(law, lam, a, c, n_max, patience, method) -> token_limit.LimitPoint:
    return queue(law, lam, a, c, patience).limit_point(n_max, method)


@memo(CACHE_SIZE)
def best_v1(law, lam, a, c, theta) -> token_limit.OptimalLimit:
    return queue(law, lam, a, c).optimal_limit(theta)


@memo(CACHE_SIZE)
def best_v2(law, lam, a, c, theta, ell, patience, method, printed) -> token_limit.OptimalLimit:
    """The V2 search (coarse to fine): cached."""
    return queue(law, lam, a, c, patience).optimal_limit(theta, ell, method=method,
                                                         printed_sign=printed)


@memo(CACHE_SIZE)
def paper(a, c) -> tuple:
    return token_limit.paper_comparison(a, c)


@memo(512)
@heavy
def _sim_point(law, lam, a, c, n_max, patience, i, arrivals=POISSON):
    return queue(law, lam, a, c, patience).simulate(n_max, SIM_JOBS, [SEED, i],
                                                    **arrivals.keywords_at(lam))


@memo(CACHE_SIZE)
def approx_wait(law, lam, a, c, limits: tuple, scv_arrival: float) -> np.ndarray:
    """Kingman's GI/G/1 mean wait (s) at the token ``limits``
    (``engine.token_limit.approx_mean_wait``)."""
    return queue(law, lam, a, c).approx_mean_wait(np.array(limits, dtype=float), scv_arrival)


@memo(256)
def traffic_at(law, lam, a, c, n_max, patience, arrivals) -> token_limit.TrafficPoint:
    """``TrafficPoint`` of the arrival choice ``arrivals`` at the token limit ``n_max``."""
    plan = queue(law, lam, a, c, patience).sim_plan((n_max,), SIM_MAX_LOAD, stream=AT_STREAM)
    runs = [_sim_point(law, lam, a, c, n, tau, i, arrivals) for n, tau, i in plan]
    return token_limit.traffic_point(approx_wait(law, lam, a, c, (n_max,), arrivals.scv)[0],
                                     plan, runs)


@memo(CACHE_SIZE)
def sim_sweep(law, lam, a, c, patience, limits: tuple, bar=None,
              arrivals=POISSON) -> token_limit.LimitSimSweep:
    """Simulated points at ``limits`` under ``arrivals`` (an ``ArrivalChoice``),
    without impatience (where the load is below ``SIM_MAX_LOAD``) and with patience τ;
    one memoised run per point, so a progress bar moves between them."""
    plan = queue(law, lam, a, c, patience).sim_plan(limits, SIM_MAX_LOAD)
    runs = over_points(_sim_point, [(law, lam, a, c, n, tau, i, arrivals)
                                    for n, tau, i in plan], bar)
    return token_limit.limit_sim_sweep(plan, runs)
