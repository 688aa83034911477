"""Views of the CPU-GPU pipeline page: their names, and ``figures`` (the (name, figure)
pairs of one view, memoised on the view's inputs)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine import pipeline as pl
from engine.core.units import per_s_from_per_ms
from ui.export import format_percent, operating_marker
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
FRAGMENT_VIEWS = (PIPELINE, THROUGHPUT)   # drawn in the fragment (Throughput: a moving point)

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
    x = float(per_s_from_per_ms(per_ms))
    return f"{x:,.0f} jobs/s" if x >= 100 else f"{x:.3g} jobs/s"


def _room(row: pl.StageRow) -> str:
    if row.room == float("inf"):
        return "1 server, unlimited queue"
    if row.servers == row.room:
        return f"{row.servers} servers, no waiting room"
    return f"1 server, room for {row.room:.0f} jobs"


def stage_boxes(rows: tuple[pl.StageRow, ...]) -> list[dict]:
    """Live numbers on each stage (the diagram's boxes), in plain words."""
    def jobs(row):
        here = "∞" if row.mean_jobs == float("inf") else f"{row.mean_jobs:.3g}"
        return f"jobs here {here}" + ("" if row.room == float("inf") else f" of {row.room:.0f}")
    return [dict(name=row.stage, kind=_room(row),
                 lines=[f"alone: {row.rate_alone_per_s:,.0f} jobs/s",
                        f"utilization {format_percent(row.utilization, 1)}",
                        jobs(row) if row.blocked != row.blocked
                        else f"held up by next stage {format_percent(row.blocked, 1)}",
                        "" if row.blocked != row.blocked else jobs(row)])
            for row in rows]


STAGE_COLUMNS = ("servers", "room (jobs)", "rate alone (jobs/s)", "utilization (%)",
                 "time held up by the next stage (%)", "mean jobs at the stage")


def stage_frame(scenario, lam: float) -> pd.DataFrame:
    """The stage table at load ``lam`` (per ms), columns named with units: the diagram's
    CSV (unlimited room and the last stage's blocking as blanks)."""
    r = scenario.rates
    rows = pl.stage_table(r, data.operating(r, scenario.model, lam))
    frame = pd.DataFrame([(r.stage, r.servers, r.room, r.rate_alone_per_s, 100 * r.utilization,
                           100 * r.blocked, r.mean_jobs) for r in rows],
                         columns=("stage",) + STAGE_COLUMNS)
    return frame.replace([np.inf, -np.inf], np.nan).round(4)


def arrival_text(op: pl.OperatingPoint, arrivals=None) -> str:
    """The diagram's arrival line; ``arrivals``: a non-Poisson process's label (the boxes'
    numbers are still the exact tandem's, which assumes Poisson arrivals)."""
    if arrivals is None:
        return (f"Jobs arrive at random, {fmt_rate(op.lam_per_ms)} on average "
                f"({100 * op.load_fraction:.0f} % of capacity)")
    return (f"Jobs arrive as {arrivals}, {fmt_rate(op.lam_per_ms)} on average "
            f"({100 * op.load_fraction:.0f} % of capacity); stage numbers: exact tandem, "
            "Poisson arrivals")


WHAT_IF = {"K + 1": "room for 1 more job in GPU memory", "2K": "twice the room in GPU memory",
           "c + 1 units": "1 more compute unit", "2c units": "twice the compute units"}
BLOCKING = {"before": "a stage waits before starting a job (paper)",
            "after": "a stage finishes a job, then waits"}


def answer_rows(cap: float, op: pl.OperatingPoint, w_exact: float, w_naive: float,
                what_if: dict) -> list[tuple[str, str]]:
    """The results table in a capacity planner's words: (label, value with units)."""
    inf = float("inf")
    rows = [
        ("Max sustainable rate", fmt_rate(cap)),
        ("Lost to blocking", f"{format_percent(op.lost_to_blocking, 1)} below the slowest stage"),
        ("Bottleneck stage", pl.STAGES[op.slowest]),
        ("Mean latency (with blocking)", f"{w_exact:.4g} ms" if op.stable else "∞ (unstable)"),
        ("Mean latency (naive: no blocking)", "∞ (unstable)" if not w_naive < inf else
         f"{w_naive:.4g} ms" + (f" ({format_percent(pl.relative_change(w_naive, w_exact), 1, signed=True)} off)"
                                if op.stable else "")),
        ("Host held up by full GPU memory", f"{format_percent(op.blocked[0], 1)} of the time"),
    ]
    return rows + [(f"Capacity with {WHAT_IF[name]}", "too large to solve" if c_new is None
                    else f"{fmt_rate(c_new)} ({format_percent(pl.relative_change(c_new, cap), signed=True)})")
                   for name, c_new in what_if.items()]


def traffic_rows(label: str, rows: list, sim, w_exact: float) -> list[tuple[str, str]]:
    """The results table under another arrival process ``label``: the arrival model first,
    the exact and naive latencies marked as assuming Poisson arrivals, then the chosen
    process's simulated mean latency and host blocking at this load (``sim``, an
    ``engine.pipeline.TandemSimResult`` in ms; None where the load is unstable)."""
    poisson = {"Mean latency (with blocking)", "Mean latency (naive: no blocking)",
               "Host held up by full GPU memory"}
    out = [("Arrivals", label)]
    out += [(f"{name}, Poisson arrivals" if name in poisson else name, value)
            for name, value in rows]
    if sim is None:
        latency = held = "∞ (unstable)"
    else:
        off = pl.relative_change(sim.w_total_ms, w_exact)
        change = ("" if not np.isfinite(w_exact) or w_exact <= 0 else
                  f" ({format_percent(off, 1, signed=True)} vs Poisson)")
        latency = f"{sim.w_total_ms:.4g} ms ± {sim.ci95_ms:.2g}{change}"
        held = f"{format_percent(sim.p_cpu_blocked, 1)} of the time"
    at = 1 + next(i for i, (name, _) in enumerate(out) if name.startswith("Host held up"))
    return (out[:at] + [(f"Mean latency under {label}, simulated", latency),
                        (f"Host held up under {label}, simulated", held)] + out[at:])


def scv_note(arrivals) -> str:
    """", inter-arrival SCV x" unless the label already states it (a bursty process)."""
    return "" if arrivals.kind == "bursty" else f", inter-arrival SCV {arrivals.scv:.3g}"


def report_inputs(sc, r: pl.PipelineRates, op: pl.OperatingPoint) -> dict[str, str]:
    """The report's inputs table: plain text with units."""
    spec = sc.spec
    return {"GPU": spec.name, "Workload": sc.workload.name,
            "Host link": f"{spec.host_link_bandwidth_GB_per_s:g} GB/s one way",
            "GPU memory bandwidth": f"{spec.memory_bandwidth_GB_per_s:g} GB/s",
            "Peak compute": f"{spec.fp32_peak_TFLOP_per_s:g} TFLOP/s FP32, "
                            f"{spec.fp16_peak_TFLOP_per_s:g} TFLOP/s FP16",
            "Jobs the GPU memory holds (K)": f"{sc.K} jobs",
            "Compute units modelled (c)": f"{r.c} units of {spec.sm_count / r.c:.3g} SMs each",
            "Host stage speed-up": f"{sc.cpu_speedup:g}×",
            "When the next stage is full": BLOCKING[sc.blocking],
            "Load": f"{fmt_rate(op.lam_per_ms)} ({100 * op.load_fraction:.0f} % of capacity)",
            "Arrivals": sc.arrivals.label + ("" if sc.poisson else
                                             f"{scv_note(sc.arrivals)}; exact results "
                                             "assume Poisson arrivals")}


def scenario_sentence(sc, r: pl.PipelineRates, op: pl.OperatingPoint) -> str:
    """The scenario in one plain sentence (the report opens with it)."""
    return (f"{sc.spec.name} fed “{sc.workload.name}” jobs at {fmt_rate(op.lam_per_ms)}, "
            f"{100 * op.load_fraction:.0f} % of the {fmt_rate(op.capacity_per_ms)} it can "
            f"sustain, with room for {sc.K} jobs in GPU memory and its {sc.spec.sm_count} SMs "
            f"modelled as {r.c} compute units. Arrivals: {sc.arrivals.label}.")


def marker(lam: float, w_exact: float, op: pl.OperatingPoint) -> dict:
    """The load ``lam`` (per ms) on the latency chart (jobs/s) at the table's mean latency."""
    w = w_exact if op.stable else float("inf")
    return operating_marker(float(per_s_from_per_ms(lam)), w, f"now: {w:.4g} ms")


def title(fig) -> str:
    """A chart's human title (its own heading)."""
    return fig.layout.title.text


@memo(128)
def figures(view: str, scenario, lam: float | None = None,
            baseline: tuple | None = None) -> list:
    """(name, figure) pairs of ``view`` for ``scenario`` (app_pages/pipeline/inputs.py), at the
    load ``lam`` (per ms; load views only) with the pinned ``baseline`` curve
    ((x jobs/s, y ms) tuples) or None.  Figures are shared: never modified after."""
    r, m = scenario.rates, scenario.model
    cv = data.curves(m)
    axes = dict(unstable_at=float(per_s_from_per_ms(cv.capacity_per_ms)),
                x_max=float(per_s_from_per_ms(cv.lam_dense_per_ms[-1])))
    lam_s, lam_d = per_s_from_per_ms(cv.lam_per_ms), per_s_from_per_ms(cv.lam_dense_per_ms)
    label = None if scenario.poisson else scenario.arrivals.label
    if view == PIPELINE:
        op = data.operating(r, m, lam)
        rows = pl.stage_table(r, op)
        return [("pipeline", figs.pipeline_diagram(stage_boxes(rows), op.slowest,
                                                   arrival_text(op, label)))]
    if view == THROUGHPUT:
        sim = data.sim_sweep(m, arrivals=scenario.arrivals) \
            if scenario.simulated \
            else None
        return [
            ("throughput", figs.throughput_figure(
                lam_s, per_s_from_per_ms(cv.exact.throughput_per_ms), lam_d,
                per_s_from_per_ms(cv.naive.throughput_per_ms), **axes, arrivals=label,
                sim=None if sim is None else (per_s_from_per_ms(sim.lam_per_ms),
                                              per_s_from_per_ms(sim.throughput_per_ms)))),
            ("latency", figs.latency_figure(
                lam_s, cv.exact.w_total_ms, lam_d, cv.naive.w_total_ms, **axes, arrivals=label,
                sim=None if sim is None else (per_s_from_per_ms(sim.lam_per_ms), sim.w_total_ms,
                                              sim.ci95_ms),
                baseline=baseline))]
    if view == TRAFFIC:
        spec, wl = scenario.spec, scenario.workload
        tr = pl.traffic_at_loads(r, cv.lam_dense_per_ms, cv.capacity_per_ms, wl.job_size_bytes)
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
        kf, cf = data.k_family(m), data.c_family(m)
        return [
            ("capacity_vs_K", figs.sensitivity_figure(
                "Max sustainable rate vs buffer K", "K (jobs the GPU memory holds)", kf.values,
                per_s_from_per_ms(kf.capacity_per_ms), current=r.K,
                limit=float(per_s_from_per_ms(pl.slowest_rate_per_ms(r))))),
            ("capacity_vs_units", figs.sensitivity_figure(
                "Max sustainable rate vs compute units (each as fast as now)",
                "compute units modelled", cf.values, per_s_from_per_ms(cf.capacity_per_ms),
                current=r.c,
                limit=float(per_s_from_per_ms(
                    pl.slowest_rate_per_ms(r, without_units=True)))))]
    return []
