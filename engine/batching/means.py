"""Exact stationary means of the dynamic-batching queue (Inoue 2021): E[W], E[Ĥ], E[B],
utilization and energy efficiency, and the frozen ``DynamicBatching`` model object.

Every function broadcasts like a numpy ufunc.  A load at or beyond capacity gives
``inf`` for the means; batch size, utilization and η take their saturated limits.
Arguments: λ per ms (``lam_per_ms``), α and τ0 in ms (``alpha_ms``, ``tau0_ms``), β and
c0 in J (``beta_j``, ``c0_j``); the keywords of before still work, with a
``DeprecationWarning``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import exact
from .formulas import below_capacity, capacity, efficiency_from_batch_size, phi
from ..core.domains import ALPHA, LAM, TAU0, check_b_max
from ..core.renamed import renamed_attribute, renamed_keywords


@dataclass(frozen=True)
class Stationary:
    """Exact stationary means (arrays of the broadcast shape), times in ms (the unit of α
    and τ0); the names without a unit still read, with a ``DeprecationWarning``."""

    mean_latency_ms: np.ndarray    # E[W], waiting + processing (eq 15)
    mean_processing_ms: np.ndarray  # E[Ĥ], processing time of a job's batch (eq 30)
    mean_batch_size: np.ndarray    # E[B] over batches (eq 31)
    utilization: np.ndarray        # 1 − π0 (eq 38)

    mean_latency = renamed_attribute("mean_latency_ms")
    mean_processing = renamed_attribute("mean_processing_ms")
    mean_wait = renamed_attribute("mean_wait_ms")

    @property
    def mean_wait_ms(self) -> np.ndarray:
        """Mean time a job waits before its batch starts (Remark 1); inf when unstable."""
        latency = np.asarray(self.mean_latency_ms)
        with np.errstate(invalid="ignore"):
            wait = latency - self.mean_processing_ms
        return np.where(np.isinf(latency), np.inf, wait)[()]


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def stationary(lam_per_ms, alpha_ms, tau0_ms, b_max=None) -> Stationary:
    """Exact E[W], E[Ĥ] (ms), E[B] and utilization, broadcast over all arguments: λ per
    ms, α and τ0 in ms.

    b_max = None (or inf): the generating-function series (``exact.unlimited_moments``),
    vectorised; a finite b_max: one departure-chain solve per point.  Unstable
    points give E[W] = inf, E[B] = b_max, utilization 1.
    """
    lam = LAM.check(lam_per_ms, "lam_per_ms")
    alpha, tau0 = ALPHA.check(alpha_ms, "alpha_ms"), TAU0.check(tau0_ms, "tau0_ms")
    b = check_b_max(b_max)
    lam, alpha, tau0, b = np.broadcast_arrays(lam, alpha, tau0, b)
    shape = lam.shape
    lam, alpha, tau0, b = (x.ravel() for x in (lam, alpha, tau0, b))
    latency = np.full(lam.shape, np.inf)
    processing = np.full(lam.shape, np.inf)
    batch = b.copy()
    util = np.ones(lam.shape)

    unlimited = np.isinf(b)
    stable = below_capacity(lam, alpha, tau0, b) & np.isfinite(lam)
    sel = unlimited & stable
    if sel.any():
        la, al, t0 = lam[sel], alpha[sel], tau0[sel]
        p, eb, eb2 = exact.unlimited_moments(la, al, t0)
        rho = la * al
        # eq 35 written via eq 37, which avoids dividing by λ:
        # E[W] = α + τ0 + (1 + 2ρ) λ (2ατ0 + α² + τ0²/E[B]) / (2(1 − ρ²)).
        latency[sel] = al + t0 + (1.0 + 2.0 * rho) * la * (
            2.0 * al * t0 + al * al + t0 * t0 / eb) / (2.0 * (1.0 - rho * rho))
        processing[sel] = al * eb2 / eb + t0                       # eq 30
        batch[sel] = eb
        util[sel] = rho + la * t0 / eb                             # eq 38
    for i in np.flatnonzero(~unlimited & stable):
        size = int(b[i])
        tau = alpha[i] * np.arange(1, size + 1) + tau0[i]
        sol = _limited(float(lam[i]), tuple(tau))
        latency[i], processing[i] = sol.mean_latency_ms, sol.mean_processing_ms
        batch[i], util[i] = sol.mean_batch_size, sol.utilization
    return Stationary(*(x.reshape(shape)[()] for x in (latency, processing, batch, util)))


@lru_cache(maxsize=4096)
def _limited(lam: float, tau: tuple) -> exact.LimitedSolution:
    return exact.limited_solution(lam, np.asarray(tau))


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def mean_latency(lam_per_ms, alpha_ms, tau0_ms, b_max=None):
    """Exact mean latency E[W] in ms (waiting + processing), eqs 15 and 35; ``inf`` at
    capacity."""
    return stationary(lam_per_ms, alpha_ms, tau0_ms, b_max).mean_latency_ms


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def mean_wait(lam_per_ms, alpha_ms, tau0_ms, b_max=None):
    """Exact mean wait in ms before a job's batch starts: E[W] − E[Ĥ] (Remark 1)."""
    return stationary(lam_per_ms, alpha_ms, tau0_ms, b_max).mean_wait_ms


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def mean_batch_size(lam_per_ms, alpha_ms, tau0_ms, b_max=None):
    """Exact mean batch size E[B] (eq 31 for b_max = ∞); b_max (or inf) beyond capacity."""
    return stationary(lam_per_ms, alpha_ms, tau0_ms, b_max).mean_batch_size


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def utilization(lam_per_ms, alpha_ms, tau0_ms, b_max=None):
    """Exact server utilization 1 − π0 (eq 38); 1 beyond capacity (bound: Lemma 5)."""
    return stationary(lam_per_ms, alpha_ms, tau0_ms, b_max).utilization


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms", beta="beta_j",
                  c0="c0_j")
