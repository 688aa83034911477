"""LLM max-output-token limits (Yang et al. §III, §V-B): delay, lost users, the best limit."""
import numpy as np
import pandas as pd
import streamlit as st

from ui import compare, share
from ui import figures_tokens as figs
from ui import tokens_data as data
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, memo_figures, results_markdown
from ui.tokens_uploads import MAX_TOKEN_ROWS, parse_token_counts
from ui.uploads import MAX_UPLOAD_BYTES
from engine.token_limit import objective_v1, objective_v2

PAGE = "tokens"
TYPED = "typed"
PRESETS = tuple(data.preset_table())
_LAST_LAW = "_tokens_last_empirical"
FIELDS = [
    share.Field("preset", PRESETS[0], str, choices=PRESETS + (TYPED,)),
    share.Field("input_term", False, bool),
    share.Field("prompt_tokens", 128, int, 1, 32768),
    share.Field("a_s", 0.023087, float, 1e-4, 1.0),
    share.Field("c_s", 0.49, float, 0.0, 60.0),
    share.Field("load_mode", "rate", str, choices=("rate", "rho")),
    share.Field("lam_per_s", 0.025, float, 1e-4, 100.0),
    share.Field("rho", 0.82, float, 0.01, 3.0),
    share.Field("law", "lognormal", str, choices=("lognormal", "uniform", "truncnorm", "empirical")),
    share.Field("log_mean", 7.0, float, 2.0, 10.0),
    share.Field("log_sd", 0.7, float, 0.05, 2.0),
    share.Field("uni_low", 0, int, 0, 100_000),
    share.Field("uni_high", 1000, int, 1, 100_000),
    share.Field("tn_mean", 500.0, float, 1.0, 100_000.0),
    share.Field("tn_sd", 200.0, float, 1.0, 100_000.0),
    share.Field("n_lo", 100, int, 1, 100_000),
    share.Field("n_hi", 4000, int, 2, 100_000),
    share.Field("limit", 1600, int, 1, 100_000),
    share.Field("patience_s", 60.0, float, 1.0, 600.0),
    share.Field("method", "exact", str, choices=("exact", "interpolation")),
    share.Field("theta_v1", 119 / 120, float, 0.5, 1.0),
    share.Field("theta_v2", 0.95, float, 0.5, 1.0),
    share.Field("loss_cost", 4.0, float, 0.0, 100.0),
    share.Field("printed_sign", False, bool),
    share.Field("simulate", True, bool),
    share.Field("view", "Delay & loss", str, choices=(
        "Delay & loss", "Optimal limit", "Token law", "Latency fit", "Paper vs model",
        "Formulas")),
    share.Field("img", "png", str, choices=("png", "svg")),
]
VIEWS = FIELDS[-2].choices
LAW_NAMES = {"lognormal": "lognormal", "uniform": "uniform", "truncnorm": "truncated normal",
             "empirical": "empirical (your token counts)"}
