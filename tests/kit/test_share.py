"""Share-link fields: bounds from the engine's domains, and older URL keys (aliases)."""
import importlib
import math
from urllib.parse import parse_qsl

import pytest
from streamlit.testing.v1 import AppTest

from engine.core.domains import ALPHA, B_MAX, THETA
from tests import pagetest
from ui import share


def test_bounds_default_to_the_domain_and_must_lie_inside_it():
    f = share.Field("theta_v2", 0.95, float, domain=THETA)
    assert (f.low, f.high) == (THETA.low, THETA.high)
    assert share.Field("b_max", 64, int, high=1024, domain=B_MAX).low == 1.0
    assert share.Field("b_max", 64, int, high=1024, domain=B_MAX).high == 1024
    with pytest.raises(ValueError, match="theta_v2"):
        share.Field("theta_v2", 0.95, float, high=2.0, domain=THETA)
    with pytest.raises(ValueError, match="alpha_ms"):      # an open bound is no widget bound
        share.Field("alpha_ms", 0.1, float, domain=ALPHA)
    assert math.isclose(share.Field("alpha_ms", 0.1, float, 1e-4, 10.0, domain=ALPHA).low, 1e-4)


def _page():
    from ui import share
    fields = [share.Field("log_mean", 7.0, float, 2.0, 10.0, aliases=("ln_mu",)),
              share.Field("log_sd", 0.7, float, 0.05, 2.0, aliases=("ln_sd",))]
    share.restore(fields)
    share.show_warnings()
    share.number_input(fields[0], "log mean")
    share.slider(fields[1], "log sd")
    share.publish(fields)


@pytest.mark.parametrize("query, expected", [
    ({"ln_mu": "6.5", "ln_sd": "1.1"}, (6.5, 1.1)),           # an old link
    ({"log_mean": "6.5", "ln_mu": "3.0"}, (6.5, 0.7)),        # the new key wins
    ({}, (7.0, 0.7)),
])
def test_an_old_url_key_opens_the_same_value(query, expected):
    at = AppTest.from_function(_page)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    assert (at.number_input(key="log_mean").value, at.slider(key="log_sd").value) == expected
    assert "from 2 to 10" in at.number_input(key="log_mean").help      # bounds checked here
    assert at.slider(key="log_sd").max == 2.0
    assert "ln_mu" not in at.query_params          # the link is rewritten with the new keys


def test_an_out_of_range_old_key_is_warned_like_a_new_one():
    at = AppTest.from_function(_page)
    at.query_params["ln_mu"] = "99"
    at.run()
    assert not at.exception and at.number_input(key="log_mean").value == 7.0
    assert any("above the maximum" in w.value for w in at.warning)


# A value survives a change of its widget's range (Streamlit gives a widget whose
# min/max change a new identity, and a new widget starts at its minimum).

def _ranged_page():
    import streamlit as st
    from ui import share
    top = share.Field("top", 24, int, 2, 100)
    n = share.Field("n", 11, int, 1, 100)
    load = share.Field("load", 0.05, float, 0.001, 20.0)
    share.restore([top, n, load])
    share.number_input(top, "top")
    share.slider(n, "Replicas n", max_value=int(st.session_state["top"]))

    @st.fragment
    def what_if():                      # as the pages draw their what-if sliders
        share.slider(load, "Load λ", max_value=st.session_state["top"] / 100, step=0.001)
    what_if()
    share.publish([top, n, load])


def _moved(at) -> list[str]:
    return [c.value.replace("\\", "") for c in at.caption if " was " in c.value]


def test_a_value_survives_a_wider_or_narrower_range_in_range_without_a_caption():
    at = AppTest.from_function(_ranged_page).run()
    at.slider(key="n").set_value(20).run()
    at.slider(key="load").set_value(0.2).run()
    for top in (30, 21):                           # new max, value still inside
        at.number_input(key="top").set_value(top).run()
        assert not at.exception
        assert (at.slider(key="n").value, at.slider(key="n").max) == (20, top)
        assert at.slider(key="load").value == 0.2 and not _moved(at)
    assert at.query_params["n"] == "20"


def test_a_value_outside_the_new_range_is_clamped_and_said_so():
    at = AppTest.from_function(_ranged_page).run()
    at.slider(key="n").set_value(20).run()
    at.slider(key="load").set_value(0.2).run()
    at.number_input(key="top").set_value(10).run()
    assert not at.exception
    assert at.slider(key="n").value == 10 and at.slider(key="load").value == 0.1
    assert _moved(at) == ["Replicas n was 20, outside the new range 1–10: set to 10.",
                          "Load λ was 0.2, outside the new range 0.001–0.1: set to 0.1."]
    at.slider(key="n").set_value(7).run()           # the next move: no stale caption
    assert at.slider(key="n").value == 7 and not _moved(at)


