"""The price and latency of one configuration: hardware × b_max × queue delay × token
limit × replicas, at a plan's traffic (``price_configuration``).

Requests are spread over the replicas at random (a balancer that ignores queue lengths),
so each replica sees the stream thinned to 1/R of it (``engine.arrivals.thinned``: exact
for Poisson and MMPP-2).  A balancer that joins the shortest queue does better: the
answer is conservative.

* mean latency: exact where theory allows — the GPU batching chain (Inoue 2021) with
  Poisson arrivals and the greedy batcher (queue delay 0), the LLM dynamic-batching chain
  (Yang et al. §IV) with Poisson arrivals and the reply law cut at the token limit;
  otherwise simulated (``method`` says which);
* the latency percentile of the SLA: simulated (the tail has no closed form here), a
  screening run of ``screen_jobs`` requests per configuration; the cheapest
  configurations are confirmed by longer runs (``engine.planner.plan``);
* utilization, mean batch size (exact with the mean, else simulated); energy per request
  (P_busy·u + P_idle·(1 − u)) / λ_replica, J; cost $/h = R × price; $ per million
  requests = cost / (λ · 3600) · 10⁶; the share of replies the token limit cuts,
  P(n > limit).
"""
from __future__ import annotations

from ..core.domains import (PLAN_B_MAX, PLAN_QUEUE_DELAY_MS, PLAN_REPLICAS, PLAN_SIM_JOBS,
                            PLAN_TOKEN_LIMIT)
from .checks import number_in, whole_in
from .families.batch import (MAX_SCREEN_JOBS, NEAR_CAPACITY, REASONS, SCREEN_JOBS,  # noqa: F401
                             TAIL_JOBS, BatchFamily, ConfigPrice, configuration_seed,
                             replica_arrivals, screen_jobs, simulate_replica, token_law)
from .families.batch import _simulate
from .spec import PlanSpec


def _settings(spec, b_max, queue_delay_ms, token_limit, replicas) -> tuple:
    """The configuration's settings checked, once, at the public boundary: (b_max, delay
    ms, token limit, replicas), each in the domain a plan searches."""
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    return (whole_in(b_max, PLAN_B_MAX), number_in(queue_delay_ms, PLAN_QUEUE_DELAY_MS),
            whole_in(token_limit, PLAN_TOKEN_LIMIT), whole_in(replicas, PLAN_REPLICAS))


def simulate_configuration(spec: PlanSpec, hardware: str, b_max, queue_delay_ms, token_limit,
                           replicas, *, arrivals=None, n_jobs=None, seed=None) -> dict:
    """Simulate one replica of a configuration of the GPU batching or LLM batch family:
    the latency percentile, mean latency and its 95 % CI half-width (ms), mean batch
    size, utilization.  ``arrivals``: the total stream (an ``engine.arrivals`` process at
    ``spec.rate_per_s`` per s; None: Poisson)."""
    b_max, queue_delay_ms, token_limit, replicas = _settings(spec, b_max, queue_delay_ms,
                                                             token_limit, replicas)
    if n_jobs is not None:
        n_jobs = whole_in(n_jobs, PLAN_SIM_JOBS)
    return _simulate(spec, spec.hardware_named(hardware), b_max, queue_delay_ms, token_limit,
                     replicas, arrivals=arrivals, n_jobs=n_jobs, seed=seed)


def price_configuration(spec: PlanSpec, hardware: str, b_max, queue_delay_ms=0.0,
                        token_limit=0, replicas=1, *, arrivals=None) -> ConfigPrice:
    """Price one configuration of a GPU batching or LLM batch ``spec`` (see the module
    docstring).

    ``hardware``: a candidate's name; ``b_max``: largest batch; ``queue_delay_ms``: the
    batcher's max queue delay (GPU; 0: greedy); ``token_limit``: largest reply, tokens
    (LLM; 0: none); ``replicas``: copies sharing the traffic at random.  ``arrivals``:
    the total stream as an ``engine.arrivals`` process (requests per s; None: Poisson at
    ``spec.rate_per_s``).  Deterministic: the simulations are seeded by the plan's seed
    and the configuration (``configuration_seed``).  The serving families price with
    ``spec.family.price``.
    """
    b_max, delay, token_limit, replicas = _settings(spec, b_max, queue_delay_ms, token_limit,
                                                    replicas)
    if not isinstance(spec.family, BatchFamily):
        raise ValueError(f"price_configuration prices the batch families; a "
                         f"{spec.workload!r} plan is priced with spec.family.price")
    return spec.family.price(spec, arrivals=arrivals, hardware=hardware, b_max=b_max,
                             queue_delay_ms=delay, token_limit=token_limit, replicas=replicas)
