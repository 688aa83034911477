"""The capacity planner's figure builders, read as data (no Streamlit)."""
from __future__ import annotations

import math

import numpy as np

from app_pages.planner import figures as figs
from app_pages.planner import views
from engine.planner import capacity_plan, default_spec, pareto_front
from ui.arrivals_input import POISSON

POINTS = {"T4": ([0.5, 1.0, 1.5, 2.0], [80.0, 12.0, 9.0, 8.0], ["a", "b", "c", "d"]),
          "A100": ([4.0, 4.5], [7.0, 6.5], ["e", "f"])}
FRONT = ([2.0, 0.5, 1.0, 4.0, 1.5], [8.0, 80.0, 12.0, 7.0, 9.0], ["d", "a", "b", "e", "c"])


def trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["data"] if t.get("name", "").startswith(name))


def latency_figure(**kw) -> dict:
    args = dict(target=10.0, percentile=99.0, unit="ms", best=(1.5, 9.2, "2 × T4", 0.1))
    return figs.cost_latency(POINTS, FRONT, **{**args, **kw}).to_dict()


def test_front_is_sorted_by_cost_and_drawn_as_steps():
    fig = latency_figure()
    front = trace(fig, "cheapest front")
    assert list(front["x"]) == [0.5, 1.0, 1.5, 2.0, 4.0]
    assert list(front["y"]) == [80.0, 12.0, 9.0, 8.0, 7.0]
    assert list(front["text"]) == ["a", "b", "c", "d", "e"]
    assert front["line"]["shape"] == "hv" and "markers" in front["mode"]


def test_every_hardware_is_a_faint_cloud_of_its_own():
    fig = latency_figure()
    for name, (x, y, _) in POINTS.items():
        t = trace(fig, name)
        assert list(t["x"]) == x and list(t["y"]) == y
        assert t["mode"] == "markers" and t["opacity"] < 1
    assert len({trace(fig, n)["marker"]["color"] for n in POINTS}) == len(POINTS)


def test_target_line_and_label():
    fig = latency_figure()
    lines = [s for s in fig["layout"]["shapes"] if s["type"] == "line"]
    assert [(s["y0"], s["y1"], s["xref"]) for s in lines] == [(10.0, 10.0, "x domain")]
    assert any("target: p99 ≤ 10 ms" in a["text"] for a in fig["layout"]["annotations"])
    assert fig["layout"]["yaxis"]["title"]["text"] == "p99 latency (ms)"
    assert fig["layout"]["xaxis"]["title"]["text"] == "cost ($/h)"


def test_the_answer_is_a_star_with_its_confidence_interval():
    star = trace(latency_figure(), "the answer")
    assert star["marker"]["symbol"] == "star"
    assert (list(star["x"]), list(star["y"])) == ([1.5], [9.2])
    assert list(star["error_y"]["array"]) == [0.1]
    assert not [t for t in latency_figure(best=None)["data"]
                if t.get("name", "").startswith("the answer")]


def test_log_axes_only_where_values_span_decades():
    fig = latency_figure()                       # cost 0.5..4.5 (×9), latency 6.5..80 (×12)
    assert fig["layout"]["yaxis"]["type"] == "log"
    assert fig["layout"]["xaxis"].get("type") != "log"
    lo, hi = fig["layout"]["yaxis"]["range"]
    assert 10 ** lo < 6.5 and 10 ** hi > 80
    narrow = {"T4": ([1.0, 2.0], [8.0, 9.0], ["a", "b"])}
    fig = figs.cost_latency(narrow, ([1.0], [8.0], ["a"]), target=10.0, percentile=99.0,
                            unit="ms").to_dict()
    assert fig["layout"]["yaxis"].get("type") != "log"
    wide = {"T4": ([0.5, 500.0], [8.0, 9.0], ["a", "b"])}
    fig = figs.cost_latency(wide, ([0.5], [8.0], ["a"]), target=10.0, percentile=99.0,
                            unit="ms").to_dict()
    assert fig["layout"]["xaxis"]["type"] == "log"


def test_energy_figure_draws_the_cap_only_when_set():
    points = {"T4": ([1.0, 2.0], [0.2, 0.3], ["a", "b"])}
    front = ([1.0], [0.2], ["a"])
    capped = figs.cost_energy(points, front, cap=0.25).to_dict()
    assert [s["y0"] for s in capped["layout"]["shapes"]] == [0.25]
    assert any("cap: 0.25 J per request" in a["text"] for a in capped["layout"]["annotations"])
    for cap in (None, math.inf):
        fig = figs.cost_energy(points, front, cap=cap).to_dict()
        assert not fig["layout"].get("shapes")
    assert "more frugal" in trace(capped, "cheapest front")["name"]


def test_many_points_are_drawn_with_webgl():
    n = figs.GL_POINTS + 1
    points = {"T4": (np.linspace(1, 2, n).tolist(), np.linspace(5, 9, n).tolist(), ["x"] * n)}
    fig = figs.cost_latency(points, ([1.0], [9.0], ["x"]), target=10.0, percentile=99.0,
                            unit="ms").to_dict()
    assert trace(fig, "T4")["type"] == "scattergl"


