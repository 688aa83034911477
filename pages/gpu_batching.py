"""GPU dynamic batching (Inoue 2021): latency, utilisation and energy vs load."""
import numpy as np
import streamlit as st

from engine import batching
from engine.operating_point import cost_per_million, max_rate_for_p99
from ui import batching_data as data
from ui import compare, share
from ui import figures_batching as figs
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, memo_figures, results_table
from ui.profile_input import profile_input

PAGE = "gpu"
FIELDS = [
    share.Field("preset", "v100_resnet50_mixed", str),
    share.Field("load_mode", "rho", str, choices=("rho", "rate")),
    share.Field("rho", 0.5, float, 0.01, 0.99),
    share.Field("rate_per_s", 3000.0, float, 1.0, 1e7),
    share.Field("cap_batch", False, bool),
    share.Field("b_max", 64, int, 1, 1024),
    share.Field("sla_ms", 10.0, float, 0.01, 1e5),
    share.Field("gpu_usd_h", 2.5, float, 0.0, 1e3),
    share.Field("usd_kwh", 0.15, float, 0.0, 100.0),
    share.Field("simulate", False, bool),
    share.Field("preferred", 32, int, 1, 4096),
    share.Field("view", "Latency", str, choices=(
        "Latency", "Utilisation & energy", "Batch-size limit", "Tail latency & Triton",
        "Profile fit", "Formulas")),
    share.Field("img", "png", str, choices=("png", "svg")),
]
VIEWS = FIELDS[-2].choices
FORMULAS = [
    ("\\tau^{[b]} = \\alpha b + \\tau_0,\\quad \\mu^{[b]} = \\frac{b}{\\alpha b+\\tau_0}",
     "batch time and throughput (eqs 25-26); stable iff ρ = λα < 1 (eq 27)"),
    ("E[W] = \\frac{E[B^2]-E[B]}{2\\lambda E[B]} + E[\\hat H]", "exact mean latency (Lemma 2, eq 15)"),
    ("E[B] = \\frac{\\lambda\\tau_0 + \\Pr(A=0)}{1-\\lambda\\alpha},\\quad "
     "E[B^2] = \\frac{(1+2\\lambda^2\\alpha\\tau_0)E[B]+\\lambda^2\\tau_0^2}{1-\\lambda^2\\alpha^2}",
     "batch-size moments (eqs 31-32); Pr(A=0) from the generating-function series (exact)"),
    ("\\phi_0 = \\frac{\\alpha+\\tau_0}{2(1-\\lambda\\alpha)}\\Big(1+2\\lambda\\tau_0+"
     "\\frac{1-\\lambda\\tau_0}{1+\\lambda\\alpha}\\Big)", "upper bound (eq 41), tight at light load"),
    ("\\phi_1 = \\frac{3}{2}\\frac{\\tau_0}{1-\\lambda\\alpha}+\\frac{\\alpha}{2}"
     "\\frac{\\lambda\\alpha+2}{1-\\lambda^2\\alpha^2}", "upper bound (eq 42), tight at heavy load"),
    ("\\eta = \\frac{1}{\\beta + c_0/E[B]} \\ge \\frac{1}{\\beta + c_0/\\max(1, \\lambda\\tau_0/(1-\\lambda\\alpha))}",
     "energy efficiency (eq 19) and its bound (eq 40), jobs per joule"),
]
ERRATA = [
    "Eq 7 prints E[(A^[b])²] = λ²E[(H^[b])²]; a Poisson count has E[A²] = λE[H] + λ²E[H²] "
    "(eq 34, which the proof uses, is right).",
    "Theorem 2 compares φ0(λ, α, τ0) with φ1(λ, α, τ1): read τ0.",
    "The paper calls π0 hard and takes 'exact' values from simulation; here they are exact "
    "(generating function of the batch-size chain), checked against truncated chains and simulation.",
]


