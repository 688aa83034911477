"""Percentile-latency SLAs (Swayam appendix) and the M/M/n reference, against
independent methods.

Expected values come from other routes than the engine's: Monte Carlo of the
paper's own assumption (independent tries, each busy with probability ρ), the
M/M/n birth-death chain solved numerically, the M/D/1 Pollaczek-Khinchine
formula, closed forms derived in the docstrings below, and the dispatch
simulator.
"""
import doctest

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import linalg, stats

from engine import batching, sla
from tests.reference import md1_mean_latency

MU = 100.0                                   # 10 ms mean service
EXP = stats.expon(scale=1 / MU)


# ------------------------------------------------------------ eqs 1 and 7 as printed

def _geometric_waits(rng, size, rho, d1, c):
    """Waits under the paper's assumption: retries ~ Geometric, tries independent."""
    retries = rng.geometric(1.0 - rho, size) - 1
    return d1 + retries * c


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.8, 0.95])
@pytest.mark.parametrize("p", [50.0, 90.0, 99.0, 99.9])
def test_waiting_percentile_is_the_quantile_of_eq7s_waiting_law(rho, p):
    """ω_p is the p-quantile of Z: eq 7 with zero service time (P(Z ≤ t)) reaches
    p/100 at ω_p and not one retry step earlier."""
    n, d1, d2, delta = 8, 0.001, 0.002, 0.003
    c = d1 + d2 + delta
    lam = rho * n * MU
    w = sla.waiting_percentile(p, lam, MU, n, d1, d2, delta)
    assert sla.response_cdf(w, lam, MU, n, d1, d2, delta, 0.0) >= p / 100
    if w - c >= d1:
        assert sla.response_cdf(w - c / 2, lam, MU, n, d1, d2, delta, 0.0) < p / 100
    # ... and the empirical quantile of the paper's geometric law (Monte Carlo).
    z = _geometric_waits(np.random.default_rng(5), 400_000, rho, d1, c)
    emp = np.quantile(z, p / 100, method="inverted_cdf")
    lo_p, hi_p = p / 100 - 4e-3 * (1 - p / 100) ** 0.5, p / 100 + 4e-3 * (1 - p / 100) ** 0.5
    assert np.quantile(z, lo_p, method="inverted_cdf") <= w <= np.quantile(
        z, hi_p, method="inverted_cdf") or emp == pytest.approx(w)


def test_eq1_as_printed_equals_the_quantile_only_at_whole_retry_counts():
    """Eq 1 interpolates the retry count: equal where ln(1 − p)/ln ρ is whole,
    smaller in between, and below the least wait d1 when p/100 < 1 − ρ."""
    n, d1, d2, delta = 4, 0.001, 0.001, 0.002
    c = d1 + d2 + delta
    rho = 0.5
    lam = rho * n * MU
    k = np.arange(1, 8)
    p_whole = 100 * (1 - rho ** k)                  # ln(1 − p)/ln ρ = k
    printed = sla.waiting_percentile(p_whole, lam, MU, n, d1, d2, delta, printed=True)
    np.testing.assert_allclose(printed, d1 + (k - 1) * c, rtol=1e-12)
    np.testing.assert_allclose(sla.waiting_percentile(p_whole, lam, MU, n, d1, d2, delta),
                               printed, rtol=1e-9)
    p = np.linspace(1, 99.9, 200)
    exact = sla.waiting_percentile(p, lam, MU, n, d1, d2, delta)
    printed = sla.waiting_percentile(p, lam, MU, n, d1, d2, delta, printed=True)
    assert np.all(printed <= exact + 1e-12)
    assert np.all(exact >= d1)
    low = p / 100 < 1 - rho
    assert np.all(printed[low] < d1) and np.all(exact[low] == d1)
    # ρ → 0: eq 1 gives d1 − c, an impossible (negative here) wait.
    assert sla.waiting_percentile(99, 0.0, MU, n, d1, d2, delta, printed=True) == pytest.approx(
        d1 - c)


def test_eq7_deterministic_service_closed_form():
    """Y = s: P(R ≤ RT) = 1 − ρ^(K+1), K = ⌊(RT − d1 − s)/c⌋ (a geometric partial sum)."""
    n, d1, d2, delta, s = 6, 0.0011, 0.0013, 0.0017, 0.02
    c = d1 + d2 + delta
    rho = np.array([0.1, 0.6, 0.9])[:, None]
    rt = np.linspace(0.0, 0.2, 41)[None, :] + 1e-7
    k = np.floor((rt - d1 - s) / c)
    expected = np.where(k >= 0, 1 - rho ** (k + 1), 0.0)
    got = sla.response_cdf(rt, rho * n * MU, MU, n, d1, d2, delta, s)
    np.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize("service", [stats.expon(scale=0.01),
                                     stats.lognorm(s=0.8, scale=0.008),
                                     sla.empirical_service(
                                         np.random.default_rng(2).gamma(4, 0.0025, 5000))],
                         ids=["expon", "lognorm", "empirical"])
