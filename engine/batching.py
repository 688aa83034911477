"""GPU inference server with dynamic batching (Inoue 2021).

Jobs arrive as a Poisson process of rate λ.  Whenever the server is free and
jobs wait, all of them (at most ``b_max``) start together as one batch; a job
arriving to an empty system starts alone at once.  A batch of b jobs takes the
deterministic time τ[b] = αb + τ0 (Assumption 4, eq 25).

Times are in any one unit, used consistently (the presets use milliseconds, so
λ is per ms).  Every function broadcasts its array arguments like a numpy
ufunc.  A load at or beyond capacity (λα ≥ 1, or λ ≥ μ[b_max] = b_max/τ[b_max]
for finite b_max) gives ``inf`` for the latency bounds and means; the batch
size, utilisation and energy efficiency take their saturated limits there.  An
argument outside its domain raises ``ValueError`` naming it.

Errata in the paper, checked in ``tests/test_batching.py``:

* eq 7 prints E[(A^[b])²] = λ²E[(H^[b])²]; a Poisson count with random mean λH
  has E[A²] = λE[H] + λ²E[H²].  Eq 34, which the proof of Lemma 3 uses, is right.
* Theorem 2 compares φ0(λ, α, τ0) with φ1(λ, α, τ1): read τ0 for τ1.
* Example 1 prints E[H^[b]] ≤ E[H^[b]] ⇒ H^[b] ≤st H^[b]: read b and b'.
* The paper calls π0 hard to find and takes "exact" values from simulation; the
  generating function of the batch-size chain gives it exactly
  (``engine.batch_chain``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import batch_chain
from .core.domains import ALPHA, BETA, C0, LAM, TAU0, check_b_max


# ---------------------------------------------------------------- closed forms

def capacity(alpha, tau0, b_max=None):
    """Largest stable arrival rate: 1/α for b_max = ∞, else μ[b_max] (eqs 26-27)."""
    alpha = ALPHA.check(alpha)
    tau0 = TAU0.check(tau0)
    b = check_b_max(b_max)
    with np.errstate(invalid="ignore", divide="ignore"):
        finite = b / (alpha * b + tau0)
    return np.where(np.isinf(b), 1.0 / alpha, finite)[()]


def _below_capacity(lam, alpha, tau0=0.0, b=np.inf):
    """λ < ``capacity`` (the same expression) and the chain's own condition λτ[b] < b.

    The two differ only in the last bit: 1/α·α can round below 1, so λ equal to
    the capacity would pass λα < 1 alone and give a huge finite mean, not inf.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isinf(b), (lam * alpha < 1.0) & (lam < 1.0 / alpha),
                        (lam * (alpha * b + tau0) < b) & (lam < b / (alpha * b + tau0)))


def phi0(lam, alpha, tau0):
    """Upper bound φ0 of E[W] (Inoue 2021, eq 41); tight at light load.

    Obtained from eq 35 with π0 ≥ 1 − λ(α + τ0) (Lemma 5); ``inf`` for λα ≥ 1.
    """
    lam, alpha, tau0 = LAM.check(lam), ALPHA.check(alpha), TAU0.check(tau0)
    rho = lam * alpha
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        val = (alpha + tau0) / (2.0 * (1.0 - rho)) * (
            1.0 + 2.0 * lam * tau0 + (1.0 - lam * tau0) / (1.0 + rho))
    return np.where(_below_capacity(lam, alpha), val, np.inf)[()]


def phi1(lam, alpha, tau0):
    """Upper bound φ1 of E[W] (Inoue 2021, eq 42); tight at moderate to heavy load.

    Obtained from eq 35 with π0 ≥ 0; ``inf`` for λα ≥ 1.
    """
    lam, alpha, tau0 = LAM.check(lam), ALPHA.check(alpha), TAU0.check(tau0)
    rho = lam * alpha
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        val = 1.5 * tau0 / (1.0 - rho) + 0.5 * alpha * (rho + 2.0) / (1.0 - rho * rho)
    return np.where(_below_capacity(lam, alpha), val, np.inf)[()]


def phi(lam, alpha, tau0):
    """φ = min(φ0, φ1), the closed-form upper bound of E[W] (Inoue 2021, eq 43).

    φ0 ≤ φ1 exactly when λ ≤ 1/(α + τ0) (Theorem 2).  Bounds E[W] for b_max = ∞;
    Fig 8 uses it as an approximation for finite b_max at moderate load.
    """
    return np.minimum(phi0(lam, alpha, tau0), phi1(lam, alpha, tau0))


def energy_efficiency_bound(lam, alpha, tau0, beta, c0):
    """Lower bound of the energy efficiency η (Inoue 2021, eq 40), jobs per energy unit.

    η ≥ 1/(β + c0/max(1, λτ0/(1 − λα))), from E[B] ≥ max(1, λτ0/(1 − λα))
    (Remark 5).  Beyond capacity E[B] → ∞ and the bound is 1/β.
    """
    lam, alpha, tau0 = LAM.check(lam), ALPHA.check(alpha), TAU0.check(tau0)
    beta, c0 = BETA.check(beta), C0.check(c0)
    rho = lam * alpha
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        eb_low = np.where(_below_capacity(lam, alpha),
                          np.maximum(1.0, lam * tau0 / (1.0 - rho)), np.inf)
        return (1.0 / (beta + c0 / eb_low))[()]


# ---------------------------------------------------------------- exact values

