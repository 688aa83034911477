"""The token-limit page's answer in a capacity planner's words: the results rows (shown on
the page and opening the report), the scenario sentence, the report's inputs and sections,
and the metrics a pinned baseline is compared on (names carry units).  Every number comes
from the engine (``LimitPoint``, exact with Poisson arrivals; under another arrival
process also ``engine.token_limit.TrafficPoint``: simulated and approximate); every answer names the
arrival model it assumes.  Paper notation stays in help text and the Formulas view."""
from __future__ import annotations

import numpy as np

from engine.token_limit import percent_change
from app_pages.token_limit import views
from app_pages.token_limit.inputs import Point
from ui.export import format_percent, plain_number

UNSTABLE = "∞ (unstable)"
METHODS = {"exact": "exact M/G/1+D", "interpolation": "De Kok-Tijms interpolation"}
TITLES = {      # chart name (CSV file, widget key) → the report's heading
    "mean_wait": "Mean wait against the token limit (no one gives up)",
    "served_wait": "Mean wait of users who stay against the token limit",
    "loss_fraction": "Share of users who give up against the token limit",
    "objectives": "Service objectives against the token limit",
    "token_law": "Requested output tokens",
    "clipped_share": "Answers clipped by the limit",
    "latency_fit": "Request latency against output tokens (profile fit)",
    "fit_residuals": "Latency fit residuals"}


def pct(x) -> str:
    """A share with one decimal (the kit's rule: never "-0.0 %")."""
    return format_percent(x, 1)


def load_text(x, of: str = "") -> str:
    """A load as a share of capacity (``of`` after it); ten times capacity and more as a
    multiple of it."""
    return pct(x) + of if x < 10 else f"{plain_number(x)} × capacity"


def rows(p, free, patience: float, exact_note: str = "") -> list:
    """(label, value with units) at the chosen limit ``p`` against no limit ``free``
    (``LimitPoint``s; ``free`` None where no limit cannot be evaluated); ``exact_note``
    ends the labels of the rows that depend on the arrival model (", Poisson" beside
    another process)."""
    stable = np.isfinite(p.mean_wait_s)
    free_wait = np.nan if free is None else free.mean_wait_s
    change = percent_change(p.mean_wait_s, free_wait) if stable and np.isfinite(free_wait) \
        else None

    def unlimited(x, text):
        return "n/a" if free is None or np.isnan(x) else text(x)

    x = exact_note
    return [
        ("Mean wait (no one gives up)" + x,
         f"{plain_number(p.mean_wait_s)} s" if stable else UNSTABLE),
        ("Mean wait without a limit" + x,
         unlimited(free_wait, lambda w: f"{plain_number(w)} s" if np.isfinite(w) else "unstable")),
        ("Change vs no limit" + x, "n/a" if change is None else f"{change:+.1f} %"),
        ("Answers clipped", pct(p.clipped_share)),
        ("Load (share of capacity)", f"{load_text(p.load)} (no limit: "
         f"{unlimited(np.nan if free is None else free.load, load_text)})"),
        (f"Share of users who give up (wait > {patience:g} s)" + x, pct(p.loss_fraction)),
        ("Give up without a limit" + x,
         unlimited(np.nan if free is None else free.loss_fraction, pct)),
        ("Mean wait of users who stay" + x, f"{plain_number(p.mean_wait_served_s)} s"),
        ("Mean wait of users who stay, no limit" + x,
         unlimited(np.nan if free is None else free.mean_wait_served_s,
                   lambda w: f"{plain_number(w)} s")),
        ("Mean share of requested tokens served", pct(p.mean_utility)),
    ]


def _seconds(x: float) -> str:
    return f"{plain_number(x)} s" if np.isfinite(x) else UNSTABLE


def traffic_rows(label: str, t, patience: float) -> list:
    """(label, value) of the chosen arrival process ``label`` at one limit from ``t``
    (``engine.token_limit.TrafficPoint``): the simulated waits and share who give up, and Kingman's
    approximation of the mean wait."""
    plain = (views.unsimulated(t) if t.plain is None else
             f"{plain_number(t.plain.mean_wait_all_s)} s ± {t.plain.ci95_wait_all_s:.2g}")
    return [("Arrivals", label),
            ("Mean wait (no one gives up), simulated", plain),
            ("Mean wait (no one gives up), GI/G/1 approximation", _seconds(t.approx_wait_s)),
            (f"Share of users who give up (wait > {patience:g} s), simulated",
             pct(t.patient.loss_fraction)),
            ("Mean wait of users who stay, simulated",
             f"{plain_number(t.patient.mean_wait_served_s)} s")]


def traffic_sentence(label: str, t) -> str:
    """What the chosen arrival process changes, in one sentence (``engine.token_limit.TrafficPoint``)."""
    plain = ("grows without bound" if t.plain is None and not np.isfinite(t.approx_wait_s)
             else "is not simulated this close to capacity" if t.plain is None
             else f"is {plain_number(t.plain.mean_wait_all_s)} s simulated")
    return (f"Under {label} the mean wait {plain} "
            f"(GI/G/1 approximation: {_seconds(t.approx_wait_s)}), and "
            f"{pct(t.patient.loss_fraction)} of users give up (simulated).")


def scenario_sentence(scenario, limit: int) -> str:
    lam = scenario.lam_per_s
    return (f"{scenario.profile.name} serving {plain_number(lam, 4)} requests/s (one every "
            f"{plain_number(1 / lam)} s) "
            f"whose answers ask for {scenario.law.label} output tokens, capped at {limit:,} "
            f"tokens; users give up after waiting {scenario.patience_s:g} s. Arrivals: "
            f"{scenario.arrivals.label}.")


def parameters(scenario, limit: int) -> dict:
    """The report's inputs as plain text with units."""
    s, prof = scenario, scenario.profile
    return {"Latency profile": prof.name,
            "Time per output token (a)": f"{prof.a_s:.6g} s",
            "Fixed time per request (c)": f"{prof.c_s:.5g} s",
            "Requested output tokens": s.law.label,
            "Arrival rate (λ)": f"{plain_number(s.lam_per_s, 4)} requests/s",
            "Arrivals": s.arrivals.label + ("" if s.poisson else
                                            f" (inter-arrival SCV {s.arrivals.scv:.3g})"),
            "Token limit (n_max)": f"{limit:,} tokens",
            "Token limits drawn": f"{s.n_range[0]:,} to {s.n_range[1]:,} tokens",
            "Patience (τ)": f"{s.patience_s:g} s",
            "Impatience model": METHODS.get(s.method, s.method),
            "Weight of the answer in V1 (θ)": f"{s.theta_v1:.4f}",
            "Weight of the answer in V2 (θ)": f"{s.theta_v2:.4f}",
            "Cost of a user who gives up (ℓ)": f"{s.loss_cost:g} utility units"}


def metrics(p) -> dict:
    """What a pinned baseline is compared on (absolute units: s, %)."""
    return {"Mean wait, no one gives up (s)": p.mean_wait_s,
            "Answers clipped (%)": 100 * p.clipped_share,
            "Users who give up (%)": 100 * p.loss_fraction,
            "Mean wait of users who stay (s)": p.mean_wait_served_s}


def report_sections(scenario, limit: int, baseline) -> list:
    """[(human title, figure, caption)] of every chart view."""
    return [(TITLES.get(name, name), fig, "") for view in views.CHART_VIEWS
            for name, fig in views.figures(view, scenario, Point.for_view(view, limit, baseline))]
