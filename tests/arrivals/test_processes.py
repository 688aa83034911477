"""Poisson, Renewal, MMPP-2 and Replay against theory: sample moments within their
sampling error of ``rate`` and ``scv``; the MMPP-2's closed forms against the MAP's
matrix formulas, its counting probabilities against scipy's expm and Poisson, its IDC
against simulated counts."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from scipy import stats
from scipy.linalg import expm

from engine.arrivals import MMPP2, Poisson, Renewal, Replay
from engine.arrivals.processes import _hyperexponential_branches
from tests.arrivals.helpers import Z, batch_se, gaps_of, scv_of, window_idc

N = 400_000
PROCESSES = [Poisson(2.0), Renewal(2.0, 0.0), Renewal(0.5, 0.25), Renewal(0.5, 0.3),
             Renewal(3.0, 1.0), Renewal(3.0, 4.0), Renewal(1.0, 25.0),
             MMPP2(5.0, 0.5, 0.1, 0.3), MMPP2(0.0, 3.0, 1.0, 2.0), MMPP2(2.0, 2.0, 0.7, 0.2),
             MMPP2(1.0, 4.0, 50.0, 20.0)]


@pytest.mark.parametrize("process", PROCESSES, ids=lambda p: p.label)
def test_sample_mean_rate_and_scv(process):
    """Mean gap 1/rate and gap SCV within 5 batch-means standard errors of a 400,000-gap
    sample (exact for the deterministic renewal)."""
    t = process.sample(N, np.random.default_rng(11))
    assert t.shape == (N,) and t.dtype == np.float64 and t[0] > 0
    assert np.all(np.diff(t) >= 0)
    gaps = gaps_of(t)
    se_mean = batch_se(np.mean, gaps)
    assert abs(gaps.mean() - 1 / process.rate) <= Z * se_mean + 1e-12 / process.rate
    assert abs(scv_of(gaps) - process.scv) <= Z * batch_se(scv_of, gaps) + 1e-12


@given(st.floats(1.0 + 1e-9, 1e6))
def test_hyperexponential_is_balanced_with_the_scv(scv):
    """The branches: p/f1 = (1 − p)/f2 = 1/2 (balanced means), mean 1 and
    E[X²] = 2(p/f1² + (1 − p)/f2²) = 1 + scv."""
    p, f1, f2 = _hyperexponential_branches(scv)
    assert 0.5 < p < 1 and f1 > 0 and f2 > 0
    assert p / f1 == pytest.approx(0.5, rel=1e-12) and (1 - p) / f2 == pytest.approx(0.5, rel=1e-9)
    second = 2 * (p / f1 ** 2 + (1 - p) / f2 ** 2)
    assert second - 1 == pytest.approx(scv, rel=1e-9)


def test_renewal_gap_laws():
    """The law the docstring names: Erlang-4 at scv 1/4 (a KS test against scipy's gamma),
    deterministic at 0, the SCV the parameter exactly."""
    rng = np.random.default_rng(3)
    erlang = Renewal(2.0, 0.25)
    assert erlang.gap_law == "Erlang-4" and erlang.scv == 0.25
    gaps = gaps_of(erlang.sample(20_000, rng))
    assert stats.kstest(gaps, stats.gamma(4, scale=1 / 8).cdf).pvalue > 1e-4
    assert Renewal(4.0, 0.0).sample(5, rng).tolist() == [0.25, 0.5, 0.75, 1.0, 1.25]
    assert Renewal(1.0, 5.0).gap_law.startswith("two-phase hyperexponential")
    assert Renewal(1.0, 0.3).gap_law == "gamma (shape 3.33)"
    assert "bursty" in Renewal(1.0, 4.0).label and "SCV 4" in Renewal(1.0, 4.0).label


# ---------------------------------------------------------------- MMPP-2, exact

MMPPS = [MMPP2(5.0, 0.5, 0.1, 0.3), MMPP2(0.0, 3.0, 1.0, 2.0), MMPP2(10.0, 1.0, 0.02, 0.5),
         MMPP2(1.0, 1.0, 3.0, 0.5)]


@pytest.mark.parametrize("p", MMPPS, ids=lambda p: p.label)
def test_mmpp2_closed_forms_equal_the_map_formulas(p):
    """rate = π D1 1 with π D = 0; the gap moments E[X^k] = k! α (−D0)^{−k} 1 with
    α = π D1/λ (numpy's solver, not the closed form) give the SCV."""
    d = p.D0 + p.D1
    a = np.vstack([d.T, np.ones(2)])
    pi = np.linalg.lstsq(a, np.array([0.0, 0.0, 1.0]), rcond=None)[0]
    assert np.allclose(pi, p.stationary_phase, rtol=1e-12)
    lam = pi @ p.D1 @ np.ones(2)
    assert p.rate == pytest.approx(lam, rel=1e-12)
    alpha = pi @ p.D1 / lam
    assert np.allclose(alpha, p.arrival_phase, rtol=1e-12)
    m = np.linalg.inv(-p.D0)
    m1, m2 = alpha @ m @ np.ones(2), 2 * alpha @ m @ m @ np.ones(2)
    assert m1 == pytest.approx(1 / lam, rel=1e-12)
    assert p.scv == pytest.approx(m2 / m1 ** 2 - 1, rel=1e-12)
    assert 1 <= p.scv <= p.idc_limit * (1 + 1e-12)


def counting_by_expm(p, t, n_max):
    """P(n, t) from scipy's expm of the (n_max + 1)-block generator."""
    size = n_max + 1
    q = np.zeros((2 * size, 2 * size))
    for k in range(size):
        q[2 * k:2 * k + 2, 2 * k:2 * k + 2] = p.D0 * t
        if k < n_max:
            q[2 * k:2 * k + 2, 2 * k + 2:2 * k + 4] = p.D1 * t
    return expm(q)[:2].reshape(2, size, 2).transpose(1, 0, 2)


@pytest.mark.parametrize("p", MMPPS, ids=lambda p: p.label)
def test_counting_probabilities_mean_variance_and_expm(p):
    """P(n, t) equals scipy's expm of the block generator; summed over n it is e^{Dt};
    started from π its mean is λt and its variance count_variance(t) (the IDC formula)."""
    t, n_max = 2.5, 160
    table = p.counting_probabilities(t, n_max)
    assert table.shape == (n_max + 1, 2, 2)
    assert np.allclose(table, counting_by_expm(p, t, n_max), rtol=0, atol=1e-13)
    assert np.allclose(table.sum(axis=0), expm((p.D0 + p.D1) * t), rtol=0, atol=1e-12)
    pn = np.einsum("i,nij->n", p.stationary_phase, table)
    n = np.arange(n_max + 1)
    mean = pn @ n
    assert mean == pytest.approx(p.rate * t, rel=1e-10)
    assert pn @ n ** 2 - mean ** 2 == pytest.approx(p.count_variance(t), rel=1e-9)
    assert p.idc(t) == pytest.approx(p.count_variance(t) / (p.rate * t), rel=1e-12)


def test_equal_rates_are_poisson():
    """rate_1 = rate_2: SCV and IDC exactly 1, counts Poisson(λt) whatever the phase,
    the phase moving as e^{Dt}; a sample's gap SCV within its error of 1."""
    p = MMPP2(2.0, 2.0, 0.7, 0.2)
    assert p.scv == 1.0 and p.idc_limit == 1.0
    assert np.all(p.idc([0.01, 1.0, 100.0]) == 1.0)
    table = p.counting_probabilities(1.5, 40)
    pmf = stats.poisson.pmf(np.arange(41), 3.0)
    phase = expm((p.D0 + p.D1) * 1.5)
    assert np.allclose(table, pmf[:, None, None] * phase[None], rtol=1e-10, atol=1e-15)
    gaps = gaps_of(p.sample(200_000, np.random.default_rng(5)))
    assert abs(scv_of(gaps) - 1) <= Z * 2 / math.sqrt(gaps.size)     # SE of the SCV: 2/√n


def test_counting_probabilities_when_switching_is_stiff():
    """Switching 10^7 times faster than arrivals (26 squarings): still Poisson(λt) to
    1e-12 relative when both rates are equal (the rows renormalised at each squaring);
    t = 0 is the identity at n = 0."""
    for t in (1.0, 10.0):
        p = MMPP2(1.0, 1.0, 1e7, 1e7)
        table = p.counting_probabilities(t, 40)
        pmf = stats.poisson.pmf(np.arange(41), t)
        assert np.allclose(table.sum(axis=2), pmf[:, None], rtol=1e-12, atol=0)
    zero = MMPP2(3.0, 1.0, 1.0, 2.0).counting_probabilities(0.0, 3)
    assert np.array_equal(zero[0], np.eye(2)) and not zero[1:].any()


@pytest.mark.parametrize("p", MMPPS[:3], ids=lambda p: p.label)
def test_idc_against_simulated_counts(p):
    """idc(w) against the counts in consecutive windows of a 400,000-arrival sample
    (np.histogram), within 5 batch-means standard errors, at windows of 1, 10 and 100
    mean gaps."""
    t = p.sample(N, np.random.default_rng(2))
    for gaps in (1.0, 10.0, 100.0):
        w = gaps / p.rate
        idc = lambda x: window_idc(x, w)         # noqa: E731
        se = batch_se(idc, t)
        assert abs(idc(t) - p.idc(w)) <= Z * se, (w, idc(t), p.idc(w), se)


def test_mmpp2_labels_and_validation():
    assert MMPP2(1.0, 2.0, 0.5, 0.5, "fitted to code trace").label == \
        "MMPP-2 fitted to code trace"
    assert MMPP2(1.0, 2.0, 0.5, 0.5).label.startswith("MMPP-2 (rates 1/2")
    with pytest.raises(ValueError, match="rate_1 and rate_2"):
        MMPP2(0.0, 0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="switch_21"):
        MMPP2(1.0, 0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="rng"):
        MMPP2(1.0, 0.0, 1.0, 1.0).sample(3, 42)


# ---------------------------------------------------------------- Replay

TRACE = np.array([2.0, 3.0, 3.0, 7.0, 12.0])


def test_replay_rate_scv_and_scaling():
    r = Replay(TRACE, "a test trace")
    assert r.rate == 4 / 10 and r.span == 10.0 and r.label == "replay of a test trace"
    gaps = np.diff(TRACE)
    assert r.scv == pytest.approx(gaps.var() / gaps.mean() ** 2, rel=1e-15)
    for rate in (1e-3, 0.4, 2.5, 7e4):
        s = r.scaled(rate)
        assert s.rate == pytest.approx(rate, rel=1e-14)
        assert np.allclose(s.arrival_times, TRACE * 0.4 / rate, rtol=1e-15)
        assert s.scv == pytest.approx(r.scv, rel=1e-12)
    with pytest.raises(ValueError):
        r.arrival_times[0] = 1.0                     # read-only
    assert r == Replay(list(TRACE), "a test trace") != Replay(TRACE)
    assert hash(r) == hash(Replay(TRACE.copy(), "a test trace"))     # a cache key


def test_replay_sample_is_the_trace_cycled():
    """First n times from 0; beyond the trace, copies shifted by span + one mean gap
    (period 12.5 here); the same whatever ``rng``."""
    r = Replay(TRACE)
    assert r.sample(3).tolist() == [0.0, 1.0, 1.0]
    assert r.sample(0).size == 0
    want = [0, 1, 1, 5, 10, 12.5, 13.5, 13.5, 17.5, 22.5, 25, 26]
    assert r.sample(12).tolist() == want
    assert np.array_equal(r.sample(12, np.random.default_rng(1)), r.sample(12, None))
    long = r.sample(50_000)
    assert (long.size - 1) / (long[-1] - long[0]) == pytest.approx(r.rate, rel=1e-3)


@pytest.mark.parametrize("bad", [[1.0], [2.0, 1.0], [-1.0, 2.0], [1.0, np.nan],
                                 [1.0, 1.0], [[1.0, 2.0]], "times"])
def test_replay_rejects_bad_traces(bad):
    with pytest.raises(ValueError, match="arrival_times"):
        Replay(bad)
