"""Autoscaling for a percentile-latency SLA (Swayam appendix): replicas, trace, cost."""
import numpy as np
import streamlit as st

from engine import sla
from ui import compare, share
from ui import figures_sla as figs
from ui import sla_data as data
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, memo_figures, results_markdown, results_table
from ui.sla_uploads import MAX_INTERVALS, parse_trace_csv
from ui.uploads import MAX_UPLOAD_BYTES

PAGE = "sla"
GPUS = tuple(data.gpu_table())
FIELDS = [
    share.Field("mu_source", "manual", str, choices=("manual",) + GPUS),
    share.Field("mu", 100.0, float, 0.01, 1e6),
    share.Field("gpu_target_ms", 10.0, float, 0.1, 1e4),
    share.Field("law", "exponential", str, choices=sla.SERVICE_LAWS),
    share.Field("sigma", 1.0, float, 0.05, 3.0),
    share.Field("lam", 900.0, float, 0.01, 1e6),
    share.Field("d1_ms", 0.25, float, 0.0, 20.0),
    share.Field("d2_ms", 0.25, float, 0.0, 20.0),
    share.Field("delta_ms", 0.5, float, 0.0, 50.0),
    share.Field("pct", 99.0, float, 50.0, 99.99),
    share.Field("rt_ms", 100.0, float, 0.1, 1e5),
    share.Field("n", 11, int, 1, 100_000),
    share.Field("simulate", True, bool),
    share.Field("trace", "diurnal", str, choices=("diurnal", "custom")),
    share.Field("hours", 24.0, float, 1.0, 168.0),
    share.Field("interval_s", 300.0, float, 10.0, 3600.0),
    share.Field("amplitude", 0.5, float, 0.0, 0.95),
    share.Field("spikes", 3, int, 0, 20),
    share.Field("seed", 1, int, 0, 2 ** 31 - 1),
    share.Field("prov_s", 120.0, float, 0.0, 7200.0),
    share.Field("headroom", 0.1, float, 0.0, 2.0),
    share.Field("usd_h", 2.5, float, 0.0, 1e3),
    share.Field("view", "Replicas", str, choices=("Replicas", "Response time", "Trace & cost",
                                                  "Formulas")),
    share.Field("img", "png", str, choices=("png", "svg")),
]
VIEWS = FIELDS[-2].choices
_LAST = "_sla_last_trace"

FORMULAS = [
    ("\\omega_p = d_1 + \\Big(\\frac{\\ln(1-p/100)}{\\ln(\\lambda/(n\\mu))} - 1\\Big)(d_1+d_2+\\Delta)",
     "p-th percentile wait, random dispatch with retries (eq 1)"),
    ("P_{busy} = \\rho = \\frac{\\lambda}{n\\mu},\\quad P_r = \\rho^r(1-\\rho),\\quad "
     "W_r = d_1 + r\\,(d_1+d_2+\\Delta)", "busy probability, retries and waits (eqs 2, 4, 5)"),
    ("P(R \\le RT) = \\sum_{r=0}^{r_{max}} P(Z = W_r)\\,\\mathrm{CDF}_{exe}(RT - W_r),\\quad "
     "r_{max} = \\lfloor (RT-d_1)/c \\rfloor", "response-time CDF (eq 7); n′ = fewest n meeting p"),
    ("P(R > t) = e^{-\\mu t}\\Big(1 + C\\,\\mu\\frac{1-e^{-(n\\mu-\\lambda-\\mu)t}}{n\\mu-\\lambda-\\mu}\\Big)",
     "M/M/n central FIFO queue, C = Erlang C (reference)"),
]
ERRATA = [
    "Eq 1 treats the retry count r_max as real. The p-quantile of the paper's own geometric law "
    "is d1 + ⌈ln(1 − p/100)/ln ρ − 1⌉⁺·c; eq 1 is smaller except at whole numbers, and for "
    "p/100 < 1 − ρ it falls below d1, the least possible wait (d1 − c as ρ → 0).",
    "Eq 2 is exact only for first tries (Poisson arrivals see time averages). A retry c later "
    "meets the same busy period again, so it finds its backend busy more often than ρ and the "
    "tries are not independent: the geometric law is optimistic at high utilisation, few "
    "backends and c short against 1/μ, the regime the proof assumes (d1, d2, Δ ≪ 1/μ).",
    "Eq 7's R = Y + Z counts d1 to the backend but not d2 back to the frontend.",
    "Measured (n = 10, exponential 1/μ = 10 ms, d1 = d2 = c/4, Δ = c/2, 300 000 requests): "
    "eq 7's p99 is within ~7% of simulation for ρ ≤ 0.5 at every c·μ in {0.1, 1, 10}; 10% low "
    "at ρ = 0.7, c·μ = 0.1 and 19-51% low at ρ = 0.9 (64.5 ms against 131 ms at c·μ = 0.1). "
    "Mean tries 18.1 against the paper's 1/(1 − ρ) = 10 at ρ = 0.9, c·μ = 0.1. The retry "
    "correction (dotted) gives 80 ms there and is within 1-8% at c·μ = 1.",
]


