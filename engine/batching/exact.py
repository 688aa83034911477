"""Exact solvers of the dynamic-batching queue's Markov chains (Inoue 2021, §3).

* ``unlimited_idle_weight``/``unlimited_moments``: b_max = ∞, τ[b] = αb + τ0, from the
  generating function of the batch-size chain (eq 5) as one scalar series.
* ``limited_solution``: finite b_max and any batch-time table, the departure chain
  (an M/G/1-type chain) truncated where its geometric tail is below 1e-15.

Derivations and how they are checked: docs/models/batching.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import factorial

import numpy as np
from scipy.linalg import solve_banded
from scipy.special import gammaln, lambertw

from ..core.renamed import renamed_attribute, renamed_keywords

_SERIES_ORDER = 8          # terms of the tail power series
_SERIES_REACH = 0.05       # use the series once u <= this * (1 - rho) / (1 + c)
_NEGLIGIBLE = 1e-17        # stop once Pr(A = 0) is below this fraction of λτ0
_MAX_ITER = 20_000         # beyond this, close the tail with the parabolic flow
_TAIL_TOL = 1e-15          # truncation mass of the finite-b_max chain
_MAX_BAND_ENTRIES = 30_000_000   # memory cap of the banded system (floats)


def _tail_series(rho: np.ndarray, c: np.ndarray, order: int = _SERIES_ORDER):
    """Power-series coefficients of the tail sums of the iteration.

    T(u) = Σ_m u_m and V(u) = Σ_m u_m Π_{j<m} e^{−c u_j}, with u_0 = u and
    u_{m+1} = g(u_m) = 1 − e^{−ρ u_m}, satisfy T(u) = u + T(g(u)) and
    V(u) = u + e^{−cu} V(g(u)); matching powers of u gives the coefficients.
    """
    n = np.arange(order + 1)
    fact = np.array([factorial(k) for k in n], dtype=float)
    shape = rho.shape + (order + 1,)
    g = np.zeros(shape)
    g[..., 1:] = (-1.0) ** (n[1:] + 1) * rho[..., None] ** n[1:] / fact[1:]
    e = (-c[..., None]) ** n / fact

    def mul(a, b):
        out = np.zeros(shape)
        for i in range(order + 1):
            out[..., i:] += a[..., i:i + 1] * b[..., :order + 1 - i]
        return out

    powers = [None, g]
    for _ in range(2, order + 1):
        powers.append(mul(powers[-1], g))
    weighted = [None] + [mul(e, powers[j]) for j in range(1, order + 1)]
    t = np.zeros(shape)
    v = np.zeros(shape)
    for m in range(1, order + 1):
        first = 1.0 if m == 1 else 0.0
        st = first + sum(t[..., j] * powers[j][..., m] for j in range(1, m))
        sv = first + sum(v[..., j] * weighted[j][..., m] for j in range(1, m))
        t[..., m] = st / (1.0 - rho ** m)
        v[..., m] = sv / (1.0 - rho ** m)
    return t, v


def _polyval(coef: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = np.zeros_like(u)
    for k in range(coef.shape[-1] - 1, 0, -1):
        out = (out + coef[..., k]) * u
    return out


def unlimited_idle_weight(rho: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Pr(A = 0): probability that no job arrives during a batch (b_max = ∞).

    ``rho`` = λα (each < 1) and ``c`` = λτ0 (each ≥ 0), 1-d float arrays of equal
    length.  Exact to ~1e-12 wherever the series tail closes (every ρ below
    about 0.9995, and all ρ when λτ0 ≳ 1); closer to ρ = 1 with small λτ0 the
    iteration is capped and the parabolic-flow tail leaves a relative error of
    at most ~1e-6 in Pr(A = 0) and ~1e-12 in E[W].
    """
    rho = np.asarray(rho, dtype=float)
    c = np.asarray(c, dtype=float)
    t, v = _tail_series(rho, c)
    reach = _SERIES_REACH * (1.0 - rho) / (1.0 + c)
    u = np.ones_like(rho)
    log_f = np.zeros_like(rho)
    s = np.zeros_like(rho)
    done = np.zeros(rho.shape, dtype=bool)
    how = np.zeros(rho.shape, dtype=np.int8)       # 1 series, 2 negligible, 3 flow
    u_k, s_k, log_fk = (np.zeros_like(rho) for _ in range(3))
    k = 0
    while True:
        f = np.exp(log_f)
        series = u <= reach
        negligible = f <= _NEGLIGIBLE * c * s
        capped = np.full(rho.shape, k >= _MAX_ITER)
        newly = ~done & (series | negligible | capped)
        if newly.any():
            how[newly] = np.where(series, 1, np.where(negligible, 2, 3))[newly]
            u_k[newly], s_k[newly], log_fk[newly] = u[newly], s[newly], log_f[newly]
            done |= newly
            if done.all():
                break
        s += u * f
        log_f -= c * u
        u = -np.expm1(-rho * u)
        k += 1
    tail_t = np.zeros_like(rho)
    tail_v = np.zeros_like(rho)
    sel = how == 1
    tail_t[sel] = _polyval(t[sel], u_k[sel])
    tail_v[sel] = _polyval(v[sel], u_k[sel])
    sel = how == 3
    if sel.any():
        # Near ρ = 1 the orbit follows du/dk = −εu − u²/2 (ε = 1 − ρ): Σu ≈
        # 2 ln(1 + u/2ε) and Σ u e^{−cΣu} ≈ (1 − e^{−cT})/c, plus the
        # Euler-Maclaurin half-term.  Relative error O(u_K) ~ 1e-6 or better.
        eps = 1.0 - rho[sel]
        tt = 2.0 * np.log1p(u_k[sel] / (2.0 * eps)) + 0.5 * u_k[sel]
        cc = c[sel]
        tail_t[sel] = tt
        tail_v[sel] = np.where(cc > 0, -np.expm1(-cc * tt) / np.where(cc > 0, cc, 1.0), tt)
    total = s_k + np.exp(log_fk) * tail_v
    log_f_inf = log_fk - c * tail_t
    return np.exp(log_f_inf) / total