def test_eq7_matches_monte_carlo_of_its_assumptions(service):
    """P(Y + Z ≤ RT) with Z from independent tries (ρ each) and Y ~ service."""
    n, d1, d2, delta, rho = 5, 0.002, 0.002, 0.004, 0.7
    rng = np.random.default_rng(9)
    size = 400_000
    r = d1 + d2 + delta
    samples = _geometric_waits(rng, size, rho, d1, r) + service.rvs(size=size, random_state=rng)
    rt = np.array([0.01, 0.03, 0.06, 0.12])
    emp = (samples[:, None] <= rt).mean(axis=0)
    got = sla.response_cdf(rt, rho * n * MU, MU, n, d1, d2, delta, service)
    assert np.all(np.abs(got - emp) < 4 * np.sqrt(emp * (1 - emp) / size) + 1e-4)


def test_empirical_service_law_keeps_the_measured_mean_and_quantiles():
    x = np.random.default_rng(3).lognormal(np.log(0.01), 0.5, 20_000)
    law = sla.empirical_service(x)
    assert law.mean() == pytest.approx(x.mean(), rel=0.01)
    np.testing.assert_allclose(law.ppf([0.5, 0.9]), np.quantile(x, [0.5, 0.9]), rtol=0.02)
    with pytest.raises(ValueError, match="samples_s"):
        sla.empirical_service([0.01, np.nan])


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 0.99), st.integers(1, 50), st.floats(0.0, 0.01), st.floats(0.0, 0.01),
       st.floats(0.0, 0.02))
def test_eq7_is_a_cdf_and_grows_with_n(rho, n, d1, d2, delta):
    lam = rho * n * MU
    rt = np.linspace(0, 0.3, 31)
    cdf = sla.response_cdf(rt, lam, MU, n, d1, d2, delta, EXP)
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(np.diff(cdf) >= -1e-12)
    more = sla.response_cdf(rt, lam, MU, n + 1, d1, d2, delta, EXP)
    assert np.all(more >= cdf - 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 5000.0), st.floats(0.05, 0.5), st.floats(50.0, 99.9))
def test_min_backends_grows_with_load(lam, rt, pc):
    args = (MU, rt, pc, 0.0005, 0.0005, 0.001, EXP)
    n = sla.min_backends(np.array([lam, 1.5 * lam + 1.0]), *args)
    assert n[0] <= n[1]
    assert np.all(n > np.array([lam, 1.5 * lam + 1.0]) / MU)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 0.99), st.integers(1, 40))
def test_waiting_percentile_grows_with_p(rho, n):
    p = np.linspace(1, 99.99, 60)
    w = sla.waiting_percentile(p, rho * n * MU, MU, n, 0.001, 0.001, 0.002)
    assert np.all(np.diff(w) >= 0) and np.all(w >= 0.001)


def test_docstring_examples_run():
    result = doctest.testmod(sla)
    assert result.attempted > 0 and result.failed == 0
    result = doctest.testmod(sla.random_dispatch)
    assert result.attempted > 0 and result.failed == 0


def test_response_percentiles_invert_the_cdfs():
    n, d1, d2, delta = 10, 0.0005, 0.0005, 0.001
    lam = np.array([[200.0], [900.0]])
    p = np.array([50.0, 99.0, 99.9])
    t = sla.response_percentile(p, lam, MU, n, d1, d2, delta, EXP)
    assert t.shape == (2, 3)
    assert np.all(sla.response_cdf(t, lam, MU, n, d1, d2, delta, EXP) >= p / 100 - 1e-12)
    assert np.all(sla.response_cdf(t * (1 - 1e-6), lam, MU, n, d1, d2, delta, EXP) < p / 100)
    # Deterministic service s with ρ → 0: every request takes d1 + s.
    assert sla.response_percentile(99, 0.0, MU, n, d1, d2, delta, 0.01) == pytest.approx(
        d1 + 0.01, rel=1e-8)
    m = sla.mmn_response_percentile(p, lam, MU, n)
    np.testing.assert_allclose(sla.mmn_response_cdf(m, lam, MU, n), p / 100 + 0 * lam,
                               rtol=1e-8)
    # M/M/1: R ~ Exp(μ − λ), so the p-quantile is −ln(1 − p)/(μ − λ).
    assert sla.mmn_response_percentile(99, 60.0, MU, 1) == pytest.approx(
        -np.log(0.01) / (MU - 60.0), rel=1e-8)
    assert np.isinf(sla.response_percentile(99, 1000.0, MU, n, d1, d2, delta, EXP))


def test_min_backends_is_the_smallest_n_meeting_eq7():
    lam = np.array([0.0, 50.0, 800.0, 5000.0, 40_000.0])
    d1, d2, delta = 0.0005, 0.0005, 0.001
    n = sla.min_backends(lam, MU, 0.1, 99, d1, d2, delta, EXP)
    assert n[0] == 1
    for la, k in zip(lam[1:], n[1:]):
        assert sla.response_cdf(0.1, la, MU, k, d1, d2, delta, EXP) >= 0.99
        assert k == 1 or sla.response_cdf(0.1, la, MU, k - 1, d1, d2, delta, EXP) < 0.99
    # Even an idle backend misses a 99% SLA of 30 ms with 10 ms exponential service.
    assert np.isinf(sla.min_backends(100.0, MU, 0.03, 99, d1, d2, delta, EXP))


# ------------------------------------------------------------ Erlang C, M/M/n

