"""The capacity-planner page's sidebar and the ``PlanSpec`` its inputs make (with the
arrival choice and the serving workload: the key of the page's one engine call).

What the sidebar shows is read from the chosen family's declaration
(``engine.planner.FAMILIES``): its load unit, its SLA metrics (one percentile and target,
or rows of several), its knobs (the ranges searched), its inputs (``fields.uses``).  The
workload switch keeps each family's own inputs: switching back restores them (a family
not shown yet starts from ``engine.planner.default_spec``).  A single latency target is
typed in ms or s and kept in ms in the spec.
"""
from __future__ import annotations

import json
import math

import streamlit as st

from engine.planner import FAMILIES, MAX_CONFIGURATIONS, PlanSpec
from ui import arrivals_input, share
from ui.arrivals_input import ArrivalChoice

from . import hardware as hw_table
from . import serving_input, sla_input
from .data import AUTO_RUN_MAX
from .fields import (CONFIRM, ENERGY, ENERGY_ON, FIELDS, HARDWARE, IMG, KNOB_INPUTS,
                     OUTPUT_LAWS, PCT, RANGE_KNOBS, RATE, SEED, SLA, SWITCHED, TARGET,
                     TARGET_UNIT, TOKEN_LAW, TRUNCATION, VIEW, WORKLOAD, WORKLOADS, uses)
from .spec_values import workload_defaults

__all__ = ["FIELDS", "HARDWARE", "VIEW", "WORKLOAD", "plan_spec", "prefill_from_link",
           "sidebar"]                      # the fields the page and its tests read here
ARRIVALS_UPLOAD = "planner_arrivals_upload"
_STASH, _SHOWN = "_plan_per_workload", "_plan_workload_shown"


def family():
    """The family of the workload chosen."""
    return FAMILIES[st.session_state[WORKLOAD.key]]


def prefill_from_link() -> None:
    """Before ``share.restore`` on a session's first run: a link that asks for another
    workload than the first gets that workload's defaults for the inputs it does not
    give."""
    ss = st.session_state
    asked = st.query_params.get(WORKLOAD.key)
    if WORKLOAD.key in ss or asked not in FAMILIES or asked == WORKLOAD.default:
        return
    for key, value in workload_defaults(asked).items():
        if key not in st.query_params:
            ss[key] = value


def _switch_workload() -> None:
    """The workload radio changed: keep the old workload's inputs, bring back the new
    one's (or its defaults)."""
    ss = st.session_state
    new = ss[WORKLOAD.key]
    keep_inputs(ss.get(_SHOWN, WORKLOAD.default))
    ss.update(ss[_STASH].get(new) or workload_defaults(new))
    ss[_SHOWN] = new


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
                   f"{hw_table.KIND_WORDS[hw_table.kind_of(workload)]} candidates.",
                   icon=":material/link_off:")
        ss[HARDWARE.key] = hw_table.encode(hw_table.default_hardware(workload))


def values_input(knob) -> None:
    """A multiselect of the knob's usual values and whatever values its field holds
    already (a link or a plan file may hold others), within the knob's domain."""
    ss = st.session_state
    how = KNOB_INPUTS[knob.name]
    field = how.field
    current = [field.kind(v) for v in ss.get(field.key, field.default)]
    ss[field.key] = current
    d = knob.domain
    shown = sorted({v for v in how.options if d.low <= v <= d.high} | set(current))
    st.multiselect(knob_label(knob), shown, key=field.key, help=knob.help,
                   format_func=how.fmt or (lambda v: f"{v:g}"))


def knob_label(knob) -> str:
    """A knob's label with its unit: "Token limit (tokens)", "Largest batch (b_max,
    requests)"."""
    if not knob.unit:
        return knob.label
    if knob.label.endswith(")"):
        return f"{knob.label[:-1]}, {knob.unit})"
    return f"{knob.label} ({knob.unit})"


def _single_sla(fam) -> None:
    ss = st.session_state
    share.slider(PCT, "Percentile of requests (%)", step=0.01,
                 help="p: this share of requests must finish within the target (99: the "
                      "p99 latency). Arrow keys move it by 0.01.")
    share.number_input(TARGET, f"Latency target ({ss[TARGET_UNIT.key]})", format="%g",
                       step=1.0, help="From arrival to the reply: waiting plus the batch.")
    st.radio("Target in", TARGET_UNIT.choices, key=TARGET_UNIT.key, horizontal=True,
             on_change=_convert_target, help="Typed in ms or s; kept in ms.")


def _search(fam) -> None:
    ss = st.session_state
    st.markdown("**Search**")
    for knob in fam.knobs:
        if knob.name in RANGE_KNOBS:
            lo, hi = RANGE_KNOBS[knob.name]
            share.number_input(lo, f"Fewest {knob.label.lower()}", step=1,
                               help=f"{knob.help} Every count from the fewest to the most "
                                    "is tried.")
            share.number_input(hi, f"Most {knob.label.lower()}", step=1,
                               min_value=int(ss[lo.key]))
        elif knob.name in KNOB_INPUTS:
            values_input(knob)
        else:
            st.caption(share.inert(f"{knob.label}: searched at "
                                   f"{', '.join(map(str, knob.default))}."))
    st.caption(count_text())


