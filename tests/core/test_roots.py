"""engine.core.roots against independent root finders (scipy's brentq) and closed forms."""
import numpy as np
import pytest
from scipy import optimize, stats

from engine.core import roots


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 0.99, 0.999999])
def test_smallest_reaching_inverts_a_cdf_like_brentq(p):
    """A lognormal and a gamma CDF inverted cell by cell, against brentq on each."""
    laws = [stats.lognorm(s=1.2, scale=0.3), stats.gamma(a=3.0, scale=2e-3),
            stats.expon(scale=50.0)]
    found = roots.smallest_reaching(lambda t: np.array([law.cdf(x) for law, x in zip(laws, t)]),
                                    p, (3,))
    for law, x in zip(laws, found):
        if p == 0.0:
            assert x <= 1e-12
            continue
        exact = optimize.brentq(lambda t: law.cdf(t) - p, 0.0, 1e6, xtol=1e-300, rtol=1e-14)
        assert x == pytest.approx(exact, rel=2e-9)
        assert law.cdf(x) >= p


def test_smallest_reaching_is_inf_where_the_target_is_never_reached():
    f = lambda t: np.minimum(t, 1.0) * np.array([1.0, 0.5])     # noqa: E731
    found = roots.smallest_reaching(f, 0.75, (2,))
    assert found[0] == pytest.approx(0.75, rel=1e-9) and found[1] == np.inf


def test_smallest_integer_is_the_first_whole_number_meeting_a_condition():
    """n ≥ x (ceil), and the fewest M/M/1-style servers with n·μ − λ ≥ 1, against a scan."""
    x = np.array([0.0, 0.5, 1.0, 7.2, 1e6 + 0.1, 3e11])
    n = roots.smallest_integer(lambda k: k >= x, np.floor(x), np.ones(x.shape, bool))
    np.testing.assert_array_equal(n, np.maximum(np.ceil(x), np.floor(x) + 1))
    lam, mu = np.array([3.0, 50.0, 999.0]), np.array([1.0, 0.7, 10.0])
    n = roots.smallest_integer(lambda k: k * mu - lam >= 1.0, np.zeros(3), np.ones(3, bool))
    scan = [next(k for k in range(1, 10_000) if k * m - la >= 1.0) for la, m in zip(lam, mu)]
    np.testing.assert_array_equal(n, scan)


def test_smallest_integer_gives_inf_when_infeasible_or_beyond_the_limit():
    n = roots.smallest_integer(lambda k: k >= 5.0, np.zeros(2), np.array([True, False]))
    np.testing.assert_array_equal(n, [5.0, np.inf])
    assert roots.smallest_integer(lambda k: k < 0, np.zeros(1), np.ones(1, bool), limit=64.0)[0] \
        == np.inf


@pytest.mark.parametrize("target", [1.5, 10.0, 1e4])
def test_largest_satisfying_matches_brentq(target):
    """The largest load with an M/M/1-like latency 1/(1 − x) below a target, on [0, 1)."""
    g = lambda x: 1.0 / (1.0 - x)                                # noqa: E731
    best = roots.largest_satisfying(lambda x: g(x) <= target, np.zeros(1), np.ones(1))[0]
    exact = optimize.brentq(lambda x: g(x) - target, 0.0, 1.0 - 1e-15, xtol=1e-300, rtol=1e-15)
    assert best <= exact * (1 + 1e-15) and exact - best <= 2e-12
    assert g(best) <= target


def test_largest_satisfying_keeps_lo_when_nothing_above_it_satisfies():
    best = roots.largest_satisfying(lambda x: x <= 0.0, np.zeros(2), np.array([1.0, 0.0]))
    np.testing.assert_array_equal(best, [0.0, 0.0])