def _mmn_stationary(lam, mu, n):
    """Stationary law of the M/M/n birth-death chain, solved as a linear system
    (truncated where the geometric tail (λ/(nμ))^k falls below 1e-17)."""
    size = n + int(np.ceil(np.log(1e-17) / np.log(lam / (n * mu)))) + 10
    q = np.zeros((size, size))
    for k in range(size - 1):
        q[k, k + 1] = lam
        q[k + 1, k] = min(k + 1, n) * mu
    q -= np.diag(q.sum(axis=1))
    a = q.T.copy()
    a[-1, :] = 1.0
    rhs = np.zeros(size)
    rhs[-1] = 1.0
    return linalg.solve(a, rhs)


@pytest.mark.parametrize("n,a", [(1, 0.5), (2, 1.0), (5, 4.0), (10, 7.0), (40, 36.0)])
def test_erlang_c_matches_the_birth_death_chain(n, a):
    """P(wait) = P(N ≥ n) by PASTA.  Textbook checks: M/M/1 C = ρ; M/M/2 at a = 1:
    π0 = 1/3, π1 = 1/3, so C = 1/3."""
    pi = _mmn_stationary(a * MU, MU, n)
    assert sla.erlang_c(n, a) == pytest.approx(pi[n:].sum(), rel=1e-9)
    if n == 1:
        assert sla.erlang_c(n, a) == pytest.approx(a)
    if (n, a) == (2, 1.0):
        assert sla.erlang_c(n, a) == pytest.approx(1 / 3)


def _gamma_plus_exp_cdf(t, m, g, mu):
    """P(G + E ≤ t), G ~ Gamma(m, rate g), E ~ Exp(mu): 200-point Gauss-Legendre
    quadrature of P(E ≤ t − w) against the Gamma density, all shapes m at once."""
    x, wts = np.polynomial.legendre.leggauss(200)
    w = 0.5 * t * (x + 1.0)
    dens = stats.gamma.pdf(w[None, :], np.asarray(m)[:, None], scale=1 / g)
    return 0.5 * t * (dens * -np.expm1(-mu * (t - w))) @ wts


@pytest.mark.parametrize("n,rho", [(1, 0.6), (4, 0.8), (12, 0.9)])
def test_mmn_response_cdf_matches_the_chain(n, rho):
    """FIFO: a request finding k ≥ n waits Gamma(k − n + 1, nμ), then Exp(μ)."""
    lam = rho * n * MU
    pi = _mmn_stationary(lam, MU, n)
    k = np.arange(n, pi.size)
    keep = pi[n:] > 1e-14
    for t in (0.005, 0.02, 0.08):
        conv = _gamma_plus_exp_cdf(t, (k - n + 1)[keep], n * MU, MU)
        expected = pi[:n].sum() * -np.expm1(-MU * t) + np.dot(pi[n:][keep], conv)
        assert sla.mmn_response_cdf(t, lam, MU, n) == pytest.approx(expected, abs=1e-9)


def test_erlang_c_min_servers_is_minimal():
    lam = np.array([10.0, 250.0, 3000.0])
    n = sla.erlang_c_min_servers(lam, MU, 0.05, 99)
    for la, k in zip(lam, n):
        assert sla.mmn_response_cdf(0.05, la, MU, k) >= 0.99
        assert k - 1 <= la / MU or sla.mmn_response_cdf(0.05, la, MU, k - 1) < 0.99
    assert np.isinf(sla.erlang_c_min_servers(10.0, MU, 0.04, 99))   # 1 − e^(−4) < 0.99


def test_unstable_loads():
    assert np.isinf(sla.waiting_percentile(99, 1000.0, MU, 10, 0, 0, 0.001))
    assert sla.response_cdf(1.0, 1500.0, MU, 10, 0, 0, 0.001, EXP) == 0.0
    assert sla.mmn_response_cdf(1.0, np.inf, MU, 10) == 0.0
    assert sla.erlang_c(3, 5.0) == 1.0
    assert np.isinf(sla.min_backends(np.inf, MU, 0.1, 99, 0, 0, 0.001, EXP))
    assert np.isinf(sla.erlang_c_min_servers(np.inf, MU, 0.1, 99))
    assert sla.mmn_waiting_cdf(0.1, 2000.0, MU, 10) == 0.0


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="mu"):
        sla.response_cdf(0.1, 10, -1.0, 2, 0, 0, 0, EXP)
    with pytest.raises(ValueError, match="percentile"):
        sla.min_backends(10, MU, 0.1, 100, 0, 0, 0, EXP)
    with pytest.raises(ValueError, match="n must"):
        sla.waiting_percentile(99, 10, MU, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="delta"):
        sla.response_cdf(0.1, 10, MU, 2, 0, 0, -1, EXP)
    with pytest.raises(ValueError, match="policy"):
        sla.simulate_dispatch("round_robin", 10, EXP, 2)
    with pytest.raises(ValueError, match="lam"):
        sla.simulate_dispatch("jsq", 300, EXP, 2)
    with pytest.raises(ValueError, match="service"):
        sla.response_cdf(0.1, 10, MU, 2, 0, 0, 0, "fast")


# ------------------------------------------------------------ simulation

