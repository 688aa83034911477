"""Inputs the fuzz tests (tests/<model>/test_fuzz.py) found to break the engine, written out.

Each test names the failing input and the symptom it had; the expected values
are the model's own limits (inf at capacity, closed forms) or the contract of
the README: no NaN inside a domain, ``inf`` exactly where the load is
unstable, ``ValueError`` naming a parameter outside its domain.
"""
import math
import warnings

import numpy as np
import pytest

from tests.counting import counted
from scipy import stats

from engine import batching, fit, llm_batching, sla, token_limit
from engine.batching import answers, curves, sim
from engine.core import token_laws


# ------------------------------------------------------------ load exactly at capacity

def test_batching_at_capacity_is_unstable():
    """λ = capacity(α, τ0) exactly: (1/α)·α rounds below 1 for α = 0.208984375, and
    φ0, φ1, E[W] were finite (1.4e15) instead of inf."""
    alpha, tau0 = 0.208984375, 0.0
    lam = batching.capacity(alpha, tau0)
    assert lam * alpha < 1.0                                   # the rounding in question
    for f in (batching.phi0, batching.phi1, batching.phi, batching.mean_latency,
              batching.mean_wait):
        assert f(lam, alpha, tau0) == np.inf, f.__name__
    assert batching.utilization(lam, alpha, tau0) == 1.0
    assert batching.energy_efficiency_bound(lam, alpha, tau0, 1.0, 1.0) == 1.0   # 1/β
    for f in (llm_batching.yang_phi0, llm_batching.yang_phi1, llm_batching.yang_phi):
        assert f(lam, alpha, tau0) == np.inf, f.__name__


def test_capped_batching_at_capacity_is_unstable():
    """Finite b_max: λ = b/(αb + τ0) can pass λ(αb + τ0) < b by rounding; some α in
    [0.01, 2] with b_max = 1 do, and gave a finite E[W]."""
    rng = np.random.default_rng(1)
    alphas = rng.uniform(0.01, 2.0, 500)
    tau0 = 0.7
    caps = batching.capacity(alphas, tau0, 1)
    rounded = caps * (alphas + tau0) < 1.0
    assert rounded.any()
    np.testing.assert_array_equal(batching.mean_latency(caps[rounded], alphas[rounded], tau0, 1),
                                  np.inf)


def test_fixed_llm_batching_at_its_throughput_is_unstable():
    """λ = μ[b] exactly gave a finite fixed-batching wait of 3.9e17 s."""
    law = token_laws.lognormal(6.016261184752038, 0.6602964369285784)
    k, b = (0.002, 0.0, 0.0, 1.0), 15
    lam = llm_batching.throughput(b, law, k)
    for f in (llm_batching.fixed_batch_wait, llm_batching.fixed_batch_sojourn,
              llm_batching.fixed_batch_wait_eq25):
        assert f(lam, b, law, k) == np.inf, f.__name__


def test_token_queue_at_capacity_is_unstable():
    """λ = 1/E[S] with E[S] = a·E[min(n, 552)]: ρ rounded to 1 − 1e-16 and E[W] was finite."""
    law = token_laws.EmpiricalTokens.from_counts(
        [655, 4020, 2572, 1509, 254, 2644, 160, 953, 72, 367, 2060, 1231, 1222, 187, 464, 807,
         140, 63])
    a, c, n_max = 0.01871546548777674, 0.0, 552
    es = a * float(token_limit.clipped_token_moments(law, n_max)[0])
    assert (1 / es) * es < 1.0
    assert token_limit.mean_wait(1 / es, a, c, law, n_max) == np.inf


# ------------------------------------------------------------ NaN inside the domain

