"""The capacity-planner page's views, their figures (memoised on the spec and the
arrival choice, the plan's own key), the formulas and the assumptions."""
from __future__ import annotations

from ui.memo import memo

from . import data
from . import figures as figs
from .inputs import VIEWS

LATENCY, ENERGY, ALL, HOW = VIEWS
CHARTS = {LATENCY: "cost_vs_latency", ENERGY: "cost_vs_energy"}
TITLES = {"cost_vs_latency": "Cost against the SLA's latency percentile",
          "cost_vs_energy": "Cost against energy per request",
          "ranked": "The cheapest configurations meeting the SLA"}
CAPTIONS = {
    "cost_vs_latency": "Every configuration that keeps up with the load, at its screened "
                       "percentile (one simulation each); the line joins those no cheaper "
                       "configuration beats; the star is the answer at its confirmed "
                       "percentile (longer runs, ± 95 % interval).",
    "cost_vs_energy": "Every configuration that keeps up with the load; the line joins those "
                      "no cheaper configuration beats on energy per request."}

FORMULAS = [
    ("\\lambda_r = \\lambda / R",
     "random dispatch: each of R replicas sees the total stream λ thinned to 1/R of it "
     "(exact for Poisson and MMPP-2 arrivals)"),
    ("\\tau^{[b]} = \\alpha b + \\tau_0,\\quad \\lambda_r < \\frac{b_{max}}{\\alpha b_{max} + "
     "\\tau_0}", "GPU workload: batch time (Inoue 2021, eq 25) and the load one replica "
                 "carries"),
    ("H(b, l) = k_1 b + k_2 + k_3 b l + k_4 l",
     "LLM workload: batch time of b requests whose longest reply has l tokens, cut at the "
     "token limit (Yang et al., eq 18)"),
    ("E[W] = \\frac{E[B^2]-E[B]}{2\\lambda_r E[B]} + E[\\hat H]",
     "exact mean latency for Poisson arrivals: the batching chain (GPU, queue delay 0; "
     "Inoue 2021, eq 15) or the dynamic-batching chain (LLM); otherwise simulated"),
    ("\\hat q_p = \\frac{1}{4}\\sum_{i=1}^{4} q_p^{(i)} \\pm t_{0.975,3}\\frac{s}{\\sqrt{4}}",
     "the SLA's percentile, simulated: one screening run per configuration, then four "
     "independent longer runs for the cheapest (confirmation)"),
    ("\\text{cost} = R \\cdot \\text{price},\\quad \\text{\\$ per million} = "
     "\\frac{\\text{cost}}{3600\\,\\lambda}\\,10^6", "cost per hour and per million requests"),
    ("E_{\\text{req}} = \\frac{P_{\\text{busy}}\\,u + P_{\\text{idle}}\\,(1-u)}{\\lambda_r}",
     "energy per request, J (u: the share of time a replica runs a batch; P in W)"),
    ("P(N > n_{\\max})", "LLM workload: the share of replies the token limit n_max cuts"),
]
NOTES = [
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
    "Energy: the presets' idle power is 0 W (unknown), so energy per request is a lower "
    "bound until you type it in; busy power is the profile's largest measured board power, "
    "else the datasheet maximum.",
    "Prices: on-demand list prices of a cloud instance, the GPUs' share of it (sources in "
    "the hardware table's 'Where the numbers come from').",
]


def _text(row, spec) -> str:
    extra = (f" · delay {row.queue_delay_ms:g} ms" if spec.workload == "gpu" and
             row.queue_delay_ms > 0 else "")
    if spec.workload == "llm":
        extra = f" · limit {int(row.token_limit):,}" if row.token_limit > 0 else " · no limit"
    return (f"{int(row.replicas)} × {row.hardware.split(' · ')[0]} · b_max "
            f"{int(row.b_max)}{extra}")


def _series(rows, spec, column: str, factor: float) -> tuple[list, list, list]:
    return (rows["cost_usd_per_hour"].tolist(), (rows[column] * factor).tolist(),
            [_text(r, spec) for r in rows.itertuples()])


def _points(plan, column: str, factor: float) -> dict:
    t = plan.table
    stable = t[t["stable"]] if len(t) else t
    out = {}
    for h in plan.spec.hardware:
        rows = stable[stable["hardware"] == h.name] if len(stable) else stable
        if len(rows):
            out[h.name] = _series(rows, plan.spec, column, factor)
    return out


@memo(8)
def figure(name: str, spec, arrivals):
    """The chart ``name`` ("cost_vs_latency", "cost_vs_energy") of the plan of
    (``spec``, ``arrivals``)."""
    plan = data.plan(spec, arrivals)
    b = plan.best
    if name == "cost_vs_latency":
        unit, f = data.latency_unit(spec)
        best = None if b is None else (b["cost_usd_per_hour"], b["confirmed_percentile_ms"] * f,
                                       data.best_text(plan)["configuration"],
                                       b["confirmed_ci_ms"] * f)
        return figs.cost_latency(_points(plan, "latency_percentile_ms", f),
                                 _series(plan.pareto_latency, spec, "latency_percentile_ms", f),
                                 target=spec.target_ms * f, percentile=spec.percentile,
                                 unit=unit, best=best)
    best = None if b is None else (b["cost_usd_per_hour"], b["energy_j_per_request"],
                                   data.best_text(plan)["configuration"])
    return figs.cost_energy(_points(plan, "energy_j_per_request", 1.0),
                            _series(plan.pareto_energy, spec, "energy_j_per_request", 1.0),
                            cap=spec.energy_cap_j, best=best)


def ranked_figure(spec, arrivals):
    """The ranked table as a figure for the report (top ``data.TOP``)."""
    table = data.ranked_table(data.plan(spec, arrivals)).reset_index()
    cells = [[("" if v != v else f"{v:,.4g}" if isinstance(v, float) else str(v))
              for v in table[c]] for c in table.columns]
    return figs.ranked_figure(list(table.columns), cells, TITLES["ranked"])


def report_sections(spec, arrivals) -> list:
    """(title, figure, caption) of every chart, then the ranked table."""
    out = [(TITLES[n], figure(n, spec, arrivals), CAPTIONS[n]) for n in CHARTS.values()]
    plan = data.plan(spec, arrivals)
    if len(plan.ranked):
        out.append((TITLES["ranked"], ranked_figure(spec, arrivals),
                    data.confirmation_sentence(plan)))
    return out
