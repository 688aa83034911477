"""Max-token clipping, impatience and the optimal limit (Yang et al. §III).

Checked against independent methods.

Expected values come from other routes than the engine's: eqs 2-3 summed as
printed, closed forms of ⌈uniform⌉ moments, the M/M/1+D formula of Baccelli,
Boyer & Hébuterne (1984) and Erlang's M/D/1 series, the M/D/1 and M/M/1
Pollaczek-Khinchine means, np.polyfit, brute-force searches, and simulation of
the sample path (tolerances 4σ, σ from the batch-means CI).
"""

from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine import presets, token_limit as tk
from engine.core import token_laws as tl
from engine.token_limit import patience as pt
from engine.fit import fit_token_latency, fit_token_latency_with_input
from tests.reference import md1_mean_latency

A, C = 0.023087, 0.490          # Table I fit (checked in test_table1_fit_*)
LOGN = tl.lognormal(7.0, 0.7)   # §V-B
SIGMA = 1.0 / 1.96              # ci95 half-width → one standard error


class ExponentialService:
    """S ~ Exp(μ) with its integrated tails in closed form (not atoms)."""

    def __init__(self, mu):
        self.mu, self.mean = mu, 1.0 / mu

    def integrated_tails(self, t):
        e = np.expm1(-self.mu * t)
        return -e / self.mu, t / self.mu + e / self.mu ** 2


def _eqs_2_3(dist, n_max):
    """E[n_req], E[n_req²] exactly as printed in eqs 2-3."""
    n = np.arange(1, n_max, dtype=float)
    p = tl.token_pmf(dist, n)
    rest = 1.0 - p.sum()
    return n @ p + n_max * rest, (n * n) @ p + n_max ** 2 * rest


# ------------------------------------------------------------ moments and P-K

@pytest.mark.parametrize("dist", [LOGN, tl.uniform(0, 1000), tl.truncated_normal(300, 200)],
                         ids=["lognormal", "uniform", "truncnorm"])
def test_clipped_moments_equal_eqs_2_3(dist):
    n_max = np.array([1, 2, 17, 300, 1300, 1600, 3000])
    e1, e2 = tk.clipped_token_moments(dist, n_max)
    for m, x1, x2 in zip(n_max, e1, e2):
        r1, r2 = _eqs_2_3(dist, int(m))
        assert x1 == pytest.approx(r1, rel=1e-10) and x2 == pytest.approx(r2, rel=1e-10)


def test_unclipped_moments_of_ceil_uniform_closed_form():
    """⌈U(0, 1000)⌉ is uniform on 1..N: E = (N+1)/2, E[n²] = (N+1)(2N+1)/6."""
    e1, e2 = tk.clipped_token_moments(tl.uniform(0, 1000), None)
    assert e1 == pytest.approx(500.5, rel=1e-12) and e2 == pytest.approx(1001 * 2001 / 6, rel=1e-12)
    e1, e2 = tk.clipped_token_moments(LOGN, None)               # E[⌈X⌉] ≈ E[X] + 1/2
    assert e1 == pytest.approx(np.exp(7 + 0.245) + 0.5, abs=0.01)


def test_a_scipy_discrete_law_is_accepted():
    """Geometric n on 1, 2, ...: E[n] = 1/p, E[n²] = (2 − p)/p²; clipped at m, eqs 2-3."""
    from scipy import stats
    p = 0.01
    e1, e2 = tk.clipped_token_moments(stats.geom(p), [None, 150])
    assert e1[0] == pytest.approx(1 / p, rel=1e-10) and e2[0] == pytest.approx((2 - p) / p ** 2,
                                                                              rel=1e-10)
    assert (e1[1], e2[1]) == tuple(pytest.approx(x, rel=1e-12) for x in _eqs_2_3(stats.geom(p), 150))


