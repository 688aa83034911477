"""The LLM batching page under other arrivals (issue 16): the Arrivals input in the sidebar
and the share link, every strategy's simulation run under the chosen process (direct
engine calls with the page's seeds), the exact curves kept and labelled as Poisson, every
answer naming its arrival model, and Poisson leaving the page's figures as they were."""
from __future__ import annotations

import numpy as np
import pytest

from engine import llm_batching as lb
from engine.core import token_laws as tl
from engine.arrivals import MMPP2, Renewal
from engine.presets import arrival_presets
from tests import pagetest
from tests.pagetest import charts, metric, trace, link
from app_pages.llm_batching import data

PAGE = pagetest.script("llm_batching")
K = (0.06, 0.126, 0.0003, 0.02269)          # presets/llm_batching/a100_llama2_7b.toml
LAW = tl.lognormal(7.0, 0.7)
LAM, LAM0 = 0.05, 0.03                       # the current load; the first comparison load
SIM = {"simulate": "true", "n_jobs": "1000"}
BURSTY = {"arrivals": "bursty", "arrivals_scv": "4"} | SIM
LABEL = "bursty arrivals (SCV 4)"


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query)


def test_arrivals_input_is_in_the_sidebar_and_round_trips_in_the_link():
    at = open_page({"arrivals": "mmpp2", "arrivals_trace": "azure_2023_conv"})
    box = at.sidebar.selectbox(key="arrivals")
    assert box.label == "Arrivals" and box.value == "mmpp2"
    label = "MMPP-2 fitted to the Azure conv trace"
    assert metric(at, "Arrivals") == label
    params = link(at)
    assert params["arrivals"] == "mmpp2" and params["arrivals_trace"] == "azure_2023_conv"
    again = open_page(params)
    assert metric(again, "Arrivals") == label
    assert again.session_state["arrivals_trace"] == "azure_2023_conv"
    # simulation off: the answer says the strategies are not yet seen under this traffic
    assert metric(at, "Mean latency, fixed b = 16, simulated") == "simulation off"
    assert any("turn on the simulation" in c.value for c in at.caption)


def test_bursty_arrivals_run_every_simulation_under_the_process():
    poisson, bursty = open_page(SIM), open_page(BURSTY)
    fig, before = charts(bursty)[0], charts(poisson)[0]
    for strategy in data.STRATEGIES:
        label = data.LABELS[strategy]
        was = trace(before, f"{label}, simulated ±95% CI")
        now = trace(fig, f"{label}, simulated ±95% CI, {LABEL}")
        assert now["x"] == was["x"] and now["y"] != was["y"], strategy
    first = lb.simulate("continuous", LAM0, LAW, K, n_jobs=1000, seed=[data.SEED, 0],
                        kv_capacity_tokens=62720.0, prompt_tokens=256.0,
                        arrivals=Renewal(LAM0, 4.0))
    cont = trace(fig, f"{data.LABELS['continuous']}, simulated ±95% CI, {LABEL}")
    assert cont["x"][0] == pytest.approx(LAM0)
    assert cont["y"][0] == pytest.approx(first.mean_latency_s, rel=1e-12)
    # the exact curves stay, labelled as Poisson, with the Poisson page's values
    for name in ("fixed b = 16, exact", "dynamic, no cap, exact", "dynamic, cap b_max = 64, exact"):
        assert trace(fig, f"{name}, Poisson arrivals")["y"] == trace(before, name)["y"], name
    p99 = charts(bursty)[1]
    assert trace(p99, f"elastic, simulated, {LABEL}")["y"] != \
        trace(charts(poisson)[1], "elastic, simulated")["y"]


def test_every_answer_names_its_arrival_model():
    at = open_page(BURSTY)
    assert metric(at, "Arrivals") == LABEL
    exact = float(lb.fixed_batch_sojourn(LAM, 16, LAW, K))
    assert metric(at, "Mean latency, fixed b = 16, Poisson") == f"{exact:.3g} s"
    run = lb.simulate("fixed", LAM, LAW, K, b=16, n_jobs=1000,
                      seed=[data.SEED, data.AT_STREAM], arrivals=Renewal(LAM, 4.0))
    assert metric(at, "Mean latency, fixed b = 16, simulated") == \
        f"{run.mean_latency_s:.3g} s ± {run.ci95_s:.2g}"
    assert metric(at, "Best fixed batch size, Poisson") == metric(open_page(), "Best fixed")
    verdicts = next(c.value for c in at.caption if c.value.startswith("Fastest strategy"))
    assert verdicts.startswith(f"Fastest strategy by load (requests/s), {LABEL} (simulated")
    assert any(f"Arrivals: {LABEL} in the simulations; the exact results assume Poisson"
               in c.value for c in at.caption)
    assert metric(open_page(), "Arrivals") == "Poisson arrivals"


def test_mmpp2_simulations_use_the_fitted_process_at_each_load():
    at = open_page({"arrivals": "mmpp2", "arrivals_trace": "azure_2023_code"} | SIM)
    base = arrival_presets()["azure_2023_code"].mmpp2()
    f = LAM0 / base.rate
    process = MMPP2(base.rate_1 * f, base.rate_2 * f, base.switch_12 * f, base.switch_21 * f)
    run = lb.simulate("elastic", LAM0, LAW, K, n_jobs=1000, seed=[data.SEED, 0],
                      arrivals=process)
    name = "elastic, simulated ±95% CI, MMPP-2 fitted to the Azure code trace"
    assert trace(charts(at)[0], name)["y"][0] == pytest.approx(run.mean_latency_s, rel=1e-12)


def test_poisson_leaves_the_figures_as_they_were():
    """The arrivals fields at their defaults, or moved away and back, draw the same
    figures as a page whose link never names them; the simulated points are the
    simulator's own Poisson runs (no ``arrivals`` keyword)."""
    untouched = open_page(SIM)
    defaults = open_page({"arrivals": "poisson", "arrivals_scv": "4",
                          "arrivals_trace": "azure_2023_code"} | SIM)
    figs = charts(untouched)
    assert charts(defaults) == figs
    sim = trace(figs[0], "elastic, simulated ±95% CI")
    run = lb.simulate("elastic", LAM0, LAW, K, n_jobs=1000, seed=[data.SEED, 0])
    assert sim["y"][0] == pytest.approx(run.mean_latency_s, rel=1e-12)
    assert np.isfinite(sim["y"][0])
    defaults.selectbox(key="arrivals").set_value("bursty").run()
    assert charts(defaults)[0]["data"] != figs[0]["data"]
    defaults.selectbox(key="arrivals").set_value("poisson").run()
    assert charts(defaults) == figs
