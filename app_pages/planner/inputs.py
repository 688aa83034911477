"""Inputs of the capacity-planner page: the share-link fields, the sidebar, and the
``PlanSpec`` they make (with the arrival choice: the key of the page's one engine call).

Every input is a share-link field; the ranges searched are sets of values (``ValuesField``,
"1,2,4,8" in the link) and the candidate hardware a table (``HardwareField``: compact JSON,
``hardware.encode``).
The workload switch keeps each workload's own traffic, target, ranges and table: switching
back restores them (the other workload's start from ``engine.planner.default_spec``).
Latencies are typed in ms or s and kept in ms in the spec.
"""
from __future__ import annotations

from dataclasses import dataclass
import json
import math

import streamlit as st

from app_pages.planner.data import COST_WEIGHT
from engine.core import domains as dom
from engine.planner import MAX_CONFIGURATIONS, PlanSpec, default_spec
from engine.planner.spec import MAX_CONFIRM
from engine.presets import token_law_presets
from ui import arrivals_input, share
from ui.arrivals_input import ArrivalChoice

from . import hardware as hw_table

WORKLOADS = {"gpu": "Image model (GPU batch profiles)",
             "llm": "LLM (batch-time and token-law presets)"}
UNITS = {"gpu": "images/s", "llm": "requests/s"}
OUTPUT_LAWS = {pid: p for pid, p in token_law_presets().items() if p.kind == "output"}
B_MAX_OPTIONS = tuple(2 ** k for k in range(10))                  # 1 … 512
DELAY_OPTIONS_MS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
LIMIT_OPTIONS = (0, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
MAX_VALUES = 64                                                   # values per range, at most
ARRIVALS_UPLOAD = "planner_arrivals_upload"
AUTO_RUN_MAX = 3000            # plan_work priced without pressing "Price", at most
VIEWS = ("Cost vs latency", "Cost vs energy", "All configurations", "How it works")


@dataclass(frozen=True)
class ValuesField(share.Field):
    """A set of numbers (a multiselect's values), "1,2,4" in the link, each whole
    (``kind`` int) or not, within ``low``..``high``; sorted, without repeats."""

    def parse(self, raw: str):
        if len(raw) > 2000:
            raise ValueError("too long a list")
        values = []
        for part in (p.strip() for p in raw.split(",")) if raw.strip() else ():
            try:
                v = float(part)
            except ValueError:
                raise ValueError(f"{share.inert(part[:20])} is not a number") from None
            if not math.isfinite(v):
                raise ValueError("not a finite number")
            if self.kind is int and v != int(v):
                raise ValueError(f"{v:g} is not a whole number")
            if (self.low is not None and v < self.low) or (self.high is not None
                                                           and v > self.high):
                raise ValueError(f"{v:g} is outside {self.low:g}–{self.high:g}")
            values.append(self.kind(v))
        values = sorted(set(values))
        if len(values) > MAX_VALUES:
            raise ValueError(f"more than {MAX_VALUES} values")
        return values

    def format(self, value) -> str:
        return ",".join(_FLOAT.format(float(v)) if self.kind is float else str(int(v))
                        for v in sorted(value))


_FLOAT = share.Field("number", 0.0)          # how the link writes a float (exact, short)


@dataclass(frozen=True)
class HardwareField(share.Field):
    """The candidate-hardware table as compact JSON (``hardware.encode``)."""

    def parse(self, raw: str):
        return hw_table.encode(hw_table.decode(raw))

    def format(self, value) -> str:
        return str(value)


_GPU, _LLM = default_spec("gpu"), default_spec("llm")
WORKLOAD = share.Field("plan_workload", "gpu", str, choices=tuple(WORKLOADS))
RATE = share.Field("plan_rate", _GPU.rate_per_s, float, 1e-4, 1e8)
PCT = share.Field("plan_pct", _GPU.percentile, float, 50.0, 99.99, domain=dom.PERCENTILE)
TARGET = share.Field("plan_target", _GPU.target_ms, float, 1e-6, 1e9)
TARGET_UNIT = share.Field("plan_target_unit", "ms", str, choices=("ms", "s"))
ENERGY_ON = share.Field("plan_energy_cap", False, bool)
ENERGY = share.Field("plan_energy_j", 1.0, float, 1e-6, 1e9)
TRUNCATION = share.Field("plan_cut_pct", 100 * _LLM.truncation_cap, float, 0.0, 100.0)
TOKEN_LAW = share.Field("plan_token_law", _LLM.token_law, str, choices=tuple(OUTPUT_LAWS))
HARDWARE = HardwareField("plan_hw", hw_table.encode(_GPU.hardware), str)
B_MAX = ValuesField("plan_b_max", list(_GPU.b_max), int, 1, 4096)
DELAYS = ValuesField("plan_delay_ms", list(_GPU.queue_delay_ms), float, 0.0, 1e5)
LIMITS = ValuesField("plan_token_limits", list(_LLM.token_limit), int, 0, 1 << 20)
R_LO = share.Field("plan_r_min", min(_GPU.replicas), int, 1, 10_000)
R_HI = share.Field("plan_r_max", max(_GPU.replicas), int, 1, 10_000)
CONFIRM = share.Field("plan_confirm", _GPU.confirm, int, 1, MAX_CONFIRM)
SEED = share.Field("plan_seed", _GPU.seed, int, 0, 2 ** 31 - 1)
VIEW = share.Field("plan_view", VIEWS[0], str, choices=VIEWS)
IMG = share.Field("img", "png", str, choices=("png", "svg"))
FIELDS = [WORKLOAD, RATE, *arrivals_input.FIELDS, PCT, TARGET, TARGET_UNIT, ENERGY_ON, ENERGY,
          TRUNCATION, TOKEN_LAW, HARDWARE, B_MAX, DELAYS, LIMITS, R_LO, R_HI, CONFIRM, SEED,
          VIEW, IMG]
SWITCHED = (RATE, TARGET, TARGET_UNIT, HARDWARE, B_MAX, R_LO, R_HI)   # kept per workload
_STASH = "_plan_per_workload"


def workload_defaults(workload: str) -> dict:
    """The workload-dependent inputs of ``engine.planner.default_spec(workload)``."""
    d = default_spec(workload)
    unit = "s" if workload == "llm" else "ms"
    return {RATE.key: d.rate_per_s, TARGET.key: d.target_ms / (1000.0 if unit == "s" else 1.0),
            TARGET_UNIT.key: unit, HARDWARE.key: hw_table.encode(d.hardware),
            B_MAX.key: list(d.b_max), R_LO.key: min(d.replicas), R_HI.key: max(d.replicas)}


def prefill_from_link() -> None:
    """Before ``share.restore`` on a session's first run: a link that asks for the LLM
    workload gets the LLM defaults for the inputs it does not give."""
    ss = st.session_state
    if WORKLOAD.key in ss or st.query_params.get(WORKLOAD.key) != "llm":
        return
    for key, value in workload_defaults("llm").items():
        if key not in st.query_params:
            ss[key] = value


def _switch_workload() -> None:
    """The workload radio changed: keep the old workload's inputs, bring back the new
    one's (or its defaults)."""
    ss = st.session_state
    new = ss[WORKLOAD.key]
    keep_inputs("llm" if new == "gpu" else "gpu")
    ss.update(ss[_STASH].get(new) or workload_defaults(new))


def keep_inputs(workload: str) -> None:
    """Keep the workload-dependent inputs as they are now, for ``workload``."""
    ss = st.session_state
    ss.setdefault(_STASH, {})[workload] = {f.key: ss[f.key] for f in SWITCHED if f.key in ss}


def _convert_target() -> None:
    """The target's unit changed: the same time in the new unit."""
    ss = st.session_state
    factor = 1e-3 if ss[TARGET_UNIT.key] == "s" else 1e3
    ss[TARGET.key] = min(max(ss[TARGET.key] * factor, TARGET.low), TARGET.high)


def ensure_table(workload: str) -> None:
    """A table in the link that does not describe ``workload`` gives way to the
    workload's default candidates, with a warning."""
    ss = st.session_state
    try:
        hw_table.decode(ss[HARDWARE.key], workload)
    except ValueError as err:
        st.warning(f"Hardware table ignored ({share.inert(str(err))}); using the default "
                   f"{workload.upper()} candidates.", icon=":material/link_off:")
        ss[HARDWARE.key] = hw_table.encode(hw_table.default_hardware(workload))


def values_input(field: ValuesField, label: str, options: tuple, help: str, fmt=None) -> None:
    """A multiselect of ``options`` and whatever values the field holds already (a link
    or a plan file may hold others)."""
    ss = st.session_state
    current = [field.kind(v) for v in ss.get(field.key, field.default)]
    ss[field.key] = current
    shown = sorted(set(options) | set(current))
    st.multiselect(label, shown, key=field.key, help=help, format_func=fmt or (
        lambda v: f"{v:g}"))


def sidebar() -> ArrivalChoice:
    """Draw the sidebar (values land in session state); returns the arrival choice."""
    ss = st.session_state
    with st.sidebar:
        st.radio("Workload", tuple(WORKLOADS), key=WORKLOAD.key, format_func=WORKLOADS.get,
                 on_change=_switch_workload,
                 help="Image model: a GPU serving batches of images, batch time αb + τ0 "
                      "from a measured batch profile (Inoue 2021). LLM: replies of varying "
                      "length, batch time k1·b + k2 + k3·b·l + k4·l with l the longest "
                      "reply in tokens (Yang et al.). Each keeps its own inputs when you "
                      "switch.")
        llm = ss[WORKLOAD.key] == "llm"
        unit = UNITS[ss[WORKLOAD.key]]
        st.markdown("**Traffic**")
        share.number_input(RATE, f"Total rate ({unit})", step=100.0 if not llm else 0.1,
                           format="%g", help="All replicas together; random dispatch gives "
                                             "each of R replicas 1/R of it.")
        arrivals = arrivals_input.draw(ARRIVALS_UPLOAD)
        st.markdown("**Latency SLA**")
        share.slider(PCT, "Percentile of requests (%)", step=0.01,
                     help="p: this share of requests must finish within the target (99: the "
                          "p99 latency). Arrow keys move it by 0.01.")
        share.number_input(TARGET, f"Latency target ({ss[TARGET_UNIT.key]})", format="%g",
                           step=1.0, help="From arrival to the reply: waiting plus the batch.")
        st.radio("Target in", TARGET_UNIT.choices, key=TARGET_UNIT.key, horizontal=True,
                 on_change=_convert_target, help="Typed in ms or s; kept in ms.")
        st.toggle("Cap the energy per request", key=ENERGY_ON.key,
                  help="Reject configurations whose energy per request is above a cap.")
        if ss[ENERGY_ON.key]:
            share.number_input(ENERGY, "Energy cap (J per request)", format="%g", step=0.1,
                               help="(P_busy·u + P_idle·(1 − u)) / (λ/R): each replica's "
                                    "board power averaged over busy and idle time, per "
                                    "request it serves.")
        if llm:
            st.selectbox("Reply lengths (output-token law)", tuple(OUTPUT_LAWS),
                         key=TOKEN_LAW.key, format_func=lambda p: OUTPUT_LAWS[p].name,
                         help="Measured generated-token counts of a request trace; the token "
                              "limit cuts replies at the limit.")
            share.number_input(TRUNCATION, "Largest share of replies the limit may cut (%)",
                               step=0.5, format="%g",
                               help="A token limit that cuts more replies than this is "
                                    "rejected (100: no cap).")
        st.markdown("**Search**")
        values_input(B_MAX, "b_max: largest batch", B_MAX_OPTIONS,
                     "Every b_max picked is tried (GPU: up to the profile's largest "
                     "measured batch).", fmt=lambda v: f"{v:d}")
        if llm:
            values_input(LIMITS, "Token limits (tokens; 0 = none)", LIMIT_OPTIONS,
                         "The largest reply allowed: a shorter limit shortens the longest "
                         "reply of a batch, and cuts the replies above it.",
                         fmt=lambda v: "none" if v == 0 else f"{v:,d}")
        else:
            values_input(DELAYS, "Max queue delays (ms; 0 = start at once)", DELAY_OPTIONS_MS,
                         "Triton's max_queue_delay: how long the batcher may hold a request "
                         "to fill a batch of b_max. 0: a batch starts as soon as the GPU is "
                         "free (the exact model's policy).",
                         fmt=lambda v: "0 (at once)" if v == 0 else f"{v:g} ms")
        share.number_input(R_LO, "Fewest replicas", step=1,
                           help="Every replica count from the fewest to the most is tried.")
        share.number_input(R_HI, "Most replicas", step=1, min_value=int(ss[R_LO.key]))
        st.caption(count_text())
        with st.expander("Advanced"):
            share.number_input(CONFIRM, "Configurations confirmed by simulation", step=1,
                               help="How many of the cheapest that pass the screening are "
                                    "simulated again (4 longer runs each) before the page "
                                    "calls them meeting the SLA.")
            share.number_input(SEED, "Seed", step=1,
                               help="Seed of every simulation (the same seed, the same plan).")
            st.radio("Chart image format", IMG.choices, key=IMG.key, horizontal=True,
                     help="What the camera icon of every chart downloads.")
    return arrivals


def count_text() -> str:
    """How many configurations the ranges make (with the last valid hardware table)."""
    ss = st.session_state
    try:
        n_hw = len(json.loads(ss[HARDWARE.key]))
    except (TypeError, ValueError):
        n_hw = 0
    third = len(ss[LIMITS.key]) if ss[WORKLOAD.key] == "llm" else len(ss[DELAYS.key])
    n = n_hw * len(ss[B_MAX.key]) * third * max(0, int(ss[R_HI.key]) - int(ss[R_LO.key]) + 1)
    weight = COST_WEIGHT[ss[WORKLOAD.key]]
    return (f"{n:,} configurations to price (at most {MAX_CONFIGURATIONS:,}; up to "
            f"{AUTO_RUN_MAX // weight:,} they are priced as you change the inputs, a third "
            "of that with arrivals that are not Poisson; above, on request).")


def _arrival_fields(choice: ArrivalChoice) -> tuple[str, float, str, str]:
    """(kind, SCV, trace, note) for the spec: an MMPP-2 fitted to an uploaded trace is
    kept in a plan file as the replay of that file (a plan file fits MMPP-2 to the
    presets only), and said so."""
    if choice.kind == "bursty":
        return "bursty", float(choice.renewal_scv), "", ""
    if choice.kind in ("mmpp2", "replay"):
        trace = choice.trace
        if not trace.uploaded:
            return "mmpp2", 1.0, trace.key, ""
        name = trace.name.removesuffix(" (uploaded)")
        note = ("" if choice.kind == "replay" else
                f"The plan file records the uploaded trace as a replay of {name}: a plan file "
                "fits an MMPP-2 only to the Azure presets.")
        return "replay", 1.0, name, note
    return "poisson", 1.0, "", ""


def plan_spec(hardware, choice: ArrivalChoice) -> tuple[PlanSpec, str]:
    """The ``PlanSpec`` of the inputs (``ValueError`` from the engine naming the problem)
    and a note on how the arrivals are recorded ("" if nothing to say)."""
    ss = st.session_state
    llm = ss[WORKLOAD.key] == "llm"
    kind, scv, trace, note = _arrival_fields(choice)
    scale = 1000.0 if ss[TARGET_UNIT.key] == "s" else 1.0
    lo, hi = int(ss[R_LO.key]), int(ss[R_HI.key])
    if hi < lo:
        raise ValueError(f"the most replicas ({hi}) must be at least the fewest ({lo})")
    spec = PlanSpec(
        workload=ss[WORKLOAD.key], rate_per_s=float(ss[RATE.key]), arrivals_kind=kind,
        arrivals_scv=scv, arrivals_trace=trace, percentile=float(ss[PCT.key]),
        target_ms=float(ss[TARGET.key]) * scale,
        energy_cap_j=float(ss[ENERGY.key]) if ss[ENERGY_ON.key] else math.inf,
        truncation_cap=float(ss[TRUNCATION.key]) / 100.0 if llm else 1.0,
        hardware=tuple(hardware), b_max=tuple(ss[B_MAX.key]),
        queue_delay_ms=(0.0,) if llm else tuple(float(v) for v in ss[DELAYS.key]),
        token_limit=tuple(int(v) for v in ss[LIMITS.key]) if llm else (0,),
        token_law=ss[TOKEN_LAW.key] if llm else "", replicas=tuple(range(lo, hi + 1)),
        confirm=int(ss[CONFIRM.key]), seed=int(ss[SEED.key]))
    return spec, note
