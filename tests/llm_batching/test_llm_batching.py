"""LLM batching strategies (Yang et al. §IV) against independent methods.

Expected values come from closed forms (order statistics of the uniform and
exponential laws, M/D/1, M/G/1, M/G/1-PS), a direct quadrature of eq 23, dense
truncated Markov chains built here entry by entry, Inoue's exact engine for
deterministic tokens, and simulation (4 sigma of the batch-means CI).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats
from scipy.stats import poisson

from engine import batching as bt
from engine import llm_batching as lb
from engine import presets
from engine.llm_batching.sim import simulate
from tests.reference import md1_mean_latency

K = (0.06, 0.126, 0.0003, 0.02269)           # presets/llm_batching/a100_llama2_7b.toml
UNIFORM = stats.uniform(0.0, 1000.0)         # Fig 5
LOGNORMAL = stats.lognorm(0.7, scale=np.exp(7.0))    # Figs 4, 6
TRUNCNORM = stats.truncnorm(-40.0, np.inf, loc=800.0, scale=20.0)   # Fig 3b


class PointLaw:
    """Every request has exactly ``l`` output tokens (duck-typed like a scipy law)."""

    def __init__(self, l):
        self.l = float(l)

    def ppf(self, u):
        return np.full(np.shape(u), self.l)

    isf = ppf

    def mean(self):
        return self.l

    def support(self):
        return (self.l, self.l)


def _within(sim_value, ci, exact):
    assert abs(sim_value - exact) < 4 * ci + 1e-9, (sim_value, ci, exact)


# ------------------------------------------------------------ E[L_b] (eq 23)

def test_expected_max_uniform_and_exponential_closed_forms():
    b = np.array([1, 2, 3, 10, 100, 1000, 10 ** 6])
    np.testing.assert_allclose(lb.expected_max_tokens(UNIFORM, b), 1000 * b / (b + 1), rtol=1e-9)
    harmonic = np.cumsum(1.0 / np.arange(1, 10 ** 6 + 1))[b - 1]      # E[max of b Exp(θ)] = θ H_b
    np.testing.assert_allclose(lb.expected_max_tokens(stats.expon(scale=500), b),
                               500 * harmonic, rtol=1e-9)


@pytest.mark.parametrize("dist", [LOGNORMAL, TRUNCNORM], ids=["lognormal", "truncnorm"])
def test_expected_max_matches_eq23_quadrature(dist):
    for b in (1, 8, 64):
        edges = dist.ppf([1e-300, 0.01, 0.5, 0.99]).tolist() + [dist.isf(1e-30)]
        ref = sum(integrate.quad(lambda x: x * b * dist.pdf(x) * dist.cdf(x) ** (b - 1),
                                 lo, hi, limit=400, epsabs=1e-10, epsrel=1e-12)[0]
                  for lo, hi in zip(edges[:-1], edges[1:]))
        assert lb.expected_max_tokens(dist, b) == pytest.approx(ref, rel=1e-7)


def test_chain_quadrature_of_the_batch_law_matches_eq23():
    """The nodes the dynamic chain mixes its Poisson laws over reproduce E[L_b] and E[L_b²]."""
    sizes = np.array([1, 16, 256])
    for dist in (LOGNORMAL, UNIFORM):
        x, w = lb.max_token_nodes(dist, sizes)
        np.testing.assert_allclose(x @ w, lb.expected_max_tokens(dist, sizes), rtol=1e-6)
    x, w = lb.max_token_nodes(LOGNORMAL, np.array([1]))
    assert (x ** 2) @ w == pytest.approx(LOGNORMAL.moment(2), rel=1e-5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=1, max_size=40), st.integers(1, 600))
def test_expected_max_of_a_sample_law_is_its_exact_finite_sum(counts, b):
    """A sample's law (step CDF): E[L_b] = Σ v_i (F_i^b − F_{i−1}^b) and E[L_b²] likewise,
    written out from the pmf of the maximum, P(L_b ≤ v_i) = F_i^b (the engine sums the
    tail form instead).  The quantile-grid trapezoids missed this by up to 0.4 %."""
    from engine.core.token_laws import EmpiricalTokens
    law = EmpiricalTokens.from_counts(counts)
    values, n = np.unique(counts, return_counts=True)
    F = np.cumsum(n) / len(counts)
    pmf_max = np.diff(np.concatenate([[0.0], F ** b]))
    m1, m2 = lb.max_token_moments(law, np.array([b]))
    assert m1[0] == pytest.approx(values @ pmf_max, rel=1e-10)
    assert m2[0] == pytest.approx((values ** 2.0) @ pmf_max, rel=1e-10)
    assert lb.expected_max_tokens(law, 1) == pytest.approx(np.mean(counts), rel=1e-12)


def test_expected_max_of_a_sample_law_against_sampled_maxima():
    """One value of 4000 among 99 ones: E[L_8] from 200,000 sampled batches."""
    from engine.core.token_laws import EmpiricalTokens
    counts = [1] * 99 + [4000]
    rng = np.random.default_rng(7)
    draws = rng.choice(counts, size=(200_000, 8)).max(axis=1)
    sem = draws.std() / math.sqrt(draws.size)
    assert abs(lb.expected_max_tokens(EmpiricalTokens.from_counts(counts), 8) - draws.mean()) \
        < 4 * sem


def test_expected_max_against_sampled_maxima():
    rng = np.random.default_rng(5)
    draws = LOGNORMAL.rvs(size=(200_000, 8), random_state=rng).max(axis=1)
    sem = draws.std() / np.sqrt(draws.size)
    assert abs(lb.expected_max_tokens(LOGNORMAL, 8) - draws.mean()) < 4 * sem


def test_batch_time_throughput_and_eq19():
    b = np.arange(1, 50)
    np.testing.assert_allclose(lb.batch_time(b, 300.0, K),
                               K[0] * b + K[1] + K[2] * b * 300 + K[3] * 300)
    m2 = 1000.0
    eq19 = K[0] * b + K[1] + K[2] * m2 * b ** 2 / (b + 1) + K[3] * m2 * b / (b + 1)
    np.testing.assert_allclose(lb.mean_batch_time(b, UNIFORM, K), eq19, rtol=1e-9)
    np.testing.assert_allclose(lb.throughput(b, UNIFORM, K), b / eq19, rtol=1e-9)      # eq 24
    assert np.all(eq19 <= (K[0] + K[2] * m2) * b + K[1] + K[3] * m2)                  # eq 20


def test_throughput_optimum_light_versus_heavy_tail():
    """Fig 3b: μ[b] increases for light tails; a heavy tail has an interior optimum."""
    b = np.arange(1, 1025)
    for dist in (UNIFORM, TRUNCNORM):
        assert np.all(np.diff(lb.throughput(b, dist, K)) > 0)
        assert lb.optimal_batch_size(dist, K, 1024) == 1024
    best = lb.optimal_batch_size(LOGNORMAL, K, 1024)
    assert 1 < best < 1024
    mu = lb.throughput(b, LOGNORMAL, K)
    assert mu[best - 1] == mu.max() and mu[-1] < mu[best - 1]


# ------------------------------------------------------------ fixed batching (M/D^b/1)

def _fixed_chain_wait(lam, b, h, n_states=400):
    """Mean wait of M/D^b/1 from the dense departure chain Q' = max(Q − b, 0) + A, and E[Q_d].

    Renewal reward per departure cycle: fill time (b − q)/λ with waiting area
    Σ_{j=q}^{b−1} j/λ when q < b, then a batch of H with area (q − b)^+ H + λH²/2.
    """
    a = lam * h
    p = np.zeros((n_states, n_states))
    pmf = poisson.pmf(np.arange(n_states), a)
    for q in range(n_states):
        base = max(q - b, 0)
        p[q, base:] = pmf[:n_states - base]
        p[q, -1] += 1 - p[q].sum()
    m = p.T - np.eye(n_states)
    m[-1] = 1
    rhs = np.zeros(n_states)
    rhs[-1] = 1
    pi = np.linalg.solve(m, rhs)
    q = np.arange(n_states)
    short = q < b
    fill_area = np.where(short, (b - 1 + q) * (b - q) / (2 * lam), 0.0)
    cycle = pi @ (h + np.where(short, (b - q) / lam, 0.0))
    area = pi @ (fill_area + np.maximum(q - b, 0) * h + lam * h * h / 2)
    return area / cycle / lam, pi @ q


@pytest.mark.parametrize("b", [1, 2, 5, 16])
@pytest.mark.parametrize("load", [0.2, 0.7, 0.95])
def test_fixed_wait_matches_dense_departure_chain(b, load):
    dist = LOGNORMAL if b > 4 else UNIFORM
    h = float(lb.mean_batch_time(b, dist, K))
    lam = load * b / h
    ref, eq_d = _fixed_chain_wait(lam, b, h)
    assert lb.fixed_batch_wait(lam, b, dist, K) == pytest.approx(ref, rel=1e-9)
    # eq 25 with the exact roots is E[Q_d]/λ; the printed 20-term series comes close
    a = lam * h
    roots = lb.fixed_batch_roots_eq25(lam, b, dist, K)[1] if b > 1 else np.zeros(0)
    eq25_exact_roots = ((b - (b - a) ** 2) / (2 * (b - a)) + np.sum(1 / (1 - roots)).real) / lam
    assert eq25_exact_roots == pytest.approx(eq_d / lam, rel=1e-9)
    assert lb.fixed_batch_wait_eq25(lam, b, dist, K, terms=400) == pytest.approx(eq_d / lam,
                                                                               rel=1e-4)
    assert lb.fixed_batch_wait_eq25(lam, b, dist, K) == pytest.approx(eq_d / lam, rel=2e-3)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.floats(0.05, 0.95), st.floats(0.5, 200.0))
def test_fixed_wait_matches_dense_chain_property(b, load, l):
    h = float(lb.mean_batch_time(b, PointLaw(l), K))
    lam = load * b / h
    ref, _ = _fixed_chain_wait(lam, b, h, n_states=300)
    assert lb.fixed_batch_wait(lam, b, PointLaw(l), K) == pytest.approx(ref, rel=1e-8)


def test_fixed_b1_is_md1_and_eq25_is_its_sojourn():
    h = float(lb.mean_batch_time(1, UNIFORM, K))
    lam = np.linspace(0.01, 0.99, 30) / h
    np.testing.assert_allclose(lb.fixed_batch_wait(lam, 1, UNIFORM, K),
                               md1_mean_latency(lam, h) - h, rtol=1e-12)
    np.testing.assert_allclose(lb.fixed_batch_wait_eq25(lam, 1, UNIFORM, K),
                               md1_mean_latency(lam, h), rtol=1e-12)


def test_fixed_roots_solve_the_characteristic_equation():
    b = 12
    h = float(lb.mean_batch_time(b, LOGNORMAL, K))
    for load in (0.05, 0.5, 0.99):
        lam = load * b / h
        series, exact = lb.fixed_batch_roots_eq25(lam, b, LOGNORMAL, K)
        assert np.all(np.abs(exact) < 1)
        np.testing.assert_allclose(exact ** b, np.exp(lam * h * (exact - 1)), atol=1e-12)
        assert len(set(np.round(exact, 8))) == b - 1
        if load < 0.5:
            np.testing.assert_allclose(series, exact, atol=1e-10)


@pytest.mark.parametrize("b,load", [(4, 0.3), (8, 0.8)])
def test_fixed_wait_and_eq25_against_simulation(b, load):
    """The exact wait includes the fill time; eq 25 measures E[Q_d]/λ, not the wait."""
    h = float(lb.mean_batch_time(b, LOGNORMAL, K))
    lam = load * b / h
    r = simulate("fixed", lam, LOGNORMAL, K, b=b, n_jobs=100_000, seed=3, batch_time="mean",
                 return_records=True)
    exact = float(lb.fixed_batch_wait(lam, b, LOGNORMAL, K))
    _within(r.mean_wait_s, r.ci95_wait_s, exact)
    _within(r.mean_sojourn_s, r.ci95_sojourn_s, exact + h)
    rec = r.records
    started = np.sort(rec.start_s[np.isfinite(rec.start_s)])
    left = (np.searchsorted(rec.arrival_s, rec.batch_end_s, side="right")
            - np.searchsorted(started, rec.batch_end_s, side="left"))[rec.batch_end_s.size // 10:]
    printed = float(lb.fixed_batch_wait_eq25(lam, b, LOGNORMAL, K))
    groups = np.array_split(left, 20)
    sem = np.std([g.mean() for g in groups], ddof=1) / np.sqrt(20)
    assert abs(left.mean() - printed * lam) < 4 * sem + 0.01 * printed * lam
    assert abs(printed - r.mean_wait_s) > 10 * r.ci95_wait_s       # eq 25 is not the wait


def test_fixed_unstable_and_zero_load():
    b = 8
    mu = float(lb.throughput(b, LOGNORMAL, K))
    out = lb.fixed_batch_wait(np.array([0.0, mu, 2 * mu]), b, LOGNORMAL, K)
    assert np.all(np.isinf(out))
    assert lb.fixed_batch_wait(0.0, 1, LOGNORMAL, K) == 0.0
    assert lb.stability_limit("fixed", LOGNORMAL, K, b=b) == pytest.approx(mu)


# ------------------------------------------------------------ dynamic batching

@pytest.mark.parametrize("b_max", [None, 6])
@pytest.mark.parametrize("load", [0.3, 0.7])
def test_dynamic_with_deterministic_tokens_is_inoue(b_max, load):
    l = 400.0
    alpha, tau0 = K[0] + K[2] * l, K[1] + K[3] * l
    lam = load * bt.capacity(alpha, tau0, b_max)
    sol = lb.dynamic_solution(lam, PointLaw(l), K, b_max)
    assert sol.mean_wait_s == pytest.approx(bt.mean_wait(lam, alpha, tau0, b_max), rel=1e-8)
    assert sol.mean_sojourn_s == pytest.approx(bt.mean_latency(lam, alpha, tau0, b_max), rel=1e-8)
    assert sol.mean_batch_size == pytest.approx(bt.mean_batch_size(lam, alpha, tau0, b_max),
                                                rel=1e-8)
    assert sol.utilization == pytest.approx(bt.utilization(lam, alpha, tau0, b_max), rel=1e-8)


@pytest.mark.parametrize("dist,b_max,load", [(UNIFORM, None, 0.5), (UNIFORM, 8, 0.8),
                                             (LOGNORMAL, 4, 0.7)])
def test_dynamic_exact_against_simulation(dist, b_max, load):
    lam = load * lb.stability_limit("dynamic", dist, K, b_max=b_max)
    sol = lb.dynamic_solution(lam, dist, K, b_max)
    r = simulate("dynamic", lam, dist, K, b_max=b_max, n_jobs=150_000, seed=21)
    _within(r.mean_wait_s, r.ci95_wait_s, sol.mean_wait_s)
    _within(r.mean_sojourn_s, r.ci95_sojourn_s, sol.mean_sojourn_s)
    assert r.mean_batch_size == pytest.approx(sol.mean_batch_size, rel=0.03)
    assert r.utilization == pytest.approx(sol.utilization, abs=0.02)


def test_dynamic_bounds_and_which_quantity_eq16_bounds():
    """Inoue's φ(α1, β1) bounds wait + processing; the printed eq 16 bounds the wait only."""
    a1, b1 = lb.linear_bound_coefficients(UNIFORM, K)
    assert (a1, b1) == pytest.approx((K[0] + K[2] * 1000, K[1] + K[3] * 1000))
    for load in (0.2, 0.6):
        lam = load / a1
        sol = lb.dynamic_solution(lam, UNIFORM, K)
        assert sol.mean_sojourn_s <= lb.dynamic_wait_bound(lam, UNIFORM, K)
        assert sol.mean_wait_s <= lb.yang_phi(lam, a1, b1)
    # by simulation, on the deterministic batch time α b + β of eq 16
    alpha, beta = 0.1438, 1.8874
    for rho in (0.3, 0.8):
        lam = rho / alpha
        r = simulate("dynamic", lam, PointLaw(0.0), (alpha, beta, 0.0, 0.0), n_jobs=100_000,
                     seed=4)
        y = float(lb.yang_phi(lam, alpha, beta))
        assert r.mean_wait_s - 4 * r.ci95_wait_s <= y < r.mean_sojourn_s - 4 * r.ci95_sojourn_s
        assert float(bt.phi(lam, alpha, beta)) >= r.mean_sojourn_s - 4 * r.ci95_sojourn_s
    assert np.isinf(lb.dynamic_wait_bound(0.01, LOGNORMAL, K))


