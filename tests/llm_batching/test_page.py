"""The LLM batching-strategy page, driven headless with Streamlit's AppTest."""
import re
from pathlib import Path

import numpy as np
import pytest

from tests import pagetest
from tests.pagetest import charts, metric, trace

from engine import llm_batching as lb
from engine.core import token_laws as tl

PAGE = str(Path(__file__).resolve().parents[2] / pagetest.script("llm_batching"))
K = (0.06, 0.126, 0.0003, 0.02269)          # presets/llm_batching/a100_llama2_7b.toml


def open_page(query: dict | None = None):
    return pagetest.open_page(PAGE, query)


@pytest.mark.parametrize("law", ["lognormal", "uniform", "truncnorm", "empirical"])
def test_page_runs_for_every_law(law):
    at = open_page({"law": law})
    assert charts(at), "the latency chart is drawn"
    if law == "empirical":                                   # no counts yet: says so
        assert any("No token counts" in i.value for i in at.info)


def test_fixed_curve_on_the_chart_is_the_engine_curve():
    at = open_page()
    fig = charts(at)[0]
    fixed = trace(fig, "fixed b = 16, exact")
    lam = np.asarray(fixed["x"][:36:5])                          # below μ[16] = 0.141/s
    expected = lb.fixed_batch_sojourn(lam, 16, tl.lognormal(7.0, 0.7), K)
    assert fixed["y"][:36:5] == pytest.approx(list(expected), rel=1e-9)
    assert fixed["y"][-1] is None                                 # unstable: a gap
    assert metric(at, "Batch size with the most throughput") == "272"              # engine docstring


def test_moving_sliders_changes_the_figure_and_the_answers():
    at = open_page()
    before = trace(charts(at)[0], "dynamic, cap")["y"]
    at.slider(key="log_sd").set_value(0.5).run()
    assert not at.exception
    assert trace(charts(at)[0], "dynamic, cap")["y"] != before
    b_star = metric(at, "Best fixed batch size")
    at.slider(key="lam").set_value(0.2).run()
    assert not at.exception and metric(at, "Best fixed batch size") != b_star


@pytest.mark.parametrize("query", [
    {"lam_max": "20", "lam": "20", "law": "uniform"}, {"lam_max": "0.01", "lam": "0.001"},
    {"b": "1", "b_max": "1"}, {"b": "1024", "b_max": "1024", "kv": "100"},
    {"log_mean": "12", "log_sd": "3"}, {"log_mean": "0", "log_sd": "0.05"}, {"k3": "0", "k2": "0"},
    {"ln_mu": "12", "ln_sd": "3"}])
def test_extremes_run_without_exception(query):
    at = open_page(query)
    assert charts(at)


def test_unstable_load_names_the_capacity():
    at = open_page({"lam": "0.2"})                 # beyond fixed b = 16 (0.141/s) and dynamic
    err = next(e.value for e in at.error if e.value.startswith("At 0.2 "))
    assert "fixed b (capacity 0.1414" in err and "elastic" not in err


def test_heavy_tail_uncapped_dynamic_is_reported_and_drawn_to_its_limit():
    """Changed on purpose (issue 14): the curve is drawn up to 80 % of its capacity
    (0.0019/s, below the first comparison load) instead of not at all."""
    at = open_page({"log_sd": "1.5"})
    assert any("cannot keep up at any load shown" in w.value for w in at.warning)
    cap = lb.stability_limit("dynamic", tl.lognormal(7.0, 1.5), K)
    dyn = trace(charts(at)[0], "dynamic, no cap")
    assert dyn["x"] and max(dyn["x"]) <= 0.8 * cap * (1 + 1e-9)


def test_simulation_points_with_ci_and_p99_chart():
    at = open_page({"simulate": "true", "n_jobs": "1000"})
    figs = charts(at)
    assert len(figs) == 2
    cont = trace(figs[0], "continuous (vLLM scheduler, whole prompts), simulated")
    assert len(cont["x"]) == 8 and len(cont["error_y"]["array"]) == 8
    assert trace(figs[1], "elastic, simulated")["y"]


