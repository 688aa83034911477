"""Token-length laws: the discretisation n = max(1, ⌈X⌉), the empirical law and its CSV reader.

Expected values come from scipy's own distributions, numpy statistics of the
raw sample, and sampling.
"""
import io

import numpy as np
import pytest
from scipy import stats

from engine.core import token_laws as tl


def test_discretisation_convention_ceil_and_at_least_one():
    """P(n ≤ k) = F_X(k) for k ≥ 1, P(n = 1) = F_X(1); the pmf sums to 1."""
    d = tl.lognormal(7.0, 0.7)
    ref = stats.lognorm(s=0.7, scale=np.exp(7.0))
    k = np.array([1, 2, 500, 1300, 1600, 10_000])
    np.testing.assert_allclose(tl.token_cdf(d, k), ref.cdf(k), rtol=1e-14)
    assert tl.token_cdf(d, 0) == 0.0 and tl.token_cdf(d, 0.5) == 0.0
    assert tl.token_pmf(d, 1) == pytest.approx(ref.cdf(1.0), rel=1e-14)
    u = tl.uniform(0.0, 1000.0)                     # ⌈U(0, 1000)⌉ is uniform on 1..1000
    np.testing.assert_allclose(tl.token_pmf(u, np.arange(1, 1001)), 1e-3, rtol=1e-9)
    assert tl.token_pmf(u, 1001) == 0.0 and tl.token_pmf(u, 2.5) == 0.0


def test_sampling_follows_the_discretised_law():
    d = tl.truncated_normal(400.0, 300.0, 0.0, np.inf)
    n = tl.sample_tokens(d, 200_000, np.random.default_rng(3))
    assert n.min() >= 1 and np.all(n == np.round(n))
    for k in (1, 50, 400, 900):
        p = float(tl.token_cdf(d, k))
        sd = np.sqrt(p * (1 - p) / n.size)
        assert abs(np.mean(n <= k) - p) < 4 * sd + 1e-12


def test_parametric_laws_validate_their_arguments():
    with pytest.raises(ValueError, match="log_sd"):
        tl.lognormal(7.0, 0.0)
    with pytest.raises(ValueError, match="log_mean"):
        tl.lognormal(float("nan"), 0.7)
    with pytest.raises(ValueError, match="high must exceed low"):
        tl.uniform(10.0, 5.0)
    with pytest.raises(ValueError, match="sd"):
        tl.truncated_normal(100.0, -1.0)
    with pytest.raises(ValueError, match="low"):
        tl.uniform(-1.0, 5.0)


def test_empirical_law_matches_its_sample():
    rng = np.random.default_rng(11)
    sample = rng.integers(1, 60, size=5000)
    e = tl.EmpiricalTokens.from_counts(sample)
    assert e.mean() == pytest.approx(sample.mean(), rel=1e-12)
    assert e.var() == pytest.approx(sample.var(), rel=1e-12)
    assert e.moment(2) == pytest.approx(np.mean(sample.astype(float) ** 2), rel=1e-12)
    for k in (0, 1, 7.5, 30, 59, 100):
        assert e.cdf(k) == pytest.approx(np.mean(sample <= k), abs=1e-12)
        assert e.sf(k) == pytest.approx(np.mean(sample > k), abs=1e-12)
    assert e.pmf(30) == pytest.approx(np.mean(sample == 30), abs=1e-12)
    assert e.pdf(30.5) == 0.0
    for q in (0.0, 0.1, 0.5, 0.9, 1.0):
        k = e.ppf(q)
        assert np.mean(sample <= k) >= q - 1e-12                   # smallest k with F(k) ≥ q
        assert q == 0.0 or np.mean(sample <= k - 1) < q
    draws = e.rvs(size=1000, random_state=np.random.default_rng(5))
    np.testing.assert_array_equal(draws, e.rvs(size=1000, random_state=np.random.default_rng(5)))
    assert set(np.unique(draws)) <= set(np.unique(sample))
    # the discretisation leaves integer laws unchanged
    np.testing.assert_allclose(tl.token_cdf(e, [1, 30, 59]), [e.cdf(1), e.cdf(30), e.cdf(59)])


@pytest.mark.parametrize("bad,where", [([3, 0, 2], "got 0"), ([1, 2.5], "got 2.5"),
                                       ([1, float("nan")], "nan"), ([], "empty"),
                                       ([-4], "got -4")])
def test_empirical_law_rejects_bad_counts(bad, where):
    with pytest.raises(ValueError, match=where):
        tl.EmpiricalTokens.from_counts(bad)


def test_csv_reader_header_column_and_errors(tmp_path):
    e = tl.empirical_from_csv("output_tokens,input_tokens\n12,5\n40,6\n12,7\n", "output_tokens")
    assert e.mean() == pytest.approx(64 / 3) and e.n_samples == 3
    e2 = tl.empirical_from_csv(io.StringIO("3\n4\n5\n"))
    assert e2.mean() == pytest.approx(4.0, rel=1e-14)
    path = tmp_path / "tokens.csv"
    path.write_text("n\n7\n9\n")
    assert tl.empirical_from_csv(path).mean() == pytest.approx(8.0, rel=1e-14)
    assert tl.empirical_from_csv(str(path)).mean() == pytest.approx(8.0, rel=1e-14)
    assert tl.empirical_from_csv(b"n,m\n1,2\n3,4\n", column=1).mean() == pytest.approx(3.0)
    with pytest.raises(ValueError, match="row 3"):
        tl.empirical_from_csv("n\n4\nabc\n")
    with pytest.raises(ValueError, match="at most 2"):
        tl.empirical_from_csv("1\n2\n3\n", max_rows=2)
    with pytest.raises(ValueError, match="no column named"):
        tl.empirical_from_csv("a\n1\n", "b")
    with pytest.raises(ValueError, match="got 0"):
        tl.empirical_from_csv("n\n1\n0\n")


def test_grid_top_bounded_and_unbounded():
    assert tl.grid_top(tl.uniform(0.0, 1000.0)) == 1000
    d = tl.lognormal()
    assert tl.grid_top(d) == np.ceil(stats.lognorm(s=0.7, scale=np.exp(7)).ppf(1 - 1e-15))
    assert tl.grid_top(d, 3000) == 3000
    # a limit beyond the law's last support point sums only up to it (min, as documented):
    # it raised for n_max above MAX_TOKEN_GRID although nothing lies beyond 1000
    assert tl.grid_top(tl.uniform(0.0, 1000.0), 1e7) == 1000
    with pytest.raises(ValueError, match="n_max"):
        tl.grid_top(tl.lognormal(20.0, 3.0))