def sidebar():
    with st.sidebar:
        st.number_input("Arrival rate λ (requests/s)", 0.01, 1e6, key="lam", step=50.0)
        st.selectbox("Replica service rate μ from", ("manual",) + GPUS, key="mu_source",
                     format_func=lambda k: "a number (requests/s)" if k == "manual"
                     else f"GPU operating point: {data.gpu_table()[k][0]}")
        if st.session_state["mu_source"] == "manual":
            st.number_input("μ per replica (requests/s)", 0.01, 1e6, key="mu", step=10.0)
        else:
            st.number_input("Per-GPU mean-latency target (ms)", 0.1, 1e4, key="gpu_target_ms",
                            step=1.0, help="One GPU at the dynamic-batching operating point "
                            "that meets this target serves μ requests/s.")
        st.radio("Service-time law", sla.SERVICE_LAWS, key="law", horizontal=True)
        if st.session_state["law"] == "lognormal":
            st.slider("Lognormal log-sd σ", 0.05, 3.0, key="sigma", step=0.05)
        st.slider("SLA percentile p (%)", 50.0, 99.99, key="pct", step=0.01)
        st.number_input("SLA response time RT (ms)", 0.1, 1e5, key="rt_ms", step=10.0)
        with st.expander("Dispatch delays"):
            st.slider("d1: frontend → backend (ms)", 0.0, 20.0, key="d1_ms", step=0.05)
            st.slider("d2: backend → frontend (ms)", 0.0, 20.0, key="d2_ms", step=0.05)
            st.slider("Δ: pause before a retry (ms)", 0.0, 50.0, key="delta_ms", step=0.05)
        st.toggle("Simulate random dispatch", key="simulate",
                  help=f"{data.SIM_POINTS} cached simulations of at least 100,000 requests "
                       f"near the approximation's answer (up to {data.SIM_MAX_N} replicas).")
        with st.expander("Trace and autoscaling"):
            st.radio("Trace", ("diurnal", "custom"), key="trace", horizontal=True,
                     format_func={"diurnal": "synthetic day", "custom": "my CSV"}.get)
            st.number_input("Interval (s)", 10.0, 3600.0, key="interval_s", step=60.0)
            if st.session_state["trace"] == "diurnal":
                st.number_input("Length (h)", 1.0, 168.0, key="hours", step=1.0)
                st.slider("Day/night amplitude", 0.0, 0.95, key="amplitude", step=0.05)
                st.number_input("Spikes", 0, 20, key="spikes", step=1)
                st.number_input("Random seed", 0, 2 ** 31 - 1, key="seed", step=1)
            st.number_input("Provisioning delay (s)", 0.0, 7200.0, key="prov_s", step=30.0)
            st.slider("Headroom (extra load provisioned)", 0.0, 2.0, key="headroom", step=0.05)
            st.number_input("GPU price ($/hour)", 0.0, 1e3, key="usd_h", step=0.1)
        st.radio("Chart image format", ("png", "svg"), key="img", horizontal=True)