@pytest.mark.parametrize("view", ["Latency", "Formulas"])
def test_continuous_batching_says_which_scheduler_it_runs(view):
    """Continuous batching runs on the LLM serving simulator: its label, the Latency view's
    note and the Formulas view name the scheduler and point to the LLM serving page (a
    link in the app; run on its own, the page names it)."""
    at = open_page({"view": view})
    texts = [c.value for c in at.caption] + [m.value for m in at.markdown]
    assert any("LLM serving page" in t for t in texts)
    if view == "Latency":
        note = next(c.value for c in at.caption if c.value.startswith("How each curve"))
        assert "runs on the LLM serving simulator: vLLM's scheduler without chunked prefill" \
            in note and "no token budget" in note
        names = [t["name"] for t in charts(at)[0]["data"] if t["name"]]
        assert any(n.startswith("continuous (vLLM scheduler, whole prompts)") for n in names)
        table = pagetest.results(at)
        assert "continuous (vLLM scheduler, whole prompts): capacity" in table
    else:
        assert any("run on the LLM serving simulator (vLLM's scheduler without chunked "
                   "prefill: whole prompts, no token budget)" in t for t in texts)


@pytest.mark.parametrize("view", ["Batch size", "Best strategy", "Formulas"])
def test_every_view_renders(view):
    at = open_page({"view": view})
    if view == "Formulas":
        assert at.latex and any("Eq 25 is not the mean wait" in m.value for m in at.markdown)
    else:
        assert charts(at)


def test_share_link_round_trip():
    at = open_page({"law": "uniform", "uni_high": "2000", "lam": "0.12", "b": "8",
                    "b_max": "32", "view": "Best strategy"})
    assert at.session_state["uni_high"] == 2000.0 and at.session_state["b"] == 8
    params = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert params["law"] == "uniform" and params["b_max"] == "32"
    again = open_page(params)
    assert metric(again, "Best fixed batch size") == metric(at, "Best fixed batch size")
    assert again.session_state["view"] == "Best strategy"


@pytest.mark.parametrize("query,key", [({"lam": "banana"}, "lam"), ({"log_sd": "7"}, "log_sd"),
                                       ({"b": "2.5"}, "b"), ({"law": "<script>"}, "law"),
                                       ({"simulate": "maybe"}, "simulate")])
def test_malformed_link_parameter_falls_back_with_a_warning(query, key):
    at = open_page(query)
    assert any(key in w.value for w in at.warning)
    defaults = {"lam": 0.05, "log_sd": 0.7, "b": 16, "law": "lognormal", "simulate": False}
    assert at.session_state[key] == defaults[key]


def test_pasted_token_counts_are_used_and_bad_ones_rejected():
    at = open_page({"law": "empirical"})
    at.text_area(key="tokens_paste").input("tokens\n100\n200\n300\n400\n").run()
    assert not at.error and metric(at, "Mean output length") == "250 tokens"
    bad = "tokens\n100\n-5\n"
    at.text_area(key="tokens_paste").input(bad).run()
    assert not at.exception
    assert any("Token counts not used" in e.value for e in at.error)
    assert metric(at, "Mean output length") == "250 tokens"          # last valid law kept
    assert at.text_area(key="tokens_paste").value == bad            # the user's text kept


def test_pin_baseline_overlays_and_tabulates():
    at = open_page()
    at.button(key="pin_llm").click().run()
    at.number_input(key="b").set_value(8).run()
    assert trace(charts(at)[0], "baseline (pinned)")
    assert len(at.dataframe) == 1                 # the difference table (capacities are in the results table)


@pytest.mark.parametrize("old,new", [
    ({"ln_mu": "6.5", "ln_sd": "0.9"}, {"law": "lognormal", "log_mean": "6.5", "log_sd": "0.9"}),
    ({"law": "uniform", "u_lo": "100", "u_hi": "3000"},
     {"law": "uniform", "uni_low": "100", "uni_high": "3000"})])
def test_link_with_the_old_token_law_keys_opens_the_same_law(old, new):
    """Links made before the shared token-law input (ln_mu, ln_sd, u_lo, u_hi) still
    open the same scenario: the same law, figures and answers as the new keys."""
    before, after = open_page(old), open_page(new)
    for key in ("law", "log_mean", "log_sd", "uni_low", "uni_high"):
        assert before.session_state[key] == after.session_state[key], key
    assert before.session_state[list(new)[-1]] == float(new[list(new)[-1]])
    assert not [w for w in before.warning if w.value.startswith("Link parameter")]
    assert metric(before, "Mean output length") == metric(after, "Mean output length")
    assert charts(before)[0]["data"] == charts(after)[0]["data"]
    published = {k: v[0] if isinstance(v, list) else v for k, v in before.query_params.items()}
    assert not set(published) & {"ln_mu", "ln_sd", "u_lo", "u_hi"}    # re-published, new keys
    for key, value in new.items():
        assert float(published[key]) == float(value) if key != "law" else published[key] == value