@pytest.mark.parametrize("n,rho", [(1, 0.8), (8, 0.85)])
def test_central_queue_simulation_is_mmn(n, rho):
    lam = rho * n * MU
    r = sla.simulate_dispatch("central_queue", lam, EXP, n, n_requests=300_000, seed=4)
    mean = 1 / MU + sla.erlang_c(n, lam / MU) / (n * MU - lam)
    assert abs(r.mean_response_s - mean) < 4 * r.ci95_s
    t = np.array([0.005, 0.02, 0.05])
    assert np.all(np.abs(r.fraction_within(t) - sla.mmn_response_cdf(t, lam, MU, n)) < 0.01)
    p99 = sla.mmn_response_percentile(99, lam, MU, n)
    assert abs(r.fraction_within(p99) - 0.99) < 0.004
    w = np.array([0.0, 0.002, 0.01])
    assert np.all(np.abs(r.waiting_fraction_within(w) - sla.mmn_waiting_cdf(w, lam, MU, n)) < 0.01)
    assert sla.mmn_waiting_cdf(0.0, lam, MU, n) == pytest.approx(1 - sla.erlang_c(n, lam / MU))


def test_central_queue_deterministic_service_is_md1():
    s, lam = 0.01, 70.0
    r = sla.simulate_dispatch("central_queue", lam, s, 1, n_requests=300_000, seed=6)
    assert abs(r.mean_response_s - md1_mean_latency(lam, s)) < 4 * r.ci95_s


def test_jsq_with_one_backend_is_mm1_and_never_beats_the_central_queue():
    r = sla.simulate_dispatch("jsq", 60.0, EXP, 1, n_requests=200_000, seed=8)
    assert abs(r.mean_response_s - 1 / (MU - 60.0)) < 4 * r.ci95_s
    lam, n = 0.85 * 8 * MU, 8
    j = sla.simulate_dispatch("jsq", lam, EXP, n, n_requests=200_000, seed=8)
    exact = 1 / MU + sla.erlang_c(n, lam / MU) / (n * MU - lam)
    assert j.mean_response_s > exact - 4 * j.ci95_s
    assert j.mean_attempts == 1.0


def test_first_tries_see_the_utilization_retries_see_more():
    """Eq 2 holds for first tries (PASTA, every request served once) whatever c;
    with c short against 1/μ a retry meets the same busy period: more busy."""
    n, rho, c = 10, 0.9, 0.1 / MU
    r = sla.simulate_dispatch("random_retry", rho * n * MU, EXP, n, c / 4, c / 4, c / 2,
                              n_requests=200_000, seed=3)
    assert abs(r.p_busy_first_try - rho) < 0.01
    assert r.p_busy_retry > rho + 0.03
    assert r.mean_attempts > 1.5 / (1 - rho)          # the paper's mean is 1/(1 − ρ)
    rt = np.array([0.05, 0.1])
    paper = sla.response_cdf(rt, rho * n * MU, MU, n, c / 4, c / 4, c / 2, EXP)
    assert np.all(paper - r.fraction_within(rt) > 0.02)       # optimistic
    # The first-try/retry split with the measured retry busy probability fixes the body.
    fixed = sla.response_cdf(0.05, rho * n * MU, MU, n, c / 4, c / 4, c / 2, EXP,
                             p_retry_busy=r.p_busy_retry)
    assert abs(fixed - r.fraction_within(0.05)) < 0.01


def test_retry_busy_probability_limits():
    """Long c: tries decorrelate, q → ρ (eq 2).  c = 0: q = E[K²]/(n²ρ) with
    K = min(N, n) from the birth-death chain."""
    n, rho = 10, np.array([0.3, 0.6, 0.9])
    lam = rho * n * MU
    long = sla.retry_busy_probability(lam, MU, n, 0.1, 0.1, 0.3)          # c·μ = 50
    np.testing.assert_allclose(long, rho, atol=1e-3)
    for la in lam:
        pi = _mmn_stationary(la, MU, n)
        k = np.minimum(np.arange(pi.size), n)
        expected = pi @ k ** 2 / (n * la / MU)
        assert sla.retry_busy_probability(la, MU, n, 0, 0, 0) == pytest.approx(expected, rel=1e-9)
    assert np.all(sla.retry_busy_probability(lam, MU, n, 0.0005, 0.0, 0.0) > rho + 0.01)
    np.testing.assert_array_equal(sla.retry_busy_probability([0.0, 2000.0], MU, n, 0, 0, 0.001),
                                  [0.0, 1.0])


@pytest.mark.parametrize("rho", [0.7, 0.9])
def test_retry_busy_correction_closes_part_of_the_gap(rho):
    """c·μ = 0.1: eq 7 with the estimated retry busy probability lies between the
    paper's eq 7 and the simulation, closing at least a quarter of the gap at
    RT = 3/μ (measured: about 1/3 at ρ = 0.7, 2/3 at ρ = 0.9)."""
    n, c = 10, 0.1 / MU
    lam = rho * n * MU
    r = sla.simulate_dispatch("random_retry", lam, EXP, n, c / 4, c / 4, c / 2,
                              n_requests=200_000, seed=3)
    q = sla.retry_busy_probability(lam, MU, n, c / 4, c / 4, c / 2)
    assert rho < q < r.p_busy_retry + 0.01
    rt = 0.03
    sim = r.fraction_within(rt)
    paper = sla.response_cdf(rt, lam, MU, n, c / 4, c / 4, c / 2, EXP)
    fixed = sla.response_cdf(rt, lam, MU, n, c / 4, c / 4, c / 2, EXP, p_retry_busy=q)
    assert sim - 0.005 < fixed < paper and paper - fixed > 0.25 * (paper - sim)