def trace_input(lam: float) -> tuple[tuple, float, str]:
    """(rates, interval_s, label) of the trace in use; a bad CSV shows its error
    here and the last valid trace stays in use."""
    ss = st.session_state
    interval = max(float(ss["interval_s"]), ss["hours"] * 3600.0 / MAX_INTERVALS)
    synthetic = (data.synthetic_trace(lam, ss["hours"], interval, ss["amplitude"],
                                      ss["spikes"], ss["seed"]), interval,
                 f"synthetic, mean {lam:g} requests/s, seed {ss['seed']}")
    if ss["trace"] == "diurnal" and interval > ss["interval_s"]:
        st.caption(f"Interval raised to {interval:g} s to keep {MAX_INTERVALS:,} intervals.")
    if ss["trace"] == "diurnal":
        return synthetic
    upload = st.file_uploader("Upload trace CSV", type=["csv", "txt"], key="sla_trace_upload",
                              help="Columns time_s,rate_per_s (one row per interval) or "
                                   f"timestamp_s (one per request); at most "
                                   f"{MAX_UPLOAD_BYTES // 1_000_000} MB.")
    pasted = st.text_area("…or paste trace CSV", key="sla_trace_paste", height=120,
                          placeholder="time_s,rate_per_s\n0,420\n300,515\n600,640",
                          max_chars=MAX_UPLOAD_BYTES)
    fallback = ss.get(_LAST) or synthetic
    try:
        if upload is not None:
            parsed, label = parse_trace_csv(upload.getvalue(), ss["interval_s"]), upload.name
        elif pasted.strip():
            parsed, label = parse_trace_csv(pasted, ss["interval_s"]), "pasted trace"
        else:
            st.info("Paste or upload a trace; showing the synthetic day meanwhile.")
            return fallback
    except ValueError as err:
        st.error(f"Trace not used: {err}", icon=":material/error:")
        st.info(f"Still using the last valid trace: {fallback[2]}.")
        return fallback
    value = (tuple(parsed["rate_per_s"].tolist()), parsed["interval_s"],
             f"{label} ({parsed['rate_per_s'].size} intervals)")
    ss[_LAST] = value
    return value


def service_rate() -> float:
    ss = st.session_state
    if ss["mu_source"] == "manual":
        return float(ss["mu"])
    name, alpha, tau0 = data.gpu_table()[ss["mu_source"]]
    mu = data.gpu_mu(alpha, tau0, float(ss["gpu_target_ms"]))
    st.sidebar.caption(f"{name}: α = {alpha:.4g} ms, τ0 = {tau0:.4g} ms → μ = {mu:,.0f} "
                       f"requests/s per GPU at mean latency ≤ {ss['gpu_target_ms']:g} ms.")
    return mu


def sim_answer(sim, approx: float) -> str:
    if not np.isfinite(approx):
        return "none"
    if sim is None:
        off = not st.session_state["simulate"]
        return "off" if off else f"n/a (> {data.SIM_MAX_N})"
    if sim["all_meet"]:
        return f"≤ {int(sim['n'][0])}"
    return fmt_n(sim["fewest"]) if np.isfinite(sim["fewest"]) else f"> {int(sim['n'][-1])}"


def lam_mu(s) -> float:
    return s.lam / s.mu


def fmt_n(n: float) -> str:
    return f"{int(n)}" if np.isfinite(n) else "none"


def view_figures(view: str, ctx: dict) -> list:
    """(name, figure) pairs of one view, each from a pure builder."""
    s, cur, sim = ctx["s"], ctx["curves"], ctx["sim"]
    if view == "Replicas":
        fix = None if cur["n_fix"] is None else (cur["n_fix"], cur["within_fix"])
        base = ctx["base"]
        return [("sla_vs_replicas", figs.miss_figure(
                    cur["n"], cur["within_eq7"], cur["within_mmn"], percentile=s.percentile,
                    n_capacity=lam_mu(s), fix=fix,
                    sim=None if sim is None else (sim["n"], sim["within"]),
                    chosen=ctx["n"], baseline=None if base is None else base["curve"])),
                ("waiting_vs_replicas", figs.waiting_figure(
                    cur["n"], 1000 * cur["omega"], 1000 * cur["omega_printed"],
                    1000 * cur["omega_mmn"], percentile=s.percentile, n_capacity=lam_mu(s),
                    sim=None if sim is None else (sim["n"], 1000 * sim["omega"])))]
    if view == "Response time":
        if not ctx["stable"]:
            return []
        c, run = ctx["cdf"], ctx["sim_at_n"]
        return [("response_cdf", figs.cdf_figure(
            1000 * c["t"], c["eq7"], c["mmn"], rt_ms=1000 * s.rt, percentile=s.percentile,
            n=ctx["n"], fix=c["fix"],
            sim=None if run is None else (1000 * c["t"], run.fraction_within(c["t"]))))]
    if view == "Trace & cost":
        p = ctx["plan"]
        if p is None:
            return []
        t_h = np.arange(p.rate_per_s.size) * p.interval_s / 3600.0
        step = p.interval_s / 3600.0
        return [("trace_replicas", figs.trace_figure(t_h, p.rate_per_s, p.needed, p.serving,
                                                     p.sla_met, s.mu, step)),
                ("cost", figs.cost_figure(t_h, p.ordered, p.needed.max(), step,
                                          ctx["usd_h"]))]
    return []