def test_a_link_value_outside_a_page_made_range_is_clamped_and_said_so():
    at = AppTest.from_function(_ranged_page)
    at.query_params["top"], at.query_params["n"] = "12", "30"
    at.run()
    assert not at.exception and at.slider(key="n").value == 12
    assert _moved(at) == ["Replicas n was 30, outside the range 1–12: set to 12."]


# A number typed outside its input's range (issue 24): a browser given min and max keeps
# showing such a value and never sends it, so the answer stays at the old value under it.
# The kit gives the browser no bounds; the value arrives, is clamped, and a caption says so.

def test_a_typed_number_outside_the_range_is_clamped_and_said_so():
    at = AppTest.from_function(_page).run()
    box = at.number_input(key="log_mean")
    assert not box.proto.has_min and not box.proto.has_max, "the browser would refuse it"
    assert box.help == "Accepted values: from 2 to 10."
    for typed, kept, said in ((1e9, 10.0, "log mean was 1e9, outside the range 2–10: set to 10."),
                              (-5.0, 2.0, "log mean was -5, outside the range 2–10: set to 2.")):
        at.number_input(key="log_mean").set_value(typed).run()
        assert not at.exception
        assert at.number_input(key="log_mean").value == kept
        assert float(at.query_params["log_mean"]) == kept          # the link holds it too
        assert _moved(at) == [said]
    at.number_input(key="log_mean").set_value(3.0).run()         # in range: no caption
    assert at.number_input(key="log_mean").value == 3.0 and not _moved(at)


@pytest.mark.parametrize("page", [p for p in pagetest.SCRIPTS if p != "planner"])
def test_every_number_input_of_a_page_goes_through_the_kit(page):
    """Each number input drawn at the page's defaults: no bounds for the browser to refuse
    a typed value with, its range in its help (the kit checks it, as tested above)."""
    at = pagetest.open_page(pagetest.script(page), {"simulate": "false"})
    boxes = list(at.number_input)
    assert boxes
    for box in boxes:
        assert not box.proto.has_min and not box.proto.has_max, box.label
        assert "Accepted values: " in box.help, box.label
        whole = isinstance(box.value, int)            # a whole number stays one in the browser
        assert (box.proto.data_type == box.proto.DataType.INT) == whole, box.label


# The three what-if sliders of issue 14, on their pages.

def test_autoscaling_replicas_survive_a_change_of_arrival_rate():
    at = pagetest.open_page(pagetest.script("sla"), {"simulate": "false"})
    at.slider(key="n").set_value(20).run()
    for lam in (1000.0, 1100.0, 900.0):            # each moves the slider's range
        at.number_input(key="lam").set_value(lam).run()
        assert not at.exception and at.slider(key="n").value == 20, lam


def test_llm_batching_load_survives_a_longer_lambda_axis():
    at = pagetest.open_page(pagetest.script("llm_batching"))
    at.slider(key="lam").set_value(0.2).run()
    at.number_input(key="lam_max").set_value(0.5).run()
    assert not at.exception
    assert (at.slider(key="lam").value, at.slider(key="lam").max) == (0.2, 0.5)


def test_token_limit_survives_a_change_of_the_n_max_range():
    at = pagetest.open_page(pagetest.script("token_limit"))
    at.slider(key="limit").set_value(2000).run()
    at.number_input(key="n_hi").set_value(5000).run()
    assert not at.exception and at.slider(key="limit").value == 2000


# The home page's examples open their pages without a link warning.

def test_every_home_example_is_a_valid_link_to_its_page():
    at = AppTest.from_file(str(pagetest.ROOT / "app.py"), default_timeout=60).run()
    by_url = {"gpu-batching": "batching", "llm-token-limits": "token_limit",
              "llm-batching": "llm_batching", "llm-serving": "llm_serving",
              "cpu-gpu-pipeline": "pipeline",
              "autoscaling-sla": "sla", "capacity-planner": "planner"}
    examples = [e.proto for e in at.get("page_link") if e.proto.query_string]
    assert sorted(p.page.strip("/") for p in examples) == sorted(by_url)
    for link in examples:
        fields = importlib.import_module(f"app_pages.{by_url[link.page.strip('/')]}.inputs").FIELDS
        by_key = {f.key: f for f in fields}
        for key, raw in parse_qsl(link.query_string):
            by_key[key].parse(raw)                 # KeyError or ValueError: a broken example


def test_a_link_made_before_a_choice_was_reworded_still_opens_it():
    """The GPU page's view "Utilisation & energy" is now spelled "Utilization & energy":
    a link with the old wording opens the view, without a warning."""
    at = pagetest.open_page(pagetest.script("batching"), {"view": "Utilisation & energy"})
    assert at.session_state["view"] == "Utilization & energy"
    assert not [w for w in at.warning if "view" in w.value]