def sidebar():
    """Draw the sidebar (values land in session state); returns (the arrival choice,
    the serving choice or None)."""
    ss = st.session_state
    with st.sidebar:
        st.radio("Workload", tuple(WORKLOADS), key=WORKLOAD.key, format_func=WORKLOADS.get,
                 on_change=_switch_workload,
                 help="Image model: a GPU serving batches of images (Inoue 2021). LLM batch "
                      "model: whole batches run to their longest reply (Yang et al.). LLM "
                      "serving: vLLM-style continuous batching, colocated replicas or "
                      "prefill and decode on separate servers. Each keeps its own inputs "
                      "when you switch.")
        ss[_SHOWN] = ss[WORKLOAD.key]
        fam = family()
        use = uses(fam)
        st.markdown("**Traffic**")
        share.number_input(RATE, f"Total rate ({fam.load_unit})",
                           step=100.0 if fam.load_unit == "images/s" else 0.1, format="%g",
                           help="All servers together.")
        arrivals = arrivals_input.draw(ARRIVALS_UPLOAD)
        serving = serving_input.draw(fam) if "tokens" in use else None
        st.markdown("**Latency SLA**")
        if "sla_rows" in use:
            sla_input.table_input(fam)
        else:
            _single_sla(fam)
        st.toggle("Cap the energy per request", key=ENERGY_ON.key,
                  help="Reject configurations whose energy per request is above a cap.")
        if ss[ENERGY_ON.key]:
            share.number_input(ENERGY, "Energy cap (J per request)", format="%g", step=0.1,
                               help="(P_busy·u + P_idle·(1 − u)) / (λ/R): each server's "
                                    "board power averaged over busy and idle time, per "
                                    "request it serves.")
        if "reply_law" in use:
            st.selectbox("Reply lengths (output-token law)", tuple(OUTPUT_LAWS),
                         key=TOKEN_LAW.key, format_func=lambda p: OUTPUT_LAWS[p].name,
                         help="Measured generated-token counts of a request trace; the token "
                              "limit cuts replies at the limit.")
        if "truncation" in use:
            share.number_input(TRUNCATION, "Largest share of replies the limit may cut (%)",
                               step=0.5, format="%g",
                               help="A token limit that cuts more replies than this is "
                                    "rejected (100: no cap).")
        _search(fam)
        with st.expander("Advanced"):
            share.number_input(CONFIRM, "Configurations confirmed by simulation", step=1,
                               help="How many of the cheapest that pass the screening are "
                                    "simulated again (4 longer runs each) before the page "
                                    "calls them meeting the SLA.")
            share.number_input(SEED, "Seed", step=1,
                               help="Seed of every simulation (the same seed, the same plan).")
            st.radio("Chart image format", IMG.choices, key=IMG.key, horizontal=True,
                     help="What the camera icon of every chart downloads.")
    return arrivals, serving


def count_text() -> str:
    """How many configurations the ranges make (with the last valid hardware table)."""
    ss = st.session_state
    fam = family()
    try:
        n = len(json.loads(ss[HARDWARE.key])) ** getattr(fam, "hardware_axes", 1)
    except (TypeError, ValueError):
        n = 0
    for knob in fam.knobs:
        if knob.name in RANGE_KNOBS:
            lo, hi = RANGE_KNOBS[knob.name]
            n *= max(0, int(ss[hi.key]) - int(ss[lo.key]) + 1)
        elif knob.name in KNOB_INPUTS:
            n *= len(ss[KNOB_INPUTS[knob.name].field.key])
    weight = fam.cost_weight
    text = (f"{n:,} configurations to price (at most {MAX_CONFIGURATIONS:,}; up to "
            f"{AUTO_RUN_MAX // weight:,} they are priced as you change the inputs, a third "
            "of that with arrivals that are not Poisson; above, on request).")
    if fam.request_weight:
        text += (" Confirming the cheapest simulates whole fleets, seconds each: a plan that "
                 "confirms many, or a far percentile, runs on request.")
    return text


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


def _knob_values(knob) -> tuple:
    ss = st.session_state
    if knob.name in RANGE_KNOBS:
        lo_f, hi_f = RANGE_KNOBS[knob.name]
        lo, hi = int(ss[lo_f.key]), int(ss[hi_f.key])
        if hi < lo:
            raise ValueError(f"the most {knob.label.lower()} ({hi}) must be at least the "
                             f"fewest ({lo})")
        return tuple(range(lo, hi + 1))
    if knob.name in KNOB_INPUTS:
        field = KNOB_INPUTS[knob.name].field
        return tuple(field.kind(v) for v in ss[field.key])
    return tuple(knob.default)


def plan_spec(hardware, choice: ArrivalChoice, serving=None) -> tuple[PlanSpec, str]:
    """The ``PlanSpec`` of the inputs (``ValueError`` from the engine naming the problem)
    and a note on how the arrivals are recorded ("" if nothing to say)."""
    ss = st.session_state
    fam = family()
    use = uses(fam)
    kind, scv, trace, note = _arrival_fields(choice)
    args = dict(workload=fam.name, rate_per_s=float(ss[RATE.key]), arrivals_kind=kind,
                arrivals_scv=scv, arrivals_trace=trace, hardware=tuple(hardware),
                energy_cap_j=float(ss[ENERGY.key]) if ss[ENERGY_ON.key] else math.inf,
                confirm=int(ss[CONFIRM.key]), seed=int(ss[SEED.key]))
    if "sla_rows" in use:
        args["sla"] = tuple(ss[SLA.key])
    else:
        scale = 1000.0 if ss[TARGET_UNIT.key] == "s" else 1.0
        args.update(percentile=float(ss[PCT.key]), target_ms=float(ss[TARGET.key]) * scale)
    for knob in fam.knobs:
        args[knob.name] = _knob_values(knob)
    if "truncation" in use:
        args["truncation_cap"] = float(ss[TRUNCATION.key]) / 100.0
    if "reply_law" in use:
        args["token_law"] = ss[TOKEN_LAW.key]
    if serving is not None:
        args.update(serving.spec_fields(fam))
    return PlanSpec(**args), note
