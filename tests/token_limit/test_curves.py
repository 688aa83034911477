"""Curves over the token limit and the answer at one limit (Yang et al. §V-B)."""
import numpy as np
import pytest

from engine import token_limit as tk
from engine.core import token_laws as tl

A, C = 0.023087, 0.490          # Table I fit
LOGN = tl.lognormal(7.0, 0.7)


@pytest.mark.parametrize("lam", [1 / 25, 1 / 30, 0.5])
def test_largest_stable_limit_is_where_the_load_crosses_one(lam):
    m = tk.largest_stable_limit(lam, A, C, LOGN)
    rho = tk.utilization(lam, A, C, LOGN, [max(m, 1), m + 1])
    if m >= 1:
        assert rho[0] < 1.0 <= rho[1]
    else:
        assert lam * (A + C) >= 1.0                      # one token already overloads


def test_largest_stable_limit_is_inf_when_no_limit_is_stable():
    assert tk.largest_stable_limit(1 / 40, A, C, LOGN) == np.inf    # ρ = 0.82 (§V-B)


def test_limit_curves_agree_with_the_pointwise_functions():
    grid = np.array([100.0, 800.0, 1600.0, 3000.0])
    cur = tk.limit_curves(1 / 25, A, C, LOGN, grid, 60.0)
    np.testing.assert_allclose(cur.mean_wait_s[:2], tk.mean_wait(1 / 25, A, C, LOGN, grid[:2]))
    assert np.all(np.isinf(cur.mean_wait_s[2:]))          # ρ ≥ 1 beyond 1529 tokens
    assert cur.clipped_share[2] == pytest.approx(1 - 0.7053, abs=1e-4)   # §V-B: 70.53 %
    one = tk.impatience(1 / 25, A, C, LOGN, 1300, 60.0)
    mid = tk.limit_curves(1 / 25, A, C, LOGN, [1300], 60.0)
    assert mid.exact.loss_fraction[0] == pytest.approx(float(one.loss_fraction), rel=1e-12)
    assert abs(mid.interpolation.loss_fraction[0] - 0.12) < 0.01        # paper: 0.12


def test_objectives_equal_the_optimiser_values():
    grid = np.array([200.0, 600.0, 1300.0, 2000.0])
    cur = tk.limit_curves(1 / 25, A, C, LOGN, grid, 60.0)
    v2 = tk.objective_v2(cur.mean_utility, cur.exact.mean_wait_all_s, cur.exact.loss_fraction,
                         0.95, 4.0)
    ref = tk.optimal_limit(1 / 25, A, C, LOGN, 0.95, 4.0, 60.0, candidates=grid)
    np.testing.assert_allclose(v2, ref.objectives, rtol=1e-9)
    v1 = tk.objective_v1(cur.mean_utility, cur.mean_wait_s, 119 / 120)
    ref1 = tk.optimal_limit(1 / 25, A, C, LOGN, 119 / 120, candidates=grid)
    np.testing.assert_allclose(v1, ref1.objectives, rtol=1e-12)
    assert np.isneginf(v1[-1])


def test_limit_point_reproduces_section_vb():
    p = tk.limit_point(1 / 40, A, C, LOGN, 1600, 60.0)
    assert p.clipped_share == pytest.approx(1 - 0.7053, abs=1e-4)
    assert p.mean_wait_s == pytest.approx(26.2, abs=0.05)             # paper_comparison
    free = tk.limit_point(1 / 40, A, C, LOGN, None, 60.0)
    assert free.load == pytest.approx(0.82, abs=0.005) and free.clipped_share == 0.0
    assert free.mean_utility == 1.0
    assert p.capacity_per_s == pytest.approx(1 / (A * tk.clipped_token_moments(LOGN, 1600)[0] + C))
    assert 0 < p.loss_fraction < free.loss_fraction
    assert p.mean_wait_all_s == pytest.approx(                       # eq 9
        60.0 * p.loss_fraction + p.mean_wait_served_s * (1 - p.loss_fraction))