def test_clipped_moments_of_an_empirical_law_equal_the_sample_average():
    rng = np.random.default_rng(2)
    sample = np.ceil(rng.lognormal(5, 1, 3000))
    e = tl.EmpiricalTokens.from_counts(sample)
    for m in (1, 10, 150, None):
        clipped = sample if m is None else np.minimum(sample, m)
        e1, e2 = tk.clipped_token_moments(e, m)
        assert e1 == pytest.approx(clipped.mean(), rel=1e-12)
        assert e2 == pytest.approx(np.mean(clipped ** 2), rel=1e-12)


def test_mean_wait_is_md1_for_n_max_1_and_vectorises():
    """n_max = 1 makes S = a + c deterministic: E[W] is the M/D/1 wait."""
    lam = np.linspace(0.0, 0.99, 12)[:, None] / (A + C)
    w = tk.mean_wait(lam, A, C, LOGN, [1, 1])
    assert w.shape == (12, 2)
    np.testing.assert_allclose(w[:, 0], md1_mean_latency(lam[:, 0], A + C) - (A + C), rtol=1e-12)
    assert w[0, 0] == 0.0


def test_mean_wait_unstable_is_inf_and_bad_arguments_raise():
    w = tk.mean_wait([1 / 40, 1 / 30, 1.0, np.inf], A, C, LOGN, None)
    assert np.isfinite(w[0]) and np.all(np.isinf(w[1:])) and not np.isnan(w).any()
    for kwargs, name in [(dict(lam=-1), "lam"), (dict(a=0), "a"), (dict(c=-1), "c"),
                         (dict(n_max=0), "n_max"), (dict(n_max=2.5), "n_max")]:
        args = dict(lam=0.01, a=A, c=C, dist=LOGN, n_max=1000) | kwargs
        with pytest.raises(ValueError, match=name):
            tk.mean_wait(**args)


@pytest.mark.parametrize("dist,lam,n_max", [(LOGN, 1 / 40, 1600), (LOGN, 1 / 40, 3000),
                                            (tl.uniform(0, 1000), 0.07, None)],
                         ids=["lognormal-1600", "lognormal-3000", "uniform"])
def test_pollaczek_khinchine_against_simulation(dist, lam, n_max):
    r = tk.simulate_token_queue(lam, A, C, dist, n_max, None, n_jobs=400_000, seed=4)
    assert r.loss_fraction == 0.0 and r.ci_reliable
    w = float(tk.mean_wait(lam, A, C, dist, n_max))
    assert abs(r.mean_wait_all_s - w) < 4 * SIGMA * r.ci95_wait_all_s
    assert r.utilization == pytest.approx(float(tk.utilization(lam, A, C, dist, n_max)), rel=0.02)


# ------------------------------------------------------------ impatience: exact solver

MM1D = [(0.5, 1.0, 2.0), (0.9, 1.0, 5.0), (1.0, 1.0, 3.0), (1.5, 1.0, 4.0), (0.3, 2.0, 0.5)]


@pytest.mark.parametrize("lam,mu,tau", MM1D)
def test_exact_solver_against_mm1d_closed_form(lam, mu, tau):
    """The Volterra scheme with Exp(μ) tails reproduces Baccelli-Boyer-Hébuterne."""
    loss, w_all, served, p0, err, _ = pt._solve_mg1d(lam, tau, ExponentialService(mu), rtol=1e-9)
    rho, delta = lam / mu, mu - lam
    bbh = (1 - rho) * rho * np.exp(-delta * tau) / (1 - rho ** 2 * np.exp(-delta * tau)) \
        if rho != 1 else 1 / (2 + mu * tau)                        # printed BBH formula
    ref = tk.mm1_deterministic_patience(lam, 1 / mu, tau)
    assert ref[0] == pytest.approx(bbh, rel=1e-10)
    assert loss == pytest.approx(ref[0], abs=1e-7)
    assert w_all == pytest.approx(ref[1], abs=1e-6 * tau)
    assert served == pytest.approx(ref[2], abs=1e-6 * tau)
    assert 1 - p0 == pytest.approx(rho * (1 - loss), rel=1e-12)     # work conservation