@pytest.mark.parametrize("rho,c_mu", [(0.5, 10.0), (0.7, 10.0), (0.3, 1.0), (0.5, 1.0)])
def test_eq7_holds_when_retries_are_spaced_beyond_a_service_time(rho, c_mu):
    n = 10
    c = c_mu / MU
    lam = rho * n * MU
    r = sla.simulate_dispatch("random_retry", lam, EXP, n, c / 4, c / 4, c / 2,
                              n_requests=150_000, seed=12)
    rt = np.array([0.02, 0.05, 0.1, 0.2])
    paper = sla.response_cdf(rt, lam, MU, n, c / 4, c / 4, c / 2, EXP)
    assert np.all(np.abs(paper - r.fraction_within(rt)) < 0.02)
    assert r.mean_attempts == pytest.approx(1 / (1 - rho), rel=0.06)


def test_fast_retries_approach_the_central_queue():
    """c → 0: a waiting request grabs a server soon after one frees, so the mean
    wait tends to M/M/n's (any order of service has the same mean) and
    P(wait > a few c) to Erlang C, far below the paper's ρ."""
    n, rho, c = 10, 0.8, 0.001 / MU
    lam = rho * n * MU
    r = sla.simulate_dispatch("random_retry", lam, EXP, n, 0.0, 0.0, c,
                              n_requests=200_000, seed=21)
    erlang = sla.erlang_c(n, lam / MU)
    assert abs(r.mean_waiting_s - erlang / (n * MU - lam)) < 4 * r.ci95_waiting_s
    t = 0.01 / MU                                    # 10 retry steps, 1% of 1/μ
    late = 1 - r.waiting_fraction_within(t)
    assert abs(late - erlang * np.exp(-(n * MU - lam) * t)) < 0.06
    assert 1 - sla.response_cdf(t, lam, MU, n, 0, 0, c, 0.0) < late - 0.3    # ρ^11 = 0.086


def test_retry_loop_resumes_exactly_when_its_random_numbers_run_out(monkeypatch):
    """Refilling the backend choices every 63 draws gives the very same path."""
    from engine.sla import sim as sla_sim
    args = ("random_retry", 700.0, EXP, 8, 0.001, 0.001, 0.002, 5000, 5)
    whole = sla_sim.simulate_records(*args)
    monkeypatch.setattr(sla_sim, "_CHOICE_CHUNK", 63)
    for backend in ("numba", "numpy"):
        pieces = sla_sim.simulate_records(*args, backend=backend)
        np.testing.assert_array_equal(pieces.start, whole.start)
        np.testing.assert_array_equal(pieces.attempts, whole.attempts)
    assert whole.attempts.sum() > 10 * 63


def test_simulation_is_reproducible_and_backends_agree():
    args = ("random_retry", 600.0, EXP, 8, 0.001, 0.001, 0.002)
    a = sla.simulate_dispatch(*args, n_requests=3000, seed=5)
    b = sla.simulate_dispatch(*args, n_requests=3000, seed=5, backend="numpy")
    assert a.p99_response_s == b.p99_response_s and a.mean_attempts == b.mean_attempts
    for policy in ("jsq", "central_queue"):
        a = sla.simulate_dispatch(policy, 600.0, EXP, 8, 0.001, n_requests=3000, seed=5)
        b = sla.simulate_dispatch(policy, 600.0, EXP, 8, 0.001, n_requests=3000, seed=5,
                                  backend="numpy")
        assert a.p99_response_s == b.p99_response_s and a.p99_waiting_s == b.p99_waiting_s


# ------------------------------------------------------------ GPU operating point

def test_gpu_service_rate_b_max_one_is_md1_closed_form():
    """b_max = 1 is M/D/1 with S = α + τ0: S + λS²/(2(1 − λS)) = T gives
    λ = 2(T − S)/(S(2T − S)) per ms."""
    alpha, tau0 = 0.5833, 1.4284
    s = alpha + tau0
    target = np.array([2.5, 4.0, 10.0])
    expected = 2 * (target - s) / (s * (2 * target - s)) * 1000
    np.testing.assert_allclose(sla.gpu_service_rate(alpha, tau0, target, b_max=1), expected,
                               rtol=1e-9)
    assert sla.gpu_service_rate(alpha, tau0, 1.5) == 0.0       # below α + τ0


@pytest.mark.parametrize("b_max", [None, 16])
def test_gpu_service_rate_meets_the_target_exactly(b_max):
    alpha, tau0, target = 0.1438, 1.8874, 8.0
    mu = sla.gpu_service_rate(alpha, tau0, target, b_max)
    lam_ms = mu / 1000
    assert batching.mean_latency(lam_ms, alpha, tau0, b_max) == pytest.approx(target, rel=1e-8)
    assert batching.mean_latency(lam_ms * 1.001, alpha, tau0, b_max) > target


# ------------------------------------------------------------ trace-driven plan