FORMULAS = [
    ("S = a\\,\\min(n, n_{max}) + c,\\quad \\rho = \\lambda E[S]",
     "service time of a request asking n output tokens (§II-B, Table I fit); stable iff ρ < 1"),
    ("E[W] = \\frac{\\lambda E[S^2]}{2(1-\\rho)}", "M/G/1 mean queueing delay (eq 1)"),
    ("E[\\min(n,m)] = \\sum_{k<m} P(n>k),\\quad E[\\min(n,m)^2] = \\sum_{k<m}(2k+1)P(n>k)",
     "clipped token moments (eqs 2-3, summed by parts)"),
    ("E[S] = aE[n_{req}] + c,\\quad E[S^2] = E^2[S] + a^2(E[n_{req}^2]-E^2[n_{req}])",
     "service moments (eqs 4-5)"),
    ("\\pi(\\tau) \\approx (1-\\zeta^2)\\pi^{det}(\\tau) + \\zeta^2\\pi^{exp}(\\tau),\\quad "
     "\\zeta^2 = \\frac{E[S^2]-E^2[S]}{E^2[S]}",
     "De Kok-Tijms interpolation (eqs 6-8), valid for ζ² ≤ 1; E[W_q] likewise (eq 7)"),
    ("E[W_q] = \\tau\\pi(\\tau) + E[W_{qs}](1-\\pi(\\tau))", "served vs all users (eq 9)"),
    ("W(x) = P_0 + \\lambda\\int_0^x W(y)\\,P(S > x-y)\\,dy,\\ 0\\le x\\le\\tau,\\quad "
     "P_0 = \\frac{1}{1+\\rho\\, g(\\tau)}",
     "exact M/G/1+D: virtual wait by level crossing, solved by product integration"),
    ("V_1 = \\theta E[u\\,|\\,n_{max}] - (1-\\theta)E[W]", "objective with patient users (eq 10)"),
    ("V_2 = \\theta E[u\\,|\\,n_{max}] - (1-\\theta)E[W_q] - \\ell\\,\\pi(\\tau)",
     "objective with impatient users (eq 11, sign corrected)"),
]
ERRATA = [
    "Eq 11 prints V2 = θE[u] + (1 − θ)E[W] − ℓπ, which rewards delay; the page uses "
    "− (1 − θ)E[W_q] (the printed sign is a toggle under Objectives).",
    "Eqs 6-8 (De Kok-Tijms) are an approximation valid for ζ² ≤ 1; beyond it the M/M/1+D anchor "
    "is used as is. The exact M/G/1+D solution shows how far the interpolation is off.",
    "§V-B rests on a fit of S = a·n + c the paper does not publish; Table I's own fit gives "
    "a = 0.023087 s/token, c = 0.490 s (see Paper vs model for the consequences).",
    "Eqs 2-3 are the moments of min(n, n_max); they are summed here as Σ P(n > k).",
]


def _paper_a():
    st.session_state.update(load_mode="rate", lam_per_s=0.025, law="lognormal", log_mean=7.0, log_sd=0.7,
                 theta_v1=119 / 120)


def _paper_bd():
    st.session_state.update(load_mode="rate", lam_per_s=0.04, law="lognormal", log_mean=7.0, log_sd=0.7,
                 patience_s=60.0, theta_v2=0.95, loss_cost=4.0)


def profile_sidebar():
    """Latency profile: (a, c, description) with a fit caption."""
    table = data.preset_table()
    choice = st.selectbox("Latency profile", PRESETS + (TYPED,), key="preset",
                          format_func=lambda p: table[p][0] if p in table else "Type a and c…")
    if choice == TYPED:
        st.number_input("a (s per output token)", 1e-4, 1.0, key="a_s", step=0.001,
                        format="%.5f")
        st.number_input("c (s per request)", 0.0, 60.0, key="c_s", step=0.05)
        return float(st.session_state["a_s"]), float(st.session_state["c_s"]), "typed a, c", None
    name, _, inp, out, lat = table[choice]
    fit = data.latency_fit(out, lat)
    st.toggle("Add an input-token term", key="input_term",
              help="S = a·n_out + b·n_in + c, with a fixed prompt length n_in.")
    a, c = fit.a_s_per_token, fit.c_s
    if st.session_state["input_term"]:
        st.number_input("Prompt length n_in (tokens)", 1, 32768, key="prompt_tokens", step=64)
        fin = data.latency_fit_with_input(out, inp, lat)
        c_in = fin.c_s + fin.b_s_per_input_token * st.session_state["prompt_tokens"]
        st.caption(f"Fit with input: a = {fin.a_s_per_token:.5g} s/token, b = "
                   f"{fin.b_s_per_input_token:.4g} s/input token, c = {fin.c_s:.4g} s, "
                   f"R² = {fin.r2:.4f}")
        if c_in < 0:
            st.error(f"c + b·n_in = {c_in:.3g} s is negative for this prompt length; using the "
                     "fit without the input term.", icon=":material/error:")
        else:
            a, c = fin.a_s_per_token, c_in
    st.caption(f"Fit S = a·n + c: a = {fit.a_s_per_token:.5g} s/token, c = {fit.c_s:.4g} s, "
               f"R² = {fit.r2:.4f} (Table I, output tokens only)")
    return float(a), float(c), name, (inp, out, lat)


