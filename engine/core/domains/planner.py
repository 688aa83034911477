"""Domains of the capacity planner (engine/planner/): a plan's traffic, SLA, caps and
searched ranges, and the candidates it prices; rates per s, times in ms, energy in J
per request, prices in $ per hour, power in W."""
from __future__ import annotations

from .base import Choice, Domain

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
ARRIVAL_KIND = Choice("arrivals_kind", ("poisson", "bursty", "mmpp2", "replay"),
                      description="the arrival process of a plan's traffic")
