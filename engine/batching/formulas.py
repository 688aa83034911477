"""Closed forms of the dynamic-batching model (Inoue 2021): capacity, the bounds φ0, φ1, φ
of the mean latency, energy efficiency and its bound, and the load-unit conversions.

Every function broadcasts like a numpy ufunc; an argument outside its domain raises
``ValueError`` naming it.  Units in the names: λ per ms (``lam_per_ms``), α and τ0 in ms
(``alpha_ms``, ``tau0_ms``), β and c0 in J (``beta_j``, ``c0_j``); the keywords of before
(``lam=``, ``alpha=``, ``tau0=``, ``beta=``, ``c0=``) still work, with a
``DeprecationWarning``.  Derivations and the paper's errata: docs/models/batching.md.
"""
from __future__ import annotations

import numpy as np

from ..core.domains import (ALPHA, BATCH_MEAN_SIZE as MEAN_BATCH, BATCH_RATE_PER_S as RATE_PER_S,
                            BATCH_RHO as RHO, BATCH_SIZE_B, BATCH_SIZE_B0, BETA, C0, LAM,
                            LOAD_UNIT, TAU0, check_b_max)
from ..core.renamed import renamed_keywords

LOAD_UNITS = LOAD_UNIT.values


def _checked(lam_per_ms, alpha_ms, tau0_ms):
    """λ, α, τ0 checked, each named by its keyword."""
    return (LAM.check(lam_per_ms, "lam_per_ms"), ALPHA.check(alpha_ms, "alpha_ms"),
            TAU0.check(tau0_ms, "tau0_ms"))


@renamed_keywords(alpha="alpha_ms", tau0="tau0_ms")
def capacity(alpha_ms, tau0_ms, b_max=None):
    """Largest stable arrival rate (per ms, τ[b] = αb + τ0 in ms): 1/α for b_max = ∞, else
    μ[b_max] = b/(αb + τ0) (eqs 26-27)."""
    alpha = ALPHA.check(alpha_ms, "alpha_ms")
    tau0 = TAU0.check(tau0_ms, "tau0_ms")
    b = check_b_max(b_max)
    with np.errstate(invalid="ignore", divide="ignore"):
        finite = b / (alpha * b + tau0)
    return np.where(np.isinf(b), 1.0 / alpha, finite)[()]


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def below_capacity(lam_per_ms, alpha_ms, tau0_ms=0.0, b_max=None):
    """True where λ (per ms) is a stable load: λ < ``capacity`` and the chain's own
    λτ[b] < b (α, τ0 in ms).

    The two tests differ only in the last bit (1/α·α can round below 1); both must
    hold so that λ equal to the capacity is unstable, never a huge finite mean.
    """
    lam, alpha, tau0 = _checked(lam_per_ms, alpha_ms, tau0_ms)
    return _below_capacity(lam, alpha, tau0, check_b_max(b_max))


def _below_capacity(lam, alpha, tau0=0.0, b=np.inf):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isinf(b), (lam * alpha < 1.0) & (lam < 1.0 / alpha),
                        (lam * (alpha * b + tau0) < b) & (lam < b / (alpha * b + tau0)))


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def phi0(lam_per_ms, alpha_ms, tau0_ms):
    """Upper bound φ0 of E[W] in ms (Inoue 2021, eq 41), tight at light load; ``inf`` for
    λα ≥ 1 (λ per ms, α and τ0 in ms)."""
    lam, alpha, tau0 = _checked(lam_per_ms, alpha_ms, tau0_ms)
    rho = lam * alpha
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        val = (alpha + tau0) / (2.0 * (1.0 - rho)) * (
            1.0 + 2.0 * lam * tau0 + (1.0 - lam * tau0) / (1.0 + rho))
    return np.where(_below_capacity(lam, alpha), val, np.inf)[()]


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def phi1(lam_per_ms, alpha_ms, tau0_ms):
    """Upper bound φ1 of E[W] in ms (Inoue 2021, eq 42), tight at heavy load; ``inf`` for
    λα ≥ 1 (λ per ms, α and τ0 in ms)."""
    lam, alpha, tau0 = _checked(lam_per_ms, alpha_ms, tau0_ms)
    rho = lam * alpha
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        val = 1.5 * tau0 / (1.0 - rho) + 0.5 * alpha * (rho + 2.0) / (1.0 - rho * rho)
    return np.where(_below_capacity(lam, alpha), val, np.inf)[()]


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def phi(lam_per_ms, alpha_ms, tau0_ms):
    """φ = min(φ0, φ1), the closed-form upper bound of E[W] in ms for b_max = ∞ (eq 43),
    λ per ms, α and τ0 in ms.

    φ0 ≤ φ1 exactly when λ ≤ 1/(α + τ0) (Theorem 2).
    """
    return np.minimum(phi0(lam_per_ms, alpha_ms, tau0_ms), phi1(lam_per_ms, alpha_ms, tau0_ms))