def test_mm1d_tends_to_mm1_without_patience():
    lam, ms = 0.8, 1.0
    loss, w_all, _ = tk.mm1_deterministic_patience(lam, ms, [200.0, np.inf])
    assert loss[0] < 1e-8 and loss[1] == 0.0
    np.testing.assert_allclose(w_all, lam * ms / (1 - lam * ms), rtol=1e-7)   # M/M/1: ρ/(μ−λ)
    heavy = tk.mm1_deterministic_patience(50.0, 1.0, 100.0)        # ρ = 50 does not overflow
    assert heavy[0] == pytest.approx(1 - 1 / 50, rel=1e-9)


def test_mm1d_is_continuous_through_load_one_with_a_long_patience():
    """At ρ = 1 (z = 0) M/M/1+D is π = 1/(2 + λτ), E[W_q] = τ − (τ + λτ²/2)/(2 + λτ);
    one ulp either side of ρ = 1 with λτ ~ 1e7 gives the same (the scaled form of
    ρ > 1 once cancelled to −3e8 s here)."""
    ms, tau = 1.75, 21248482.0
    lam = 1 / ms
    at_one = (1 / (2 + lam * tau), tau - (tau + lam * tau * tau / 2) / (2 + lam * tau))
    for x in (np.nextafter(lam, 0), lam, np.nextafter(lam, 1)):
        loss, w_all, served = tk.mm1_deterministic_patience(x, ms, tau)
        assert (loss, w_all) == pytest.approx(at_one, rel=1e-6)
        assert 0 <= served <= tau


@pytest.mark.parametrize("lam,d,tau", [(0.5, 1.0, 2.5), (0.9, 1.0, 7.0), (1.6, 1.0, 4.2),
                                       (1 / 25, 23.0, 60.0)])
def test_exact_solver_against_md1d_series(lam, d, tau):
    """Product integration with one atom reproduces Erlang's M/D/1 series (x ≤ τ)."""
    loss, w_all, served, *_ = pt._solve_mg1d(lam, tau, tk.ServiceLaw.deterministic(d), rtol=1e-9)
    ref = tk.md1_deterministic_patience(lam, d, tau)
    assert loss == pytest.approx(ref[0], abs=1e-6)
    assert w_all == pytest.approx(ref[1], abs=1e-6 * tau)
    assert served == pytest.approx(ref[2], abs=1e-6 * tau)


ROUNDING_FACTOR = 8.0    # measured err/(ε·Σ|terms|) ≤ 3.2 over SERIES_CASES; docs/models/token_limit.md
SERIES_CASES = [(0.5, 1.0, 24.0), (0.9, 1.0, 7.0), (1.6, 1.0, 4.2), (0.5, 1.0, 2.5),
                (0.04, 23.0, 60.0), (0.3, 1.0, 40.0), (0.99, 1.0, 12.1), (2.0, 0.37, 6.0),
                (0.1, 0.1, 120.0), (1.2, 1.0, 10.0), (0.05, 0.5, 200.0), (0.6, 1.0, 20.0)]


@pytest.mark.parametrize("lam,d,tau", SERIES_CASES)
def test_md1d_series_within_its_rounding_estimate(lam, d, tau):
    """The double-precision series (λτ ≤ 12) against the same series in 60 digits: the
    error stays within a few ε·Σ|terms| (the alternating series' cancellation), and within
    the exact solver's accuracy contract rtol·τ (rtol = 1e-6)."""
    loss, w_all, _ = tk.md1_deterministic_patience(lam, d, tau)
    ref_loss, ref_w, estimate = md1d_series_reference(lam, d, tau)
    assert abs(w_all - ref_w) <= ROUNDING_FACTOR * estimate + 4 * EPS * tau
    assert abs(w_all - ref_w) <= 1e-6 * tau
    assert abs(loss - ref_loss) <= 1e-6


