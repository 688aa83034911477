"""The LLM token-limit page, driven headless with Streamlit's AppTest."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests import pagetest
from tests.pagetest import charts, metric, trace

from engine import token_limit
from engine.core import token_laws
from engine.presets import token_latency_profiles
from app_pages.token_limit import answer

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "token_limit" / "page.py")
FAST = {"simulate": "false"}


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query)


def test_default_page_answers_with_the_engine_numbers():
    at = open_page()
    assert not at.error
    figs = charts(at)
    assert len(figs) == 3                                   # Fig 4a, 4b, 4c
    fit = token_latency_profiles()["a100_llama2_7b_table1"].fit()
    curve = trace(figs[0], "E[W], M/G/1 (eqs 1-5)")
    expected = token_limit.mean_wait(1 / 40, fit.a_s_per_token, fit.c_s,
                                     token_laws.lognormal(7.0, 0.7), curve["x"][::8])
    assert curve["y"][::8] == pytest.approx(list(expected), rel=1e-9)
    assert trace(figs[0], "simulation ±95% CI")["y"]        # simulation points drawn
    assert metric(at, "Mean wait (no one gives up)") == "26.2 s"          # §V-B with Table I's fit
    assert metric(at, "Answers clipped") == "29.5 %"         # 1 − 70.53 %
    assert any("Limit 1,600 →" in m.value for m in at.markdown)


@pytest.mark.parametrize("query", [
    {"preset": "typed", "a_s": "0.02", "c_s": "0.8", "law": "uniform"},
    {"input_term": "true", "prompt_tokens": "512", "law": "truncnorm"},
    {"log_mean": "2", "log_sd": "0.05", "patience_s": "1", "limit": "1"},
    {"log_mean": "10", "log_sd": "2", "patience_s": "600", "n_lo": "1", "n_hi": "100000"},
    {"load_mode": "rho", "rho": "0.01", "theta_v1": "0.5", "theta_v2": "1", "loss_cost": "100"},
], ids=["typed-uniform", "input-term-truncnorm", "low-extremes", "high-extremes", "rho-low"])
def test_presets_laws_and_extremes_run(query):
    at = open_page(query | FAST)
    assert charts(at)
    assert not [e for e in at.error if "Unstable" not in e.value]


def test_unstable_limit_is_reported_with_the_capacity():
    at = open_page({"lam_per_s": "0.04", "limit": "3000"} | FAST)
    err = next(e.value for e in at.error if e.value.startswith("Unstable"))
    assert "capacity" in err and "largest stable limit is 1,529 tokens" in err
    assert metric(at, "Mean wait (no one gives up)") == "∞ (unstable)"
    shapes = charts(at)[0]["layout"].get("shapes", [])
    assert any(s["type"] == "rect" and s["x0"] == 1530 for s in shapes)   # shaded from ρ = 1


def test_moving_sliders_changes_the_figures():
    at = open_page(FAST)
    before = charts(at)
    at.slider(key="patience_s").set_value(30.0).run()
    after = charts(at)
    assert trace(after[2], "exact M/G/1+D")["y"] != trace(before[2], "exact M/G/1+D")["y"]
    assert trace(after[0], "E[W], M/G/1 (eqs 1-5)")["y"] == \
        trace(before[0], "E[W], M/G/1 (eqs 1-5)")["y"]      # patience does not change Fig 4a
    at.slider(key="log_sd").set_value(0.6).run()
    assert trace(charts(at)[0], "E[W], M/G/1 (eqs 1-5)")["y"] != \
        trace(after[0], "E[W], M/G/1 (eqs 1-5)")["y"]
    assert not at.exception


def test_every_view_renders_and_the_paper_table_is_shown():
    at = open_page(FAST)
    for view, n_charts in [("Optimal limit", 1), ("Token law", 2), ("Latency fit", 2),
                           ("Paper vs model", 0), ("Formulas", 0)]:
        at.segmented_control(key="view").set_value(view).run()
        assert not at.exception, view
        assert len(charts(at)) == n_charts, view
    at.segmented_control(key="view").set_value("Paper vs model").run()
    table = at.dataframe[-1].value
    assert "optimal n_max, V1 (λ = 1/40, θ = 119/120)" in list(table["quantity"])
    at.segmented_control(key="view").set_value("Optimal limit").run()
    stars = [t for t in charts(at)[0]["data"] if t["name"].startswith("V1 optimum")]
    assert stars and stars[0]["x"] == [1252.0]              # every integer searched (§V-B: 1600)


def test_share_link_round_trip():
    query = {"law": "uniform", "uni_high": "2000", "lam_per_s": "0.05", "limit": "700",
             "patience_s": "45", "method": "interpolation", "view": "Token law"} | FAST
    at = open_page(query)
    assert at.session_state["uni_high"] == 2000 and at.session_state["limit"] == 700
    params = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert params["method"] == "interpolation"
    again = open_page(params)
    assert [m.value for m in again.metric] == [m.value for m in at.metric]
    assert again.session_state["view"] == "Token law"


def test_malformed_link_parameters_fall_back_with_warnings():
    at = open_page({"lam_per_s": "banana", "limit": "2.5", "view": "<script>",
                    "log_sd": "-1"} | FAST)
    warned = " ".join(w.value for w in at.warning)
    for key in ("lam_per_s", "limit", "view", "log_sd"):
        assert key in warned
    assert at.session_state["lam_per_s"] == 0.025 and at.session_state["limit"] == 1600
    assert at.session_state["view"] == "Delay & loss"


GOOD = "output_tokens\n" + "\n".join(str(x) for x in (120, 300, 800, 1500, 2600, 5000) * 5)
BAD_TABLES = {
    "wrong columns": "size,speed\n1,100\n2,200\n",
    "NaN": "output_tokens\n120\nnan\n300\n",
    "negative": "output_tokens\n120\n-5\n300\n",
    "fraction": "output_tokens\n120\n2.5\n",
    "one row": "output_tokens\n120\n",
}


def test_malformed_upload_shows_error_and_keeps_previous_sample():
    at = open_page({"law": "empirical"} | FAST)
    assert any("No token counts yet" in i.value for i in at.info)
    at.text_area(key="tokens_paste").input(GOOD).run()
    assert not at.error
    good = metric(at, "Mean wait (no one gives up)")
    assert metric(at, "Answers clipped") == "33.3 %"        # 2600 and 5000 exceed 1600
    for name, text in BAD_TABLES.items():
        at.text_area(key="tokens_paste").input(text).run()
        assert not at.exception, name
        assert any("Token counts not used" in e.value for e in at.error), name
        assert metric(at, "Mean wait (no one gives up)") == good, name       # last valid sample kept
        assert at.text_area(key="tokens_paste").value == text    # the user's text kept


def test_pin_baseline_overlays_and_tabulates():
    at = open_page(FAST)
    at.button(key="pin_tokens").click().run()
    at.number_input(key="lam_per_s").set_value(0.03).run()
    assert any(t.get("name") == "baseline (pinned)" for t in charts(at)[0]["data"])
    assert len(at.dataframe) >= 1


def test_paper_scenario_button_sets_section_vb_inputs():
    at = open_page(FAST)
    at.button(key="paper_bd").click().run()
    assert at.session_state["lam_per_s"] == 0.04 and at.session_state["patience_s"] == 60.0
    assert any(e.value.startswith("Unstable") for e in at.error)   # n_max 1600 > 1529 at λ = 1/25
    assert metric(at, "Share of users who give up") == "18.1 %"   # simulated: 18.2 ± 0.4 %


def _page_with_eager_report(page):
    """The page, with the report's deferred download generated at once into session state."""
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    real = DeltaGenerator.download_button

    def eager(self, label, data, *args, **kwargs):
        if callable(data) and kwargs.get("key") == "report":
            st.session_state["_report_html"] = data()
            data = b""
        return real(self, label, data, *args, **kwargs)

    DeltaGenerator.download_button = eager
    try:
        exec(compile(open(page, encoding="utf-8").read(), page, "exec"), {"__name__": "__main__"})
    finally:
        DeltaGenerator.download_button = real


