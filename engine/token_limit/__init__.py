"""LLM max-output-token limits with impatient users (Yang et al. §III): the public names.

Poisson requests at one FCFS LLM server; a request asking n output tokens gets
min(n, n_max) and takes S = a·min(n, n_max) + c seconds; a user whose wait
would exceed the patience τ leaves.  Submodules: ``formulas`` (token moments,
M/G/1 wait, load, utility, objectives), ``patience`` (the exact M/G/1+D solver,
closed forms, ``impatience``), ``curves`` (over n_max, token-law summary),
``answers`` (one limit, the optimal limit, §V-B paper vs model, a profile from a
vLLM benchmark), ``sweeps`` (the simulated points of the charts), ``queue`` (``TokenLimitQueue``,
the frozen model object), ``sim`` (the
simulator; any arrival process or a replayed trace with ``arrivals=``, beside it
Kingman's GI/G/1 approximation ``mean_wait_gg1`` from ``engine.core.two_moment``).
The model, derivations and errata: docs/models/token_limit.md.
"""
from ..core.two_moment import mean_wait_gg1
from .answers import (LimitPoint, OptimalLimit, PaperValue, limit_point, optimal_limit,
                      paper_comparison, percent_change, profile_from_bench)
from .curves import (NO_LIMIT_MAX_TOKENS, LimitCurves, TokenLawSummary, approx_mean_wait,
                     limit_curves, limit_grid, token_law_summary)
from .formulas import (EXACT_SPAN, TAIL_SPLIT, clipped_token_moments, largest_stable_limit,
                       mean_requested_tokens, mean_utility, mean_wait, objective_v1, objective_v2,
                       rate_at_load, service_moments, utilization)
from .patience import (EXACT_LAM_TAU, Impatience, ServiceLaw, impatience,
                       md1_deterministic_patience, mm1_deterministic_patience)
from .queue import TokenLimitQueue
from .sim import (TokenQueueRecords, TokenQueueSimResult, simulate_token_queue,
                  simulate_token_queue_records, token_queue_summary)
from .sweeps import (SIM_MAX_LOAD, LimitSimSweep, TrafficPoint, limit_sim_sweep, sim_plan,
                     traffic_point)

__all__ = ["EXACT_LAM_TAU", "EXACT_SPAN", "NO_LIMIT_MAX_TOKENS", "SIM_MAX_LOAD", "TAIL_SPLIT",
           "Impatience", "LimitCurves", "LimitPoint", "LimitSimSweep", "OptimalLimit",
           "PaperValue", "ServiceLaw", "TokenLawSummary", "TokenLimitQueue", "TokenQueueRecords", "TokenQueueSimResult",
           "TrafficPoint", "simulate_token_queue_records", "token_queue_summary",
           "approx_mean_wait", "clipped_token_moments", "impatience", "limit_sim_sweep",
           "profile_from_bench", "sim_plan", "traffic_point",
           "largest_stable_limit", "limit_curves", "limit_grid", "limit_point",
           "md1_deterministic_patience", "mean_requested_tokens", "mean_utility", "mean_wait",
           "mean_wait_gg1",
           "mm1_deterministic_patience", "objective_v1", "objective_v2", "optimal_limit",
           "paper_comparison", "percent_change", "rate_at_load", "service_moments", "simulate_token_queue", "token_law_summary",
           "utilization"]
