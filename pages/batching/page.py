"""GPU dynamic batching (Inoue 2021): latency, utilisation and energy vs load."""
import streamlit as st

from engine.batching import load_in, max_rate_for_p99
from pages.batching import data, inputs, views
from pages.batching.inputs import Point
from pages.batching.profile_input import profile_input
from ui import compare, share
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_table

PAGE = "gpu"
TITLE = "GPU dynamic batching"
ABOUT = ("Inoue (2021), *Queueing analysis of GPU-based inference servers with dynamic "
         "batching*. Jobs arrive as a Poisson stream; when the GPU frees, all waiting jobs "
         "(at most b_max) start as one batch of time αb + τ0.")
UNSTABLE = "∞ (unstable)"


def sidebar() -> inputs.Scenario:
    with st.sidebar:
        profile = profile_input(inputs.PRESET.key)
        st.divider()
        st.radio("Load given as", inputs.LOAD_MODE.choices, key=inputs.LOAD_MODE.key,
                 horizontal=True, format_func=inputs.LOAD_LABELS.get,
                 help="The load itself is set above the results, where moving it "
                      "re-draws only what depends on it.")
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
    return inputs.scenario(profile)


def rate_text(lam_per_ms: float, alpha_ms: float) -> str:
    return (f"{load_in(lam_per_ms, alpha_ms, 'per_s'):,.0f} req/s "
            f"(ρ = {load_in(lam_per_ms, alpha_ms, 'rho'):.3f})")


def show_view(view: str, scenario: inputs.Scenario, point: Point) -> None:
    """The charts of one view and their captions."""
    if view == views.FORMULAS:
        formulas_panel(views.FORMULA_TEX, views.ERRATA, "batching")
        return
    for name, fig in views.figures(view, scenario, point):
        show_chart(fig, name)
    for text in views.captions(view, scenario, point):
        st.caption(text)


def results(scenario: inputs.Scenario, here, lam_sla: float) -> None:
    fit = scenario.fit
    lam_p99 = max_rate_for_p99(scenario.sla_ms, data.rate_sweep(
        data.SIM_FRACTIONS, fit.alpha_ms, fit.tau0_ms, scenario.b_max, data.N_JOBS))
    p99 = data.p99_at(here.lam_per_ms, fit.alpha_ms, fit.tau0_ms, scenario.b_max) \
        if here.stable else None
    eta, joules = here.energy_efficiency_per_j, here.joules_per_request
    results_table([
        ("Mean latency E[W]", f"{here.mean_latency_ms:.3g} ms" if here.stable else UNSTABLE),
        ("p99 latency (simulated)", f"{p99:.3g} ms" if here.stable else UNSTABLE),
        ("Mean batch size E[B]", f"{here.mean_batch_size:.3g}"),
        ("Utilisation", f"{100 * here.utilization:.1f} %"),
        ("Load", rate_text(here.lam_per_ms, fit.alpha_ms)),
        ("Energy efficiency", "n/a (no power data)" if eta is None else f"{eta:.3g} jobs/J"),
        ("Energy per request", "n/a" if joules is None else f"{joules:.3g} J"),
        ("$ per million requests", f"{here.usd_per_million:.3g}" if here.stable else "n/a"),
        ("Largest load with E[W] ≤ SLA", rate_text(lam_sla, fit.alpha_ms)),
        ("Largest load with p99 ≤ SLA (simulated)", rate_text(lam_p99, fit.alpha_ms))])