@dataclass(frozen=True)
class Stationary:
    """Exact stationary means of the dynamic-batching queue (arrays, broadcast shape)."""

    mean_latency: np.ndarray       # E[W], waiting + processing (eq 15)
    mean_processing: np.ndarray    # E[Ĥ], processing time of a job's batch (eq 30)
    mean_batch_size: np.ndarray    # E[B] over batches (eq 31)
    utilization: np.ndarray        # 1 − π0 (eq 38)

    @property
    def mean_wait(self) -> np.ndarray:
        """Mean time a job waits before its batch starts (Remark 1); inf when unstable."""
        latency = np.asarray(self.mean_latency)
        with np.errstate(invalid="ignore"):
            wait = latency - self.mean_processing
        return np.where(np.isinf(latency), np.inf, wait)[()]


def stationary(lam, alpha, tau0, b_max=None) -> Stationary:
    """Exact E[W], E[Ĥ], E[B] and utilisation, broadcast over all arguments.

    b_max = None (or inf) uses the generating-function series of
    ``engine.batch_chain.unlimited_idle_weight``, vectorised over all points;
    a finite b_max solves the departure chain point by point (one banded solve
    each).  Unstable points give E[W] = inf, E[B] = b_max, utilisation 1.
    """
    lam, alpha, tau0 = LAM.check(lam), ALPHA.check(alpha), TAU0.check(tau0)
    b = check_b_max(b_max)
    lam, alpha, tau0, b = np.broadcast_arrays(lam, alpha, tau0, b)
    shape = lam.shape
    lam, alpha, tau0, b = (x.ravel() for x in (lam, alpha, tau0, b))
    latency = np.full(lam.shape, np.inf)
    processing = np.full(lam.shape, np.inf)
    batch = b.copy()
    util = np.ones(lam.shape)

    unlimited = np.isinf(b)
    stable = _below_capacity(lam, alpha, tau0, b) & np.isfinite(lam)
    sel = unlimited & stable
    if sel.any():
        la, al, t0 = lam[sel], alpha[sel], tau0[sel]
        p, eb, eb2 = batch_chain.unlimited_moments(la, al, t0)
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
        latency[i], processing[i] = sol.mean_latency, sol.mean_processing
        batch[i], util[i] = sol.mean_batch_size, sol.utilization
    return Stationary(*(x.reshape(shape)[()] for x in (latency, processing, batch, util)))


@lru_cache(maxsize=4096)
def _limited(lam: float, tau: tuple) -> batch_chain.LimitedSolution:
    return batch_chain.limited_solution(lam, np.asarray(tau))


def mean_latency(lam, alpha, tau0, b_max=None):
    """Exact mean latency E[W] (waiting + processing), Inoue 2021 eqs 15 and 35.

    ``inf`` at or beyond capacity.  Relative error below 1e-9 (tests compare a
    truncated Markov chain, simulation, and M/D/1 at b_max = 1).
    """
    return stationary(lam, alpha, tau0, b_max).mean_latency


def mean_wait(lam, alpha, tau0, b_max=None):
    """Exact mean wait before a job's batch starts: E[W] − E[Ĥ] (Remark 1)."""
    return stationary(lam, alpha, tau0, b_max).mean_wait


def mean_batch_size(lam, alpha, tau0, b_max=None):
    """Exact mean batch size E[B] (eq 31 for b_max = ∞); b_max (or inf) beyond capacity."""
    return stationary(lam, alpha, tau0, b_max).mean_batch_size


def utilization(lam, alpha, tau0, b_max=None):
    """Exact server utilisation 1 − π0 (eq 38); 1 beyond capacity.

    Upper bound: min(1, λ(α + τ0)) (Lemma 5).
    """
    return stationary(lam, alpha, tau0, b_max).utilization


def energy_efficiency(lam, alpha, tau0, beta, c0, b_max=None):
    """Exact energy efficiency η = 1/(β + c0/E[B]), jobs per energy unit (eqs 18-19).

    With energy per batch c[b] = βb + c0 (eq 17) in joules, η is in jobs per
    joule.  Non-decreasing in λ (Corollary 1); saturates beyond capacity.
    """
    beta, c0 = BETA.check(beta), C0.check(c0)
    eb = mean_batch_size(lam, alpha, tau0, b_max)
    return (1.0 / (beta + c0 / eb))[()]


@dataclass(frozen=True)
class DynamicBatching:
    """The model with its batch-time parameters bound (scipy.stats-style frozen object).

    >>> m = DynamicBatching(alpha=0.1438, tau0=1.8874)
    >>> bool(m.mean_latency(0.5 / 0.1438) < m.phi(0.5 / 0.1438))
    True
    """

    alpha: float
    tau0: float
    b_max: int | None = None

    def __post_init__(self):
        ALPHA.check(self.alpha)
        TAU0.check(self.tau0)
        check_b_max(self.b_max)

    @property
    def capacity(self) -> float:
        return float(capacity(self.alpha, self.tau0, self.b_max))

    def mean_latency(self, lam):
        return mean_latency(lam, self.alpha, self.tau0, self.b_max)

    def mean_batch_size(self, lam):
        return mean_batch_size(lam, self.alpha, self.tau0, self.b_max)

    def utilization(self, lam):
        return utilization(lam, self.alpha, self.tau0, self.b_max)

    def phi(self, lam):
        return phi(lam, self.alpha, self.tau0)
