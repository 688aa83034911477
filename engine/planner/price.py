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
* utilisation, mean batch size (exact with the mean, else simulated); energy per request
  (P_busy·u + P_idle·(1 − u)) / λ_replica, J; cost $/h = R × price; $ per million
  requests = cost / (λ · 3600) · 10⁶; the share of replies the token limit cuts,
  P(n > limit).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import math
import zlib

import numpy as np

from ..arrivals import thinned
from ..batching import capacity, simulate_batching, stationary
from ..core.stats import PERCENTILES, percentiles
from ..core.token_laws import clipped_tokens
from ..llm_batching import dynamic_solution, simulate, stability_limit
from ..presets import token_law_presets
from .spec import MAX_REPLICAS, PlanSpec, _number, _whole

SCREEN_JOBS = 20_000              # requests per screening simulation (at least)
TAIL_JOBS = 200                   # ... and enough for this many beyond the percentile
MAX_SCREEN_JOBS = 200_000
NEAR_CAPACITY = 1e-9              # a load within this share of capacity counts as unstable:
                                  # no chain or run resolves it (latency beyond any target)
REASONS = {"": "meets the SLA", "unstable": "unstable: more load than the replicas can carry",
           "latency": "latency above the target", "energy": "energy per request above the cap",
           "truncation": "the token limit cuts too many replies"}


@dataclass(frozen=True)
class ConfigPrice:
    """One configuration priced (latencies in ms, energy in J per request).

    ``stable``: the load per replica is below its capacity; ``method``: how the mean was
    found ("exact" or "simulated"); ``latency_percentile_ms``: the SLA's percentile,
    simulated (``inf`` when unstable); ``capacity_per_s``: the most requests/s the
    replicas carry together; ``reason``: "" when the SLA is met, else the first of
    "unstable", "latency", "energy", "truncation" that fails.
    """

    stable: bool
    method: str
    mean_latency_ms: float
    latency_percentile_ms: float
    utilization: float
    mean_batch_size: float
    energy_j_per_request: float
    cost_usd_per_hour: float
    cost_usd_per_million: float
    truncated_fraction: float
    capacity_per_s: float
    meets_sla: bool
    reason: str


@lru_cache(maxsize=64)
def token_law(law_id: str, token_limit: int):
    """The reply law of the token-law preset ``law_id`` cut at ``token_limit`` (0: not
    cut), and the share of replies cut."""
    law = token_law_presets()[law_id].law()
    cut = float(law.sf(token_limit)) if token_limit > 0 else 0.0
    return clipped_tokens(law, token_limit), cut


def configuration_seed(spec: PlanSpec, hardware: str, b_max, queue_delay_ms, token_limit,
                       replicas) -> np.random.SeedSequence:
    """The simulation stream of one configuration: from the plan's seed and the
    configuration itself, never from its place in the grid (so any executor, any order
    and any chunking give the same numbers)."""
    return np.random.SeedSequence([spec.seed, zlib.crc32(hardware.encode()), int(b_max),
                                   int(round(float(queue_delay_ms) * 1e6)), int(token_limit),
                                   int(replicas)])


def screen_jobs(percentile: float) -> int:
    """Requests one screening run simulates: ``SCREEN_JOBS``, more for a far percentile
    (``TAIL_JOBS`` beyond it), at most ``MAX_SCREEN_JOBS``."""
    q = _number(percentile, "percentile", low=0.0, high=100.0)
    if q == 100.0:
        return MAX_SCREEN_JOBS
    far = TAIL_JOBS / (1.0 - q / 100.0)
    return int(min(MAX_SCREEN_JOBS, max(SCREEN_JOBS, math.ceil(far))))


def replica_arrivals(arrivals, replicas: int):
    """One replica's arrival process (None: Poisson, pass the rate)."""
    r = _whole(replicas, "replicas", 1, MAX_REPLICAS)
    return None if arrivals is None else thinned(arrivals, 1.0 / r)


def _settings(spec, b_max, queue_delay_ms, token_limit, replicas) -> tuple:
    """The configuration's settings checked: (b_max, delay ms, token limit, replicas)."""
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    return (_whole(b_max, "b_max", 1, 1 << 20),
            _number(queue_delay_ms, "queue_delay_ms", low=0.0),
            _whole(token_limit, "token_limit", 0, 1 << 20),
            _whole(replicas, "replicas", 1, MAX_REPLICAS))


