"""Scenario comparison: pin the current scenario as a baseline, overlay it later."""
from __future__ import annotations

import pandas as pd
import streamlit as st


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


def difference_table(current: dict, baseline: dict) -> pd.DataFrame:
    """Metric by metric: baseline, current, change (and % change where meaningful)."""
    rows = []
    for name, now in current["metrics"].items():
        before = baseline["metrics"].get(name)
        if before is None:
            continue
        change = now - before
        pct = 100.0 * change / before if before not in (0, float("inf")) and before == before else None
        rows.append({"metric": name, "baseline": before, "current": now, "change": change,
                     "change %": pct})
    return pd.DataFrame(rows)
