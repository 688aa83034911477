"""The capacity-planner page's views, their figures (memoised on the spec, the arrival
choice and the workload: the plan's own key), the formulas and the assumptions."""
from __future__ import annotations

from ui.memo import memo

from . import data, results, tables
from . import figures as figs
from .fields import VIEWS, uses

LATENCY, ENERGY, ALL, DISAGGREGATION, HOW = VIEWS
CHARTS = {LATENCY: "cost_vs_latency", ENERGY: "cost_vs_energy"}
TITLES = {"cost_vs_latency": "Cost against the SLA's latency percentile",
          "cost_vs_energy": "Cost against energy per request",
          "ranked": "The cheapest configurations meeting the SLA"}
CAPTIONS = {
    "cost_vs_latency": "Every configuration that keeps up with the load, at its screened "
                       "percentile; the line joins those no cheaper configuration beats; "
                       "the star is the answer at its confirmed percentile (longer runs, "
                       "± 95 % interval).",
    "cost_vs_energy": "Every configuration that keeps up with the load; the line joins those "
                      "no cheaper configuration beats on energy per request."}

COMMON_FORMULAS = [
    ("\\hat q_p = \\frac{1}{4}\\sum_{i=1}^{4} q_p^{(i)} \\pm t_{0.975,3}\\frac{s}{\\sqrt{4}}",
     "the SLA's percentiles, confirmed: four independent longer simulations of the "
     "cheapest configurations that pass the screening"),
    ("\\text{cost} = \\sum \\text{servers} \\cdot \\text{price},\\quad \\text{\\$ per million}"
     " = \\frac{\\text{cost}}{3600\\,\\lambda}\\,10^6", "cost per hour and per million requests"),
    ("E_{\\text{req}} = \\frac{P_{\\text{busy}}\\,u + P_{\\text{idle}}\\,(1-u)}{\\lambda_r}",
     "energy per request, J (u: the share of time a server is busy; P in W)"),
]
BATCH_FORMULAS = [
    ("\\lambda_r = \\lambda / R",
     "random dispatch: each of R replicas sees the total stream λ thinned to 1/R of it "
     "(exact for Poisson and MMPP-2 arrivals)"),
    ("\\tau^{[b]} = \\alpha b + \\tau_0,\\quad \\lambda_r < \\frac{b_{max}}{\\alpha b_{max} + "
     "\\tau_0}", "GPU workload: batch time (Inoue 2021, eq 25) and the load one replica "
                 "carries"),
    ("H(b, l) = k_1 b + k_2 + k_3 b l + k_4 l",
     "LLM batch workload: batch time of b requests whose longest reply has l tokens, cut "
     "at the token limit (Yang et al., eq 18)"),
    ("E[W] = \\frac{E[B^2]-E[B]}{2\\lambda_r E[B]} + E[\\hat H]",
     "exact mean latency for Poisson arrivals: the batching chain (GPU, queue delay 0; "
     "Inoue 2021, eq 15) or the dynamic-batching chain (LLM); otherwise simulated"),
    ("P(N > n_{\\max})", "LLM batch workload: the share of replies the token limit n_max cuts"),
]
SERVING_FORMULAS = [
    ("t_{\\text{step}} = t_0 + a\\,P + a_2\\,Q + d\\,D + c\\,K",
     "one scheduler step: P prompt tokens in chunks, D running requests decoding, K their "
     "context tokens (the preset's fitted step cost, docs/models/llm_serving.md)"),
    ("\\lambda_r = \\lambda / R \\;(\\text{colocated}),\\quad \\lambda / P,\\ \\lambda / D "
     "\\;(\\text{prefill, decode})", "the screening prices each server at its even share "
                                      "of the traffic with the serving approximation"),
    ("\\text{TPOT} \\approx \\text{TPOT}_D + \\frac{\\text{copy} + \\text{wait}_D}{E[o]-1},"
     "\\quad \\text{copy} = \\frac{l\\,\\text{bytes per token}}{\\text{link}} + "
     "\\text{latency}", "disaggregated: the KV copy and the decode side's wait spread over "
                        "the reply"),
]
BATCH_NOTES = [
    "Random dispatch: each request goes to a replica picked at random, whatever the queues. "
    "A balancer that joins the shortest queue does better, so the plan is conservative: the "
    "fleet it names meets the SLA with a smarter balancer too.",
    "Thinning is exact for Poisson and MMPP-2 arrivals; a bursty renewal process or a "
    "replayed trace is thinned by sampling (each arrival kept with probability 1/R).",
    "The mean latency is exact for Poisson arrivals with a queue delay of 0 (GPU) and for the "
    "LLM dynamic-batching chain; otherwise it is simulated (the tables' column 'mean from').",
    "The percentile has no closed form here: it is simulated. A short screening run prices "
    "every stable configuration; the cheapest that pass are confirmed by longer runs before "
    "the page calls them meeting the SLA. A configuration close to the target can pass the "
    "screening and miss on the longer runs (marked ✗).",
    "GPU workload: a b_max above a profile's largest measured batch is not searched (the "
    "fitted line says nothing beyond it, and the GPU's memory may not hold it).",
]
SERVING_NOTES = [
    "The screening is the serving approximation at each server's even share of the traffic "
    "(as if Poisson): fast, and only a screen. The cheapest that pass are confirmed by "
    "simulating the whole fleet (colocated: every replica, the dispatch policy chosen; "
    "disaggregated: both sides and the KV link) with the arrivals chosen.",
    "The confirmed answer is simulated again with one server fewer of each kind: the "
    "results say whether that misses (it should, or it would be the answer).",
    "A candidate whose KV cache cannot hold the longest request (prompt and reply) is "
    "rejected as such; the presets' KV capacity is computed from the model's shape and "
    "the GPUs' memory (an upper bound).",
    "TPOT below one decode step is out of reach at any load: the reasons say so.",
]
COMMON_NOTES = [
    "Energy: the presets' idle power is 0 W (unknown), so energy per request is a lower "
    "bound until you type it in; busy power is the profile's largest measured board power, "
    "else the datasheet maximum.",
    "Prices: on-demand list prices of a cloud instance, the GPUs' share of it (sources in "
    "the hardware table's 'Where the numbers come from').",
]


