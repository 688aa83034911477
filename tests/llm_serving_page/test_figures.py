"""The LLM serving page's figure builders (pure functions) and its answer helpers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from app_pages.llm_serving import answer, data
from app_pages.llm_serving import figures as figs
from engine import llm_serving as ls
from ui.export import figure_frame

RATE = np.array([1.0, 2.0, 3.0])
PCTS = {50: np.array([100.0, 120.0, 200.0]), 90: np.array([150.0, 200.0, 400.0]),
        99: np.array([200.0, 300.0, np.nan])}
MEAN, CI = np.array([110.0, 140.0, 250.0]), np.array([5.0, 8.0, 30.0])
APPROX_X, APPROX_Y = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([90, 110, 180, np.inf, np.inf])


def _latency(**kw):
    args = dict(capacity=3.5, x_max=4.2, limit=250.0, limit_label="target: TTFT ≤ 250 ms at p90")
    args.update(kw)
    return figs.latency_load_figure("Time to first token (TTFT) against load", "TTFT (ms)",
                                    RATE, PCTS, MEAN, CI, APPROX_X, APPROX_Y, **args)


def test_latency_figure_traces_axes_and_labels():
    fig = _latency().to_dict()
    names = [t["name"] for t in fig["data"]]
    assert names == ["simulated p50", "simulated p90", "simulated p99",
                     "simulated mean ±95% CI", "approximation (mean, no simulation)"]
    lay = fig["layout"]
    assert lay["xaxis"]["title"]["text"] == "load (requests/s)"
    assert lay["yaxis"]["title"]["text"] == "TTFT (ms)" and lay["yaxis"]["type"] == "log"
    assert lay["xaxis"]["range"] == [0, 4.2]
    p99 = fig["data"][2]
    assert list(p99["x"]) == [1.0, 2.0] and list(p99["y"]) == [200.0, 300.0]   # NaN left out
    mean = fig["data"][3]
    assert mean["mode"] == "markers" and list(mean["error_y"]["array"]) == [5.0, 8.0, 30.0]
    approx = fig["data"][4]
    assert approx["line"]["dash"] == "dash" and list(approx["y"])[3:] == [None, None]
    texts = [a["text"] for a in lay["annotations"]]
    assert "unstable past capacity" in texts and "target: TTFT ≤ 250 ms at p90" in texts
    band = [s for s in lay["shapes"] if s["type"] == "rect"]
    assert band and band[0]["x0"] == 3.5 and band[0]["x1"] == 4.2
    assert any(s["type"] == "line" and s.get("y0") == 250.0 for s in lay["shapes"])


def test_latency_figure_baseline_target_met_line_and_suffix():
    fig = _latency(baseline=(RATE, [1.0, 2.0, 3.0]), meets_up_to=2.5,
                   sim_suffix=", bursty arrivals (SCV 4)",
                   approx_label="approximation (mean, no simulation, Poisson arrivals)")
    d = fig.to_dict()
    names = [t["name"] for t in d["data"]]
    assert "simulated p99, bursty arrivals (SCV 4)" in names
    assert names[-1] == "baseline (pinned), p99" and d["data"][-1]["line"]["dash"] == "dash"
    assert any(s.get("x0") == 2.5 and s["line"]["color"] == "#2ca02c"
               for s in d["layout"]["shapes"])
    assert "target met up to here" in [a["text"] for a in d["layout"]["annotations"]]
    frame = figure_frame(fig)                      # the CSV export: units in the columns
    assert frame.columns[0] == "load (requests/s)"
    assert "simulated p50, bursty arrivals (SCV 4) (ms)" in frame.columns
    assert "simulated mean ±95% CI, bursty arrivals (SCV 4) ±95% CI (ms)" in frame.columns


def test_no_capacity_band_or_target_when_off_the_chart():
    d = _latency(capacity=10.0, limit=None, meets_up_to=0.0).to_dict()
    assert not d["layout"].get("shapes") and not d["layout"].get("annotations")


def test_timeline_figure_two_panels():
    t = np.linspace(0, 2, 5)
    fig = figs.timeline_figure(t, [1, 2, 3, 2, 1], [0, 0, 1, 0, 0], [10, 50, 100, 50, 0],
                               [0, 0, 1, 1, 1], 100).to_dict()
    assert [d["name"] for d in fig["data"]] == ["running", "waiting", "KV cache in use",
                                               "preemptions so far"]
    assert [d.get("yaxis", "y") for d in fig["data"]] == ["y", "y", "y2", "y3"]
    assert list(fig["data"][2]["y"]) == [10.0, 50.0, 100.0, 50.0, 0.0]          # % of 100
    lay = fig["layout"]
    assert lay["yaxis2"]["title"]["text"] == "KV cache in use (%)"
    assert lay["yaxis3"]["overlaying"] == "y2" and lay["xaxis"]["title"]["text"] == "time (s)"
    unbounded = figs.timeline_figure(t, [1] * 5, [0] * 5, [3] * 5, [0] * 5, None).to_dict()
    assert unbounded["layout"]["yaxis2"]["title"]["text"] == "KV blocks in use (blocks)"
    assert list(unbounded["data"][2]["y"]) == [3.0] * 5


def test_axis_top_and_slider_step_are_round():
    assert data.axis_top(5.974) == pytest.approx(7.2)
    assert data.axis_top(0.0123) == pytest.approx(0.015)
    assert data.slider_step(7.2) == pytest.approx(0.01)
    assert data.slider_step(720.0) == pytest.approx(1.0)


def test_answer_rows_say_unstable_with_the_limit():
    cap = ls.CapacityLimit(rate_per_s=5.0, seats=83.3, step_ms=60.0, binding="KV cache",
                           exact=False)
    found = ls.SloRate(rate_per_s=4.0, fails_at_per_s=4.2, simulations=10)
    rows = dict(answer.rows(6.0, cap, None, type("S", (), {"pct": 90})(), found))
    assert rows["TTFT p50"] == "unstable (> 5 requests/s)"
    assert rows["Load"] == "6 requests/s (120 % of capacity)"
    assert rows["Limit that binds"] == "the KV cache (83.3 seats, approximate)"
    msg = answer.unstable_message(6.0, cap)
    assert msg.startswith("Unstable: the server carries at most 5 requests/s")
    assert answer.slo_answer(ls.SloRate(0.0, 0.3, 10)) == \
        "none (fails even at 0.3 requests/s)"
    assert answer.ms(math.nan) == "n/a"


def test_measured_figure_is_log_log_with_the_agreement_line():
    fig = figs.measured_figure({"TTFT": ([100.0, 200.0, np.nan], [110.0, 190.0, 5.0],
                                         ["TTFT mean", "TTFT p50", "TTFT p99"]),
                                "TPOT": ([20.0], [25.0], ["TPOT mean"])}).to_dict()
    names = [t["name"] for t in fig["data"]]
    assert names == ["TTFT", "TPOT", "prediction = measurement"]
    assert list(fig["data"][0]["x"]) == [100.0, 200.0]          # a NaN point left out
    assert list(fig["data"][0]["text"]) == ["TTFT mean", "TTFT p50"]
    lay = fig["layout"]
    assert lay["xaxis"]["type"] == "log" and lay["yaxis"]["type"] == "log"
    assert lay["xaxis"]["title"]["text"] == "measured (ms)"
    line = fig["data"][-1]
    assert list(line["x"]) == list(line["y"])
    assert line["x"][0] < 20.0 and line["x"][1] > 200.0
