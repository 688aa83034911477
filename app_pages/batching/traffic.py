"""The GPU batching page under the chosen arrival process (``ui.arrivals_input``).

Poisson keeps the page's exact results.  Under MMPP-2 the mean latency, batch size and
utilisation are exact (``engine.batching.mean_latency_mmpp2``); under a bursty renewal
process or a replayed trace there is no exact result, so the means come from the
simulator.  Every process is time-scaled to the page's load.  The "Poisson vs this
traffic" view sets them side by side at one mean load: mean latency (exact where theory
allows) and simulated p99, and p99 over loads ρ = 0.3..0.95.  Memoised on hashable
arguments (the choice is a frozen dataclass); times in ms, rates per ms.
"""
from __future__ import annotations

from dataclasses import replace
import math

import numpy as np

from engine import batching
from engine.batching import busy_split, cost_per_million, efficiency_from_batch_size
from ui import arrivals_input
from ui.budget import heavy
from ui.memo import memo

from . import data

LOADS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)       # ρ = λα of the comparison chart
MMPP_FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)  # of capacity


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
    """(λ per ms, exact mean latency ms) under MMPP-2 at ``MMPP_FRACTIONS`` of capacity,
    point by point (each memoised; ``bar`` moves between points).  NaN from the first
    load whose truncated chain does not converge (its stationary tail above 1e-12 at the
    largest truncation): a burstier load only needs more levels, so the higher loads
    are not tried; the page simulates there."""
    cap = float(batching.capacity(alpha, tau0, b_max))
    lam = np.array(MMPP_FRACTIONS) * cap
    out = np.full(lam.size, np.nan)
    for i, x in enumerate(lam):
        r = exact_mmpp2(float(x), alpha, tau0, b_max, arrivals)
        if bar is not None:
            bar.progress((i + 1) / lam.size, "Exact mean latency under MMPP-2…")
        if not r.converged:
            break
        out[i] = r.mean_latency
    return lam, out


def mean_at(lam, alpha, tau0, b_max, arrivals) -> tuple[float, str]:
    """(mean latency ms, "exact" or "simulated") at one load under ``arrivals``."""
    if arrivals.is_poisson:
        return float(batching.mean_latency(lam, alpha, tau0, b_max)), "exact"
    if arrivals.kind == "mmpp2":
        r = exact_mmpp2(lam, alpha, tau0, b_max, arrivals)
        if r.converged:
            return float(r.mean_latency), "exact"
    run = data.sim_at(lam, alpha, tau0, b_max, arrivals)
    return (math.inf if run is None else run.mean_latency), "simulated"


@memo(64)
def operating_point(scenario, here):
    """``here`` (the exact Poisson ``OperatingPoint``) under the scenario's arrivals:
    the mean latency and wait, batch size and utilisation exact under MMPP-2, simulated
    otherwise, with the energy, cost and busy split that follow from them."""
    arrivals = scenario.arrivals
    if arrivals.is_poisson or not here.stable:
        return here
    fit = scenario.fit
    args = (here.lam_per_ms, fit.alpha_ms, fit.tau0_ms, scenario.b_max, arrivals)
    r = exact_mmpp2(*args) if arrivals.kind == "mmpp2" else None
    if r is not None and r.converged:
        latency, wait, size, busy = r.mean_latency, r.mean_wait, r.mean_batch_size, r.utilization
    else:
        r = data.sim_at(*args)
        latency, wait, size, busy = r.mean_latency, r.mean_wait, r.mean_batch_size, r.utilization
    eta = joules = None
    if fit.beta_j is not None and fit.c0_j is not None:
        eta = float(efficiency_from_batch_size(size, fit.beta_j, fit.c0_j))
        joules = 1.0 / eta
    work, overhead = busy_split(busy, size, fit.alpha_ms, fit.tau0_ms)
    return replace(here, mean_latency_ms=float(latency), mean_wait_ms=float(wait),
                   mean_batch_size=float(size), utilization=float(busy),
                   energy_efficiency_per_j=eta, joules_per_request=joules,
                   usd_per_million=float(cost_per_million(
                       here.lam_per_ms, joules or 0.0, scenario.gpu_usd_per_hour,
                       scenario.usd_per_kwh)),
                   work_share=work, overhead_share=overhead)


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


def largest_rate(lam, values, target) -> float:
    """Largest λ whose value (a latency growing with λ) is ≤ ``target``, linearly
    interpolated between the grid points around it (0 if the first misses)."""
    lam, values = np.asarray(lam, float), np.asarray(values, float)
    ok = values <= target
    if not ok[0]:
        return 0.0
    fail = np.flatnonzero(~ok)
    if fail.size == 0:
        return float(lam[-1])
    j = fail[0]
    if not np.isfinite(values[j]):
        return float(lam[j - 1])
    return float(lam[j - 1] + (target - values[j - 1]) * (lam[j] - lam[j - 1])
                 / (values[j] - values[j - 1]))


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
        lam, mean = sweep.lam, sweep.mean_latency
    return largest_rate(lam, mean, scenario.sla_ms)


# ------------------------------------------------------------ Poisson vs this traffic

def choices(scenario) -> tuple:
    return arrivals_input.comparison(scenario.arrivals)


@memo(32)
def comparison(alpha, tau0, b_max, lam, choices: tuple, bar=None) -> dict:
    """At the load ``lam`` (per ms): per choice (mean ms, how, p99 ms); and the p99 at
    each of ``LOADS`` (ρ) per choice (simulated, the stream of the results table's p99;
    inf where unstable)."""
    cap = float(batching.capacity(alpha, tau0, b_max))
    loads = [r / alpha for r in LOADS]
    steps, done = len(choices) * (len(loads) + 1), 0
    table, p99 = [], []
    for c in choices:
        mean, how = mean_at(lam, alpha, tau0, b_max, c) if lam < cap else (math.inf, "")
        run = data.sim_at(lam, alpha, tau0, b_max, c)
        table.append((c, mean, how, math.inf if run is None else run.p99))
        row = []
        for x in loads:
            done += 1
            if bar is not None:
                bar.progress(done / steps, f"{c.label}: simulating ρ = {x * alpha:.2f}…")
            got = data.sim_at(x, alpha, tau0, b_max, c) if x < cap else None
            row.append(math.inf if got is None else got.p99)
        p99.append(np.array(row))
    return {"table": tuple(table), "rho": np.array(LOADS), "p99": tuple(p99)}


def rows(found: dict) -> list[dict]:
    """The comparison table: one row per arrival process."""
    base = found["table"][0][3]
    out = []
    for c, mean, how, p99 in found["table"]:
        ratio = p99 / base if math.isfinite(p99) and math.isfinite(base) and base > 0 else None
        out.append({"arrivals": c.label, "inter-arrival SCV": f"{c.scv:.3g}",
                    "mean latency (ms)": f"{mean:.3g} ({how})" if math.isfinite(mean)
                    else "∞ (unstable)",
                    "p99 latency (ms, simulated)": f"{p99:.3g}" if math.isfinite(p99)
                    else "∞ (unstable)",
                    "p99 vs Poisson": "n/a" if ratio is None else f"{ratio:.2f}×"})
    return out