@settings(max_examples=120, deadline=None)
@given(st.floats(0.01, 2.0), st.floats(0.0, 5.0), st.floats(0.0, 0.99))
def test_eq16_bounds_the_exact_wait_not_the_latency(alpha, beta, rho):
    lam = rho / alpha
    wait = bt.mean_wait(lam, alpha, beta)
    assert wait <= lb.yang_phi0(lam, alpha, beta) * (1 + 1e-9) + 1e-12
    assert wait <= lb.yang_phi1(lam, alpha, beta) * (1 + 1e-9) + 1e-12
    assert lb.yang_phi(lam, alpha, beta) < bt.mean_latency(lam, alpha, beta)


def test_uncapped_dynamic_is_unstable_for_heavy_tails():
    limit = lb.stability_limit("dynamic", LOGNORMAL, K)
    assert limit < lb.throughput(64, LOGNORMAL, K) / 2
    assert np.isinf(lb.dynamic_wait(1.5 * limit, LOGNORMAL, K))
    assert np.isfinite(lb.dynamic_wait(1.5 * limit, LOGNORMAL, K, b_max=64))
    # the limit is where μ[b] has fallen back to λ beyond its peak, by b = B_HORIZON
    grid = np.unique(np.logspace(0, 6, 200).astype(int))
    mu = lb.throughput(grid, LOGNORMAL, K)
    assert limit == pytest.approx(mu[np.argmax(mu):].min(), rel=1e-3)
    # bounded law: the limit is 1/(k1 + k3 m2), the slope of eq 20
    assert lb.stability_limit("dynamic", UNIFORM, K) == pytest.approx(1 / (K[0] + K[2] * 1000),
                                                                      rel=1e-3)
    w = lb.dynamic_wait(np.array([0.0, 0.5, 10.0]), UNIFORM, K)
    assert w[0] == 0 and np.isfinite(w[1]) and np.isinf(w[2])


