"""The views of the LLM batching page and their figures, memoised on the inputs.

``figures(view, scenario, lam, baseline)`` returns the view's (name, figure) pairs;
the sidebar's ``Scenario`` (and the pinned one) are frozen, so they are the key.  The
exact curves assume Poisson arrivals (their legend says so beside another process);
the simulated points run under the scenario's arrival choice.
"""
from __future__ import annotations

import numpy as np

from engine import llm_batching as lb
from ui.export import operating_marker
from ui.memo import memo

from . import data
from . import figures as figs

LATENCY, BATCH_SIZE, BEST_STRATEGY, PAPER, FORMULAS_VIEW = (
    "Latency", "Batch size", "Best strategy", "Paper vs model", "Formulas")
VIEWS = (LATENCY, BATCH_SIZE, BEST_STRATEGY, PAPER, FORMULAS_VIEW)
CHART_VIEWS = (LATENCY, BATCH_SIZE, BEST_STRATEGY, PAPER)
TITLES = {"mean_latency": "Mean latency against load", "p99_latency": "p99 latency against load",
          "expected_max_tokens": "Longest output in a batch against batch size",
          "throughput_vs_b": "Throughput against batch size",
          "best_strategy": "Fastest strategy at each load",
          "paper_vs_model": "The paper's formulas as printed against the model"}

FORMULAS = [
    ("H(b, l) = k_1 b + k_2 + k_3 b\\,l + k_4 l", "batch time, longest output l (eq 18), s"),
    ("E[L_b] = \\int_0^\\infty b\\,x f(x) F(x)^{b-1} dx,\\quad \\mu[b] = \\frac{b}{H(b, E[L_b])}",
     "longest of b outputs and throughput (eqs 23-24)"),
    ("E[W_q] = \\frac{(E[Q_d]-a)H + aH/2 + (b-a)S/\\lambda}{b},\\; a = \\lambda H,\\; "
     "S = \\sum_k \\frac{1}{1-z_k}", "fixed batching, exact mean wait (M/D^b/1; z_k roots of "
                                     "z^b = e^{a(z-1)})"),
    ("\\frac{1}{\\lambda}\\Big[\\frac{b-(b-a)^2}{2(b-a)} + \\sum_k \\frac{1}{1-Z_k}\\Big]",
     "eq 25 as printed: equals E[Q_d]/λ, not the wait"),
    ("\\phi_0 = \\frac{\\lambda(\\alpha+\\beta)^2}{2(1-\\rho^2)},\\quad "
     "\\phi_1 = \\frac{\\lambda\\alpha\\beta+\\lambda\\alpha^2+\\beta}{2(1-\\rho^2)}",
     "eq 16 as printed: bounds the wait before the batch starts, not wait + processing"),
    ("t_{\\text{prompt}}(j) = k_1 j + k_2,\\quad t_{\\text{decode}}(R) = k_3 R + k_4",
     "continuous batching (iteration-level), run on the LLM serving simulator (vLLM's "
     "scheduler without chunked prefill: whole prompts, no token budget): a prompt step of "
     "j joining requests emits their first tokens, a decode step of R running requests one "
     "token each; a reply of n tokens takes 1 prompt step and n − 1 decode steps"),
    ("\\lambda_{\\max}^{\\text{elastic}} = \\frac{1}{k_1 + k_3 E[N]},\\quad "
     "\\lambda_{\\max}^{\\text{cont.}} \\approx \\frac{1}{k_1+k_2+(k_3+k_4/m)E[N]}",
     "stability limits of elastic (uncapped) and continuous batching "
     "(m sequences fit the KV cache)"),
]
ERRATA = [
    "Eq 16 (φ0, φ1) bounds the wait before the batch starts, not wait + processing as Inoue's "
    "eqs 41-42 do; the paper calls both E[W].",
    "Eq 25 is not the mean wait: with exact roots it equals E[Q_d]/λ (requests left waiting "
    "after a departure over λ); it ignores the time to fill the batch. At b = 1 it is the M/D/1 "
    "sojourn. Its 20-term series roots are off by ~4e-3 near λH/b = 1.",
    "The M/D^b/1 model uses the deterministic H(b, E[L_b]); with the realised longest output, "
    "fixed batching waits much longer for heavy-tailed laws (see the simulation points).",
    "Eq 26 prints k3·b·E[N] for k3·(n_1 + … + n_b): equal in expectation only.",
    "With k3 > 0 and an unbounded token law μ[b] → 0 as b → ∞: uncapped dynamic batching has a "
    "finite (for heavy tails tiny) stability limit; a finite b_max keeps μ[b_max].",
    "§V's numbers (b* = 8, 125 s at λ = 0.43/s) rest on an unpublished fit: with Table I's "
    "per-token time that load is beyond every padded strategy.",
]


