"""The plan in plain words, for every family: the answer's metrics, the (label, value
with units) rows of the results table and the report, the confirmation and the "one
server fewer" check in a sentence, and the report's inputs."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from engine.planner import duration_text, money_text
from engine.planner.families import sla_text as rows_text
from engine.planner.plan import CONFIRM_RUNS
from ui.export import format_number

from . import tables
from .fields import WORKLOADS, uses


def confirmation(plan) -> dict:
    """How many of the cheapest were simulated again, confirmed and missed."""
    c = plan.ranked["confirmed"] if len(plan.ranked) else pd.Series([], dtype=object)
    tried = int(sum(isinstance(v, bool) for v in c))
    ok = int(sum(v is True for v in c))
    return {"tried": tried, "confirmed": ok, "missed": tried - ok,
            "passed": int(len(plan.ranked))}


def confirmation_sentence(plan) -> str:
    """What "confirmed" means, with the counts."""
    c, spec = confirmation(plan), plan.spec
    fam = spec.family
    text = (f"Every stable configuration was screened {fam.screened_words(spec)}. Before "
            f"being shown as meeting the SLA, the cheapest that passed were "
            f"{fam.confirmed_words(spec)}, in order, each percentile the mean of "
            f"{CONFIRM_RUNS} independent runs ± its 95 % interval: {c['tried']} tried, "
            f"{c['confirmed']} confirmed")
    if c["missed"]:
        text += (f", {c['missed']} missed the target on the longer runs (✗: close to the "
                 "target, the screening was lucky)")
    return text + "."


def _confirmed(spec, row, ci: bool = True) -> list[tuple[str, str]]:
    """(SLA row's name, its confirmed value [± CI]) for each SLA row of ``row``."""
    u, f = tables.latency_unit(spec)
    out = []
    for _, name, (est, half) in tables.sla_rows(spec):
        text = f"{format_number(row[est] * f, 3)} {u}"
        if ci and math.isfinite(row[half]):
            text += f" ± {format_number(row[half] * f, 2)} {u}"
        out.append((name, text if math.isfinite(row[est]) else "unstable"))
    return out


def fewer_texts(plan) -> list[str]:
    """The "one server fewer" check in words: "With 1 replica of X (settings): p95 TTFT
    2.3 s, p95 TPOT 41 ms — misses (p95 TTFT over its 1 s target)."."""
    spec, fewer = plan.spec, plan.fewer
    if fewer is None or not len(fewer):
        return []
    fam, out = spec.family, []
    rows = tables.sla_rows(spec)
    for row in fewer.to_dict("records"):
        values = [(name, duration_text(row[est])) for _, name, (est, _) in rows]
        over = [f"{name} over its {duration_text(t)} target"
                for (_, name, (est, _)), (_, _, t) in zip(rows, spec.sla) if not row[est] <= t]
        verdict = ("meets the SLA" if row.get("confirmed") is True
                   else "misses" + (f" ({', '.join(over)})" if over else ""))
        if not any(math.isfinite(row[est]) for _, _, (est, _) in rows):
            out.append(f"With {fam.fleet_text(row)}: more load than it can carry — misses.")
            continue
        out.append(f"With {fam.fleet_text(row)}: "
                   + ", ".join(f"{n} {v}" for n, v in values) + f" — {verdict}.")
    return out


def best_text(plan) -> dict:
    """The best configuration's numbers as plain text (empty if none)."""
    b, spec = plan.best, plan.spec
    if b is None:
        return {}
    fam = spec.family
    u, f = tables.latency_unit(spec)
    means = [f"{word} {format_number(b[c] * f, 3)} {u}" for c, word in tables.MEANS.items()
             if c in b and math.isfinite(b[c])]
    return {"configuration": f"{fam.fleet_text(b)} ({fam.settings_text(spec, b)})",
            "servers": tables.servers_text(spec, b, short=True),
            "servers_label": ("Replicas" if "replicas" in {k.name for k in fam.knobs}
                              else "Servers"),
            "cost": f"{money_text(b['cost_usd_per_hour'])}/h",
            "per_million": money_text(b["cost_usd_per_million"]),
            "confirmed": _confirmed(spec, b),
            "utilization": f"{100 * b['utilization']:.1f} %",
            "energy": f"{format_number(b['energy_j_per_request'], 3)} J",
            "mean": ", ".join(means) + (f" ({b['method']})" if "method" in b else ""),
            "cut": (f"{100 * b['truncated_fraction']:.2f} %" if "truncated_fraction" in b
                    else "")}


def show_best(plan) -> None:
    """The answer's numbers as metrics (cost, $ per million, each confirmed percentile,
    the servers, energy)."""
    t, spec = best_text(plan), plan.spec
    cols = st.columns(4 + len(t["confirmed"]))
    cols[0].metric("Cost", t["cost"], help="Servers × the price of one, $ per hour.")
    cols[1].metric("Per million requests", t["per_million"],
                   help="Cost per hour / (requests per s × 3600) × 10⁶.")
    one = len(spec.family.metrics) == 1
    for col, (name, value) in zip(cols[2:], t["confirmed"]):
        label = f"{name} latency, confirmed" if one else f"{name}, confirmed"
        head, _, ci = value.partition(" ± ")
        col.metric(label, head, help=(f"± {ci} (95 % interval of {CONFIRM_RUNS} independent "
                                      f"simulations); {t['mean']}." if ci else t["mean"]))
    k = 2 + len(t["confirmed"])
    batch = t["servers_label"] == "Replicas" and "tokens" not in uses(spec.family)
    servers = (f"{int(plan.best['replicas'])} × {str(plan.best['hardware']).split(' · ')[0]}"
               if batch else t["servers"])
    cols[k].metric(t["servers_label"], servers, help=t["configuration"])
    cols[k + 1].metric("Energy per request", t["energy"],
                       help=f"Each server busy {t['utilization']} of the time.")


def sla_text(spec) -> str:
    """The SLA in words, with the energy cap and (token limits) the cut share."""
    if "sla_rows" in uses(spec.family):
        text = rows_text(spec.sla)
    else:
        text = f"{spec.percentile:g} % within {duration_text(spec.target_ms)}"
    if math.isfinite(spec.energy_cap_j):
        text += f", at most {spec.energy_cap_j:,.4g} J per request"
    if "truncation" in uses(spec.family) and spec.truncation_cap < 1:
        text += f", at most {100 * spec.truncation_cap:.3g} % of replies cut"
    return text


def rows(plan, arrivals_label: str, best: bool = True) -> list[tuple[str, str]]:
    """The results table's rows: the answer's numbers (when there is one and ``best``),
    the traffic, the SLA, how much was priced and confirmed, and the "one server fewer"
    check."""
    s, t, c = plan.spec, best_text(plan), confirmation(plan)
    out = []
    if t and best:
        out += [("Cheapest configuration", t["configuration"]), ("Cost", t["cost"]),
                ("Cost per million requests", t["per_million"])]
        out += [(f"{name} latency, confirmed by simulation" if len(s.family.metrics) == 1
                 else f"{name}, confirmed by simulation", value)
                for name, value in t["confirmed"]]
        out += [("Mean latency" if "mean_latency_ms" in plan.best else "Means",
                 t["mean"].removeprefix("mean latency ")),
                ("Each server busy", t["utilization"]), ("Energy per request", t["energy"])]
        if "truncation" in uses(s.family):
            out.append(("Replies the token limit cuts", t["cut"]))
    out += [("Traffic", f"{s.rate_per_s:,.6g} {s.family.load_unit}"),
            ("Arrivals", arrivals_label), ("SLA", sla_text(s)),
            ("Configurations priced", f"{len(plan.table):,}"),
            ("Meeting the SLA (screening)", f"{c['passed']:,}"),
            ("Confirmed by simulation", f"{c['confirmed']} of {c['tried']} tried")]
    if best:
        out += [("One server fewer", text) for text in fewer_texts(plan)]
    return out


def _hardware_text(h) -> str:
    if hasattr(h, "step_cost"):
        from .hardware import step_text
        kv = "unbounded" if h.kv_cache_tokens is None else f"{h.kv_cache_tokens:,} tokens"
        law = f"{h.gpus} GPUs, KV cache {kv}, step {step_text(h.step_cost)}"
    elif h.workload == "llm":
        law = f"k = {', '.join(f'{k:.4g}' for k in h.k_s)} s"
    else:
        law = f"α {h.alpha_ms:.4g} ms, τ0 {h.tau0_ms:.4g} ms, batches up to {h.max_batch}"
    return (f"{h.name}: {money_text(h.price_usd_per_hour)}/h, {h.busy_power_w:,.4g} W busy, "
            f"{h.idle_power_w:,.4g} W idle, {law}")


def _values_text(knob, values) -> str:
    values = tuple(values)
    if knob.name in ("replicas", "prefill_instances", "decode_instances") and len(values) > 2 \
            and len(values) == max(values) - min(values) + 1:
        return f"{min(values)} to {max(values)}"
    if knob.name == "token_limit":
        return ", ".join("none" if k == 0 else f"{k:,} tokens" for k in values)
    unit = "" if knob.unit in ("requests", "servers", "instances") else f" {knob.unit}"
    return ", ".join(f"{v:g}{unit}" if isinstance(v, float) else f"{v}{unit}" for v in values)


def parameters(spec, arrivals_label: str, serving=None) -> dict:
    """The report's inputs: plain text with units."""
    fam = spec.family
    use = uses(fam)
    out = {"Workload": WORKLOADS[spec.workload],
           "Traffic": f"{spec.rate_per_s:,.6g} {fam.load_unit} in total",
           "Arrivals": arrivals_label, "SLA": sla_text(spec)}
    if serving is not None:
        out["Requests"] = serving.label
    elif "reply_law" in use:
        from .fields import OUTPUT_LAWS
        law = OUTPUT_LAWS.get(spec.token_law)
        out["Reply lengths"] = law.name if law is not None else spec.token_law
    if "dispatch" in use:
        out["Dispatch"] = spec.dispatch.replace("_", " ")
    if "link" in use:
        out["KV link"] = f"{spec.link_gb_per_s:g} GB/s, {spec.link_latency_ms:g} ms per copy"
    out["Candidate hardware"] = "; ".join(_hardware_text(h) for h in spec.hardware)
    for knob in fam.knobs:
        out[f"{knob.label} searched"] = _values_text(knob, getattr(spec, knob.name))
    out["Configurations"] = f"{spec.n_configurations:,}"
    out["Confirmed by simulation"] = f"the {spec.confirm} cheapest passing the screening"
    out["Seed"] = str(spec.seed)
    return out