def empirical_input():
    """Upload or paste token counts; the last valid sample stays in use on an error."""
    upload = st.file_uploader("Upload token counts (CSV)", type=["csv", "txt"],
                              key="tokens_upload",
                              help=f"One column output_tokens (or tokens); whole numbers ≥ 1; "
                                   f"at most {MAX_TOKEN_ROWS:,} rows.")
    pasted = st.text_area("…or paste CSV", key="tokens_paste", height=100,
                          placeholder="output_tokens\n512\n1033\n87",
                          max_chars=MAX_UPLOAD_BYTES)
    last = st.session_state.get(_LAST_LAW)
    try:
        if upload is not None:
            law = parse_token_counts(upload.getvalue()), f"upload {upload.name}"
        elif pasted.strip():
            law = parse_token_counts(pasted), "pasted counts"
        else:
            law = None
    except ValueError as err:
        st.error(f"Token counts not used: {err}", icon=":material/error:")
        if last is not None:
            st.info(f"Still using the last valid sample ({last[0].n_samples} counts).")
        law = None
    else:
        if law is not None:
            st.session_state[_LAST_LAW] = law
            last = law
    if last is None:
        st.info("No token counts yet: showing the lognormal law meanwhile.")
    return last


def law_sidebar():
    """(law_key, law object, label)."""
    law = st.selectbox("Output-token law", tuple(LAW_NAMES), key="law", format_func=LAW_NAMES.get)
    s = st.session_state
    if law == "empirical":
        got = empirical_input()
        if got is not None:
            sample, source = got
            return data.empirical_key(sample), sample, f"empirical, {sample.n_samples} counts ({source})"
    if law == "uniform":
        st.number_input("lowest (tokens)", 0, 100_000, key="uni_low", step=100)
        st.number_input("highest (tokens)", 1, 100_000, key="uni_high", step=100)
        key = ("uniform", float(s["uni_low"]), float(s["uni_high"]))
        if s["uni_low"] < s["uni_high"]:
            return key, data.parametric_law(key), f"uniform on [{s['uni_low']}, {s['uni_high']}]"
        st.error("The lowest count must be below the highest: using the lognormal law.",
                 icon=":material/error:")
    elif law == "truncnorm":
        st.number_input("mean (tokens)", 1.0, 100_000.0, key="tn_mean", step=50.0)
        st.number_input("sd (tokens)", 1.0, 100_000.0, key="tn_sd", step=50.0)
        key = ("truncnorm", float(s["tn_mean"]), float(s["tn_sd"]))
        return key, data.parametric_law(key), \
            f"normal({s['tn_mean']:g}, {s['tn_sd']:g}²) truncated to n ≥ 0"
    if law in ("lognormal", "empirical"):
        st.slider("log-mean μ", 2.0, 10.0, key="log_mean", step=0.05)
        st.slider("log-sd σ", 0.05, 2.0, key="log_sd", step=0.05)
    key = ("lognormal", float(s["log_mean"]), float(s["log_sd"]))
    return key, data.parametric_law(key), f"lognormal({s['log_mean']:g}, {s['log_sd']:g})"


