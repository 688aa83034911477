"""Inputs of the autoscaling-SLA page: the share-link fields, the sidebar, and the
frozen inputs (``Scenario``, ``Trace``, ``PlanInputs``) that key every memoised call.

The page takes times in ms; the dataclasses hold seconds (``engine.sla.s_from_ms``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import streamlit as st

from engine import sla
from engine.core import domains as dom
from ui import arrivals_input, share
from ui.arrivals_input import POISSON, ArrivalChoice
from ui.export import plain_number
from ui.memo import memo
from ui.uploads import MAX_UPLOAD_BYTES, decode_text

from . import data
from .uploads import MAX_INTERVALS, parse_trace_csv, trace_description
from .views import VIEWS, REPLICAS

GPUS = tuple(data.gpu_table())
MANUAL = "manual"
TRACES = {"diurnal": "synthetic day", "custom": "my CSV"}
UPLOAD_KEY, PASTE_KEY = "sla_trace_upload", "sla_trace_paste"
ARRIVALS_UPLOAD = "sla_arrivals_upload"
_LAST = "_sla_last_trace"

MU_SOURCE = share.Field("mu_source", MANUAL, str, choices=(MANUAL,) + GPUS)
MU = share.Field("mu", 100.0, float, 0.01, 1e6, domain=dom.MU)
GPU_TARGET = share.Field("gpu_target_ms", 10.0, float, 0.1, 1e4, domain=dom.LATENCY_TARGET_MS)
LAW = share.Field("law", "exponential", str, choices=sla.SERVICE_LAWS)
SIGMA = share.Field("sigma", 1.0, float, 0.05, 3.0)
LAM = share.Field("lam", 900.0, float, 0.01, 1e6, domain=dom.LAM_PER_S)
D1 = share.Field("d1_ms", 0.25, float, 0.0, 20.0)
D2 = share.Field("d2_ms", 0.25, float, 0.0, 20.0)
DELTA = share.Field("delta_ms", 0.5, float, 0.0, 50.0)
PCT = share.Field("pct", 99.0, float, 50.0, 99.99, domain=dom.PERCENTILE)
RT = share.Field("rt_ms", 100.0, float, 0.1, 1e5)
N = share.Field("n", 11, int, 1, 100_000, domain=dom.N_BACKENDS)
SIMULATE = share.Field("simulate", True, bool)
TRACE = share.Field("trace", "diurnal", str, choices=tuple(TRACES))
HOURS = share.Field("hours", 24.0, float, 1.0, 168.0)
INTERVAL = share.Field("interval_s", 300.0, float, 10.0, 3600.0, domain=dom.INTERVAL)
AMPLITUDE = share.Field("amplitude", 0.5, float, 0.0, 0.95)
SPIKES = share.Field("spikes", 3, int, 0, 20)
SEED = share.Field("seed", 1, int, 0, 2 ** 31 - 1)
PROVISIONING = share.Field("prov_s", 120.0, float, 0.0, 7200.0, domain=dom.PROVISIONING_DELAY)
HEADROOM = share.Field("headroom", 0.1, float, 0.0, 2.0, domain=dom.HEADROOM)
PRICE = share.Field("usd_h", 2.5, float, 0.0, 1e3, domain=dom.COST)
VIEW = share.Field("view", REPLICAS, str, choices=VIEWS)
IMG = share.Field("img", "png", str, choices=("png", "svg"))
FIELDS = [MU_SOURCE, MU, GPU_TARGET, LAW, SIGMA, LAM, D1, D2, DELTA, PCT, RT, N, SIMULATE,
          TRACE, HOURS, INTERVAL, AMPLITUDE, SPIKES, SEED, PROVISIONING, HEADROOM, PRICE,
          VIEW, IMG, *arrivals_input.FIELDS]


@dataclass(frozen=True)
class Scenario:
    """Everything the replica answers depend on: the model (``engine.sla.RandomDispatch``,
    seconds, per second), the SLA and the arrival process."""

    model: sla.RandomDispatch          # load, μ, service law, dispatch delays
    percentile: float                  # SLA percentile p, %
    rt: float                          # SLA response time RT, s
    arrivals: ArrivalChoice = POISSON  # the arrival process (ui.arrivals_input)

    # the model's parameters, read by name in the page's text
    lam = property(lambda self: self.model.rate_per_s, doc="arrival rate, requests/s")
    mu = property(lambda self: self.model.mu_per_s, doc="service rate of one replica")
    law = property(lambda self: self.model.law, doc="service-time law")
    sigma = property(lambda self: self.model.sigma, doc="log-sd of a lognormal law")
    d1 = property(lambda self: self.model.d1_s, doc="frontend → backend, s")
    d2 = property(lambda self: self.model.d2_s, doc="backend → frontend, s")
    delta = property(lambda self: self.model.delta_s, doc="pause before a retry, s")
    service = property(lambda self: self.model.service, doc="the service-time law")

    @property
    def label(self) -> str:
        traffic = "" if self.arrivals.is_poisson else f", {self.arrivals.label}"
        return (f"λ={plain_number(self.lam, 4)}/s, μ={plain_number(self.mu, 4)}/s, "
                f"p{self.percentile:g} ≤ "
                f"{float(sla.ms_from_s(self.rt)):g} ms{traffic}")


@dataclass(frozen=True)
class Trace:
    """A load trace: requests/s per interval, the interval (s), and where it came from
    (an upload's file name is part of it: two files of the same counts differ)."""

    rates: tuple
    interval_s: float
    label: str


@dataclass(frozen=True)
class PlanInputs:
    """The autoscaling plan's inputs beyond the scenario."""

    trace: Trace
    provisioning_s: float
    headroom: float
    usd_per_gpu_hour: float


def sidebar() -> ArrivalChoice:
    """Draw the sidebar's widgets (their values land in session state); returns the
    arrival process chosen."""
    ss = st.session_state
    with st.sidebar:
        share.number_input(LAM, "Arrival rate λ (requests/s)", step=50.0)
        arrivals = arrivals_input.draw(ARRIVALS_UPLOAD)
        st.selectbox("Replica service rate μ from", MU_SOURCE.choices, key=MU_SOURCE.key,
                     format_func=lambda k: "a number (requests/s)" if k == MANUAL
                     else f"GPU operating point: {data.gpu_table()[k][0]}")
        if ss[MU_SOURCE.key] == MANUAL:
            share.number_input(MU, "μ per replica (requests/s)", step=10.0)
        else:
            share.number_input(GPU_TARGET, "Per-GPU mean-latency target (ms)", step=1.0,
                               help="One GPU at the dynamic-batching operating point "
                                    "that meets this target serves μ requests/s.")
        st.radio("Service-time law", LAW.choices, key=LAW.key, horizontal=True)
        if ss[LAW.key] == "lognormal":
            share.slider(SIGMA, "Lognormal log-sd σ", step=0.05)
        share.slider(PCT, "SLA percentile p (%)", step=0.01)
        share.number_input(RT, "SLA response time RT (ms)", step=10.0)
        with st.expander("Dispatch delays"):
            share.slider(D1, "d1: frontend → backend (ms)", step=0.05)
            share.slider(D2, "d2: backend → frontend (ms)", step=0.05)
            share.slider(DELTA, "Δ: pause before a retry (ms)", step=0.05)
        st.toggle("Simulate random dispatch", key=SIMULATE.key,
                  help=f"{data.SIM_POINTS} cached simulations of at least 100,000 requests "
                       f"near the approximation's answer (up to {data.SIM_MAX_N} replicas).")
        with st.expander("Trace and autoscaling"):
            st.radio("Trace", TRACE.choices, key=TRACE.key, horizontal=True,
                     format_func=TRACES.get)
            share.number_input(INTERVAL, "Interval (s)", step=60.0)
            if ss[TRACE.key] == "diurnal":
                share.number_input(HOURS, "Length (h)", step=1.0)
                share.slider(AMPLITUDE, "Day/night amplitude", step=0.05)
                share.number_input(SPIKES, "Spikes", step=1)
                share.number_input(SEED, "Random seed", step=1)
            share.number_input(PROVISIONING, "Provisioning delay (s)", step=30.0)
            share.slider(HEADROOM, "Headroom (extra load provisioned)", step=0.05)
            share.number_input(PRICE, "GPU price ($/hour)", step=0.1)
        st.radio("Chart image format", IMG.choices, key=IMG.key, horizontal=True)
    return arrivals


def service_rate() -> float:
    """μ (requests/s per replica): typed, or one GPU's at its mean-latency target."""
    ss = st.session_state
    if ss[MU_SOURCE.key] == MANUAL:
        return float(ss[MU.key])
    name, alpha, tau0 = data.gpu_table()[ss[MU_SOURCE.key]]
    mu = data.gpu_mu(alpha, tau0, float(ss[GPU_TARGET.key]))
    st.sidebar.caption(f"{name}: α = {alpha:.4g} ms, τ0 = {tau0:.4g} ms → μ = "
                       f"{plain_number(mu, 4)} "
                       f"requests/s per GPU at mean latency ≤ {ss[GPU_TARGET.key]:g} ms.")
    return mu


def scenario(mu: float, arrivals: ArrivalChoice = POISSON) -> Scenario:
    """The sidebar's scenario at service rate ``mu`` under ``arrivals``, times in s."""
    ss = st.session_state
    d1, d2, delta, rt = (float(sla.s_from_ms(ss[f.key])) for f in (D1, D2, DELTA, RT))
    model = sla.RandomDispatch(float(ss[LAM.key]), mu, d1, d2, delta, ss[LAW.key],
                               float(ss[SIGMA.key]))
    return Scenario(model, float(ss[PCT.key]), rt, arrivals)


def trace_input(lam: float) -> Trace:
    """The trace in use; a bad CSV shows its error here and the last valid trace
    stays in use."""
    ss = st.session_state
    asked = float(ss[INTERVAL.key])
    interval = data.synthetic_interval(ss[HOURS.key], asked)
    synthetic = Trace(data.synthetic_trace(lam, ss[HOURS.key], interval, ss[AMPLITUDE.key],
                                           ss[SPIKES.key], ss[SEED.key]), interval,
                      f"synthetic day around {plain_number(lam, 4)} requests/s, seed "
                      f"{ss[SEED.key]}")
    if ss[TRACE.key] == "diurnal":
        if interval > asked:
            st.caption(f"Interval raised to {interval:g} s to keep {MAX_INTERVALS:,} intervals.")
        return synthetic
    upload = st.file_uploader(
        "Upload a trace", type=["csv", "txt", "jsonl", "json"], key=UPLOAD_KEY,
        help="Columns time_s,rate_per_s (one row per interval) or timestamp_s (one per "
             "request, s); or a request trace: the Azure LLM trace CSV (TIMESTAMP, "
             "ContextTokens, GeneratedTokens) or JSON lines with timestamp in ms (Mooncake). "
             f"Arrival times are binned into the interval above. At most "
             f"{MAX_UPLOAD_BYTES // 1_000_000} MB.")
    pasted = st.text_area("…or paste trace CSV", key=PASTE_KEY, height=120,
                          placeholder="time_s,rate_per_s\n0,420\n300,515\n600,640",
                          max_chars=MAX_UPLOAD_BYTES)
    fallback = ss.get(_LAST) or synthetic
    try:
        if upload is not None:
            raw, label = upload.getvalue(), upload.name
        elif pasted.strip():
            raw, label = pasted, "pasted trace"
        else:
            st.info("Paste or upload a trace; showing the synthetic day meanwhile.")
            return fallback
        text = decode_text(raw)                    # size cap and UTF-8 first
        parsed = _parsed(hashlib.sha256(text.encode("utf-8")).hexdigest(), asked, text)
    except ValueError as err:
        st.error(f"Trace not used: {err}", icon=":material/error:")
        st.info(f"Still using the last valid trace: {fallback.label}.")
        return fallback
    st.caption(share.inert(trace_description(parsed)))
    n = parsed["rate_per_s"].size
    if parsed["format"] in ("rates", "timestamps"):
        label = f"{label} ({n} intervals)"
    else:
        label = f"{label} ({n} intervals, {parsed['n_requests']:,} requests)"
    ss[_LAST] = value = Trace(tuple(parsed["rate_per_s"].tolist()), parsed["interval_s"], label)
    return value


@memo(8)
def _parsed(digest: str, interval_s: float, _text: str) -> dict:
    """The parsed trace of ``_text`` (keyed by its digest) at ``interval_s``."""
    return parse_trace_csv(_text, interval_s)


def set_rate(rate_per_s: float) -> None:
    """Button callback: the arrival rate λ set to ``rate_per_s`` (within its input's range)."""
    st.session_state[LAM.key] = min(max(float(rate_per_s), LAM.low), LAM.high)


def plan_inputs(trace: Trace) -> PlanInputs:
    ss = st.session_state
    return PlanInputs(trace, float(ss[PROVISIONING.key]), float(ss[HEADROOM.key]),
                      float(ss[PRICE.key]))


def replicas_slider(top: int) -> int:
    """The what-if fleet size n (up to ``top``)."""
    share.slider(N, "Replicas (what-if)", max_value=max(top, 2),
                 step=1, help="A fleet size n to look at: the share of late requests and the "
                              "response-time distribution below are for it.")
    return int(st.session_state[N.key])
