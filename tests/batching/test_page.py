"""The GPU dynamic-batching page, driven headless with Streamlit's AppTest."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests import pagetest
from tests.pagetest import charts, metric, trace

from engine import batching
from engine.presets import batch_profiles
from ui.export import format_number

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "app_pages/batching/page.py"


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query, via_app=True)


@pytest.mark.parametrize("preset", ["v100_resnet50_mixed", "p4_resnet50_int8", "custom"])
def test_page_runs_for_every_preset(preset):
    at = open_page({"preset": preset})
    assert not at.error
    assert charts(at), "the latency chart is drawn"


def test_exact_curve_on_the_chart_is_the_engine_curve():
    at = open_page()
    fig = charts(at)[0]
    exact = trace(fig, "exact E[W]")
    fit = batch_profiles()["v100_resnet50_mixed"].fit()
    rho = exact["x"][::50]
    expected = batching.mean_latency([r / fit.alpha_ms for r in rho], fit.alpha_ms, fit.tau0_ms)
    assert exact["y"][::50] == pytest.approx(list(expected), rel=1e-9)


def test_moving_the_load_slider_changes_the_operating_point_and_curves():
    at = open_page({"b_max": "8"})        # the cap, once on, is 8 (cheap exact curves)
    before = metric(at, "Mean latency")
    at.slider(key="rho").set_value(0.9).run()
    assert metric(at, "Mean latency") != before
    at.toggle(key="cap_batch").set_value(True).run()
    assert at.number_input(key="b_max").value == 8
    fig = charts(at)[0]
    assert not at.exception
    assert any(s["type"] == "rect" for s in fig["layout"].get("shapes", [])), "unstable region shaded"


@pytest.mark.parametrize("query", [
    {"rho": "0.01"}, {"rho": "0.99"}, {"cap_batch": "true", "b_max": "1"},
    {"cap_batch": "true", "b_max": "1024"}, {"load_mode": "rate", "rate_per_s": "10000000"},
    {"sla_ms": "0.01"}])
def test_extremes_run_without_exception(query):
    at = open_page(query)
    assert not at.exception


def test_unstable_load_is_reported_not_crashed():
    at = open_page({"load_mode": "rate", "rate_per_s": "9000"})
    assert any("Unstable" in e.value for e in at.error)
    assert metric(at, "Mean latency") == "∞ (unstable)"


@pytest.mark.parametrize("view", ["Latency", "Utilization & energy", "Batch-size limit",
                                  "Tail latency & Triton", "Profile fit",
                                  "Model vs measurement", "Formulas"])
def test_every_view_renders(view):
    at = open_page({"view": view, "simulate": "true"})
    assert not at.exception
    if view not in ("Formulas",):
        assert charts(at)


def test_share_link_round_trip():
    at = open_page({"preset": "p4_resnet50_int8", "rho": "0.73", "cap_batch": "true",
                    "b_max": "16", "sla_ms": "25", "view": "Batch-size limit"})
    assert at.session_state["rho"] == 0.73 and at.session_state["b_max"] == 16
    assert at.query_params["preset"] == ["p4_resnet50_int8"] or \
        at.query_params["preset"] == "p4_resnet50_int8"
    again = open_page({k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()})
    assert metric(again, "Mean latency") == metric(at, "Mean latency")
    assert again.session_state["view"] == "Batch-size limit"


@pytest.mark.parametrize("query,key", [({"rho": "banana"}, "rho"), ({"rho": "7"}, "rho"),
                                       ({"b_max": "2.5"}, "b_max"), ({"view": "<script>"}, "view"),
                                       ({"simulate": "maybe"}, "simulate")])
def test_malformed_link_parameter_falls_back_with_a_warning(query, key):
    at = open_page(query)
    assert any(key in w.value for w in at.warning)
    defaults = {"rho": 0.5, "b_max": 64, "view": "Latency", "simulate": False}   # FIELDS
    assert at.session_state[key] == defaults[key]


BAD_TABLES = {
    "wrong columns": "size,speed\n1,100\n2,200\n",
    "NaN": "batch_size,throughput_per_s\n1,476\n2,nan\n",
    "negative": "batch_size,throughput_per_s\n1,476\n2,-880\n",
    "one row": "batch_size,throughput_per_s\n1,476\n",
    "formula": "batch_size,throughput_per_s\n1,=cmd|' /C calc'!A0\n2,880\n",
}


@pytest.mark.parametrize("bad", BAD_TABLES, ids=BAD_TABLES.keys())
def test_malformed_custom_profile_shows_error_and_keeps_previous(bad):
    at = open_page({"preset": "p4_resnet50_int8"})
    p4_latency = metric(at, "Mean latency")
    at.selectbox(key="preset").set_value("custom").run()
    at.text_area(key="gpu_profile_paste").input(BAD_TABLES[bad]).run()
    assert not at.exception
    assert any("Profile not used" in e.value for e in at.error)
    assert metric(at, "Mean latency") == p4_latency       # still the last valid profile
    assert at.text_area(key="gpu_profile_paste").value == BAD_TABLES[bad]   # input kept


def test_good_pasted_profile_is_fitted():
    at = open_page()
    at.selectbox(key="preset").set_value("custom").run()
    at.text_area(key="gpu_profile_paste").input(
        "batch_size,throughput_per_s\n1,500\n2,900\n4,1500\n8,2200\n").run()
    assert not at.error
    assert metric(at, "Mean latency") != metric(open_page(), "Mean latency")


def test_pin_baseline_overlays_and_tabulates():
    at = open_page()
    at.button(key="pin_gpu").click().run()
    at.slider(key="rho").set_value(0.8).run()
    fig = charts(at)[0]
    assert any(t.get("name") == "baseline (pinned)" for t in fig["data"])
    assert len(at.dataframe) >= 1


def test_a_profile_without_measured_power_shows_the_energy_the_planner_prices():
    """Issue 24: the GPU page said "n/a (no power data)" for the measured T4 profile while
    the capacity planner priced its energy per request from the datasheet's board power,
    unsaid.  The page now gives the planner's number at its own load, said to be
    from datasheet power."""
    from engine.planner.families.gpu_batching import FAMILY
    pid = "dle_tf_t4_resnet50_amp"
    at = pagetest.open_page(PAGE, {"preset": pid, "rho": "0.6", "cap_batch": "false"})
    watts = FAMILY.presets()[pid].busy_power_w                      # what the planner uses
    fit = batch_profiles()[pid].fit()
    here = batching.operating_point_at(0.6 / fit.alpha_ms, fit.alpha_ms, fit.tau0_ms)
    joules = watts * here.utilization / here.rate_per_s
    assert metric(at, "Energy per request") == (
        f"{format_number(joules, 3)} J from datasheet power ({format_number(watts)} W busy, "
        "no power measured: an upper bound)")
    assert metric(at, "Energy efficiency") == "n/a (no power measured)"


def test_energy_chart_and_table_show_one_efficiency():
    """The trade-off chart's operating point and the results table's energy efficiency
    come from one engine function (they used to be two copies)."""
    at = open_page({"view": "Utilization & energy", "rho": "0.6"})
    tradeoff = next(f for f in charts(at) if "trade-off" in f["layout"]["title"]["text"])
    star = trace(tradeoff, "operating point")
    assert f"{star['y'][0]:.3g} jobs/J" == metric(at, "Energy efficiency")
    fit = batch_profiles()["v100_resnet50_mixed"].fit()
    lam = 0.6 / fit.alpha_ms
    eta = batching.energy_efficiency(lam, fit.alpha_ms, fit.tau0_ms, fit.beta_j, fit.c0_j)
    assert star["y"][0] == pytest.approx(float(eta), rel=1e-12)


def test_first_screen_speaks_plain_words_and_explains_the_busy_gpu():
    """Issue 14: no paper notation in the results labels; at ρ = 0.5 on the V100 the GPU is
    busy ~100 % of the time, and the note under the table gives the engine's split."""
    at = open_page()
    labels = " ".join(pagetest.results(at))
    for notation in ("E[W]", "E[B]", "π0"):
        assert notation not in labels
    assert metric(at, "GPU busy") == "100.0 %"
    fit = batch_profiles()["v100_resnet50_mixed"].fit()
    p = batching.operating_point_at(0.5 / fit.alpha_ms, fit.alpha_ms, fit.tau0_ms)
    note = next(c.value for c in at.caption if c.value.startswith("Why busy"))
    assert f"per-request work takes {100 * p.work_share:.1f} %" in note     # = ρ = 50.0 %
    assert f"another {100 * p.overhead_share:.1f} %" in note
    assert "idle < 0.1 %" in note


