"""Where disaggregation pays: the cheapest colocated fleet against the cheapest
prefill/decode disaggregated fleet for the same traffic, SLA and candidates, across
rates (``disaggregation_pays``).

Each rate is planned twice, once by each serving family, with the server ranges of the
question scaled by the rate (so a fleet of the same shape stays in range); a fleet is
confirmed by simulation as in ``capacity_plan`` (``confirm`` of the question, at most 1
per rate here, 0 screens only and the table says so).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..arrivals import MMPP2, Poisson, Renewal, Replay
from ..core.domains import RATE_PER_S
from .plan import capacity_plan
from .spec import PlanSpec

SERVING_FAMILIES = ("llm_serving", "llm_disaggregated")
MAX_RATES = 12


def _scaled(values: tuple, factor: float, high: int) -> tuple:
    """A server range reaching ``factor`` times as far (at least to its own end)."""
    top = min(high, max(max(values), math.ceil(max(values) * factor)))
    return tuple(range(min(values), top + 1))


def _at_rate(process, rate: float):
    """``process`` time-scaled to mean ``rate`` (its burstiness kept)."""
    if isinstance(process, Poisson):
        return Poisson(rate)
    if isinstance(process, Renewal):
        return Renewal(rate, process.scv)
    if isinstance(process, MMPP2):
        f = rate / process.rate
        return MMPP2(process.rate_1 * f, process.rate_2 * f, process.switch_12 * f,
                     process.switch_21 * f, process.name)
    if isinstance(process, Replay):
        return process.scaled(rate)
    raise ValueError(f"arrivals must be a Poisson, Renewal, MMPP2 or Replay process, got "
                     f"{type(process).__name__}")


def disaggregation_pays(spec: PlanSpec, rates_per_s, *, arrivals=None, workload=None,
                        executor=None) -> pd.DataFrame:
    """The cheapest colocated and the cheapest disaggregated fleet meeting ``spec``'s SLA
    at each of ``rates_per_s`` (requests/s), one row per rate: ``rate_per_s``,
    ``colocated_cost_usd_per_hour`` and ``disaggregated_cost_usd_per_hour`` (inf: none
    in range), ``colocated_fleet`` and ``disaggregated_fleet`` (in words, "" if none),
    ``cheaper`` ("colocated", "disaggregated", "same cost" or "neither"), ``saving_fraction``
    (what the cheaper saves on the other, NaN when either has none), ``confirmed`` (both
    answers confirmed by simulation; False when screened only).  ``spec``: a plan of
    either serving family; ``arrivals``: an ``engine.arrivals`` process at spec's rate
    (time-scaled to each rate), ``workload``, ``executor``: as ``capacity_plan`` takes
    them."""
    if not isinstance(spec, PlanSpec):
        raise ValueError(f"spec must be a PlanSpec, got {type(spec).__name__}")
    if spec.workload not in SERVING_FAMILIES:
        raise ValueError(f"spec: workload must be one of {SERVING_FAMILIES} to compare "
                         f"colocated and disaggregated fleets, got {spec.workload!r}")
    rates = np.atleast_1d(np.asarray(RATE_PER_S.check(rates_per_s, "rates_per_s"), float))
    if rates.ndim != 1 or not 1 <= rates.size <= MAX_RATES or not np.all(np.isfinite(rates)):
        raise ValueError(f"rates_per_s must be 1 to {MAX_RATES} finite rates")
    rows = []
    for rate in rates:
        f = rate / spec.rate_per_s
        base = dict(rate_per_s=float(rate), confirm=min(spec.confirm, 1),
                    replicas=_scaled(spec.replicas, f, 10_000),
                    prefill_instances=_scaled(spec.prefill_instances, f, 4096),
                    decode_instances=_scaled(spec.decode_instances, f, 4096))
        proc = None if arrivals is None else _at_rate(arrivals, float(rate))
        answers = {}
        for name in SERVING_FAMILIES:
            plan = capacity_plan(spec.with_(workload=name, sla=spec.sla, **base),
                                 arrivals=proc, workload=workload, executor=executor)
            answers[name] = plan
        row = {"rate_per_s": float(rate)}
        costs = {}
        for name, key in zip(SERVING_FAMILIES, ("colocated", "disaggregated")):
            best = answers[name].best
            costs[key] = math.inf if best is None else float(best["cost_usd_per_hour"])
            row[f"{key}_cost_usd_per_hour"] = costs[key]
            row[f"{key}_fleet"] = "" if best is None else answers[name].spec.family.fleet_text(best)
        c, d = costs["colocated"], costs["disaggregated"]
        row["cheaper"] = ("neither" if math.isinf(c) and math.isinf(d) else
                          "same cost" if c == d else "colocated" if c < d else "disaggregated")
        row["saving_fraction"] = (abs(c - d) / max(c, d) if math.isfinite(c) and math.isfinite(d)
                                  else math.nan)
        row["confirmed"] = all(p.best is not None and p.best["confirmed"] is True
                               for p in answers.values())
        rows.append(row)
    return pd.DataFrame(rows)


__all__ = ["disaggregation_pays"]
