"""LLM serving: one vLLM-style server (continuous batching, chunked prefill, paged KV
cache), TTFT and TPOT against load, the largest load meeting a latency target."""
import streamlit as st

from app_pages.llm_serving import answer, data, inputs, measured_view, views
from ui import compare, share
from ui.export import operating_marker, report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_table

ABOUT = ("Requests with prompts and replies of varying length arrive at one LLM server that "
         "runs them step by step, as vLLM does: how long until the first token (TTFT), how "
         "fast the next tokens follow (TPOT), and up to what load does it keep a latency "
         "target?")
ABOUT_HELP = ("Each scheduler step computes some prompt tokens and one token of every "
              "decoding request, and takes a time set by the step cost (Formulas view). "
              "Simulated: the server step by step (a few thousand requests per load, 95 % "
              "confidence intervals of the means); beside it, an approximation without "
              "simulation (means, Poisson arrivals). Notation and rules: the Formulas view; "
              "derivations: docs/models/llm_serving.md.")


def run():
    inputs.prefill_from_link()
    share.restore(inputs.FIELDS)
    st.title("LLM serving")
    st.caption(ABOUT, help=ABOUT_HELP)
    share.show_warnings()
    s, slo, why = inputs.sidebar()
    if s is None:
        st.error(f"These settings cannot be used: {why}", icon=":material/error:")
        share.publish(inputs.FIELDS)
        return
    bar = LazyProgress("Simulating…")
    try:
        cap = data.capacity(s)
        if not 0 < cap.rate_per_s < float("inf"):
            raise ValueError("every step takes no time with this step cost, so the load has "
                             "no limit: give the step cost some time (a base of a few ms)")
        found = data.slo_rate(s, slo, bar)
    except ValueError as err:
        bar.empty()
        st.error(f"These requests cannot be served: {err}", icon=":material/error:")
        share.publish(inputs.FIELDS)
        return
    bar.empty()
    st.caption(share.inert(
        f"The server carries at most {answer.rate(cap.rate_per_s)}; the limit that binds is "
        f"{answer.binding(cap)}. Workload: {s.workload.label}. Arrivals: {s.arrivals_words}."))
    view = st.segmented_control("View", views.VIEWS, key="view", required=True)
    operating_point(s, slo, cap, found, view)
    share.publish(inputs.FIELDS)


@st.fragment
def operating_point(s, slo, cap, found, view):
    """The what-if load, the answers there, pin/report and the charts.  Moving the load
    re-runs only this."""
    lam = inputs.rate_slider(data.axis_top(cap.rate_per_s))
    unstable = lam >= cap.rate_per_s
    if unstable:
        st.error(answer.unstable_message(lam, cap), icon=":material/warning:")
    try:
        run = None if unstable else data.at_load(s, lam)
    except ValueError as err:
        st.error(f"These requests cannot be served: {err}", icon=":material/error:")
        share.publish(inputs.FIELDS)
        return
    rows = answer.rows(lam, cap, run, slo, found, s.arrivals.label)
    results_table(rows, per_row=5)
    if run is not None:
        st.markdown(answer.comparison(run, data.approximation_at(s, lam), run.n_requests
                                      + run.warmup_requests))
        if run.preempted_fraction > 0:
            st.caption(f"The KV cache runs out at this load: "
                       f"{run.preempted_fraction:.1%} of requests were preempted (their KV "
                       "blocks given back, their tokens computed again later).")
    scenario = {"label": s.label, "scenario": s, "metrics": answer.metrics(lam, cap, run, found)}
    row = action_row()
    base = compare.controls(inputs.PAGE, scenario, row)
    pinned = None if base is None else base["scenario"]
    report_button("LLM serving", s.parameters(lam, slo),
                  lambda: [(views.TITLES[n], f, "") for n, f in
                           (*views.latency_figures(s, slo, pinned), *views.timeline(s, lam))],
                  views.FORMULAS, views.NOTES, "llm_serving_report.html", where=row,
                  answer=rows, scenario=s.sentence(lam, slo), compared=(scenario, base))
    if base is not None:
        st.caption(share.inert(f"Baseline: {base['label']} (its simulated p99 dashed on the "
                               "charts)"))
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)
    if view == views.LATENCY:
        for name, fig in views.latency_figures(s, slo, pinned):
            marker = None
            if run is not None:
                value = getattr(run, name.split("_")[0] + "_ms").p99
                marker = operating_marker(lam, value, f"now: p99 {answer.ms(value)}")
            show_chart(fig, name, marker=marker)
    elif view == views.TIMELINE:
        for name, fig in views.timeline(s, lam):
            show_chart(fig, name)
        st.caption("Requests running and waiting, KV cache use and preemptions, step by step, "
                   f"in one run of {data.N_AT:,} requests at this load (at most its first "
                   f"{data.TIMELINE_STEPS:,} steps)"
                   + (" (past capacity: the queue keeps growing)." if unstable else "."))
    elif view == views.MEASURED:
        measured_view.draw(s)
    else:
        formulas_panel(views.FORMULAS, views.NOTES, "llm_serving", "Scheduler rules, in short")
        st.markdown("**Notation**\n\n" + views.NOTATION)
    share.publish(inputs.FIELDS)


run()
