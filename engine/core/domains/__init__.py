"""Declared domains of the engine's parameters, checked at one boundary.

Every public engine function validates its arguments here (scipy's ``_argcheck``
pattern): a value outside its declared domain raises ``ValueError`` naming the
parameter and the valid range.  The same declarations give slider bounds and
the ranges property tests draw from (``typical``).

``base`` holds the ``Domain`` and ``Choice`` classes; each other module declares
one model's domains.  Every name is imported here: ``from engine.core.domains import LAM``.
"""
from types import ModuleType as _ModuleType

from .base import Choice, Domain, check_limit
from .shared import JIT_BACKEND, SERVICE_LAW, SUMMARY_PERCENTILE
from .batching import (
    LAM, ALPHA, TAU0, B_MAX, BETA, C0, DELAY, PREFERRED, N_JOBS, WARMUP, N_CLIENTS,
    THINK_TIME, INSTANCES, N_BATCHES, WARMUP_BATCHES, BATCH_MEAN_SIZE, BATCH_RHO,
    BATCH_RATE_PER_S, BATCH_TARGET_MS, BATCH_PRICE, BATCH_ENERGY_J, BATCH_POWER_W,
    CURVE_POINTS, CURVE_MAX_FRACTION, BATCH_SIZE_B, BATCH_SIZE_B0, LOAD_UNIT, THINK_LAW,
    check_b_max)
from .token_limit import (
    A_S_PER_TOKEN, C_S, LAM_PER_S, N_MAX, PATIENCE_S, THETA, LOSS_COST, TOKEN_LOG_MEAN,
    TOKEN_LOG_SD, TOKEN_BOUND, TOKEN_SD, SIM_LAM_PER_S, FINITE_N_MAX, LOAD_RHO,
    MEAN_TOKENS, PROFILE_A_S, PROFILE_C_S, LIMIT_METHOD, check_n_max)
from .llm_batching import (
    LLM_BATCH, LLM_MAX_TOKENS, LLM_K1, LLM_K2, LLM_K3, LLM_K4, LLM_KV_CAPACITY,
    LLM_PROMPT_TOKENS, LLM_STRATEGY, LLM_BATCH_TIME)
from .sla import (
    MU, N_BACKENDS, NET_DELAY, PERCENTILE, RESPONSE_TARGET, N_REQUESTS, HEADROOM,
    PROVISIONING_DELAY, INTERVAL, COST, LATENCY_TARGET_MS, PROBABILITY, SIM_RATE_PER_S,
    RETRY_CYCLE_S, TRACE_MEAN_RATE, TRACE_HOURS, SPIKES, SPIKE_FACTOR, SPIKE_MINUTES,
    TRACE_NOISE, MIN_INTERVAL, TRACE_INTERVALS, REPLICA_TOP, REPLICA_ANSWER,
    REL_TOLERANCE, TRACE_KIND, DISPATCH_POLICY)
from .pipeline import (
    PIPE_MU, PIPE_MU_CPU, PIPE_MU_MEM, PIPE_MU_CU, PIPE_K, PIPE_C, PIPE_JOB_SIZE_BYTES,
    PIPE_FLOPS_PER_BYTE, PIPE_SPEEDUP, PIPE_LOAD_FRACTION, PIPE_SIM_LAM, PIPE_BLOCKING,
    PIPE_METHOD, PIPE_VARY, PIPE_PRECISION, PIPE_LOAD_MODE)
from .arrivals import (
    ARRIVAL_RATE, ARRIVAL_SCV, PHASE_RATE, SWITCH_RATE, COUNT_WINDOW, COUNT_TIME,
    N_ARRIVALS, COUNT_MAX)
from .llm_serving import (
    STEP_MS, STEP_MS_PER_TOKEN, STEP_MS_PER_TOKEN_SQ, STEP_MS_PER_SEQ,
    STEP_MS_PER_CONTEXT, MAX_NUM_SEQS, MAX_BATCHED_TOKENS, KV_CACHE_TOKENS, BLOCK_SIZE,
    SERVING_TOKENS, RATE_PER_S, CONCURRENCY, LINK_RATE, LINK_LATENCY, KV_BYTES,
    SERVING_INSTANCES, REPLICAS, TARGET_MS, STEP_BATCH, STEP_CONTEXT_TOKENS, STEP_TIME_MS,
    FLEET_DISPATCH, DECODE_FIT)
from .presets import (
    PRESET_VALUE, PARALLEL_FRACTION, REUSE_FACTOR, TRACE_REQUESTS, PEAK_TO_MEAN,
    INSTANCE_GPUS, TOKEN_LAW_KIND)
from .planner import (
    PLAN_RATE_PER_S, PLAN_ARRIVALS_SCV, PLAN_PERCENTILE, SCREEN_PERCENTILE,
    PLAN_TARGET_MS, PLAN_ENERGY_CAP_J, PLAN_TRUNCATION_CAP, PLAN_B_MAX,
    PLAN_QUEUE_DELAY_MS, PLAN_TOKEN_LIMIT, PLAN_REPLICAS, PLAN_CONFIRM, PLAN_SEED,
    PLAN_LINK_GB_PER_S, PLAN_LINK_LATENCY_MS, PLAN_SIM_JOBS, PRICE_USD_PER_HOUR, POWER_W,
    BATCH_ALPHA_MS, BATCH_TAU0_MS, MAX_BATCH, SERVER_GPUS, ARRIVAL_KIND)
from .measured import GPU_SHARE, ONLINE_TERMS

__all__ = sorted(name for name, value in globals().items()
                 if not name.startswith("_") and not isinstance(value, _ModuleType))
