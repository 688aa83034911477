"""The plan in plain words: the answer's metrics, the (label, value with units) rows of
the results table and the report, and the report's inputs."""
from __future__ import annotations

import math

import streamlit as st

from engine.planner import duration_text, money_text

from . import data
from .inputs import OUTPUT_LAWS, UNITS, WORKLOADS


def show_best(plan) -> None:
    """The answer's numbers as metrics (cost, $ per million, confirmed percentile,
    replicas, energy)."""
    t = data.best_text(plan)
    cols = st.columns(5)
    cols[0].metric("Cost", t["cost"], help="Replicas × the price of one, $ per hour.")
    cols[1].metric("Per million requests", t["per_million"],
                   help="Cost per hour / (requests per s × 3600) × 10⁶.")
    cols[2].metric(t["label"], t["latency"],
                   help=f"{t['ci']} (95 % interval of {data.CONFIRM_RUNS} independent "
                        f"simulations); mean latency {t['mean']}.")
    cols[3].metric("Replicas", t["replicas"], help=t["configuration"])
    cols[4].metric("Energy per request", t["energy"],
                   help=f"Each replica busy {t['utilisation']} of the time.")


def rows(plan, arrivals_label: str, best: bool = True) -> list[tuple[str, str]]:
    """The results table's rows: the answer's numbers (when there is one and ``best``),
    the traffic, the SLA and how much was priced and confirmed."""
    s, t, c = plan.spec, data.best_text(plan), data.confirmation(plan)
    out = []
    if t and best:
        out += [("Cheapest configuration", t["configuration"]), ("Cost", t["cost"]),
                ("Cost per million requests", t["per_million"]),
                (f"p{s.percentile:g} latency, confirmed by simulation", f"{t['latency']} "
                                                                       f"{t['ci']}"),
                ("Mean latency", t["mean"]), ("Each replica busy", t["utilisation"]),
                ("Energy per request", t["energy"])]
        if s.workload == "llm":
            out.append(("Replies the token limit cuts", t["cut"]))
    out += [("Traffic", f"{s.rate_per_s:,.6g} {UNITS[s.workload]}"),
            ("Arrivals", arrivals_label), ("SLA", sla_text(s)),
            ("Configurations priced", f"{len(plan.table):,}"),
            ("Meeting the SLA (screening)", f"{c['passed']:,}"),
            ("Confirmed by simulation", f"{c['confirmed']} of {c['tried']} tried")]
    return out


def sla_text(spec) -> str:
    text = f"{spec.percentile:g} % within {duration_text(spec.target_ms)}"
    if math.isfinite(spec.energy_cap_j):
        text += f", at most {spec.energy_cap_j:,.4g} J per request"
    if spec.workload == "llm" and spec.truncation_cap < 1:
        text += f", at most {100 * spec.truncation_cap:.3g} % of replies cut"
    return text


def _hardware_text(h) -> str:
    law = (f"k = {', '.join(f'{k:.4g}' for k in h.k_s)} s" if h.workload == "llm" else
           f"α {h.alpha_ms:.4g} ms, τ0 {h.tau0_ms:.4g} ms, batches up to {h.max_batch}")
    return (f"{h.name}: {money_text(h.price_usd_per_hour)}/h, {h.busy_power_w:,.4g} W busy, "
            f"{h.idle_power_w:,.4g} W idle, {law}")


def parameters(spec, arrivals_label: str) -> dict:
    """The report's inputs: plain text with units."""
    u = UNITS[spec.workload]
    out = {"Workload": WORKLOADS[spec.workload],
           "Traffic": f"{spec.rate_per_s:,.6g} {u} in total", "Arrivals": arrivals_label,
           "SLA": sla_text(spec)}
    if spec.workload == "llm":
        law = OUTPUT_LAWS.get(spec.token_law)
        out["Reply lengths"] = law.name if law is not None else spec.token_law
    out["Candidate hardware"] = "; ".join(_hardware_text(h) for h in spec.hardware)
    out["b_max searched"] = ", ".join(map(str, spec.b_max))
    if spec.workload == "gpu":
        out["Max queue delays searched"] = ", ".join(f"{d:g} ms" for d in spec.queue_delay_ms)
    else:
        out["Token limits searched"] = ", ".join("none" if k == 0 else f"{k:,} tokens"
                                                 for k in spec.token_limit)
    r = spec.replicas
    out["Replicas searched"] = f"{min(r)} to {max(r)}" if len(r) == max(r) - min(r) + 1 \
        else ", ".join(map(str, r))
    out["Configurations"] = f"{spec.n_configurations:,}"
    out["Confirmed by simulation"] = f"the {spec.confirm} cheapest passing the screening"
    out["Seed"] = str(spec.seed)
    return out