def test_binned_pmf_sums_to_the_cdf_at_its_top():
    edges, probs = tl.binned_pmf(tl.uniform(0, 1000), n_bins=10, upper_q=1.0)
    assert edges[-1] == 1000 and probs.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(probs, 0.1, atol=1e-12)               # ⌈U(0,1000)⌉ uniform


def _utility_brute(dist, m, top):
    k = np.arange(1, top + 1, dtype=float)
    p = tl.token_pmf(dist, k)
    return float(np.sum(p * np.minimum(k, m) / k) + tl.token_cdf(dist, 0) * 0)


@pytest.mark.parametrize("dist,top", [(LOGN, 400_000), (tl.uniform(0, 1000), 1000),
                                      (tl.lognormal(6.0, 1.2), 1_000_000)],
                         ids=["lognormal", "uniform", "heavy"])
def test_mean_utility_equals_the_direct_sum(dist, top):
    """E[min(n, m)/n] summed term by term over the whole support (eq 10's utility)."""
    for m in (1, 37, 800, 3000):
        assert tk.mean_utility(dist, m) == pytest.approx(_utility_brute(dist, m, top), abs=1e-9)


def test_mean_utility_of_an_empirical_law_is_the_sample_average():
    sample = np.array([1, 3, 3, 10, 250, 4000, 90_000], float)
    e = tl.EmpiricalTokens.from_counts(sample)
    for m in (1, 5, 300, 90_000):
        assert tk.mean_utility(e, m) == pytest.approx(np.mean(np.minimum(sample, m) / sample),
                                                      rel=1e-12)


# ------------------------------------------------------------ mean tokens, summaries, grids

@pytest.mark.parametrize("scale", [3.0, 2000.0, 5e6])
def test_mean_requested_tokens_of_an_exponential_law_is_geometric(scale):
    """n = ⌈X⌉ of X ~ Exp(scale) is geometric: E[n] = 1/(1 − e^{−1/scale}) (5e6: beyond the
    token grid, the tail integral)."""
    from scipy import stats
    got = tk.mean_requested_tokens(stats.expon(scale=scale))
    assert got == pytest.approx(1.0 / -np.expm1(-1.0 / scale), rel=1e-9)


def test_mean_requested_tokens_of_a_wide_uniform_law():
    """X ~ U(0, N), N beyond the token grid: E[⌈X⌉] = Σ_{k<N} (1 − k/N) = (N + 1)/2."""
    n = 3e7
    assert tk.mean_requested_tokens(tl.uniform(0.0, n)) == pytest.approx((n + 1) / 2, rel=1e-10)


def test_mean_requested_tokens_of_a_heavy_lognormal_is_near_mean_plus_half():
    """A law spread over millions of tokens has a uniform fractional part: E[⌈X⌉] ≈ E[X] + ½
    (the approximation the page used before), exactly up to far below one token."""
    law = tl.lognormal(10.0, 2.5)
    assert tk.mean_requested_tokens(law) == pytest.approx(law.mean() + 0.5, abs=1e-3)


def test_mean_requested_tokens_of_a_summable_law_is_the_unclipped_moment():
    got = tk.mean_requested_tokens(LOGN)
    assert got == float(tk.clipped_token_moments(LOGN, None)[0])
    from engine.token_limit import formulas
    assert formulas._tail_mean(LOGN, 4096) == pytest.approx(got, rel=1e-11)   # the other route


def test_service_moments_are_eqs_4_5_of_an_empirical_sample():
    counts = np.array([3, 3, 50, 400, 1200])
    law = tl.EmpiricalTokens.from_counts(counts)
    s = A * np.minimum(counts, 300) + C
    e1, e2 = tk.clipped_token_moments(law, 300)
    es, es2 = tk.service_moments(A, C, e1, e2)
    assert es == pytest.approx(s.mean(), rel=1e-12) and es2 == pytest.approx((s * s).mean(), rel=1e-12)


