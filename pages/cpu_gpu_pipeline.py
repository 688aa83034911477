"""CPU-GPU pipeline (May & Voigt 2010): a blocking tandem CPU → GPU memory → compute units."""
import numpy as np
import streamlit as st

from ui import compare, share
from ui import figures_pipeline as figs
from ui import pipeline_data as data
from ui.export import report_button, show_chart
from ui.memo import LazyProgress
from ui.panel import action_row, formulas_panel, memo_figures, results_markdown

PAGE = "pipeline"
SPECS = data.spec_table()
WORKLOADS = data.workload_table()
CUSTOM = "custom"
FIELDS = [
    share.Field("gpu", "a100_40gb_sxm", str, choices=tuple(SPECS) + (CUSTOM,)),
    share.Field("link_gbs", 32.0, float, 0.01, 1e4),
    share.Field("mem_bw_gbs", 1555.0, float, 0.1, 1e5),
    share.Field("mem_gb", 40.0, float, 0.01, 1e4),
    share.Field("sms", 108, int, 1, 1024),
    share.Field("peak_tflops", 19.5, float, 0.001, 1e5),
    share.Field("workload", "job_1mib_intensity_16", str, choices=tuple(WORKLOADS)),
    share.Field("load_mode", "frac", str, choices=("frac", "rate")),
    share.Field("frac", 0.5, float, 0.01, 0.99),
    share.Field("rate_per_s", 10000.0, float, 0.001, 1e9),
    share.Field("K", 8, int, 1, 64),
    share.Field("units", 8, int, 1, 128),
    share.Field("cpu_speedup", 1.0, float, 0.01, 1000.0),
    share.Field("blocking", "before", str, choices=("before", "after")),
    share.Field("simulate", False, bool),
    share.Field("view", "Pipeline", str, choices=(
        "Pipeline", "Throughput & latency", "FLOP/s & bytes/s", "Buffer & units", "Formulas")),
    share.Field("img", "png", str, choices=("png", "svg")),
]
VIEWS = FIELDS[-2].choices
FORMULAS = [
    ("W_{M/M/1} = \\frac{1}{\\mu-\\lambda},\\quad L = \\frac{\\rho}{1-\\rho}",
     "CPU stage alone (M/M/1); the paper prints 1/(λ − μ)"),
    ("p_n = p_0\\frac{r^n}{n!}\\ (n\\le c),\\quad p_0\\frac{r^n}{c!\\,c^{n-c}}\\ (c<n\\le K),"
     "\\quad r = \\lambda/\\mu", "M/M/c/K state probabilities (memory: c = 1; units: K = c)"),
    ("W = \\frac{L}{\\lambda(1-p_K)},\\quad W_q = \\frac{L_q}{\\lambda(1-p_K)}",
     "M/M/c/K mean times of an admitted job (the paper prints both as W, with p_k)"),
    ("\\pi_{n+1} = \\pi_n R,\\quad R = \\lambda(-A_1-\\lambda G)^{-1},\\quad "
     "A_2 + A_1G + \\lambda G^2 = 0", "exact tandem: quasi-birth-death process, level = jobs at "
     "the CPU, phase = (jobs in memory, busy units); G by logarithmic reduction"),
    ("\\lambda < \\theta A_2\\mathbf{1},\\quad \\theta(A_0+A_1+A_2) = 0",
     "stability (the exact capacity): drift condition of the saturated downstream"),
    ("t_{cpu} = \\frac{(1-f)IS}{\\text{host}} + \\frac{S}{\\text{link}},\\quad "
     "t_{mem} = \\frac{S\\max(1, fI/r)}{\\text{mem BW}},\\quad "
     "t_{cu} = \\frac{fIS}{\\text{peak}/\\text{SMs}}",
     "mean stage times from the spec and workload (S bytes, I FLOP/byte, f parallel, r reuse)"),
]
ERRATA = [
    "M/M/1: the paper prints W = 1/(λ − μ); it is 1/(μ − λ).",
    "M/M/c/K: both mean times are printed as 'W'; the second is Wq = Lq/(λ(1 − p_K)).",
    "M/M/c/K: the mean times divide by λ(1 − p_k); read p_K, the blocking probability.",
    "M/M/c/K L_q: the paper defines ρ = λ/(cμ) but its L_q and L use ρ for the offered load "
    "λ/μ; read with its own ρ the formula is wrong (with r = λ/μ it is right except at r = c, "
    "a 0/0 whose limit is p0 r^c (K−c)(K−c+1)/(2c!)).",
    "The paper's blocking rule ('service rate of zero while the next stage is full') is "
    "blocking before service; blocking after service is another model with a higher "
    "saturation throughput. Both are solved here.",
]