def marker(s, lam: float, latency: float) -> dict:
    """The current load on the mean-latency chart, on its exact fixed-b curve."""
    return operating_marker(lam, latency, f"now: {latency:.3g} s")


def sweep(s):
    """The simulated sweep of scenario ``s`` under its arrivals (None when simulation is
    off)."""
    if not s.simulate:
        return None
    lims = data.limits(s.times, s.b, s.b_max, s.kv, s.prompt)
    args = (s.times, s.b, s.b_max, s.kv, s.prompt, s.lam_max, lims, s.n_jobs)
    return data.sim_sweep(*args) if s.poisson else data.sim_sweep(*args, arrivals=s.arrivals)


def strategy_map(s, bar=None):
    """The page's one source of which strategy is stable where (``lb.StrategyMap``):
    simulated under the scenario's arrivals where simulated, else exact (Poisson)."""
    args = (s.times, s.b, s.b_max, s.kv, s.prompt, s.lam_max, s.simulate, s.n_jobs, bar)
    return (data.strategy_map(*args) if s.poisson
            else data.strategy_map(*args, arrivals=s.arrivals))


def exact_name(s, name: str) -> str:
    """An exact curve's name; beside another arrival process it says it assumes Poisson."""
    return name if s.poisson else f"{name}, Poisson arrivals"


def sim_name(s, label: str, what: str = "simulated ±95% CI") -> str:
    """A simulated series' name, naming the arrival process unless Poisson."""
    return f"{label}, {what}" if s.poisson else f"{label}, {what}, {s.arrivals.label}"


def arrivals_note(s) -> str:
    """What the charts and answers assume under a non-Poisson arrival process."""
    how = ("the simulated points (every strategy) run under it, time-scaled to each load"
           if s.simulate else "turn on the simulation (Simulation, in the sidebar) to see "
           "the strategies under it")
    return (f"Arrivals: {s.arrivals.label} (inter-arrival SCV {s.arrivals.scv:.3g}). The exact "
            "curves and formulas (fixed batching's M/D^b/1, the dynamic-batching chains, the "
            f"best batch size and cap) assume Poisson arrivals; {how}.")


def verdict_caption(s, smap) -> str:
    """The fastest strategy over the comparison loads in a few words: runs of loads with
    the same answer ("capped dynamic (b_max) from 0.03 to 0.135"), "not ranked" where
    the strategies that keep up were not computed, "none keeps up" where none does;
    then which strategies were left out and why, once.  Says which arrivals it assumes."""
    head = "Fastest strategy by load (requests/s)"
    if not s.poisson:
        how = ("simulated under it where simulated, else exact with Poisson arrivals"
               if s.simulate else "exact, Poisson arrivals: turn on the simulation to "
               "compare under this traffic")
        head += f", {s.arrivals.label} ({how})"
    runs: list = []                                   # [answer, first load, last load]
    for lam, best in zip(smap.lam_per_s.tolist(), smap.best()):
        said = (smap.labels[best] if best else "not ranked" if smap.stable(lam)
                else "none keeps up")
        if runs and runs[-1][0] == said:
            runs[-1][2] = lam
        else:
            runs.append([said, lam, lam])
    parts = [f"{said} at {lo:.3g}" if lo == hi else f"{said} from {lo:.3g} to {hi:.3g}"
             for said, lo, hi in runs]
    left = {k for k in smap.order if lb.NOT_COMPUTED in smap.method[k]}
    note = (" Ranked among the strategies computed at each load (the Latency chart says "
            "where each curve ends)." if left else "")
    if not s.simulate and left & set(lb.NO_EXACT):
        note += (" Elastic and continuous batching are only simulated: turn on the "
                 "simulation in the sidebar to rank them.")
    return f"{head}: {'; '.join(parts)}.{note}"


def _chain_end(s, strategy, chain, limit) -> tuple:
    """(strategy, x, y, why) where an exact chain curve ends (y None: nothing drawn)."""
    one = lb.strategy_map(chain.lam_per_s, (strategy,), data.LABELS, {strategy: limit},
                          {strategy: chain.sojourn_s}, None, share=data.CHAIN_LOAD,
                          states={strategy: data.chain_states(s.b_max if strategy == "capped"
                                                              else None)})
    why = f"{data.LABELS[strategy]} exact: {one.end_note(strategy)}"
    ok = np.flatnonzero(np.isfinite(chain.sojourn_s))
    return (strategy, None, None, why) if not ok.size else (
        strategy, float(chain.lam_per_s[ok[-1]]), float(chain.sojourn_s[ok[-1]]), why)


