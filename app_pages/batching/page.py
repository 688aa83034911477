"""GPU dynamic batching (Inoue 2021): latency, utilization and energy vs load."""
import streamlit as st

from engine.batching import load_in, max_rate_for_p99
from app_pages.batching import answer, data, inputs, measured_view, traffic, views
from app_pages.batching.inputs import Point
from app_pages.batching.profile_input import profile_input
from ui import arrivals_input, compare, share
from ui.export import report_button, show_chart
from ui.memo import LazyProgress, with_spinner
from ui.panel import action_row, formulas_panel, results_table

PAGE = "gpu"
TITLE = "GPU dynamic batching"
ABOUT = ("Requests arrive at random; whenever the GPU is free it runs every waiting request "
         "(up to a batch-size limit, if set) as one batch, which takes a fixed time plus a time "
         "per request. How latency, GPU time, energy and cost follow the load. Model: Inoue "
         "(2021), *Queueing analysis of GPU-based inference servers with dynamic batching*.")


def sidebar() -> inputs.Scenario:
    with st.sidebar:
        profile = profile_input(inputs.PRESET.key)
        st.divider()
        st.radio("Load given as", inputs.LOAD_MODE.choices, key=inputs.LOAD_MODE.key,
                 horizontal=True, format_func=inputs.LOAD_LABELS.get,
                 help="The load itself is set above the results, where moving it "
                      "re-draws only what depends on it.")
        arrivals = arrivals_input.draw(inputs.ARRIVALS_UPLOAD)
        st.toggle("Cap the batch size (b_max)", key=inputs.CAP_BATCH.key)
        if st.session_state[inputs.CAP_BATCH.key]:
            share.number_input(inputs.B_MAX_FIELD, "b_max", step=1)
        share.number_input(inputs.SLA, "Latency SLA (ms)", step=1.0)
        with st.expander("Prices"):
            share.number_input(inputs.GPU_PRICE, "GPU price ($/hour)", step=0.1)
            share.number_input(inputs.POWER_PRICE, "Electricity ($/kWh)", step=0.01)
        with st.expander("Simulation and Triton batcher"):
            st.toggle("Show simulation points", key=inputs.SIMULATE.key,
                      help="Runs the discrete-event simulator (cached) at several loads.")
            share.number_input(inputs.PREFERRED_FIELD, "Preferred batch size", step=1)
        st.radio("Chart image format", inputs.IMAGE.choices, key=inputs.IMAGE.key,
                 horizontal=True, help="What the camera icon of every chart downloads.")
    return inputs.scenario(profile, arrivals)


def show_view(view: str, scenario: inputs.Scenario, point: Point, marker=None) -> None:
    """The charts of one view and their captions; ``marker`` on the first chart."""
    if view == views.FORMULAS:
        formulas_panel(views.FORMULA_TEX, views.ERRATA, "batching")
        return
    if view == views.MEASURED:
        measured_view.show()
        return
    if view == views.COMPARE:
        fit = scenario.fit
        bar = LazyProgress("Simulating…")
        found = traffic.comparison(fit.alpha_ms, fit.tau0_ms, scenario.b_max, point.lam_per_ms,
                                   traffic.choices(scenario), bar)
        bar.empty()
        st.dataframe(traffic.rows(traffic.choices(scenario), found), hide_index=True)
    for i, (name, fig) in enumerate(views.figures(view, scenario, point)):
        show_chart(fig, name, marker=None if i else marker)
    for text in views.captions(view, scenario, point):
        st.caption(text)


def results(scenario: inputs.Scenario, here, lam_sla: float) -> list:
    """The results table and the busy-time note; returns the table's rows.  ``here`` and
    ``lam_sla`` are under the scenario's arrival process (``traffic``)."""
    fit, arrivals = scenario.fit, scenario.arrivals
    lam_p99 = max_rate_for_p99(scenario.sla_ms, data.rate_sweep(
        data.SIM_FRACTIONS, fit.alpha_ms, fit.tau0_ms, scenario.b_max, data.N_JOBS,
        arrivals=arrivals))
    p99 = data.p99_at(here.lam_per_ms, fit.alpha_ms, fit.tau0_ms, scenario.b_max,
                      arrivals=arrivals) if here.stable else None
    rows = answer.rows(scenario, here, lam_sla, lam_p99, p99)
    results_table(rows)
    st.caption(answer.busy_note(scenario, here))
    if not arrivals.is_poisson:
        st.caption(traffic.note(arrivals))
    return rows