# ------------------------------------------------------------ elastic and continuous

def _mg1(lam, s1, s2):
    """M/G/1 FCFS (Pollaczek-Khinchine) mean wait."""
    return lam * s2 / (2 * (1 - lam * s1))


@pytest.mark.parametrize("strategy", ["dynamic", "elastic", "continuous"])
def test_one_request_at_a_time_is_mg1(strategy):
    """b_max = 1: M/G/1 FCFS.  Eq 18 (dynamic, elastic): S = k1 + k2 + (k3 + k4) N.
    Continuous batching runs on the serving simulator, vLLM's convention: a reply of
    ⌈N⌉ tokens is one prompt step (k1 + k2, the first token) and ⌈N⌉ − 1 decode steps,
    so S = k1 + k2 + (k3 + k4)(⌈N⌉ − 1), ⌈N⌉ − 1 uniform on {0, …, 999}."""
    step = K[2] + K[3]
    if strategy == "continuous":
        s1 = K[0] + K[1] + step * 499.5
        s2 = s1 ** 2 + step ** 2 * (1000 ** 2 - 1) / 12
    else:
        s1 = K[0] + K[1] + step * UNIFORM.mean()
        s2 = s1 ** 2 + step ** 2 * UNIFORM.var()
    lam = 0.7 / s1
    r = simulate(strategy, lam, UNIFORM, K, b_max=1, n_jobs=60_000, seed=8)
    _within(r.mean_wait_s, r.ci95_wait_s, _mg1(lam, s1, s2))
    _within(r.mean_sojourn_s, r.ci95_sojourn_s, _mg1(lam, s1, s2) + s1)


