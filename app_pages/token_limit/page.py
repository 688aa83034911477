"""LLM max-output-token limits (Yang et al. §III, §V-B): delay, lost users, the best limit."""
import streamlit as st

from app_pages.token_limit import answer, data, inputs, views
from app_pages.token_limit.panels import answer_panel, paper_table, profile_input
from app_pages.token_limit.inputs import Point
from ui import arrivals_input, compare, share
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
                 horizontal=True, format_func={"rate": "requests/s", "rho": "share of capacity"}.get)
        if st.session_state[inputs.LOAD_MODE.key] == "rate":
            share.number_input(inputs.LAM, "Arrival rate λ (requests/s)", step=0.005, format="%.4f")
        else:
            share.slider(inputs.RHO, "Load without a limit (share of capacity)", step=0.01,
                         help="ρ∞ = λ(aE[n] + c): the arrival rate times the mean service "
                              "time without a limit.")
        arrivals = arrivals_input.draw(inputs.ARRIVALS_UPLOAD)
        st.divider()
        left, right = st.columns(2)
        with left:
            share.number_input(inputs.N_LO, "Limits drawn from (tokens)", step=100)
        with right:
            share.number_input(inputs.N_HI, "to (tokens)", step=100)
        share.slider(inputs.PATIENCE, "Users give up after waiting (s)", step=1.0,
                     help="Patience τ: a user who would wait longer than τ leaves unserved.")
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
    return inputs.scenario(profile, law, arrivals)


def show_view(view: str, scenario: inputs.Scenario, point: Point, marker=None,
              part=slice(None)) -> None:
    """The charts ``part`` of one view with their captions (Formulas and Paper vs model:
    text); ``marker`` on the first chart drawn."""
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
    for i, (name, fig) in enumerate(shown[part]):
        show_chart(fig, name, marker=None if i else marker)
    if view == views.OPTIMAL:
        st.caption(share.inert(views.optimum_caption(scenario)),
                   help="V1: eq 10 with E[W]; V2: eq 11 with E[W_q] and π(τ).")


@st.fragment
def chosen_limit(scenario: inputs.Scenario, free) -> inputs.Scenario | None:
    """Limit slider, the answer at that limit, pin/report; charts that mark the limit.

    Moving the limit re-runs only this (``st.fragment``); returns the pinned baseline."""
    lo, hi = scenario.grid[0], scenario.grid[-1]
    share.slider(inputs.LIMIT, "Chosen token limit (tokens)", min_value=int(lo),
                 max_value=int(hi), step=1,
                 help="The limit the answer above is for; the n_max range of the curves is set "
                      "in the sidebar.")
    limit = int(st.session_state[inputs.LIMIT.key])
    p = data.point(*scenario.model, limit, scenario.patience_s, scenario.method)
    rows = answer_panel(p, free, scenario)
    cur = data.curves(*scenario.model, scenario.patience_s, scenario.grid)
    current = {"label": scenario.label, "scenario": scenario, "metrics": answer.metrics(p),
               "curve": (cur.n_max, cur.mean_wait_s)}
    row = action_row()
    base = compare.controls(PAGE, current, row)
    baseline = None if base is None else base["scenario"]
    prof = scenario.profile
    report_button(TITLE, answer.parameters(scenario, limit),
                  lambda: answer.report_sections(scenario, limit, baseline), views.FORMULA_TEX,
                  views.ERRATA + [f"{r.quantity}: paper {r.paper:g}, model {r.model:.4g} "
                                  f"{r.unit} ({r.note})" for r in data.paper(prof.a_s, prof.c_s)],
                  "llm_token_limits_report.html", where=row, answer=rows,
                  scenario=answer.scenario_sentence(scenario, limit), compared=(current, base))
    if base is not None:
        st.caption(f"Baseline: {base['label']}")
        st.dataframe(compare.difference_table(current, base), hide_index=True)
    view = st.session_state[inputs.VIEW.key]
    if view in views.LIMIT_VIEWS:
        show_view(view, scenario, Point.for_view(view, limit, baseline))
    elif view == views.DELAY:       # its first chart: memoised, the operating point moves
        show_view(view, scenario, Point.for_view(view, limit, baseline), views.marker(p),
                  slice(1))
    share.publish(inputs.FIELDS)
    return baseline


def run() -> None:
    share.restore(inputs.FIELDS)
    st.title(TITLE)
    st.caption("Requests arrive at random at one LLM server and are answered in turn; an "
               "answer is cut at the token limit, so a request asking n output tokens takes "
               "a·min(n, limit) + c seconds. Users who wait longer than their patience give "
               "up. A lower limit clips more answers and shortens the wait. Model: Yang, Jiao "
               "& Xu, *A queueing theoretic perspective on low-latency LLM inference with "
               "variable token length*, §III and §V-B.")
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
        st.info(f"This law reaches beyond {data.MAX_NO_LIMIT_TOKENS:,} tokens (all but one "
                "request in a quadrillion ask for less): no-limit comparisons are left out; "
                "set a limit.")
    prof = scenario.profile
    st.caption(f"λ = {scenario.lam_per_s:.4g} requests/s, S = {prof.a_s:.5g}·n + {prof.c_s:.4g} s "
               f"({prof.name}), token law {scenario.law.label}: mean "
               f"{summary.mean_tokens:.0f} tokens without a limit; {scenario.arrivals.label}.")
    if not scenario.poisson:
        st.caption(share.inert(views.arrivals_note(scenario)))
    if scenario.simulate:
        bar = LazyProgress("Simulating…")
        views.sweep(scenario, bar)
        bar.empty()
    view = st.segmented_control("View", views.VIEWS, key=inputs.VIEW.key, required=True)
    st.subheader("Answer at the chosen limit")
    baseline = chosen_limit(scenario, free)
    if view not in views.LIMIT_VIEWS:
        show_view(view, scenario, Point.for_view(view, None, baseline),
                  part=slice(1, None) if view == views.DELAY else slice(None))
    share.publish(inputs.FIELDS)


run()