@st.fragment
def what_if(scenario: inputs.Scenario, view: str, lam_sla: float) -> tuple | None:
    """Load input, results at that load, pin/report actions, load-dependent charts.
    Moving the load re-runs only this fragment; returns the pinned baseline's model."""
    if scenario.load_unit == "rho":
        share.slider(inputs.RHO_FIELD, "Normalised load ρ = λα", step=0.01,
                     help="The load as a share of the most this GPU can serve with unbounded "
                          "batches (1/α requests per ms).")
    else:
        share.number_input(inputs.RATE, "Arrival rate (requests/s)", step=100.0)
    lam = inputs.load_per_ms(scenario)
    here = with_spinner("Computing under these arrivals…", traffic.operating_point,
                        scenario, Point(lam).at(scenario))
    lam_sla = traffic.max_rate_mean(scenario, lam_sla)
    fit = scenario.fit
    if not here.stable:
        st.error(f"Unstable: {here.rate_per_s:,.0f} requests/s is at or beyond this server's "
                 f"capacity of {here.capacity_per_s:,.0f} requests/s (ρ limit "
                 f"{load_in(here.capacity_per_ms, fit.alpha_ms, 'rho'):.3f}). Latency grows "
                 "without bound; lower the load or raise the batch-size limit.", icon=":material/warning:")
    rows = results(scenario, here, lam_sla)
    c = data.curves(*scenario.model)
    traffic_label = "" if scenario.arrivals.is_poisson else f", {scenario.arrivals.label}"
    current = {"label": f"{scenario.profile.name}, b_max={scenario.b_max or '∞'}{traffic_label}",
               "model": scenario.model, "metrics": answer.metrics(here, lam_sla),
               "curve": (c.lam_per_ms, c.mean_latency_ms)}
    row = action_row()
    base = compare.controls(PAGE, current, row)
    baseline = None if base is None else base["model"]
    measurement = measured_view.report_holder()     # filled by the view, drawn later
    report_button(TITLE, answer.parameters(scenario, here),
                  lambda: answer.report_sections(scenario, lam, baseline)
                  + measured_view.report_sections(measurement), views.FORMULA_TEX,
                  views.ERRATA, "gpu_batching_report.html", where=row, answer=rows,
                  scenario=answer.scenario_sentence(scenario, here), compared=(current, base))
    if base is not None:
        st.caption(f"Baseline: {base['label']}, compared in absolute units (ρ is a share of "
                   "each GPU's own capacity).")
        st.dataframe(compare.difference_table(current, base), hide_index=True)
    share.publish(inputs.FIELDS)
    if view in views.FRAGMENT_VIEWS:       # the latency chart: memoised, the marker moves
        show_view(view, scenario, Point.for_view(view, lam, baseline),
                  views.marker(scenario, here, baseline) if view == views.LATENCY else None)
    return baseline


def run() -> None:
    share.restore(inputs.FIELDS)
    st.title(TITLE)
    st.caption(ABOUT)
    share.show_warnings()
    scenario = sidebar()
    fit = scenario.fit
    st.sidebar.caption(
        f"Batch time = {fit.alpha_ms:.4g} ms per request + {fit.tau0_ms:.4g} ms per batch "
        f"(fit α, τ0; R² = {fit.r2:.5f})" + ("" if fit.r2_energy is None else
                                            f"; energy {fit.beta_j:.4g} J per request + "
                                            f"{fit.c0_j:.4g} J per batch (β, c0; R² = "
                                            f"{fit.r2_energy:.5f})"))
    badge = data.validation(fit.alpha_ms, fit.tau0_ms, scenario.b_max)
    st.caption(":material/verified: Checked for this profile: simulation agrees with the exact "
               "mean latency at 3 loads.", help=f"Simulated means within {badge.max_z:.1f} "
               f"half-widths of their 95 % confidence intervals of the exact E[W]; the bound φ "
               f"is at most {100 * badge.phi_gap:.1f} % above it.")
    bar = LazyProgress("Simulating…")
    data.rate_sweep(data.SIM_FRACTIONS, fit.alpha_ms, fit.tau0_ms, scenario.b_max, data.N_JOBS,
                    bar, arrivals=scenario.arrivals)
    if scenario.arrivals.kind == "mmpp2":
        traffic.mmpp2_curve(fit.alpha_ms, fit.tau0_ms, scenario.b_max, scenario.arrivals, bar)
    bar.empty()
    view = st.segmented_control("View", views.VIEWS, key=inputs.VIEW.key, required=True)
    st.subheader("Operating point")
    lam_sla = data.max_rate_mean(scenario.sla_ms, fit.alpha_ms, fit.tau0_ms, scenario.b_max)
    baseline = what_if(scenario, view, lam_sla)
    if view not in views.FRAGMENT_VIEWS:
        show_view(view, scenario, Point.for_view(view, None, baseline))
    share.publish(inputs.FIELDS)


run()
