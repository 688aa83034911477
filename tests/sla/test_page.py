"""The autoscaling-SLA page, driven headless with Streamlit's AppTest."""
from pathlib import Path

import pytest

from tests import pagetest
from tests.pagetest import charts, metric, trace, link

from engine import sla

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "sla" / "page.py")
GOOD_TRACE = "time_s,rate_per_s\n0,400\n300,900\n600,1500\n900,700\n"


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query)


def chart(at, title_word: str) -> dict:
    return next(f for f in charts(at) if title_word in f["layout"]["title"]["text"])


@pytest.mark.parametrize("query", [
    {"mu_source": "manual", "law": "exponential"},
    {"mu_source": "v100_resnet50_mixed", "law": "lognormal", "lam": "5000"},
    {"mu_source": "p4_resnet50_int8", "law": "deterministic", "lam": "1500", "view": "Trace & cost"}])
def test_page_runs_for_every_service_source_and_law(query):
    at = open_page(query)
    assert not at.error
    assert charts(at)
    assert metric(at, "Replicas needed, approximation") not in ("none", "")


def test_answer_agrees_with_the_engine():
    at = open_page()
    # Defaults: λ = 900/s, μ = 100/s, exponential, d1 = d2 = 0.25 ms, Δ = 0.5 ms, p99 ≤ 100 ms.
    expected = sla.min_backends(900.0, 100.0, 0.1, 99, 0.00025, 0.00025, 0.0005,
                                sla.service_law("exponential", 0.01))
    assert metric(at, "Replicas needed, approximation") == str(int(expected))
    assert metric(at, "Replicas needed, one central queue") == str(int(sla.erlang_c_min_servers(900.0, 100.0, 0.1, 99)))
    assert metric(at, "Replicas needed, simulation") == "11"        # the engine's docstring: 11
    # plain words first (changed on purpose): no n′ on the first screen
    assert any("11 replicas keep 99 % of requests within 100 ms" in md.value
               and "approximation says 10" in md.value for md in at.markdown)
    assert not any("n′" in md.value for md in at.markdown)
    fig = chart(at, "by replicas")
    assert trace(fig, "simulation (random retry)")["x"][0] >= 6


@pytest.mark.parametrize("query", [
    {"lam": "0.01"}, {"lam": "1000000"}, {"pct": "99.99"}, {"pct": "50"}, {"rt_ms": "0.1"},
    {"d1_ms": "20", "d2_ms": "20", "delta_ms": "50"}, {"law": "lognormal", "sigma": "3"},
    {"headroom": "2", "prov_s": "7200", "view": "Trace & cost"},
    {"interval_s": "10", "hours": "168", "view": "Trace & cost"},
    {"mu_source": "p4_resnet50_int8", "gpu_target_ms": "0.1"}, {"n": "100000"},
    {"mu": "1000000", "view": "Response time"}])
def test_extremes_run_without_exception(query):
    open_page(query)


def test_unstable_replica_count_is_reported_not_crashed():
    at = open_page({"n": "5", "view": "Response time"})
    assert any("Too few replicas" in e.value and "500 requests/s" in e.value for e in at.error)
    assert metric(at, "Slower than 100 ms with 5 replicas, approximation") == \
        "all (too few replicas)"


def test_moving_sliders_changes_the_figures():
    at = open_page()
    before = trace(chart(at, "by replicas"), "approximation (Swayam)")["y"]
    at.slider(key="d1_ms").set_value(2.0).run()
    after = trace(chart(at, "by replicas"), "approximation (Swayam)")["y"]
    assert not at.exception and after != before
    at.segmented_control(key="view").set_value("Trace & cost").run()
    cost = trace(chart(at, "Cost"), "autoscaled")["y"][-1]
    at.slider(key="headroom").set_value(0.5).run()
    assert trace(chart(at, "Cost"), "autoscaled")["y"][-1] > cost


@pytest.mark.parametrize("view", ["Replicas", "Response time", "Trace & cost", "Paper vs model",
                                  "Formulas"])