def test_elastic_beats_dynamic_on_the_same_arrivals():
    lam = 0.6 * lb.stability_limit("dynamic", UNIFORM, K)
    dyn = simulate("dynamic", lam, UNIFORM, K, n_jobs=40_000, seed=9, return_records=True)
    ela = simulate("elastic", lam, UNIFORM, K, n_jobs=40_000, seed=9, return_records=True)
    np.testing.assert_array_equal(dyn.records.arrival_s, ela.records.arrival_s)
    np.testing.assert_array_equal(dyn.records.tokens, ela.records.tokens)
    assert ela.mean_sojourn_s < dyn.mean_sojourn_s - 4 * (ela.ci95_sojourn_s + dyn.ci95_sojourn_s)
    assert ela.mean_wait_s < dyn.mean_wait_s
    # eq 26: a batch ends k1 b + k2 + k3 Σn + k4 max n after it starts
    rec = ela.records
    first = np.concatenate([[0], np.cumsum(rec.batch_size)[:-1]])
    sums = np.add.reduceat(rec.tokens, first)
    longest = np.maximum.reduceat(rec.tokens, first)
    eq26 = K[0] * rec.batch_size + K[1] + K[2] * sums + K[3] * longest
    np.testing.assert_allclose(rec.batch_end_s - rec.batch_start_s, eq26, rtol=1e-9)


def test_continuous_without_overheads_is_processor_sharing():
    """k1 = k2 = k4 = 0, no KV limit: M/G/1-PS with service k3 (⌈N⌉ − 1) (a decode step
    of R requests takes k3·R and gives each a token; the prompt step, which emits the
    first token, takes no time), E[T] = E[S]/(1 − ρ) with E[⌈N⌉] = Σ_{m ≥ 0} P(N > m).
    An arrival waits for the decode step in progress (k3·R, R requests in the system at
    its arrival), so E[wait] ≤ k3·λ·E[T] (PASTA and Little's law)."""
    k = (1e-300, 0.0, 0.001, 0.0)
    ceil_mean = LOGNORMAL.sf(np.arange(0, 200_000)).sum()
    es = 0.001 * (ceil_mean - 1)
    lam = 0.6 / es
    r = simulate("continuous", lam, LOGNORMAL, k, n_jobs=80_000, seed=10)
    _within(r.mean_sojourn_s, r.ci95_sojourn_s, es / (1 - 0.6))
    assert 0 < r.mean_wait_s <= 0.001 * lam * r.mean_sojourn_s


def test_continuous_and_elastic_are_both_work_conserving():
    """k2 = k4 = 0: both serve each request's work without idling, elastic k1 + k3 N
    (eq 26), continuous k1 + k3 (⌈N⌉ − 1) (vLLM's convention: the prompt step emits the
    first token), so each one's last departure is the Lindley recursion over its work,
    and both have the stability limit 1/(k1 + k3 E[N])."""
    k = (0.06, 0.0, 0.0003, 0.0)
    limit = lb.stability_limit("elastic", UNIFORM, k)
    assert limit == pytest.approx(1 / (0.06 + 0.0003 * 500))
    assert lb.stability_limit("continuous", UNIFORM, k) == pytest.approx(limit)
    lam = 0.8 * limit
    ela = simulate("elastic", lam, UNIFORM, k, n_jobs=20_000, seed=12, return_records=True)
    con = simulate("continuous", lam, UNIFORM, k, n_jobs=20_000, seed=12, return_records=True)
    np.testing.assert_array_equal(con.records.arrival_s, ela.records.arrival_s)
    np.testing.assert_array_equal(con.records.tokens, ela.records.tokens)

    def last_departure(work):
        t = 0.0
        for a, s in zip(ela.records.arrival_s, work):
            t = max(t, a) + s
        return t

    tokens = ela.records.tokens
    assert ela.records.finish_s.max() == pytest.approx(
        last_departure(0.06 + 0.0003 * tokens), rel=1e-9)
    assert con.records.finish_s.max() == pytest.approx(
        last_departure(0.06 + 0.0003 * (np.maximum(np.ceil(tokens), 1) - 1)), rel=1e-9)
    assert con.utilization == pytest.approx(lam * (0.06 + 0.0003 * 499.5), abs=0.03)
    # at light load both serve requests alone: sojourn ≈ k1 + k3 E[N] (continuous:
    # k1 + k3 (E[⌈N⌉] − 1) = k1 + k3·499.5)
    for strategy, single in (("elastic", 0.06 + 0.0003 * 500),
                             ("continuous", 0.06 + 0.0003 * 499.5)):
        r = simulate(strategy, 0.01 * limit, UNIFORM, k, n_jobs=5_000, seed=13)
        assert r.mean_sojourn_s == pytest.approx(single, rel=0.05)


