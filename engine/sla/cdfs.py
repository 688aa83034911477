"""Response-time and waiting-time distributions with n backends: Swayam's random
dispatch with retries (eqs 1, 2, 7 and the retry correction) and one central M/M/n
FIFO queue; their CDFs and percentiles.  Times in s, rates per s.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from ..core.domains import LAM, MU, N_BACKENDS, PERCENTILE, RESPONSE_TARGET
from ..core.roots import smallest_reaching
from ..core.service_laws import service_cdf
from .checks import check_delays, check_probability

TAIL_EPS = 1e-17         # geometric terms dropped once ρ^(r+1) is below this
R_BLOCK = 256            # retries summed per block in response_cdf

# The smallest share of late requests, 1 − P(R ≤ RT), that these methods resolve.
# P(R ≤ RT) is a sum of terms in [0, 1], each a product of a weight and a service
# CDF near 1 that are exact to a few ulps; numpy sums each block of R_BLOCK terms
# pairwise (error ≤ log2(256) = 8 ulps) and adds the blocks in turn (one ulp each).
# The complement 1 − P therefore carries an absolute error up to about
# (8 + 4 + blocks)·eps, eps = 2.2e-16: below 1e-12 for up to 4,500 blocks (1.1
# million retries summed), far beyond any page input (r_max ≤ RT/c and the tail
# cut at ρ^(r+1) < 1e-17).  M/M/n's 1 − CDF is formed the same way (1 − (1 − tail)).
# Values below this are rounding noise (1e-16 where the true value is 1e-30).
MISS_RESOLUTION = 1e-12


def utilization(lam, mu, n):
    """ρ = λ/(nμ), the busy probability of a first try (eq 2); ``inf`` where undefined
    (λ = ∞ with μ or n infinite)."""
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    with np.errstate(invalid="ignore"):
        rho = lam / (n * mu)
    return np.where(np.isnan(rho), np.inf, rho)[()]


def utilisation(lam, mu, n):
    """The former spelling of ``utilization`` (the same numbers, with a
    ``DeprecationWarning``; removed in 0.6)."""
    warnings.warn("utilisation(...) is deprecated; use utilization(...) (the old name is "
                  "removed in 0.6)", DeprecationWarning, stacklevel=2)
    return utilization(lam, mu, n)


# ------------------------------------------------------------ Swayam, eqs 1 and 7

def waiting_percentile(p, lam, mu, n, d1, d2, delta, *, printed=False, p_retry_busy=None):
    """p-th percentile waiting time ω_p (s) under random dispatch with retries.

    ``printed=True``: Theorem 1, eq 1, ω_p = d1 + (ln(1 − p/100)/ln ρ − 1)·c,
    c = d1 + d2 + Δ.  Default: the exact p-quantile of the geometric law behind
    it (docs/models/sla.md, erratum 1).  ``p_retry_busy``: busy probability of a
    retry in place of ρ (the first try keeps ρ).  ``inf`` for λ ≥ nμ.
    """
    p = PERCENTILE.check(p, "p") / 100.0
    rho = np.asarray(utilization(lam, mu, n))
    d1, d2, delta = check_delays(d1, d2, delta)
    c = d1 + d2 + delta
    stable = rho < 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if printed:
            if p_retry_busy is not None:
                raise ValueError("p_retry_busy applies to the quantile, not to printed eq 1")
            val = d1 + (np.log1p(-p) / np.log(rho) - 1.0) * c
            return np.where(stable, val, np.inf)[()]
        q = rho if p_retry_busy is None else check_probability(p_retry_busy, "p_retry_busy")
        # P(Z > W_r) = ρ q^r ≤ 1 − p  ⇔  r ≥ ln((1 − p)/ρ)/ln q.
        need = np.log1p(-p) - np.log(rho)
        r = np.where(need >= 0.0, 0.0, np.maximum(np.ceil(need / np.log(q) - 1e-9), 1.0))
        r = np.where(q >= 1.0, np.where(need >= 0.0, 0.0, np.inf), np.maximum(r, 0.0))
        val = np.where(np.isinf(r), np.inf, d1 + r * c)      # never served: inf, even at c = 0
    return np.where(stable, val, np.inf)[()]


def response_cdf(rt, lam, mu, n, d1, d2, delta, service, *, p_retry_busy=None):
    """P(R ≤ RT) under random dispatch with retries, Theorem 2 (eq 7).

    Σ_{r=0}^{r_max} P(Z = W_r)·CDF_exe(RT − W_r), r_max = ⌊(RT − d1)/c⌋, with
    P(Z = W_r) = ρ^r(1 − ρ) (the paper's), or ρ·q^(r−1)(1 − q) for r ≥ 1 with
    ``p_retry_busy`` = q.  ``service``: a service law (s; a number is
    deterministic).  0 for λ ≥ nμ.  Terms beyond ρ^(r+1) < 1e-17 are dropped.
    """
    rt = RESPONSE_TARGET.check(rt)
    rho = np.asarray(utilization(lam, mu, n))
    d1, d2, delta = check_delays(d1, d2, delta)
    cdf = service_cdf(service)
    q = rho if p_retry_busy is None else check_probability(p_retry_busy, "p_retry_busy")
    # The CDF terms depend on (rt, d1, c) only, the weights on (ρ, q) only: the CDF
    # is evaluated on the time grid alone and broadcast against the load grid.
    rt, d1, c = np.broadcast_arrays(rt, d1, d1 + d2 + delta)
    rho, q = np.broadcast_arrays(rho, q)
    stable = rho < 1.0
    q = np.where(stable, q, 0.0)
    rho_s = np.where(stable, rho, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r_max = np.where(rt < d1, -1.0,
                         np.where(c > 0, np.floor((rt - d1) / c + 1e-9), 0.0))
        r_tail = np.where(q <= 0.0, 1.0, np.ceil(np.log(TAIL_EPS) / np.log(q)))
    # q = 1: a retry never succeeds, P(Z = W_r) = 0 for r ≥ 1
    r_tail = np.where(q >= 1.0, 0.0, r_tail)
    top = min(np.max(r_max, initial=-1.0), np.max(r_tail, initial=0.0))
    total = np.zeros(np.broadcast_shapes(rt.shape, rho.shape))
    for r0 in range(0, int(top) + 1, R_BLOCK):
        r = np.arange(r0, min(r0 + R_BLOCK, int(top) + 1), dtype=float)
        # P(Z = W_r): 1 − ρ for r = 0, ρ q^(r−1) (1 − q) after.
        rl = r.reshape((1,) * rho.ndim + (-1,))
        pz = np.where(rl == 0, 1.0 - rho_s[..., None],
                      rho_s[..., None] * q[..., None] ** np.maximum(rl - 1, 0)
                      * (1.0 - q[..., None]))
        # CDF_exe(RT − W_r), 0 beyond r_max (RT − W_r < 0, up to rounding).
        x = rt[..., None] - d1[..., None] - r.reshape((1,) * rt.ndim + (-1,)) * c[..., None]
        f = cdf(np.where(x >= -1e-12, np.maximum(x, 0.0), -1.0))
        total += (pz * f).sum(axis=-1)
    # c = 0: every try lands at W_r = d1, so the weights sum in closed form (to 1, or to
    # 1 − ρ when retries never succeed)
    instant = (c == 0) & (rt >= d1)
    if instant.any():
        mass = np.where(q >= 1.0, 1.0 - rho_s, 1.0)
        total = np.where(instant, cdf(np.where(instant, rt - d1, -1.0)) * mass, total)
    return np.where(stable, np.clip(total, 0.0, 1.0), 0.0)[()]


def resolved_miss(within):
    """The share of late requests 1 − P(R ≤ RT) from a computed P(R ≤ RT)
    (``response_cdf``, ``mmn_response_cdf``), ``nan`` where below
    ``MISS_RESOLUTION`` (not resolved: rounding noise, shown as "below 1e-12")."""
    within = np.asarray(within, dtype=float)
    miss = 1.0 - within
    with np.errstate(invalid="ignore"):
        return np.where(miss >= MISS_RESOLUTION, miss, np.nan)[()]


def retry_busy_probability(lam, mu, n, d1, d2, delta):
    """Probability that a retry finds its backend busy (the correction of eq 2).

    q = E[K(0)·K(c)]/(n²ρ) = (π∘f)·e^(Qc) f / (π·f), f_k = min(k, n)/n, over the
    M/M/n busy-count chain (generator Q, stationary law π), c = d1 + d2 + Δ: one
    sparse matrix-exponential product per point.  q → ρ as c·μ → ∞; 1 for
    λ ≥ nμ, 0 for λ = 0.  Plug it into ``response_cdf`` as ``p_retry_busy``.
    """
    from scipy import sparse
    from scipy.sparse.linalg import expm_multiply

    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    d1, d2, delta = check_delays(d1, d2, delta)
    lam, mu, n, c = np.broadcast_arrays(lam, mu, n, d1 + d2 + delta)
    out = np.ones(lam.shape)
    for idx in np.ndindex(lam.shape):
        la, m, k, cc = float(lam[idx]), float(mu[idx]), int(n[idx]), float(c[idx])
        rho = la / (k * m)
        if rho >= 1.0:
            continue
        if la == 0.0:
            out[idx] = 0.0
            continue
        size = k + int(np.ceil(np.log(1e-16) / np.log(rho))) + 10
        j = np.arange(size)
        logw = np.where(j <= k, j * np.log(la / m) - np.cumsum(np.log(np.maximum(j, 1))),
                        0.0)
        logw = np.where(j <= k, logw, logw[k] + (j - k) * np.log(rho))
        pi = np.exp(logw - logw.max())
        pi /= pi.sum()
        deaths = np.minimum(j[1:], k) * m
        gen = sparse.diags([np.full(size - 1, la), deaths], [1, -1], format="csr")
        gen = gen - sparse.diags(np.asarray(gen.sum(axis=1)).ravel())
        f = np.minimum(j, k) / k
        out[idx] = float((pi * f) @ expm_multiply(gen * cc, f) / (pi @ f))
    return np.clip(out, 0.0, 1.0)[()]


def response_percentile(p, lam, mu, n, d1, d2, delta, service, *, p_retry_busy=None):
    """p-th percentile response time (s) by eq 7: the smallest RT with
    ``response_cdf(RT, ...)`` ≥ p/100 (to relative 1e-9); ``inf`` for λ ≥ nμ."""
    pc = PERCENTILE.check(p, "p") / 100.0
    rho = np.asarray(utilization(lam, mu, n))
    d1, d2, delta = check_delays(d1, d2, delta)
    shape = np.broadcast_shapes(pc.shape, rho.shape, d1.shape, d2.shape, delta.shape)

    def cdf(t):
        return response_cdf(t, lam, mu, n, d1, d2, delta, service, p_retry_busy=p_retry_busy)

    return smallest_reaching(cdf, pc, shape)[()]


# ------------------------------------------------------------ central queue, M/M/n

def erlang_c(n, a):
    """Erlang C: probability an arrival waits in M/M/n with offered load a = λ/μ.

    From Erlang B = Poisson pmf/cdf (log space, no factorials):
    C = nB/(n − a(1 − B)); 1 for a ≥ n.
    """
    n = N_BACKENDS.check(n)
    a = LAM.check(a, "a")
    n, a = np.broadcast_arrays(n, a)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        b = np.exp(stats.poisson.logpmf(n, a) - stats.poisson.logcdf(n, a))
        c = n * b / (n - a * (1.0 - b))
    c = np.where(a == 0, 0.0, c)
    return np.where(a < n, np.clip(c, 0.0, 1.0), 1.0)[()]


def mmn_response_cdf(t, lam, mu, n):
    """P(R ≤ t) in M/M/n FIFO: R = W_q + S, W_q = 0 w.p. 1 − C, else Exp(nμ − λ).

    P(R > t) = e^(−μt) + C·μ e^(−μt)(1 − e^(−(γ−μ)t))/(γ − μ), γ = nμ − λ (the
    limit μt e^(−μt) at γ = μ).  0 for λ ≥ nμ.
    """
    t = RESPONSE_TARGET.check(t, "t")
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    t, lam, mu, n = np.broadcast_arrays(t, lam, mu, n)
    stable = lam < n * mu
    cw = erlang_c(n, np.where(stable, lam / mu, 0.0))
    gap = np.where(stable, n * mu - lam, 1.0) - mu
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # e^(−μt)(1 − e^(−(γ−μ)t))/(γ − μ) = e^(−min(μ, γ)t)(1 − e^(−|γ−μ|t))/|γ − μ|:
        # no exp of a large positive number when γ < μ
        size = np.abs(gap)
        ratio = np.where(size * t > 1e-12, -np.expm1(-size * t) / size, t)
        tail = np.exp(-mu * t) + cw * mu * np.exp(-np.minimum(mu, gap + mu) * t) * ratio
    return np.where(stable, np.clip(1.0 - tail, 0.0, 1.0), 0.0)[()]


def mmn_waiting_cdf(t, lam, mu, n):
    """P(W_q ≤ t) in M/M/n FIFO: 1 − C e^(−(nμ − λ)t); 0 for λ ≥ nμ."""
    t = RESPONSE_TARGET.check(t, "t")
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    stable = lam < n * mu
    cw = erlang_c(n, np.where(stable, lam / mu, 0.0))
    with np.errstate(invalid="ignore", over="ignore"):
        val = 1.0 - cw * np.exp(-np.where(stable, n * mu - lam, 0.0) * t)
    return np.where(stable, val, 0.0)[()]


def mmn_response_percentile(p, lam, mu, n):
    """p-th percentile response time (s) of one central M/M/n FIFO queue (the
    smallest t with ``mmn_response_cdf`` ≥ p/100); ``inf`` for λ ≥ nμ."""
    pc = PERCENTILE.check(p, "p") / 100.0
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    shape = np.broadcast_shapes(pc.shape, lam.shape, mu.shape, n.shape)
    return smallest_reaching(lambda t: mmn_response_cdf(t, lam, mu, n), pc, shape)[()]


def mmn_waiting_percentile(p, lam, mu, n):
    """p-th percentile of the queueing wait W_q (s) in M/M/n FIFO, in closed form:
    P(W_q > t) = C e^(−(nμ − λ)t), so t_p = max(0, ln(C/(1 − p/100))/(nμ − λ));
    ``inf`` for λ ≥ nμ."""
    pc = PERCENTILE.check(p, "p") / 100.0
    lam, mu, n = LAM.check(lam), MU.check(mu), N_BACKENDS.check(n)
    stable = lam < n * mu
    cw = erlang_c(n, np.where(stable, lam / mu, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(cw / (1.0 - pc)) / np.where(stable, n * mu - lam, 1.0)
    return np.where(stable, np.maximum(np.nan_to_num(t, nan=0.0, neginf=0.0), 0.0),
                    np.inf)[()]