def test_token_law_summary_and_limit_grid():
    summary = tk.token_law_summary(tl.uniform(0.0, 1000.0))
    assert summary.summable and summary.mean_tokens == pytest.approx(500.5, rel=1e-12)
    assert summary.probs.sum() == pytest.approx(0.999, abs=2e-3)
    np.testing.assert_allclose(summary.cdf, np.minimum(summary.k, 1000) / 1000, atol=1e-12)
    heavy = tk.token_law_summary(tl.lognormal(10.0, 2.5))
    assert not heavy.summable and np.isfinite(heavy.mean_tokens)
    np.testing.assert_array_equal(tk.limit_grid(100, 4000, 5), [100, 1075, 2050, 3025, 4000])
    np.testing.assert_array_equal(tk.limit_grid(1, 3, 33), [1, 2, 3])


def test_simulation_summary_vocabulary():
    """mean_latency = E[W] + E[S] without patience (M/G/1); p50 ≤ p95 ≤ p99; mean_wait is
    the old mean_wait_all."""
    law = tl.uniform(0, 1000)
    r = tk.simulate_token_queue(0.07, A, C, law, None, None, n_jobs=400_000, seed=4)
    es = A * float(tk.clipped_token_moments(law, None)[0]) + C
    latency = float(tk.mean_wait(0.07, A, C, law, None)) + es
    assert abs(r.mean_latency_s - latency) < 4 * r.ci95_s
    assert r.p50_s <= r.p95_s <= r.p99_s and r.mean_wait_s == r.mean_wait_all_s
    lost = tk.simulate_token_queue(0.2, A, C, law, 400, 20.0, n_jobs=50_000, seed=1)
    assert lost.p99_s <= 20.0 + A * 400 + C                          # at most τ + the longest S


def _reads_old_names(result, pairs):
    """Each old name reads the same value as its new name, with a DeprecationWarning."""
    for old, new in pairs:
        with pytest.warns(DeprecationWarning, match=new):
            got = getattr(result, old)
        np.testing.assert_array_equal(got, getattr(result, new), err_msg=old)


def test_results_read_under_their_old_names_with_a_warning():
    """Every time in a result carries ``_s``; the name before the unit was added still
    reads the same value, with a DeprecationWarning naming the new one."""
    r = tk.simulate_token_queue(0.2, A, C, tl.uniform(0, 1000), 400, 20.0, n_jobs=5_000,
                                seed=2)
    _reads_old_names(r, [(o, o + "_s") for o in (
        "mean_wait_all", "ci95_wait_all", "mean_wait_served", "ci95_wait_served",
        "mean_service", "mean_latency", "ci95", "p50", "p95", "p99", "mean_wait")])
    p = tk.limit_point(1 / 40, A, C, LOGN, 1600, 60.0)
    _reads_old_names(p, [(o, o + "_s") for o in ("mean_wait", "mean_wait_all",
                                                 "mean_wait_served")])
    best = tk.optimal_limit(1 / 25, A, C, LOGN, 0.95, 4.0, 60.0, candidates=[600.0, 1300.0])
    _reads_old_names(best, [("mean_wait", "mean_wait_s")])
    cur = tk.limit_curves(1 / 25, A, C, LOGN, [600.0, 1300.0], 60.0)
    _reads_old_names(cur, [("mean_wait", "mean_wait_s"), ("patience", "patience_s")])
    _reads_old_names(cur.exact, [("mean_wait_all", "mean_wait_all_s"),
                                 ("mean_wait_served", "mean_wait_served_s")])
    assert cur.patience_s == 60.0
    plan = tk.sim_plan(1 / 25, A, C, LOGN, [600.0], 60.0, 0.9)
    runs = [r] * len(plan)
    sweep = tk.limit_sim_sweep(plan, runs)
    _reads_old_names(sweep, [(o, o + "_s") for o in ("plain_wait", "plain_ci", "served_wait",
                                                     "served_ci")])
    _reads_old_names(tk.traffic_point(12.5, plan, runs), [("approx_wait", "approx_wait_s")])
    rec = tk.simulate_token_queue_records(0.2, A, C, tl.uniform(0, 1000), 400, 20.0,
                                          n_jobs=500, seed=2)
    _reads_old_names(rec, [(o, o + "_s") for o in ("gap", "service", "wait", "patience",
                                                   "arrival", "latency")])