def test_continuous_one_request_alone_is_a_prompt_step_and_its_decode_steps():
    """Requests far apart: each is alone, its prompt step k1 + k2 emits the first token,
    then ⌈N⌉ − 1 decode steps of k3 + k4 (one token fewer than eq 18's k1 + k2 + (k3 + k4)·N
    for a whole N: vLLM's convention); it starts at its arrival.  Two requests arriving
    together share one prompt step (2·k1 + k2) and then decode together (2·k3 + k4)."""
    times = np.array([0.0, 1000.0, 2000.0])
    for n in (120.0, 119.3, 0.0):
        law = PointLaw(n)
        r = simulate("continuous", None, law, K, arrivals=times, warmup_jobs=0,
                     return_records=True)
        replies = max(math.ceil(n), 1)
        alone = K[0] + K[1] + (replies - 1) * (K[2] + K[3])
        np.testing.assert_allclose(r.records.finish_s - times, alone, rtol=1e-12)
        np.testing.assert_allclose(r.records.start_s, times, atol=1e-9)
        assert r.mean_wait_s == pytest.approx(0.0, abs=1e-9)
        if n == 120.0:
            eq18 = float(lb.batch_time(1, 120, K))
            assert alone == pytest.approx(eq18 - (K[2] + K[3]), rel=1e-12)
    r = simulate("continuous", None, PointLaw(50), K, arrivals=np.array([5.0, 5.0]),
                 warmup_jobs=0, return_records=True)
    np.testing.assert_allclose(r.records.start_s, 5.0, rtol=1e-12)
    np.testing.assert_allclose(r.records.finish_s,
                               5.0 + 2 * K[0] + K[1] + 49 * (2 * K[2] + K[3]), rtol=1e-12)


def test_continuous_runs_on_the_serving_simulator():
    """The strategy is ``simulate_serving`` with eq 18 mapped onto the step cost (prompt
    step k1·j + k2, decode step k3·R + k4, ms) and vLLM's scheduler without chunked
    prefill: the same finishes, and the same mean queueing time (send to the first
    scheduling) as the serving simulator's own where no request is preempted."""
    from engine.llm_batching.sim import continuous_serving
    from engine.llm_serving import simulate_serving
    kv = dict(kv_capacity_tokens=62720.0, prompt_tokens=256.0)
    r = simulate("continuous", 0.3, LOGNORMAL, K, n_jobs=6_000, seed=16, return_records=True,
                 **kv)
    rec = r.records
    cost, scheduler, prompt, replies = continuous_serving(K, rec.tokens, None, **kv)
    assert (prompt, scheduler.kv_cache_tokens, scheduler.block_size) == (256, 62720, 1)
    assert not scheduler.chunked_prefill and not scheduler.prefix_caching
    assert scheduler.max_num_seqs == 10 ** 6 and scheduler.max_num_batched_tokens == 10 ** 8
    np.testing.assert_array_equal(replies, np.maximum(np.ceil(rec.tokens), 1))
    for j, r_ in ((1, 0), (4, 0), (0, 1), (0, 32)):
        assert cost.step_ms(j * prompt, 0, r_, 0) == pytest.approx(
            1e3 * ((K[0] * j + K[1]) if j else (K[2] * r_ + K[3])), rel=1e-12)
    served = simulate_serving(cost, scheduler, input_tokens=prompt, output_tokens=replies,
                              arrival_s=rec.arrival_s, warmup_requests=600, return_records=True)
    assert served.preempted_fraction == 0
    np.testing.assert_allclose(served.records.finish_s, rec.finish_s, rtol=1e-12)
    assert r.mean_wait_s == pytest.approx(served.queue_ms.mean / 1e3, rel=1e-9)
    assert r.mean_sojourn_s == pytest.approx(served.e2e_ms.mean / 1e3, rel=1e-9)
    # prompt 0 is modelled as a 1-token prompt with the whole k1 per request
    cost0, _, prompt0, _ = continuous_serving(K, rec.tokens[:3])
    assert prompt0 == 1 and cost0.prompt_ms(1) == pytest.approx(1e3 * (K[0] + K[1]))


def test_continuous_kv_capacity_limits_concurrency():
    """Every running request holds at least its prompt (256 tokens) in the KV cache, so
    at most cap/256 run at once.  vLLM's scheduler admits a request when its prompt fits
    and preempts the newest when the replies outgrow the cache (the fluid model before
    reserved prompt + N up front): the cache never overflows, and requests are preempted."""
    from engine.llm_batching.sim import continuous_serving
    from engine.llm_serving import simulate_serving
    p = presets.llm_batch_time_presets()["a100_llama2_7b"]
    lam, cap = 0.3, 4000.0
    free = simulate("continuous", lam, UNIFORM, p.k, n_jobs=4_000, seed=14)
    tight = simulate("continuous", lam, UNIFORM, p.k, n_jobs=4_000, seed=14,
                     kv_capacity_tokens=cap, prompt_tokens=256, return_records=True)
    assert tight.mean_batch_size <= cap / 256
    assert tight.mean_wait_s > free.mean_wait_s and tight.mean_sojourn_s > free.mean_sojourn_s
    rec = tight.records
    cost, scheduler, prompt, replies = continuous_serving(p.k, rec.tokens, None, cap, 256)
    served = simulate_serving(cost, scheduler, input_tokens=prompt, output_tokens=replies,
                              arrival_s=rec.arrival_s, timeline_steps=10 ** 6)
    assert served.kv_peak_fraction <= 1 and served.preempted_fraction > 0
    assert served.timeline.running.max() <= cap // 256
    assert served.timeline.kv_blocks.max() <= cap


def test_continuous_request_beyond_the_kv_cache_still_runs():
    """A request whose prompt and reply exceed the whole KV cache (vLLM would refuse it)
    runs: the cache is raised to the largest request, as the fluid model ran it alone."""
    from engine.llm_batching.sim import continuous_serving
    _, scheduler, _, _ = continuous_serving(K, np.array([10.0, 5000.0]), None, 1000.0, 256)
    assert scheduler.kv_cache_tokens == 256 + 5000 - 1
    r = simulate("continuous", 0.01, PointLaw(5000), K, n_jobs=20, seed=1,
                 kv_capacity_tokens=1000.0, prompt_tokens=256)
    assert np.isfinite(r.mean_sojourn_s)