def test_report_holds_every_chart_and_the_paper_comparison():
    at = AppTest.from_function(_page_with_eager_report, args=(PAGE,), default_timeout=120)
    at.query_params["simulate"] = "false"
    at.run()
    assert not at.exception, at.exception
    html = at.session_state["_report_html"]
    # Issue 14: headings are human titles (they were the chart's code names, "mean_wait")
    for name in ("mean_wait", "served_wait", "loss_fraction", "objectives", "token_law",
                 "clipped_share", "latency_fit", "fit_residuals"):
        assert f"<h2>{answer.TITLES[name]}</h2>" in html and f"<h2>{name}</h2>" not in html
    assert "optimal n_max, V1" in html and "Eq 11 prints" in html


def test_report_opens_with_the_answer_rows_and_a_scenario_sentence():
    """The report opens with the page's results (units included) and one sentence; the
    inputs are plain text with units."""
    at = AppTest.from_function(_page_with_eager_report, args=(PAGE,), default_timeout=120)
    at.query_params["simulate"] = "false"
    at.run()
    html = at.session_state["_report_html"]
    opening, rest = html.split("<h2>Inputs</h2>", 1)
    assert "<th>Mean wait (no one gives up)</th><td>26.2 s</td>" in opening
    assert "<th>Answers clipped</th><td>29.5 %</td>" in opening
    assert "capped at 1,600 tokens; users give up after waiting 60 s." in opening
    inputs_table = rest.split("</table>", 1)[0]
    assert "<td>1,600 tokens</td>" in inputs_table and "<td>60 s</td>" in inputs_table
    assert "<td>0.023" in inputs_table and " s</td>" in inputs_table       # a in s per token