def simulate_configuration(spec: PlanSpec, hardware: str, b_max, queue_delay_ms, token_limit,
                           replicas, *, arrivals=None, n_jobs=None, seed=None) -> dict:
    """Simulate one replica of a configuration: the latency percentile, mean latency and
    its 95 % CI half-width (ms), mean batch size, utilisation.  ``arrivals``: the total
    stream (an ``engine.arrivals`` process at ``spec.rate_per_s`` per s; None: Poisson)."""
    b_max, queue_delay_ms, token_limit, replicas = _settings(spec, b_max, queue_delay_ms,
                                                             token_limit, replicas)
    hw = spec.hardware_named(hardware)
    n = screen_jobs(spec.percentile) if n_jobs is None else _whole(n_jobs, "n_jobs", 100,
                                                                    10 ** 9)
    seed = configuration_seed(spec, hardware, b_max, queue_delay_ms, token_limit,
                              replicas) if seed is None else seed
    rate = spec.rate_per_s / replicas
    per_replica = replica_arrivals(arrivals, replicas)
    summary = spec.percentile in PERCENTILES       # the simulators' own p50/p95/p99
    if spec.workload == "gpu":
        # engine.batching works in ms: rates per ms, and arrival times in ms
        proc = None if per_replica is None else _PerMs(per_replica)
        r = simulate_batching(rate / 1000.0, hw.alpha_ms, hw.tau0_ms, b_max=int(b_max),
                              n_jobs=n, seed=seed, max_queue_delay=float(queue_delay_ms),
                              preferred_batch_size=int(b_max) if queue_delay_ms > 0 else None,
                              return_latencies=not summary, arrivals=proc)
        scale = 1.0
        pct = (getattr(r, f"p{spec.percentile:g}") if summary
               else percentiles(r.latencies, [spec.percentile])[0])
    else:
        law, _ = token_law(spec.token_law, int(token_limit))
        r = simulate("dynamic", rate, law, hw.k_s, b_max=int(b_max), n_jobs=n, seed=seed,
                     return_records=not summary, arrivals=per_replica)
        scale = 1000.0
        if summary:
            pct = getattr(r, f"p{spec.percentile:g}")
        else:
            rec = r.records
            sojourn = (rec.finish - rec.arrival)[max(1, rec.arrival.size // 10):]
            pct = percentiles(sojourn[np.isfinite(sojourn)], [spec.percentile])[0]
        pct *= scale
    return dict(latency_percentile_ms=float(pct),
                mean_latency_ms=float(r.mean_latency) * scale, ci95_ms=float(r.ci95) * scale,
                mean_batch_size=float(r.mean_batch_size), utilization=float(r.utilization))


@dataclass(frozen=True)
class _PerMs:
    """An arrival process in s seen in ms (rate per ms, times in ms)."""

    process: object

    @property
    def rate(self) -> float:
        return float(self.process.rate) / 1000.0

    @property
    def scv(self) -> float:
        return float(self.process.scv)

    @property
    def label(self) -> str:
        return self.process.label

    def sample(self, n, rng) -> np.ndarray:
        return 1000.0 * np.asarray(self.process.sample(n, rng), dtype=float)


def _capacity_per_s(spec: PlanSpec, hw, b_max: int, token_limit: int) -> float:
    """Requests/s one replica carries at most."""
    if spec.workload == "gpu":
        return float(capacity(hw.alpha_ms, hw.tau0_ms, b_max)) * 1000.0
    law, _ = token_law(spec.token_law, token_limit)
    return float(stability_limit("dynamic", law, hw.k_s, b_max=b_max))


def price_configuration(spec: PlanSpec, hardware: str, b_max, queue_delay_ms=0.0,
                        token_limit=0, replicas=1, *, arrivals=None) -> ConfigPrice:
    """Price one configuration of ``spec`` (see the module docstring).

    ``hardware``: a candidate's name; ``b_max``: largest batch; ``queue_delay_ms``: the
    batcher's max queue delay (GPU; 0: greedy); ``token_limit``: largest reply, tokens
    (LLM; 0: none); ``replicas``: copies sharing the traffic at random.  ``arrivals``:
    the total stream as an ``engine.arrivals`` process (requests per s; None: Poisson at
    ``spec.rate_per_s``).  Deterministic: the simulations are seeded by the plan's seed
    and the configuration (``configuration_seed``).
    """
    b_max, delay, token_limit, replicas = _settings(spec, b_max, queue_delay_ms, token_limit,
                                                    replicas)
    hw = spec.hardware_named(hardware)
    rate = spec.rate_per_s / replicas                       # per replica, per s
    cost_h = hw.price_usd_per_hour * replicas
    cost_m = cost_h / (spec.rate_per_s * 3600.0) * 1e6
    cut = token_law(spec.token_law, token_limit)[1] if spec.workload == "llm" else 0.0
    cap = _capacity_per_s(spec, hw, b_max, token_limit)
    common = dict(cost_usd_per_hour=cost_h, cost_usd_per_million=cost_m, truncated_fraction=cut,
                  capacity_per_s=cap * replicas)
    if not rate < cap * (1.0 - NEAR_CAPACITY):
        return ConfigPrice(stable=False, method="exact", mean_latency_ms=math.inf,
                           latency_percentile_ms=math.inf, utilization=1.0,
                           mean_batch_size=float(b_max), energy_j_per_request=math.inf,
                           meets_sla=False, reason="unstable", **common)
    sim = simulate_configuration(spec, hardware, b_max, delay, token_limit, replicas,
                                 arrivals=arrivals)
    exact = None
    if arrivals is None and delay == 0.0:
        if spec.workload == "gpu":
            st = stationary(rate / 1000.0, hw.alpha_ms, hw.tau0_ms, b_max)
            exact = (float(st.mean_latency), float(st.mean_batch_size), float(st.utilization))
        else:
            law, _ = token_law(spec.token_law, token_limit)
            sol = dynamic_solution(rate, law, hw.k_s, b_max)
            if sol.converged and math.isfinite(sol.mean_sojourn):
                exact = (1000.0 * sol.mean_sojourn, sol.mean_batch_size, sol.utilization)
    if exact is None:
        method, mean_ms, batch, util = ("simulated", sim["mean_latency_ms"],
                                        sim["mean_batch_size"], sim["utilization"])
    else:
        method, (mean_ms, batch, util) = "exact", exact
    util = min(max(util, 0.0), 1.0)
    energy = (hw.busy_power_w * util + hw.idle_power_w * (1.0 - util)) / rate
    pct = sim["latency_percentile_ms"]
    reason = ("latency" if pct > spec.target_ms else "energy" if energy > spec.energy_cap_j
              else "truncation" if cut > spec.truncation_cap else "")
    return ConfigPrice(stable=True, method=method, mean_latency_ms=mean_ms,
                       latency_percentile_ms=pct, utilization=util, mean_batch_size=batch,
                       energy_j_per_request=energy, meets_sla=reason == "", reason=reason,
                       **common)
