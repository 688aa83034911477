"""Exact solvers of the tandem's QBD: G by shifted cyclic reduction (logarithmic
reduction kept as a reference), R and the moments in closed form, and the saturated
downstream's stationary vector (the capacity).  Method and checks:
docs/models/pipeline.md.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import splu

from .chain import Phases, qbd_blocks

_LR_TOL = 1e-13          # logarithmic reduction stops when max |1 − G·1| is below this
                         # (or when the remaining correction T is below 1e-18)
_LR_MAX_ITER = 80
_CR_TOL = 1e-17          # cyclic reduction: neglected term below this (see cyclic_reduction)
_CR_MAX_ITER = 60
_GTH_PHASES = 48         # stationary vectors by GTH elimination up to this many phases
SPARSE_PHASES = 300      # saturation vector by sparse LU from this many phases on


def stationary_vector(Q: np.ndarray) -> np.ndarray:
    """θ with θQ = 0, θ1 = 1 for a stack of irreducible generators (P, N, N).

    Up to ``_GTH_PHASES`` phases by ``gth``; above, a batched linear solve (GTH's
    loop over N in Python is the slower of the two there).
    """
    if Q.shape[-1] <= _GTH_PHASES:
        return gth(Q)
    M = np.array(Q)
    M[:, :, 0] = 1.0
    rhs = np.zeros(M.shape[:2])
    rhs[:, 0] = 1.0
    return np.linalg.solve(np.swapaxes(M, 1, 2), rhs[..., None])[..., 0]


def gth(Q: np.ndarray) -> np.ndarray:
    """Stationary vectors of a stack of generators by GTH elimination (Grassmann,
    Taksar & Heyman 1985): only sums and products of
    non-negative numbers, no subtraction, so every θ_i has a small *relative*
    error even where it is tiny.  A linear solve gave θ_i of 1e-11 with absolute
    errors of ~1e-16, and capacities above c·μ_cu by 3e-6 relative when the
    rates span 1e10.  The diagonal of Q is not read.  O(N³) in a loop over N.
    """
    M = np.array(Q, dtype=float)
    N = M.shape[-1]
    scale = np.empty(M.shape[:2])
    for k in range(N - 1, 0, -1):
        s = M[:, k, :k].sum(axis=1)                 # rate out of k to the states left
        scale[:, k] = s
        M[:, :k, :k] += M[:, :k, k, None] * (M[:, k, None, :k] / s[:, None, None])
    theta = np.zeros(M.shape[:2])
    theta[:, 0] = 1.0
    for k in range(1, N):
        theta[:, k] = np.einsum("pi,pi->p", theta[:, :k], M[:, :k, k]) / scale[:, k]
    return theta / theta.sum(axis=1, keepdims=True)


def log_reduction(lam, A1, A2):
    """Minimal solution G of A2 + A1 G + λ G² = 0 (Latouche & Ramaswami's algorithm).

    Quadratic convergence: each step doubles the number of levels the
    first-passage probabilities account for.  Stops when G is stochastic to
    ``_LR_TOL`` (positive recurrent case) or the next correction vanishes.
    """
    N = A1.shape[-1]
    eye = np.eye(N)
    inv = np.linalg.inv(-A1)
    B0 = lam[:, None, None] * inv
    B2 = inv @ A2
    G = B2.copy()
    T = B0.copy()
    for _ in range(_LR_MAX_ITER):
        if np.max(np.abs(1.0 - G.sum(axis=2))) < _LR_TOL or np.max(np.abs(T)) < 1e-18:
            break
        D = B0 @ B2 + B2 @ B0
        sq = np.linalg.solve(eye - D, np.concatenate([B0 @ B0, B2 @ B2], axis=2))
        B0, B2 = sq[:, :, :N], sq[:, :, N:]
        G += T @ B2
        T = T @ B0
    return G


def cyclic_reduction(lam, A1, A2):
    """Minimal solution G of A2 + A1 G + λ G² = 0 by shifted cyclic reduction.

    Bini & Meini's cyclic reduction (Bini, Latouche & Meini 2005, §7.3) after the
    shift of He, Meini & Rhee (2001) that moves G's eigenvalue 1 to 0.  Stops when
    the neglected term is below ``_CR_TOL`` and G passes the a-posteriori check
    (residual and G1 = 1, both to 1e-12 relative); docs/models/pipeline.md derives it.
    """
    N = A1.shape[-1]
    lam3 = lam[:, None, None]
    v = np.full(N, 1.0 / N)
    A2s = A2 - A2.sum(axis=2)[:, :, None] * v
    A1s = A1 + lam3 * v
    X = np.linalg.solve(-A1s, np.concatenate([A2s, np.broadcast_to(np.eye(N), A1.shape)],
                                             axis=2))
    SBm, S = X[:, :, :N], X[:, :, N:]                 # (−B0)⁻¹B₋, (−B0)⁻¹
    Bh = A1s + lam3 * SBm
    B0 = Bh + lam3 * (A2s @ S)
    Bm = A2s @ SBm
    Bp = lam3 * lam3 * S
    scale = np.abs(A1).sum(axis=2).max()
    for _ in range(_CR_MAX_ITER):
        up = np.abs(Bp).sum(axis=2).max(axis=1)
        with np.errstate(over="ignore", invalid="ignore"):   # λ near the underflow limit
            small = np.where(up == 0.0, 0.0,
                             (up / lam) * (np.abs(Bm).sum(axis=2).max(axis=1) / lam))
        if np.max(small) < _CR_TOL:
            G = np.linalg.solve(-Bh, A2s) + v
            resid = np.abs(A2 + A1 @ G + lam3 * (G @ G)).max()
            if resid < 1e-12 * scale and np.abs(1.0 - G.sum(axis=2)).max() < 1e-12:
                return G
        X = np.linalg.solve(-B0, np.concatenate([Bm, Bp], axis=2))
        SBm, SBp = X[:, :, :N], X[:, :, N:]
        up_down = Bp @ SBm
        Bh = Bh + up_down
        B0 = B0 + up_down + Bm @ SBp
        Bm = Bm @ SBm
        Bp = Bp @ SBp
    return np.linalg.solve(-Bh, A2s) + v


def solve_stable(ph: Phases, lam, rates):
    """Exact measures of stable points (arrays of length P): G by ``cyclic_reduction``
    (clipped at 0 and refined once), R = λ(−A1 − λG)⁻¹, then ``_moments``
    (Latouche & Ramaswami 1999, §6.4)."""
    A1, A2, B1 = qbd_blocks(ph, lam, rates)
    G = np.maximum(cyclic_reduction(lam, A1, A2), 0.0)
    inv = np.linalg.inv(-A1 - lam[:, None, None] * G)
    return _moments(ph, lam, B1, inv @ A2, lam[:, None, None] * inv)


def _moments(ph: Phases, lam, B1, G, R):
    """The measures from G and R."""
    P, N = lam.size, ph.n
    one = np.ones((P, N, 1))
    ImR = np.eye(N) - R
    v = np.linalg.solve(ImR, one)                          # (I − R)⁻¹ 1
    M = B1 + lam[:, None, None] * G                        # censored level-0 generator
    M[:, :, 0] = v[:, :, 0]
    rhs = np.zeros((P, N, 1))
    rhs[:, 0] = 1.0
    pi0 = np.linalg.solve(np.swapaxes(M, 1, 2), rhs)[..., 0]
    x = np.linalg.solve(np.swapaxes(ImR, 1, 2), pi0[..., None])[..., 0]   # Σ_n π_n
    w = np.linalg.solve(ImR, v)[..., 0]                    # (I − R)⁻² 1
    l_cpu = np.einsum("pi,pij,pj->p", pi0, R, w)           # π0 R (I − R)⁻² 1
    busy = x - pi0                                         # levels ≥ 1
    return dict(l_cpu=l_cpu, l_mem=x @ ph.m, l_cu=x @ ph.b,
                p_cpu_blocked=busy @ ph.cpu_blocked, p_mem_blocked=x @ ph.mem_blocked)


def solve_stable_lr(ph: Phases, lam, rates):
    """Exact measures of stable points by logarithmic reduction and dense inverses.

    The solver before ``solve_stable``; kept as an independent reference for the
    tests and the benchmarks (G by another algorithm; the measures from G and R are
    the same algebra).
    """
    A1, A2, B1 = qbd_blocks(ph, lam, rates)
    G = log_reduction(lam, A1, A2)
    R = lam[:, None, None] * np.linalg.inv(-A1 - lam[:, None, None] * G)
    return _moments(ph, lam, B1, G, R)


def saturation(ph: Phases, rates):
    """θ of the downstream with the CPU never empty, and θA2·1 (the capacity).

    Dense stacked solves for small phase spaces; from ``SPARSE_PHASES`` phases
    on one sparse LU per point (the generator has at most four entries a row).
    The capacity is capped at min(μ_cpu, μ_mem, c·μ_cu), a theorem (no stage
    passes more than its own rate): where the rates span ~1e10 and N is above
    ``_GTH_PHASES``, a linear solve's absolute error could pass it by ~1e-6.
    """
    if ph.n < SPARSE_PHASES:
        zero = np.zeros(rates.shape[0])
        A1, A2, _ = qbd_blocks(ph, zero, rates)
        theta = stationary_vector(A1 + A2)
        return theta, _stage_cap(ph, rates, np.einsum("pi,pij->p", theta, A2))
    theta = np.empty((rates.shape[0], ph.n))
    rhs = np.zeros(ph.n)
    rhs[0] = 1.0
    for p, r in enumerate(rates[:, ph.kind] * ph.mult):
        Q = sparse.csr_matrix((r, (ph.src, ph.dst)), shape=(ph.n, ph.n))
        Q = (Q - sparse.diags(np.asarray(Q.sum(axis=1)).ravel())).T.tocsr()
        Q = sparse.vstack([np.ones((1, ph.n)), Q[1:]]).tocsc()   # θ1 = 1 replaces one row
        theta[p] = splu(Q).solve(rhs)
    cap = (theta[:, ph.src[ph.down]] * (rates[:, ph.kind[ph.down]] * ph.mult[ph.down])).sum(axis=1)
    return theta, _stage_cap(ph, rates, cap)


def _stage_cap(ph: Phases, rates, cap):
    """``cap`` no higher than any stage's own rate (c·μ_cu only where units can fill)."""
    units = ph.b.max()
    cu = units * rates[:, 2] if units > 0 else np.inf
    return np.minimum(cap, np.minimum(np.minimum(rates[:, 0], rates[:, 1]), cu))

