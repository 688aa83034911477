"""LLM max-output-token limits (Yang et al. §III, §V-B): delay, lost users, the best limit."""
import streamlit as st

from pages.token_limit import data, inputs, views
from pages.token_limit.panels import answer_panel, paper_table, profile_input
from pages.token_limit.inputs import Point
from ui import compare, share
from ui import token_law_input as tli
from ui.export import report_button, show_chart
from ui.memo import LazyProgress, with_spinner
from ui.panel import action_row, formulas_panel

PAGE = "tokens"
TITLE = "LLM token limits"


def sidebar() -> inputs.Scenario:
    with st.sidebar:
        profile = profile_input()
        st.divider()
        law = tli.draw()
        st.divider()
        st.radio("Load given as", inputs.LOAD_MODE.choices, key=inputs.LOAD_MODE.key,
                 horizontal=True, format_func={"rate": "requests/s", "rho": "ρ without a limit"}.get)
        if st.session_state[inputs.LOAD_MODE.key] == "rate":
            share.number_input(inputs.LAM, "Arrival rate λ (requests/s)", step=0.005, format="%.4f")
        else:
            share.slider(inputs.RHO, "Load without a limit ρ∞ = λ(aE[n] + c)", step=0.01)
        left, right = st.columns(2)
        with left:
            share.number_input(inputs.N_LO, "n_max from", step=100)
        with right:
            share.number_input(inputs.N_HI, "n_max to", step=100)
        share.slider(inputs.PATIENCE, "Patience τ (s)", step=1.0,
                     help="A user who would wait longer than τ leaves unserved.")
        st.radio("Impatience model", inputs.METHOD.choices, key=inputs.METHOD.key, horizontal=True,
                 format_func={"exact": "exact M/G/1+D", "interpolation": "De Kok-Tijms"}.get)
        with st.expander("Objectives (Fig 4d)"):
            share.slider(inputs.THETA_V1, "θ for V1", step=0.0001, format="%.4f")
            share.slider(inputs.THETA_V2, "θ for V2", step=0.0001, format="%.4f")
            share.number_input(inputs.LOSS, "Lost-user cost ℓ", step=0.5)
            st.toggle("V2 with the printed sign (+(1 − θ)E[W])", key=inputs.PRINTED.key)
        with st.expander("Paper scenarios (§V-B)"):
            st.button("Fig 4a: λ = 1/40", key="paper_a",
                      on_click=lambda: st.session_state.update(inputs.PAPER_A))
            st.button("Figs 4b-d: λ = 1/25, τ = 60 s", key="paper_bd",
                      on_click=lambda: st.session_state.update(inputs.PAPER_BD))
        st.toggle("Show simulation points", key=inputs.SIMULATE.key,
                  help=f"{data.SIM_JOBS:,} simulated requests per point (cached).")
        st.radio("Chart image format", inputs.IMAGE.choices, key=inputs.IMAGE.key, horizontal=True)
    return inputs.scenario(profile, law)


def show_view(view: str, scenario: inputs.Scenario, point: Point) -> None:
    """The charts of one view with their captions (Formulas and Paper vs model: text)."""
    profile = scenario.profile
    if view == views.FORMULAS:
        formulas_panel(views.FORMULA_TEX, views.ERRATA, "token_limit", "Errata and remarks on the paper")
        return
    if view == views.PAPER:
        paper_table(profile.a_s, profile.c_s)
        return
    if view == views.FIT and profile.table is None:
        st.info(f"Typed profile: S = {profile.a_s:.5g}·n + {profile.c_s:.4g} s "
                "(no measurements to show).")
    shown = with_spinner("Searching the best limits…" if view == views.OPTIMAL else "Drawing…",
                         views.figures, view, scenario, point)
    for name, fig in shown:
        show_chart(fig, name)
    if view == views.OPTIMAL:
        b1, b2 = views.best(scenario)
        st.caption(f"V1 is best at {b1.n_max:,} tokens (E[W] = {b1.mean_wait:.3g} s); "
                   f"V2 at {b2.n_max:,} tokens (E[W_q] = {b2.mean_wait:.3g} s, "
                   f"{100 * b2.loss_fraction:.1f} % lost). Both searched over every integer "
                   "limit near the optimum; the curves are on the n_max grid.")