def sidebar():
    with st.sidebar:
        a, c, profile, table = profile_sidebar()
        st.divider()
        law_key, dist, law_label = law_sidebar()
        st.divider()
        st.radio("Load given as", ("rate", "rho"), key="load_mode", horizontal=True,
                 format_func={"rate": "requests/s", "rho": "ρ without a limit"}.get)
        if st.session_state["load_mode"] == "rate":
            st.number_input("Arrival rate λ (requests/s)", 1e-4, 100.0, key="lam_per_s",
                            step=0.005, format="%.4f")
        else:
            st.slider("Load without a limit ρ∞ = λ(aE[n] + c)", 0.01, 3.0, key="rho", step=0.01)
        left, right = st.columns(2)
        left.number_input("n_max from", 1, 100_000, key="n_lo", step=100)
        right.number_input("n_max to", 2, 100_000, key="n_hi", step=100)
        st.slider("Patience τ (s)", 1.0, 600.0, key="patience_s", step=1.0,
                  help="A user who would wait longer than τ leaves unserved.")
        st.radio("Impatience model", ("exact", "interpolation"), key="method", horizontal=True,
                 format_func={"exact": "exact M/G/1+D", "interpolation": "De Kok-Tijms"}.get)
        with st.expander("Objectives (Fig 4d)"):
            st.slider("θ for V1", 0.5, 1.0, key="theta_v1", step=0.0001, format="%.4f")
            st.slider("θ for V2", 0.5, 1.0, key="theta_v2", step=0.0001, format="%.4f")
            st.number_input("Lost-user cost ℓ", 0.0, 100.0, key="loss_cost", step=0.5)
            st.toggle("V2 with the printed sign (+(1 − θ)E[W])", key="printed_sign")
        with st.expander("Paper scenarios (§V-B)"):
            st.button("Fig 4a: λ = 1/40", on_click=_paper_a, key="paper_a")
            st.button("Figs 4b-d: λ = 1/25, τ = 60 s", on_click=_paper_bd,
                      key="paper_bd")
        st.toggle("Show simulation points", key="simulate",
                  help=f"{data.SIM_JOBS:,} simulated requests per point (cached).")
        st.radio("Chart image format", ("png", "svg"), key="img", horizontal=True)
    return a, c, profile, table, law_key, dist, law_label


def view_figures(view: str, ctx: dict) -> list:
    """(name, figure) pairs of one view; every figure comes from a pure builder."""
    cur, limit = ctx["curves"], ctx["limit"]
    n = cur.n_max
    if view == "Delay & loss":
        sim = ctx["sim"]
        base = ctx["base"]
        return [
            ("mean_wait", figs.wait_figure(
                n, cur.mean_wait, stable_limit=cur.stable_limit, limit=limit,
                sim=None if sim is None else (sim["plain_n"], sim["plain_wait"], sim["plain_ci"]),
                baseline=None if base is None else base["curve"])),
            ("served_wait", figs.served_wait_figure(
                n, cur.mean_wait, cur.exact.mean_wait_served, cur.interpolation.mean_wait_served,
                cur.patience, stable_limit=cur.stable_limit, limit=limit,
                sim=None if sim is None else (sim["n"], sim["served_wait"], sim["served_ci"]))),
            ("loss_fraction", figs.loss_figure(
                n, cur.exact.loss_fraction, cur.interpolation.loss_fraction, cur.patience,
                limit=limit, sim=None if sim is None else (sim["n"], sim["loss"], sim["loss_ci"]))),
        ]
    if view == "Optimal limit":
        v1, v2, b1, b2 = ctx["objectives"]()
        label = "V2 as printed (+(1 − θ)E[W])" if ctx["printed"] else "V2 (eq 11)"
        return [("objectives", figs.objective_figure(
            n, v1, v2, (b1.n_max, b1.objective), (b2.n_max, b2.objective), v2_label=label,
            limit=limit))]
    if view == "Token law":
        s = ctx["summary"]
        return [("token_law", figs.token_law_figure(
                    s["edges"], s["probs"], s["k"], s["cdf"], limit=limit,
                    clipped_share=ctx["point"].clipped_share, label=ctx["law_label"])),
                ("clipped_share", figs.clipped_share_figure(n, cur.clipped_share,
                                                            cur.mean_utility, limit=limit))]
    if view == "Latency fit" and ctx["table"] is not None:
        inp, out, lat = ctx["table"]
        fit = data.latency_fit(out, lat)
        fin = data.latency_fit_with_input(out, inp, lat) if ctx["input_term"] else None
        labels = [f"{int(i)}, {int(o)}" for i, o in zip(inp, out)]
        return [("latency_fit", figs.latency_fit_figure(
                    out, inp, lat, fit.a_s_per_token, fit.c_s, fit.r2,
                    None if fin is None else fin.latency_s(out, inp),
                    None if fin is None else fin.r2)),
                ("fit_residuals", figs.fit_residuals_figure(
                    labels, fit.residuals_s, None if fin is None else fin.residuals_s))]
    return []