def test_cost_of_a_free_gpu_at_zero_load_is_the_energy_alone():
    """gpu_usd_per_hour = 0 at λ = 0 computed 0/0 = NaN; a free GPU adds nothing."""
    cost = answers.cost_per_million(0.0, 1.0, 0.0, 0.1)
    assert cost == pytest.approx(1.0 / 3.6e6 * 0.1 * 1e6)      # J → kWh × $/kWh, per million
    assert answers.cost_per_million(0.0, 1.0, 2.0, 0.1) == np.inf


@pytest.mark.parametrize("name,args", [
    ("lam_per_ms", (-1.0, 1.0)), ("lam_per_ms", (math.nan, 1.0)),
    ("joules_per_request", (1.0, -1.0)), ("joules_per_request", (1.0, "x"))])
def test_cost_per_million_validates_load_and_energy(name, args):
    """The load and the energy per request were not checked (negative costs, NaN)."""
    with pytest.raises(ValueError, match=name):
        answers.cost_per_million(*args)


def test_short_simulation_whose_counted_jobs_joined_one_early_batch():
    """ρ = 5, 20 jobs: after the first job every job joins one batch that starts with job 1,
    before the warm-up (2 jobs) ends.  E[B] was NaN, utilization 0, and summarize raised
    IndexError; that batch holds counted jobs, so it counts."""
    alpha, tau0 = 0.1438, 1.8874
    lam = 5 / alpha
    r = sim.simulate_batching(lam, alpha, tau0, n_jobs=20, seed=1)
    assert np.isfinite(r.mean_batch_size) and r.mean_batch_size >= 1
    assert 0 < r.utilization <= 1
    rec = sim.simulate_records(lam, alpha, tau0, n_jobs=20, seed=1)
    s = sim.summarize(rec, 3)
    assert s.mean_batch_size == r.mean_batch_size and s.utilization == r.utilization


def test_linear_bound_with_a_zero_coefficient_and_an_unbounded_law():
    """k3 = 0 with an unbounded law gave α1 = k1 + 0·inf = NaN, and the bound (β1 = inf)
    raised ValueError naming tau0."""
    law, k = stats.expon(scale=1751.9593573268112), (2.634465166523326, 0.877, 0.0, 1.0)
    a1, b1 = llm_batching.linear_bound_coefficients(law, k)
    assert a1 == k[0] and b1 == np.inf
    assert llm_batching.dynamic_wait_bound(0.01, law, k) == np.inf


def test_continuous_batching_without_decode_time_has_a_batch_size():
    """k3 = k4 = 0: no decode time, so the time-average of running sequences was 0/0."""
    law = token_laws.EmpiricalTokens.from_counts([103, 349, 122, 1704])
    r = llm_batching.simulate("continuous", 0.5, law, (1e-9, 2.00001, 0.0, 0.0), n_jobs=200,
                              seed=0)
    assert np.isfinite(r.mean_batch_size) and r.mean_batch_size >= 1


def test_llm_simulation_with_a_warmup_longer_than_the_run():
    """warmup_jobs = 82 > n_jobs = 14 left no batch counted: E[B] NaN."""
    law = token_laws.EmpiricalTokens.from_counts([125, 68])
    r = llm_batching.simulate("dynamic", 0.1, law, (0.0963, 1e-6, 0.00178, 0.0432), b_max=24,
                              n_jobs=14, seed=652363, warmup_jobs=82, batch_time="mean")
    assert np.isfinite(r.mean_batch_size) and r.n_jobs == 1


