"""The token-limit page's views: their names, and their figures for a scenario at a
chosen limit (memoised on those frozen inputs).  The exact curves assume Poisson
arrivals; under another arrival process (``Scenario.arrivals``) the simulated points
run under it and Kingman's GI/G/1 approximation of the mean wait is drawn beside them."""
from __future__ import annotations

import numpy as np

from engine.token_limit import objective_v1, objective_v2
from app_pages.token_limit import data
from app_pages.token_limit import figures as figs
from ui.export import operating_marker, plain_number
from ui.memo import memo

DELAY = "Delay & loss"
OPTIMAL = "Optimal limit"
TOKEN_LAW = "Token law"
FIT = "Latency fit"
PAPER = "Paper vs model"
FORMULAS = "Formulas"
VIEWS = (DELAY, OPTIMAL, TOKEN_LAW, FIT, PAPER, FORMULAS)
CHART_VIEWS = (DELAY, OPTIMAL, TOKEN_LAW, FIT)     # the views the report draws
LIMIT_VIEWS = (TOKEN_LAW,)          # their charts mark the chosen limit (what-if fragment)

FORMULA_TEX = [
    ("S = a\\,\\min(n, n_{max}) + c,\\quad \\rho = \\lambda E[S]",
     "service time of a request asking n output tokens (§II-B, Table I fit); stable iff ρ < 1"),
    ("E[W] = \\frac{\\lambda E[S^2]}{2(1-\\rho)}", "M/G/1 mean queueing delay (eq 1)"),
    ("E[\\min(n,m)] = \\sum_{k<m} P(n>k),\\quad E[\\min(n,m)^2] = \\sum_{k<m}(2k+1)P(n>k)",
     "clipped token moments (eqs 2-3, summed by parts)"),
    ("E[S] = aE[n_{req}] + c,\\quad E[S^2] = E^2[S] + a^2(E[n_{req}^2]-E^2[n_{req}])",
     "service moments (eqs 4-5)"),
    ("\\pi(\\tau) \\approx (1-\\zeta^2)\\pi^{det}(\\tau) + \\zeta^2\\pi^{exp}(\\tau),\\quad "
     "\\zeta^2 = \\frac{E[S^2]-E^2[S]}{E^2[S]}",
     "De Kok-Tijms interpolation (eqs 6-8), valid for ζ² ≤ 1; E[W_q] likewise (eq 7)"),
    ("E[W_q] = \\tau\\pi(\\tau) + E[W_{qs}](1-\\pi(\\tau))", "served vs all users (eq 9)"),
    ("W(x) = P_0 + \\lambda\\int_0^x W(y)\\,P(S > x-y)\\,dy,\\ 0\\le x\\le\\tau,\\quad "
     "P_0 = \\frac{1}{1+\\rho\\, g(\\tau)}",
     "exact M/G/1+D: virtual wait by level crossing, solved by product integration"),
    ("V_1 = \\theta E[u\\,|\\,n_{max}] - (1-\\theta)E[W]", "objective with patient users (eq 10)"),
    ("V_2 = \\theta E[u\\,|\\,n_{max}] - (1-\\theta)E[W_q] - \\ell\\,\\pi(\\tau)",
     "objective with impatient users (eq 11, sign corrected)"),
    ("E[W] \\approx \\frac{c_a^2 + c_s^2}{2}\\,\\frac{\\rho}{1-\\rho}\\,E[S],\\quad "
     "c_s^2 = \\frac{E[S^2]}{E^2[S]} - 1",
     "other arrivals (inter-arrival SCV c_a²): Kingman's GI/G/1 approximation, exact (eq 1) "
     "for Poisson, c_a² = 1; the exact curves and optima assume Poisson arrivals"),
]
ERRATA = [
    "Eq 11 prints V2 = θE[u] + (1 − θ)E[W] − ℓπ, which rewards delay; the page uses "
    "− (1 − θ)E[W_q] (the printed sign is a toggle under Objectives).",
    "Eqs 6-8 (De Kok-Tijms) are an approximation valid for ζ² ≤ 1; beyond it the M/M/1+D anchor "
    "is used as is. The exact M/G/1+D solution shows how far the interpolation is off.",
    "§V-B rests on a fit of S = a·n + c the paper does not publish; Table I's own fit gives "
    "a = 0.023087 s/token, c = 0.490 s (see Paper vs model for the consequences).",
    "Eqs 2-3 are the moments of min(n, n_max); they are summed here as Σ P(n > k).",
]


