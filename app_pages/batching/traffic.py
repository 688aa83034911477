"""The GPU batching page under the chosen arrival process (``ui.arrivals_input``).

Poisson keeps the page's exact results.  Under MMPP-2 the mean latency, batch size and
utilization are exact (``engine.batching.mean_latency_mmpp2``); under a bursty renewal
process or a replayed trace there is no exact result, so the means come from the
simulator.  Every process is time-scaled to the page's load.  The "Poisson vs this
traffic" view sets them side by side at one mean load: mean latency (exact where theory
allows) and simulated p99, and p99 over loads ρ = 0.3..0.95.  Which result answers
where, and every number of the comparison: ``engine.batching.traffic``.  Memoised on hashable
arguments (the choice is a frozen dataclass); times in ms, rates per ms.
"""
from __future__ import annotations

import math

import numpy as np

from engine import batching
from engine.batching import traffic as model
from engine.batching.traffic import LOADS, MMPP_FRACTIONS  # noqa: F401 (the charts' loads)
from ui import arrivals_input
from ui.budget import heavy
from ui.memo import memo, over_points

from . import data


def has_exact_mean(arrivals) -> bool:
    """Whether the mean latency under ``arrivals`` can be exact (Poisson, MMPP-2: where
    its truncated chain converges, ``mmpp2_curve``)."""
    return arrivals.kind in ("poisson", "mmpp2")


def exact_everywhere(scenario) -> bool:
    """Whether the scenario's mean-latency curve is exact at every load drawn (Poisson,
    or MMPP-2 whose chain converged at every point of ``mmpp2_curve``)."""
    arrivals, fit = scenario.arrivals, scenario.fit
    if arrivals.kind != "mmpp2":
        return arrivals.is_poisson
    _, mean = mmpp2_curve(fit.alpha_ms, fit.tau0_ms, scenario.b_max, arrivals)
    return bool(np.all(np.isfinite(mean)))


@memo(256)
@heavy
def exact_mmpp2(lam, alpha, tau0, b_max, arrivals):
    """Exact means under the MMPP-2 ``arrivals`` time-scaled to λ (per ms)."""
    return batching.mean_latency_mmpp2(arrivals.process(lam), alpha, tau0, b_max)


@memo(64)
def mmpp2_curve(alpha, tau0, b_max, arrivals, bar=None) -> tuple[np.ndarray, np.ndarray]:
    """(λ per ms, exact mean latency ms) under MMPP-2 (``engine.batching.traffic.mmpp2_curve``),
    each point memoised; ``bar`` moves between points."""
    return model.mmpp2_curve(
        model.loads_of_capacity(alpha, tau0, b_max),
        lambda x: exact_mmpp2(x, alpha, tau0, b_max, arrivals),
        None if bar is None else (lambda f: bar.progress(f, "Exact mean latency under MMPP-2…")))


def _exact_at(lam, alpha, tau0, b_max, arrivals):
    """The exact means that may answer under ``arrivals`` (Poisson: E[W] of eq 15; MMPP-2:
    its chain), or None where only a simulation can."""
    if arrivals.kind == "mmpp2":
        return exact_mmpp2(lam, alpha, tau0, b_max, arrivals)
    return None


def mean_at(lam, alpha, tau0, b_max, arrivals) -> tuple[float, str]:
    """(mean latency ms, "exact" or "simulated") at one load under ``arrivals``
    (``engine.batching.traffic.mean_under``)."""
    if arrivals.is_poisson:
        return model.mean_under(batching.mean_latency(lam, alpha, tau0, b_max))
    exact = _exact_at(lam, alpha, tau0, b_max, arrivals)
    if exact is not None and exact.converged:
        return model.mean_under(exact=exact)
    return model.mean_under(run=data.sim_at(lam, alpha, tau0, b_max, arrivals))