@st.fragment
def chosen_limit(scenario: inputs.Scenario, free) -> inputs.Scenario | None:
    """Limit slider, the answer at that limit, pin/report; charts that mark the limit.

    Moving the limit re-runs only this (``st.fragment``); returns the pinned baseline."""
    lo, hi = scenario.grid[0], scenario.grid[-1]
    now = int(st.session_state[inputs.LIMIT.key])
    st.slider("Chosen token limit n_max", min(int(lo), now), max(int(hi), now),
              key=inputs.LIMIT.key, step=1,
              help="The limit the answer above is for; the n_max range of the curves is set "
                   "in the sidebar.")
    limit = int(st.session_state[inputs.LIMIT.key])
    p = data.point(*scenario.model, limit, scenario.patience_s, scenario.method)
    answer_panel(p, free, scenario)
    cur = data.curves(*scenario.model, scenario.patience_s, scenario.grid)
    current = {"label": scenario.label, "scenario": scenario,
               "metrics": {"E[W] at limit (s)": p.mean_wait, "answers clipped": p.clipped_share,
                           "users lost": p.loss_fraction, "E[W_qs] (s)": p.mean_wait_served},
               "curve": (cur.n_max, cur.mean_wait)}
    row = action_row()
    base = compare.controls(PAGE, current, row)
    baseline = None if base is None else base["scenario"]
    prof = scenario.profile
    params = {"profile": prof.name, "a (s/token)": f"{prof.a_s:.6g}", "c (s)": f"{prof.c_s:.5g}",
              "token law": scenario.law.label, "λ (requests/s)": f"{scenario.lam_per_s:.5g}",
              "limit": limit, "patience τ (s)": scenario.patience_s,
              "impatience model": scenario.method, "θ (V1)": scenario.theta_v1,
              "θ (V2)": scenario.theta_v2, "ℓ": scenario.loss_cost}
    rows = data.paper(prof.a_s, prof.c_s)
    report_button(TITLE, params, lambda: [
        (n, f, "") for v in views.CHART_VIEWS
        for n, f in views.figures(v, scenario, Point.for_view(v, limit, baseline))],
        views.FORMULA_TEX,
        views.ERRATA + [f"{r.quantity}: paper {r.paper:g}, model {r.model:.4g} {r.unit} "
                        f"({r.note})" for r in rows],
        "llm_token_limits_report.html", where=row)
    if base is not None:
        st.caption(f"Baseline: {base['label']}")
        st.dataframe(compare.difference_table(current, base), hide_index=True)
    view = st.session_state[inputs.VIEW.key]
    if view in views.LIMIT_VIEWS:
        show_view(view, scenario, Point.for_view(view, limit, baseline))
    share.publish(inputs.FIELDS)
    return baseline


def run() -> None:
    share.restore(inputs.FIELDS)
    st.title(TITLE)
    st.caption("Yang, Jiao & Xu, *A queueing theoretic perspective on low-latency LLM inference "
               "with variable token length*, §III and §V-B. Requests arrive as a Poisson stream "
               "at one LLM server (FCFS); a request asking n output tokens gets min(n, n_max) "
               "and takes S = a·min(n, n_max) + c seconds. Impatient users leave after τ.")
    share.show_warnings()
    scenario = sidebar()
    s = st.session_state
    if s[inputs.N_LO.key] >= s[inputs.N_HI.key]:
        st.warning(f"n_max range given as {s[inputs.N_LO.key]} to {s[inputs.N_HI.key]}: drawn "
                   f"from {scenario.n_range[0]} to {scenario.n_range[1]}.")
    summary = data.law_summary(scenario.law)
    free = None
    if summary.summable:
        free = data.point(*scenario.model, None, scenario.patience_s, scenario.method)
    else:
        st.info(f"This law reaches beyond {data.MAX_NO_LIMIT_TOKENS:,} tokens (its 1 − 1e-15 "
                "quantile): no-limit comparisons are left out; set a limit.")
    prof = scenario.profile
    st.caption(f"λ = {scenario.lam_per_s:.4g} requests/s, S = {prof.a_s:.5g}·n + {prof.c_s:.4g} s "
               f"({prof.name}), token law {scenario.law.label}: mean "
               f"{summary.mean_tokens:.0f} tokens without a limit.")
    if scenario.simulate:
        bar = LazyProgress("Simulating…")
        data.sim_sweep(*scenario.model, scenario.patience_s, data.sim_limits(*scenario.n_range),
                       bar)
        bar.empty()
    view = st.segmented_control("View", views.VIEWS, key=inputs.VIEW.key, required=True)
    st.subheader("Answer at the chosen limit")
    baseline = chosen_limit(scenario, free)
    if view not in views.LIMIT_VIEWS:
        show_view(view, scenario, Point.for_view(view, None, baseline))
    share.publish(inputs.FIELDS)


run()
