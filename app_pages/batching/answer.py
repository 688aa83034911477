"""The GPU batching page's answer in a capacity planner's words: the results rows (shown
on the page and opening the report), the busy-time note, the scenario sentence, the
report's inputs and sections, and the metrics a pinned baseline is compared on (names
carry units).  Every number comes from the engine (``OperatingPoint``, SLA answers)."""
from __future__ import annotations

import math

from engine.batching import (energy_per_request_at_power, load_in, per_ms_to_per_s,
                             rate_from_load)
from app_pages.batching import views
from app_pages.batching.inputs import Point
from ui.export import format_number, plain_number

UNSTABLE = "∞ (unstable)"


def share_text(x: float) -> str:
    """A share of time as a percentage, tiny ones as "< 0.1 %"."""
    return "< 0.1 %" if 0 < x < 5e-4 else f"{100 * x:.1f} %"


def rate_text(lam_per_ms: float, alpha_ms: float) -> str:
    rho = float(load_in(lam_per_ms, alpha_ms, "rho"))
    return (f"{plain_number(float(load_in(lam_per_ms, alpha_ms, 'per_s')), 4)} requests/s "
            f"(ρ = {f'{rho:.3f}' if rho < 10 else plain_number(rho)})")


def largest_text(lam_per_ms: float, alpha_ms: float) -> str:
    """The largest load meeting a target, or that none does."""
    return rate_text(lam_per_ms, alpha_ms) if lam_per_ms > 0 else "no load meets it"


def work_limit_per_s(alpha_ms: float) -> float:
    """1/α in requests/s: the load per-request work allows (ρ = 1)."""
    return float(per_ms_to_per_s(rate_from_load(1.0, alpha_ms, "rho")))


def ms(x: float) -> str:
    return f"{plain_number(x)} ms"


def rows(scenario, here, lam_sla: float, lam_p99: float, p99: float | None) -> list:
    """(label, value with units) of the results table at the operating point ``here``."""
    alpha = scenario.fit.alpha_ms
    eta, joules = here.energy_efficiency_per_j, here.joules_per_request
    how = "" if scenario.arrivals.kind in ("poisson", "mmpp2") else " (simulated)"
    return [
        (f"Mean latency per request{how}", ms(here.mean_latency_ms) if here.stable else UNSTABLE),
        ("p99 latency (simulated)", ms(p99) if p99 is not None else UNSTABLE),
        ("Requests per batch (mean)", plain_number(here.mean_batch_size) if here.stable
         and math.isfinite(here.mean_batch_size) else "no limit (the queue grows)"),
        ("GPU busy (share of time)", f"{100 * here.utilization:.1f} %"),
        ("Load", rate_text(here.lam_per_ms, alpha)),
        ("Energy efficiency", "n/a (no power measured)" if eta is None
         else f"{plain_number(eta)} jobs/J"),
        ("Energy per request", energy_text(scenario, here)),
        ("Cost per million requests", f"${plain_number(here.usd_per_million)}" if here.stable
         else "n/a"),
        (f"Largest load with mean latency ≤ {scenario.sla_ms:g} ms",
         largest_text(lam_sla, alpha)),
        (f"Largest load with p99 ≤ {scenario.sla_ms:g} ms (simulated)",
         largest_text(lam_p99, alpha)),
        ("Arrivals", scenario.arrivals.label)]


def energy_text(scenario, here) -> str:
    """Energy per request: from the measured power, else from the GPU's datasheet power
    (as the capacity planner prices it), said so; else why there is none."""
    if here.joules_per_request is not None:
        return f"{format_number(here.joules_per_request, 3)} J"
    sheet = scenario.profile.datasheet
    if sheet is None:
        return "n/a (no power measured)"
    if not here.stable:
        return "n/a (unstable)"
    joules = energy_per_request_at_power(here.rate_per_s, here.utilization, sheet[0])
    return (f"{format_number(joules, 3)} J from datasheet power ({format_number(sheet[0])} W "
            "busy, no power measured: an upper bound)")


def busy_note(scenario, here) -> str:
    """Why the GPU can be busy all the time at half its capacity (the engine's busy split)."""
    fit = scenario.fit
    if not here.stable:
        return ("GPU busy all the time: the load is beyond what it can serve, so the queue "
                "grows without bound.")
    return (f"Why busy {100 * here.utilization:.1f} % at a load of {100 * here.rho:.0f} % of "
            f"capacity: per-request work takes {share_text(here.work_share)} of the time and "
            f"the fixed cost of each batch ({ms(fit.tau0_ms)}, paid once per batch of "
            f"{plain_number(here.mean_batch_size)} requests on average) another "
            f"{share_text(here.overhead_share)}; the GPU is idle {share_text(here.idle_share)} of "
            "the time. At low load batches are small, so the fixed cost is paid often and "
            "the GPU rarely idles; busy is not full: larger batches absorb more load.")


def scenario_sentence(scenario, here) -> str:
    limit = (f"batches of at most {scenario.b_max} requests" if scenario.b_max
             else "batches of any size")
    return (f"{scenario.profile.name} serving {here.rate_per_s:,.0f} requests/s "
            f"({100 * here.rho:.0f} % of the {work_limit_per_s(scenario.fit.alpha_ms):,.0f} requests/s "
            f"that per-request work allows; {scenario.arrivals.label}), {limit}, latency "
            f"target {scenario.sla_ms:g} ms.")


def parameters(scenario, here) -> dict:
    """The report's inputs as plain text with units."""
    fit = scenario.fit
    return {"Batch profile": scenario.profile.name,
            "Time per request in a batch (α)": f"{fit.alpha_ms:.5g} ms",
            "Fixed time per batch (τ0)": f"{fit.tau0_ms:.5g} ms",
            "Largest batch (b_max)": f"{scenario.b_max} requests" if scenario.b_max
            else "no limit",
            "Load": f"{here.rate_per_s:,.6g} requests/s (ρ = {here.rho:.4f})",
            "Arrivals": scenario.arrivals.label,
            "Latency target (SLA)": f"{scenario.sla_ms:g} ms",
            "GPU price": f"${scenario.gpu_usd_per_hour:g} per hour",
            "Electricity price": f"${scenario.usd_per_kwh:g} per kWh"}


def metrics(here, lam_sla: float) -> dict:
    """What a pinned baseline is compared on: absolute units only (ρ is a share of each
    GPU's own capacity, so it does not compare across profiles)."""
    return {"Mean latency (ms)": here.mean_latency_ms,
            "Mean requests per batch": here.mean_batch_size,
            "GPU busy (%)": 100 * here.utilization,
            "Load (requests/s)": here.rate_per_s,
            "Capacity (requests/s)": here.capacity_per_s,
            "Largest load with mean latency ≤ SLA (requests/s)":
                float(per_ms_to_per_s(lam_sla)),
            "Cost per million requests ($)": here.usd_per_million}


def report_sections(scenario, lam_per_ms: float, baseline) -> list:
    """[(human title, figure, caption)] of every chart view; a view's notes go under its
    last chart."""
    out = []
    for view in views.report_views(scenario, lam_per_ms):
        point = Point.for_view(view, lam_per_ms, baseline)
        shown = views.figures(view, scenario, point)
        notes = " ".join(views.captions(view, scenario, point))
        out += [(views.TITLES.get(name, name), fig, notes if i == len(shown) - 1 else "")
                for i, (name, fig) in enumerate(shown)]
    return out