def _latency(s, lam, baseline) -> list:
    lims, labels = data.limits(s.times, s.b, s.b_max, s.kv, s.prompt), data.LABELS
    marks = {strat: (labels[strat], v) for strat, v in lims.items()}
    fine = data.fixed_curves(s.times, s.b, s.lam_max).fine
    chains = data.chains(s.times, s.b_max, s.lam_max, lims)
    smap = strategy_map(s)
    curves = [("fixed", exact_name(s, f"fixed b = {s.b}, exact"), fine.lam_per_s,
               fine.sojourn_s, None),
              ("dynamic", exact_name(s, "dynamic, no cap, exact"),
               chains["dynamic"].lam_per_s, chains["dynamic"].sojourn_s, "dash"),
              ("capped", exact_name(s, f"dynamic, cap b_max = {s.b_max}, exact"),
               chains["capped"].lam_per_s, chains["capped"].sojourn_s, None)]
    ends = [_chain_end(s, strat, chains[strat], lims[strat]) for strat in data.CHAINS]
    ok = np.flatnonzero(np.isfinite(fine.sojourn_s))
    fixed_note = f"fixed b = {s.b}: {smap.end_note('fixed')}"
    ends.append(("fixed", float(fine.lam_per_s[ok[-1]]), float(fine.sojourn_s[ok[-1]]),
                 fixed_note) if ok.size else ("fixed", None, None, fixed_note))
    sw = sweep(s)
    sims = [] if sw is None else [(strat, sim_name(s, labels[strat]), sw.lam_per_s,
                                   sw.mean_s[strat], sw.ci95_s[strat])
                                  for strat in data.STRATEGIES]
    ends += [(strat, None, None, f"{labels[strat]}: {smap.end_note(strat)}")
             for strat in lb.NO_EXACT if sw is None]
    base = None
    if baseline is not None:
        pinned = data.fixed_curves(baseline.times, baseline.b, baseline.lam_max).fine
        base = (pinned.lam_per_s, pinned.sojourn_s)
    out = [("mean_latency", figs.strategy_latency_figure(
        curves, sims, marks, x_max=s.lam_max, current=lam, ends=ends,
        title="Mean latency (wait + processing) against load", y_title="mean latency (s)",
        baseline=base))]
    if sw is not None:
        out.append(("p99_latency", figs.strategy_latency_figure(
            [], [(strat, sim_name(s, labels[strat], "simulated"), sw.lam_per_s,
                  sw.p99_s[strat], None) for strat in data.STRATEGIES], marks,
            x_max=s.lam_max, current=lam,
            title="p99 latency against load (simulation)", y_title="p99 latency (s)")))
    return out


def _paper(s) -> tuple:
    """Eq 25 and the dynamic bound as the paper prints them, beside the exact model."""
    lims = data.limits(s.times, s.b, s.b_max, s.kv, s.prompt)
    fine = data.fixed_curves(s.times, s.b, s.lam_max).fine
    chain = data.chains(s.times, s.b_max, s.lam_max, lims)["dynamic"]
    curves = [("fixed", exact_name(s, f"fixed b = {s.b}, exact (M/D^b/1)"), fine.lam_per_s,
               fine.sojourn_s, None),
              ("fixed", exact_name(s, "fixed, eq 25 as printed (E[Q_d]/λ, not the latency)"),
               fine.lam_per_s, fine.eq25_s, "dash"),
              ("dynamic", exact_name(s, "dynamic, exact chain"), chain.lam_per_s,
               chain.sojourn_s, None),
              ("dynamic", exact_name(s, "dynamic, bound φ with eq 20 (bounded laws only)"),
               fine.lam_per_s, fine.dynamic_bound_s, "dot")]
    marks = {strat: (data.LABELS[strat], lims[strat]) for strat in ("fixed", "dynamic")}
    return (("paper_vs_model", figs.strategy_latency_figure(
        curves, [], marks, x_max=s.lam_max, title="The paper's formulas as printed vs the model",
        y_title="mean latency (s)")),)


@memo(128)
def figures(view: str, scenario, lam: float | None = None, baseline=None) -> tuple:
    """(name, figure) pairs of ``view`` for ``scenario`` (a frozen ``inputs.Scenario``);
    ``lam`` marks the current load (None: no marker), ``baseline`` is the pinned
    Scenario whose fixed-b curve is overlaid.  Figures are shared: never modify them."""
    s = scenario
    if view == LATENCY:
        return tuple(_latency(s, lam, baseline))
    if view == BATCH_SIZE:
        bc = data.batch_curve(s.times)
        marks = {"fixed b": s.b, "b_max": s.b_max}
        return (("expected_max_tokens", figs.expected_max_figure(
                    bc.b, bc.expected_max_tokens, bc.mean_tokens, marks)),
                ("throughput_vs_b", figs.throughput_figure(
                    bc.b, bc.throughput_per_s, bc.b_throughput_opt, marks)))
    if view == BEST_STRATEGY:
        smap = strategy_map(s)
        return (("best_strategy", figs.best_strategy_figure(
            smap.lam_per_s, smap.categories(), [data.LABELS[strat] for strat in data.STRATEGIES],
            smap.verdicts())),)
    if view == PAPER:
        return _paper(s)
    return ()
