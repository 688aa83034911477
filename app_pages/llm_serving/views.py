"""The views of the LLM serving page and their figures, memoised on the inputs.

``latency_figures(scenario, slo, baseline)`` gives the TTFT and TPOT charts over load;
``timeline(scenario, rate)`` one run's timeline at the what-if load.  Scenarios are
frozen, so they are the memo key; figures are shared: never modify them.
"""
from __future__ import annotations

from ui.memo import memo

from . import data
from . import figures as figs

LATENCY, TIMELINE, MEASURED, FORMULAS_VIEW = ("Latency", "Timeline", "Model vs measurement",
                                              "Formulas")
VIEWS = (LATENCY, TIMELINE, MEASURED, FORMULAS_VIEW)
CHART_VIEWS = (LATENCY, TIMELINE)
TITLES = {"ttft_vs_load": "Time to first token against load",
          "tpot_vs_load": "Time per output token against load",
          "timeline": "One run at the current load, step by step"}

FORMULAS = [
    ("t_{\\text{step}} = t_0 + a\\,P + a_2\\,Q + d\\,D + c\\,K",
     "time of one scheduler step (ms): P prompt tokens computed, Q = Σ chunk × (prompt tokens "
     "up to its end) (l² for a whole prompt: attention), D decoding requests, K their "
     "context tokens; a prompt-only step starts from its own base instead of t₀"),
    ("\\text{TTFT} = t_{\\text{first token}} - t_{\\text{send}},\\qquad "
     "\\text{TPOT} = \\frac{\\text{e2e} - \\text{TTFT}}{o - 1}",
     "vLLM's definitions: the step that completes a prompt emits the first token; TPOT for "
     "replies of 2 tokens or more"),
    ("\\bar s(R) = t_0 + \\frac{R}{E[o]}\\big(a E[l] + a_2 E[l^2] + c\\,E[\\textstyle\\sum_{g<o}"
     "(l+g)]\\big) + d\\,R\\,\\frac{E[o]-1}{E[o]}",
     "mean step with R requests running (each holds its seat for o steps)"),
    ("\\lambda_{\\max} = \\frac{R}{E[o]\\,\\bar s(R)},\\quad R = \\min\\Big(S,\\ "
     "\\frac{B\\,E[o]}{E[l]+E[o]-1},\\ \\frac{M\\,b}{h + b/2}\\Big)",
     "capacity (×1000 for requests/s with s̄ in ms): seats limited by max_num_seqs S, the "
     "token budget B or the KV cache (M blocks of b tokens, h tokens a seat holds on "
     "average); exact when max_num_seqs binds and prompts fit one step"),
    ("\\mu_k = \\frac{k}{E[o]\\,\\bar s(k)}",
     "the approximation: a birth-death chain of the requests in the server; with k running "
     "(k ≤ S) requests complete at rate μ_k, beyond S they wait for a seat (W); Poisson "
     "arrivals; means only"),
    ("s' = A + W(s),\\quad E[s] = \\frac{A}{1-\\rho},\\quad "
     "\\text{TTFT} \\approx t_{\\text{front}} + W_{\\text{seat}}\\frac{1+\\text{SCV}_o}{2} + "
     "\\frac{E[s^2]}{2E[s]} + A + \\rho\\frac{E[s^2]}{E[s]} + E[w]",
     "the approximation's TTFT: prompts arriving during a step are computed in the next "
     "(A: the step's decoding part, W(s): the prompt work w = a·l + a₂·l² that arrived "
     "during s, ρ = λE[w]); a request waits the rest of the step in progress, then its own "
     "step; TPOT ≈ the step a decoding request sees"),
    ("\\text{KV tokens} = \\Big\\lfloor \\frac{\\text{TP}\\cdot\\text{memory}\\cdot u - "
     "\\text{weights} - \\text{activations}}{2 \\cdot \\text{layers} \\cdot "
     "\\text{KV heads} \\cdot \\text{head dim} \\cdot \\text{bytes}} \\Big\\rfloor",
     "the KV cache a GPU holds, as vLLM sizes it (engine.llm_serving.kv_capacity_tokens; u: "
     "gpu_memory_utilization); Qwen2.5-7B in BF16: 57,344 bytes a token"),
    ("\\text{SLO met at }\\lambda \\iff \\frac{\\#\\{\\text{TTFT} \\le x,\\ \\text{TPOT} \\le y\\}}"
     "{n} \\ge p",
     "the largest load meeting the target: bisection over simulated loads (DistServe's "
     "SLO attainment)"),
]
NOTES = [
    "Chunked prefill (vLLM V1, SGLang): each step first runs the running requests in "
    "admission order (a decode costs one token of the budget B, an unfinished prompt "
    "continues), then admits waiting requests first come first served while budget, seats "
    "(S = max_num_seqs) and free KV blocks allow; the last may get a partial chunk.",
    "Without chunked prefill (vLLM's earlier scheduler): a step holds either whole prompts "
    "(up to B tokens) or one decode of every running request; a prompt longer than B is "
    "refused.",
    "KV cache: a request holds ⌈tokens computed / block_size⌉ blocks. When a running request "
    "needs a block and none is free, the most recently admitted request is preempted: it "
    "gives back its blocks and is recomputed later from the head of the queue.",
    "Prefix caching: full blocks of finished and preempted requests stay cached (least "
    "recently used evicted first); a prompt starting with cached tokens skips them.",
    "A request whose prompt and reply need more blocks than the cache holds can never run "
    "(vLLM refuses it); the page says so.",
    "The approximation and the capacity assume Poisson arrivals and leave the prefix cache "
    "out; the simulation takes any arrival process.",
]
NOTATION = """| symbol | meaning | input |
|---|---|---|
| l, o | prompt and reply tokens of a request | Prompt tokens, Output-token law |
| P, Q | prompt tokens in a step; Σ chunk × its end | |
| D, K | decoding requests in a step; their context tokens | |
| t₀, a, a₂, d, c | the step cost's terms (ms) | Step cost |
| S | max_num_seqs: requests running at once | Scheduler |
| B | max_num_batched_tokens: token budget of a step | Scheduler |
| M, b | KV cache blocks, block_size tokens each | Scheduler |
| λ | load (requests/s) | Load |
| x, y, p | TTFT limit, TPOT limit (ms), share of requests (%) | Latency target |
"""
def _approx_label(s) -> str:
    return ("approximation (mean, no simulation)" if s.poisson
            else "approximation (mean, no simulation, Poisson arrivals)")


