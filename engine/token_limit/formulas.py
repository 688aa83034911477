"""Token moments, the M/G/1 mean wait, load, utility and objectives (Yang et al. §III, eqs 1-5, 10-11).

S = a·min(n, n_max) + c seconds for a request asking n output tokens; λ in
requests per second.  Vectorised module functions; derivations and errata in
docs/models/token_limit.md.
"""
from __future__ import annotations

import numpy as np

from ..core import token_laws
from ..core.domains import (A_S_PER_TOKEN, C_S, LAM_PER_S, LOAD_RHO, LOSS_COST, MEAN_TOKENS, THETA,
                            check_n_max)


def _token_sums(dist, top: int):
    """Cumulative sums over k = 0..top−1 of P(n > k) and (2k + 1)·P(n > k)."""
    k = np.arange(top, dtype=float)
    sf = np.ones(top)
    if top > 1:
        sf[1:] = np.clip(dist.sf(k[1:]), 0.0, 1.0)
    s1 = np.concatenate([[0.0], np.cumsum(sf)])
    s2 = np.concatenate([[0.0], np.cumsum((2.0 * k + 1.0) * sf)])
    return s1, s2


def clipped_token_moments(dist, n_max):
    """(E[min(n, n_max)], E[min(n, n_max)²]) of the requested tokens n (eqs 2-3).

    ``n_max=None`` (or inf) means no limit: the sums then stop at the
    (1 − 1e-15)-quantile of an unbounded law.  Vectorised over ``n_max``.
    Uses E[min(n, m)] = Σ_{k<m} P(n > k), E[min(n, m)²] = Σ_{k<m} (2k+1) P(n > k)
    (summation by parts of eqs 2-3).
    """
    m = check_n_max(n_max)
    top = token_laws.grid_top(dist, m)
    s1, s2 = _token_sums(dist, top)
    idx = np.minimum(m, top).astype(np.int64)
    return s1[idx][()], s2[idx][()]


TAIL_SPLIT = 1 << 16               # beyond this many tokens a tail sum becomes an integral


def mean_requested_tokens(dist) -> float:
    """E[n] in tokens, n = max(1, ⌈X⌉), without a limit: Σ_{k≥0} P(n > k).

    Where the law's top (``token_laws.grid_top``) is within ``MAX_TOKEN_GRID`` this is
    ``clipped_token_moments(dist, None)[0]``.  Beyond, the sum runs term by term up to
    ``TAIL_SPLIT`` and the rest by Euler-Maclaurin, Σ_{k≥K} f(k) = ∫_K^∞ f + f(K)/2
    − f'(K)/12 + …, with f = P(X > x) (so −f' is the density); ``inf`` for a law
    without a mean.
    """
    try:
        token_laws.grid_top(dist)
    except ValueError:
        return _tail_mean(dist, TAIL_SPLIT)
    return float(clipped_token_moments(dist, None)[0])


def _tail_mean(dist, k0: int) -> float:
    """Σ_{k<k0} P(n > k) exactly plus the Euler-Maclaurin tail from k0."""
    from scipy import integrate

    s1, _ = _token_sums(dist, k0)
    # x = k0·e^t: a heavy tail decays fast in t, where quad over [k0, ∞) lost it
    def f(t):
        x = k0 * np.exp(t)
        return x * float(dist.sf(x))
    top = 690.0 - np.log(k0)                    # x up to e^690: no overflow
    tail = sum(integrate.quad(f, lo, hi, limit=200)[0]
               for lo, hi in ((0.0, 10.0), (10.0, 40.0), (40.0, top)))
    mean = float(dist.mean())
    if not (np.isfinite(tail) and np.isfinite(mean)):
        return float("inf")
    sf0 = float(dist.sf(float(k0)))
    dens = float(dist.pdf(float(k0))) if callable(getattr(dist, "pdf", None)) else 0.0
    return float(s1[-1] + tail + 0.5 * sf0 + dens / 12.0)


EXACT_SPAN = 200_000               # tokens beyond the largest limit summed term by term