def test_plan_without_delay_meets_the_sla_and_saves_against_peak():
    rates = np.array([100.0, 400.0, 1500.0, 800.0, 50.0])
    plan = sla.plan_replicas(rates, MU, 0.1, 99, 0.0005, 0.0005, 0.001, interval_s=600)
    np.testing.assert_array_equal(plan.needed,
                                  sla.min_backends(rates, MU, 0.1, 99, 0.0005, 0.0005, 0.001,
                                                   EXP))
    np.testing.assert_array_equal(plan.serving, plan.needed)
    assert plan.violation_intervals == 0 and plan.late_requests == 0
    assert plan.gpu_hours == pytest.approx(plan.needed.sum() / 6)
    assert plan.static_gpu_hours == pytest.approx(plan.needed.max() * 5 / 6)
    assert 0 < plan.savings < 1
    flat = sla.plan_replicas(np.full(4, 300.0), MU, 0.1, 99, interval_s=60)
    assert flat.savings == 0


def test_plan_counts_have_denominators_and_the_static_fleet_beside_them():
    """The late requests and missed intervals by hand: 60 s intervals, so the trace
    holds (100 + 100 + 1200 + 1200 + 100)·60 requests; the static fleet of max(needed)
    replicas meets the SLA in every interval; the autoscaled one misses intervals 2, 3
    (provisioning delay), and its late requests are (0.99 − P(R ≤ RT))·1200·60 there."""
    rates = np.array([100.0, 100.0, 1200.0, 1200.0, 100.0])
    plan = sla.plan_replicas(rates, MU, 0.1, 99, interval_s=60, provisioning_delay=90)
    assert plan.intervals == 5 and plan.total_requests == pytest.approx(2700 * 60)
    assert plan.violation_intervals == 2
    within = sla.response_cdf(0.1, 1200.0, MU, plan.needed[0], 0, 0, 0, EXP)
    assert plan.late_requests == pytest.approx(2 * (0.99 - within) * 1200 * 60)
    assert plan.static_violation_intervals == 0 and plan.static_late_requests == 0
    # a static fleet below the peak's need is judged the same way: capped at need[0]
    low = sla.plan_replicas(rates, MU, 0.1, 99, interval_s=60, provisioning_delay=600)
    assert low.violation_intervals == 2 and low.static_violation_intervals == 0


def test_resolved_miss_agrees_with_a_closed_form_down_to_its_resolution():
    """Deterministic service far shorter than RT: P(R > RT) = ρ^(r_max+1) exactly
    (a request is late only if its first r_max + 1 tries find busy backends).  Here
    r_max = ⌊(10 − 1)/4⌋ = 2 and ρ = 0.9/n: the share late runs from 0.73 to 4e-21.
    Down to the resolution the computed share is the closed form (its absolute
    error far below 1e-12); below it the raw 1 − P is rounding noise (0 for 7e-17,
    1.9e-15 for 1.86e-15) and ``resolved_miss`` says nan."""
    n = np.unique(np.round(np.logspace(0, 7, 60)))
    true = (0.9 / n) ** 3
    miss = sla.resolved_miss(sla.response_cdf(0.01, 0.9, 1.0, n, 0.001, 0.001, 0.002, 1e-6))
    big, small = true >= 10 * sla.MISS_RESOLUTION, true < sla.MISS_RESOLUTION / 10
    assert big.sum() > 25 and small.sum() > 10
    np.testing.assert_allclose(miss[big], true[big], rtol=1e-4)
    assert np.all(np.abs(miss[big] - true[big]) < sla.MISS_RESOLUTION / 100)
    assert np.isnan(miss[small]).all()
    assert np.isnan(sla.resolved_miss([1.0, 1 - 1e-16, 1 - 2e-13])).all()
    assert sla.resolved_miss(0.99) == pytest.approx(0.01)


def test_provisioning_delay_misses_the_sla_on_rising_load_only():
    rates = np.array([100.0, 100.0, 1200.0, 1200.0, 100.0])
    plan = sla.plan_replicas(rates, MU, 0.1, 99, interval_s=60, provisioning_delay=90)
    # 90 s = 2 intervals: the jump at interval 2 is served by the old count for 2 intervals.
    np.testing.assert_array_equal(plan.serving, [plan.needed[0]] * 4 + [plan.needed[4]])
    np.testing.assert_array_equal(plan.sla_met, [True, True, False, False, True])
    assert plan.late_requests > 0
    roomy = sla.plan_replicas(rates, MU, 0.1, 99, interval_s=60, headroom=0.5)
    assert np.all(roomy.needed >= sla.plan_replicas(rates, MU, 0.1, 99, interval_s=60).needed)


def test_timestamps_are_binned_per_interval():
    rng = np.random.default_rng(1)
    ts = np.sort(rng.uniform(0, 600, 30_000))
    rates = sla.trace_rates(ts, 60.0, kind="timestamps")
    assert rates.size == 10
    assert rates.sum() * 60 == ts.size
    np.testing.assert_allclose(rates, 50.0, rtol=0.1)


@pytest.mark.parametrize("trace,kind,message", [
    ([], "rate", "non-empty"),
    ([[1.0, 2.0]], "rate", "1-d"),
    ([1.0, np.nan], "rate", "non-finite value at index 1"),
    ([1.0, -2.0], "rate", "negative value at index 1"),
    ([0.0, 5.0, 3.0], "timestamps", "sorted"),
    (["a", "b"], "rate", "numbers"),
    ([1.0], "hourly", "kind"),
])
def test_malformed_trace_raises_naming_the_problem(trace, kind, message):
    with pytest.raises(ValueError, match=message):
        sla.plan_replicas(trace, MU, 0.1, 99, kind=kind)