@renamed_keywords(lam="lam_per_ms", alpha="alpha_ms", tau0="tau0_ms")
def unlimited_moments(lam_per_ms, alpha_ms, tau0_ms):
    """(Pr(A=0), E[B], E[B²]) for b_max = ∞ at stable points (λα < 1), eqs 31-32: λ per
    ms, α and τ0 in ms (unchecked: the caller checks them)."""
    lam, alpha, tau0 = lam_per_ms, alpha_ms, tau0_ms
    rho = lam * alpha
    c = lam * tau0
    p = unlimited_idle_weight(rho, c)
    eb = (c + p) / (1.0 - rho)
    eb2 = ((1.0 + 2.0 * lam * rho * tau0) * eb + c * c) / (1.0 - rho * rho)
    return p, eb, eb2


@dataclass(frozen=True)
class LimitedSolution:
    """Stationary solution of the finite-b_max queue at one arrival rate.

    Times in ms (the unit of the batch-time table); ``batch_size_pmf[m-1]`` is
    Pr(B = m) over batches, m = 1..b_max.  The names without a unit (``mean_latency``,
    ``mean_processing``) still read the fields, with a ``DeprecationWarning``.
    """

    mean_latency_ms: float       # E[W], waiting + processing
    mean_processing_ms: float    # E[Ĥ], processing time of a random job's batch
    mean_batch_size: float       # E[B] over batches
    utilization: float           # 1 − π0, fraction of time the server is busy
    batch_size_pmf: np.ndarray
    n_states: int                # truncation level used
    tail_mass: float             # geometric estimate of the probability cut off (≤ 1e-15
                                 # except within ~1e-5 of capacity, where memory caps it)

    mean_latency = renamed_attribute("mean_latency_ms")
    mean_processing = renamed_attribute("mean_processing_ms")


def _tail_ratio(s_b: float, b: int) -> float:
    """z0 > 1 with z0^b = e^{s_b (z0 − 1)}: the departure chain's tail ratio."""
    c = s_b / b
    return float((-lambertw(-c * np.exp(-c), -1) / c).real)


