"""Exact means of the greedy batching server under MMPP-2 arrivals (engine.batching.mmpp):
the counting matrices against the matrix exponential, the chain against one built
independently, Poisson as the equal-rates case, the switching limits, simulation."""
import numpy as np
import pytest
from scipy.integrate import quad_vec
from scipy.linalg import expm

from engine.arrivals import MMPP2
from engine.batching import (capacity, mean_latency, mean_latency_mmpp2, simulate_batching,
                             stationary)
from engine.batching import map_counts as mc, mmpp_chain as cm

V100 = (0.1438, 1.8874)          # α, τ0 in ms (Inoue 2021, Table 1(a) fit)


def bursty(rate, ratio, share_1, cycle):
    """An MMPP-2 of mean ``rate`` whose phase 1 has ``ratio`` times phase 2's rate and
    ``share_1`` of the time, the phases alternating with mean period ``cycle``."""
    r2 = rate / (share_1 * ratio + 1.0 - share_1)
    return MMPP2(ratio * r2, r2, 1.0 / (cycle * share_1), 1.0 / (cycle * (1.0 - share_1)))


def counting_generator(d0, d1, k_max):
    """Q: the level process of the counts truncated above k_max + 1 arrivals, block
    bidiagonal with D0 on the diagonal and D1 above it."""
    size = k_max + 2
    q = np.zeros((2 * size, 2 * size))
    for k in range(size):
        q[2 * k:2 * k + 2, 2 * k:2 * k + 2] = d0
        if k + 1 < size:
            q[2 * k:2 * k + 2, 2 * k + 2:2 * k + 4] = d1
    return q


def first_block_row(e, k_max):
    """P(k, t) for k ≤ k_max from e = exp(Qt): its first block row."""
    return np.stack([e[:2, 2 * k:2 * k + 2] for k in range(k_max + 1)])


def counting_by_expm(d0, d1, t, k_max):
    """P(k, t) for k ≤ k_max: the first block row of exp(Qt) (truncating Q above k_max
    changes none of these blocks)."""
    return first_block_row(expm(counting_generator(d0, d1, k_max) * t), k_max)


@pytest.mark.parametrize("process, t", [
    (MMPP2(3.0, 0.5, 1.0, 2.0), 0.7),
    (MMPP2(3.0, 0.5, 1.0, 2.0), 6.0),
    (MMPP2(0.0, 2.0, 0.3, 0.1), 2.5),          # an interrupted Poisson process
    (MMPP2(9.0, 1.0, 300.0, 300.0), 2.0),      # θt > 400: uniformized, then squared
])
def test_counting_matrices_match_the_matrix_exponential(process, t):
    k_max = 60
    got = mc._counting(process.D0, process.D1, t, k_max)
    want = counting_by_expm(process.D0, process.D1, t, k_max)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)
    assert np.all(got >= 0)
    # The generating function at z: Σ_k z^k P(k, t) = exp((D0 + z D1) t).
    z = 0.8
    gf = np.einsum("k,kij->ij", z ** np.arange(k_max + 1), got)
    np.testing.assert_allclose(gf, expm((process.D0 + z * process.D1) * t), atol=1e-12)


def test_batch_counts_follow_from_the_semigroup():
    """P(·, τ[b]) from uniformizing τ0 and α and convolving b times equals the counting
    matrices of τ[b] computed directly."""
    m = bursty(3.0, 4.0, 0.3, 5.0)
    alpha, tau0 = 0.2, 1.1
    k_max = 50
    for b, win, lo in mc._batch_counts(m.D0, m.D1, tau0, alpha, 12, k_max):
        if b not in (1, 2, 12):
            continue
        full = np.zeros((k_max + 1, 2, 2))
        full[lo:lo + win.shape[0]] = win
        want = counting_by_expm(m.D0, m.D1, alpha * b + tau0, k_max)
        np.testing.assert_allclose(full, want, rtol=0, atol=1e-13)


def test_area_under_the_count_matches_quadrature():
    """E_i[∫_0^τ N(t) dt] = ∫_0^τ (τ − u) e^{Du} D1 1 du, integrated numerically."""
    m = MMPP2(5.0, 0.2, 0.7, 1.3)
    d = m.D0 + m.D1
    for tau in (1e-6, 0.3, 4.0, 40.0):
        want, _ = quad_vec(lambda u: (tau - u) * expm(d * u) @ m.D1.sum(axis=1), 0.0, tau,
                           epsabs=1e-13, epsrel=1e-12)
        np.testing.assert_allclose(mc._area(m.D0, m.D1, tau), want, rtol=1e-9)


def area_by_van_loan(d, tau):
    """∫_0^τ (τ − u) e^{Du} du: the top-right block of exp(Mτ), M = [[0, I, 0], [0, 0, I],
    [0, 0, D]] (Van Loan 1978: exp of a block upper-triangular matrix)."""
    m = np.zeros((6, 6))
    m[0:2, 2:4] = m[2:4, 4:6] = np.eye(2)
    m[4:6, 4:6] = d
    return expm(m * tau)[0:2, 4:6]