def test_md1d_tends_to_md1_pollaczek_khinchine():
    """Series (λτ = 12), Volterra fallback (λτ = 100) and τ = ∞ approach the M/D/1 wait.

    The tolerances are the methods' accuracy, not one machine's result: at λτ = 12 the
    series' rounding estimate (ROUNDING_FACTOR·ε·Σ|terms| ≈ 5e-7 here; 9e-9 measured with
    numpy 2.4, 5e-9 before) plus the patience's own effect (60-digit series: 7e-13);
    at λτ = 100 the solver's rtol·τ."""
    loss, w_all, _ = tk.md1_deterministic_patience(0.5, 1.0, [24.0, 200.0, np.inf])
    assert loss[0] < 1e-10 and loss[1] < 1e-12 and loss[2] == 0.0
    pk = md1_mean_latency(0.5, 1.0) - 1.0
    _, ref_w, estimate = md1d_series_reference(0.5, 1.0, 24.0)
    assert abs(ref_w - pk) < 1e-12                                  # τ = 24 barely matters
    assert abs(w_all[0] - pk) <= ROUNDING_FACTOR * estimate + 1e-12
    assert w_all[2] == pytest.approx(pk, rel=1e-12)
    assert w_all[1] == pytest.approx(pk, abs=2e-6 * 200.0)          # the solver's rtol·τ


@pytest.mark.parametrize("dist,lam,n_max,tau", [
    (LOGN, 1 / 25, 1300, 60.0), (LOGN, 1 / 25, 3000, 60.0),           # §V-B, ρ = 0.89 and 1.2
    (tl.uniform(0, 1000), 0.2, 400, 20.0),                            # ρ ≈ 1.9
    (tl.EmpiricalTokens.from_counts([3, 3, 50, 400]), 0.3, None, 5.0)],  # few atoms
    ids=["1300", "3000", "uniform-overload", "empirical"])
def test_exact_impatience_against_simulation(dist, lam, n_max, tau):
    r = tk.simulate_token_queue(lam, A, C, dist, n_max, tau, n_jobs=300_000, seed=9)
    m = tk.impatience(lam, A, C, dist, n_max, tau)
    assert m.error_estimate < 1e-6
    assert abs(r.loss_fraction - m.loss_fraction) < 4 * SIGMA * r.ci95_loss + 1e-9
    assert abs(r.mean_wait_all_s - m.mean_wait_all_s) < 4 * SIGMA * r.ci95_wait_all_s
    assert abs(r.mean_wait_served_s - m.mean_wait_served_s) < 4 * SIGMA * r.ci95_wait_served_s


def test_high_variability_exact_matches_simulation_and_interpolation_uses_mm1d():
    """ζ² ≈ 97 (99 % one token, 1 % 10 000): eqs 6-8 are outside their range."""
    e = tl.EmpiricalTokens.from_counts([1] * 99 + [10_000])
    r = tk.simulate_token_queue(0.1, A, 0.0, e, None, 30.0, n_jobs=300_000, seed=5)
    ex = tk.impatience(0.1, A, 0.0, e, None, 30.0)
    ip = tk.impatience(0.1, A, 0.0, e, None, 30.0, method="interpolation")
    assert abs(r.loss_fraction - ex.loss_fraction) < 4 * SIGMA * r.ci95_loss
    assert abs(r.mean_wait_all_s - ex.mean_wait_all_s) < 4 * SIGMA * r.ci95_wait_all_s
    assert ip.zeta2 > 90
    mm = tk.mm1_deterministic_patience(0.1, A * e.mean(), 30.0)
    assert ip.loss_fraction == pytest.approx(mm[0], rel=1e-9)
    assert ex.loss_fraction > 100 * ip.loss_fraction          # measured: 0.167 against 9e-6


