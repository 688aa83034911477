"""LLM batching strategies with token-dependent batch times (Yang et al. §IV).

A batch of b requests whose longest output has l tokens takes
H(b, l) = k1·b + k2 + k3·b·l + k4·l seconds (eq 18); requests arrive as a
Poisson process (per second) with i.i.d. output token counts from a law on
[0, ∞).  Submodules, by what they hold:

* ``batch_times``  argument checks, the law of the longest output L_b (eq 23), H, μ[b] (eq 24)
* ``stability``    the largest stable arrival rate of each strategy
* ``fixed``        fixed batching, exact (M/D^b/1) and eq 25 as printed
* ``dynamic``      dynamic batching, exact (the departure chain with random batch times)
* ``bounds``       Inoue's φ with eq 20, eq 16's φ0, φ1 as printed
* ``curves``       E[L_b], μ[b] over batch sizes; fixed curves and the bound over loads;
                   a chain's curve and the strategies' simulations placed by load
* ``coverage``     which strategy is stable where and how its latency is known there
* ``answers``      b*, the recommended b_max, every strategy compared at a load (§V-C:
                   ``StrategyLatency``, ``ComparisonRow``)
* ``model``        ``BatchTimes``: H and the output-token law bound, every answer a method
* ``sim``          the discrete-event simulator (dynamic, fixed, elastic; continuous on
                   ``engine.llm_serving``'s step-by-step simulator): records
                   (``simulate_records``) and their summary (``llm_sim_summary``)

The model, its derivations and the paper's errata: docs/models/llm_batching.md.
"""
from .answers import (B_MAX_CANDIDATES, ComparisonRow, StrategyLatency, best_fixed_batch_size,
                      best_strategy, compare_strategies, paper_comparison, paper_laws,
                      prefer_simulated, recommended_b_max, strategy_limits)
from .batch_times import (batch_time, check_dist, check_k, expected_max_tokens, max_token_moments,
                          max_token_nodes, mean_batch_time, optimal_batch_size, throughput,
                          upper_support)
from .bounds import dynamic_wait_bound, linear_bound_coefficients, yang_phi, yang_phi0, yang_phi1
from .coverage import (EXACT, NO_EXACT, NOT_COMPUTED, SIMULATED, UNSTABLE, StrategyMap, chain_loads,
                       curve_grid, strategy_map)
from .curves import (BatchSizeCurve, ChainCurve, FixedCurves, StrategySims, batch_size_curve,
                     chain_curve, fixed_curves, load_grid, sim_jobs, strategy_sims)
from .dynamic import (CHAIN_MAX_STATES, DynamicSolution, dynamic_sojourn, dynamic_solution,
                      dynamic_wait)
from .fixed import (fixed_batch_roots_eq25, fixed_batch_sojourn, fixed_batch_wait,
                    fixed_batch_wait_eq25)
from .model import BatchTimes
from .sim import LLMSimRecords, LLMSimResult, llm_sim_summary, simulate, simulate_records
from .stability import B_HORIZON, STRATEGIES, stability_limit

__all__ = [
    "B_HORIZON", "B_MAX_CANDIDATES", "CHAIN_MAX_STATES", "EXACT", "NOT_COMPUTED", "SIMULATED",
    "NO_EXACT", "STRATEGIES", "UNSTABLE", "StrategyMap", "chain_loads", "curve_grid", "strategy_map",
    "BatchTimes", "BatchSizeCurve", "ChainCurve", "StrategySims", "chain_curve", "sim_jobs", "strategy_sims",
    "ComparisonRow", "DynamicSolution", "FixedCurves", "LLMSimRecords", "LLMSimResult",
    "StrategyLatency",
    "batch_size_curve", "batch_time", "best_fixed_batch_size", "best_strategy", "check_dist",
    "check_k", "compare_strategies", "dynamic_sojourn", "dynamic_solution", "dynamic_wait",
    "dynamic_wait_bound", "expected_max_tokens", "fixed_batch_roots_eq25", "fixed_batch_sojourn",
    "fixed_batch_wait", "fixed_batch_wait_eq25", "fixed_curves", "linear_bound_coefficients",
    "load_grid", "max_token_moments", "max_token_nodes", "mean_batch_time", "optimal_batch_size",
    "paper_comparison", "paper_laws", "prefer_simulated", "recommended_b_max", "simulate",
    "simulate_records", "llm_sim_summary",
    "stability_limit", "strategy_limits", "throughput", "upper_support", "yang_phi",
    "yang_phi0", "yang_phi1",
]