def sidebar():
    with st.sidebar:
        profile = profile_input("preset")
        st.divider()
        st.radio("Load given as", ("rho", "rate"), key="load_mode", horizontal=True,
                 format_func={"rho": "ρ = λα", "rate": "requests/s"}.get,
                 help="The load itself is set above the results, where moving it "
                      "re-draws only what depends on it.")
        st.toggle("Cap the batch size (b_max)", key="cap_batch")
        if st.session_state["cap_batch"]:
            st.number_input("b_max", 1, 1024, key="b_max", step=1)
        st.number_input("Latency SLA (ms)", 0.01, 1e5, key="sla_ms", step=1.0)
        with st.expander("Prices"):
            st.number_input("GPU price ($/hour)", 0.0, 1e3, key="gpu_usd_h", step=0.1)
            st.number_input("Electricity ($/kWh)", 0.0, 100.0, key="usd_kwh", step=0.01)
        with st.expander("Simulation and Triton batcher"):
            st.toggle("Show simulation points", key="simulate",
                      help="Runs the discrete-event simulator (cached) at several loads.")
            st.number_input("Preferred batch size", 1, 4096, key="preferred", step=1)
        st.radio("Chart image format", ("png", "svg"), key="img", horizontal=True,
                 help="What the camera icon of every chart downloads.")
    return profile


def view_figures(view: str, ctx: dict) -> list:
    """(name, figure) pairs of one view; every figure comes from a pure builder."""
    c, x, to_x, sweep = ctx["c"], ctx["x"], ctx["to_x"], ctx["sweep"]
    axes = dict(x_title=ctx["x_title"], unstable_at=ctx["unstable_at"], x_max=ctx["x_max"])
    fit, stable = ctx["fit"], ctx["stable"]
    if view == "Latency":
        base = ctx["base"]
        return [("latency", figs.latency_figure(
            x, c.mean_latency, c.phi0, c.phi1, c.phi, **axes, sla_ms=ctx["sla"],
            sim=(to_x(sweep.lam), sweep.mean_latency, sweep.ci95)
            if ctx["simulate"] else None,
            baseline=None if base is None else (to_x(base["curve"][0]), base["curve"][1])))]
    if view == "Utilisation & energy":
        out = [("utilisation", figs.utilization_figure(x, c.utilization, c.utilization_bound,
                                                       **axes))]
        if c.energy_efficiency is not None:
            out.append(("energy_efficiency", figs.energy_efficiency_figure(
                x, c.energy_efficiency, c.energy_efficiency_bound, **axes)))
            out.append(("tradeoff", figs.tradeoff_figure(
                c.mean_latency, c.energy_efficiency, c.phi, c.energy_efficiency_bound,
                point=(ctx["here"].mean_latency, ctx["eta"]) if stable else None)))
        return out
    if view == "Batch-size limit":
        curves = [(f"b_max = {b}", to_x(lam), w)
                  for b, lam, w in data.family(fit.alpha_ms, fit.tau0_ms)]
        return [("b_max_family", figs.bmax_family_figure(curves, x, c.phi,
                                                         x_title=ctx["x_title"]))]
    if view == "Tail latency & Triton":
        out = [("percentiles", figs.percentiles_figure(
            to_x(sweep.lam), sweep.p50, sweep.p95, sweep.p99, sweep.ci_reliable, x,
            c.mean_latency, **axes, sla_ms=ctx["sla"]))]
        if stable:
            b_max = ctx["b_max"]
            preferred = min(ctx["preferred"], b_max or 1024)
            ds = data.delay_sweep(ctx["lam"], fit.alpha_ms, fit.tau0_ms, b_max, preferred,
                                  data.delay_grid(fit.alpha_ms, fit.tau0_ms), 200_000)
            out.append(("queue_delay", figs.queue_delay_figure(
                ds.delay_ms, ds.p99, ds.mean_latency, ds.best_delay_ms, ds.greedy_p99)))
        return out
    if view == "Profile fit":
        out = [("throughput_fit", figs.throughput_fit_figure(
            fit.batch_size, 1000 * fit.batch_size / fit.batch_time_ms, fit.alpha_ms,
            fit.tau0_ms, fit.r2)),
            ("time_residuals", figs.residuals_figure(fit.batch_size, fit.residuals_ms, "ms"))]
        if fit.beta_j is not None:
            out.append(("energy_fit", figs.energy_fit_figure(
                fit.batch_size, fit.energy_j, fit.beta_j, fit.c0_j, fit.r2_energy)))
        return out
    return []


# Views whose charts depend on the load (drawn inside the what-if fragment).
LOAD_VIEWS = ("Utilisation & energy", "Tail latency & Triton")


def load_input():
    if st.session_state["load_mode"] == "rho":
        st.slider("Normalised load ρ = λα", 0.01, 0.99, key="rho", step=0.01)
    else:
        st.number_input("Arrival rate (requests/s)", 1.0, 1e7, key="rate_per_s", step=100.0)


