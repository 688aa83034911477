"""The page's results in plain words: (label, value with units) rows, drawn as its
results tables and handed to the report as its answer.  Text only: the numbers come
from ``data`` (the engine); paper notation stays in the help text and Formulas view.
"""
from __future__ import annotations

import math

from engine import sla
from ui.export import format_number, operating_marker, plain_number

from . import data


def fmt_n(n: float) -> str:
    return f"{int(n):,}" if math.isfinite(n) else "none"


def percent(fraction: float, digits: int = 3) -> str:
    """A share as a percentage in plain digits (0.0088 %, 0.00006 %), never e-notation."""
    return "0 %" if fraction == 0 else f"{plain_number(100 * fraction, digits, 1e-10)} %"


def share(miss: float) -> str:
    """A share of requests as a percentage (0.0088 %, 0.00001 %); ``nan``: below what the
    method resolves (``engine.sla.MISS_RESOLUTION``), in words."""
    if not math.isfinite(miss):
        return f"below one in {plain_number(1 / sla.MISS_RESOLUTION)}"
    return percent(miss, 3 if miss >= 1e-4 else 2)


def of(count: float, total: float) -> str:
    """'count of total (x %)'."""
    pct = f" ({percent(count / total)})" if total else ""
    return f"{count:,.0f} of {total:,.0f}{pct}"


def sim_answer(sim, approx: float, simulate: bool) -> str:
    """The simulated answer as shown: a count, a bound, or why there is none."""
    if not math.isfinite(approx):
        return "none"
    if sim is None:
        return f"n/a (> {data.SIM_MAX_N})" if simulate else "off"
    if sim["all_meet"]:
        return f"≤ {int(sim['n'][0]):,}"
    return fmt_n(sim["fewest"]) if math.isfinite(sim["fewest"]) else f"> {int(sim['n'][-1]):,}"


def answer_rows(ans: dict, sim, simulate: bool) -> list:
    return [("Replicas needed, simulation", sim_answer(sim, ans["approx"], simulate)),
            ("Replicas needed, approximation", fmt_n(ans["approx"])),
            ("Replicas needed, one central queue", fmt_n(ans["mmn"])),
            ("Replicas to keep up with the load", fmt_n(ans["stable"]))]


def plan_rows(plan, percentile: float) -> tuple[list, list]:
    """(cost rows, SLA rows) of an autoscaling plan, autoscaled beside the static fleet."""
    allowed = f"{100 - percentile:.3g} %"
    cost = [("Cost, autoscaled", f"${plan.cost:,.2f} ({plan.gpu_hours:,.1f} GPU-hours)"),
            ("Cost, static fleet for the peak",
             f"${plan.static_cost:,.2f} ({replicas(plan.static_replicas)} all the time)"),
            ("Saving", f"{100 * plan.savings:.1f} %")]
    misses = [("Intervals missing the SLA, autoscaled",
               of(plan.violation_intervals, plan.intervals)),
              ("Intervals missing the SLA, static fleet",
               of(plan.static_violation_intervals, plan.intervals)),
              (f"Requests late beyond the allowed {allowed}, autoscaled",
               of(plan.late_requests, plan.total_requests)),
              (f"Requests late beyond the allowed {allowed}, static fleet",
               of(plan.static_late_requests, plan.total_requests))]
    return cost, misses


def replicas(n: int) -> str:
    return counted(f"{n:,}")


def counted(n: str) -> str:
    """A replica count as shown ("1", "≤ 5", "> 300") with its noun: "1 replica"."""
    return f"{n} replica{'' if n.split()[-1] == '1' else 's'}"


def keep(n: str) -> str:
    """"1 replica keeps", "11 replicas keep"."""
    return counted(n) + (" keeps" if n.split()[-1] == "1" else " keep")


def trace_load(plan) -> str:
    """The load an autoscaling plan answers for, in words."""
    return (f"mean {format_number(plan.mean_rate_per_s)} requests/s, peak "
            f"{format_number(plan.peak_rate_per_s)} requests/s")


def load_mismatch(plan, lam: float) -> str:
    """Where a trace's mean load is not the arrival rate the replicas are answered for: a
    sentence saying which load each answer is for ("" where they agree within 1 %)."""
    if not plan.load_differs(lam):
        return ""
    return (f"Two loads: the replicas needed above are for {format_number(lam)} requests/s, "
            f"the arrival rate in the sidebar; the autoscaling plan below is for the trace, "
            f"{trace_load(plan)}.")


def marker(at: dict, n: int) -> dict:
    """The what-if n on the replicas chart at the table's late share (approximation);
    a share below the resolution is not drawn, too few replicas: all late."""
    miss = at["miss_eq7"] if at["stable"] else 1.0
    return operating_marker(n, miss, f"now: {share(miss)}")


def at_rows(at: dict, n: int, rt_ms: float) -> list:
    """The what-if rows at n replicas."""
    slower = f"Slower than {rt_ms:g} ms with {n} replicas"
    sim = at["miss_sim"]
    return [(f"{slower}, approximation",
             share(at["miss_eq7"]) if at["stable"] else "all (too few replicas)"),
            (f"{slower}, simulated",
             "off" if sim is None else
             f"none of {data.sim_requests(n):,}" if sim == 0 else share(sim)),
            ("Busy share of each replica", f"{100 * at['utilization']:.1f} %" if at["stable"]
             else f"all the time (too few replicas: the load is {plain_number(at['utilization'])}"
                  " × what they serve)")]


def scenario_sentence(s, rt_ms: float) -> str:
    return (f"{plain_number(s.lam, 4)} requests/s ({s.arrivals.label}) reach replicas that "
            f"serve {plain_number(s.mu, 4)} requests/s each "
            f"({s.law} service times); {s.percentile:g} % of requests must be answered within "
            f"{rt_ms:g} ms.")


def parameters(s, ss, n: int, trace_label: str) -> dict:
    """The report's inputs: plain text with units."""
    law = s.law + (f", log-sd {s.sigma:g}" if s.law == "lognormal" else "")
    return {"Arrival rate": f"{plain_number(s.lam, 6)} requests/s", "Arrivals": s.arrivals.label,
            "Service rate of one replica": f"{plain_number(s.mu, 6)} requests/s",
            "Service times": law,
            "SLA": f"{s.percentile:g} % of requests within {ss['rt_ms']:g} ms",
            "Dispatch delays": f"to a replica {ss['d1_ms']:g} ms, back {ss['d2_ms']:g} ms, "
                               f"pause before a retry {ss['delta_ms']:g} ms",
            "Replicas chosen (what-if)": f"{n}", "Load trace": trace_label,
            "Provisioning delay": f"{ss['prov_s']:g} s",
            "Headroom": f"{100 * ss['headroom']:g} % extra load",
            "GPU price": f"${ss['usd_h']:,.2f} per hour"}
