"""Autoscaling for a percentile-latency SLA (Swayam appendix): replicas, trace, cost."""
import math

import streamlit as st

from app_pages.sla import data, inputs, results, traffic, views
from ui import compare, share
from ui.export import plain_number, report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_markdown, results_table

PAGE = "sla"
REPLICAS_NOTE = ("Shaded: too few replicas to keep up with the load. Dotted purple: the "
                 "approximation with the busy probability of a retry taken from the M/M/n "
                 "busy-count chain (shown for c·μ ≤ 50 and n ≤ 400). The central queue (M/M/n) "
                 "assumes exponential service and no dispatch delays. Shares below one in a "
                 "trillion are beyond what these methods resolve and are not drawn.")


def run():
    share.restore(inputs.FIELDS)
    st.title("Autoscaling for a latency SLA")
    st.caption("Requests go to a random replica and try another one when it is busy. How "
               "many replicas keep the chosen share of requests under the target time (by "
               "the paper's approximation, by simulation, and by one central queue), and what "
               "autoscaling over a day of load saves against a static fleet sized for the "
               "peak. Paper notation and equations: the Formulas view.")
    share.show_warnings()
    arrivals = inputs.sidebar()
    ss = st.session_state
    mu = inputs.service_rate()
    if mu <= 0:
        st.error(f"A GPU cannot keep its mean latency at {ss['gpu_target_ms']:g} ms under any "
                 "load: a lone request already takes α + τ0, and load adds to it. Raise the "
                 "per-GPU target.", icon=":material/warning:")
        share.publish(inputs.FIELDS)
        return
    s, simulate = inputs.scenario(mu, arrivals), bool(ss["simulate"])
    ans = data.answers(s)
    if not math.isfinite(ans["approx"]):
        st.error(f"No number of replicas keeps {s.percentile:g} % of requests within "
                 f"{ss['rt_ms']:g} ms: even an idle replica is too slow (the trip to it plus "
                 f"the service time's {s.percentile:g}th percentile). Raise the target or the "
                 "service rate, or lower the percentile.", icon=":material/warning:")

    # ------------------------------------------------------------ answer
    top = data.curve_top(s)
    curves = data.n_curves(s, top)
    ns = data.sim_grid(s, simulate)
    bar = LazyProgress("Simulating…")
    sim = data.sim_sweep(s, ns, bar)
    bar.empty()
    st.subheader("Answer")
    text, rows = "", results.answer_rows(ans, sim, simulate) + [("Arrivals", s.arrivals.label)]
    if math.isfinite(ans["approx"]):
        who = (results.keep(results.sim_answer(sim, ans['approx'], simulate))
               if sim is not None and math.isfinite(sim["fewest"])
               else f"the approximation says {results.keep(results.fmt_n(ans['approx']))}")
        poisson = "" if s.arrivals.is_poisson else " (both assume Poisson arrivals)"
        text = (f"\n\n**{who} {s.percentile:g} % of requests within {ss['rt_ms']:g} ms at "
                f"{plain_number(s.lam, 4)} requests/s** ({s.arrivals.label}; "
                f"{plain_number(mu, 4)} requests/s per "
                f"replica, {s.law} service times); the paper's approximation says "
                f"{results.fmt_n(ans['approx'])}, one central queue {results.fmt_n(ans['mmn'])}"
                f"{poisson}.")
    st.markdown(results_markdown(rows) + text,
                help="Approximation: the fewest n with P(R ≤ RT) ≥ p by Swayam's eq 7 (n′). "
                     "One central queue: M/M/n with Erlang C. Simulation: random dispatch "
                     "with retries. To keep up: ⌊λ/μ⌋ + 1 (utilization λ/(nμ) below 1).")

    # ------------------------------------------------------------ trace plan
    trace = inputs.trace_input(s.lam)
    plan_in, plan = inputs.plan_inputs(trace), None
    try:
        plan = data.plan(s, plan_in)
    except ValueError as err:
        st.error(f"Autoscaling plan not available: {err}", icon=":material/warning:")
        plan_in = None
    if plan is not None:
        cost, misses = results.plan_rows(plan, s.percentile)
        rows = rows + [("Load of the trace", results.trace_load(plan))] + cost + misses
        if ss[inputs.TRACE.key] == "custom":
            loads_note(plan, s.lam)
        st.markdown(results_markdown(cost) + "\n\n" + results_markdown(misses, per_row=4)
                    + f"\n\nTrace: {trace.label}; {results.trace_load(plan)}; interval "
                    f"{trace.interval_s:g} s.")

    scenario = {"label": s.label, "key": (s, plan_in),
                "metrics": {"replicas needed, approximation": ans["approx"],
                            "replicas needed, one central queue": ans["mmn"],
                            **({} if plan is None else {"cost autoscaled ($)": plan.cost,
                                                         "saving": plan.savings})},
                "curve": data.resolved_curve(curves["n"], curves["miss_eq7"])}
    base = compare.controls(PAGE, scenario, action_row())
    if base is not None:
        st.caption(f"Baseline: {base['label']}")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)

    # ------------------------------------------------------------ views
    view = st.segmented_control("View", views.VIEWS, key="view", required=True)
    args = (s, top, simulate, plan_in)
    baseline = None if base is None else base["curve"]
    st.subheader("At a chosen number of replicas")
    at_replicas(args, baseline, int(ans["stable"]), (tuple(rows), trace.label, (scenario, base)))
    if view not in views.N_VIEWS:
        show_view(view, args, None, baseline)
    share.publish(inputs.FIELDS)


