"""Autoscaling for a percentile-latency SLA (Swayam appendix): replicas, trace, cost."""
import math

import streamlit as st

from pages.sla import data, inputs, views
from ui import compare, share
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_markdown, results_table

PAGE = "sla"
REPLICAS_NOTE = ("Shaded: too few replicas for a steady state. Dotted purple: eq 7 with the busy "
                 "probability of a retry from the M/M/n busy-count chain (shown for c·μ ≤ 50 and "
                 "n ≤ 400). M/M/n assumes exponential service and no d1, d2, Δ.")


def fmt_n(n: float) -> str:
    return f"{int(n)}" if math.isfinite(n) else "none"


def sim_answer(sim, approx: float, simulate: bool) -> str:
    """The simulated answer as shown: a count, a bound, or why there is none."""
    if not math.isfinite(approx):
        return "none"
    if sim is None:
        return f"n/a (> {data.SIM_MAX_N})" if simulate else "off"
    if sim["all_meet"]:
        return f"≤ {int(sim['n'][0])}"
    return fmt_n(sim["fewest"]) if math.isfinite(sim["fewest"]) else f"> {int(sim['n'][-1])}"


def run():
    share.restore(inputs.FIELDS)
    st.title("Autoscaling for a latency SLA")
    st.caption("Swayam (appendix): requests go to a random replica and retry elsewhere when it "
               "is busy. How many replicas keep p% of requests under RT, by the paper's "
               "approximation (eq 7), by simulation and by one central M/M/n queue; and what "
               "autoscaling over a day of load saves against a static fleet sized for the peak.")
    share.show_warnings()
    inputs.sidebar()
    ss = st.session_state
    mu = inputs.service_rate()
    if mu <= 0:
        st.error(f"A GPU cannot keep its mean latency at {ss['gpu_target_ms']:g} ms under any "
                 "load: a lone request already takes α + τ0, and load adds to it. Raise the "
                 "per-GPU target.", icon=":material/warning:")
        share.publish(inputs.FIELDS)
        return
    s, simulate = inputs.scenario(mu), bool(ss["simulate"])
    ans = data.answers(s)
    if not math.isfinite(ans["approx"]):
        st.error(f"No number of replicas meets p{s.percentile:g} ≤ {ss['rt_ms']:g} ms: even an "
                 f"idle replica is too slow (d1 + the service time's p{s.percentile:g}). Raise "
                 "RT or μ, or lower the percentile.", icon=":material/warning:")

    # ------------------------------------------------------------ answer
    top = data.curve_top(s, int(ss["n"]))
    curves = data.n_curves(s, top)
    ns = data.sim_grid(s, simulate)
    bar = LazyProgress("Simulating…")
    sim = data.sim_sweep(s, ns, bar)
    bar.empty()
    st.subheader("Answer")
    text = ""
    if math.isfinite(ans["approx"]):
        who = (f"{sim_answer(sim, ans['approx'], simulate)} replicas meet (simulated)"
               if sim is not None and math.isfinite(sim["fewest"])
               else f"eq 7 says {fmt_n(ans['approx'])} replicas meet")
        text = (f"\n\n**{who} p{s.percentile:g} ≤ {ss['rt_ms']:g} ms at λ = {s.lam:,.4g} "
                f"requests/s** (μ = {mu:,.4g} per replica, {s.law} service); the "
                f"approximation says n′ = {fmt_n(ans['approx'])}, one central M/M/n queue "
                f"{fmt_n(ans['mmn'])}.")
    st.markdown(results_markdown([
        ("Replicas, simulation (random retry)", sim_answer(sim, ans["approx"], simulate)),
        ("Replicas, approximation n′ (eq 7)", fmt_n(ans["approx"])),
        ("Replicas, M/M/n (central queue)", fmt_n(ans["mmn"])),
        ("Replicas for a steady state", fmt_n(ans["stable"]))]) + text)

    # ------------------------------------------------------------ trace plan
    trace = inputs.trace_input(s.lam)
    plan_in, plan = inputs.plan_inputs(trace), None
    try:
        plan = data.plan(s, plan_in)
    except ValueError as err:
        st.error(f"Autoscaling plan not available: {err}", icon=":material/warning:")
        plan_in = None
    if plan is not None:
        st.markdown(results_markdown([
            ("Cost, autoscaled", f"${plan.cost:,.2f} ({plan.gpu_hours:,.1f} GPU-h)"),
            ("Cost, static peak", f"${plan.static_cost:,.2f} ({plan.static_replicas} replicas)"),
            ("Saving", f"{100 * plan.savings:.1f} %"),
            ("Intervals missing the SLA", f"{plan.violation_intervals}"),
            ("Late requests", f"{plan.late_requests:,.0f}")])
            + f"\n\nTrace: {trace.label}; interval {trace.interval_s:g} s.")

    scenario = {"label": s.label, "key": (s, plan_in),
                "metrics": {"replicas (eq 7)": ans["approx"], "replicas (M/M/n)": ans["mmn"],
                            **({} if plan is None else {"cost autoscaled ($)": plan.cost,
                                                         "saving": plan.savings})},
                "curve": (tuple(curves["n"]), tuple(curves["within_eq7"]))}
    base = compare.controls(PAGE, scenario, action_row())
    if base is not None:
        st.caption(f"Baseline: {base['label']}")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)

    # ------------------------------------------------------------ views
    view = st.segmented_control("View", views.VIEWS, key="view", required=True)
    args = (s, top, simulate, plan_in)
    baseline = None if base is None else base["curve"]
    st.subheader("At a chosen number of replicas")
    at_replicas(args, baseline, int(ans["stable"]), trace.label)
    if view not in views.N_VIEWS:
        show_view(view, args, None, baseline)
    share.publish(inputs.FIELDS)


