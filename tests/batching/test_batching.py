"""The dynamic-batching model (Inoue 2021) against independent methods.

Expected values come from other routes than the engine's: the truncated
batch-size chain of eq 6 (tests/reference.py), the dense departure chain for
finite b_max, the M/D/1 Pollaczek-Khinchine formula, simulation, and the
paper's own derivation steps.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from engine import batching as bt
from engine.batching.exact import unlimited_moments
from engine.batching.sim import simulate_batching
from tests.reference import (converged_batch_chain_latency,
                             converged_departure_chain_latency, md1_mean_latency)

V100 = (0.1438, 1.8874)   # Inoue 2021 §3.3, fitted from Table 1(a)
P4 = (0.5833, 1.4284)     # Inoue 2021 §3.3, fitted from Table 1(b)
PRESETS = {"V100": V100, "P4": P4, "small-tau0": (1.0, 0.01), "tau0=0": (1.0, 0.0)}


# ------------------------------------------------------------ closed forms

@pytest.mark.parametrize("alpha,tau0", PRESETS.values(), ids=PRESETS.keys())
def test_phi_closed_forms_match_their_derivation(alpha, tau0):
    """Eqs 41/42 as printed equal the unsimplified lines of Theorem 2's proof."""
    lam = np.linspace(0, 0.99, 50) / alpha
    rho = lam * alpha
    phi0_proof = alpha + tau0 + lam * (1 + 2 * rho) * (alpha + tau0) ** 2 / (2 * (1 - rho ** 2))
    phi1_proof = alpha + tau0 + (1 + 2 * rho) * (rho * tau0 + rho * alpha + tau0) / (
        2 * (1 - rho ** 2))
    np.testing.assert_allclose(bt.phi0(lam, alpha, tau0), phi0_proof, rtol=1e-13)
    np.testing.assert_allclose(bt.phi1(lam, alpha, tau0), phi1_proof, rtol=1e-13)


@pytest.mark.parametrize("alpha,tau0", [V100, P4])
def test_phi0_below_phi1_exactly_up_to_one_over_alpha_plus_tau0(alpha, tau0):
    """Theorem 2: φ0 ≤ φ1 ⇔ λ ≤ 1/(α + τ0) (the paper's τ1 there is τ0)."""
    lam = np.linspace(0.001, 0.999, 997) / alpha
    below = bt.phi0(lam, alpha, tau0) <= bt.phi1(lam, alpha, tau0)
    np.testing.assert_array_equal(below, lam <= 1 / (alpha + tau0))
    np.testing.assert_allclose(bt.phi(lam, alpha, tau0),
                               np.minimum(bt.phi0(lam, alpha, tau0), bt.phi1(lam, alpha, tau0)))


def test_eq35_agrees_with_lemma2_and_eq38():
    """E[W] from eq 35 (via π0) equals eq 15 with eq 30 (via E[B], E[B²])."""
    alpha, tau0 = V100
    lam = np.array([0.3, 2.0, 5.0])
    _, eb, eb2 = unlimited_moments(lam, alpha, tau0)
    pi0 = 1 - (lam * alpha + lam * tau0 / eb)                               # eq 38
    eq15 = (eb2 - eb) / (2 * lam * eb) + alpha * eb2 / eb + tau0            # eqs 15, 30
    rho = lam * alpha
    eq35 = alpha + tau0 + lam * (1 + 2 * rho) * (
        2 * alpha * tau0 + alpha ** 2 + (1 - pi0 - rho) * tau0 / lam) / (2 * (1 - rho ** 2))
    np.testing.assert_allclose(eq35, eq15, rtol=1e-12)
    np.testing.assert_allclose(bt.mean_latency(lam, alpha, tau0), eq15, rtol=1e-12)


def test_eq7_as_printed_is_wrong_and_eq34_is_right():
    """E[A²] of a Poisson count with deterministic mean λτ is λτ + (λτ)², not (λτ)²."""
    lam, tau = 2.0, 1.5
    rng = np.random.default_rng(7)
    a = rng.poisson(lam * tau, 2_000_000).astype(float)
    second = np.mean(a ** 2)
    assert abs(second - (lam * tau + (lam * tau) ** 2)) < 0.05            # eq 34
    assert abs(second - (lam * tau) ** 2) > 2.5                           # eq 7 as printed


# ------------------------------------------------------------ exactness

CHAIN_CASES = [(name, rho) for name in PRESETS for rho in (0.05, 0.3, 0.7, 0.9, 0.97, 0.99)
               if (name, rho) != ("V100", 0.99)]      # that chain needs 6400 states


