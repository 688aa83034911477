"""LLM batching strategies (Yang et al. §IV-V): dynamic, capped, fixed, elastic, continuous."""
import numpy as np
import pandas as pd
import streamlit as st

from ui import compare, share
from ui import figures_llm_batching as figs
from ui import llm_batching_data as data
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, memo_figures, results_table
from ui.uploads import MAX_UPLOAD_BYTES

PAGE = "llm"
_P = data.presets()["a100_llama2_7b"]
FIELDS = [
    share.Field("preset", "a100_llama2_7b", str, choices=tuple(data.presets())),
    share.Field("law", "lognormal", str, choices=("lognormal", "uniform", "truncnorm",
                                                  "empirical")),
    share.Field("ln_mu", 7.0, float, 0.0, 12.0),
    share.Field("ln_sd", 0.7, float, 0.05, 3.0),
    share.Field("u_lo", 0.0, float, 0.0, 1e5),
    share.Field("u_hi", 1000.0, float, 1.0, 1e5),
    share.Field("tn_mean", 500.0, float, 0.0, 1e5),
    share.Field("tn_sd", 200.0, float, 1.0, 1e5),
    share.Field("k1", _P.k[0], float, 1e-6, 10.0),
    share.Field("k2", _P.k[1], float, 0.0, 100.0),
    share.Field("k3", _P.k[2], float, 0.0, 1.0),
    share.Field("k4", _P.k[3], float, 0.0, 1.0),
    share.Field("lam_max", 0.3, float, 0.01, 20.0),
    share.Field("lam", 0.05, float, 0.001, 20.0),
    share.Field("b", 16, int, 1, 1024),
    share.Field("b_max", 64, int, 1, 1024),
    share.Field("kv", _P.kv_capacity_tokens or 62720.0, float, 100.0, 1e8),
    share.Field("prompt", _P.prompt_tokens, float, 0.0, 1e5),
    share.Field("simulate", False, bool),
    share.Field("n_jobs", 20000, int, 1000, 200_000),
    share.Field("view", "Latency", str, choices=("Latency", "Batch size", "Best strategy",
                                                 "Formulas")),
    share.Field("img", "png", str, choices=("png", "svg")),
]
VIEWS = FIELDS[-2].choices
FORMULAS = [
    ("H(b, l) = k_1 b + k_2 + k_3 b\\,l + k_4 l", "batch time, longest output l (eq 18), s"),
    ("E[L_b] = \\int_0^\\infty b\\,x f(x) F(x)^{b-1} dx,\\quad \\mu[b] = \\frac{b}{H(b, E[L_b])}",
     "longest of b outputs and throughput (eqs 23-24)"),
    ("E[W_q] = \\frac{(E[Q_d]-a)H + aH/2 + (b-a)S/\\lambda}{b},\\; a = \\lambda H,\\; "
     "S = \\sum_k \\frac{1}{1-z_k}", "fixed batching, exact mean wait (M/D^b/1; z_k roots of "
                                     "z^b = e^{a(z-1)})"),
    ("\\frac{1}{\\lambda}\\Big[\\frac{b-(b-a)^2}{2(b-a)} + \\sum_k \\frac{1}{1-Z_k}\\Big]",
     "eq 25 as printed: equals E[Q_d]/λ, not the wait"),
    ("\\phi_0 = \\frac{\\lambda(\\alpha+\\beta)^2}{2(1-\\rho^2)},\\quad "
     "\\phi_1 = \\frac{\\lambda\\alpha\\beta+\\lambda\\alpha^2+\\beta}{2(1-\\rho^2)}",
     "eq 16 as printed: bounds the wait before the batch starts, not wait + processing"),
    ("\\lambda_{\\max}^{\\text{elastic}} = \\frac{1}{k_1 + k_3 E[N]},\\quad "
     "\\lambda_{\\max}^{\\text{cont.}} \\approx \\frac{1}{k_1+k_2+(k_3+k_4/m)E[N]}",
     "stability limits of elastic (uncapped) and continuous batching "
     "(m sequences fit the KV cache)"),
]
ERRATA = [
    "Eq 16 (φ0, φ1) bounds the wait before the batch starts, not wait + processing as Inoue's "
    "eqs 41-42 do; the paper calls both E[W].",
    "Eq 25 is not the mean wait: with exact roots it equals E[Q_d]/λ (requests left waiting "
    "after a departure over λ); it ignores the time to fill the batch. At b = 1 it is the M/D/1 "
    "sojourn. Its 20-term series roots are off by ~4e-3 near λH/b = 1.",
    "The M/D^b/1 model uses the deterministic H(b, E[L_b]); with the realised longest output, "
    "fixed batching waits much longer for heavy-tailed laws (see the simulation points).",
    "Eq 26 prints k3·b·E[N] for k3·(n_1 + … + n_b): equal in expectation only.",
    "With k3 > 0 and an unbounded token law μ[b] → 0 as b → ∞: uncapped dynamic batching has a "
    "finite (for heavy tails tiny) stability limit; a finite b_max keeps μ[b_max].",
    "§V's numbers (b* = 8, 125 s at λ = 0.43/s) rest on an unpublished fit: with Table I's "
    "per-token time that load is beyond every padded strategy.",
]