def test_infinite_arrival_rate_loses_everyone():
    for method in ("exact", "interpolation"):
        r = tk.impatience([np.inf, 0.0], A, C, LOGN, 1300, 60.0, method=method)
        np.testing.assert_array_equal(r.loss_fraction, [1.0, 0.0])
        np.testing.assert_array_equal(r.mean_wait_all_s, [60.0, 0.0])


def test_exact_solver_converges_under_refinement():
    law = tk.ServiceLaw.clipped(A, C, LOGN, 1300)
    coarse = pt._solve_mg1d(1 / 25, 60.0, law, rtol=1e-6)
    fine = pt._solve_mg1d(1 / 25, 60.0, law, rtol=1e-9)
    assert fine[5] > coarse[5]
    assert abs(fine[0] - coarse[0]) < 1e-6 and abs(fine[1] - coarse[1]) < 60e-6


# ------------------------------------------------------------ impatience: interpolation (eqs 6-9)

def test_interpolation_at_zeta2_zero_is_md1d():
    """n_max = 1: S = a + c is deterministic, ζ² = 0, eq 6 gives π^det (and exact agrees)."""
    interp = tk.impatience(0.05, A, C, LOGN, 1, 3.0, method="interpolation")
    exact = tk.impatience(0.05, A, C, LOGN, 1, 3.0)
    ref = tk.md1_deterministic_patience(0.05, A + C, 3.0)
    assert interp.zeta2 == pytest.approx(0.0, abs=1e-12)
    assert interp.loss_fraction == pytest.approx(ref[0], rel=1e-12)
    assert interp.mean_wait_all_s == pytest.approx(ref[1], rel=1e-12)
    assert exact.loss_fraction == pytest.approx(ref[0], abs=1e-7)


def test_interpolation_at_zeta2_one_is_mm1d():
    """A two-point token law with c = a(sd(n) − E n) has ζ² = 1: eq 6 gives π^exp."""
    counts = np.array([1] * 95 + [100] * 5)
    e = tl.EmpiricalTokens.from_counts(counts)
    c = A * (counts.std() - counts.mean())
    es = A * counts.mean() + c
    r = tk.impatience(0.6 / es, A, c, e, None, 2 * es, method="interpolation")
    ref = tk.mm1_deterministic_patience(0.6 / es, es, 2 * es)
    assert r.zeta2 == pytest.approx(1.0, abs=1e-12)
    assert r.loss_fraction == pytest.approx(ref[0], rel=1e-9)
    assert r.mean_wait_all_s == pytest.approx(ref[1], rel=1e-9)


@pytest.mark.parametrize("method", ["exact", "interpolation"])
def test_eq9_and_vectorisation(method):
    tau = 60.0
    r = tk.impatience([[1 / 40], [1 / 25]], A, C, LOGN, [800, 1300, 3000], tau, method=method)
    assert r.loss_fraction.shape == (2, 3)
    np.testing.assert_allclose(r.mean_wait_all_s,
                               tau * r.loss_fraction + r.mean_wait_served_s * (1 - r.loss_fraction),
                               rtol=1e-10)
    assert np.all(np.diff(r.loss_fraction, axis=1) > 0)
    assert np.all(r.loss_fraction[1] > r.loss_fraction[0])


def test_interpolation_is_close_to_exact_in_the_paper_setting():
    """Measured: |Δπ| ≤ 0.0051, |ΔE[W_q]| ≤ 0.47 s, n_max = 500..3000, λ = 1/25, τ = 60 s."""
    n = [500, 1000, 1300, 2000, 3000]
    ex = tk.impatience(1 / 25, A, C, LOGN, n, 60.0)
    ip = tk.impatience(1 / 25, A, C, LOGN, n, 60.0, method="interpolation")
    assert np.max(np.abs(ex.loss_fraction - ip.loss_fraction)) < 0.01
    assert np.max(np.abs(ex.mean_wait_all_s - ip.mean_wait_all_s)) < 1.0


