"""The view "Where disaggregation pays": at five rates around the plan's (× 0.25 … 4),
the cheapest colocated fleet against the cheapest disaggregated one that meets the SLA,
from one memoised engine call (``engine.planner.disaggregation_pays``; until the engine
has it, the view says so)."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from engine.planner import money_text
from ui import share
from ui.export import show_chart

from . import data
from . import figures as figs

RUN = "plan_disaggregation_run"
CAPTION = ("Each point is a whole plan at that rate, with the same candidates, ranges and "
           "SLA: the cheapest fleet of each kind whose percentiles were confirmed by "
           "simulation. A gap: no fleet of that kind in the ranges meets the SLA there.")
CHEAPER = {"colocated": "colocated", "disaggregated": "disaggregated",
           "same cost": "the same cost", "neither": "neither meets the SLA"}


def table(frame: pd.DataFrame, rate_unit: str = "requests/s") -> pd.DataFrame:
    """The comparison in words, one row per rate (the saving: what the cheaper fleet
    saves on the other, where the engine gives it)."""
    def cost(v) -> str:
        v = float(v)
        return money_text(v) + "/h" if math.isfinite(v) else "none meets the SLA"

    def fleet(v) -> str:
        return str(v) if isinstance(v, str) and v else "—"
    out = {f"rate ({rate_unit})": [f"{r:,.4g}" for r in frame["rate_per_s"]],
           "colocated ($/h)": [cost(v) for v in frame["colocated_cost_usd_per_hour"]],
           "colocated fleet": [fleet(v) for v in frame["colocated_fleet"]],
           "disaggregated ($/h)": [cost(v) for v in frame["disaggregated_cost_usd_per_hour"]],
           "disaggregated fleet": [fleet(v) for v in frame["disaggregated_fleet"]],
           "cheaper": [CHEAPER.get(c, str(c)) for c in frame["cheaper"]]}
    if "saving_fraction" in frame:
        out["saving (%)"] = ["—" if not math.isfinite(float(v)) else f"{100 * float(v):.0f}"
                             for v in frame["saving_fraction"]]
    return pd.DataFrame(out)


def show(spec, arrivals, workload) -> None:
    """Draw the view for the plan of (``spec``, ``arrivals``, ``workload``)."""
    if data.disaggregation_function() is None:
        st.info("Not available yet: this view needs the engine's "
                "`engine.planner.disaggregation_pays`, which this version does not have.",
                icon=":material/hourglass_empty:")
        return
    rates = data.disaggregation_rates(spec)
    args = (spec, arrivals, workload, rates)
    if not data.disaggregation.ready(*args) and not st.button(
            "Compare at 5 rates", key=RUN, type="primary",
            help="Plans the colocated and the disaggregated fleet at each rate (whole "
                 "plans, confirmed by simulation: this takes a while)."):
        st.info(share.inert(
            "Plans both kinds of fleet at " + ", ".join(f"{r:,.4g}" for r in rates)
            + f" {spec.family.load_unit}: press the button to run them."),
            icon=":material/hourglass_top:")
        return
    try:
        with st.spinner("Planning both kinds of fleet at 5 rates…"):
            frame = data.disaggregation(*args)
    except ValueError as err:
        st.error(share.inert(f"Comparison not run: {err}."), icon=":material/error:")
        return
    show_chart(figs.disaggregation(frame, rate_unit=spec.family.load_unit,
                                   at_rate=spec.rate_per_s), "disaggregation_pays",
               table=frame)
    screened = ("confirmed" in frame and not frame["confirmed"].astype(bool).all())
    st.caption(CAPTION + (" Some answers are screened only, not confirmed (confirm = 0)."
                          if screened else ""))
    st.dataframe(table(frame, spec.family.load_unit), hide_index=True, width="stretch")