def law_inputs() -> tuple:
    """Widgets of the token law; returns its spec (the last valid one for an upload)."""
    law = st.session_state["law"]
    if law == "lognormal":
        st.slider("log-mean μ (log tokens)", 0.0, 12.0, key="ln_mu", step=0.1)
        st.slider("log-sd σ", 0.05, 3.0, key="ln_sd", step=0.05)
        return ("lognormal", st.session_state["ln_mu"], st.session_state["ln_sd"])
    if law == "uniform":
        st.number_input("low (tokens)", 0.0, 1e5, key="u_lo", step=50.0)
        st.number_input("high (tokens)", 1.0, 1e5, key="u_hi", step=50.0)
        if st.session_state["u_hi"] <= st.session_state["u_lo"]:
            st.error("high must exceed low; using uniform(0, 1000).")
            return ("uniform", 0.0, 1000.0)
        return ("uniform", st.session_state["u_lo"], st.session_state["u_hi"])
    if law == "truncnorm":
        st.number_input("mean (tokens)", 0.0, 1e5, key="tn_mean", step=50.0)
        st.number_input("sd (tokens)", 1.0, 1e5, key="tn_sd", step=10.0)
        return ("truncnorm", st.session_state["tn_mean"], st.session_state["tn_sd"])
    return empirical_input()


def empirical_input() -> tuple:
    up = st.file_uploader("Token counts (CSV, one column)", type=["csv", "txt"], key="tokens_file")
    text = st.text_area("…or paste token counts (CSV)", key="tokens_paste", height=100,
                        placeholder="tokens\n512\n130\n977", max_chars=MAX_UPLOAD_BYTES)
    if up is not None or (text or "").strip():
        raw = up.getvalue() if up is not None else text
        try:
            # size, encoding and CSV checks inside; an empty upload is an error too
            st.session_state["_llm_empirical"] = data.empirical_spec(raw)
        except ValueError as err:
            st.error(f"Token counts not used: {err}", icon=":material/error:")
    spec = st.session_state.get("_llm_empirical")
    if spec is None:
        st.info("No token counts yet: showing lognormal(7, 0.7).")
        return ("lognormal", 7.0, 0.7)
    st.caption(f"Empirical law of {spec[3]} requests, {len(spec[1])} distinct counts.")
    return spec


def load_preset():
    p = data.presets()[st.session_state["preset"]]
    for key, v in zip(("k1", "k2", "k3", "k4"), p.k):
        st.session_state[key] = v
    if p.kv_capacity_tokens:
        st.session_state["kv"] = p.kv_capacity_tokens
    st.session_state["prompt"] = p.prompt_tokens


