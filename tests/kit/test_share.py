"""Share-link fields: bounds from the engine's domains, and older URL keys (aliases)."""
import math

import pytest
from streamlit.testing.v1 import AppTest

from engine.core.domains import ALPHA, B_MAX, THETA
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
    assert at.number_input(key="log_mean").min == 2.0 and at.slider(key="log_sd").max == 2.0
    assert "ln_mu" not in at.query_params          # the link is rewritten with the new keys


def test_an_out_of_range_old_key_is_warned_like_a_new_one():
    at = AppTest.from_function(_page)
    at.query_params["ln_mu"] = "99"
    at.run()
    assert not at.exception and at.number_input(key="log_mean").value == 7.0
    assert any("above the maximum" in w.value for w in at.warning)