def _set_k_from_workload():
    st.session_state["K"] = int(WORKLOADS[st.session_state["workload"]].memory_slots)


def sidebar():
    with st.sidebar:
        st.selectbox("GPU", tuple(SPECS) + (CUSTOM,), key="gpu",
                     format_func=lambda g: "Custom specs" if g == CUSTOM else SPECS[g].name)
        if st.session_state["gpu"] == CUSTOM:
            st.number_input("Host link (GB/s, one direction)", 0.01, 1e4, key="link_gbs")
            st.number_input("Memory bandwidth (GB/s)", 0.1, 1e5, key="mem_bw_gbs")
            st.number_input("Memory (GB)", 0.01, 1e4, key="mem_gb")
            st.number_input("SM count", 1, 1024, key="sms", step=1)
            st.number_input("Peak (TFLOP/s)", 0.001, 1e5, key="peak_tflops")
        st.selectbox("Workload", tuple(WORKLOADS), key="workload",
                     format_func=lambda w: WORKLOADS[w].name, on_change=_set_k_from_workload)
        st.divider()
        st.radio("Load given as", ("frac", "rate"), key="load_mode", horizontal=True,
                 format_func={"frac": "fraction of capacity", "rate": "jobs/s"}.get,
                 help="The load itself is set above the answer, where moving it re-draws "
                      "only what depends on it.")
        st.slider("K: jobs the GPU memory holds", 1, 64, key="K",
                  help="Set from the workload's memory_slots when the workload changes.")
        st.slider("Compute units modelled", 1, 128, key="units",
                  help="The GPU's SMs are grouped into this many servers; the stage's total "
                       "rate is kept.")
        st.number_input("CPU + link speed-up (×)", 0.01, 1000.0, key="cpu_speedup", step=1.0,
                        help="What-if: a faster host stage (overlapped copies, a faster link); "
                             "multiplies the CPU stage's rate.")
        st.radio("Blocking", ("before", "after"), key="blocking", horizontal=True,
                 format_func={"before": "before service (paper)", "after": "after service"}.get)
        st.toggle("Show simulation points", key="simulate",
                  help=f"{data.SIM_JOBS:,} jobs at {len(data.SIM_FRACTIONS)} loads (cached).")
        st.radio("Chart image format", ("png", "svg"), key="img", horizontal=True)


def spec():
    if st.session_state["gpu"] == CUSTOM:
        s = st.session_state
        return data.custom_spec(s["link_gbs"], s["mem_bw_gbs"], s["mem_gb"], s["sms"],
                                s["peak_tflops"])
    return SPECS[st.session_state["gpu"]]


def fmt_rate(per_ms: float) -> str:
    """A rate given per ms, shown in jobs/s."""
    x = per_ms * 1000
    return f"{x:,.0f} jobs/s" if x >= 100 else f"{x:.3g} jobs/s"


def stage_boxes(r, p, lam, stable) -> tuple[list, int]:
    """Live numbers on each stage and the index of the slowest one (standalone capacity)."""
    thr = float(p.throughput)
    caps = [r.mu_cpu, r.mu_mem, r.c * r.mu_cu]
    q_cpu = f"{float(p.l_cpu):.3g}" if stable else "∞"
    boxes = [
        dict(name="CPU + host link", kind="M/M/1, unbounded queue", lines=[
            f"alone: {fmt_rate(caps[0])}", f"busy {100 * thr / r.mu_cpu:.1f} %",
            f"blocked {100 * float(p.p_cpu_blocked):.1f} %", f"jobs here {q_cpu}"]),
        dict(name="GPU global memory", kind=f"1 server, K = {r.K} slots", lines=[
            f"alone: {fmt_rate(caps[1])}", f"busy {100 * thr / r.mu_mem:.1f} %",
            f"blocked {100 * float(p.p_mem_blocked):.1f} %",
            f"jobs here {float(p.l_mem):.3g} of {r.K}"]),
        dict(name="Compute units", kind=f"{r.c} servers, no buffer", lines=[
            f"alone: {fmt_rate(caps[2])}",
            f"busy {100 * float(p.l_cu) / r.c:.1f} %", f"units busy {float(p.l_cu):.3g}", ""]),
    ]
    return boxes, int(np.argmin(caps))