def show_view(view: str, ctx: dict, key: tuple) -> None:
    """The charts of one view and their captions."""
    if view == "Formulas":
        formulas_panel(FORMULAS, ERRATA)
        return
    for name, fig in memo_figures(PAGE, view, key, view_figures, ctx):
        show_chart(fig, name)
    fit, lam, b_max = ctx["fit"], ctx["lam"], ctx["b_max"]
    if view == "Utilisation & energy" and fit.beta_j is None:
        st.info("Energy charts need board power in the profile.")
    if view == "Profile fit":
        st.caption(f"Source: {ctx['profile'].source}")
    if view == "Tail latency & Triton" and ctx["stable"]:
        ds = data.delay_sweep(lam, fit.alpha_ms, fit.tau0_ms, b_max,
                              min(int(st.session_state["preferred"]), b_max or 1024),
                              data.delay_grid(fit.alpha_ms, fit.tau0_ms), 200_000)
        st.caption(f"Triton batcher at this load: a max queue delay of {ds.best_delay_ms:.3g} ms "
                   f"gives the smallest p99 ({ds.p99.min():.3g} ms; greedy: "
                   f"{ds.greedy_p99:.3g} ms).")


def view_key(ctx: dict, view: str) -> tuple:
    """Every input the view's figures depend on (the load only where it matters)."""
    fit = ctx["fit"]
    base = ctx["base"]
    return (fit.alpha_ms, fit.tau0_ms, ctx["b_max"], fit.beta_j, fit.c0_j, ctx["profile"],
            ctx["rho_axis"], ctx["sla"], st.session_state["simulate"],
            None if base is None else base["key"], st.session_state["preferred"],
            ctx["lam"] if view in LOAD_VIEWS else None)


@st.fragment
def operating_point(ctx: dict) -> dict:
    """Load input, results at that load, pin/report actions; load-dependent charts.

    Moving the load re-runs only this (``st.fragment``): nothing else on the
    page depends on it.
    """
    load_input()
    fit, b_max, c, sla = ctx["fit"], ctx["b_max"], ctx["c"], ctx["sla"]
    alpha, tau0, beta, c0 = fit.alpha_ms, fit.tau0_ms, fit.beta_j, fit.c0_j
    if st.session_state["load_mode"] == "rho":
        lam = st.session_state["rho"] / alpha
    else:
        lam = st.session_state["rate_per_s"] / 1000.0
    cap = ctx["cap"]
    here = data.point(lam, alpha, tau0, b_max)
    stable = lam < cap
    if not stable:
        st.error(f"Unstable: {lam * 1000:,.0f} requests/s is at or beyond this server's capacity "
                 f"of {cap * 1000:,.0f} requests/s (ρ limit {cap * alpha:.3f}). Latency grows "
                 "without bound; lower the load or raise b_max.", icon=":material/warning:")
    sweep = ctx["sweep"]
    lam_p99 = max_rate_for_p99(sla, sweep)
    p99_here = data.p99_at(lam, alpha, tau0, b_max) if stable else float("inf")
    eta = None if beta is None else float(1.0 / (beta + c0 / here.mean_batch_size))
    j_per_req = None if eta is None else 1.0 / eta
    lam_sla = ctx["lam_sla"]
    usd = cost_per_million(lam, j_per_req or 0.0, st.session_state["gpu_usd_h"],
                           st.session_state["usd_kwh"])
    unstable = "∞ (unstable)"
    items = [
        ("Mean latency E[W]", f"{here.mean_latency:.3g} ms" if stable else unstable),
        ("p99 latency (simulated)", f"{p99_here:.3g} ms" if stable else unstable),
        ("Mean batch size E[B]", f"{here.mean_batch_size:.3g}"),
        ("Utilisation", f"{100 * here.utilization:.1f} %"),
        ("Load", f"{lam * 1000:,.0f} req/s (ρ = {lam * alpha:.3f})"),
        ("Energy efficiency", "n/a (no power data)" if eta is None else f"{eta:.3g} jobs/J"),
        ("Energy per request", "n/a" if j_per_req is None else f"{j_per_req:.3g} J"),
        ("$ per million requests", f"{usd:.3g}" if stable else "n/a"),
        ("Largest load with E[W] ≤ SLA", f"{lam_sla * 1000:,.0f} req/s (ρ = {lam_sla * alpha:.3f})"),
        ("Largest load with p99 ≤ SLA (simulated)",
         f"{lam_p99 * 1000:,.0f} req/s (ρ = {lam_p99 * alpha:.3f})"),
    ]
    results_table(items)
    scenario = {"label": f"{ctx['profile'].name}, b_max={b_max or '∞'}",
                "key": (alpha, tau0, b_max, beta, c0, lam),
                "metrics": {"E[W] (ms)": float(here.mean_latency),
                            "E[B]": float(here.mean_batch_size),
                            "utilisation": float(here.utilization),
                            "max req/s for SLA": lam_sla * 1000},
                "curve": (c.lam, c.mean_latency)}
    row = action_row()
    base = compare.controls(PAGE, scenario, row)
    ctx = dict(ctx, lam=lam, here=here, stable=stable, eta=eta, base=base)
    params = {"profile": ctx["profile"].name, "alpha (ms)": f"{alpha:.5g}",
              "tau0 (ms)": f"{tau0:.5g}", "b_max": b_max or "∞",
              "load (req/s)": f"{lam * 1000:.6g}", "rho": f"{lam * alpha:.4f}", "SLA (ms)": sla}
    report_button("GPU dynamic batching", params,
                  lambda: [(n, f, "") for v in VIEWS[:-1] for n, f in view_figures(v, ctx)],
                  FORMULAS, ERRATA, "gpu_batching_report.html", where=row)
    if base is not None:
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)
    view = st.session_state["view"]
    if view in LOAD_VIEWS:
        show_view(view, ctx, view_key(ctx, view))
    share.publish(FIELDS)
    return ctx