def test_fixed_batching_that_never_fills():
    """n_jobs < b: no batch ever starts; the mean of no waits was NaN (and a warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = llm_batching.simulate("fixed", 1.0, stats.uniform(0, 100), (0.01, 0.1, 0.0, 0.01),
                                  b=32, n_jobs=10, seed=0)
    assert r.mean_wait_s == np.inf and r.n_jobs == 0


def test_mmn_response_cdf_with_fast_servers_near_saturation():
    """μ = 1e9, n = 100, ρ = 0.999, t ≈ 1: γ − μ < 0 made e^(−(γ−μ)t) overflow and
    0·inf = NaN.  At t ≫ 1/μ and 1/(nμ − λ) every request is done: the CDF is 1."""
    mu, n = 1e9, 100
    cdf = sla.mmn_response_cdf(0.99999, 0.999 * n * mu, mu, n)
    assert cdf == 1.0


def test_waiting_percentile_when_retries_never_succeed_and_take_no_time():
    """p_retry_busy = 1 and d1 = d2 = Δ = 0: r = inf retries times c = 0 was NaN; a request
    that misses the first try is never served, so the 99th percentile is inf."""
    w = sla.waiting_percentile(99.0, 0.5, 1.0, 1, 0.0, 0.0, 0.0, p_retry_busy=1.0)
    assert w == np.inf


class CountedLaw:
    """A service law whose CDF counts the points it is evaluated at."""

    def __init__(self, law):
        self.law, self.points = law, 0

    def cdf(self, x):
        self.points += np.size(x)
        return self.law.cdf(x)


def test_response_cdf_without_delays_near_saturation_is_fast():
    """c = d1 + d2 + Δ = 0 (plan_replicas' default) at ρ = 1 − 1e-9 summed ~4e10 geometric
    terms (hours).  Every try lands at d1, so P(R ≤ RT) = CDF_exe(RT − d1): the service
    CDF is evaluated at one block of retries at most, counted (not ~4e10 points)."""
    service = CountedLaw(stats.expon(scale=0.01))
    p = sla.response_cdf(0.05, (1 - 1e-9) * 10 * 100.0, 100.0, 10, 0.0, 0.0, 0.0, service)
    assert 0 < service.points <= sla.cdfs.R_BLOCK + 1, service.points
    assert p == pytest.approx(service.law.cdf(0.05), rel=1e-12)


def test_response_cdf_when_retries_never_succeed():
    """p_retry_busy = 1: only the first try serves (weight 1 − ρ); with c = 0 this raised
    ValueError, with RT/c = 1e10 it summed 1e10 zero terms."""
    service = stats.expon(scale=0.01)
    rho = 0.3
    for d1, d2 in ((0.0, 0.0), (1e-11, 0.0)):
        p = sla.response_cdf(0.1, rho * 10, 1.0, 10, d1, d2, 0.0, service, p_retry_busy=1.0)
        assert p == pytest.approx((1 - rho) * service.cdf(0.1 - d1), rel=1e-12)


def test_diurnal_trace_with_too_many_intervals_names_the_interval():
    """interval_s = 1e-6 s over 35.7 h asked numpy for 959 GiB (MemoryError)."""
    with pytest.raises(ValueError, match="interval_s"):
        sla.diurnal_trace(0.85, 35.74057328556839, 1e-6)


# ------------------------------------------------------------ impatience (M/G/1+D)

def test_md1_patience_series_with_many_short_services_is_fast_and_finite():
    """λ = 0.02/s, d = 0.05 s, τ = 300 s (λτ = 6): Erlang's series ran over ⌊τ/d⌋ = 6000
    terms with an O(k²) inner loop (minutes) and overflowed to NaN.  With λd = 0.001 the
    queue is nearly empty: the wait is M/D/1's λd²/(2(1 − λd)) and nobody leaves.
    Its work is counted: fewer calls than the series has terms, and no more calls for ten
    times as many terms (λ/10, 10τ: the same λτ, ⌊τ/d⌋ = 60,000)."""
    lam, d, tau = 0.02, 0.05, 300.0
    (loss, w_all, served), calls, _ = counted(token_limit.md1_deterministic_patience,
                                             lam, d, tau)
    assert calls < tau / d, calls                         # ⌊τ/d⌋ = 6000 terms
    _, calls_tenfold, _ = counted(token_limit.md1_deterministic_patience, lam / 10, d,
                                  10 * tau)
    assert calls_tenfold <= calls, (calls_tenfold, calls)
    assert loss == pytest.approx(0.0, abs=1e-12)
    # E[W_q] = τ − P0·∫g loses digits when it is 1e-7 of τ: absolute 1e-9·τ
    assert w_all == pytest.approx(lam * d * d / (2 * (1 - lam * d)), abs=1e-9 * tau)


def test_md1_patience_heavily_overloaded():
    """λ = 100/s, d = 10 s, τ = 100 s (ρ = 1000, λτ = 10^4): the Volterra grid (1024 points,
    λh ≈ 10) alternated in sign and overflowed to NaN.  In heavy overload the work stays
    near τ, so nearly every request waits its patience and leaves: π → 1 − 1/ρ."""
    rho = 1000.0
    loss, w_all, served = token_limit.md1_deterministic_patience(100.0, 10.0, 100.0)
    assert loss == pytest.approx(1 - 1 / rho, rel=1e-3)
    assert 0 < w_all <= 100.0 and w_all == pytest.approx(100.0, rel=1e-2)
    assert 0 <= served <= 100.0


def test_exact_impatience_beyond_its_grid_names_the_patience():
    """λτ = 9.3e5 arrivals within the patience would need a grid of as many points."""
    with pytest.raises(ValueError, match="patience"):
        token_limit.md1_deterministic_patience(1.5e4, 1e-4, 62.0)


def test_patience_at_infinite_arrival_rate():
    """λ = inf (valid: beyond any capacity) gave NaN; everyone finds the server saturated,
    waits τ and leaves (as ``impatience`` has it), and without patience waits forever."""
    for f in (token_limit.mm1_deterministic_patience, token_limit.md1_deterministic_patience):
        loss, w_all, served = f(np.inf, 0.5, 30.0)
        assert (loss, w_all, served) == (1.0, 30.0, 30.0), f.__name__
        loss, w_all, _ = f(np.inf, 0.5, np.inf)
        assert w_all == np.inf, f.__name__


def test_patience_formulas_raise_no_warning_at_the_edges():
    """ρ = 1 with τ = inf (0·inf) and λ = inf with τ = inf warned (an error under pytest)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        token_limit.mm1_deterministic_patience(np.array([1.0, np.inf]), 1.0, np.inf)
        token_limit.md1_deterministic_patience(np.array([1.0, np.inf]), 1.0, np.inf)


# ------------------------------------------------------------ token laws in the LLM models

def test_truncated_normal_rounding_below_zero_is_a_valid_token_law():
    """scipy's truncnorm ppf returns -8e-15 near the bound 0; E[L_b] raised
    "dist must be a token-length law on [0, inf)" for a law token_laws built."""
    law = token_laws.truncated_normal(1.9, 598.5386087148202, 0.0)
    assert law.ppf(1e-18) < 0                                  # the rounding in question
    m = llm_batching.expected_max_tokens(law, 1)
    assert m == pytest.approx(law.mean(), rel=1e-6)


def test_expected_max_tokens_of_a_law_whose_top_quantiles_share_a_log():
    """uniform(85.74, 187.46): the last grid quantiles differ by one ulp, equal logs made
    the tail index 1/0 (a RuntimeWarning, an error under pytest).  E[max of b uniforms]
    = low + (high − low)·b/(b + 1)."""
    low, width = 85.74042765875693, 101.72314034108761
    law = token_laws.uniform(low, low + width)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = llm_batching.expected_max_tokens(law, 3)
    assert m == pytest.approx(low + width * 3 / 4, rel=1e-6)


# ------------------------------------------------------------ ValueError naming the parameter

@pytest.mark.parametrize("kw,name", [
    (dict(beta_j="x", c0_j=1.0), "beta_j"), (dict(beta_j=1.0, c0_j="x"), "c0_j"),
    (dict(b_max="x"), "b_max"), (dict(n_points=-1), "n_points"),
    (dict(max_fraction=-0.5), "max_fraction"), (dict(max_fraction=math.nan), "max_fraction")])
def test_load_curves_names_a_bad_argument(kw, name):
    """A non-number failed inside numpy (TypeError); a bad n_points or max_fraction was
    reported as a bad "lam" or by numpy's own message."""
    with pytest.raises(ValueError, match=name):
        curves.load_curves(0.1438, 1.8874, **kw)


@pytest.mark.parametrize("x,y,name", [([1.0, math.nan, 3.0], [1.0, 2.0, 3.0], "x"),
                                      ([1.0, 2.0, 3.0], [1.0, math.inf, 3.0], "y"),
                                      ([1.0, 2.0], [1.0, 2.0, 3.0], "y")])
def test_linear_fit_names_a_bad_column(x, y, name):
    """NaN input raised numpy's LinAlgError "SVD did not converge" (no name)."""
    with pytest.raises(ValueError, match=name):
        fit.linear_fit(x, y)


def test_dynamic_solution_checks_max_states_at_every_load():
    """max_states was only checked at stable loads above 0."""
    law = stats.uniform(0, 100)
    for lam in (0.0, 1e6):
        with pytest.raises(ValueError, match="max_states"):
            llm_batching.dynamic_solution(lam, law, (0.01, 0.1, 0.0, 0.01), 4, max_states=1)


def test_token_quantile_where_scipy_ppf_gives_nan():
    """truncnorm(0.004, 10, low 0).ppf(1 − 1.1e-16) is NaN in scipy; the quantile (k ≥ 1)
    was NaN.  The law's isf gives the same quantile from the other end."""
    law = token_laws.truncated_normal(0.004, 10.0, 0.0)
    q = 0.9999999999999999
    assert np.isnan(law.ppf(q))                               # scipy's, not ours
    assert token_laws.token_quantile(law, q) == np.ceil(law.isf(1 - q))


def test_sweep_queue_delay_names_a_bad_delay():
    """A non-number in delays_ms failed in numpy ("could not convert string to float")."""
    with pytest.raises(ValueError, match="delays_ms"):
        answers.sweep_queue_delay(1.0, 0.1438, 1.8874, 8, 4, ["not a number"], 100, 0)


def test_simulate_rate_checks_the_model_at_zero_load():
    """λ = 0 (or all-zero loads of simulate_rates) returned None before α was checked."""
    with pytest.raises(ValueError, match="alpha"):
        answers.simulate_rates([0.0, 0.0], -1.0, 0.0)
    with pytest.raises(ValueError, match="lam"):
        answers.simulate_rate(-1.0, 0.1438, 1.8874)


def test_token_queue_simulation_where_every_counted_request_leaves():
    """Services of 1e6 s per token and a patience of 1 s: after the first request every
    request leaves, and the served mean of no request was NaN; its limit is τ."""
    r = token_limit.simulate_token_queue(1.0, 1e6, 0.0, token_laws.uniform(0, 10), None, 1.0,
                                         n_jobs=50, seed=0, warmup_jobs=10)
    assert r.loss_fraction == 1.0 and r.mean_wait_served_s == 1.0


def test_dispatch_at_exactly_capacity_is_refused():
    """λ = n/E[S] with (n/E[S])·E[S] = 14.999999999999998 < n = 15 was simulated as stable."""
    from engine.sla import sim as sla_sim
    law = stats.uniform(0.0, 2 * 0.02883165158443999)
    lam = 15 / float(law.mean())
    assert lam * float(law.mean()) < 15
    with pytest.raises(ValueError, match="lam"):
        sla_sim.simulate_dispatch("jsq", lam, law, 15, n_requests=50, seed=0)


def test_paper_comparison_where_the_papers_load_is_unstable():
    """a = 0.05 s/token, c = 1.42 s: λ = 1/40 is beyond capacity at n_max 1600 and 3000, and
    the E[W] change (inf/inf) was NaN; an unstable queue has no finite change: inf."""
    rows = token_limit.paper_comparison(0.05, 1.424898684877307, method="interpolation")
    change = next(r for r in rows if r.quantity.startswith("E[W] change"))
    assert change.model == np.inf
    assert not any(np.isnan(r.model) for r in rows)


def test_v2_objective_of_an_unstable_queue_without_patience_is_infeasible():
    """θ = 1, no patience, λ at capacity of every candidate n_max: E[W_q] = inf and
    V2 = θE[u] + (1 − θ)·inf was 0·inf = NaN (a RuntimeWarning); like V1 it is −inf."""
    law, a, c = stats.expon(scale=1.0), 0.03125, 1.0
    lam = 1.0 / (a * 1.0 + c)         # capacity at n_max = 1: E[S] = a·min(n, 1) + c
    best = token_limit.optimal_limit(lam, a, c, law, 1.0, 1.0, math.inf,
                                     candidates=np.array([1.0, 2.0]))
    assert np.all(best.objectives == -np.inf)


@pytest.mark.parametrize("scale,lam", [(129.0, 0.1981416223013285), (126.0, 0.20189190204258675)])
def test_largest_stable_limit_agrees_with_utilization_at_rho_one(scale, lam):
    """λ = 1/E[S] at n_max = 5000 for exponential(scale) tokens, a = 1/32 s, c = 1 s:
    the running sum of largest_stable_limit and utilization's sum differ in the last
    bit, and the limit returned had ρ = 1.0 (or its successor ρ = 1 − 1e-15)."""
    law, a, c = stats.expon(scale=scale), 0.03125, 1.0
    m = token_limit.largest_stable_limit(lam, a, c, law)
    assert token_limit.utilization(lam, a, c, law, m) < 1.0
    assert token_limit.utilization(lam, a, c, law, m + 1) >= 1.0


def test_gpu_service_rate_with_the_target_at_a_lone_jobs_latency_is_zero():
    """Target = α + τ0 exactly (α = 1, τ0 = 1.5, b_max = 3): E[W] = α + τ0 only at λ = 0
    and grows with λ, so no positive load meets it; a target a hair above does."""
    assert sla.gpu_service_rate(1.0, 1.5, 2.5, 3) == 0.0
    assert sla.gpu_service_rate(1.0, 1.0, 2.0) == 0.0       # was 1e-13: E[W] rounds to 2
    assert sla.gpu_service_rate(1.0, 1.5, 2.5 * (1 + 1e-6), 3) > 0.0


def test_profile_fit_with_a_huge_batch_size_names_the_column():
    """b = 1e308 with throughput 1e308 per s (found by the profile-editor fuzz test):
    1000·b overflowed and the fit raised 'y must be finite', naming no column."""
    try:                                      # the contract: a finite fit, or a named column
        f = fit.fit_batch_profile([1.0, 1e308], [1e308, 1e308])
    except ValueError as err:
        assert "batch_size" in str(err)
    else:
        assert np.isfinite([f.alpha_ms, f.tau0_ms, f.r2]).all()
        assert np.isfinite(f.batch_time_ms).all() and f.batch_time_ms[1] == 1000.0
    with pytest.raises(ValueError, match="throughput_per_s"):
        fit.fit_batch_profile([1.0, 1e308], [1e-300, 1e-300])
    with pytest.raises(ValueError, match="power_w"):
        fit.fit_batch_profile([1.0, 2.0], [100.0, 150.0], [1e308, 1e308])


def test_busy_split_without_overhead_has_no_negative_share():
    """τ0 = 0 (fuzz: α = 1.9, ρ = 0.5): the overhead share was u − work = −5.6e-17."""
    from engine.batching import answers
    st_ = batching.stationary(0.5 / 1.9, 1.9, 0.0)
    work, overhead = answers.busy_split(st_.utilization, st_.mean_batch_size, 1.9, 0.0)
    assert overhead == 0.0 and abs(work - st_.utilization) <= 1e-15
