"""The Arrivals input (ui/arrivals_input.py): share link, presets, trace upload, and the
engine processes its choice stands for."""
from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine import arrivals
from engine.measured import read_trace
from engine.presets import arrival_presets
from tests import pagetest
from tests.pagetest import link, metric
from tests.real_data import real_file
from ui import arrivals_input as arr

CODE = "trace_azure_llm_2023_code.csv"


def widget_app():
    """A page with the Arrivals input alone: the choice's label and process at rate 3."""
    import streamlit as st
    from ui import arrivals_input, share
    share.restore(arrivals_input.FIELDS)
    share.show_warnings()
    with st.sidebar:
        choice = arrivals_input.draw()
    st.markdown(f"label: {choice.label}")
    st.session_state["_choice"] = choice
    share.publish(arrivals_input.FIELDS)


def open_widget(query: dict | None = None) -> AppTest:
    at = AppTest.from_function(widget_app, default_timeout=60)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def label(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("label: "))[7:]


def plain(text: str) -> str:
    """A caption as the user reads it (``share.inert`` escapes punctuation)."""
    return text.replace("\\", "")


def test_share_link_round_trip():
    at = open_widget({"arrivals": "bursty", "arrivals_scv": "9"})
    assert label(at) == "bursty arrivals (SCV 9)"
    again = open_widget(link(at))
    assert label(again) == "bursty arrivals (SCV 9)" and again.session_state["arrivals_scv"] == 9
    at.selectbox(key="arrivals").set_value("mmpp2").run()
    at.selectbox(key="arrivals_trace").set_value("azure_2023_conv").run()
    assert label(at) == "MMPP-2 fitted to the Azure conv trace"
    assert link(at)["arrivals_trace"] == "azure_2023_conv"
    assert label(open_widget(link(at))) == "MMPP-2 fitted to the Azure conv trace"


@pytest.mark.parametrize("query,key", [
    ({"arrivals": "mmpp2", "arrivals_trace": "azure_2099_nope"}, "arrivals_trace"),
    ({"arrivals": "lévy"}, "arrivals"), ({"arrivals": "bursty", "arrivals_scv": "-1"},
                                          "arrivals_scv")])
def test_unknown_link_values_fall_back_with_a_warning(query, key):
    at = open_widget(query)
    assert any(key in w.value for w in at.warning)
    field = {f.key: f for f in arr.FIELDS}[key]
    assert at.session_state[key] == field.default
    if key == "arrivals_trace":          # the first preset, drawn with its chart
        assert label(at) == "MMPP-2 fitted to the Azure code trace"
        assert at.get("plotly_chart")


def test_a_preset_shows_its_rate_over_time_and_scv():
    at = open_widget({"arrivals": "mmpp2"})
    preset = arrival_presets()["azure_2023_code"]
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert fig["data"][0]["y"] == pytest.approx(list(preset.rate_per_s))
    text = plain(at.caption[0].value)
    assert text.startswith(f"SCV {preset.scv:.3g}, peak {preset.peak_to_mean[2]:.2g}× the mean "
                           "over 60 s; 8,819 requests")


def test_an_uploaded_trace_shows_scv_and_chart_and_replays():
    text = real_file(CODE)
    at = open_widget({"arrivals": "replay"})
    assert label(at) == "Poisson arrivals"                     # nothing uploaded yet
    assert any("No trace uploaded yet" in i.value for i in at.info)
    at.file_uploader(key=arr.UPLOAD_KEY).set_value((CODE, text.encode(), "text/csv")).run()
    assert not at.exception and not at.error
    assert label(at) == f"replay of {CODE} (uploaded)"
    times = read_trace(text).arrival_s
    stats = arrivals.describe(times, [1.0, 10.0, 60.0, 300.0])
    assert plain(at.caption[0].value).startswith(
        f"SCV {stats.scv:.3g}, peak {stats.peak_to_mean[2]:.2g}× the mean over 60 s")
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    rate = np.array(fig["data"][0]["y"])
    assert rate.size <= arr.BINS and rate.mean() == pytest.approx(stats.mean_rate, rel=0.02)
    choice = at.session_state["_choice"]
    replay = choice.process(5.0)                        # the trace, time-scaled to rate 5
    assert replay.rate == pytest.approx(5.0, rel=1e-12)
    np.testing.assert_allclose(replay.arrival_times, times * stats.mean_rate / 5.0)


