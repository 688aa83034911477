"""Views of the CPU-GPU pipeline page: their names, and ``figures`` (the (name, figure)
pairs of one view, memoised on the view's inputs)."""
from __future__ import annotations

import numpy as np

from engine import pipeline as pl
from ui.memo import memo

from . import data
from . import figures as figs

PIPELINE = "Pipeline"
THROUGHPUT = "Throughput & latency"
TRAFFIC = "FLOP/s & bytes/s"
BUFFER = "Buffer & units"
FORMULAS = "Formulas"
VIEWS = (PIPELINE, THROUGHPUT, TRAFFIC, BUFFER, FORMULAS)
CHART_VIEWS = VIEWS[:-1]          # the views with charts (the report's sections)
LOAD_VIEWS = (PIPELINE,)          # charts that depend on the load (drawn in the fragment)

FORMULAS_TEX = [   # the Formulas view: (LaTeX, what it is)
    ("W_{M/M/1} = \\frac{1}{\\mu-\\lambda},\\quad L = \\frac{\\rho}{1-\\rho}",
     "CPU stage alone (M/M/1); the paper prints 1/(λ − μ)"),
    ("p_n = p_0\\frac{r^n}{n!}\\ (n\\le c),\\quad p_0\\frac{r^n}{c!\\,c^{n-c}}\\ (c<n\\le K),"
     "\\quad r = \\lambda/\\mu", "M/M/c/K state probabilities (memory: c = 1; units: K = c)"),
    ("W = \\frac{L}{\\lambda(1-p_K)},\\quad W_q = \\frac{L_q}{\\lambda(1-p_K)}",
     "M/M/c/K mean times of an admitted job (the paper prints both as W, with p_k)"),
    ("\\pi_{n+1} = \\pi_n R,\\quad R = \\lambda(-A_1-\\lambda G)^{-1},\\quad "
     "A_2 + A_1G + \\lambda G^2 = 0", "exact tandem: quasi-birth-death process, level = jobs at "
     "the CPU, phase = (jobs in memory, busy units); G by shifted cyclic reduction"),
    ("\\lambda < \\theta A_2\\mathbf{1},\\quad \\theta(A_0+A_1+A_2) = 0",
     "stability (the exact capacity): drift condition of the saturated downstream"),
    ("t_{cpu} = \\frac{(1-f)IS}{\\text{host}} + \\frac{S}{\\text{link}},\\quad "
     "t_{mem} = \\frac{S\\max(1, fI/r)}{\\text{mem BW}},\\quad "
     "t_{cu} = \\frac{fIS}{\\text{peak}/\\text{SMs}}",
     "mean stage times from the spec and workload (S bytes, I FLOP/byte, f parallel, r reuse)"),
]
ERRATA = [
    "M/M/1: the paper prints W = 1/(λ − μ); it is 1/(μ − λ).",
    "M/M/c/K: both mean times are printed as 'W'; the second is Wq = Lq/(λ(1 − p_K)).",
    "M/M/c/K: the mean times divide by λ(1 − p_k); read p_K, the blocking probability.",
    "M/M/c/K L_q: the paper defines ρ = λ/(cμ) but its L_q and L use ρ for the offered load "
    "λ/μ; read with its own ρ the formula is wrong (with r = λ/μ it is right except at r = c, "
    "a 0/0 whose limit is p0 r^c (K−c)(K−c+1)/(2c!)).",
    "The paper's blocking rule ('service rate of zero while the next stage is full') is "
    "blocking before service; blocking after service is another model with a higher "
    "saturation throughput. Both are solved here.",
]


def fmt_rate(per_ms: float) -> str:
    """A rate given per ms, shown in jobs/s."""
    x = float(pl.per_ms_to_per_s(per_ms))
    return f"{x:,.0f} jobs/s" if x >= 100 else f"{x:.3g} jobs/s"