def run():
    share.restore(FIELDS)
    st.title("Autoscaling for a latency SLA")
    st.caption("Swayam (appendix): requests go to a random replica and retry elsewhere when it "
               "is busy. How many replicas keep p% of requests under RT, by the paper's "
               "approximation (eq 7), by simulation and by one central M/M/n queue; and what "
               "autoscaling over a day of load saves against a static fleet sized for the peak.")
    share.show_warnings()
    sidebar()
    ss = st.session_state
    mu = service_rate()
    lam = float(ss["lam"])
    if mu <= 0:
        st.error(f"A GPU cannot keep its mean latency at {ss['gpu_target_ms']:g} ms under any "
                 "load: a lone request already takes α + τ0, and load adds to it. Raise the "
                 "per-GPU target.", icon=":material/warning:")
        share.publish(FIELDS)
        return
    s = data.Scenario(lam, mu, ss["law"], float(ss["sigma"]), ss["d1_ms"] / 1000,
                      ss["d2_ms"] / 1000, ss["delta_ms"] / 1000, float(ss["pct"]),
                      ss["rt_ms"] / 1000)
    ans = data.answers(s)
    n_stable = float(np.floor(lam / mu) + 1)
    if not np.isfinite(ans["approx"]):
        st.error(f"No number of replicas meets p{s.percentile:g} ≤ {ss['rt_ms']:g} ms: even an "
                 f"idle replica is too slow (d1 + the service time's p{s.percentile:g}). Raise "
                 "RT or μ, or lower the percentile.", icon=":material/warning:")

    # ------------------------------------------------------------ answer
    known = np.array([ans["approx"], ans["mmn"], ss["n"]], dtype=float)
    curves = data.n_curves(s, known[np.isfinite(known)].max() * 1.25 + 6)
    sim, ns = None, ()
    if ss["simulate"] and np.isfinite(ans["approx"]):
        ns = data.sim_grid(lam, mu, ans["approx"] - 4)
    if ns:
        bar = LazyProgress("Simulating…")
        sim = data.sim_sweep(s, ns, bar)
        bar.empty()
    st.subheader("Answer")
    text = ""
    if np.isfinite(ans["approx"]):
        who = (f"{sim_answer(sim, ans['approx'])} replicas meet (simulated)" if sim is not None and
               np.isfinite(sim["fewest"]) else f"eq 7 says {fmt_n(ans['approx'])} replicas meet")
        text = (f"\n\n**{who} p{s.percentile:g} ≤ {ss['rt_ms']:g} ms at λ = {lam:,.4g} "
                f"requests/s** (μ = {mu:,.4g} per replica, {s.law} service); the "
                f"approximation says n′ = {fmt_n(ans['approx'])}, one central M/M/n queue "
                f"{fmt_n(ans['mmn'])}.")
    st.markdown(results_markdown([
        ("Replicas, simulation (random retry)", sim_answer(sim, ans["approx"])),
        ("Replicas, approximation n′ (eq 7)", fmt_n(ans["approx"])),
        ("Replicas, M/M/n (central queue)", fmt_n(ans["mmn"])),
        ("Replicas for a steady state", f"{int(n_stable)}")]) + text)

    # ------------------------------------------------------------ trace plan
    rates, interval, label = trace_input(lam)
    plan = None
    try:
        plan = data.plan(s, rates, interval, float(ss["prov_s"]), float(ss["headroom"]),
                         float(ss["usd_h"]))
    except ValueError as err:
        st.error(f"Autoscaling plan not available: {err}", icon=":material/warning:")
    if plan is not None:
        st.markdown(results_markdown([
            ("Cost, autoscaled", f"${plan.cost:,.2f} ({plan.gpu_hours:,.1f} GPU-h)"),
            ("Cost, static peak", f"${plan.static_cost:,.2f} ({int(plan.needed.max())} replicas)"),
            ("Saving", f"{100 * plan.savings:.1f} %"),
            ("Intervals missing the SLA", f"{plan.violation_intervals}"),
            ("Late requests", f"{plan.late_requests:,.0f}")])
            + f"\n\nTrace: {label}; interval {interval:g} s.")

    plan_key = (rates, interval, float(ss["prov_s"]), float(ss["headroom"]), float(ss["usd_h"]))
    scenario = {"label": f"λ={lam:g}/s, μ={mu:.4g}/s, p{s.percentile:g} ≤ {ss['rt_ms']:g} ms",
                "key": (s, plan_key),
                "metrics": {"replicas (eq 7)": ans["approx"], "replicas (M/M/n)": ans["mmn"],
                            **({} if plan is None else {"cost autoscaled ($)": plan.cost,
                                                         "saving": plan.savings})},
                "curve": (curves["n"], curves["within_eq7"])}
    base = compare.controls(PAGE, scenario, action_row())
    if base is not None:
        st.caption(f"Baseline: {base['label']}")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)

    # ------------------------------------------------------------ views
    view = st.segmented_control("View", VIEWS, key="view", required=True)
    ctx = dict(s=s, curves=curves, sim=sim, n=None, n_stable=n_stable, base=base, plan=plan,
               usd_h=float(ss["usd_h"]), trace_label=label,
               key=(s, float(curves["n"][-1]), ns, None if base is None else base["key"],
                    plan_key))
    st.subheader("At a chosen number of replicas")
    ctx = at_replicas(ctx)
    if view not in N_VIEWS:
        show_view(view, dict(ctx, n=None))
    share.publish(FIELDS)