def test_numba_and_plain_python_loops_agree():
    # (continuous batching runs on the serving simulator, compiled for either backend)
    for strategy in ("dynamic", "elastic"):
        args = (strategy, 0.5, UNIFORM, K)
        fast = lb.simulate(*args, b_max=16, n_jobs=3_000, seed=15, kv_capacity_tokens=8000)
        slow = simulate(*args, b_max=16, n_jobs=3_000, seed=15, kv_capacity_tokens=8000,
                        backend="numpy")
        assert fast.mean_sojourn_s == pytest.approx(slow.mean_sojourn_s, rel=1e-12)
    fast = lb.simulate("fixed", 0.1, UNIFORM, K, b=3, n_jobs=3_000, seed=15)
    slow = simulate("fixed", 0.1, UNIFORM, K, b=3, n_jobs=3_000, seed=15, backend="numpy")
    assert fast.mean_wait_s == pytest.approx(slow.mean_wait_s, rel=1e-12)


# ------------------------------------------------------------ the paper's findings

def test_paper_findings_light_and_heavy_tails():
    """Light tails: uncapped dynamic beats fixed; heavy tails: a finite b_max wins; elastic
    beats dynamic."""
    light = lb.compare_strategies(0.7, UNIFORM, K, n_jobs=8_000, seed=1)
    assert light["dynamic"].mean_sojourn_s < light["fixed"].mean_sojourn_s
    assert light["elastic"].mean_sojourn_s < light["dynamic"].mean_sojourn_s
    lam = 1.5 * lb.stability_limit("dynamic", LOGNORMAL, K)
    heavy = lb.compare_strategies(lam, LOGNORMAL, K, n_jobs=8_000, seed=1)
    assert math.isinf(heavy["dynamic"].mean_sojourn_s)
    assert math.isfinite(heavy["dynamic_capped"].mean_sojourn_s)
    assert heavy["elastic"].mean_sojourn_s < heavy["dynamic_capped"].mean_sojourn_s


# ------------------------------------------------------------ preset and arguments

def test_preset_matches_table1_fit(tmp_path):
    p = presets.llm_batch_time_presets()["a100_llama2_7b"]
    out = np.array([128, 256, 512, 1024.0])
    secs = np.array([2.91, 5.88, 12.63, 23.47])                   # Table I, 128 input tokens
    slope, intercept = np.polyfit(out, secs, 1)
    k1, k2, k3, k4 = p.k
    assert k3 + k4 == pytest.approx(slope, abs=1e-5)
    assert k1 + k2 == pytest.approx(intercept, abs=1e-3)
    assert p.kv_capacity_tokens == 49 * 1280
    bad = tmp_path / "bad.toml"
    bad.write_text((presets.LLM_BATCH_TIME_DIR / "a100_llama2_7b.toml").read_text()
                   .replace("k2_s = 0.126", "k2_s = -1"))
    with pytest.raises(ValueError, match="k2_s"):
        presets.load_llm_batch_time(bad)
    bad.write_text('id = "x"\nname = "x"\nsource = "x"\nk1_s_per_request = 0.1\nk2_s = 0\n'
                   'k3_s_per_token_per_request = 0\nk4_s_per_token = 0\nspeed = 3\n')
    with pytest.raises(ValueError, match="speed"):
        presets.load_llm_batch_time(bad)


@pytest.mark.parametrize("call,name", [
    (lambda: lb.batch_time(1, 10, (0.0, 0, 0, 0)), "k1"),
    (lambda: lb.batch_time(1, 10, (0.1, -1, 0, 0)), "k2"),
    (lambda: lb.batch_time(1, 10, (0.1, 0, 0)), "k"),
    (lambda: lb.batch_time(0, 10, K), "b"),
    (lambda: lb.batch_time(1.5, 10, K), "b"),
    (lambda: lb.batch_time(1, -1, K), "l"),
    (lambda: lb.fixed_batch_wait(-1.0, 2, UNIFORM, K), "lam"),
    (lambda: lb.expected_max_tokens(stats.norm(0, 1), 2), "dist"),
    (lambda: lb.expected_max_tokens("uniform", 2), "dist"),
    (lambda: lb.dynamic_wait(0.1, UNIFORM, K, b_max=0), "b_max"),
    (lambda: simulate("greedy", 0.1, UNIFORM, K), "strategy"),
    (lambda: simulate("fixed", 0.1, UNIFORM, K), "b"),
    (lambda: simulate("continuous", 0.1, UNIFORM, K, kv_capacity_tokens=0), "kv_capacity"),
    (lambda: lb.stability_limit("greedy", UNIFORM, K), "strategy"),
])
def test_invalid_arguments_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_broadcasting():
    lam = np.linspace(0.01, 0.3, 5)[:, None]
    b = np.array([1, 2, 8])
    out = lb.fixed_batch_wait(lam, b, LOGNORMAL, K)
    assert out.shape == (5, 3)
    for j, size in enumerate(b):
        np.testing.assert_allclose(out[:, j], lb.fixed_batch_wait(lam[:, 0], size, LOGNORMAL, K))
    assert np.ndim(lb.expected_max_tokens(UNIFORM, 4)) == 0
    assert lb.dynamic_wait(np.array([[0.1, 0.2]]), UNIFORM, K).shape == (1, 2)


def test_recommended_b_max_is_the_best_solved_candidate():
    from engine.core import token_laws as tl
    k = (0.06, 0.126, 0.0003, 0.02269)
    dist = tl.lognormal(7.0, 0.7)
    lam = 0.05
    b, soj = lb.recommended_b_max(lam, dist, k, candidates=(1, 4, 16))
    direct = {c: lb.dynamic_solution(lam, dist, k, c).mean_sojourn_s for c in (4, 16)}
    assert lam > float(lb.throughput(1, dist, k)) * 0.9          # b_max = 1 is skipped
    assert b == min(direct, key=direct.get) and soj == pytest.approx(direct[b])
    assert lb.recommended_b_max(10.0, dist, k, candidates=(1, 2)) == (0, np.inf)