def brute_force(process, alpha, tau0, b_max, n_levels):
    """The batch-start chain built state by state from exp(Qτ) (counts) and Van Loan's
    exponential (areas), solved by least squares; E[W] = E[area of the number in system
    per cycle]/E[jobs per cycle]."""
    d0, d1 = process.D0, process.D1
    ratio = np.linalg.solve(-d0, d1)
    idle_time = np.linalg.solve(-d0, np.ones(2))
    size = 2 * n_levels
    t = np.zeros((size, size))
    area, jobs, cycle = np.zeros(size), np.zeros(size), np.zeros(size)
    q = counting_generator(d0, d1, n_levels)
    step = expm(q * alpha)
    e = expm(q * tau0)
    laws = {}
    for n in range(1, n_levels + 1):
        b = n if b_max is None else min(n, b_max)
        tau = alpha * b + tau0
        if b not in laws:                      # exp(Qτ[b]) = exp(Qτ0) exp(Qα)^b
            e = e @ step
            laws[b] = (first_block_row(e, n_levels),
                       area_by_van_loan(d0 + d1, tau) @ d1.sum(axis=1))
        p, counted = laws[b]
        for i in range(2):
            s = 2 * (n - 1) + i
            for k in range(n_levels + 1):
                nxt = n - b + k
                if nxt == 0:
                    t[s, 0:2] += p[0, i] @ ratio
                elif nxt <= n_levels:
                    t[s, 2 * (nxt - 1):2 * nxt] += p[k, i]
            area[s] = n * tau + counted[i]
            jobs[s] = b
            cycle[s] = tau + (p[0, i] @ idle_time if n == b else 0.0)
    a = np.vstack([t.T - np.eye(size), np.ones(size)])
    rhs = np.zeros(size + 1)
    rhs[-1] = 1.0
    pi = np.linalg.lstsq(a, rhs, rcond=None)[0]
    return pi @ area / (pi @ jobs), pi @ jobs, pi @ jobs / (pi @ cycle)


@pytest.mark.parametrize("b_max", [None, 3])
def test_chain_matches_one_built_state_by_state(b_max):
    m = bursty(1.6, 3.0, 0.4, 4.0)            # λα = 0.4; 0.67 of capacity with b_max = 3
    alpha, tau0 = 0.25, 0.5
    r = mean_latency_mmpp2(m, alpha, tau0, b_max)
    assert r.converged
    w, eb, thr = brute_force(m, alpha, tau0, b_max, 80)     # tail below 1e-12 (checked)
    assert r.mean_latency_ms == pytest.approx(w, rel=1e-9)
    assert r.mean_batch_size == pytest.approx(eb, rel=1e-9)
    assert r.throughput_per_ms == pytest.approx(thr, rel=1e-9)