def test_every_view_renders(view):
    at = open_page({"view": view})
    if view == "Formulas":
        assert len(at.latex) >= 3 and any("Eq 7" in md.value for md in at.markdown)
    else:
        assert charts(at)


def replicas_chart(at) -> dict:
    fig = chart(at, "slower than the target")
    return {"x range": fig["layout"]["xaxis"]["range"], "y range": fig["layout"]["yaxis"]["range"],
            "curves": [(t["name"], t["x"], t["y"]) for t in fig["data"]]}


def test_share_link_restores_the_chart_range():
    """Before: the range followed the what-if n, which moves without redrawing the chart
    (and reset to 1 when the slider's range moved): with the P4 preset the sender saw
    n up to 24.5 and the link opened 1-7.5.  Now the range is the scenario's alone."""
    at = open_page({"mu_source": "p4_resnet50_int8"})
    first = replicas_chart(at)
    at.slider(key="n").set_value(9).run()
    seen = replicas_chart(at)
    assert seen == first and at.session_state["n"] == 9
    again = open_page(link(at))
    assert replicas_chart(again) == seen and again.session_state["n"] == 9
    at.number_input(key="lam").set_value(1500.0).run()
    seen = replicas_chart(at)
    assert replicas_chart(open_page(link(at))) == seen


def test_probability_chart_draws_no_rounding_noise():
    """P4 preset: P(R ≤ RT) rounds to 1 − 1e-16 at every n shown.  Before: fragments at
    1e-16 and blank cells.  Now no value below the resolution is data, and the chart
    and the what-if table say so ("below 1e-12" on the log axis, in words in the table)."""
    at = open_page({"mu_source": "p4_resnet50_int8"})
    fig = chart(at, "slower than the target")
    ys = [y for t in fig["data"] for y in t["y"]]
    assert ys and None not in ys and min(ys) >= sla.MISS_RESOLUTION
    assert any("below 1e-12" in a["text"] for a in fig["layout"]["annotations"])
    assert metric(at, "Slower than 100 ms with 11 replicas, approximation") == \
        "below one in 1,000,000,000,000"


def test_trace_results_have_denominators_and_the_static_fleet():
    at = open_page()          # the numbers: 2,526,885 late requests, 12 intervals
    assert metric(at, "Intervals missing the SLA, autoscaled") == "12 of 288 (4.17 %)"
    assert metric(at, "Intervals missing the SLA, static fleet") == "0 of 288 (0 %)"
    late = metric(at, "Requests late beyond the allowed 1 %, autoscaled")
    assert late.startswith("2,526,885 of 79,303,382 (3.19 %)")
    assert metric(at, "Requests late beyond the allowed 1 %, static fleet").startswith("0 of ")


def test_eq1_as_printed_only_in_the_paper_view():
    at = open_page()
    names = [t["name"] for f in charts(at) for t in f["data"]]
    assert not any("as printed" in n for n in names)
    at.segmented_control(key="view").set_value("Paper vs model").run()
    assert any("as printed" in t["name"] for t in chart(at, "Paper vs model")["data"])
    ticks = chart(at, "Paper vs model")["layout"]["xaxis"]
    assert ticks["tickformat"] == "d" and ticks["dtick"] == int(ticks["dtick"])


def test_share_link_round_trip():
    at = open_page({"lam": "1200", "pct": "95", "rt_ms": "50", "law": "deterministic",
                    "view": "Response time", "n": "14"})
    assert at.session_state["lam"] == 1200.0 and at.session_state["law"] == "deterministic"
    query = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert query["pct"] == "95"
    again = open_page(query)
    assert metric(again, "Replicas needed, approximation") == metric(at, "Replicas needed, approximation")
    assert again.session_state["view"] == "Response time" and again.session_state["n"] == 14


@pytest.mark.parametrize("query,key,default", [
    ({"lam": "banana"}, "lam", 900.0), ({"pct": "100"}, "pct", 99.0),
    ({"n": "2.5"}, "n", 11), ({"law": "<script>"}, "law", "exponential"),
    ({"simulate": "maybe"}, "simulate", True)])
def test_malformed_link_parameter_falls_back_with_a_warning(query, key, default):
    at = open_page(query)
    assert any(key in w.value for w in at.warning)
    assert at.session_state[key] == default


