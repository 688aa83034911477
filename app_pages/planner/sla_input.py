"""The SLA input of the families held to several metrics (the LLM serving families): an
editable list of rows, each a metric (TTFT, TPOT, end to end), a percentile and a
target in ms, every row to hold.

The rows in use travel in the share field ``fields.SLA``; the editor's table is checked
row by row (``from_frame``: a message naming the row and the column), and on a problem
the last valid rows stay in use while the edits stay in the editor.
"""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from engine.planner.families import METRICS, sla_text
from engine.planner.spec import MAX_SLA_ROWS
from ui import share

from .fields import SLA, check_sla

LABELS = {"metric": "metric", "percentile": "p (%)", "target_ms": "target (ms)"}
EDITOR = "plan_sla_table"
_BASE, _SEEN = "_plan_sla_base", "_plan_sla_seen"


def frame(sla) -> pd.DataFrame:
    """The editor's table of SLA rows (metrics by their short labels: TTFT, TPOT, e2e)."""
    return pd.DataFrame([{"metric": METRICS[m][1], "percentile": q, "target_ms": t}
                         for m, q, t in sla], columns=list(LABELS))


def _empty(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) or (
        isinstance(v, str) and not v.strip())


def from_frame(table: pd.DataFrame, metrics: tuple) -> tuple:
    """The SLA rows of the editor's table for a family held to ``metrics``;
    ``ValueError`` naming the row and the column of the first bad cell.  Rows left
    entirely empty are skipped."""
    by_label = {METRICS[m][1]: m for m in metrics}
    rows = []
    for i, rec in enumerate(table.to_dict("records")):
        cells = [rec.get(k) for k in LABELS]
        if all(_empty(v) for v in cells):
            continue
        where = f"row {i + 1}"
        for key, v in zip(LABELS, cells):
            if _empty(v):
                raise ValueError(f"{where}, column '{LABELS[key]}': empty cell")
        metric, q, target = cells
        if metric not in by_label:
            raise ValueError(f"{where}, column 'metric': one of {', '.join(by_label)}")
        try:
            q, target = float(q), float(target)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: the percentile and the target must be numbers") \
                from None
        if not (math.isfinite(q) and SLA.low <= q <= SLA.high):
            raise ValueError(f"{where}, column '{LABELS['percentile']}': must be within "
                             f"{SLA.low:g}–{SLA.high:g}, got {q:g}")
        if not (math.isfinite(target) and target > 0):
            raise ValueError(f"{where}, column '{LABELS['target_ms']}': must be above 0 ms, "
                             f"got {target:g}")
        rows.append((by_label[metric], q, target))
    if not rows:
        raise ValueError("no rows: add at least one (metric, percentile, target)")
    return check_sla(rows, SLA.low, SLA.high)


def table_input(fam) -> None:
    """Draw the SLA rows of the family ``fam`` (in the sidebar); a valid table becomes
    the SLA in use, a bad one is named and the last valid rows stay."""
    ss = st.session_state
    if ss.get(_SEEN) != ss[SLA.key]:                  # first run, a link, a file, a switch
        ss[_BASE] = frame(ss[SLA.key])
        ss[_SEEN] = ss[SLA.key]
        ss.pop(EDITOR, None)
    options = [METRICS[m][1] for m in fam.metrics]
    words = ", ".join(f"{METRICS[m][1]}: {METRICS[m][0]}" for m in fam.metrics)
    edited = st.data_editor(
        ss[_BASE], num_rows="dynamic", key=EDITOR, hide_index=True, width="stretch",
        column_config={
            "metric": st.column_config.SelectboxColumn(
                LABELS["metric"], options=options, required=True, help=words + ".",
                width=62),
            "percentile": st.column_config.NumberColumn(
                LABELS["percentile"], min_value=SLA.low, max_value=SLA.high, format="%g",
                width=48, help="The percentile: this share of requests must be within "
                                    "the target (95: the p95)."),
            "target_ms": st.column_config.NumberColumn(
                LABELS["target_ms"], min_value=0.0, format="%g", width=78,
                help="The most the percentile may be, in ms.")})
    try:
        rows = from_frame(edited, fam.metrics)
    except ValueError as err:
        st.error(share.inert(f"SLA not used: {err}. Still using the last valid SLA "
                             f"({sla_text(ss[SLA.key])})."), icon=":material/error:")
        return
    ss[SLA.key] = ss[_SEEN] = rows
    st.caption(f"Every row must hold (at most {MAX_SLA_ROWS}): {share.inert(sla_text(rows))}.")
