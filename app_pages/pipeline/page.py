"""CPU-GPU pipeline (May & Voigt 2010): a blocking tandem CPU → GPU memory → compute units."""
import streamlit as st

from engine import pipeline as pl
from engine.core.units import per_s_from_per_ms
from app_pages.pipeline import data, views
from app_pages.pipeline.inputs import FIELDS, Scenario, load_input, sidebar
from app_pages.pipeline.views import fmt_rate
from ui import compare, share
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_markdown

PAGE = "pipeline"
def exact_allowed(scenario: Scenario, n_phases: int) -> bool:
    """Small phase spaces are solved on every rerun; large ones once asked for."""
    solved = st.session_state.setdefault("_pipeline_solved", set())
    if n_phases <= data.N_AUTO or scenario in solved:
        return True
    st.warning(f"Limited: K = {scenario.K} and {scenario.units} compute units give N = "
               f"{n_phases} phases; the exact tandem costs O(N³) a point, so it is not solved "
               f"on every slider move (only up to N = {data.N_AUTO}). Group the SMs into fewer "
               "units, lower K, or solve once:", icon=":material/hourglass_top:")
    if st.button("Solve exactly", key="solve_exact", icon=":material/calculate:"):
        solved.add(scenario)
        return True
    return False


def run():
    share.restore(FIELDS)
    st.title("CPU-GPU pipeline")
    st.caption("Each job is prepared and copied to the GPU by the host, waits in GPU memory "
               "and runs on a compute unit. When a stage is full the one before it is held "
               "up, so the pipeline sustains less than its slowest stage alone. Model: May & "
               "Voigt (2010), *Queueing theory modeling of a CPU-GPU system*.")
    share.show_warnings()
    sc = sidebar()
    try:
        r, m = sc.rates, sc.model
    except ValueError as err:
        st.error(f"These specs do not fit the workload: {err}", icon=":material/error:")
        return share.publish(FIELDS)
    st.caption(f"{sc.spec.name} · {sc.workload.name}. Rates: CPU + link "
               f"{fmt_rate(r.mu_cpu_per_ms)}, memory {fmt_rate(r.mu_mem_per_ms)}, each of "
               f"{r.c} modelled units "
               f"{fmt_rate(r.mu_cu_per_ms)} ({sc.spec.sm_count / r.c:.3g} SMs each; the stage's "
               f"total rate is kept, so only the number of jobs run at once is coarser).")
    if not exact_allowed(sc, data.phases(m)):
        return share.publish(FIELDS)
    cv = solve(sc, m)
    view = st.segmented_control("View", views.VIEWS, key="view", required=True)
    st.subheader("Answer")
    base = answer(sc, r, cv)
    if view not in views.FRAGMENT_VIEWS:
        show_view(view, sc, None, base)
    share.publish(FIELDS)


def solve(sc: Scenario, m: pl.Tandem) -> pl.TandemCurves:
    """The exact curve (and the simulated points) with progress bars, memoised."""
    bar = LazyProgress("Solving the exact tandem…")
    cv = data.curves(m, bar=bar)
    if sc.simulated:
        data.sim_sweep(m, bar=bar, arrivals=sc.arrivals)
    bar.empty()
    return cv


def show_view(view: str, sc: Scenario, lam: float | None, base: dict | None,
              marker: dict | None = None) -> None:
    if view == views.FORMULAS:
        formulas_panel(views.FORMULAS_TEX, views.ERRATA, "pipeline")
        return
    if view == views.BUFFER:
        bar = LazyProgress("Solving capacities…")
        data.k_family(sc.model, bar=bar)
        data.c_family(sc.model, bar=bar)
        bar.empty()
        st.caption(f"Phase spaces above N = {data.N_LIMIT} are left out (O(N³) each).")
    baseline = None if base is None else tuple(tuple(map(float, c)) for c in base["curve"])
    for name, fig in views.figures(view, sc, lam, baseline):
        show_chart(fig, name, marker=marker if name == "latency" else None,
                   table=(lambda: views.stage_frame(sc, lam)) if view == views.PIPELINE else None)
    if view == views.PIPELINE:
        st.caption("Utilization: time fraction a stage works; held up: time fraction a full "
                   "next stage keeps it from passing a job on. Red: the slowest stage alone. "
                   "The chart's CSV is this stage table.")


@st.fragment
def answer(sc: Scenario, r: pl.PipelineRates, cv: pl.TandemCurves) -> dict | None:
    """Load input, the answer at that load, pin/report; load-dependent charts.
    Moving the load re-runs only this (``st.fragment``)."""
    load = load_input()
    cap = cv.capacity_per_ms
    lam = data.load(cap, load.mode, load.frac, load.rate_per_s)
    m = sc.model
    op = data.operating(r, m, lam)
    exact = data.point(lam, m)
    naive = data.point_naive(lam, m)
    if not op.stable:
        st.error(f"Unstable: {fmt_rate(lam)} is at or beyond this pipeline's capacity "
                 f"of {fmt_rate(cap)}. The host's queue grows without bound; lower "
                 "the load, give GPU memory room for more jobs or add compute units.", icon=":material/warning:")
    w_exact, w_naive = float(exact.w_total_ms), float(naive.w_total_ms)
    items = views.answer_rows(cap, op, w_exact, w_naive, data.what_if(m))
    if not sc.poisson:
        sim = data.sim_at(lam, m, sc.arrivals) if op.stable else None
        items = views.traffic_rows(sc.arrivals.label, items, sim, w_exact)
    st.markdown(results_markdown(items) + "\n\nNaive: each stage on its own, as if a full stage "
                "never held up the one before it. More compute units means more hardware: "
                "each extra unit is as fast as one modelled unit now.")
    if not sc.poisson:
        st.caption(f"Arrivals: {sc.arrivals.label}{views.scv_note(sc.arrivals)}, scaled to "
                   "this load. The exact tandem and the naive decomposition assume "
                   f"Poisson arrivals; the simulated rows ({data.SIM_JOBS:,} jobs) and the "
                   "simulated points on Throughput & latency (always shown under these "
                   "arrivals) run under the chosen process. Capacity does not depend on it.")
    cap_s = float(per_s_from_per_ms(cap))
    scenario = {"label": sc.label, "key": (sc, lam),
                "metrics": {"capacity (jobs/s)": cap_s, "mean latency (ms)": w_exact,
                            "host held up (% of time)": 100 * op.blocked[0],
                            "GPU memory held up (% of time)": 100 * op.blocked[1]},
                "curve": (per_s_from_per_ms(cv.lam_per_ms), cv.exact.w_total_ms)}
    row = action_row()
    base = compare.controls(PAGE, scenario, row)
    baseline = None if base is None else tuple(tuple(map(float, c)) for c in base["curve"])

    def sections():
        return [(views.title(f), f, "") for v in views.CHART_VIEWS
                for _, f in views.figures(v, sc, lam if v in views.LOAD_VIEWS else None, baseline)]

    report_button("CPU-GPU pipeline", views.report_inputs(sc, r, op), sections,
                  views.FORMULAS_TEX, views.ERRATA, "cpu_gpu_pipeline_report.html", where=row,
                  answer=items, scenario=views.scenario_sentence(sc, r, op),
                  compared=(scenario, base))
    if base is not None:
        st.caption(f"Baseline: {base['label']}")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)
    view = st.session_state["view"]
    if view in views.FRAGMENT_VIEWS:     # Throughput & latency: memoised, only the point moves
        show_view(view, sc, lam if view in views.LOAD_VIEWS else None, base,
                  views.marker(lam, w_exact, op))
    share.publish(FIELDS)
    return base


run()