@pytest.mark.parametrize("name,rho", CHAIN_CASES)
def test_exact_latency_matches_truncated_chain(name, rho):
    """Relative error ≤ 1e-6 (observed ≤ 2e-10) against the converged eq-6 chain."""
    alpha, tau0 = PRESETS[name]
    lam = rho / alpha
    ref_w, ref_b = converged_batch_chain_latency(lam, alpha, tau0)
    st_ = bt.stationary(lam, alpha, tau0)
    assert st_.mean_latency_ms == pytest.approx(ref_w, rel=1e-6)
    assert st_.mean_batch_size == pytest.approx(ref_b, rel=1e-6)


@pytest.mark.parametrize("alpha,tau0", [V100, P4, (1.0, 0.0)])
def test_b_max_one_is_md1(alpha, tau0):
    service = alpha + tau0
    lam = np.linspace(0.01, 0.99, 25) / service
    np.testing.assert_allclose(bt.mean_latency(lam, alpha, tau0, b_max=1),
                               md1_mean_latency(lam, service), rtol=1e-10)
    np.testing.assert_allclose(bt.mean_batch_size(lam, alpha, tau0, b_max=1), 1.0)
    np.testing.assert_allclose(bt.utilization(lam, alpha, tau0, b_max=1), lam * service,
                               rtol=1e-10)


@pytest.mark.parametrize("b_max", [2, 8, 32])
@pytest.mark.parametrize("load", [0.3, 0.8, 0.95])
def test_finite_b_max_matches_dense_departure_chain(b_max, load):
    alpha, tau0 = V100
    lam = load * bt.capacity(alpha, tau0, b_max)
    tau = alpha * np.arange(1, b_max + 1) + tau0
    ref_w, ref_b = converged_departure_chain_latency(lam, tau)
    st_ = bt.stationary(lam, alpha, tau0, b_max)
    assert st_.mean_latency_ms == pytest.approx(ref_w, rel=1e-8)
    assert st_.mean_batch_size == pytest.approx(ref_b, rel=1e-8)


@pytest.mark.parametrize("alpha,tau0", [V100, P4])
def test_finite_b_max_converges_to_unlimited(alpha, tau0):
    lam = np.array([0.2, 0.5, 0.8]) / alpha
    unlimited = bt.mean_latency(lam, alpha, tau0)
    gaps = [np.max(np.abs(bt.mean_latency(lam, alpha, tau0, b) / unlimited - 1))
            for b in (64, 256, 1024)]
    assert gaps[0] > gaps[1] > gaps[2] or gaps[2] < 1e-12
    assert gaps[-1] < 1e-9


@pytest.mark.parametrize("alpha,tau0,b_max,rho", [
    (*V100, None, 0.5), (*P4, None, 0.9), (*V100, 16, 0.7), (*P4, 4, 0.8)])
def test_exact_latency_matches_simulation(alpha, tau0, b_max, rho):
    lam = rho * bt.capacity(alpha, tau0, b_max)
    sim = simulate_batching(lam, alpha, tau0, b_max=b_max, n_jobs=1_000_000, seed=11)
    exact = bt.stationary(lam, alpha, tau0, b_max)
    assert abs(sim.mean_latency_ms - exact.mean_latency_ms) < 4 * sim.ci95_ms
    assert sim.mean_batch_size == pytest.approx(exact.mean_batch_size, rel=0.02)
    assert sim.utilization == pytest.approx(exact.utilization, abs=0.01)


def test_exact_curve_is_accurate_near_saturation():
    """ρ → 1: E[W] approaches φ1 (π0 → 0) and stays below it."""
    alpha, tau0 = P4
    lam = np.array([0.999, 0.9999]) / alpha
    exact = bt.mean_latency(lam, alpha, tau0)
    assert np.all(exact <= bt.phi(lam, alpha, tau0) * (1 + 1e-12))
    np.testing.assert_allclose(exact, bt.phi1(lam, alpha, tau0), rtol=1e-6)


# ------------------------------------------------------------ edges and errors

def test_zero_load_and_unstable_loads():
    alpha, tau0 = V100
    lam = np.array([0.0, 1 / alpha, 2 / alpha, np.inf])
    st_ = bt.stationary(lam, alpha, tau0)
    assert st_.mean_latency_ms[0] == pytest.approx(alpha + tau0)
    assert np.all(np.isinf(st_.mean_latency_ms[1:]))
    assert np.all(np.isinf(bt.phi(lam[1:], alpha, tau0)))
    np.testing.assert_array_equal(st_.utilization[1:], 1.0)
    cap8 = bt.capacity(alpha, tau0, 8)
    assert np.isinf(bt.mean_latency(cap8, alpha, tau0, 8))
    assert bt.mean_batch_size(2 * cap8, alpha, tau0, 8) == 8
    assert bt.energy_efficiency(2 / alpha, alpha, tau0, 0.04, 0.15) == pytest.approx(1 / 0.04)