def _departure_chain(lam: float, s: np.ndarray, n_states: int) -> np.ndarray:
    """Stationary law of the jobs left at departures, truncated to ``n_states``.

    Unknowns q_1..q_{N-1} with q_0 = 1; equation j: Σ_i q_i P_ij − q_j = 0, where
    P_ij = Poisson(j − base_i; s[B_i]) is nonzero for i − b ≤ j ≤ i + reach; the
    banded system is solved directly and normalised.
    """
    b = s.size
    n = np.arange(n_states)
    batch = np.minimum(np.maximum(n, 1), b)
    mean = s[batch - 1]
    base = np.where(n == 0, 0, n - batch)       # jobs left before the arrivals
    reach = int(np.ceil(mean.max() + 10.0 * np.sqrt(mean.max()) + 25.0))
    upper, lower = min(b, n_states - 1), min(reach, n_states - 1)
    d = np.arange(-upper, lower + 1)[:, None]        # j − i, one band row each
    i = n[None, 1:]
    j = i + d
    k = j - base[i]
    ok = (k >= 0) & (j >= 1) & (j < n_states)
    kk = np.where(ok, k, 0)
    m = mean[i]
    band = np.where(ok, np.exp(kk * np.log(m) - m - gammaln(kk + 1.0)), 0.0)
    band[upper] -= 1.0
    # solve_banded wants ab[upper + r - col, col] = A[r, col]; here r = j, col = i.
    jj = n[1:]
    rhs = -np.exp(jj * np.log(mean[0]) - mean[0] - gammaln(jj + 1.0))
    q = np.empty(n_states)
    q[0] = 1.0
    q[1:] = solve_banded((lower, upper), band, rhs)
    return q / q.sum()


@renamed_keywords(lam="lam_per_ms", tau="tau_ms")
def limited_solution(lam_per_ms: float, tau_ms: np.ndarray) -> LimitedSolution:
    """Exact solution for b_max = len(tau_ms) and batch times tau_ms[m-1] in ms
    (m = 1..b_max) at the arrival rate ``lam_per_ms`` (per ms).

    Requires a stable load, λ·tau[-1] < b_max.  The chain of jobs left waiting at
    departures is truncated adaptively: the truncation doubles until the top
    quarter of the states holds less than 1e-15, never beyond the level where
    the chain's geometric tail (ratio 1/z0) is below 1e-15.
    """
    lam, tau = lam_per_ms, np.asarray(tau_ms, dtype=float)
    b = tau.size
    if lam == 0.0:
        pmf = np.zeros(b)
        pmf[0] = 1.0
        return LimitedSolution(tau[0], tau[0], 1.0, 0.0, pmf, 1, 0.0)
    s = lam * tau
    z0 = _tail_ratio(s[-1], b)
    reach = int(np.ceil(s.max() + 10.0 * np.sqrt(s.max()) + 25.0))
    wanted = b + np.log(1.0 / _TAIL_TOL) / max(np.log(z0), 1e-300) + 8
    cap = int(min(wanted, max(4 * b + 16, _MAX_BAND_ENTRIES // (b + reach + 1))))
    n_states = int(min(cap, max(64, 4 * np.ceil(s[0]) + 32)))
    while True:
        q = _departure_chain(lam, s, n_states)
        tail_mass = float(q[-max(n_states // 4, 1):].sum())
        if tail_mass < _TAIL_TOL or n_states >= cap:
            break
        n_states = min(2 * n_states, cap)
    n = np.arange(n_states)
    batch = np.minimum(np.maximum(n, 1), b)
    tau_n = tau[batch - 1]
    present = np.maximum(n, 1)
    # Renewal reward over departure cycles: from N = n the cycle is an idle time
    # (n = 0, mean 1/λ) plus a batch of τ = τ[B]; the area under L(t) during the
    # batch is present·τ + λτ²/2.
    cycle = q @ tau_n + q[0] / lam
    area = q @ (present * tau_n + 0.5 * lam * tau_n ** 2)
    mean_batch = q @ batch
    pmf = np.bincount(batch - 1, weights=q, minlength=b)
    return LimitedSolution(
        mean_latency_ms=area / cycle / lam,
        mean_processing_ms=(q @ (batch * tau_n)) / mean_batch,
        mean_batch_size=mean_batch,
        utilization=(q @ tau_n) / cycle,
        batch_size_pmf=pmf,
        n_states=n_states,
        tail_mass=tail_mass,
    )
