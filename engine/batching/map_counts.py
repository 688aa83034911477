"""Counting matrices of a two-phase Markovian arrival process (MAP) for the batching
chain under MMPP-2 arrivals (``mmpp``): P(k, t)[i, j] = Pr(k arrivals in (0, t], phase j
at t | phase i at 0) by uniformization, those of the batch times τ[b] = αb + τ0 by
convolution, the phase and the mean time at the next arrival, and the expected area
under the count.  Private helpers of ``engine.batching``; derivations:
docs/models/batching.md, "Bursty arrivals: MMPP-2".
"""
from __future__ import annotations

import numpy as np

_UNIFORM_STEPS = 400.0     # θt of one uniformization (longer times: squarings)
_EDGE_MASS = 1e-20         # mass trimmed off either edge of a counting sequence


def _map_matrices(arrivals):
    """(D0, D1) of a two-phase MAP as float arrays, checked; raises naming ``arrivals``."""
    try:
        d0 = np.array(arrivals.D0, dtype=float)
        d1 = np.array(arrivals.D1, dtype=float)
    except (AttributeError, TypeError, ValueError):
        raise ValueError("arrivals must be an MMPP-2 (an object with 2x2 matrices D0 and D1), "
                         f"got {type(arrivals).__name__}") from None
    if d0.shape != (2, 2) or d1.shape != (2, 2):
        raise ValueError(f"arrivals must have 2x2 D0 and D1, got {d0.shape} and {d1.shape}")
    if not (np.all(np.isfinite(d0)) and np.all(np.isfinite(d1))):
        raise ValueError("arrivals must have finite D0 and D1")
    off = d0 - np.diag(np.diag(d0))
    if np.any(d1 < 0) or np.any(off < 0):
        raise ValueError("arrivals must have D1 >= 0 and off-diagonal D0 >= 0")
    rows = (d0 + d1).sum(axis=1)
    if np.any(np.abs(rows) > 1e-9 * np.abs(np.diag(d0)).max(initial=1.0)):
        raise ValueError("arrivals must have rows of D0 + D1 summing to 0")
    d = d0 + d1
    if d[0, 1] <= 0 or d[1, 0] <= 0:
        raise ValueError("arrivals must switch between its phases both ways "
                         "(switch rates > 0); a one-phase process is Poisson")
    return d0, d1


def _phase_law(d0, d1):
    """Stationary phase law φ of the generator D = D0 + D1 (two phases)."""
    d = d0 + d1
    return np.array([d[1, 0], d[0, 1]]) / (d[0, 1] + d[1, 0])


def _idle_adjugate(d0, d1):
    """(adj(−D0), det(−D0)) without cancellation: with a_i the arrival rates (rows of D1)
    and d01, d10 the switches of D0, −D0 = [[a0 + d01, −d01], [−d10, a1 + d10]] and
    det = a0 a1 + a0 d10 + a1 d01."""
    a0, a1 = d1.sum(axis=1)
    d01, d10 = d0[0, 1], d0[1, 0]
    return np.array([[a1 + d10, d01], [d10, a0 + d01]]), a0 * a1 + a0 * d10 + a1 * d01


def _next_arrival_phase(d0, d1) -> np.ndarray:
    """R = (−D0)⁻¹D1: the phase at the next arrival from each phase (rows sum to 1; the
    rows normalised, so that even rates near the smallest floats give a law)."""
    adj, _ = _idle_adjugate(d0, d1)
    r = adj @ d1
    total = r.sum(axis=1, keepdims=True)
    if np.all(total > 0):
        return r / total
    weights = _phase_law(d0, d1) * d1.sum(axis=1)      # λ → 0: the arrival-weighted law
    return np.tile(weights / weights.sum(), (2, 1))


def _mean_idle(d0, d1) -> np.ndarray:
    """(−D0)⁻¹1: the mean time to the next arrival from each phase (inf if it overflows)."""
    adj, det = _idle_adjugate(d0, d1)
    with np.errstate(divide="ignore", over="ignore"):
        return adj.sum(axis=1) / det


def _poisson_weights(x: float, n_hi: int) -> np.ndarray:
    """Poisson(x) probabilities of 0..n_hi by the ratios x/n from the mode (no large
    cancelling logarithms), normalised: the mass beyond n_hi is below 1e-16."""
    mode = min(int(x), n_hi)
    n = np.arange(1, n_hi + 1)
    w = np.empty(n_hi + 1)
    w[mode] = 1.0
    w[mode + 1:] = np.cumprod(x / n[mode:])
    w[:mode] = np.cumprod((n[:mode] / x)[::-1])[::-1]
    return w / w.sum()


def _uniformized(d0, d1, t: float, k_max: int) -> np.ndarray:
    """P(k, t) for k = 0..k_max by uniformization (one term per step: θt ≤ ~400)."""
    out = np.zeros((k_max + 1, 2, 2))
    theta = float(max(-d0[0, 0], -d0[1, 1]))
    x = theta * t
    n_hi = int(np.ceil(x + 15.0 * np.sqrt(x) + 40.0))   # Chernoff: tail < 1e-16
    w = _poisson_weights(x, n_hi)
    p1 = d1 / theta
    p0 = d0 / theta
    p0[np.diag_indices(2)] = 0.0                       # rows of P0 + P1 sum to 1 exactly
    p0[np.diag_indices(2)] = 1.0 - p0.sum(axis=1) - p1.sum(axis=1)
    k = np.zeros((k_max + 1, 2, 2))
    k[0] = np.eye(2)
    nxt = np.zeros_like(k)
    out[0] = w[0] * np.eye(2)
    for step in range(1, n_hi + 1):
        top = min(step, k_max) + 1
        np.matmul(k[:top], p0, out=nxt[:top])
        nxt[1:top] += k[:top - 1] @ p1
        k, nxt = nxt, k
        if w[step] > 0:
            out[:top] += w[step] * k[:top]
    return out


