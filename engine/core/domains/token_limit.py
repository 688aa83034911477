"""Domains of LLM token limits (Yang et al. §III, engine/token_limit/) and the token
laws: times in s, lengths in tokens."""
from __future__ import annotations

import numpy as np

from .base import Choice, Domain, check_limit

A_S_PER_TOKEN = Domain("a", "s per token", low=0.0, low_open=True, typical=(0.005, 0.05),
                       description="time per output token a (slope of S = a·n + c)")
C_S = Domain("c", "s", low=0.0, typical=(0.0, 2.0),
             description="fixed time per request c (intercept of S = a·n + c)")
LAM_PER_S = Domain("lam", "requests per s", low=0.0, allow_inf=True, typical=(0.0, 0.1),
                   description="Poisson arrival rate λ of requests")
N_MAX = Domain("n_max", "tokens", low=1.0, integer=True, allow_inf=True, typical=(1, 4000),
               description="max output-token limit (None or inf: no limit)")
PATIENCE_S = Domain("patience", "s", low=0.0, low_open=True, allow_inf=True, typical=(1.0, 300.0),
                    description="deterministic patience τ: a request that would wait longer leaves")
THETA = Domain("theta", "", low=0.0, high=1.0, typical=(0.5, 1.0),
               description="weight θ of utility against delay in V1, V2 (eqs 10-11)")
LOSS_COST = Domain("loss_cost", "utility per lost request", low=0.0, typical=(0.0, 10.0),
                   description="cost ℓ of a lost request in V2 (eq 11)")
TOKEN_LOG_MEAN = Domain("log_mean", "log tokens", low=-50.0, high=50.0, typical=(4.0, 9.0),
                        description="mean of log X for a lognormal token law")
TOKEN_LOG_SD = Domain("log_sd", "log tokens", low=0.0, low_open=True, high=10.0, typical=(0.1, 1.5),
                      description="standard deviation of log X for a lognormal token law")
TOKEN_BOUND = Domain("token_bound", "tokens", low=0.0, typical=(0.0, 4000.0),
                     description="a bound or location of a token law")
TOKEN_SD = Domain("sd", "tokens", low=0.0, low_open=True, typical=(10.0, 1000.0),
                  description="standard deviation of a (truncated) normal token law")
SIM_LAM_PER_S = Domain("lam", "requests per s", low=0.0, low_open=True, typical=(0.001, 0.1),
                       description="arrival rate of a simulated run (positive and finite)")
FINITE_N_MAX = Domain("n_max", "tokens", low=1.0, integer=True, typical=(1, 4000),
                      description="a token limit on a curve (finite)")
LOAD_RHO = Domain("rho", "", low=0.0, allow_inf=True, typical=(0.0, 1.0),
                  description="offered load ρ = λE[S]")
MEAN_TOKENS = Domain("mean_tokens", "tokens", low=1.0, allow_inf=True, typical=(1.0, 4000.0),
                     description="mean output tokens a request asks")
PROFILE_A_S = Domain("a_s", "s per token", low=1e-4, high=1.0, typical=(0.005, 0.05),
                     description="time per output token of a latency profile a page takes "
                                 "(a vLLM benchmark's mean TPOT)")
PROFILE_C_S = Domain("c_s", "s", low=0.0, high=60.0, typical=(0.0, 2.0),
                     description="fixed time per request of a latency profile a page takes "
                                 "(a vLLM benchmark's mean TTFT)")
LIMIT_METHOD = Choice("method", ("exact", "interpolation"),
                      description="how the loss with patience is solved: the exact M/G/1+D "
                                  "queue, or the interpolation of Yang et al. §III")


def check_n_max(n_max) -> np.ndarray:
    """n_max as a float array where ``inf`` means no limit (``None`` accepted)."""
    return check_limit(N_MAX, n_max)