def show_view(view: str, args: tuple, n, baseline) -> None:
    if view == views.FORMULAS_VIEW:
        formulas_panel(views.FORMULAS, views.ERRATA, "sla", "Errata and limits of the approximation")
        return
    for name, fig in views.figures(view, *args, n=n, baseline=baseline):
        show_chart(fig, name)
    s = args[0]
    if view == views.RESPONSE_TIME and not data.at_replicas(s, n, args[2])["stable"]:
        st.info(f"The CDF needs more than λ/μ = {data.answers(s)['offered']:.4g} replicas; "
                "raise n.")
    if view == views.REPLICAS:
        st.caption(REPLICAS_NOTE)


@st.fragment
def at_replicas(args: tuple, baseline, n_stable: int, trace_label: str) -> None:
    """Replicas slider, P(R ≤ RT) at n (eq 7 and simulated), the report; the
    response-time CDF at n.  Moving n re-runs only this (``st.fragment``)."""
    ss, (s, top, simulate, _) = st.session_state, args
    n = inputs.replicas_slider(int(data.n_grid(s.lam, s.mu, top)[-1]))
    at = data.at_replicas(s, n, simulate)
    if not at["stable"]:
        st.error(f"Unstable: λ = {s.lam:,.4g} requests/s is at or beyond the capacity nμ = "
                 f"{at['capacity']:,.4g} requests/s of n = {n} replicas; at least "
                 f"{n_stable} are needed for a steady state.", icon=":material/warning:")
    results_table([
        (f"P(R ≤ RT) at n = {n}, eq 7",
         f"{100 * at['within_eq7']:.2f} %" if at["stable"] else "0 (unstable)"),
        (f"P(R ≤ RT) at n = {n}, simulated",
         "off" if at["within_sim"] is None else f"{100 * at['within_sim']:.2f} %"),
        ("Utilisation λ/(nμ)", f"{100 * at['utilisation']:.1f} %")])
    params = {"λ (requests/s)": f"{s.lam:.6g}", "μ (requests/s)": f"{s.mu:.6g}",
              "service": s.law,
              "d1, d2, Δ (ms)": f"{ss['d1_ms']:g}, {ss['d2_ms']:g}, {ss['delta_ms']:g}",
              "SLA": f"p{s.percentile:g} ≤ {ss['rt_ms']:g} ms", "n": n, "trace": trace_label}
    report_button("Autoscaling for a latency SLA", params,
                  lambda: [(nm, f, "") for v in views.CHART_VIEWS
                           for nm, f in views.figures(v, *args, n=n, baseline=baseline)],
                  views.FORMULAS, views.ERRATA, "autoscaling_sla_report.html")
    if ss["view"] in views.N_VIEWS:
        show_view(ss["view"], args, n, baseline)
    share.publish(inputs.FIELDS)


run()