def marker(p) -> dict:
    """The chosen limit's ``LimitPoint`` on the mean-wait chart (the Delay & loss view's
    first, drawn in the what-if fragment): the results table's mean wait."""
    return operating_marker(p.n_max, p.mean_wait_s, f"now: {plain_number(p.mean_wait_s)} s")


def best(scenario) -> tuple:
    """The V1 and V2 optima (``engine.token_limit.OptimalLimit``) of ``scenario``."""
    s = scenario
    return (data.best_v1(*s.model, s.theta_v1),
            data.best_v2(*s.model, s.theta_v2, s.loss_cost, s.patience_s, s.method,
                         s.printed_sign))


def sweep(scenario, bar=None):
    """The simulated points of ``scenario`` under its arrivals (``engine.token_limit.LimitSimSweep``)."""
    s = scenario
    return data.sim_sweep(*s.model, s.patience_s, data.sim_limits(*s.n_range), bar,
                          arrivals=s.arrivals)


def approx_wait(scenario):
    """Kingman's GI/G/1 mean wait (s) on the scenario's grid under its arrivals."""
    return data.approx_wait(*scenario.model, scenario.grid, scenario.arrivals.scv)


def arrivals_note(scenario) -> str:
    """What the charts show under a non-Poisson arrival process, in words."""
    s = scenario
    how = ("the simulated points run under it" if s.simulate else
           "turn on the simulation points to see the waits under it")
    return (f"Arrivals: {s.arrivals.label} (inter-arrival SCV {s.arrivals.scv:.3g}) at "
            f"{plain_number(s.lam_per_s, 4)} requests/s. The exact curves (M/G/1, M/G/1+D) and "
            "the optimal "
            f"limits assume Poisson arrivals and stay as the reference; {how}. The mean-wait "
            "chart adds Kingman's GI/G/1 two-moment approximation, an approximation that "
            "ignores correlation between gaps (an MMPP's or a trace's bursts over longer "
            "windows), so it can be far off for such traffic.")


def unsimulated(t) -> str:
    """Why a ``engine.token_limit.TrafficPoint`` has no simulated mean wait without impatience."""
    return ("∞ (unstable)" if not np.isfinite(t.approx_wait_s) else
            "not simulated (load near capacity)")


def optimum_caption(scenario) -> str:
    """The optima in words, saying they assume Poisson arrivals; under another process
    the simulated waits at both optima under it (``data.traffic_at``) beside them."""
    s = scenario
    b1, b2 = best(s)
    text = (f"With patient users (V1) the best limit is {b1.n_max:,} tokens (mean wait "
            f"{plain_number(b1.mean_wait_s)} s); with users who give up (V2) {b2.n_max:,} "
            f"tokens (mean wait {plain_number(b2.mean_wait_s)} s, "
            f"{100 * b2.loss_fraction:.1f} % give up). "
            "Both searched over every integer limit near the optimum; the curves are "
            "on the grid of limits. Both optima assume Poisson arrivals (exact M/G/1 and "
            "M/G/1+D).")
    if s.poisson:
        return text
    t1 = data.traffic_at(*s.model, b1.n_max, s.patience_s, s.arrivals)
    t2 = data.traffic_at(*s.model, b2.n_max, s.patience_s, s.arrivals)
    at_v1 = (unsimulated(t1) if t1.plain is None else
             f"{plain_number(t1.plain.mean_wait_all_s)} ± {t1.plain.ci95_wait_all_s:.2g} s "
             "simulated")
    return (text + f" Under {s.arrivals.label}, at {b1.n_max:,} tokens the mean wait is "
            f"{at_v1} (GI/G/1 approximation {plain_number(t1.approx_wait_s)} s); at "
            f"{b2.n_max:,} tokens "
            f"{100 * t2.patient.loss_fraction:.1f} % give up and those who stay wait "
            f"{plain_number(t2.patient.mean_wait_served_s)} s (simulated).")


