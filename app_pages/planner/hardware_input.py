"""The candidate-hardware input: the editable table (``st.data_editor``) and the presets
multiselect.  The table in use travels in the share link (``hardware.encode``); a bad
cell gives a message naming the row and the column, and the last valid table stays in
use while the user's edits stay in the editor.  A multiselect of presets adds or removes
preset rows; each row's source (the preset's measurement and price) is listed under it.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.share import inert

from .hardware import (FIXED, MODEL, PRESET, STEP, WHOLE, _empty, columns, decode, encode,
                       frame, from_frame, kind_of, presets)

HELP = {"name": "What the results call this candidate (unique).",
        "price_usd_per_hour": "What one replica costs per hour, $ (all its GPUs).",
        "busy_power_w": "Board power while a batch runs, W (all its GPUs).",
        "idle_power_w": "Board power while idle, W (0 if unknown: energy is then a lower "
                        "bound).",
        "alpha_ms": "Batch time τ[b] = αb + τ0: α, ms per image in the batch.",
        "tau0_ms": "Batch time τ[b] = αb + τ0: τ0, ms per batch.",
        "max_batch": "The largest batch the profile measured: larger b_max are not searched.",
        "k1": "Batch time H(b, l) = k1·b + k2 + k3·b·l + k4·l (s; b requests, l the "
              "longest reply in tokens): k1, s per request.",
        "k2": "H(b, l): k2, s per batch.", "k3": "H(b, l): k3, s per request per token.",
        "k4": "H(b, l): k4, s per token of the longest reply.",
        "gpus": "GPUs one server uses (its tensor-parallel degree): the fleet's GPU count.",
        "kv_cache_tokens": "Tokens the paged KV cache holds (empty: not known, never binds).",
        STEP: "One scheduler step's time, fitted to the preset's measurements (read only: "
              "a plan file can give another).",
        MODEL: "The model it serves: prefill and decode candidates pair only on the same "
               "model.",
        PRESET: "The preset a row came from (empty: typed in)."}
CAPTIONS = {
    "gpu": "One row per server a replica can run on: its price per hour, its board power, "
           "and its batch time α, τ0 fitted to a measured batch profile.",
    "llm": "One row per server a replica can run on: its price per hour, its board power, "
           "and its batch time k1..k4.",
    "serving": "One row per server (a model on its GPUs, tensor-parallel): its price per "
               "hour, GPUs, KV cache and board power; its step time comes from the preset "
               "(read only). Add servers from the presets below."}
PICK_HELP = {
    "gpu": "Measured batch profiles with list prices",
    "llm": "Batch-time fits with list prices",
    "serving": "Serving presets (step times fitted to published profiles and real vLLM "
               "runs) with list prices"}
_BASE, _OUT, _SEEN = "_plan_hw_base", "_plan_hw_out", "_plan_hw_seen"
EDITOR, PICK = "plan_hw_table", "plan_hw_presets"


def _column_config(workload: str) -> dict:
    labels = columns(workload)
    cfg = {"name": st.column_config.TextColumn(labels["name"], help=HELP["name"],
                                               required=True)}
    for key in (STEP, MODEL, PRESET):
        cfg[key] = st.column_config.TextColumn(key, help=HELP[key], disabled=True)
    for key, label in labels.items():
        if key == "name":
            continue
        whole = key in WHOLE
        cfg[key] = st.column_config.NumberColumn(
            label, help=HELP.get(key), min_value=1 if whole else 0.0,
            step=1 if whole else None, format="%d" if whole else "%.6g")
    return cfg


def _reconcile(workload: str) -> None:
    """After the presets multiselect changed: drop the rows of presets taken out, append
    rows for presets put in; every other row (and edit) stays as it is."""
    ss = st.session_state
    chosen = list(ss.get(PICK) or [])
    table = ss.get(_OUT)
    if table is None:
        table = ss.get(_BASE, frame((), workload))
    keep = table[[_empty(p) or p in chosen for p in table[PRESET]]]
    have = {p for p in keep[PRESET] if not _empty(p)}
    found = presets(workload)
    added = frame([found[p] for p in chosen if p not in have and p in found], workload)
    parts = [t for t in (keep, added) if len(t)]
    ss[_BASE] = (pd.concat(parts, ignore_index=True) if parts
                 else frame((), workload)).reset_index(drop=True)


def table_input(key: str, workload: str) -> tuple[tuple, str | None]:
    """Draw the hardware table (its value in the share field ``key``: the encoded
    table) and the presets multiselect; returns (the candidates in use, the problem with
    the table as edited or None).  On a problem the last valid table stays in use."""
    ss = st.session_state
    kind = kind_of(workload)
    st.caption(CAPTIONS[kind])
    if ss.get(_SEEN) != ss[key]:                  # first run, a link, a plan file, a switch
        ss[_BASE] = frame(decode(ss[key], workload), workload)
        ss[_SEEN] = ss[key]
        ss.pop(_OUT, None)
        ss.pop(EDITOR, None)                      # edits of the table replaced
    shown = [c for c in ss[_BASE].columns if c != FIXED]
    edited = st.data_editor(ss[_BASE], num_rows="dynamic", key=EDITOR, hide_index=True,
                            column_config=_column_config(workload), column_order=shown,
                            width="stretch")
    ss[_OUT] = edited
    problem, in_use = None, None
    try:
        in_use = from_frame(edited, workload)
    except ValueError as err:
        problem = str(err)
        in_use = decode(ss[key], workload)
    else:
        ss[key] = ss[_SEEN] = encode(in_use)
    found = presets(workload)
    ss[PICK] = [p for p in edited[PRESET] if not _empty(p) and p in found]
    st.multiselect("Presets in the table", list(found), key=PICK,
                   format_func=lambda p: found[p].name, on_change=_reconcile, args=(workload,),
                   help=f"{PICK_HELP[kind]}: pick one to add its row, remove it to drop the "
                        "row. Edit any cell above; add rows of your own at the bottom of the "
                        "table.")
    with st.expander("Where the numbers come from"):
        for h in in_use:
            st.markdown(f"**{inert(h.name)}**: {inert(h.source)}")
    return in_use, problem