BAD_TRACES = {
    "wrong columns": "size,speed\n1,100\n2,200\n",
    "NaN": "time_s,rate_per_s\n0,400\n300,nan\n",
    "negative": "time_s,rate_per_s\n0,400\n300,-5\n",
    "one row": "time_s,rate_per_s\n0,400\n",
    "unsorted timestamps": "timestamp_s\n3.0\n1.0\n2.0\n",
}


def test_malformed_trace_shows_error_and_keeps_the_previous_trace():
    at = open_page({"trace": "custom", "view": "Trace & cost"})
    at.text_area(key="sla_trace_paste").input(GOOD_TRACE).run()
    assert not at.error
    cost = metric(at, "Cost, autoscaled")
    assert len(trace(chart(at, "Load trace"), "load (requests/s)")["y"]) == 4
    for name, bad in BAD_TRACES.items():
        at.text_area(key="sla_trace_paste").input(bad).run()
        assert not at.exception, name
        assert any("Trace not used" in e.value for e in at.error), name
        assert metric(at, "Cost, autoscaled") == cost, name       # still the good trace
        assert at.text_area(key="sla_trace_paste").value == bad, name


def test_a_trace_of_ones_own_says_which_load_each_answer_is_for():
    """Issue 24: after a trace of ~5.5 requests/s, "1 replica, saving 0 %" was priced under a
    headline still answering for 900 requests/s, unsaid."""
    at = open_page({"trace": "custom", "simulate": "false"})
    at.text_area(key="sla_trace_paste").input("time_s,rate_per_s\n0,4\n300,7\n600,5.5\n").run()
    assert not at.exception and not at.error
    said = " ".join(w.value for w in at.warning)
    assert "for 900 requests/s, the arrival rate in the sidebar" in said
    assert "for the trace, mean 5.5 requests/s, peak 7 requests/s" in said
    assert metric(at, "Cost, static fleet for the peak").endswith("(1 replica all the time)")
    at.button(key="sla_rate_from_trace").click().run()      # answer the replicas for it
    assert not at.exception and at.number_input(key="lam").value == 5.5
    assert not any("Two loads" in w.value for w in at.warning)
    assert any("1 replica keeps 99 % of requests within 100 ms at 5.5 requests/s" in md.value
               for md in at.markdown)


def test_pin_baseline_overlays_and_tabulates():
    at = open_page()
    at.button(key="pin_sla").click().run()
    at.number_input(key="lam").set_value(1500.0).run()
    fig = chart(at, "by replicas")
    assert any(t.get("name") == "baseline (pinned)" for t in fig["data"])
    assert len(at.dataframe) >= 1



def test_two_uploads_of_the_same_trace_under_different_names_are_different_scenarios():
    at = open_page({"trace": "custom", "simulate": "false", "view": "Trace & cost"})
    for name in ("monday.csv", "tuesday.csv"):
        at.file_uploader(key="sla_trace_upload").set_value(
            (name, GOOD_TRACE.encode(), "text/csv"))
        at.run()
        assert not at.exception and not at.error
        assert any(f"Trace: {name} (4 intervals)" in md.value for md in at.markdown), name


def test_moving_the_replicas_moves_the_marker_on_the_memoised_chart(monkeypatch):
    """Issue 14: the what-if n is marked on the late-share chart at the table's share
    (approximation) and follows the slider; the figure is memoised on the scenario (the
    same object after the move: only the point is new)."""
    drawn = pagetest.record_marked(monkeypatch)
    at = open_page()
    before = pagetest.marked_figure(drawn)
    n = at.session_state["n"]
    assert chart(at, "by replicas")["data"][-1]["x"] == [n]
    drawn.clear()
    at.slider(key="n").set_value(n - 1).run()
    point = chart(at, "by replicas")["data"][-1]
    assert point["x"] == [n - 1]
    assert point["name"] == "now: " + metric(at, f"Slower than 100 ms with {n - 1} replicas, "
                                                 "approximation")
    assert pagetest.marked_figure(drawn) is before