def run():
    share.restore(FIELDS)
    st.title("GPU dynamic batching")
    st.caption("Inoue (2021), *Queueing analysis of GPU-based inference servers with dynamic "
               "batching*. Jobs arrive as a Poisson stream; when the GPU frees, all waiting jobs "
               "(at most b_max) start as one batch of time αb + τ0.")
    share.show_warnings()
    profile = sidebar()
    fit = data.profile_fit(profile.batch_size, profile.throughput_per_s, profile.power_w)
    alpha, tau0 = fit.alpha_ms, fit.tau0_ms
    st.sidebar.caption(f"Fit: α = {alpha:.4g} ms, τ0 = {tau0:.4g} ms, R² = {fit.r2:.5f}"
                       + ("" if fit.r2_energy is None else
                          f"; energy β = {fit.beta_j:.4g} J, c0 = {fit.c0_j:.4g} J, "
                          f"R² = {fit.r2_energy:.5f}"))
    b_max = int(st.session_state["b_max"]) if st.session_state["cap_batch"] else None
    beta, c0 = fit.beta_j, fit.c0_j
    cap = float(batching.capacity(alpha, tau0, b_max))          # per ms
    rho_axis = st.session_state["load_mode"] == "rho"
    to_x = (lambda l: np.asarray(l) * alpha) if rho_axis else (lambda l: np.asarray(l) * 1000.0)
    sla = float(st.session_state["sla_ms"])
    c = data.curves(alpha, tau0, b_max, beta, c0)

    badge = data.validation(alpha, tau0, b_max)
    st.caption(f":material/verified: Validation for this profile: φ is at most "
               f"{100 * badge['phi_gap']:.1f}% above the exact E[W]; simulation agrees with the "
               f"exact mean within {badge['max_z']:.1f} CI half-widths at 3 loads.")
    bar = LazyProgress("Simulating…")
    sweep = data.rate_sweep(data.SIM_FRACTIONS, alpha, tau0, b_max, 200_000, bar)
    bar.empty()
    view = st.segmented_control("View", VIEWS, key="view", required=True)
    st.subheader("Operating point")
    ctx = dict(c=c, x=to_x(c.lam), to_x=to_x, x_title="normalised load ρ = λα" if rho_axis
               else "arrival rate (requests/s)", x_max=float(to_x(1.0 / alpha)),
               unstable_at=float(to_x(cap)), cap=cap, sla=sla, sweep=sweep, fit=fit,
               profile=profile, b_max=b_max, rho_axis=rho_axis,
               # read now: the report is built after the run, without session state
               simulate=bool(st.session_state["simulate"]),
               preferred=int(st.session_state["preferred"]),
               lam_sla=data.max_rate_mean(sla, alpha, tau0, b_max))
    ctx = operating_point(ctx)
    if view not in LOAD_VIEWS:
        show_view(view, ctx, view_key(ctx, view))
    share.publish(FIELDS)


run()