def _caption_verdicts(at) -> list:
    """The caption's runs of loads as (first load, last load, answer)."""
    text = next(c.value for c in at.caption if c.value.startswith("Fastest strategy by load"))
    body = text.split(": ", 1)[1].split(". ")[0].rstrip(".")
    runs = []
    for part in body.split("; "):
        found = re.fullmatch(r"(.+) from (\S+) to (\S+)", part) or \
            re.fullmatch(r"(.+) at (\S+)", part)
        said, lo, hi = found.group(1), float(found.group(2)), float(found.groups()[-1])
        runs.append((lo, hi, said))
    return runs


def test_the_first_screen_is_plain():
    """Issue 24: the page opened on a nine-line caption repeating "not computed" eight
    times, and on the paper's numbers with no word on where today's servers differ."""
    at = open_page()
    intro = at.caption[0].value
    assert "The defaults are the paper's world (Yang et al." in intro
    assert "today's servers (vLLM, SGLang, TensorRT-LLM) run continuous batching" in intro
    verdict = next(c.value for c in at.caption if c.value.startswith("Fastest strategy"))
    assert verdict.startswith("Fastest strategy by load (requests/s): capped dynamic (b_max) "
                              "from 0.03 to 0.135; not ranked from 0.172 to 0.3.")
    assert "not computed" not in verdict and len(verdict) < 400
    assert verdict.endswith("turn on the simulation in the sidebar to rank them.")


@pytest.mark.parametrize("query,loads", [({}, (0.03, 0.1725, 0.255)),
                                         ({"lam_max": "20"}, (2.0, 4.0)),
                                         ({"lam_max": "1"}, (0.2, 0.575))])
def test_caption_table_chart_and_best_strategy_agree(query, loads):
    """Issue 14: one source of truth for which strategy is stable where.  At each
    comparison load the caption's answer, the best-strategy chart and the results
    table (the strategies that keep up there) agree; "none stable" only where the
    table lists none that keeps up; every strategy drawn or its reason in the legend."""
    at = open_page({**query, "view": "Best strategy"})
    verdicts = _caption_verdicts(at)
    best = {x: t["name"] for t in charts(at)[0]["data"] for x in t["x"]}
    latency = open_page(query)
    names = " | ".join(t["name"] for t in charts(latency)[0]["data"] if t["name"])
    for label in ("fixed b", "dynamic, no cap", "dynamic, cap", "elastic", "continuous"):
        assert label in names
    for lam in loads:
        at.slider(key="lam").set_value(lam).run()
        keeps = [k.split(":")[0] for k, v in pagetest.results(at).items()
                 if v.endswith("keeps up here")]
        verdict = next(v for lo, hi, v in verdicts
                       if lo * (1 - 5e-3) <= lam <= hi * (1 + 5e-3))
        category = next(v for x, v in best.items() if x == pytest.approx(lam))
        if keeps:
            assert verdict != "none keeps up" and category != "none stable"
            if category != "not computed":
                assert verdict == category and category in keeps
            else:
                assert verdict == "not ranked"
        else:
            assert verdict == "none keeps up" and category == "none stable"


def test_moving_the_load_moves_the_marker_on_the_memoised_latency_chart(monkeypatch):
    """Issue 14: the current load is marked on the mean-latency chart, on the exact fixed-b
    curve at the table's value, and follows the slider; the figure is memoised on the
    scenario (the same object after the move: only the point is new)."""
    drawn = pagetest.record_marked(monkeypatch)
    at = open_page()
    before = pagetest.marked_figure(drawn)
    assert charts(at)[0]["data"][-1]["x"] == [pytest.approx(at.session_state["lam"])]
    drawn.clear()
    at.slider(key="lam").set_value(0.03).run()
    point = charts(at)[0]["data"][-1]
    assert point["x"] == [pytest.approx(0.03)]
    assert point["name"] == "now: " + metric(at, "Mean latency, fixed b")
    assert pagetest.marked_figure(drawn) is before