def _inverse_tail(dist, k0: int, law_top: float) -> float:
    """E[1/n; n > k0] = S(k0)/(k0 + 1) − Σ_{k>k0} S(k)/(k(k + 1)), S(k) = P(n > k).

    The sum (weights ~1/k²) is exact up to k0 + ``EXACT_SPAN`` and beyond by
    the trapezoid rule on a geometric grid up to the top of the law (relative
    error of that remote part ~1e-7; it is itself below S(k0 + EXACT_SPAN)/EXACT_SPAN).
    """
    sf = lambda k: np.clip(np.asarray(dist.sf(np.asarray(k, float)), float), 0.0, 1.0)
    s0 = float(sf(float(k0)))
    if s0 == 0.0:
        return 0.0
    j = int(min(law_top, k0 + EXACT_SPAN))
    k = np.arange(k0 + 1, j + 1, dtype=float)
    rest = float(np.sum(sf(k) / (k * (k + 1.0)))) if k.size else 0.0
    if law_top > j:
        x = np.geomspace(float(j), float(law_top), 4001)
        f = sf(x) / (x * (x + 1.0))
        rest += float(np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(x))) - 0.5 * f[0]
    return max(s0 / (k0 + 1.0) - rest, 0.0)


def mean_utility(dist, n_max):
    """E[u | n_max] = E[min(n, n_max)/n], the mean share of the requested tokens served (eq 10).

    u(n) = 1 for n ≤ n_max and n_max/n above, so E[u] = P(n ≤ n_max) + n_max·E[1/n; n > n_max].
    Exact sums up to the largest finite ``n_max``; beyond it E[1/n; n > K] by
    summation by parts (``_inverse_tail``), so a heavy tail costs no more than a
    light one.  Vectorised over ``n_max``.
    """
    m = check_n_max(n_max)
    law_top = token_laws.law_top(dist)
    finite = m[np.isfinite(m)]
    top = int(min(law_top, max(float(finite.max()) if finite.size else 1.0, 1.0),
                  token_laws.MAX_TOKEN_GRID))
    k = np.arange(1, top + 1, dtype=float)
    pmf = token_laws.token_pmf(dist, k)
    full = np.concatenate([[0.0], np.cumsum(pmf)])                   # Σ_{k≤m} p_k
    part = np.concatenate([[0.0], np.cumsum(pmf / k)])               # Σ_{k≤m} p_k/k
    tail = _inverse_tail(dist, top, law_top)                          # Σ_{k>top} p_k/k
    idx = np.minimum(np.where(np.isfinite(m), m, top), top).astype(np.int64)
    with np.errstate(invalid="ignore"):
        u = full[idx] + np.where(np.isfinite(m), m, 0.0) * (part[-1] - part[idx] + tail)
    return np.where(m >= law_top, 1.0, np.clip(u, 0.0, 1.0))[()]


def service_moments(a, c, e1, e2):
    """(E[S], E[S²]) in s and s² of S = a·min(n, n_max) + c, from the clipped token
    moments ``e1``, ``e2`` (eqs 4-5: Var S = a²·Var min(n, n_max))."""
    es = a * e1 + c
    return es, es * es + a * a * np.maximum(e2 - e1 * e1, 0.0)


def _check_rates(lam, a, c):
    return LAM_PER_S.check(lam), A_S_PER_TOKEN.check(a), C_S.check(c)


def mean_wait(lam, a, c, dist, n_max):
    """M/G/1 FCFS mean queueing delay E[W] = λE[S²]/(2(1 − ρ)) in seconds (eqs 1, 4, 5).

    S = a·min(n, n_max) + c, ρ = λE[S]; ``inf`` when ρ ≥ 1.  Vectorised over
    ``lam``, ``a``, ``c`` and ``n_max`` (None or inf: no limit).
    """
    lam, a, c = _check_rates(lam, a, c)
    e1, e2 = clipped_token_moments(dist, n_max)
    es, es2 = service_moments(a, c, np.asarray(e1), np.asarray(e2))
    rho = lam * es
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        w = lam * es2 / (2.0 * (1.0 - rho))
        # λ < 1/E[S] too: (1/E[S])·E[S] can round below 1, and λ = 1/E[S] is unstable
        stable = (rho < 1.0) & (lam < 1.0 / es) & np.isfinite(lam)
    return np.where(stable, np.where(lam > 0, w, 0.0), np.inf)[()]