def test_no_patience_is_the_plain_queue():
    r = tk.impatience([1 / 40, 1 / 20], A, C, LOGN, 1600, np.inf)
    np.testing.assert_array_equal(r.loss_fraction, 0.0)
    np.testing.assert_allclose(r.mean_wait_all_s, tk.mean_wait([1 / 40, 1 / 20], A, C, LOGN, 1600))
    assert np.isinf(r.mean_wait_all_s[1])
    with pytest.raises(ValueError, match="method"):
        tk.impatience(0.01, A, C, LOGN, 100, 10.0, method="magic")
    with pytest.raises(ValueError, match="patience"):
        tk.impatience(0.01, A, C, LOGN, 100, 0.0)


@settings(max_examples=15, deadline=None)
@given(lam=st.floats(0.001, 0.2), n_max=st.integers(1, 4000), tau=st.floats(1.0, 200.0))
def test_impatience_properties(lam, n_max, tau):
    """0 ≤ π ≤ 1; E[W_qs] ≤ E[W_q] ≤ τ; patience only shortens the wait."""
    r = tk.impatience(lam, A, C, LOGN, n_max, tau)
    assert 0.0 <= r.loss_fraction <= 1.0
    assert -1e-9 <= r.mean_wait_served_s <= r.mean_wait_all_s + 1e-9 <= tau + 1e-9
    assert r.mean_wait_all_s <= tk.mean_wait(lam, A, C, LOGN, n_max) + 2e-6 * tau   # solver rtol


@settings(max_examples=25, deadline=None)
@given(lam=st.floats(0.0, 0.05), m1=st.integers(1, 5000), m2=st.integers(1, 5000))
def test_mean_wait_grows_with_the_limit(lam, m1, m2):
    lo, hi = sorted((m1, m2))
    w = tk.mean_wait(lam, A, C, LOGN, [lo, hi])
    assert w[0] <= w[1] or np.isinf(w[1])


# ------------------------------------------------------------ optimal limit (eqs 10-13)

def test_v1_optimum_matches_brute_force():
    """Brute force over every integer with eqs 2-3 summed as printed and eq 1 by hand."""
    dist, lam, theta = tl.uniform(0, 600), 0.08, 0.99
    n = np.arange(1, 601)
    pmf = tl.token_pmf(dist, np.arange(1, 601))
    vals = []
    for m in n:
        e1, e2 = _eqs_2_3(dist, int(m))
        es = A * e1 + C
        es2 = es ** 2 + A ** 2 * (e2 - e1 ** 2)
        w = lam * es2 / (2 * (1 - lam * es))
        k = np.arange(1, 601)
        u = pmf @ np.where(k <= m, 1.0, 1 - (k - m) / k)            # E[u|n_max] as printed
        vals.append(theta * u - (1 - theta) * w)
    best = tk.optimal_limit(lam, A, C, dist, theta)
    assert best.n_max == n[int(np.argmax(vals))]
    assert best.objective == pytest.approx(max(vals), rel=1e-10)


@pytest.mark.parametrize("method", ["interpolation", "exact"])
def test_v2_search_finds_the_exhaustive_optimum(method):
    dist, lam, tau = tl.uniform(0, 300), 0.15, 20.0
    every = np.arange(1, 301) if method == "interpolation" else np.arange(100, 301, 4)
    full = tk.optimal_limit(lam, A, C, dist, 0.95, 4.0, tau, method=method, candidates=every)
    fast = tk.optimal_limit(lam, A, C, dist, 0.95, 4.0, tau, method=method)
    if method == "interpolation":
        assert fast.n_max == full.n_max
    assert fast.objective >= full.objective - 1e-12


