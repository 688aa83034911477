"""The token-limit page under other arrivals (issue 16): the Arrivals input in the sidebar
and the share link, the simulated points run under the chosen process (direct engine
calls with the page's seeds), Kingman's GI/G/1 approximation drawn and labelled as one
(checked against its own relation to the exact Pollaczek–Khinchine curve), every answer
naming its arrival model, and Poisson leaving the page's figures exactly as they were."""
from __future__ import annotations

import numpy as np
import pytest

from engine import token_limit
from engine.core import token_laws
from engine.arrivals import Renewal
from engine.presets import token_latency_profiles
from tests import pagetest
from tests.pagetest import charts, metric, trace
from app_pages.token_limit import data

PAGE = pagetest.script("token_limit")
FIT = token_latency_profiles()["a100_llama2_7b_table1"].fit()
A, C = FIT.a_s_per_token, FIT.c_s
LAW = token_laws.lognormal(7.0, 0.7)
LAM, LIMIT, PATIENCE = 0.025, 1600, 60.0          # the page's defaults
BURSTY = {"arrivals": "bursty", "arrivals_scv": "4"}
LABEL = "bursty arrivals (SCV 4)"
FAST = {"simulate": "false"}


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query)


def test_bursty_arrivals_move_the_simulated_points_and_draw_the_approximation():
    poisson, bursty = charts(open_page())[0], charts(open_page(BURSTY))[0]
    before = trace(poisson, "simulation ±95% CI")
    after = trace(bursty, f"{LABEL}, simulation ±95% CI")
    assert after["x"] == before["x"] and after["y"] != before["y"]
    # the first point: the simulator under Renewal(λ, 4) with the page's seed stream
    first = token_limit.simulate_token_queue(LAM, A, C, LAW, after["x"][0], None,
                                             n_jobs=data.SIM_JOBS, seed=[data.SEED, 0],
                                             arrivals=Renewal(LAM, 4.0))
    assert after["y"][0] == pytest.approx(first.mean_wait_all_s, rel=1e-12)
    # the exact curve stays as the Poisson reference
    exact = trace(bursty, "Poisson (exact), M/G/1 (eqs 1-5)")
    assert exact["y"] == trace(poisson, "E[W], M/G/1 (eqs 1-5)")["y"]
    # Kingman: E[W] ≈ (ca² + cs²)/2 · ρ/(1 − ρ) · E[S] is P-K at ca² = 1, so at ca² = 4
    # it exceeds the exact curve by (4 − 1)/2 · ρ/(1 − ρ) · E[S], with E[S] = ρ/λ
    approx = trace(bursty, f"{LABEL}, GI/G/1 approximation (Kingman)")
    assert approx["line"]["dash"] == "dash"
    n = np.array(approx["x"])
    rho = np.asarray(token_limit.utilization(LAM, A, C, LAW, n))
    stable = np.flatnonzero(rho < 1)[::6]
    assert stable.size >= 3
    gap = 1.5 * rho[stable] ** 2 / (LAM * (1 - rho[stable]))
    got = np.array(approx["y"])[stable] - np.array(exact["y"])[stable]
    assert got == pytest.approx(gap, rel=1e-9)
    # the impatience charts: simulated under the process, exact curves marked Poisson
    loss = charts(open_page(BURSTY))[2]
    assert trace(loss, f"{LABEL}, simulation ±95% CI")["y"] != \
        trace(charts(open_page())[2], "simulation ±95% CI")["y"]
    assert trace(loss, "exact M/G/1+D, Poisson arrivals")


def test_every_answer_names_its_arrival_model():
    at = open_page(BURSTY | FAST)
    assert metric(at, "Arrivals") == LABEL
    renewal = Renewal(LAM, 4.0)
    plain = token_limit.simulate_token_queue(LAM, A, C, LAW, LIMIT, None, n_jobs=data.SIM_JOBS,
                                             seed=[data.SEED, data.AT_STREAM], arrivals=renewal)
    patient = token_limit.simulate_token_queue(LAM, A, C, LAW, LIMIT, PATIENCE,
                                               n_jobs=data.SIM_JOBS,
                                               seed=[data.SEED, data.AT_STREAM],
                                               arrivals=renewal)
    assert metric(at, "Mean wait (no one gives up), simulated") == \
        f"{plain.mean_wait_all_s:.3g} s ± {plain.ci95_wait_all_s:.2g}"
    assert metric(at, "Share of users who give up (wait > 60 s), simulated") == \
        f"{100 * patient.loss_fraction:.1f} %"
    exact = float(token_limit.mean_wait(LAM, A, C, LAW, LIMIT))
    assert metric(at, "Mean wait (no one gives up), Poisson") == f"{exact:.3g} s" == "26.2 s"
    rho = float(token_limit.utilization(LAM, A, C, LAW, LIMIT))
    approx = exact + 1.5 * rho ** 2 / (LAM * (1 - rho))            # Kingman at ca² = 4
    assert metric(at, "Mean wait (no one gives up), GI/G/1 approximation") == f"{approx:.3g} s"
    sentence = next(m.value for m in at.markdown if "Limit 1,600 →" in m.value)
    assert "Poisson arrivals" in sentence and "bursty arrivals \\(SCV 4\\)" in sentence
    assert any(LABEL in c.value for c in at.caption)
    at.segmented_control(key="view").set_value("Optimal limit").run()
    optimum = next(c.value for c in at.caption if "best limit is" in c.value)
    assert "assume Poisson arrivals" in optimum and "bursty arrivals \\(SCV 4\\)" in optimum
    names = [t["name"] for t in charts(at)[0]["data"]]
    assert f"V1 with the GI/G/1 approximation, {LABEL}" in names
    assert "V1 optimum, Poisson arrivals: 1252 tokens" in names
    poisson = open_page(FAST)
    assert metric(poisson, "Arrivals") == "Poisson arrivals"
    assert any("Poisson arrivals" in m.value for m in poisson.markdown if "Limit" in m.value)


def test_poisson_leaves_the_figures_as_they_were():
    """The arrivals fields at their defaults, or moved away and back, draw the same
    figures as a page whose link never names them, with the old legend; the simulated
    points are the simulator's own Poisson runs (no ``arrivals`` keyword)."""
    untouched = open_page()
    defaults = open_page({"arrivals": "poisson", "arrivals_scv": "4",
                          "arrivals_trace": "azure_2023_code"})
    figs = charts(untouched)
    assert charts(defaults) == figs
    assert [t["name"] for t in figs[0]["data"][:2]] == ["E[W], M/G/1 (eqs 1-5)",
                                                        "simulation ±95% CI"]
    sim = trace(figs[0], "simulation ±95% CI")
    run = token_limit.simulate_token_queue(LAM, A, C, LAW, sim["x"][1], None,
                                           n_jobs=data.SIM_JOBS, seed=[data.SEED, 1])
    assert sim["y"][1] == pytest.approx(run.mean_wait_all_s, rel=1e-12)
    defaults.selectbox(key="arrivals").set_value("bursty").run()
    assert charts(defaults)[0]["data"] != figs[0]["data"]
    defaults.selectbox(key="arrivals").set_value("poisson").run()
    assert charts(defaults) == figs
