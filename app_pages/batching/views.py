"""The GPU batching page's views: their names, and their figures and captions for a
scenario at a load (memoised on those frozen inputs)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.batching import LOAD_UNITS, delay_grid_ms, load_in, rate_from_load
from app_pages.batching import data, traffic
from app_pages.batching import figures as figs
from ui.arrivals_input import POISSON
from ui.export import operating_marker
from ui.memo import memo

VIEWS = LATENCY, ENERGY, B_MAX, TAIL, COMPARE, FIT, MEASURED, FORMULAS = (
    "Latency", "Utilization & energy", "Batch-size limit", "Tail latency & Triton",
    "Poisson vs this traffic", "Profile fit", "Model vs measurement", "Formulas")
CHART_VIEWS = (LATENCY, ENERGY, B_MAX, TAIL, FIT)   # the scenario's views the report draws
                                       # (COMPARE once computed: ``report_views``; the
                                       # measurement's charts: measured_view.report_sections)
LOAD_VIEWS = (ENERGY, TAIL, COMPARE)   # their charts depend on the load (what-if fragment)
FRAGMENT_VIEWS = (LATENCY, *LOAD_VIEWS)  # drawn in the fragment (Latency: the moving marker)
X_TITLES = dict(zip(LOAD_UNITS, ("load ρ = λα (share of the capacity 1/α)",
                                  "arrival rate (requests/s)")))
TITLES = {      # chart name (CSV file, widget key) → the report's heading
    "latency": "Mean latency against load",
    "utilization": "Share of time the GPU is busy against load",
    "energy_efficiency": "Energy efficiency against load",
    "tradeoff": "Energy efficiency against mean latency",
    "b_max_family": "Mean latency for several batch-size limits",
    "percentiles": "Latency percentiles against load (simulated)",
    "queue_delay": "Triton batcher: latency against the max queue delay (simulated)",
    "throughput_fit": "Throughput against batch size (profile fit)",
    "time_residuals": "Batch-time fit residuals",
    "energy_fit": "Energy per batch (profile fit)",
    "online_throughput": "Model vs measurement: throughput against concurrency",
    "online_latency": "Model vs measurement: mean latency against concurrency",
    "ma_throughput": "Model Analyzer: throughput against concurrency, model vs measurement",
    "ma_p99": "Model Analyzer: p99 latency against concurrency, model vs measurement",
    "poisson_vs_traffic": "Poisson vs this traffic: p99 latency against load"}
ABSOLUTE = "per_s"      # the load unit of a comparison across profiles

FORMULA_TEX = [
    ("\\tau^{[b]} = \\alpha b + \\tau_0,\\quad \\mu^{[b]} = \\frac{b}{\\alpha b+\\tau_0}",
     "batch time and throughput (eqs 25-26); stable iff ρ = λα < 1 (eq 27)"),
    ("E[W] = \\frac{E[B^2]-E[B]}{2\\lambda E[B]} + E[\\hat H]", "exact mean latency (Lemma 2, eq 15)"),
    ("E[B] = \\frac{\\lambda\\tau_0 + \\Pr(A=0)}{1-\\lambda\\alpha},\\quad "
     "E[B^2] = \\frac{(1+2\\lambda^2\\alpha\\tau_0)E[B]+\\lambda^2\\tau_0^2}{1-\\lambda^2\\alpha^2}",
     "batch-size moments (eqs 31-32); Pr(A=0) from the generating-function series (exact)"),
    ("\\phi_0 = \\frac{\\alpha+\\tau_0}{2(1-\\lambda\\alpha)}\\Big(1+2\\lambda\\tau_0+"
     "\\frac{1-\\lambda\\tau_0}{1+\\lambda\\alpha}\\Big)", "upper bound (eq 41), tight at light load"),
    ("\\phi_1 = \\frac{3}{2}\\frac{\\tau_0}{1-\\lambda\\alpha}+\\frac{\\alpha}{2}"
     "\\frac{\\lambda\\alpha+2}{1-\\lambda^2\\alpha^2}", "upper bound (eq 42), tight at heavy load"),
    ("\\eta = \\frac{1}{\\beta + c_0/E[B]} \\ge \\frac{1}{\\beta + c_0/\\max(1, \\lambda\\tau_0/(1-\\lambda\\alpha))}",
     "energy efficiency (eq 19) and its bound (eq 40), jobs per joule"),
]
ERRATA = [
    "Eq 7 prints E[(A^[b])²] = λ²E[(H^[b])²]; a Poisson count has E[A²] = λE[H] + λ²E[H²] "
    "(eq 34, which the proof uses, is right).",
    "Theorem 2 compares φ0(λ, α, τ0) with φ1(λ, α, τ1): read τ0.",
    "The paper calls π0 hard and takes 'exact' values from simulation; here they are exact "
    "(generating function of the batch-size chain), checked against truncated chains and simulation.",
]


def work_limit(alpha_ms) -> float:
    """The load axis's end: 1/α per ms, the capacity per-request work allows (ρ = 1)."""
    return float(rate_from_load(1.0, alpha_ms, "rho"))