@st.fragment
def what_if(scenario: inputs.Scenario, view: str, lam_sla: float) -> tuple | None:
    """Load input, results at that load, pin/report actions, load-dependent charts.
    Moving the load re-runs only this fragment; returns the pinned baseline's model."""
    if scenario.load_unit == "rho":
        share.slider(inputs.RHO_FIELD, "Normalised load ρ = λα", step=0.01)
    else:
        share.number_input(inputs.RATE, "Arrival rate (requests/s)", step=100.0)
    lam = inputs.load_per_ms(scenario)
    here = Point(lam).at(scenario)
    fit = scenario.fit
    if not here.stable:
        st.error(f"Unstable: {here.rate_per_s:,.0f} requests/s is at or beyond this server's "
                 f"capacity of {here.capacity_per_s:,.0f} requests/s (ρ limit "
                 f"{load_in(here.capacity_per_ms, fit.alpha_ms, 'rho'):.3f}). Latency grows "
                 "without bound; lower the load or raise b_max.", icon=":material/warning:")
    results(scenario, here, lam_sla)
    c = data.curves(*scenario.model)
    current = {"label": f"{scenario.profile.name}, b_max={scenario.b_max or '∞'}",
               "model": scenario.model,
               "metrics": {"E[W] (ms)": here.mean_latency_ms, "E[B]": here.mean_batch_size,
                           "utilisation": here.utilization,
                           "max req/s for SLA": float(load_in(lam_sla, fit.alpha_ms, "per_s"))},
               "curve": (c.lam, c.mean_latency)}
    row = action_row()
    base = compare.controls(PAGE, current, row)
    baseline = None if base is None else base["model"]
    params = {"profile": scenario.profile.name, "alpha (ms)": f"{fit.alpha_ms:.5g}",
              "tau0 (ms)": f"{fit.tau0_ms:.5g}", "b_max": scenario.b_max or "∞",
              "load (req/s)": f"{here.rate_per_s:.6g}", "rho": f"{here.rho:.4f}",
              "SLA (ms)": scenario.sla_ms}
    report_button(TITLE, params, lambda: [
        (n, f, "") for v in views.CHART_VIEWS
        for n, f in views.figures(v, scenario, Point.for_view(v, lam, baseline))],
        views.FORMULA_TEX, views.ERRATA, "gpu_batching_report.html", where=row)
    if base is not None:
        st.dataframe(compare.difference_table(current, base), hide_index=True)
    share.publish(inputs.FIELDS)
    if view in views.LOAD_VIEWS:
        show_view(view, scenario, Point.for_view(view, lam, baseline))
    return baseline


def run() -> None:
    share.restore(inputs.FIELDS)
    st.title(TITLE)
    st.caption(ABOUT)
    share.show_warnings()
    scenario = sidebar()
    fit = scenario.fit
    st.sidebar.caption(f"Fit: α = {fit.alpha_ms:.4g} ms, τ0 = {fit.tau0_ms:.4g} ms, "
                       f"R² = {fit.r2:.5f}" + ("" if fit.r2_energy is None else
                                               f"; energy β = {fit.beta_j:.4g} J, c0 = "
                                               f"{fit.c0_j:.4g} J, R² = {fit.r2_energy:.5f}"))
    badge = data.validation(fit.alpha_ms, fit.tau0_ms, scenario.b_max)
    st.caption(f":material/verified: Validation for this profile: φ is at most "
               f"{100 * badge.phi_gap:.1f}% above the exact E[W]; simulation agrees with the "
               f"exact mean within {badge.max_z:.1f} CI half-widths at 3 loads.")
    bar = LazyProgress("Simulating…")
    data.rate_sweep(data.SIM_FRACTIONS, fit.alpha_ms, fit.tau0_ms, scenario.b_max, data.N_JOBS,
                    bar)
    bar.empty()
    view = st.segmented_control("View", views.VIEWS, key=inputs.VIEW.key, required=True)
    st.subheader("Operating point")
    lam_sla = data.max_rate_mean(scenario.sla_ms, fit.alpha_ms, fit.tau0_ms, scenario.b_max)
    baseline = what_if(scenario, view, lam_sla)
    if view not in views.LOAD_VIEWS:
        show_view(view, scenario, Point.for_view(view, None, baseline))
    share.publish(inputs.FIELDS)


run()