def how_it_works(spec) -> tuple[list, list]:
    """(formulas, notes) of the family of ``spec``."""
    serving = "tokens" in uses(spec.family)
    formulas = (SERVING_FORMULAS if serving else BATCH_FORMULAS) + COMMON_FORMULAS
    notes = [f"How a configuration is priced: {spec.family.pricing}."]
    notes += (SERVING_NOTES if serving else BATCH_NOTES) + COMMON_NOTES
    return formulas, notes


def views_of(spec) -> tuple:
    """The views offered for ``spec``'s family ("Where disaggregation pays": the serving
    families)."""
    return tuple(v for v in VIEWS if v != DISAGGREGATION or "tokens" in uses(spec.family))


def latency_charts(spec) -> list[tuple[str, str, str]]:
    """(chart name, SLA column, SLA row's short name) per SLA row: "cost_vs_latency"
    for the first, "cost_vs_<column>" for the others."""
    out = []
    for i, (col, name, _) in enumerate(tables.sla_rows(spec)):
        out.append(("cost_vs_latency" if i == 0 else f"cost_vs_{col}", col, name))
    return out


def _series(rows, spec, column: str, factor: float) -> tuple[list, list, list]:
    fam = spec.family
    records = rows.to_dict("records")
    return (rows["cost_usd_per_hour"].tolist(), (rows[column] * factor).tolist(),
            [f"{fam.fleet_text(r)}<br>{fam.settings_text(spec, r)}" for r in records])


def _points(plan, column: str, factor: float) -> dict:
    t = plan.table
    stable = t[t["stable"].astype(bool)] if len(t) else t
    out = {}
    for name, rows in stable.groupby("hardware", sort=False) if len(stable) else ():
        out[name] = _series(rows, plan.spec, column, factor)
    return out


@memo(8)
def figure(name: str, spec, arrivals, workload=None):
    """The chart ``name`` ("cost_vs_latency", "cost_vs_<SLA column>", "cost_vs_energy")
    of the plan of (``spec``, ``arrivals``, ``workload``)."""
    plan = data.plan(spec, arrivals, workload)
    b = plan.best
    text = None if b is None else results.best_text(plan)["configuration"]
    if name == "cost_vs_energy":
        best = None if b is None else (b["cost_usd_per_hour"], b["energy_j_per_request"], text)
        front = plan.fronts["energy_j_per_request"]
        return figs.cost_energy(_points(plan, "energy_j_per_request", 1.0),
                                _series(front, spec, "energy_j_per_request", 1.0),
                                cap=spec.energy_cap_j, best=best)
    unit, f = tables.latency_unit(spec)
    charts = {n: (c, label) for n, c, label in latency_charts(spec)}
    col, label = charts[name]
    est, half = spec.family.confirm_columns(spec)[col]
    target = next(t for (c, _, _), (_, _, t) in zip(tables.sla_rows(spec), spec.sla)
                  if c == col)
    best = None if b is None else (b["cost_usd_per_hour"], b[est] * f, text, b[half] * f)
    one = len(spec.family.metrics) == 1
    return figs.cost_latency(_points(plan, col, f), _series(plan.fronts[col], spec, col, f),
                             target=target * f, percentile=spec.sla[0][1], unit=unit,
                             best=best, name=None if one else label)


def ranked_figure(spec, arrivals, workload=None):
    """The ranked table as a figure for the report (top ``tables.TOP``)."""
    table = tables.ranked_table(data.plan(spec, arrivals, workload)).reset_index()
    cells = [[("" if v != v else f"{v:,.4g}" if isinstance(v, float) else str(v))
              for v in table[c]] for c in table.columns]
    return figs.ranked_figure(list(table.columns), cells, TITLES["ranked"])


def chart_names(spec) -> list[str]:
    """Every chart of the plan: one per SLA row, then energy."""
    return [n for n, _, _ in latency_charts(spec)] + ["cost_vs_energy"]


def chart_title(spec, name: str) -> str:
    if name in TITLES:
        return TITLES[name] if len(spec.sla) == 1 or name != "cost_vs_latency" else \
            f"Cost against {latency_charts(spec)[0][2]}"
    label = next(lab for n, _, lab in latency_charts(spec) if n == name)
    return f"Cost against {label}"


def report_sections(spec, arrivals, workload=None) -> list:
    """(title, figure, caption) of every chart, then the ranked table."""
    plan = data.plan(spec, arrivals, workload)
    out = [(chart_title(spec, n), figure(n, spec, arrivals, workload),
            CAPTIONS["cost_vs_energy" if n == "cost_vs_energy" else "cost_vs_latency"])
           for n in chart_names(spec)]
    if len(plan.ranked):
        out.append((TITLES["ranked"], ranked_figure(spec, arrivals, workload),
                    results.confirmation_sentence(plan)))
    return out
