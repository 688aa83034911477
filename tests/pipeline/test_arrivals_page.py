"""The pipeline page under other arrivals (issue 16): the Arrivals input in the sidebar
and the share link, the simulated points run under the chosen process (direct engine
calls with the page's seeds) and shown without asking, the exact curves kept and marked
as assuming Poisson arrivals, every answer naming its arrival model, and Poisson leaving
the page's figures exactly as they were."""
from __future__ import annotations

import numpy as np
import pytest

from engine import pipeline as pl
from engine.arrivals import Renewal
from tests import pagetest
from tests.pagetest import charts, results, trace
from app_pages.pipeline import data
from app_pages.pipeline.inputs import SPECS

PAGE = pagetest.script("pipeline")
VIEW = {"view": "Throughput & latency"}
BURSTY = {"arrivals": "bursty", "arrivals_scv": "4"} | VIEW
LABEL = "bursty arrivals (SCV 4)"
RATES = data.rates(SPECS["a100_40gb_sxm"], "job_1mib_double_buffered", 2, 8)   # defaults
MODEL = data.model(RATES, "before")
KEY = MODEL.args


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query)


def test_bursty_arrivals_move_the_simulated_points_and_the_answer_names_them():
    poisson = open_page({"simulate": "true"} | VIEW)
    bursty = open_page(BURSTY)                      # simulation off: shown all the same
    assert not bursty.exception and bursty.session_state["simulate"] is False
    (thr_p, lat_p), (thr_b, lat_b) = charts(poisson), charts(bursty)
    before = trace(lat_p, "simulation ±95% CI")
    after = trace(lat_b, f"simulation ±95% CI, {LABEL}")
    assert after["x"] == before["x"] and after["y"] != before["y"]
    assert trace(thr_b, f"simulation, {LABEL}")["x"] == after["x"]
    # the first point: the simulator under Renewal(λ, 4) with the page's seed stream
    cap = data.capacity(MODEL)
    lam = data.SIM_FRACTIONS[0] * cap
    first = pl.simulate_tandem(lam, *KEY, data.SIM_JOBS,
                               seed=np.random.SeedSequence([data.SEED, 0]),
                               arrivals=Renewal(lam, 4.0))
    assert after["y"][0] == pytest.approx(first.w_total_ms, rel=1e-12)
    # the exact and naive curves stay, marked as assuming Poisson arrivals
    for name in ("exact tandem", "independent stations (naive)"):
        assert trace(lat_b, f"{name}, Poisson arrivals")["y"] == trace(lat_p, name)["y"]
    # the answer: the arrival model, the exact rows marked Poisson, the simulated rows
    found = results(bursty)
    assert found["Arrivals"] == LABEL
    assert "Mean latency (with blocking)" not in found
    exact = float(data.point(0.8 * cap, MODEL).w_total_ms)
    assert found["Mean latency (with blocking), Poisson arrivals"] == f"{exact:.4g} ms"
    here = pl.simulate_tandem(0.8 * cap, *KEY, data.SIM_JOBS,
                              seed=np.random.SeedSequence([data.SEED, data.AT_STREAM]),
                              arrivals=Renewal(0.8 * cap, 4.0))
    assert found[f"Mean latency under {LABEL}, simulated"].startswith(
        f"{here.w_total_ms:.4g} ms ± {here.ci95_ms:.2g} (+")               # above Poisson
    assert here.w_total_ms > exact
    assert any(c.value.startswith(f"Arrivals: {LABEL}, scaled to this load")
               and "assume Poisson arrivals" in c.value for c in bursty.caption)


def test_poisson_leaves_the_figures_as_they_were():
    """The arrivals fields at their defaults, or moved away and back, draw the same
    figures and answer as a page whose link never names them, with the old legend."""
    query = {"simulate": "true"} | VIEW
    untouched = open_page(query)
    figs, answer = charts(untouched), results(untouched)
    assert "Arrivals" not in answer
    assert [t["name"] for t in figs[1]["data"][:3]] == [
        "exact tandem", "independent stations (naive)", "simulation ±95% CI"]
    defaults = open_page(query | {"arrivals": "poisson", "arrivals_scv": "4",
                                  "arrivals_trace": "azure_2023_code"})
    assert charts(defaults) == figs and results(defaults) == answer
    defaults.selectbox(key="arrivals").set_value("bursty").run()
    assert charts(defaults)[1]["data"] != figs[1]["data"]
    defaults.selectbox(key="arrivals").set_value("poisson").run()
    assert charts(defaults) == figs and results(defaults) == answer