@memo(64)
def operating_point(scenario, here):
    """``here`` (the exact Poisson ``OperatingPoint``) under the scenario's arrivals
    (``engine.batching.traffic.operating_point_under``)."""
    arrivals = scenario.arrivals
    if arrivals.is_poisson or not here.stable:
        return here
    fit = scenario.fit
    args = (here.lam_per_ms, fit.alpha_ms, fit.tau0_ms, scenario.b_max, arrivals)
    exact = _exact_at(*args)
    run = None if exact is not None and exact.converged else data.sim_at(*args)
    return model.operating_point_under(here, fit.alpha_ms, fit.tau0_ms, exact, run,
                                       fit.beta_j, fit.c0_j, scenario.gpu_usd_per_hour,
                                       scenario.usd_per_kwh)


def note(arrivals) -> str:
    """What the results assume under a non-Poisson arrival process."""
    if arrivals.kind == "mmpp2":
        how = ("Mean latency, batch size and GPU busy share are exact under the MMPP-2 "
               "(its batch-start chain with the arrival phase) where that chain converges "
               "(tail below 1e-12 within 1,500 queue levels), simulated (200,000 requests) "
               "beyond")
    else:
        how = ("No exact mean latency for this process: the means are simulated (200,000 "
               "requests)")
    return (f"Arrivals: {arrivals.label}, time-scaled to this load. {how}; p99 is "
            "simulated under it. The Poisson bounds φ and the other views' exact curves "
            "assume Poisson arrivals.")


def max_rate_mean(scenario, lam_sla_poisson: float) -> float:
    """Largest load (per ms) with mean latency ≤ the SLA under the scenario's arrivals:
    exact for Poisson, from the exact MMPP-2 curve or the simulated sweep otherwise."""
    arrivals, fit = scenario.arrivals, scenario.fit
    if arrivals.is_poisson:
        return lam_sla_poisson
    if arrivals.kind == "mmpp2" and exact_everywhere(scenario):
        lam, mean = mmpp2_curve(fit.alpha_ms, fit.tau0_ms, scenario.b_max, arrivals)
    else:
        sweep = data.rate_sweep(data.SIM_FRACTIONS, fit.alpha_ms, fit.tau0_ms, scenario.b_max,
                                data.N_JOBS, arrivals=arrivals)
        lam, mean = sweep.lam_per_ms, sweep.mean_latency_ms
    return model.largest_rate_below(lam, mean, scenario.sla_ms)


# ------------------------------------------------------------ Poisson vs this traffic

def choices(scenario) -> tuple:
    return arrivals_input.comparison(scenario.arrivals)


def _comparison_point(lam, alpha, tau0, b_max, c):
    return data.sim_at(lam, alpha, tau0, b_max, c)


@memo(32)
def comparison(alpha, tau0, b_max, lam, choices: tuple, bar=None):
    """At the load ``lam`` (per ms): per choice the mean latency (exact where theory
    allows) and the simulated p99; and the p99 at each of ``LOADS`` (ρ) per choice
    (simulated, the stream of the results table's p99; inf where unstable):
    ``engine.batching.traffic.traffic_comparison``."""
    cap = float(batching.capacity(alpha, tau0, b_max))
    loads = model.comparison_loads(alpha)
    means = [mean_at(lam, alpha, tau0, b_max, c) if lam < cap else (math.inf, "")
             for c in choices]
    here = over_points(_comparison_point, [(lam, alpha, tau0, b_max, c) for c in choices])
    over = over_points(_comparison_point, [(float(x), alpha, tau0, b_max, c)
                                            for c in choices for x in loads], bar,
                       "Simulating the arrival processes…")
    rows = [over[i * loads.size:(i + 1) * loads.size] for i in range(len(choices))]
    return model.traffic_comparison(means, here, rows, alpha)


def rows(choices: tuple, found) -> list[dict]:
    """The comparison table: one row per arrival process."""
    out = []
    for c, mean, how, p99, ratio in zip(choices, found.mean_latency_ms, found.how,
                                        found.p99_ms, found.p99_vs_poisson):
        out.append({"arrivals": c.label, "inter-arrival SCV": f"{c.scv:.3g}",
                    "mean latency (ms)": f"{mean:.3g} ({how})" if math.isfinite(mean)
                    else "∞ (unstable)",
                    "p99 latency (ms, simulated)": f"{p99:.3g}" if math.isfinite(p99)
                    else "∞ (unstable)",
                    "p99 vs Poisson": "n/a" if not math.isfinite(ratio) else f"{ratio:.2f}×"})
    return out
