"""The views of the autoscaling-SLA page and their figures, memoised on the inputs.

``figures(view, scenario, top, simulate, plan, n, baseline)`` returns the view's
(name, figure) pairs; every argument is hashable (frozen dataclasses, numbers,
tuples), so the arguments are the key.
"""
from __future__ import annotations

from engine import sla
from ui.memo import memo

from . import data, traffic
from . import figures as figs

REPLICAS, RESPONSE_TIME, TRACE_COST, PAPER, TRAFFIC, FORMULAS_VIEW = (
    "Replicas", "Response time", "Trace & cost", "Paper vs model", "Poisson vs this traffic",
    "Formulas")
VIEWS = (REPLICAS, RESPONSE_TIME, TRACE_COST, PAPER, TRAFFIC, FORMULAS_VIEW)
CHART_VIEWS = (REPLICAS, RESPONSE_TIME, TRACE_COST, PAPER)   # TRAFFIC: once computed
N_VIEWS = (RESPONSE_TIME,)        # drawn at the what-if n (inside the fragment)

# The report's heading of each chart (the names above are file names).
TITLES = {"sla_vs_replicas": "Share of requests slower than the target, by replicas",
          "waiting_vs_replicas": "Wait before service, by replicas",
          "response_cdf": "Share of requests answered within a time, at the chosen replicas",
          "trace_replicas": "Load over the trace and the replicas serving it",
          "cost": "Cost over the trace: autoscaled against a static fleet",
          "paper_vs_model_waiting": "Paper vs model: eq 1 as printed against its own law"}
REPORT_TITLES = {**TITLES,       # with the comparison, in the report once computed
                 "poisson_vs_traffic": "Poisson vs this traffic: replicas needed, by simulation"}

FORMULAS = [
    ("\\omega_p = d_1 + \\Big(\\frac{\\ln(1-p/100)}{\\ln(\\lambda/(n\\mu))} - 1\\Big)(d_1+d_2+\\Delta)",
     "p-th percentile wait, random dispatch with retries (eq 1)"),
    ("P_{busy} = \\rho = \\frac{\\lambda}{n\\mu},\\quad P_r = \\rho^r(1-\\rho),\\quad "
     "W_r = d_1 + r\\,(d_1+d_2+\\Delta)", "busy probability, retries and waits (eqs 2, 4, 5)"),
    ("P(R \\le RT) = \\sum_{r=0}^{r_{max}} P(Z = W_r)\\,\\mathrm{CDF}_{exe}(RT - W_r),\\quad "
     "r_{max} = \\lfloor (RT-d_1)/c \\rfloor", "response-time CDF (eq 7); n′ = fewest n meeting p"),
    ("P(R > t) = e^{-\\mu t}\\Big(1 + C\\,\\mu\\frac{1-e^{-(n\\mu-\\lambda-\\mu)t}}{n\\mu-\\lambda-\\mu}\\Big)",
     "M/M/n central FIFO queue, C = Erlang C (reference)"),
]
ERRATA = [
    "Eq 1 treats the retry count r_max as real. The p-quantile of the paper's own geometric law "
    "is d1 + ⌈ln(1 − p/100)/ln ρ − 1⌉⁺·c; eq 1 is smaller except at whole numbers, and for "
    "p/100 < 1 − ρ it falls below d1, the least possible wait (d1 − c as ρ → 0).",
    "Eq 2 is exact only for first tries (Poisson arrivals see time averages). A retry c later "
    "meets the same busy period again, so it finds its backend busy more often than ρ and the "
    "tries are not independent: the geometric law is optimistic at high utilization, few "
    "backends and c short against 1/μ, the regime the proof assumes (d1, d2, Δ ≪ 1/μ).",
    "Eq 7's R = Y + Z counts d1 to the backend but not d2 back to the frontend.",
    "Measured (n = 10, exponential 1/μ = 10 ms, d1 = d2 = c/4, Δ = c/2, 300 000 requests): "
    "eq 7's p99 is within ~7% of simulation for ρ ≤ 0.5 at every c·μ in {0.1, 1, 10}; 10% low "
    "at ρ = 0.7, c·μ = 0.1 and 19-51% low at ρ = 0.9 (64.5 ms against 131 ms at c·μ = 0.1). "
    "Mean tries 18.1 against the paper's 1/(1 − ρ) = 10 at ρ = 0.9, c·μ = 0.1. The retry "
    "correction (dotted) gives 80 ms there and is within 1-8% at c·μ = 1.",
]


