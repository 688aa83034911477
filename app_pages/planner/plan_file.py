"""The plan as a file: the inputs downloaded as TOML (``engine.planner.plan_toml``), which
``python -m engine.planner`` runs outside the browser, and a plan file opened to fill the
inputs (``engine.planner.read_plan``; a bad file shows its error and the inputs stay)."""
from __future__ import annotations

import math

import streamlit as st

from engine.planner import PlanSpec, plan_toml, read_plan
from ui import arrivals_input, share
from ui.uploads import MAX_UPLOAD_BYTES

from . import hardware as hw_table
from . import inputs as ins

UPLOAD = "planner_plan_upload"
FILE_NAME = "capacity_plan.toml"
CLI = ("Run it outside the browser: `python -m engine.planner capacity_plan.toml "
       "[--out results.csv] [--dask ADDRESS]` (local processes, or a Dask cluster).")
_MESSAGE = "_plan_file_message"


def fill(spec: PlanSpec) -> list[str]:
    """Set every input to ``spec``'s value; returns notes on what the page could not
    take as it is (non-consecutive replica counts, a replayed trace to upload...)."""
    ss, notes = st.session_state, []
    old = ss.get(ins.WORKLOAD.key)
    if old is not None and old != spec.workload:           # keep what the other one had
        ins.keep_inputs(old)
    llm = spec.workload == "llm"
    unit = "s" if llm else "ms"
    ss.update({ins.WORKLOAD.key: spec.workload, ins.RATE.key: spec.rate_per_s,
               ins.PCT.key: spec.percentile, ins.TARGET_UNIT.key: unit,
               ins.TARGET.key: spec.target_ms / (1000.0 if llm else 1.0),
               ins.ENERGY_ON.key: math.isfinite(spec.energy_cap_j),
               ins.HARDWARE.key: hw_table.encode(spec.hardware),
               ins.B_MAX.key: list(spec.b_max), ins.CONFIRM.key: spec.confirm,
               ins.R_LO.key: min(spec.replicas), ins.R_HI.key: max(spec.replicas)})
    if math.isfinite(spec.energy_cap_j):
        ss[ins.ENERGY.key] = spec.energy_cap_j
    if llm:
        ss[ins.LIMITS.key] = list(spec.token_limit)
        ss[ins.TRUNCATION.key] = 100.0 * spec.truncation_cap
        if spec.token_law in ins.OUTPUT_LAWS:
            ss[ins.TOKEN_LAW.key] = spec.token_law
        else:
            notes.append(f"Token law {spec.token_law} is not an output-token law: kept "
                         f"{ins.OUTPUT_LAWS[ss[ins.TOKEN_LAW.key]].name}.")
    else:
        ss[ins.DELAYS.key] = list(spec.queue_delay_ms)
    r = spec.replicas
    if len(r) != max(r) - min(r) + 1:
        notes.append(f"The file's replica counts ({', '.join(map(str, r[:8]))}"
                     f"{'…' if len(r) > 8 else ''}) are searched here as every count from "
                     f"{min(r)} to {max(r)}.")
    if spec.seed <= ins.SEED.high:
        ss[ins.SEED.key] = spec.seed
    else:
        notes.append(f"Seed {spec.seed} is above the page's largest, {ins.SEED.high:,}: kept "
                     f"{ss.get(ins.SEED.key, ins.SEED.default)}.")
    notes += _fill_arrivals(spec)
    return notes


def _fill_arrivals(spec: PlanSpec) -> list[str]:
    ss = st.session_state
    kind, scv, trace = spec.arrivals_kind, spec.arrivals_scv, spec.arrivals_trace
    ss[arrivals_input.KIND.key] = kind
    if kind == "bursty":
        f = arrivals_input.SCV
        ss[f.key] = min(max(scv, f.low), f.high)
        if ss[f.key] != scv:
            return [f"Inter-arrival SCV {scv:g} is outside the page's {f.low:g}–{f.high:g}: "
                    f"set to {ss[f.key]:g}."]
    if kind == "mmpp2":
        ss[arrivals_input.TRACE.key] = trace
    if kind == "replay":
        return [f"The plan replays the trace file {trace}: upload it in the Arrivals input "
                "(until then the page plans for Poisson arrivals)."]
    return []


def _opened() -> None:
    """The plan-file uploader changed: read the file and fill the inputs."""
    ss = st.session_state
    upload = ss.get(UPLOAD)
    if upload is None:
        ss.pop(_MESSAGE, None)
        return
    try:
        data = upload.getvalue()
        if len(data) > MAX_UPLOAD_BYTES:
            raise ValueError(f"the file is over {MAX_UPLOAD_BYTES // 1_000_000} MB")
        spec = read_plan(data)
    except ValueError as err:
        ss[_MESSAGE] = ("error", f"Plan file not used: {err}. The inputs are as they were.")
        return
    notes = fill(spec)
    ss[_MESSAGE] = ("success", " ".join([f"Inputs filled from {upload.name}.", *notes]))


def upload_input() -> None:
    """The plan-file uploader (sidebar) and what the last file did."""
    st.file_uploader("Open a plan file (TOML)", type=["toml", "txt"], key=UPLOAD,
                     on_change=_opened,
                     help="A plan file downloaded from this page, or written by hand "
                          "(engine/planner/files.py shows the format): every input is "
                          "filled from it.")
    kind, text = st.session_state.get(_MESSAGE, (None, ""))
    if kind == "error":
        st.error(share.inert(text), icon=":material/error:")
    elif kind == "success":
        st.success(share.inert(text), icon=":material/task_alt:")


def download_button(spec: PlanSpec, where=None) -> None:
    """"Download plan (TOML)": the inputs as a plan file."""
    (where or st).download_button("Download plan (TOML)", plan_toml(spec), FILE_NAME,
                                  "application/toml", key="plan_toml", on_click="ignore",
                                  icon=":material/download:")