def test_banded_and_dense_solves_agree():
    m = bursty(2.0, 4.0, 0.3, 8.0)              # 0.7 of capacity 4/1.4 with b_max = 4
    alpha, tau0 = 0.1, 1.0
    chain = cm._build(m.D0, m.D1, alpha, tau0, 4, 300)     # the stationary tail: < 1e-15
    kl, ku = cm._band_widths(chain)
    dense = cm._solve_dense(chain)
    assert dense.sum() == pytest.approx(1.0)
    for s0 in (0, 41):                          # pinned at level 1 and at level 21
        banded = cm._solve_banded(chain, kl, ku, s0)
        assert banded[s0] == pytest.approx(1.0)
        np.testing.assert_allclose(banded / banded.sum(), dense, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("rho, b_max", [(0.3, None), (0.7, None), (0.9, None), (0.3, 64),
                                         (0.7, 64), (0.3, 256), (0.7, 256), (0.9, 256)])
def test_equal_rates_give_the_poisson_result(rho, b_max):
    """rate_1 = rate_2: the counts no longer depend on the phase, so every mean equals
    Inoue's Poisson model (the series for b_max = ∞, the departure chain otherwise).
    (ρ = 0.9 is beyond capacity with b_max = 64.)"""
    alpha, tau0 = V100
    lam = rho / alpha
    r = mean_latency_mmpp2(MMPP2(lam, lam, 0.5, 2.0), alpha, tau0, b_max)
    s = stationary(lam, alpha, tau0, b_max)
    assert r.converged and r.tail_mass < 1e-12 and r.truncation_change < 1e-9
    assert r.mean_latency_ms == pytest.approx(float(mean_latency(lam, alpha, tau0, b_max)),
                                           rel=1e-9)
    assert r.mean_wait_ms == pytest.approx(float(s.mean_wait_ms), rel=1e-9)
    assert r.mean_batch_size == pytest.approx(float(s.mean_batch_size), rel=1e-9)
    assert r.utilization == pytest.approx(float(s.utilization), rel=1e-9)
    assert r.throughput_per_ms == pytest.approx(lam, rel=1e-9) and r.arrival_rate_per_ms == pytest.approx(lam)


def test_slow_switching_mixes_two_poisson_queues():
    """Phases lasting 10^5 batch times: each phase is a Poisson queue in steady state,
    so E[W] → Σ_i (π_i r_i/λ) W_Poisson(r_i), the job-weighted mixture (error O(s))."""
    alpha, tau0 = V100
    m = MMPP2(5.0, 1.0, 1e-5, 2e-5)
    weights = m.stationary_phase * np.array([5.0, 1.0]) / m.rate
    mix = weights @ [float(mean_latency(x, alpha, tau0)) for x in (5.0, 1.0)]
    assert mean_latency_mmpp2(m, alpha, tau0).mean_latency_ms == pytest.approx(mix, rel=2e-4)


def test_fast_switching_is_poisson_at_the_mean_rate():
    """Phases switching 10^4 times per batch: the counts are Poisson at the mean rate
    (error O(1/s))."""
    alpha, tau0 = V100
    m = MMPP2(9.0, 1.0, 1e4, 1e4)
    r = mean_latency_mmpp2(m, alpha, tau0)
    assert r.converged
    assert r.mean_latency_ms == pytest.approx(float(mean_latency(5.0, alpha, tau0)), rel=1e-4)


# (ρ, rate ratio, share of phase 1, switching period in ms, b_max); α, τ0 = V100
SIM_CASES = [(0.3, 3.0, 0.3, 10.0, None), (0.5, 10.0, 0.2, 10.0, 64),
             (0.7, 3.0, 0.3, 10.0, None), (0.7, 3.0, 0.3, 10.0, 64),
             (0.9, 2.0, 0.5, 5.0, None), (0.9, 1.5, 0.5, 20.0, 256)]


@pytest.mark.parametrize("rho, ratio, share, cycle, b_max", SIM_CASES)
def test_exact_means_match_simulation(rho, ratio, share, cycle, b_max):
    """The simulator, fed the MMPP-2 itself (arrivals=process), within 4 standard
    errors of its batch-means CI for the mean latency and wait; E[B] (no CI: batch sizes
    are strongly correlated near capacity) within 5 %."""
    alpha, tau0 = V100
    m = bursty(rho / alpha, ratio, share, cycle)
    r = mean_latency_mmpp2(m, alpha, tau0, b_max)
    assert r.converged
    sim = simulate_batching(None, alpha, tau0, b_max, n_jobs=2_000_000, seed=11, arrivals=m)
    assert sim.ci_reliable
    assert abs(r.mean_latency_ms - sim.mean_latency_ms) <= 4 * sim.ci95_ms / 1.96
    assert abs(r.mean_wait_ms - sim.mean_wait_ms) <= 4 * sim.ci95_wait_ms / 1.96
    assert r.mean_batch_size == pytest.approx(sim.mean_batch_size, rel=0.05)
    assert r.utilization == pytest.approx(sim.utilization, abs=0.01)


def test_bursty_traffic_waits_longer_than_poisson():
    """At the same mean rate, bursts raise the mean latency (V100, ρ = 0.5)."""
    alpha, tau0 = V100
    lam = 0.5 / alpha
    poisson = float(mean_latency(lam, alpha, tau0))
    w = [mean_latency_mmpp2(bursty(lam, ratio, 0.3, 10.0), alpha, tau0).mean_latency_ms
         for ratio in (1.5, 3.0)]
    assert poisson < w[0] < w[1]


@pytest.mark.parametrize("b_max", [None, 16])
def test_at_or_beyond_capacity_the_means_are_infinite(b_max):
    alpha, tau0 = V100
    cap = float(capacity(alpha, tau0, b_max))
    for lam in (cap, 1.5 * cap):
        r = mean_latency_mmpp2(bursty(lam, 3.0, 0.3, 10.0), alpha, tau0, b_max)
        assert not r.stable and not r.converged
        assert r.mean_latency_ms == r.mean_wait_ms == r.mean_processing_ms == np.inf
        assert r.mean_batch_size == (np.inf if b_max is None else b_max)
        assert r.utilization == 1.0 and r.throughput_per_ms == cap


def test_beyond_reach_reports_the_cut_mass():
    """ρ = 0.99 without a cap needs more levels than a dense solve holds: the result is
    finite, flagged, and says how much stationary mass the truncation cut."""
    alpha, tau0 = V100
    lam = 0.99 / alpha
    r = mean_latency_mmpp2(MMPP2(lam, lam, 1.0, 1.0), alpha, tau0)
    assert r.stable and not r.converged and np.isfinite(r.mean_latency_ms)
    assert r.tail_mass > 1e-12 and r.n_levels == cm._MAX_DENSE_STATES // 2


def test_bad_arguments_name_themselves():
    m = MMPP2(2.0, 1.0, 1.0, 1.0)
    for bad, kw in (("arrivals", dict(arrivals=object())),
                    ("arrivals", dict(arrivals=np.array([0.0, 1.0]))),
                    ("alpha_ms", dict(alpha_ms=0.0)), ("alpha_ms", dict(alpha_ms=[1.0, 2.0])),
                    ("tau0_ms", dict(tau0_ms=-1.0)), ("b_max", dict(b_max=0)),
                    ("b_max", dict(b_max=2.5))):
        args = dict(arrivals=m, alpha_ms=0.1, tau0_ms=1.0) | kw
        with pytest.raises(ValueError, match=bad):
            mean_latency_mmpp2(**args)