def _pct(x):
    return f"{100 * x:.1f} %"


def answer_panel(p, free, lam, patience, method):
    """The chosen limit ``p`` against no limit ``free``: one results table and one
    sentence, drawn as a single element."""
    stable = np.isfinite(p.mean_wait)
    if not stable:
        where = ("no limit is stable: a one-token answer already takes a + c"
                 if p.stable_limit == 0 else f"the largest stable limit is {p.stable_limit:,.0f} tokens")
        st.error(f"Unstable: {lam:.4g} requests/s is at or beyond the capacity of "
                 f"{p.capacity_per_s:.4g} requests/s at a limit of {p.n_max:,.0f} tokens "
                 f"(ρ = {p.load:.3f}); {where}. Without impatience the wait grows without bound; "
                 "with patience τ users leave instead (the loss is shown).",
                 icon=":material/warning:")
    if free is None:        # no limit cannot be evaluated: compare with nothing
        free = p.__class__(**{**p.__dict__, "mean_wait": float("nan"), "load": float("nan"),
                              "loss_fraction": float("nan"), "mean_wait_served": float("nan")})
    free_stable = np.isfinite(free.mean_wait)
    change = 100 * (p.mean_wait / free.mean_wait - 1) if stable and free_stable else None
    vs_free = ("n/a" if np.isnan(free.mean_wait) else "unstable" if not free_stable
               else f"{free.mean_wait:.3g} s")
    items = [
        ("Mean wait E[W]", f"{p.mean_wait:.3g} s" if stable else "∞ (unstable)"),
        ("E[W] without a limit", vs_free),
        ("Change vs no limit", "n/a" if change is None else f"{change:+.1f} %"),
        ("Answers clipped", _pct(p.clipped_share)),
        ("Load ρ", f"{p.load:.3f} (no limit: {free.load:.3f})"),
        (f"Impatient users lost (τ = {patience:g} s)", _pct(p.loss_fraction)),
        ("Lost without a limit", "n/a" if np.isnan(free.loss_fraction)
         else _pct(free.loss_fraction)),
        ("Wait of served users E[W_qs]", f"{p.mean_wait_served:.3g} s"),
        ("E[W_qs] without a limit", f"{free.mean_wait_served:.3g} s"),
        ("Mean share of requested tokens served", _pct(p.mean_utility)),
    ]
    if not stable:
        wait = "an unstable queue without impatience"
    elif change is None:
        wait = f"mean wait {p.mean_wait:.3g} s (no limit: unstable)"
    else:
        wait = f"mean wait {p.mean_wait:.3g} s ({change:+.1f} % vs no limit)"
    st.markdown(results_markdown(items) + "\n\n"
                f"**Limit {p.n_max:,.0f} → {wait}, {_pct(p.clipped_share)} of answers clipped, "
                f"{_pct(p.loss_fraction)} of impatient users lost** (impatience model: {method}).")


# Views whose charts mark the chosen limit (drawn inside the what-if fragment);
# the others show curves over the whole n_max range and do not move with it.
LIMIT_VIEWS = ("Token law",)


def view_key(ctx: dict, view: str) -> tuple:
    s = st.session_state
    return (view, ctx["law_key"], ctx["lam"], ctx["a"], ctx["c"], ctx["patience"], ctx["grid"],
            ctx["limit"] if view in LIMIT_VIEWS else None, ctx["method"], ctx["printed"],
            ctx["theta1"], ctx["theta2"], ctx["ell"], s["simulate"],
            None if ctx["base"] is None else ctx["base"]["key"], ctx["input_term"],
            ctx["table"])