@renamed_keywords(beta="beta_j", c0="c0_j")
def efficiency_from_batch_size(mean_batch_size, beta_j, c0_j):
    """Energy efficiency η = 1/(β + c0/E[B]) in jobs per J, β and c0 in J (eq 19).

    The one formula of η: the exact value (E[B] exact), the curves and the pages
    all use it.  E[B] = inf (beyond capacity) gives the saturated 1/β.
    """
    eb = MEAN_BATCH.check(mean_batch_size)
    beta, c0 = BETA.check(beta_j, "beta_j"), C0.check(c0_j, "c0_j")
    return (1.0 / (beta + c0 / eb))[()]


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms", beta="beta_j",
                  c0="c0_j")
def energy_efficiency_bound(lam_per_ms, alpha_ms, tau0_ms, beta_j, c0_j):
    """Lower bound of η (eq 40), jobs per J: η at E[B] ≥ max(1, λτ0/(1 − λα)) (λ per ms,
    α and τ0 in ms, β and c0 in J).

    Remark 5; beyond capacity E[B] → ∞ and the bound is 1/β.
    """
    lam, alpha, tau0 = _checked(lam_per_ms, alpha_ms, tau0_ms)
    rho = lam * alpha
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        eb_low = np.where(_below_capacity(lam, alpha),
                          np.maximum(1.0, lam * tau0 / (1.0 - rho)), np.inf)
    return efficiency_from_batch_size(eb_low, beta_j, c0_j)


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def utilization_bound(lam_per_ms, alpha_ms, tau0_ms):
    """Upper bound of the utilization 1 − π0: min(1, λ(α + τ0)) (Lemma 5), λ per ms, α
    and τ0 in ms."""
    lam, alpha, tau0 = _checked(lam_per_ms, alpha_ms, tau0_ms)
    return np.minimum(1.0, lam * (alpha + tau0))[()]


def throughput_per_s(b, alpha_ms, tau0_ms):
    """Throughput μ[b] = b/τ[b] of batches of b jobs in jobs per second (eq 26), τ in ms."""
    b = BATCH_SIZE_B.check(b)
    alpha, tau0 = ALPHA.check(alpha_ms, "alpha_ms"), TAU0.check(tau0_ms, "tau0_ms")
    return (1000.0 * b / (alpha * b + tau0))[()]


@renamed_keywords(beta="beta_j", c0="c0_j")
def batch_energy(b, beta_j, c0_j):
    """Energy of one batch of b jobs in J, c[b] = βb + c0 (eq 17), β and c0 in J."""
    b = BATCH_SIZE_B0.check(b)
    return (BETA.check(beta_j, "beta_j") * b + C0.check(c0_j, "c0_j"))[()]


def per_ms_to_per_s(rate_per_ms):
    """A rate per ms (the presets' unit) in per s."""
    return (LAM.check(rate_per_ms, "rate_per_ms") * 1000.0)[()]


def per_s_to_per_ms(rate_per_s):
    """A rate per s in per ms (the presets' unit)."""
    return (RATE_PER_S.check(rate_per_s) / 1000.0)[()]


def rate_from_load(load, alpha_ms, unit: str):
    """Arrival rate λ per ms of a load given as ``unit``: "rho" the normalised load ρ = λα
    (eq 27, so λ = ρ/α), "per_s" requests per second.  Inverse of ``load_in``."""
    LOAD_UNIT.check(unit)
    if unit == "rho":
        return (RHO.check(load, "load") / ALPHA.check(alpha_ms, "alpha_ms"))[()]
    return per_s_to_per_ms(RATE_PER_S.check(load, "load"))


def load_in(lam_per_ms, alpha_ms, unit: str):
    """λ (per ms) expressed as ``unit``: "rho" the normalised load λα, "per_s" requests/s."""
    LOAD_UNIT.check(unit)
    lam = LAM.check(lam_per_ms, "lam_per_ms")
    if unit == "rho":
        return (lam * ALPHA.check(alpha_ms, "alpha_ms"))[()]
    return per_ms_to_per_s(lam)
