"""The tandem's solver routes against the previous dense solver and against simulation.

``pl.tandem`` reduces the chain to (level, memory[, CPU holds]) when a bound
shows the compute units are never all busy, and otherwise solves the full phase
space by shifted cyclic reduction.  The reference is the previous solver
(logarithmic reduction, dense inverses), kept private as
``pl.tandem(..., method="reference")``; the job-level simulator checks a case
too large for it.
"""
import numpy as np
import pytest

from engine import pipeline as pl
from engine.pipeline import chain, qbd
from engine.pipeline.sim import simulate_tandem
from tests.pipeline.test_pipeline import assert_stage_times_within_ci

KEYS = ("max_throughput_per_ms", "throughput_per_ms", "l_cpu", "l_mem", "l_cu", "w_cpu_ms",
        "w_mem_ms", "w_cu_ms", "w_total_ms", "l_total", "p_cpu_blocked", "p_mem_blocked")
LOADS = np.array([0.0, 0.3, 0.9, 0.98, 0.995, 1.2])        # × max_throughput_per_ms
RATES = [(1.0, 1.2, 0.35),          # compute units a bottleneck: full phase space
         (1.0, 2.0, 0.1),           # the units fill now and then
         (2.0, 1.0, 0.5),           # memory the bottleneck
         (1.0, 1.5, 3.0),           # units never all busy from c = 16 on (reduced chain)
         (1.0, 1.5, 3e4)]           # units never all busy from c = 4 on


def _free(mu, K, c):
    rates = np.array([mu], dtype=float)
    return bool(chain.units_never_all_busy(rates, K, c)[0])


def _assert_same(got, ref, rel=1e-9, abs_prob=1e-14):
    for key in KEYS:
        a, b = np.asarray(getattr(got, key)), np.asarray(getattr(ref, key))
        np.testing.assert_array_equal(np.isinf(a), np.isinf(b), err_msg=key)
        fin = np.isfinite(b)
        tol = abs_prob if key.startswith("p_") else 0.0
        np.testing.assert_allclose(a[fin], b[fin], rtol=rel, atol=tol, err_msg=key)
    np.testing.assert_array_equal(got.stable, ref.stable)


@pytest.mark.parametrize("blocking", pl.BLOCKING)
@pytest.mark.parametrize("K,c", [(1, 1), (1, 4), (2, 2), (3, 1), (3, 5), (4, 8), (6, 3),
                                 (2, 16), (3, 20)])
def test_new_routes_match_the_previous_dense_solver(K, c, blocking):
    """Every route agrees with logarithmic reduction to 1e-9, up to and beyond saturation."""
    for mu in RATES:
        cap = float(pl.tandem(0.0, *mu, K, c, blocking).max_throughput_per_ms)
        lam = LOADS * cap
        ref = pl.tandem(lam, *mu, K, c, blocking, method="reference")
        _assert_same(pl.tandem(lam, *mu, K, c, blocking), ref)
        _assert_same(pl.tandem(lam, *mu, K, c, blocking, method="full"), ref)
        assert float(pl.capacity(*mu, K, c, blocking)) == pytest.approx(cap, rel=1e-12)
        assert not np.any(pl.tandem(cap, *mu, K, c, blocking).stable)


def test_the_grid_exercises_both_routes():
    assert _free((1.0, 1.5, 3e4), 1, 4) and _free((1.0, 1.5, 3.0), 2, 16)
    assert _free((1.0, 1.5, 3.0), 3, 20) and not _free((1.0, 1.5, 3.0), 4, 8)
    assert not _free((1.0, 1.2, 0.35), 3, 20) and not _free((1.0, 2.0, 0.1), 3, 20)


@pytest.mark.parametrize("blocking", pl.BLOCKING)
def test_solve_phases_names_the_chain_tandem_solves(blocking):
    """The page decides what to solve on a slider move from this count."""
    extra = 1 if blocking == "after" else 0
    assert pl.solve_phases(1.0, 1.5, 3.0, 3, 20, blocking) == 3 + 1 + extra    # units never fill
    full = 4 * 21 + (3 + 20 + 2 if blocking == "after" else 0)                 # (K+1)(c+1) (+K+c+2)
    assert pl.solve_phases(1.0, 2.0, 0.1, 3, 20, blocking) == full


@pytest.mark.parametrize("blocking", pl.BLOCKING)
def test_reduced_chain_only_where_the_units_never_fill(blocking):
    """The check rejects the reduced chain where it would be wrong and solves the full one.

    With μ_cu = 2 and c = 3 all units are busy now and then (p_mem_blocked
    0.02-0.2 %): the chain without them is off by more than 1e-6, far outside
    the tolerance; the route ``tandem`` takes is the full one and agrees with the
    reference to 1e-9.
    """
    mu, K, c = (1.0, 3.0, 2.0), 3, 3
    assert not _free(mu, K, c)
    cap = float(pl.capacity(*mu, K, c, blocking))
    lam = np.array([0.5, 0.95]) * cap
    ref = pl.tandem(lam, *mu, K, c, blocking, method="reference")
    _assert_same(pl.tandem(lam, *mu, K, c, blocking), ref)
    ph = chain.free_phases(K, blocking)
    rates = np.tile(np.array(mu, dtype=float), (lam.size, 1))
    wrong = qbd.solve_stable(ph, lam, rates)["l_cpu"]
    assert np.all(np.abs(wrong / ref.l_cpu - 1) > 1e-6)