def test_first_screen_speaks_plain_words():
    """Issue 14: results labels without paper notation; the baseline is compared on
    metrics whose names carry units."""
    at = open_page(FAST)
    labels = " ".join(pagetest.results(at))
    for notation in ("E[W", "π(", "ρ"):
        assert notation not in labels
    assert metric(at, "Mean wait of users who stay").endswith(" s")
    at.button(key="pin_tokens").click().run()
    table = at.dataframe[0].value
    for row, (name, unit) in zip(table.itertuples(), (
            ("Mean wait, no one gives up", "s"), ("Answers clipped", "%"),
            ("Users who give up", "%"), ("Mean wait of users who stay", "s"))):
        assert row.metric.startswith(name)                 # the kit may move the unit
        assert f"({unit})" in row.metric or str(row.current).endswith(" " + unit), row


def test_load_given_as_rho_uses_the_exact_mean_token_count():
    at = open_page({"load_mode": "rho", "rho": "0.82"} | FAST)
    assert not at.exception
    fit = token_latency_profiles()["a100_llama2_7b_table1"].fit()
    law = token_laws.lognormal(7.0, 0.7)
    lam = token_limit.rate_at_load(0.82, fit.a_s_per_token, fit.c_s,
                                   token_limit.mean_requested_tokens(law))
    assert any(c.value.startswith(f"λ = {lam:.4g} requests/s") for c in at.caption)


def test_uploads_of_the_same_counts_under_two_names_are_two_scenarios():
    at = open_page({"law": "empirical"} | FAST)
    for name in ("first.csv", "second.csv"):
        at.file_uploader(key="tokens_upload").set_value((name, GOOD.encode(), "text/csv"))
        at.run()
        assert not at.exception
        assert any(f"(upload {name})" in c.value for c in at.caption), name


def test_moving_the_limit_moves_the_marker_on_the_memoised_wait_chart(monkeypatch):
    """Issue 14: the chosen limit is marked on the mean-wait chart at the table's mean wait
    and follows the slider; the figure is memoised on the scenario (the same object after
    the move: only the point is new)."""
    drawn = pagetest.record_marked(monkeypatch)
    at = open_page(FAST)
    before = pagetest.marked_figure(drawn)
    assert charts(at)[0]["data"][-1]["x"] == [at.session_state["limit"]]
    drawn.clear()
    at.slider(key="limit").set_value(1000).run()
    point = charts(at)[0]["data"][-1]
    assert point["x"] == [1000]
    assert point["name"] == "now: " + metric(at, "Mean wait (no one gives up)")
    assert pagetest.marked_figure(drawn) is before
    assert len(charts(at)) == 3                      # the other two charts are still drawn