# ------------------------------------------------------------ page helpers

@pytest.mark.parametrize("n,rho,p", [(1, 0.6, 99.0), (8, 0.85, 95.0), (20, 0.5, 99.9)])
def test_mmn_waiting_percentile_inverts_the_waiting_cdf(n, rho, p):
    lam = rho * n * MU
    t = sla.mmn_waiting_percentile(p, lam, MU, n)
    assert sla.mmn_waiting_cdf(t, lam, MU, n) == pytest.approx(p / 100, abs=1e-9) or \
        (t == 0.0 and sla.mmn_waiting_cdf(0.0, lam, MU, n) >= p / 100)
    assert np.isinf(sla.mmn_waiting_percentile(p, n * MU, MU, n))
    # M/M/1: P(W_q > t) = ρ e^(−(μ − λ)t).
    assert sla.mmn_waiting_percentile(99, 60.0, MU, 1) == pytest.approx(
        np.log(0.6 / 0.01) / (MU - 60.0))


def test_fewest_meeting_takes_the_first_n_on_the_grid():
    assert sla.fewest_meeting([9, 10, 11, 12], [0.9, 0.985, 0.992, 0.999], 99) == 11
    assert np.isinf(sla.fewest_meeting([9, 10], [0.5, 0.9], 99))
    with pytest.raises(ValueError, match="within"):
        sla.fewest_meeting([9, 10], [0.5], 99)


@pytest.mark.parametrize("kind", sla.SERVICE_LAWS)
def test_service_laws_have_the_requested_mean(kind):
    law = sla.service_law(kind, 0.01, sigma=0.8)
    mean = law if kind == "deterministic" else law.mean()
    assert mean == pytest.approx(0.01, rel=1e-12)
    if kind == "lognormal":
        assert law.std() == pytest.approx(0.01 * np.sqrt(np.expm1(0.64)), rel=1e-9)
    with pytest.raises(ValueError, match="kind"):
        sla.service_law("weibull", 0.01)


def test_diurnal_trace_follows_its_closed_form_and_is_seeded():
    flat = sla.diurnal_trace(500.0, hours=24, interval_s=600, amplitude=0.4, n_spikes=0,
                             noise=0.0, seed=1)
    t_h = np.arange(144) / 6
    np.testing.assert_allclose(flat, 500 * (1 - 0.4 * np.cos(2 * np.pi * (t_h - 3) / 24)))
    assert flat.mean() == pytest.approx(500.0)
    a = sla.diurnal_trace(500.0, seed=7)
    np.testing.assert_array_equal(a, sla.diurnal_trace(500.0, seed=7))
    assert a.size == 288 and np.all(a >= 0)
    spiky = sla.diurnal_trace(500.0, amplitude=0.0, n_spikes=1, spike_factor=3.0,
                              spike_minutes=15, noise=0.0, seed=3)
    assert np.sum(spiky == 1500.0) == 3 and np.sum(spiky == 500.0) == 285
    with pytest.raises(ValueError, match="amplitude"):
        sla.diurnal_trace(500.0, amplitude=1.5)


def test_simulated_percentiles_match_the_sorted_sample():
    r = sla.simulate_dispatch("central_queue", 60.0, EXP, 1, n_requests=20_000, seed=2)
    assert r.response_percentile(99) == pytest.approx(r.p99_response_s, rel=1e-2)
    assert r.fraction_within(r.response_percentile(50)) == pytest.approx(0.5, abs=1e-3)
    assert r.waiting_percentile(99) == pytest.approx(r.p99_waiting_s, rel=1e-2)


# ------------------------------------------------------------ helpers added in the split

def test_offered_load_utilization_and_stable_replicas():
    """a = λ/μ, ρ = a/n, and the fewest n with ρ < 1 is ⌊a⌋ + 1 (a whole a needs a + 1)."""
    assert sla.offered_load(900.0, 100.0) == 9.0
    np.testing.assert_allclose(sla.utilization(900.0, 100.0, [9, 10, 12]), [1.0, 0.9, 0.75])
    np.testing.assert_array_equal(sla.stable_replicas([0.0, 850.0, 900.0, 901.0], 100.0),
                                  [1.0, 9.0, 10.0, 10.0])
    assert sla.utilization(899.0, 100.0, sla.stable_replicas(899.0, 100.0)) < 1
    assert sla.utilization(np.inf, 100.0, 1) == np.inf


def test_units_convert_ms_and_hours():
    assert sla.s_from_ms(250.0) == 0.25 and sla.ms_from_s(0.25) == 250.0
    np.testing.assert_array_equal(sla.hours_from_s([1800.0, 7200.0]), [0.5, 2.0])


def test_service_cdf_and_sampler_read_a_law_back():
    """Deterministic: a step at s; exponential: 1 − e^(−x/mean); samples of the mean."""
    step = sla.service_cdf(0.01)
    np.testing.assert_array_equal(step(np.array([0.0, 0.00999, 0.01, 1.0])), [0, 0, 1, 1])
    np.testing.assert_allclose(sla.service_cdf(EXP)(0.01), 1 - np.exp(-1.0))
    sampler, mean = sla.service_sampler(EXP)
    draws = sampler(np.random.default_rng(1), 200_000)
    assert mean == pytest.approx(0.01) and draws.mean() == pytest.approx(0.01, rel=0.01)
    sampler, mean = sla.service_sampler(0.02)
    assert mean == 0.02 and np.all(sampler(np.random.default_rng(1), 5) == 0.02)


