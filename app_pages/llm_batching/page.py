"""LLM batching strategies (Yang et al. §IV-V): dynamic, capped, fixed, elastic, continuous."""
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from app_pages.llm_batching import answer, data, inputs, views
from ui import compare, share
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_table

CHAIN_NOTE = ("How each curve is known: fixed batching exactly (the paper's M/D^b/1 model with "
              "the mean batch time H(b, E[L_b])); dynamic batching by its exact departure chain "
              "up to 80 % (no cap) and 90 % (capped) of capacity, while it needs at most {} / {} "
              "states; elastic and continuous batching only by simulation: "
              + data.CONTINUOUS_HOW + ". Where a curve ends, the chart says why.")
SERVING_PAGE = "app_pages/llm_serving/page.py"
PAPERS_WORLD = ("The defaults are the paper's world (Yang et al.: LLaMA-2-7b on one A100, replies "
                "of about 1,400 tokens, a few requests a minute, latencies of minutes); today's "
                "servers (vLLM, SGLang, TensorRT-LLM) run continuous batching, which the LLM "
                "serving page models step by step.")


def serving_link() -> None:
    """Where continuous batching's simulator has a page of its own: a link to it (a page
    run on its own, outside the app's navigation, names it instead)."""
    label = ("LLM serving: the simulator continuous batching runs on, with chunked prefill, "
             "prefix caching, TTFT and TPOT")
    try:
        st.page_link(SERVING_PAGE, label=label, icon=":material/dynamic_feed:")
    except StreamlitPageNotFoundError:
        st.caption(f"See the LLM serving page ({label}).")


def run():
    share.restore(inputs.FIELDS)
    st.title("LLM batching strategies")
    st.caption("Requests with outputs of varying length arrive at random; the GPU serves them in "
               "batches, and a batch runs as long as its longest output. Which way of batching "
               "keeps the mean latency lowest, and up to what load does each keep up? "
               + PAPERS_WORLD,
               help="Yang et al., *A queueing theoretic perspective on low-latency LLM inference "
                    "with variable token length*: a batch of b requests whose longest output has "
                    "l tokens takes H(b, l) = k1·b + k2 + k3·b·l + k4·l s (eq 18); Poisson "
                    "arrivals (the simulations take any arrival process: Arrivals, in the "
                    "sidebar).")
    share.show_warnings()
    s = inputs.sidebar()
    try:
        lims = data.limits(s.times, s.b, s.b_max, s.kv, s.prompt)
    except ValueError as err:
        st.error(f"These inputs cannot be evaluated: {err}")
        share.publish(inputs.FIELDS)
        return
    bar = LazyProgress("Solving…")
    smap = views.strategy_map(s, bar)
    bar.empty()
    if lims["dynamic"] < smap.lam_per_s[0]:
        others = ", ".join(smap.labels[k] for k in smap.stable(smap.lam_per_s[0])) or "none"
        st.warning(f"Dynamic batching without a cap cannot keep up at any load shown: with this "
                   f"token law the batch time outgrows the batch (capacity "
                   f"{answer.rate(lims['dynamic'])}). Cap the batch size (b_max); "
                   f"{others} keep{'s' if others == 'none' else ''} up at the lowest load shown.",
                   icon=":material/block:")
    st.caption(views.verdict_caption(s, smap))
    if not s.poisson:
        st.caption(share.inert(views.arrivals_note(s)))

    view = st.segmented_control("View", views.VIEWS, key="view", required=True)
    st.subheader("Operating point")
    base = operating_point(s, lims)
    if view == views.FORMULAS_VIEW:
        formulas_panel(views.FORMULAS, views.ERRATA, "llm_batching")
    else:
        # Curves over the whole λ axis, keyed on the Scenario and the pinned one only; the
        # Latency view's first chart is in the fragment (its current-λ point moves there).
        pinned = None if base is None else base["scenario"]
        for name, fig in views.figures(view, s, None, pinned)[int(view == views.LATENCY):]:
            show_chart(fig, name)
        if view == views.LATENCY:
            st.caption(CHAIN_NOTE.format(data.chain_states(None), data.chain_states(s.b_max))
                       + f" Arrivals: {s.arrivals_words}.")
    if view in (views.LATENCY, views.FORMULAS_VIEW):
        serving_link()
    share.publish(inputs.FIELDS)


@st.fragment
def operating_point(s: inputs.Scenario, lims: dict):
    """Current load λ, the answers at it, pin/report.  Moving λ re-runs only this;
    returns the pinned baseline (or None)."""
    lam = inputs.lam_slider(s.lam_max)
    labels, strategies = data.LABELS, data.STRATEGIES
    ok = views.strategy_map(s).stable(lam)
    bad = [k for k in strategies if k not in ok]
    if bad:
        st.error(f"At {answer.rate(lam)} " + "; ".join(
            f"{labels[k]} (capacity {answer.rate(lims[k])})" for k in bad)
            + " cannot keep up: latency grows without bound.", icon=":material/warning:")
    rows = answer.rows(s, lam, lims, ok)
    results_table(rows)
    fixed = data.fixed_latency(lam, s.times, s.b)
    scenario = {"label": s.label, "scenario": s, "metrics": answer.metrics(s, lam, lims)}
    row = action_row()
    base = compare.controls(inputs.PAGE, scenario, row)
    pinned = None if base is None else base["scenario"]
    report_button("LLM batching strategies", s.parameters(lam),
                  lambda: [(views.TITLES[n], f, "") for v in views.CHART_VIEWS
                           for n, f in views.figures(v, s, lam, pinned)],
                  views.FORMULAS, views.ERRATA, "llm_batching_report.html", where=row,
                  answer=rows, scenario=s.sentence(lam), compared=(scenario, base))
    if base is not None:
        st.caption(f"Baseline: {base['label']} (its fixed-batch curve on the chart, same "
                   "axes: requests/s and s)")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)
    if st.session_state["view"] == views.LATENCY:   # memoised; only the operating point moves
        show_chart(views.figures(views.LATENCY, s, None, pinned)[0][1], "mean_latency",
                   marker=views.marker(s, lam, fixed))
    share.publish(inputs.FIELDS)
    return base


run()