def _sim_suffix(s) -> str:
    return "" if s.poisson else f", {s.arrivals.label}"


@memo(64)
def latency_figures(s, slo, baseline=None) -> tuple:
    """(name, figure) of TTFT and TPOT against load, with the target's limits and the
    largest load meeting it; ``baseline``: the pinned Scenario, whose simulated p99 is
    drawn dashed."""
    cap = data.capacity(s).rate_per_s
    found = data.slo_rate(s, slo)
    top = data.axis_top(cap)
    sw, ap = data.sweep(s), data.approximation(s)
    base = None if baseline is None else data.sweep(baseline)
    out = []
    for name, metric, approx, words, limit in (
            ("ttft_vs_load", "ttft_ms", ap.ttft_ms, "Time to first token (TTFT)", slo.ttft_ms),
            ("tpot_vs_load", "tpot_ms", ap.tpot_ms, "Time per output token (TPOT)",
             slo.tpot_ms)):
        unit = metric.split("_")[0].upper()
        out.append((name, figs.latency_load_figure(
            f"{words} against load", f"{unit} (ms)",
            sw.rate, {q: sw.stat(metric, q) for q in data.PERCENTILES},
            sw.stat(metric, "mean"), sw.stat(metric, "ci95"), ap.rate_per_s, approx,
            capacity=cap, x_max=top, limit=limit,
            limit_label=f"target: {unit} ≤ {limit:,.4g} ms at p{slo.pct}",
            approx_label=_approx_label(s), sim_suffix=_sim_suffix(s),
            baseline=None if base is None else (base.rate, base.stat(metric, 99)),
            meets_up_to=found.rate_per_s)))
    return tuple(out)


@memo(16)
def timeline(s, rate: float) -> tuple:
    """(name, figure) of the run at ``rate`` step by step."""
    run = data.at_load(s, rate)
    tl = run.timeline
    title = "One run (no steps kept)"
    if tl is not None and tl.time_s.size:
        which = "all" if tl.time_s.size >= run.steps else "the first"
        title = (f"One run at {rate:.3g} requests/s: {which} {tl.time_s.size:,} steps "
                 f"({tl.time_s[-1]:.3g} s)")
    if tl is None or not tl.time_s.size:
        return (("timeline", figs.timeline_figure([], [], [], [], [], None, title=title)),)
    return (("timeline", figs.timeline_figure(tl.time_s, tl.running, tl.waiting, tl.kv_blocks,
                                              tl.preemptions, tl.kv_blocks_total,
                                              title=title)),)