def view_figures(view: str, ctx: dict) -> list:
    """(name, figure) pairs of one view; every figure comes from a pure builder."""
    cv, r, sim = ctx["curves"], ctx["rates"], ctx["sim"]
    axes = dict(unstable_at=cv.cap * 1000, x_max=cv.lam_dense[-1] * 1000)
    lam_s, lam_d = cv.lam * 1000, cv.lam_dense * 1000
    if view == "Pipeline":
        boxes, hot = ctx["boxes"]
        return [("pipeline", figs.pipeline_diagram(boxes, hot, ctx["arrival_text"]))]
    if view == "Throughput & latency":
        base = ctx["base"]
        return [
            ("throughput", figs.throughput_figure(
                lam_s, cv.exact.throughput * 1000, lam_d, cv.naive.throughput * 1000, **axes,
                sim=None if sim is None else (sim.lam * 1000, sim.throughput * 1000))),
            ("latency", figs.latency_figure(
                lam_s, cv.exact.w_total, lam_d, cv.naive.w_total, **axes,
                sim=None if sim is None else (sim.lam * 1000, sim.w_total, sim.ci95),
                baseline=None if base is None else base["curve"]))]
    if view == "FLOP/s & bytes/s":
        s, thr = ctx["spec"], np.minimum(cv.lam_dense, cv.cap) * 1000     # jobs/s
        peak = (s.fp16_peak_TFLOP_per_s if ctx["precision"] == "fp16"
                else s.fp32_peak_TFLOP_per_s) * 1e12
        return [
            ("flops", figs.ceiling_figure(
                "Sustained compute vs load", "FLOP/s", lam_d,
                [("sustained FLOP/s", thr * r.flops_per_job)],
                [(f"{ctx['precision'].upper()} peak", peak)], **axes)),
            ("bytes", figs.ceiling_figure(
                "Sustained memory and link traffic vs load", "bytes/s", lam_d,
                [("GPU memory traffic", thr * r.mem_traffic_bytes_per_job),
                 ("host link traffic", thr * ctx["job_bytes"])],
                [("memory bandwidth", s.memory_bandwidth_GB_per_s * 1e9),
                 ("host link bandwidth", s.host_link_bandwidth_GB_per_s * 1e9)], **axes))]
    if view == "Buffer & units":
        kx, kc = ctx["k_family"]
        ux, uc = ctx["c_family"]
        limit = min(r.mu_cpu, r.mu_mem, r.c * r.mu_cu) * 1000
        return [
            ("capacity_vs_K", figs.sensitivity_figure(
                "Max sustainable rate vs buffer K", "K (jobs the GPU memory holds)", kx,
                kc * 1000, current=r.K, limit=limit)),
            ("capacity_vs_units", figs.sensitivity_figure(
                "Max sustainable rate vs compute units (each as fast as now)",
                "compute units modelled", ux, uc * 1000, current=r.c,
                limit=min(r.mu_cpu, r.mu_mem) * 1000))]
    return []


def exact_allowed(key: tuple, n_phases: int) -> bool:
    """Small phase spaces are solved on every rerun; large ones once asked for."""
    solved = st.session_state.setdefault("_pipeline_solved", set())
    if n_phases <= data.N_AUTO or key in solved:
        return True
    seconds = 0.03 * data.N_POINTS * (n_phases / 153) ** 3
    st.warning(f"Limited: K = {key[3]} and {key[4]} compute units give N = {n_phases} phases; "
               f"the exact tandem costs O(N³) (about {seconds:,.0f} s for the "
               f"{data.N_POINTS}-point curve here), so it is not solved on every slider move (only up to N = "
               f"{data.N_AUTO}). Group the SMs into fewer units, lower K, or solve once:",
               icon=":material/hourglass_top:")
    if st.button("Solve exactly", key="solve_exact", icon=":material/calculate:"):
        solved.add(key)
        return True
    return False