def energy_efficiency(lam_per_ms, alpha_ms, tau0_ms, beta_j, c0_j, b_max=None):
    """Exact energy efficiency η = 1/(β + c0/E[B]) in jobs per J (eqs 17-19), β and c0
    in J.

    With c[b] = βb + c0 in joules, η is in jobs per joule; non-decreasing in λ
    (Corollary 1), saturated (1/β for b_max = ∞) beyond capacity.
    """
    efficiency_from_batch_size(1.0, beta_j, c0_j)        # check β, c0 before solving
    return efficiency_from_batch_size(mean_batch_size(lam_per_ms, alpha_ms, tau0_ms, b_max),
                                      beta_j, c0_j)


@dataclass(frozen=True)
class DynamicBatching:
    """The model with its batch-time parameters bound (scipy.stats-style frozen object):
    τ[b] = α·b + τ0 in ms (eq 25), loads λ per ms.

    The names of before (``alpha``, ``tau0``, ``capacity``, ``mean_latency``, ``phi``; the
    keywords ``alpha=``, ``tau0=``, ``lam=``) still work, with a ``DeprecationWarning``.

    >>> m = DynamicBatching(alpha_ms=0.1438, tau0_ms=1.8874)
    >>> bool(m.mean_latency_ms(0.5 / 0.1438) < m.phi_ms(0.5 / 0.1438))
    True
    """

    alpha_ms: float
    tau0_ms: float
    b_max: int | None = None

    alpha = renamed_attribute("alpha_ms")
    tau0 = renamed_attribute("tau0_ms")
    capacity = renamed_attribute("capacity_per_ms")
    mean_latency = renamed_attribute("mean_latency_ms")
    phi = renamed_attribute("phi_ms")

    def __post_init__(self):
        ALPHA.check(self.alpha_ms, "alpha_ms")
        TAU0.check(self.tau0_ms, "tau0_ms")
        check_b_max(self.b_max)

    @property
    def capacity_per_ms(self) -> float:
        """Largest stable load: 1/α, or b_max/τ[b_max] with a limit (eq 27)."""
        return float(capacity(self.alpha_ms, self.tau0_ms, self.b_max))

    @renamed_keywords(lam="lam_per_ms")
    def mean_latency_ms(self, lam_per_ms):
        """Exact E[W] (eqs 15, 35) at the loads ``lam_per_ms``."""
        return mean_latency(lam_per_ms, self.alpha_ms, self.tau0_ms, self.b_max)

    @renamed_keywords(lam="lam_per_ms")
    def mean_batch_size(self, lam_per_ms):
        """Exact E[B] (eq 31)."""
        return mean_batch_size(lam_per_ms, self.alpha_ms, self.tau0_ms, self.b_max)

    @renamed_keywords(lam="lam_per_ms")
    def utilization(self, lam_per_ms):
        """Exact utilization 1 − π0 (eq 38)."""
        return utilization(lam_per_ms, self.alpha_ms, self.tau0_ms, self.b_max)

    @renamed_keywords(lam="lam_per_ms")
    def phi_ms(self, lam_per_ms):
        """The upper bound φ = min(φ0, φ1) on E[W] (eq 43)."""
        return phi(lam_per_ms, self.alpha_ms, self.tau0_ms)


DynamicBatching.__init__ = renamed_keywords(alpha="alpha_ms", tau0="tau0_ms")(
    DynamicBatching.__init__)