def test_the_pages_figure_of_a_real_plan():
    """A small plan through the page's view: the front equals the engine's Pareto front
    of the stable configurations, the star is the plan's best at its confirmed
    percentile."""
    spec = default_spec("gpu").with_(b_max=(4, 8), replicas=(7, 8, 9), confirm=1)
    plan = capacity_plan(spec, executor="serial")
    fig = views.figure("cost_vs_latency", spec, POISSON).to_dict()
    stable = plan.table[plan.table["stable"]]
    keep = pareto_front(stable["cost_usd_per_hour"], stable["latency_percentile_ms"])
    front = trace(fig, "cheapest front")
    assert list(front["x"]) == sorted(stable["cost_usd_per_hour"].iloc[keep])
    assert list(front["y"]) == list(stable["latency_percentile_ms"].iloc[keep])
    star = trace(fig, "the answer")
    assert list(star["x"]) == [plan.best["cost_usd_per_hour"]]
    assert list(star["y"]) == [plan.best["confirmed_percentile_ms"]]
    clouds = sum(len(trace(fig, h.name)["x"]) for h in spec.hardware)
    assert clouds == len(stable)


def test_ranked_table_figure_for_the_report():
    fig = figs.ranked_figure(["rank", "hardware"], [["1", "2"], ["T4", "A100"]], "Ranked")
    table = fig.to_dict()["data"][0]
    assert table["type"] == "table"
    assert list(table["header"]["values"]) == ["rank", "hardware"]
    assert [list(c) for c in table["cells"]["values"]] == [["1", "2"], ["T4", "A100"]]


def test_disaggregation_figure_of_a_hand_made_frame():
    """Both fleets' cost against the rate (a rate where one kind meets the SLA nowhere is
    a gap), log axes where they span decades, the plan's own rate as a vertical line."""
    import pandas as pd
    frame = pd.DataFrame({"rate_per_s": [0.5, 1.0, 2.0, 4.0, 8.0],
                          "colocated_cost_usd_per_hour": [10.0, 20.0, 40.0, 80.0, math.inf],
                          "disaggregated_cost_usd_per_hour": [20.0, 20.0, 30.0, 60.0, 100.0],
                          "colocated_fleet": ["1 replica", "2 replicas", "4 replicas",
                                              "8 replicas", ""],
                          "disaggregated_fleet": ["1P + 1D", "1P + 1D", "1P + 2D", "2P + 4D",
                                                  "4P + 6D"],
                          "cheaper": ["colocated", "same cost", "disaggregated",
                                      "disaggregated", "disaggregated"]})
    fig = figs.disaggregation(frame, at_rate=2.0).to_dict()
    colocated, disaggregated = (trace(fig, "colocated"), trace(fig, "disaggregated"))
    assert list(colocated["x"]) == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert list(colocated["y"]) == [10.0, 20.0, 40.0, 80.0, None]
    assert list(disaggregated["y"]) == [20.0, 20.0, 30.0, 60.0, 100.0]
    assert list(disaggregated["text"])[-1] == "4P + 6D"
    assert fig["layout"]["xaxis"]["type"] == "log"          # 0.5..8: 16×
    assert fig["layout"]["yaxis"].get("type") != "log"      # 10..100: not more than 10×
    (line,) = fig["layout"]["shapes"]
    assert (line["x0"], line["x1"], line["yref"]) == (2.0, 2.0, "y domain")
    (label,) = [a for a in fig["layout"]["annotations"] if "plan's rate" in a["text"]]
    assert label["x"] == math.log10(2.0)                   # annotations: log10 on a log axis
    assert fig["layout"]["xaxis"]["title"]["text"] == "request rate (requests/s)"


def test_each_sla_row_has_its_own_cost_chart():
    """A serving plan held to TTFT and TPOT: one chart each, the target of its own row,
    the answer at its confirmed value; the front is the engine's front of that column."""
    from engine.planner import hardware_presets
    hw = (hardware_presets("llm_serving")["vllm_rtx4090_qwen2_5_7b"],)
    spec = default_spec("llm_disaggregated").with_(
        hardware=hw, rate_per_s=2.0, sla=(("ttft", 90.0, 1000.0), ("tpot", 90.0, 100.0)),
        max_num_seqs=(64,), max_num_batched_tokens=(2048,), prefill_instances=(1, 2),
        decode_instances=(1,), confirm=1)
    plan = views.data.plan(spec, POISSON, None)
    charts = views.latency_charts(spec)
    assert [(n, c) for n, c, _ in charts] == [("cost_vs_latency", "ttft_p90_ms"),
                                              ("cost_vs_tpot_p90_ms", "tpot_p90_ms")]
    for name, col, label in charts:
        fig = views.figure(name, spec, POISSON).to_dict()
        assert fig["layout"]["title"]["text"].startswith(f"Cost against {label}")
        assert fig["layout"]["yaxis"]["title"]["text"] == f"{label} (ms)"
        target = dict(ttft_p90_ms=1000.0, tpot_p90_ms=100.0)[col]
        assert [s["y0"] for s in fig["layout"]["shapes"]] == [target]
        star = trace(fig, "the answer")
        assert list(star["y"]) == [plan.best[f"confirmed_{col}"]]
        front = trace(fig, "cheapest front")
        assert sorted(front["y"]) == sorted(plan.fronts[col][col])


def test_table_numbers_are_rounded_to_significant_digits():
    """The tables' display rounding (ui.export.significant): 4 (or the digits asked)
    significant digits, written out here; 0, nan and inf kept."""
    from ui.export import significant
    got = significant([123456.0, 0.00123456, -9.87654, 0.0, math.inf, math.nan, 2.5e-7])
    want = [123500.0, 0.001235, -9.877, 0.0, math.inf, math.nan, 2.5e-7]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert significant(1234.5, 2) == 1200.0 and significant(0.0456, 1) == 0.05