def run():
    share.restore(FIELDS)
    st.title("CPU-GPU pipeline")
    st.caption("May & Voigt (2010), *Queueing theory modeling of a CPU-GPU system*. Each job "
               "is prepared and copied by the CPU, waits in GPU global memory (room for K jobs) "
               "and runs on one of c compute units; a full stage blocks the one before it.")
    share.show_warnings()
    sidebar()
    gpu, wl = spec(), WORKLOADS[st.session_state["workload"]]
    K, units, blocking = int(st.session_state["K"]), int(st.session_state["units"]), \
        st.session_state["blocking"]
    try:
        r = data.rates(gpu, wl.id, K, units, float(st.session_state["cpu_speedup"]))
    except ValueError as err:
        st.error(f"These specs do not fit the workload: {err}", icon=":material/error:")
        share.publish(FIELDS)
        return
    st.caption(f"{gpu.name} · {wl.name}. Rates: CPU + link {fmt_rate(r.mu_cpu)}, "
               f"memory {fmt_rate(r.mu_mem)}, each of {r.c} modelled units "
               f"{fmt_rate(r.mu_cu)} ({gpu.sm_count / r.c:.3g} SMs each; the stage's "
               f"total rate is kept, so only the number of jobs run at once is coarser).")
    rates_key = (r.mu_cpu, r.mu_mem, r.mu_cu, r.K, r.c, blocking)
    n_phases = data.phases(r.mu_cpu, r.mu_mem, r.mu_cu, K, units, blocking)
    if not exact_allowed(rates_key, n_phases):
        share.publish(FIELDS)
        return
    bar = LazyProgress("Solving the exact tandem…")
    cv = data.curves(*rates_key, bar=bar)
    bar.empty()
    sim = None
    if st.session_state["simulate"]:
        bar = LazyProgress("Simulating…")
        sim = data.sim_sweep(*rates_key, cv.cap, bar)
        bar.empty()
    view = st.segmented_control("View", VIEWS, key="view", required=True)
    st.subheader("Answer")
    ctx = dict(curves=cv, rates=r, sim=sim, spec=gpu, precision=wl.precision,
               what_if=data.what_if(*rates_key),
               job_bytes=float(wl.job_size_bytes), rates_key=rates_key, workload=wl,
               K=K, units=units, blocking=blocking)
    ctx = answer(ctx)
    if view not in LOAD_VIEWS:
        show_view(view, ctx)
    share.publish(FIELDS)


# Views whose charts depend on the load (drawn inside the what-if fragment).
LOAD_VIEWS = ("Pipeline",)


def show_view(view: str, ctx: dict) -> None:
    if view == "Formulas":
        formulas_panel(FORMULAS, ERRATA)
        return
    rates_key, base = ctx["rates_key"], ctx["base"]
    if view == "Buffer & units":
        bar = LazyProgress("Solving capacities…")
        families(ctx, bar)
        bar.empty()
        st.caption(f"Phase spaces above N = {data.N_LIMIT} are left out (O(N³) each).")
    key = (rates_key, ctx["lam"] if view in LOAD_VIEWS else None, st.session_state["simulate"],
           None if base is None else base["key"], ctx["spec"], ctx["workload"].id)
    for name, fig in memo_figures(PAGE, view, key, view_figures, ctx):
        show_chart(fig, name)
    if view == "Pipeline":
        st.caption("Busy: time fraction a stage works; blocked: time fraction it holds or may "
                   "not start a job because the next stage is full. Red: the slowest stage "
                   "alone.")


def families(ctx: dict, bar=None) -> None:
    ctx["k_family"] = data.k_family(*ctx["rates_key"], bar=bar)
    ctx["c_family"] = data.c_family(*ctx["rates_key"], bar=bar)


