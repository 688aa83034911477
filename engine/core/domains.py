"""Declared domains of the engine's parameters, checked at one boundary.

Every public engine function validates its arguments here (scipy's ``_argcheck``
pattern): a value outside its declared domain raises ``ValueError`` naming the
parameter and the valid range.  The same declarations give slider bounds and
the ranges property tests draw from (``typical``).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np


@dataclass(frozen=True)
class Domain:
    """Valid range of one real parameter.

    ``low``/``high`` bound the domain; ``low_open``/``high_open`` exclude the
    bound itself.  ``allow_inf`` admits +inf (e.g. an arrival rate beyond any
    capacity, which is *unstable*, not invalid).  ``typical`` is the range a
    user or a property test normally explores.
    """

    name: str
    unit: str
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    allow_inf: bool = False
    typical: tuple[float, float] = (0.0, 1.0)
    description: str = ""

    def describe(self) -> str:
        lo = "(" if self.low_open else "["
        hi = ")" if self.high_open or self.high == math.inf else "]"
        kind = "an integer" if self.integer else "a number"
        return f"{kind} in {lo}{self.low:g}, {self.high:g}{hi}"

    def check(self, value, name: str | None = None) -> np.ndarray:
        """Return ``value`` as a float array, or raise ``ValueError`` naming it."""
        name = name or self.name
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}") from None
        if np.isnan(arr).any():
            raise ValueError(f"{name} must be {self.describe()}, got NaN")
        bad = np.zeros(arr.shape, dtype=bool)
        if not self.allow_inf:
            bad |= np.isinf(arr)
        else:
            bad |= arr == -np.inf
        finite = np.isfinite(arr)
        bad |= (arr < self.low) | (arr > self.high)
        if self.low_open:
            bad |= arr == self.low
        if self.high_open:
            bad |= arr == self.high
        if self.integer:
            bad |= finite & (arr != np.round(arr))
        if bad.any():
            example = arr[bad].flat[0] if arr.ndim else float(arr)
            raise ValueError(f"{name} must be {self.describe()}, got {example:g}")
        return arr


LAM = Domain("lam", "jobs per time unit", low=0.0, allow_inf=True, typical=(0.0, 10.0),
             description="Poisson arrival rate λ (per ms with the presets)")
ALPHA = Domain("alpha", "time per job", low=0.0, low_open=True, typical=(0.01, 2.0),
               description="per-job batch time α (slope of τ[b] = αb + τ0)")
TAU0 = Domain("tau0", "time", low=0.0, typical=(0.0, 5.0),
              description="fixed batch overhead τ0 (intercept of τ[b] = αb + τ0)")
B_MAX = Domain("b_max", "jobs", low=1.0, integer=True, allow_inf=True, typical=(1, 256),
               description="largest batch the server forms (None or inf: unlimited)")
BETA = Domain("beta", "energy per job", low=0.0, low_open=True, typical=(0.001, 1.0),
              description="per-job energy β (slope of c[b] = βb + c0, Inoue 2021 eq 17)")
C0 = Domain("c0", "energy", low=0.0, typical=(0.0, 1.0),
            description="per-batch energy overhead c0 (intercept of c[b] = βb + c0)")
DELAY = Domain("max_queue_delay", "time", low=0.0, typical=(0.0, 10.0),
               description="longest wait for more requests before a batch below the preferred size starts")
PREFERRED = Domain("preferred_batch_size", "jobs", low=1.0, integer=True, typical=(1, 128),
                   description="batch size that starts at once without waiting")
N_JOBS = Domain("n_jobs", "jobs", low=1.0, integer=True, typical=(1_000, 1_000_000),
                description="number of simulated jobs")
WARMUP = Domain("warmup_jobs", "jobs", low=0.0, integer=True, typical=(0, 100_000),
                description="jobs left out of the statistics at the start of a run")


def check_limit(domain: Domain, value) -> np.ndarray:
    """An optional limit as a float array where ``inf`` means none (``None`` accepted,
    alone or inside a list), checked against ``domain``."""
    if value is None:
        return np.asarray(np.inf)
    if isinstance(value, (list, tuple)):
        value = [np.inf if v is None else v for v in value]
    return domain.check(value)


def check_b_max(b_max) -> np.ndarray:
    """b_max as a float array where ``inf`` means unlimited (``None`` accepted)."""
    return check_limit(B_MAX, b_max)


# ---- LLM token limits (Yang et al. §III): times in seconds, lengths in tokens
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


def check_n_max(n_max) -> np.ndarray:
    """n_max as a float array where ``inf`` means no limit (``None`` accepted)."""
    return check_limit(N_MAX, n_max)

# Percentile-latency SLAs and dispatch to n backends (Swayam); times in seconds.
MU = Domain("mu", "requests per s", low=0.0, low_open=True, typical=(1.0, 1000.0),
            description="service rate μ of one backend (1/mean service time)")
N_BACKENDS = Domain("n", "backends", low=1.0, integer=True, typical=(1, 200),
                    description="number of backends (replicas, GPUs)")
NET_DELAY = Domain("d1", "s", low=0.0, typical=(0.0, 0.01),
                   description="message time or retry pause (d1, d2, Δ), also a fixed service time")
PERCENTILE = Domain("percentile", "%", low=0.0, high=100.0, low_open=True, high_open=True,
                    typical=(50.0, 99.9), description="service level, e.g. 99 for p99")
RESPONSE_TARGET = Domain("rt", "s", low=0.0, typical=(0.01, 1.0),
                         description="response-time target RT of the SLA")
N_REQUESTS = Domain("n_requests", "requests", low=1.0, integer=True, typical=(1_000, 1_000_000),
                    description="number of simulated requests")
HEADROOM = Domain("headroom", "fraction", low=0.0, typical=(0.0, 0.5),
                  description="extra load provisioned for, as a fraction of the measured rate")
PROVISIONING_DELAY = Domain("provisioning_delay", "s", low=0.0, typical=(0.0, 600.0),
                            description="time from ordering a replica to it serving")
INTERVAL = Domain("interval_s", "s", low=0.0, low_open=True, typical=(1.0, 3600.0),
                  description="length of one interval of a load trace")
COST = Domain("cost_per_gpu_hour", "currency per GPU-hour", low=0.0, typical=(0.0, 10.0),
              description="price of one replica (GPU) per hour")
LATENCY_TARGET_MS = Domain("latency_target_ms", "ms", low=0.0, low_open=True,
                           typical=(1.0, 500.0),
                           description="mean-latency target of one GPU at its operating point")
# Autoscaling for a latency SLA (engine/sla/): probabilities, the simulator's rate and
# retry cycle, synthetic-trace shapes, trace layouts and the page's replica grids
PROBABILITY = Domain("p", "", low=0.0, high=1.0, typical=(0.0, 1.0),
                     description="a probability or a share of requests")
SIM_RATE_PER_S = Domain("lam", "requests per s", low=0.0, low_open=True, typical=(1.0, 1000.0),
                        description="Poisson arrival rate a simulation draws (finite, > 0)")
RETRY_CYCLE_S = Domain("d1 + d2 + delta", "s", low=0.0, low_open=True, typical=(1e-4, 0.01),
                       description="time from one try to the next, c = d1 + d2 + Δ (random "
                                   "dispatch with retries needs c > 0)")
TRACE_MEAN_RATE = Domain("mean_rate", "requests per s", low=0.0, typical=(1.0, 1000.0),
                         description="mean load of a synthetic trace (finite)")
TRACE_HOURS = Domain("hours", "h", low=0.0, low_open=True, typical=(1.0, 168.0),
                     description="length of a synthetic trace")
SPIKES = Domain("n_spikes", "spikes", low=0.0, integer=True, typical=(0, 20),
                description="load spikes in a synthetic trace")
SPIKE_FACTOR = Domain("spike_factor", "", low=0.0, typical=(1.0, 5.0),
                      description="factor a spike multiplies the load by")
SPIKE_MINUTES = Domain("spike_minutes", "min", low=0.0, typical=(1.0, 60.0),
                       description="length of a load spike (at least one interval)")
TRACE_NOISE = Domain("noise", "log-sd", low=0.0, typical=(0.0, 0.5),
                     description="log-sd of the lognormal noise on a synthetic trace's load")
MIN_INTERVAL = Domain("min_interval_s", "s", low=0.0, typical=(0.0, 60.0),
                      description="shortest interval a rate table may have")
TRACE_INTERVALS = Domain("max_intervals", "intervals", low=1.0, integer=True,
                         typical=(100, 10_000_000), description="most intervals a trace may span")
REPLICA_TOP = Domain("top", "replicas", low=1.0, typical=(1.0, 1000.0),
                     description="largest replica count on a curve against replicas")
REPLICA_ANSWER = Domain("approx", "replicas", low=1.0, integer=True, allow_inf=True,
                        typical=(1, 1000),
                        description="a fewest-replicas answer (inf: none meets the SLA)")
REL_TOLERANCE = Domain("rel", "", low=0.0, typical=(0.0, 0.1),
                       description="relative tolerance of a comparison")
LLM_BATCH = Domain("b", "requests", low=1.0, integer=True, typical=(1, 64),
                   description="LLM batch size (fixed batching) or batch-size grid")
LLM_MAX_TOKENS = Domain("l", "tokens", low=0.0, typical=(0.0, 2048.0),
                        description="largest output-token count in a batch (eq 18)")
LLM_K1 = Domain("k1", "s per request", low=0.0, low_open=True, typical=(0.001, 0.2),
                description="first-token time per request in the batch (eq 18)")
LLM_K2 = Domain("k2", "s", low=0.0, typical=(0.0, 1.0),
                description="first-token time per batch (eq 18)")
LLM_K3 = Domain("k3", "s per token per request", low=0.0, typical=(0.0, 0.002),
                description="per-token decode time per request in the batch (eq 18)")
LLM_K4 = Domain("k4", "s per token", low=0.0, typical=(0.0, 0.05),
                description="per-token decode time per batch (eq 18)")
LLM_KV_CAPACITY = Domain("kv_capacity_tokens", "tokens", low=0.0, low_open=True, allow_inf=True,
                         typical=(1_000.0, 1_000_000.0),
                         description="KV-cache capacity of continuous batching, in tokens")
LLM_PROMPT_TOKENS = Domain("prompt_tokens", "tokens", low=0.0, typical=(0.0, 2048.0),
                           description="input tokens each request holds in the KV cache")
# CPU-GPU pipeline (May & Voigt 2010): engine/pipeline/
PIPE_MU = Domain("mu", "jobs per time unit", low=0.0, low_open=True, typical=(0.1, 10.0),
                 description="service rate of one server of a station")
PIPE_MU_CPU = Domain("mu_cpu", "jobs per time unit", low=0.0, low_open=True, typical=(0.1, 10.0),
                     description="CPU stage service rate (host preparation + host-to-device copy)")
PIPE_MU_MEM = Domain("mu_mem", "jobs per time unit", low=0.0, low_open=True, typical=(0.1, 10.0),
                     description="GPU global-memory stage service rate (device-memory traffic)")
PIPE_MU_CU = Domain("mu_cu", "jobs per time unit", low=0.0, low_open=True, typical=(0.01, 1.0),
                    description="service rate of one compute unit (SM)")
PIPE_K = Domain("K", "jobs", low=1.0, integer=True, typical=(1, 16),
                description="jobs the GPU global-memory stage holds, the one in service included")
PIPE_C = Domain("c", "servers", low=1.0, integer=True, typical=(1, 128),
                description="number of compute units (servers without buffer)")
# Closed loop (fixed concurrency, what perf_analyzer drives): engine/batching/closed_loop.py
N_CLIENTS = Domain("n_clients", "clients", low=1.0, high=4096.0, integer=True,
                   typical=(1, 256),
                   description="concurrency N: clients that each send a request when the last returns")
THINK_TIME = Domain("think_time", "time", low=0.0, typical=(0.0, 10.0),
                    description="mean time a client spends outside the server between a reply "
                                "and its next request (client and network: a delay)")
INSTANCES = Domain("instances", "copies", low=1.0, high=1024.0, integer=True, typical=(1, 8),
                   description="copies of the batching server sharing one queue (Triton instances)")
N_BATCHES = Domain("n_batches", "batches", low=1.0, integer=True, typical=(1_000, 100_000),
                   description="number of simulated batches counted")
WARMUP_BATCHES = Domain("warmup", "batches", low=0.0, integer=True, typical=(0, 10_000),
                        description="batches left out of the statistics at the start of a run")
# Arrival processes (bursty arrivals and trace replay): engine/arrivals/; any one time unit
ARRIVAL_RATE = Domain("rate", "arrivals per time unit", low=0.0, low_open=True,
                      typical=(0.01, 100.0), description="mean arrival rate λ of a process")
ARRIVAL_SCV = Domain("scv", "", low=0.0, high=1e6, typical=(0.0, 20.0),
                     description="squared coefficient of variation of the inter-arrival times "
                                 "(0: deterministic, 1: exponential, above 1: bursty)")
PHASE_RATE = Domain("rate_1", "arrivals per time unit", low=0.0, typical=(0.0, 100.0),
                    description="arrival rate in one phase of a Markov-modulated Poisson process")
SWITCH_RATE = Domain("switch_12", "per time unit", low=0.0, low_open=True,
                     typical=(0.001, 10.0),
                     description="rate of leaving one phase of a Markov-modulated Poisson process")
COUNT_WINDOW = Domain("window", "time", low=0.0, low_open=True, typical=(0.1, 1000.0),
                      description="length of the windows arrivals are counted in (IDC, rate "
                                  "over time)")
COUNT_TIME = Domain("t", "time", low=0.0, typical=(0.0, 100.0),
                    description="length of an interval arrivals are counted over")
N_ARRIVALS = Domain("n", "arrivals", low=0.0, integer=True, typical=(1, 100_000),
                    description="number of arrival times drawn from a process")
COUNT_MAX = Domain("n_max", "arrivals", low=0.0, high=2000.0, integer=True, typical=(0, 200),
                   description="largest arrival count a table of counting probabilities holds")
# LLM serving as vLLM, SGLang and TensorRT-LLM run it (continuous batching, chunked
# prefill, paged KV cache): engine/llm_serving/; times in ms, rates per s, lengths in tokens
STEP_MS = Domain("base_ms", "ms", low=0.0, typical=(0.0, 50.0),
                 description="fixed time of one scheduler step")
STEP_MS_PER_TOKEN = Domain("prefill_ms_per_token", "ms per token", low=0.0, typical=(0.0, 0.2),
                           description="time per prompt token computed in a step")
STEP_MS_PER_TOKEN_SQ = Domain("prefill_ms_per_token_sq", "ms per token²", low=0.0,
                              typical=(0.0, 1e-5),
                              description="attention time per (chunk × prompt tokens up to "
                                          "its end) in a step")
STEP_MS_PER_SEQ = Domain("decode_ms_per_seq", "ms per request", low=0.0, typical=(0.0, 1.0),
                         description="time per request decoding one token in a step")
STEP_MS_PER_CONTEXT = Domain("context_ms_per_token", "ms per token", low=0.0,
                             typical=(0.0, 0.001),
                             description="time per context token of the decoding requests")
MAX_NUM_SEQS = Domain("max_num_seqs", "requests", low=1.0, high=1e6, integer=True,
                      typical=(1, 1024), description="most requests running at once")
MAX_BATCHED_TOKENS = Domain("max_num_batched_tokens", "tokens", low=1.0, high=1e8,
                            integer=True, typical=(256, 65_536),
                            description="token budget of one scheduler step")
KV_CACHE_TOKENS = Domain("kv_cache_tokens", "tokens", low=1.0, high=1e10, integer=True,
                         typical=(1_000, 2_000_000),
                         description="tokens the paged KV cache holds (None: unbounded)")
BLOCK_SIZE = Domain("block_size", "tokens", low=1.0, high=4096.0, integer=True,
                    typical=(1, 256), description="tokens per KV-cache block")
SERVING_TOKENS = Domain("tokens", "tokens", low=1.0, high=1e7, integer=True,
                        typical=(1, 8192),
                        description="prompt (input) or reply (output) tokens of a request")
RATE_PER_S = Domain("rate_per_s", "requests per s", low=0.0, low_open=True, allow_inf=True,
                    typical=(0.01, 100.0), description="Poisson arrival rate of requests")
CONCURRENCY = Domain("concurrency", "clients", low=1.0, high=1e6, integer=True,
                     typical=(1, 256),
                     description="closed-loop clients, each sending its next request when "
                                 "the last one finishes")
# Disaggregated servers and fleets (engine/llm_serving/disaggregated.py, fleet.py, slo.py)
LINK_RATE = Domain("link_gb_per_s", "GB/s", low=0.0, low_open=True, typical=(1.0, 900.0),
                   description="bandwidth of the link a KV copy takes, one direction")
LINK_LATENCY = Domain("link_latency_ms", "ms", low=0.0, typical=(0.0, 1.0),
                      description="fixed time of one KV copy")
KV_BYTES = Domain("kv_bytes_per_token", "bytes", low=0.0, low_open=True,
                  typical=(1e4, 4e6), description="bytes of KV cache one token takes")
SERVING_INSTANCES = Domain("instances", "instances", low=1.0, high=4096.0, integer=True,
                           typical=(1, 16), description="prefill or decode instances")
REPLICAS = Domain("replicas", "servers", low=1.0, high=100_000.0, integer=True,
                  typical=(1, 64), description="identical servers behind the dispatcher")
TARGET_MS = Domain("target_ms", "ms", low=0.0, low_open=True, allow_inf=True,
                   typical=(1.0, 10_000.0), description="a TTFT or TPOT limit")
# Step times read from a source and fitted (engine/llm_serving/aiconfigurator.py)
STEP_BATCH = Domain("batch", "requests", low=1.0, high=1e6, integer=True, typical=(1, 512),
                    description="requests in one step: prompts computed together, or decoding "
                                "requests")
STEP_CONTEXT_TOKENS = Domain("context_tokens", "tokens", low=1.0, high=1e7, typical=(1, 32_768),
                             description="context of each decoding request in a step (prompt "
                                         "+ tokens so far; a mean allowed)")
STEP_TIME_MS = Domain("step_ms", "ms", low=0.0, low_open=True, typical=(1.0, 1000.0),
                      description="a step's time read from a profile or an estimator")
# Preset files (engine/presets/): a field's own bounds where it has them; any other number
# in a preset file is a measured or datasheet quantity, positive and finite (PRESET_VALUE)
PRESET_VALUE = Domain("value", "", low=0.0, low_open=True, typical=(0.001, 1000.0),
                      description="a measured or datasheet number of a preset file")
PARALLEL_FRACTION = Domain("parallel_fraction", "", low=0.0, low_open=True, high=1.0,
                           typical=(0.5, 1.0),
                           description="share of a pipeline job's operations that run on the "
                                       "compute units (the rest on the host)")
REUSE_FACTOR = Domain("reuse_factor", "", low=1.0, typical=(1.0, 16.0),
                      description="operations one byte fetched from GPU memory serves from "
                                  "on-chip memory")
TRACE_REQUESTS = Domain("n_requests", "requests", low=2.0, integer=True,
                        typical=(1_000, 1_000_000),
                        description="requests of a trace a summary counts (at least 2: one gap)")
PEAK_TO_MEAN = Domain("peak_to_mean", "", low=1.0, typical=(1.0, 20.0),
                      description="arrivals in the busiest window over the mean window's")
INSTANCE_GPUS = Domain("gpus_per_instance", "GPUs", low=1.0, integer=True, typical=(1, 8),
                       description="GPUs of one rented instance, or of one server on it")
# Capacity planner (engine/planner/): a plan's traffic, SLA, caps and searched ranges, and
# the candidates it prices; rates per s, times in ms, energy in J per request, prices in $
# per hour, power in W
PLAN_RATE_PER_S = Domain("rate_per_s", "requests per s", low=0.0, low_open=True,
                         typical=(0.1, 10_000.0), description="total request rate of a plan")
PLAN_ARRIVALS_SCV = Domain("arrivals_scv", "", low=0.0, low_open=True, high=1e4,
                           typical=(0.5, 20.0),
                           description="gap SCV of a plan's bursty (renewal) arrivals")
PLAN_PERCENTILE = Domain("percentile", "%", low=50.0, high=99.99, typical=(90.0, 99.9),
                         description="the share of requests an SLA row holds to its target")
SCREEN_PERCENTILE = Domain("percentile", "%", low=0.0, high=100.0, typical=(50.0, 99.99),
                           description="the percentile a planner's screening run estimates")
PLAN_TARGET_MS = Domain("target_ms", "ms", low=0.0, low_open=True, typical=(1.0, 60_000.0),
                        description="latency target of an SLA row")
PLAN_ENERGY_CAP_J = Domain("energy_cap_j", "J per request", low=0.0, low_open=True,
                           allow_inf=True, typical=(0.01, 10.0),
                           description="most energy a request may take (inf: no cap)")
PLAN_TRUNCATION_CAP = Domain("truncation_cap", "fraction", low=0.0, high=1.0,
                             typical=(0.0, 0.1),
                             description="largest share of replies a token limit may cut")
PLAN_B_MAX = Domain("b_max", "requests", low=1.0, high=4096.0, integer=True, typical=(1, 128),
                    description="the most requests one batch holds (a searched value)")
PLAN_QUEUE_DELAY_MS = Domain("queue_delay_ms", "ms", low=0.0, high=1e5, typical=(0.0, 10.0),
                             description="how long the batcher may hold a request to fill a "
                                         "batch (0: start a batch at once)")
PLAN_TOKEN_LIMIT = Domain("token_limit", "tokens", low=0.0, high=float(1 << 20), integer=True,
                          typical=(0, 4096),
                          description="the largest reply in tokens (0: none)")
PLAN_REPLICAS = Domain("replicas", "servers", low=1.0, high=10_000.0, integer=True,
                       typical=(1, 32), description="copies of a server sharing the traffic")
PLAN_CONFIRM = Domain("confirm", "configurations", low=0.0, high=50.0, integer=True,
                      typical=(0, 10),
                      description="how many of the cheapest are confirmed by simulation")
PLAN_SEED = Domain("seed", "", low=0.0, high=2.0 ** 63, high_open=True, integer=True,
                   typical=(0, 1000), description="seed of a plan's simulations")
PLAN_LINK_GB_PER_S = Domain("link_gb_per_s", "GB/s", low=0.0, low_open=True, high=1e5,
                            typical=(1.0, 900.0),
                            description="bandwidth of the KV link between a prefill and a "
                                        "decode instance, one direction")
PLAN_LINK_LATENCY_MS = Domain("link_latency_ms", "ms", low=0.0, high=1e4, typical=(0.0, 1.0),
                              description="fixed time of one KV copy")
PLAN_SIM_JOBS = Domain("n_jobs", "requests", low=100.0, high=1e9, integer=True,
                       typical=(1_000, 200_000),
                       description="requests one simulation of a configuration runs")
PRICE_USD_PER_HOUR = Domain("price_usd_per_hour", "$ per hour", low=0.0, low_open=True,
                            typical=(0.1, 100.0), description="what one server costs per hour")
POWER_W = Domain("power_w", "W", low=0.0, typical=(0.0, 1000.0),
                 description="power a server draws, busy or idle")
BATCH_ALPHA_MS = Domain("alpha_ms", "ms per request", low=0.0, low_open=True,
                        typical=(0.01, 5.0),
                        description="per-request batch time α of a GPU profile (τ[b] = αb + τ0)")
BATCH_TAU0_MS = Domain("tau0_ms", "ms", low=0.0, typical=(0.0, 10.0),
                       description="fixed batch time τ0 of a GPU profile (τ[b] = αb + τ0)")
MAX_BATCH = Domain("max_batch", "requests", low=1.0, integer=True, typical=(1, 256),
                   description="largest batch a GPU profile measured")
SERVER_GPUS = Domain("gpus", "GPUs", low=1.0, high=4096.0, integer=True, typical=(1, 8),
                     description="GPUs one server uses (its tensor-parallel degree)")

# Offline to online prediction, separated terms (engine/measured/online_terms.py)
GPU_SHARE = Domain("gpu_share", "fraction", low=0.0, high=1.0, typical=(0.2, 1.0),
                   description="share of a model instance's batch time that holds the GPU")

# CPU-GPU pipeline (May & Voigt 2010), its spec mapping, simulator and page
# (engine/pipeline/); rates per ms
PIPE_JOB_SIZE_BYTES = Domain("job_size_bytes", "bytes", low=0.0, low_open=True,
                             typical=(1e3, 1e8), description="bytes one pipeline job carries")
PIPE_FLOPS_PER_BYTE = Domain("flops_per_byte", "FLOP per byte", low=0.0, low_open=True,
                             typical=(1.0, 1024.0),
                             description="operations per byte of a job (its intensity)")
PIPE_SPEEDUP = Domain("factor", "", low=0.0, low_open=True, typical=(0.1, 100.0),
                      description="how many times faster the host stage runs")
PIPE_LOAD_FRACTION = Domain("fraction", "", low=0.0, typical=(0.01, 0.99),
                            description="a load as a fraction of the exact capacity")
PIPE_SIM_LAM = Domain("lam", "jobs per time unit", low=0.0, low_open=True,
                      typical=(0.1, 10.0),
                      description="arrival rate of a simulated run (positive and finite)")
# LLM token limits (Yang et al. §III): engine/token_limit/; times in s, lengths in tokens
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
# GPU dynamic batching (Inoue 2021): answers, curves and load units of engine/batching/;
# times in ms, rates per ms
BATCH_MEAN_SIZE = Domain("mean_batch_size", "jobs", low=0.0, low_open=True, allow_inf=True,
                         typical=(1.0, 256.0), description="mean batch size E[B]")
BATCH_RHO = Domain("rho", "", low=0.0, allow_inf=True, typical=(0.0, 1.0),
                   description="normalised load ρ = λα")
BATCH_RATE_PER_S = Domain("rate_per_s", "requests per s", low=0.0, allow_inf=True,
                          typical=(1.0, 10_000.0),
                          description="arrival rate in requests per second")
BATCH_TARGET_MS = Domain("target_ms", "ms", low=0.0, low_open=True, typical=(1.0, 200.0),
                         description="latency SLA")
BATCH_PRICE = Domain("price", "$", low=0.0, typical=(0.0, 10.0), description="a price")
BATCH_ENERGY_J = Domain("joules_per_request", "J", low=0.0, typical=(0.0, 10.0),
                        description="energy one request takes")
BATCH_POWER_W = Domain("power_w", "W", low=0.0, typical=(0.0, 1000.0),
                       description="what a GPU draws, busy or idle")
CURVE_POINTS = Domain("n_points", "loads", low=1.0, integer=True, typical=(20, 200),
                      description="number of loads on a curve")
CURVE_MAX_FRACTION = Domain("max_fraction", "of capacity", low=0.0, high=1.0, low_open=True,
                            high_open=True, typical=(0.9, 0.99),
                            description="highest load of a curve, as a fraction of the "
                                        "capacity")
BATCH_SIZE_B = Domain("b", "jobs", low=0.0, low_open=True, typical=(1.0, 256.0),
                      description="a batch size the throughput μ[b] is read at (finite)")
BATCH_SIZE_B0 = Domain("b", "jobs", low=0.0, typical=(0.0, 256.0),
                       description="a batch size the energy c[b] is read at (finite, 0 too)")
