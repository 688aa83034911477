"""Memoised engine calls of the LLM batching page (hashable arguments only).

The model is the scenario's ``engine.llm_batching.BatchTimes`` (the batch-time law and
the output-token law: hashable, equal when the coefficients are and the law object is
the same one, which the token-law input memoises by its key).  Exact chains and
simulations run point by point, each point memoised, with a progress bar.  The exact
chains and formulas assume Poisson arrivals; the simulations run under the page's
arrival choice (``ui.arrivals_input.ArrivalChoice``, hashable), time-scaled to each load.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import llm_batching as lb
from engine.presets import llm_batch_time_presets
from ui.arrivals_input import POISSON
from ui.memo import memo, over_points

CACHE_SIZE = 64          # results kept per memoised function (ui/memo.py)
SEED = 2024
N_FINE = 80                                                    # analytic λ grid
COARSE = (0.1, 0.2, 0.325, 0.45, 0.575, 0.7, 0.85, 1.0)        # × λ max: chains, simulations
CHAIN_LOAD = {"dynamic": 0.8, "capped": 0.9}   # exact chains only below this share of capacity
CHAIN_POINTS = 4                               # extra chain loads up to the share: the curve's end
SIM_LOAD = 0.95
AT_STREAM = 99                                 # seed stream of a simulation at one load
B_TOP = 512                                                    # batch sizes of the Fig 3 chart
CHAINS = ("dynamic", "capped")                                 # strategies with an exact chain
STRATEGIES = ("dynamic", "capped", "fixed", "elastic", "continuous")
LABELS = {"dynamic": "dynamic", "capped": "capped dynamic (b_max)", "fixed": "fixed b",
          "elastic": "elastic", "continuous": "continuous (vLLM scheduler, whole prompts)"}
# continuous batching runs on the LLM serving simulator (engine.llm_batching.sim): said in
# words wherever the page explains it
CONTINUOUS_HOW = ("continuous batching (iteration-level) runs on the LLM serving simulator: "
                  "vLLM's scheduler without chunked prefill (whole prompts in prompt-only "
                  "steps), no token budget, the sidebar's KV cache in blocks of 1 token (a request "
                  "is admitted when its prompt fits; the newest is preempted when the replies "
                  "outgrow the cache), no prefix cache; a prompt step of j joining requests "
                  "takes k1·j + k2 s, a decode step of R running requests k3·R + k4 s, and a "
                  "reply of n tokens is 1 prompt step (its first token) and n − 1 decode steps")


@memo(CACHE_SIZE)
def presets() -> dict:
    return llm_batch_time_presets()


@memo(CACHE_SIZE)
def batch_curve(times) -> lb.BatchSizeCurve:
    """E[L_b] and μ[b] for b ≤ ``B_TOP`` (Fig 3)."""
    return times.batch_size_curve(B_TOP)


@memo(CACHE_SIZE)
def limits(times, b, b_max, kv, prompt) -> dict:
    """Stability limit (requests/s) of every strategy, by key of ``STRATEGIES``."""
    return times.strategy_limits(b, b_max, kv, prompt)


def coarse_grid(lam_max) -> np.ndarray:
    return np.asarray(COARSE) * lam_max


@dataclass(frozen=True, eq=False)
class FixedLoads:
    fine: lb.FixedCurves       # fixed-b sojourn, eq 25 and the dynamic bound on the fine grid
    coarse: np.ndarray         # fixed-b sojourn on the coarse grid (s)


@memo(CACHE_SIZE)
def fixed_curves(times, b, lam_max) -> FixedLoads:
    """Fixed batching and the dynamic bound over the λ axis (s); the fine grid has
    points up to fixed batching's capacity however short its stable stretch."""
    grid = lb.curve_grid(lam_max, times.stability_limit("fixed", b=b), N_FINE)
    return FixedLoads(times.fixed_curves(grid, b), times.fixed_sojourn(coarse_grid(lam_max), b))


def chain_states(b_max) -> int:
    """State ceiling of an exact chain: its cost grows like states² × min(b_max, states),
    so uncapped and large-b_max chains get fewer states (each solve well under 1 s)."""
    if b_max is None or b_max > 128:
        return 256
    return 1024 if b_max <= 64 else 512


@memo(512)
def _chain_point(lam, times, b_max) -> lb.DynamicSolution:
    return times.dynamic_solution(lam, b_max, chain_states(b_max))


