"""What the two batch families (GPU dynamic batching, LLM batch) share: a replica is
one batching server, the traffic is spread over the replicas at random (each sees the
stream thinned to 1/R of it), the mean latency is exact where a chain gives it and
simulated otherwise, the SLA's percentile is simulated (a screening run per
configuration, longer runs for the cheapest), energy per request is
(P_busy·u + P_idle·(1 − u))/λ_replica.  The module docstring of
``engine.planner.price`` has the formulas.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import math
import zlib

import numpy as np
import pandas as pd
from scipy import stats

from ...arrivals import thinned
from ...core.domains import (PLAN_B_MAX, PLAN_QUEUE_DELAY_MS, PLAN_REPLICAS, PLAN_TOKEN_LIMIT,
                             SCREEN_PERCENTILE)
from ...core.token_laws import clipped_tokens
from ...presets import token_law_presets
from ..checks import number_in, whole_in
from ..words import duration_text
from .base import REASONS, Family, Knob, usd_per_million_requests  # noqa: F401 (REASONS: price's)

CONFIRM_RUNS = 4
CONFIRM_JOBS = 100_000
SCREEN_JOBS = 20_000              # requests per screening simulation (at least)
TAIL_JOBS = 200                   # ... and enough for this many beyond the percentile
MAX_SCREEN_JOBS = 200_000
NEAR_CAPACITY = 1e-9              # a load within this share of capacity counts as unstable:
                                  # no chain or run resolves it (latency beyond any target)


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


def configuration_seed(spec, hardware: str, b_max, queue_delay_ms, token_limit,
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
    return _jobs_for(number_in(percentile, SCREEN_PERCENTILE))


def _jobs_for(q: float) -> int:
    """``screen_jobs`` of a checked percentile."""
    if q == 100.0:
        return MAX_SCREEN_JOBS
    far = TAIL_JOBS / (1.0 - q / 100.0)
    return int(min(MAX_SCREEN_JOBS, max(SCREEN_JOBS, math.ceil(far))))


def replica_arrivals(arrivals, replicas: int):
    """One replica's arrival process (None: Poisson, pass the rate)."""
    return _thinned(arrivals, whole_in(replicas, PLAN_REPLICAS))


def _thinned(arrivals, replicas: int):
    """``replica_arrivals`` of a checked replica count."""
    return None if arrivals is None else thinned(arrivals, 1.0 / replicas)


def simulate_replica(spec, hardware: str, b_max, queue_delay_ms, token_limit, replicas, *,
                     arrivals=None, n_jobs=None, seed=None) -> dict:
    """One replica of a checked configuration simulated by its family (what
    ``engine.planner.simulate_configuration`` returns): ``n_jobs`` None: a screening run
    (``screen_jobs``); ``seed`` None: the configuration's own stream."""
    return _simulate(spec, spec.hardware_named(hardware), b_max, queue_delay_ms, token_limit,
                     replicas, arrivals=arrivals, n_jobs=n_jobs, seed=seed)


def _simulate(spec, hw, b_max, queue_delay_ms, token_limit, replicas, *, arrivals=None,
              n_jobs=None, seed=None) -> dict:
    """``simulate_replica`` of the candidate ``hw`` itself (no look-up, no checks: the
    plan's spec and grid were validated once)."""
    n = _jobs_for(spec.percentile) if n_jobs is None else n_jobs
    seed = configuration_seed(spec, hw.name, b_max, queue_delay_ms, token_limit,
                              replicas) if seed is None else seed
    return spec.family.simulate(spec, hw, b_max, queue_delay_ms, token_limit, replicas,
                                arrivals=arrivals, n_jobs=n, seed=seed)