def sidebar() -> tuple:
    with st.sidebar:
        st.radio("Token law", FIELDS[1].choices, key="law", horizontal=True,
                 format_func={"lognormal": "lognormal", "uniform": "uniform",
                              "truncnorm": "truncated normal", "empirical": "empirical"}.get)
        spec = law_inputs()
        st.divider()
        names = {pid: p.name for pid, p in data.presets().items()}
        if st.session_state["preset"] not in names:
            st.session_state["preset"] = FIELDS[0].default
        st.selectbox("Batch-time preset", list(names), key="preset", format_func=names.get,
                     on_change=load_preset)
        with st.expander("Batch time H(b, l) = k1·b + k2 + k3·b·l + k4·l"):
            st.number_input("k1 (s per request)", 1e-6, 10.0, key="k1", format="%.5f", step=0.01)
            st.number_input("k2 (s)", 0.0, 100.0, key="k2", format="%.5f", step=0.01)
            st.number_input("k3 (s per token per request)", 0.0, 1.0, key="k3", format="%.6f",
                            step=0.0001)
            st.number_input("k4 (s per token)", 0.0, 1.0, key="k4", format="%.5f", step=0.001)
        st.number_input("λ axis up to (requests/s)", 0.01, 20.0, key="lam_max", step=0.05,
                        format="%.3f")
        st.number_input("Fixed batch size b", 1, 1024, key="b")
        st.number_input("Batch-size cap b_max (capped dynamic)", 1, 1024, key="b_max")
        st.number_input("KV cache (tokens, continuous)", 100.0, 1e8, key="kv", step=1000.0)
        st.number_input("Prompt tokens per request", 0.0, 1e5, key="prompt", step=64.0)
        with st.expander("Simulation"):
            st.toggle("Simulate every strategy", key="simulate",
                      help="Discrete-event simulation at 8 loads per strategy (cached).")
            st.number_input("Requests per simulated load", 1000, 200_000, key="n_jobs",
                            step=5000)
        st.radio("Chart image format", ("png", "svg"), key="img", horizontal=True)
    return spec


def view_figures(view: str, ctx: dict) -> list:
    """(name, figure) pairs of one view; every figure comes from a pure builder."""
    lims, labels = ctx["limits"], data.LABELS
    limit_marks = {s: (labels[s], v) for s, v in lims.items()}
    if view == "Latency":
        fx, coarse, exact = ctx["fixed"], ctx["coarse"], ctx["exact"]
        curves = [("fixed", f"fixed b = {ctx['b']}, exact (M/D^b/1)", fx["lam"], fx["exact"], None),
                  ("fixed", "fixed, eq 25 as printed (E[Q_d]/λ, not the latency)", fx["lam"],
                   fx["eq25"], "dash"),
                  ("dynamic", "dynamic, bound φ with eq 20 (bounded laws)", fx["lam"],
                   fx["bound"], "dot"),
                  ("dynamic", "dynamic, exact chain", coarse, exact["dynamic"], None),
                  ("capped", f"capped dynamic b_max = {ctx['b_max']}, exact chain", coarse,
                   exact["capped"], None)]
        sw = ctx["sweep"]
        sims = [] if sw is None else [(s, f"{labels[s]}, simulated ±95% CI", sw.lam, sw.mean[s],
                                       sw.ci95[s]) for s in data.STRATEGIES]
        base = ctx["base"]
        out = [("mean_latency", figs.strategy_latency_figure(
            curves, sims, limit_marks, x_max=ctx["lam_max"], current=ctx["lam"],
            title="Mean latency (wait + processing) vs load", y_title="mean latency (s)",
            baseline=None if base is None else base["curve"]))]
        if sw is not None:
            out.append(("p99_latency", figs.strategy_latency_figure(
                [], [(s, f"{labels[s]}, simulated", sw.lam, sw.p99[s], None)
                     for s in data.STRATEGIES], limit_marks, x_max=ctx["lam_max"],
                current=ctx["lam"], title="p99 latency vs load (simulation)",
                y_title="p99 latency (s)")))
        return out
    if view == "Batch size":
        bc = ctx["batch"]
        marks = {"fixed b": ctx["b"], "b_max": ctx["b_max"]}
        return [("expected_max_tokens", figs.expected_max_figure(bc.b, bc.expected_max,
                                                                 bc.mean_tokens, marks)),
                ("throughput_vs_b", figs.throughput_figure(bc.b, bc.throughput, bc.b_opt, marks))]
    if view == "Best strategy":
        return [("best_strategy", figs.best_strategy_figure(
            ctx["coarse"], ctx["best"], [labels[s] for s in data.STRATEGIES]))]
    return []