def _counting(d0, d1, t: float, k_max: int) -> np.ndarray:
    """P(k, t)[i, j] = Pr(k arrivals in (0, t], phase j at t | phase i at 0), k = 0..k_max.

    Uniformization: with θ = max_i −D0[i, i], P0 = I + D0/θ and P1 = D1/θ,
    P(k, t) = Σ_n Poisson(n; θt) K_n(k), K_{n+1}(k) = K_n(k) P0 + K_n(k − 1) P1,
    summed until the Poisson tail is below 1e-16.  When θt > 400 (fast switching or
    long times) it is applied to t/2^s and the result squared s times,
    P(·, 2h) = P(·, h) ⊛ P(·, h).  Shape (k_max + 1, 2, 2).
    """
    theta = float(max(-d0[0, 0], -d0[1, 1]))
    if t == 0.0 or theta == 0.0:
        out = np.zeros((k_max + 1, 2, 2))
        out[0] = np.eye(2)
        return out
    x = theta * t
    squarings = int(np.ceil(np.log2(x / _UNIFORM_STEPS))) if x > _UNIFORM_STEPS else 0
    p = _uniformized(d0, d1, np.ldexp(t, -squarings), k_max)
    if not squarings:
        return p
    win, lo = _trim(p)
    for _ in range(squarings):
        lo2 = 2 * lo
        if lo2 > k_max:
            return np.zeros((k_max + 1, 2, 2))       # every count beyond k_max
        win, lo = _trim(_convolve(win, win)[:k_max + 1 - lo2], lo2)
    out = np.zeros((k_max + 1, 2, 2))
    out[lo:lo + win.shape[0]] = win
    return out


def _trim(p: np.ndarray, lo: int = 0):
    """(window, lo) with the edges of total mass < 1e-20 cut off ``p`` (offset ``lo``)."""
    mass = p.sum(axis=(1, 2))
    head = np.cumsum(mass)
    tail = np.cumsum(mass[::-1])
    a = int(np.searchsorted(head, _EDGE_MASS, side="right"))
    z = mass.size - int(np.searchsorted(tail, _EDGE_MASS, side="right"))
    a = min(a, max(z - 1, 0))
    return p[a:max(z, a + 1)], lo + a


def _convolve(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(x ⊛ q)(k) = Σ_l x(k − l) q(l) for sequences of 2x2 matrices, full length.

    One vectorised matrix product per entry of the shorter sequence.
    """
    m, r = x.shape[0], q.shape[0]
    out = np.zeros((m + r - 1, 2, 2))
    if r <= m:
        flat, rows = out.reshape(-1, 2), x.reshape(-1, 2)
        for lag in range(r):
            flat[2 * lag:2 * (lag + m)] += rows @ q[lag]
    else:
        for a in range(m):
            out[a:a + r] += np.matmul(x[a], q)
    return out


def _batch_counts(d0, d1, tau0: float, alpha: float, n_sizes: int, k_max: int):
    """Counting matrices of the batch times τ[b] = αb + τ0, b = 1..n_sizes.

    Yields (b, window, lo): P(lo + k, τ[b]) = window[k] (mass < 1e-20 trimmed off
    the edges, k ≤ k_max).  P(·, τ[b]) = P(·, τ[b − 1]) ⊛ P(·, α) (Chapman-Kolmogorov
    for the counting process), so only P(·, τ0) and P(·, α) are uniformized.
    """
    q, q_lo = _trim(_counting(d0, d1, alpha, k_max))
    q = np.concatenate([np.zeros((q_lo, 2, 2)), q])          # q from k = 0
    x, lo = _trim(_counting(d0, d1, tau0, k_max))
    for b in range(1, n_sizes + 1):
        y = _convolve(x, q)[:max(k_max + 1 - lo, 0)]
        if y.shape[0] == 0:                  # every arrival count beyond k_max
            x, lo = np.zeros((1, 2, 2)), k_max
        else:
            x, lo = _trim(y, lo)
        yield b, x, lo


def _area(d0, d1, tau: float) -> np.ndarray:
    """E_i[∫_0^τ N(t) dt], N the arrivals counted from 0, per starting phase i.

    With D = D0 + D1 = −σ(I − 1φ), e^{Ds} = 1φ + e^{−σs}(I − 1φ) and
    ∫_0^τ (τ − s) e^{Ds} ds D1 1 = λτ²/2 + τ² g(στ) (r − λ), g(x) = (x − 1 + e^{−x})/x².
    """
    d = d0 + d1
    sigma = d[0, 1] + d[1, 0]
    r = d1.sum(axis=1)
    lam = _phase_law(d0, d1) @ r
    x = sigma * tau
    g = (x + np.expm1(-x)) / x / x if x > 1e-4 else 0.5 - x / 6.0 + x * x / 24.0
    return 0.5 * lam * tau * tau + tau * tau * g * (r - lam)