class BatchFamily(Family):
    """A family whose replica is one batching server (see the module docstring).
    Subclasses give ``capacity_per_s``, ``simulate`` and ``exact_mean``."""

    scale_knobs = ()                     # confirmation goes down the ranking as it was

    def capacity_per_s(self, spec, hw, b_max: int, token_limit: int) -> float:
        """Requests/s one replica carries at most."""
        raise NotImplementedError

    def simulate(self, spec, hw, b_max, queue_delay_ms, token_limit, replicas, *, arrivals,
                 n_jobs, seed) -> dict:
        """One replica simulated (``engine.planner.simulate_configuration``)."""
        raise NotImplementedError

    def exact_mean(self, spec, hw, rate_per_s, b_max, token_limit):
        """(mean latency ms, mean batch size, utilization) from the exact model at
        Poisson arrivals and the greedy batcher, or None."""
        return None

    def truncated_fraction(self, spec, token_limit: int) -> float:
        return 0.0

    def sla_columns(self, spec) -> list[str]:
        return ["latency_percentile_ms"]

    def confirm_columns(self, spec) -> dict:
        return {"latency_percentile_ms": ("confirmed_percentile_ms", "confirmed_ci_ms")}

    def tie_column(self, spec) -> str:
        return "latency_percentile_ms"

    def columns(self, spec) -> list[str]:
        from dataclasses import fields
        return ["hardware", "b_max", "queue_delay_ms", "token_limit", "replicas",
                *(f.name for f in fields(ConfigPrice))]

    screening_noun = "simulation"

    def closest_text(self, row) -> str:
        return f"{int(row['replicas'])} replicas of {row['hardware']}"

    def csv_columns(self, spec) -> list[str]:
        cols = ["hardware", "b_max", "queue_delay_ms", "token_limit", "replicas",
                "cost_usd_per_hour", "cost_usd_per_million", "mean_latency_ms", "method",
                "latency_percentile_ms", "confirmed", "confirmed_percentile_ms",
                "confirmed_ci_ms", "utilization", "mean_batch_size", "energy_j_per_request",
                "truncated_fraction"]
        cols.remove("token_limit" if self.name == "gpu" else "queue_delay_ms")
        return cols

    def screened_words(self, spec) -> str:
        return f"in one screening simulation of {_jobs_for(spec.percentile):,} requests"

    def fleet_text(self, row) -> str:
        n = int(row["replicas"])
        return f"{n} replica{'s' if n > 1 else ''} of {row['hardware']}"

    def grid(self, spec) -> list[dict]:
        points = []
        for hw in spec.hardware:
            for b in spec.b_max:
                if b > self.largest_batch(hw):
                    continue
                for d in spec.queue_delay_ms:
                    for k in spec.token_limit:
                        for r in spec.replicas:
                            points.append(dict(hardware=hw.name, b_max=b, queue_delay_ms=d,
                                               token_limit=k, replicas=r))
        return points

    def largest_batch(self, hw) -> float:
        return math.inf

    def price(self, spec, *, arrivals=None, hardware, b_max, queue_delay_ms=0.0,
              token_limit=0, replicas=1) -> ConfigPrice:
        hw = spec.hardware_named(hardware)
        delay = float(queue_delay_ms)
        rate = spec.rate_per_s / replicas                       # per replica, per s
        cost_h = hw.price_usd_per_hour * replicas
        cost_m = usd_per_million_requests(cost_h, spec.rate_per_s)
        cut = self.truncated_fraction(spec, token_limit)
        cap = self.capacity_per_s(spec, hw, b_max, token_limit)
        common = dict(cost_usd_per_hour=cost_h, cost_usd_per_million=cost_m,
                      truncated_fraction=cut, capacity_per_s=cap * replicas)
        if not rate < cap * (1.0 - NEAR_CAPACITY):
            return ConfigPrice(stable=False, method="exact", mean_latency_ms=math.inf,
                               latency_percentile_ms=math.inf, utilization=1.0,
                               mean_batch_size=float(b_max), energy_j_per_request=math.inf,
                               meets_sla=False, reason="unstable", **common)
        sim = _simulate(spec, hw, b_max, delay, token_limit, replicas, arrivals=arrivals)
        exact = (self.exact_mean(spec, hw, rate, b_max, token_limit)
                 if arrivals is None and delay == 0.0 else None)
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

    def confirm(self, spec, row, arrivals) -> dict:
        """(percentile, 95 % CI half-width) in ms from ``CONFIRM_RUNS`` independent runs
        of max(``CONFIRM_JOBS``, 5 × the screening run) requests."""
        n = max(CONFIRM_JOBS, 5 * _jobs_for(spec.percentile))
        hw = spec.hardware_named(row.hardware)
        base = np.random.SeedSequence([spec.seed, 1729, int(row.b_max), int(row.replicas),
                                       int(row.token_limit),
                                       int(round(float(row.queue_delay_ms) * 1e6))])
        values = [_simulate(spec, hw, row.b_max, row.queue_delay_ms, row.token_limit,
                            row.replicas, arrivals=arrivals, n_jobs=n,
                            seed=s)["latency_percentile_ms"]
                  for s in base.spawn(CONFIRM_RUNS)]
        half = (stats.t.ppf(0.975, CONFIRM_RUNS - 1) * np.std(values, ddof=1)
                / math.sqrt(CONFIRM_RUNS))
        return {"latency_percentile_ms": (float(np.mean(values)), float(half))}

    def rejection(self, spec, rows: pd.DataFrame) -> tuple[str, str]:
        unit = self.load_unit
        if rows.empty:
            return "not searched", "no b_max in the range is within its measured batch sizes"
        if not rows["stable"].any():
            most = rows["capacity_per_s"].max()
            return ("unstable", f"at most {most:,.4g} {unit} with "
                                f"{int(rows['replicas'].max())} replicas, below the "
                                f"{spec.rate_per_s:,.4g} {unit} offered")
        stable = rows[rows["stable"]]
        if (stable["reason"] == "latency").all():
            low = stable.loc[stable["latency_percentile_ms"].idxmin()]
            return ("latency", f"best p{spec.percentile:g} "
                               f"{duration_text(low.latency_percentile_ms)} (b_max "
                               f"{int(low.b_max)}, {int(low.replicas)} replicas) > "
                               f"{duration_text(spec.target_ms)}")
        fast = stable[stable["reason"] != "latency"]
        if (fast["reason"] == "energy").all():
            low = fast["energy_j_per_request"].min()
            return "energy", f"least {low:,.4g} J per request > {spec.energy_cap_j:,.4g} J cap"
        low = fast["truncated_fraction"].min()
        return ("truncation", f"the limits that meet the latency cut {low:.1%} of replies > "
                              f"{spec.truncation_cap:.1%} allowed")

    def settings_row(self, row) -> tuple:
        try:
            return (whole_in(row["b_max"], PLAN_B_MAX),
                    number_in(row["queue_delay_ms"], PLAN_QUEUE_DELAY_MS),
                    whole_in(row["token_limit"], PLAN_TOKEN_LIMIT))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"row must hold a whole b_max >= 1, a queue_delay_ms >= 0 and a "
                             f"whole token_limit >= 0 ({exc})") from None


def batch_knobs(extra: Knob) -> tuple:
    """The knobs of a batch family: b_max, ``extra``, replicas."""
    return (Knob("b_max", "Largest batch (b_max)", "requests",
                 PLAN_B_MAX,
                 (1, 2, 4, 8, 16, 32, 64, 128), "The most requests one batch holds."),
            extra,
            Knob("replicas", "Replicas", "servers",
                 PLAN_REPLICAS,
                 tuple(range(1, 17)), "Copies of the server sharing the traffic."))


__all__ = ["BatchFamily", "batch_knobs", "CONFIRM_RUNS", "CONFIRM_JOBS", "ConfigPrice",
           "configuration_seed", "replica_arrivals", "screen_jobs", "simulate_replica",
           "token_law"]
