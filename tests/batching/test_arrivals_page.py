"""The GPU batching page under bursty arrivals: the exact MMPP-2 curve beside the Poisson
one, simulated points where no exact result exists, every answer naming its arrival
model, and the "Poisson vs this traffic" view's numbers equal to direct engine calls with
the page's seeds."""
from __future__ import annotations

import numpy as np
import pytest

from engine import batching
from engine.arrivals import MMPP2, Replay, Renewal
from engine.measured import read_trace
from engine.presets import arrival_presets, batch_profiles
from tests import pagetest
from tests.pagetest import charts, metric, trace
from tests.real_data import real_file
from app_pages.batching import data, traffic

PAGE = "app_pages/batching/page.py"
FIT = batch_profiles()["v100_resnet50_mixed"].fit()
A, T0 = FIT.alpha_ms, FIT.tau0_ms
LAM = 0.5 / A                     # the page's default load, ρ = 0.5 (per ms)
CONV = "trace_azure_llm_2023_conv.csv"


def p99_seed():
    """The results table's p99 stream, new each time: a process draws its arrivals from a
    child spawned off the seed, and a SeedSequence counts the children it spawned."""
    return batching.rate_seed(data.SEED, 99)


def conv_at(lam: float) -> MMPP2:
    """The conv trace's MMPP-2 time-scaled to λ (per ms): every rate × λ/its rate."""
    base = arrival_presets()["azure_2023_conv"].mmpp2()
    f = lam / base.rate
    return MMPP2(base.rate_1 * f, base.rate_2 * f, base.switch_12 * f, base.switch_21 * f,
                 base.name)


def open_page(query: dict):
    return pagetest.open_page(PAGE, query, via_app=True)


def latency_chart(at) -> dict:
    return next(f for f in charts(at) if f["layout"]["title"]["text"] == "Mean latency vs load")


def test_mmpp2_draws_both_exact_curves_and_names_its_arrivals():
    at = open_page({"arrivals": "mmpp2", "arrivals_trace": "azure_2023_conv"})
    label = "MMPP-2 fitted to the Azure conv trace"
    fig = latency_chart(at)
    poisson = trace(fig, "exact E[W], Poisson arrivals")
    rho = np.array(poisson["x"][::60])
    assert poisson["y"][::60] == pytest.approx(
        list(batching.mean_latency(rho / A, A, T0)), rel=1e-9)
    mmpp = trace(fig, f"exact E[W], {label}")
    cap = float(batching.capacity(A, T0, None))
    lam = np.array(traffic.MMPP_FRACTIONS) * cap
    assert mmpp["x"] == pytest.approx(list(lam * A), rel=1e-12)
    for i in (0, 5, 10):
        exact = batching.mean_latency_mmpp2(conv_at(lam[i]), A, T0)
        if exact.converged:         # drawn only where the truncated chain converges
            assert mmpp["y"][i] == pytest.approx(exact.mean_latency_ms, rel=1e-9)
        else:                       # (0.95 of capacity on this trace: simulated instead)
            assert mmpp["y"][i] is None
    assert not any(t["name"].startswith("φ") for t in fig["data"])   # Poisson bounds left out
    exact = batching.mean_latency_mmpp2(conv_at(LAM), A, T0)
    assert metric(at, "Mean latency per request") == f"{exact.mean_latency_ms:.3g} ms"
    assert metric(at, "Requests per batch") == f"{exact.mean_batch_size:.3g}"
    run = batching.simulate_rate(LAM, A, T0, None, data.N_JOBS, p99_seed(), arrivals=conv_at(LAM))
    assert metric(at, "p99 latency (simulated)") == f"{run.p99_ms:.3g} ms"
    assert metric(at, "Arrivals") == label
    assert any(label in c.value and "exact" in c.value for c in at.caption)


def test_bursty_arrivals_are_simulated_points_without_an_exact_curve():
    at = open_page({"arrivals": "bursty", "arrivals_scv": "4"})
    fig = latency_chart(at)
    names = [t["name"] for t in fig["data"]]
    assert "exact E[W], Poisson arrivals" in names
    assert not any(n.startswith("exact E[W], bursty") for n in names)
    sim = trace(fig, "simulation, bursty arrivals (SCV 4)")
    cap = float(batching.capacity(A, T0, None))
    first = batching.simulate_rate(0.1 * cap, A, T0, None, data.N_JOBS,
                                   batching.rate_seed(data.SEED, 0),
                                   arrivals=Renewal(0.1 * cap, 4.0))
    assert sim["y"][0] == pytest.approx(first.mean_latency_ms, rel=1e-12)
    run = batching.simulate_rate(LAM, A, T0, None, data.N_JOBS, p99_seed(),
                                 arrivals=Renewal(LAM, 4.0))
    assert metric(at, "Mean latency per request (simulated)") == f"{run.mean_latency_ms:.3g} ms"
    assert metric(at, "Arrivals") == "bursty arrivals (SCV 4)"
    assert any("No exact mean latency" in c.value for c in at.caption)


def test_poisson_vs_this_traffic_equals_direct_engine_calls():
    text = real_file(CONV)
    at = open_page({"view": "Poisson vs this traffic", "arrivals": "mmpp2",
                    "arrivals_trace": "azure_2023_conv"})
    at.selectbox(key="arrivals").set_value("replay").run()
    at.file_uploader(key="gpu_arrivals_upload").set_value((CONV, text.encode(), "text/csv"))
    at.run()
    assert not at.exception and not at.error
    name = f"{CONV} (uploaded)"
    times = read_trace(text).arrival_s
    table = at.dataframe[-1].value
    assert list(table["arrivals"]) == ["Poisson arrivals", f"MMPP-2 fitted to {name}",
                                       f"replay of {name}"]
    fitted = traffic.arrivals_input.trace_from_file(text.encode(), CONV).fitted
    f = LAM / fitted.rate
    mmpp = MMPP2(fitted.rate_1 * f, fitted.rate_2 * f, fitted.switch_12 * f,
                 fitted.switch_21 * f)
    replay = Replay(times).scaled(LAM)
    expected = [(batching.mean_latency(LAM, A, T0), "exact", None),
                (batching.mean_latency_mmpp2(mmpp, A, T0).mean_latency_ms, "exact", mmpp),
                (None, "simulated", replay)]
    for (_, row), (mean, how, process) in zip(table.iterrows(), expected):
        run = batching.simulate_rate(LAM, A, T0, None, data.N_JOBS, p99_seed(),
                                     **({} if process is None else {"arrivals": process}))
        mean = run.mean_latency_ms if mean is None else mean
        assert row["mean latency (ms)"] == f"{mean:.3g} ({how})"
        assert row["p99 latency (ms, simulated)"] == f"{run.p99_ms:.3g}"
    fig = next(f for f in charts(at) if "Poisson vs this traffic" in f["layout"]["title"]["text"])
    curve = trace(fig, f"replay of {name}")
    assert curve["x"] == pytest.approx(list(traffic.LOADS))
    rho = traffic.LOADS[-1]
    last = batching.simulate_rate(rho / A, A, T0, None, data.N_JOBS, p99_seed(),
                                  arrivals=Replay(times).scaled(rho / A))
    assert curve["y"][-1] == pytest.approx(last.p99_ms, rel=1e-12)
