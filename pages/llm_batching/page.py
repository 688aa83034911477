"""LLM batching strategies (Yang et al. §IV-V): dynamic, capped, fixed, elastic, continuous."""
import streamlit as st

from pages.llm_batching import data, inputs, views
from ui import compare, share
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, results_table

CHAIN_NOTE = ("Exact chains are solved up to 80 % (uncapped) and 90 % (capped) of capacity while "
              "they need at most {} / {} states; beyond, and for elastic and continuous batching, "
              "turn on the simulation. Fixed batching's exact curve is the paper's M/D^b/1 model "
              "with the mean batch time H(b, E[L_b]); the simulation uses each batch's realised "
              "longest output (longer for heavy tails).")


def run():
    share.restore(inputs.FIELDS)
    st.title("LLM batching strategies")
    st.caption("Yang et al., *A queueing theoretic perspective on low-latency LLM inference with "
               "variable token length*. A batch of b requests whose longest output has l tokens "
               "takes H(b, l) = k1·b + k2 + k3·b·l + k4·l s (eq 18); requests arrive as a Poisson "
               "stream. Which batching strategy serves them fastest?")
    share.show_warnings()
    if st.session_state["lam"] > st.session_state["lam_max"]:
        st.session_state["lam"] = st.session_state["lam_max"]
    s = inputs.sidebar()
    try:
        lims = data.limits(s.law, s.k, s.b, s.b_max, s.kv, s.prompt)
    except ValueError as err:
        st.error(f"These inputs cannot be evaluated: {err}")
        share.publish(inputs.FIELDS)
        return
    coarse = data.coarse_grid(s.lam_max)
    if lims["dynamic"] < coarse[0]:
        st.warning(f"Uncapped dynamic batching is unstable at every load shown: with this token "
                   f"law the batch time outgrows the batch (capacity {lims['dynamic']:.3g} "
                   "requests/s). Cap the batch size (b_max).", icon=":material/block:")

    bar = LazyProgress("Solving…")
    exact = data.exact_curves(s.law, s.k, s.b, s.b_max, s.lam_max, lims, bar)
    sweep = (data.sim_sweep(s.law, s.k, s.b, s.b_max, s.kv, s.prompt, s.lam_max, lims, s.n_jobs,
                            bar) if s.simulate else None)
    bar.empty()
    best = data.best_per_load(exact, sweep)
    st.caption("Best strategy by load: " + ", ".join(
        f"λ = {c:.3g}: {name or 'none stable'}" for c, name in zip(coarse, best))
        + ("" if sweep is not None else " (exact strategies only; simulate to include elastic "
           "and continuous batching)."))

    view = st.segmented_control("View", views.VIEWS, key="view", required=True)
    st.subheader("Operating point")
    base = operating_point(s, lims)
    if view == views.FORMULAS_VIEW:
        formulas_panel(views.FORMULAS, views.ERRATA, "llm_batching")
    else:
        # Curves over the whole λ axis, without the current-λ marker (which moves without
        # re-drawing them): keyed on the Scenario and the pinned one only.
        pinned = None if base is None else base["scenario"]
        for name, fig in views.figures(view, s, None, pinned):
            show_chart(fig, name)
        if view == views.LATENCY:
            st.caption(CHAIN_NOTE.format(data.chain_states(None), data.chain_states(s.b_max)))
    share.publish(inputs.FIELDS)


@st.fragment
def operating_point(s: inputs.Scenario, lims: dict):
    """Current load λ, the answers at it, pin/report.  Moving λ re-runs only this;
    returns the pinned baseline (or None)."""
    lam = inputs.lam_slider(s.lam_max)
    labels, strategies = data.LABELS, data.STRATEGIES
    bad = [k for k in strategies if lam >= lims[k]]
    if bad:
        st.error("Unstable: at λ = " + f"{lam:.4g} requests/s " + "; ".join(
            f"{labels[k]} (capacity {lims[k]:.4g} requests/s)" for k in bad)
            + " cannot keep up; latency grows without bound.", icon=":material/warning:")
    bc = data.batch_curve(s.law, s.k)
    b_star, soj_star = data.best_fixed(lam, s.law, s.k)
    rec, soj_rec = data.recommended_b_max(lam, s.law, s.k)
    results_table([
        ("Optimal fixed b*", f"{b_star}" if b_star else "none stable"),
        ("Latency at b*", f"{soj_star:.3g} s" if b_star else "n/a"),
        ("Recommended b_max", f"{rec}" if rec else "none stable"),
        ("Latency at that b_max", f"{soj_rec:.3g} s" if rec else "n/a"),
        ("Load λ", f"{lam:.4g} req/s"),
        ("Throughput-optimal b", f"{bc.b_throughput_opt}"),
        ("Throughput there", f"{bc.peak_throughput_per_s:.3g} req/s"),
        ("Mean output E[N]", f"{bc.mean_tokens:.4g} tokens"),
    ] + [(f"{labels[k]}: capacity", f"{lims[k]:.4g} req/s "
          + ("(stable)" if lam < lims[k] else "(unstable here)")) for k in strategies])
    scenario = {"label": s.label, "scenario": s,
                "metrics": {"b*": float(b_star), "recommended b_max": float(rec),
                            "capped capacity (req/s)": lims["capped"]}}
    row = action_row()
    base = compare.controls(inputs.PAGE, scenario, row)
    pinned = None if base is None else base["scenario"]
    report_button("LLM batching strategies", s.parameters(lam),
                  lambda: [(n, f, "") for v in views.CHART_VIEWS
                           for n, f in views.figures(v, s, lam, pinned)],
                  views.FORMULAS, views.ERRATA, "llm_batching_report.html", where=row)
    if base is not None:
        st.caption(f"Baseline (fixed-b exact curve): {base['label']}")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)
    share.publish(inputs.FIELDS)
    return base


run()