def test_replica_plan_costs_and_overload_by_hand():
    """Four 15-minute intervals at $3/h: cumulative costs by hand, and an overloaded
    interval where the serving replicas (a 15-minute boot) cannot carry the load."""
    plan = sla.plan_replicas([100.0, 100.0, 500.0, 100.0], 100.0, 0.5, 90, interval_s=900.0,
                             provisioning_delay=900.0, cost_per_gpu_hour=3.0)
    need = plan.needed
    np.testing.assert_allclose(plan.cumulative_cost, np.cumsum(need) * 0.25 * 3.0)
    np.testing.assert_allclose(plan.cumulative_static_cost, np.arange(1, 5) * need.max() * 0.75)
    assert plan.cumulative_cost[-1] == pytest.approx(plan.cost)
    assert plan.cumulative_static_cost[-1] == pytest.approx(plan.static_cost)
    np.testing.assert_allclose(plan.start_h, [0.0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(plan.end_h, [0.25, 0.5, 0.75, 1.0])
    assert plan.static_replicas == int(need.max()) and plan.interval_h == 0.25
    assert plan.serving[2] == need[1] < 5                 # still booting the extra replicas
    np.testing.assert_array_equal(plan.overloaded, [False, False, True, False])


def test_summary_is_read_off_the_records_after_the_warm_up():
    """simulate_dispatch = simulate_records (the same seed) summarised: n // 10 requests
    left out, then numpy's mean and (linear) percentiles of what remains."""
    kw = dict(policy="random_retry", lam=800.0, service=EXP, n=10, d1=2.5e-4, d2=2.5e-4,
              delta=5e-4, n_requests=20_000, seed=11)
    r = sla.simulate_dispatch(**kw)
    rec = sla.simulate_records(**kw)
    resp, wait = rec.response[2000:], rec.waiting[2000:]
    assert r.n_requests == 18_000
    assert r.mean_response_s == pytest.approx(resp.mean(), rel=1e-12)
    assert r.mean_waiting_s == pytest.approx(wait.mean(), rel=1e-12, abs=1e-15)
    assert [r.p50_response_s, r.p95_response_s, r.p99_response_s] == pytest.approx(
        np.percentile(resp, [50, 95, 99]), rel=1e-12)
    assert [r.p50_waiting_s, r.p99_waiting_s] == pytest.approx(np.percentile(wait, [50, 99]),
                                                               rel=1e-12, abs=1e-15)
    assert r.mean_attempts == pytest.approx(rec.attempts[2000:].mean())
    assert r.p_busy_first_try == pytest.approx(np.mean(rec.attempts[2000:] > 1))


def test_simulation_summary_speaks_the_shared_vocabulary():
    """The fields say their unit (s); the names of before (the shared vocabulary
    mean_latency, mean_wait, p50, p95, p99, ci95 and this result's own) still read the
    same numbers, each with a DeprecationWarning naming its new field."""
    r = sla.simulate_dispatch("central_queue", 600.0, EXP, 8, n_requests=5000, seed=3)
    assert r.p50_response_s <= r.p95_response_s <= r.p99_response_s and r.ci95_s > 0
    old_to_new = {"mean_latency": "mean_response_s", "mean_wait": "mean_waiting_s",
                  "p50": "p50_response_s", "p95": "p95_response_s", "p99": "p99_response_s",
                  "ci95": "ci95_s", "mean_response": "mean_response_s",
                  "mean_waiting": "mean_waiting_s", "ci95_waiting": "ci95_waiting_s",
                  "p50_response": "p50_response_s", "p95_response": "p95_response_s",
                  "p99_response": "p99_response_s", "p50_waiting": "p50_waiting_s",
                  "p99_waiting": "p99_waiting_s", "sorted_response": "sorted_response_s",
                  "sorted_waiting": "sorted_waiting_s"}
    for old, new in old_to_new.items():
        with pytest.warns(DeprecationWarning, match=rf"\.{new} "):
            value = getattr(r, old)
        assert value is getattr(r, new) or value == getattr(r, new), old


def test_old_public_names_still_work():
    """engine.sla.sim and engine.sla keep every public name of before the split (the old
    module engine.dispatch_sim: tests/test_old_names.py)."""
    from engine.sla import sim as sla_sim
    for name in ("simulate_dispatch", "simulate_records", "DispatchSimResult",
                 "DispatchRecords", "POLICIES", "BACKEND"):
        assert hasattr(sla_sim, name), name
    for name in ("response_cdf", "min_backends", "plan_replicas", "gpu_service_rate",
                 "simulate_dispatch", "service_law", "empirical_service", "SERVICE_LAWS",
                 "ReplicaPlan", "MAX_TRACE_INTERVALS", "DispatchSimResult", "erlang_c",
                 "mmn_response_cdf", "mmn_waiting_cdf", "mmn_waiting_percentile",
                 "mmn_response_percentile", "response_percentile", "waiting_percentile",
                 "retry_busy_probability", "erlang_c_min_servers", "fewest_meeting",
                 "diurnal_trace", "trace_rates"):
        assert hasattr(sla, name), name