@pytest.mark.parametrize("blocking", pl.BLOCKING)
@pytest.mark.parametrize("mu,K,c", [((1.0, 2.0, 1.0), 2, 12), ((1.0, 1.5, 3.0), 2, 10),
                                    ((1.0, 3.0, 0.6), 2, 4), ((5.0, 1.0, 0.2), 1, 5),
                                    ((1.0, 1.5, 1.0), 4, 2)])
def test_all_units_busy_bound_holds(mu, K, c, blocking):
    """exp(bound) ≥ the exact P(all c units busy): saturated, and ≥ p_mem_blocked when stable."""
    rates = np.array([mu], dtype=float)
    bound = np.exp(chain.log_all_units_busy_bound(rates, K, c)[0])
    assert bound < 0.8                                     # not the trivial bound
    ph = chain.full_phases(K, c, blocking)
    theta, cap = qbd.saturation(ph, rates)
    assert theta[0, ph.b == c].sum() <= bound * (1 + 1e-9)
    res = pl.tandem(np.array([0.5, 0.9]) * cap[0], *mu, K, c, blocking)
    assert np.all(res.p_mem_blocked <= bound * (1 + 1e-9))


def test_sparse_saturation_vector_matches_dense():
    for blocking in pl.BLOCKING:
        ph = chain.full_phases(16, 20, blocking)                 # 357 (394) phases: sparse LU
        assert ph.n >= qbd.SPARSE_PHASES
        rates = np.array([[1.0, 1.2, 0.05], [3.0, 0.7, 0.2]])
        theta, cap = qbd.saturation(ph, rates)
        A1, A2, _ = chain.qbd_blocks(ph, np.zeros(2), rates)
        dense = qbd.stationary_vector(A1 + A2)
        np.testing.assert_allclose(theta, dense, rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(cap, np.einsum("pi,pij->p", dense, A2), rtol=1e-12)


@pytest.mark.parametrize("blocking", pl.BLOCKING)
def test_cyclic_reduction_solves_the_matrix_equation(blocking):
    """G is stochastic, solves A2 + A1 G + λG² = 0 and equals logarithmic reduction's G."""
    ph = chain.full_phases(4, 5, blocking)
    rates = np.array([[1.0, 1.2, 0.3]] * 3)
    cap = qbd.saturation(ph, rates)[1]
    lam = np.array([0.2, 0.9, 0.999]) * cap
    A1, A2, _ = chain.qbd_blocks(ph, lam, rates)
    G = qbd.cyclic_reduction(lam, A1, A2)
    np.testing.assert_allclose(G.sum(axis=2), 1.0, atol=1e-13)
    assert np.abs(A2 + A1 @ G + lam[:, None, None] * (G @ G)).max() < 1e-13
    np.testing.assert_allclose(G, qbd.log_reduction(lam, A1, A2), atol=1e-11)


def test_mixed_routes_in_one_call_broadcast_like_single_calls():
    mu_cu = np.array([0.1, 12.0, 0.35])                   # full, reduced, full
    lam = np.array([[0.2], [0.6]])
    res = pl.tandem(lam, 1.0, 1.5, mu_cu, 3, 6, "after")
    assert res.w_total_ms.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            one = pl.tandem(lam[i, 0], 1.0, 1.5, mu_cu[j], 3, 6, "after")
            for key in KEYS:
                assert getattr(res, key)[i, j] == pytest.approx(getattr(one, key), rel=1e-12)


@pytest.mark.parametrize("blocking", pl.BLOCKING)
def test_large_tandem_matches_job_level_simulation(blocking):
    """K = 16, c = 128 (2193+ phases on the full route) against the simulator."""
    mu, K, c = (1.0, 2.0, 0.1), 16, 128
    assert _free(mu, K, c)
    cap = float(pl.capacity(*mu, K, c, blocking))
    lam = 0.8 * cap
    exact = pl.tandem(lam, *mu, K, c, blocking)
    sim = simulate_tandem(lam, *mu, K, c, blocking, n_jobs=400_000, seed=20100512)
    assert_stage_times_within_ci(sim, exact)
    assert sim.l_mem == pytest.approx(exact.l_mem, rel=0.05)
    assert sim.p_cpu_blocked == pytest.approx(exact.p_cpu_blocked, abs=2e-3)
    assert sim.p_mem_blocked == 0.0 == exact.p_mem_blocked
    assert sim.throughput_per_ms == pytest.approx(lam, rel=0.02)


@pytest.mark.parametrize("blocking", pl.BLOCKING)
def test_tiny_rates_keep_every_measure_accurate(blocking):
    """λ near the underflow limit and stiff units: measures of order λ, not roundoff of G."""
    for lam, mu, K, c in [(1e-300, (1.0, 2.0, 1e6), 1, 1), (1e-200, (1e100,) * 3, 2, 2),
                          (1e-6, (1.0, 1.2, 0.35), 3, 2)]:
        got = pl.tandem(lam, *mu, K, c, blocking)
        ref = pl.tandem(lam, *mu, K, c, blocking, method="reference")
        for key in ("w_cpu_ms", "w_mem_ms", "w_cu_ms", "l_mem", "l_cu"):
            assert getattr(got, key) == pytest.approx(getattr(ref, key), rel=1e-9), key
        assert got.l_mem >= 0 and got.p_cpu_blocked >= 0 and got.p_mem_blocked >= 0
