"""The batch-start chain of the greedy batching server under MMPP-2 arrivals, cut at N
levels: its moves (from ``map_counts``), dense and banded solves of its stationary law,
and the renewal-reward means.  Private helpers of ``engine.batching.mmpp``; derivations:
docs/models/batching.md, "Bursty arrivals: MMPP-2".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.lapack import dgbtrf, dgbtrs

from .map_counts import _area, _batch_counts, _mean_idle, _next_arrival_phase

_MAX_DENSE_STATES = 3000   # dense solve up to 1,500 levels (72 MB)
_MISSING = 1e-9            # a counting row short by more than this lost mass beyond k_max


@dataclass
class _Chain:
    """The truncated batch-start chain: levels n = 1..N (jobs waiting), states 2(n − 1) + i.

    From level n a batch of b = min(n, b_max) leaves m = n − b; k arrivals with end
    phase j lead to level m + k, or (m + k = 0) to an idle time and level 1.
    """

    n_levels: int
    big: int                     # min(b_max, N): the levels beyond it share one block
    blocks: list                 # per batch size b: (window, lo), P(lo + k, τ[b]) = window[k]
    zero: np.ndarray             # (big, 2, 2) P(0, τ[b]) (0 where trimmed)
    idle: np.ndarray             # (big, 2, 2) P(0, τ[b]) (−D0)⁻¹D1: phase at the next arrival
    mode: int                    # a level likely to carry much mass (where π is pinned)


def _build(d0, d1, alpha, tau0, b_max, n_levels, mode: int = 1) -> _Chain:
    """The chain cut at ``n_levels``; ``mode``: a level likely to carry much mass."""
    big = n_levels if b_max is None else min(b_max, n_levels)
    blocks, zero = [], np.zeros((big, 2, 2))
    for b, win, lo in _batch_counts(d0, d1, tau0, alpha, big, n_levels):
        blocks.append((win, lo))
        if lo == 0:
            zero[b - 1] = win[0]
    return _Chain(n_levels, big, blocks, zero, zero @ _next_arrival_phase(d0, d1),
                  int(min(max(mode, 1), n_levels)))


def _jumps(chain: _Chain, n: int):
    """(offsets c − s, probabilities) per starting phase i of the moves from level n,
    the idle move aside (k ≥ 1 or m ≥ 1): two arrays of shape (2, 2w)."""
    b = min(n, chain.big)
    win, lo = chain.blocks[b - 1]
    if n - b + lo == 0:                 # k = 0 with none left: the idle move, apart
        win, lo = win[1:], lo + 1
    t = np.arange(win.shape[0])
    offsets = np.array([(2 * (lo - b + t)[:, None] + np.arange(2)[None, :] - i).ravel()
                        for i in range(2)])
    probs = win.transpose(1, 0, 2).reshape(2, -1)
    return offsets, probs


def _band_widths(chain: _Chain):
    """(kl, ku): the bandwidths of I − T (row s, column c) below and above the diagonal,
    from the largest jump down (b − k levels) and up (k − b levels), in states."""
    up = max(lo + w.shape[0] - 1 - b for b, (w, lo) in enumerate(chain.blocks, start=1))
    down = max(b - lo for b, (w, lo) in enumerate(chain.blocks, start=1))
    return 2 * max(down, 0) + 1, 2 * max(up, 0) + 1


def _solve_dense(chain: _Chain) -> np.ndarray:
    """π of the truncated chain: π(I − T) = 0 with the equation of state 0 replaced by
    Σπ = 1 (nonsingular: state 0 is reached from every state; well conditioned however
    small π_0 is)."""
    size = 2 * chain.n_levels
    t = np.zeros((size, size))
    for n in range(1, chain.n_levels + 1):
        offsets, probs = _jumps(chain, n)
        for i in range(2):
            s = 2 * (n - 1) + i
            c = s + offsets[i]
            ok = c < size
            t[s, c[ok]] += probs[i][ok]
            if n <= chain.big:
                t[s, :2] += chain.idle[n - 1, i]
    a = np.eye(size) - t.T
    a[0] = 1.0
    rhs = np.zeros(size)
    rhs[0] = 1.0
    return np.linalg.solve(a, rhs)


def _solve_banded(chain: _Chain, kl: int, ku: int, s0: int) -> np.ndarray:
    """As ``_solve_dense``: M = I − T is factored in LAPACK's band storage (row s,
    column c at ab[kl + ku + s − c, c]; dgbtrf, whose work is size·kl·(kl + ku), kl
    the jumps down, at most b_max levels) with column s0 replaced by the unit vector,
    and Mᵀπ = e_s0 solved with the factors (dgbtrs, transposed).  The levels beyond
    b_max share one block of moves: each diagonal is filled at once."""
    size = 2 * chain.n_levels
    ab = np.zeros((2 * kl + ku + 1, size))
    diag = kl + ku
    ab[diag] = 1.0

    def add(s, offsets, probs):
        c = s + offsets
        ok = (c < size) & (c >= 0) & (probs != 0)
        ab[diag - offsets[ok], c[ok]] -= probs[ok]

    for n in range(1, chain.big + 1):
        offsets, probs = _jumps(chain, n)
        for i in range(2):
            s = 2 * (n - 1) + i
            add(s, offsets[i], probs[i])
            add(s, np.arange(2) - s, chain.idle[n - 1, i])
    if chain.n_levels > chain.big:
        offsets, probs = _jumps(chain, chain.big + 1)
        for i in range(2):
            first = 2 * chain.big + i                  # level big + 1, phase i
            for d, p in zip(offsets[i], probs[i]):
                s_lo = first if first + d >= 0 else first + 2 * ((1 - first - d) // 2)
                s_hi = min(size - 1, size - 1 - d)     # sources and targets < size
                if s_lo <= s_hi:
                    ab[diag - d, s_lo + d:s_hi + d + 1:2] -= p
    ab[:, s0] = 0.0
    ab[diag, s0] = 1.0
    lu, piv, info = dgbtrf(ab, kl, ku, overwrite_ab=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"banded factorisation failed (info {info})")
    rhs = np.zeros(size)
    rhs[s0] = 1.0
    pi, info = dgbtrs(lu, kl, ku, rhs, piv, trans=1)
    return pi


def _solve(chain: _Chain, guess: np.ndarray | None = None) -> np.ndarray:
    """π of the truncated chain, normalised.  Dense LU (``_solve_dense``) unless a banded
    one is cheaper (work size·kl·(kl + ku) below a third of a dense LU's); the banded
    solve pins π at a state and is accurate only where that state carries a fair share
    of the mass: the mode of ``guess`` (a level law from a smaller truncation) or of
    the Poisson chain, then the largest state of the result until it carries ≥ 1e-3 of
    the largest mass."""
    size = 2 * chain.n_levels
    kl, ku = (max(min(w, size - 1), 0) for w in _band_widths(chain))
    if size <= _MAX_DENSE_STATES and 3.0 * kl * (kl + ku) > size * size / 3.0:
        pi = np.clip(_solve_dense(chain), 0.0, None)
        return pi / pi.sum()
    level = int(np.argmax(guess)) + 1 if guess is not None else chain.mode
    s0 = 2 * (min(level, chain.n_levels) - 1)
    for _ in range(4):
        pi = np.clip(_solve_banded(chain, kl, ku, s0), 0.0, None)
        top = int(np.argmax(pi))
        if pi[s0] >= 1e-3 * pi[top]:
            break
        s0 = top
    return pi / pi.sum()


def _means(chain: _Chain, pi: np.ndarray, d0, d1, alpha, tau0):
    """Renewal reward over batch cycles (a batch and the idle time after it, if any):
    (E[W], E[Ĥ], E[B], utilization, throughput, the level law, the mass leaving)."""
    n = chain.n_levels
    p = pi.reshape(n, 2)
    level = np.arange(1, n + 1)
    b = np.minimum(level, chain.big)
    tau = alpha * b + tau0
    areas = np.array([_area(d0, d1, alpha * s + tau0) for s in range(1, chain.big + 1)])
    h = _mean_idle(d0, d1)                            # mean time to the next arrival
    idle_time = np.zeros((n, 2))
    with np.errstate(invalid="ignore", over="ignore"):
        idle_time[:chain.big] = np.where(chain.zero > 0, chain.zero * h, 0.0).sum(axis=2)
                                                      # levels ≤ b_max leave none waiting
    area = level[:, None] * tau[:, None] + areas[b - 1]
    cycle = tau[:, None] + idle_time
    by_level = p.sum(axis=1)
    e_b = by_level @ b
    with np.errstate(invalid="ignore"):
        e_cycle = np.where(p > 0, p * cycle, 0.0).sum()
    return ((p * area).sum() / e_b, (by_level @ (b * tau)) / e_b, e_b,
            (by_level @ tau) / e_cycle, e_b / e_cycle, by_level, _exit_mass(chain, p))


def _exit_mass(chain: _Chain, p: np.ndarray) -> float:
    """Σ π(n, i)·Pr(the batch from (n, i) leaves more than N waiting): the stationary
    probability per batch of leaving the truncated chain.  The moves beyond level N
    within a counting window are summed; a window cut at k_max = N (rather than
    trimmed below 1e-20), or missing more than rounding, has also lost the rest of its
    row, 1 − its sum."""
    n_levels = chain.n_levels
    level = np.arange(1, n_levels + 1)
    lost = np.zeros((n_levels, 2))
    for b, (win, lo) in enumerate(chain.blocks, start=1):
        rows = win.sum(axis=2)                                   # (t, i)
        beyond = np.cumsum(rows[::-1], axis=0)[::-1]             # mass at t' ≥ t
        sel = level == b if b < chain.big else level >= b
        first_out = n_levels + 1 - (level[sel] - b) - lo         # first t beyond N
        out = np.where((first_out < rows.shape[0])[:, None],
                       beyond[np.clip(first_out, 0, rows.shape[0] - 1)], 0.0)
        out[first_out <= 0] = beyond[0]
        missing = 1.0 - beyond[0]                                # mass beyond k_max
        cut = (lo + rows.shape[0] - 1 >= n_levels) | (missing > _MISSING)
        out = out + np.where(cut, np.clip(missing, 0.0, 1.0), 0.0)
        lost[sel] = out
    return float(np.sum(p * np.clip(lost, 0.0, 1.0)))


def _tail(by_level: np.ndarray, exit_mass: float = 0.0) -> float:
    """Stationary mass in the top quarter of the levels kept, or the mass leaving the
    truncated chain per batch when that is larger."""
    n = by_level.size
    return max(float(by_level[n - max(n // 4, 1):].sum()), exit_mass)
