"""The plan as a file: the inputs downloaded as TOML (``engine.planner.plan_toml``), which
``python -m engine.planner`` runs outside the browser, and a plan file opened to fill the
inputs (``engine.planner.read_plan``; a bad file shows its error and the inputs stay),
for every workload family (the serving families' SLA rows, workload and link too)."""
from __future__ import annotations

import streamlit as st

from engine.planner import PlanSpec, plan_toml, read_plan
from ui import arrivals_input, share
from ui.uploads import MAX_UPLOAD_BYTES

from . import fields, spec_values
from . import inputs as ins

UPLOAD = "planner_plan_upload"
FILE_NAME = "capacity_plan.toml"
CLI = ("Run it outside the browser: `python -m engine.planner capacity_plan.toml "
       "[--out results.csv] [--dask ADDRESS]` (local processes, or a Dask cluster).")
_MESSAGE = "_plan_file_message"


def fill(spec: PlanSpec) -> list[str]:
    """Set every input to ``spec``'s value; returns notes on what the page could not
    take as it is (non-consecutive replica counts, a trace file to upload...)."""
    ss = st.session_state
    old = ss.get(fields.WORKLOAD.key)
    if old is not None and old != spec.workload:           # keep what the other one had
        ins.keep_inputs(old)
    values, notes = spec_values.values_of(spec)
    ss.update(values)
    ss[fields.CONFIRM.key] = min(max(spec.confirm, fields.CONFIRM.low), fields.CONFIRM.high)
    if ss[fields.CONFIRM.key] != spec.confirm:
        notes.append(f"confirm = {spec.confirm}: the page confirms {ss[fields.CONFIRM.key]}.")
    if spec.seed <= fields.SEED.high:
        ss[fields.SEED.key] = spec.seed
    else:
        notes.append(f"Seed {spec.seed} is above the page's largest, {fields.SEED.high:,}: "
                     f"kept {ss.get(fields.SEED.key, fields.SEED.default)}.")
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