def _replicas(s, top, simulate, n, baseline) -> list:
    cur = data.n_curves(s, top)
    sim = data.sim_sweep(s, data.sim_grid(s, simulate))
    capacity = float(s.model.offered_load())
    fix = None if cur["n_fix"] is None else (cur["n_fix"], cur["miss_fix"])
    return [("sla_vs_replicas", figs.miss_figure(
                cur["n"], cur["miss_eq7"], cur["miss_mmn"], percentile=s.percentile,
                n_capacity=capacity, floor=sla.MISS_RESOLUTION, fix=fix,
                sim=None if sim is None else (sim["n"], sim["miss"]),
                chosen=n, baseline=baseline)),
            ("waiting_vs_replicas", _waiting(s, cur, sim, capacity, printed=False))]


def _waiting(s, cur, sim, capacity, printed: bool):
    return figs.waiting_figure(
        cur["n"], cur["omega_ms"], cur["omega_mmn_ms"], percentile=s.percentile,
        n_capacity=capacity, sim=None if sim is None else (sim["n"], sim["omega_ms"]),
        printed_ms=cur["omega_printed_ms"] if printed else None)


def _paper(s, top, simulate) -> list:
    cur = data.n_curves(s, top)
    sim = data.sim_sweep(s, data.sim_grid(s, simulate))
    capacity = float(s.model.offered_load())
    return [("paper_vs_model_waiting", _waiting(s, cur, sim, capacity, printed=True))]


def _response_time(s, simulate, n) -> list:
    if n is None or not data.at_replicas(s, n, simulate)["stable"]:
        return []
    c = data.cdf_curves(s, n, simulate)
    return [("response_cdf", figs.cdf_figure(
        c["t_ms"], c["eq7"], c["mmn"], rt_ms=float(sla.ms_from_s(s.rt)), percentile=s.percentile, n=n,
        fix=c["fix"], sim=None if c["sim"] is None else (c["t_ms"], c["sim"])))]


def _trace_cost(s, plan) -> list:
    p = None if plan is None else data.plan(s, plan)
    if p is None:
        return []
    return [("trace_replicas", figs.trace_figure(p.start_h, p.rate_per_s, p.needed, p.serving,
                                                 p.sla_met, p.overloaded, p.interval_h)),
            ("cost", figs.cost_figure(p.end_h, p.cumulative_cost, p.cumulative_static_cost,
                                      p.static_replicas))]


def report_views(s) -> tuple:
    """The views the report draws: the "Poisson vs this traffic" chart once computed."""
    done = _traffic_figures.ready(s, traffic.choices(s))
    return CHART_VIEWS + ((TRAFFIC,) if done else ())


def traffic_figures(s, bar=None) -> list:
    """The "Poisson vs this traffic" chart (simulations memoised; ``bar`` moves while
    they run)."""
    return _traffic_figures(s, traffic.choices(s), bar)


@memo(16)
def _traffic_figures(s, choices: tuple, bar=None) -> list:
    found = traffic.comparison(s, choices, bar)
    return [("poisson_vs_traffic", figs.traffic_figure(
        traffic.curves(found), percentile=s.percentile, needed=[g["n"] for _, g in found]))]


def figures(view: str, s, top: float, simulate: bool, plan=None, n: int | None = None,
            baseline: tuple | None = None) -> list:
    """(name, figure) pairs of one view, each from a pure builder, memoised on the inputs
    that view depends on only (a trace change does not rebuild the replica charts).
    ``plan``: the ``inputs.PlanInputs`` (None: no valid plan); ``n``: the what-if
    replicas (None outside the what-if fragment); ``baseline``: the pinned
    (n, share of requests slower than the target) curve."""
    if view == REPLICAS:
        return _figures(view, s, top, simulate, None, n, baseline)
    if view == PAPER:
        return _figures(view, s, top, simulate, None, None, None)
    if view == RESPONSE_TIME:
        return _figures(view, s, 0.0, simulate, None, n, None)
    if view == TRACE_COST:
        return _figures(view, s, 0.0, False, plan, None, None)
    if view == TRAFFIC:
        return traffic_figures(s)
    return []


@memo(128)
def _figures(view: str, s, top: float, simulate: bool, plan, n, baseline) -> list:
    if view == REPLICAS:
        return _replicas(s, top, simulate, n, baseline)
    if view == RESPONSE_TIME:
        return _response_time(s, simulate, n)
    if view == PAPER:
        return _paper(s, top, simulate)
    return _trace_cost(s, plan)