def run():
    share.restore(FIELDS)
    st.title("LLM batching strategies")
    st.caption("Yang et al., *A queueing theoretic perspective on low-latency LLM inference with "
               "variable token length*. A batch of b requests whose longest output has l tokens "
               "takes H(b, l) = k1·b + k2 + k3·b·l + k4·l s (eq 18); requests arrive as a Poisson "
               "stream. Which batching strategy serves them fastest?")
    share.show_warnings()
    if st.session_state["lam"] > st.session_state["lam_max"]:
        st.session_state["lam"] = st.session_state["lam_max"]
    spec = sidebar()
    ss = st.session_state
    k = (float(ss["k1"]), float(ss["k2"]), float(ss["k3"]), float(ss["k4"]))
    b, b_max, lam, lam_max = int(ss["b"]), int(ss["b_max"]), float(ss["lam"]), float(ss["lam_max"])
    kv, prompt = float(ss["kv"]), float(ss["prompt"])
    try:
        lims = data.limits(spec, k, b, b_max, kv, prompt)
    except ValueError as err:
        st.error(f"These inputs cannot be evaluated: {err}")
        share.publish(FIELDS)
        return
    coarse = data.coarse_grid(lam_max)
    if lims["dynamic"] < coarse[0]:
        st.warning(f"Uncapped dynamic batching is unstable at every load shown: with this token "
                   f"law the batch time outgrows the batch (capacity {lims['dynamic']:.3g} "
                   "requests/s). Cap the batch size (b_max).", icon=":material/block:")

    # ---------------------------------------------------------------- engine
    bc = data.batch_curve(spec, k)
    fixed = data.fixed_curves(spec, k, b, lam_max)
    bar = LazyProgress("Solving…")
    exact = {"dynamic": data.dynamic_curve(spec, k, None, lam_max, lims["dynamic"], bar,
                                           data.CHAIN_LOAD["dynamic"]),
             "capped": data.dynamic_curve(spec, k, b_max, lam_max, lims["capped"], bar,
                                          data.CHAIN_LOAD["capped"]),
             "fixed": fixed["coarse"]}
    sweep = (data.sim_sweep(spec, k, b, b_max, kv, prompt, lam_max, lims, int(ss["n_jobs"]), bar)
             if ss["simulate"] else None)
    bar.empty()
    best = data.best_per_load(exact, sweep)
    st.caption("Best strategy by load: " + ", ".join(
        f"λ = {c:.3g}: {name or 'none stable'}" for c, name in zip(coarse, best))
        + ("" if sweep is not None else " (exact strategies only; simulate to include elastic "
           "and continuous batching)."))

    view = st.segmented_control("View", VIEWS, key="view", required=True)
    st.subheader("Operating point")
    ctx = dict(limits=lims, fixed=fixed, coarse=coarse, exact=exact, sweep=sweep, b=b,
               b_max=b_max, lam=None, lam_max=lam_max, batch=bc, best=best, spec=spec, k=k,
               kv=kv, prompt=prompt)
    ctx = operating_point(ctx)
    if view == "Formulas":
        formulas_panel(FORMULAS, ERRATA)
    else:
        # Curves over the whole λ axis: drawn outside the fragment, without a marker
        # at the current λ (which moves without re-drawing them).
        ss = st.session_state
        key = (spec, k, b, b_max, lam_max, kv, prompt, ss["simulate"], int(ss["n_jobs"]),
               None if ctx["base"] is None else ctx["base"]["key"])
        for name, fig in memo_figures(PAGE, view, key, view_figures, dict(ctx, lam=None)):
            show_chart(fig, name)
        if view == "Latency":
            st.caption("Exact chains are solved up to 80 % (uncapped) and 90 % (capped) of "
                       "capacity while they need at most "
                       f"{data.chain_states(None)} / {data.chain_states(b_max)} states; beyond, "
                       "and for elastic and continuous batching, turn on the simulation. "
                       "Fixed batching's exact curve is the paper's M/D^b/1 model with the "
                       "mean batch time H(b, E[L_b]); the simulation uses each batch's "
                       "realised longest output (longer for heavy tails).")
    share.publish(FIELDS)