@st.fragment
def answer(ctx: dict) -> dict:
    """Load input, the answer at that load, pin/report; load-dependent charts.
    Moving the load re-runs only this (``st.fragment``)."""
    if st.session_state["load_mode"] == "frac":
        st.slider("Load λ / capacity", 0.01, 0.99, key="frac", step=0.01)
    else:
        st.number_input("Arrival rate λ (jobs/s)", 0.001, 1e9, key="rate_per_s", step=100.0)
    cv, r, rates_key = ctx["curves"], ctx["rates"], ctx["rates_key"]
    cap = cv.cap
    lam = cap * st.session_state["frac"] if st.session_state["load_mode"] == "frac" \
        else st.session_state["rate_per_s"] / 1000.0
    stable = lam < cap
    p = data.point(lam, *rates_key)
    naive = data.point_naive(lam, *rates_key)
    if not stable:
        st.error(f"Unstable: {fmt_rate(lam)} is at or beyond this pipeline's capacity "
                 f"of {fmt_rate(cap)}. The CPU queue grows without bound; lower the "
                 "load, raise K or add units.", icon=":material/warning:")
    boxes, hot = stage_boxes(r, p, lam, stable)
    wi = ctx["what_if"]
    items = [
        ("Max sustainable rate", fmt_rate(cap)),
        ("vs slowest stage alone",
         f"{100 * (cap / min(r.mu_cpu, r.mu_mem, r.c * r.mu_cu) - 1):.1f} %"),
        ("Bottleneck stage", boxes[hot]["name"]),
        ("Mean latency (exact)", f"{float(p.w_total):.4g} ms" if stable else "∞ (unstable)"),
        ("Mean latency (naive)", f"{float(naive.w_total):.4g} ms"
         if np.isfinite(naive.w_total) else "∞ (unstable)"),
    ] + [(f"Capacity with {name}", "too large to solve" if c_new is None
          else f"{fmt_rate(c_new)} ({100 * (c_new / cap - 1):+.2f} %)")
         for name, c_new in wi.items()]
    st.markdown(results_markdown(items) + "\n\nNaive: independent stations. More units means "
                "more hardware: each extra unit is as fast as one modelled unit now. "
                "Capacities are exact (drift condition of the saturated pipeline).")
    gpu, wl, K, units, blocking = (ctx["spec"], ctx["workload"], ctx["K"], ctx["units"],
                                   ctx["blocking"])
    scenario = {"label": f"{gpu.name}, {wl.id}, K={K}, units={units}, {blocking}",
                "key": rates_key + (lam,),
                "metrics": {"capacity (jobs/s)": cap * 1000,
                            "E[W] (ms)": float(p.w_total),
                            "CPU blocked": float(p.p_cpu_blocked),
                            "memory blocked": float(p.p_mem_blocked)},
                "curve": (cv.lam * 1000, cv.exact.w_total)}
    row = action_row()
    base = compare.controls(PAGE, scenario, row)
    ctx = dict(ctx, lam=lam, base=base, boxes=(boxes, hot),
               arrival_text=f"Poisson arrivals λ = {fmt_rate(lam)} "
                            f"({100 * lam / cap:.0f} % of capacity)")
    params = {"GPU": gpu.name, "workload": wl.name,
              "CPU speed-up": st.session_state["cpu_speedup"], "K": K, "compute units": units,
              "blocking": blocking, "load (jobs/s)": f"{lam * 1000:.6g}",
              "capacity (jobs/s)": f"{cap * 1000:.6g}"}

    def sections():
        if "k_family" not in ctx:
            families(ctx)
        return [(n, f, "") for v in VIEWS[:-1] for n, f in view_figures(v, ctx)]

    report_button("CPU-GPU pipeline", params, sections, FORMULAS, ERRATA,
                  "cpu_gpu_pipeline_report.html", where=row)
    if base is not None:
        st.caption(f"Baseline: {base['label']}")
        st.dataframe(compare.difference_table(scenario, base), hide_index=True)
    if st.session_state["view"] in LOAD_VIEWS:
        show_view(st.session_state["view"], ctx)
    share.publish(FIELDS)
    return ctx


run()