def show_view(view: str, ctx: dict) -> None:
    """The charts of one view with their captions (Formulas and Paper vs model: text)."""
    a, c = ctx["a"], ctx["c"]
    if view == "Formulas":
        formulas_panel(FORMULAS, ERRATA, "Errata and remarks on the paper")
        return
    if view == "Paper vs model":
        rows = data.paper(a, c)
        st.caption(f"§V-B's numbers beside this model's, with S = {a:.5g}·n + {c:.4g} s and the "
                   "paper's setting otherwise (lognormal(7, 0.7); λ = 1/40 for V1, λ = 1/25, "
                   "τ = 60 s, θ = 0.95, ℓ = 4 for V2).")
        st.dataframe(pd.DataFrame([{"quantity": r.quantity, "unit": r.unit, "paper": r.paper,
                                    "model": round(r.model, 4), "why they differ": r.note}
                                   for r in rows]), hide_index=True)
        st.markdown("The token shares depend on the law alone and agree. The delays differ "
                    "because the paper's fit of S = a·n + c is not published: Table I's own fit "
                    "is about 5 % steeper. The V1 optimum of eq 10 cannot be 1600 with the "
                    "paper's delays, and eq 11's printed sign rewards delay, so the V2 optimum "
                    "with the corrected sign is a short limit.")
        return
    if view == "Latency fit" and ctx["table"] is None:
        st.info(f"Typed profile: S = {a:.5g}·n + {c:.4g} s (no measurements to show).")
    with st.spinner("Searching the best limits…" if view == "Optimal limit" else "Drawing…"):
        shown = memo_figures(PAGE, view, view_key(ctx, view), view_figures, ctx)
    for name, fig in shown:
        show_chart(fig, name)
    if view == "Optimal limit":
        b1, b2 = ctx["best"]()
        st.caption(f"V1 is best at {b1.n_max:,} tokens (E[W] = {b1.mean_wait:.3g} s); "
                   f"V2 at {b2.n_max:,} tokens (E[W_q] = {b2.mean_wait:.3g} s, "
                   f"{_pct(b2.loss_fraction)} lost). Both searched over every integer limit "
                   "near the optimum; the curves are on the n_max grid.")


@st.fragment
def chosen_limit(ctx: dict) -> dict:
    """Limit slider, the answer at that limit, pin/report; charts that mark the limit.

    Moving the limit re-runs only this (``st.fragment``)."""
    s = st.session_state
    lo, hi = int(ctx["grid"][0]), int(ctx["grid"][-1])
    st.slider("Chosen token limit n_max", min(lo, int(s["limit"])), max(hi, int(s["limit"])),
              key="limit", step=1,
              help="The limit the answer above is for; the n_max range of the curves is set "
                   "in the sidebar.")
    law_key, dist, lam, a, c = ctx["law_key"], ctx["dist"], ctx["lam"], ctx["a"], ctx["c"]
    patience, method, limit = ctx["patience"], ctx["method"], int(s["limit"])
    p = data.point(law_key, dist, lam, a, c, limit, patience, method)
    answer_panel(p, ctx["free"], lam, patience, method)
    cur = ctx["curves"]
    scenario = {"label": f"{ctx['law_label']}, λ = {lam:.4g}/s, a = {a:.4g}, c = {c:.3g}",
                "key": (law_key, lam, a, c, ctx["grid"]),
                "metrics": {"E[W] at limit (s)": p.mean_wait, "answers clipped": p.clipped_share,
                            "users lost": p.loss_fraction, "E[W_qs] (s)": p.mean_wait_served},
                "curve": (cur.n_max, cur.mean_wait)}
    row = action_row()
    base = compare.controls(PAGE, scenario, row)
    ctx = dict(ctx, limit=limit, point=p, base=base)
    params = {"profile": ctx["profile"], "a (s/token)": f"{a:.6g}", "c (s)": f"{c:.5g}",
              "token law": ctx["law_label"], "λ (requests/s)": f"{lam:.5g}", "limit": limit,
              "patience τ (s)": patience, "impatience model": method, "θ (V1)": ctx["theta1"],
              "θ (V2)": ctx["theta2"], "ℓ": ctx["ell"]}
    report_button("LLM token limits", params,
                  lambda: [(n, f, "") for v in VIEWS[:4] for n, f in view_figures(v, ctx)],
                  FORMULAS,
                  ERRATA + [f"{r.quantity}: paper {r.paper:g}, model {r.model:.4g} {r.unit} "
                            f"({r.note})" for r in data.paper(a, c)],
                  "llm_token_limits_report.html", where=row)
    if base is not None:
        st.caption(f"Baseline: {base['label']}")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)
    if s["view"] in LIMIT_VIEWS:
        show_view(s["view"], ctx)
    share.publish(FIELDS)
    return ctx