@pytest.mark.parametrize("kwargs,name", [
    (dict(lam_per_ms=-1.0), "lam_per_ms"), (dict(lam_per_ms=np.nan), "lam_per_ms"),
    (dict(alpha_ms=0.0), "alpha_ms"), (dict(alpha_ms=-0.1), "alpha_ms"),
    (dict(tau0_ms=-1.0), "tau0_ms"), (dict(b_max=0), "b_max"), (dict(b_max=2.5), "b_max"),
    (dict(alpha_ms=np.inf), "alpha_ms")])
def test_invalid_arguments_name_the_parameter(kwargs, name):
    args = dict(lam_per_ms=1.0, alpha_ms=0.1438, tau0_ms=1.8874, b_max=None) | kwargs
    with pytest.raises(ValueError, match=name):
        bt.mean_latency(**args)


def test_invalid_energy_arguments():
    with pytest.raises(ValueError, match="beta_j"):
        bt.energy_efficiency(1.0, *V100, beta_j=0.0, c0_j=0.1)
    with pytest.raises(ValueError, match="c0_j"):
        bt.energy_efficiency_bound(1.0, *V100, beta_j=0.1, c0_j=-0.1)


def test_broadcasting_like_a_ufunc():
    lam = np.linspace(0.5, 5, 4)[:, None]
    b_max = np.array([8, 64, np.inf])
    out = bt.mean_latency(lam, *V100, b_max=b_max)
    assert out.shape == (4, 3)
    for j, b in enumerate(b_max):
        np.testing.assert_allclose(out[:, j], bt.mean_latency(lam[:, 0], *V100,
                                                              None if np.isinf(b) else int(b)))
    assert np.ndim(bt.mean_latency(1.0, *V100)) == 0
    assert bt.phi(np.ones((2, 3)), 0.1, np.ones(3)).shape == (2, 3)


def test_frozen_model_binds_parameters():
    m = bt.DynamicBatching(*V100, b_max=32)
    assert m.capacity_per_ms == pytest.approx(32 / (V100[0] * 32 + V100[1]))
    assert m.mean_latency_ms(3.0) == bt.mean_latency(3.0, *V100, 32)
    assert m.phi_ms(lam_per_ms=3.0) == bt.phi(3.0, *V100)
    with pytest.raises(ValueError, match="alpha_ms"):
        bt.DynamicBatching(0.0, 1.0)


def test_frozen_model_old_names_still_answer():
    """The names of before the units (keywords alpha=, tau0=, lam=; attributes alpha,
    tau0, capacity; methods mean_latency, phi) give the same numbers, with a warning."""
    m = bt.DynamicBatching(alpha_ms=V100[0], tau0_ms=V100[1], b_max=32)
    with pytest.warns(DeprecationWarning, match="(alpha|tau0)_ms"):
        old = bt.DynamicBatching(alpha=V100[0], tau0=V100[1], b_max=32)
    assert old == m
    for name, new in (("alpha", "alpha_ms"), ("tau0", "tau0_ms"),
                      ("capacity", "capacity_per_ms")):
        with pytest.warns(DeprecationWarning, match=new):
            assert getattr(m, name) == getattr(m, new)
    with pytest.warns(DeprecationWarning, match="mean_latency_ms"):
        assert m.mean_latency(3.0) == m.mean_latency_ms(3.0)
    with pytest.warns(DeprecationWarning, match="lam_per_ms"):
        assert m.mean_batch_size(lam=3.0) == m.mean_batch_size(3.0)


# ------------------------------------------------------------ properties

alphas = st.floats(0.01, 2.0)
tau0s = st.floats(0.0, 5.0)
rhos = st.floats(0.0, 0.99)


@settings(max_examples=150, deadline=None)
@given(alphas, tau0s, rhos)
def test_exact_latency_between_service_time_and_phi(alpha, tau0, rho):
    lam = rho / alpha
    w = bt.mean_latency(lam, alpha, tau0)
    assert alpha + tau0 <= w * (1 + 1e-12)
    assert w <= bt.phi(lam, alpha, tau0) * (1 + 1e-12)
    util = bt.utilization(lam, alpha, tau0)
    assert util <= min(1.0, lam * (alpha + tau0)) + 1e-12


@settings(max_examples=100, deadline=None)
@given(alphas, tau0s, rhos, rhos)
def test_latency_increases_and_energy_efficiency_does_not_fall_with_load(alpha, tau0, r1, r2):
    lo, hi = sorted((r1, r2))
    lam = np.array([lo, hi]) / alpha
    w = bt.mean_latency(lam, alpha, tau0)
    assert w[0] <= w[1] * (1 + 1e-12)
    beta, c0 = 0.044, 0.155
    eta = bt.energy_efficiency(lam, alpha, tau0, beta, c0)
    assert eta[0] <= eta[1] * (1 + 1e-12)                                    # Corollary 1
    assert np.all(eta >= bt.energy_efficiency_bound(lam, alpha, tau0, beta, c0) * (1 - 1e-12))