def test_v2_sign_and_argument_checks():
    cand = np.arange(100, 4001, 100)
    good = tk.optimal_limit(1 / 25, A, C, LOGN, 0.95, 4.0, 60.0, candidates=cand)
    printed = tk.optimal_limit(1 / 25, A, C, LOGN, 0.95, 4.0, 60.0, candidates=cand,
                               printed_sign=True)
    assert good.n_max < printed.n_max        # the printed "+ (1 − θ)E[W]" rewards delay
    with pytest.raises(ValueError, match="together"):
        tk.optimal_limit(1 / 25, A, C, LOGN, 0.95, loss_cost=4.0)
    with pytest.raises(ValueError, match="theta"):
        tk.optimal_limit(1 / 25, A, C, LOGN, 1.5)


# ------------------------------------------------------------ Table I and §V-B

def test_table1_fit_against_polyfit():
    p = presets.token_latency_profiles()["a100_llama2_7b_table1"]
    f = p.fit()
    slope, icpt = np.polyfit(p.output_tokens, p.latency_s, 1)
    assert f.a_s_per_token == pytest.approx(slope, rel=1e-10)
    assert f.c_s == pytest.approx(icpt, rel=1e-9)
    assert (round(f.a_s_per_token, 6), round(f.c_s, 3), round(f.r2, 4)) == (0.023087, 0.490, 0.9909)
    assert (A, C) == (round(f.a_s_per_token, 6), round(f.c_s, 3))
    g = p.fit_with_input()
    design = np.column_stack([p.output_tokens, p.input_tokens, np.ones(7)])
    coef = np.linalg.solve(design.T @ design, design.T @ p.latency_s)      # normal equations
    np.testing.assert_allclose([g.a_s_per_token, g.b_s_per_input_token, g.c_s], coef, rtol=1e-8)
    assert g.r2 > f.r2
    assert f.latency_s(1024) == pytest.approx(A * 1024 + f.c_s, rel=1e-4)


def test_fit_arguments_are_validated():
    with pytest.raises(ValueError, match="output_tokens"):
        fit_token_latency([1, 1], [2.0, 3.0])
    with pytest.raises(ValueError, match="seconds"):
        fit_token_latency([1, 2], [2.0, -3.0])
    with pytest.raises(ValueError, match="input_tokens"):
        fit_token_latency_with_input([1, 2, 3], [4, 4], [1.0, 2.0, 3.0])


@pytest.mark.parametrize("text,field", [
    ("extra = 1\n", "extra"),
    ("[columns]\ninput_tokens = [1, 2]\noutput_tokens = [1, 2, 3]\nlatency_s = [1.0, 2.0]\n",
     "output_tokens"),
    ("[columns]\ninput_tokens = [1, 2]\noutput_tokens = [1.5, 2]\nlatency_s = [1.0, 2.0]\n",
     "output_tokens"),
    ("[columns]\ninput_tokens = [1, 2]\noutput_tokens = [1, 2]\nlatency_s = [1.0, -2.0]\n",
     "latency_s"),
    ("[columns]\ninput_tokens = [1, 2]\noutput_tokens = [1, 2]\n", "latency_s")])
def test_bad_token_preset_names_file_and_field(tmp_path, text, field):
    head = 'id = "x"\nname = "x"\nsource = "x"\n'
    if not text.startswith("["):
        text += ("[columns]\ninput_tokens = [1, 2]\noutput_tokens = [1, 2]\n"
                 "latency_s = [1.0, 2.0]\n")
    path = tmp_path / "bad.toml"
    path.write_text(head + text)
    with pytest.raises(ValueError, match=f"bad.toml.*{field}"):
        presets.load_token_latency_profile(path)


