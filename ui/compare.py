"""Scenario comparison: pin the current scenario as a baseline, overlay it later."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from ui.export import axis_unit, format_number, plain


def _key(page: str) -> str:
    return f"_baseline_{page}"


def controls(page: str, scenario: dict, where=None) -> dict | None:
    """Pin/clear buttons (drawn in ``where``, a container; the page by default);
    returns the pinned baseline (or None).

    ``scenario``: {"label": str, "metrics": {name: value}, "curve": (x, y)} for the
    current inputs; pinning stores a copy.  A click reruns the whole page so the
    charts outside a what-if fragment pick the baseline up too.
    """
    where = st if where is None else where
    key = _key(page)
    if where.button("Pin as baseline", key=f"pin_{page}", icon=":material/push_pin:",
                    help="Keep this scenario; later curves are drawn against it (dashed)."):
        st.session_state[key] = {k: v for k, v in scenario.items()}
        st.rerun()
    if st.session_state.get(key) is not None and where.button(
            "Clear baseline", key=f"unpin_{page}", icon=":material/close:"):
        st.session_state[key] = None
        st.rerun()
    return st.session_state.get(key)


def _split_unit(name: str) -> tuple[str, str]:
    """"mean latency (ms)" -> ("mean latency", "ms"); no unit -> (name, "")."""
    unit = axis_unit(name)
    return (name[:name.rfind("(")].rstrip(), unit) if unit else (name, "")


def _with_unit(text: str, unit: str) -> str:
    if not unit or text in ("", "n/a", "—"):
        return text
    if unit == "$":
        return f"−${text[1:]}" if text.startswith("-") else f"${text}"
    return f"{text} {unit}"


def _signed(value: float) -> str:
    text = format_number(value)
    return text if text.startswith("-") or text == "0" or not value > 0 else "+" + text


def difference_table(current: dict, baseline: dict) -> pd.DataFrame:
    """Metric by metric: baseline, current, change and % change, as text with the
    metric's unit (from its name: "mean latency (ms)") and 4 significant digits
    ("4,906 ms", "+2.16 %"); a change too small to show reads "0", never "-0.0"."""
    rows = []
    for name, now in current["metrics"].items():
        before = baseline["metrics"].get(name)
        if before is None:
            continue
        label, unit = _split_unit(name)
        row = {"metric": label, "baseline": _with_unit(plain(before), unit),
               "current": _with_unit(plain(now), unit), "change": "", "change %": ""}
        if _number(now) and _number(before):
            change = float(now) - float(before)
            if math.isfinite(change) and abs(change) <= 1e-12 * max(abs(now), abs(before)):
                change = 0.0
            row["change"] = _with_unit(_signed(change), unit) if math.isfinite(change) else "n/a"
            if math.isfinite(before) and before != 0 and math.isfinite(change):
                row["change %"] = _signed(round(100.0 * change / abs(before), 12)) + " %"
        rows.append(row)
    return pd.DataFrame(rows, columns=["metric", "baseline", "current", "change", "change %"])


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) or (
        hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0 and value.dtype.kind in "iuf")