def test_best_strategy_picks_the_smallest_finite_latency():
    out = lb.best_strategy({"a": [1.0, np.inf, 5.0, np.nan], "b": [2.0, 3.0, 4.0, np.inf]})
    assert out == ["a", "b", "b", ""]
    assert lb.best_strategy({}) == []


def test_dynamic_solution_state_ceiling():
    from engine.core import token_laws as tl
    k = (0.06, 0.126, 0.0003, 0.02269)
    dist = tl.lognormal(7.0, 0.7)
    full = lb.dynamic_solution(0.09, dist, k, 64)
    assert full.n_states > 64
    short = lb.dynamic_solution(0.09, dist, k, 64, max_states=64)
    assert short.stable and not short.converged and short.mean_sojourn_s == np.inf
    assert lb.dynamic_solution(0.09, dist, k, 64, max_states=full.n_states) == full
    with pytest.raises(ValueError, match="max_states"):
        lb.dynamic_solution(0.09, dist, k, 64, max_states=10)


# ------------------------------------------------------------ the package's curves and answers

def test_batch_size_curve_uniform_closed_form():
    """E[L_b] = m·b/(b + 1) for uniform(0, m), so μ[b] = b/(k1·b + k2 + (k3·b + k4)·m·b/(b+1))."""
    k1, k2, k3, k4 = K
    curve = lb.batch_size_curve(UNIFORM, K, 64)
    b = np.arange(1, 65)
    mu = b / (k1 * b + k2 + (k3 * b + k4) * 1000 * b / (b + 1))
    np.testing.assert_allclose(curve.expected_max_tokens, 1000 * b / (b + 1), rtol=1e-9)
    np.testing.assert_allclose(curve.throughput_per_s, mu, rtol=1e-9)
    assert curve.b_throughput_opt == b[np.argmax(mu)]
    assert curve.peak_throughput_per_s == pytest.approx(mu.max(), rel=1e-9)
    assert curve.mean_tokens == pytest.approx(500.0)


def test_fixed_curves_at_b1_are_md1_and_the_bound_is_inoue_phi():
    """b = 1: M/D/1 with H(1, E[N]); the bound is Inoue's φ with α1, β1 of eq 20."""
    lam = lb.load_grid(0.05, 10)
    np.testing.assert_allclose(lam, np.linspace(0.005, 0.05, 10))
    fc = lb.fixed_curves(lam, 1, UNIFORM, K)
    h = K[0] + K[1] + (K[2] + K[3]) * 500.0
    np.testing.assert_allclose(fc.sojourn_s, md1_mean_latency(lam, h), rtol=1e-9)
    a1, b1 = K[0] + K[2] * 1000, K[1] + K[3] * 1000
    np.testing.assert_allclose(fc.dynamic_bound_s, bt.phi(lam, a1, b1), rtol=1e-12)
    assert np.all(np.isinf(lb.fixed_curves(lam, 1, LOGNORMAL, K).dynamic_bound_s))


def test_strategy_limits_closed_forms():
    """Elastic uncapped 1/(k1 + k3·E[N]); continuous with no KV limit the same;
    fixed and capped μ[b] (eq 24 with E[L_b] = m·b/(b + 1))."""
    k1, k2, k3, k4 = K
    lims = lb.strategy_limits(UNIFORM, K, 8, 16)
    mu = lambda b: b / (k1 * b + k2 + (k3 * b + k4) * 1000 * b / (b + 1))   # noqa: E731
    assert lims["elastic"] == pytest.approx(1 / (k1 + k3 * 500))
    assert lims["continuous"] == pytest.approx(1 / (k1 + k3 * 500))
    assert lims["fixed"] == pytest.approx(mu(8)) and lims["capped"] == pytest.approx(mu(16))
    assert lims["dynamic"] == lb.stability_limit("dynamic", UNIFORM, K)


def test_prefer_simulated_and_best_strategy():
    exact = {"fixed": np.array([1.0, 2.0, np.inf]), "capped": np.array([3.0, 1.0, np.inf])}
    sim = {"capped": np.array([np.nan, 0.5, np.nan]), "elastic": np.array([0.5, np.nan, 9.0])}
    merged = lb.prefer_simulated(exact, sim)
    np.testing.assert_array_equal(merged["capped"], [3.0, 0.5, np.inf])
    np.testing.assert_array_equal(merged["fixed"], exact["fixed"])
    assert lb.best_strategy(merged) == ["elastic", "capped", "elastic"]
    assert lb.prefer_simulated(exact, None) == exact


def test_simulation_summary_vocabulary():
    """mean_latency, ci95, p50, p95, p99 are the sojourn's, from the records (after warm-up)."""
    r = simulate("dynamic", 0.05, UNIFORM, K, b_max=8, n_jobs=5000, seed=3, return_records=True)
    rec = r.records
    soj = (rec.finish_s - rec.arrival_s)[500:]
    assert r.mean_latency_s == r.mean_sojourn_s == pytest.approx(soj.mean(), rel=1e-12)
    assert r.ci95_s == r.ci95_sojourn_s
    np.testing.assert_allclose([r.p50_s, r.p95_s, r.p99_s], np.percentile(soj, [50, 95, 99]),
                               rtol=1e-12)
    assert r.p99_s == r.p99_sojourn_s
    sol = lb.dynamic_solution(0.05, UNIFORM, K, 8)
    assert sol.mean_latency_s == sol.mean_sojourn_s