def stage_boxes(r: pl.PipelineRates, op: pl.OperatingPoint) -> list[dict]:
    """Live numbers on each stage (the diagram's boxes)."""
    caps = pl.stage_capacities(r)
    busy = [f"busy {100 * b:.1f} %" for b in op.busy]
    blocked = [f"blocked {100 * b:.1f} %" for b in op.blocked]
    q_cpu = f"{op.jobs[0]:.3g}" if op.stable else "∞"
    kinds = ("M/M/1, unbounded queue", f"1 server, K = {r.K} slots", f"{r.c} servers, no buffer")
    lines = ([busy[0], blocked[0], f"jobs here {q_cpu}"],
             [busy[1], blocked[1], f"jobs here {op.jobs[1]:.3g} of {r.K}"],
             [busy[2], f"units busy {op.jobs[2]:.3g}", ""])
    return [dict(name=name, kind=kind, lines=[f"alone: {fmt_rate(cap)}", *more])
            for name, kind, cap, more in zip(pl.STAGES, kinds, caps, lines)]


def arrival_text(op: pl.OperatingPoint) -> str:
    return (f"Poisson arrivals λ = {fmt_rate(op.lam_per_ms)} "
            f"({100 * op.load_fraction:.0f} % of capacity)")


@memo(128)
def figures(view: str, scenario, lam: float | None = None,
            baseline: tuple | None = None) -> list:
    """(name, figure) pairs of ``view`` for ``scenario`` (pages/pipeline/inputs.py), at the
    load ``lam`` (per ms; load views only) with the pinned ``baseline`` curve
    ((x jobs/s, y ms) tuples) or None.  Figures are shared: never modified after."""
    r = data.rates(scenario.spec, scenario.workload_id, scenario.K, scenario.units,
                   scenario.cpu_speedup)
    k = data.key(r, scenario.blocking)
    cv = data.curves(*k)
    axes = dict(unstable_at=float(pl.per_ms_to_per_s(cv.cap)),
                x_max=float(pl.per_ms_to_per_s(cv.lam_dense[-1])))
    lam_s, lam_d = pl.per_ms_to_per_s(cv.lam), pl.per_ms_to_per_s(cv.lam_dense)
    if view == PIPELINE:
        op = data.operating(r, scenario.blocking, lam)
        return [("pipeline", figs.pipeline_diagram(stage_boxes(r, op), op.slowest,
                                                   arrival_text(op)))]
    if view == THROUGHPUT:
        sim = data.sim_sweep(*k, cv.cap) if scenario.simulate else None
        return [
            ("throughput", figs.throughput_figure(
                lam_s, pl.per_ms_to_per_s(cv.exact.throughput), lam_d,
                pl.per_ms_to_per_s(cv.naive.throughput), **axes,
                sim=None if sim is None else (pl.per_ms_to_per_s(sim.lam),
                                              pl.per_ms_to_per_s(sim.throughput)))),
            ("latency", figs.latency_figure(
                lam_s, cv.exact.w_total, lam_d, cv.naive.w_total, **axes,
                sim=None if sim is None else (pl.per_ms_to_per_s(sim.lam), sim.w_total, sim.ci95),
                baseline=baseline))]
    if view == TRAFFIC:
        spec, wl = scenario.spec, scenario.workload
        tr = pl.traffic(r, np.minimum(cv.lam_dense, cv.cap), wl.job_size_bytes)
        return [
            ("flops", figs.ceiling_figure(
                "Sustained compute vs load", "FLOP/s", lam_d, [("sustained FLOP/s", tr.flop_per_s)],
                [(f"{wl.precision.upper()} peak", pl.peak_flop_per_s(spec, wl.precision))],
                **axes)),
            ("bytes", figs.ceiling_figure(
                "Sustained memory and link traffic vs load", "bytes/s", lam_d,
                [("GPU memory traffic", tr.memory_bytes_per_s),
                 ("host link traffic", tr.link_bytes_per_s)],
                list(zip(("memory bandwidth", "host link bandwidth"),
                         pl.bandwidths_bytes_per_s(spec))), **axes))]
    if view == BUFFER:
        (kx, kc), (ux, uc) = data.k_family(*k), data.c_family(*k)
        caps = pl.stage_capacities(r)
        return [
            ("capacity_vs_K", figs.sensitivity_figure(
                "Max sustainable rate vs buffer K", "K (jobs the GPU memory holds)", kx,
                pl.per_ms_to_per_s(kc), current=r.K, limit=float(pl.per_ms_to_per_s(min(caps))))),
            ("capacity_vs_units", figs.sensitivity_figure(
                "Max sustainable rate vs compute units (each as fast as now)",
                "compute units modelled", ux, pl.per_ms_to_per_s(uc), current=r.c,
                limit=float(pl.per_ms_to_per_s(min(caps[:2])))))]
    return []