def _x(lam, scenario, fit, unit=None):
    """Arrival rates (per ms) on the chart's load axis (``unit``: the scenario's)."""
    return load_in(np.asarray(lam, dtype=float), fit.alpha_ms, unit or scenario.load_unit)


def marker(scenario, here, baseline) -> dict:
    """The operating point ``here`` on the latency chart, on that chart's load axis
    (requests/s when a baseline is pinned); y is the results table's mean latency."""
    unit = scenario.load_unit if baseline is None else ABSOLUTE
    return operating_marker(_x(here.lam_per_ms, scenario, scenario.fit, unit),
                            here.mean_latency_ms, f"now: {here.mean_latency_ms:.3g} ms")


def _delays(scenario, fit, lam):
    return data.delay_sweep(lam, fit.alpha_ms, fit.tau0_ms, scenario.b_max,
                            scenario.preferred_batch_size,
                            delay_grid_ms(fit.alpha_ms, fit.tau0_ms), data.N_JOBS)


def figures(view: str, scenario, point) -> tuple:
    """(name, figure) pairs of one view at ``point`` (a ``inputs.Point``); every figure
    comes from a pure builder.  Figures are shared: never modified after building.
    The comparison's processes (which may hold this session's upload) are in its key."""
    if view == COMPARE:
        return _compare(scenario, point.lam_per_ms, traffic.choices(scenario))
    return _figures(view, scenario, point)


@memo(32)
def _compare(scenario, lam_per_ms: float, choices: tuple) -> tuple:
    fit = scenario.fit
    found = traffic.comparison(fit.alpha_ms, fit.tau0_ms, scenario.b_max, lam_per_ms, choices)
    x = _x(found.lam_per_ms, scenario, fit)
    return (("poisson_vs_traffic", figs.traffic_figure(
        [(c.label, x, p99) for c, p99 in zip(choices, found.p99_over_loads_ms)],
        x_title=X_TITLES[scenario.load_unit], sla_ms=scenario.sla_ms)),)


@memo(128)
def _figures(view: str, scenario, point) -> tuple:
    fit = scenario.fit
    alpha, tau0, b_max = fit.alpha_ms, fit.tau0_ms, scenario.b_max
    c = data.curves(alpha, tau0, b_max, fit.beta_j, fit.c0_j)
    sweep = data.rate_sweep(data.SIM_FRACTIONS, alpha, tau0, b_max, data.N_JOBS,
                            arrivals=scenario.arrivals)
    x = _x(c.lam_per_ms, scenario, fit)
    axes = dict(x_title=X_TITLES[scenario.load_unit],
                unstable_at=float(_x(c.capacity_per_ms, scenario, fit)),
                x_max=float(_x(work_limit(alpha), scenario, fit)))
    if view == LATENCY:
        return (("latency", _latency(scenario, c, sweep, point.baseline)),)
    if view == ENERGY:
        out = [("utilization", figs.utilization_figure(x, c.utilization, c.utilization_bound,
                                                       **axes))]
        if c.energy_efficiency_per_j is not None:
            here = point.at(scenario)
            out.append(("energy_efficiency", figs.energy_efficiency_figure(
                x, c.energy_efficiency_per_j, c.energy_efficiency_bound_per_j, **axes)))
            out.append(("tradeoff", figs.tradeoff_figure(
                c.mean_latency_ms, c.energy_efficiency_per_j, c.phi_ms,
                c.energy_efficiency_bound_per_j,
                point=(here.mean_latency_ms, here.energy_efficiency_per_j)
                if here.stable else None)))
        return tuple(out)
    if view == B_MAX:
        curves = [(f"b_max = {b}", _x(lam, scenario, fit), w)
                  for b, lam, w in data.family(alpha, tau0)]
        return (("b_max_family", figs.bmax_family_figure(curves, x, c.phi_ms,
                                                         x_title=axes["x_title"])),)
    if view == TAIL:
        out = [("percentiles", figs.percentiles_figure(
            _x(sweep.lam_per_ms, scenario, fit), sweep.p50_ms, sweep.p95_ms, sweep.p99_ms,
            sweep.ci_reliable,
            x, c.mean_latency_ms, **axes, sla_ms=scenario.sla_ms))]
        if point.at(scenario).stable:
            ds = _delays(scenario, fit, point.lam_per_ms)
            out.append(("queue_delay", figs.queue_delay_figure(
                ds.delay_ms, ds.p99_ms, ds.mean_latency_ms, ds.best_delay_ms, ds.greedy_p99_ms)))
        return tuple(out)
    if view == FIT:
        profile = scenario.profile
        out = [("throughput_fit", figs.throughput_fit_figure(
            profile.batch_size, profile.throughput_per_s, alpha, tau0, fit.r2)),
            ("time_residuals", figs.residuals_figure(fit.batch_size, fit.residuals_ms, "ms"))]
        if fit.beta_j is not None:
            out.append(("energy_fit", figs.energy_fit_figure(
                fit.batch_size, fit.energy_j, fit.beta_j, fit.c0_j, fit.r2_energy)))
        return tuple(out)
    return ()