def test_paper_comparison_rows_and_documented_reproduction():
    rows = {r.quantity: r for r in tk.paper_comparison()}
    assert len(rows) == 10
    share = rows["requests asking ≤ 1600 tokens"]
    assert share.model == pytest.approx(share.paper, abs=0.01)                 # 70.53 %
    assert rows["requests asking ≤ 1300 tokens"].model == pytest.approx(59.0, abs=1.0)
    assert rows["E[W] at n_max = 1600"].model == pytest.approx(26.2, abs=0.05)
    assert rows["loss fraction at n_max = 1300"].model == pytest.approx(0.128, abs=0.001)
    assert rows["optimal n_max, V1 (λ = 1/40, θ = 119/120)"].model == 1252
    # the module docs: a = 0.02202 s/token, c = 0.781 s give the paper's 23 s and −58.93 %
    w = tk.mean_wait(1 / 40, 0.02202199, 0.78102705, LOGN, [1600, 3000])
    assert w[0] == pytest.approx(23.0, abs=1e-3)
    assert 100 * (w[0] / w[1] - 1) == pytest.approx(-58.93, abs=1e-3)
    # ... and eq 10 reaches 1600 only for a ≈ 0.020 s/token (c = 0)
    assert abs(tk.optimal_limit(1 / 40, 0.0199, 0.0, LOGN, 119 / 120).n_max - 1600) < 30


def test_simulator_backends_agree_and_seed_reproduces():
    args = (0.05, A, C, tl.uniform(0, 1000), 700, 15.0)
    a = tk.simulate_token_queue(*args, n_jobs=5000, seed=1, backend="numpy")
    b = tk.simulate_token_queue(*args, n_jobs=5000, seed=1, backend="numba")
    assert a == b
    with pytest.raises(ValueError, match="lam"):
        tk.simulate_token_queue(0.0, A, C, LOGN)


def test_solver_backends_agree():
    law = tk.ServiceLaw.clipped(A, C, tl.uniform(0, 1000), 600)
    g_py, i_py = pt._volterra(0.05, 30.0, law, 96, backend="numpy")
    g_nb, i_nb = pt._volterra(0.05, 30.0, law, 96)
    np.testing.assert_allclose(g_py, g_nb, rtol=1e-13)
    assert i_py == pytest.approx(i_nb, rel=1e-13)


# ------------------------------------------------------------ Erlang's M/D/1+D series, 60 digits

EPS = float(np.finfo(float).eps)


def md1d_series_reference(lam: float, d: float, tau: float) -> tuple:
    """Erlang's M/D/1+D series (as in ``md1_deterministic_patience``) in 60-digit decimal
    arithmetic: (π, E[W_q], rounding estimate of E[W_q] in double precision).

    The series alternates: its terms reach e^λτ-ish sizes while the sum stays O(1), so
    double precision loses about ε·Σ|terms|.  First-order propagation through
    E[W_q] = τ − B/(1 + ρg) gives the estimate ε·(Σ|B_k| + ρ·(B/(1 + ρg))·Σ|g_k|)/(1 + ρg),
    g = Σg_k and B = Σ B_k the series of g(τ) and ∫_0^τ g (docs/models/token_limit.md).
    """
    getcontext().prec = 60
    lam_, d_, tau_ = Decimal(lam), Decimal(d), Decimal(tau)
    g = big = Decimal(0)
    abs_g = abs_big = Decimal(0)
    fact, k = Decimal(1), 0
    while k * d_ <= tau_:
        fact *= max(k, 1)
        u = lam_ * (tau_ - k * d_)
        term = (-u) ** k / fact * u.exp() if k else u.exp()
        part = t = Decimal(1)              # Σ_{j≤k} (−u)^j/j!, each term from the last
        for j in range(1, k + 1):          # (not (−u)^j/j!: j! has thousands of digits)
            t = t * -u / j
            part += t
        b = (u.exp() * part - 1) / lam_
        g, big, abs_g, abs_big = g + term, big + b, abs_g + abs(term), abs_big + abs(b)
        k += 1
    den = 1 + lam_ * d_ * g
    w_all = tau_ - big / den
    estimate = Decimal(EPS) * (abs_big + lam_ * d_ * big / den * abs_g) / den
    return float(1 - g / den), float(w_all), float(estimate)