def _delay(scenario, point) -> list:
    cur = data.curves(*scenario.model, scenario.patience_s, scenario.grid)
    sim = sweep(scenario) if scenario.simulate else None
    other = None if scenario.poisson else scenario.arrivals.label
    base = point.baseline
    baseline = None
    if base is not None:
        bc = data.curves(*base.model, base.patience_s, base.grid)
        baseline = (bc.n_max, bc.mean_wait_s)
    n = cur.n_max
    return [
        ("mean_wait", figs.wait_figure(
            n, cur.mean_wait_s, stable_limit=cur.stable_limit,
            sim=None if sim is None else (sim.plain_n, sim.plain_wait_s, sim.plain_ci_s),
            baseline=baseline, arrivals=other,
            approx=None if other is None else approx_wait(scenario))),
        ("served_wait", figs.served_wait_figure(
            n, cur.mean_wait_s, cur.exact.mean_wait_served_s, cur.interpolation.mean_wait_served_s,
            cur.patience_s, stable_limit=cur.stable_limit,
            sim=None if sim is None else (sim.n, sim.served_wait_s, sim.served_ci_s),
            arrivals=other)),
        ("loss_fraction", figs.loss_figure(
            n, cur.exact.loss_fraction, cur.interpolation.loss_fraction, cur.patience_s,
            sim=None if sim is None else (sim.n, sim.loss, sim.loss_ci), arrivals=other)),
    ]


def _optimal(scenario) -> list:
    s = scenario
    cur = data.curves(*s.model, s.patience_s, s.grid)
    imp = cur.exact if s.method == "exact" else cur.interpolation
    b1, b2 = best(s)
    v1 = objective_v1(cur.mean_utility, cur.mean_wait_s, s.theta_v1)
    v2 = objective_v2(cur.mean_utility, imp.mean_wait_all_s, imp.loss_fraction, s.theta_v2,
                      s.loss_cost, s.printed_sign)
    label = "V2 as printed (+(1 − θ)E[W])" if s.printed_sign else "V2 (eq 11)"
    other = None if s.poisson else s.arrivals.label
    v1_approx = None if other is None else objective_v1(cur.mean_utility, approx_wait(s),
                                                         s.theta_v1)
    return [("objectives", figs.objective_figure(
        cur.n_max, v1, v2, (b1.n_max, b1.objective), (b2.n_max, b2.objective), v2_label=label,
        arrivals=other, v1_approx=v1_approx))]


def _token_law(scenario, point) -> list:
    s = scenario
    summary = data.law_summary(s.law)
    cur = data.curves(*s.model, s.patience_s, s.grid)
    at = data.point(*s.model, point.limit, s.patience_s, s.method)
    return [("token_law", figs.token_law_figure(
                summary.bin_centers_tokens, summary.bin_widths_tokens, summary.probs, summary.k,
                summary.cdf, limit=point.limit,
                clipped_share=at.clipped_share, label=s.law.label)),
            ("clipped_share", figs.clipped_share_figure(cur.n_max, cur.clipped_share,
                                                        cur.mean_utility, limit=point.limit))]


def _fit(profile) -> list:
    if profile.table is None:
        return []
    inp, out, lat = profile.table
    fit = data.latency_fit(out, lat)
    fin = data.latency_fit_with_input(out, inp, lat) if profile.input_term else None
    labels = [f"{int(i)}, {int(o)}" for i, o in zip(inp, out)]
    n = np.linspace(0.0, max(out) * 1.05, 50)
    return [("latency_fit", figs.latency_fit_figure(
                out, inp, lat, fit.a_s_per_token, fit.c_s, fit.r2,
                None if fin is None else fin.latency_s(out, inp), None if fin is None else fin.r2,
                line=(n, fit.latency_s(n)))),
            ("fit_residuals", figs.fit_residuals_figure(
                labels, fit.residuals_s, None if fin is None else fin.residuals_s))]


@memo(128)
def figures(view: str, scenario, point) -> tuple:
    """(name, figure) pairs of one view; every figure comes from a pure builder."""
    if view == DELAY:
        return tuple(_delay(scenario, point))
    if view == OPTIMAL:
        return tuple(_optimal(scenario))
    if view == TOKEN_LAW:
        return tuple(_token_law(scenario, point))
    if view == FIT:
        return tuple(_fit(scenario.profile))
    return ()
