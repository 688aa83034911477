"""The autoscaling-SLA page, driven headless with Streamlit's AppTest."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests import pagetest
from tests.pagetest import charts, metric, trace

from engine import sla

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "sla" / "page.py")
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
    assert metric(at, "Replicas, approximation") not in ("none", "")


def test_answer_agrees_with_the_engine():
    at = open_page()
    # Defaults: λ = 900/s, μ = 100/s, exponential, d1 = d2 = 0.25 ms, Δ = 0.5 ms, p99 ≤ 100 ms.
    expected = sla.min_backends(900.0, 100.0, 0.1, 99, 0.00025, 0.00025, 0.0005,
                                sla.service_law("exponential", 0.01))
    assert metric(at, "Replicas, approximation") == str(int(expected))
    assert metric(at, "Replicas, M/M/n") == str(int(sla.erlang_c_min_servers(900.0, 100.0, 0.1, 99)))
    assert metric(at, "Replicas, simulation") == "11"        # the engine's docstring: 11
    assert any("meet" in md.value and "n′ = 10" in md.value for md in at.markdown)
    fig = chart(at, "vs replicas")
    assert trace(fig, "simulation, random retry")["x"][0] >= 6


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
    assert any("Unstable" in e.value and "500 requests/s" in e.value for e in at.error)
    assert metric(at, "P(R ≤ RT) at n = 5") == "0 (unstable)"


def test_moving_sliders_changes_the_figures():
    at = open_page()
    before = trace(chart(at, "vs replicas"), "Swayam eq 7 (approximation)")["y"]
    at.slider(key="d1_ms").set_value(2.0).run()
    after = trace(chart(at, "vs replicas"), "Swayam eq 7 (approximation)")["y"]
    assert not at.exception and after != before
    at.segmented_control(key="view").set_value("Trace & cost").run()
    cost = trace(chart(at, "Cost"), "autoscaled")["y"][-1]
    at.slider(key="headroom").set_value(0.5).run()
    assert trace(chart(at, "Cost"), "autoscaled")["y"][-1] > cost


@pytest.mark.parametrize("view", ["Replicas", "Response time", "Trace & cost", "Formulas"])
def test_every_view_renders(view):
    at = open_page({"view": view})
    if view == "Formulas":
        assert len(at.latex) >= 3 and any("Eq 7" in md.value for md in at.markdown)
    else:
        assert charts(at)


def test_share_link_round_trip():
    at = open_page({"lam": "1200", "pct": "95", "rt_ms": "50", "law": "deterministic",
                    "view": "Response time", "n": "14"})
    assert at.session_state["lam"] == 1200.0 and at.session_state["law"] == "deterministic"
    query = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert query["pct"] == "95"
    again = open_page(query)
    assert metric(again, "Replicas, approximation") == metric(at, "Replicas, approximation")
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


def test_pin_baseline_overlays_and_tabulates():
    at = open_page()
    at.button(key="pin_sla").click().run()
    at.number_input(key="lam").set_value(1500.0).run()
    fig = chart(at, "vs replicas")
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