def _latency(scenario, c, sweep, base):
    """Mean latency against load; with a pinned baseline both on requests/s (ρ is a share
    of each profile's own capacity: a baseline's ρ = 4 on another GPU's axis means nothing).
    Under other arrivals: the exact MMPP-2 curve beside the Poisson one, or (no exact
    result) the simulated points under the process, drawn whether or not asked."""
    fit, arrivals = scenario.fit, scenario.arrivals
    unit = scenario.load_unit if base is None else ABSOLUTE
    baseline = None if base is None else data.curves(*base)
    x_max = work_limit(fit.alpha_ms) if base is None else max(work_limit(fit.alpha_ms),
                                                             work_limit(base[0]))
    other, sim_name = None, "simulation ±95% CI"
    if arrivals.kind == "mmpp2":
        lam, mean = traffic.mmpp2_curve(fit.alpha_ms, fit.tau0_ms, scenario.b_max, arrivals)
        other = (arrivals.label, _x(lam, scenario, fit, unit), mean)
    elif not arrivals.is_poisson:
        other = (arrivals.label, None, None)
    if not arrivals.is_poisson:
        sim_name = f"simulation, {arrivals.label} ±95% CI"
    show_sim = scenario.simulate or not traffic.exact_everywhere(scenario)
    return figs.latency_figure(
        _x(c.lam_per_ms, scenario, fit, unit), c.mean_latency_ms, c.phi0_ms, c.phi1_ms,
        c.phi_ms,
        x_title=X_TITLES[unit], unstable_at=float(_x(c.capacity_per_ms, scenario, fit, unit)),
        x_max=float(_x(x_max, scenario, fit, unit)), sla_ms=scenario.sla_ms,
        sim=(_x(sweep.lam_per_ms, scenario, fit, unit), sweep.mean_latency_ms, sweep.ci95_ms)
        if show_sim else None,
        baseline=None if baseline is None else (_x(baseline.lam_per_ms, scenario, fit, unit),
                                                baseline.mean_latency_ms),
        arrivals=other, sim_name=sim_name)


def report_views(scenario, lam_per_ms: float) -> tuple:
    """The views the report draws: ``CHART_VIEWS``, and the comparison once computed."""
    fit = scenario.fit
    done = traffic.comparison.ready(fit.alpha_ms, fit.tau0_ms, scenario.b_max, lam_per_ms,
                                    traffic.choices(scenario))
    return CHART_VIEWS + ((COMPARE,) if done else ())


def _latency_notes(arrivals) -> list[str]:
    if arrivals.kind == "mmpp2":
        return [f"Exact mean latency under {arrivals.label} (time-scaled to each load) beside "
                "the exact mean under Poisson arrivals (dashed). The exact chain is drawn up "
                "to the highest load where it converges (tail below 1e-12 within 1,500 queue "
                "levels); beyond, the points are simulated under the same process."]
    return [f"No exact mean latency under {arrivals.label}: the points are simulated under it "
            f"({data.N_JOBS:,} requests each); the dashed curve is the exact mean under "
            "Poisson arrivals at the same load."]


def captions(view: str, scenario, point) -> list[str]:
    """The notes drawn under a view's charts."""
    fit, arrivals = scenario.fit, scenario.arrivals
    if view == LATENCY and not arrivals.is_poisson:
        return _latency_notes(arrivals) + captions(view, replace(scenario, arrivals=POISSON),
                                                   point)
    if view in (ENERGY, B_MAX) and not arrivals.is_poisson:
        return ["These curves assume Poisson arrivals (the results table above is under "
                f"{arrivals.label})."]
    if view == COMPARE:
        return [f"Every process at the same mean load, the MMPP-2 and the replay time-scaled "
                f"to it; p99 simulated ({data.N_JOBS:,} requests each, the same random "
                "stream as the results table's p99). Upload a trace in the Arrivals input "
                "to add its replay."]
    if view == LATENCY and point.baseline is not None and scenario.load_unit != ABSOLUTE:
        return ["With a baseline pinned the load axis is in requests/s: ρ is a share of each "
                "GPU's own capacity, so two profiles compare only in absolute units."]
    if view == ENERGY and fit.beta_j is None:
        sheet = ("" if scenario.profile.datasheet is None else " The answer's energy per "
                 "request is from the GPU's datasheet board power instead, as the capacity "
                 "planner prices it.")
        return ["Energy charts need board power measured at each batch size in the profile."
                + sheet]
    if view == FIT:
        return [f"Source: {scenario.profile.source}"]
    if view == TAIL and point.at(scenario).stable:
        ds = _delays(scenario, fit, point.lam_per_ms)
        poisson = "" if arrivals.is_poisson else (
            f" The percentiles are simulated under {arrivals.label}; the Triton batcher "
            "under Poisson arrivals.")
        return [f"Triton batcher at this load: a max queue delay of {ds.best_delay_ms:.3g} ms "
                f"gives the smallest p99 ({ds.best_p99_ms:.3g} ms; greedy: "
                f"{ds.greedy_p99_ms:.3g} ms).{poisson}"]
    return []
