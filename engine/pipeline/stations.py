"""The textbook stations May & Voigt print: M/M/1, M/M/1/K, M/M/c/c, M/M/c/K.

Vectorised over the rates; state probabilities in log space, every mean a finite
sum over them (no 0/0 at ρ = 1).  Formulas and the paper's errata:
docs/models/pipeline.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import LAM, PIPE_C, PIPE_K, PIPE_MU
from .checks import single_integer


@dataclass(frozen=True)
class Station:
    """Stationary measures of one M/M/c/K station (arrays, broadcast shape).

    ``p[..., n]`` is the probability of n jobs present (for M/M/1 the first
    ``n_max + 1`` states; the rest of the mass is ρ^(n_max+1)).
    """

    L: np.ndarray            # mean number present
    Lq: np.ndarray           # mean number waiting
    W: np.ndarray            # mean sojourn of an admitted job
    Wq: np.ndarray           # mean wait of an admitted job
    p_block: np.ndarray      # probability an arrival is lost (0 for M/M/1)
    throughput: np.ndarray   # admitted (= departure) rate
    p: np.ndarray            # state probabilities, last axis n = 0, 1, ...


def _finite_station(lam, mu, c: int, K: int) -> Station:
    """M/M/c/K by finite sums over p_n ∝ aⁿ/Π_{i≤n} min(i, c), computed in log space."""
    lam, mu = np.broadcast_arrays(lam, mu)
    a = np.minimum(lam / mu, 1e300)[..., None]           # λ = inf: all mass at K
    n = np.arange(K + 1)
    servers = np.minimum(n[1:], c)
    with np.errstate(divide="ignore"):
        steps = np.log(a) - np.log(servers)
    logw = np.concatenate([np.zeros(a.shape), np.cumsum(steps, axis=-1)], axis=-1)
    logw -= logw.max(axis=-1, keepdims=True)
    p = np.exp(logw)
    p /= p.sum(axis=-1, keepdims=True)
    L = p @ n
    Lq = p @ np.maximum(n - c, 0)
    thr = mu * (p @ np.minimum(n, c))                     # departure rate = λ(1 − p_K)
    with np.errstate(invalid="ignore", divide="ignore"):
        W = np.where(lam > 0, L / thr, 1.0 / mu)
        Wq = np.where(lam > 0, Lq / thr, 0.0)
    return Station(L[()], Lq[()], W[()], Wq[()], p[..., K][()], thr[()], p)


def mmck(lam, mu, c, K) -> Station:
    """M/M/c/K: c servers, at most K ≥ c jobs present (Gross & Harris §2.5).

    p_n = p0 aⁿ/n! (n ≤ c), p0 aⁿ/(c! c^(n−c)) (c < n ≤ K), a = λ/μ;
    W = L/(λ(1 − p_K)), Wq = Lq/(λ(1 − p_K)) (May & Voigt print both as "W").
    λ = 0 gives W = 1/μ, Wq = 0 (the limit).
    """
    lam, mu = LAM.check(lam), PIPE_MU.check(mu)
    c, K = single_integer(c, PIPE_C), single_integer(K, PIPE_K)
    if K < c:
        raise ValueError(f"K must be at least c = {c}, got {K}")
    return _finite_station(lam, mu, c, K)


def mm1k(lam, mu, K) -> Station:
    """M/M/1/K (the GPU global memory alone): p_n = (1 − ρ)ρⁿ/(1 − ρ^(K+1))."""
    lam, mu, K = LAM.check(lam), PIPE_MU.check(mu), single_integer(K, PIPE_K)
    return _finite_station(lam, mu, 1, K)


def mmcc(lam, mu, c) -> Station:
    """M/M/c/c (the compute units alone): Erlang loss, p_c is Erlang's B formula."""
    lam, mu, c = LAM.check(lam), PIPE_MU.check(mu), single_integer(c, PIPE_C)
    return _finite_station(lam, mu, c, c)


def mm1(lam, mu, n_max: int = 64) -> Station:
    """M/M/1 (the CPU alone): L = ρ/(1 − ρ), W = 1/(μ − λ) (the paper prints 1/(λ − μ)).

    ρ ≥ 1 gives inf for L, Lq, W, Wq, throughput μ and p = 0 (the mass has
    drifted to infinity).  ``p`` holds states 0..n_max.
    """
    lam, mu = LAM.check(lam), PIPE_MU.check(mu)
    lam, mu = np.broadcast_arrays(lam, mu)
    rho = lam / mu
    stable = rho < 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        L = np.where(stable, rho / (1.0 - rho), np.inf)
        Lq = np.where(stable, rho * rho / (1.0 - rho), np.inf)
        W = np.where(stable, 1.0 / (mu - lam), np.inf)
        Wq = np.where(stable, rho / (mu - lam), np.inf)
        n = np.arange(int(n_max) + 1)
        p = np.where(stable[..., None], (1.0 - rho[..., None]) * rho[..., None] ** n, 0.0)
    thr = np.where(stable, lam, mu)
    return Station(L[()], Lq[()], W[()], Wq[()], np.zeros(rho.shape)[()], thr[()], p)