def test_baseline_from_another_preset_is_drawn_in_requests_per_second():
    """A V100 baseline pinned, then P4 shown with the load as ρ: both curves on one axis of
    requests/s (the V100's ρ is not the P4's), and the difference table's names carry units."""
    at = open_page()
    at.button(key="pin_gpu").click().run()
    at.selectbox(key="preset").set_value("p4_resnet50_int8").run()
    assert not at.exception
    fig = charts(at)[0]
    assert fig["layout"]["xaxis"]["title"]["text"] == "arrival rate (requests/s)"
    v100, p4 = (batch_profiles()[k].fit() for k in ("v100_resnet50_mixed", "p4_resnet50_int8"))
    base = [x for x in trace(fig, "baseline (pinned)")["x"] if x is not None]
    assert max(base) < 1000 / v100.alpha_ms and max(base) > 0.9 * 1000 / v100.alpha_ms
    exact = [x for x in trace(fig, "exact E[W]")["x"] if x is not None]
    assert max(exact) < 1000 / p4.alpha_ms
    table = at.dataframe[0].value
    names = list(table["metric"])
    assert not any(n.startswith(("E[W]", "E[B]", "utilization")) for n in names)
    for metric_name, unit in (("Mean latency", "ms"), ("Load", "requests/s")):
        row = table[table["metric"].str.startswith(metric_name)].iloc[0]
        assert f"({unit})" in row["metric"] or str(row["current"]).endswith(unit), row