# Views whose charts depend on the chosen n (drawn inside the what-if fragment).
N_VIEWS = ("Response time",)


def show_view(view: str, ctx: dict) -> None:
    if view == "Formulas":
        formulas_panel(FORMULAS, ERRATA, "Errata and limits of the approximation")
        return
    key = ctx["key"] + (ctx["n"] if view in N_VIEWS else None,)
    for name, fig in memo_figures(PAGE, view, key, view_figures, ctx):
        show_chart(fig, name)
    if view == "Response time" and not ctx["stable"]:
        st.info(f"The CDF needs more than λ/μ = {lam_mu(ctx['s']):.4g} replicas; raise n.")
    if view == "Replicas":
        st.caption("Shaded: too few replicas for a steady state. Dotted purple: eq 7 with "
                   "the busy probability of a retry from the M/M/n busy-count chain (shown "
                   "for c·μ ≤ 50 and n ≤ 400). M/M/n assumes exponential service and no "
                   "d1, d2, Δ.")


@st.fragment
def at_replicas(ctx: dict) -> dict:
    """Replicas slider, P(R ≤ RT) at n (eq 7 and simulated), the report; the
    response-time CDF at n.  Moving n re-runs only this (``st.fragment``)."""
    ss, s = st.session_state, ctx["s"]
    top = max(int(ctx["curves"]["n"][-1]), int(ss["n"]), 2)
    st.slider("Replicas n", 1, top, key="n", step=1,
              help="The fleet size the response-time distribution below is for.")
    n = int(ss["n"])
    lam, mu = s.lam, s.mu
    stable = lam < n * mu
    if not stable:
        st.error(f"Unstable: λ = {lam:,.4g} requests/s is at or beyond the capacity nμ = "
                 f"{n * mu:,.4g} requests/s of n = {n} replicas; at least "
                 f"{int(ctx['n_stable'])} are needed for a steady state.",
                 icon=":material/warning:")
    sim_at_n = (data.sim_point(s, float(n), data.sim_requests(n))
                if ss["simulate"] and stable and n <= data.SIM_MAX_N else None)
    within_n = float(sla.response_cdf(s.rt, lam, mu, n, *s.delays, s.service))
    results_table([
        (f"P(R ≤ RT) at n = {n}, eq 7", f"{100 * within_n:.2f} %" if stable else "0 (unstable)"),
        (f"P(R ≤ RT) at n = {n}, simulated", "off" if sim_at_n is None
         else f"{100 * sim_at_n.fraction_within(s.rt):.2f} %"),
        ("Utilisation λ/(nμ)", f"{100 * lam / (n * mu):.1f} %")])
    ctx = dict(ctx, n=n, stable=stable, sim_at_n=sim_at_n,
               cdf=data.cdf_curves(s, n) if stable else None)
    params = {"λ (requests/s)": f"{lam:.6g}", "μ (requests/s)": f"{mu:.6g}", "service": s.law,
              "d1, d2, Δ (ms)": f"{ss['d1_ms']:g}, {ss['d2_ms']:g}, {ss['delta_ms']:g}",
              "SLA": f"p{s.percentile:g} ≤ {ss['rt_ms']:g} ms", "n": n,
              "trace": ctx["trace_label"]}
    report_button("Autoscaling for a latency SLA", params,
                  lambda: [(nm, f, "") for v in VIEWS[:-1] for nm, f in view_figures(v, ctx)],
                  FORMULAS, ERRATA, "autoscaling_sla_report.html")
    if ss["view"] in N_VIEWS:
        show_view(ss["view"], ctx)
    share.publish(FIELDS)
    return ctx


run()