def rate_at_load(rho, a, c, mean_tokens):
    """Arrival rate λ (requests/s) giving the load ρ = λ(a·E[n] + c) for a mean of
    ``mean_tokens`` output tokens a request (e.g. ``mean_requested_tokens``: no limit)."""
    a, c = A_S_PER_TOKEN.check(a), C_S.check(c)
    rho, mean = LOAD_RHO.check(rho), MEAN_TOKENS.check(mean_tokens)
    return (rho / (a * mean + c))[()]


def utilization(lam, a, c, dist, n_max):
    """Offered load ρ = λE[S] (eq 1's ρ = λ/μ); the server is unstable for ρ ≥ 1."""
    lam, a, c = _check_rates(lam, a, c)
    e1, _ = clipped_token_moments(dist, n_max)
    return (lam * (a * np.asarray(e1) + c))[()]


def objective_v1(mean_utility, mean_wait, theta):
    """V1 = θE[u] − (1 − θ)E[W] (eq 10); ``-inf`` where E[W] is infinite (unstable)."""
    theta = THETA.check(theta)
    u, w = np.asarray(mean_utility, float), np.asarray(mean_wait, float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(w), theta * u - (1.0 - theta) * w, -np.inf)[()]


def objective_v2(mean_utility, mean_wait_all, loss_fraction, theta, loss_cost,
                 printed_sign=False):
    """V2 = θE[u] − (1 − θ)E[W_q] − ℓπ (eq 11 with the sensible sign; module docstring).

    ``printed_sign=True`` gives the paper's printed + (1 − θ)E[W_q].
    """
    theta, ell = THETA.check(theta), LOSS_COST.check(loss_cost)
    sign = 1.0 if printed_sign else -1.0
    return (theta * np.asarray(mean_utility, float)
            + sign * (1.0 - theta) * np.asarray(mean_wait_all, float)
            - ell * np.asarray(loss_fraction, float))[()]


def largest_stable_limit(lam, a, c, dist) -> float:
    """Largest n_max with ρ = λ(a·E[min(n, n_max)] + c) < 1 (no impatience).

    ``inf`` when even no limit is stable, 0 when no limit is: a lone one-token
    answer (a + c seconds) already fills the server.  E[min(n, m)] = Σ_{k<m} P(n > k)
    is summed in doubling chunks until ρ reaches 1, so a heavy tail that
    overloads the server early costs little.  Scalar arguments.
    """
    lam, a, c = (float(x) for x in _check_rates(lam, a, c))
    top = int(min(token_laws.law_top(dist), token_laws.MAX_TOKEN_GRID))
    start, total, chunk = 0, 0.0, 4096
    while start < top:
        k = np.arange(start, min(start + chunk, top), dtype=float)
        sf = np.clip(np.asarray(dist.sf(k), float), 0.0, 1.0)
        if start == 0:
            sf[0] = 1.0                                   # P(n > 0) = 1: n ≥ 1
        rho = lam * (a * (total + np.cumsum(sf)) + c)     # ρ at n_max = k + 1
        if rho[-1] >= 1.0:
            return _settle(lam, a, c, dist, int(k[np.argmax(rho >= 1.0)]))
        total += float(sf.sum())
        start += k.size
        chunk *= 2
    return float("inf")


def _settle(lam, a, c, dist, m: int) -> float:
    """``m`` (the first unstable n_max − 1 by the running sum) moved to where
    ``utilization``, which sums in another order, agrees: ρ(m) < 1 ≤ ρ(m + 1).
    The two sums differ in the last bit, which decides a limit where ρ ≈ 1."""
    while m >= 1 and utilization(lam, a, c, dist, m) >= 1.0:
        m -= 1
    while utilization(lam, a, c, dist, m + 1) < 1.0:
        m += 1
    return float(m)