def test_a_strategy_comparison_reads_by_key_and_under_its_old_keys():
    """compare_strategies' answers (StrategyLatency) carry the exact solvers' numbers in
    seconds, read as attributes or by key as the dicts of before; the keys of before
    (mean_wait, mean_sojourn) read the same numbers with a DeprecationWarning."""
    out = lb.compare_strategies(0.05, UNIFORM, K, b=4, n_jobs=2000, seed=1)
    dyn, fixed = out["dynamic"], out["fixed"]
    sol = lb.dynamic_solution(0.05, UNIFORM, K)
    assert (dyn.mean_wait_s, dyn.mean_sojourn_s, dyn.b, dyn.method) == (
        sol.mean_wait_s, sol.mean_sojourn_s, math.inf, "exact")
    assert fixed.mean_sojourn_s == float(lb.fixed_batch_sojourn(0.05, 4, UNIFORM, K))
    assert dict(fixed) == {"mean_wait_s": float(lb.fixed_batch_wait(0.05, 4, UNIFORM, K)),
                           "mean_sojourn_s": fixed.mean_sojourn_s, "b": 4, "method": "exact"}
    assert fixed["mean_sojourn_s"] == fixed.mean_sojourn_s and len(fixed) == 4
    for old, new in (("mean_wait", "mean_wait_s"), ("mean_sojourn", "mean_sojourn_s")):
        for v in out.values():
            with pytest.warns(DeprecationWarning, match=rf"StrategyLatency\['{old}'\] is "
                              rf"deprecated; use \['{new}'\]"):
                assert v[old] == v[new] or math.isnan(v[new])
            with pytest.warns(DeprecationWarning, match=rf"\.{new}"):
                assert getattr(v, old) == v[new] or math.isnan(v[new])
    with pytest.raises(KeyError):
        fixed["lam"]


def test_the_package_names_the_simulators_objects():
    """engine.llm_batching re-exports the simulator (the old name engine.llm_batching_sim:
    tests/test_old_names.py)."""
    from engine.llm_batching import sim
    assert sim.simulate is lb.simulate
    assert sim.LLMSimResult is lb.LLMSimResult
    assert sim.STRATEGIES == ("dynamic", "fixed", "elastic", "continuous")
    assert sim.BACKEND in ("numba", "numpy")


def test_strategy_map_says_how_each_latency_is_known():
    """Issue 14: one source for which strategy is stable where and how it is known."""
    lam = np.array([0.1, 0.2, 0.3])
    order = ("dynamic", "fixed", "elastic")
    limits = {"dynamic": 0.25, "fixed": 0.15, "elastic": 0.5}
    exact = {"dynamic": [5.0, np.nan, np.inf], "fixed": [4.0, np.inf, np.inf]}
    m = lb.strategy_map(lam, order, {s: s for s in order}, limits, exact, None,
                        share={"dynamic": 0.7}, states={"dynamic": 256})
    assert m.method["dynamic"] == [lb.EXACT, lb.NOT_COMPUTED, lb.UNSTABLE]
    assert "70%" in m.reason["dynamic"][1]                 # 0.2 ≥ 0.7 × 0.25
    assert m.method["elastic"] == [lb.NOT_COMPUTED] * 3 and m.stable(0.3) == ["elastic"]
    assert m.best() == ["fixed", "", ""]
    assert m.verdicts()[1] == "not computed (stable: dynamic, elastic)"   # never "none stable"
    assert m.categories() == ["fixed", lb.NOT_COMPUTED, lb.NOT_COMPUTED]
    sim = {"dynamic": [np.nan, 6.0, np.nan], "fixed": [np.nan] * 3, "elastic": [3.0, 3.5, 9.0]}
    m = lb.strategy_map(lam, order, {s: s for s in order}, limits, exact, sim,
                        share={"dynamic": 0.7}, states={"dynamic": 256})
    assert m.method["dynamic"][1] == lb.SIMULATED and m.best() == ["elastic"] * 3
    assert m.known_until("fixed") == 0.1 and "0.15" in m.end_note("fixed")
    none = lb.strategy_map(lam, ("fixed",), {"fixed": "fixed"}, {"fixed": 0.05},
                           {"fixed": [np.inf] * 3}, None, share={}, states={})
    assert none.verdicts() == ["none stable"] * 3
    assert list(m.lam_per_s) == [0.1, 0.2, 0.3] and m.limits_per_s == limits
    assert list(m.latency_s["elastic"]) == [3.0, 3.5, 9.0]
    for old, new in (("lam", "lam_per_s"), ("limits", "limits_per_s"), ("latency", "latency_s")):
        with pytest.warns(DeprecationWarning, match=new):
            assert getattr(m, old) is getattr(m, new)


def test_curve_grid_and_chain_loads_reach_the_capacity():
    grid = lb.curve_grid(20.0, 0.14, 80)
    assert (grid < 0.14).sum() >= 40 and grid.max() == 20.0
    loads = lb.chain_loads([2.0, 4.0], 0.1, 0.8, 4)
    assert list(loads) == pytest.approx([0.02, 0.04, 0.06, 0.08])
    assert lb.chain_loads([0.1, 0.2], 0.0, 0.8).size == 0


def test_results_read_under_their_old_names_with_a_warning():
    """Every time of a simulation's summary, of its records and of the exact chain also
    reads under its name of before the unit was added (s): the same value, with a
    DeprecationWarning naming the new one."""
    r = simulate("dynamic", 0.05, UNIFORM, K, b_max=8, n_jobs=2000, seed=5, return_records=True)
    for old, new in (("mean_wait", "mean_wait_s"), ("mean_sojourn", "mean_sojourn_s"),
                     ("mean_latency", "mean_sojourn_s"), ("ci95_wait", "ci95_wait_s"),
                     ("ci95_sojourn", "ci95_sojourn_s"), ("ci95", "ci95_sojourn_s"),
                     ("p50", "p50_s"), ("p95", "p95_s"), ("p99", "p99_sojourn_s"),
                     ("p99_sojourn", "p99_sojourn_s")):
        with pytest.warns(DeprecationWarning, match=old):
            assert getattr(r, old) == getattr(r, new), old
    assert (r.mean_latency_s, r.ci95_s, r.p99_s) == (r.mean_sojourn_s, r.ci95_sojourn_s,
                                                     r.p99_sojourn_s)
    rec = r.records
    for name in ("arrival", "start", "finish", "batch_start", "batch_end"):
        with pytest.warns(DeprecationWarning, match=f"{name}_s"):
            assert getattr(rec, name) is getattr(rec, f"{name}_s")
    sol = lb.dynamic_solution(0.05, UNIFORM, K, 8)
    for old, new in (("mean_wait", "mean_wait_s"), ("mean_sojourn", "mean_sojourn_s"),
                     ("mean_latency", "mean_sojourn_s")):
        with pytest.warns(DeprecationWarning, match=old):
            assert getattr(sol, old) == getattr(sol, new), old
    assert sol.mean_latency_s == sol.mean_sojourn_s
