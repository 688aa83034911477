"""Inputs of the CPU-GPU pipeline page: the share-link fields, the sidebar, and the
frozen dataclasses built from session state (the memo keys of app_pages/pipeline/data.py)."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from engine.core.domains import PIPE_C, PIPE_K, PIPE_LOAD_FRACTION, PIPE_SPEEDUP, RATE_PER_S
from engine.presets import GpuSpec
from ui import arrivals_input as arr
from ui import share
from ui.arrivals_input import POISSON, ArrivalChoice

from . import data
from .views import BLOCKING, VIEWS

CUSTOM = "custom"
SPECS = data.spec_table()
WORKLOADS = data.workload_table()
FIELDS = [
    share.Field("gpu", "a100_40gb_sxm", str, choices=tuple(SPECS) + (CUSTOM,)),
    share.Field("link_gbs", 32.0, float, 0.01, 1e4),
    share.Field("mem_bw_gbs", 1555.0, float, 0.1, 1e5),
    share.Field("mem_gb", 40.0, float, 0.01, 1e4),
    share.Field("sms", 108, int, 1, 1024),
    share.Field("peak_tflops", 19.5, float, 0.001, 1e5),
    share.Field("workload", "job_1mib_double_buffered", str, choices=tuple(WORKLOADS)),
    share.Field("load_mode", "frac", str, choices=("frac", "rate")),
    share.Field("frac", 0.8, float, 0.01, 0.99, domain=PIPE_LOAD_FRACTION),
    share.Field("rate_per_s", 10000.0, float, 0.001, 1e9, domain=RATE_PER_S),
    share.Field("K", 2, int, high=64, domain=PIPE_K),
    share.Field("units", 8, int, high=128, domain=PIPE_C),
    share.Field("cpu_speedup", 1.0, float, 0.01, 1000.0, domain=PIPE_SPEEDUP),
    share.Field("blocking", "before", str, choices=("before", "after")),
    *arr.FIELDS,
    share.Field("simulate", False, bool),
    share.Field("view", VIEWS[0], str, choices=VIEWS),
    share.Field("img", "png", str, choices=("png", "svg")),
]
FIELD = {f.key: f for f in FIELDS}
ARRIVALS_UPLOAD = "pipeline_arrivals_upload"


@dataclass(frozen=True)
class Load:
    """The what-if load: a fraction of the exact capacity, or a rate in jobs per s."""

    mode: str                # "frac" or "rate"
    frac: float
    rate_per_s: float


@dataclass(frozen=True)
class Scenario:
    """Everything but the load: the sidebar's inputs (a change re-runs the whole page)."""

    spec: GpuSpec
    workload_id: str
    K: int
    units: int
    cpu_speedup: float
    blocking: str
    simulate: bool
    arrivals: ArrivalChoice = POISSON   # the arrival process (ui.arrivals_input), at λ

    @property
    def poisson(self) -> bool:
        return self.arrivals.is_poisson

    @property
    def simulated(self) -> bool:
        """Whether the simulated points are drawn: on request, and always under another
        arrival process (the exact curves assume Poisson arrivals)."""
        return self.simulate or not self.poisson

    @property
    def workload(self):
        return WORKLOADS[self.workload_id]

    @property
    def rates(self):
        """Stage rates per ms (``data.rates``); ``ValueError`` where the specs do not fit
        the workload."""
        return data.rates(self.spec, self.workload_id, self.K, self.units, self.cpu_speedup)

    @property
    def model(self):
        """The scenario's tandem (``engine.pipeline.Tandem``), every chart's
        memoised calls are its methods."""
        return data.model(self.rates, self.blocking)

    @property
    def label(self) -> str:
        traffic = "" if self.poisson else f", {self.arrivals.label}"
        return (f"{self.spec.name}, {self.workload.name.split(':')[0]}, room for {self.K} jobs "
                f"in GPU memory, {self.units} compute units{traffic}")


def _set_k_from_workload():
    st.session_state["K"] = int(WORKLOADS[st.session_state["workload"]].memory_slots)


def sidebar() -> Scenario:
    """Draw the sidebar's widgets; the scenario they set."""
    s = st.session_state
    with st.sidebar:
        st.selectbox("GPU", FIELD["gpu"].choices, key="gpu",
                     format_func=lambda g: "Custom specs" if g == CUSTOM else SPECS[g].name)
        if s["gpu"] == CUSTOM:
            share.number_input(FIELD["link_gbs"], "Host link (GB/s, one direction)")
            share.number_input(FIELD["mem_bw_gbs"], "Memory bandwidth (GB/s)")
            share.number_input(FIELD["mem_gb"], "Memory (GB)")
            share.number_input(FIELD["sms"], "SM count", step=1)
            share.number_input(FIELD["peak_tflops"], "Peak (TFLOP/s)")
        st.selectbox("Workload", FIELD["workload"].choices, key="workload",
                     format_func=lambda w: WORKLOADS[w].name, on_change=_set_k_from_workload)
        st.divider()
        st.radio("Load given as", ("frac", "rate"), key="load_mode", horizontal=True,
                 format_func={"frac": "fraction of capacity", "rate": "jobs/s"}.get,
                 help="The load itself is set above the answer, where moving it re-draws "
                      "only what depends on it.")
        share.slider(FIELD["K"], "K: jobs the GPU memory holds",
                     help="How many jobs fit in GPU memory at once, the one being read "
                          "included (K in the paper); set from the workload when it changes.")
        share.slider(FIELD["units"], "Compute units modelled",
                     help="The GPU's SMs are grouped into this many servers; the stage's "
                          "total rate is kept.")
        share.number_input(FIELD["cpu_speedup"], "Host stage speed-up (×)", step=1.0,
                           help="What-if: a faster host stage (overlapped copies, a faster "
                                "link); multiplies the CPU stage's rate.")
        st.radio("When the next stage is full", ("before", "after"), key="blocking",
                 format_func=BLOCKING.get, help="Blocking before service (the paper's rule) "
                 "or after service.")
        arrivals = arr.draw(ARRIVALS_UPLOAD)
        st.toggle("Show simulation points", key="simulate",
                  help=f"{data.SIM_JOBS:,} jobs at {len(data.SIM_FRACTIONS)} loads (cached); "
                       "always shown under arrivals other than Poisson.")
        st.radio("Chart image format", ("png", "svg"), key="img", horizontal=True)
    spec = SPECS.get(s["gpu"]) or data.custom_spec(s["link_gbs"], s["mem_bw_gbs"], s["mem_gb"],
                                                   s["sms"], s["peak_tflops"])
    return Scenario(spec, s["workload"], int(s["K"]), int(s["units"]), float(s["cpu_speedup"]),
                    s["blocking"], bool(s["simulate"]), arrivals)


def load_input() -> Load:
    """Draw the load widget (inside the what-if fragment); the load it sets."""
    s = st.session_state
    share.keep(FIELD["rate_per_s" if s["load_mode"] == "frac" else "frac"])    # read below
    if s["load_mode"] == "frac":
        share.slider(FIELD["frac"], "Load (fraction of the max sustainable rate)", step=0.01,
                     help="λ / capacity in the paper's notation.")
    else:
        share.number_input(FIELD["rate_per_s"], "Arrival rate (jobs/s)", step=100.0)
    return Load(s["load_mode"], float(s["frac"]), float(s["rate_per_s"]))