def test_report_opens_with_the_answer_and_human_headings():
    from tests.token_limit.test_page import _page_with_eager_report
    at = AppTest.from_function(_page_with_eager_report, args=(PAGE,), default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    html = at.session_state["_report_html"]
    answer = html[:html.index("<h2>Inputs</h2>")]
    assert "Mean latency per request" in answer and " ms</td>" in answer
    assert "requests/s" in answer and "latency target 10 ms" in answer
    assert "<h2>Mean latency against load</h2>" in html and "<h2>latency</h2>" not in html
    assert "<h2>b_max_family</h2>" not in html
    inputs_table = html.split("<h2>Inputs</h2>")[1].split("</table>")[0]
    assert "<td>no limit</td>" in inputs_table and "<td>10 ms</td>" in inputs_table


def test_moving_the_load_moves_the_marker_on_the_memoised_latency_chart(monkeypatch):
    """Issue 14: the operating point is marked on the latency chart and follows the load
    slider; the chart's figure is memoised on the scenario (the same object after the
    move: only the point is new)."""
    drawn = pagetest.record_marked(monkeypatch)
    at = open_page()
    before = pagetest.marked_figure(drawn)
    point = charts(at)[0]["data"][-1]
    assert point["x"] == [pytest.approx(0.5)]
    drawn.clear()
    at.slider(key="rho").set_value(0.8).run()
    point = charts(at)[0]["data"][-1]
    assert point["x"] == [pytest.approx(0.8)]
    assert point["name"] == "now: " + metric(at, "Mean latency")
    assert pagetest.marked_figure(drawn) is before