BAD = {"wrong columns": b"size,speed\n1,100\n2,200\n", "one request": b"timestamp_s\n1.0\n",
       "binary": bytes(range(256)), "JSON array": b'[{"timestamp": 1}]'}


def test_bad_files_keep_the_last_trace():
    good = real_file(CODE).encode()
    at = open_widget({"arrivals": "replay"})
    at.file_uploader(key=arr.UPLOAD_KEY).set_value(("code.csv", good, "text/csv")).run()
    caption = at.caption[0].value
    for name, data in BAD.items():
        at.file_uploader(key=arr.UPLOAD_KEY).set_value((f"{name}.csv", data, "text/csv")).run()
        assert not at.exception, name
        assert any("Trace not used" in e.value for e in at.error), name
        assert any("Still using the last valid trace: code.csv (uploaded)"
                   in i.value.replace("\\", "") for i in at.info), name
        assert label(at) == "replay of code.csv (uploaded)", name
        assert at.caption[0].value == caption, name


def test_the_choice_stands_for_the_engine_processes():
    preset = arr.preset_trace("azure_2023_conv")
    base = arrival_presets()["azure_2023_conv"].mmpp2()
    fitted = arr.fitted(preset)
    scaled = fitted.process(40.0)
    factor = 40.0 / base.rate
    assert (scaled.rate_1, scaled.rate_2, scaled.switch_12, scaled.switch_21) == pytest.approx(
        (base.rate_1 * factor, base.rate_2 * factor, base.switch_12 * factor,
         base.switch_21 * factor), rel=1e-12)
    assert scaled.rate == pytest.approx(40.0, rel=1e-12)
    assert scaled.scv == pytest.approx(base.scv, rel=1e-9) == fitted.scv   # time-scaling keeps it
    assert scaled.label == "MMPP-2 fitted to the Azure conv trace" == fitted.label
    assert arr.bursty(4).process(2.0) == arrivals.Renewal(2.0, 4.0)
    assert arr.POISSON.process(2.0) == arrivals.Poisson(2.0) and arr.POISSON.scv == 1.0
    assert hash(fitted) == hash(arr.fitted(arr.preset_trace("azure_2023_conv")))
    with pytest.raises(ValueError, match="upload"):
        arr.replayed(preset)                           # a summary has no timestamps


# Lean inputs per page (the simulation off where it is optional): the round trip only.
PAGE_QUERIES = {"batching": {}, "token_limit": {"simulate": "false"},
                "llm_batching": {}, "llm_serving": {}, "pipeline": {},
                "sla": {"simulate": "false"},
                "planner": {"plan_b_max": "4,8", "plan_r_min": "7", "plan_r_max": "9",
                                     "plan_confirm": "1"}}


@pytest.mark.parametrize("page", PAGE_QUERIES)
def test_every_page_has_the_input_and_names_its_arrivals(page):
    """Each page's sidebar holds the Arrivals input; its choice round-trips in the share
    link, and the page's answer names the arrival model it assumes."""
    at = pagetest.open_page(pagetest.script(page),
                            {"arrivals": "bursty", "arrivals_scv": "9"} | PAGE_QUERIES[page])
    assert not at.exception
    box = at.sidebar.selectbox(key="arrivals")
    assert box.label == "Arrivals" and box.value == "bursty"
    params = link(at)
    assert params["arrivals"] == "bursty" and float(params["arrivals_scv"]) == 9.0
    again = pagetest.open_page(pagetest.script(page), params)
    assert again.session_state["arrivals"] == "bursty"
    assert again.session_state["arrivals_scv"] == 9.0
    assert metric(again, "Arrivals") == metric(at, "Arrivals") == "bursty arrivals (SCV 9)"
