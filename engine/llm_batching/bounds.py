"""Closed-form bounds of dynamic LLM batching (Yang et al. eqs 16 and 20).

Inoue's φ with the linear batch-time bound of eq 20 (bounded token laws), and
eq 16's φ0, φ1 as printed, which bound the wait before the batch starts, not
the latency (docs/models/llm_batching.md, erratum 1).  Seconds.
"""
from __future__ import annotations

import numpy as np

from ..batching import below_capacity, phi as inoue_phi
from ..core.domains import ALPHA, LAM, LAM_PER_S, TAU0
from .batch_times import check_k, upper_support


def _checked(lam, alpha, beta):
    return np.asarray(LAM.check(lam)), ALPHA.check(alpha), TAU0.check(beta, "beta")


def linear_bound_coefficients(dist, k) -> tuple[float, float]:
    """(α1, β1) = (k1 + k3·l_max, k2 + k4·l_max) with l_max the top of the law's support (eq 20).

    For the uniform law on [0, m2], l_max = m2 as printed; H(b, L_b) ≤ α1·b + β1
    holds for every batch.  ``inf`` for laws of unbounded support.
    """
    k1, k2, k3, k4 = check_k(k)
    top = upper_support(dist)
    # a zero coefficient contributes nothing, even for an unbounded law (not 0·inf = NaN)
    return k1 + (k3 * top if k3 else 0.0), k2 + (k4 * top if k4 else 0.0)


def dynamic_wait_bound(lam, dist, k):
    """Inoue's φ(λ, α1, β1) (eqs 41–43 with eq 20): bounds the wait + processing time, s.

    Valid for uncapped dynamic batching with a bounded token law (every batch
    time is below α1·b + β1); ``inf`` for unbounded laws and for λα1 ≥ 1.
    """
    a1, b1 = linear_bound_coefficients(dist, k)
    lam = LAM_PER_S.check(lam)
    if not (np.isfinite(a1) and np.isfinite(b1)):
        return np.full(lam.shape, np.inf)[()]
    return inoue_phi(lam, a1, b1)


def yang_phi0(lam, alpha, beta):
    """Eq 16's φ0 as printed, λ(α+β)²/(2(1−λ²α²)): an upper bound of the *wait* (not latency)."""
    lam, alpha, beta = _checked(lam, alpha, beta)
    rho = lam * alpha
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = lam * (alpha + beta) ** 2 / (2.0 * (1.0 - rho ** 2))
    return np.where(below_capacity(lam, alpha), val, np.inf)[()]


def yang_phi1(lam, alpha, beta):
    """Eq 16's φ1 as printed, (λαβ + λα² + β)/(2(1−λ²α²)): an upper bound of the wait."""
    lam, alpha, beta = _checked(lam, alpha, beta)
    rho = lam * alpha
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = (rho * beta + rho * alpha + beta) / (2.0 * (1.0 - rho ** 2))
    return np.where(below_capacity(lam, alpha), val, np.inf)[()]


def yang_phi(lam, alpha, beta):
    """min(φ0, φ1) of eq 16: bounds the mean wait before the batch starts (not the latency)."""
    return np.minimum(yang_phi0(lam, alpha, beta), yang_phi1(lam, alpha, beta))