def run():
    share.restore(FIELDS)
    st.title("LLM token limits")
    st.caption("Yang, Jiao & Xu, *A queueing theoretic perspective on low-latency LLM inference "
               "with variable token length*, §III and §V-B. Requests arrive as a Poisson stream "
               "at one LLM server (FCFS); a request asking n output tokens gets min(n, n_max) "
               "and takes S = a·min(n, n_max) + c seconds. Impatient users leave after τ.")
    share.show_warnings()
    a, c, profile, table, law_key, dist, law_label = sidebar()
    s = st.session_state
    lo, hi = sorted((int(s["n_lo"]), int(s["n_hi"])))
    if lo == hi:
        hi = lo + 1
    if s["n_lo"] >= s["n_hi"]:
        st.warning(f"n_max range given as {s['n_lo']} to {s['n_hi']}: drawn from {lo} to {hi}.")
    summary = data.law_summary(law_key, dist)
    lam = (float(s["lam_per_s"]) if s["load_mode"] == "rate"
           else float(s["rho"]) / (a * summary["mean_tokens"] + c))
    patience, method = float(s["patience_s"]), s["method"]
    grid = data.n_max_grid(lo, hi)
    cur = data.curves(law_key, dist, lam, a, c, patience, grid)
    free = (data.point(law_key, dist, lam, a, c, None, patience, method)
            if summary["summable"] else None)
    if free is None:
        st.info(f"This law reaches beyond {data.MAX_NO_LIMIT_TOKENS:,} tokens (its 1 − 1e-15 quantile): "
                "no-limit comparisons are left out; set a limit.")
    st.caption(f"λ = {lam:.4g} requests/s, S = {a:.5g}·n + {c:.4g} s ({profile}), "
               f"token law {law_label}: mean {summary['mean_tokens']:.0f} tokens without a limit.")
    sim = None
    if s["simulate"]:
        bar = LazyProgress("Simulating…")
        limits = data.sim_limits(lo, hi)
        loads = np.interp(limits, cur.n_max, cur.load)
        sim = data.sim_sweep(law_key, dist, lam, a, c, patience, limits, tuple(loads), bar)
        bar.empty()

    printed = bool(s["printed_sign"])
    theta1, theta2, ell = float(s["theta_v1"]), float(s["theta_v2"]), float(s["loss_cost"])
    imp = cur.exact if method == "exact" else cur.interpolation

    def best():
        return (data.best_v1(law_key, dist, lam, a, c, theta1),
                data.best_v2(law_key, dist, lam, a, c, theta2, ell, patience, method, printed))

    def objectives():
        b1, b2 = best()
        return (objective_v1(cur.mean_utility, cur.mean_wait, theta1),
                objective_v2(cur.mean_utility, imp.mean_wait_all, imp.loss_fraction, theta2, ell,
                             printed), b1, b2)

    view = st.segmented_control("View", VIEWS, key="view", required=True)
    st.subheader("Answer at the chosen limit")
    ctx = dict(curves=cur, limit=None, sim=sim, objectives=objectives, best=best,
               printed=printed, summary=summary, law_label=law_label, table=table,
               input_term=bool(s["input_term"]), law_key=law_key, dist=dist, lam=lam, a=a, c=c,
               patience=patience, method=method, grid=grid, free=free, profile=profile,
               theta1=theta1, theta2=theta2, ell=ell)
    ctx = chosen_limit(ctx)
    if view not in LIMIT_VIEWS:
        show_view(view, dict(ctx, limit=None))
    share.publish(FIELDS)


run()