def loads_note(plan, lam: float) -> None:
    """A trace of one's own whose mean is not the sidebar's rate: say which load each
    answer is for, and offer to answer the replicas for the trace's mean."""
    differ = results.load_mismatch(plan, lam)
    if differ:
        st.warning(differ, icon=":material/compare_arrows:")
        st.button(f"Answer the replicas for the trace's mean, "
                  f"{results.format_number(plan.mean_rate_per_s)} requests/s",
                  key="sla_rate_from_trace", on_click=inputs.set_rate,
                  args=(plan.mean_rate_per_s,), icon=":material/sync_alt:")


def show_traffic(s) -> None:
    """The "Poisson vs this traffic" view: replicas needed under each arrival process."""
    bar = LazyProgress("Simulating…")
    found = traffic.comparison(s, traffic.choices(s), bar)
    (name, fig), = views.traffic_figures(s, bar)
    bar.empty()
    st.dataframe(traffic.rows(s, found), hide_index=True)
    show_chart(fig, name)
    st.caption(f"Every process at {plain_number(s.lam, 4)} requests/s on average (the MMPP-2 "
               "and the "
               "replay time-scaled to it), random dispatch with retries simulated at each "
               "replica count (the page's grid around the approximation's answer, then "
               f"upwards in doubling steps and by bisection, up to {data.SIM_MAX_N}). Upload "
               "a trace in the Arrivals input to add its replay.")


def show_view(view: str, args: tuple, n, baseline) -> None:
    if view == views.FORMULAS_VIEW:
        formulas_panel(views.FORMULAS, views.ERRATA, "sla", "Errata and limits of the approximation")
        return
    if view == views.TRAFFIC:
        show_traffic(args[0])
        return
    first = int(view == views.REPLICAS)      # its first chart is in the fragment
    for name, fig in views.figures(view, *args, n=n, baseline=baseline)[first:]:
        show_chart(fig, name)
    s = args[0]
    if view == views.RESPONSE_TIME and not data.at_replicas(s, n, args[2])["stable"]:
        st.info(f"Too few replicas to keep up: more than "
                f"{plain_number(data.answers(s)['offered'], 4)} are "
                "needed; raise the replicas.")
    if view == views.REPLICAS:
        st.caption(REPLICAS_NOTE + ("" if s.arrivals.is_poisson else
                                    f" Simulation under {s.arrivals.label}; the approximations "
                                    "and the central queue assume Poisson arrivals."))


@st.fragment
def at_replicas(args: tuple, baseline, n_stable: int, page: tuple) -> None:
    """Replicas slider, the share of late requests at n (approximation and simulated),
    the report; the response-time distribution at n.  Moving n re-runs only this
    (``st.fragment``).  ``page``: (the page's result rows, the trace's label, (the
    scenario, the pinned baseline) as ``ui.compare`` keeps them)."""
    ss, (s, top, simulate, _) = st.session_state, args
    n = inputs.replicas_slider(int(data.n_grid(s, top)[-1]))
    at = data.at_replicas(s, n, simulate)
    if not at["stable"]:
        st.error(f"Too few replicas: {plain_number(s.lam, 4)} requests/s is at or beyond what "
                 f"{n:,} replicas can serve ({plain_number(at['capacity_per_s'], 4)} requests/s); at "
                 f"least {n_stable:,} are needed to keep up.", icon=":material/warning:")
    rows = results.at_rows(at, n, ss["rt_ms"]) + traffic.wait_rows(s, n, simulate)
    results_table(rows)
    report_button("Autoscaling for a latency SLA", results.parameters(s, ss, n, page[1]),
                  lambda: [(views.REPORT_TITLES[nm], f, "") for v in views.report_views(s)
                           for nm, f in views.figures(v, *args, n=n, baseline=baseline)],
                  views.FORMULAS, views.ERRATA, "autoscaling_sla_report.html",
                  answer=list(page[0]) + rows,
                  scenario=results.scenario_sentence(s, ss["rt_ms"]), compared=page[2])
    if ss["view"] == views.REPLICAS:         # memoised on the scenario; only the point moves
        show_chart(views.figures(views.REPLICAS, *args, baseline=baseline)[0][1],
                   "sla_vs_replicas", marker=results.marker(at, n))
    if ss["view"] in views.N_VIEWS:
        show_view(ss["view"], args, n, baseline)
    share.publish(inputs.FIELDS)


run()