@st.fragment
def operating_point(ctx: dict) -> dict:
    """Current load λ, the answers at it, pin/report.  Moving λ re-runs only this."""
    lam_max = ctx["lam_max"]
    st.slider("Current load λ (requests/s)", 0.001, float(lam_max), key="lam", step=0.001,
              format="%.3f")
    lam = float(st.session_state["lam"])
    lims, labels, spec, k, bc = ctx["limits"], data.LABELS, ctx["spec"], ctx["k"], ctx["batch"]
    bad = [s for s in data.STRATEGIES if lam >= lims[s]]
    if bad:
        st.error("Unstable: at λ = " + f"{lam:.4g} requests/s " + "; ".join(
            f"{labels[s]} (capacity {lims[s]:.4g} requests/s)" for s in bad)
            + " cannot keep up; latency grows without bound.", icon=":material/warning:")
    b_star, soj_star = data.best_fixed(lam, spec, k)
    rec, soj_rec = data.recommended_b_max(lam, spec, k)
    items = [
        ("Optimal fixed b*", f"{b_star}" if b_star else "none stable"),
        ("Latency at b*", f"{soj_star:.3g} s" if b_star else "n/a"),
        ("Recommended b_max", f"{rec}" if rec else "none stable"),
        ("Latency at that b_max", f"{soj_rec:.3g} s" if rec else "n/a"),
        ("Load λ", f"{lam:.4g} req/s"),
        ("Throughput-optimal b", f"{bc.b_opt}"),
        ("Throughput there", f"{bc.throughput[bc.b_opt - 1]:.3g} req/s"),
        ("Mean output E[N]", f"{bc.mean_tokens:.4g} tokens"),
    ] + [(f"{labels[s]}: capacity", f"{lims[s]:.4g} req/s "
          + ("(stable)" if lam < lims[s] else "(unstable here)")) for s in data.STRATEGIES]
    results_table(items)
    b, b_max, fixed = ctx["b"], ctx["b_max"], ctx["fixed"]
    scenario = {"label": f"{spec[0]}, b={b}, b_max={b_max}", "key": (spec, k, b, b_max, lam_max),
                "metrics": {"b*": float(b_star), "recommended b_max": float(rec),
                            "capped capacity (req/s)": lims["capped"]},
                "curve": (fixed["lam"], fixed["exact"])}
    row = action_row()
    base = compare.controls(PAGE, scenario, row)
    ctx = dict(ctx, lam=lam, base=base)
    params = {"token law": str(spec[:3] if spec[0] != "empirical" else "empirical"),
              "k (s)": str(k), "b": b, "b_max": b_max, "λ (req/s)": lam,
              "KV cache (tokens)": ctx["kv"], "prompt tokens": ctx["prompt"]}
    report_button("LLM batching strategies", params,
                  lambda: [(n, f, "") for v in VIEWS[:-1] for n, f in view_figures(v, ctx)],
                  FORMULAS, ERRATA, "llm_batching_report.html", where=row)
    if base is not None:
        st.caption(f"Baseline (fixed-b exact curve): {base['label']}")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)
    share.publish(FIELDS)
    return ctx


run()