@memo(CACHE_SIZE)
def chain_curve(times, b_max, lam_max, limit, bar=None, share=0.8) -> lb.ChainCurve:
    """Exact mean sojourn (s) at the coarse loads and ``CHAIN_POINTS`` more up to ``share``
    of the limit (``lb.chain_curve``); NaN from the first load whose chain needs more than
    ``chain_states`` states on (the loads above it are not solved)."""
    coarse = coarse_grid(lam_max)
    lam = lb.chain_loads(coarse, limit, share, CHAIN_POINTS)
    failed = []

    def point(x):
        if failed:
            return None
        sol = _chain_point(x, times, b_max)
        if not sol.converged:
            failed.append(x)
        return sol

    solutions = over_points(point, [(float(x),) for x in lam], bar,
                            "Solving the exact dynamic-batching chain…")
    return lb.chain_curve(lam, coarse, solutions)


def chains(times, b_max, lam_max, lims: dict, bar=None) -> dict:
    """The exact chains of uncapped and capped dynamic batching, by strategy."""
    return {"dynamic": chain_curve(times, None, lam_max, lims["dynamic"], bar,
                                   CHAIN_LOAD["dynamic"]),
            "capped": chain_curve(times, b_max, lam_max, lims["capped"], bar,
                                  CHAIN_LOAD["capped"])}


def exact_curves(times, b, b_max, lam_max, lims: dict, bar=None) -> dict:
    """Exact mean sojourn (s) on the coarse grid: uncapped and capped dynamic, fixed b."""
    out = {s: c.coarse_s for s, c in chains(times, b_max, lam_max, lims, bar).items()}
    out["fixed"] = fixed_curves(times, b, lam_max).coarse
    return out


@memo(1024)
def _sim_point(strategy, lam, times, b, b_max, kv, prompt, n_jobs, i, arrivals=POISSON):
    name = "dynamic" if strategy == "capped" else strategy
    options = dict(kv_capacity_tokens=kv, prompt_tokens=prompt) if strategy == "continuous" else {}
    return times.simulate(name, lam, b=b if strategy == "fixed" else None,
                          b_max=b_max if strategy == "capped" else None, n_jobs=n_jobs,
                          seed=[SEED, i], **options, **arrivals.keywords_at(lam))


@memo(CACHE_SIZE)
def sim_sweep(times, b, b_max, kv, prompt, lam_max, lims: dict, n_jobs, bar=None,
              arrivals=POISSON) -> lb.StrategySims:
    """Every strategy simulated at the coarse loads below ``SIM_LOAD`` of its limit,
    under ``arrivals`` (an ``ArrivalChoice``), each point memoised."""
    lam = coarse_grid(lam_max)
    jobs = lb.sim_jobs(lam, STRATEGIES, lims, SIM_LOAD)
    extra = () if arrivals.is_poisson else (arrivals,)
    runs = over_points(_sim_point, [(s, float(lam[i]), times, b, b_max, kv, prompt, n_jobs, i,
                                     *extra) for s, i in jobs], bar,
                       "Simulating the strategies…")
    return lb.strategy_sims(lam, STRATEGIES, jobs, runs)


@memo(256)
def best_fixed(lam, times) -> tuple[int, float]:
    b = times.best_fixed_batch_size(lam)
    return b, (float(times.fixed_sojourn(lam, b)) if b else float("inf"))


@memo(256)
def fixed_latency(lam, times, b) -> float:
    """Mean latency (s) of fixed batches of ``b`` at ``lam``: the chart's exact fixed-b curve."""
    return float(times.fixed_sojourn(lam, b))


@memo(256)
def recommended_b_max(lam, times) -> tuple[int, float]:
    return times.recommended_b_max(lam, max_states=256)


@memo(256)
def fixed_sim_at(lam, times, b, n_jobs, arrivals):
    """Fixed batches of ``b`` simulated at one load ``lam`` under ``arrivals`` (the
    results table's value beside the exact, Poisson one)."""
    return _sim_point("fixed", lam, times, b, None, None, 0.0, n_jobs, AT_STREAM, arrivals)


@memo(CACHE_SIZE)
def strategy_map(times, b, b_max, kv, prompt, lam_max, simulate, n_jobs, bar=None,
                 arrivals=POISSON):
    """Which strategy is stable where and how its latency is known (the page's one
    source for its caption, tables, charts and best-strategy view): simulated under
    ``arrivals`` where simulated, else exact (Poisson arrivals)."""
    lims = limits(times, b, b_max, kv, prompt)
    exact = exact_curves(times, b, b_max, lam_max, lims, bar)
    sweep = None
    if simulate:
        sweep = (sim_sweep(times, b, b_max, kv, prompt, lam_max, lims, n_jobs, bar)
                 if arrivals.is_poisson else
                 sim_sweep(times, b, b_max, kv, prompt, lam_max, lims, n_jobs, bar,
                           arrivals=arrivals))
    return lb.strategy_map(coarse_grid(lam_max), STRATEGIES, LABELS, lims, exact,
                           None if sweep is None else sweep.mean_s, share=CHAIN_LOAD,
                           states={"dynamic": chain_states(None),
                                   "capped": chain_states(b_max)},
                           sim_load=SIM_LOAD)
